//! Array expressions of constant size inside scalar functions, taken apart element by
//! element.
//!
//! Media functions do small vector arithmetic on their mass fractions: moist air's
//! enthalpy is `{h_steam, h_air}*{X_steam, X_air}`, its state record's composition is
//! `cat(1, X, {1 - sum(X)})`. Once the call-site specialization (`specialize.rs`) has fixed
//! the sizes, every such expression has a shape known at compile time, so it becomes one
//! scalar expression per element over the frame slots of the local arrays: a dot product is
//! a sum of products, `sum` a chain of additions, a whole-array assignment one element
//! assignment per element. The elements are built in the order the tree interpreter
//! evaluates them (`func.rs` `dot`, `builtins.rs` `fold_numeric`: an accumulator starting
//! at zero), so both paths give the same numbers bit for bit.

use super::{scalar_const, Compiler, LocalArray, SExpr, SStmt};
use crate::builtins::Builtin;
use crate::func::{FExpr, FSub};
use crate::value::Value;
use moss_frontend::flat::BinaryOp;

/// Largest array expression taken apart (elements); larger ones stay with the tree
/// interpreter.
const MAX_ELEMENTS: usize = 256;

/// The elements of an array expression in row-major order, with its dimensions.
#[derive(Clone, Debug)]
pub(super) struct Elems {
    pub(super) dims: Vec<usize>,
    pub(super) items: Vec<SExpr>,
}

impl Elems {
    fn new(dims: Vec<usize>, items: Vec<SExpr>) -> Option<Elems> {
        (items.len() <= MAX_ELEMENTS && dims.iter().product::<usize>() == items.len())
            .then_some(Elems { dims, items })
    }

    fn map(self, f: impl Fn(SExpr) -> SExpr) -> Elems {
        Elems {
            dims: self.dims,
            items: self.items.into_iter().map(f).collect(),
        }
    }

    /// Row `i` (0-based) of a matrix, or the vector itself.
    fn row(&self, i: usize) -> &[SExpr] {
        let c = self.dims[1];
        &self.items[i * c..(i + 1) * c]
    }

    /// Column `j` (0-based) of a matrix.
    fn column(&self, j: usize) -> Vec<SExpr> {
        let (r, c) = (self.dims[0], self.dims[1]);
        (0..r).map(|i| self.items[i * c + j].clone()).collect()
    }
}

/// `p[1]*q[1] + p[2]*q[2] + ...` accumulated from zero, as the tree interpreter's `dot`.
fn dot(p: &[SExpr], q: &[SExpr]) -> SExpr {
    p.iter().zip(q).fold(SExpr::Const(0.0), |acc, (a, b)| {
        SExpr::Bin(
            BinaryOp::Add,
            Box::new(acc),
            Box::new(SExpr::Bin(
                BinaryOp::Mul,
                Box::new(a.clone()),
                Box::new(b.clone()),
            )),
        )
    })
}

/// The 1-based indices of the element at row-major position `k` of an array of `dims`.
fn indices_of(mut k: usize, dims: &[usize]) -> Vec<SExpr> {
    let mut idx = vec![SExpr::Const(0.0); dims.len()];
    for (slot, &n) in idx.iter_mut().zip(dims).rev() {
        *slot = SExpr::Const((k % n + 1) as f64);
        k /= n;
    }
    idx
}

/// The value of an expression made of constants only.
pub(super) fn constant(e: &SExpr) -> Option<f64> {
    match e {
        SExpr::Const(x) => Some(*x),
        SExpr::Neg(a) => Some(-constant(a)?),
        SExpr::Bin(op, a, b) => Some(super::bin(*op, constant(a)?, constant(b)?)),
        _ => None,
    }
}

/// A constant count (a dimension given to `fill` or `zeros`).
fn count(e: &SExpr) -> Option<usize> {
    let x = constant(e)?;
    (x >= 0.0 && x.fract() == 0.0).then_some(x as usize)
}

