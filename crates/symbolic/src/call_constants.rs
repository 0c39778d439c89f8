//! Outputs of a function call that are zero whatever the varying arguments are.
//!
//! A semiconductor model computes its junction capacitances with its currents in one call,
//! `(idrain, iGD, iGS, cGS, cGD) = jfetNoBypassCode(m1, p2, ..., {G.v, Dinternal, Sinternal})`,
//! and uses them in `icGS = cGS*der(vGS)`. With a model card that has no capacitances
//! (`CGS = 0`, `CGD = 0`: the MSL's Spice3 examples), `cGS` is zero at every operating
//! point, yet structurally it is just an unknown: `vGS` becomes a state whose derivative is
//! computed by dividing by zero. Other tools see the zero because they evaluate the model
//! card (it is `Evaluate=true`) and simplify the inlined function; here the body of the
//! called function is run once over an abstract domain — each value a known number or
//! unknown — with the arguments that are known at translation time (literals, constants,
//! parameters computed from constants only, even through function calls) and the others
//! unknown. `0*x`, `x*0` and `0/k` (`k` known, nonzero) are zero for an unknown `x`, as in
//! the symbolic simplification every tool applies; an if-statement with an unknown condition
//! runs both branches and keeps what they agree on. An output that comes out as exactly zero
//! becomes the constant 0 and leaves the call, so `cGS*der(vGS)` vanishes and
//! `forget_vanished_derivatives` turns `vGS` into an algebraic variable: the structure the
//! parameter values give, as for a zero capacitance parameter (see [`crate::zero_params`]).
//!
//! Anything the abstract run does not model (a `while` loop, `return`/`break` under an
//! unknown condition, external functions, strings) makes the outputs unknown: the call keeps
//! all its outputs, which is what happened before.

use crate::ir::{ExprId, Node, VarIx};
use crate::model::{EqBody, Model, VKind};
use moss_frontend::flat::{
    BinaryOp, Expr, Function, FunctionBody, ScalarType, Statement, Subscript, UnaryOp,
};
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;

/// An abstract value: a known number (Booleans as 0/1), unknown, or an array of those.
#[derive(Clone, Debug, PartialEq)]
enum AVal {
    Num(f64),
    Unknown,
    Array(Vec<AVal>),
}

impl AVal {
    fn num(&self) -> Option<f64> {
        match self {
            AVal::Num(x) => Some(*x),
            _ => None,
        }
    }

    /// What two runs (the branches of an if-statement) agree on.
    fn join(&self, other: &AVal) -> AVal {
        match (self, other) {
            (AVal::Num(a), AVal::Num(b)) if a == b || (a.is_nan() && b.is_nan()) => AVal::Num(*a),
            (AVal::Array(a), AVal::Array(b)) if a.len() == b.len() => {
                AVal::Array(a.iter().zip(b).map(|(x, y)| x.join(y)).collect())
            }
            _ => AVal::Unknown,
        }
    }
}

/// The run cannot follow the body (unsupported statement, control flow under an unknown
/// condition, recursion too deep).
struct GiveUp;

type Functions = BTreeMap<String, Function>;
type Env = HashMap<String, AVal>;

/// Deepest nesting of calls followed.
const MAX_DEPTH: usize = 16;
/// Most statements executed per call (unrolled `for` loops included).
const MAX_STEPS: usize = 100_000;

struct Runner<'f> {
    functions: &'f Functions,
    steps: usize,
    /// Per model variable: known at translation time (see [`computed_from_constants`]).
    from_constants: Vec<bool>,
}

