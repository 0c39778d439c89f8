//! LAPACK routines that the MSL calls through `external "FORTRAN 77"` and that moss runs
//! natively (`Modelica.Math.Matrices.LAPACK`), written here from LAPACK's documented
//! contract. Arguments arrive as Modelica arrays (row-major values); the column-major layout
//! of the Fortran interface is the caller's concern in a compiled tool and does not arise
//! here, except for the LU factors, which are not written back (the MSL's wrappers keep them
//! in protected work arrays).

use crate::native::NativeResult;
use crate::value::{ArrayVal, VResult, Value};

/// `dgesv(n, nrhs, A, lda, ipiv, B, ldb, info)`: solve `A*X = B` by LU decomposition with
/// partial pivoting (row interchanges). Writes `ipiv` (1-based pivot rows), `B` := `X` and
/// `info`: 0 on success, `i > 0` when `U[i,i]` is exactly zero (then `X` is not computed,
/// as in LAPACK).
pub fn dgesv(args: &[Value]) -> VResult<NativeResult> {
    let n = args.first().ok_or("dgesv: missing n")?.as_i64()?.max(0) as usize;
    let a = args.get(2).ok_or("dgesv: missing A")?;
    let b = args.get(5).ok_or("dgesv: missing B")?;
    let mut lu: Vec<f64> = a
        .flatten()
        .iter()
        .map(Value::as_f64)
        .collect::<VResult<_>>()?;
    let rhs: Vec<f64> = b
        .flatten()
        .iter()
        .map(Value::as_f64)
        .collect::<VResult<_>>()?;
    if lu.len() != n * n || n == 0 || !rhs.len().is_multiple_of(n) {
        return Err(format!(
            "dgesv: A has {} elements and B {}, which do not fit n = {n}",
            lu.len(),
            rhs.len()
        ));
    }
    let nrhs = rhs.len() / n;
    let (pivots, info) = lu_factor(&mut lu, n);
    let mut x = rhs.clone();
    if info == 0 {
        lu_solve(&lu, &pivots, n, nrhs, &mut x);
    }
    let solved = match b {
        Value::Array(arr) => Value::Array(ArrayVal::new(
            arr.dims.clone(),
            x.into_iter().map(Value::Real).collect(),
        )),
        _ => Value::Real(x[0]),
    };
    let ipiv = Value::vector(pivots.iter().map(|&p| Value::Int(p as i64 + 1)).collect());
    Ok(NativeResult {
        returned: None,
        written: vec![(4, ipiv), (5, solved), (7, Value::Int(info as i64))],
    })
}

/// In-place LU factorization of the row-major `n`×`n` matrix `a` with partial pivoting:
/// the pivot row of each column (0-based) and LAPACK's `info` (the 1-based column of the
/// first exactly zero pivot, or 0).
fn lu_factor(a: &mut [f64], n: usize) -> (Vec<usize>, usize) {
    let mut pivots = Vec::with_capacity(n);
    let mut info = 0;
    for k in 0..n {
        let p = (k..n)
            .max_by(|&i, &j| a[i * n + k].abs().total_cmp(&a[j * n + k].abs()))
            .unwrap_or(k);
        pivots.push(p);
        if a[p * n + k] == 0.0 {
            if info == 0 {
                info = k + 1;
            }
            continue;
        }
        if p != k {
            for j in 0..n {
                a.swap(k * n + j, p * n + j);
            }
        }
        let pivot = a[k * n + k];
        for i in k + 1..n {
            let f = a[i * n + k] / pivot;
            a[i * n + k] = f;
            for j in k + 1..n {
                a[i * n + j] -= f * a[k * n + j];
            }
        }
    }
    (pivots, info)
}

/// Solve with the factors of [`lu_factor`] for the `nrhs` columns of the row-major
/// `n`×`nrhs` right-hand side `x` (overwritten with the solution).
fn lu_solve(lu: &[f64], pivots: &[usize], n: usize, nrhs: usize, x: &mut [f64]) {
    for (k, &p) in pivots.iter().enumerate() {
        if p != k {
            for c in 0..nrhs {
                x.swap(k * nrhs + c, p * nrhs + c);
            }
        }
    }
    for c in 0..nrhs {
        for i in 1..n {
            let s: f64 = (0..i).map(|j| lu[i * n + j] * x[j * nrhs + c]).sum();
            x[i * nrhs + c] -= s;
        }
        for i in (0..n).rev() {
            let s: f64 = (i + 1..n).map(|j| lu[i * n + j] * x[j * nrhs + c]).sum();
            x[i * nrhs + c] = (x[i * nrhs + c] - s) / lu[i * n + i];
        }
    }
}
