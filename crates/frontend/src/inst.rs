//! Instances, modifiers and class lookup (specification chapters 5 and 7).
//!
//! An instance ([`Node`]) is a class plus the merged modifier applied to it. Its elements
//! (own and inherited components, equations of every class in the extends chain) are
//! collected lazily the first time they are needed, so that evaluating a structural parameter
//! only instantiates what the evaluation touches.
//!
//! Every modifier binding remembers its [`Env`]: the instance and the class in whose text it
//! was written, because that is where its names must be looked up.

use crate::loader::{ClassId, Library};
use moss_syntax::ast::{
    self, Argument, ClassKind, ClassSpecifier, Element, ImportKind, RedeclaredElement,
};
use moss_syntax::{Diagnostic, Span};
use rustc_hash::FxHashMap as HashMap;
use std::cell::{OnceCell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

pub type Diag = Box<Diagnostic>;
pub type Res<T> = Result<T, Diag>;

pub fn err<T>(span: Span, msg: impl Into<String>) -> Res<T> {
    Err(Box::new(Diagnostic::error(span, msg)))
}

/// Where an expression is evaluated: the instance whose components it names, and the class
/// whose text contains it (for lexical lookup of classes and package constants).
#[derive(Clone)]
pub struct Env {
    pub node: NodeRef,
    pub scope: ClassId,
}

/// A binding `= expr` with its environment and, for elements of component arrays, the
/// subscripts that select this element's part of the value.
#[derive(Clone)]
pub struct BindingMod {
    pub expr: Rc<ast::Expr>,
    pub env: Env,
    pub index: Vec<usize>,
}

/// A class redeclaration carried by a modifier (`redeclare model M = N`).
#[derive(Clone)]
pub struct ClassRedecl {
    pub def: Rc<ast::ClassDef>,
    pub env: Env,
    /// Its `constrainedby` clause, when it has one.
    pub constraining: Option<ast::ConstrainingClause>,
    /// The redeclaration of the same class that this one replaces (`extends D(redeclare
    /// model X = A)` over `D`'s `extends C(replaceable model X = B constrainedby B)`),
    /// whose constraint it must satisfy (spec 7.3.2).
    pub overrides: Option<Rc<ClassRedecl>>,
}

/// A component redeclaration (`redeclare Real x = 1`).
#[derive(Clone)]
pub struct CompRedecl {
    pub clause: Rc<ast::ComponentClause>,
    pub env: Env,
    /// Written `replaceable` (only then may it be redeclared again, spec 7.3.5).
    pub replaceable: bool,
    /// Its `constrainedby` clause, when it has one.
    pub constraining: Option<ast::ConstrainingClause>,
    /// The redeclaration of the same element that this one replaces (an inner modifier:
    /// `extends B(redeclare M2 m)` over `B`'s `extends A(redeclare M1 m)`), whose
    /// constraint it must satisfy.
    pub overrides: Option<Rc<CompRedecl>>,
}

/// A merged modifier: binding, nested element modifiers by name, redeclarations.
#[derive(Clone, Default)]
pub struct Mod {
    pub binding: Option<BindingMod>,
    pub each: bool,
    pub final_: bool,
    pub args: Vec<(Arc<str>, Mod)>,
    pub class_redecls: Vec<(Arc<str>, ClassRedecl)>,
    pub comp_redecls: Vec<(Arc<str>, CompRedecl)>,
    pub span: Span,
}

impl Mod {
    pub fn is_empty(&self) -> bool {
        self.binding.is_none()
            && self.args.is_empty()
            && self.class_redecls.is_empty()
            && self.comp_redecls.is_empty()
    }

    pub fn sub(&self, name: &str) -> Option<&Mod> {
        self.args.iter().find(|(n, _)| &**n == name).map(|(_, m)| m)
    }

    /// `outer` takes precedence over `inner` (the modifier written further out wins).
    pub fn merge(outer: &Mod, inner: &Mod) -> Mod {
        if inner.is_empty() {
            return outer.clone();
        }
        if outer.is_empty() {
            return inner.clone();
        }
        let mut args = outer.args.clone();
        for (n, m) in &inner.args {
            match args.iter_mut().find(|(o, _)| o == n) {
                Some((_, o)) => *o = Mod::merge(o, m),
                None => args.push((n.clone(), m.clone())),
            }
        }
        let mut class_redecls = outer.class_redecls.clone();
        for (n, r) in &inner.class_redecls {
            match class_redecls.iter_mut().find(|(o, _)| o == n) {
                Some((_, o)) => {
                    // The same definition may reach a merge on two paths: not an override.
                    if o.overrides.is_none() && o.def.span != r.def.span {
                        o.overrides = Some(Rc::new(r.clone()));
                    }
                }
                None => class_redecls.push((n.clone(), r.clone())),
            }
        }
        let mut comp_redecls = outer.comp_redecls.clone();
        for (n, r) in &inner.comp_redecls {
            match comp_redecls.iter_mut().find(|(o, _)| o == n) {
                Some((_, o)) => {
                    // The same declaration may reach a merge on two paths: not an override.
                    if o.overrides.is_none() && o.clause.span != r.clause.span {
                        o.overrides = Some(Rc::new(r.clone()));
                    }
                }
                None => comp_redecls.push((n.clone(), r.clone())),
            }
        }
        Mod {
            binding: outer.binding.clone().or_else(|| inner.binding.clone()),
            each: outer.each || inner.each,
            final_: outer.final_ || inner.final_,
            args,
            class_redecls,
            comp_redecls,
            span: if outer.span.is_dummy() {
                inner.span
            } else {
                outer.span
            },
        }
    }

    /// The part of this modifier that applies to element `i` (0-based) of a component array:
    /// bindings are subscripted unless written with `each`.
    pub fn index(&self, i: usize) -> Mod {
        if self.each {
            return self.clone();
        }
        let mut m = self.clone();
        if let Some(b) = &mut m.binding {
            b.index.push(i);
        }
        for (_, a) in &mut m.args {
            *a = a.index(i);
        }
        m
    }

    pub fn from_modification(m: &ast::Modification, env: &Env) -> Mod {
        let mut out = match &m.class_modification {
            Some(cm) => Mod::from_class_mod(cm, env),
            None => Mod::default(),
        };
        if let Some(b) = &m.binding {
            if !matches!(b.expr.kind, ast::ExprKind::Break) {
                out.binding = Some(BindingMod {
                    expr: Rc::new(b.expr.clone()),
                    env: env.clone(),
                    index: Vec::new(),
                });
            }
        }
        out.span = m.span;
        out
    }

    pub fn from_class_mod(cm: &ast::ClassModification, env: &Env) -> Mod {
        let mut out = Mod {
            span: cm.span,
            ..Mod::default()
        };
        for a in &cm.args {
            match a {
                Argument::Modification(em) => {
                    let mut m = match &em.modification {
                        Some(mm) => Mod::from_modification(mm, env),
                        None => Mod::default(),
                    };
                    m.each = em.each;
                    m.final_ = em.final_;
                    m.span = em.span;
                    // `a.b.c = 1` is `a(b(c = 1))`.
                    let parts: Vec<Arc<str>> =
                        em.name.parts.iter().map(|p| p.name.clone()).collect();
                    for p in parts[1..].iter().rev() {
                        m = Mod {
                            args: vec![(p.clone(), m)],
                            span: em.span,
                            ..Mod::default()
                        };
                    }
                    let name = parts[0].clone();
                    out.add_arg(name, m);
                }
                Argument::Redeclare(r) => match &r.element {
                    RedeclaredElement::Class(def) => out.class_redecls.push((
                        def.name.name.clone(),
                        ClassRedecl {
                            def: Rc::new((**def).clone()),
                            env: env.clone(),
                            constraining: r.constraining.clone(),
                            overrides: None,
                        },
                    )),
                    RedeclaredElement::Component(clause) => {
                        if let Some(d) = clause.components.first() {
                            out.comp_redecls.push((
                                d.name.name.clone(),
                                CompRedecl {
                                    clause: Rc::new((**clause).clone()),
                                    env: env.clone(),
                                    replaceable: r.replaceable,
                                    constraining: r.constraining.clone(),
                                    overrides: None,
                                },
                            ));
                        }
                    }
                },
                Argument::Break(_) => {}
            }
        }
        out
    }

    fn add_arg(&mut self, name: Arc<str>, m: Mod) {
        match self.args.iter_mut().find(|(n, _)| *n == name) {
            Some((_, o)) => *o = Mod::merge(o, &m),
            None => self.args.push((name, m)),
        }
    }
}

/// The predefined scalar types and what a class name finally denotes.
#[derive(Clone, Debug, PartialEq)]
pub enum Base {
    Real,
    Integer,
    Boolean,
    String,
    /// The synchronous-language `Clock` type (spec 16.3).
    Clock,
    /// Enumeration type (its class) with its literals.
    Enum(ClassId, Vec<Arc<str>>),
    /// `ExternalObject` and other classes without variables of their own.
    Class(ClassId),
}

impl Base {
    pub fn is_primitive(&self) -> bool {
        !matches!(self, Base::Class(_))
    }
}

/// A type after following short class definitions: the base, the modifiers collected along
/// the chain (outer first), dimensions of array types and an `input`/`output` prefix.
#[derive(Clone)]
pub struct ResolvedType {
    pub base: Base,
    pub mods: Mod,
    pub dims: Vec<(ast::Subscript, Env)>,
    pub causality: Option<ast::Causality>,
    /// The last class of the chain (for `partial`, restrictions, names).
    pub class: Option<ClassId>,
    /// Some class of the chain is a connector (`connector RealInput = input Real`).
    pub via_connector: bool,
}

pub type NodeRef = Rc<Node>;

/// An instance of a class.
pub struct Node {
    pub class: ClassId,
    /// Full instance path (`""` for the model itself, `a.b[2]` below).
    pub path: String,
    pub mods: Mod,
    pub parent: Option<NodeRef>,
    pub elems: OnceCell<Rc<Elems>>,
    /// Child instances created so far, by element name and subscripts (`b[2]`).
    pub children: RefCell<HashMap<String, NodeRef>>,
}

/// The elements of an instance: components (own and inherited, in order), the classes whose
/// equations and algorithms belong to it, and class redeclarations.
pub struct Elems {
    pub comps: Vec<Rc<Comp>>,
    pub index: HashMap<Arc<str>, usize>,
    /// The class and every base class, each once (equation sections are read from these).
    pub contributors: Vec<ClassId>,
    pub class_overrides: HashMap<Arc<str>, ClassId>,
    /// Modifiers of class elements from the extends clauses (`extends PartialMedium(
    /// SpecificEnthalpy(start = 1e5))`): they apply to every use of the inherited type.
    pub class_mods: HashMap<Arc<str>, Mod>,
}

/// A declared component of an instance.
pub struct Comp {
    pub name: Arc<str>,
    /// The class in whose text the component is declared.
    pub scope: ClassId,
    pub type_name: ast::Name,
    pub type_subs: Vec<ast::Subscript>,
    /// The declaration in the library's syntax tree, shared by every instance of the class
    /// that declares it (declarations carry modifiers, descriptions and graphical
    /// annotations: copying one per instance made flattening large arrays slow and big).
    pub decl: Rc<ast::ComponentDecl>,
    pub prefixes: ast::ElementPrefixes,
    pub tprefixes: ast::TypePrefixes,
    pub protected: bool,
    /// The full modifier of this component: outer modifiers merged with the declaration's.
    pub mods: Mod,
    /// Environment of the declaration (subscripts, condition).
    pub env: Env,
    /// Where the condition is evaluated when it is not `env`: a redeclaration keeps the
    /// condition of the declaration it replaces, written in that declaration's scope.
    pub condition_env: Option<Env>,
    pub span: Span,
    /// The resolved type, once asked for (`Flattener::comp_type`). Kept here rather than in
    /// a table keyed by the component: a large model has 10^5 and more components, and
    /// every question about one of them asks for its type.
    pub ty: OnceCell<Rc<ResolvedType>>,
    /// The evaluated dimensions, once asked for (`Flattener::comp_dims`).
    pub dims: OnceCell<Vec<usize>>,
}

/// Whether two lookups found the same element.
fn same_found(a: &Found, b: &Found) -> bool {
    match (a, b) {
        (Found::Class(x), Found::Class(y)) => x == y,
        (Found::Comp { owner: x }, Found::Comp { owner: y }) => x == y,
        _ => false,
    }
}

/// Predefined type names.
pub fn predefined(name: &str) -> Option<Base> {
    Some(match name {
        "Real" => Base::Real,
        "Integer" => Base::Integer,
        "Boolean" => Base::Boolean,
        "String" => Base::String,
        "Clock" => Base::Clock,
        _ => return None,
    })
}

/// The built-in enumerations `StateSelect` and `AssertionLevel` (and `Connections`
/// functions) are provided by this small Modelica text, loaded like a library file.
pub const PREDEFINED_SOURCE: &str =
    "type StateSelect = enumeration(never, avoid, default, prefer, always);\n\
type AssertionLevel = enumeration(warning, error);\n\
type Uncertainty = enumeration(given, sought, refine);\n";

/// Result of looking up a name in a class scope.
#[derive(Clone, Debug)]
pub enum Found {
    Class(ClassId),
    /// A component declared (possibly inherited) in class `owner`.
    Comp {
        owner: ClassId,
    },
}

/// Base classes of a class with the index of their `extends` clause.
type Bases = Rc<Vec<(ClassId, usize)>>;
type MemberKey = (ClassId, Arc<str>);

/// Class lookup with caches.
pub struct Lookup<'a> {
    pub lib: &'a Library,
    bases: RefCell<HashMap<ClassId, Bases>>,
    member_cache: RefCell<HashMap<MemberKey, Option<Found>>>,
    pub predefined: RefCell<HashMap<Arc<str>, ClassId>>,
}

