//! The flattening context: instance creation, element collection (extends, modifiers,
//! redeclarations), type resolution through short class definitions, and component
//! dimensions/conditions.

use crate::expand::{Cx, Val};
use crate::flat::Expr;
use crate::inst::*;
use crate::loader::{ClassId, Library};
use moss_syntax::ast::{self, ClassKind, ClassSpecifier, Element, EnumLiterals, Visibility};
use moss_syntax::{Diagnostic, Span};
use rustc_hash::FxHashMap;
use rustc_hash::FxHashMap as HashMap;
use std::cell::{Cell, OnceCell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

/// Prefixes inherited by the elements of a structured component (`parameter Rec r` makes
/// every field of `r` a parameter).
#[derive(Clone, Copy, Default)]
pub struct Inherited {
    pub variability: Option<ast::Variability>,
    pub protected: bool,
    /// `flow`/`stream` on a structured component applies to all its variables.
    pub connector: Option<ast::ConnectorPrefix>,
    /// `annotation(Evaluate=...)` on an enclosing structured component: it applies to all
    /// its components, overriding their own settings (spec 18.3), so the outermost wins.
    pub evaluate: Option<bool>,
}

pub struct Flattener<'a> {
    pub lk: Lookup<'a>,
    /// Functions referenced so far: full name → class.
    pub functions: RefCell<BTreeMap<String, ClassId>>,
    /// Functions named only by `inverse` annotations: translated after the others, each
    /// dropped (with its annotation) when it cannot be translated, as the annotation is
    /// only an offer.
    pub inverse_functions: RefCell<BTreeMap<String, ClassId>>,
    pub package_nodes: RefCell<HashMap<ClassId, NodeRef>>,
    pub warnings: RefCell<Vec<Diagnostic>>,
    pub depth: Cell<u32>,
    /// Set while the call of a tuple equation `(a, b) = f(...)` is expanded: the call is
    /// kept even when its arguments are literals, because evaluating it now would give its
    /// first output only.
    pub keep_calls: Cell<bool>,
    /// Per-node extra data keyed by node address: inherited prefixes.
    pub inherited: RefCell<HashMap<usize, Inherited>>,
    /// Cache of evaluated component values (full instance name).
    pub values: RefCell<HashMap<String, Val>>,
    /// Parameters (not constants) whose values were evaluated into the structure
    /// ([`crate::flat::FlatModel::structural_parameters`]).
    pub structural: RefCell<std::collections::BTreeSet<String>>,
    /// Above 0 while parameters are evaluated only to try something (binding the arguments of
    /// a call to size its result): those evaluations do not make a parameter structural.
    pub structural_trials: Cell<u32>,
    /// Component arrays whose elements were flattened as renamed copies of the first
    /// ([`crate::shared_elements`]), by the address of their `Comp`: references into their
    /// elements resolve on the first element's instance (see `Flattener::lookup_element`).
    pub shared_arrays: RefCell<FxHashMap<usize, Rc<Comp>>>,
    /// Class named by a type name written at a place in the source, looked up from a scope
    /// (when no redeclaration in the instance overrides it): the same for every instance of
    /// the declaring class, so a component array looks its element type up once.
    pub class_names: RefCell<ClassNameCache>,
    /// Component declarations of the syntax tree, shared by all instances (`shared_decl`).
    pub shared_decls: RefCell<FxHashMap<usize, Rc<ast::ComponentDecl>>>,
    /// Default `inner` components added at the top level for `outer` ones without an inner.
    pub implicit_inners: RefCell<Vec<(Arc<str>, Rc<Comp>)>>,
    /// Errors found while collecting elements (reported after the walk).
    pub errors: RefCell<Vec<Diagnostic>>,
    /// Classes whose restrictions were checked.
    pub checked: RefCell<std::collections::HashSet<ClassId>>,
    /// Connector classes whose balance was checked.
    pub balance_checked: RefCell<std::collections::HashSet<ClassId>>,
    /// Record classes by their field names (for operator overloading on record values).
    pub record_shapes: RefCell<HashMap<Vec<Arc<str>>, ClassId>>,
    /// Result dimensions of the array-valued calls expanded so far, by printed call (for
    /// [`crate::lift`]).
    pub array_calls: RefCell<HashMap<String, Vec<usize>>>,
    /// Specializations of functions for their functional arguments, by flat name
    /// ([`crate::funargs`]).
    pub fn_specs: RefCell<BTreeMap<String, crate::funargs::FnSpec>>,
}

/// Scope and source place of a class name → the class it names (see `class_named`).
pub type ClassNameCache = FxHashMap<(Option<ClassId>, Span), Option<ClassId>>;

/// A path of record fields below an instance: names with their 1-based indices.
pub type FieldPath = Vec<(String, Vec<usize>)>;

fn key<T>(r: &Rc<T>) -> usize {
    Rc::as_ptr(r) as *const u8 as usize
}

