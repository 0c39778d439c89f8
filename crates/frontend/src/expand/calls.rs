//! Calls in expressions: user functions (positional and named arguments, defaults, functional
//! arguments, records returned), `homotopy`, and calls through components.

use super::*;

impl<'a> Flattener<'a> {
    // -----------------------------------------------------------------------------------
    // Calls
    // -----------------------------------------------------------------------------------

    pub(super) fn expand_call(
        &self,
        function: &ast::ComponentRef,
        args: &FunctionArgs,
        env: &Env,
        cx: &mut Cx,
        span: Span,
    ) -> Res<Val> {
        let fname = function
            .parts
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(".");
        // Reductions: sum(e for i in r), etc.
        if let FunctionArgs::Comprehension { body, indices } = args {
            let v = self.comprehension(body, indices, env, cx)?;
            return match fname.as_str() {
                "array" => Ok(v),
                "sum" | "product" | "min" | "max" => self.builtin(&fname, vec![v], span),
                _ => err(
                    span,
                    format!("`{fname}` does not take an iterator argument"),
                ),
            };
        }
        let FunctionArgs::List { positional, named } = args else {
            return err(span, "bad arguments");
        };
        if let Some(op @ ("isRoot" | "rooted")) =
            crate::overconstrained::connections_operator(function)
        {
            return self.graph_query(op, positional, named, env, cx, span);
        }
        if !function.global && function.parts.len() > 1 {
            self.check_call_through_component(function, env)?;
        }
        let class = if function.global {
            self.lk
                .resolve_class_name(None, &cref_to_name(function), false)
        } else {
            self.function_redeclared_in_component(function, env)
                .or_else(|| self.lookup_function(env, &cref_to_name(function)))
        };
        let class = class.map(|id| self.inner_class_for_outer(&env.node, id).unwrap_or(id));
        match class {
            Some(id) => {
                let owner = self.call_owner(function, env);
                self.call_user(id, positional, named, env, cx, span, owner.as_ref())
            }
            None => {
                if !BUILTINS.contains(&fname.as_str()) && !EXTRA_BUILTINS.contains(&fname.as_str())
                {
                    return err(function.span, format!("unknown function `{fname}`")).map_err(
                        |d| match unsupported_feature(&fname) {
                            Some(note) => Box::new(d.with_note(note)),
                            None => d,
                        },
                    );
                }
                if fname == "getInstanceName" {
                    // the simulated class's simple name, then the instance path (spec
                    // 3.7.4: "Vehicle.engine.controller"); the MSL seeds its noise
                    // generators with a hash of it
                    let mut root = env.node.clone();
                    while let Some(p) = root.parent.clone() {
                        root = p;
                    }
                    let top = self.lk.name_of(root.class);
                    let simple = top.rsplit('.').next().unwrap_or(&top).to_string();
                    let path = if env.node.path.is_empty() {
                        simple
                    } else {
                        format!("{simple}.{}", env.node.path)
                    };
                    return Ok(Val::S(Expr::String(path)));
                }
                if fname == "cardinality" {
                    return self.cardinality_query(positional, named, env, cx, span);
                }
                if fname == "homotopy" {
                    return self.homotopy(positional, named, env, cx, span);
                }
                if let Some(formals) = synchronous_formals(&fname) {
                    let args = place_synchronous_args(&fname, formals, positional, named, span)?;
                    let mut vals = Vec::with_capacity(args.len());
                    for (k, a) in args.into_iter().enumerate() {
                        vals.push(match a {
                            SyncArg::Given(a)
                                if crate::state_machines::is_state_argument(&fname, k) =>
                            {
                                self.state_reference(a, &fname, env, cx)?
                            }
                            SyncArg::Given(a) => self.expand(a, env, cx)?,
                            SyncArg::Default(e) => Val::S(e),
                        });
                    }
                    return self.builtin(&fname, vals, span);
                }
                if !named.is_empty() && fname != "String" {
                    return err(span, format!("`{fname}` does not take named arguments"));
                }
                if fname == "size" {
                    if let Some(r) = self.size_of_empty_component(positional, env, cx, span)? {
                        return Ok(r);
                    }
                }
                let mut vals = Vec::new();
                for (k, a) in positional.iter().enumerate() {
                    // Dimension arguments are structural: evaluate them.
                    let structural = match fname.as_str() {
                        "fill" => k >= 1,
                        "zeros" | "ones" | "identity" => true,
                        "linspace" => k == 2,
                        "cat" => k == 0,
                        "size" => k == 1,
                        _ => false,
                    };
                    if structural {
                        vals.push(self.eval_expr(a, env, cx)?);
                    } else if k == 0 && matches!(fname.as_str(), "size" | "ndims") {
                        // Only the shape matters: no need for values.
                        let mut fcx = cx.clone();
                        fcx.eval = false;
                        vals.push(self.expand(a, env, &mut fcx)?);
                    } else {
                        vals.push(self.expand(a, env, cx)?);
                    }
                }
                if fname == "String" {
                    // `String(r)` of an operator record calls its `'String'` (spec 14.4)
                    if let Some(class) = vals.first().and_then(|v| match v {
                        Val::R(_) => self.record_class_of(v),
                        _ => None,
                    }) {
                        if !named.is_empty() {
                            return err(
                                span,
                                "named arguments of an overloaded `String` are not supported; pass them by position",
                            );
                        }
                        return self.call_operator_of(class, "'String'", vals, env, cx, span);
                    }
                    let mut s: Vec<Expr> = vals.iter().map(Val::to_expr).collect();
                    if !named.is_empty() {
                        s = self.string_options(s, named, env, cx, span)?;
                    }
                    return Ok(Val::S(fold::call("String", s)));
                }
                self.builtin(&fname, vals, span)
            }
        }
    }