impl Runner<'_> {
    /// The outputs of `name` called with `args`.
    fn call(&mut self, name: &str, args: &[AVal], depth: usize) -> Result<Vec<AVal>, GiveUp> {
        let f = self.functions.get(name).ok_or(GiveUp)?;
        if depth > MAX_DEPTH || f.is_impure {
            return Err(GiveUp);
        }
        let FunctionBody::Algorithm(body) = &f.body else {
            return Err(GiveUp);
        };
        let mut env = Env::default();
        for (i, input) in f.inputs.iter().enumerate() {
            let v = match args.get(i) {
                Some(v) => v.clone(),
                None => match &input.default {
                    Some(d) => self.eval(d, &env, depth)?,
                    None => return Err(GiveUp),
                },
            };
            env.insert(input.name.clone(), v);
        }
        for var in f.outputs.iter().chain(&f.locals) {
            // declarations of arrays (sizes) are not modelled: their elements are unknown
            let v = match (&var.default, var.dims.is_empty()) {
                (Some(d), true) => self.eval(d, &env, depth)?,
                _ => AVal::Unknown,
            };
            env.insert(var.name.clone(), v);
        }
        self.exec(body, &mut env, depth)?;
        Ok(f.outputs
            .iter()
            .map(|o| match o.ty {
                ScalarType::String => AVal::Unknown,
                _ => env.get(&o.name).cloned().unwrap_or(AVal::Unknown),
            })
            .collect())
    }

    /// The outputs of a call inside a body. A callee that cannot be followed (external,
    /// impure, unsupported statements) only makes its own outputs unknown: it cannot change
    /// the caller's variables.
    fn nested(&mut self, name: &str, args: &[AVal], depth: usize) -> Vec<AVal> {
        let n = self.functions.get(name).map_or(1, |f| f.outputs.len());
        match self.call(name, args, depth + 1) {
            Ok(outs) => outs,
            Err(GiveUp) => vec![AVal::Unknown; n],
        }
    }

    fn exec(&mut self, body: &[Statement], env: &mut Env, depth: usize) -> Result<(), GiveUp> {
        for s in body {
            self.steps += 1;
            if self.steps > MAX_STEPS {
                return Err(GiveUp);
            }
            match s {
                Statement::Assign { target, value, .. } => {
                    let v = self.eval(value, env, depth)?;
                    assign(target, v, env, self, depth)?;
                }
                Statement::TupleAssign { targets, value, .. } => {
                    let Expr::Call { func, args } = value else {
                        return Err(GiveUp);
                    };
                    let args = self.eval_args(args, env, depth)?;
                    let outs = self.nested(func, &args, depth);
                    for (t, v) in targets.iter().zip(outs) {
                        if let Some(t) = t {
                            assign(t, v, env, self, depth)?;
                        }
                    }
                }
                Statement::If {
                    branches, else_, ..
                } => self.exec_if(branches, else_, env, depth)?,
                Statement::For {
                    var, range, body, ..
                } => match self.range(range, env, depth) {
                    Ok(xs) => {
                        for x in xs {
                            env.insert(var.clone(), AVal::Num(x));
                            self.exec(body, env, depth)?;
                        }
                    }
                    Err(GiveUp) => forget_assigned(body, env)?,
                },
                Statement::While {
                    condition, body, ..
                } => loop {
                    match self.eval(condition, env, depth)?.num() {
                        Some(c) if c != 0.0 => self.exec(body, env, depth)?,
                        Some(_) => break,
                        // an iteration whose end depends on the unknowns (a Newton loop):
                        // what it assigns is unknown afterwards, the rest is untouched
                        None => break forget_assigned(body, env)?,
                    }
                    self.steps += 1;
                    if self.steps > MAX_STEPS {
                        return Err(GiveUp);
                    }
                },
                Statement::Assert { .. } => {}
                _ => return Err(GiveUp),
            }
        }
        Ok(())
    }

    /// An if-statement: the branch a known condition selects, or, from the first unknown
    /// condition on, every remaining branch run on its own copy and the results joined.
    fn exec_if(
        &mut self,
        branches: &[(Expr, Vec<Statement>)],
        else_: &[Statement],
        env: &mut Env,
        depth: usize,
    ) -> Result<(), GiveUp> {
        for (k, (cond, body)) in branches.iter().enumerate() {
            match self.eval(cond, env, depth)?.num() {
                Some(c) if c != 0.0 => return self.exec(body, env, depth),
                Some(_) => continue,
                None => {
                    let mut joined: Option<Env> = None;
                    let rest = branches[k..].iter().map(|(_, b)| b.as_slice());
                    for b in rest.chain(std::iter::once(else_)) {
                        let mut e = env.clone();
                        self.exec(b, &mut e, depth)?;
                        joined = Some(match joined {
                            None => e,
                            Some(j) => join_envs(&j, &e),
                        });
                    }
                    *env = joined.unwrap_or_default();
                    return Ok(());
                }
            }
        }
        self.exec(else_, env, depth)
    }

    fn range(&mut self, r: &Expr, env: &Env, depth: usize) -> Result<Vec<f64>, GiveUp> {
        let Expr::Range { start, step, stop } = r else {
            return match self.eval(r, env, depth)? {
                AVal::Array(xs) => xs.iter().map(|x| x.num().ok_or(GiveUp)).collect(),
                _ => Err(GiveUp),
            };
        };
        let num = |s: &mut Self, e: &Expr| s.eval(e, env, depth)?.num().ok_or(GiveUp);
        let (a, b) = (num(self, start)?, num(self, stop)?);
        let h = match step {
            Some(h) => num(self, h)?,
            None => 1.0,
        };
        if h == 0.0 || ((b - a) / h) > MAX_STEPS as f64 {
            return Err(GiveUp);
        }
        let n = ((b - a) / h).floor().max(-1.0) as i64 + 1;
        Ok((0..n).map(|i| a + i as f64 * h).collect())
    }

    fn eval_args(&mut self, args: &[Expr], env: &Env, depth: usize) -> Result<Vec<AVal>, GiveUp> {
        args.iter().map(|a| self.eval(a, env, depth)).collect()
    }

    fn eval(&mut self, e: &Expr, env: &Env, depth: usize) -> Result<AVal, GiveUp> {
        Ok(match e {
            Expr::Real(x) => AVal::Num(*x),
            Expr::Integer(i) => AVal::Num(*i as f64),
            Expr::Boolean(b) => AVal::Num(f64::from(u8::from(*b))),
            Expr::Enum { index, .. } => AVal::Num(f64::from(*index)),
            Expr::String(_) | Expr::Time => AVal::Unknown,
            Expr::Var { name, subscripts } => {
                let v = env.get(name).cloned().ok_or(GiveUp)?;
                self.select(v, subscripts, env, depth)?
            }
            Expr::Unary { op, arg } => match (op, self.eval(arg, env, depth)?) {
                (UnaryOp::Neg, AVal::Num(x)) => AVal::Num(-x),
                (UnaryOp::Not, AVal::Num(x)) => AVal::Num(f64::from(u8::from(x == 0.0))),
                _ => AVal::Unknown,
            },
            Expr::Binary { op, lhs, rhs } => {
                let (l, r) = (self.eval(lhs, env, depth)?, self.eval(rhs, env, depth)?);
                binary(*op, &l, &r)
            }
            Expr::If { branches, else_ } => {
                for (c, x) in branches {
                    match self.eval(c, env, depth)?.num() {
                        Some(c) if c != 0.0 => return self.eval(x, env, depth),
                        Some(_) => {}
                        None => return Ok(AVal::Unknown),
                    }
                }
                self.eval(else_, env, depth)?
            }
            Expr::Array(xs) => AVal::Array(self.eval_args(xs, env, depth)?),
            Expr::Call { func, args } => {
                let args = self.eval_args(args, env, depth)?;
                match builtin(func, &args) {
                    Some(v) => v,
                    None => self
                        .nested(func, &args, depth)
                        .into_iter()
                        .next()
                        .unwrap_or(AVal::Unknown),
                }
            }
            Expr::CallOutput { call, index } => {
                let Expr::Call { func, args } = call.as_ref() else {
                    return Err(GiveUp);
                };
                let args = self.eval_args(args, env, depth)?;
                let outs = self.nested(func, &args, depth);
                outs.into_iter().nth(*index).unwrap_or(AVal::Unknown)
            }
            Expr::Range { .. } | Expr::Tuple(_) => return Err(GiveUp),
        })
    }

    /// `v[i, j]` at known indices (1-based); an unknown index gives an unknown element.
    fn select(
        &mut self,
        mut v: AVal,
        subscripts: &[Subscript],
        env: &Env,
        depth: usize,
    ) -> Result<AVal, GiveUp> {
        for s in subscripts {
            let Subscript::Index(i) = s else {
                return Err(GiveUp);
            };
            let i = self.eval(i, env, depth)?;
            v = match (v, i.num()) {
                (AVal::Array(xs), Some(k)) if k >= 1.0 && (k as usize) <= xs.len() => {
                    xs[k as usize - 1].clone()
                }
                _ => AVal::Unknown,
            };
        }
        Ok(v)
    }
}

