//! Library loading: library roots (`--lib` directories, MODELICAPATH, the bundled library),
//! directory packages (`package.mo` + `package.order`), single-file packages, and a lazily
//! filled arena of classes.
//!
//! Files are parsed only when a class inside them is first needed (MSL has thousands of
//! files; a typical model needs a few dozen), and each file is parsed once.

use moss_syntax::ast::{ClassDef, ClassSpecifier, Element, StoredDefinition};
use moss_syntax::{Diagnostic, SourceMap, Span};
use rustc_hash::FxHashMap as HashMap;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

mod bundled {
    include!(concat!(env!("OUT_DIR"), "/bundled.rs"));
}

/// A directory or file, either on disk or inside the bundled library.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Loc {
    Fs(PathBuf),
    /// Path relative to the bundled library root (`Modelica/Blocks`), `/`-separated.
    Bundled(String),
}

impl Loc {
    fn join(&self, name: &str) -> Loc {
        match self {
            Loc::Fs(p) => Loc::Fs(p.join(name)),
            Loc::Bundled(p) if p.is_empty() => Loc::Bundled(name.to_string()),
            Loc::Bundled(p) => Loc::Bundled(format!("{p}/{name}")),
        }
    }

    fn is_file(&self) -> bool {
        match self {
            Loc::Fs(p) => p.is_file(),
            Loc::Bundled(p) => bundled::FILES.iter().any(|(f, _)| f == p),
        }
    }

    fn read(&self) -> Option<Arc<str>> {
        match self {
            Loc::Fs(p) => std::fs::read(p)
                .ok()
                .map(|b| Arc::from(String::from_utf8_lossy(&b).as_ref())),
            Loc::Bundled(p) => bundled::FILES
                .iter()
                .find(|(f, _)| f == p)
                .map(|(_, t)| Arc::from(*t)),
        }
    }

    /// Display path used in diagnostics (bundled files get a `<bundled>/` prefix).
    fn display_path(&self) -> PathBuf {
        match self {
            Loc::Fs(p) => p.clone(),
            Loc::Bundled(p) => PathBuf::from(format!("<bundled>/{p}")),
        }
    }
}

/// Index of a class in the [`Library`] arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClassId(pub u32);

/// One class: its definition, its place in the package hierarchy and (for directory packages)
/// the directory holding further children.
#[derive(Debug)]
pub struct ClassEntry {
    pub def: Rc<ClassDef>,
    /// Full name, e.g. `Modelica.Blocks.Sources.Step`.
    pub full_name: String,
    pub parent: Option<ClassId>,
    /// Directory of a directory package (children may be files in it).
    pub dir: Option<Loc>,
    /// For a view (see [`Library::view`]): the class whose text this entry shares.
    pub origin: Option<ClassId>,
    children: RefCell<HashMap<Arc<str>, Option<ClassId>>>,
}

/// All classes loaded so far plus the roots to load more from.
pub struct Library {
    roots: Vec<Loc>,
    /// Classes of files given explicitly (highest priority top-level names).
    explicit: RefCell<HashMap<Arc<str>, ClassId>>,
    top: RefCell<HashMap<Arc<str>, Option<ClassId>>>,
    classes: RefCell<Vec<Rc<ClassEntry>>>,
    /// Views already made, by (origin, enclosing class).
    views: RefCell<HashMap<(ClassId, ClassId), ClassId>>,
    pub sources: Arc<SourceMap>,
    pub diagnostics: RefCell<Vec<Diagnostic>>,
}

impl Library {
    /// Roots in priority order: `libs`, MODELICAPATH entries, then the bundled library.
    pub fn new(libs: &[PathBuf], use_modelicapath: bool, use_bundled: bool) -> Library {
        let mut roots: Vec<Loc> = libs.iter().map(|p| Loc::Fs(p.clone())).collect();
        if use_modelicapath {
            if let Ok(mp) = std::env::var("MODELICAPATH") {
                let sep = if cfg!(windows) { ';' } else { ':' };
                roots.extend(
                    mp.split(sep)
                        .filter(|s| !s.is_empty())
                        .map(|s| Loc::Fs(PathBuf::from(s))),
                );
            }
        }
        if use_bundled {
            roots.push(Loc::Bundled(String::new()));
        }
        Library {
            roots,
            explicit: RefCell::new(HashMap::default()),
            top: RefCell::new(HashMap::default()),
            classes: RefCell::new(Vec::new()),
            views: RefCell::new(HashMap::default()),
            sources: Arc::new(SourceMap::new()),
            diagnostics: RefCell::new(Vec::new()),
        }
    }

    pub fn add_root_front(&mut self, dir: PathBuf) {
        self.roots.insert(0, Loc::Fs(dir));
    }

    pub fn get(&self, id: ClassId) -> Rc<ClassEntry> {
        self.classes.borrow()[id.0 as usize].clone()
    }

