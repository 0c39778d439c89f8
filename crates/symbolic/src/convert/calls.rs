//! Function calls: inlining of functions into expressions and equations (single-output
//! expression bodies, tuple and array results with their asserts), hidden variables for
//! the outputs of multi-output calls used in expressions, and the output variables of a
//! tuple equation `(a, b) = f(x)`.

use super::algorithms::expr_names;
use super::value_type;
use super::Conv;
use crate::ir::{ExprId, Node, VarIx};
use crate::model::{Effect, EqBody, SEq, SVar, VKind};
use crate::program::ValueType;
use moss_frontend::flat::{self, Origin, Statement};
use rustc_hash::FxHashMap as HashMap;

/// The expression of a function `output := expr` (one scalar output, scalar inputs, no
/// locals) whose expression reads only the inputs.
fn single_output_expression(f: &flat::Function) -> Option<&flat::Expr> {
    let flat::FunctionBody::Algorithm(stmts) = &f.body else {
        return None;
    };
    if f.outputs.len() != 1
        || !f.locals.is_empty()
        || !f.outputs[0].dims.is_empty()
        || f.inputs.iter().any(|i| !i.dims.is_empty())
        || f.is_impure
    {
        return None;
    }
    let [Statement::Assign { target, value, .. }] = stmts.as_slice() else {
        return None;
    };
    match target {
        flat::Expr::Var { name, subscripts }
            if subscripts.is_empty() && *name == f.outputs[0].name => {}
        _ => return None,
    }
    let mut names = Vec::new();
    expr_names(value, &mut names);
    if !names.iter().all(|n| f.inputs.iter().any(|i| &i.name == n)) {
        return None;
    }
    if contains_subscripts(value) {
        return None;
    }
    Some(value)
}

fn contains_subscripts(e: &flat::Expr) -> bool {
    use flat::Expr as E;
    match e {
        E::Var { subscripts, .. } => !subscripts.is_empty(),
        E::Unary { arg, .. } => contains_subscripts(arg),
        E::Binary { lhs, rhs, .. } => contains_subscripts(lhs) || contains_subscripts(rhs),
        E::Call { args, .. } => args.iter().any(contains_subscripts),
        E::If { branches, else_ } => {
            branches
                .iter()
                .any(|(c, v)| contains_subscripts(c) || contains_subscripts(v))
                || contains_subscripts(else_)
        }
        E::Array(items) => items.iter().any(contains_subscripts),
        E::Range { .. } | E::Tuple(_) | E::CallOutput { .. } => true,
        _ => false,
    }
}

/// Element names of an array target (nested for matrices), in row-major order; `None` for
/// an element that is not a variable.
fn flatten_array_targets(items: &[flat::Expr], out: &mut Vec<Option<String>>) {
    for it in items {
        match it {
            flat::Expr::Var { name, .. } => out.push(Some(name.clone())),
            flat::Expr::Array(inner) => flatten_array_targets(inner, out),
            _ => out.push(None),
        }
    }
}

impl<'a> Conv<'a> {
    /// Inline a call of a function whose body is the single statement `output := expr` over
    /// scalar inputs (e.g. `Modelica.Math.sin`): the expression is converted with the
    /// inputs bound to the arguments, so differentiation and solving see through it. As in
    /// a function body, relations of the inlined expression do not generate events.
    pub(super) fn inline_call(
        &mut self,
        func: &str,
        a: &[ExprId],
        o: &Origin,
        no_event: bool,
    ) -> Option<ExprId> {
        const MAX_INLINE_DEPTH: usize = 16;
        if self.env.len() >= MAX_INLINE_DEPTH {
            return None;
        }
        let f = self.flat.functions.get(func)?;
        let body = single_output_expression(f)?;
        if f.inputs.len() != a.len() {
            return None;
        }
        let env: HashMap<String, ExprId> = f
            .inputs
            .iter()
            .zip(a)
            .map(|(i, &e)| (i.name.clone(), e))
            .collect();
        self.env.push(env);
        // relations inside functions never generate events
        let _ = no_event;
        let e = self.expr(body, o, true);
        self.env.pop();
        Some(e)
    }

    /// Output `index` of a call of a known multi-output function, as a hidden variable
    /// computed by a `(o1, o2, ...) = f(args)` unit shared by all uses of the same call.
    pub(super) fn call_output_var(&mut self, c: ExprId, index: usize, o: &Origin) -> Option<VarIx> {
        if let Some(vs) = self.call_units.get(&c) {
            return vs.get(index).copied();
        }
        let Node::Call(func, args) = self.m.arena.node(c).clone() else {
            return None;
        };
        let f = self.flat.functions.get(&*func)?;
        if index >= f.outputs.len() || f.outputs.iter().any(|out| !out.dims.is_empty()) {
            return None;
        }
        let k = self.call_units.len() + 1;
        let mut vars = Vec::new();
        for out in &f.outputs {
            let ty = value_type(&out.ty);
            let kind = if ty == ValueType::Real {
                VKind::Continuous
            } else {
                VKind::Discrete
            };
            let mut sv = SVar::new(format!("$call{k}.{}", out.name), kind, ty);
            sv.hidden = true;
            sv.protected_from_alias = true;
            sv.origin = o.clone();
            sv.description = format!("output {} of {}", out.name, func);
            vars.push(self.m.add_var(sv));
        }
        self.helper_eqs.push(SEq::new(
            EqBody::Call {
                outputs: vars.iter().map(|&v| Some(v)).collect(),
                func: func.to_string(),
                args: args.to_vec(),
            },
            o.clone(),
        ));
        self.call_units.insert(c, vars.clone());
        vars.get(index).copied()
    }

