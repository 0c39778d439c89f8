//! Expressions: from AST to scalarized flat expressions ([`Val`]), resolving names
//! (components, package constants, enumeration literals, functions), expanding array
//! operations element by element, and evaluating parameter expressions when the structure
//! depends on them (`Cx::eval`).

use crate::ctx::{format_indices, Flattener};
use crate::flat::{BinaryOp as FB, Expr, UnaryOp as FU, BUILTINS};
use crate::fold;
use crate::inst::*;
use crate::loader::ClassId;
use moss_syntax::ast::{self, BinaryOp, ExprKind, FunctionArgs, UnaryOp};
use moss_syntax::Span;
use std::rc::Rc;
use std::sync::Arc;

/// A scalarized value: a scalar flat expression, an array of values, or a record.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    S(Expr),
    A(Vec<Val>),
    R(Vec<(Arc<str>, Val)>),
}

impl Val {
    pub fn shape(&self) -> Vec<usize> {
        match self {
            Val::A(items) => {
                let mut s = vec![items.len()];
                if let Some(f) = items.first() {
                    s.extend(f.shape());
                }
                s
            }
            _ => Vec::new(),
        }
    }

    /// Select element `path` (0-based indices), leaving the value unchanged where it is not
    /// an array (bindings with `each` semantics on scalars).
    pub fn index_path(&self, path: &[usize]) -> Val {
        let mut v = self.clone();
        for &i in path {
            v = match v {
                Val::A(mut items) if i < items.len() => items.swap_remove(i),
                other => other,
            };
        }
        v
    }

    /// All scalars in row-major order.
    pub fn flatten(&self, out: &mut Vec<Expr>) {
        match self {
            Val::S(e) => out.push(e.clone()),
            Val::A(items) => items.iter().for_each(|i| i.flatten(out)),
            Val::R(fields) => fields.iter().for_each(|(_, v)| v.flatten(out)),
        }
    }

    pub fn scalars(&self) -> Vec<Expr> {
        let mut v = Vec::new();
        self.flatten(&mut v);
        v
    }

    /// The value as one flat expression (arrays become array literals).
    pub fn to_expr(&self) -> Expr {
        match self {
            Val::S(e) => e.clone(),
            Val::A(items) => Expr::Array(items.iter().map(Val::to_expr).collect()),
            Val::R(fields) => Expr::Array(fields.iter().map(|(_, v)| v.to_expr()).collect()),
        }
    }

    pub fn map(&self, f: &mut dyn FnMut(Expr) -> Expr) -> Val {
        match self {
            Val::S(e) => Val::S(f(e.clone())),
            Val::A(items) => Val::A(items.iter().map(|i| i.map(f)).collect()),
            Val::R(fields) => Val::R(fields.iter().map(|(n, v)| (n.clone(), v.map(f))).collect()),
        }
    }

    pub fn scalar(&self) -> Option<&Expr> {
        match self {
            Val::S(e) => Some(e),
            _ => None,
        }
    }
}

/// Expansion context: local bindings (for-loop iterators, function inputs while evaluating
/// defaults) and whether parameters must be replaced by their values.
#[derive(Clone)]
pub struct Cx {
    pub locals: Vec<(Arc<str>, Val)>,
    pub eval: bool,
    /// Size of the dimension being subscripted, for `end`.
    pub end: Option<usize>,
    /// Inside an `if`/`when` branch: assertions there are not checked at translation time.
    pub guarded: bool,
    /// Inside a `when` statement (they cannot be nested).
    pub in_when: bool,
    /// Inside a loop (`break` allowed).
    pub in_loop: bool,
}

impl Cx {
    pub fn flat() -> Cx {
        Cx {
            locals: Vec::new(),
            eval: false,
            end: None,
            guarded: false,
            in_when: false,
            in_loop: false,
        }
    }
    pub fn eval() -> Cx {
        Cx {
            locals: Vec::new(),
            eval: true,
            end: None,
            guarded: false,
            in_when: false,
            in_loop: false,
        }
    }
    fn local(&self, name: &str) -> Option<&Val> {
        self.locals
            .iter()
            .rev()
            .find(|(n, _)| &**n == name)
            .map(|(_, v)| v)
    }
}

/// One subscript after evaluation: a single index or a list of indices (slice).
enum Sel {
    One(usize),
    Many(Vec<usize>),
    /// A subscript only known during simulation (`x[k]` with a discrete `k`): the element
    /// is selected by an if-expression over all indices.
    Dynamic(Expr, usize),
}

fn shape_err<T>(span: Span, what: &str) -> Res<T> {
    err(span, format!("array sizes do not match in {what}"))
}

impl<'a> Flattener<'a> {
    /// Evaluate an expression to literals (structural parameters).
    pub fn eval_expr(&self, e: &ast::Expr, env: &Env, cx: &mut Cx) -> Res<Val> {
        let was = cx.eval;
        cx.eval = true;
        let r = self.expand(e, env, cx);
        cx.eval = was;
        let v = r?;
        let mut bad = None;
        v.map(&mut |x| {
            if !fold::is_literal(&x) && bad.is_none() {
                bad = Some(x.clone());
            }
            x
        });
        if let Some(bad) = bad {
            let shown = crate::print::print_expr(&bad);
            return err(
                e.span,
                format!(
                    "`{}` cannot be evaluated at translation time",
                    moss_syntax::print_expr(e)
                ),
            )
            .map_err(|d| {
                // The part left unevaluated says which value is missing.
                let d = if shown.len() <= 300 {
                    d.with_note(format!("what is left of it: `{shown}`"))
                } else {
                    *d
                };
                Box::new(d.with_help(
                    "the model structure depends on it: use only parameters and constants with known values",
                ))
            });
        }
        Ok(v)
    }

    pub fn eval_int(&self, e: &ast::Expr, env: &Env, cx: &mut Cx) -> Res<i64> {
        match self.eval_expr(e, env, cx)? {
            Val::S(x) => {
                fold::as_i64(&x).map_or_else(|| err(e.span, "expected an Integer value"), Ok)
            }
            _ => err(e.span, "expected a scalar Integer value"),
        }
    }

    /// Expand an expression into a scalarized value.
    pub fn expand(&self, e: &ast::Expr, env: &Env, cx: &mut Cx) -> Res<Val> {
        let d = self.depth.get();
        if d > 300 {
            return err(
                e.span,
                "expression nesting too deep (recursive parameter bindings?)",
            );
        }
        self.depth.set(d + 1);
        let r = self.expand_inner(e, env, cx);
        self.depth.set(d);
        r
    }