impl Compiler<'_> {
    /// The elements of an array-valued expression whose size is known now, or `None` (a
    /// scalar, an array of open size, or an operation this does not take apart).
    pub(super) fn elements(&self, e: &FExpr) -> Option<Elems> {
        match e {
            FExpr::Local(s) => {
                let a = self.arrays.get(s)?;
                local_elements(a)
            }
            FExpr::Const(Value::Array(a)) => Elems::new(
                a.dims.clone(),
                a.data
                    .iter()
                    .map(|x| scalar_const(x).map(SExpr::Const))
                    .collect::<Option<_>>()?,
            ),
            FExpr::Array(items) => self.literal(items),
            FExpr::FlatArray(dims, leaves) => Elems::new(
                dims.clone(),
                leaves.iter().map(|x| self.expr(x)).collect::<Option<_>>()?,
            ),
            FExpr::Neg(a) => Some(self.elements(a)?.map(|x| SExpr::Neg(Box::new(x)))),
            FExpr::Bin(op, a, b) => self.array_binary(*op, a, b),
            FExpr::If(branches, else_) => self.array_if(branches, else_),
            FExpr::Index(base, subs) => self.slice(base, subs),
            FExpr::Builtin(b, args) => self.array_builtin(*b, args),
            _ => None,
        }
    }

    /// `{a, b, ...}`: scalars make a vector, arrays of one size a higher-dimensional array.
    fn literal(&self, items: &[FExpr]) -> Option<Elems> {
        if let Some(scalars) = items
            .iter()
            .map(|x| self.expr(x))
            .collect::<Option<Vec<_>>>()
        {
            return Elems::new(vec![scalars.len()], scalars);
        }
        let parts: Vec<Elems> = items
            .iter()
            .map(|x| self.elements(x))
            .collect::<Option<_>>()?;
        let inner = parts.first()?.dims.clone();
        if parts.iter().any(|p| p.dims != inner) {
            return None;
        }
        let dims = std::iter::once(parts.len()).chain(inner).collect();
        Elems::new(dims, parts.into_iter().flat_map(|p| p.items).collect())
    }

    /// An operand that is a scalar or an array.
    fn operand(&self, e: &FExpr) -> Option<Result<SExpr, Elems>> {
        if let Some(x) = self.expr(e) {
            return Some(Ok(x));
        }
        self.elements(e).map(Err)
    }

    /// A binary operation with an array result: element-wise operators, a scalar times an
    /// array, an array divided by a scalar, and the matrix products of `*`.
    fn array_binary(&self, op: BinaryOp, a: &FExpr, b: &FExpr) -> Option<Elems> {
        use BinaryOp::*;
        let bin = |x: SExpr, y: SExpr| SExpr::Bin(op, Box::new(x), Box::new(y));
        match (self.operand(a)?, self.operand(b)?) {
            (Err(x), Err(y)) => match op {
                Add | Sub | ElemAdd | ElemSub | ElemMul | ElemDiv | ElemPow if x.dims == y.dims => {
                    let items = x.items.into_iter().zip(y.items).map(|(p, q)| bin(p, q));
                    Elems::new(x.dims, items.collect())
                }
                Mul => matrix_product(&x, &y),
                _ => None,
            },
            (Err(x), Ok(s)) => match op {
                Mul | Div | ElemAdd | ElemSub | ElemMul | ElemDiv | ElemPow => {
                    Some(x.map(|p| bin(p, s.clone())))
                }
                _ => None,
            },
            (Ok(s), Err(y)) => match op {
                Mul | ElemAdd | ElemSub | ElemMul | ElemDiv | ElemPow => {
                    Some(y.map(|q| bin(s.clone(), q)))
                }
                _ => None,
            },
            (Ok(_), Ok(_)) => None,
        }
    }

    /// `if c then A else B` with arrays of one size: decided now when the conditions are
    /// constant (`size(X, 1) == nX` once the size is fixed), else element by element.
    fn array_if(&self, branches: &[(FExpr, FExpr)], else_: &FExpr) -> Option<Elems> {
        let mut open = Vec::new();
        for (c, v) in branches {
            let c = self.expr(c)?;
            match constant(&c) {
                Some(x) if x != 0.0 && open.is_empty() => return self.elements(v),
                Some(_) if x_is_false(&c) => {}
                _ => open.push((c, self.elements(v)?)),
            }
        }
        let other = self.elements(else_)?;
        if open.is_empty() {
            return Some(other);
        }
        if open.iter().any(|(_, v)| v.dims != other.dims) {
            return None;
        }
        let items = (0..other.items.len())
            .map(|k| {
                SExpr::If(
                    open.iter()
                        .map(|(c, v)| (c.clone(), v.items[k].clone()))
                        .collect(),
                    Box::new(other.items[k].clone()),
                )
            })
            .collect();
        Elems::new(other.dims, items)
    }

    /// `a[...]` with ranges, `:` or constant index vectors among its subscripts (a scalar
    /// element is `Compiler::expr`'s).
    fn slice(&self, base: &FExpr, subs: &[FSub]) -> Option<Elems> {
        let local = match base {
            FExpr::Local(s) => self.arrays.get(s),
            _ => None,
        };
        let whole = match local {
            Some(_) => None,
            None => Some(self.elements(base)?),
        };
        let dims: Vec<usize> = match (local, &whole) {
            (Some(a), _) => a.dims.to_vec(),
            (None, Some(w)) => w.dims.clone(),
            (None, None) => return None,
        };
        if subs.len() != dims.len() {
            return None;
        }
        // per dimension: the chosen 1-based indices, and whether the dimension is kept
        let mut picks: Vec<(Vec<SExpr>, bool)> = Vec::with_capacity(dims.len());
        for (s, &n) in subs.iter().zip(&dims) {
            picks.push(match s {
                FSub::All => ((1..=n).map(|i| SExpr::Const(i as f64)).collect(), true),
                FSub::Index(FExpr::Range(a, step, b)) => (self.range(a, step.as_deref(), b)?, true),
                FSub::Index(FExpr::Const(Value::Array(v))) if v.dims.len() == 1 => (
                    v.data
                        .iter()
                        .map(|x| scalar_const(x).map(SExpr::Const))
                        .collect::<Option<_>>()?,
                    true,
                ),
                FSub::Index(e) => (vec![self.expr(e)?], false),
            });
        }
        if picks.iter().all(|(_, kept)| !kept) {
            return None;
        }
        let out_dims: Vec<usize> = picks
            .iter()
            .filter(|(_, kept)| *kept)
            .map(|(p, _)| p.len())
            .collect();
        let total: usize = picks.iter().map(|(p, _)| p.len()).product();
        if total > MAX_ELEMENTS {
            return None;
        }
        let mut items = Vec::with_capacity(total);
        for k in 0..total {
            // the k-th combination of picks, row-major
            let mut rest = k;
            let mut idx = vec![SExpr::Const(0.0); picks.len()];
            for (d, (p, _)) in picks.iter().enumerate().rev() {
                idx[d] = p[rest % p.len()].clone();
                rest /= p.len();
            }
            items.push(match (local, &whole) {
                (Some(a), _) => SExpr::LocalElem(a.base, a.dims.clone(), idx),
                (None, Some(w)) => {
                    let mut flat = 0usize;
                    for (i, &n) in idx.iter().zip(&w.dims) {
                        let i = count(i)?;
                        if i == 0 || i > n {
                            return None;
                        }
                        flat = flat * n + (i - 1);
                    }
                    w.items[flat].clone()
                }
                (None, None) => return None,
            });
        }
        Elems::new(out_dims, items)
    }

    /// The values of a range subscript with constant bounds.
    fn range(&self, a: &FExpr, step: Option<&FExpr>, b: &FExpr) -> Option<Vec<SExpr>> {
        let a = constant(&self.expr(a)?)?;
        let s = match step {
            Some(s) => constant(&self.expr(s)?)?,
            None => 1.0,
        };
        let b = constant(&self.expr(b)?)?;
        if s == 0.0 || a.fract() != 0.0 || s.fract() != 0.0 || b.fract() != 0.0 {
            return None;
        }
        let n = ((b - a) / s).floor() + 1.0;
        let n = if n > 0.0 { n as usize } else { 0 };
        (n <= MAX_ELEMENTS).then(|| (0..n).map(|k| SExpr::Const(a + k as f64 * s)).collect())
    }

    /// `fill`, `zeros`, `ones` of constant sizes, `cat`, `transpose`, `matrix`, and the identities
    /// (`noEvent`, `smooth`, `homotopy`) around an array.
    fn array_builtin(&self, b: Builtin, args: &[FExpr]) -> Option<Elems> {
        let counts = |xs: &[FExpr]| -> Option<Vec<usize>> {
            xs.iter().map(|x| count(&self.expr(x)?)).collect()
        };
        match b {
            Builtin::Fill if !args.is_empty() => {
                let v = self.expr(&args[0])?;
                let dims = counts(&args[1..])?;
                let n = dims.iter().product();
                Elems::new(dims, vec![v; n])
            }
            Builtin::Zeros | Builtin::Ones => {
                let dims = counts(args)?;
                let n = dims.iter().product();
                let v = if b == Builtin::Zeros { 0.0 } else { 1.0 };
                Elems::new(dims, vec![SExpr::Const(v); n])
            }
            Builtin::Cat if args.len() >= 2 => {
                let k = count(&self.expr(&args[0])?)?;
                let parts: Vec<Elems> = args[1..]
                    .iter()
                    .map(|x| self.elements(x))
                    .collect::<Option<_>>()?;
                concatenate(k, &parts)
            }
            Builtin::Transpose if args.len() == 1 => {
                let m = self.elements(&args[0])?;
                if m.dims.len() != 2 {
                    return None;
                }
                let (r, c) = (m.dims[0], m.dims[1]);
                let items = (0..c).flat_map(|j| m.column(j)).collect();
                Elems::new(vec![c, r], items)
            }
            // a vector as a one-column matrix
            Builtin::Matrix if args.len() == 1 => {
                let x = self.elements(&args[0])?;
                match x.dims.as_slice() {
                    [n] => Elems::new(vec![*n, 1], x.items),
                    [_, _] => Some(x),
                    _ => None,
                }
            }
            Builtin::NoEvent | Builtin::Homotopy if !args.is_empty() => self.elements(&args[0]),
            Builtin::Smooth if !args.is_empty() => self.elements(args.last()?),
            _ => None,
        }
    }

    /// Scalar results of array operands: `v*w` of two vectors, `sum`, `product` and
    /// `scalar` of an array.
    pub(super) fn array_reduction(&self, e: &FExpr) -> Option<SExpr> {
        match e {
            FExpr::Bin(BinaryOp::Mul, a, b) => {
                let (x, y) = (self.elements(a)?, self.elements(b)?);
                (x.dims.len() == 1 && x.dims == y.dims).then(|| dot(&x.items, &y.items))
            }
            FExpr::Builtin(b @ (Builtin::Sum | Builtin::Product), args) if args.len() == 1 => {
                let x = self.elements(&args[0])?;
                let (op, init) = match b {
                    Builtin::Sum => (BinaryOp::Add, 0.0),
                    _ => (BinaryOp::Mul, 1.0),
                };
                Some(x.items.into_iter().fold(SExpr::Const(init), |acc, p| {
                    SExpr::Bin(op, Box::new(acc), Box::new(p))
                }))
            }
            FExpr::Builtin(Builtin::Scalar, args) if args.len() == 1 => {
                let x = self.elements(&args[0])?;
                (x.items.len() == 1).then(|| x.items[0].clone())
            }
            FExpr::Builtin(Builtin::Size, args) => {
                let FExpr::Local(s) = args.first()? else {
                    return None;
                };
                let a = self.arrays.get(s)?;
                let k = count(&self.expr(args.get(1)?)?)?;
                let n = *a.dims.get(k.checked_sub(1)?)?;
                Some(SExpr::Const(n as f64))
            }
            _ => None,
        }
    }

    /// `x := e` for a whole local array `x`: one element assignment per element, or `None`
    /// when the sizes differ or an element reads one written before it (`x := {x[2], x[1]}`
    /// would need a copy).
    pub(super) fn assign_whole(&self, a: &LocalArray, e: &FExpr) -> Option<Vec<SStmt>> {
        let x = self.elements(e)?;
        if x.dims.as_slice() != &*a.dims {
            return None;
        }
        let mut out = Vec::with_capacity(x.items.len());
        for (k, item) in x.items.into_iter().enumerate() {
            if reads_earlier_element(&item, a, k) {
                return None;
            }
            out.push(SStmt::AssignElem(
                a.base,
                a.dims.clone(),
                indices_of(k, &a.dims),
                a.ty,
                item,
            ));
        }
        Some(out)
    }
}