    /// `(a, b) = f(x)` with `f` inlined: one equation per output (per element for arrays),
    /// so the outputs need not be computed by the call (as `v = p.v - n.v` of complex
    /// numbers, whose `v` other equations determine). False (nothing emitted) when `f` is not
    /// inlinable or the targets do not match the outputs' shapes.
    pub(super) fn inlined_tuple(
        &mut self,
        targets: &[Option<flat::Expr>],
        func: &str,
        args: &[ExprId],
        o: &Origin,
        out: &mut Vec<SEq>,
    ) -> bool {
        use crate::array_ops::is_array;
        if self.m.arena.fder.contains_key(func) {
            return false;
        }
        let Some((values, asserts)) =
            crate::inline::inline_outputs(&mut self.m.arena, &self.flat.functions, func, args)
        else {
            return false;
        };
        let fits = targets.len() <= values.len()
            && targets.iter().zip(&values).all(|(t, &v)| match t {
                Some(flat::Expr::Array(_)) => is_array(&self.m.arena, v),
                Some(_) => !is_array(&self.m.arena, v),
                None => true,
            });
        if !fits {
            return false;
        }
        self.push_asserts(asserts, o, out);
        for (t, v) in targets.iter().zip(values) {
            match t {
                Some(flat::Expr::Array(items)) => self.equal_elements(items, v, o, out),
                Some(t) => {
                    let l = self.expr(t, o, false);
                    out.push(SEq::new(EqBody::Eq { lhs: l, rhs: v }, o.clone()));
                }
                None => {}
            }
        }
        true
    }

    /// Asserts of an inlined function body, as asserts of the model.
    fn push_asserts(
        &mut self,
        asserts: Vec<crate::inline::InlinedAssert>,
        o: &Origin,
        out: &mut Vec<SEq>,
    ) {
        for a in asserts {
            let effect = Effect::Assert {
                cond: a.cond,
                msg: a.msg,
                level: a.level,
            };
            out.push(SEq::new(EqBody::Effect(effect), o.clone()));
        }
    }

    /// Output `index` of the call `c` with the function inlined (an array literal for an
    /// array output); only for bodies without asserts (the call may be used in several
    /// places).
    pub(super) fn inlined_call_output(&mut self, c: ExprId, index: usize) -> Option<ExprId> {
        let Node::Call(func, args) = self.m.arena.node(c).clone() else {
            return None;
        };
        if self.m.arena.fder.contains_key(&*func) {
            return None;
        }
        let (values, asserts) =
            crate::inline::inline_outputs(&mut self.m.arena, &self.flat.functions, &func, &args)?;
        if !asserts.is_empty() {
            return None;
        }
        // an array output is only used whole, as the argument of another call
        values.get(index).copied()
    }

    /// The array value of `func(args)` with the function inlined, unless the function keeps
    /// its calls for a `derivative` annotation (index reduction differentiates those).
    /// The asserts of the body become asserts of the model.
    pub(super) fn inline_array_value(
        &mut self,
        func: &str,
        args: &[ExprId],
        o: &Origin,
        out: &mut Vec<SEq>,
    ) -> Option<ExprId> {
        if self.m.arena.fder.contains_key(func) {
            return None;
        }
        let (value, asserts) =
            crate::inline::inline_array_call(&mut self.m.arena, &self.flat.functions, func, args)?;
        self.push_asserts(asserts, o, out);
        Some(value)
    }

    /// The variables a tuple `(t1, t2, ...) = f(...)` assigns, in the order of the function's
    /// outputs flattened element by element (the call unit's convention): a scalar target is
    /// one variable, an array target `{x[1], x[2]}` its elements, a skipped output as many
    /// `None` as it has elements (its size must then be known from the declaration).
    pub(super) fn tuple_outputs(
        &mut self,
        func: &str,
        targets: &[Option<flat::Expr>],
        o: &Origin,
    ) -> Option<Vec<Option<VarIx>>> {
        use flat::Expr as E;
        let mut outputs = Vec::new();
        for (k, t) in targets.iter().enumerate() {
            match t {
                Some(E::Var { name, .. }) => outputs.push(self.lookup(name, o)),
                Some(E::Array(items)) => {
                    let mut elems = Vec::new();
                    flatten_array_targets(items, &mut elems);
                    for name in elems {
                        outputs.push(name.and_then(|n| self.lookup(&n, o)));
                    }
                }
                Some(_) => outputs.push(None),
                None => {
                    let size = self.skipped_output_size(func, k);
                    let Some(size) = size else {
                        self.err(
                            o,
                            format!("output {} of `{func}` is skipped, but its size is not known at translation time", k + 1),
                            "assign the output to a variable",
                        );
                        return None;
                    };
                    outputs.extend(std::iter::repeat_n(None, size));
                }
            }
        }
        Some(outputs)
    }

    /// Number of scalar elements of output `k` of a function, from constant dimensions.
    fn skipped_output_size(&self, func: &str, k: usize) -> Option<usize> {
        let Some(f) = self.flat.functions.get(func) else {
            return Some(1);
        };
        let out = f.outputs.get(k)?;
        let mut size = 1usize;
        for d in &out.dims {
            match d {
                Some(flat::Expr::Integer(n)) if *n >= 0 => size = size.saturating_mul(*n as usize),
                _ => return None,
            }
        }
        Some(size)
    }
}