    fn expand_inner(&self, e: &ast::Expr, env: &Env, cx: &mut Cx) -> Res<Val> {
        Ok(match &e.kind {
            ExprKind::Integer(i) => Val::S(Expr::Integer(*i)),
            ExprKind::Real { value, .. } => Val::S(Expr::Real(*value)),
            ExprKind::String(s) => Val::S(Expr::String(s.clone())),
            ExprKind::Bool(b) => Val::S(Expr::Boolean(*b)),
            ExprKind::End => match cx.end {
                Some(n) => Val::S(Expr::Integer(n as i64)),
                None => return err(e.span, "`end` is only allowed inside array subscripts"),
            },
            ExprKind::Break => return err(e.span, "`break` is not an expression here"),
            ExprKind::Ref(c) => self.expand_cref(c, env, cx)?,
            ExprKind::Call { function, args } => {
                self.expand_call(function, args, env, cx, e.span)?
            }
            ExprKind::PartialApplication { .. } => {
                return err(
                    e.span,
                    "a partial application `function f(...)` can only be passed to a functional input of a function",
                )
            }
            ExprKind::Unary { op, operand } => {
                let v = self.expand(operand, env, cx)?;
                match op {
                    UnaryOp::Plus | UnaryOp::ElemPlus => v,
                    UnaryOp::Neg | UnaryOp::ElemNeg if has_records(&v) => {
                        self.record_unary(v, env, cx, e.span)?
                    }
                    UnaryOp::Neg | UnaryOp::ElemNeg => v.map(&mut |x| fold::unary(FU::Neg, x)),
                    UnaryOp::Not => v.map(&mut |x| fold::unary(FU::Not, x)),
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                // Short-circuit on literal conditions so that guarded parameter expressions
                // (`n > 0 and x[n] > 0`) evaluate.
                let a = self.expand(lhs, env, cx)?;
                if let (BinaryOp::And, Val::S(Expr::Boolean(false)))
                | (BinaryOp::Or, Val::S(Expr::Boolean(true))) = (op, &a)
                {
                    return Ok(a);
                }
                let b = self.expand(rhs, env, cx)?;
                if matches!(a, Val::R(_))
                    || matches!(b, Val::R(_))
                    || has_records(&a)
                    || has_records(&b)
                {
                    return self.record_binary(*op, a, b, env, cx, e.span);
                }
                self.binary(*op, a, b, e.span)?
            }
            ExprKind::If {
                branches,
                else_branch,
            } => {
                let mut conds = Vec::new();
                for (c, v) in branches {
                    let mut cv = self.expand(c, env, cx)?;
                    if !matches!(cv, Val::S(Expr::Boolean(_)))
                        && self.branch_shapes_differ(branches, else_branch, env, cx)
                    {
                        // Branches of different sizes: the condition must be structural.
                        cv = self.eval_expr(c, env, &mut cx.clone())?;
                    }
                    match cv {
                        Val::S(Expr::Boolean(false)) => continue,
                        Val::S(Expr::Boolean(true)) if conds.is_empty() => {
                            return self.expand(v, env, cx)
                        }
                        Val::S(Expr::Boolean(true)) => {
                            let vv = self.expand(v, env, cx)?;
                            return self.if_vals(conds, vv, e.span);
                        }
                        Val::S(cond) => match self.expand(v, env, cx) {
                            Ok(vv) => conds.push((cond, vv)),
                            // A branch that cannot be built (`x[i + 1]` beyond the end in
                            // `if i < n then x[i + 1] else 0`) is fine when the condition,
                            // evaluated with the parameter values, never selects it.
                            Err(e) => match self.eval_expr(c, env, &mut cx.clone()) {
                                Ok(Val::S(Expr::Boolean(false))) => continue,
                                _ => return Err(e),
                            },
                        },
                        _ => {
                            return err(
                                c.span,
                                "the condition of an if-expression must be a scalar Boolean",
                            )
                        }
                    }
                }
                let ev = match self.expand(else_branch, env, cx) {
                    Ok(ev) => ev,
                    Err(e) => {
                        // Likewise an else branch that a condition known from the parameter
                        // values always overrides.
                        match self.branch_always_taken(branches, env, cx) {
                            Some(v) => return self.expand(v, env, cx),
                            None => return Err(e),
                        }
                    }
                };
                self.if_vals(conds, ev, e.span)?
            }
            ExprKind::Range { start, step, stop } => {
                let s = self.eval_scalar(start, env, cx)?;
                let t = self.eval_scalar(stop, env, cx)?;
                let st = match step {
                    Some(x) => Some(self.eval_scalar(x, env, cx)?),
                    None => None,
                };
                if let (Expr::Enum { ty, .. }, Expr::Enum { .. }) = (&s, &t) {
                    self.enum_range(ty, &s, &t)
                } else {
                    range_values(&s, st.as_ref(), &t, e.span)?
                }
            }
            ExprKind::Array(items) => {
                let mut out = Vec::new();
                for i in items {
                    out.push(self.expand(i, env, cx)?);
                }
                Val::A(out)
            }
            ExprKind::ArrayComprehension { body, indices } => {
                self.comprehension(body, indices, env, cx)?
            }
            ExprKind::Matrix(rows) => {
                let mut rvals = Vec::new();
                for r in rows {
                    let mut items = Vec::new();
                    for i in r {
                        items.push(self.expand(i, env, cx)?);
                    }
                    rvals.push(hcat(items, e.span)?);
                }
                vcat(rvals, e.span)?
            }
            ExprKind::Tuple(items) => {
                let mut out = Vec::new();
                for i in items.iter().flatten() {
                    out.push(self.expand(i, env, cx)?);
                }
                match out.len() {
                    1 => out.swap_remove(0),
                    _ => {
                        return err(
                            e.span,
                            "a tuple is only allowed on the left of a call equation",
                        )
                    }
                }
            }
        })
    }

    fn branch_shapes_differ(
        &self,
        branches: &[(ast::Expr, ast::Expr)],
        else_branch: &ast::Expr,
        env: &Env,
        cx: &mut Cx,
    ) -> bool {
        let Ok(e) = self.expand(else_branch, env, cx) else {
            return false;
        };
        let shape = e.shape();
        branches.iter().any(|(_, v)| {
            self.expand(v, env, cx)
                .map(|x| x.shape() != shape)
                .unwrap_or(false)
        })
    }

    /// The branch of an if-expression that the conditions, evaluated with the parameter
    /// values, select (the first whose condition is true, all earlier ones false).
    fn branch_always_taken<'e>(
        &self,
        branches: &'e [(ast::Expr, ast::Expr)],
        env: &Env,
        cx: &mut Cx,
    ) -> Option<&'e ast::Expr> {
        for (c, v) in branches {
            match self.eval_expr(c, env, &mut cx.clone()) {
                Ok(Val::S(Expr::Boolean(true))) => return Some(v),
                Ok(Val::S(Expr::Boolean(false))) => continue,
                _ => return None,
            }
        }
        None
    }

    /// `E.a : E.c` over an enumeration type.
    fn enum_range(&self, ty: &str, s: &Expr, t: &Expr) -> Val {
        let parts: Vec<&str> = ty.split('.').collect();
        let lits = self
            .lib()
            .lookup_qualified(&parts)
            .and_then(|c| self.resolve_type_class(&self.package_node(c), c).ok())
            .map(|rt| match rt.base {
                Base::Enum(_, l) => l,
                _ => Vec::new(),
            })
            .unwrap_or_default();
        let (a, b) = (fold::as_i64(s).unwrap_or(1), fold::as_i64(t).unwrap_or(0));
        Val::A(
            (a..=b)
                .filter_map(|i| {
                    lits.get(i as usize - 1).map(|l| {
                        Val::S(Expr::Enum {
                            ty: Arc::from(ty),
                            literal: l.clone(),
                            index: i as u32,
                        })
                    })
                })
                .collect(),
        )
    }

    fn eval_scalar(&self, e: &ast::Expr, env: &Env, cx: &mut Cx) -> Res<Expr> {
        match self.eval_expr(e, env, cx)? {
            Val::S(x) => Ok(x),
            _ => err(e.span, "expected a scalar"),
        }
    }

    fn if_vals(&self, conds: Vec<(Expr, Val)>, else_: Val, span: Span) -> Res<Val> {
        if conds.is_empty() {
            return Ok(else_);
        }
        match &else_ {
            Val::S(ev) => {
                let mut bs = Vec::new();
                for (c, v) in conds {
                    match v {
                        Val::S(x) => bs.push((c, x)),
                        _ => return shape_err(span, "the branches of an if-expression"),
                    }
                }
                Ok(Val::S(fold::if_expr(bs, ev.clone())))
            }
            Val::A(items) => {
                let mut out = Vec::new();
                for (k, item) in items.iter().enumerate() {
                    let mut sub = Vec::new();
                    for (c, v) in &conds {
                        match v {
                            Val::A(vi) if vi.len() == items.len() => {
                                sub.push((c.clone(), vi[k].clone()))
                            }
                            _ => return shape_err(span, "the branches of an if-expression"),
                        }
                    }
                    out.push(self.if_vals(sub, item.clone(), span)?);
                }
                Ok(Val::A(out))
            }
            Val::R(fields) => {
                let mut out = Vec::new();
                for (k, (n, item)) in fields.iter().enumerate() {
                    let mut sub = Vec::new();
                    for (c, v) in &conds {
                        match v {
                            Val::R(vi) if vi.len() == fields.len() => {
                                sub.push((c.clone(), vi[k].1.clone()))
                            }
                            _ => return shape_err(span, "the branches of an if-expression"),
                        }
                    }
                    out.push((n.clone(), self.if_vals(sub, item.clone(), span)?));
                }
                Ok(Val::R(out))
            }
        }
    }

    fn comprehension(
        &self,
        body: &ast::Expr,
        indices: &[ast::ForIndex],
        env: &Env,
        cx: &mut Cx,
    ) -> Res<Val> {
        let Some((first, rest)) = indices.split_first() else {
            return self.expand(body, env, cx);
        };
        let values = self.iterator_values_in(first, std::slice::from_ref(body), env, cx)?;
        let mut out = Vec::new();
        for v in values {
            cx.locals.push((first.name.name.clone(), v));
            let r = self.comprehension(body, rest, env, cx);
            cx.locals.pop();
            out.push(r?);
        }
        Ok(Val::A(out))
    }

    /// The values a `for` iterator takes.
    pub fn iterator_values(&self, idx: &ast::ForIndex, env: &Env, cx: &mut Cx) -> Res<Vec<Val>> {
        self.iterator_values_in(idx, &[], env, cx)
    }

    /// Values of a `for` iterator; without a range it is deduced from the subscripts it is
    /// used in within `body` (`for i loop x[i] = ...` iterates over `1:size(x, 1)`).
    pub fn iterator_values_in(
        &self,
        idx: &ast::ForIndex,
        body: &[ast::Expr],
        env: &Env,
        cx: &mut Cx,
    ) -> Res<Vec<Val>> {
        let deduced;
        let r = match &idx.range {
            Some(r) => r,
            None => match deduce_range(idx.name.as_str(), body) {
                Some((d, array, k)) => {
                    if let Some(values) = self.typed_dimension_values(&array, k, env) {
                        return Ok(values);
                    }
                    deduced = d;
                    &deduced
                }
                None => {
                    return err(
                        idx.span,
                        format!(
                        "the range of iterator `{}` must be given (it is not used as a subscript)",
                        idx.name
                    ),
                    )
                }
            },
        };
        let v = self.eval_expr(r, env, cx)?;
        match v {
            Val::A(items) => {
                crate::typecheck::structure::for_range_is_vector(&items, r.span)?;
                Ok(items)
            }
            _ => err(r.span, "a for range must be an array (e.g. `1:n`)"),
        }
    }

    /// The values of dimension `k` of a component declared with a Boolean or enumeration
    /// dimension (`Real x[E]`), which an implicit iterator (`for i loop x[i] ...`) runs
    /// over: `false, true` or the literals, not `1:size(x, k)` (spec 10.1, 11.2.2.2).
    fn typed_dimension_values(
        &self,
        array: &ast::ComponentRef,
        k: usize,
        env: &Env,
    ) -> Option<Vec<Val>> {
        let [part] = array.parts.as_slice() else {
            return None;
        };
        let comp = self.find_comp(&env.node, part.name.as_str())?;
        if !comp.type_subs.is_empty() {
            return None;
        }
        let ast::Subscript::Expr(e) = comp.decl.subscripts.get(k)? else {
            return None;
        };
        if !matches!(e.kind, ExprKind::Ref(_)) {
            return None;
        }
        // A type name as a value is the array of its values; an Integer size is a scalar.
        match self.eval_expr(e, &comp.env, &mut Cx::eval()).ok()? {
            Val::A(items) => Some(items),
            _ => None,
        }
    }

    // -----------------------------------------------------------------------------------
    // Operators
    // -----------------------------------------------------------------------------------

    /// A binary operator with record operands: element-wise over arrays, then the
    /// operator function of the record class.
    fn record_binary(
        &self,
        op: BinaryOp,
        a: Val,
        b: Val,
        env: &Env,
        cx: &mut Cx,
        span: Span,
    ) -> Res<Val> {
        let Some(name) = crate::operators::operator_name(op) else {
            return err(span, "operator not defined for records");
        };
        match (&a, &b) {
            (Val::A(xs), Val::A(ys)) if xs.len() == ys.len() && !matches!(op, BinaryOp::Mul) => {
                let mut out = Vec::new();
                for (x, y) in xs.iter().zip(ys) {
                    out.push(self.record_binary(op, x.clone(), y.clone(), env, cx, span)?);
                }
                Ok(Val::A(out))
            }
            (Val::A(xs), Val::A(ys))
                if matches!(op, BinaryOp::Mul)
                    && xs.len() == ys.len()
                    && !xs.is_empty()
                    && xs.iter().chain(ys).all(|v| matches!(v, Val::R(_))) =>
            {
                // vector * vector of records: the scalar product, with the record's `'*'`
                // and `'+'` (spec 14.4)
                let mut acc =
                    self.record_binary(op, xs[0].clone(), ys[0].clone(), env, cx, span)?;
                for (x, y) in xs.iter().zip(ys).skip(1) {
                    let term = self.record_binary(op, x.clone(), y.clone(), env, cx, span)?;
                    acc = self.record_binary(BinaryOp::Add, acc, term, env, cx, span)?;
                }
                Ok(acc)
            }
            (Val::A(xs), _) if !matches!(b, Val::A(_)) => {
                let mut out = Vec::new();
                for x in xs {
                    out.push(self.record_binary(op, x.clone(), b.clone(), env, cx, span)?);
                }
                Ok(Val::A(out))
            }
            (_, Val::A(ys)) if !matches!(a, Val::A(_)) => {
                let mut out = Vec::new();
                for y in ys {
                    out.push(self.record_binary(op, a.clone(), y.clone(), env, cx, span)?);
                }
                Ok(Val::A(out))
            }
            _ => self.call_operator(name, vec![a, b], env, cx, span),
        }
    }

    fn record_unary(&self, v: Val, env: &Env, cx: &mut Cx, span: Span) -> Res<Val> {
        match v {
            Val::A(items) => {
                let mut out = Vec::new();
                for x in items {
                    out.push(self.record_unary(x, env, cx, span)?);
                }
                Ok(Val::A(out))
            }
            other => self.call_operator("'-'", vec![other], env, cx, span),
        }
    }

    /// Apply function `f` to argument values (operator functions).
    pub fn apply_values(
        &self,
        f: ClassId,
        args: Vec<Val>,
        env: &Env,
        cx: &mut Cx,
        span: Span,
    ) -> Res<Val> {
        let fnode = self.package_node(f);
        let elems = self.elems(&fnode);
        let inputs: Vec<Rc<Comp>> = elems
            .comps
            .iter()
            .filter(|c| self.comp_causality(&fnode, c) == Some(ast::Causality::Input))
            .cloned()
            .collect();
        let mut fcx = Cx::flat();
        fcx.eval = cx.eval;
        let mut args = args;
        // Defaults of the inputs not given.
        for c in inputs.iter().skip(args.len()) {
            fcx.locals = inputs
                .iter()
                .map(|c| c.name.clone())
                .zip(args.iter().cloned())
                .collect();
            let Some(b) = &c.mods.binding else {
                return err(
                    span,
                    format!(
                        "missing argument `{}` in call of `{}`",
                        c.name,
                        self.lk.name_of(f)
                    ),
                );
            };
            args.push(self.expand(&b.expr, &b.env, &mut fcx)?);
        }
        fcx.locals = inputs
            .iter()
            .map(|c| c.name.clone())
            .zip(args.iter().cloned())
            .collect();
        let call = CallSite {
            id: f,
            object_class: f,
            ext_object: false,
            is_record: false,
            fnode: &fnode,
            elems: &elems,
            inputs: &inputs,
            positional: &[],
            named: &[],
            specialized: None,
        };
        self.apply_function(&call, args, fcx, env, cx, span)
    }

    fn binary(&self, op: BinaryOp, a: Val, b: Val, span: Span) -> Res<Val> {
        let fop = map_op(op);
        if op == BinaryOp::Pow {
            crate::typecheck::structure::array_power_exponent(&a, &b, span)?;
            if a.shape().len() == 2 {
                return self.matrix_power(a, b, span);
            }
        }
        match op {
            BinaryOp::Mul => self.mul(a, b, span),
            BinaryOp::Div | BinaryOp::Pow if matches!(b, Val::S(_)) => {
                Ok(elementwise(&a, &b, fop, span)?)
            }
            BinaryOp::Div | BinaryOp::Pow => err(span, "the right operand must be a scalar"),
            _ => elementwise(&a, &b, fop, span),
        }
    }

    /// `A ^ k` of a square matrix (spec 10.6.5): the identity for `k = 0`, else `k - 1`
    /// matrix products. The exponent must be known at translation time, since it decides
    /// the structure of the expression.
    fn matrix_power(&self, a: Val, b: Val, span: Span) -> Res<Val> {
        let shape = a.shape();
        if shape[0] != shape[1] {
            return err(
                span,
                format!(
                    "`A ^ k` needs a square matrix, but `A` has size [{}, {}]",
                    shape[0], shape[1]
                ),
            )
            .map_err(|d| Box::new(d.with_help("for element-wise powers write `A .^ k`")));
        }
        let k = match &b {
            Val::S(Expr::Integer(k)) if *k >= 0 => *k,
            Val::S(e) => {
                return err(
                    span,
                    format!(
                        "the exponent of a matrix power `A ^ k` must be a non-negative Integer \
                         known at translation time, not `{}`",
                        crate::print::print_expr(e)
                    ),
                )
            }
            _ => return err(span, "the exponent of a matrix power must be a scalar"),
        };
        let n = shape[0];
        if k == 0 {
            let row = |i: usize| {
                Val::A(
                    (0..n)
                        .map(|j| Val::S(Expr::Integer((i == j) as i64)))
                        .collect(),
                )
            };
            return Ok(Val::A((0..n).map(row).collect()));
        }
        let mut out = a.clone();
        for _ in 1..k {
            out = self.mul(out, a.clone(), span)?;
        }
        Ok(out)
    }

    /// A flat binary operator on values (used by the function interpreter).
    pub fn binary_flat(&self, op: FB, a: Val, b: Val, span: Span) -> Res<Val> {
        match op {
            FB::Mul => self.mul(a, b, span),
            FB::ElemAdd => elementwise(&a, &b, FB::Add, span),
            FB::ElemSub => elementwise(&a, &b, FB::Sub, span),
            FB::ElemMul => elementwise(&a, &b, FB::Mul, span),
            FB::ElemDiv => elementwise(&a, &b, FB::Div, span),
            FB::ElemPow => elementwise(&a, &b, FB::Pow, span),
            op => elementwise(&a, &b, op, span),
        }
    }

    fn mul(&self, a: Val, b: Val, span: Span) -> Res<Val> {
        match (a.shape().len(), b.shape().len()) {
            (0, _) | (_, 0) => elementwise(&a, &b, FB::Mul, span),
            (1, 1) => {
                let (x, y) = (a.scalars(), b.scalars());
                if x.len() != y.len() {
                    return shape_err(span, "a scalar product");
                }
                Ok(Val::S(dot(x, y)))
            }
            (2, 1) => {
                let Val::A(rows) = a else {
                    unreachable_val(span)?
                };
                let y = b.scalars();
                let mut out = Vec::new();
                for r in rows {
                    let x = r.scalars();
                    if x.len() != y.len() {
                        return shape_err(span, "a matrix-vector product");
                    }
                    out.push(Val::S(dot(x, y.clone())));
                }
                Ok(Val::A(out))
            }
            (1, 2) => {
                let x = a.scalars();
                let cols = transpose(&b, span)?;
                let mut out = Vec::new();
                for c in cols {
                    if c.len() != x.len() {
                        return shape_err(span, "a vector-matrix product");
                    }
                    out.push(Val::S(dot(x.clone(), c)));
                }
                Ok(Val::A(out))
            }
            (2, 2) => {
                let Val::A(rows) = a else {
                    unreachable_val(span)?
                };
                let cols = transpose(&b, span)?;
                let mut out = Vec::new();
                for r in rows {
                    let x = r.scalars();
                    let mut row = Vec::new();
                    for c in &cols {
                        if c.len() != x.len() {
                            return shape_err(span, "a matrix product");
                        }
                        row.push(Val::S(dot(x.clone(), c.clone())));
                    }
                    out.push(Val::A(row));
                }
                Ok(Val::A(out))
            }
            _ => err(
                span,
                "multiplication of arrays with more than two dimensions",
            ),
        }
    }

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
            if let Some(v) = cx.local(first).cloned() {
                let v = self.apply_subscripts(v, &c.parts[0].subscripts, env, cx)?;
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
                let r = Resolve {
                    constant: false,
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
    fn visible_from_text(&self, env: &Env, name: &str) -> bool {
        env.scope == env.node.class
            || matches!(self.lk.member(env.scope, name), Some(Found::Comp { .. }))
    }

    /// The built-in variable `time` exists in models and blocks, not in the text of a record
    /// or connector class (spec 3.6.7): their instances are data, which the enclosing
    /// model fills in.
    fn time_allowed_in(&self, scope: ClassId, span: Span) -> Res<()> {
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

    fn record_fields(&self, mut v: Val, parts: &[ast::RefPart], span: Span) -> Res<Val> {
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
    fn resolve_global(&self, c: &ast::ComponentRef, env: &Env, cx: &mut Cx) -> Res<Val> {
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
    fn check_outer_member(&self, node: &NodeRef, comp: &Rc<Comp>, part: &ast::RefPart) -> Res<()> {
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
    fn resolve_in_node_as(
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
    fn record_value(
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

    fn build_selected(
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
    fn typed_dimensions(&self, comp: &Comp, subs: &[ast::Subscript]) -> Vec<Option<String>> {
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
    fn eval_subscripts(
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
    fn apply_subscripts(
        &self,
        v: Val,
        subs: &[ast::Subscript],
        env: &Env,
        cx: &mut Cx,
    ) -> Res<Val> {
        if subs.is_empty() {
            return Ok(v);
        }
        let dims = v.shape();
        let sels = self.eval_subscripts(subs, &dims, &[], env, cx)?;
        Ok(select(&v, &sels, &dims))
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

    // -----------------------------------------------------------------------------------
    // Calls
    // -----------------------------------------------------------------------------------

    fn expand_call(
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

    /// The arguments of `String(x, <options>)` with named options (spec 3.7.1) in the
    /// positional form later stages read: `(x, format)`, or `(x, minimumLength,
    /// leftJustified, significantDigits)` with the defaults `0, true, 6` for options not
    /// given (`significantDigits` only matters for a Real `x`).
    fn string_options(
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
    fn inner_class_for_outer(&self, node: &NodeRef, id: ClassId) -> Option<ClassId> {
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
    fn check_call_through_component(&self, function: &ast::ComponentRef, env: &Env) -> Res<()> {
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
    fn function_redeclared_in_component(
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
        self.lk.resolve_class_name(Some(env.scope), name, false)
    }

    fn homotopy(
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
    fn call_owner(&self, function: &ast::ComponentRef, env: &Env) -> Option<NodeRef> {
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
    fn check_function_alias(&self, id: ClassId, span: Span) -> Res<()> {
        let mut cur = id;
        for _ in 0..50 {
            let entry = self.lib().get(cur);
            let ast::ClassSpecifier::Short { base, .. } = &entry.def.specifier else {
                return Ok(());
            };
            let Some(next) = self.lk.resolve_class_name(entry.parent, base, true) else {
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
    fn call_user(
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
        let fnode = self.package_node(id);
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
            slots = vec![None; inputs.len()];
            for (k, a) in positional.iter().enumerate() {
                slots[k] = Some(self.expand(a, env, cx)?);
            }
            for n in named {
                let Some(k) = inputs.iter().position(|c| *c.name == *n.name.name) else {
                    return err(
                        n.name.span,
                        format!("`{}` has no input `{}`", self.lk.name_of(id), n.name),
                    );
                };
                slots[k] = Some(self.expand(&n.value, env, cx)?);
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
                            fcx.locals.push((c.name.clone(), v));
                        }
                    }
                }
            }
        }
        for (k, c) in inputs.iter().enumerate() {
            if let Some(v) = &slots[k] {
                fcx.locals.push((c.name.clone(), v.clone()));
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
            fcx.locals.push((c.name.clone(), v.clone()));
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
    fn resolved_resource(&self, elems: &crate::inst::Elems, args: &[Val]) -> Option<String> {
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
    fn apply_function(
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
                            .zip(ai.iter().cloned())
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
                    fcx.locals.push((c.name.clone(), v));
                }
            }
            for n in named {
                if let Ok(v) = self.expand(&n.value, env, &mut ecx) {
                    fcx.locals.push((n.name.name.clone(), v));
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
    fn record_call_value(&self, rc: ClassId, call: Expr, span: Span) -> Res<Val> {
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

    /// `external "builtin"` functions map to the built-in of the external call's name.
    pub fn builtin_external(&self, id: ClassId) -> Option<String> {
        let entry = self.lib().get(self.lk.follow_short_class(id));
        let comp = entry.def.specifier.composition()?;
        let ext = comp.external.as_ref()?;
        if ext.language.as_deref() != Some("builtin") {
            return None;
        }
        let name = match &ext.call {
            Some(c) => c.function.name.to_string(),
            None => entry.def.name.name.to_string(),
        };
        BUILTINS.contains(&name.as_str()).then_some(name)
    }

    /// Built-in operators and functions on expanded values.
    pub fn builtin(&self, name: &str, args: Vec<Val>, span: Span) -> Res<Val> {
        let n = args.len();
        let arity = |k: usize| -> Res<()> {
            if n == k {
                Ok(())
            } else {
                err(span, format!("`{name}` takes {k} argument(s), {n} given"))
            }
        };
        match name {
            "size" => {
                let shape = args.first().map(Val::shape).unwrap_or_default();
                if n == 2 {
                    let k = args[1].scalar().and_then(fold::as_i64).unwrap_or(0);
                    match shape.get((k - 1).max(0) as usize) {
                        Some(d) if k >= 1 => Ok(Val::S(Expr::Integer(*d as i64))),
                        // An empty array does not keep its inner dimensions: they are 0 here.
                        _ if k >= 1 && shape.contains(&0) => Ok(Val::S(Expr::Integer(0))),
                        _ => err(span, format!("size: dimension {k} out of range")),
                    }
                } else {
                    arity(1)?;
                    Ok(Val::A(
                        shape
                            .iter()
                            .map(|d| Val::S(Expr::Integer(*d as i64)))
                            .collect(),
                    ))
                }
            }
            "ndims" => {
                arity(1)?;
                Ok(Val::S(Expr::Integer(args[0].shape().len() as i64)))
            }
            "sum" | "product" => {
                arity(1)?;
                let xs = args[0].scalars();
                let (op, unit) = if name == "sum" {
                    (FB::Add, Expr::Integer(0))
                } else {
                    (FB::Mul, Expr::Integer(1))
                };
                let mut it = xs.into_iter();
                let Some(first) = it.next() else {
                    return Ok(Val::S(unit));
                };
                Ok(Val::S(it.fold(first, |a, b| fold::binary(op, a, b))))
            }
            "min" | "max" if n == 1 => {
                let xs = args[0].scalars();
                let mut it = xs.into_iter();
                let Some(first) = it.next() else {
                    return err(span, format!("`{name}` of an empty array"));
                };
                Ok(Val::S(it.fold(first, |a, b| fold::call(name, vec![a, b]))))
            }
            "fill" | "zeros" | "ones" | "identity" | "diagonal" | "linspace" => {
                self.builtin_constructor(name, args, span)
            }
            // `array(a, b)` is the array constructor `{a, b}` (spec 10.4).
            "array" => Ok(Val::A(args)),
            "transpose" | "vector" | "scalar" | "matrix" | "cat" | "cross" | "skew"
            | "symmetric" | "outerProduct" => self.builtin_matrix(name, args, span),
            "inStream" | "actualStream" => {
                arity(1)?;
                Ok(args[0].map(&mut |x| Expr::Call {
                    func: name.to_string(),
                    args: vec![x],
                }))
            }
            "initial" | "terminal" => {
                arity(0)?;
                Ok(Val::S(Expr::Call {
                    func: name.into(),
                    args: vec![],
                }))
            }
            "Integer" if n == 1 => Ok(args[0].map(&mut |x| match &x {
                Expr::Enum { index, .. } => Expr::Integer(*index as i64),
                _ => fold::call("Integer", vec![x]),
            })),
            _ => self.builtin_scalar(name, args, span),
        }
    }

    /// Array constructors: `fill`, `zeros`, `ones`, `identity`, `diagonal`, `linspace`.
    fn builtin_constructor(&self, name: &str, mut args: Vec<Val>, span: Span) -> Res<Val> {
        let n = args.len();
        let arity = |k: usize| -> Res<()> {
            if n == k {
                Ok(())
            } else {
                err(span, format!("`{name}` takes {k} argument(s), {n} given"))
            }
        };
        match name {
            "fill" => {
                if n < 1 {
                    return err(span, "fill needs a value and dimensions");
                }
                let v = args.remove(0);
                let dims = int_args(&args, span)?;
                crate::limits::check_dims(&dims, span, "this `fill`")?;
                Ok(fill(&v, &dims))
            }
            "zeros" | "ones" => {
                let dims = int_args(&args, span)?;
                crate::limits::check_dims(&dims, span, &format!("this `{name}`"))?;
                let v = Val::S(Expr::Integer(if name == "zeros" { 0 } else { 1 }));
                Ok(fill(&v, &dims))
            }
            "identity" => {
                arity(1)?;
                let k = int_args(&args, span)?[0];
                crate::limits::check_dims(&[k, k], span, "this `identity`")?;
                Ok(Val::A(
                    (0..k)
                        .map(|i| {
                            Val::A(
                                (0..k)
                                    .map(|j| Val::S(Expr::Integer((i == j) as i64)))
                                    .collect(),
                            )
                        })
                        .collect(),
                ))
            }
            "diagonal" => {
                arity(1)?;
                let xs = args[0].scalars();
                let k = xs.len();
                Ok(Val::A(
                    (0..k)
                        .map(|i| {
                            Val::A(
                                (0..k)
                                    .map(|j| {
                                        Val::S(if i == j {
                                            xs[i].clone()
                                        } else {
                                            Expr::Integer(0)
                                        })
                                    })
                                    .collect(),
                            )
                        })
                        .collect(),
                ))
            }
            "linspace" => {
                arity(3)?;
                let k = args[2].scalar().and_then(fold::as_i64).unwrap_or(0);
                if k < 2 {
                    return err(span, "linspace needs at least 2 points");
                }
                crate::limits::check_dims(&[k as usize], span, "this `linspace`")?;
                let (a, b) = (args[0].to_expr(), args[1].to_expr());
                Ok(Val::A(
                    (0..k)
                        .map(|i| {
                            let t = Expr::Real(i as f64 / (k - 1) as f64);
                            let d = fold::binary(FB::Sub, b.clone(), a.clone());
                            Val::S(fold::binary(
                                FB::Add,
                                a.clone(),
                                fold::binary(FB::Mul, d, t),
                            ))
                        })
                        .collect(),
                ))
            }
            _ => err(span, format!("`{name}` is not an array constructor")),
        }
    }

    /// Matrix and vector functions: `transpose`, `vector`, `scalar`, `matrix`, `cat`,
    /// `cross`, `skew`, `symmetric`, `outerProduct`.
    fn builtin_matrix(&self, name: &str, mut args: Vec<Val>, span: Span) -> Res<Val> {
        let n = args.len();
        let arity = |k: usize| -> Res<()> {
            if n == k {
                Ok(())
            } else {
                err(span, format!("`{name}` takes {k} argument(s), {n} given"))
            }
        };
        match name {
            "transpose" => {
                arity(1)?;
                let cols = transpose(&args[0], span)?;
                Ok(Val::A(
                    cols.into_iter()
                        .map(|c| Val::A(c.into_iter().map(Val::S).collect()))
                        .collect(),
                ))
            }
            "vector" => {
                arity(1)?;
                Ok(Val::A(args[0].scalars().into_iter().map(Val::S).collect()))
            }
            "scalar" => {
                arity(1)?;
                let xs = args[0].scalars();
                match xs.as_slice() {
                    [x] => Ok(Val::S(x.clone())),
                    _ => err(span, "scalar() needs an array with exactly one element"),
                }
            }
            "matrix" => {
                arity(1)?;
                match args[0].shape().len() {
                    0 => Ok(Val::A(vec![Val::A(vec![args[0].clone()])])),
                    1 => {
                        let Val::A(items) = &args[0] else {
                            unreachable_val(span)?
                        };
                        Ok(Val::A(
                            items.iter().map(|i| Val::A(vec![i.clone()])).collect(),
                        ))
                    }
                    2 => Ok(args.swap_remove(0)),
                    _ => matrix_of_higher(args.swap_remove(0), span),
                }
            }
            "cat" => {
                if n < 2 {
                    return err(span, "cat needs a dimension and arrays");
                }
                let k = args[0].scalar().and_then(fold::as_i64).unwrap_or(0);
                let parts = args.split_off(1);
                cat(k as usize, parts, span)
            }
            "cross" => {
                arity(2)?;
                let (x, y) = (args[0].scalars(), args[1].scalars());
                if x.len() != 3 || y.len() != 3 {
                    return shape_err(span, "cross");
                }
                let c = |i: usize, j: usize| {
                    fold::binary(
                        FB::Sub,
                        fold::binary(FB::Mul, x[i].clone(), y[j].clone()),
                        fold::binary(FB::Mul, x[j].clone(), y[i].clone()),
                    )
                };
                Ok(Val::A(vec![
                    Val::S(c(1, 2)),
                    Val::S(c(2, 0)),
                    Val::S(c(0, 1)),
                ]))
            }
            "skew" => {
                arity(1)?;
                let x = args[0].scalars();
                if x.len() != 3 {
                    return shape_err(span, "skew");
                }
                let z = || Val::S(Expr::Integer(0));
                let neg = |e: &Expr| Val::S(fold::unary(FU::Neg, e.clone()));
                Ok(Val::A(vec![
                    Val::A(vec![z(), neg(&x[2]), Val::S(x[1].clone())]),
                    Val::A(vec![Val::S(x[2].clone()), z(), neg(&x[0])]),
                    Val::A(vec![neg(&x[1]), Val::S(x[0].clone()), z()]),
                ]))
            }
            "symmetric" => {
                arity(1)?;
                let Val::A(rows) = &args[0] else {
                    return err(span, "symmetric needs a square matrix");
                };
                let n = rows.len();
                let at = |i: usize, j: usize| args[0].index_path(&[i, j]);
                Ok(Val::A(
                    (0..n)
                        .map(|i| {
                            Val::A(
                                (0..n)
                                    .map(|j| if i <= j { at(i, j) } else { at(j, i) })
                                    .collect(),
                            )
                        })
                        .collect(),
                ))
            }
            "outerProduct" => {
                arity(2)?;
                let (x, y) = (args[0].scalars(), args[1].scalars());
                Ok(Val::A(
                    x.iter()
                        .map(|a| {
                            Val::A(
                                y.iter()
                                    .map(|b| Val::S(fold::binary(FB::Mul, a.clone(), b.clone())))
                                    .collect(),
                            )
                        })
                        .collect(),
                ))
            }
            _ => err(span, format!("`{name}` is not a matrix function")),
        }
    }

    /// Scalar built-ins: literal domain checks, element-wise application to arrays, calls.
    fn builtin_scalar(&self, name: &str, args: Vec<Val>, span: Span) -> Res<Val> {
        let n = args.len();
        // Literal arguments outside the function's domain are errors now.
        if let Some(Val::S(a)) = args.first() {
            let bad = match (name, a) {
                ("abs" | "sign" | "sqrt" | "log" | "log10" | "asin" | "acos", Expr::Boolean(_)) => {
                    Some("a number is expected, not a Boolean")
                }
                ("sqrt", x) if fold::as_f64(x).is_some_and(|v| v < 0.0) => {
                    Some("the argument of sqrt must not be negative")
                }
                ("log" | "log10", x) if fold::as_f64(x).is_some_and(|v| v <= 0.0) => {
                    Some("the argument of log must be positive")
                }
                ("asin" | "acos", x) if fold::as_f64(x).is_some_and(|v| v.abs() > 1.0) => {
                    Some("the argument of asin/acos must be in [-1, 1]")
                }
                _ => None,
            };
            if let Some(msg) = bad {
                return err(span, format!("`{name}`: {msg}"));
            }
        }
        // Element-wise application of scalar functions; other built-ins as calls.
        if n == 1 && ELEMENTWISE.contains(&name) {
            return Ok(args[0].map(&mut |x| fold::call(name, vec![x])));
        }
        if n >= 1 && clocked_elementwise(name) && matches!(args[0], Val::A(_)) {
            // `sample(u, c)`, `previous(u)`, `subSample(u, 2)`, ... on an array `u` apply to
            // each element with the other arguments shared.
            let rest: Vec<Expr> = args[1..].iter().map(Val::to_expr).collect();
            return Ok(args[0].map(&mut |x| {
                let mut a = vec![x];
                a.extend(rest.iter().cloned());
                fold::call(name, a)
            }));
        }
        if n == 2 && matches!(name, "smooth" | "delay" | "pre" | "der") {
            let a0 = args[0].to_expr();
            return Ok(args[1].map(&mut |x| fold::call(name, vec![a0.clone(), x])));
        }
        if args.iter().all(|a| matches!(a, Val::S(_))) {
            return Ok(Val::S(fold::call(
                name,
                args.into_iter().map(|a| a.to_expr()).collect(),
            )));
        }
        if n == 2 && matches!(name, "min" | "max" | "div" | "mod" | "rem" | "atan2") {
            return zip_vals(&args[0], &args[1], span, &mut |x, y| {
                fold::call(name, vec![x, y])
            });
        }
        if n == 3 && name == "semiLinear" {
            return vectorize(&args, span, &mut |xs| fold::call(name, xs));
        }
        Ok(Val::S(Expr::Call {
            func: name.to_string(),
            args: args.into_iter().map(|a| a.to_expr()).collect(),
        }))
    }
}

/// Apply a scalar function element-wise over the array arguments (scalars are repeated).
fn vectorize(args: &[Val], span: Span, f: &mut dyn FnMut(Vec<Expr>) -> Expr) -> Res<Val> {
    let len = args.iter().find_map(|a| match a {
        Val::A(items) => Some(items.len()),
        _ => None,
    });
    let Some(len) = len else {
        let scalars: Option<Vec<Expr>> = args.iter().map(|a| a.scalar().cloned()).collect();
        return match scalars {
            Some(xs) => Ok(Val::S(f(xs))),
            None => err(span, "records cannot be arguments of this function"),
        };
    };
    let mut out = Vec::new();
    for i in 0..len {
        let mut row = Vec::new();
        for a in args {
            row.push(match a {
                Val::A(items) if items.len() == len => items[i].clone(),
                Val::A(items) => {
                    return err(
                        span,
                        format!(
                            "array sizes do not match: {} and {len} elements",
                            items.len()
                        ),
                    )
                }
                other => other.clone(),
            });
        }
        out.push(vectorize(&row, span, f)?);
    }
    Ok(Val::A(out))
}

/// Put `value` at field `path` (`a.b`) of a record value, creating nested records.
pub fn insert_field(rec: &mut Val, path: &str, value: Val) {
    let Val::R(fields) = rec else { return };
    match path.split_once('.') {
        None => fields.push((Arc::from(path), value)),
        Some((head, rest)) => {
            if !fields.iter().any(|(n, _)| &**n == head) {
                fields.push((Arc::from(head), Val::R(Vec::new())));
            }
            if let Some((_, sub)) = fields.iter_mut().find(|(n, _)| &**n == head) {
                insert_field(sub, rest, value);
            }
        }
    }
}

/// Is every scalar of the value a literal?
fn is_literal_val(v: &Val) -> bool {
    let mut ok = true;
    v.map(&mut |x| {
        ok &= fold::is_literal(&x);
        x
    });
    ok
}

/// Does the value contain record values?
fn has_records(v: &Val) -> bool {
    match v {
        Val::R(_) => true,
        Val::A(items) => items.first().is_some_and(has_records),
        Val::S(_) => false,
    }
}

/// A call being expanded: the function and what was resolved about it.
#[derive(Clone, Copy)]
struct CallSite<'c> {
    id: ClassId,
    object_class: ClassId,
    ext_object: bool,
    is_record: bool,
    fnode: &'c NodeRef,
    elems: &'c Elems,
    inputs: &'c [Rc<Comp>],
    positional: &'c [ast::Expr],
    named: &'c [ast::NamedArg],
    /// The specialization called for functional arguments, and their bound values.
    specialized: Option<&'c crate::funargs::Specialized<Val>>,
}

/// Built-ins applied element by element to a single array argument.
const ELEMENTWISE: &[&str] = &[
    "der", "pre", "edge", "change", "noEvent", "abs", "sign", "sqrt", "sin", "cos", "tan", "asin",
    "acos", "atan", "sinh", "cosh", "tanh", "exp", "log", "log10", "ceil", "floor", "integer",
    "Integer", "Real", "Boolean",
];

/// Clock operators applied element by element to an array first argument (spec 16.5):
/// `sample` and the operators of [`crate::flat::CLOCK_OPERATORS`] that take a signal.
fn clocked_elementwise(name: &str) -> bool {
    name == "sample"
        || (crate::flat::CLOCK_OPERATORS.contains(&name)
            && !matches!(name, "Clock" | "firstTick" | "interval"))
}

/// An argument of a synchronous built-in after named arguments are placed.
enum SyncArg<'a> {
    Given(&'a ast::Expr),
    Default(Expr),
}

/// Formal parameters (name, default) of the built-ins of chapters 16 and 17 that take named
/// arguments; `None` as default means "no default" (trailing ones may be omitted where the
/// operator has an inferred form, e.g. `Clock()` or `subSample(u)`).
fn synchronous_formals(name: &str) -> Option<&'static [(&'static str, Option<SyncDefault>)]> {
    use SyncDefault::*;
    Some(match name {
        "Clock" => &[("c", None), ("solverMethod", None)],
        "transition" => &[
            ("from", None),
            ("to", None),
            ("condition", None),
            ("immediate", Some(Bool(true))),
            ("reset", Some(Bool(true))),
            ("synchronize", Some(Bool(false))),
            ("priority", Some(Int(1))),
        ],
        "initialState" | "activeState" => &[("state", None)],
        _ => return None,
    })
}

#[derive(Clone, Copy)]
enum SyncDefault {
    Bool(bool),
    Int(i64),
}

/// Places positional and named arguments of a synchronous built-in in formal order, filling
/// defaults; stops at the first missing argument without a default (the inferred forms).
fn place_synchronous_args<'a>(
    fname: &str,
    formals: &[(&'static str, Option<SyncDefault>)],
    positional: &'a [ast::Expr],
    named: &'a [ast::NamedArg],
    span: Span,
) -> Res<Vec<SyncArg<'a>>> {
    if positional.len() > formals.len() {
        return err(
            span,
            format!("`{fname}` takes at most {} arguments", formals.len()),
        );
    }
    for n in named {
        let known = formals.iter().position(|(f, _)| *f == n.name.as_str());
        match known {
            None => {
                let names: Vec<&str> = formals.iter().map(|(f, _)| *f).collect();
                return err(
                    n.value.span,
                    format!(
                        "`{fname}` has no argument `{}` (its arguments: {})",
                        n.name.as_str(),
                        names.join(", ")
                    ),
                );
            }
            Some(k) if k < positional.len() => {
                return err(
                    n.value.span,
                    format!("argument `{}` of `{fname}` is given twice", n.name.as_str()),
                );
            }
            _ => {}
        }
    }
    // `Clock(c, solverMethod=...)`: the named form is the only way to give a solver method to
    // an existing clock; `Clock(interval)` etc. keep their positional meaning.
    let mut out = Vec::new();
    for (k, (formal, default)) in formals.iter().enumerate() {
        if let Some(a) = positional.get(k) {
            out.push(SyncArg::Given(a));
        } else if let Some(n) = named.iter().find(|n| n.name.as_str() == *formal) {
            out.push(SyncArg::Given(&n.value));
        } else if let Some(d) = default {
            out.push(SyncArg::Default(match d {
                SyncDefault::Bool(b) => Expr::Boolean(*b),
                SyncDefault::Int(i) => Expr::Integer(*i),
            }));
        } else {
            break;
        }
    }
    Ok(out)
}

/// Operators handled here that are not plain flat built-ins (they are rewritten away).
pub const EXTRA_BUILTINS: &[&str] = &[
    "inStream",
    "actualStream",
    "array",
    "String",
    "getInstanceName",
];

/// Known Modelica features moss does not implement, for a clearer message than
/// "unknown function".
fn unsupported_feature(name: &str) -> Option<&'static str> {
    if name.starts_with("Connections.") {
        return Some("Connections.branch, root and potentialRoot are equations of their own (not allowed in algorithms or expressions); Connections.isRoot and rooted are the only ones used in expressions");
    }
    match name {
        "Clock" | "interval" | "hold" | "previous" | "subSample" | "superSample"
        | "shiftSample" | "backSample" | "noClock" | "firstTick" | "sample_clocked" => {
            Some("synchronous (clocked) language elements are not supported by moss")
        }
        _ => None,
    }
}

/// 1-based index denoted by a subscript value (Integer, enumeration literal, Boolean).
pub fn subscript_index(e: &Expr) -> Option<i64> {
    match e {
        Expr::Boolean(b) => Some(*b as i64 + 1),
        other => fold::as_i64(other),
    }
}

fn unreachable_val<T>(span: Span) -> Res<T> {
    err(span, "internal error: unexpected value shape")
}

fn map_op(op: BinaryOp) -> FB {
    match op {
        BinaryOp::Add | BinaryOp::ElemAdd => FB::Add,
        BinaryOp::Sub | BinaryOp::ElemSub => FB::Sub,
        BinaryOp::Mul | BinaryOp::ElemMul => FB::Mul,
        BinaryOp::Div | BinaryOp::ElemDiv => FB::Div,
        BinaryOp::Pow | BinaryOp::ElemPow => FB::Pow,
        BinaryOp::And => FB::And,
        BinaryOp::Or => FB::Or,
        BinaryOp::Lt => FB::Lt,
        BinaryOp::Le => FB::Le,
        BinaryOp::Gt => FB::Gt,
        BinaryOp::Ge => FB::Ge,
        BinaryOp::Eq => FB::Eq,
        BinaryOp::Ne => FB::Ne,
    }
}

fn elementwise(a: &Val, b: &Val, op: FB, span: Span) -> Res<Val> {
    zip_vals(a, b, span, &mut |x, y| fold::binary(op, x, y))
}

/// Combine two values element by element, broadcasting scalars.
pub fn zip_vals(a: &Val, b: &Val, span: Span, f: &mut dyn FnMut(Expr, Expr) -> Expr) -> Res<Val> {
    Ok(match (a, b) {
        (Val::S(x), Val::S(y)) => Val::S(f(x.clone(), y.clone())),
        (Val::S(_), Val::A(ys)) => {
            let mut out = Vec::new();
            for y in ys {
                out.push(zip_vals(a, y, span, f)?);
            }
            Val::A(out)
        }
        (Val::A(xs), Val::S(_)) => {
            let mut out = Vec::new();
            for x in xs {
                out.push(zip_vals(x, b, span, f)?);
            }
            Val::A(out)
        }
        (Val::A(xs), Val::A(ys)) => {
            if xs.len() != ys.len() {
                return err(
                    span,
                    format!(
                        "array sizes do not match: {} and {} elements",
                        xs.len(),
                        ys.len()
                    ),
                );
            }
            let mut out = Vec::new();
            for (x, y) in xs.iter().zip(ys) {
                out.push(zip_vals(x, y, span, f)?);
            }
            Val::A(out)
        }
        (Val::R(xs), Val::R(ys)) if xs.len() == ys.len() => {
            let mut out = Vec::new();
            for ((n, x), (_, y)) in xs.iter().zip(ys) {
                out.push((n.clone(), zip_vals(x, y, span, f)?));
            }
            Val::R(out)
        }
        _ => {
            return err(
                span,
                "operands of incompatible types (record and non-record)",
            )
        }
    })
}

fn dot(x: Vec<Expr>, y: Vec<Expr>) -> Expr {
    let mut terms = x
        .into_iter()
        .zip(y)
        .map(|(a, b)| fold::binary(FB::Mul, a, b));
    let Some(first) = terms.next() else {
        return Expr::Integer(0);
    };
    terms.fold(first, |a, b| fold::binary(FB::Add, a, b))
}

fn transpose(m: &Val, span: Span) -> Res<Vec<Vec<Expr>>> {
    let Val::A(rows) = m else {
        return err(span, "expected a matrix");
    };
    let rows: Vec<Vec<Expr>> = rows.iter().map(Val::scalars).collect();
    let ncols = rows.first().map_or(0, Vec::len);
    if rows.iter().any(|r| r.len() != ncols) {
        return err(span, "rows of different lengths");
    }
    Ok((0..ncols)
        .map(|j| rows.iter().map(|r| r[j].clone()).collect())
        .collect())
}

fn select(v: &Val, sels: &[Sel], dims: &[usize]) -> Val {
    let Some((s, rest)) = sels.split_first() else {
        return v.clone();
    };
    let items = match v {
        Val::A(items) => items,
        other => return other.clone(),
    };
    let get = |i: usize| items.get(i - 1).map(|x| select(x, rest, &dims[1..]));
    match s {
        Sel::One(i) => get(*i).unwrap_or_else(|| v.clone()),
        Sel::Many(is) => Val::A(is.iter().filter_map(|i| get(*i)).collect()),
        Sel::Dynamic(k, d) => {
            let vals: Vec<Val> = (1..=*d).filter_map(get).collect();
            if_chain(k, &vals)
        }
    }
}

/// The elements of `v` picked by `subs` (`None`: a whole dimension; an Integer literal: one
/// index; any other expression: an index known only when it is evaluated, selected by an
/// if-expression). `None` when there are more subscripts than dimensions.
pub(crate) fn select_by_exprs(v: &Val, subs: &[Option<Expr>]) -> Option<Val> {
    let dims = v.shape();
    if subs.len() > dims.len() {
        return None;
    }
    let sels: Vec<Sel> = subs
        .iter()
        .zip(&dims)
        .map(|(s, &d)| match s {
            None => Sel::Many((1..=d).collect()),
            Some(Expr::Integer(i)) if *i >= 1 && (*i as usize) <= d => Sel::One(*i as usize),
            Some(k) => Sel::Dynamic(k.clone(), d),
        })
        .collect();
    Some(select(v, &sels, &dims))
}

/// `if k == 1 then v1 elseif k == 2 then v2 ... else vn`, element by element.
fn if_chain(k: &Expr, vals: &[Val]) -> Val {
    let Some(first) = vals.first() else {
        return Val::A(Vec::new());
    };
    match first {
        Val::S(_) => {
            let mut scalars: Vec<Expr> = vals.iter().filter_map(|v| v.scalar().cloned()).collect();
            let Some(last) = scalars.pop() else {
                return first.clone();
            };
            let branches = scalars
                .into_iter()
                .enumerate()
                .map(|(i, v)| {
                    (
                        fold::binary(FB::Eq, k.clone(), Expr::Integer(i as i64 + 1)),
                        v,
                    )
                })
                .collect();
            Val::S(fold::if_expr(branches, last))
        }
        Val::A(items) => Val::A(
            (0..items.len())
                .map(|j| {
                    let col: Vec<Val> = vals.iter().map(|v| v.index_path(&[j])).collect();
                    if_chain(k, &col)
                })
                .collect(),
        ),
        Val::R(fields) => Val::R(
            fields
                .iter()
                .map(|(n, _)| {
                    let col: Vec<Val> = vals
                        .iter()
                        .filter_map(|v| match v {
                            Val::R(fs) => fs.iter().find(|(m, _)| m == n).map(|(_, x)| x.clone()),
                            _ => None,
                        })
                        .collect();
                    (n.clone(), if_chain(k, &col))
                })
                .collect(),
        ),
    }
}

/// Repeat a scalar binding over `dims` (parameters declared as arrays with scalar bindings
/// are errors in Modelica, but start values may be scalar).
fn broadcast(v: Val, dims: &[usize]) -> Val {
    if dims.is_empty() || !matches!(v, Val::S(_)) {
        return v;
    }
    fill(&v, dims)
}

pub fn fill(v: &Val, dims: &[usize]) -> Val {
    match dims.split_first() {
        None => v.clone(),
        Some((d, rest)) => Val::A((0..*d).map(|_| fill(v, rest)).collect()),
    }
}

fn int_args(args: &[Val], span: Span) -> Res<Vec<usize>> {
    args.iter()
        .map(|a| match a.scalar().and_then(fold::as_i64) {
            Some(k) if k >= 0 => Ok(k as usize),
            _ => err(
                span,
                "dimension arguments must be non-negative Integer constants",
            ),
        })
        .collect()
}

pub(crate) fn range_values(s: &Expr, step: Option<&Expr>, t: &Expr, span: Span) -> Res<Val> {
    if let (Expr::Boolean(a), Expr::Boolean(b)) = (s, t) {
        return Ok(Val::A(
            [false, true]
                .into_iter()
                .filter(|x| x >= a && x <= b)
                .map(|x| Val::S(Expr::Boolean(x)))
                .collect(),
        ));
    }
    if let (Expr::Enum { ty, .. }, Expr::Enum { .. }) = (s, t) {
        let (a, b) = (fold::as_i64(s).unwrap_or(1), fold::as_i64(t).unwrap_or(0));
        let _ = ty;
        return Ok(Val::A((a..=b).map(|i| Val::S(Expr::Integer(i))).collect()));
    }
    let all_int = matches!(s, Expr::Integer(_))
        && matches!(t, Expr::Integer(_))
        && step.is_none_or(|x| matches!(x, Expr::Integer(_)));
    if all_int {
        let (a, b) = (fold::as_i64(s).unwrap_or(0), fold::as_i64(t).unwrap_or(0));
        let st = step.and_then(fold::as_i64).unwrap_or(1);
        if st == 0 {
            return err(span, "range step must not be zero");
        }
        // The count first (in i128: `b - a` may overflow i64), so that no huge range is
        // built before it is rejected.
        let (a, b, st) = (a as i128, b as i128, st as i128);
        // floor((b - a) / st) + 1 elements, none when the step points away from `b`.
        let steps = if st > 0 {
            (b - a).div_euclid(st)
        } else {
            (a - b).div_euclid(-st)
        };
        let count = (steps + 1).max(0);
        crate::limits::check_range_count(count as f64, span)?;
        return Ok(Val::A(
            // Every element lies between `a` and `b`, so it fits in an i64.
            (0..count)
                .map(|k| Val::S(Expr::Integer((a + k * st) as i64)))
                .collect(),
        ));
    }
    let (Some(a), Some(b)) = (fold::as_f64(s), fold::as_f64(t)) else {
        return err(span, "range bounds must be numbers");
    };
    let st = step.and_then(fold::as_f64).unwrap_or(1.0);
    if st == 0.0 {
        return err(span, "range step must not be zero");
    }
    let count = ((b - a) / st + 1e-10).floor() + 1.0;
    crate::limits::check_range_count(count.max(0.0), span)?;
    let n = count as i64;
    Ok(Val::A(
        (0..n.max(0))
            .map(|k| Val::S(Expr::Real(a + k as f64 * st)))
            .collect(),
    ))
}

fn promote2(v: Val) -> Vec<Vec<Val>> {
    match v {
        Val::A(items) if items.iter().any(|i| matches!(i, Val::A(_))) => items
            .into_iter()
            .map(|r| match r {
                Val::A(cols) => cols,
                s => vec![s],
            })
            .collect(),
        // A vector in a matrix constructor is a column.
        Val::A(items) => items.into_iter().map(|i| vec![i]).collect(),
        s => vec![vec![s]],
    }
}

fn hcat(items: Vec<Val>, span: Span) -> Res<Vec<Vec<Val>>> {
    let mut rows: Option<Vec<Vec<Val>>> = None;
    for it in items {
        let m = promote2(it);
        rows = Some(match rows {
            None => m,
            Some(mut r) => {
                if r.len() != m.len() {
                    return shape_err(span, "a matrix row");
                }
                for (a, b) in r.iter_mut().zip(m) {
                    a.extend(b);
                }
                r
            }
        });
    }
    Ok(rows.unwrap_or_default())
}

fn vcat(rows: Vec<Vec<Vec<Val>>>, span: Span) -> Res<Val> {
    let mut out: Vec<Val> = Vec::new();
    let mut width = None;
    for r in rows {
        for row in r {
            if *width.get_or_insert(row.len()) != row.len() {
                return shape_err(span, "a matrix (rows of different lengths)");
            }
            out.push(Val::A(row));
        }
    }
    Ok(Val::A(out))
}

/// `matrix(A)` of an array with more than two dimensions: the first two dimensions, every
/// further dimension must have size 1 (spec 10.3.2).
fn matrix_of_higher(a: Val, span: Span) -> Res<Val> {
    let Val::A(rows) = a else {
        unreachable_val(span)?
    };
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let Val::A(cols) = r else {
            unreachable_val(span)?
        };
        let mut row = Vec::with_capacity(cols.len());
        for c in cols {
            match c.scalars().as_slice() {
                [x] => row.push(Val::S(x.clone())),
                _ => {
                    return err(
                        span,
                        "matrix(A) needs size(A, k) = 1 for every dimension k > 2",
                    )
                }
            }
        }
        out.push(Val::A(row));
    }
    Ok(Val::A(out))
}

fn cat(k: usize, parts: Vec<Val>, span: Span) -> Res<Val> {
    if k == 1 {
        let mut out = Vec::new();
        for p in parts {
            match p {
                Val::A(items) => out.extend(items),
                s => out.push(s),
            }
        }
        return Ok(Val::A(out));
    }
    if k == 2 {
        let rows = hcat(parts, span)?;
        return Ok(Val::A(rows.into_iter().map(Val::A).collect()));
    }
    cat_inner(k, parts, span)
}

/// `cat(k, A, B, ...)` for `k > 2`: the arrays agree in their first dimension, and element
/// `i` of the result is `cat(k - 1, A[i], B[i], ...)` (spec 10.4.2).
fn cat_inner(k: usize, parts: Vec<Val>, span: Span) -> Res<Val> {
    let mut columns: Vec<Vec<Val>> = Vec::new();
    for (j, p) in parts.into_iter().enumerate() {
        let Val::A(items) = p else {
            return err(
                span,
                format!("cat({k}, ...) needs arrays with at least {k} dimensions"),
            );
        };
        if j == 0 {
            columns = items.into_iter().map(|i| vec![i]).collect();
        } else if items.len() != columns.len() {
            return shape_err(
                span,
                "cat (the arrays differ in a dimension other than the one concatenated)",
            );
        } else {
            for (c, i) in columns.iter_mut().zip(items) {
                c.push(i);
            }
        }
    }
    let mut out = Vec::with_capacity(columns.len());
    for c in columns {
        out.push(cat(k - 1, c, span)?);
    }
    Ok(Val::A(out))
}

fn array_call_elements(call: &Expr, dims: &[usize]) -> Val {
    fn build(call: &Expr, dims: &[usize], prefix: &mut Vec<usize>) -> Val {
        match dims.split_first() {
            None => Val::S(Expr::Call {
                func: "[]".into(),
                args: std::iter::once(call.clone())
                    .chain(prefix.iter().map(|i| Expr::Integer(*i as i64)))
                    .collect(),
            }),
            Some((d, rest)) => Val::A(
                (1..=*d)
                    .map(|i| {
                        prefix.push(i);
                        let v = build(call, rest, prefix);
                        prefix.pop();
                        v
                    })
                    .collect(),
            ),
        }
    }
    build(call, dims, &mut Vec::new())
}

pub fn default_value(base: &Base, lk: &Lookup) -> Expr {
    match base {
        Base::Real => Expr::Real(0.0),
        Base::Integer => Expr::Integer(0),
        Base::Boolean => Expr::Boolean(false),
        Base::String => Expr::String(String::new()),
        Base::Clock => Expr::Call {
            func: "Clock".into(),
            args: vec![],
        },
        Base::Enum(c, lits) => match lits.first() {
            Some(l) => Expr::Enum {
                ty: Arc::from(lk.name_of(*c).as_str()),
                literal: l.clone(),
                index: 1,
            },
            None => Expr::Integer(0),
        },
        Base::Class(_) => Expr::Real(0.0),
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

fn node_name(node: &NodeRef) -> String {
    if node.path.is_empty() {
        "the model".to_string()
    } else {
        format!("`{}`", node.path)
    }
}

/// For `import A.B.c;` / `import x = A.B.c;`, the imported component's own name.
fn imported_last(lk: &Lookup, scope: ClassId, name: &str) -> Option<Arc<str>> {
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

/// `1:size(x, k)` for an iterator used as the k-th subscript of `x` somewhere in `body`.
/// The range deduced for an implicit iterator, with the array and dimension it comes from.
fn deduce_range(name: &str, body: &[ast::Expr]) -> Option<(ast::Expr, ast::ComponentRef, usize)> {
    let mut found: Option<(ast::Expr, ast::ComponentRef, usize)> = None;
    for e in body {
        e.walk(&mut |x| {
            if found.is_some() {
                return;
            }
            let ExprKind::Ref(c) = &x.kind else { return };
            for (pi, p) in c.parts.iter().enumerate() {
                for (k, s) in p.subscripts.iter().enumerate() {
                    let ast::Subscript::Expr(se) = s else {
                        continue;
                    };
                    let ExprKind::Ref(r) = &se.kind else { continue };
                    if r.as_simple_name() != Some(name) {
                        continue;
                    }
                    let mut array = c.clone();
                    array.parts.truncate(pi + 1);
                    for q in &mut array.parts {
                        q.subscripts.clear();
                    }
                    let array_ref = array.clone();
                    let span = x.span;
                    let size = ast::Expr::new(
                        ExprKind::Call {
                            function: ast::ComponentRef::simple(ast::Ident::new("size", span)),
                            args: FunctionArgs::List {
                                positional: vec![
                                    ast::Expr::new(ExprKind::Ref(array), span),
                                    ast::Expr::new(ExprKind::Integer(k as i64 + 1), span),
                                ],
                                named: Vec::new(),
                            },
                        },
                        span,
                    );
                    let range = ast::Expr::new(
                        ExprKind::Range {
                            start: Box::new(ast::Expr::new(ExprKind::Integer(1), span)),
                            step: None,
                            stop: Box::new(size),
                        },
                        span,
                    );
                    found = Some((range, array_ref, k));
                    return;
                }
            }
        });
    }
    found
}

/// Every expression of some equations (for deducing iterator ranges).
pub fn equation_exprs(eqs: &[ast::Equation], out: &mut Vec<ast::Expr>) {
    for e in eqs {
        match &e.kind {
            ast::EquationKind::Simple { lhs, rhs } => {
                out.push(lhs.clone());
                out.push(rhs.clone());
            }
            ast::EquationKind::If {
                branches,
                else_branch,
            } => {
                for (c, b) in branches {
                    out.push(c.clone());
                    equation_exprs(b, out);
                }
                equation_exprs(else_branch, out);
            }
            ast::EquationKind::For { body, .. } => equation_exprs(body, out),
            ast::EquationKind::When { branches } => {
                for (c, b) in branches {
                    out.push(c.clone());
                    equation_exprs(b, out);
                }
            }
            ast::EquationKind::Connect { lhs, rhs } => {
                out.push(ast::Expr::new(ExprKind::Ref(lhs.clone()), lhs.span));
                out.push(ast::Expr::new(ExprKind::Ref(rhs.clone()), rhs.span));
            }
            ast::EquationKind::Call { args, .. } => push_args(args, out),
        }
    }
}

fn push_args(args: &FunctionArgs, out: &mut Vec<ast::Expr>) {
    if let FunctionArgs::List { positional, named } = args {
        out.extend(positional.iter().cloned());
        out.extend(named.iter().map(|n| n.value.clone()));
    }
}

/// Every expression of some statements (for deducing iterator ranges).
pub fn statement_exprs(stmts: &[ast::Statement], out: &mut Vec<ast::Expr>) {
    for s in stmts {
        match &s.kind {
            ast::StatementKind::Assign { target, value } => {
                out.push(ast::Expr::new(ExprKind::Ref(target.clone()), target.span));
                out.push(value.clone());
            }
            ast::StatementKind::TupleAssign { targets, value } => {
                out.extend(targets.iter().flatten().cloned());
                out.push(value.clone());
            }
            ast::StatementKind::If {
                branches,
                else_branch,
            } => {
                for (c, b) in branches {
                    out.push(c.clone());
                    statement_exprs(b, out);
                }
                statement_exprs(else_branch, out);
            }
            ast::StatementKind::For { body, .. } | ast::StatementKind::While { body, .. } => {
                statement_exprs(body, out)
            }
            ast::StatementKind::When { branches } => {
                for (c, b) in branches {
                    out.push(c.clone());
                    statement_exprs(b, out);
                }
            }
            ast::StatementKind::Call { args, .. } => push_args(args, out),
            _ => {}
        }
    }
}

/// How [`Flattener::resolve_in_node_as`] resolves a reference.
#[derive(Clone, Copy)]
struct Resolve {
    /// Only constants and parameters are wanted (a translation-time value).
    constant: bool,
    /// The reference is written in the node it starts in (see spec 5.4 on `inner outer`).
    local: bool,
}