    fn add_class(&self, def: Rc<ClassDef>, parent: Option<ClassId>, dir: Option<Loc>) -> ClassId {
        self.add_entry(def, parent, dir, None)
    }

    fn add_entry(
        &self,
        def: Rc<ClassDef>,
        parent: Option<ClassId>,
        dir: Option<Loc>,
        origin: Option<ClassId>,
    ) -> ClassId {
        let full_name = match parent {
            Some(p) => format!(
                "{}.{}",
                self.get(p).full_name,
                flat_class_ident(def.name.as_str())
            ),
            None => flat_class_ident(def.name.as_str()).to_string(),
        };
        let mut classes = self.classes.borrow_mut();
        classes.push(Rc::new(ClassEntry {
            def,
            full_name,
            parent,
            dir,
            origin,
            children: RefCell::new(HashMap::default()),
        }));
        ClassId(classes.len() as u32 - 1)
    }

    /// The class whose text `id` is: itself, or for a view the class it views.
    pub fn origin(&self, id: ClassId) -> ClassId {
        self.get(id).origin.unwrap_or(id)
    }

    /// Class `class` as an element of `parent`, a class that inherits it (spec 7.1: the
    /// elements of a base class are part of the derived class). The view shares the text
    /// of the class but its enclosing class is `parent`, so the names in that text are
    /// looked up in the derived class: a constant given a value by the derived package's
    /// extends modifier, a record or function redeclared there. Views are made once per
    /// (class, parent); a class viewed from its own parent is the class itself.
    pub fn view(&self, class: ClassId, parent: ClassId) -> ClassId {
        let origin = self.origin(class);
        let entry = self.get(origin);
        if entry.parent == Some(parent) {
            return origin;
        }
        if let Some(&v) = self.views.borrow().get(&(origin, parent)) {
            return v;
        }
        let id = self.add_entry(
            entry.def.clone(),
            Some(parent),
            entry.dir.clone(),
            Some(origin),
        );
        self.views.borrow_mut().insert((origin, parent), id);
        id
    }

    /// Parse a file, registering it in the source map; syntax errors are recorded.
    fn parse(&self, loc: &Loc) -> Option<StoredDefinition> {
        let text = loc.read()?;
        let (_, def, diags) = moss_syntax::parse_source(&self.sources, loc.display_path(), text);
        let has_errors = diags.iter().any(|d| d.is_error());
        self.diagnostics.borrow_mut().extend(diags);
        if has_errors {
            return None;
        }
        Some(def)
    }

    /// Load a file given on the command line: its classes become top-level classes (or, with
    /// a `within` clause, are still reachable under their own names). Returns the last class.
    pub fn load_file(&self, path: &Path) -> Result<ClassId, Box<Diagnostic>> {
        let loc = Loc::Fs(path.to_path_buf());
        if !path.is_file() {
            return Err(Box::new(Diagnostic::error(
                Span::DUMMY,
                format!("cannot read `{}`: no such file", path.display()),
            )));
        }
        let Some(def) = self.parse(&loc) else {
            return Err(Box::new(Diagnostic::error(
                Span::DUMMY,
                format!("`{}` has syntax errors", path.display()),
            )));
        };
        let parent = match &def.within {
            Some(w) => {
                let parts: Vec<&str> = w.parts.iter().map(|p| p.as_str()).collect();
                self.lookup_qualified(&parts)
            }
            None => None,
        };
        let mut last = None;
        for c in def.classes {
            let name = c.class.name.name.clone();
            let id = self.add_class(Rc::new(c.class), parent, None);
            match parent {
                Some(p) => {
                    self.get(p).children.borrow_mut().insert(name, Some(id));
                }
                None => {
                    self.explicit.borrow_mut().insert(name, id);
                }
            }
            last = Some(id);
        }
        last.ok_or_else(|| {
            Box::new(Diagnostic::error(
                Span::DUMMY,
                format!("`{}` defines no class", path.display()),
            ))
        })
    }

    /// A top-level class by name, searching the roots in order.
    pub fn top_level(&self, name: &str) -> Option<ClassId> {
        if let Some(id) = self.explicit.borrow().get(name) {
            return Some(*id);
        }
        if let Some(r) = self.top.borrow().get(name) {
            return *r;
        }
        let found = self
            .roots
            .iter()
            .find_map(|root| self.load_entry(root, name, None));
        self.top.borrow_mut().insert(Arc::from(name), found);
        found
    }

    /// Load the class `name` stored in directory `dir` (as `name/package.mo` or `name.mo`).
    fn load_entry(&self, dir: &Loc, name: &str, parent: Option<ClassId>) -> Option<ClassId> {
        let sub = dir.join(name);
        let pkg = sub.join("package.mo");
        if pkg.is_file() {
            return self.load_class_file(&pkg, name, parent, Some(sub));
        }
        let file = dir.join(&format!("{name}.mo"));
        if file.is_file() {
            return self.load_class_file(&file, name, parent, None);
        }
        if parent.is_none() {
            // Versioned directory names such as `Modelica 4.0.0`.
            if let Loc::Fs(d) = dir {
                let prefix = format!("{name} ");
                let versioned = std::fs::read_dir(d)
                    .ok()?
                    .filter_map(|e| e.ok())
                    .find(|e| e.file_name().to_string_lossy().starts_with(&prefix))?;
                let sub = Loc::Fs(versioned.path());
                let pkg = sub.join("package.mo");
                if pkg.is_file() {
                    return self.load_class_file(&pkg, name, parent, Some(sub));
                }
            }
        }
        None
    }