    /// `size(a)` or `size(a, k)` of a component `a` of this instance with no elements: an
    /// empty array value keeps no inner sizes, its declaration does (`Real table[:, :] =
    /// fill(0.0, 0, 2)`: `size(table, 2)` is 2, which the MSL's tables rely on for their
    /// default `columns`). `None` for anything else.
    fn size_of_empty_component(
        &self,
        positional: &[ast::Expr],
        env: &Env,
        cx: &mut Cx,
        span: Span,
    ) -> Res<Option<Val>> {
        let Some(ast::ExprKind::Ref(c)) = positional.first().map(|a| &a.kind) else {
            return Ok(None);
        };
        let [part] = &c.parts[..] else {
            return Ok(None);
        };
        let name = part.name.as_str();
        if c.global || !part.subscripts.is_empty() || cx.local(name).is_some() {
            return Ok(None);
        }
        let Some(comp) = self.find_comp(&env.node, name) else {
            return Ok(None);
        };
        if !self.visible_from_text(env, name) {
            return Ok(None);
        }
        let dims = self.comp_dims(&env.node, &comp)?;
        if !dims.contains(&0) {
            return Ok(None);
        }
        let int = |d: usize| Val::S(Expr::Integer(d as i64));
        match positional.get(1) {
            None => Ok(Some(Val::A(dims.iter().map(|&d| int(d)).collect()))),
            Some(k) => {
                let k = self.eval_int(k, env, cx)?;
                match usize::try_from(k)
                    .ok()
                    .and_then(|k| dims.get(k.wrapping_sub(1)))
                {
                    Some(&d) if k >= 1 => Ok(Some(int(d))),
                    _ => err(span, format!("size: dimension {k} out of range")),
                }
            }
        }
    }

    /// The arguments of `String(x, <options>)` with named options (spec 3.7.1) in the
    /// positional form later stages read: `(x, format)`, or `(x, minimumLength,
    /// leftJustified, significantDigits)` with the defaults `0, true, 6` for options not
    /// given (`significantDigits` only matters for a Real `x`).
    pub(super) fn string_options(
        &self,
        mut args: Vec<Expr>,
        named: &[ast::NamedArg],
        env: &Env,
        cx: &mut Cx,
        span: Span,
    ) -> Res<Vec<Expr>> {
        if args.len() != 1 {
            return err(
                span,
                "the options of `String` (minimumLength, leftJustified, significantDigits, format) are named arguments only; name the extra positional arguments",
            );
        }
        let mut options = [Expr::Integer(0), Expr::Boolean(true), Expr::Integer(6)];
        let mut format = None;
        for n in named {
            let value = self.expand(&n.value, env, cx)?.to_expr();
            match n.name.as_str() {
                "minimumLength" => options[0] = value,
                "leftJustified" => options[1] = value,
                "significantDigits" => options[2] = value,
                "format" => format = Some(value),
                other => {
                    return err(
                        n.span,
                        format!("`String` has no option `{other}`; use minimumLength, leftJustified, significantDigits or format"),
                    )
                }
            }
        }
        match format {
            Some(f) if named.len() == 1 => args.push(f),
            Some(_) => {
                return err(
                    span,
                    "`format` cannot be combined with the other options of `String`; give it alone",
                )
            }
            None => args.extend(options),
        }
        Ok(args)
    }

