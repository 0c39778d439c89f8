//! Names in expressions: component references, package constants, enumeration literals,
//! `inner`/`outer` resolution, subscripts applied to component values, and the text forms of
//! names.

use super::*;

impl<'a> Flattener<'a> {
    // -----------------------------------------------------------------------------------
    // Component references
    // -----------------------------------------------------------------------------------

    pub fn expand_cref(&self, c: &ast::ComponentRef, env: &Env, cx: &mut Cx) -> Res<Val> {
        let first = c.parts[0].name.as_str();
        if !c.global {
            if first == "time" && c.parts.len() == 1 {
                if cx.eval {
                    return err(c.span, "`time` is not known at translation time");
                }
                self.time_allowed_in(env.scope, c.span)?;
                return Ok(Val::S(Expr::Time));
            }
            if let Some(v) = cx.local_shared(first) {
                let v = self.apply_subscripts(&v, &c.parts[0].subscripts, env, cx)?;
                return self.record_fields(v, &c.parts[1..], c.span);
            }
            if self.find_comp(&env.node, first).is_some() {
                if !self.visible_from_text(env, first) {
                    return self.resolve_global(c, env, cx).map_err(|d| {
                        Box::new(d.with_help(format!(
                            "`{first}` is declared in a class extending `{}`; the text of a base class does not see the elements of the classes that extend it (specification 5.3)",
                            self.lk.name_of(env.scope)
                        )))
                    });
                }
                // In a package's own text (a modifier of its extends clause applied to a
                // type used elsewhere) the names are package constants: their values.
                let r = Resolve {
                    constant: self.is_package_node(&env.node),
                    local: true,
                };
                return self.resolve_in_node_as(&env.node, &c.parts, env, cx, r, c.span);
            }
        }
        self.resolve_global(c, env, cx)
    }

    /// A component of the instance is seen by a name in the text of class `env.scope` only
    /// when it is an element of that class, declared or inherited (spec 5.3, 7.1): the text
    /// of a base class does not see the components of the classes extending it.
    pub(super) fn visible_from_text(&self, env: &Env, name: &str) -> bool {
        env.scope == env.node.class
            || matches!(self.lk.member(env.scope, name), Some(Found::Comp { .. }))
    }

    /// The built-in variable `time` exists in models and blocks, not in the text of a record
    /// or connector class (spec 3.6.7): their instances are data, which the enclosing
    /// model fills in.
    pub(super) fn time_allowed_in(&self, scope: ClassId, span: Span) -> Res<()> {
        let what = match self.lk.kind(scope) {
            ast::ClassKind::Record | ast::ClassKind::OperatorRecord => "record",
            ast::ClassKind::Connector | ast::ClassKind::ExpandableConnector => "connector",
            _ => return Ok(()),
        };
        err(
            span,
            format!(
                "`time` cannot be used in {what} `{}`: it is a built-in variable of models and blocks only (spec 3.6.7); bind the component to `time` where the {what} is used instead",
                self.lk.name_of(scope)
            ),
        )
    }

    pub(super) fn record_fields(&self, mut v: Val, parts: &[ast::RefPart], span: Span) -> Res<Val> {
        for p in parts {
            v = match v {
                Val::R(fields) => match fields.into_iter().find(|(n, _)| **n == *p.name.name) {
                    Some((_, f)) => f,
                    None => return err(span, format!("no field `{}`", p.name)),
                },
                _ => return err(span, format!("`{}`: not a record", p.name)),
            };
        }
        Ok(v)
    }

