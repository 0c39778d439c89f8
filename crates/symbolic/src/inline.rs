//! Inlining of simple user functions into arena expressions.
//!
//! A function is *inlinable* when it has one scalar output and a straight-line body: a
//! sequence of assignments `x := expr` to its output or to scalar locals, where expressions
//! use the inputs (scalars, or arrays indexed by constant subscripts), earlier assignments,
//! literals, operators and pure built-in functions or other inlinable functions. The call is
//! replaced by the body's value with the arguments substituted, so differentiation, solving
//! and the incidence of equations see through the function.
//!
//! Two uses:
//! - at conversion, calls of inlinable functions *without* a `derivative` annotation are
//!   inlined ([`inline_call`]), so index reduction can differentiate them;
//! - after index reduction, calls of inlinable functions that kept their call for their
//!   `derivative` annotation (and calls of the derivative functions index reduction created)
//!   are inlined too ([`inline_after_index_reduction`], the `InlineAfterIndexReduction`
//!   behaviour): an adaptor's `state1({p, pder}, time)` then reads only `p`, so sorting does
//!   not try to solve it for `pder`.

use crate::ir::{Arena, ExprId, Node, Rel};
use crate::model::{map_exprs, Model};
use moss_frontend::flat::{self, BinaryOp, Function, FunctionBody, Statement, UnaryOp};
use std::collections::{BTreeMap, HashMap};

const MAX_DEPTH: usize = 8;

/// Built-ins that may appear in an inlined body (pure functions of their arguments).
const PURE_BUILTINS: &[&str] = &[
    "abs", "sign", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh",
    "tanh", "exp", "log", "log10", "min", "max", "div", "mod", "rem", "ceil", "floor", "integer",
    "Integer", "Real", "sum", "product", "scalar",
];

type Functions = BTreeMap<String, Function>;

/// The value of `func(args)` with the body inlined, or `None` when the function is not
/// inlinable (or the arguments do not fit, e.g. an array input given as a non-literal).
pub fn inline_call(
    arena: &mut Arena,
    functions: &Functions,
    func: &str,
    args: &[ExprId],
) -> Option<ExprId> {
    inline_at_depth(arena, functions, func, args, 0)
}

fn inline_at_depth(
    arena: &mut Arena,
    functions: &Functions,
    func: &str,
    args: &[ExprId],
    depth: usize,
) -> Option<ExprId> {
    if depth >= MAX_DEPTH {
        return None;
    }
    let f = functions.get(func)?;
    let FunctionBody::Algorithm(stmts) = &f.body else {
        return None;
    };
    if f.is_impure
        || f.outputs.len() != 1
        || !f.outputs[0].dims.is_empty()
        || f.locals.iter().any(|l| !l.dims.is_empty())
        || args.len() != f.inputs.len()
    {
        return None;
    }
    let mut env: HashMap<&str, ExprId> = HashMap::new();
    for (inp, &a) in f.inputs.iter().zip(args) {
        if !inp.dims.is_empty() && !matches!(arena.node(a), Node::Array(_)) {
            return None;
        }
        env.insert(inp.name.as_str(), a);
    }
    let mut cx = Cx {
        arena,
        functions,
        depth,
    };
    for s in stmts {
        let Statement::Assign { target, value, .. } = s else {
            return None;
        };
        let flat::Expr::Var { name, subscripts } = target else {
            return None;
        };
        let assignable = subscripts.is_empty()
            && (f.outputs[0].name == *name || f.locals.iter().any(|l| l.name == *name));
        if !assignable {
            return None;
        }
        let v = cx.expr(value, &env)?;
        env.insert(name.as_str(), v);
    }
    env.get(f.outputs[0].name.as_str()).copied()
}

struct Cx<'a> {
    arena: &'a mut Arena,
    functions: &'a Functions,
    depth: usize,
}

impl Cx<'_> {
    fn expr(&mut self, e: &flat::Expr, env: &HashMap<&str, ExprId>) -> Option<ExprId> {
        use flat::Expr as E;
        let a = &mut *self.arena;
        Some(match e {
            E::Real(v) => a.num(*v),
            E::Integer(v) => a.num(*v as f64),
            E::Boolean(b) => a.num(if *b { 1.0 } else { 0.0 }),
            E::Enum { index, .. } => a.num(*index as f64),
            E::Var { name, subscripts } => {
                let mut cur = *env.get(name.as_str())?;
                for s in subscripts {
                    let flat::Subscript::Index(ix) = s else {
                        return None;
                    };
                    let k = self.expr(ix, env)?;
                    let k = self.arena.as_const(k)?;
                    let Node::Array(items) = self.arena.node(cur) else {
                        return None;
                    };
                    if k < 1.0 || k.fract() != 0.0 {
                        return None;
                    }
                    cur = *items.get(k as usize - 1)?;
                }
                cur
            }
            E::Unary { op, arg } => {
                let x = self.expr(arg, env)?;
                match op {
                    UnaryOp::Neg => self.arena.neg(x),
                    UnaryOp::Not => self.arena.not(x),
                }
            }
            E::Binary { op, lhs, rhs } => {
                let l = self.expr(lhs, env)?;
                let r = self.expr(rhs, env)?;
                self.binary(*op, l, r)?
            }
            E::If { branches, else_ } => {
                let mut acc = self.expr(else_, env)?;
                for (c, v) in branches.iter().rev() {
                    let c = self.expr(c, env)?;
                    let v = self.expr(v, env)?;
                    acc = self.arena.if_(c, v, acc);
                }
                acc
            }
            E::Array(items) => {
                let mut xs = Vec::with_capacity(items.len());
                for x in items {
                    xs.push(self.expr(x, env)?);
                }
                self.arena.intern(Node::Array(xs.into_boxed_slice()))
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

    fn binary(&mut self, op: BinaryOp, l: ExprId, r: ExprId) -> Option<ExprId> {
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

    fn call(&mut self, func: &str, args: Vec<ExprId>) -> Option<ExprId> {
        match func {
            "noEvent" | "Real" if args.len() == 1 => Some(args[0]),
            "smooth" if args.len() == 2 => Some(args[1]),
            _ if PURE_BUILTINS.contains(&func) => {
                // scalar arguments only, except the reductions of an array literal
                Some(self.arena.call(func, args))
            }
            _ if self.functions.contains_key(func) => {
                inline_at_depth(self.arena, self.functions, func, &args, self.depth + 1)
            }
            _ => None,
        }
    }
}

/// Inline, in every equation, the calls that kept their call for index reduction (see the
/// module documentation). Runs after index reduction.
pub fn inline_after_index_reduction(m: &mut Model) {
    if m.arena.late_inline.is_empty() {
        return;
    }
    let mut memo: HashMap<ExprId, ExprId> = HashMap::new();
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
    !f.is_impure
        && f.outputs.len() == 1
        && f.outputs[0].dims.is_empty()
        && stmts.iter().all(|s| matches!(s, Statement::Assign { .. }))
}
