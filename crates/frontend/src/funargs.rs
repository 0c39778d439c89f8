//! Functional input arguments and function partial application (spec 12.4.2).
//!
//! A function input may be typed with a partial function (`input Integrand f`); a call
//! passes a function name (`quadrature(0, 1, Parabola)`), a partial application binding
//! some inputs by name (`function Sine(A = 2, w = time)`), or, inside a function, its own
//! functional input. Later stages know no function values: each such call calls a
//! *specialization* of the callee, a flat function of its own name
//! (`quadrature<f=Sine(A,w)>`) in which the functional input is gone, every call of it is a
//! call of the passed function, and the bound inputs are extra inputs (`f$A`, `f$w`) whose
//! values the call site passes after the ordinary arguments. A specialization depends only
//! on which function is passed and which of its inputs are bound, not on their values, so a
//! recursive function passing its functional input on to itself calls itself.

use crate::ctx::Flattener;
use crate::expand::{cref_to_name, Val};
use crate::flat::{Expr, FunctionVar};
use crate::fnrecords::{FCall, FVal, RecExpr};
use crate::funcs::FnEnv;
use crate::inst::*;
use crate::loader::ClassId;
use moss_syntax::ast::{self, ExprKind};
use moss_syntax::Span;
use std::rc::Rc;
use std::sync::Arc;

/// The function a functional input is bound to.
#[derive(Clone, Debug, PartialEq)]
pub struct FuncArg {
    /// The function passed.
    pub target: ClassId,
    /// Inputs of `target` bound by a partial application, in the order of its inputs.
    pub bound: Vec<Arc<str>>,
    /// Functional inputs of `target` that the partial application binds to functions
    /// (`function quadratureOnce(y1 = y1, integrand = integrand)`), in input order: a call
    /// of the argument calls `target`'s specialization for them.
    pub funcs: Vec<(Arc<str>, FuncArg)>,
}

impl FuncArg {
    /// How the argument reads in a specialization's name: `Sine`, `Sine(A,w)`,
    /// `quadratureOnce(y1,y2;integrand=Impl)`.
    fn text(&self, lk: &Lookup) -> String {
        let t = lk.name_of(self.target);
        if self.bound.is_empty() && self.funcs.is_empty() {
            return t;
        }
        let mut parts: Vec<String> = self.bound.iter().map(|b| b.to_string()).collect();
        let funcs: Vec<String> = self
            .funcs
            .iter()
            .map(|(g, a)| format!("{g}={}", a.text(lk)))
            .collect();
        if !funcs.is_empty() {
            parts.push(format!(";{}", funcs.join(";")));
        }
        format!("{t}({})", parts.join(",").replace(",;", ";"))
    }
}

/// A function with its functional inputs bound (see the module documentation).
#[derive(Clone, Debug)]
pub struct FnSpec {
    pub base: ClassId,
    /// Functional inputs of `base` and what they are bound to, in input order.
    pub args: Vec<(Arc<str>, FuncArg)>,
}

/// A function passed with a partial application: the argument, the bound inputs that take
/// values, and the bound functional inputs with their partial function types.
pub(crate) struct Applied {
    arg: FuncArg,
    values: Vec<Rc<Comp>>,
    funcs: Vec<(Rc<Comp>, ClassId)>,
}

/// Name of the extra input holding the bound input `input` (a record: its fields) of the
/// function passed for the functional input `fi`.
pub(crate) fn bound_name(fi: &str, input: &str) -> String {
    format!("{fi}${input}")
}

/// What a call passes for the functional inputs of its callee: the specialization to call
/// and the values of the bound inputs (scalarized, in the order of its extra inputs).
pub(crate) struct Specialized<T> {
    pub name: String,
    pub extra: Vec<T>,
}

impl<'a> Flattener<'a> {
    /// The partial function type of a functional input (`input Integrand f`), if `comp` is one.
    pub(crate) fn functional_input(&self, fnode: &NodeRef, comp: &Rc<Comp>) -> Option<ClassId> {
        let ty = self.comp_type(fnode, comp).ok()?;
        let Base::Class(c) = ty.base else {
            return None;
        };
        matches!(
            self.lk.kind(self.lk.follow_short_class(c)),
            ast::ClassKind::Function { .. }
        )
        .then_some(c)
    }