impl<'a> Lookup<'a> {
    pub fn new(lib: &'a Library) -> Lookup<'a> {
        Lookup {
            lib,
            bases: RefCell::new(HashMap::default()),
            member_cache: RefCell::new(HashMap::default()),
            predefined: RefCell::new(HashMap::default()),
        }
    }

    pub fn name_of(&self, id: ClassId) -> String {
        self.lib.get(id).full_name.clone()
    }

    pub fn kind(&self, id: ClassId) -> ClassKind {
        self.lib.get(id).def.prefixes.kind
    }

    /// Base classes named in `extends` clauses of `id` (resolved, short classes followed),
    /// with the index of the clause among the class's elements.
    pub fn bases(&self, id: ClassId) -> Rc<Vec<(ClassId, usize)>> {
        if let Some(b) = self.bases.borrow().get(&id) {
            return b.clone();
        }
        // Guard against cyclic inheritance.
        self.bases.borrow_mut().insert(id, Rc::new(Vec::new()));
        let entry = self.lib.get(id);
        let mut out = Vec::new();
        if let Some(comp) = entry.def.specifier.composition() {
            for (i, (_, e)) in comp.elements().enumerate() {
                if let Element::Extends(ext) = e {
                    if let Some(b) = self.lookup_extends_base(id, &ext.base) {
                        out.push((b, i));
                    }
                }
            }
        }
        if let (ClassSpecifier::Extends { .. }, Some(origin), Some(parent)) =
            (&entry.def.specifier, entry.origin, entry.parent)
        {
            // A view of `class extends B`: the base of its origin, seen from the same
            // enclosing class. (Looking `B` up again from there would find the view itself.)
            out.extend(
                self.bases(origin)
                    .iter()
                    .filter(|(_, idx)| *idx == usize::MAX)
                    .map(|(b, idx)| (self.lib.view(*b, parent), *idx)),
            );
        } else if let ClassSpecifier::Extends { base, .. } = &entry.def.specifier {
            // `class extends B`: B is the inherited replaceable class of the same name from
            // the enclosing class's bases.
            if let Some(parent) = entry.parent {
                for (pb, _) in self.bases(parent).iter() {
                    if let Some(Found::Class(c)) = self.member(*pb, base.as_str()) {
                        // Seen from `parent`, which inherits it: its text looks names up
                        // in `parent` (with the modifiers of `parent`'s extends clauses).
                        out.push((self.lib.view(c, parent), usize::MAX));
                    }
                }
            }
        }
        let rc = Rc::new(out);
        self.bases.borrow_mut().insert(id, rc.clone());
        rc
    }

    /// Resolve the name of an `extends` clause of class `id`: looked up in the class
    /// (without its inherited elements) and its enclosing scopes.
    fn lookup_extends_base(&self, id: ClassId, name: &ast::Name) -> Option<ClassId> {
        let parts: Vec<&str> = name.parts.iter().map(|p| p.as_str()).collect();
        let first = if name.global {
            self.lib.top_level(parts[0]).map(Found::Class)
        } else {
            self.lookup_first_from(id, parts[0], false)
        }?;
        let Found::Class(c) = first else {
            return None;
        };
        self.member_class_path(c, parts[1..].iter().copied())
    }

    /// Follow `class A = B(...)` definitions to the long class (for `extends` and member
    /// lookup). Stops at predefined types.
    pub fn follow_short_class(&self, mut id: ClassId) -> ClassId {
        for _ in 0..50 {
            let entry = self.lib.get(id);
            let ClassSpecifier::Short { base, .. } = &entry.def.specifier else {
                return id;
            };
            if base.parts.len() == 1 && predefined(base.parts[0].as_str()).is_some() {
                return id;
            }
            match self.short_class_base(id, base) {
                Some(n) => id = n,
                None => return id,
            }
        }
        id
    }

    /// Look up a (dotted) class name starting in `scope` (or the top level if `None`).
    pub fn resolve_class_name(
        &self,
        scope: Option<ClassId>,
        name: &ast::Name,
        _short: bool,
    ) -> Option<ClassId> {
        let parts: Vec<&str> = name.parts.iter().map(|p| p.as_str()).collect();
        let first = match scope {
            Some(s) if !name.global => self.lookup_first_from(s, parts[0], true)?,
            _ => Found::Class(self.lib.top_level(parts[0])?),
        };
        let Found::Class(c) = first else {
            return None;
        };
        self.member_class_path(c, parts[1..].iter().copied())
    }

    /// A member of class `id`: a nested class, a component, or an inherited one.
    pub fn member(&self, id: ClassId, name: &str) -> Option<Found> {
        let key = (id, Arc::from(name));
        if let Some(f) = self.member_cache.borrow().get(&key) {
            return f.clone();
        }
        self.member_cache.borrow_mut().insert(key.clone(), None);
        let found = self.member_uncached(id, name);
        self.member_cache.borrow_mut().insert(key, found.clone());
        found
    }

    /// Components are reported with `owner` = the class asked about (not the base class that
    /// declares them), so that their values are taken from an instance of that class with
    /// all modifiers of its extends clauses and short-class definitions applied.
    ///
    /// Classes are reported as views ([`Library::view`]) whose enclosing class is the class
    /// asked about, when they are inherited or reached through a short class definition with
    /// modifiers: names in their text are then looked up in that class.
    fn member_uncached(&self, asked: ClassId, name: &str) -> Option<Found> {
        let id = self.follow_short_class(asked);
        let context = self.view_context(asked, id);
        if let Some(c) = self.redeclared_in_short_class(asked, name) {
            return Some(Found::Class(c));
        }
        if let Some(c) = self.lib.child(id, name) {
            return Some(Found::Class(self.lib.view(c, context)));
        }
        let entry = self.lib.get(id);
        if let Some(comp) = entry.def.specifier.composition() {
            for (_, e) in comp.elements() {
                if let Element::Component { clause, .. } = e {
                    if clause.components.iter().any(|d| d.name.as_str() == name) {
                        return Some(Found::Comp { owner: asked });
                    }
                }
            }
        }
        if let Some(c) = self.redeclared_in_extends(id, name) {
            return Some(Found::Class(self.lib.view(c, context)));
        }
        for (b, _) in self.bases(id).iter() {
            match self.member(*b, name) {
                Some(Found::Comp { .. }) => return Some(Found::Comp { owner: asked }),
                Some(Found::Class(c)) => return Some(Found::Class(self.lib.view(c, context))),
                None => {}
            }
        }
        None
    }

    /// The class `name` redeclared by a modifier of one of `id`'s extends clauses
    /// (`extends PartialMedium(redeclare record ThermodynamicState = Common.BaseProps_Tpoly)`):
    /// it replaces the inherited class for names looked up through `id` (`Medium.
    /// ThermodynamicState`), as it does in instances of `id`. Its text is looked up in `id`,
    /// where the modifier is written. Called once per class and name (`member` caches).
    fn redeclared_in_extends(&self, id: ClassId, name: &str) -> Option<ClassId> {
        let entry = self.lib.get(id);
        // only packages: a model's redeclarations reach its names through its instances
        // (`Flattener::collect`), whose view of the class this lookup must not change
        if entry.def.prefixes.kind != ClassKind::Package {
            return None;
        }
        let comp = entry.def.specifier.composition()?;
        let def = comp.elements().find_map(|(_, e)| {
            let Element::Extends(ext) = e else {
                return None;
            };
            class_redeclared_in(ext.modification.as_ref()?, name)
        })?;
        Some(self.lib.add_redeclared_class(def, id))
    }

    /// The class `name` redeclared by the modifier of a short package definition on the
    /// way from `asked` to its long class (`package P2 = P(redeclare model A = B)`: `P2.A`
    /// is `B`). The outermost definition wins; its text is looked up where it is written,
    /// in the class enclosing the short definition.
    fn redeclared_in_short_class(&self, asked: ClassId, name: &str) -> Option<ClassId> {
        let mut id = asked;
        for _ in 0..50 {
            let entry = self.lib.get(id);
            let ClassSpecifier::Short {
                base, modification, ..
            } = &entry.def.specifier
            else {
                return None;
            };
            if entry.def.prefixes.kind == ClassKind::Package {
                if let Some(def) = modification
                    .as_ref()
                    .and_then(|m| class_redeclared_in(m, name))
                {
                    return Some(
                        self.lib
                            .add_redeclared_class(def, entry.parent.unwrap_or(id)),
                    );
                }
            }
            id = self.short_class_base(id, base)?;
        }
        None
    }

    /// The class that encloses the members of `asked` (whose long class is `long`): `asked`
    /// itself if a short class definition on the way modifies the long class
    /// (`package M = Water(x = 1)`: its members see `x = 1`), else the long class, so that
    /// a plain alias (`package Medium = Water`) gives the very classes of `Water`.
    fn view_context(&self, asked: ClassId, long: ClassId) -> ClassId {
        let mut id = asked;
        for _ in 0..50 {
            if id == long {
                return long;
            }
            let entry = self.lib.get(id);
            let ClassSpecifier::Short {
                base,
                modification,
                subscripts,
                ..
            } = &entry.def.specifier
            else {
                return long;
            };
            if modification.is_some() || !subscripts.is_empty() {
                return asked;
            }
            match self.short_class_base(id, base) {
                Some(n) => id = n,
                None => return long,
            }
        }
        long
    }

    /// Is `name` a protected element of class `id`: declared under `protected`, or inherited
    /// through a protected `extends` clause or as a protected element of the base?
    pub fn is_protected_member(&self, id: ClassId, name: &str) -> bool {
        self.protected_member_at(id, name, 0)
    }

    fn protected_member_at(&self, id: ClassId, name: &str, depth: u32) -> bool {
        let id = self.follow_short_class(id);
        let entry = self.lib.get(id);
        let Some(comp) = entry.def.specifier.composition() else {
            return false;
        };
        if depth > 40 {
            return false;
        }
        for (vis, e) in comp.elements() {
            let declares = match e {
                Element::Component { clause, .. } => {
                    clause.components.iter().any(|d| d.name.as_str() == name)
                }
                Element::Class { class, .. } => class.name.as_str() == name,
                _ => false,
            };
            if declares {
                return vis == ast::Visibility::Protected;
            }
        }
        let bases = self.bases(id);
        for (i, (vis, e)) in comp.elements().enumerate() {
            if !matches!(e, Element::Extends(_)) {
                continue;
            }
            for (b, _) in bases.iter().filter(|(b, idx)| *idx == i && *b != id) {
                if self.member(*b, name).is_some() {
                    return vis == ast::Visibility::Protected
                        || self.protected_member_at(*b, name, depth + 1);
                }
            }
        }
        false
    }

    /// The element prefixes of class `name` as inherited by class `id` through its
    /// `extends` clauses (the first definition found).
    pub fn inherited_class_prefixes(
        &self,
        id: ClassId,
        name: &str,
    ) -> Option<(ast::ElementPrefixes, ast::Visibility)> {
        self.bases(id)
            .iter()
            .filter(|(b, idx)| *idx != usize::MAX && *b != id)
            .find_map(|(b, _)| self.class_prefixes_in(*b, name, 0))
    }

    fn class_prefixes_in(
        &self,
        id: ClassId,
        name: &str,
        depth: u32,
    ) -> Option<(ast::ElementPrefixes, ast::Visibility)> {
        let id = self.follow_short_class(id);
        if depth > 40 {
            return None;
        }
        let entry = self.lib.get(id);
        let comp = entry.def.specifier.composition()?;
        for (vis, e) in comp.elements() {
            if let Element::Class {
                prefixes, class, ..
            } = e
            {
                if class.name.as_str() == name {
                    return Some((*prefixes, vis));
                }
            }
        }
        self.bases(id)
            .iter()
            .filter(|(b, idx)| *idx != usize::MAX && *b != id)
            .find_map(|(b, _)| self.class_prefixes_in(*b, name, depth + 1))
    }

    /// Names of the public components of class `id`, own and inherited through public
    /// `extends` clauses.
    fn public_components(&self, id: ClassId, out: &mut Vec<Arc<str>>, depth: u32) {
        let id = self.follow_short_class(id);
        let entry = self.lib.get(id);
        let Some(comp) = entry.def.specifier.composition() else {
            return;
        };
        if depth > 40 {
            return;
        }
        let bases = self.bases(id);
        for (i, (vis, e)) in comp.elements().enumerate() {
            if vis == ast::Visibility::Protected {
                continue;
            }
            match e {
                Element::Component { clause, .. } => {
                    out.extend(clause.components.iter().map(|d| d.name.name.clone()))
                }
                Element::Extends(_) => {
                    for (b, _) in bases.iter().filter(|(b, idx)| *idx == i && *b != id) {
                        self.public_components(*b, out, depth + 1);
                    }
                }
                _ => {}
            }
        }
        for (b, _) in bases
            .iter()
            .filter(|(b, idx)| *idx == usize::MAX && *b != id)
        {
            self.public_components(*b, out, depth + 1);
        }
    }

    /// A public component of `constraint` that class `new` lacks: then `new` is not a
    /// subtype of `constraint` and cannot replace it (spec 6.4, 7.3.2). Packages are not
    /// compared (their constants are matched when used).
    pub fn missing_public_component(&self, new: ClassId, constraint: ClassId) -> Option<Arc<str>> {
        let kind_of = |c: ClassId| self.kind(self.follow_short_class(c));
        if kind_of(new) == ClassKind::Package || kind_of(constraint) == ClassKind::Package {
            return None;
        }
        let mut names = Vec::new();
        self.public_components(constraint, &mut names, 0);
        names
            .into_iter()
            .find(|n| !matches!(self.member(new, n), Some(Found::Comp { .. })))
    }

    /// Does class `id` satisfy the requirements of a package (only classes and constants,
    /// no equations or algorithms)? Inside other classes only encapsulated classes can be
    /// looked up with dot notation (spec 5.3.2).
    pub fn is_package_like(&self, id: ClassId) -> bool {
        let id = self.follow_short_class(id);
        let entry = self.lib.get(id);
        if entry.def.prefixes.kind == ClassKind::Package {
            return true;
        }
        let Some(comp) = entry.def.specifier.composition() else {
            return true;
        };
        let behaviour = comp.sections.iter().any(|s| match s {
            ast::Section::Equations { equations, .. } => !equations.is_empty(),
            ast::Section::Algorithm { statements, .. } => !statements.is_empty(),
            ast::Section::Elements { .. } => false,
        });
        let variables = comp.elements().any(|(_, e)| {
            matches!(e, Element::Component { clause, .. }
                if clause.prefixes.variability != Some(ast::Variability::Constant))
        });
        !behaviour && !variables
    }

    /// Is class `id` declared `encapsulated`?
    fn is_encapsulated(&self, id: ClassId) -> bool {
        self.lib.get(id).def.prefixes.encapsulated
    }

    /// The first part of a dotted class name (after the first) that cannot be reached from
    /// the class before it: a protected element (`A.B` with `B` protected in `A`, spec 5.1),
    /// or a non-encapsulated class inside a class that is not package-like (spec 5.3.2).
    /// Returns the part's index, that class and whether the part is protected.
    pub fn inaccessible_part(
        &self,
        scope: ClassId,
        name: &ast::Name,
    ) -> Option<(usize, ClassId, bool)> {
        let first = if name.global {
            self.lib.top_level(name.parts[0].as_str()).map(Found::Class)
        } else {
            self.lookup_first_from(scope, name.parts[0].as_str(), true)
        };
        let Some(Found::Class(mut c)) = first else {
            return None;
        };
        for (i, p) in name.parts.iter().enumerate().skip(1) {
            if self.is_protected_member(c, p.as_str()) {
                return Some((i, c, true));
            }
            match self.member(c, p.as_str()) {
                Some(Found::Class(n)) => {
                    if !self.is_encapsulated(n) && !self.is_package_like(c) {
                        return Some((i, c, false));
                    }
                    c = n
                }
                _ => return None,
            }
        }
        None
    }

    /// Lexical lookup of the first part of a name: the class and its inherited elements, its
    /// imports, then enclosing classes (stopping at `encapsulated`), then the top level.
    pub fn lookup_first_from(
        &self,
        scope: ClassId,
        name: &str,
        inherited_in_first: bool,
    ) -> Option<Found> {
        self.lookup_first_in(&self.lexical_scopes(scope), name, inherited_in_first)
    }

    /// The class that the short class definition `class` (`function f = g(k = 1)`) names.
    /// Its base is looked up where the definition is written: outside `class`, and for a
    /// view ([`Library::view`]) of an inherited definition first in the derived class and
    /// then outside the class that holds the text (not outside the derived class).
    pub fn short_class_base(&self, class: ClassId, base: &ast::Name) -> Option<ClassId> {
        let entry = self.lib.get(class);
        if entry.origin.is_none() || base.global {
            return self.resolve_class_name(entry.parent, base, true);
        }
        let scopes = self.lexical_scopes(class);
        let first = self.lookup_first_in(&scopes[1..], base.parts[0].as_str(), true)?;
        let Found::Class(c) = first else {
            return None;
        };
        self.member_class_path(c, base.parts[1..].iter().map(|p| p.as_str()))
    }

    /// The class `c.p1.p2...` names: each part a class member of the previous one (`None` if
    /// a part is missing or a component).
    pub fn member_class_path<'n>(
        &self,
        mut c: ClassId,
        parts: impl IntoIterator<Item = &'n str>,
    ) -> Option<ClassId> {
        for p in parts {
            match self.member(c, p)? {
                Found::Class(n) => c = n,
                Found::Comp { .. } => return None,
            }
        }
        Some(c)
    }