/// Assign `v` to a target variable (whole, or one element at known subscripts).
fn assign(
    target: &Expr,
    v: AVal,
    env: &mut Env,
    run: &mut Runner,
    depth: usize,
) -> Result<(), GiveUp> {
    let Expr::Var { name, subscripts } = target else {
        return Err(GiveUp);
    };
    if subscripts.is_empty() {
        env.insert(name.clone(), v);
        return Ok(());
    }
    let mut idx = Vec::with_capacity(subscripts.len());
    for s in subscripts {
        let Subscript::Index(i) = s else {
            return Err(GiveUp);
        };
        idx.push(run.eval(i, env, depth)?.num());
    }
    let slot = env.get_mut(name).ok_or(GiveUp)?;
    put(slot, &idx, v);
    Ok(())
}

/// Store `v` at `idx` inside `slot`; an element of an array whose shape is not modelled, or
/// at an unknown index, makes the whole variable unknown.
fn put(slot: &mut AVal, idx: &[Option<f64>], v: AVal) {
    let Some((first, rest)) = idx.split_first() else {
        *slot = v;
        return;
    };
    match (slot, first) {
        (AVal::Array(xs), Some(k)) if *k >= 1.0 && (*k as usize) <= xs.len() => {
            put(&mut xs[*k as usize - 1], rest, v)
        }
        (slot, _) => *slot = AVal::Unknown,
    }
}

