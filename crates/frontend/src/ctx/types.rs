//! The type of a component: its class name resolved (through redeclared classes of the
//! instance and short class definitions), with the modifiers it gathers on the way (short
//! class modifiers, a class element's modifier, a derived package's extends modifiers).

use super::*;

impl<'a> Flattener<'a> {
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
    pub(super) fn short_base_named(&self, class: ClassId, base: &ast::Name) -> Option<ClassId> {
        let entry = self.lib().get(class);
        if entry.origin.is_none() {
            return self.class_named(entry.parent, base);
        }
        self.lk.short_class_base(class, base)
    }

    pub(super) fn class_named(&self, scope: Option<ClassId>, name: &ast::Name) -> Option<ClassId> {
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

    pub(super) fn elems_overrides(&self, node: &NodeRef, name: &str) -> Option<ClassId> {
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
}
