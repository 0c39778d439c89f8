//! LAPACK routines that the MSL calls through `external "FORTRAN 77"`
//! (`Modelica.Math.Matrices.LAPACK`), written here from LAPACK's documented contract on
//! plain row-major `f64` data. They live in the frontend because two evaluators run them:
//! translation-time evaluation of parameter and constant bindings (`interp.rs`; a medium's
//! polynomial coefficients are a least-squares fit of its tables) and the runtime function
//! interpreter (`moss-codegen`'s `native_lapack`).
//!
//! Every argument arrives flattened (a scalar is a one-element slice, a matrix its elements
//! row by row); a routine returns the arguments it writes, by position, flattened the same
//! way. The column-major layout of the Fortran interface is the caller's concern in a
//! compiled tool and does not arise here; factors left in work arrays are not written back
//! (the MSL's wrappers keep them in protected locals).

/// Arguments a routine wrote: (0-based argument position, flattened value).
pub type Written = Vec<(usize, Vec<f64>)>;

/// Run the LAPACK routine `name` on flattened arguments; `None` when moss has no native
/// implementation of it.
pub fn call(name: &str, args: &[Vec<f64>]) -> Option<Result<Written, String>> {
    match name {
        "dgesv" => Some(dgesv(args)),
        "dgelsy" => Some(dgelsy(args)),
        "dgetrf" => Some(dgetrf(args)),
        "dgetri" => Some(dgetri(args)),
        "dgetrs" => Some(dgetrs(args)),
        _ => None,
    }
}

fn arg<'a>(
    args: &'a [Vec<f64>],
    pos: usize,
    routine: &str,
    what: &str,
) -> Result<&'a [f64], String> {
    args.get(pos)
        .map(Vec::as_slice)
        .ok_or_else(|| format!("{routine}: missing argument {what}"))
}

fn int_arg(args: &[Vec<f64>], pos: usize, routine: &str, what: &str) -> Result<usize, String> {
    let v = arg(args, pos, routine, what)?;
    match v {
        [x] => Ok(x.round().max(0.0) as usize),
        _ => Err(format!("{routine}: {what} must be a scalar")),
    }
}

/// `dgesv(n, nrhs, A, lda, ipiv, B, ldb, info)`: solve `A*X = B` by LU decomposition with
/// partial pivoting (row interchanges). Writes `ipiv` (1-based pivot rows), `B` := `X` and
/// `info`: 0 on success, `i > 0` when `U[i,i]` is exactly zero (then `X` is not computed,
/// as in LAPACK).
fn dgesv(args: &[Vec<f64>]) -> Result<Written, String> {
    let n = int_arg(args, 0, "dgesv", "n")?;
    let mut lu = arg(args, 2, "dgesv", "A")?.to_vec();
    let rhs = arg(args, 5, "dgesv", "B")?;
    if lu.len() != n * n || n == 0 || !rhs.len().is_multiple_of(n) {
        return Err(format!(
            "dgesv: A has {} elements and B {}, which do not fit n = {n}",
            lu.len(),
            rhs.len()
        ));
    }
    let nrhs = rhs.len() / n;
    let (pivots, info) = lu_factor(&mut lu, n);
    let mut x = rhs.to_vec();
    if info == 0 {
        lu_solve(&lu, &pivots, n, nrhs, &mut x);
    }
    let ipiv = pivots.iter().map(|&p| (p + 1) as f64).collect();
    Ok(vec![(4, ipiv), (5, x), (7, vec![info as f64])])
}

/// In-place LU factorization of the row-major `n`×`n` matrix `a` with partial pivoting:
/// the pivot row of each column (0-based) and LAPACK's `info` (the 1-based column of the
/// first exactly zero pivot, or 0).
fn lu_factor(a: &mut [f64], n: usize) -> (Vec<usize>, usize) {
    lu_factor_rect(a, n, n)
}

/// [`lu_factor`] of a row-major `m`×`n` matrix (`A = P*L*U` with `L` unit lower
/// trapezoidal and `U` upper trapezoidal, as `dgetrf`): `min(m, n)` pivots.
fn lu_factor_rect(a: &mut [f64], m: usize, n: usize) -> (Vec<usize>, usize) {
    let steps = m.min(n);
    let mut pivots = Vec::with_capacity(steps);
    let mut info = 0;
    for k in 0..steps {
        let p = (k..m)
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
        for i in k + 1..m {
            let f = a[i * n + k] / pivot;
            a[i * n + k] = f;
            for j in k + 1..n {
                a[i * n + j] -= f * a[k * n + j];
            }
        }
    }
    (pivots, info)
}

