//! Inlining of simple user functions into arena expressions.
//!
//! A function is *inlinable* when its body is made of assignments `x := expr` to its
//! outputs or locals (whole, or one element at constant subscripts), `for` loops over
//! constant ranges (unrolled), if-statements (each variable becomes an if-expression of its
//! values in the branches) and asserts (kept by the caller where it can). Expressions use the
//! inputs, earlier assignments, literals, operators and pure built-in functions or other
//! inlinable functions; arrays are expanded into their elements ([`crate::array_ops`]). The
//! call is replaced by the body's value with the arguments substituted, so differentiation,
//! solving and the incidence of equations see through the function. A function with an
//! array output gives an array literal ([`inline_array_call`]): an equation
//! `{0, 0} = f(x)` becomes one scalar equation per element.
//!
//! Two uses:
//! - at conversion, calls of inlinable functions *without* a `derivative` annotation are
//!   inlined ([`inline_call`]), so index reduction can differentiate them;
//! - after index reduction, calls of inlinable functions that kept their call for their
//!   `derivative` annotation (and calls of the derivative functions index reduction created)
//!   are inlined too ([`inline_after_index_reduction`], the `InlineAfterIndexReduction`
//!   behaviour): an adaptor's `state1({p, pder}, time)` then reads only `p`, so sorting does
//!   not try to solve it for `pder`.

use crate::array_ops as ao;
use crate::ir::{Arena, ExprId, Node, Rel};
use crate::model::{map_exprs, EqBody, Model, SEq};
use moss_frontend::flat::{self, BinaryOp, Function, FunctionBody, Statement, UnaryOp};
use rustc_hash::FxHashMap as HashMap;
use std::cell::Cell;
use std::collections::BTreeMap;

const MAX_DEPTH: usize = 8;
/// Most statements executed while unrolling the `for` loops of one inlined body.
const MAX_UNROLLED: usize = 1000;
/// Most statements executed for one inlined call, the bodies it inlines in turn included:
/// bounds the work of trying bodies that call many others.
const MAX_NESTED_WORK: usize = 20_000;

/// Largest inlined value, counted as the tree the emitted code evaluates: a chain of
/// assignments that each use the previous value twice (`a2 := if a1 > x then a1 else
/// sin(a1)`) doubles the tree at every statement while the statement count stays small,
/// and forty such lines exhausted the memory of the code emitter. Beyond it the function
/// stays a call.
const MAX_INLINED_TREE: usize = 1_000_000;
/// Marks the elements of an output array that no statement assigned yet.
const UNASSIGNED: &str = "$unassigned";

/// Built-ins that may appear in an inlined body (pure functions of their arguments).
const PURE_BUILTINS: &[&str] = &[
    "abs", "sign", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh",
    "tanh", "exp", "log", "log10", "min", "max", "div", "mod", "rem", "ceil", "floor", "integer",
    "Integer", "Real", "sum", "product", "scalar",
];

/// Built-ins of [`PURE_BUILTINS`] that take arrays as a whole instead of element by element.
const ARRAY_BUILTINS: &[&str] = &["min", "max", "sum", "product", "scalar"];

type Functions = BTreeMap<String, Function>;

/// The value of `func(args)` with the body inlined, or `None` when the function is not
/// inlinable, its output is an array, or the arguments do not fit (e.g. an array input given
/// as a non-literal).
pub fn inline_call(
    arena: &mut Arena,
    functions: &Functions,
    func: &str,
    args: &[ExprId],
) -> Option<ExprId> {
    let (outs, _) = inline_top(arena, functions, func, args, false)?;
    match outs.as_slice() {
        [v] if !ao::is_array(arena, *v) => Some(*v),
        _ => None,
    }
}

/// An `assert` of an inlined body, with the arguments substituted.
pub struct InlinedAssert {
    pub cond: ExprId,
    pub msg: ExprId,
    pub level: flat::AssertLevel,
}

/// The value of `func(args)` for an inlinable function whose output is an array: an array
/// literal (nested for matrices) of scalar expressions, and the asserts of the body (the
/// caller keeps them as checks of the model, as the call would have made them).
pub fn inline_array_call(
    arena: &mut Arena,
    functions: &Functions,
    func: &str,
    args: &[ExprId],
) -> Option<(ExprId, Vec<InlinedAssert>)> {
    let (outs, asserts) = inline_top(arena, functions, func, args, true)?;
    match outs.as_slice() {
        [v] if ao::is_array(arena, *v) => Some((*v, asserts)),
        _ => None,
    }
}