fn x_is_false(c: &SExpr) -> bool {
    constant(c) == Some(0.0)
}

/// Every element of a local array, read in place.
fn local_elements(a: &LocalArray) -> Option<Elems> {
    let n: usize = a.dims.iter().product();
    Elems::new(
        a.dims.to_vec(),
        (0..n)
            .map(|k| SExpr::LocalElem(a.base, a.dims.clone(), indices_of(k, &a.dims)))
            .collect(),
    )
}

/// `x*y` of arrays with an array result: matrix times vector, vector times matrix, matrix
/// times matrix (a vector times a vector is a scalar: [`Compiler::array_reduction`]).
fn matrix_product(x: &Elems, y: &Elems) -> Option<Elems> {
    match (x.dims.len(), y.dims.len()) {
        (2, 1) if x.dims[1] == y.dims[0] => {
            let items = (0..x.dims[0]).map(|i| dot(x.row(i), &y.items)).collect();
            Elems::new(vec![x.dims[0]], items)
        }
        (1, 2) if x.dims[0] == y.dims[0] => {
            let items = (0..y.dims[1])
                .map(|j| dot(&x.items, &y.column(j)))
                .collect();
            Elems::new(vec![y.dims[1]], items)
        }
        (2, 2) if x.dims[1] == y.dims[0] => {
            let (r, c) = (x.dims[0], y.dims[1]);
            let columns: Vec<Vec<SExpr>> = (0..c).map(|j| y.column(j)).collect();
            let items = (0..r)
                .flat_map(|i| columns.iter().map(move |col| dot(x.row(i), col)))
                .collect();
            Elems::new(vec![r, c], items)
        }
        _ => None,
    }
}