impl<'a> Flattener<'a> {
    pub fn new(lib: &'a Library) -> Flattener<'a> {
        Flattener {
            lk: Lookup::new(lib),
            functions: RefCell::new(BTreeMap::new()),
            inverse_functions: RefCell::new(BTreeMap::new()),
            package_nodes: RefCell::new(HashMap::default()),
            warnings: RefCell::new(Vec::new()),
            depth: Cell::new(0),
            keep_calls: Cell::new(false),
            inherited: RefCell::new(HashMap::default()),
            values: RefCell::new(HashMap::default()),
            structural: RefCell::default(),
            structural_trials: Cell::new(0),
            shared_arrays: RefCell::default(),
            class_names: RefCell::new(FxHashMap::default()),
            shared_decls: RefCell::new(FxHashMap::default()),
            implicit_inners: RefCell::new(Vec::new()),
            errors: RefCell::new(Vec::new()),
            checked: RefCell::new(std::collections::HashSet::default()),
            balance_checked: RefCell::new(std::collections::HashSet::default()),
            record_shapes: RefCell::new(HashMap::default()),
            array_calls: RefCell::new(HashMap::default()),
            fn_specs: RefCell::new(BTreeMap::new()),
        }
    }

    pub fn lib(&self) -> &Library {
        self.lk.lib
    }

    pub fn new_node(
        &self,
        class: ClassId,
        path: String,
        mods: Mod,
        parent: Option<NodeRef>,
        inh: Inherited,
    ) -> NodeRef {
        let n = Rc::new(Node {
            class,
            path,
            mods,
            parent,
            elems: OnceCell::new(),
            children: RefCell::new(HashMap::default()),
        });
        self.inherited.borrow_mut().insert(key(&n), inh);
        n
    }

    pub fn inherited_of(&self, n: &NodeRef) -> Inherited {
        self.inherited
            .borrow()
            .get(&key(n))
            .copied()
            .unwrap_or_default()
    }

    /// A node standing for a package (or any class used as a scope for its constants).
    pub fn package_node(&self, class: ClassId) -> NodeRef {
        if let Some(n) = self.package_nodes.borrow().get(&class) {
            return n.clone();
        }
        let path = self.lk.name_of(class);
        let n = self.new_node(class, path, Mod::default(), None, Inherited::default());
        self.package_nodes.borrow_mut().insert(class, n.clone());
        n
    }

    /// Is `node` the instance of a package that [`Self::package_node`] made (its components
    /// are package constants, not variables of the model)?
    pub fn is_package_node(&self, node: &NodeRef) -> bool {
        self.package_nodes
            .borrow()
            .get(&node.class)
            .is_some_and(|n| Rc::ptr_eq(n, node))
    }

    /// The elements of an instance, collected on first use.
    pub fn elems(&self, node: &NodeRef) -> Rc<Elems> {
        if let Some(e) = node.elems.get() {
            return e.clone();
        }
        let mut out = Elems {
            comps: Vec::new(),
            index: HashMap::default(),
            contributors: Vec::new(),
            class_overrides: HashMap::default(),
            class_mods: HashMap::default(),
        };
        self.collect(node.class, &node.mods, node, &mut out, 0);
        for (name, m) in &node.mods.args {
            if !out.index.contains_key(name) && self.lk.member(node.class, name).is_none() {
                self.errors.borrow_mut().push(
                    Diagnostic::error(
                        m.span,
                        format!(
                            "modifier of `{name}`, but `{}` has no element `{name}`",
                            self.lk.name_of(node.class)
                        ),
                    )
                    .with_help("check the spelling of the modified element"),
                );
            }
        }
        self.check_redeclared_classes_exist(node);
        let rc = Rc::new(out);
        let _ = node.elems.set(rc.clone());
        rc
    }

    /// A class redeclaration in a component's modifier names a class element of the
    /// component's class (spec 7.3); an import of that class is not an element and cannot
    /// be redeclared (spec 13.2.1).
    fn check_redeclared_classes_exist(&self, node: &NodeRef) {
        for (name, r) in &node.mods.class_redecls {
            if matches!(self.lk.member(node.class, name), Some(Found::Class(_))) {
                continue;
            }
            self.errors.borrow_mut().push(
                Diagnostic::error(
                    r.def.name.span,
                    format!(
                        "redeclaration of `{name}`, but `{}` has no class element `{name}`",
                        self.lk.name_of(node.class)
                    ),
                )
                .with_help("only a replaceable class declared in (or inherited by) the class can be redeclared; an imported name cannot"),
            );
        }
    }

    fn collect(&self, class: ClassId, m: &Mod, node: &NodeRef, out: &mut Elems, depth: u32) {
        self.collect_with(class, m, node, out, depth, false);
    }

    /// `protected`: the class is inherited through a protected `extends` clause, so all
    /// its elements are protected (spec 7.1.2).
    fn collect_with(
        &self,
        class: ClassId,
        m: &Mod,
        node: &NodeRef,
        out: &mut Elems,
        depth: u32,
        protected: bool,
    ) {
        if out.contributors.contains(&class) {
            return;
        }
        let entry = self.lib().get(class);
        if depth > MAX_INHERITANCE_DEPTH {
            // Stopping silently here once dropped everything inherited below this level.
            self.restriction_error(
                entry.def.name.span,
                format!(
                    "classes inherit more than {MAX_INHERITANCE_DEPTH} levels deep at `{}`",
                    entry.full_name
                ),
                "shorten the chain of extends clauses (or short class definitions)",
            );
            return;
        }
        if let ClassSpecifier::Short {
            base, modification, ..
        } = &entry.def.specifier
        {
            let env = Env {
                node: node.clone(),
                scope: entry.parent.unwrap_or(class),
            };
            let mut m = m.clone();
            if let Some(cm) = modification {
                let short = Mod::from_class_mod(cm, &env);
                self.check_final(&m, &short, "");
                m = Mod::merge(&m, &short);
            }
            if let Some(b) = self.lk.short_class_base(class, base) {
                self.collect_with(b, &m, node, out, depth + 1, protected);
            }
            return;
        }
        out.contributors.push(class);
        self.check_class_restrictions(class);
        let Some(comp) = entry.def.specifier.composition() else {
            return;
        };
        let env = Env {
            node: node.clone(),
            scope: class,
        };
        let bases = self.lk.bases(class);
        if let ClassSpecifier::Extends { modification, .. } = &entry.def.specifier {
            // `model extends M(mods)` is `model M extends M(mods)` with the inherited `M`
            // (spec 7.3.1): its elements come first, so that the inputs of
            // `function extends f` keep the positions they have in `f`.
            let em = match modification {
                Some(cm) => {
                    let own = Mod::from_class_mod(cm, &env);
                    self.check_final(m, &own, "");
                    Mod::merge(m, &own)
                }
                None => m.clone(),
            };
            for (b, idx) in bases.iter() {
                if *idx == usize::MAX {
                    self.collect_with(*b, &em, node, out, depth + 1, protected);
                }
            }
        }
        for (i, (vis, e)) in comp.elements().enumerate() {
            match e {
                Element::Component {
                    prefixes,
                    clause,
                    span,
                    constraining,
                } => {
                    for decl in &clause.components {
                        let decl_info = DeclInfo {
                            prefixes,
                            clause,
                            decl,
                            constraining: constraining.as_ref(),
                            vis: if protected {
                                Visibility::Protected
                            } else {
                                vis
                            },
                            span: *span,
                        };
                        self.add_comp(out, m, &env, decl_info);
                    }
                }
                Element::Extends(ext) => {
                    let Some((b, _)) = bases.iter().find(|(_, idx)| *idx == i) else {
                        continue;
                    };
                    let em = match &ext.modification {
                        Some(cm) => Mod::from_class_mod(cm, &env),
                        None => Mod::default(),
                    };
                    // A short-class base (`extends A(...)` with `A = B(mods)`) is
                    // followed by `collect`, which adds its modifiers.
                    self.check_final(m, &em, "");
                    let hidden = protected || vis == Visibility::Protected;
                    self.collect_with(*b, &Mod::merge(m, &em), node, out, depth + 1, hidden);
                }
                Element::Class {
                    class: cdef,
                    prefixes,
                    constraining,
                    ..
                } => {
                    let name = cdef.name.name.clone();
                    if prefixes.redeclare {
                        // `redeclare model extends M`: replaces the inherited `M` everywhere
                        // in this instance, also in the elements inherited from the base.
                        // Elements of derived classes come after those of their bases, so the
                        // most derived definition wins. Without `redeclare`, `model extends M`
                        // only defines the local `M` (spec 7.3.1).
                        // Inherited, it is seen from the instance's class, so that the
                        // names in its text find that class's redeclarations and constants.
                        if let Some(id) = self.lib().child(class, &name) {
                            let seen = if class == node.class {
                                id
                            } else {
                                self.lib().view(id, node.class)
                            };
                            out.class_overrides.insert(name.clone(), seen);
                        }
                    }
                    if let Some(sub) = m.sub(&name) {
                        out.class_mods
                            .entry(name.clone())
                            .or_insert_with(|| sub.clone());
                    }
                    let original = self.lib().child(class, &name);
                    let constraint = match constraining {
                        Some(c) => self.lk.resolve_class_name(Some(class), &c.base, false),
                        None => original,
                    };
                    if let Some((_, r)) = m.class_redecls.iter().find(|(n, _)| *n == name) {
                        if prefixes.final_ {
                            self.redeclare_error(
                                r.def.name.span,
                                format!("`{name}` is final and cannot be redeclared"),
                                "remove the redeclaration, or the `final` prefix of the class",
                            );
                        }
                        let id = self.lib_add_redeclared(r);
                        if let Some(c) = constraint {
                            self.check_subtype(id, c, r.def.name.span);
                        }
                        self.check_overridden_constraints(id, r);
                        out.class_overrides.insert(name, id);
                    } else if let (Some(o), Some(c), Some(_)) = (original, constraint, constraining)
                    {
                        self.check_subtype(o, c, cdef.name.span);
                        // `replaceable type T = T1[n] constrainedby T2`: T1 against T2.
                        if let ClassSpecifier::Short { base, .. } = &cdef.specifier {
                            if let Some(t1) = self.class_named(Some(class), base) {
                                self.check_same_rank(t1, c, base.span);
                            }
                        }
                    }
                }
                Element::Import(_) => {}
            }
        }
    }

    /// A class redeclaration satisfies the `constrainedby` of the redeclarations it
    /// replaces (spec 7.3.2), not only the constraint of the original declaration.
    fn check_overridden_constraints(&self, id: ClassId, r: &ClassRedecl) {
        let mut prev = r.overrides.as_deref();
        while let Some(p) = prev {
            if let Some(c) = &p.constraining {
                if let Some(cid) = self
                    .lk
                    .resolve_class_name(Some(p.env.scope), &c.base, false)
                {
                    self.check_subtype(id, cid, r.def.name.span);
                }
            }
            prev = p.overrides.as_deref();
        }
    }

    fn lib_add_redeclared(&self, r: &ClassRedecl) -> ClassId {
        // `redeclare package Medium = Medium` passes on the class that `Medium` denotes in
        // the instance where the modifier is written (possibly itself redeclared).
        if let ClassSpecifier::Short {
            base,
            modification: None,
            subscripts,
            base_prefix: None,
            ..
        } = &r.def.specifier
        {
            if base.parts.len() == 1 && !base.global && subscripts.is_empty() {
                if let Some(c) = self.elems_overrides(&r.env.node, base.parts[0].as_str()) {
                    return c;
                }
            }
        }
        self.lib().add_redeclared_class(r.def.clone(), r.env.scope)
    }

    /// The modifier of a declaration merged with the one its class receives for it.
    fn effective_mod(&self, m: &Mod, env: &Env, name: &str, decl: &ast::ComponentDecl) -> Mod {
        let outer = m.sub(name).cloned().unwrap_or_default();
        let own = decl
            .modification
            .as_ref()
            .map(|dm| Mod::from_modification(dm, env))
            .unwrap_or_default();
        Mod::merge(&outer, &own)
    }

    fn add_comp(&self, out: &mut Elems, m: &Mod, env: &Env, info: DeclInfo) {
        let DeclInfo {
            prefixes,
            clause,
            decl,
            constraining,
            vis,
            span,
        } = info;
        let name = decl.name.name.clone();
        if let Some(&k) = out.index.get(&name) {
            // Identical inherited declarations are merged (the first one is kept); a name
            // declared twice in one class, or inherited with different declarations, is an
            // error (spec 5.6.1).
            let first = &out.comps[k];
            let same = first.type_name.to_string() == clause.type_name.to_string()
                && first
                    .decl
                    .modification
                    .as_ref()
                    .map(moss_syntax::print::print_modification)
                    == decl
                        .modification
                        .as_ref()
                        .map(moss_syntax::print::print_modification)
                && first.tprefixes == clause.prefixes;
            // Declarations that differ only in what their `extends` modifiers make equal are
            // identical too (`extends A(x(stateSelect = s))` and `extends B` where B declares
            // `x(stateSelect = s)`): compare the modifiers in effect.
            let same = same
                || (first.type_name.to_string() == clause.type_name.to_string()
                    && first.tprefixes == clause.prefixes
                    && mod_text(&first.mods) == mod_text(&self.effective_mod(m, env, &name, decl)));
            if first.scope == env.scope || !same {
                self.errors.borrow_mut().push(
                    Diagnostic::error(
                        decl.name.span,
                        if first.scope == env.scope {
                            format!("`{name}` is declared twice")
                        } else {
                            format!("`{name}` is inherited twice with different declarations")
                        },
                    )
                    .with_secondary(first.decl.name.span, "first declared here"),
                );
            }
            return;
        }
        let outer_mod = m.sub(&name).cloned().unwrap_or_default();
        let redecl = m.comp_redecls.iter().find(|(n, _)| *n == name);
        let original_prefixes = clause.prefixes;
        let original_type = clause.type_name.clone();
        let original_mod = decl.modification.as_ref();
        let mut condition_env = None;
        let (clause, decl, denv) = match redecl {
            Some((_, r)) => match r.clause.components.first() {
                Some(d) => {
                    let mut d = d.clone();
                    if d.condition.is_none() && decl.condition.is_some() {
                        // A redeclaration keeps the condition of the component it replaces
                        // (spec 4.4.5), evaluated where that component was declared.
                        d.condition = decl.condition.clone();
                        condition_env = Some(env.clone());
                    }
                    if d.subscripts.is_empty() && r.clause.subscripts.is_empty() {
                        // A redeclaration without dimensions keeps those of the original
                        // declaration (spec 7.3.2).
                        d.subscripts = decl.subscripts.clone();
                        d.subscripts.extend(clause.subscripts.iter().cloned());
                    }
                    (&*r.clause, Rc::new(d), r.env.clone())
                }
                None => (clause, self.shared_decl(decl), env.clone()),
            },
            None => (clause, self.shared_decl(decl), env.clone()),
        };
        let constraint = || {
            let name = constraining.map_or(&original_type, |c| &c.base);
            self.lk.resolve_class_name(Some(env.scope), name, false)
        };
        match redecl {
            Some((_, r)) => {
                let new = self
                    .lk
                    .resolve_class_name(Some(r.env.scope), &clause.type_name, false);
                if let (Some(n), Some(c)) = (new, constraint()) {
                    self.check_subtype(n, c, r.clause.type_name.span);
                }
                // A new `constrainedby` narrows the constraint; it cannot widen it.
                if let (Some(cn), Some(c)) = (&r.constraining, constraint()) {
                    if let Some(cid) =
                        self.lk
                            .resolve_class_name(Some(r.env.scope), &cn.base, false)
                    {
                        self.check_subtype(cid, c, cn.base.span);
                    }
                }
                self.check_redeclared_again(&name, r, new, original_prefixes);
            }
            None if constraining.is_some() => {
                let declared = self
                    .lk
                    .resolve_class_name(Some(env.scope), &original_type, false);
                if let (Some(d), Some(c)) = (declared, constraint()) {
                    self.check_subtype(d, c, original_type.span);
                    self.check_same_rank(d, c, original_type.span);
                }
            }
            None => {}
        }
        let mut decl_mod = match &decl.modification {
            Some(dm) => Mod::from_modification(dm, &denv),
            None => Mod::default(),
        };
        if redecl.is_some() {
            // Modifiers of the constraining type (or, without `constrainedby`, of the
            // original declaration) carry over to the new declaration (spec 7.3.2).
            // The nearest constraint wins: the redeclaration's own `constrainedby`, else
            // that of the redeclaration it replaces, else the original one.
            let nearest = redecl.and_then(|(_, r)| {
                let own = r.constraining.as_ref().map(|c| (c, &r.env));
                own.or_else(|| {
                    let prev = r.overrides.as_ref()?;
                    prev.constraining.as_ref().map(|c| (c, &prev.env))
                })
            });
            let carried = match (nearest, constraining) {
                (Some((c, cenv)), _) => c
                    .modification
                    .as_ref()
                    .map(|cm| Mod::from_class_mod(cm, cenv))
                    .unwrap_or_default(),
                (None, Some(c)) => c
                    .modification
                    .as_ref()
                    .map(|cm| Mod::from_class_mod(cm, env))
                    .unwrap_or_default(),
                (None, None) => original_mod
                    .map(|om| Mod::from_modification(om, env))
                    .unwrap_or_default(),
            };
            decl_mod = Mod::merge(&decl_mod, &carried);
        } else if let Some(cm) = constraining.and_then(|c| c.modification.as_ref()) {
            // The modifiers of the constraining clause apply to the declaration itself too
            // (`replaceable B b constrainedby A(x = 2)` gives `b.x = 2`, spec 7.3.2).
            decl_mod = Mod::merge(&decl_mod, &Mod::from_class_mod(cm, env));
        }
        self.check_final(&outer_mod, &decl_mod, &name);
        if prefixes.final_ && redecl.is_none() && !outer_mod.is_empty() {
            self.final_error(&name, outer_mod.span, decl.name.span);
        }
        if prefixes.outer && !prefixes.inner {
            let modified = decl
                .modification
                .as_ref()
                .map(|m| m.span)
                .or((!outer_mod.is_empty()).then_some(outer_mod.span));
            if let Some(span) = modified {
                self.errors.borrow_mut().push(
                    Diagnostic::error(
                        if span.is_dummy() { decl.name.span } else { span },
                        format!("`outer {name}` is modified, but an outer component cannot have modifications"),
                    )
                    .with_secondary(decl.name.span, "declared `outer` here")
                    .with_help("modify the matching `inner` declaration instead (specification 5.4)"),
                );
            }
        }
        let mods = Mod::merge(&outer_mod, &decl_mod);
        let mut tprefixes = clause.prefixes;
        if redecl.is_some() {
            // A redeclaration keeps the original prefixes unless it gives its own.
            tprefixes.variability = tprefixes.variability.or(original_prefixes.variability);
            tprefixes.causality = tprefixes.causality.or(original_prefixes.causality);
            tprefixes.connector = tprefixes.connector.or(original_prefixes.connector);
        }
        let comp = Comp {
            name: name.clone(),
            scope: denv.scope,
            type_name: clause.type_name.clone(),
            type_subs: clause.subscripts.clone(),
            decl,
            prefixes: *prefixes,
            tprefixes,
            protected: vis == Visibility::Protected,
            mods,
            env: denv,
            condition_env,
            span,
            ty: OnceCell::new(),
            dims: OnceCell::new(),
        };
        out.index.insert(name, out.comps.len());
        out.comps.push(Rc::new(comp));
    }

    /// The declaration `decl` of the library's syntax tree as a shared value, made once.
    /// The tree lives as long as the library (classes are never unloaded), so its address
    /// identifies the declaration.
    fn shared_decl(&self, decl: &ast::ComponentDecl) -> Rc<ast::ComponentDecl> {
        let key = decl as *const ast::ComponentDecl as usize;
        self.shared_decls
            .borrow_mut()
            .entry(key)
            .or_insert_with(|| Rc::new(decl.clone()))
            .clone()
    }

    fn redeclare_error(&self, span: Span, msg: String, help: &str) {
        self.errors
            .borrow_mut()
            .push(Diagnostic::error(span, msg).with_help(help.to_string()));
    }

    /// A replacing class must have every public component of the constraining class.
    /// Rules of spec 7.3.5 for a component redeclaration `r` of `name`: a constant cannot
    /// be redeclared, and a redeclaration that replaces an earlier one (from a modifier of
    /// a base class) needs that one to be `replaceable` when it changes the type, and its
    /// type must satisfy that one's constraint.
    fn check_redeclared_again(
        &self,
        name: &str,
        r: &crate::inst::CompRedecl,
        new: Option<ClassId>,
        original: ast::TypePrefixes,
    ) {
        let span = r.clause.type_name.span;
        if original.variability == Some(ast::Variability::Constant) {
            self.redeclare_error(
                span,
                format!("`{name}` is a constant and cannot be redeclared"),
                "modify its value instead of redeclaring it (specification 7.3.5)",
            );
            return;
        }
        let (Some(prev), Some(new)) = (&r.overrides, new) else {
            return;
        };
        let prev_type =
            self.lk
                .resolve_class_name(Some(prev.env.scope), &prev.clause.type_name, false);
        if !prev.replaceable {
            if prev_type.is_some_and(|p| p != new) {
                self.errors.borrow_mut().push(
                    Diagnostic::error(
                        span,
                        format!("`{name}` cannot be redeclared again: its earlier redeclaration is not replaceable"),
                    )
                    .with_secondary(prev.clause.type_name.span, "redeclared without `replaceable` here")
                    .with_help("write `redeclare replaceable` in the earlier redeclaration to allow further ones (specification 7.3.5)"),
                );
            }
            return;
        }
        let constraint = match &prev.constraining {
            Some(c) => self
                .lk
                .resolve_class_name(Some(prev.env.scope), &c.base, false),
            None => prev_type,
        };
        if let Some(c) = constraint {
            self.check_subtype(new, c, span);
        }
    }

    /// The number of array dimensions a type class carries through its short definitions
    /// (`type Real23 = Real[2, 3]` has 2); `None` when the chain cannot be followed.
    fn type_rank(&self, mut class: ClassId) -> Option<usize> {
        let mut rank = 0;
        for _ in 0..60 {
            let entry = self.lib().get(class);
            let ClassSpecifier::Short {
                base, subscripts, ..
            } = &entry.def.specifier
            else {
                return Some(rank);
            };
            rank += subscripts.len();
            match self.short_base_named(class, base) {
                Some(c) => class = c,
                // A predefined type (`Real`) that no class of the library shadows.
                None if base.parts.len() == 1 && predefined(base.parts[0].as_str()).is_some() => {
                    return Some(rank)
                }
                None => return None,
            }
        }
        None
    }

    /// The type part of a replaceable declaration and its constraining type have the same
    /// number of dimensions (spec 7.3.2: `replaceable T1 x[n] constrainedby T2`, the
    /// dimensions written after the type part do not count).
    fn check_same_rank(&self, declared: ClassId, constraint: ClassId, span: Span) {
        let (Some(d), Some(c)) = (self.type_rank(declared), self.type_rank(constraint)) else {
            return;
        };
        if d == c {
            return;
        }
        self.errors.borrow_mut().push(
            Diagnostic::error(
                span,
                format!(
                    "`{}` has {d} array dimension(s) but its constraining type `{}` has {c}",
                    self.lk.name_of(declared),
                    self.lk.name_of(constraint)
                ),
            )
            .with_help(
                "the type part of a replaceable declaration must have as many dimensions as its constraining type (specification 7.3.2)",
            ),
        );
    }

    fn check_subtype(&self, new: ClassId, constraint: ClassId, span: Span) {
        if new == constraint {
            return;
        }
        if let Some(missing) = self.lk.missing_public_component(new, constraint) {
            self.errors.borrow_mut().push(
                Diagnostic::error(
                    span,
                    format!(
                        "`{}` is not a subtype of `{}`: it has no element `{missing}`",
                        self.lk.name_of(new),
                        self.lk.name_of(constraint)
                    ),
                )
                .with_help(format!(
                    "a replacing class must have every public element of its constraining class `{}` (specification 7.3.2)",
                    self.lk.name_of(constraint)
                )),
            );
        }
    }

    /// Modifications and redeclarations from outside an instance (through a component)
    /// may not touch its protected elements (spec 4.1).
    fn check_protected_modifications(&self, comp: &Comp, class: ClassId) {
        let names = comp
            .mods
            .args
            .iter()
            .map(|(n, m)| (n, m.span, "modified"))
            .chain(
                comp.mods
                    .comp_redecls
                    .iter()
                    .map(|(n, r)| (n, r.clause.span, "redeclared")),
            )
            .chain(
                comp.mods
                    .class_redecls
                    .iter()
                    .map(|(n, r)| (n, r.def.name.span, "redeclared")),
            );
        for (name, span, what) in names {
            if self.lk.is_protected_member(class, name) {
                self.errors.borrow_mut().push(
                    Diagnostic::error(
                        if span.is_dummy() { comp.span } else { span },
                        format!(
                            "`{name}` is protected in `{}` and cannot be {what} from outside",
                            self.lk.name_of(class)
                        ),
                    )
                    .with_help("only a modifier in an `extends` clause may change a protected element; make it public"),
                );
                return;
            }
        }
    }

    /// Report an element of `outer` that changes one that `inner` declares `final`
    /// (spec 7.2.6). `path` names the modified instance (for the message).
    pub fn check_final(&self, outer: &Mod, inner: &Mod, path: &str) {
        if let Some((name, span, final_span)) = final_violation(outer, inner, path) {
            self.final_error(&name, span, final_span);
        }
    }

    fn final_error(&self, name: &str, span: Span, final_span: Span) {
        let mut d = Diagnostic::error(
            if span.is_dummy() { final_span } else { span },
            format!("`{name}` is final and cannot be modified"),
        )
        .with_help(
            "remove this modification, or the `final` prefix where the element is given its value",
        );
        if !final_span.is_dummy() && final_span != span {
            d = d.with_secondary(final_span, "declared final here");
        }
        self.errors.borrow_mut().push(d);
    }

    /// Find component `name` of an instance.
    pub fn find_comp(&self, node: &NodeRef, name: &str) -> Option<Rc<Comp>> {
        let e = self.elems(node);
        e.index.get(name).map(|i| e.comps[*i].clone())
    }

    /// Resolve the type of a component, following short class definitions.
    /// Shared, not copied: a component's type is asked for many times per instance.
    pub fn comp_type(&self, node: &NodeRef, comp: &Rc<Comp>) -> Res<Rc<ResolvedType>> {
        if let Some(t) = comp.ty.get() {
            return Ok(t.clone());
        }
        let t = Rc::new(self.resolve_type_name(node, &comp.type_name, comp.scope)?);
        let _ = comp.ty.set(t.clone());
        Ok(t)
    }

    pub fn resolve_type_name(
        &self,
        node: &NodeRef,
        name: &ast::Name,
        scope: ClassId,
    ) -> Res<ResolvedType> {
        let first = name.parts[0].as_str();
        let class = match self.overridden_class_name(node, name) {
            Some(c) => c,
            _ if !name.span.is_dummy()
                && self
                    .class_names
                    .borrow()
                    .contains_key(&(Some(scope), name.span)) =>
            {
                self.class_names.borrow()[&(Some(scope), name.span)]
            }
            _ => {
                if let Some((i, owner, protected)) = self.lk.inaccessible_part(scope, name) {
                    let part = name.parts[i].as_str();
                    let owner = self.lk.name_of(owner);
                    let (msg, help) = if protected {
                        (
                            format!("`{part}` is protected in `{owner}` and cannot be accessed with dot notation"),
                            "only public elements can be named as `A.B`; make it public or use it from inside its class",
                        )
                    } else {
                        (
                            format!("`{part}` cannot be looked up inside `{owner}`, which is not a package and has variables or equations"),
                            "declare the class `encapsulated`, or move it into a package",
                        )
                    };
                    return err(name.parts[i].span, msg).map_err(|d| Box::new(d.with_help(help)));
                }
                self.class_named(Some(scope), name)
            }
        };
        let Some(class) = class else {
            if name.parts.len() == 1 {
                if let Some(b) = predefined(first) {
                    return Ok(ResolvedType {
                        base: b,
                        mods: Mod::default(),
                        dims: Vec::new(),
                        causality: None,
                        class: None,
                        via_connector: false,
                    });
                }
            }
            return err(name.span, format!("unknown class `{name}`")).map_err(|d| {
                Box::new(d.with_help("check the spelling and the imports of the enclosing classes"))
            });
        };
        let mut t = self.resolve_type_class(node, class)?;
        if let Some(cm) = self.class_element_mod(node, name) {
            t.mods = Mod::merge(&cm, &t.mods);
        }
        Ok(t)
    }

    /// The modifier that instance `node` received for its class element named by `name`
    /// (`extends A(B(x = 4))` or `A a(B(x = 4))` with `B` a class of `A`): it applies to
    /// every component of that class declared in the instance, below the components' own
    /// modifiers (spec 7.2).
    fn class_element_mod(&self, node: &NodeRef, name: &ast::Name) -> Option<Mod> {
        if name.global || name.parts.len() != 1 {
            return None;
        }
        let e = node.elems.get()?;
        e.class_mods.get(name.parts[0].as_str()).cloned()
    }

    /// [`Lookup::resolve_class_name`] of a name written in the source, remembered per scope
    /// and place: the answer depends on nothing else, and every instance of a class asks again.
    /// The base of the short class definition `class`, see [`Lookup::short_class_base`];
    /// cached by [`Self::class_named`] unless `class` is a view.
    fn short_base_named(&self, class: ClassId, base: &ast::Name) -> Option<ClassId> {
        let entry = self.lib().get(class);
        if entry.origin.is_none() {
            return self.class_named(entry.parent, base);
        }
        self.lk.short_class_base(class, base)
    }

    fn class_named(&self, scope: Option<ClassId>, name: &ast::Name) -> Option<ClassId> {
        if name.span.is_dummy() {
            return self.lk.resolve_class_name(scope, name, false);
        }
        let key = (scope, name.span);
        if let Some(&found) = self.class_names.borrow().get(&key) {
            return found;
        }
        let found = self.lk.resolve_class_name(scope, name, false);
        self.class_names.borrow_mut().insert(key, found);
        found
    }

    /// A class name whose first part is a class redeclared in instance `node`
    /// (`Medium.BaseProperties` with `redeclare package Medium = Water`): `Some` of what it
    /// denotes there (`None` inside if a later part is missing), `None` if the first part is
    /// not redeclared in `node`.
    pub fn overridden_class_name(
        &self,
        node: &NodeRef,
        name: &ast::Name,
    ) -> Option<Option<ClassId>> {
        if name.global {
            return None;
        }
        let mut cur = Some(self.elems_overrides(node, name.parts[0].as_str())?);
        for p in &name.parts[1..] {
            cur = match cur.and_then(|c| self.lk.member(c, p.as_str())) {
                Some(Found::Class(n)) => Some(n),
                _ => None,
            };
        }
        Some(cur)
    }

    fn elems_overrides(&self, node: &NodeRef, name: &str) -> Option<ClassId> {
        let e = node.elems.get()?;
        e.class_overrides.get(name).copied()
    }

    /// The modifier that the extends clauses of a package give an inherited class element
    /// (`extends PartialMedium(SpecificEnthalpy(start = 1e5, nominal = 5e5))`), for `class`
    /// a view of that element seen from the package ([`Library::view`]).
    fn class_mod_of_derived_package(&self, class: ClassId) -> Option<Mod> {
        let entry = self.lib().get(class);
        entry.origin?;
        let parent = entry.parent?;
        if self.lib().get(parent).def.prefixes.kind != ClassKind::Package {
            return None;
        }
        let node = self.package_node(parent);
        let elems = self.elems(&node);
        elems.class_mods.get(entry.def.name.name.as_ref()).cloned()
    }

    /// Follow a class through short definitions to its base.
    pub fn resolve_type_class(&self, node: &NodeRef, mut class: ClassId) -> Res<ResolvedType> {
        let mut mods = Mod::default();
        let mut dims = Vec::new();
        let mut causality = None;
        let mut via_connector = false;
        for _ in 0..60 {
            if let Some(cm) = self.class_mod_of_derived_package(class) {
                mods = Mod::merge(&mods, &cm);
            }
            let entry = self.lib().get(class);
            via_connector |= matches!(
                entry.def.prefixes.kind,
                ClassKind::Connector | ClassKind::ExpandableConnector
            );
            match &entry.def.specifier {
                ClassSpecifier::Short {
                    base_prefix,
                    base,
                    subscripts,
                    modification,
                    ..
                } => {
                    let env = Env {
                        node: node.clone(),
                        scope: entry.parent.unwrap_or(class),
                    };
                    if let Some(cm) = modification {
                        let own = Mod::from_class_mod(cm, &env);
                        self.check_final(&mods, &own, "");
                        mods = Mod::merge(&mods, &own);
                    }
                    for s in subscripts {
                        dims.push((s.clone(), env.clone()));
                    }
                    if causality.is_none() {
                        causality = *base_prefix;
                    }
                    if base.parts.len() == 1 {
                        if let Some(b) = predefined(base.parts[0].as_str()) {
                            let found = self.short_base_named(class, base);
                            if found.is_none() {
                                return Ok(ResolvedType {
                                    base: b,
                                    mods,
                                    dims,
                                    causality,
                                    class: Some(class),
                                    via_connector,
                                });
                            }
                        }
                    }
                    match self.short_base_named(class, base) {
                        Some(n) => class = n,
                        None => {
                            return err(base.span, format!("unknown class `{base}`"));
                        }
                    }
                }
                ClassSpecifier::Enumeration { literals, .. } => {
                    self.check_enumeration(class, literals);
                    let lits = match literals {
                        EnumLiterals::List(l) => l.iter().map(|l| l.name.name.clone()).collect(),
                        EnumLiterals::Colon => Vec::new(),
                    };
                    return Ok(ResolvedType {
                        base: Base::Enum(class, lits),
                        mods,
                        dims,
                        causality,
                        class: Some(class),
                        via_connector,
                    });
                }
                _ => {
                    // Classes used as simple types are never collected as instances, so
                    // their restrictions are checked here.
                    self.check_class_restrictions(class);
                    // `type T extends Real(...)`: a long type class extending a predefined type.
                    if entry.def.prefixes.kind == ClassKind::Type {
                        if let Some(comp) = entry.def.specifier.composition() {
                            for (_, e) in comp.elements() {
                                if let Element::Extends(ext) = e {
                                    if let Some(b) =
                                        ext.base.parts.first().and_then(|p| predefined(p.as_str()))
                                    {
                                        let env = Env {
                                            node: node.clone(),
                                            scope: class,
                                        };
                                        if let Some(cm) = &ext.modification {
                                            mods =
                                                Mod::merge(&mods, &Mod::from_class_mod(cm, &env));
                                        }
                                        return Ok(ResolvedType {
                                            base: b,
                                            mods,
                                            dims,
                                            causality,
                                            class: Some(class),
                                            via_connector,
                                        });
                                    }
                                }
                            }
                        }
                    }
                    if let Some(t) = self.long_class_of_simple_type(node, class)? {
                        return Ok(ResolvedType {
                            base: t.base,
                            mods: Mod::merge(&mods, &t.mods),
                            dims: dims.into_iter().chain(t.dims).collect(),
                            causality: causality.or(t.causality),
                            class: Some(class),
                            via_connector: via_connector || t.via_connector,
                        });
                    }
                    return Ok(ResolvedType {
                        base: Base::Class(class),
                        mods,
                        dims,
                        causality,
                        class: Some(class),
                        via_connector,
                    });
                }
            }
        }
        err(
            Span::DUMMY,
            "type definitions nest too deeply (cyclic short classes?)",
        )
    }

    /// A long class without components that only extends a simple type
    /// (`connector C extends RealOutput; end C;`) is that simple type, with the
    /// modifiers of the extends clause.
    fn long_class_of_simple_type(
        &self,
        node: &NodeRef,
        class: ClassId,
    ) -> Res<Option<ResolvedType>> {
        let entry = self.lib().get(class);
        let Some(comp) = entry.def.specifier.composition() else {
            return Ok(None);
        };
        let mut extends = None;
        for (i, (_, e)) in comp.elements().enumerate() {
            match e {
                Element::Component { .. } => return Ok(None),
                Element::Extends(ext) if extends.is_none() => extends = Some((i, ext)),
                Element::Extends(_) => return Ok(None),
                _ => {}
            }
        }
        let Some((i, ext)) = extends else {
            return Ok(None);
        };
        let bases = self.lk.bases(class);
        let Some((b, _)) = bases.iter().find(|(_, idx)| *idx == i) else {
            return Ok(None);
        };
        let depth = self.depth.get();
        if *b == class || depth > 200 {
            return Ok(None);
        }
        self.depth.set(depth + 1);
        let t = self.resolve_type_class(node, *b);
        self.depth.set(depth);
        let t = t?;
        if !t.base.is_primitive() {
            return Ok(None);
        }
        let env = Env {
            node: node.clone(),
            scope: class,
        };
        let mods = match &ext.modification {
            Some(cm) => Mod::merge(&Mod::from_class_mod(cm, &env), &t.mods),
            None => t.mods.clone(),
        };
        Ok(Some(ResolvedType { mods, ..t }))
    }

    /// `input`/`output` of a component, from its declaration or its type
    /// (`type InArgument = input Real`).
    pub fn comp_causality(&self, node: &NodeRef, comp: &Rc<Comp>) -> Option<ast::Causality> {
        comp.tprefixes
            .causality
            .or_else(|| self.comp_type(node, comp).ok().and_then(|t| t.causality))
    }

    /// Is the component present (its `if` condition true)?
    pub fn comp_enabled(&self, node: &NodeRef, comp: &Rc<Comp>) -> Res<bool> {
        let Some(cond) = &comp.decl.condition else {
            return Ok(true);
        };
        let env = comp.condition_env.as_ref().unwrap_or(&comp.env);
        let v = self.eval_expr(cond, env, &mut Cx::eval())?;
        let _ = node;
        match v {
            Val::S(Expr::Boolean(b)) => Ok(b),
            _ => err(
                cond.span,
                "the condition of a conditional component must be a Boolean parameter expression",
            ),
        }
    }

    /// Dimensions of a component (declaration subscripts, then type subscripts), evaluated.
    pub fn comp_dims(&self, node: &NodeRef, comp: &Rc<Comp>) -> Res<Vec<usize>> {
        if let Some(d) = comp.dims.get() {
            return Ok(d.clone());
        }
        let ty = self.comp_type(node, comp)?;
        let mut subs: Vec<(ast::Subscript, Env)> = Vec::new();
        for s in comp.decl.subscripts.iter().chain(comp.type_subs.iter()) {
            subs.push((s.clone(), comp.env.clone()));
        }
        subs.extend(ty.dims.iter().cloned());
        let mut dims = Vec::new();
        let mut colon_positions = Vec::new();
        for (i, (s, env)) in subs.iter().enumerate() {
            match s {
                ast::Subscript::Colon(_) => {
                    colon_positions.push(i);
                    dims.push(0);
                }
                ast::Subscript::Expr(e) => {
                    let v = self.eval_expr(e, env, &mut Cx::eval())?;
                    dims.push(self.dim_size(&v, e.span)?);
                }
            }
        }
        if dims
            .iter()
            .try_fold(1usize, |acc, d| acc.checked_mul(*d))
            .is_none_or(|n| n > MAX_ELEMENTS)
        {
            return err(
                comp.decl.name.span,
                format!(
                    "`{}` has more than {MAX_ELEMENTS} elements; moss expands arrays element by element",
                    comp.name
                ),
            );
        }
        if !colon_positions.is_empty() {
            // A field of a record bound as a whole (`cell(cellData = data)`) takes its value,
            // hence its size, from that binding, not from its own declaration.
            if let Some(shape) = self.field_shape_from_record_binding(node, comp)? {
                for p in colon_positions {
                    dims[p] = shape.get(p).copied().unwrap_or(0);
                }
                let _ = comp.dims.set(dims.clone());
                return Ok(dims);
            }
            // `:` dimensions come from the binding (or, for a parameter without one, from
            // its start value, which is then also its value).
            let start = comp.mods.sub("start").and_then(|m| m.binding.as_ref());
            let Some(b) = comp.mods.binding.as_ref().or(start) else {
                return err(
                    comp.decl.name.span,
                    format!(
                        "the size of `{}` is given as `:` but it has no binding to take it from",
                        comp.name
                    ),
                );
            };
            let v = self.expand(&b.expr, &b.env, &mut Cx::flat())?;
            let v = v.index_path(&b.index);
            let mut shape = v.shape();
            if shape.contains(&0) && b.index.is_empty() {
                // an empty array keeps no inner sizes: `fill(0.0, 0, 2)` has them in its call
                if let Some(s) = self.constructor_shape(&b.expr, &b.env) {
                    shape = s;
                }
            }
            for p in colon_positions {
                dims[p] = shape.get(p).copied().unwrap_or(0);
            }
        }
        let _ = comp.dims.set(dims.clone());
        Ok(dims)
    }

    /// The shape `fill(v, d1, d2, ...)`, `zeros(d1, ...)` or `ones(d1, ...)` construct (a
    /// scalar `v`), with sizes known now; `None` for other expressions.
    fn constructor_shape(&self, e: &ast::Expr, env: &Env) -> Option<Vec<usize>> {
        let ast::ExprKind::Call {
            function,
            args: ast::FunctionArgs::List { positional, named },
        } = &e.kind
        else {
            return None;
        };
        let [part] = &function.parts[..] else {
            return None;
        };
        let sizes = match part.name.as_str() {
            "fill" if positional.len() >= 2 => &positional[1..],
            "zeros" | "ones" if !positional.is_empty() => &positional[..],
            _ => return None,
        };
        if !named.is_empty() || function.global || !part.subscripts.is_empty() {
            return None;
        }
        if part.name.as_str() == "fill"
            && !matches!(
                self.expand(&positional[0], env, &mut Cx::flat()),
                Ok(Val::S(_))
            )
        {
            return None;
        }
        sizes
            .iter()
            .map(|d| {
                let v = self.eval_expr(d, env, &mut Cx::eval()).ok()?;
                self.dim_size(&v, d.span).ok()
            })
            .collect()
    }

    /// The shape of field `comp` of the record instance `node` when `node` is bound as a
    /// whole to another record instance (`r = other`): the shape of `other.<field>`.
    /// Whether record instance `node`, or a record instance it is a field of, is bound as a
    /// whole (its fields then take their values from that binding, not their defaults).
    pub fn bound_as_whole(&self, node: &NodeRef) -> bool {
        let mut cur = node.clone();
        loop {
            if cur.mods.binding.is_some() {
                return true;
            }
            let Some(parent) = cur.parent.clone() else {
                return false;
            };
            if !self.is_record_class(cur.class) || !self.is_record_class(parent.class) {
                return false;
            }
            cur = parent;
        }
    }

    /// The outermost record instance, `node` or one `node` is a field of, bound as a whole
    /// (`stack(data = d)` binds `stack.data.cell[1].table` through `d`, whatever the
    /// declaration of `cell` says): its binding and the path (names and 1-based indices)
    /// from it down to `node`.
    pub fn outermost_record_binding(&self, node: &NodeRef) -> Option<(BindingMod, FieldPath)> {
        let mut below: Vec<(String, Vec<usize>)> = Vec::new();
        let mut found: Option<(BindingMod, usize)> = None;
        let mut cur = node.clone();
        loop {
            if let Some(b) = cur.mods.binding.as_ref() {
                found = Some((b.clone(), below.len()));
            }
            let Some(parent) = cur.parent.clone() else {
                break;
            };
            if !self.is_record_class(cur.class) || !self.is_record_class(parent.class) {
                break;
            }
            let seg = cur.path.rsplit('.').next().unwrap_or(&cur.path);
            let (name, idx) = match seg.split_once('[') {
                Some((n, rest)) => (
                    n,
                    rest.trim_end_matches(']')
                        .split(',')
                        .filter_map(|x| x.trim().parse::<usize>().ok())
                        .collect(),
                ),
                None => (seg, Vec::new()),
            };
            below.push((name.to_string(), idx));
            cur = parent;
        }
        let (b, depth) = found?;
        below.truncate(depth);
        below.reverse();
        Some((b, below))
    }

    fn field_shape_from_record_binding(
        &self,
        node: &NodeRef,
        comp: &Rc<Comp>,
    ) -> Res<Option<Vec<usize>>> {
        if node
            .mods
            .sub(&comp.name)
            .is_some_and(|m| m.binding.is_some())
        {
            return Ok(None);
        }
        let Some((b, below)) = self.outermost_record_binding(node) else {
            return Ok(None);
        };
        if let (ast::ExprKind::Ref(cref), true) = (&b.expr.kind, below.is_empty()) {
            let mut field = cref.clone();
            field.parts.push(ast::RefPart {
                name: comp.decl.name.clone(),
                subscripts: Vec::new(),
            });
            let expr = ast::Expr::new(ast::ExprKind::Ref(field), b.expr.span);
            return match self.expand(&expr, &b.env, &mut Cx::flat()) {
                Ok(v) => Ok(Some(v.index_path(&b.index).shape())),
                Err(_) => Ok(None),
            };
        }
        // Any other record expression (a constructor, an if-expression choosing between
        // records, an array of them): the field of its value, computed now when the
        // branches' fields differ in size.
        let value = match self.expand(&b.expr, &b.env, &mut Cx::flat()) {
            Ok(v) => Some(v),
            Err(_) => self.eval_expr(&b.expr, &b.env, &mut Cx::eval()).ok(),
        };
        let Some(mut v) = value.map(|v| v.index_path(&b.index)) else {
            return Ok(None);
        };
        for (name, idx) in &below {
            let Some(f) = crate::records::field_value(&v, name) else {
                return Ok(None);
            };
            let path: Vec<usize> = idx.iter().map(|i| i.saturating_sub(1)).collect();
            v = f.index_path(&path);
        }
        Ok(crate::records::field_value(&v, &comp.name).map(|f| f.shape()))
    }

    fn dim_size(&self, v: &Val, span: Span) -> Res<usize> {
        match v {
            Val::S(Expr::Integer(n)) if *n >= 0 => Ok(*n as usize),
            Val::S(Expr::Real(r)) if *r >= 0.0 && r.fract() == 0.0 => Ok(*r as usize),
            // `Real x[E]` / `x[Boolean]`: one element per literal.
            Val::A(items) => Ok(items.len()),
            _ => err(
                span,
                "array dimension must be a non-negative Integer known at translation time",
            ),
        }
    }

    /// Child instance for element `indices` of component `comp` (a structured component).
    pub fn child_node(&self, node: &NodeRef, comp: &Rc<Comp>, indices: &[usize]) -> Res<NodeRef> {
        let mut path = crate::expand::qualified(node, &comp.name);
        if !indices.is_empty() {
            push_indices(&mut path, indices);
        }
        if let Some(n) = node.children.borrow().get(&path) {
            return Ok(n.clone());
        }
        let ty = self.comp_type(node, comp)?;
        let Base::Class(class) = ty.base else {
            return err(
                comp.span,
                format!("`{}` is not a structured component", comp.name),
            );
        };
        let mut mods = comp.mods.clone();
        for i in indices {
            mods = mods.index(*i - 1);
        }
        self.check_final(&mods, &ty.mods, &comp.name);
        self.check_protected_modifications(comp, class);
        let mods = Mod::merge(&mods, &ty.mods);
        let parent_inh = self.inherited_of(node);
        let inh = Inherited {
            variability: most_restrictive(comp.tprefixes.variability, parent_inh.variability),
            protected: comp.protected || parent_inh.protected,
            connector: comp.tprefixes.connector.or(parent_inh.connector),
            evaluate: parent_inh
                .evaluate
                .or_else(|| crate::flatten::annotated_evaluate(&comp.decl.description)),
        };
        let child = self.new_node(class, path.clone(), mods, Some(node.clone()), inh);
        node.children.borrow_mut().insert(path, child.clone());
        Ok(child)
    }

    /// The `inner` component an `outer` one of `node` stands for. Without one, a default
    /// inner is added at the top level with a warning (spec 5.4).
    pub fn inner_of(&self, node: &NodeRef, comp: &Rc<Comp>) -> Res<(NodeRef, Rc<Comp>)> {
        if let Some(found) = self.find_inner(node, &comp.name) {
            self.check_inner_matches(node, comp, &found.0, &found.1)?;
            return Ok(found);
        }
        let mut root = node.clone();
        while let Some(p) = root.parent.clone() {
            root = p;
        }
        if let Some((_, c)) = self
            .implicit_inners
            .borrow()
            .iter()
            .find(|(n, _)| *n == comp.name)
        {
            return Ok((root, c.clone()));
        }
        let ty = self.comp_type(node, comp)?;
        if let Some(c) = ty.class {
            if self.lib().get(c).def.prefixes.partial {
                return err(
                    comp.span,
                    format!(
                        "no `inner` declaration for `outer {}`, and its class `{}` is partial so no default can be used",
                        comp.name,
                        self.lk.name_of(c)
                    ),
                )
                .map_err(|d| Box::new(d.with_help(format!(
                    "add `inner {} {};` at the top level of the model",
                    comp.type_name, comp.name
                ))));
            }
        }
        self.warnings.borrow_mut().push(
            Diagnostic::warning(
                comp.span,
                format!(
                    "no `inner` declaration for `outer {}`; a default `inner {} {}` is added at the top level",
                    comp.name, comp.type_name, comp.name
                ),
            )
            .with_help(format!(
                "add `inner {} {};` at the top level of the model",
                comp.type_name, comp.name
            )),
        );
        let mut prefixes = comp.prefixes;
        prefixes.inner = true;
        prefixes.outer = false;
        let inner = Rc::new(Comp {
            name: comp.name.clone(),
            scope: comp.scope,
            type_name: comp.type_name.clone(),
            type_subs: comp.type_subs.clone(),
            decl: comp.decl.clone(),
            prefixes,
            tprefixes: comp.tprefixes,
            protected: false,
            mods: comp.mods.clone(),
            env: comp.env.clone(),
            condition_env: comp.condition_env.clone(),
            span: comp.span,
            ty: OnceCell::new(),
            dims: OnceCell::new(),
        });
        self.implicit_inners
            .borrow_mut()
            .push((comp.name.clone(), inner.clone()));
        Ok((root, inner))
    }

    /// The `inner` component must be a subtype of the `outer` one: the same predefined
    /// type or enumeration, the same dimensions, and every public element of a structured
    /// outer type (spec 5.4).
    fn check_inner_matches(
        &self,
        node: &NodeRef,
        outer: &Rc<Comp>,
        inner_node: &NodeRef,
        inner: &Rc<Comp>,
    ) -> Res<()> {
        let ot = self.comp_type(node, outer)?;
        let it = self.comp_type(inner_node, inner)?;
        let type_problem = match (&ot.base, &it.base) {
            (Base::Class(o), Base::Class(i)) => self
                .lk
                .missing_public_component(*i, *o)
                .map(|m| format!("its class has no element `{m}`")),
            (Base::Enum(_, ol), Base::Enum(_, il)) if ol == il => None,
            (o, i) if o == i => None,
            _ => Some(format!(
                "`{}` is not a subtype of `{}`",
                inner.type_name, outer.type_name
            )),
        };
        let problem = match type_problem {
            Some(p) => Some(p),
            None => {
                let od = self.comp_dims(node, outer)?;
                let id = self.comp_dims(inner_node, inner)?;
                (od != id).then(|| {
                    format!(
                        "its dimensions {} differ from the outer dimensions {}",
                        format_dims(&id),
                        format_dims(&od)
                    )
                })
            }
        };
        let Some(problem) = problem else {
            return Ok(());
        };
        Err(Box::new(
            Diagnostic::error(
                outer.decl.name.span,
                format!(
                    "the `inner {}` that `outer {}` refers to does not match it: {problem}",
                    inner.name, outer.name
                ),
            )
            .with_secondary(inner.decl.name.span, "inner declared here")
            .with_help("declare the inner and outer components with the same type and dimensions"),
        ))
    }

    /// Find the `inner` declaration matching an `outer` component of `node`.
    pub fn find_inner(&self, node: &NodeRef, name: &str) -> Option<(NodeRef, Rc<Comp>)> {
        self.find_inner_from(node.parent.as_ref()?, name)
    }

    /// Find an `inner` declaration `name` in `node` or the instances enclosing it.
    pub fn find_inner_from(&self, node: &NodeRef, name: &str) -> Option<(NodeRef, Rc<Comp>)> {
        let mut cur = Some(node.clone());
        while let Some(n) = cur {
            if let Some(c) = self.find_comp(&n, name) {
                if c.prefixes.inner {
                    return Some((n, c));
                }
            }
            cur = n.parent.clone();
        }
        None
    }
}

/// The first element of `outer` that modifies an element `inner` marks `final`: its path,
/// the span of the modification and the span of the final one. A modifier met twice on
/// the way (same span) is not a modification of itself.
fn final_violation(outer: &Mod, inner: &Mod, path: &str) -> Option<(String, Span, Span)> {
    for (name, om) in &outer.args {
        let Some(im) = inner.sub(name) else { continue };
        if om.span == im.span && !om.span.is_dummy() {
            continue;
        }
        let p = if path.is_empty() {
            name.to_string()
        } else {
            format!("{path}.{name}")
        };
        let changes = om.binding.is_some() || !om.args.is_empty();
        if im.final_ && changes {
            return Some((p, om.span, im.span));
        }
        if let Some(v) = final_violation(om, im, &p) {
            return Some(v);
        }
    }
    None
}

/// A component declaration as found in a class, with its element prefixes.
#[derive(Clone, Copy)]
struct DeclInfo<'d> {
    prefixes: &'d ast::ElementPrefixes,
    clause: &'d ast::ComponentClause,
    decl: &'d ast::ComponentDecl,
    constraining: Option<&'d ast::ConstrainingClause>,
    vis: Visibility,
    span: Span,
}

