//! The elements of an instance: collected through `extends` clauses and short class
//! definitions with the modifiers merged (the outer wins), redeclarations of classes and
//! components applied, and the legality checks that go with them (`final`, constraining
//! classes, duplicate declarations, protected elements).

use super::*;

impl<'a> Flattener<'a> {
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
        self.check_no_modified_bus_elements(node, &out);
        let rc = Rc::new(out);
        let _ = node.elems.set(rc.clone());
        rc
    }

    /// The signals declared in an expandable connector are only potentially present
    /// (spec 9.1.3: they exist once something is connected to them): an instance's modifier
    /// cannot give them values (`EC ec(x = 1.0)`). Its parameters can be modified.
    fn check_no_modified_bus_elements(&self, node: &NodeRef, out: &Elems) {
        if node.mods.args.is_empty() || !self.is_expandable(node) {
            return;
        }
        for (name, m) in &node.mods.args {
            // parameters and constants of a bus (`StackBus(Ns = 2)`) size it: not signals
            let signal = out.index.get(name).is_some_and(|&k| {
                !matches!(
                    out.comps[k].tprefixes.variability,
                    Some(ast::Variability::Parameter | ast::Variability::Constant)
                )
            });
            if !signal {
                continue;
            }
            self.errors.borrow_mut().push(
                Diagnostic::error(
                    m.span,
                    format!(
                        "`{name}` of the expandable connector `{}` cannot be modified: its elements are only potentially present",
                        node.path
                    ),
                )
                .with_help("give the value where the signal is connected, not in the bus (spec 9.1.3)"),
            );
        }
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
    pub(super) fn check_protected_modifications(&self, comp: &Comp, class: ClassId) {
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