/// `cat(k, parts...)`: the parts joined along dimension `k` (1-based); every other
/// dimension must agree.
fn concatenate(k: usize, parts: &[Elems]) -> Option<Elems> {
    let first = parts.first()?;
    let nd = first.dims.len();
    if k == 0 || k > nd {
        return None;
    }
    let d = k - 1;
    for p in parts {
        if p.dims.len() != nd
            || p.dims[..d] != first.dims[..d]
            || p.dims[d + 1..] != first.dims[d + 1..]
        {
            return None;
        }
    }
    let outer: usize = first.dims[..d].iter().product();
    let mut dims = first.dims.clone();
    dims[d] = parts.iter().map(|p| p.dims[d]).sum();
    let mut items = Vec::new();
    for o in 0..outer {
        for p in parts {
            let block: usize = p.dims[d..].iter().product();
            items.extend_from_slice(&p.items[o * block..(o + 1) * block]);
        }
    }
    Elems::new(dims, items)
}

/// Whether `e` reads an element of `a` at a row-major position before `k` (or one it cannot
/// place).
fn reads_earlier_element(e: &SExpr, a: &LocalArray, k: usize) -> bool {
    let rec = |x: &SExpr| reads_earlier_element(x, a, k);
    match e {
        SExpr::LocalElem(base, dims, idx) if *base == a.base => {
            let mut flat = 0usize;
            for (i, &n) in idx.iter().zip(dims.iter()) {
                match count(i) {
                    Some(i) if i >= 1 && i <= n => flat = flat * n + (i - 1),
                    _ => return true,
                }
            }
            flat < k || idx.iter().any(rec)
        }
        SExpr::LocalElem(_, _, idx) | SExpr::Elem(_, _, idx) => idx.iter().any(rec),
        SExpr::Const(_) => false,
        SExpr::Local(s) => {
            let n: u32 = a.dims.iter().product::<usize>() as u32;
            *s >= a.base && *s < a.base + n
        }
        SExpr::Neg(x) | SExpr::Not(x) | SExpr::M1(_, x) | SExpr::Floor(x) | SExpr::ToBool(x) => {
            rec(x)
        }
        SExpr::Elem1(_, x) => rec(x),
        SExpr::Bin(_, x, y) | SExpr::M2(_, x, y) => rec(x) || rec(y),
        SExpr::SemiLinear(xs) => xs.iter().any(rec),
        // a call may read the array through an argument: only scalar arguments are safe
        SExpr::Call(_, args, _) => args.iter().any(|arg| match arg {
            super::SArg::Scalar(x) => rec(x),
            super::SArg::Elements(_, xs) => xs.iter().any(rec),
            super::SArg::Array(base, dims, _) => {
                let n = dims.iter().product::<usize>() as u32;
                *base < a.base + a.dims.iter().product::<usize>() as u32 && a.base < *base + n
            }
            super::SArg::Value(_) => true,
        }),
        SExpr::If(branches, else_) => branches.iter().any(|(c, v)| rec(c) || rec(v)) || rec(else_),
    }
}