/// A quoted identifier that holds a flat name (`'a.b[2]'`, as printed by `moss flatten`)
/// stands for that name: reading a flat model back gives the same variable names.
pub fn flat_ident(name: &str) -> &str {
    match name.strip_prefix('\'').and_then(|n| n.strip_suffix('\'')) {
        Some(inner) if inner.contains(['.', '[']) && !inner.contains(['\\', '\'']) => inner,
        _ => name,
    }
}

/// The lower of two variabilities (`constant R r` makes the parameters of `r` constants).
pub fn most_restrictive(
    a: Option<ast::Variability>,
    b: Option<ast::Variability>,
) -> Option<ast::Variability> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    }
}

/// Largest array (number of scalar elements) the frontend expands.
pub const MAX_ELEMENTS: usize = 2_000_000;

/// Deepest chain of `extends` clauses and short class definitions followed when collecting
/// a class's elements (the MSL needs about 15). The collection recurses once per level;
/// deeper chains are reported instead of being cut off without a word.
pub const MAX_INHERITANCE_DEPTH: u32 = 40;

/// `[3, 2]` for dimensions (`scalar` for none).
fn format_dims(dims: &[usize]) -> String {
    if dims.is_empty() {
        return "scalar".to_string();
    }
    let parts: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

/// `[1,2]` for indices `[1, 2]` (1-based).
pub fn format_indices(indices: &[usize]) -> String {
    let mut s = String::new();
    push_indices(&mut s, indices);
    s
}

/// Append `[i,j,...]` to `s` (pushes instead of `format!`: instance names are built once
/// per component of every instance, 10^5 times and more for large models).
pub fn push_indices(s: &mut String, indices: &[usize]) {
    use std::fmt::Write;
    s.push('[');
    for (k, i) in indices.iter().enumerate() {
        if k > 0 {
            s.push(',');
        }
        let _ = write!(s, "{i}");
    }
    s.push(']');
}

/// All index tuples (1-based) of an array with dimensions `dims`, row-major.
pub fn index_tuples(dims: &[usize]) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new()];
    for &d in dims {
        let mut next = Vec::with_capacity(out.len() * d);
        for prefix in &out {
            for i in 1..=d {
                let mut p = prefix.clone();
                p.push(i);
                next.push(p);
            }
        }
        out = next;
    }
    out
}

pub fn arc(s: &str) -> Arc<str> {
    Arc::from(s)
}

/// A modifier as text, element modifiers in name order (environments left out): for
/// comparing inherited declarations.
fn mod_text(m: &Mod) -> String {
    let mut out = String::new();
    let mut args: Vec<&(Arc<str>, Mod)> = m.args.iter().collect();
    args.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, sub) in args {
        out.push_str(name);
        out.push('(');
        out.push_str(&mod_text(sub));
        out.push(')');
    }
    if let Some(b) = &m.binding {
        out.push('=');
        out.push_str(&moss_syntax::print::print_expr(&b.expr));
    }
    out
}