    /// Names not found among the instance's components: package constants, enumeration
    /// literals, constants of enclosing classes, imported constants.
    pub(super) fn resolve_global(&self, c: &ast::ComponentRef, env: &Env, cx: &mut Cx) -> Res<Val> {
        let first = c.parts[0].name.as_str();
        let overridden = if c.global || c.parts.len() < 2 {
            None
        } else {
            env.node
                .elems
                .get()
                .and_then(|e| e.class_overrides.get(first).copied())
        };
        let found = if let Some(o) = overridden {
            Some(Found::Class(o))
        } else if c.global {
            self.lib().top_level(first).map(Found::Class)
        } else {
            self.lk.lookup_first_from(env.scope, first, true)
        };
        if found.is_none() && !c.global && c.parts.len() == 1 && first == "Boolean" {
            return Ok(Val::A(vec![
                Val::S(Expr::Boolean(false)),
                Val::S(Expr::Boolean(true)),
            ]));
        }
        let Some(mut found) = found else {
            // Imported constants (`import Modelica.Constants.pi;`).
            for (_, sc) in self.lk.lexical_scopes(env.scope) {
                if let Some((owner, _)) = self.lk.import_component(sc, first) {
                    let node = self.package_node(owner);
                    let mut parts = c.parts.clone();
                    if let Some(l) = imported_last(&self.lk, sc, first) {
                        parts[0].name = ast::Ident::new(l, parts[0].name.span);
                    }
                    return self.resolve_in_node(&node, &parts, env, cx, true, c.span);
                }
            }
            for (_, sc) in self.lk.lexical_scopes(env.scope) {
                if let Some((p1, p2)) = self.lk.ambiguous_import(sc, first) {
                    return err(
                        c.span,
                        format!(
                            "`{first}` is ambiguous: it is found through the unqualified imports of both `{}` and `{}`",
                            self.lk.name_of(p1),
                            self.lk.name_of(p2)
                        ),
                    )
                    .map_err(|d| {
                        Box::new(d.with_help(format!(
                            "import it by name (`import {}.{first};`), which takes precedence over unqualified imports (spec 13.2.1)",
                            self.lk.name_of(p1)
                        )))
                    });
                }
            }
            return err(c.span, format!("unknown name `{}`", cref_text(c)))
                .map_err(|d| Box::new(d.with_label("not found in this scope")));
        };
        let mut i = 0;
        loop {
            match found {
                Found::Comp { owner } => {
                    let node = self.package_node(owner);
                    return self.resolve_in_node(&node, &c.parts[i..], env, cx, true, c.span);
                }
                Found::Class(cls) => {
                    i += 1;
                    let Some(part) = c.parts.get(i) else {
                        // An enumeration type used as a range or dimension: all literals.
                        if let Ok(ResolvedType {
                            base: Base::Boolean,
                            ..
                        }) = self.resolve_type_class(&env.node, cls)
                        {
                            return Ok(Val::A(vec![
                                Val::S(Expr::Boolean(false)),
                                Val::S(Expr::Boolean(true)),
                            ]));
                        }
                        if let Ok(ResolvedType {
                            base: Base::Enum(ec, lits),
                            ..
                        }) = self.resolve_type_class(&env.node, cls)
                        {
                            let ty: Arc<str> = Arc::from(self.lk.name_of(ec).as_str());
                            return Ok(Val::A(
                                lits.iter()
                                    .enumerate()
                                    .map(|(k, l)| {
                                        Val::S(Expr::Enum {
                                            ty: ty.clone(),
                                            literal: l.clone(),
                                            index: k as u32 + 1,
                                        })
                                    })
                                    .collect(),
                            ));
                        }
                        return err(
                            c.span,
                            format!("`{}` is a class, not a value", cref_text(c)),
                        );
                    };
                    // Enumeration literal?
                    let rt = self.resolve_type_class(&env.node, cls)?;
                    if let Base::Enum(ec, lits) = &rt.base {
                        if let Some(k) = lits.iter().position(|l| **l == *part.name.name) {
                            return Ok(Val::S(Expr::Enum {
                                ty: Arc::from(self.lk.name_of(*ec).as_str()),
                                literal: lits[k].clone(),
                                index: k as u32 + 1,
                            }));
                        }
                    }
                    if self.lib().get(cls).def.prefixes.partial {
                        return err(
                            part.name.span,
                            format!(
                                "`{}` is looked up inside `{}`, which is partial",
                                part.name,
                                self.lk.name_of(cls)
                            ),
                        )
                        .map_err(|d| {
                            Box::new(d.with_help(
                                "look it up in a non-partial class (for instance one that extends it)",
                            ))
                        });
                    }
                    if self.lk.is_protected_member(cls, part.name.as_str()) {
                        return err(
                            part.name.span,
                            format!(
                                "`{}` is protected in `{}` and cannot be accessed with dot notation",
                                part.name,
                                self.lk.name_of(cls)
                            ),
                        )
                        .map_err(|d| {
                            Box::new(d.with_help(
                                "only public elements can be named as `A.x`; make it public or use it from inside its class",
                            ))
                        });
                    }
                    match self.lk.member(cls, part.name.as_str()) {
                        Some(Found::Comp { .. }) if !self.lk.is_package_like(cls) => {
                            return err(
                                part.name.span,
                                format!(
                                    "`{}` cannot be looked up inside `{}`, which is not a package and has variables or equations",
                                    part.name,
                                    self.lk.name_of(cls)
                                ),
                            )
                            .map_err(|d| {
                                Box::new(d.with_help(
                                    "only the encapsulated classes of such a class can be named through it (spec 5.3.2); move the constant into a package",
                                ))
                            });
                        }
                        Some(f) => found = f,
                        None => {
                            return err(
                                part.name.span,
                                format!(
                                    "`{}` has no element `{}`",
                                    self.lk.name_of(cls),
                                    part.name
                                ),
                            )
                        }
                    }
                }
            }
        }
    }

