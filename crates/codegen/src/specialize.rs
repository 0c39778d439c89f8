//! Copies of functions specialized to the array sizes of their call sites.
//!
//! A function whose array inputs have open sizes (`input Real table[:, :]`, every table
//! interpolation, polynomial evaluation, the `spline` helpers) has no compiled scalar form
//! (`scalar_fn.rs`): the frame layout needs every size. At a call site the sizes are
//! usually known (an array literal of model variables, a constant table), so the call gets
//! a copy of the function with those sizes fixed: `size(table, 1)` folds to a constant,
//! local arrays sized by it get constant sizes, and calls inside that pass the array on are
//! specialized in turn (`interpolate` hands its table to `spline`). One copy serves every
//! call with the same function and sizes. Functions without open sizes, or calls whose
//! argument sizes are unknown, stay as they are.

use crate::builtins::Builtin;
use crate::func::{CBody, CFunction, FExpr, FStmt, FSub, FTarget, FVarDecl};
use crate::value::Value;
use rustc_hash::FxHashMap as HashMap;

/// Specialized copies nest at most this deep (a recursive function passing its array on).
const MAX_DEPTH: usize = 8;

/// The sizes an argument fixes: one entry per input, `None` where it fixes nothing.
type Shapes = Vec<Option<Vec<usize>>>;

/// Makes and remembers the specialized copies of one program's functions.
#[derive(Default)]
pub struct Specializer {
    copies: HashMap<(u32, Shapes), u32>,
    depth: usize,
}

impl Specializer {
    /// The copies made so far.
    pub fn copies(&self) -> Vec<u32> {
        self.copies.values().copied().collect()
    }

    /// The function to call for `f` with `args` (`known`: sizes of local arrays at the call
    /// site, for calls inside functions): `f` itself, or its copy with the open sizes of its
    /// array inputs fixed by the arguments.
    pub fn target(
        &mut self,
        funcs: &mut Vec<CFunction>,
        f: u32,
        args: &[FExpr],
        known: &HashMap<u32, Vec<usize>>,
    ) -> u32 {
        let Some(func) = funcs.get(f as usize) else {
            return f;
        };
        if !matches!(func.body, CBody::Stmts(_)) {
            return f;
        }
        let shapes: Shapes = func
            .inputs
            .iter()
            .enumerate()
            .map(|(k, d)| {
                let open = !d.dims.is_empty() && constant_dims(&d.dims).is_none();
                let shape = args.get(k).and_then(|a| shape_of(a, known))?;
                (open && shape.len() == d.dims.len()).then_some(shape)
            })
            .collect();
        if shapes.iter().all(Option::is_none) {
            return f;
        }
        let key = (f, shapes);
        if let Some(&copy) = self.copies.get(&key) {
            return copy;
        }
        if self.depth >= MAX_DEPTH {
            return f;
        }
        let mut copy = funcs[f as usize].clone();
        for (d, shape) in copy.inputs.iter_mut().zip(&key.1) {
            if let Some(shape) = shape {
                d.dims = shape
                    .iter()
                    .map(|&n| Some(FExpr::Const(Value::Int(n as i64))))
                    .collect();
            }
        }
        let id = funcs.len() as u32;
        funcs.push(copy);
        self.copies.insert(key, id);
        self.depth += 1;
        self.refine(funcs, id);
        self.depth -= 1;
        id
    }

    /// Specialize the calls inside the bodies of functions `0..n` (the program's own, not
    /// copies): a function without open sizes of its own still passes constant tables and
    /// local arrays of known size to functions with open ones (a medium's `h_T` hands its
    /// coefficient vector to `Polynomials.integralValue`).
    pub fn refine_bodies(&mut self, funcs: &mut Vec<CFunction>, n: usize) {
        for id in 0..n {
            if matches!(funcs[id].body, CBody::Stmts(_)) {
                self.refine(funcs, id as u32);
            }
        }
    }

    /// Fold the sizes that became constant in function `id` and specialize its calls.
    fn refine(&mut self, funcs: &mut Vec<CFunction>, id: u32) {
        let func = &mut funcs[id as usize];
        let mut known: HashMap<u32, Vec<usize>> = HashMap::default();
        for d in &func.inputs {
            note_dims(d, &mut known);
        }
        // locals sized by the inputs (`Real x[size(table, 1)]`), in initialization order
        for d in func.outputs.iter_mut().chain(func.initialized.iter_mut()) {
            for e in d.dims.iter_mut().flatten() {
                walk_expr_mut(e, &mut |x| fold_size(x, &known));
            }
            note_dims(d, &mut known);
        }
        for d in &mut func.initialized {
            if let Some(e) = &mut d.default {
                walk_expr_mut(e, &mut |x| fold_size(x, &known));
            }
        }
        let CBody::Stmts(stmts) = &mut func.body else {
            return;
        };
        let mut body = std::mem::take(stmts);
        let mut defaults: Vec<Option<FExpr>> = func
            .initialized
            .iter_mut()
            .map(|d| d.default.take())
            .collect();
        let mut retarget = |v: Visit| match v {
            Visit::Expr(e) => {
                fold_size(e, &known);
                if let FExpr::Call(g, args, _) = e {
                    *g = self.target(funcs, *g, args, &known);
                }
            }
            Visit::Tuple(g, args) => *g = self.target(funcs, *g, args, &known),
        };
        for s in &mut body {
            walk_stmt_mut(s, &mut retarget);
        }
        for e in defaults.iter_mut().flatten() {
            walk_expr_mut(e, &mut |x| retarget(Visit::Expr(x)));
        }
        let func = &mut funcs[id as usize];
        for (d, e) in func.initialized.iter_mut().zip(defaults) {
            d.default = e;
        }
        func.callees = called_functions(&mut body);
        func.body = CBody::Stmts(body);
    }
}