/// Make every variable a loop body assigns unknown (the body runs an unknown number of
/// times). A `return` or `break` inside would also skip what follows: not modelled.
fn forget_assigned(body: &[Statement], env: &mut Env) -> Result<(), GiveUp> {
    let forget = |t: &Expr, env: &mut Env| match t {
        Expr::Var { name, .. } => {
            env.insert(name.clone(), AVal::Unknown);
            Ok(())
        }
        _ => Err(GiveUp),
    };
    for s in body {
        match s {
            Statement::Assign { target, .. } => forget(target, env)?,
            Statement::TupleAssign { targets, .. } => {
                for t in targets.iter().flatten() {
                    forget(t, env)?;
                }
            }
            Statement::If {
                branches, else_, ..
            } => {
                for b in branches
                    .iter()
                    .map(|(_, b)| b)
                    .chain(std::iter::once(else_))
                {
                    forget_assigned(b, env)?;
                }
            }
            Statement::For { var, body, .. } => {
                env.insert(var.clone(), AVal::Unknown);
                forget_assigned(body, env)?;
            }
            Statement::While { body, .. } => forget_assigned(body, env)?,
            Statement::Assert { .. } => {}
            _ => return Err(GiveUp),
        }
    }
    Ok(())
}

fn join_envs(a: &Env, b: &Env) -> Env {
    a.iter()
        .map(|(k, x)| {
            let j = b.get(k).map_or(AVal::Unknown, |y| x.join(y));
            (k.clone(), j)
        })
        .collect()
}

