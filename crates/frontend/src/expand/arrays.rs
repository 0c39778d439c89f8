//! Array values: element-wise combination with broadcasting, subscripts and slices, matrix
//! products, concatenation and the other shape operations of chapter 10.

use super::*;

/// 1-based index denoted by a subscript value (Integer, enumeration literal, Boolean).
pub fn subscript_index(e: &Expr) -> Option<i64> {
    match e {
        Expr::Boolean(b) => Some(*b as i64 + 1),
        other => fold::as_i64(other),
    }
}

pub(super) fn unreachable_val<T>(span: Span) -> Res<T> {
    err(span, "internal error: unexpected value shape")
}

pub(super) fn map_op(op: BinaryOp) -> FB {
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

pub(super) fn elementwise(a: &Val, b: &Val, op: FB, span: Span) -> Res<Val> {
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

pub(super) fn dot(x: Vec<Expr>, y: Vec<Expr>) -> Expr {
    let mut terms = x
        .into_iter()
        .zip(y)
        .map(|(a, b)| fold::binary(FB::Mul, a, b));
    let Some(first) = terms.next() else {
        return Expr::Integer(0);
    };
    terms.fold(first, |a, b| fold::binary(FB::Add, a, b))
}

pub(super) fn transpose(m: &Val, span: Span) -> Res<Vec<Vec<Expr>>> {
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

pub(super) fn select(v: &Val, sels: &[Sel], dims: &[usize]) -> Val {
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
pub(super) fn if_chain(k: &Expr, vals: &[Val]) -> Val {
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
pub(super) fn broadcast(v: Val, dims: &[usize]) -> Val {
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

pub(super) fn int_args(args: &[Val], span: Span) -> Res<Vec<usize>> {
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

pub(super) fn promote2(v: Val) -> Vec<Vec<Val>> {
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

pub(super) fn hcat(items: Vec<Val>, span: Span) -> Res<Vec<Vec<Val>>> {
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

pub(super) fn vcat(rows: Vec<Vec<Vec<Val>>>, span: Span) -> Res<Val> {
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
pub(super) fn matrix_of_higher(a: Val, span: Span) -> Res<Val> {
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

pub(super) fn cat(k: usize, parts: Vec<Val>, span: Span) -> Res<Val> {
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
pub(super) fn cat_inner(k: usize, parts: Vec<Val>, span: Span) -> Res<Val> {
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

pub(super) fn array_call_elements(call: &Expr, dims: &[usize]) -> Val {
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