/// The values of all outputs of `func(args)` with the body inlined (for `(a, b) = f(x)` and
/// for selecting one output of a call), and the asserts of the body.
pub fn inline_outputs(
    arena: &mut Arena,
    functions: &Functions,
    func: &str,
    args: &[ExprId],
) -> Option<(Vec<ExprId>, Vec<InlinedAssert>)> {
    inline_top(arena, functions, func, args, true)
}

/// Inline a call written in the model (not inside another inlined body).
fn inline_top(
    arena: &mut Arena,
    functions: &Functions,
    func: &str,
    args: &[ExprId],
    keep_asserts: bool,
) -> Option<(Vec<ExprId>, Vec<InlinedAssert>)> {
    let work = Cell::new(MAX_NESTED_WORK);
    inline_nested(arena, functions, func, args, &[], &work, keep_asserts)
}

/// Inline `func(args)` inside the bodies of `outer` (the functions being inlined around it,
/// outermost first); `work` is the statement budget left for the whole outermost call.
fn inline_nested(
    arena: &mut Arena,
    functions: &Functions,
    func: &str,
    args: &[ExprId],
    outer: &[&str],
    work: &Cell<usize>,
    keep_asserts: bool,
) -> Option<(Vec<ExprId>, Vec<InlinedAssert>)> {
    // a recursive function (`quadStep` of `quadratureLobatto`) stays a call
    if outer.len() >= MAX_DEPTH || outer.contains(&func) {
        return None;
    }
    let f = functions.get(func)?;
    let FunctionBody::Algorithm(stmts) = &f.body else {
        return None;
    };
    if f.is_impure || f.outputs.is_empty() || args.len() != f.inputs.len() {
        return None;
    }
    let mut env: HashMap<&str, ExprId> = HashMap::default();
    for (inp, &a) in f.inputs.iter().zip(args) {
        if ao::rank(arena, a) != inp.dims.len() {
            return None;
        }
        env.insert(inp.name.as_str(), a);
    }
    let mut cx = Cx {
        arena,
        functions,
        outer,
        work,
        f,
        budget: MAX_UNROLLED,
        asserts: keep_asserts.then(Vec::new),
    };
    // outputs and locals declared with a value (`output Real y = x`) start with it
    for v in f.outputs.iter().chain(&f.locals) {
        if let Some(d) = &v.default {
            let value = cx.expr(d, &env)?;
            env.insert(v.name.as_str(), value);
        }
    }
    cx.statements(stmts, &mut env)?;
    let unassigned = |n: &Node| matches!(n, Node::Str(s) if &**s == UNASSIGNED);
    let mut outs = Vec::with_capacity(f.outputs.len());
    for o in &f.outputs {
        let v = *env.get(o.name.as_str())?;
        if cx.arena.any_node(v, &mut |n| unassigned(n))
            || cx.arena.tree_size_exceeds(v, MAX_INLINED_TREE)
        {
            return None;
        }
        outs.push(v);
    }
    Some((outs, cx.asserts.unwrap_or_default()))
}

struct Cx<'a> {
    arena: &'a mut Arena,
    functions: &'a Functions,
    /// The functions being inlined around this one, outermost first.
    outer: &'a [&'a str],
    /// Statements left for the outermost call (shared by every nested body).
    work: &'a Cell<usize>,
    /// The function being inlined.
    f: &'a Function,
    /// Statements left before the body counts as too long to unroll.
    budget: usize,
    /// The asserts met so far, when they may be kept (else an assert prevents inlining).
    asserts: Option<Vec<InlinedAssert>>,
}

type Env<'s> = HashMap<&'s str, ExprId>;

/// The names `stmts` may assign (assignment targets and loop variables, nested ones too).
fn assigned_names<'s>(stmts: &'s [Statement], out: &mut Vec<&'s str>) {
    for s in stmts {
        match s {
            Statement::Assign {
                target: flat::Expr::Var { name, .. },
                ..
            } => out.push(name.as_str()),
            Statement::If {
                branches, else_, ..
            } => {
                for (_, body) in branches {
                    assigned_names(body, out);
                }
                assigned_names(else_, out);
            }
            Statement::For { var, body, .. } => {
                out.push(var.as_str());
                assigned_names(body, out);
            }
            _ => {}
        }
    }
}