/// A binary operation; products and quotients with a zero factor are zero (see the module
/// documentation), everything else needs known operands.
fn binary(op: BinaryOp, l: &AVal, r: &AVal) -> AVal {
    use BinaryOp::*;
    let zero = |x: &AVal| x.num() == Some(0.0);
    let known_nonzero = |x: &AVal| x.num().is_some_and(|k| k != 0.0 && k.is_finite());
    match op {
        Mul | ElemMul if zero(l) || zero(r) => return AVal::Num(0.0),
        Div | ElemDiv if zero(l) && known_nonzero(r) => return AVal::Num(0.0),
        And if l.num() == Some(0.0) || r.num() == Some(0.0) => return AVal::Num(0.0),
        Or if known_nonzero(l) || known_nonzero(r) => return AVal::Num(1.0),
        _ => {}
    }
    let (Some(a), Some(b)) = (l.num(), r.num()) else {
        return AVal::Unknown;
    };
    let t = |c: bool| f64::from(u8::from(c));
    AVal::Num(match op {
        Add | ElemAdd => a + b,
        Sub | ElemSub => a - b,
        Mul | ElemMul => a * b,
        Div | ElemDiv => a / b,
        Pow | ElemPow => a.powf(b),
        And => t(a != 0.0 && b != 0.0),
        Or => t(a != 0.0 || b != 0.0),
        Lt => t(a < b),
        Le => t(a <= b),
        Gt => t(a > b),
        Ge => t(a >= b),
        Eq => t(a == b),
        Ne => t(a != b),
    })
}

/// Pure built-ins of known scalar arguments; `None` when `name` is not one of them.
fn builtin(name: &str, args: &[AVal]) -> Option<AVal> {
    let name = name.strip_prefix("Modelica.Math.").unwrap_or(name);
    let f: fn(f64) -> f64 = match name {
        "abs" => f64::abs,
        "sqrt" => f64::sqrt,
        "exp" => f64::exp,
        "log" => f64::ln,
        "log10" => f64::log10,
        "sin" => f64::sin,
        "cos" => f64::cos,
        "tan" => f64::tan,
        "atan" => f64::atan,
        "sinh" => f64::sinh,
        "cosh" => f64::cosh,
        "tanh" => f64::tanh,
        "floor" => f64::floor,
        "ceil" => f64::ceil,
        "integer" | "Integer" | "Real" | "noEvent" | "smooth" => |x| x,
        "min" | "max" => {
            let (Some(a), Some(b)) = (args.first()?.num(), args.get(1).and_then(AVal::num)) else {
                return Some(AVal::Unknown);
            };
            return Some(AVal::Num(if name == "min" { a.min(b) } else { a.max(b) }));
        }
        _ => return None,
    };
    // `smooth(order, x)`: the value is the last argument
    let x = args.last()?;
    Some(x.num().map_or(AVal::Unknown, |x| AVal::Num(f(x))))
}

/// The value of a model expression known at translation time: literals, constants, and
/// parameters whose bindings use only those (also through calls, each run once and kept in
/// `memo`). Everything that may change during a run or be set before one is unknown.
fn known_value(
    m: &Model,
    e: ExprId,
    run: &mut Runner,
    memo: &mut HashMap<ExprId, AVal>,
    depth: usize,
) -> AVal {
    if let Some(v) = memo.get(&e) {
        return v.clone();
    }
    let v = known_value_uncached(m, e, run, memo, depth);
    memo.insert(e, v.clone());
    v
}