/// Record the sizes of `d` when they are all constant.
fn note_dims(d: &FVarDecl, known: &mut HashMap<u32, Vec<usize>>) {
    if let Some(dims) = constant_dims(&d.dims).filter(|v| !v.is_empty()) {
        known.insert(d.slot, dims);
    }
}

/// The sizes of a declaration whose dimensions are all integer constants.
fn constant_dims(dims: &[Option<FExpr>]) -> Option<Vec<usize>> {
    dims.iter()
        .map(|e| match e {
            Some(FExpr::Const(Value::Int(n))) => usize::try_from(*n).ok(),
            _ => None,
        })
        .collect()
}

/// The sizes of an argument: an array literal, an array constant or a local array of known
/// size.
fn shape_of(e: &FExpr, known: &HashMap<u32, Vec<usize>>) -> Option<Vec<usize>> {
    match e {
        FExpr::FlatArray(dims, _) => Some(dims.clone()),
        FExpr::Const(Value::Array(a)) => Some(a.dims.clone()),
        FExpr::Local(s) => known.get(s).cloned(),
        FExpr::Builtin(b, args) => builtin_shape(*b, args, known),
        FExpr::Array(items) => {
            let inner = match items.first() {
                Some(first) => shape_of(first, known)?,
                None => vec![],
            };
            if items
                .iter()
                .skip(1)
                .any(|x| shape_of(x, known).as_ref() != Some(&inner))
                && !inner.is_empty()
            {
                return None;
            }
            let scalar_items = inner.is_empty();
            if scalar_items && items.iter().any(|x| !is_scalar_leaf(x)) {
                return None;
            }
            Some(std::iter::once(items.len()).chain(inner).collect())
        }
        _ => None,
    }
}

/// The sizes of an array built by `ones`, `zeros`, `matrix` or `cat` from operands of
/// known sizes (`[ones(3), v, v2]` is `cat(1, cat(2, matrix(ones(3)), matrix(v), ...))`).
fn builtin_shape(
    b: Builtin,
    args: &[FExpr],
    known: &HashMap<u32, Vec<usize>>,
) -> Option<Vec<usize>> {
    let count = |e: &FExpr| match e {
        FExpr::Const(Value::Int(n)) => usize::try_from(*n).ok(),
        _ => None,
    };
    match b {
        Builtin::Ones | Builtin::Zeros => args.iter().map(count).collect(),
        Builtin::Matrix => match shape_of(args.first()?, known)?.as_slice() {
            [n] => Some(vec![*n, 1]),
            [n, m] => Some(vec![*n, *m]),
            _ => None,
        },
        Builtin::Cat => {
            let k = count(args.first()?)?.checked_sub(1)?;
            let shapes: Vec<Vec<usize>> = args[1..]
                .iter()
                .map(|a| shape_of(a, known))
                .collect::<Option<_>>()?;
            let first = shapes.first()?.clone();
            if k >= first.len()
                || shapes.iter().any(|s| {
                    s.len() != first.len() || s[..k] != first[..k] || s[k + 1..] != first[k + 1..]
                })
            {
                return None;
            }
            let mut dims = first;
            dims[k] = shapes.iter().map(|s| s[k]).sum();
            Some(dims)
        }
        _ => None,
    }
}

/// An element of an array literal that is certainly a scalar.
fn is_scalar_leaf(e: &FExpr) -> bool {
    matches!(
        e,
        FExpr::Const(Value::Real(_) | Value::Int(_) | Value::Bool(_))
            | FExpr::Mem(_)
            | FExpr::Slot(..)
            | FExpr::Alias(..)
    )
}

/// `size(a, k)` and `size(a)` of a local array of known size become constants.
fn fold_size(e: &mut FExpr, known: &HashMap<u32, Vec<usize>>) {
    let FExpr::Builtin(Builtin::Size, args) = e else {
        return;
    };
    let Some(FExpr::Local(s)) = args.first() else {
        return;
    };
    let Some(dims) = known.get(s) else {
        return;
    };
    let folded = match args.get(1) {
        None => Value::vector(dims.iter().map(|&d| Value::Int(d as i64)).collect()),
        Some(FExpr::Const(Value::Int(k))) => {
            match usize::try_from(*k - 1).ok().and_then(|k| dims.get(k)) {
                Some(&d) => Value::Int(d as i64),
                None => return,
            }
        }
        Some(_) => return,
    };
    *e = FExpr::Const(folded);
}