    /// The functional inputs among `inputs` (positions and partial function types).
    pub(crate) fn functional_inputs(
        &self,
        fnode: &NodeRef,
        inputs: &[Rc<Comp>],
    ) -> Vec<(usize, ClassId)> {
        inputs
            .iter()
            .enumerate()
            .filter_map(|(k, c)| self.functional_input(fnode, c).map(|i| (k, i)))
            .collect()
    }

    /// The argument expressions of a call placed on the inputs of `id` (positional, then
    /// named), not evaluated.
    pub(crate) fn place_args<'e>(
        &self,
        id: ClassId,
        inputs: &[Rc<Comp>],
        positional: &'e [ast::Expr],
        named: &'e [ast::NamedArg],
    ) -> Res<Vec<Option<&'e ast::Expr>>> {
        let mut given: Vec<Option<&ast::Expr>> = vec![None; inputs.len()];
        for (k, a) in positional.iter().enumerate().take(inputs.len()) {
            given[k] = Some(a);
        }
        for n in named {
            let Some(k) = inputs.iter().position(|c| *c.name == *n.name.name) else {
                return err(
                    n.name.span,
                    format!("`{}` has no input `{}`", self.lk.name_of(id), n.name),
                );
            };
            given[k] = Some(&n.value);
        }
        Ok(given)
    }

    /// A call in a function body of `id` with functional inputs: the call of its
    /// specialization (`None` when `id` has no functional inputs).
    pub(crate) fn body_call_with_func_args(
        &self,
        id: ClassId,
        positional: &[ast::Expr],
        named: &[ast::NamedArg],
        fenv: &FnEnv,
        span: Span,
        end: Option<&Expr>,
    ) -> Res<Option<FCall>> {
        let fnode = self.package_node(id);
        let elems = self.elems(&fnode);
        let inputs: Vec<Rc<Comp>> = elems
            .comps
            .iter()
            .filter(|c| self.comp_causality(&fnode, c) == Some(ast::Causality::Input))
            .cloned()
            .collect();
        let functional = self.functional_inputs(&fnode, &inputs);
        if functional.is_empty() {
            return Ok(None);
        }
        let full = self.lk.name_of(id);
        if positional.len() > inputs.len() {
            return err(span, format!("too many arguments for `{full}`"));
        }
        let given = self.place_args(id, &inputs, positional, named)?;
        let spec = self.body_specialization(id, &inputs, &functional, &given, fenv, span)?;
        let mut kept = Vec::new();
        let mut slots = Vec::new();
        for (k, c) in inputs.iter().enumerate() {
            if functional.iter().any(|(f, _)| *f == k) {
                continue;
            }
            kept.push(c.clone());
            slots.push(match given[k] {
                Some(a) => Some(self.fval_end(a, fenv, end)?),
                None => None,
            });
        }
        let mut call = self.finish_call(id, &fnode, &elems, &kept, slots, fenv, span)?;
        // `finish_call` registered the function itself, which is never called as such.
        self.functions.borrow_mut().remove(&full);
        if call.value.is_some() {
            return err(
                span,
                format!("`{full}` with a functional argument cannot be applied element-wise to an array of records"),
            );
        }
        match &mut call.call {
            Expr::Call { func, args } => {
                *func = spec.name;
                args.extend(spec.extra);
            }
            _ => return err(span, format!("unexpected call of `{full}`")),
        }
        Ok(Some(call))
    }

    /// Public inputs and outputs of a function class.
    fn interface(&self, id: ClassId) -> (NodeRef, Vec<Rc<Comp>>, Vec<Rc<Comp>>) {
        let node = self.package_node(id);
        let elems = self.elems(&node);
        let mut inputs = Vec::new();
        let mut outputs = Vec::new();
        for c in elems.comps.iter().filter(|c| !c.protected) {
            match self.comp_causality(&node, c) {
                Some(ast::Causality::Input) => inputs.push(c.clone()),
                Some(ast::Causality::Output) => outputs.push(c.clone()),
                None => {}
            }
        }
        (node, inputs, outputs)
    }

    /// Check that `target` with the inputs `bound` removed is function-compatible with the
    /// partial function `iface` (spec 6.6: its inputs and outputs by name and in order
    /// first, further inputs with defaults), for the functional input `fi` of `callee`.
    /// Returns the argument and the bound input components of `target`, in input order.
    pub(crate) fn func_arg(
        &self,
        iface: ClassId,
        target: ClassId,
        bound: &[(&ast::Ident, Span)],
        (fi, callee): (&str, &str),
        span: Span,
    ) -> Res<Applied> {
        let tname = self.lk.name_of(target);
        let what = format!("the functional input `{fi}` of `{callee}`");
        if !matches!(
            self.lk.kind(self.lk.follow_short_class(target)),
            ast::ClassKind::Function { .. }
        ) {
            return err(
                span,
                format!("`{tname}` is not a function: {what} needs one"),
            );
        }
        let (tnode, tinputs, toutputs) = self.interface(target);
        let (_, iinputs, ioutputs) = self.interface(iface);
        for (b, bspan) in bound {
            if !tinputs.iter().any(|c| *c.name == *b.name) {
                return err(*bspan, format!("`{tname}` has no input `{b}`"));
            }
        }
        let is_bound = |c: &Rc<Comp>| bound.iter().any(|(b, _)| *b.name == *c.name);
        let free: Vec<&Rc<Comp>> = tinputs.iter().filter(|c| !is_bound(c)).collect();
        let names = |cs: &[&Rc<Comp>]| {
            cs.iter()
                .map(|c| c.name.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let iref: Vec<&Rc<Comp>> = iinputs.iter().collect();
        let oref: Vec<&Rc<Comp>> = ioutputs.iter().collect();
        let tout: Vec<&Rc<Comp>> = toutputs.iter().collect();
        let mismatch = |kind: &str, have: String, want: String| {
            err(
                span,
                format!(
                    "`{tname}` does not match {what}: its {kind} are ({have}), `{}` declares ({want})",
                    self.lk.name_of(iface)
                ),
            )
            .map_err(|d| {
                Box::new(d.with_help(
                    "the passed function must have the partial function's inputs, by name and in the same order, and at least as many outputs, before any others (inputs it has in addition must be bound or have defaults)",
                ))
            })
        };
        let same = |a: &[&Rc<Comp>], b: &[&Rc<Comp>]| {
            a.len() >= b.len() && a.iter().zip(b).all(|(x, y)| x.name == y.name)
        };
        if !same(&free, &iref) {
            let kind = if bound.is_empty() {
                "inputs"
            } else {
                "inputs not bound"
            };
            return mismatch(kind, names(&free), names(&iref));
        }
        // outputs by position: the specification's own example (12.4.2.1) passes
        // `quadratureOnce`, whose output is `z`, for an `Integrand` whose output is `y`
        if tout.len() < oref.len() {
            return mismatch("outputs", names(&tout), names(&oref));
        }
        if let Some(c) = free[iref.len()..].iter().find(|c| c.mods.binding.is_none()) {
            return err(
                span,
                format!(
                    "input `{}` of `{tname}` is not an input of `{}` and has no default: bind it (`function {}({} = ...)`)",
                    c.name,
                    self.lk.name_of(iface),
                    tname.rsplit('.').next().unwrap_or(&tname),
                    c.name
                ),
            );
        }
        let mut bound_comps: Vec<Rc<Comp>> = Vec::new();
        let mut bound_funcs: Vec<(Rc<Comp>, ClassId)> = Vec::new();
        for c in tinputs.iter().filter(|c| is_bound(c)) {
            match self.functional_input(&tnode, c) {
                Some(iface) => bound_funcs.push((c.clone(), iface)),
                None => bound_comps.push(c.clone()),
            }
        }
        let arg = FuncArg {
            target,
            bound: bound_comps.iter().map(|c| c.name.clone()).collect(),
            funcs: Vec::new(),
        };
        Ok(Applied {
            arg,
            values: bound_comps,
            funcs: bound_funcs,
        })
    }

    /// The name of the specialization of `base` for `args`, registered for translation.
    pub(crate) fn specialization(&self, base: ClassId, args: Vec<(Arc<str>, FuncArg)>) -> String {
        let parts: Vec<String> = args
            .iter()
            .map(|(fi, a)| format!("{fi}={}", a.text(&self.lk)))
            .collect();
        let name = format!("{}<{}>", self.lk.name_of(base), parts.join(";"));
        self.functions.borrow_mut().insert(name.clone(), base);
        self.fn_specs
            .borrow_mut()
            .entry(name.clone())
            .or_insert(FnSpec { base, args });
        name
    }

    /// The extra inputs of a specialization: the bound inputs of each passed function as
    /// that function declares them, renamed (`f$A`; record fields `f$data.MM`), with sizes
    /// taken from the arguments.
    pub(crate) fn specialization_inputs(&self, spec: &FnSpec) -> Res<Vec<FunctionVar>> {
        let mut out = Vec::new();
        for (fi, a) in &spec.args {
            self.bound_inputs_of(fi, a, &mut out)?;
        }
        Ok(out)
    }

    /// The extra inputs for the functional argument `a` under `prefix` (`f`, then `f$g` for
    /// the functions it binds in turn): its bound inputs, then those of its bound functions.
    fn bound_inputs_of(&self, prefix: &str, a: &FuncArg, out: &mut Vec<FunctionVar>) -> Res<()> {
        if !a.bound.is_empty() {
            // a function with functional inputs bound in turn is translated as the
            // specialization the call will use (its own functional inputs have no types)
            let name = if a.funcs.is_empty() {
                self.lk.name_of(a.target)
            } else {
                self.specialization(a.target, a.funcs.clone())
            };
            let target = self.translate_function(&name, a.target)?;
            for b in &a.bound {
                let fields = format!("{b}.");
                for v in target
                    .inputs
                    .iter()
                    .filter(|v| v.name == **b || v.name.starts_with(&fields))
                {
                    out.push(FunctionVar {
                        name: bound_name(prefix, &v.name),
                        ty: v.ty.clone(),
                        dims: vec![None; v.dims.len()],
                        default: None,
                    });
                }
            }
        }
        for (g, inner) in &a.funcs {
            self.bound_inputs_of(&bound_name(prefix, g), inner, out)?;
        }
        Ok(())
    }

    /// The values a specialization receives for the functional argument `a` bound in the
    /// function being translated under `prefix`: its own extra inputs of that layout.
    fn bound_values_of(&self, prefix: &str, a: &FuncArg) -> Res<Vec<Expr>> {
        let (tnode, tinputs, _) = self.interface(a.target);
        let mut out = Vec::new();
        for c in tinputs.iter().filter(|c| a.bound.contains(&c.name)) {
            out.extend(self.bound_input_values(prefix, &tnode, c)?);
        }
        for (g, inner) in &a.funcs {
            out.extend(self.bound_values_of(&bound_name(prefix, g), inner)?);
        }
        Ok(out)
    }

    /// A functional argument written in a model (equations, bindings): the function and
    /// the values of its bound inputs, scalarized.
    pub(crate) fn model_func_arg(
        &self,
        arg: &ast::Expr,
        iface: ClassId,
        fi_callee: (&str, &str),
        env: &Env,
        cx: &mut crate::expand::Cx,
    ) -> Res<(FuncArg, Vec<Val>)> {
        let (function, named): (ast::Name, &[ast::NamedArg]) = match &arg.kind {
            ExprKind::Ref(c) if c.parts.iter().all(|p| p.subscripts.is_empty()) => {
                (cref_to_name(c), &[])
            }
            ExprKind::PartialApplication { function, args } => (function.clone(), args),
            _ => return err(arg.span, not_a_function(fi_callee)),
        };
        let Some(target) = self.lookup_function(env, &function) else {
            return err(
                function.span,
                format!("unknown function `{}`", name_text(&function)),
            );
        };
        let bound: Vec<(&ast::Ident, Span)> = named.iter().map(|n| (&n.name, n.span)).collect();
        let Applied {
            arg: mut fa,
            values: comps,
            funcs,
        } = self.func_arg(iface, target, &bound, fi_callee, arg.span)?;
        let mut vals = Vec::new();
        for c in &comps {
            let n = named.iter().find(|n| *n.name.name == *c.name);
            if let Some(n) = n {
                vals.push(self.expand(&n.value, env, cx)?);
            }
        }
        let tnode = self.package_node(target);
        let mut vals = self.expand_record_args(&tnode, &comps, vals, arg.span)?;
        let tname = self.lk.name_of(target);
        for (c, inner_iface) in &funcs {
            let Some(n) = named.iter().find(|n| *n.name.name == *c.name) else {
                continue;
            };
            let (inner, inner_vals) =
                self.model_func_arg(&n.value, *inner_iface, (&c.name, &tname), env, cx)?;
            fa.funcs.push((c.name.clone(), inner));
            vals.extend(inner_vals);
        }
        Ok((fa, vals))
    }

    /// A functional argument written in a function body: a function name, a partial
    /// application, or the enclosing function's own functional input (possibly partially
    /// applied further); the function and the values of its bound inputs, scalarized.
    pub(crate) fn body_func_arg(
        &self,
        arg: &ast::Expr,
        iface: ClassId,
        fi_callee: (&str, &str),
        fenv: &FnEnv,
    ) -> Res<(FuncArg, Vec<Expr>)> {
        let (function, named): (ast::Name, &[ast::NamedArg]) = match &arg.kind {
            ExprKind::Ref(c) if c.parts.iter().all(|p| p.subscripts.is_empty()) => {
                (cref_to_name(c), &[])
            }
            ExprKind::PartialApplication { function, args } => (function.clone(), args),
            _ => return err(arg.span, not_a_function(fi_callee)),
        };
        // The enclosing function's functional input: its function, with the inputs it
        // binds already passed on from the enclosing function's extra inputs.
        let own = match function.parts.as_slice() {
            [only] if !function.global => fenv
                .hoist
                .funargs
                .borrow()
                .get(only.as_str())
                .cloned()
                .map(|a| (only.as_str().to_string(), a)),
            _ => None,
        };
        let (target, already) = match &own {
            Some((_, a)) => (
                a.target,
                a.bound
                    .iter()
                    .chain(a.funcs.iter().map(|(g, _)| g))
                    .cloned()
                    .collect::<Vec<_>>(),
            ),
            None => {
                let id = self.lk.resolve_class_name(
                    (!function.global).then_some(fenv.env.scope),
                    &function,
                    false,
                );
                let Some(id) = id else {
                    return err(
                        function.span,
                        format!("unknown function `{}`", name_text(&function)),
                    );
                };
                (id, Vec::new())
            }
        };
        for n in named {
            if already.iter().any(|b| **b == *n.name.name) {
                return err(n.span, format!("input `{}` is bound already", n.name));
            }
        }
        let mut bound: Vec<(&ast::Ident, Span)> = named.iter().map(|n| (&n.name, n.span)).collect();
        let (tnode, tinputs, _) = self.interface(target);
        let kept: Vec<&Rc<Comp>> = tinputs
            .iter()
            .filter(|c| already.iter().any(|b| *b == c.name))
            .collect();
        let idents: Vec<ast::Ident> = kept
            .iter()
            .map(|c| ast::Ident::new(c.name.to_string(), arg.span))
            .collect();
        bound.extend(idents.iter().map(|i| (i, arg.span)));
        let Applied {
            arg: mut fa,
            values: comps,
            funcs,
        } = self.func_arg(iface, target, &bound, fi_callee, arg.span)?;
        let mut vals = Vec::new();
        for c in &comps {
            match named.iter().find(|n| *n.name.name == *c.name) {
                Some(n) => match self.fval(&n.value, fenv)? {
                    FVal::S(x) => vals.push(x),
                    FVal::R(r) => vals.extend(r.fields),
                },
                None => {
                    let Some((fi, _)) = &own else { continue };
                    vals.extend(self.bound_input_values(fi, &tnode, c)?);
                }
            }
        }
        // the functional inputs it binds: written here, or bound already by the enclosing
        // function's own argument (their values are that function's extra inputs)
        let tname = self.lk.name_of(target);
        for (c, inner_iface) in &funcs {
            match named.iter().find(|n| *n.name.name == *c.name) {
                Some(n) => {
                    let (inner, inner_vals) =
                        self.body_func_arg(&n.value, *inner_iface, (&c.name, &tname), fenv)?;
                    fa.funcs.push((c.name.clone(), inner));
                    vals.extend(inner_vals);
                }
                None => {
                    let Some((fi, a)) = &own else { continue };
                    let Some((_, inner)) = a.funcs.iter().find(|(g, _)| *g == c.name) else {
                        continue;
                    };
                    vals.extend(self.bound_values_of(&bound_name(fi, &c.name), inner)?);
                    fa.funcs.push((c.name.clone(), inner.clone()));
                }
            }
        }
        Ok((fa, vals))
    }

    /// The values of the bound input `c` of the function passed for the functional input
    /// `fi` of the function being translated: its extra inputs.
    fn bound_input_values(&self, fi: &str, tnode: &NodeRef, c: &Rc<Comp>) -> Res<Vec<Expr>> {
        Ok(match self.bound_input_value(fi, tnode, c)? {
            FVal::S(x) => vec![x],
            FVal::R(r) => r.fields,
        })
    }

    fn bound_input_value(&self, fi: &str, tnode: &NodeRef, c: &Rc<Comp>) -> Res<FVal> {
        let name = bound_name(fi, &c.name);
        if let Base::Class(rc) = self.comp_type(tnode, c)?.base {
            if self.is_record_class(rc) {
                let fields = self.record_field_list(rc, c.span)?;
                return Ok(FVal::R(RecExpr {
                    class: self.lk.follow_short_class(rc),
                    fields: crate::records::local_field_vars(&name, &fields),
                    rank: c.decl.subscripts.len() + c.type_subs.len(),
                }));
            }
        }
        Ok(FVal::S(Expr::Var {
            name,
            subscripts: Vec::new(),
        }))
    }

    /// `f(x)` in a specialization, `f` its functional input bound to `a`: a call of the
    /// passed function, arguments placed on its inputs not bound (by position: those are
    /// the partial function's inputs, in order), the bound ones from the extra inputs.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn call_func_arg(
        &self,
        fi: &str,
        a: &FuncArg,
        positional: &[ast::Expr],
        named: &[ast::NamedArg],
        fenv: &FnEnv,
        span: Span,
        end: Option<&Expr>,
    ) -> Res<FCall> {
        let (tnode, tinputs, _) = self.interface(a.target);
        let elems = self.elems(&tnode);
        let is_bound = |c: &Rc<Comp>| {
            a.bound.iter().any(|b| *b == c.name) || a.funcs.iter().any(|(g, _)| *g == c.name)
        };
        let free: Vec<usize> = (0..tinputs.len())
            .filter(|&k| !is_bound(&tinputs[k]))
            .collect();
        if positional.len() > free.len() {
            return err(
                span,
                format!("too many arguments: `{fi}` takes {} input(s)", free.len()),
            );
        }
        let mut slots: Vec<Option<FVal>> = vec![None; tinputs.len()];
        for (k, p) in positional.iter().enumerate() {
            slots[free[k]] = Some(self.fval_end(p, fenv, end)?);
        }
        for n in named {
            let k = tinputs.iter().position(|c| *c.name == *n.name.name);
            match k {
                Some(k) if !is_bound(&tinputs[k]) => {
                    slots[k] = Some(self.fval_end(&n.value, fenv, end)?);
                }
                _ => {
                    return err(n.name.span, format!("`{fi}` has no input `{}`", n.name));
                }
            }
        }
        for (k, c) in tinputs.iter().enumerate() {
            if a.bound.contains(&c.name) {
                slots[k] = Some(self.bound_input_value(fi, &tnode, c)?);
            }
        }
        if a.funcs.is_empty() {
            return self.finish_call(a.target, &tnode, &elems, &tinputs, slots, fenv, span);
        }
        // the passed function has functional inputs of its own, bound by the partial
        // application: call its specialization, their bound values from the extra inputs
        let mut kept = Vec::new();
        let mut kept_slots = Vec::new();
        for (c, slot) in tinputs.iter().zip(slots) {
            if !a.funcs.iter().any(|(g, _)| *g == c.name) {
                kept.push(c.clone());
                kept_slots.push(slot);
            }
        }
        let full = self.lk.name_of(a.target);
        let mut call = self.finish_call(a.target, &tnode, &elems, &kept, kept_slots, fenv, span)?;
        // `finish_call` registered the function itself, which is never called as such.
        self.functions.borrow_mut().remove(&full);
        let mut extra = Vec::new();
        for (g, inner) in &a.funcs {
            extra.extend(self.bound_values_of(&bound_name(fi, g), inner)?);
        }
        let name = self.specialization(a.target, a.funcs.clone());
        match &mut call.call {
            Expr::Call { func, args } => {
                *func = name;
                args.extend(extra);
            }
            _ => return err(span, format!("unexpected call of `{full}`")),
        }
        Ok(call)
    }

    /// A call (in a function body) of `id`, whose inputs `functional` (by position among
    /// `inputs`, with their partial function types) are functional: the arguments given
    /// for them, or their defaults, become a specialization.
    pub(crate) fn body_specialization(
        &self,
        id: ClassId,
        inputs: &[Rc<Comp>],
        functional: &[(usize, ClassId)],
        given: &[Option<&ast::Expr>],
        fenv: &FnEnv,
        span: Span,
    ) -> Res<Specialized<Expr>> {
        let callee = self.lk.name_of(id);
        let mut args = Vec::new();
        let mut extra = Vec::new();
        for &(k, iface) in functional {
            let c = &inputs[k];
            let (fa, vals) = match given[k] {
                Some(e) => self.body_func_arg(e, iface, (&c.name, &callee), fenv)?,
                None => {
                    let Some(b) = &c.mods.binding else {
                        return err(
                            span,
                            format!("missing argument `{}` in call of `{callee}`", c.name),
                        );
                    };
                    let denv = FnEnv {
                        env: b.env.clone(),
                        locals: Default::default(),
                        hoist: fenv.hoist.clone(),
                    };
                    self.body_func_arg(&b.expr, iface, (&c.name, &callee), &denv)?
                }
            };
            args.push((c.name.clone(), fa));
            extra.extend(vals);
        }
        Ok(Specialized {
            name: self.specialization(id, args),
            extra,
        })
    }

    /// The same for a call written in a model.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn model_specialization(
        &self,
        id: ClassId,
        inputs: &[Rc<Comp>],
        functional: &[(usize, ClassId)],
        given: &[Option<&ast::Expr>],
        env: &Env,
        cx: &mut crate::expand::Cx,
        span: Span,
    ) -> Res<Specialized<Val>> {
        let callee = self.lk.name_of(id);
        let mut args = Vec::new();
        let mut extra = Vec::new();
        for &(k, iface) in functional {
            let c = &inputs[k];
            let (fa, vals) = match given[k] {
                Some(e) => self.model_func_arg(e, iface, (&c.name, &callee), env, cx)?,
                None => {
                    let Some(b) = &c.mods.binding else {
                        return err(
                            span,
                            format!("missing argument `{}` in call of `{callee}`", c.name),
                        );
                    };
                    self.model_func_arg(&b.expr, iface, (&c.name, &callee), &b.env, cx)?
                }
            };
            args.push((c.name.clone(), fa));
            extra.extend(vals);
        }
        Ok(Specialized {
            name: self.specialization(id, args),
            extra,
        })
    }
}

fn not_a_function((fi, callee): (&str, &str)) -> String {
    format!(
        "the functional input `{fi}` of `{callee}` takes a function name or a partial application `function f(x = ...)`"
    )
}

fn name_text(n: &ast::Name) -> String {
    let parts: Vec<&str> = n.parts.iter().map(|p| p.as_str()).collect();
    format!("{}{}", if n.global { "." } else { "" }, parts.join("."))
}