    /// For a class declared `outer` (`outer function f = A;`), the matching `inner` class of
    /// an enclosing instance.
    pub(super) fn inner_class_for_outer(&self, node: &NodeRef, id: ClassId) -> Option<ClassId> {
        let entry = self.lib().get(id);
        let parent = entry.parent?;
        let name = entry.def.name.as_str();
        let declared_outer = |class: ClassId, inner: bool| {
            let e = self.lib().get(class);
            e.def.specifier.composition().is_some_and(|c| {
                c.elements().any(|(_, el)| {
                    matches!(el, ast::Element::Class { prefixes, class, .. }
                        if class.name.as_str() == name && if inner { prefixes.inner } else { prefixes.outer })
                })
            })
        };
        if !declared_outer(parent, false) {
            return None;
        }
        let mut cur = node.parent.clone();
        while let Some(n) = cur {
            let class = self.lk.follow_short_class(n.class);
            if declared_outer(class, true) {
                return self.lib().child(class, name);
            }
            cur = n.parent.clone();
        }
        None
    }

    /// `a.B.f(x)` through component `a`: `a` is a scalar component (no array, no array
    /// element, not conditional), the other parts are class names and `f` is public
    /// (spec 5.3.2).
    pub(super) fn check_call_through_component(
        &self,
        function: &ast::ComponentRef,
        env: &Env,
    ) -> Res<()> {
        let first = &function.parts[0];
        let Some(comp) = self.find_comp(&env.node, first.name.as_str()) else {
            return Ok(());
        };
        let help = "call the function by its class name, or through a scalar component";
        let fail = |span: Span, msg: String| -> Res<()> {
            err(span, msg).map_err(|d| Box::new(d.with_help(help)))
        };
        if let Some(p) = function.parts.iter().find(|p| !p.subscripts.is_empty()) {
            return fail(
                p.name.span,
                format!(
                    "a function cannot be called through the array element `{}[...]`",
                    p.name
                ),
            );
        }
        if comp.decl.condition.is_some() {
            return fail(
                first.name.span,
                format!(
                    "a function cannot be called through the conditional component `{}`",
                    first.name
                ),
            );
        }
        if !self.comp_dims(&env.node, &comp)?.is_empty() {
            return fail(
                first.name.span,
                format!(
                    "a function cannot be called through the array `{}`",
                    first.name
                ),
            );
        }
        let Base::Class(mut class) = self.comp_type(&env.node, &comp)?.base else {
            return Ok(());
        };
        let last = function.parts.len() - 1;
        for (i, p) in function.parts.iter().enumerate().skip(1) {
            if self.lk.is_protected_member(class, p.name.as_str()) {
                return fail(
                    p.name.span,
                    format!(
                        "`{}` is protected in `{}` and cannot be called from outside",
                        p.name,
                        self.lk.name_of(class)
                    ),
                );
            }
            if let Some(Found::Class(c)) = self.lk.member(class, p.name.as_str()) {
                let kind = self.lk.kind(self.lk.follow_short_class(c));
                if matches!(
                    kind,
                    ast::ClassKind::Operator | ast::ClassKind::Function { operator: true, .. }
                ) {
                    return fail(
                        p.name.span,
                        format!(
                            "`{}` is an {} of `{}`: a call through a component must find a non-operator function (spec 5.3.2)",
                            p.name,
                            crate::restrict::kind_name(kind),
                            self.lk.name_of(class)
                        ),
                    );
                }
            }
            match self.lk.member(class, p.name.as_str()) {
                Some(Found::Comp { .. }) if i < last => {
                    return fail(
                        p.name.span,
                        format!("`{}` is a component: after the first component, a function is reached through class names only", p.name),
                    );
                }
                Some(Found::Class(c)) if i < last => class = c,
                _ => return Ok(()),
            }
        }
        Ok(())
    }

    /// `a.f(x)` where the instance of component `a` (the inner one for an outer `a`)
    /// redeclares `f` (`inner World world(redeclare function gravityAcceleration = g(k = p))`):
    /// the redeclared function, not the one `a`'s class declares.
    pub(super) fn function_redeclared_in_component(
        &self,
        function: &ast::ComponentRef,
        env: &Env,
    ) -> Option<ClassId> {
        let [_, member] = function.parts.as_slice() else {
            return None;
        };
        let owner = self.call_owner(function, env)?;
        self.elems(&owner)
            .class_overrides
            .get(member.name.as_str())
            .copied()
    }