/// LAPACK's 1-based pivot rows as 0-based indices, `n` of them, each checked against `n`.
fn pivots_from(ipiv: &[f64], n: usize, routine: &str) -> Result<Vec<usize>, String> {
    if ipiv.len() != n {
        return Err(format!(
            "{routine}: {} pivots for a matrix of order {n}",
            ipiv.len()
        ));
    }
    ipiv.iter()
        .map(|&p| {
            let p = p.round();
            if p >= 1.0 && p <= n as f64 {
                Ok(p as usize - 1)
            } else {
                Err(format!("{routine}: pivot {p} is outside 1..{n}"))
            }
        })
        .collect()
}

/// `dgetrf(m, n, A, lda, ipiv, info)`: the LU factorization `A = P*L*U` of an `m`×`n`
/// matrix with partial pivoting. Writes `A` := the factors (`L` below the diagonal, its unit
/// diagonal implied), `ipiv` (1-based pivot rows) and `info` (the 1-based index of the first
/// exactly zero diagonal element of `U`, or 0; the factorization is completed either way).
fn dgetrf(args: &[Vec<f64>]) -> Result<Written, String> {
    let m = int_arg(args, 0, "dgetrf", "m")?;
    let n = int_arg(args, 1, "dgetrf", "n")?;
    let mut lu = arg(args, 2, "dgetrf", "A")?.to_vec();
    if lu.len() != m * n {
        return Err(format!(
            "dgetrf: A has {} elements, which do not fit m = {m}, n = {n}",
            lu.len()
        ));
    }
    let (pivots, info) = lu_factor_rect(&mut lu, m, n);
    let ipiv = pivots.iter().map(|&p| (p + 1) as f64).collect();
    Ok(vec![(2, lu), (4, ipiv), (5, vec![info as f64])])
}

/// `dgetri(n, A, lda, ipiv, work, lwork, info)`: the inverse of a matrix from its `dgetrf`
/// factors. Writes `A` := the inverse and `info` (the 1-based index of an exactly zero
/// diagonal element of `U`, when the matrix is singular and `A` is left as it came, or 0).
fn dgetri(args: &[Vec<f64>]) -> Result<Written, String> {
    let n = int_arg(args, 0, "dgetri", "n")?;
    let lu = arg(args, 1, "dgetri", "A")?;
    if lu.len() != n * n {
        return Err(format!(
            "dgetri: A has {} elements, which do not fit n = {n}",
            lu.len()
        ));
    }
    let pivots = pivots_from(arg(args, 3, "dgetri", "ipiv")?, n, "dgetri")?;
    if let Some(k) = (0..n).find(|&k| lu[k * n + k] == 0.0) {
        return Ok(vec![(1, lu.to_vec()), (6, vec![(k + 1) as f64])]);
    }
    let mut inv = vec![0.0; n * n];
    for k in 0..n {
        inv[k * n + k] = 1.0;
    }
    lu_solve(lu, &pivots, n, n, &mut inv);
    Ok(vec![(1, inv), (6, vec![0.0])])
}

/// `dgetrs(trans, n, nrhs, A, lda, ipiv, B, ldb, info)`: solve `A*X = B` (`trans` = "N") or
/// `A'*X = B` ("T" or "C") with the `dgetrf` factors of `A`. `trans` arrives as its
/// character code. Writes `B` := `X` and `info` (0).
fn dgetrs(args: &[Vec<f64>]) -> Result<Written, String> {
    let trans = arg(args, 0, "dgetrs", "trans")?
        .first()
        .map(|&c| (c as u8 as char).to_ascii_uppercase())
        .unwrap_or('N');
    let n = int_arg(args, 1, "dgetrs", "n")?;
    let nrhs = int_arg(args, 2, "dgetrs", "nrhs")?;
    let lu = arg(args, 3, "dgetrs", "A")?;
    let b = arg(args, 6, "dgetrs", "B")?;
    if lu.len() != n * n || b.len() != n * nrhs {
        return Err(format!(
            "dgetrs: A has {} elements and B {}, which do not fit n = {n}, nrhs = {nrhs}",
            lu.len(),
            b.len()
        ));
    }
    let pivots = pivots_from(arg(args, 5, "dgetrs", "ipiv")?, n, "dgetrs")?;
    let mut x = b.to_vec();
    match trans {
        'N' => lu_solve(lu, &pivots, n, nrhs, &mut x),
        'T' | 'C' => lu_solve_transposed(lu, &pivots, n, nrhs, &mut x),
        other => return Err(format!("dgetrs: trans is `{other}`, not N, T or C")),
    }
    Ok(vec![(6, x), (8, vec![0.0])])
}