impl<'a> Cx<'a> {
    /// Execute statements symbolically: `env` maps each name to its current value.
    fn statements<'s>(&mut self, stmts: &'s [Statement], env: &mut Env<'s>) -> Option<()>
    where
        'a: 's,
    {
        for s in stmts {
            self.budget = self.budget.checked_sub(1)?;
            self.work.set(self.work.get().checked_sub(1)?);
            match s {
                Statement::Assign { target, value, .. } => self.assign(target, value, env)?,
                Statement::Assert {
                    condition,
                    message,
                    level,
                    ..
                } if self.asserts.is_some() => {
                    let cond = self.expr(condition, env)?;
                    let msg = match self.expr(message, env) {
                        Some(m) => m,
                        None => {
                            let text = format!("assertion in `{}` failed", self.f.name);
                            self.arena.str(&text)
                        }
                    };
                    let level = *level;
                    if let Some(list) = &mut self.asserts {
                        list.push(InlinedAssert { cond, msg, level });
                    }
                }
                Statement::If {
                    branches, else_, ..
                } => self.if_statement(branches, else_, env)?,
                Statement::For {
                    var, range, body, ..
                } => {
                    let r = self.expr(range, env)?;
                    let values = match ao::items(self.arena, r) {
                        Some(xs) => xs,
                        None => vec![r],
                    };
                    let shadowed = env.get(var.as_str()).copied();
                    for v in values {
                        env.insert(var.as_str(), v);
                        self.statements(body, env)?;
                    }
                    match shadowed {
                        Some(x) => env.insert(var.as_str(), x),
                        None => env.remove(var.as_str()),
                    };
                }
                _ => return None,
            }
        }
        Some(())
    }