fn known_value_uncached(
    m: &Model,
    e: ExprId,
    run: &mut Runner,
    memo: &mut HashMap<ExprId, AVal>,
    depth: usize,
) -> AVal {
    if depth > 64 {
        return AVal::Unknown;
    }
    if let Some(x) = m.arena.as_const(e) {
        return AVal::Num(x);
    }
    let mut sub = |x: ExprId, run: &mut Runner| known_value(m, x, run, memo, depth + 1);
    match m.arena.node(e).clone() {
        Node::Var(v) => match m.vars[v as usize].binding {
            Some(b) if run.from_constants[v as usize] => sub(b, run),
            _ => AVal::Unknown,
        },
        Node::Neg(x) => match sub(x, run) {
            AVal::Num(x) => AVal::Num(-x),
            _ => AVal::Unknown,
        },
        Node::Add(x, y) => binary(BinaryOp::Add, &sub(x, run), &sub(y, run)),
        Node::Sub(x, y) => binary(BinaryOp::Sub, &sub(x, run), &sub(y, run)),
        Node::Mul(x, y) => binary(BinaryOp::Mul, &sub(x, run), &sub(y, run)),
        Node::Div(x, y) => binary(BinaryOp::Div, &sub(x, run), &sub(y, run)),
        Node::Pow(x, y) => binary(BinaryOp::Pow, &sub(x, run), &sub(y, run)),
        Node::And(x, y) => binary(BinaryOp::And, &sub(x, run), &sub(y, run)),
        Node::Or(x, y) => binary(BinaryOp::Or, &sub(x, run), &sub(y, run)),
        Node::Not(x) => match sub(x, run) {
            AVal::Num(x) => AVal::Num(f64::from(u8::from(x == 0.0))),
            _ => AVal::Unknown,
        },
        Node::Rel { op, lhs, rhs, .. } => match (sub(lhs, run).num(), sub(rhs, run).num()) {
            (Some(l), Some(r)) => match l.partial_cmp(&r) {
                Some(ord) => AVal::Num(f64::from(u8::from(op.holds(ord)))),
                None => AVal::Unknown,
            },
            _ => AVal::Unknown,
        },
        Node::If(c, x, y) => match sub(c, run).num() {
            Some(c) if c != 0.0 => sub(x, run),
            Some(_) => sub(y, run),
            None => AVal::Unknown,
        },
        Node::Array(xs) => AVal::Array(xs.iter().map(|&x| sub(x, run)).collect()),
        Node::Call(f, args) => {
            let args: Vec<AVal> = args.iter().map(|&x| sub(x, run)).collect();
            match builtin(f.as_ref(), &args) {
                Some(v) => v,
                None => known_call(run, f.as_ref(), &args, 0),
            }
        }
        Node::CallOutput(call, k) => {
            let Node::Call(f, args) = m.arena.node(call).clone() else {
                // the call was inlined: output 0 is its value (the runtime reads it so too)
                return match (m.arena.node(call).clone(), k) {
                    (Node::Array(_), _) => AVal::Unknown,
                    (_, 0) => sub(call, run),
                    _ => AVal::Unknown,
                };
            };
            let args: Vec<AVal> = args.iter().map(|&x| sub(x, run)).collect();
            known_call(run, f.as_ref(), &args, k as usize)
        }
        _ => AVal::Unknown,
    }
}

/// Output `k` of a call whose arguments are all known (a parameter computed by a function).
fn known_call(run: &mut Runner, f: &str, args: &[AVal], k: usize) -> AVal {
    if has_unknown_in(args) {
        return AVal::Unknown;
    }
    run.steps = 0;
    match run.call(f, args, 0) {
        Ok(outs) => outs.into_iter().nth(k).unwrap_or(AVal::Unknown),
        Err(GiveUp) => AVal::Unknown,
    }
}

/// Which variables are constants, or parameters whose bindings refer (transitively) to
/// constants only? Such a parameter cannot be set before a run, so the structure may use its
/// value.
fn computed_from_constants(m: &mut Model) -> Vec<bool> {
    let n = m.vars.len();
    let mut known: Vec<bool> = m.vars.iter().map(|v| v.kind == VKind::Constant).collect();
    let mut refs: Vec<(usize, Vec<VarIx>)> = Vec::new();
    for v in 0..n {
        let sv = &m.vars[v];
        if sv.kind != VKind::Parameter || sv.fixed == Some(false) {
            continue;
        }
        let Some(b) = sv.binding else { continue };
        let mut vs = Vec::new();
        m.arena.vars_of(b, false, &mut vs);
        refs.push((v, vs));
    }
    // chains of parameters bound to parameters are short; each round settles one more link
    loop {
        let mut changed = false;
        for (v, vs) in &refs {
            if !known[*v] && vs.iter().all(|&x| known[x as usize]) {
                known[*v] = true;
                changed = true;
            }
        }
        if !changed {
            return known;
        }
    }
}

