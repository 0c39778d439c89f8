//! Functions (specification chapter 12): every function called from the model, collected
//! transitively, translated to flat functions with arrays kept (bodies are executed, not
//! scalarized). Named arguments are placed and defaults filled in at each call site.

use crate::ctx::Flattener;
use crate::expand::{cref_text, Cx, Val, EXTRA_BUILTINS};
use crate::flat::{
    self, AssertLevel, BinaryOp as FB, DerivativeAnnotation, Expr, ExternalCode, Function,
    FunctionBody, FunctionVar, InverseAnnotation, ScalarType, Statement, Subscript, BUILTINS,
};
use crate::flatten::origin;
use crate::inst::*;
use crate::loader::ClassId;
use moss_syntax::ast::{self, ExprKind, FunctionArgs, StatementKind};
use moss_syntax::Span;
use rustc_hash::FxHashSet as HashSet;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

/// Names visible as locals inside a function body.
pub(crate) struct FnEnv {
    pub(crate) env: Env,
    pub(crate) locals: HashSet<String>,
    pub(crate) hoist: Rc<Hoist>,
}

/// Reductions and array comprehensions inside function bodies are computed by loops into
/// temporaries placed before the statement that uses them.
#[derive(Default)]
pub(crate) struct Hoist {
    pub(crate) locals: std::cell::RefCell<Vec<FunctionVar>>,
    pub(crate) pre: std::cell::RefCell<Vec<Statement>>,
    counter: std::cell::Cell<u32>,
    pub(crate) types: std::cell::RefCell<std::collections::HashMap<String, ScalarType>>,
    /// Declared number of dimensions of the function's variables (arrays in a matrix
    /// constructor are concatenated, scalars placed).
    pub(crate) ranks: std::cell::RefCell<std::collections::HashMap<String, usize>>,
    /// Record-typed components of the function and their scalarized fields.
    pub(crate) records:
        std::cell::RefCell<std::collections::HashMap<String, Vec<crate::records::RecordField>>>,
    /// Record-typed components: their record class and number of array dimensions.
    pub(crate) record_classes:
        std::cell::RefCell<std::collections::HashMap<String, (ClassId, usize)>>,
    /// Functional inputs of the function (a specialization) and the functions they are
    /// bound to.
    pub(crate) funargs:
        std::cell::RefCell<std::collections::HashMap<String, crate::funargs::FuncArg>>,
}

impl Hoist {
    /// A fresh name (for loop indices of generated loops).
    pub(crate) fn fresh_name(&self, prefix: &str) -> String {
        let k = self.counter.get() + 1;
        self.counter.set(k);
        format!("{prefix}{k}")
    }

    pub(crate) fn temp(&self, ty: ScalarType, dims: Vec<Option<Expr>>) -> String {
        let k = self.counter.get() + 1;
        self.counter.set(k);
        let name = format!("moss_tmp{k}");
        self.locals.borrow_mut().push(FunctionVar {
            name: name.clone(),
            ty: ty.clone(),
            dims,
            default: None,
        });
        self.types.borrow_mut().insert(name.clone(), ty);
        name
    }
}

impl<'a> Flattener<'a> {
    /// Translate every function referenced so far (and those they reference), then the
    /// inverses that `inverse` annotations offer, where they translate.
    pub fn collect_functions(&self) -> Res<BTreeMap<String, Function>> {
        let mut done: BTreeMap<String, Function> = BTreeMap::new();
        self.translate_pending_functions(&mut done)?;
        let mut dropped: HashSet<String> = HashSet::default();
        loop {
            let next = self
                .inverse_functions
                .borrow()
                .iter()
                .find(|(n, _)| !done.contains_key(*n) && !dropped.contains(*n))
                .map(|(n, c)| (n.clone(), *c));
            let Some((name, id)) = next else { break };
            let before_refs = self.functions.borrow().clone();
            let before_done: HashSet<String> = done.keys().cloned().collect();
            self.functions.borrow_mut().insert(name.clone(), id);
            if self.translate_pending_functions(&mut done).is_err() {
                *self.functions.borrow_mut() = before_refs;
                done.retain(|n, _| before_done.contains(n));
                dropped.insert(name);
            }
        }
        let known: HashSet<String> = done.keys().cloned().collect();
        for f in done.values_mut() {
            f.inverses
                .retain(|inv| known.contains(&inv.function) && inv.function != f.name);
        }
        Ok(done)
    }

    fn translate_pending_functions(&self, done: &mut BTreeMap<String, Function>) -> Res<()> {
        loop {
            let pending: Vec<(String, ClassId)> = self
                .functions
                .borrow()
                .iter()
                .filter(|(n, _)| !done.contains_key(*n))
                .map(|(n, c)| (n.clone(), *c))
                .collect();
            if pending.is_empty() {
                return Ok(());
            }
            for (name, id) in pending {
                let f = self.translate_function(&name, id)?;
                done.insert(name, f);
            }
        }
    }