    /// `if c1 then ... elseif ... else ... end if`: every branch is executed on its own copy
    /// of the values, then each variable gets `if c1 then v1 elseif ... else v_else` (a
    /// variable a branch leaves unassigned stays unassigned there).
    fn if_statement<'s>(
        &mut self,
        branches: &'s [(flat::Expr, Vec<Statement>)],
        else_: &'s [Statement],
        env: &mut Env<'s>,
    ) -> Option<()>
    where
        'a: 's,
    {
        let mut conds = Vec::with_capacity(branches.len());
        let mut outcomes: Vec<Env<'s>> = Vec::with_capacity(branches.len() + 1);
        for (c, body) in branches {
            let c = self.expr(c, env)?;
            if ao::is_array(self.arena, c) {
                return None;
            }
            let mut branch_env = env.clone();
            self.statements(body, &mut branch_env)?;
            conds.push(c);
            outcomes.push(branch_env);
        }
        let mut else_env = env.clone();
        self.statements(else_, &mut else_env)?;
        // only what a branch assigns can differ from before the `if` (merging every name
        // in scope at every `if` made long device functions quadratic)
        let mut names: Vec<&'s str> = Vec::new();
        for (_, body) in branches {
            assigned_names(body, &mut names);
        }
        assigned_names(else_, &mut names);
        names.sort_unstable();
        names.dedup();
        names.retain(|n| {
            outcomes
                .iter()
                .chain([&else_env])
                .any(|e| e.contains_key(n))
        });
        let unassigned = self.arena.str(UNASSIGNED);
        for name in names {
            let mut acc = else_env.get(name).copied().unwrap_or(unassigned);
            for (c, branch_env) in conds.iter().zip(&outcomes).rev() {
                let v = branch_env.get(name).copied().unwrap_or(unassigned);
                let c = *c;
                acc = if v == acc {
                    acc
                } else if v == unassigned || acc == unassigned {
                    self.arena.if_(c, v, acc)
                } else {
                    ao::map2(self.arena, v, acc, &mut |a, x, y| Some(a.if_(c, x, y)))?
                };
            }
            env.insert(name, acc);
        }
        Some(())
    }

    /// `x := value` or `x[i, j] := value` (constant subscripts) to the output or a local.
    fn assign<'s>(
        &mut self,
        target: &'s flat::Expr,
        value: &flat::Expr,
        env: &mut Env<'s>,
    ) -> Option<()>
    where
        'a: 's,
    {
        let flat::Expr::Var { name, subscripts } = target else {
            return None;
        };
        let f = self.f;
        let decl = f
            .outputs
            .iter()
            .chain(&f.locals)
            .find(|v| v.name == *name)?;
        let v = self.expr(value, env)?;
        if subscripts.is_empty() {
            env.insert(name.as_str(), v);
            return Some(());
        }
        let mut idx = Vec::with_capacity(subscripts.len());
        for s in subscripts {
            let flat::Subscript::Index(ix) = s else {
                return None;
            };
            let k = self.expr(ix, env)?;
            idx.push(ao::const_index(self.arena, k)?);
        }
        let current = match env.get(name.as_str()) {
            Some(&c) => c,
            None => self.unassigned_array(&decl.dims, env)?,
        };
        let updated = ao::set_element(self.arena, current, &idx, v)?;
        env.insert(name.as_str(), updated);
        Some(())
    }

    /// An array of the declared (constant) dimensions whose elements are all unassigned.
    fn unassigned_array(&mut self, dims: &[Option<flat::Expr>], env: &Env<'_>) -> Option<ExprId> {
        let mut sizes = Vec::with_capacity(dims.len());
        for d in dims {
            let n = self.expr(d.as_ref()?, env)?;
            let n = self.arena.as_const(n)?;
            if n < 0.0 || n.fract() != 0.0 {
                return None;
            }
            sizes.push(n as usize);
        }
        let fill = self.arena.str(UNASSIGNED);
        Some(ao::filled(self.arena, &sizes, fill))
    }

    fn expr(&mut self, e: &flat::Expr, env: &Env<'_>) -> Option<ExprId> {
        use flat::Expr as E;
        let a = &mut *self.arena;
        Some(match e {
            E::Real(v) => a.num(*v),
            E::Integer(v) => a.num(*v as f64),
            E::Boolean(b) => a.num(if *b { 1.0 } else { 0.0 }),
            E::Enum { index, .. } => a.num(*index as f64),
            E::String(text) => a.str(text),
            E::Var { name, subscripts } => {
                let cur = *env.get(name.as_str())?;
                self.select(cur, subscripts, env)?
            }
            E::Unary { op, arg } => {
                let x = self.expr(arg, env)?;
                match op {
                    UnaryOp::Neg => ao::map1(self.arena, x, &mut |a, y| Some(a.neg(y)))?,
                    UnaryOp::Not => ao::map1(self.arena, x, &mut |a, y| Some(a.not(y)))?,
                }
            }
            E::Binary { op, lhs, rhs } => {
                let l = self.expr(lhs, env)?;
                let r = self.expr(rhs, env)?;
                self.binary(*op, l, r)?
            }
            E::If { branches, else_ } => {
                // Branches behind a constant condition are left out unevaluated: they may
                // not fit (`if size(X, 1) == nX then X else cat(1, X, {1 - sum(X)})` has
                // arrays of different sizes in its branches).
                let mut open = Vec::new();
                let mut taken: &flat::Expr = else_;
                for (c, v) in branches {
                    let c = self.expr(c, env)?;
                    if ao::is_array(self.arena, c) {
                        return None;
                    }
                    match self.arena.as_const(c) {
                        Some(x) if x != 0.0 => {
                            taken = v;
                            break;
                        }
                        Some(_) => {}
                        None => open.push((c, v)),
                    }
                }
                let mut acc = self.expr(taken, env)?;
                for (c, v) in open.into_iter().rev() {
                    let v = self.expr(v, env)?;
                    acc = ao::map2(self.arena, v, acc, &mut |a, x, y| Some(a.if_(c, x, y)))?;
                }
                acc
            }
            E::Array(items) => {
                let mut xs = Vec::with_capacity(items.len());
                for x in items {
                    xs.push(self.expr(x, env)?);
                }
                ao::array(self.arena, xs)
            }
            E::Range { start, step, stop } => self.range(start, step.as_deref(), stop, env)?,
            E::CallOutput { call, index } => {
                let E::Call { func, args } = &**call else {
                    return None;
                };
                let mut xs = Vec::with_capacity(args.len());
                for x in args {
                    xs.push(self.expr(x, env)?);
                }
                *self.user_call(func, &xs)?.get(*index)?
            }
            E::Call { func, args } => {
                let mut xs = Vec::with_capacity(args.len());
                for x in args {
                    xs.push(self.expr(x, env)?);
                }
                self.call(func, xs)?
            }
            _ => return None,
        })
    }

    /// `start:step:stop` of constants, as an array literal.
    fn range(
        &mut self,
        start: &flat::Expr,
        step: Option<&flat::Expr>,
        stop: &flat::Expr,
        env: &Env<'_>,
    ) -> Option<ExprId> {
        let mut value = |e: &flat::Expr| {
            let x = self.expr(e, env)?;
            self.arena.as_const(x)
        };
        let (a, b) = (value(start)?, value(stop)?);
        let h = match step {
            Some(s) => value(s)?,
            None => 1.0,
        };
        if h == 0.0 || !((b - a) / h).is_finite() {
            return None;
        }
        let n = ((b - a) / h).floor() + 1.0;
        if n > MAX_UNROLLED as f64 {
            return None;
        }
        let xs = (0..n.max(0.0) as usize)
            .map(|k| self.arena.num(a + k as f64 * h))
            .collect();
        Some(ao::array(self.arena, xs))
    }

    /// `x[...]` with constant indices, index vectors and `:`.
    fn select(
        &mut self,
        cur: ExprId,
        subscripts: &[flat::Subscript],
        env: &Env<'_>,
    ) -> Option<ExprId> {
        let Some((first, rest)) = subscripts.split_first() else {
            return Some(cur);
        };
        let items = ao::items(self.arena, cur)?;
        let chosen: Vec<ExprId> = match first {
            flat::Subscript::All => items,
            flat::Subscript::Index(ix) => {
                let k = self.expr(ix, env)?;
                match ao::items(self.arena, k) {
                    Some(ks) => ks
                        .into_iter()
                        .map(|k| items.get(ao::const_index(self.arena, k)? - 1).copied())
                        .collect::<Option<Vec<_>>>()?,
                    None => {
                        let x = *items.get(ao::const_index(self.arena, k)? - 1)?;
                        return self.select(x, rest, env);
                    }
                }
            }
        };
        let xs = chosen
            .into_iter()
            .map(|x| self.select(x, rest, env))
            .collect::<Option<Vec<_>>>()?;
        Some(ao::array(self.arena, xs))
    }

    fn binary(&mut self, op: BinaryOp, l: ExprId, r: ExprId) -> Option<ExprId> {
        let arrays = ao::is_array(self.arena, l) || ao::is_array(self.arena, r);
        if arrays {
            return self.array_binary(op, l, r);
        }
        let a = &mut *self.arena;
        // relations inside functions never generate events
        let rel = |a: &mut Arena, op: Rel| a.rel(op, l, r, false);
        Some(match op {
            BinaryOp::Add | BinaryOp::ElemAdd => a.add(l, r),
            BinaryOp::Sub | BinaryOp::ElemSub => a.sub(l, r),
            BinaryOp::Mul | BinaryOp::ElemMul => a.mul(l, r),
            BinaryOp::Div | BinaryOp::ElemDiv => a.div(l, r),
            BinaryOp::Pow | BinaryOp::ElemPow => a.pow(l, r),
            BinaryOp::And => a.and(l, r),
            BinaryOp::Or => a.or(l, r),
            BinaryOp::Lt => rel(a, Rel::Lt),
            BinaryOp::Le => rel(a, Rel::Le),
            BinaryOp::Gt => rel(a, Rel::Gt),
            BinaryOp::Ge => rel(a, Rel::Ge),
            BinaryOp::Eq => rel(a, Rel::Eq),
            BinaryOp::Ne => rel(a, Rel::Ne),
        })
    }

    /// Operators with an array operand, expanded into elements.
    fn array_binary(&mut self, op: BinaryOp, l: ExprId, r: ExprId) -> Option<ExprId> {
        let a = &mut *self.arena;
        let same_shape = ao::rank(a, l) == ao::rank(a, r);
        match op {
            BinaryOp::Add | BinaryOp::Sub if !same_shape => None,
            BinaryOp::Add | BinaryOp::ElemAdd => {
                ao::map2(a, l, r, &mut |a, x, y| Some(a.add(x, y)))
            }
            BinaryOp::Sub | BinaryOp::ElemSub => {
                ao::map2(a, l, r, &mut |a, x, y| Some(a.sub(x, y)))
            }
            BinaryOp::ElemMul => ao::map2(a, l, r, &mut |a, x, y| Some(a.mul(x, y))),
            BinaryOp::ElemDiv => ao::map2(a, l, r, &mut |a, x, y| Some(a.div(x, y))),
            BinaryOp::ElemPow => ao::map2(a, l, r, &mut |a, x, y| Some(a.pow(x, y))),
            BinaryOp::Mul => ao::product(a, l, r),
            BinaryOp::Div if !ao::is_array(a, r) => {
                ao::map2(a, l, r, &mut |a, x, y| Some(a.div(x, y)))
            }
            _ => None,
        }
    }

    fn call(&mut self, func: &str, args: Vec<ExprId>) -> Option<ExprId> {
        let any_array = args.iter().any(|&x| ao::is_array(self.arena, x));
        match (func, args.as_slice()) {
            ("noEvent" | "Real", [x]) => Some(*x),
            ("smooth", [_, x]) => Some(*x),
            ("cross", [x, y]) => ao::cross(self.arena, *x, *y),
            ("outerProduct", [x, y]) => ao::outer_product(self.arena, *x, *y),
            ("identity", [n]) => ao::identity(self.arena, *n),
            ("cat", [k, parts @ ..]) => {
                let k = ao::const_index(self.arena, *k)?;
                ao::cat(self.arena, k, parts)
            }
            ("skew", [x]) => ao::skew(self.arena, *x),
            ("diagonal", [v]) => ao::diagonal(self.arena, *v),
            ("transpose", [m]) => ao::transpose(self.arena, *m),
            ("size", [x, d]) => {
                let mut cur = *x;
                for _ in 1..ao::const_index(self.arena, *d)? {
                    cur = *ao::items(self.arena, cur)?.first()?;
                }
                let n = ao::items(self.arena, cur)?.len();
                Some(self.arena.num(n as f64))
            }
            ("zeros" | "ones", dims) if !dims.is_empty() => {
                let sizes = dims
                    .iter()
                    .map(|&d| {
                        let n = self.arena.as_const(d)?;
                        (n >= 0.0 && n.fract() == 0.0).then_some(n as usize)
                    })
                    .collect::<Option<Vec<_>>>()?;
                let fill = self.arena.num(if func == "ones" { 1.0 } else { 0.0 });
                Some(ao::filled(self.arena, &sizes, fill))
            }
            _ if PURE_BUILTINS.contains(&func) => {
                if any_array && !ARRAY_BUILTINS.contains(&func) {
                    // a scalar function applied element by element
                    return match args.as_slice() {
                        [x] => ao::map1(self.arena, *x, &mut |a, y| Some(a.call(func, vec![y]))),
                        [x, y] => ao::map2(self.arena, *x, *y, &mut |a, p, q| {
                            Some(a.call(func, vec![p, q]))
                        }),
                        _ => None,
                    };
                }
                Some(self.arena.call(func, args))
            }
            // `Modelica.Math.cos` and friends: `external "builtin"` bodies are the built-in
            _ if builtin_body(self.functions, func).is_some() => {
                let name = builtin_body(self.functions, func)?;
                self.call(&name, args)
            }
            _ if self.functions.contains_key(func) => {
                // in an expression, a call gives its first output
                match self.user_call(func, &args) {
                    Some(outs) => outs.first().copied(),
                    None => self.opaque_call(func, args),
                }
            }
            _ => None,
        }
    }

    /// A call of a function that cannot be inlined itself (a nonlinear solve, an external
    /// function, a body too long to unroll), kept as a call in the inlined value: the
    /// surrounding body still dissolves into equations. `setState_phX(p, h)` of an ideal gas,
    /// `state := ThermodynamicState(p = p, T = T_h(h))`, so gives `state.p = p` (solvable for
    /// `p`) and `state.T = T_h(h)`. Only pure functions whose first output is a scalar: the
    /// call's value stands for that output.
    fn opaque_call(&mut self, func: &str, args: Vec<ExprId>) -> Option<ExprId> {
        let f = self.functions.get(func)?;
        let first = f.outputs.first()?;
        if f.is_impure || !first.dims.is_empty() || args.len() != f.inputs.len() {
            return None;
        }
        let ranks_fit = f
            .inputs
            .iter()
            .zip(&args)
            .all(|(inp, &a)| ao::rank(self.arena, a) == inp.dims.len());
        ranks_fit.then(|| self.arena.call(func, args))
    }

    /// The values of all outputs of a call of another user function, inlined.
    fn user_call(&mut self, func: &str, args: &[ExprId]) -> Option<Vec<ExprId>> {
        let keep = self.asserts.is_some();
        let mut outer = self.outer.to_vec();
        outer.push(self.f.name.as_str());
        let (outs, inner) = inline_nested(
            self.arena,
            self.functions,
            func,
            args,
            &outer,
            self.work,
            keep,
        )?;
        if let Some(list) = &mut self.asserts {
            list.extend(inner);
        }
        Some(outs)
    }
}