    fn lookup_first_in(
        &self,
        scopes: &[(ClassId, ClassId)],
        name: &str,
        inherited_in_first: bool,
    ) -> Option<Found> {
        for (k, &(s, text)) in scopes.iter().enumerate() {
            let found = if k == 0 && !inherited_in_first {
                self.local_member(s, name)
            } else {
                self.member(s, name)
            };
            if found.is_some() {
                return found;
            }
            if let Some(c) = self.import_lookup(text, name) {
                return Some(Found::Class(c));
            }
        }
        if let Some(c) = self.predefined.borrow().get(name) {
            return Some(Found::Class(*c));
        }
        self.lib.top_level(name).map(Found::Class)
    }

    /// The scopes that lexical lookup from class `scope` searches, innermost first, up to
    /// an `encapsulated` one: pairs of the class whose members are searched and the class
    /// whose text it is (whose imports apply). Normally both are the class and its
    /// enclosing classes. For a view ([`Library::view`]) of a class inherited by `D`, `D`
    /// stands in for the class enclosing the viewed text (searched with the modifiers and
    /// redeclarations of `D`), and the search goes on outside that enclosing class, never in
    /// the classes enclosing `D`: the text was written there (spec 5.3, 7.1).
    pub fn lexical_scopes(&self, scope: ClassId) -> Vec<(ClassId, ClassId)> {
        let mut out = Vec::new();
        let mut cur = Some((scope, scope));
        while let Some((members, text)) = cur {
            out.push((members, text));
            if out.len() > 200 || self.lib.get(text).def.prefixes.encapsulated {
                break;
            }
            let entry = self.lib.get(members);
            cur = if members != text {
                // `members` stood in for `text`: go on outside `text`.
                self.lib.get(text).parent.map(|p| (p, p))
            } else {
                match (entry.origin, entry.parent) {
                    (Some(origin), Some(parent)) => {
                        let written_in = self.lib.get(origin).parent;
                        match written_in {
                            Some(w) if self.lib.origin(parent) != w => Some((parent, w)),
                            _ => Some((parent, parent)),
                        }
                    }
                    (_, parent) => parent.map(|p| (p, p)),
                }
            };
        }
        out
    }