    pub(crate) fn lookup_function(&self, env: &Env, name: &ast::Name) -> Option<ClassId> {
        // `f(x)` or `Medium.f(x)` with `f` or `Medium` redeclared in this instance.
        if let Some(found) = self.overridden_class_name(&env.node, name) {
            return found;
        }
        if name.parts.len() > 1 {
            // `a.f(x)`: a function looked up in the class of component `a`.
            if let Some(comp) = self.find_comp(&env.node, name.parts[0].as_str()) {
                let ty = self.comp_type(&env.node, &comp).ok()?;
                let Base::Class(mut c) = ty.base else {
                    return None;
                };
                for p in &name.parts[1..] {
                    match self.lk.member(c, p.as_str())? {
                        Found::Class(n) => c = n,
                        Found::Comp { owner } => {
                            let node = self.package_node(owner);
                            let comp = self.find_comp(&node, p.as_str())?;
                            match self.comp_type(&node, &comp).ok()?.base {
                                Base::Class(n) => c = n,
                                _ => return None,
                            }
                        }
                    }
                }
                return Some(c);
            }
        }
        if let Some(c) = self.member_class_of_instance(env, name) {
            return Some(c);
        }
        self.lk.resolve_class_name(Some(env.scope), name, false)
    }

    /// A class named in an element that the instance's class `D` inherits from a base `B`
    /// (`constant Real c = g(1)` in `B`, `g` calling the replaceable `f`) is the member of
    /// `D`, not of `B`: the redeclarations of `D`'s extends clauses apply to the inherited
    /// elements too (spec 7.3), also inside the classes they name, which are then seen from
    /// `D`. Only names that are members of `B` itself are redirected; names found in `B`'s
    /// enclosing scopes keep their lexical meaning.
    fn member_class_of_instance(&self, env: &Env, name: &ast::Name) -> Option<ClassId> {
        let derived = env.node.class;
        if name.global || env.scope == derived {
            return None;
        }
        let first = name.parts[0].as_str();
        if !matches!(self.lk.member(env.scope, first), Some(Found::Class(_))) {
            return None;
        }
        if !env.node.elems.get()?.contributors.contains(&env.scope) {
            return None;
        }
        let Found::Class(c) = self.lk.member(derived, first)? else {
            return None;
        };
        self.lk
            .member_class_path(c, name.parts[1..].iter().map(|p| p.as_str()))
    }

    pub(super) fn homotopy(
        &self,
        positional: &[ast::Expr],
        named: &[ast::NamedArg],
        env: &Env,
        cx: &mut Cx,
        span: Span,
    ) -> Res<Val> {
        let actual = positional
            .first()
            .or_else(|| named.iter().find(|n| n.name == "actual").map(|n| &n.value));
        let simplified = positional.get(1).or_else(|| {
            named
                .iter()
                .find(|n| n.name == "simplified")
                .map(|n| &n.value)
        });
        let (Some(a), Some(s)) = (actual, simplified) else {
            return err(span, "homotopy needs `actual` and `simplified` arguments");
        };
        let a = self.expand(a, env, cx)?;
        let s = self.expand(s, env, cx)?;
        zip_vals(&a, &s, span, &mut |x, y| Expr::Call {
            func: "homotopy".into(),
            args: vec![x, y],
        })
    }

    /// A call of a user-defined function or record constructor.
    /// For `a.f(x)`, a function called through the scalar component `a`: the instance of `a`
    /// (the inner one for an outer `a`, also for an `inner outer` one: `a` is a local
    /// reference). The modifiers of a short function definition in
    /// its class (`function f = g(k = p)`) name parameters of that instance.
    /// For `f(x)` with `f` redeclared in the instance itself
    /// (`redeclare function flowCharacteristic = quadraticFlow(V_flow_nominal = {0, V_op})`
    /// in an extends modifier), that instance.
    pub(super) fn call_owner(&self, function: &ast::ComponentRef, env: &Env) -> Option<NodeRef> {
        if function.global {
            return None;
        }
        if let [only] = function.parts.as_slice() {
            let e = env.node.elems.get()?;
            return e
                .class_overrides
                .contains_key(only.name.as_str())
                .then(|| env.node.clone());
        }
        let [first, _] = function.parts.as_slice() else {
            return None;
        };
        let mut comp = self.find_comp(&env.node, first.name.as_str())?;
        let mut node = env.node.clone();
        if comp.prefixes.outer {
            let (n, ic) = self.inner_of(&node, &comp).ok()?;
            node = n;
            comp = ic;
        }
        if !matches!(self.comp_type(&node, &comp).ok()?.base, Base::Class(_)) {
            return None;
        }
        self.child_node(&node, &comp, &[]).ok()
    }