/// Inline, in every equation, the calls that kept their call for index reduction (see the
/// module documentation). Runs after index reduction.
/// The built-in an `external "builtin"` function stands for (`Modelica.Math.sin` -> `sin`).
fn builtin_body(functions: &Functions, func: &str) -> Option<String> {
    match &functions.get(func)?.body {
        FunctionBody::External { language, name, .. }
            if language == "builtin" && PURE_BUILTINS.contains(&name.as_str()) =>
        {
            Some(name.clone())
        }
        _ => None,
    }
}

pub fn inline_after_index_reduction(m: &mut Model) {
    if m.arena.late_inline.is_empty() {
        return;
    }
    let mut memo: HashMap<ExprId, ExprId> = HashMap::default();
    let mut on_call = |a: &mut Arena, f: &str, args: &[ExprId]| {
        let late = a.late_inline.clone();
        late.contains_key(f)
            .then(|| inline_call(a, &late, f, args))
            .flatten()
    };
    for eqs in [&mut m.eqs, &mut m.init_eqs] {
        for eq in eqs.iter_mut() {
            map_exprs(&mut eq.body, &mut |e| {
                m.arena.rewrite_calls(e, &mut on_call, &mut memo)
            });
        }
    }
    expand_late_calls(m);
}

/// `(o1, o2, ...) = f(args)` (array or record outputs) of a function kept for its
/// `derivative` annotation becomes one scalar equation per output element. Run before index
/// reduction, which cannot differentiate a unit of several outputs (MultiBody's
/// `frame_b.r_0 = frame_a.r_0 + resolve1(R, r)` where `r_0` is differentiated twice), and
/// after it, so that no such unit of fixed causality is left in an algebraic loop (the
/// `resolve1(R_rel, f)` between two joints).
pub fn expand_late_calls(m: &mut Model) {
    let late = m.arena.late_inline.clone();
    for which in [false, true] {
        let n = if which { m.init_eqs.len() } else { m.eqs.len() };
        for i in 0..n {
            let eq = if which { &m.init_eqs[i] } else { &m.eqs[i] };
            let EqBody::Call {
                outputs,
                func,
                args,
            } = &eq.body
            else {
                continue;
            };
            if !late.contains_key(func.as_str()) {
                continue;
            }
            let (outputs, func, args, origin) = (
                outputs.clone(),
                func.clone(),
                args.clone(),
                eq.origin.clone(),
            );
            let Some((values, asserts)) = inline_outputs(&mut m.arena, &late, &func, &args) else {
                continue;
            };
            if !asserts.is_empty() {
                continue;
            }
            let mut leaves = Vec::new();
            for v in values {
                ao::leaves(&m.arena, v, &mut leaves);
            }
            if leaves.len() != outputs.len() {
                continue;
            }
            let mut scalar: Vec<SEq> = outputs
                .iter()
                .zip(leaves)
                .filter_map(|(o, v)| {
                    let lhs = m.arena.var((*o)?);
                    Some(SEq::new(EqBody::Eq { lhs, rhs: v }, origin.clone()))
                })
                .collect();
            if scalar.is_empty() {
                continue;
            }
            let first = scalar.remove(0);
            let target = if which { &mut m.init_eqs } else { &mut m.eqs };
            target[i] = first;
            target.extend(scalar);
        }
    }
}