    /// Through an `outer` component only the elements of its own (declared) type can be
    /// used, even if the matching `inner` has more (spec 5.4).
    pub(super) fn check_outer_member(
        &self,
        node: &NodeRef,
        comp: &Rc<Comp>,
        part: &ast::RefPart,
    ) -> Res<()> {
        let ty = self.comp_type(node, comp)?;
        let Base::Class(class) = ty.base else {
            return Ok(());
        };
        if self.lk.member(class, part.name.as_str()).is_some() {
            return Ok(());
        }
        err(
            part.name.span,
            format!(
                "`outer {}` is declared as `{}`, which has no element `{}`",
                comp.name,
                self.lk.name_of(class),
                part.name
            ),
        )
        .map_err(|d| {
            Box::new(d.with_help("declare the outer component with a class that has this element"))
        })
    }

    /// Resolve `parts` starting at a component of `node`.
    pub fn resolve_in_node(
        &self,
        node: &NodeRef,
        parts: &[ast::RefPart],
        env: &Env,
        cx: &mut Cx,
        constant: bool,
        span: Span,
    ) -> Res<Val> {
        let r = Resolve {
            constant,
            local: false,
        };
        self.resolve_in_node_as(node, parts, env, cx, r, span)
    }

    /// [`Self::resolve_in_node`], saying whether `parts` is a reference written in `node`
    /// itself: such a local reference to an `inner outer` component denotes the outer one
    /// (spec 5.4), while the components below see the inner one.
    pub(super) fn resolve_in_node_as(
        &self,
        node: &NodeRef,
        parts: &[ast::RefPart],
        env: &Env,
        cx: &mut Cx,
        how: Resolve,
        span: Span,
    ) -> Res<Val> {
        let constant = how.constant;
        let part = &parts[0];
        let Some(comp) = self.find_comp(node, part.name.as_str()) else {
            return err(
                part.name.span,
                format!("unknown name `{}` in `{}`", part.name, node_name(node)),
            );
        };
        if comp.decl.condition.is_some() {
            let state = if self.comp_enabled(node, &comp)? {
                "present here"
            } else {
                "not present (its condition is false)"
            };
            return err(
                part.name.span,
                format!(
                    "`{}` is a conditional component ({state}); it may only be used in connect equations",
                    part.name
                ),
            );
        }
        if comp.protected && !constant && !Rc::ptr_eq(node, &env.node) {
            return err(
                part.name.span,
                format!(
                    "`{}` is protected in `{}` and cannot be accessed from outside",
                    part.name, node.path
                ),
            );
        }
        let as_outer = comp.prefixes.outer && (!comp.prefixes.inner || how.local);
        if as_outer && parts.len() > 1 {
            self.check_outer_member(node, &comp, &parts[1])?;
        }
        let (node, comp) = if as_outer {
            // An `outer` constant of a package used inside an instance refers to the
            // `inner` one of the instances enclosing the use.
            let in_package = node.parent.is_none() && !node.path.is_empty();
            let from_use = if in_package {
                self.find_inner_from(&env.node, &comp.name)
            } else {
                None
            };
            match from_use {
                Some(found) => found,
                None => self.inner_of(node, &comp)?,
            }
        } else {
            (node.clone(), comp)
        };
        let node = &node;
        let dims = self.comp_dims(node, &comp)?;
        let typed = self.typed_dimensions(&comp, &part.subscripts);
        let sels = self.eval_subscripts(&part.subscripts, &dims, &typed, env, cx)?;
        let ty = self.comp_type(node, &comp)?;
        let is_const = comp.tprefixes.variability == Some(ast::Variability::Constant)
            || self.inherited_of(node).variability == Some(ast::Variability::Constant);
        let is_param = is_const
            || comp.tprefixes.variability == Some(ast::Variability::Parameter)
            || self.inherited_of(node).variability == Some(ast::Variability::Parameter);
        if ty.base.is_primitive() && parts.len() > 1 {
            return err(
                parts[1].name.span,
                format!(
                    "`{}` is a scalar and has no element `{}`",
                    comp.name, parts[1].name
                ),
            );
        }
        if ty.base.is_primitive() && (cx.eval || constant) {
            if !is_param {
                return err(
                    span,
                    format!(
                        "`{}` is not a parameter or constant, so its value is not known at translation time",
                        qualified(node, &comp.name)
                    ),
                );
            }
            let whole = self.comp_value(node, &comp, span)?;
            if cx.eval && !is_const && self.structural_trials.get() == 0 {
                self.structural
                    .borrow_mut()
                    .insert(qualified(node, &comp.name));
            }
            return Ok(select(&whole, &sels, &dims));
        }
        if let Base::Class(c) = ty.base {
            if crate::tables::is_external_object(self, c) {
                let Some(b) = &comp.mods.binding else {
                    return err(
                        span,
                        format!("external object `{}` has no constructor call", comp.name),
                    );
                };
                let mut ocx = Cx::flat();
                ocx.eval = cx.eval;
                return self.expand(&b.expr, &b.env, &mut ocx);
            }
        }
        let base = qualified(node, &comp.name);
        let rest = &parts[1..];
        self.build_selected(&sels, &dims, &mut Vec::new(), &mut |me, idx| {
            if ty.base.is_primitive() {
                let name = if idx.is_empty() {
                    base.clone()
                } else {
                    format!("{base}{}", format_indices(idx))
                };
                Ok(Val::S(Expr::Var {
                    name,
                    subscripts: Vec::new(),
                }))
            } else {
                let child = me.child_node(node, &comp, idx)?;
                if rest.is_empty() {
                    me.record_value(&child, env, cx, constant, span)
                } else {
                    me.resolve_in_node(&child, rest, env, cx, constant, span)
                }
            }
        })
    }