    pub fn translate_function(&self, name: &str, id: ClassId) -> Res<Function> {
        if let ast::ClassSpecifier::Der { function, wrt, .. } = &self.lib().get(id).def.specifier {
            return self.translate_partial_derivative(name, id, function, wrt);
        }
        let node = self.package_node(id);
        let elems = self.elems(&node);
        let entry = self.lib().get(self.lk.follow_short_class(id));
        let locals: HashSet<String> = elems.comps.iter().map(|c| c.name.to_string()).collect();
        let hoist = Rc::new(Hoist::default());
        let mut f = Function {
            name: name.to_string(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            locals: Vec::new(),
            body: FunctionBody::Algorithm(Vec::new()),
            derivatives: Vec::new(),
            inline: false,
            smooth_order: None,
            inverses: Vec::new(),
            is_impure: matches!(
                entry.def.prefixes.kind,
                ast::ClassKind::Function {
                    purity: ast::Purity::Impure,
                    ..
                }
            ),
            origin: origin(entry.def.name.span, &node),
        };
        let mut deferred: Vec<Statement> = Vec::new();
        // A specialization: its functional inputs are bound to functions (`funargs`).
        let spec = self.fn_specs.borrow().get(name).cloned();
        if let Some(spec) = &spec {
            for (fi, a) in &spec.args {
                hoist.funargs.borrow_mut().insert(fi.to_string(), a.clone());
            }
        }
        // components that are external objects (C handles)
        let mut objects: Vec<String> = Vec::new();
        for comp in &elems.comps {
            if hoist.funargs.borrow().contains_key(&*comp.name) {
                continue;
            }
            let fenv = FnEnv {
                env: Env {
                    node: node.clone(),
                    scope: comp.scope,
                },
                locals: locals.clone(),
                hoist: hoist.clone(),
            };
            let ty = self.comp_type(&node, comp)?;
            let scalar = match &ty.base {
                Base::Real => ScalarType::Real,
                Base::Integer => ScalarType::Integer,
                Base::Boolean => ScalarType::Boolean,
                Base::String => ScalarType::String,
                Base::Clock => ScalarType::Clock,
                Base::Enum(c, lits) => ScalarType::Enumeration {
                    name: Arc::from(self.lk.name_of(*c).as_str()),
                    literals: lits.clone(),
                },
                Base::Class(c) if self.is_record_class(*c) => {
                    // Record inputs and locals: one variable per field (`p.x`).
                    let is_input =
                        self.comp_causality(&node, comp) == Some(ast::Causality::Input);
                    let fields = self.record_field_list(*c, comp.span)?;
                    let mut outer_dims = Vec::new();
                    for s in comp.decl.subscripts.iter().chain(comp.type_subs.iter()) {
                        outer_dims.push(self.fn_dim(s, &fenv)?);
                    }
                    // `final constant Complex r = Complex(a, b)`, `Complex t[2] = {...}`: a
                    // binding of the whole record gives the fields' defaults
                    let whole = if is_input {
                        None
                    } else {
                        self.record_binding_fields(
                            comp,
                            fields.len(),
                            &fenv,
                            &hoist,
                            &mut deferred,
                            &node,
                        )?
                    };
                    for (k, fld) in fields.iter().enumerate() {
                        let fname = format!("{}.{}", comp.name, fld.path);
                        hoist.types.borrow_mut().insert(fname.clone(), fld.ty.clone());
                        let mut dims = outer_dims.clone();
                        dims.extend(fld.dims.iter().map(|d| Some(Expr::Integer(*d as i64))));
                        // `output Complex result(re = re, im = im)`: field modifiers are the
                        // defaults of the field variables.
                        let mut m = Some(&comp.mods);
                        for p in fld.path.split('.') {
                            m = m.and_then(|x| x.sub(p));
                        }
                        let default = match m.and_then(|x| x.binding.as_ref()) {
                            _ if whole.is_some() => {
                                whole.as_ref().and_then(|w| w.get(k).cloned())
                            }
                            Some(b) => {
                                let benv = FnEnv {
                                    env: b.env.clone(),
                                    locals: locals.clone(),
                                    hoist: hoist.clone(),
                                };
                                Some(self.fexpr(&b.expr, &benv)?)
                            }
                            None if !is_input => self.record_field_default(*c, &fld.path, 0),
                            None => None,
                        };
                        let v = FunctionVar {
                            name: fname,
                            ty: fld.ty.clone(),
                            dims,
                            default,
                        };
                        match self.comp_causality(&node, comp) {
                            Some(ast::Causality::Input) => f.inputs.push(v),
                            Some(ast::Causality::Output) => f.outputs.push(v),
                            None => f.locals.push(v),
                        }
                    }
                    hoist
                        .records
                        .borrow_mut()
                        .insert(comp.name.to_string(), fields);
                    hoist
                        .record_classes
                        .borrow_mut()
                        .insert(comp.name.to_string(), (*c, outer_dims.len()));
                    continue;
                }
                Base::Class(c) if self.functional_input(&node, comp).is_some() => {
                    return err(
                        comp.span,
                        format!(
                            "function `{name}`: the functional input `{}` (of type `{}`) has no function bound (pass a function name or `function f(...)` in the call)",
                            comp.name,
                            self.lk.name_of(*c)
                        ),
                    )
                }
                // an external object is its C handle (see `external_objects.rs`)
                Base::Class(c) if crate::tables::is_external_object(self, *c) => {
                    objects.push(comp.name.to_string());
                    ScalarType::Integer
                }
                Base::Class(c) => {
                    return err(
                        comp.span,
                        format!(
                            "function `{name}`: component `{}` of class `{}` (record outputs and non-record classes are not supported in functions)",
                            comp.name,
                            self.lk.name_of(*c)
                        ),
                    )
                }
            };
            let mut dims = Vec::new();
            for s in comp.decl.subscripts.iter().chain(comp.type_subs.iter()) {
                dims.push(self.fn_dim(s, &fenv)?);
            }
            for (s, _) in &ty.dims {
                dims.push(self.fn_dim(s, &fenv)?);
            }
            let hoisted_before = hoist.pre.borrow().len();
            let mut default = match &comp.mods.binding {
                // A default from a short definition inside a model names that model's
                // parameters: it is placed at the call sites, not in the function.
                Some(b) if self.default_from_enclosing_scope(b) => None,
                Some(b) => Some(self.fexpr(&b.expr, &fenv)?),
                None => None,
            };
            // A local or output default that needed statements of its own (`v[:] = {f(i)
            // for i in 1:b}` fills a temporary in a loop) becomes an assignment after them
            // at the start of the body: the defaults are evaluated before the body runs.
            let is_input = self.comp_causality(&node, comp) == Some(ast::Causality::Input);
            if !is_input && hoist.pre.borrow().len() > hoisted_before {
                let mut pre = hoist.pre.borrow_mut();
                let stmts: Vec<Statement> = pre.drain(hoisted_before..).collect();
                deferred.extend(stmts);
                if let Some(value) = default.take() {
                    deferred.push(Statement::Assign {
                        target: Expr::Var {
                            name: comp.name.to_string(),
                            subscripts: Vec::new(),
                        },
                        value,
                        origin: origin(comp.span, &node),
                    });
                }
            }
            hoist
                .types
                .borrow_mut()
                .insert(comp.name.to_string(), scalar.clone());
            hoist
                .ranks
                .borrow_mut()
                .insert(comp.name.to_string(), dims.len());
            let v = FunctionVar {
                name: comp.name.to_string(),
                ty: scalar,
                dims,
                default,
            };
            match self.comp_causality(&node, comp) {
                Some(ast::Causality::Input) => f.inputs.push(v),
                Some(ast::Causality::Output) => f.outputs.push(v),
                None => f.locals.push(v),
            }
        }
        if let Some(spec) = &spec {
            for v in self.specialization_inputs(spec)? {
                hoist
                    .types
                    .borrow_mut()
                    .insert(v.name.clone(), v.ty.clone());
                f.inputs.push(v);
            }
        }
        self.check_function_restrictions(name, &node, &elems)?;
        // Body: the algorithm sections of the function and its bases, or the external clause.
        let mut body: Vec<Statement> = hoist.pre.borrow_mut().drain(..).collect();
        body.append(&mut deferred);
        let mut external = None;
        for class in &elems.contributors {
            let centry = self.lib().get(*class);
            let Some(compo) = centry.def.specifier.composition() else {
                continue;
            };
            let fenv = FnEnv {
                env: Env {
                    node: node.clone(),
                    scope: *class,
                },
                locals: locals.clone(),
                hoist: hoist.clone(),
            };
            for stmts in compo.algorithms(false) {
                for s in stmts {
                    self.fstatement(s, &fenv, &mut body)?;
                }
            }
            if external.is_none() {
                if let Some(ext) = &compo.external {
                    let mut args = Vec::new();
                    let (fname, output) = match &ext.call {
                        Some(c) => {
                            for a in &c.args {
                                args.push(self.fexpr(a, &fenv)?);
                            }
                            (
                                c.function.name.to_string(),
                                c.output.as_ref().map(cref_text),
                            )
                        }
                        None => (
                            centry.def.name.name.to_string(),
                            f.outputs.first().map(|o| o.name.clone()),
                        ),
                    };
                    if ext.call.is_none() {
                        args = f
                            .inputs
                            .iter()
                            .map(|i| Expr::Var {
                                name: i.name.clone(),
                                subscripts: Vec::new(),
                            })
                            .collect();
                    }
                    external = Some(FunctionBody::External {
                        language: ext.language.clone().unwrap_or_else(|| "C".into()),
                        name: fname,
                        output,
                        args,
                        code: ExternalCode {
                            objects: objects.clone(),
                            ..self.external_code(ext, name)?
                        },
                    });
                }
            }
        }
        f.locals.extend(hoist.locals.borrow_mut().drain(..));
        f.body = match external {
            Some(e) if body.is_empty() => e,
            _ => FunctionBody::Algorithm(body),
        };
        self.function_annotations(&entry.def, &node, &mut f)?;
        Ok(f)
    }

    /// Functions have at most one algorithm section, no equations or initial sections, only
    /// inputs and outputs as public components, and they do not assign their inputs.
    fn check_function_restrictions(&self, name: &str, node: &NodeRef, elems: &Elems) -> Res<()> {
        let mut algorithms = 0;
        for class in &elems.contributors {
            let entry = self.lib().get(*class);
            let Some(compo) = entry.def.specifier.composition() else {
                continue;
            };
            for s in &compo.sections {
                match s {
                    ast::Section::Equations { span, .. } => {
                        return err(*span, format!("function `{name}` cannot have equations"));
                    }
                    ast::Section::Algorithm {
                        initial: true,
                        span,
                        ..
                    } => {
                        return err(
                            *span,
                            format!("function `{name}` cannot have an initial algorithm"),
                        );
                    }
                    ast::Section::Algorithm { span, .. } => {
                        algorithms += 1;
                        if algorithms > 1 {
                            return err(
                                *span,
                                format!("function `{name}` has more than one algorithm section"),
                            );
                        }
                    }
                    _ => {}
                }
            }
        }
        for c in &elems.comps {
            if c.prefixes.inner || c.prefixes.outer {
                return err(
                    c.span,
                    format!("function `{name}` cannot have inner or outer components"),
                );
            }
            if !c.protected && self.comp_causality(node, c).is_none() {
                return err(
                    c.span,
                    format!(
                        "public component `{}` of function `{name}` must be an input or an output",
                        c.name
                    ),
                )
                .map_err(|d| {
                    Box::new(d.with_help("declare it `protected` if it is a local variable"))
                });
            }
        }
        let inputs: HashSet<&str> = elems
            .comps
            .iter()
            .filter(|c| self.comp_causality(node, c) == Some(ast::Causality::Input))
            .map(|c| &*c.name)
            .collect();
        for class in &elems.contributors {
            let entry = self.lib().get(*class);
            let Some(compo) = entry.def.specifier.composition() else {
                continue;
            };
            for stmts in compo.algorithms(false) {
                if let Some((n, span)) = assigned_input(stmts, &inputs) {
                    return err(
                        span,
                        format!("input `{n}` of function `{name}` cannot be assigned"),
                    );
                }
            }
        }
        Ok(())
    }

    fn function_annotations(
        &self,
        def: &ast::ClassDef,
        node: &NodeRef,
        f: &mut Function,
    ) -> Res<()> {
        let Some(ann) = annotation_of(def) else {
            return Ok(());
        };
        let scope = self.lk.follow_short_class(node.class);
        for a in &ann.args {
            let ast::Argument::Modification(m) = a else {
                continue;
            };
            let key = m.name.parts.last().map(|p| p.as_str()).unwrap_or("");
            let Some(modif) = &m.modification else {
                continue;
            };
            match key {
                "derivative" => {
                    let Some(b) = &modif.binding else { continue };
                    let ExprKind::Ref(r) = &b.expr.kind else {
                        continue;
                    };
                    let name = crate::expand::cref_to_name(r);
                    let Some(id) = self.lk.resolve_class_name(Some(scope), &name, false) else {
                        return err(r.span, format!("unknown derivative function `{name}`"));
                    };
                    let full = self.lk.name_of(id);
                    self.functions.borrow_mut().insert(full.clone(), id);
                    let mut d = DerivativeAnnotation {
                        function: full,
                        order: 1,
                        no_derivative: Vec::new(),
                        zero_derivative: Vec::new(),
                    };
                    if let Some(cm) = &modif.class_modification {
                        for x in &cm.args {
                            let ast::Argument::Modification(xm) = x else {
                                continue;
                            };
                            let Some(xb) =
                                xm.modification.as_ref().and_then(|mm| mm.binding.as_ref())
                            else {
                                continue;
                            };
                            let text = moss_syntax::print_expr(&xb.expr);
                            match xm.name.parts[0].as_str() {
                                "order" => {
                                    if let ExprKind::Integer(k) = xb.expr.kind {
                                        d.order = k as u32;
                                    }
                                }
                                "noDerivative" => d.no_derivative.push(text),
                                "zeroDerivative" => d.zero_derivative.push(text),
                                _ => {}
                            }
                        }
                    }
                    f.derivatives.push(d);
                }
                "inverse" => {
                    let Some(cm) = &modif.class_modification else {
                        continue;
                    };
                    for x in &cm.args {
                        if let Some(inv) = self.inverse_annotation(x, scope)? {
                            f.inverses.push(inv);
                        }
                    }
                }
                "Inline" | "LateInline" => {
                    if let Some(b) = &modif.binding {
                        f.inline |= matches!(b.expr.kind, ExprKind::Bool(true));
                    }
                }
                "smoothOrder" => {
                    if let Some(b) = &modif.binding {
                        if let ExprKind::Integer(k) = b.expr.kind {
                            f.smooth_order = Some(k as u32);
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// One entry `T = T_ph(p, h)` of an `inverse` annotation. Arguments other than plain
    /// names of the function's formals leave the entry out: the annotation is an offer the
    /// tool may ignore (spec 12.8), and the equation is then solved numerically.
    fn inverse_annotation(
        &self,
        arg: &ast::Argument,
        scope: ClassId,
    ) -> Res<Option<InverseAnnotation>> {
        let ast::Argument::Modification(m) = arg else {
            return Ok(None);
        };
        let Some(b) = m.modification.as_ref().and_then(|mm| mm.binding.as_ref()) else {
            return Ok(None);
        };
        let ExprKind::Call {
            function,
            args: ast::FunctionArgs::List { positional, named },
        } = &b.expr.kind
        else {
            return Ok(None);
        };
        let plain_name = |e: &ast::Expr| match &e.kind {
            ExprKind::Ref(r) if r.parts.len() == 1 && r.parts[0].subscripts.is_empty() => {
                Some(r.parts[0].name.to_string())
            }
            _ => None,
        };
        let mut args = Vec::new();
        for e in positional {
            let Some(n) = plain_name(e) else {
                return Ok(None);
            };
            args.push((None, n));
        }
        for na in named {
            let Some(n) = plain_name(&na.value) else {
                return Ok(None);
            };
            args.push((Some(na.name.to_string()), n));
        }
        let name = crate::expand::cref_to_name(function);
        let Some(id) = self.lk.resolve_class_name(Some(scope), &name, false) else {
            return err(function.span, format!("unknown inverse function `{name}`"));
        };
        let full = self.lk.name_of(id);
        self.inverse_functions.borrow_mut().insert(full.clone(), id);
        Ok(Some(InverseAnnotation {
            input: m
                .name
                .parts
                .last()
                .map(|p| p.to_string())
                .unwrap_or_default(),
            function: full,
            args,
        }))
    }

    /// The field values of a record component's binding (`final constant Complex r =
    /// Complex(a, b)`; an array of records bound to an array constructor gives one array per
    /// field), in the order of its `n` fields; `None` without a binding of the whole record
    /// (the fields' own modifiers and defaults apply then). A binding that needed statements
    /// of its own (a call hoisted into temporaries) is assigned at the start of the body,
    /// after them, as the defaults of scalars are.
    fn record_binding_fields(
        &self,
        comp: &Comp,
        n: usize,
        fenv: &FnEnv,
        hoist: &Hoist,
        deferred: &mut Vec<Statement>,
        node: &NodeRef,
    ) -> Res<Option<Vec<Expr>>> {
        let Some(b) = &comp.mods.binding else {
            return Ok(None);
        };
        if self.default_from_enclosing_scope(b) {
            return Ok(None);
        }
        let hoisted_before = hoist.pre.borrow().len();
        let crate::fnrecords::FVal::R(rec) = self.fval(&b.expr, fenv)? else {
            return err(
                b.expr.span,
                format!(
                    "the binding of record `{}` is not a record value",
                    comp.name
                ),
            );
        };
        if rec.fields.len() != n {
            return err(
                b.expr.span,
                format!(
                    "the binding of record `{}` does not match its fields",
                    comp.name
                ),
            );
        }
        if hoist.pre.borrow().len() == hoisted_before {
            return Ok(Some(rec.fields));
        }
        let stmts: Vec<Statement> = hoist.pre.borrow_mut().drain(hoisted_before..).collect();
        deferred.extend(stmts);
        let fields = self.record_field_list(rec.class, comp.span)?;
        for (fld, value) in fields.iter().zip(rec.fields) {
            deferred.push(Statement::Assign {
                target: Expr::Var {
                    name: format!("{}.{}", comp.name, fld.path),
                    subscripts: Vec::new(),
                },
                value,
                origin: origin(comp.span, node),
            });
        }
        Ok(Some(vec![]))
    }

    fn fn_dim(&self, s: &ast::Subscript, fenv: &FnEnv) -> Res<Option<Expr>> {
        match s {
            ast::Subscript::Colon(_) => Ok(None),
            ast::Subscript::Expr(e) => Ok(Some(self.fexpr(e, fenv)?)),
        }
    }

    /// Translate an expression of a function body (arrays kept, locals by name).
    fn fexpr(&self, e: &ast::Expr, fenv: &FnEnv) -> Res<Expr> {
        self.fexpr_end(e, fenv, None)
    }

    pub(crate) fn fexpr_end(&self, e: &ast::Expr, fenv: &FnEnv, end: Option<&Expr>) -> Res<Expr> {
        let r = |x: &ast::Expr| self.fexpr_end(x, fenv, end);
        Ok(match &e.kind {
            ExprKind::Integer(i) => Expr::Integer(*i),
            ExprKind::Real { value, .. } => Expr::Real(*value),
            ExprKind::String(s) => Expr::String(s.clone()),
            ExprKind::Bool(b) => Expr::Boolean(*b),
            ExprKind::End => match end {
                Some(x) => x.clone(),
                None => return err(e.span, "`end` outside of subscripts"),
            },
            ExprKind::Break => return err(e.span, "`break` is not an expression"),
            ExprKind::Ref(c) => self.fref(c, fenv)?,
            ExprKind::Call { function, args } => self.fcall(function, args, fenv, e.span, end)?,
            ExprKind::PartialApplication { .. } => {
                return err(
                    e.span,
                    "a partial application `function f(...)` can only be passed to a functional input of a function",
                )
            }
            ExprKind::Unary { .. } | ExprKind::Binary { .. } | ExprKind::If { .. } => {
                self.fval_end(e, fenv, end)?.scalar(e.span)?
            }
            ExprKind::Range { start, step, stop } => Expr::Range {
                start: Box::new(r(start)?),
                step: match step {
                    Some(s) => Some(Box::new(r(s)?)),
                    None => None,
                },
                stop: Box::new(r(stop)?),
            },
            ExprKind::Array(_) => self.fval_end(e, fenv, end)?.scalar(e.span)?,
            ExprKind::Matrix(rows) => {
                let rows: Vec<Vec<Expr>> = rows
                    .iter()
                    .map(|row| row.iter().map(r).collect::<Res<Vec<_>>>())
                    .collect::<Res<_>>()?;
                let ranks = fenv.hoist.ranks.borrow();
                if rows.iter().flatten().any(|x| known_array(x, &ranks)) {
                    // `[v1, v2; A]` with arrays among the elements: concatenation (spec
                    // 10.4.2), each element promoted to a matrix (a vector is a column)
                    let call = |func: &str, args: Vec<Expr>| Expr::Call {
                        func: func.into(),
                        args,
                    };
                    let hcat: Vec<Expr> = rows
                        .into_iter()
                        .map(|row| {
                            let mut args = vec![Expr::Integer(2)];
                            args.extend(row.into_iter().map(|x| call("matrix", vec![x])));
                            call("cat", args)
                        })
                        .collect();
                    let mut args = vec![Expr::Integer(1)];
                    args.extend(hcat);
                    return Ok(call("cat", args));
                }
                let mut out = Vec::new();
                for items in rows.iter() {
                    if rows.len() == 1 && items.len() == 1 {
                        return Ok(Expr::Array(vec![Expr::Array(items.clone())]));
                    }
                    out.push(Expr::Array(items.clone()));
                }
                Expr::Array(out)
            }
            ExprKind::ArrayComprehension { body, indices } => {
                self.hoist_comprehension(body, indices, fenv, e.span)?
            }
            ExprKind::Tuple(items) => Expr::Tuple(
                items
                    .iter()
                    .map(|i| i.as_ref().map(r).transpose())
                    .collect::<Res<Vec<_>>>()?,
            ),
        })
    }

    fn fref(&self, c: &ast::ComponentRef, fenv: &FnEnv) -> Res<Expr> {
        let first = c.parts[0].name.as_str();
        if !c.global && (fenv.locals.contains(first) || first == "time") {
            if first == "time" && !fenv.locals.contains(first) {
                return Ok(Expr::Time);
            }
            let name = c
                .parts
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(".");
            let base = Expr::Var {
                name: name.clone(),
                subscripts: Vec::new(),
            };
            let mut subs = Vec::new();
            let all: Vec<&ast::Subscript> =
                c.parts.iter().flat_map(|p| p.subscripts.iter()).collect();
            for (k, s) in all.iter().enumerate() {
                subs.push(match s {
                    ast::Subscript::Colon(_) => Subscript::All,
                    ast::Subscript::Expr(e) => {
                        let end = Expr::Call {
                            func: "size".into(),
                            args: vec![base.clone(), Expr::Integer(k as i64 + 1)],
                        };
                        Subscript::Index(self.fexpr_end(e, fenv, Some(&end))?)
                    }
                });
            }
            return Ok(Expr::Var {
                name,
                subscripts: subs,
            });
        }
        // Package constants and enumeration literals: their values.
        match self.expand_cref(c, &fenv.env, &mut Cx::eval()) {
            Ok(v) => Ok(v.to_expr()),
            Err(e) => match self.constant_at_local_subscripts(c, fenv) {
                Some(r) => r.map(|v| v.to_expr()),
                None => Err(e),
            },
        }
    }

    /// A constant array subscripted by values of the function (`T.X01Table[addr[i]]` with
    /// an input `addr`, `fluidConstants[i].molarMass` in a `for` loop): the subscripts
    /// cannot be evaluated at translation time, so the whole array is taken (`c` without
    /// subscripts: for an array of records, the array of the field) and the element chosen
    /// when the function runs (an if-expression over the indices, as for dynamic subscripts
    /// in models). `None` when `c` is not of that form (no subscripts, or no constant value
    /// without them).
    pub(crate) fn constant_at_local_subscripts(
        &self,
        c: &ast::ComponentRef,
        fenv: &FnEnv,
    ) -> Option<Res<Val>> {
        if c.parts.iter().all(|p| p.subscripts.is_empty()) {
            return None;
        }
        let mut whole_ref = c.clone();
        for p in &mut whole_ref.parts {
            p.subscripts.clear();
        }
        let whole = self
            .expand_cref(&whole_ref, &fenv.env, &mut Cx::eval())
            .ok()?;
        let dims = whole.shape();
        let mut subs = Vec::new();
        // The subscripts of all parts, in order, select along the dimensions of the whole.
        let all = c.parts.iter().flat_map(|p| p.subscripts.iter());
        for (k, s) in all.enumerate() {
            subs.push(match s {
                ast::Subscript::Colon(_) => None,
                ast::Subscript::Expr(e) => {
                    let end = Expr::Integer(dims.get(k).copied().unwrap_or(0) as i64);
                    match self.fexpr_end(e, fenv, Some(&end)) {
                        Ok(x) => Some(x),
                        Err(err) => return Some(Err(err)),
                    }
                }
            });
        }
        crate::expand::select_by_exprs(&whole, &subs).map(Ok)
    }

    fn fcall(
        &self,
        function: &ast::ComponentRef,
        args: &FunctionArgs,
        fenv: &FnEnv,
        span: Span,
        end: Option<&Expr>,
    ) -> Res<Expr> {
        let info = self.fcall_info(function, args, fenv, span, end)?;
        match info.value {
            Some(v) => v.scalar(span),
            None => Ok(info.call),
        }
    }

    /// A call inside a function body, and whether its first output is a record.
    pub(crate) fn fcall_info(
        &self,
        function: &ast::ComponentRef,
        args: &FunctionArgs,
        fenv: &FnEnv,
        span: Span,
        end: Option<&Expr>,
    ) -> Res<crate::fnrecords::FCall> {
        use crate::fnrecords::{FCall, FVal};
        let plain = |call: Expr| FCall {
            call,
            value: None,
            record_output: None,
        };
        let fname = cref_text(function);
        let FunctionArgs::List { positional, named } = args else {
            let FunctionArgs::Comprehension { body, indices } = args else {
                return err(span, "unexpected arguments");
            };
            return match fname.as_str() {
                "sum" | "product" | "min" | "max" => {
                    self.hoist_reduction(&fname, body, indices, fenv, span)
                }
                "array" => self.hoist_comprehension(body, indices, fenv, span),
                _ => err(
                    span,
                    format!("`{fname}` does not take an iterator argument"),
                ),
            }
            .map(plain);
        };
        // `f(x)` with `f` a functional input of this specialization.
        if let [only] = function.parts.as_slice() {
            let bound = fenv.hoist.funargs.borrow().get(only.name.as_str()).cloned();
            if let (Some(a), false) = (bound, function.global) {
                return self.call_func_arg(&fname, &a, positional, named, fenv, span, end);
            }
        }
        let class = self.lk.resolve_class_name(
            (!function.global).then_some(fenv.env.scope),
            &crate::expand::cref_to_name(function),
            false,
        );
        if let Some(id) = class {
            if let Some(call) =
                self.body_call_with_func_args(id, positional, named, fenv, span, end)?
            {
                return Ok(call);
            }
        }
        let mut pos = Vec::new();
        for a in positional {
            pos.push(self.fval_end(a, fenv, end)?);
        }
        // Built-in functions take no records; `size(v, 1)` of an array of records is the
        // size of its fields' arrays.
        let builtin_args = |pos: Vec<FVal>| -> Res<Vec<Expr>> {
            pos.into_iter()
                .zip(positional)
                .enumerate()
                .map(|(k, (v, a))| match v {
                    FVal::R(r)
                        if k == 0 && matches!(fname.trim_start_matches('.'), "size" | "ndims") =>
                    {
                        Ok(r.fields.into_iter().next().unwrap_or(Expr::Integer(0)))
                    }
                    v => v.scalar(a.span),
                })
                .collect()
        };
        let Some(id) = class else {
            let fname = fname.trim_start_matches('.').to_string();
            if !BUILTINS.contains(&fname.as_str()) && !EXTRA_BUILTINS.contains(&fname.as_str()) {
                return err(function.span, format!("unknown function `{fname}`"));
            }
            let mut pos = builtin_args(pos)?;
            if fname == "array" && named.is_empty() {
                // `array(a, b)` is the array constructor `{a, b}` (spec 10.4).
                return Ok(plain(Expr::Array(pos)));
            }
            for n in named {
                pos.push(self.fexpr_end(&n.value, fenv, end)?);
            }
            return Ok(plain(Expr::Call {
                func: fname,
                args: pos,
            }));
        };
        if let Some(b) = self.builtin_external(id) {
            return Ok(plain(Expr::Call {
                func: b,
                args: builtin_args(pos)?,
            }));
        }
        // `MyTable(vals)` of an external object class calls its constructor
        let id = if crate::tables::is_external_object(self, id) {
            self.object_constructor(id, span)?
        } else {
            id
        };
        let full = self.lk.name_of(id);
        // Place named arguments; defaults and records are handled by `finish_call`.
        let fnode = self.package_node(self.signature_class(id));
        let elems = self.elems(&fnode);
        let inputs: Vec<Rc<Comp>> = elems
            .comps
            .iter()
            .filter(|c| self.comp_causality(&fnode, c) == Some(ast::Causality::Input))
            .cloned()
            .collect();
        if pos.len() > inputs.len() {
            return err(span, format!("too many arguments for `{full}`"));
        }
        let mut slots: Vec<Option<FVal>> = vec![None; inputs.len()];
        for (k, a) in pos.into_iter().enumerate() {
            slots[k] = Some(a);
        }
        for n in named {
            let Some(k) = inputs.iter().position(|c| *c.name == *n.name.name) else {
                return err(n.name.span, format!("`{full}` has no input `{}`", n.name));
            };
            slots[k] = Some(self.fval_end(&n.value, fenv, end)?);
        }
        self.finish_call(id, &fnode, &elems, &inputs, slots, fenv, span)
    }

    fn fstatement(&self, s: &ast::Statement, fenv: &FnEnv, out: &mut Vec<Statement>) -> Res<()> {
        // Hoisted computations of this statement go right before it; those of enclosing
        // statements (e.g. the condition of an `if` around it) are kept aside meanwhile.
        let saved = std::mem::take(&mut *fenv.hoist.pre.borrow_mut());
        let mut stmt = Vec::new();
        let r = self.fstatement_inner(s, fenv, &mut stmt);
        let mine = std::mem::replace(&mut *fenv.hoist.pre.borrow_mut(), saved);
        r?;
        out.extend(mine);
        out.extend(stmt);
        Ok(())
    }

    /// `r := ...` (also `r[i] := ...`, `r.sub := ...`) for a record-typed local or output:
    /// field by field from any record-valued expression, or all outputs of a
    /// record-returning call assigned directly.
    fn record_assignment(
        &self,
        target: &ast::ComponentRef,
        value: &ast::Expr,
        fenv: &FnEnv,
        o: &flat::Origin,
    ) -> Res<Option<Vec<Statement>>> {
        use crate::fnrecords::FVal;
        let Some(t) = self.record_ref(target, fenv)? else {
            return Ok(None);
        };
        // A call of a function returning the record: its outputs straight into the fields.
        if let ExprKind::Call { function, args } = &value.kind {
            let class = self.lk.resolve_class_name(
                (!function.global).then_some(fenv.env.scope),
                &crate::expand::cref_to_name(function),
                false,
            );
            if class.is_some_and(|c| !self.is_record_class(c)) {
                let info = self.fcall_info(function, args, fenv, value.span, None)?;
                if let Some(FVal::R(r)) = info.value {
                    if r.fields.len() == t.fields.len() {
                        return Ok(Some(self.assign_fields(t.fields, r.fields, fenv, o)));
                    }
                }
                if info
                    .record_output
                    .as_ref()
                    .is_some_and(|(rc, _)| *rc == t.class)
                {
                    if let Some(values) = self
                        .inline_simple_call(&info.call, fenv)
                        .filter(|v| v.len() >= t.fields.len())
                    {
                        return Ok(Some(self.assign_fields(t.fields, values, fenv, o)));
                    }
                    return Ok(Some(vec![Statement::TupleAssign {
                        targets: t.fields.into_iter().map(Some).collect(),
                        value: info.call,
                        origin: o.clone(),
                    }]));
                }
                return err(
                    value.span,
                    format!(
                        "a `{}` record cannot be assigned the result of `{}`",
                        self.lk.name_of(t.class),
                        cref_text(function)
                    ),
                );
            }
        }
        let v = match self.fval(value, fenv)? {
            FVal::R(r) if r.fields.len() == t.fields.len() => r,
            FVal::R(r) => {
                return err(
                    value.span,
                    format!(
                        "a `{}` record cannot be assigned a `{}` record",
                        self.lk.name_of(t.class),
                        self.lk.name_of(r.class)
                    ),
                )
            }
            FVal::S(_) => {
                return err(
                    value.span,
                    format!(
                        "a `{}` record can only be assigned a record value",
                        self.lk.name_of(t.class)
                    ),
                )
            }
        };
        Ok(Some(self.assign_fields(t.fields, v.fields, fenv, o)))
    }

    /// `target_k := value_k` for the fields of a record; through temporaries when a value
    /// reads a field assigned before it (`c := Complex(c.im, c.re)`).
    fn assign_fields(
        &self,
        targets: Vec<Expr>,
        values: Vec<Expr>,
        fenv: &FnEnv,
        o: &flat::Origin,
    ) -> Vec<Statement> {
        let names: Vec<&str> = targets
            .iter()
            .filter_map(|t| match t {
                Expr::Var { name, .. } => Some(name.as_str()),
                _ => None,
            })
            .collect();
        let mut clash = false;
        for (k, v) in values.iter().enumerate() {
            crate::walk::visit(v, &mut |y| {
                if let Expr::Var { name, .. } = y {
                    clash |= names[..k.min(names.len())].contains(&name.as_str());
                }
            });
        }
        let assign = |target: Expr, value: Expr| Statement::Assign {
            target,
            value,
            origin: o.clone(),
        };
        if !clash {
            return targets
                .into_iter()
                .zip(values)
                .map(|(t, v)| assign(t, v))
                .collect();
        }
        let mut out = Vec::new();
        let mut temps = Vec::new();
        for v in values {
            let ty = infer_type(&v, &fenv.hoist.types.borrow());
            let t = Expr::Var {
                name: fenv.hoist.temp(ty, Vec::new()),
                subscripts: Vec::new(),
            };
            out.push(assign(t.clone(), v));
            temps.push(t);
        }
        out.extend(targets.into_iter().zip(temps).map(|(t, v)| assign(t, v)));
        out
    }

    /// Field values of a record constructor call inside a function: the arguments (by
    /// position or name) for the record's inputs, the bindings of the others.
    pub(crate) fn constructor_fields(
        &self,
        rc: ClassId,
        args: &FunctionArgs,
        fields: &[crate::records::RecordField],
        fenv: &FnEnv,
        span: Span,
    ) -> Res<Vec<Expr>> {
        use crate::fnrecords::FVal;
        let FunctionArgs::List { positional, named } = args else {
            return err(span, "unexpected iterator arguments");
        };
        let node = self.package_node(rc);
        let elems = self.elems(&node);
        let inputs: Vec<Rc<Comp>> = elems
            .comps
            .iter()
            .filter(|c| {
                !c.protected
                    && (c.tprefixes.variability != Some(ast::Variability::Constant)
                        || c.mods.binding.is_none())
            })
            .cloned()
            .collect();
        if positional.len() > inputs.len() {
            return err(
                span,
                format!(
                    "too many arguments: `{}` takes {} input(s)",
                    self.lk.name_of(rc),
                    inputs.len()
                ),
            );
        }
        let mut values = Vec::new();
        for c in elems.comps.iter() {
            let k = inputs.iter().position(|i| Rc::ptr_eq(i, c));
            let arg = k.and_then(|k| {
                positional
                    .get(k)
                    .or_else(|| named.iter().find(|n| n.name == *c.name).map(|n| &n.value))
            });
            let sub: Vec<&crate::records::RecordField> = fields
                .iter()
                .filter(|f| {
                    f.path == *c.name
                        || f.path
                            .strip_prefix(&*c.name)
                            .is_some_and(|r| r.starts_with('.'))
                })
                .collect();
            let v = match (arg, &c.mods.binding) {
                (Some(a), _) => self.fval(a, fenv)?,
                (None, Some(b)) => {
                    let v = self.eval_expr(&b.expr, &b.env, &mut Cx::eval())?;
                    match v {
                        Val::R(_) => {
                            let mut out = Vec::new();
                            for f in &sub {
                                let rest = &f.path[c.name.len() + 1..];
                                match crate::records::field_value(&v, rest) {
                                    Some(x) => out.push(x.to_expr()),
                                    None => {
                                        return err(
                                            span,
                                            format!("missing value for record field `{}`", f.path),
                                        )
                                    }
                                }
                            }
                            values.extend(out);
                            continue;
                        }
                        other => FVal::S(other.to_expr()),
                    }
                }
                (None, None) => {
                    return err(span, format!("missing value for record field `{}`", c.name))
                }
            };
            match v {
                FVal::S(x) if sub.len() == 1 && sub[0].path == *c.name => values.push(x),
                FVal::R(r) if r.fields.len() == sub.len() => values.extend(r.fields),
                _ => {
                    return err(
                        span,
                        format!(
                            "the value for record field `{}` does not match its type",
                            c.name
                        ),
                    )
                }
            }
        }
        if values.len() != fields.len() {
            return err(span, "the record constructor does not give every field");
        }
        Ok(values)
    }

    /// `sum(e for i in r)` etc.: a temporary accumulated by a loop.
    fn hoist_reduction(
        &self,
        op: &str,
        body: &ast::Expr,
        indices: &[ast::ForIndex],
        fenv: &FnEnv,
        span: Span,
    ) -> Res<Expr> {
        let o = origin(span, &fenv.env.node);
        let mut inner = FnEnv {
            env: fenv.env.clone(),
            locals: fenv.locals.clone(),
            hoist: fenv.hoist.clone(),
        };
        let mut ranges = Vec::new();
        for idx in indices {
            let Some(r) = &idx.range else {
                return err(idx.span, "iterators in functions need an explicit range");
            };
            ranges.push((idx.name.to_string(), self.fexpr(r, &inner)?));
            inner.locals.insert(idx.name.to_string());
            inner
                .hoist
                .types
                .borrow_mut()
                .insert(idx.name.to_string(), ScalarType::Integer);
        }
        // What the body hoists (an inner reduction over the outer index) runs in the loop.
        let saved = std::mem::take(&mut *fenv.hoist.pre.borrow_mut());
        let value = self.fexpr(body, &inner);
        let body_pre = std::mem::replace(&mut *fenv.hoist.pre.borrow_mut(), saved);
        let value = value?;
        let ty = infer_type(&value, &fenv.hoist.types.borrow());
        let tmp = fenv.hoist.temp(ty.clone(), Vec::new());
        let var = Expr::Var {
            name: tmp.clone(),
            subscripts: Vec::new(),
        };
        let init = match (op, &ty) {
            ("sum", ScalarType::Integer) => Expr::Integer(0),
            ("sum", _) => Expr::Real(0.0),
            ("product", ScalarType::Integer) => Expr::Integer(1),
            ("product", _) => Expr::Real(1.0),
            ("min", ScalarType::Integer) => Expr::Integer(i64::MAX),
            ("min", _) => Expr::Real(f64::MAX),
            (_, ScalarType::Integer) => Expr::Integer(i64::MIN),
            _ => Expr::Real(f64::MIN),
        };
        let update = match op {
            "sum" => Expr::Binary {
                op: FB::Add,
                lhs: Box::new(var.clone()),
                rhs: Box::new(value),
            },
            "product" => Expr::Binary {
                op: FB::Mul,
                lhs: Box::new(var.clone()),
                rhs: Box::new(value),
            },
            _ => Expr::Call {
                func: op.to_string(),
                args: vec![var.clone(), value],
            },
        };
        let mut stmts = body_pre;
        stmts.push(Statement::Assign {
            target: var.clone(),
            value: update,
            origin: o.clone(),
        });
        for (name, range) in ranges.into_iter().rev() {
            stmts = vec![Statement::For {
                var: name,
                range,
                body: stmts,
                origin: o.clone(),
            }];
        }
        let mut pre = fenv.hoist.pre.borrow_mut();
        pre.push(Statement::Assign {
            target: var.clone(),
            value: init,
            origin: o,
        });
        pre.extend(stmts);
        Ok(var)
    }

    /// `{e for i in r}`: a temporary array filled by a loop (one iterator).
    fn hoist_comprehension(
        &self,
        body: &ast::Expr,
        indices: &[ast::ForIndex],
        fenv: &FnEnv,
        span: Span,
    ) -> Res<Expr> {
        let [idx] = indices else {
            return err(
                span,
                "array constructors with several iterators are not supported inside functions",
            );
        };
        let Some(r) = &idx.range else {
            return err(idx.span, "iterators in functions need an explicit range");
        };
        let o = origin(span, &fenv.env.node);
        let range = self.fexpr(r, fenv)?;
        let mut inner = FnEnv {
            env: fenv.env.clone(),
            locals: fenv.locals.clone(),
            hoist: fenv.hoist.clone(),
        };
        inner.locals.insert(idx.name.to_string());
        inner
            .hoist
            .types
            .borrow_mut()
            .insert(idx.name.to_string(), ScalarType::Integer);
        let value = self.fexpr(body, &inner)?;
        let ty = infer_type(&value, &fenv.hoist.types.borrow());
        let count = range_length(&range);
        let tmp = fenv.hoist.temp(ty, vec![Some(count)]);
        let k = fenv.hoist.temp(ScalarType::Integer, Vec::new());
        let kv = Expr::Var {
            name: k.clone(),
            subscripts: Vec::new(),
        };
        let mut pre = fenv.hoist.pre.borrow_mut();
        pre.push(Statement::Assign {
            target: kv.clone(),
            value: Expr::Integer(0),
            origin: o.clone(),
        });
        pre.push(Statement::For {
            var: idx.name.to_string(),
            range,
            body: vec![
                Statement::Assign {
                    target: kv.clone(),
                    value: Expr::Binary {
                        op: FB::Add,
                        lhs: Box::new(kv.clone()),
                        rhs: Box::new(Expr::Integer(1)),
                    },
                    origin: o.clone(),
                },
                Statement::Assign {
                    target: Expr::Var {
                        name: tmp.clone(),
                        subscripts: vec![Subscript::Index(kv)],
                    },
                    value,
                    origin: o.clone(),
                },
            ],
            origin: o,
        });
        Ok(Expr::Var {
            name: tmp,
            subscripts: Vec::new(),
        })
    }

    fn fstatement_inner(
        &self,
        s: &ast::Statement,
        fenv: &FnEnv,
        out: &mut Vec<Statement>,
    ) -> Res<()> {
        let o = origin(s.span, &fenv.env.node);
        match &s.kind {
            StatementKind::Assign { target, value } => {
                if let Some(stmts) = self.record_assignment(target, value, fenv, &o)? {
                    out.extend(stmts);
                    return Ok(());
                }
                out.push(Statement::Assign {
                    target: self.fref(target, fenv)?,
                    value: self.fexpr(value, fenv)?,
                    origin: o,
                })
            }
            StatementKind::TupleAssign { targets, value } => {
                let mut ts = Vec::new();
                for t in targets {
                    match t {
                        Some(ast::Expr {
                            kind: ExprKind::Ref(c),
                            ..
                        }) if self.record_ref(c, fenv)?.is_some() => {
                            // a record output is passed as its fields
                            let r = self.record_ref(c, fenv)?.into_iter().flat_map(|r| r.fields);
                            ts.extend(r.map(Some));
                        }
                        Some(e) => ts.push(Some(self.fexpr(e, fenv)?)),
                        None => ts.push(None),
                    }
                }
                out.push(Statement::TupleAssign {
                    targets: ts,
                    value: self.fexpr(value, fenv)?,
                    origin: o,
                });
            }
            StatementKind::Call { function, args } => {
                let name = function.as_simple_name().unwrap_or("");
                let FunctionArgs::List { positional, named } = args else {
                    return err(s.span, "unexpected iterator arguments");
                };
                let arg = |k: usize, n: &str| {
                    positional
                        .get(k)
                        .or_else(|| named.iter().find(|a| a.name == n).map(|a| &a.value))
                };
                match name {
                    "assert" => {
                        let (Some(c), Some(m)) = (arg(0, "condition"), arg(1, "message")) else {
                            return err(s.span, "assert needs a condition and a message");
                        };
                        let level = match arg(2, "level") {
                            Some(l) if moss_syntax::print_expr(l).ends_with("warning") => {
                                AssertLevel::Warning
                            }
                            _ => AssertLevel::Error,
                        };
                        out.push(Statement::Assert {
                            condition: self.fexpr(c, fenv)?,
                            message: self.fexpr(m, fenv)?,
                            level,
                            origin: o,
                        });
                    }
                    "terminate" => {
                        let Some(m) = arg(0, "message") else {
                            return err(s.span, "terminate needs a message");
                        };
                        out.push(Statement::Terminate {
                            message: self.fexpr(m, fenv)?,
                            origin: o,
                        });
                    }
                    _ => {
                        let e = self.fcall(function, args, fenv, s.span, None)?;
                        if let Expr::Call { func, args } = e {
                            out.push(Statement::Call {
                                func,
                                args,
                                origin: o,
                            });
                        }
                    }
                }
            }
            StatementKind::If {
                branches,
                else_branch,
            } => {
                let mut bs = Vec::new();
                for (c, body) in branches {
                    let mut v = Vec::new();
                    for st in body {
                        self.fstatement(st, fenv, &mut v)?;
                    }
                    bs.push((self.fexpr(c, fenv)?, v));
                }
                let mut else_ = Vec::new();
                for st in else_branch {
                    self.fstatement(st, fenv, &mut else_)?;
                }
                out.push(Statement::If {
                    branches: bs,
                    else_,
                    origin: o,
                });
            }
            StatementKind::For { indices, body } => {
                out.push(self.ffor(indices, body, fenv, &o)?);
            }
            StatementKind::While { condition, body } => {
                let mut v = Vec::new();
                for st in body {
                    self.fstatement(st, fenv, &mut v)?;
                }
                out.push(Statement::While {
                    condition: self.fexpr(condition, fenv)?,
                    body: v,
                    origin: o,
                });
            }
            StatementKind::When { .. } => {
                return err(s.span, "`when` is not allowed inside a function")
            }
            StatementKind::Return => out.push(Statement::Return { origin: o }),
            StatementKind::Break => out.push(Statement::Break { origin: o }),
        }
        Ok(())
    }

    fn ffor(
        &self,
        indices: &[ast::ForIndex],
        body: &[ast::Statement],
        fenv: &FnEnv,
        o: &flat::Origin,
    ) -> Res<Statement> {
        let Some((first, rest)) = indices.split_first() else {
            return err(o.span, "for loop without iterator");
        };
        let Some(range) = &first.range else {
            return err(first.span, "for loops in functions need an explicit range");
        };
        let range = self.fexpr(range, fenv)?;
        let mut inner = FnEnv {
            env: fenv.env.clone(),
            locals: fenv.locals.clone(),
            hoist: fenv.hoist.clone(),
        };
        inner.locals.insert(first.name.to_string());
        let mut v = Vec::new();
        if rest.is_empty() {
            for st in body {
                self.fstatement(st, &inner, &mut v)?;
            }
        } else {
            v.push(self.ffor(rest, body, &inner, o)?);
        }
        Ok(Statement::For {
            var: first.name.to_string(),
            range,
            body: v,
            origin: o.clone(),
        })
    }
}

/// The first input assigned by an assignment in `stmts` (recursively).
fn assigned_input(stmts: &[ast::Statement], inputs: &HashSet<&str>) -> Option<(String, Span)> {
    for s in stmts {
        let found = match &s.kind {
            StatementKind::Assign { target, .. } => target
                .parts
                .first()
                .filter(|p| inputs.contains(p.name.as_str()))
                .map(|p| (p.name.to_string(), s.span)),
            StatementKind::TupleAssign { targets, .. } => {
                targets.iter().flatten().find_map(|t| match &t.kind {
                    ExprKind::Ref(c) => c
                        .parts
                        .first()
                        .filter(|p| inputs.contains(p.name.as_str()))
                        .map(|p| (p.name.to_string(), s.span)),
                    _ => None,
                })
            }
            StatementKind::If {
                branches,
                else_branch,
            } => branches
                .iter()
                .find_map(|(_, b)| assigned_input(b, inputs))
                .or_else(|| assigned_input(else_branch, inputs)),
            StatementKind::For { body, .. } | StatementKind::While { body, .. } => {
                assigned_input(body, inputs)
            }
            StatementKind::When { branches } => {
                branches.iter().find_map(|(_, b)| assigned_input(b, inputs))
            }
            _ => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

/// A cheap type inference for temporaries: Integer when every leaf is Integer.
/// Is `e` certainly an array (in a function body, from the declared ranks of its
/// variables)? Anything not recognized counts as a scalar.
fn known_array(e: &Expr, ranks: &std::collections::HashMap<String, usize>) -> bool {
    match e {
        Expr::Array(_) | Expr::Range { .. } => true,
        Expr::Var { name, subscripts } => {
            let rank = ranks.get(name).copied().unwrap_or(0);
            rank > 0
                && (subscripts.len() < rank
                    || subscripts.iter().any(|s| matches!(s, Subscript::All)))
        }
        Expr::Call { func, .. } => matches!(
            func.as_str(),
            "zeros"
                | "ones"
                | "fill"
                | "cat"
                | "identity"
                | "linspace"
                | "transpose"
                | "matrix"
                | "diagonal"
                | "outerProduct"
                | "skew"
                | "symmetric"
        ),
        Expr::Unary { arg, .. } => known_array(arg, ranks),
        Expr::Binary { op, lhs, rhs } => match op {
            FB::Add
            | FB::Sub
            | FB::ElemMul
            | FB::ElemDiv
            | FB::ElemPow
            | FB::ElemAdd
            | FB::ElemSub => known_array(lhs, ranks) || known_array(rhs, ranks),
            FB::Mul | FB::Div => {
                (known_array(lhs, ranks) && crate::fold::is_literal(rhs))
                    || (crate::fold::is_literal(lhs) && known_array(rhs, ranks))
            }
            _ => false,
        },
        _ => false,
    }
}

pub(crate) fn infer_type(
    e: &Expr,
    types: &std::collections::HashMap<String, ScalarType>,
) -> ScalarType {
    match e {
        Expr::Integer(_) => ScalarType::Integer,
        Expr::Boolean(_) => ScalarType::Boolean,
        Expr::Var { name, .. } => types.get(name).cloned().unwrap_or(ScalarType::Real),
        Expr::Unary { arg, .. } => infer_type(arg, types),
        Expr::Binary { op, lhs, rhs } => match op {
            FB::Div | FB::ElemDiv | FB::Pow | FB::ElemPow => ScalarType::Real,
            FB::And | FB::Or | FB::Lt | FB::Le | FB::Gt | FB::Ge | FB::Eq | FB::Ne => {
                ScalarType::Boolean
            }
            _ => match (infer_type(lhs, types), infer_type(rhs, types)) {
                (ScalarType::Integer, ScalarType::Integer) => ScalarType::Integer,
                _ => ScalarType::Real,
            },
        },
        Expr::If { branches, else_ } => {
            let t = infer_type(else_, types);
            if branches.iter().all(|(_, v)| infer_type(v, types) == t) {
                t
            } else {
                ScalarType::Real
            }
        }
        Expr::Call { func, .. }
            if matches!(
                func.as_str(),
                "size" | "integer" | "div" | "mod" | "Integer"
            ) =>
        {
            ScalarType::Integer
        }
        _ => ScalarType::Real,
    }
}

/// Replace variables by expressions (callee inputs by the caller's arguments).
pub(crate) fn substitute(e: &mut Expr, map: &[(String, Expr)]) {
    if let Expr::Var { name, subscripts } = e {
        if subscripts.is_empty() {
            if let Some((_, v)) = map.iter().find(|(n, _)| n == name) {
                *e = v.clone();
                return;
            }
        }
    }
    crate::walk::exprs_mut(e, &mut |x| substitute(x, map));
}

fn annotation_of(def: &ast::ClassDef) -> Option<&ast::ClassModification> {
    if let Some(c) = def.specifier.composition() {
        if let Some(a) = &c.annotation {
            return Some(&a.modification);
        }
    }
    def.specifier
        .description()
        .annotation
        .as_ref()
        .map(|a| &a.modification)
}

/// The class annotation (composition annotation or description annotation).
pub fn class_annotation(def: &ast::ClassDef) -> Option<&ast::ClassModification> {
    annotation_of(def)
}

/// The number of elements of a `for` range in a function body, as an expression:
/// `max(stop - start + 1, 0)` for `start:stop`, `size(range, 1)` otherwise.
pub(crate) fn range_length(range: &Expr) -> Expr {
    match range {
        Expr::Range {
            start,
            step: None,
            stop,
        } => Expr::Call {
            func: "max".into(),
            args: vec![
                crate::fold::binary(
                    FB::Add,
                    crate::fold::binary(FB::Sub, (**stop).clone(), (**start).clone()),
                    Expr::Integer(1),
                ),
                Expr::Integer(0),
            ],
        },
        _ => Expr::Call {
            func: "size".into(),
            args: vec![range.clone(), Expr::Integer(1)],
        },
    }
}