    /// Member declared in the class itself (no inheritance).
    fn local_member(&self, id: ClassId, name: &str) -> Option<Found> {
        if let Some(c) = self.lib.child(id, name) {
            return Some(Found::Class(c));
        }
        let entry = self.lib.get(id);
        let comp = entry.def.specifier.composition()?;
        for (_, e) in comp.elements() {
            if let Element::Component { clause, .. } = e {
                if clause.components.iter().any(|d| d.name.as_str() == name) {
                    return Some(Found::Comp { owner: id });
                }
            }
        }
        None
    }

    /// Names made visible by the import clauses of class `id` (imports are not inherited).
    /// Qualified imports come first: an unqualified import is only searched when no
    /// qualified one names the element (spec 13.2.1).
    fn import_lookup(&self, id: ClassId, name: &str) -> Option<ClassId> {
        let entry = self.lib.get(id);
        let comp = entry.def.specifier.composition()?;
        if let Some(c) = self.qualified_import(comp, name) {
            return Some(c);
        }
        match self.unqualified_import(comp, name)? {
            Found::Class(c) => Some(c),
            _ => None,
        }
    }

    /// The element `name` found through the unqualified imports (`import P.*;`) of a class:
    /// only public elements are imported, and a name found in two different packages is
    /// ambiguous, which makes it not found.
    fn unqualified_import(&self, comp: &ast::Composition, name: &str) -> Option<Found> {
        match self.unqualified_imports_of(comp, name) {
            ImportMatch::One(f) => Some(f),
            ImportMatch::None | ImportMatch::Ambiguous(..) => None,
        }
    }