/// Solve `A'*X = B` with the factors of [`lu_factor`] (`A = P*L*U`, so `A' = U'*L'*P'`):
/// `U'` forward, the unit `L'` backward, then the row interchanges in reverse order.
fn lu_solve_transposed(lu: &[f64], pivots: &[usize], n: usize, nrhs: usize, x: &mut [f64]) {
    for c in 0..nrhs {
        for i in 0..n {
            let s: f64 = (0..i).map(|j| lu[j * n + i] * x[j * nrhs + c]).sum();
            x[i * nrhs + c] = (x[i * nrhs + c] - s) / lu[i * n + i];
        }
        for i in (0..n).rev() {
            let s: f64 = (i + 1..n).map(|j| lu[j * n + i] * x[j * nrhs + c]).sum();
            x[i * nrhs + c] -= s;
        }
    }
    for (k, &p) in pivots.iter().enumerate().rev() {
        if p != k {
            for c in 0..nrhs {
                x.swap(k * nrhs + c, p * nrhs + c);
            }
        }
    }
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

/// `dgelsy(m, n, nrhs, A, lda, B, ldb, jpvt, rcond, rank, work, lwork, info)`: the
/// minimum-norm solution of the least-squares problem `min |A*X - B|` for a possibly
/// rank-deficient `m`×`n` matrix `A`, through a complete orthogonal factorization: QR with
/// column pivoting, the rank the number of leading diagonal elements of `R` larger than
/// `rcond` times the first, and the minimum-norm solution of the remaining underdetermined
/// triangular system by a QR factorization of its transpose. `B` is `ldb`×`nrhs` with
/// `ldb >= max(m, n)`; its first `m` rows are the right-hand sides and its first `n` rows
/// are overwritten with `X` (the rest is left as it came). Writes `jpvt` (1-based column
/// permutation), `B`, `rank` and `info` (always 0: nothing here can fail).
fn dgelsy(args: &[Vec<f64>]) -> Result<Written, String> {
    let m = int_arg(args, 0, "dgelsy", "m")?;
    let n = int_arg(args, 1, "dgelsy", "n")?;
    let nrhs = int_arg(args, 2, "dgelsy", "nrhs")?;
    let a = arg(args, 3, "dgelsy", "A")?;
    let b = arg(args, 5, "dgelsy", "B")?;
    let rcond = arg(args, 8, "dgelsy", "rcond")?
        .first()
        .copied()
        .unwrap_or(0.0);
    let ldb = m.max(n);
    if a.len() != m * n || nrhs == 0 || b.len() != ldb * nrhs {
        return Err(format!(
            "dgelsy: A has {} elements and B {}, which do not fit m = {m}, n = {n}, \
             nrhs = {nrhs}",
            a.len(),
            b.len()
        ));
    }
    let (x, perm, rank) = least_squares(a.to_vec(), m, n, b[..m * nrhs].to_vec(), nrhs, rcond);
    let mut out = b.to_vec();
    out[..n * nrhs].copy_from_slice(&x);
    let jpvt = perm.iter().map(|&p| (p + 1) as f64).collect();
    Ok(vec![
        (5, out),
        (7, jpvt),
        (9, vec![rank as f64]),
        (12, vec![0.0]),
    ])
}

/// Minimum-norm least-squares solution `X` (`n`×`nrhs`, row-major) of `A*X = B` for the
/// row-major `m`×`n` matrix `a` and `m`×`nrhs` right-hand side `b`, with the column
/// permutation of the pivoted QR (0-based) and the rank it found.
pub fn least_squares(
    mut a: Vec<f64>,
    m: usize,
    n: usize,
    mut b: Vec<f64>,
    nrhs: usize,
    rcond: f64,
) -> (Vec<f64>, Vec<usize>, usize) {
    let perm = pivoted_qr(&mut a, m, n, &mut b, nrhs);
    let rank = numerical_rank(&a, m, n, rcond);
    // `T = R[0..rank, ..]` (upper trapezoidal). Factor `Tᵀ = Q₂ R₂`: then `T z = c` is
    // `R₂ᵀ (Q₂ᵀ z) = c`, and the solution of least norm has `Q₂ᵀ z = (w, 0)` with
    // `R₂ᵀ w = c`.
    let mut tt = vec![0.0; n * rank];
    for i in 0..rank {
        for j in i..n {
            tt[j * rank + i] = a[i * n + j];
        }
    }
    let mut reflectors = Vec::with_capacity(rank);
    for k in 0..rank {
        if let Some((h, alpha)) = Reflector::annihilating(&tt, n, rank, k, k) {
            for j in k + 1..rank {
                h.apply(&mut tt, rank, j);
            }
            tt[k * rank + k] = alpha;
            for i in k + 1..n {
                tt[i * rank + k] = 0.0;
            }
            reflectors.push(h);
        }
    }
    let mut x = vec![0.0; n * nrhs];
    for c in 0..nrhs {
        // forward substitution with the lower triangular R₂ᵀ
        let mut y = vec![0.0; n];
        for i in 0..rank {
            let s: f64 = (0..i).map(|j| tt[j * rank + i] * y[j]).sum();
            y[i] = (b[i * nrhs + c] - s) / tt[i * rank + i];
        }
        for h in reflectors.iter().rev() {
            h.apply(&mut y, 1, 0);
        }
        for (j, &p) in perm.iter().enumerate() {
            x[p * nrhs + c] = y[j];
        }
    }
    (x, perm, rank)
}

/// Householder QR with column pivoting of the row-major `m`×`n` matrix `a` in place (`R`
/// in the upper triangle, zeros below), the reflections applied to the `m`×`nrhs` `b` too
/// (`b := Qᵀ b`). Each step takes the remaining column of largest norm, so the diagonal
/// of `R` decreases in magnitude. Returns the column permutation (0-based).
fn pivoted_qr(a: &mut [f64], m: usize, n: usize, b: &mut [f64], nrhs: usize) -> Vec<usize> {
    let mut perm: Vec<usize> = (0..n).collect();
    for k in 0..m.min(n) {
        let norm2 = |a: &[f64], j: usize| (k..m).map(|i| a[i * n + j].powi(2)).sum::<f64>();
        let p = (k..n).fold(k, |best, j| {
            if norm2(a, j) > norm2(a, best) {
                j
            } else {
                best
            }
        });
        if p != k {
            for i in 0..m {
                a.swap(i * n + k, i * n + p);
            }
            perm.swap(k, p);
        }
        let Some((h, alpha)) = Reflector::annihilating(a, m, n, k, k) else {
            continue;
        };
        for j in k + 1..n {
            h.apply(a, n, j);
        }
        for c in 0..nrhs {
            h.apply(b, nrhs, c);
        }
        a[k * n + k] = alpha;
        for i in k + 1..m {
            a[i * n + k] = 0.0;
        }
    }
    perm
}

/// The number of leading diagonal elements of the pivoted `R` whose magnitude exceeds
/// `rcond` times the first one's (LAPACK estimates the condition incrementally; with the
/// decreasing diagonal of column pivoting this ratio is the usual cheap stand-in).
fn numerical_rank(r: &[f64], m: usize, n: usize, rcond: f64) -> usize {
    let Some(first) = r.first().map(|x| x.abs()) else {
        return 0;
    };
    (0..m.min(n))
        .take_while(|&k| {
            let d = r[k * n + k].abs();
            d > 0.0 && d > rcond * first
        })
        .count()
}

/// A Householder reflection `H = I - 2 v vᵀ / (vᵀ v)` acting on rows `k..` of columns.
struct Reflector {
    k: usize,
    v: Vec<f64>,
    vv: f64,
}

impl Reflector {
    /// The reflection that maps rows `k..` of column `j` of the row-major `rows`×`cols`
    /// matrix `a` onto a multiple of the unit vector `e_k`, and that multiple (the new
    /// diagonal element); `None` for a column that is already zero there.
    fn annihilating(
        a: &[f64],
        rows: usize,
        cols: usize,
        k: usize,
        j: usize,
    ) -> Option<(Self, f64)> {
        let mut v: Vec<f64> = (k..rows).map(|i| a[i * cols + j]).collect();
        let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        if norm == 0.0 {
            return None;
        }
        // the sign that avoids cancellation in v[0] - alpha
        let alpha = if v[0] > 0.0 { -norm } else { norm };
        v[0] -= alpha;
        let vv = v.iter().map(|x| x * x).sum();
        Some((Reflector { k, v, vv }, alpha))
    }

    /// Apply to column `j` of the row-major matrix `a` with `cols` columns.
    fn apply(&self, a: &mut [f64], cols: usize, j: usize) {
        let s: f64 = self
            .v
            .iter()
            .enumerate()
            .map(|(i, vi)| vi * a[(self.k + i) * cols + j])
            .sum();
        let f = 2.0 * s / self.vv;
        for (i, vi) in self.v.iter().enumerate() {
            a[(self.k + i) * cols + j] -= f * vi;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matmul(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
        let mut c = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                c[i * n + j] = (0..k).map(|l| a[i * k + l] * b[l * n + j]).sum();
            }
        }
        c
    }

    /// `P*L*U` rebuilt from `dgetrf`'s output of an `m`×`n` matrix.
    fn rebuild(lu: &[f64], ipiv: &[f64], m: usize, n: usize) -> Vec<f64> {
        let r = m.min(n);
        let mut l = vec![0.0; m * r];
        let mut u = vec![0.0; r * n];
        for i in 0..m {
            for j in 0..n {
                if i > j && j < r {
                    l[i * r + j] = lu[i * n + j];
                } else if i < r && i <= j {
                    u[i * n + j] = lu[i * n + j];
                }
            }
            if i < r {
                l[i * r + i] = 1.0;
            }
        }
        let mut a = matmul(&l, &u, m, r, n);
        for k in (0..ipiv.len()).rev() {
            let p = ipiv[k] as usize - 1;
            for j in 0..n {
                a.swap(k * n + j, p * n + j);
            }
        }
        a
    }

    #[test]
    fn dgetrf_factors_a_rectangular_matrix() {
        let (m, n) = (4, 3);
        let a = vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0, -1.0, 0.5, 2.0];
        let w = dgetrf(&[vec![m as f64], vec![n as f64], a.clone(), vec![m as f64]]).unwrap();
        let (lu, ipiv, info) = (&w[0].1, &w[1].1, w[2].1[0]);
        assert_eq!(info, 0.0);
        assert_eq!(ipiv.len(), 3);
        for (x, y) in rebuild(lu, ipiv, m, n).iter().zip(&a) {
            assert!((x - y).abs() < 1e-12, "{x} vs {y}");
        }
    }

    #[test]
    fn dgetrs_solves_with_the_matrix_and_its_transpose() {
        let n = 3;
        let a = vec![0.0, 2.0, 1.0, 4.0, 1.0, -1.0, 2.0, 3.0, 5.0];
        let w = dgetrf(&[vec![3.0], vec![3.0], a.clone(), vec![3.0]]).unwrap();
        let (lu, ipiv) = (w[0].1.clone(), w[1].1.clone());
        let b = vec![1.0, 2.0, 3.0, -1.0, 0.5, 4.0];
        for (trans, matrix) in [(b'N', a.clone()), (b'T', transpose(&a, n))] {
            let args = [
                vec![f64::from(trans)],
                vec![3.0],
                vec![2.0],
                lu.clone(),
                vec![3.0],
                ipiv.clone(),
                b.clone(),
                vec![3.0],
            ];
            let x = &dgetrs(&args).unwrap()[0].1;
            for (got, want) in matmul(&matrix, x, n, n, 2).iter().zip(&b) {
                assert!(
                    (got - want).abs() < 1e-12,
                    "{}: {got} vs {want}",
                    trans as char
                );
            }
        }
    }

    #[test]
    fn pivots_that_do_not_fit_the_matrix_are_an_error() {
        let args = [
            vec![2.0],
            vec![2.0, 1.0, 1.0, 3.0],
            vec![2.0],
            vec![1.0, 2.0, 2.0],
        ];
        let e = dgetri(&args).unwrap_err();
        assert!(e.contains("3 pivots for a matrix of order 2"), "{e}");
        let args = [
            vec![2.0],
            vec![2.0, 1.0, 1.0, 3.0],
            vec![2.0],
            vec![1.0, 5.0],
        ];
        assert!(dgetri(&args).unwrap_err().contains("outside 1..2"));
    }

    #[test]
    fn dgetri_inverts_and_reports_a_singular_factor() {
        let a = vec![2.0, 1.0, 1.0, 3.0];
        let w = dgetrf(&[vec![2.0], vec![2.0], a.clone(), vec![2.0]]).unwrap();
        let args = [vec![2.0], w[0].1.clone(), vec![2.0], w[1].1.clone()];
        let w = dgetri(&args).unwrap();
        assert_eq!(w[1].1, vec![0.0]);
        let id = matmul(&a, &w[0].1, 2, 2, 2);
        for (got, want) in id.iter().zip([1.0, 0.0, 0.0, 1.0]) {
            assert!((got - want).abs() < 1e-12);
        }
        let singular = vec![1.0, 2.0, 2.0, 4.0];
        let w = dgetrf(&[vec![2.0], vec![2.0], singular, vec![2.0]]).unwrap();
        assert_eq!(w[2].1, vec![2.0]);
        let args = [vec![2.0], w[0].1.clone(), vec![2.0], w[1].1.clone()];
        assert_eq!(dgetri(&args).unwrap()[1].1, vec![2.0]);
    }

    fn transpose(a: &[f64], n: usize) -> Vec<f64> {
        (0..n * n).map(|k| a[(k % n) * n + k / n]).collect()
    }
}