    /// A short class definition that names a function is itself a function: `class f2 = f;`
    /// has the restriction `class`, so `f2(x)` is not a call of a function (spec 4.6).
    pub(super) fn check_function_alias(&self, id: ClassId, span: Span) -> Res<()> {
        let mut cur = id;
        for _ in 0..50 {
            let entry = self.lib().get(cur);
            let ast::ClassSpecifier::Short { base, .. } = &entry.def.specifier else {
                return Ok(());
            };
            let Some(next) = self.lk.short_class_base(cur, base) else {
                return Ok(());
            };
            let target = self.lk.kind(self.lk.follow_short_class(next));
            let own = entry.def.prefixes.kind;
            if matches!(target, ast::ClassKind::Function { .. })
                && !matches!(own, ast::ClassKind::Function { .. })
            {
                return err(
                    span,
                    format!(
                        "`{}` is declared as a {} (a short definition of the function `{}`), so it cannot be called",
                        entry.full_name,
                        crate::restrict::kind_name(own),
                        self.lk.name_of(self.lk.follow_short_class(next))
                    ),
                )
                .map_err(|d| {
                    Box::new(d.with_help("declare the short class with `function` instead"))
                });
            }
            cur = next;
        }
        Ok(())
    }

    /// Whether a default binding of a function input was written in a modifier outside the
    /// function (the short definition `function f = g(k = p)` inside a model): then it is
    /// resolved in the instance that owns that definition, not among the inputs.
    pub(crate) fn default_from_enclosing_scope(&self, b: &BindingMod) -> bool {
        !matches!(
            self.lk.kind(self.lk.follow_short_class(b.env.scope)),
            ast::ClassKind::Function { .. }
        )
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn call_user(
        &self,
        id: ClassId,
        positional: &[ast::Expr],
        named: &[ast::NamedArg],
        env: &Env,
        cx: &mut Cx,
        span: Span,
        owner: Option<&NodeRef>,
    ) -> Res<Val> {
        // `T(...)` for an external object class calls its constructor; the object is kept
        // as a record of the constructor's arguments (see `tables`).
        let ext_object = crate::tables::is_external_object(self, id);
        let object_class = id;
        let id = if ext_object {
            match self.lk.member(id, "constructor") {
                Some(Found::Class(c)) => c,
                _ => {
                    return err(
                        span,
                        format!(
                            "external object `{}` has no constructor",
                            self.lk.name_of(id)
                        ),
                    )
                }
            }
        } else {
            id
        };
        if !ext_object {
            self.check_function_alias(id, span)?;
        }
        if self
            .lib()
            .get(self.lk.follow_short_class(id))
            .def
            .prefixes
            .partial
        {
            return err(
                span,
                format!(
                    "`{}` is a partial function and cannot be called",
                    self.lk.name_of(id)
                ),
            );
        }
        // `function f_x = der(f, x)` takes the inputs of `f` and returns as many outputs.
        let fnode = self.package_node(self.signature_class(id));
        let kind = self.lk.kind(self.lk.follow_short_class(id));
        let is_record = matches!(
            kind,
            ast::ClassKind::Record | ast::ClassKind::OperatorRecord
        );
        if is_record && named.is_empty() {
            // An operator record with constructor functions (`Complex(1)`).
            let cls = self.lk.follow_short_class(id);
            if matches!(self.lk.member(cls, "'constructor'"), Some(Found::Class(_))) {
                let mut vals = Vec::new();
                for a in positional {
                    vals.push(self.expand(a, env, cx)?);
                }
                let v = self.call_operator_of(cls, "'constructor'", vals, env, cx, span)?;
                self.note_record_class(cls, &v);
                return Ok(v);
            }
        }
        let elems = self.elems(&fnode);
        let inputs: Vec<Rc<Comp>> = elems
            .comps
            .iter()
            .filter(|c| {
                if is_record {
                    // Constants with a value are not inputs of the record constructor;
                    // those without one are (spec 12.6).
                    !c.protected
                        && (c.tprefixes.variability != Some(ast::Variability::Constant)
                            || c.mods.binding.is_none())
                } else {
                    self.comp_causality(&fnode, c) == Some(ast::Causality::Input)
                }
            })
            .cloned()
            .collect();
        if positional.len() > inputs.len() {
            return err(
                span,
                format!(
                    "too many arguments: `{}` takes {} input(s)",
                    self.lk.name_of(id),
                    inputs.len()
                ),
            );
        }
        // Functional inputs (spec 12.4.2): the call is of a specialization, the other
        // arguments are placed on the remaining inputs.
        let functional = if is_record || ext_object {
            Vec::new()
        } else {
            self.functional_inputs(&fnode, &inputs)
        };
        let mut specialized = None;
        let mut inputs = inputs;
        let mut slots: Vec<Option<Val>>;
        if functional.is_empty() {
            // A table read from a file is read now: its file argument must be a value.
            let reads_file = ext_object && crate::tables::is_msl_table_class(self, object_class);
            let arg = |k: usize, a: &ast::Expr, cx: &mut Cx| -> Res<Val> {
                if reads_file && crate::tables::FILE_ARGUMENTS.contains(&&*inputs[k].name) {
                    if let Ok(v) = self.eval_expr(a, env, &mut cx.clone()) {
                        return Ok(v);
                    }
                }
                self.expand(a, env, cx)
            };
            slots = vec![None; inputs.len()];
            for (k, a) in positional.iter().enumerate() {
                slots[k] = Some(arg(k, a, cx)?);
            }
            for n in named {
                let Some(k) = inputs.iter().position(|c| *c.name == *n.name.name) else {
                    return err(
                        n.name.span,
                        format!("`{}` has no input `{}`", self.lk.name_of(id), n.name),
                    );
                };
                slots[k] = Some(arg(k, &n.value, cx)?);
            }
        } else {
            let given = self.place_args(id, &inputs, positional, named)?;
            specialized =
                Some(self.model_specialization(id, &inputs, &functional, &given, env, cx, span)?);
            let keep: Vec<usize> = (0..inputs.len())
                .filter(|k| !functional.iter().any(|(f, _)| f == k))
                .collect();
            slots = Vec::with_capacity(keep.len());
            for &k in &keep {
                slots.push(match given[k] {
                    Some(a) => Some(self.expand(a, env, cx)?),
                    None => None,
                });
            }
            inputs = keep.iter().map(|&k| inputs[k].clone()).collect();
        }
        // Defaults, evaluated with the other inputs bound.
        let mut fcx = Cx {
            locals: Vec::new(),
            eval: cx.eval,
            end: None,
            guarded: false,
            in_when: false,
            in_loop: false,
        };
        if is_record {
            // Defaults of record fields may use the record's constants.
            for c in elems.comps.iter() {
                let constant = c.tprefixes.variability == Some(ast::Variability::Constant);
                if let (true, Some(b)) = (constant, &c.mods.binding) {
                    if !inputs.iter().any(|i| Rc::ptr_eq(i, c)) {
                        if let Ok(v) = self.eval_expr(&b.expr, &b.env, &mut fcx.clone()) {
                            fcx.locals.push((c.name.clone(), Arc::new(v)));
                        }
                    }
                }
            }
        }
        for (k, c) in inputs.iter().enumerate() {
            if let Some(v) = &slots[k] {
                fcx.locals.push((c.name.clone(), Arc::new(v.clone())));
            }
        }
        for (k, c) in inputs.iter().enumerate() {
            if slots[k].is_some() {
                continue;
            }
            let Some(b) = &c.mods.binding else {
                return err(
                    span,
                    format!(
                        "missing argument `{}` in call of `{}`",
                        c.name,
                        self.lk.name_of(id)
                    ),
                );
            };
            let v = match owner.filter(|_| self.default_from_enclosing_scope(b)) {
                Some(o) => {
                    let oenv = Env {
                        node: o.clone(),
                        scope: b.env.scope,
                    };
                    let mut ocx = Cx::flat();
                    ocx.eval = cx.eval;
                    let v = self.expand(&b.expr, &oenv, &mut ocx)?;
                    let element_calls = v.scalars().iter().any(|x| {
                        let mut found = false;
                        crate::walk::visit(x, &mut |y| found |= crate::flatten::is_index_call(y));
                        found
                    });
                    if element_calls {
                        // An argument cannot hold elements of an array-valued call
                        // (`g*normalize(n)`): computed now when the parameters are known.
                        self.eval_expr(&b.expr, &oenv, &mut Cx::eval()).unwrap_or(v)
                    } else {
                        v
                    }
                }
                None => self.expand(&b.expr, &b.env, &mut fcx)?,
            };
            fcx.locals.push((c.name.clone(), Arc::new(v.clone())));
            slots[k] = Some(v);
        }
        let args: Vec<Val> = slots.into_iter().flatten().collect();
        if let Some(path) = self.resolved_resource(&elems, &args) {
            return Ok(Val::S(Expr::String(path)));
        }
        let call = CallSite {
            id,
            object_class,
            ext_object,
            is_record,
            fnode: &fnode,
            elems: &elems,
            inputs: &inputs,
            positional: if specialized.is_some() {
                &[]
            } else {
                positional
            },
            named: if specialized.is_some() { &[] } else { named },
            specialized: specialized.as_ref(),
        };
        self.apply_function(&call, args, fcx, env, cx, span)
    }

    /// `ModelicaServices.ExternalReferences.loadResource` is the tool's hook for resource
    /// URIs (and `Modelica.Utilities.Files.loadResource` extends it): a call of it, or of a
    /// function extending it, on a literal `modelica://` URI is the absolute file name,
    /// found here through the library roots. Its default algorithm would take the URI for a
    /// relative file name. `None` when the call is not of that kind or the URI names no
    /// class of a library on disk (the call then runs as written).
    pub(super) fn resolved_resource(
        &self,
        elems: &crate::inst::Elems,
        args: &[Val],
    ) -> Option<String> {
        const HOOK: &str = "ModelicaServices.ExternalReferences.loadResource";
        if !elems
            .contributors
            .iter()
            .any(|&c| self.lk.name_of(c) == HOOK)
        {
            return None;
        }
        let [Val::S(Expr::String(uri))] = args else {
            return None;
        };
        let path = self.lib().resource_path(uri)?;
        Some(path.to_string_lossy().into_owned())
    }

    /// Apply a function to evaluated arguments, vectorizing over arguments with more
    /// dimensions than the input declares (`abs(v)` with `v` an array of records).
    pub(super) fn apply_function(
        &self,
        call: &CallSite,
        args: Vec<Val>,
        mut fcx: Cx,
        env: &Env,
        cx: &mut Cx,
        span: Span,
    ) -> Res<Val> {
        if !call.is_record && !call.ext_object {
            for (c, a) in call.inputs.iter().zip(&args) {
                let declared = c.decl.subscripts.len()
                    + c.type_subs.len()
                    + self
                        .comp_type(call.fnode, c)
                        .map(|t| t.dims.len())
                        .unwrap_or(0);
                let shape = a.shape();
                if shape.len() > declared {
                    let n = shape[0];
                    let mut out = Vec::new();
                    for i in 0..n {
                        let ai: Vec<Val> = call
                            .inputs
                            .iter()
                            .zip(&args)
                            .map(|(ci, v)| {
                                let di = ci.decl.subscripts.len() + ci.type_subs.len();
                                if v.shape().len() > di {
                                    v.index_path(&[i])
                                } else {
                                    v.clone()
                                }
                            })
                            .collect();
                        let mut ecx = fcx.clone();
                        ecx.locals = call
                            .inputs
                            .iter()
                            .map(|c| c.name.clone())
                            .zip(ai.iter().cloned().map(Arc::new))
                            .collect();
                        out.push(self.apply_function(call, ai, ecx, env, cx, span)?);
                    }
                    return Ok(Val::A(out));
                }
            }
        }
        let CallSite {
            id,
            object_class,
            ext_object,
            is_record,
            fnode,
            elems,
            inputs,
            positional,
            named,
            specialized,
        } = *call;
        let fnode = fnode.clone();
        if ext_object {
            let mut fields = vec![(
                Arc::from(crate::tables::EXTOBJ),
                Val::S(Expr::String(self.lk.name_of(object_class))),
            )];
            fields.extend(inputs.iter().map(|c| c.name.clone()).zip(args));
            return Ok(Val::R(fields));
        }
        if args
            .first()
            .is_some_and(crate::external_objects::is_msl_table)
        {
            return self.lower_table_call(&self.lk.name_of(id), &args, span);
        }
        // other external objects are passed as the call of their constructor
        let args = args
            .into_iter()
            .map(|a| self.object_as_call(a, span))
            .collect::<Res<Vec<_>>>()?;
        if is_record {
            let v = Val::R(inputs.iter().map(|c| c.name.clone()).zip(args).collect());
            self.note_record_class(id, &v);
            return Ok(v);
        }
        // Built-in implementations (`external "builtin"`) are called by their plain name.
        if let Some(b) = self.builtin_external(id) {
            return self.builtin(&b, args, span);
        }
        let mut args = self.expand_record_args(&fnode, inputs, args, span)?;
        let name = match specialized {
            Some(s) => {
                args.extend(s.extra.iter().cloned());
                s.name.clone()
            }
            None => self.lk.name_of(id),
        };
        // Evaluated now when structural, or when every argument is a literal (pure
        // functions only; e.g. `Complex(2)` becomes the record `(2, 0)`).
        let all_literal = args.iter().all(is_literal_val);
        let pure = !matches!(
            self.lib()
                .get(self.lk.follow_short_class(id))
                .def
                .prefixes
                .kind,
            ast::ClassKind::Function {
                purity: ast::Purity::Impure,
                ..
            }
        );
        if cx.eval || (all_literal && pure && !args.is_empty() && !self.keep_calls.get()) {
            if let Some(v) = crate::interp::call_function_named(self, &name, id, &args, span)? {
                if let Some(Found::Class(rc)) = elems
                    .comps
                    .iter()
                    .find(|c| self.comp_causality(&fnode, c) == Some(ast::Causality::Output))
                    .and_then(|c| self.comp_type(&fnode, c).ok())
                    .and_then(|t| match t.base {
                        Base::Class(rc) => Some(Found::Class(rc)),
                        _ => None,
                    })
                {
                    self.note_record_class(rc, &v);
                }
                return Ok(v);
            }
        }
        self.functions.borrow_mut().insert(name.clone(), id);
        let call = Expr::Call {
            func: name,
            args: args.iter().map(Val::to_expr).collect(),
        };
        // Output shape (arrays returned by functions are indexed element-wise).
        let outputs: Vec<Rc<Comp>> = elems
            .comps
            .iter()
            .filter(|c| self.comp_causality(&fnode, c) == Some(ast::Causality::Output))
            .cloned()
            .collect();
        let Some(out) = outputs.first() else {
            return Ok(Val::S(call));
        };
        let subs: Vec<&ast::Subscript> = out
            .decl
            .subscripts
            .iter()
            .chain(out.type_subs.iter())
            .collect();
        if subs.is_empty() {
            let ty = self.comp_type(&fnode, out)?;
            if ty.dims.is_empty() {
                if let Base::Class(rc) = ty.base {
                    return self.record_call_value(rc, call, span);
                }
                return Ok(Val::S(call));
            }
        }
        // Array result: evaluate the output dimensions with the inputs bound to their
        // values (parameters evaluated where possible).
        if !cx.eval {
            let mut ecx = cx.clone();
            ecx.eval = true;
            // Every argument is evaluated here, whether the sizes depend on it or not.
            self.structural_trials.set(self.structural_trials.get() + 1);
            for (k, a) in positional.iter().enumerate() {
                if let (Ok(v), Some(c)) = (self.expand(a, env, &mut ecx), inputs.get(k)) {
                    fcx.locals.push((c.name.clone(), Arc::new(v)));
                }
            }
            for n in named {
                if let Ok(v) = self.expand(&n.value, env, &mut ecx) {
                    fcx.locals.push((n.name.name.clone(), Arc::new(v)));
                }
            }
            self.structural_trials.set(self.structural_trials.get() - 1);
        }
        let mut dims = Vec::new();
        let mut known = true;
        for s in subs {
            let ast::Subscript::Expr(e) = s else {
                known = false;
                break;
            };
            let oenv = Env {
                node: fnode.clone(),
                scope: out.scope,
            };
            let mut ecx = fcx.clone();
            ecx.eval = true;
            match self.eval_int(e, &oenv, &mut ecx) {
                Ok(n) => dims.push(n.max(0) as usize),
                Err(_) => {
                    known = false;
                    break;
                }
            }
        }
        if !known {
            // `output Real y[:]` (or a size depending on values): the size is that of the
            // result computed now from the arguments' values, when they are known.
            let mut ecx = cx.clone();
            ecx.eval = true;
            let value = if cx.eval {
                None
            } else {
                self.structural_trials.set(self.structural_trials.get() + 1);
                let v = self
                    .call_user(id, positional, named, env, &mut ecx, span, None)
                    .ok();
                self.structural_trials.set(self.structural_trials.get() - 1);
                v
            };
            dims = match value {
                Some(v) => v.shape(),
                None => {
                    return err(
                        span,
                        format!(
                            "the size of the result of `{}` is not known at translation time",
                            self.lk.name_of(id)
                        ),
                    )
                    .map_err(|d| {
                        Box::new(d.with_help(
                        "the output size must follow from the input sizes or from parameter values",
                    ))
                    })
                }
            };
        }
        self.array_calls
            .borrow_mut()
            .insert(crate::print::print_expr(&call), dims.clone());
        Ok(array_call_elements(&call, &dims))
    }

    /// A call returning a record: the record of its outputs (`CallOutput` per field, in the
    /// order of the scalarized outputs).
    pub(super) fn record_call_value(&self, rc: ClassId, call: Expr, span: Span) -> Res<Val> {
        if !self.is_record_class(rc) {
            return err(span, "functions can only return records, not other classes");
        }
        let fields = self.record_field_list(rc, span)?;
        let mut out = Val::R(Vec::new());
        let result_class = rc;
        for (index, f) in fields.iter().enumerate() {
            let value = Val::S(Expr::CallOutput {
                call: Box::new(call.clone()),
                index,
            });
            insert_field(&mut out, &f.path, value);
        }
        self.note_record_class(result_class, &out);
        Ok(out)
    }
}

/// A call being expanded: the function and what was resolved about it.
#[derive(Clone, Copy)]
pub(super) struct CallSite<'c> {
    pub(super) id: ClassId,
    pub(super) object_class: ClassId,
    pub(super) ext_object: bool,
    pub(super) is_record: bool,
    pub(super) fnode: &'c NodeRef,
    pub(super) elems: &'c Elems,
    pub(super) inputs: &'c [Rc<Comp>],
    pub(super) positional: &'c [ast::Expr],
    pub(super) named: &'c [ast::NamedArg],
    /// The specialization called for functional arguments, and their bound values.
    pub(super) specialized: Option<&'c crate::funargs::Specialized<Val>>,
}