    /// A structured component as a record value (all its components).
    pub(super) fn record_value(
        &self,
        node: &NodeRef,
        env: &Env,
        cx: &mut Cx,
        constant: bool,
        span: Span,
    ) -> Res<Val> {
        let elems = self.elems(node);
        let mut fields = Vec::new();
        for c in &elems.comps {
            if !self.comp_enabled(node, c)? || c.prefixes.outer {
                continue;
            }
            let part = ast::RefPart {
                name: c.decl.name.clone(),
                subscripts: Vec::new(),
            };
            let v = self.resolve_in_node(node, &[part], env, cx, constant, span)?;
            fields.push((c.name.clone(), v));
        }
        let v = Val::R(fields);
        if self.is_record_class(node.class) {
            self.note_record_class(self.lk.follow_short_class(node.class), &v);
        }
        Ok(v)
    }

    pub(super) fn build_selected(
        &self,
        sels: &[Sel],
        dims: &[usize],
        prefix: &mut Vec<usize>,
        leaf: &mut dyn FnMut(&Self, &[usize]) -> Res<Val>,
    ) -> Res<Val> {
        let Some((s, rest)) = sels.split_first() else {
            return leaf(self, prefix);
        };
        match s {
            Sel::One(i) => {
                prefix.push(*i);
                let r = self.build_selected(rest, &dims[1..], prefix, leaf);
                prefix.pop();
                r
            }
            Sel::Many(is) => {
                let mut out = Vec::new();
                for i in is {
                    prefix.push(*i);
                    let r = self.build_selected(rest, &dims[1..], prefix, leaf);
                    prefix.pop();
                    out.push(r?);
                }
                Ok(Val::A(out))
            }
            Sel::Dynamic(k, d) => {
                let mut vals = Vec::new();
                for i in 1..=*d {
                    prefix.push(i);
                    let r = self.build_selected(rest, &dims[1..], prefix, leaf);
                    prefix.pop();
                    vals.push(r?);
                }
                let Some(last) = vals.pop() else {
                    return err(Span::DUMMY, "subscript of an empty array");
                };
                let conds = vals
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| {
                        (
                            fold::binary(FB::Eq, k.clone(), Expr::Integer(i as i64 + 1)),
                            v,
                        )
                    })
                    .collect();
                self.if_vals(conds, last, Span::DUMMY)
            }
        }
    }

    /// Evaluate subscripts against dimensions; missing trailing subscripts select everything.
    /// For each subscripted dimension of `comp`, the name of the Boolean or enumeration
    /// type the dimension is declared with (`Real x[E]`), if it is.
    pub(super) fn typed_dimensions(
        &self,
        comp: &Comp,
        subs: &[ast::Subscript],
    ) -> Vec<Option<String>> {
        if subs.is_empty() || !comp.type_subs.is_empty() {
            return Vec::new();
        }
        let kind = |d: &ast::Subscript| -> Option<String> {
            let ast::Subscript::Expr(e) = d else {
                return None;
            };
            if !matches!(e.kind, ExprKind::Ref(_)) {
                return None;
            }
            // A type name as a value is the array of its values; an Integer size is a scalar.
            match self.eval_expr(e, &comp.env, &mut Cx::eval()).ok()? {
                Val::A(values) => match values.first()? {
                    Val::S(Expr::Enum { ty, .. }) => Some(format!("enumeration `{ty}`")),
                    Val::S(Expr::Boolean(_)) => Some("Boolean".into()),
                    _ => None,
                },
                _ => None,
            }
        };
        comp.decl
            .subscripts
            .iter()
            .take(subs.len())
            .map(kind)
            .collect()
    }

    /// `typed[k]` names the type dimension `k` is declared with when that is Boolean or an
    /// enumeration: such a dimension is indexed by values of that type, never by Integers
    /// (spec 10.5.1).
    pub(super) fn eval_subscripts(
        &self,
        subs: &[ast::Subscript],
        dims: &[usize],
        typed: &[Option<String>],
        env: &Env,
        cx: &mut Cx,
    ) -> Res<Vec<Sel>> {
        if subs.len() > dims.len() {
            let span = match &subs[0] {
                ast::Subscript::Colon(s) => *s,
                ast::Subscript::Expr(e) => e.span,
            };
            return err(
                span,
                format!(
                    "too many subscripts: {} given for {} dimension(s)",
                    subs.len(),
                    dims.len()
                ),
            );
        }
        let mut out = Vec::new();
        for (k, &d) in dims.iter().enumerate() {
            match subs.get(k) {
                None | Some(ast::Subscript::Colon(_)) => out.push(Sel::Many((1..=d).collect())),
                Some(ast::Subscript::Expr(e)) => {
                    let saved = cx.end.replace(d);
                    let v = self.eval_expr(e, env, cx);
                    let v = match v {
                        Err(_) if !cx.eval => {
                            // Not known at translation time: select during simulation.
                            let dynamic = self.expand(e, env, cx);
                            cx.end = saved;
                            match dynamic? {
                                Val::S(k) => {
                                    out.push(Sel::Dynamic(k, d));
                                    continue;
                                }
                                _ => return err(e.span, "a subscript must be a scalar Integer"),
                            }
                        }
                        other => other,
                    };
                    cx.end = saved;
                    let v = v?;
                    let check = |i: i64| -> Res<usize> {
                        if i < 1 || i as usize > d {
                            err(e.span, format!("index {i} is out of bounds 1..{d}"))
                        } else {
                            Ok(i as usize)
                        }
                    };
                    if let (Some(Some(ty)), Val::S(Expr::Integer(i))) = (typed.get(k), &v) {
                        return err(
                            e.span,
                            format!(
                                "dimension {} is declared by the type {ty} and must be indexed by its values, not by the Integer {i} (spec 10.5.1)",
                                k + 1
                            ),
                        );
                    }
                    match v {
                        Val::S(x) => match subscript_index(&x) {
                            Some(i) => out.push(Sel::One(check(i)?)),
                            None => return err(e.span, "subscripts must be Integer"),
                        },
                        Val::A(items) => {
                            let mut is = Vec::new();
                            for it in items {
                                match it.scalar().and_then(subscript_index) {
                                    Some(i) => is.push(check(i)?),
                                    None => return err(e.span, "subscripts must be Integer"),
                                }
                            }
                            out.push(Sel::Many(is));
                        }
                        Val::R(_) => return err(e.span, "a record is not a subscript"),
                    }
                }
            }
        }
        Ok(out)
    }

    /// Subscripts applied to an already expanded value (locals).
    pub(super) fn apply_subscripts(
        &self,
        v: &Val,
        subs: &[ast::Subscript],
        env: &Env,
        cx: &mut Cx,
    ) -> Res<Val> {
        if subs.is_empty() {
            return Ok(v.clone());
        }
        let dims = v.shape();
        let sels = self.eval_subscripts(subs, &dims, &[], env, cx)?;
        Ok(select(v, &sels, &dims))
    }

    /// The value of a parameter or constant (the whole array), evaluated.
    pub fn comp_value(&self, node: &NodeRef, comp: &Rc<Comp>, span: Span) -> Res<Val> {
        let key = qualified(node, &comp.name) + &format!("#{:p}", Rc::as_ptr(node));
        if let Some(v) = self.values.borrow().get(&key) {
            return Ok(v.clone());
        }
        let dims = self.comp_dims(node, comp)?;
        if let Some(f) = comp.mods.sub("fixed").and_then(|m| m.binding.as_ref()) {
            if let Ok(Val::S(Expr::Boolean(false))) =
                self.eval_expr(&f.expr, &f.env, &mut Cx::eval())
            {
                return err(
                    span,
                    format!(
                        "`{}` has fixed = false: its value is computed during initialization, not known at translation time",
                        qualified(node, &comp.name)
                    ),
                );
            }
        }
        let constant = comp.tprefixes.variability == Some(ast::Variability::Constant);
        let whole_binding = if constant {
            None
        } else {
            self.outermost_record_binding(node)
        };
        if let Some((rb, below)) = whole_binding {
            // A field of a record bound as a whole (`R r = R(...)`, `x5 = x3`), also
            // through an enclosing record (`stack(data = d)` for `stack.data.cell[1].x`).
            let mut whole = self
                .eval_expr(&rb.expr, &rb.env, &mut Cx::eval())?
                .index_path(&rb.index);
            for (name, idx) in &below {
                let path: Vec<usize> = idx.iter().map(|i| i.saturating_sub(1)).collect();
                whole = match crate::records::field_value(&whole, name) {
                    Some(f) => f.index_path(&path),
                    None => Val::S(Expr::Integer(0)),
                };
            }
            if let Val::R(fields) = whole {
                if let Some((_, f)) = fields.into_iter().find(|(n, _)| *n == comp.name) {
                    let v = broadcast(f, &dims);
                    self.values.borrow_mut().insert(key, v.clone());
                    return Ok(v);
                }
            }
        }
        let v = match &comp.mods.binding {
            Some(b) => {
                let v = self.eval_expr(&b.expr, &b.env, &mut Cx::eval())?;
                let v = v.index_path(&b.index);
                broadcast(v, &dims)
            }
            None => {
                // No binding: the start value (default 0/false/first literal).
                let ty = self.comp_type(node, comp)?;
                let start = comp
                    .mods
                    .sub("start")
                    .or_else(|| ty.mods.sub("start"))
                    .and_then(|m| m.binding.clone());
                let v = match start {
                    Some(b) => self
                        .eval_expr(&b.expr, &b.env, &mut Cx::eval())?
                        .index_path(&b.index),
                    None => {
                        if comp.tprefixes.variability == Some(ast::Variability::Constant) {
                            return err(
                                comp.decl.name.span,
                                format!("constant `{}` has no value", comp.name),
                            )
                            .map_err(|d| Box::new(d.with_secondary(span, "used here")));
                        }
                        Val::S(default_value(&ty.base, &self.lk))
                    }
                };
                broadcast(v, &dims)
            }
        };
        self.values.borrow_mut().insert(key, v.clone());
        Ok(v)
    }
}