/// Make the Real outputs of call equations that are zero at every value of the unknown
/// arguments constants, and drop them from their calls. Returns their names.
pub fn fold_zero_call_outputs(m: &mut Model, functions: &Functions) -> Vec<String> {
    let from_constants = computed_from_constants(m);
    let mut run = Runner {
        functions,
        steps: 0,
        from_constants,
    };
    let mut memo = HashMap::default();
    let mut zeros: HashMap<VarIx, ExprId> = HashMap::default();
    let mut why: Vec<(VarIx, String)> = Vec::new();
    for k in 0..m.eqs.len() {
        let EqBody::Call {
            outputs,
            func,
            args,
        } = &m.eqs[k].body
        else {
            continue;
        };
        let (func, args, outputs) = (func.clone(), args.clone(), outputs.clone());
        let vals: Vec<AVal> = args
            .iter()
            .map(|&x| known_value(m, x, &mut run, &mut memo, 0))
            .collect();
        // a call of known arguments only is a parameter computation: nothing to fold
        if !has_unknown_in(&vals) {
            continue;
        }
        run.steps = 0;
        let Ok(outs) = run.call(&func, &vals, 0) else {
            continue;
        };
        let mut kept = outputs.clone();
        for (slot, out) in kept.iter_mut().zip(&outs) {
            let Some(v) = *slot else { continue };
            let sv = &m.vars[v as usize];
            let real_unknown = sv.ty == crate::program::ValueType::Real
                && sv.kind == VKind::Continuous
                && sv.der.is_none()
                && sv.der_of.is_none();
            if real_unknown && *out == AVal::Num(0.0) {
                zeros.insert(v, m.arena.zero());
                why.push((
                    v,
                    format!(
                        "an output of `{func}` that is zero whatever its varying arguments are"
                    ),
                ));
                *slot = None;
            }
        }
        if kept != outputs {
            if let EqBody::Call { outputs, .. } = &mut m.eqs[k].body {
                *outputs = kept;
            }
        }
    }
    let mut names = Vec::new();
    for (v, why) in why {
        let sv = &mut m.vars[v as usize];
        sv.kind = VKind::Constant;
        sv.binding = zeros.get(&v).copied();
        names.push(sv.name.clone());
        // listed with the evaluated parameters: `moss translate` shows what became constant
        m.evaluated.push(crate::program::EvaluatedParam {
            name: sv.name.clone(),
            value: 0.0,
            ty: sv.ty,
            why,
        });
    }
    m.substitute_vars(&zeros);
    names
}

fn has_unknown_in(vs: &[AVal]) -> bool {
    vs.iter().any(has_unknown)
}

fn has_unknown(v: &AVal) -> bool {
    match v {
        AVal::Unknown => true,
        AVal::Num(_) => false,
        AVal::Array(xs) => xs.iter().any(has_unknown),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SVar;
    use crate::program::ValueType;

    /// A record parameter bound to a call that the conversion inlined keeps the selection of
    /// its output: `m.m_dTemp = (TEMP + 273.15)[output 1]` (the Spice3 diode's device
    /// temperature). Its value is the inlined expression's, so the junction capacitance
    /// computed from it is known at translation time.
    #[test]
    fn output_of_an_inlined_call_is_its_value() {
        let mut m = Model::default();
        let mut temp = SVar::new("TEMP".into(), VKind::Parameter, ValueType::Real);
        temp.binding = Some(m.arena.num(27.0));
        let temp = m.add_var(temp);
        let t = m.arena.var(temp);
        let offset = m.arena.num(273.15);
        let sum = m.arena.add(t, offset);
        let selected = m.arena.intern(Node::CallOutput(sum, 0));
        let mut dev = SVar::new("m.m_dTemp".into(), VKind::Parameter, ValueType::Real);
        dev.binding = Some(selected);
        let dev = m.add_var(dev);
        let functions = Functions::new();
        let from_constants = computed_from_constants(&mut m);
        let mut run = Runner {
            functions: &functions,
            steps: 0,
            from_constants,
        };
        let e = m.arena.var(dev);
        let value = known_value(&m, e, &mut run, &mut HashMap::default(), 0);
        assert_eq!(value, AVal::Num(27.0 + 273.15));
    }
}