    /// The two packages through whose unqualified imports in class `id` the element
    /// `name` is found, when there are two (then the name is ambiguous, for the message).
    pub fn ambiguous_import(&self, id: ClassId, name: &str) -> Option<(ClassId, ClassId)> {
        let entry = self.lib.get(id);
        let comp = entry.def.specifier.composition()?;
        match self.unqualified_imports_of(comp, name) {
            ImportMatch::Ambiguous(a, b) => Some((a, b)),
            _ => None,
        }
    }

    /// What the unqualified imports of `comp` make of `name`: the public element of one
    /// package (the same element imported twice counts once), or two packages that both
    /// have a different one.
    fn unqualified_imports_of(&self, comp: &ast::Composition, name: &str) -> ImportMatch {
        let mut first: Option<(ClassId, Found)> = None;
        for (_, e) in comp.elements() {
            let Element::Import(imp) = e else { continue };
            let ImportKind::Unqualified(n) = &imp.kind else {
                continue;
            };
            let Some(pkg) = self.resolve_class_name(None, n, false) else {
                continue;
            };
            let Some(f) = self.member(pkg, name) else {
                continue;
            };
            if self.is_protected_member(pkg, name) {
                continue;
            }
            match &first {
                None => first = Some((pkg, f)),
                Some((p, g)) if !same_found(g, &f) => return ImportMatch::Ambiguous(*p, pkg),
                Some(_) => {}
            }
        }
        match first {
            Some((_, f)) => ImportMatch::One(f),
            None => ImportMatch::None,
        }
    }