    fn load_class_file(
        &self,
        file: &Loc,
        name: &str,
        parent: Option<ClassId>,
        dir: Option<Loc>,
    ) -> Option<ClassId> {
        let def = self.parse(file)?;
        let class = def
            .classes
            .into_iter()
            .find(|c| c.class.name.as_str() == name)?;
        Some(self.add_class(Rc::new(class.class), parent, dir))
    }

    /// Resolve `A.B.C` from the top level.
    pub fn lookup_qualified(&self, parts: &[&str]) -> Option<ClassId> {
        let (first, rest) = parts.split_first()?;
        let mut id = self.top_level(first)?;
        for p in rest {
            id = self.child(id, p)?;
        }
        Some(id)
    }

    /// The file a `modelica://` URI names (spec 13.5): its authority is a class name, its path
    /// is relative to the directory of that class if it is stored as a directory, else to the
    /// directory of the file that holds it. `None` for other URIs, unknown classes and
    /// classes of the bundled library (which has no files on disk).
    pub fn resource_path(&self, uri: &str) -> Option<PathBuf> {
        const SCHEME: &str = "modelica://";
        let scheme = uri.get(..SCHEME.len())?;
        if !scheme.eq_ignore_ascii_case(SCHEME) {
            return None;
        }
        let rest = &uri[SCHEME.len()..];
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let parts: Vec<&str> = authority.split('.').collect();
        let mut class = Some(self.lookup_qualified(&parts)?);
        while let Some(c) = class {
            let entry = self.get(c);
            match &entry.dir {
                Some(Loc::Fs(dir)) => {
                    return Some(
                        path.split('/')
                            .filter(|p| !p.is_empty())
                            .fold(dir.clone(), |acc, p| acc.join(p)),
                    )
                }
                Some(Loc::Bundled(_)) => return None,
                None => class = entry.parent,
            }
        }
        None
    }

    /// A class defined directly in class `id` (nested definition or file in its directory);
    /// inherited classes are not considered here.
    pub fn child(&self, id: ClassId, name: &str) -> Option<ClassId> {
        let entry = self.get(id);
        if let Some(r) = entry.children.borrow().get(name) {
            return *r;
        }
        let found = self.find_nested(&entry, id, name);
        entry.children.borrow_mut().insert(Arc::from(name), found);
        found
    }

    fn find_nested(&self, entry: &ClassEntry, id: ClassId, name: &str) -> Option<ClassId> {
        if let Some(origin) = entry.origin {
            // The nested classes of a view are views of the nested classes of its origin.
            return self.child(origin, name).map(|c| self.view(c, id));
        }
        if let Some(comp) = entry.def.specifier.composition() {
            for (_, e) in comp.elements() {
                if let Element::Class { class, .. } = e {
                    if class.name.as_str() == name {
                        return Some(self.add_class(Rc::new((**class).clone()), Some(id), None));
                    }
                }
            }
        }
        let dir = entry.dir.clone()?;
        self.load_entry(&dir, name, Some(id))
    }
}

/// A quoted class name holding a full name (`'Modelica.Math.sin'`, as printed by
/// `moss flatten`) stands for that name.
fn flat_class_ident(name: &str) -> &str {
    match name.strip_prefix('\'').and_then(|n| n.strip_suffix('\'')) {
        Some(inner) if inner.contains('.') && !inner.contains(['\\', '\'']) => inner,
        _ => name,
    }
}

/// Is this class a short class definition (`type A = B(...)`)?
pub fn is_short(def: &ClassDef) -> bool {
    matches!(def.specifier, ClassSpecifier::Short { .. })
}

impl Library {
    /// Add the classes of a Modelica text (e.g. the predefined enumerations) as top-level
    /// classes that are found before the library roots.
    pub fn add_text(&self, path: &str, text: &str) {
        let (_, def, diags) = moss_syntax::parse_source(&self.sources, path, text.to_string());
        self.diagnostics.borrow_mut().extend(diags);
        for c in def.classes {
            let name = c.class.name.name.clone();
            let id = self.add_class(Rc::new(c.class), None, None);
            self.explicit.borrow_mut().insert(name, id);
        }
    }
}

impl Library {
    /// Register a class definition given in a redeclaration modifier; it is looked up from
    /// `scope` (where the modifier was written).
    pub fn add_redeclared_class(&self, def: Rc<ClassDef>, scope: ClassId) -> ClassId {
        self.add_class(def, Some(scope), None)
    }
}
