//! Expressions: conversion of flat expressions into the arena, with constants folded,
//! relations marked as event-generating or not (the event policy of the module doc), event
//! operators (`der`, `pre`, `edge`, `change`, `sample`, `noEvent`, `smooth`, `semiLinear`)
//! rewritten, and branches with derivatives chosen at translation time.

use super::Conv;
use crate::ir::{ExprId, Node, Rel, VarIx};
use crate::model::VKind;
use moss_frontend::flat::{self, BinaryOp, Origin, ScalarType, UnaryOp};
use rustc_hash::FxHashMap as HashMap;

/// Does a (flat) expression contain `der(...)`?
pub(super) fn expr_contains_der(e: &flat::Expr) -> bool {
    let mut found = false;
    moss_frontend::walk::visit(e, &mut |y| {
        found |= matches!(y, flat::Expr::Call { func, .. } if func == "der");
    });
    found
}

impl<'a> Conv<'a> {
    /// Convert an expression. `no_event`: inside `noEvent`/`smooth`.
    pub(super) fn expr(&mut self, e: &flat::Expr, o: &Origin, no_event: bool) -> ExprId {
        use flat::Expr as E;
        match e {
            E::Real(v) => self.m.arena.num(*v),
            E::Integer(v) => self.m.arena.num(*v as f64),
            E::Boolean(b) => self.m.arena.num(if *b { 1.0 } else { 0.0 }),
            E::String(s) => self.m.arena.intern(Node::Str(s.as_str().into())),
            E::Enum { index, .. } => self.m.arena.num(*index as f64),
            E::Var { name, .. } => {
                if let Some(&e) = self.env.last().and_then(|env| env.get(name)) {
                    return e;
                }
                let Some(v) = self.lookup(name, o) else {
                    return self.m.arena.zero();
                };
                self.var_ref(v, o)
            }
            E::Time => self.m.arena.intern(Node::Time),
            E::Unary { op, arg } => {
                let a = self.expr(arg, o, no_event);
                match op {
                    UnaryOp::Neg => self.m.arena.neg(a),
                    UnaryOp::Not => self.m.arena.not(a),
                }
            }
            E::Binary { op, lhs, rhs } => {
                let a = self.expr(lhs, o, no_event);
                let b = self.expr(rhs, o, no_event);
                self.binary(*op, a, b, no_event)
            }
            E::Call { func, args } => self.call(func, args, o, no_event),
            E::If { branches, else_ } => {
                if let Some(chosen) = self.structural_branch(branches, else_, o) {
                    return self.expr(chosen, o, no_event);
                }
                let mut acc = self.expr(else_, o, no_event);
                for (c, v) in branches.iter().rev() {
                    let c = self.expr(c, o, no_event);
                    let v = self.expr(v, o, no_event);
                    acc = self.m.arena.if_(c, v, acc);
                }
                acc
            }
            E::Array(items) => {
                let items: Vec<ExprId> = items.iter().map(|x| self.expr(x, o, no_event)).collect();
                self.m.arena.intern(Node::Array(items.into_boxed_slice()))
            }
            E::CallOutput { call, index } => {
                let c = self.expr(call, o, no_event);
                if let Some(v) = self.inlined_call_output(c, *index) {
                    return v;
                }
                // A call of parameters only (a record parameter bound to a function, one
                // binding per field) is read where the parameters are computed: a hidden
                // variable would be solved with the equations, after the parameter blocks
                // that read it, which would see it still zero.
                if self.m.is_parameter_expr(c) {
                    return self.m.arena.intern(Node::CallOutput(c, *index as u32));
                }
                match self.call_output_var(c, *index, o) {
                    Some(v) => self.m.arena.var(v),
                    None => self.m.arena.intern(Node::CallOutput(c, *index as u32)),
                }
            }
            E::Range { .. } | E::Tuple(_) => {
                self.err(
                    o,
                    "a range or output list cannot appear in a model equation here".into(),
                    "",
                );
                self.m.arena.zero()
            }
        }
    }