/// The functions called in `stmts`.
fn called_functions(stmts: &mut [FStmt]) -> std::collections::BTreeSet<u32> {
    let mut out = std::collections::BTreeSet::new();
    for s in stmts {
        walk_stmt_mut(s, &mut |v| match v {
            Visit::Expr(FExpr::Call(g, _, _)) | Visit::Tuple(g, _) => {
                out.insert(*g);
            }
            Visit::Expr(_) => {}
        });
    }
    out
}

/// What [`walk_stmt_mut`] shows its visitor: an expression, or the callee and arguments of
/// a multi-output call statement.
pub enum Visit<'a> {
    Expr(&'a mut FExpr),
    Tuple(&'a mut u32, &'a mut [FExpr]),
}

/// Apply `f` to every expression of `e`, innermost first.
pub fn walk_expr_mut(e: &mut FExpr, f: &mut dyn FnMut(&mut FExpr)) {
    match e {
        FExpr::Neg(a) | FExpr::Not(a) => walk_expr_mut(a, f),
        FExpr::Bin(_, a, b) => {
            walk_expr_mut(a, f);
            walk_expr_mut(b, f);
        }
        FExpr::Index(a, subs) => {
            walk_expr_mut(a, f);
            walk_subs_mut(subs, f);
        }
        FExpr::Builtin(_, args)
        | FExpr::Call(_, args, _)
        | FExpr::Array(args)
        | FExpr::FlatArray(_, args) => {
            for a in args {
                walk_expr_mut(a, f);
            }
        }
        FExpr::If(branches, other) => {
            for (c, x) in branches {
                walk_expr_mut(c, f);
                walk_expr_mut(x, f);
            }
            walk_expr_mut(other, f);
        }
        FExpr::Range(a, step, b) => {
            walk_expr_mut(a, f);
            if let Some(s) = step {
                walk_expr_mut(s, f);
            }
            walk_expr_mut(b, f);
        }
        FExpr::Const(_)
        | FExpr::Local(_)
        | FExpr::Mem(_)
        | FExpr::Slot(..)
        | FExpr::Alias(..)
        | FExpr::Pre(..)
        | FExpr::Time
        | FExpr::Initial
        | FExpr::Terminal
        | FExpr::Sample(_) => {}
    }
    f(e);
}

fn walk_subs_mut(subs: &mut [FSub], f: &mut dyn FnMut(&mut FExpr)) {
    for s in subs {
        if let FSub::Index(x) = s {
            walk_expr_mut(x, f);
        }
    }
}

fn walk_target_mut(t: &mut FTarget, f: &mut dyn FnMut(&mut FExpr)) {
    match t {
        FTarget::LocalIndexed(_, subs) => walk_subs_mut(subs, f),
        FTarget::Elements(ts) => {
            for t in ts {
                walk_target_mut(t, f);
            }
        }
        FTarget::Local(..) | FTarget::Slot(_) | FTarget::Alias(..) => {}
    }
}

/// Show `f` every expression of `s` (innermost first) and every multi-output call.
pub fn walk_stmt_mut(s: &mut FStmt, f: &mut dyn FnMut(Visit)) {
    let expr = |e: &mut FExpr, f: &mut dyn FnMut(Visit)| {
        walk_expr_mut(e, &mut |x| f(Visit::Expr(x)));
    };
    match s {
        FStmt::Assign(t, e) => {
            walk_target_mut(t, &mut |x| f(Visit::Expr(x)));
            expr(e, f);
        }
        FStmt::Tuple(ts, g, args) => {
            for t in ts.iter_mut().flatten() {
                walk_target_mut(t, &mut |x| f(Visit::Expr(x)));
            }
            for a in args.iter_mut() {
                expr(a, f);
            }
            f(Visit::Tuple(g, args));
        }
        FStmt::If(branches, other) => {
            for (c, body) in branches {
                expr(c, f);
                for s in body {
                    walk_stmt_mut(s, f);
                }
            }
            for s in other {
                walk_stmt_mut(s, f);
            }
        }
        FStmt::For(_, range, body) => {
            expr(range, f);
            for s in body {
                walk_stmt_mut(s, f);
            }
        }
        FStmt::While(c, body) => {
            expr(c, f);
            for s in body {
                walk_stmt_mut(s, f);
            }
        }
        FStmt::When(branches) => {
            for b in branches {
                expr(&mut b.cond, f);
                for s in &mut b.body {
                    walk_stmt_mut(s, f);
                }
            }
        }
        FStmt::Reinit(_, e) | FStmt::Terminate(e) | FStmt::Eval(e) => expr(e, f),
        FStmt::Assert(c, m, _) => {
            expr(c, f);
            expr(m, f);
        }
        FStmt::Return | FStmt::Break => {}
    }
}