/// The simple functions to inline after index reduction: those with a `derivative`
/// annotation and the derivative functions named by one (index reduction creates their
/// calls).
pub fn late_inline_functions(
    functions: &Functions,
    fder: &HashMap<String, (String, Vec<bool>)>,
) -> Functions {
    let mut out = Functions::new();
    for (f, (fd, _)) in fder {
        for name in [f, fd] {
            if let Some(func) = functions.get(name) {
                if is_straight_line(func) {
                    out.insert(name.clone(), func.clone());
                }
            }
        }
    }
    out
}

/// Quick shape test of [`inline_call`]'s requirements (the arguments are checked per call).
fn is_straight_line(f: &Function) -> bool {
    let FunctionBody::Algorithm(stmts) = &f.body else {
        return false;
    };
    // array and several outputs too: `(o1, o2) = f(x)` units are expanded after index
    // reduction (`expand_late_calls`); expression calls only inline scalar outputs
    !f.is_impure
        && !f.outputs.is_empty()
        && stmts.iter().all(|s| matches!(s, Statement::Assign { .. }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests_source::flatten_source;

    /// A function with array inputs, a protected array, slices, products, `cross`,
    /// `transpose`, an elementwise product and an unrolled loop of element assignments.
    const MIX: &str = r#"model UsesMix
  function mix
    input Real T[2, 2];
    input Real v[2];
    output Real r[5];
  protected
    Real w[3];
    Real u[2];
  algorithm
    w := cross({v[1], v[2], 0}, {0, 0, 1});
    u := transpose(T)*v;
    r[1] := T[1, :]*v;
    r[2] := v*T*v;
    r[3] := sum(w .* w);
    for i in 1:2 loop
      r[3 + i] := u[i]/2;
    end for;
  end mix;
  function half
    input Real x;
    output Real r[2];
  algorithm
    r[1] := x/2;
  end half;
  function total
    input Real x[3];
    output Real s;
  algorithm
    s := 0;
    for v in x loop
      s := s + v;
    end for;
  end total;
  function clip
    input Real x;
    output Real y[2];
  algorithm
    if x > 1 then
      y := {1, x - 1};
    elseif x < -1 then
      y[1] := -1;
      y[2] := x + 1;
    else
      y := {x, 0};
    end if;
  end clip;
  Real r[5] = mix([1, 2; 3, time], {5, 6});
  Real cl[2] = clip(time);
  Real t = total({1, 2, time});
  Real h[2] = half(time);
end UsesMix;
"#;

    fn constants(a: &Arena, e: ExprId) -> Vec<f64> {
        let mut xs = Vec::new();
        ao::leaves(a, e, &mut xs);
        xs.iter()
            .map(|&x| a.as_const(x).expect("a constant element"))
            .collect()
    }

    #[test]
    fn array_output_is_inlined_element_by_element() {
        let flat = flatten_source(MIX);
        let mut a = Arena::new();
        let vector = |a: &mut Arena, xs: &[f64]| {
            let items = xs.iter().map(|&x| a.num(x)).collect();
            ao::array(a, items)
        };
        let rows = [vector(&mut a, &[1.0, 2.0]), vector(&mut a, &[3.0, 4.0])];
        let t = ao::array(&mut a, rows.to_vec());
        let v = vector(&mut a, &[5.0, 6.0]);
        let (value, asserts) = inline_array_call(&mut a, &flat.functions, "UsesMix.mix", &[t, v])
            .expect("mix is inlinable");
        assert!(asserts.is_empty());
        // T[1,:]·v = 17, vᵀTv = 319, |v × e3|² = 61, Tᵀv/2 = {11.5, 17}
        assert_eq!(constants(&a, value), vec![17.0, 319.0, 61.0, 11.5, 17.0]);
    }

    #[test]
    fn output_with_unassigned_elements_is_not_inlined() {
        let flat = flatten_source(MIX);
        let mut a = Arena::new();
        let x = a.num(1.0);
        assert!(inline_array_call(&mut a, &flat.functions, "UsesMix.half", &[x]).is_none());
        // an array-valued function is never the value of a scalar call
        let t = a.num(0.0);
        assert!(inline_call(&mut a, &flat.functions, "UsesMix.half", &[t]).is_none());
    }

    #[test]
    fn for_loop_over_an_array_input_is_unrolled() {
        let flat = flatten_source(MIX);
        let mut a = Arena::new();
        let x = a.var(0);
        let items = vec![a.num(1.0), a.num(2.0), x];
        let arg = ao::array(&mut a, items);
        let v = inline_call(&mut a, &flat.functions, "UsesMix.total", &[arg])
            .expect("total is inlinable");
        // 1 + 2 + x, folded to 3 + x
        let three = a.num(3.0);
        assert_eq!(v, a.add(three, x));
    }

    #[test]
    fn if_statement_gives_if_expressions_of_the_branch_values() {
        let flat = flatten_source(MIX);
        let mut a = Arena::new();
        for (x, expected) in [(2.5, [1.0, 1.5]), (-3.0, [-1.0, -2.0]), (0.5, [0.5, 0.0])] {
            let arg = a.num(x);
            let (v, _) = inline_array_call(&mut a, &flat.functions, "UsesMix.clip", &[arg])
                .expect("clip is inlinable");
            assert_eq!(constants(&a, v), expected, "clip({x})");
        }
        // a variable argument keeps the choice as if-expressions
        let x = a.var(0);
        let (v, _) = inline_array_call(&mut a, &flat.functions, "UsesMix.clip", &[x])
            .expect("clip is inlinable");
        let first = ao::items(&a, v).expect("an array")[0];
        assert!(matches!(a.node(first), Node::If(..)), "{:?}", a.node(first));
    }
}