pub fn cref_to_name(c: &ast::ComponentRef) -> ast::Name {
    ast::Name {
        global: c.global,
        parts: c.parts.iter().map(|p| p.name.clone()).collect(),
        span: c.span,
    }
}

pub fn cref_text(c: &ast::ComponentRef) -> String {
    let mut s = if c.global {
        ".".to_string()
    } else {
        String::new()
    };
    for (i, p) in c.parts.iter().enumerate() {
        if i > 0 {
            s.push('.');
        }
        s.push_str(p.name.as_str());
    }
    s
}

pub fn qualified(node: &NodeRef, name: &str) -> String {
    qualified_at(&node.path, name)
}

/// The name of element `name` of the instance at `path` (`""` for the model itself).
pub fn qualified_at(path: &str, name: &str) -> String {
    let name = crate::ctx::flat_ident(name);
    if path.is_empty() {
        name.to_string()
    } else {
        // Pushed, not `format!`ed: this is called for every name of every instance.
        let mut s = String::with_capacity(path.len() + 1 + name.len() + 8);
        s.push_str(path);
        s.push('.');
        s.push_str(name);
        s
    }
}

pub(super) fn node_name(node: &NodeRef) -> String {
    if node.path.is_empty() {
        "the model".to_string()
    } else {
        format!("`{}`", node.path)
    }
}

/// For `import A.B.c;` / `import x = A.B.c;`, the imported component's own name.
pub(super) fn imported_last(lk: &Lookup, scope: ClassId, name: &str) -> Option<Arc<str>> {
    let entry = lk.lib.get(scope);
    let comp = entry.def.specifier.composition()?;
    for (_, e) in comp.elements() {
        if let ast::Element::Import(imp) = e {
            match &imp.kind {
                ast::ImportKind::Renaming { alias, name: n } if alias.as_str() == name => {
                    return n.last().map(|l| l.name.clone())
                }
                ast::ImportKind::Qualified(n) if n.last().is_some_and(|l| l.as_str() == name) => {
                    return n.last().map(|l| l.name.clone())
                }
                _ => {}
            }
        }
    }
    None
}

/// How [`Flattener::resolve_in_node_as`] resolves a reference.
#[derive(Clone, Copy)]
pub(super) struct Resolve {
    /// Only constants and parameters are wanted (a translation-time value).
    pub(super) constant: bool,
    /// The reference is written in the node it starts in (see spec 5.4 on `inner outer`).
    pub(super) local: bool,
}