    /// The branch of an if-expression whose branches contain derivatives, when its
    /// conditions are parameter expressions (see [`Conv::structural_condition`]). Only the
    /// chosen branch is converted, so the others create no derivative variables.
    fn structural_branch<'e>(
        &mut self,
        branches: &'e [(flat::Expr, flat::Expr)],
        else_: &'e flat::Expr,
        o: &Origin,
    ) -> Option<&'e flat::Expr> {
        if !branches.iter().any(|(_, v)| expr_contains_der(v)) && !expr_contains_der(else_) {
            return None;
        }
        for (c, v) in branches {
            let c = self.expr(c, o, false);
            let c = self.structural_condition(c);
            match self.m.arena.as_const(c) {
                Some(0.0) => continue,
                Some(_) => return Some(v),
                None => return None,
            }
        }
        Some(else_)
    }

    /// A condition that selects between branches with different derivatives decides the
    /// structure of the model (which variables are states), so it must be known at
    /// translation time: a condition on parameters is evaluated from their bindings (as for
    /// parameters declared with `Evaluate=true`, e.g. `use_fder` of the adaptors). Other
    /// conditions are returned unchanged.
    pub(super) fn structural_condition(&mut self, c: ExprId) -> ExprId {
        if self.m.arena.as_const(c).is_some() {
            return c;
        }
        match self.parameter_value(c) {
            Some(x) => self.m.arena.num(x),
            None => c,
        }
    }

    /// The value of an expression of parameters and constants, from their bindings.
    fn parameter_value(&mut self, e: ExprId) -> Option<f64> {
        let mut cur = e;
        for _ in 0..32 {
            if let Some(x) = self.m.arena.as_const(cur) {
                return Some(x);
            }
            let mut vs = Vec::new();
            self.m.arena.vars_of(cur, false, &mut vs);
            let all_bound = vs.iter().all(|&v| {
                let sv = &self.m.vars[v as usize];
                matches!(sv.kind, VKind::Parameter | VKind::Constant)
                    && sv.fixed != Some(false)
                    && sv.binding.is_some()
            });
            if !all_bound || vs.is_empty() {
                return None;
            }
            let vars = &self.m.vars;
            let mut memo = HashMap::default();
            cur = self.m.arena.substitute(
                cur,
                &mut |_, n| match n {
                    Node::Var(v) => vars[*v as usize].binding,
                    _ => None,
                },
                false,
                &mut memo,
            );
        }
        None
    }

    /// A variable reference: constants with literal values fold to numbers.
    fn var_ref(&mut self, v: VarIx, _o: &Origin) -> ExprId {
        let sv = &self.m.vars[v as usize];
        if sv.kind == VKind::Constant {
            if let Some(b) = sv.binding {
                if self.m.arena.as_const(b).is_some() {
                    return b;
                }
            }
        }
        self.m.arena.var(v)
    }

    fn binary(&mut self, op: BinaryOp, a: ExprId, b: ExprId, no_event: bool) -> ExprId {
        let ar = &mut self.m.arena;
        match op {
            BinaryOp::Add | BinaryOp::ElemAdd => ar.add(a, b),
            BinaryOp::Sub | BinaryOp::ElemSub => ar.sub(a, b),
            BinaryOp::Mul | BinaryOp::ElemMul => ar.mul(a, b),
            BinaryOp::Div | BinaryOp::ElemDiv => ar.div(a, b),
            BinaryOp::Pow | BinaryOp::ElemPow => ar.pow(a, b),
            BinaryOp::And => ar.and(a, b),
            BinaryOp::Or => ar.or(a, b),
            BinaryOp::Lt => self.relation(Rel::Lt, a, b, no_event),
            BinaryOp::Le => self.relation(Rel::Le, a, b, no_event),
            BinaryOp::Gt => self.relation(Rel::Gt, a, b, no_event),
            BinaryOp::Ge => self.relation(Rel::Ge, a, b, no_event),
            BinaryOp::Eq => self.relation(Rel::Eq, a, b, no_event),
            BinaryOp::Ne => self.relation(Rel::Ne, a, b, no_event),
        }
    }

    fn relation(&mut self, op: Rel, a: ExprId, b: ExprId, no_event: bool) -> ExprId {
        let event = !no_event && (self.is_continuous(a) || self.is_continuous(b));
        self.m.arena.rel(op, a, b, event)
    }

    /// Does `e` vary continuously in time (contains `time` or a continuous variable)?
    pub(super) fn is_continuous(&mut self, e: ExprId) -> bool {
        let vars = &self.m.vars;
        self.m.arena.any_node(e, &mut |n| match n {
            Node::Time => true,
            Node::Var(v) => matches!(vars[*v as usize].kind, VKind::Continuous | VKind::Input),
            _ => false,
        })
    }

    /// The literal names of an enumeration-typed variable reference.
    fn enumeration_literals(&self, e: &flat::Expr) -> Option<Vec<std::sync::Arc<str>>> {
        let flat::Expr::Var { name, subscripts } = e else {
            return None;
        };
        if !subscripts.is_empty() {
            return None;
        }
        let v = self.flat.variables.iter().find(|v| &v.name == name)?;
        match &v.ty {
            ScalarType::Enumeration { literals, .. } => Some(literals.clone()),
            _ => None,
        }
    }

    /// `String(e)` of an enumeration variable is its literal's name (spec 4.9.5.2); at run
    /// time a value is only its index, so the names are chosen by an if-expression over
    /// the indices. Options (`minimumLength`, `leftJustified`) pad the chosen name.
    fn enumeration_to_string(&mut self, args: &[flat::Expr], o: &Origin, no_event: bool) -> ExprId {
        let literals = self.enumeration_literals(&args[0]).unwrap_or_default();
        let e = self.expr(&args[0], o, true);
        let mut acc = self.m.arena.str("");
        for (i, name) in literals.iter().enumerate().rev() {
            let index = self.m.arena.num((i + 1) as f64);
            let is = self.m.arena.rel(Rel::Eq, e, index, false);
            let text = self.m.arena.str(name);
            acc = self.m.arena.if_(is, text, acc);
        }
        if args.len() == 1 {
            return acc;
        }
        let mut rest: Vec<ExprId> = vec![acc];
        rest.extend(args[1..].iter().map(|a| self.expr(a, o, no_event)));
        self.m.arena.call("String", rest)
    }

    fn call(&mut self, func: &str, args: &[flat::Expr], o: &Origin, no_event: bool) -> ExprId {
        let arity_ok = |n: usize| args.len() == n;
        match func {
            "der" if arity_ok(1) => {
                let a = self.expr(&args[0], o, no_event);
                if let Node::Var(v) = *self.m.arena.node(a) {
                    if self.m.vars[v as usize].kind == VKind::Continuous {
                        let d = self.m.der_var(v);
                        return self.m.arena.var(d);
                    }
                }
                match self.m.diff_time(a) {
                    Ok(d) => d,
                    Err(f) => {
                        self.no_derivative(&f, o);
                        self.m.arena.zero()
                    }
                }
            }
            "pre" if arity_ok(1) => {
                let a = self.expr(&args[0], o, no_event);
                self.pre_of(a, o)
            }
            "String" if self.enumeration_literals(&args[0]).is_some() => {
                self.enumeration_to_string(args, o, no_event)
            }
            "edge" if arity_ok(1) => {
                let a = self.expr(&args[0], o, no_event);
                let p = self.pre_of(a, o);
                let np = self.m.arena.not(p);
                self.m.arena.and(a, np)
            }
            "change" if arity_ok(1) => {
                let a = self.expr(&args[0], o, no_event);
                let p = self.pre_of(a, o);
                self.m.arena.rel(Rel::Ne, a, p, false)
            }
            "initial" => self.m.arena.intern(Node::Initial),
            "terminal" => self.m.arena.intern(Node::Terminal),
            "sample" if arity_ok(2) => {
                let s = self.expr(&args[0], o, true);
                let i = self.expr(&args[1], o, true);
                let id = self.m.samples.len() as u32;
                self.m.samples.push((s, i));
                self.m.arena.intern(Node::Sample(id))
            }
            "noEvent" if arity_ok(1) => self.expr(&args[0], o, true),
            "smooth" if arity_ok(2) => self.expr(&args[1], o, true),
            "semiLinear" if arity_ok(3) => {
                let x = self.expr(&args[0], o, no_event);
                let a = self.expr(&args[1], o, no_event);
                let b = self.expr(&args[2], o, no_event);
                let zero = self.m.arena.zero();
                // spec 3.7.4.1: `smooth(0, if x >= 0 then x*a else x*b)`, continuous in `x`,
                // so no event at `x = 0` (as for `smooth` above): at a flow reversal an event
                // would only stop the integration, and a flow that hovers around zero (a
                // stream port's mass flow at rest) makes it chatter.
                let c = self.relation(Rel::Ge, x, zero, true);
                let ax = self.m.arena.mul(a, x);
                let bx = self.m.arena.mul(b, x);
                self.m.arena.if_(c, ax, bx)
            }
            _ => {
                let a: Vec<ExprId> = args.iter().map(|x| self.expr(x, o, no_event)).collect();
                // a function with an `inverse` annotation stays a call, so that an equation
                // solved for one of its inputs can use the inverse (`solve`)
                if self.m.arena.finv.contains_key(func) {
                    return self.m.arena.call(func, a);
                }
                if let Some(e) = self.inline_call(func, &a, o, no_event) {
                    return e;
                }
                // functions with a `derivative` annotation keep their call through index
                // reduction and are inlined after it
                if !self.m.arena.fder.contains_key(func) {
                    if let Some(e) = crate::inline::inline_call(
                        &mut self.m.arena,
                        &self.flat.functions,
                        func,
                        &a,
                    ) {
                        return e;
                    }
                }
                if !no_event && crate::ir::STEP_FUNCTIONS.contains(&func) {
                    if let Some(e) = self.step_function_with_events(func, &a, o) {
                        return e;
                    }
                }
                self.m.arena.call(func, a)
            }
        }
    }

    fn pre_of(&mut self, a: ExprId, o: &Origin) -> ExprId {
        match *self.m.arena.node(a) {
            Node::Var(v) => self.m.arena.intern(Node::Pre(v)),
            Node::Const(_) => a,
            _ => {
                self.err(
                    o,
                    "`pre`, `edge` and `change` need a variable as argument".into(),
                    "introduce a variable for the expression and apply the operator to it",
                );
                a
            }
        }
    }

    fn no_derivative(&mut self, e: &crate::ir::DiffError, o: &Origin) {
        self.err(
            o,
            format!(
                "cannot differentiate this expression: {}",
                self.m.arena.explain(e)
            ),
            "add `annotation(derivative = ...)` to the function, or avoid `der` of its result",
        );
    }
}