    fn qualified_import(&self, comp: &ast::Composition, name: &str) -> Option<ClassId> {
        for (_, e) in comp.elements() {
            let Element::Import(imp) = e else { continue };
            match &imp.kind {
                ImportKind::Qualified(n) => {
                    if n.last().is_some_and(|l| l.as_str() == name) {
                        return self.resolve_class_name(None, n, false);
                    }
                }
                ImportKind::Renaming { alias, name: n } => {
                    if alias.as_str() == name {
                        return self.resolve_class_name(None, n, false);
                    }
                }
                ImportKind::Unqualified(_) => {}
                ImportKind::Multiple { prefix, names } => {
                    if names.iter().any(|i| i.as_str() == name) {
                        let pkg = self.resolve_class_name(None, prefix, false)?;
                        if let Some(Found::Class(c)) = self.member(pkg, name) {
                            return Some(c);
                        }
                    }
                }
            }
        }
        None
    }

    /// Names imported into class `id` that denote constants or classes through a component
    /// path (`import Modelica.Constants.pi;`): returns the package and the component name.
    pub fn import_component(&self, id: ClassId, name: &str) -> Option<(ClassId, Arc<str>)> {
        let entry = self.lib.get(id);
        let comp = entry.def.specifier.composition()?;
        for (_, e) in comp.elements() {
            let Element::Import(imp) = e else { continue };
            let (pkg_name, comp_name): (Vec<&ast::Ident>, &ast::Ident) = match &imp.kind {
                ImportKind::Qualified(n) if n.last().is_some_and(|l| l.as_str() == name) => {
                    (n.parts[..n.parts.len() - 1].iter().collect(), n.last()?)
                }
                ImportKind::Renaming { alias, name: n } if alias.as_str() == name => {
                    (n.parts[..n.parts.len() - 1].iter().collect(), n.last()?)
                }
                _ => continue,
            };
            if pkg_name.is_empty() {
                continue;
            }
            let parts: Vec<&str> = pkg_name.iter().map(|p| p.as_str()).collect();
            let pkg = self.lib.lookup_qualified(&parts)?;
            if let Some(Found::Comp { owner }) = self.member(pkg, comp_name.as_str()) {
                return Some((owner, comp_name.name.clone()));
            }
        }
        match self.unqualified_import(comp, name)? {
            Found::Comp { owner } => Some((owner, Arc::from(name))),
            _ => None,
        }
    }
}

/// `redeclare package Medium = Medium`: the modifier passes on what the name denotes where
/// it is written, which only an instance knows (`Flattener::lib_add_redeclared`).
/// The definition of class `name` in a `redeclare` argument of `m`, unless it only passes
/// on the class of the same name (`redeclare package Medium = Medium`).
fn class_redeclared_in(m: &ast::ClassModification, name: &str) -> Option<Rc<ast::ClassDef>> {
    m.args.iter().find_map(|a| match a {
        Argument::Redeclare(r) => match &r.element {
            RedeclaredElement::Class(def)
                if def.name.name.as_ref() == name && !passes_on_itself(def) =>
            {
                Some(Rc::new((**def).clone()))
            }
            _ => None,
        },
        _ => None,
    })
}

fn passes_on_itself(def: &ast::ClassDef) -> bool {
    matches!(&def.specifier, ClassSpecifier::Short { base, .. }
        if base.parts.len() == 1 && !base.global && base.parts[0].as_str() == def.name.name.as_ref())
}

/// The result of looking a name up through a class's unqualified imports.
enum ImportMatch {
    None,
    One(Found),
    Ambiguous(ClassId, ClassId),
}
