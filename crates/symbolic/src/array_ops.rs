//! Array algebra over arena expressions, for function bodies inlined with array inputs,
//! locals or outputs ([`crate::inline`]). Arrays are `Node::Array` literals (matrices are
//! arrays of rows); every operation is expanded into its scalar elements, so the result of
//! an inlined call is an array literal of scalar expressions that the rest of the symbolic
//! stage can differentiate and solve. Each function returns `None` when the shapes do not
//! fit (the call is then not inlined).

use crate::ir::{Arena, ExprId, Node};

/// The elements of an array literal.
pub fn items(a: &Arena, e: ExprId) -> Option<Vec<ExprId>> {
    match a.node(e) {
        Node::Array(xs) => Some(xs.to_vec()),
        _ => None,
    }
}

pub fn is_array(a: &Arena, e: ExprId) -> bool {
    matches!(a.node(e), Node::Array(_))
}

/// Number of array dimensions (0 for a scalar), read along the first elements.
pub fn rank(a: &Arena, e: ExprId) -> usize {
    let mut r = 0;
    let mut cur = e;
    while let Node::Array(xs) = a.node(cur) {
        r += 1;
        match xs.first() {
            Some(&x) => cur = x,
            None => break,
        }
    }
    r
}

pub fn array(a: &mut Arena, xs: Vec<ExprId>) -> ExprId {
    a.intern(Node::Array(xs.into_boxed_slice()))
}

/// The scalar elements of `e` in row-major order (`e` itself for a scalar).
pub fn leaves(a: &Arena, e: ExprId, out: &mut Vec<ExprId>) {
    match a.node(e) {
        Node::Array(xs) => {
            for &x in xs.iter() {
                leaves(a, x, out);
            }
        }
        _ => out.push(e),
    }
}

/// `f` applied element by element to one array (or to a scalar).
pub fn map1(
    a: &mut Arena,
    e: ExprId,
    f: &mut dyn FnMut(&mut Arena, ExprId) -> Option<ExprId>,
) -> Option<ExprId> {
    match items(a, e) {
        Some(xs) => {
            let ys = xs
                .into_iter()
                .map(|x| map1(a, x, f))
                .collect::<Option<Vec<_>>>()?;
            Some(array(a, ys))
        }
        None => f(a, e),
    }
}

/// `f` applied element by element to two operands of equal shape; a scalar operand is
/// combined with every element of the other.
pub fn map2(
    a: &mut Arena,
    l: ExprId,
    r: ExprId,
    f: &mut dyn FnMut(&mut Arena, ExprId, ExprId) -> Option<ExprId>,
) -> Option<ExprId> {
    let ys = match (items(a, l), items(a, r)) {
        (None, None) => return f(a, l, r),
        (Some(ls), Some(rs)) if ls.len() == rs.len() => ls
            .into_iter()
            .zip(rs)
            .map(|(x, y)| map2(a, x, y, f))
            .collect::<Option<Vec<_>>>()?,
        (Some(ls), None) => ls
            .into_iter()
            .map(|x| map2(a, x, r, f))
            .collect::<Option<Vec<_>>>()?,
        (None, Some(rs)) => rs
            .into_iter()
            .map(|y| map2(a, l, y, f))
            .collect::<Option<Vec<_>>>()?,
        _ => return None,
    };
    Some(array(a, ys))
}

/// The sum of `x_i * y_i` over two vectors of equal length.
fn dot(a: &mut Arena, x: &[ExprId], y: &[ExprId]) -> Option<ExprId> {
    if x.len() != y.len() || x.iter().chain(y).any(|&e| is_array(a, e)) {
        return None;
    }
    let mut acc = a.zero();
    for (&p, &q) in x.iter().zip(y) {
        let m = a.mul(p, q);
        acc = a.add(acc, m);
    }
    Some(acc)
}

/// Rows of a matrix as vectors.
fn rows(a: &Arena, m: ExprId) -> Option<Vec<Vec<ExprId>>> {
    items(a, m)?.into_iter().map(|r| items(a, r)).collect()
}

/// `l * r` of the specification: scalar products elementwise, vector·vector is the scalar
/// product, and matrix·vector, vector·matrix, matrix·matrix are the usual products.
pub fn product(a: &mut Arena, l: ExprId, r: ExprId) -> Option<ExprId> {
    match (rank(a, l), rank(a, r)) {
        (0, _) | (_, 0) => map2(a, l, r, &mut |a, x, y| Some(a.mul(x, y))),
        (1, 1) => {
            let (x, y) = (items(a, l)?, items(a, r)?);
            dot(a, &x, &y)
        }
        (2, 1) => {
            let y = items(a, r)?;
            let out = rows(a, l)?
                .iter()
                .map(|row| dot(a, row, &y))
                .collect::<Option<Vec<_>>>()?;
            Some(array(a, out))
        }
        (1, 2) => {
            let x = items(a, l)?;
            let t = transpose(a, r)?;
            let out = rows(a, t)?
                .iter()
                .map(|col| dot(a, &x, col))
                .collect::<Option<Vec<_>>>()?;
            Some(array(a, out))
        }
        (2, 2) => {
            let t = transpose(a, r)?;
            let cols = rows(a, t)?;
            let mut out = Vec::new();
            for row in rows(a, l)? {
                let xs = cols
                    .iter()
                    .map(|col| dot(a, &row, col))
                    .collect::<Option<Vec<_>>>()?;
                out.push(array(a, xs));
            }
            Some(array(a, out))
        }
        _ => None,
    }
}

