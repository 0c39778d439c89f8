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

mod arrays;
mod builtins;
mod calls;
mod names;

pub use arrays::*;
pub use builtins::*;
use calls::*;
pub use names::*;

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
        // walk by reference and clone only the element reached: cloning the whole value
        // first made taking every element of an array quadratic in its size
        let mut v = self;
        for &i in path {
            if let Val::A(items) = v {
                if let Some(item) = items.get(i) {
                    v = item;
                }
            }
        }
        v.clone()
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
    /// Bound names (function inputs, iterators), shared: a context is cloned for every
    /// nested call and branch, and an input can be a whole array.
    pub locals: Vec<(Arc<str>, Arc<Val>)>,
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
            .map(|(_, v)| &**v)
    }

    fn local_shared(&self, name: &str) -> Option<Arc<Val>> {
        self.locals
            .iter()
            .rev()
            .find(|(n, _)| &**n == name)
            .map(|(_, v)| v.clone())
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
                if *op == BinaryOp::Mul && (is_empty_array(&a) || is_empty_array(&b)) {
                    if let Some(v) = self.product_over_empty(lhs, rhs, &a, &b, env, e.span)? {
                        return Ok(v);
                    }
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
            cx.locals.push((first.name.name.clone(), Arc::new(v)));
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
                .zip(args.iter().cloned().map(Arc::new))
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
            .zip(args.iter().cloned().map(Arc::new))
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

    /// `x * y` where an operand has no elements: an empty array keeps no trailing
    /// dimensions (`y[0, 4]` is a value of shape `[0]`), so the shapes come from the
    /// declarations of operands that are plain component names. A matrix product whose
    /// inner dimension is zero is all zeros (`[4, 0] * [0, 4]` is a 4×4 zero matrix, spec
    /// 10.6.7); `None` leaves the product to the element-wise rules.
    fn product_over_empty(
        &self,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
        a: &Val,
        b: &Val,
        env: &Env,
        span: Span,
    ) -> Res<Option<Val>> {
        let sa = self.declared_shape(lhs, env)?.unwrap_or_else(|| a.shape());
        let sb = self.declared_shape(rhs, env)?.unwrap_or_else(|| b.shape());
        let (inner_a, inner_b, outer): (usize, usize, Vec<usize>) =
            match (sa.as_slice(), sb.as_slice()) {
                ([m, k], [k2, n]) => (*k, *k2, vec![*m, *n]),
                ([m, k], [k2]) => (*k, *k2, vec![*m]),
                ([k], [k2, n]) => (*k, *k2, vec![*n]),
                ([k], [k2]) => (*k, *k2, vec![]),
                _ => return Ok(None),
            };
        if inner_a != inner_b {
            return shape_err(span, "a matrix product").map(Some);
        }
        if inner_a != 0 {
            return Ok(None);
        }
        fn zeros(shape: &[usize]) -> Val {
            match shape.split_first() {
                None => Val::S(Expr::Real(0.0)),
                Some((n, rest)) => Val::A((0..*n).map(|_| zeros(rest)).collect()),
            }
        }
        Ok(Some(zeros(&outer)))
    }

    /// The declared dimensions of `e` when it names a component of the instance without
    /// subscripts (`y` of `Real y[0, 4]`).
    fn declared_shape(&self, e: &ast::Expr, env: &Env) -> Res<Option<Vec<usize>>> {
        let ExprKind::Ref(c) = &e.kind else {
            return Ok(None);
        };
        let [part] = c.parts.as_slice() else {
            return Ok(None);
        };
        if c.global
            || !part.subscripts.is_empty()
            || !self.visible_from_text(env, part.name.as_str())
        {
            return Ok(None);
        }
        let Some(comp) = self.find_comp(&env.node, part.name.as_str()) else {
            return Ok(None);
        };
        Ok(Some(self.comp_dims(&env.node, &comp)?))
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
/// An array value with no elements (at any depth), found without copying any.
fn is_empty_array(v: &Val) -> bool {
    match v {
        Val::A(items) => items.iter().all(is_empty_array),
        _ => false,
    }
}

fn has_records(v: &Val) -> bool {
    match v {
        Val::R(_) => true,
        Val::A(items) => items.first().is_some_and(has_records),
        Val::S(_) => false,
    }
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