pub fn transpose(a: &mut Arena, m: ExprId) -> Option<ExprId> {
    let rs = rows(a, m)?;
    let n = rs.first().map_or(0, Vec::len);
    if rs.iter().any(|r| r.len() != n) {
        return None;
    }
    let cols: Vec<ExprId> = (0..n)
        .map(|j| {
            let col = rs.iter().map(|r| r[j]).collect();
            array(a, col)
        })
        .collect();
    Some(array(a, cols))
}

/// `cross(x, y)` of two 3-vectors.
pub fn cross(a: &mut Arena, x: ExprId, y: ExprId) -> Option<ExprId> {
    let (x, y) = (items(a, x)?, items(a, y)?);
    if x.len() != 3 || y.len() != 3 {
        return None;
    }
    let mut term = |i: usize, j: usize| {
        let p = a.mul(x[i], y[j]);
        let q = a.mul(x[j], y[i]);
        a.sub(p, q)
    };
    let out = vec![term(1, 2), term(2, 0), term(0, 1)];
    Some(array(a, out))
}

/// A constant 1-based index.
pub fn const_index(a: &Arena, e: ExprId) -> Option<usize> {
    let k = a.as_const(e)?;
    (k >= 1.0 && k.fract() == 0.0).then_some(k as usize)
}

/// `e` with the element at the 1-based position `idx` replaced by `v`.
pub fn set_element(a: &mut Arena, e: ExprId, idx: &[usize], v: ExprId) -> Option<ExprId> {
    let Some((&i, rest)) = idx.split_first() else {
        return Some(v);
    };
    let mut xs = items(a, e)?;
    let slot = xs.get_mut(i.checked_sub(1)?)?;
    *slot = set_element(a, *slot, rest, v)?;
    Some(array(a, xs))
}

/// `cat(k, a1, a2, ...)` of array literals: joined along dimension `k` (1-based); the other
/// dimensions must agree.
pub fn cat(a: &mut Arena, k: usize, parts: &[ExprId]) -> Option<ExprId> {
    if k == 0 || parts.is_empty() || parts.iter().any(|&p| rank(a, p) < k) {
        return None;
    }
    if k == 1 {
        let mut out = Vec::new();
        for &p in parts {
            out.extend(items(a, p)?);
        }
        return Some(array(a, out));
    }
    // along an inner dimension: join the sub-arrays of each outer position
    let rows: Vec<Vec<ExprId>> = parts.iter().map(|&p| items(a, p)).collect::<Option<_>>()?;
    let n = rows[0].len();
    if rows.iter().any(|r| r.len() != n) {
        return None;
    }
    let joined = (0..n)
        .map(|i| {
            let column: Vec<ExprId> = rows.iter().map(|r| r[i]).collect();
            cat(a, k - 1, &column)
        })
        .collect::<Option<Vec<_>>>()?;
    Some(array(a, joined))
}

/// An array of the given dimensions filled with `fill`.
pub fn filled(a: &mut Arena, dims: &[usize], fill: ExprId) -> ExprId {
    match dims.split_first() {
        None => fill,
        Some((&n, rest)) => {
            let x = filled(a, rest, fill);
            array(a, vec![x; n])
        }
    }
}

/// `identity(n)` for a constant `n`.
pub fn identity(a: &mut Arena, n: ExprId) -> Option<ExprId> {
    let n = a.as_const(n)?;
    if !(0.0..=1000.0).contains(&n) || n.fract() != 0.0 {
        return None;
    }
    let n = n as usize;
    let (zero, one) = (a.zero(), a.one());
    let rows = (0..n)
        .map(|i| {
            let row = (0..n).map(|j| if i == j { one } else { zero }).collect();
            array(a, row)
        })
        .collect();
    Some(array(a, rows))
}

/// `outerProduct(x, y)` of two vectors: the matrix `x[i]*y[j]`.
pub fn outer_product(a: &mut Arena, x: ExprId, y: ExprId) -> Option<ExprId> {
    let (x, y) = (items(a, x)?, items(a, y)?);
    if x.iter().chain(&y).any(|&e| is_array(a, e)) {
        return None;
    }
    let rows = x
        .iter()
        .map(|&xi| {
            let row = y.iter().map(|&yj| a.mul(xi, yj)).collect();
            array(a, row)
        })
        .collect();
    Some(array(a, rows))
}

/// `skew(x)` of a 3-vector: the matrix of `cross(x, .)`.
pub fn skew(a: &mut Arena, x: ExprId) -> Option<ExprId> {
    let x = items(a, x)?;
    if x.len() != 3 || x.iter().any(|&e| is_array(a, e)) {
        return None;
    }
    let zero = a.zero();
    let neg: Vec<ExprId> = x.iter().map(|&e| a.neg(e)).collect();
    let rows = vec![
        vec![zero, neg[2], x[1]],
        vec![x[2], zero, neg[0]],
        vec![neg[1], x[0], zero],
    ];
    let rows = rows.into_iter().map(|r| array(a, r)).collect();
    Some(array(a, rows))
}

/// `diagonal(v)`: the square matrix with `v` on its diagonal.
pub fn diagonal(a: &mut Arena, v: ExprId) -> Option<ExprId> {
    let v = items(a, v)?;
    if v.iter().any(|&e| is_array(a, e)) {
        return None;
    }
    let zero = a.zero();
    let rows = (0..v.len())
        .map(|i| {
            let row = (0..v.len())
                .map(|j| if i == j { v[i] } else { zero })
                .collect();
            array(a, row)
        })
        .collect();
    Some(array(a, rows))
}
