//! Small dense linear algebra for the equation-system blocks: LU with partial pivoting.
//! (Systems reaching the interpreter after tearing are small; large sparse ones use
//! `sparse.rs`.)

/// Dense row-major LU factorization with partial pivoting, in place.
#[derive(Clone, Debug)]
pub struct DenseLu {
    pub n: usize,
    pub a: Vec<f64>,
    pub perm: Vec<usize>,
}

/// The matrix is singular: the column where no usable pivot was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Singular {
    pub column: usize,
}

impl DenseLu {
    /// Factor the `n x n` row-major matrix `a`.
    pub fn factor(n: usize, mut a: Vec<f64>) -> Result<DenseLu, Singular> {
        let mut perm: Vec<usize> = (0..n).collect();
        let scale = a
            .iter()
            .fold(0.0f64, |m, x| m.max(x.abs()))
            .max(f64::MIN_POSITIVE);
        for k in 0..n {
            let (mut p, mut best) = (k, a[k * n + k].abs());
            for i in k + 1..n {
                let v = a[i * n + k].abs();
                if v > best {
                    best = v;
                    p = i;
                }
            }
            if best <= scale * 1e-14 || !best.is_finite() {
                return Err(Singular { column: k });
            }
            if p != k {
                for j in 0..n {
                    a.swap(k * n + j, p * n + j);
                }
                perm.swap(k, p);
            }
            let pivot = a[k * n + k];
            for i in k + 1..n {
                let f = a[i * n + k] / pivot;
                if f != 0.0 {
                    a[i * n + k] = f;
                    for j in k + 1..n {
                        a[i * n + j] -= f * a[k * n + j];
                    }
                } else {
                    a[i * n + k] = 0.0;
                }
            }
        }
        Ok(DenseLu { n, a, perm })
    }

    /// Solve `A x = b`; `b` is overwritten with `x`.
    pub fn solve(&self, b: &mut [f64]) {
        let n = self.n;
        // The torn loops solved at every evaluation are small: no allocation for them.
        let mut small = [0.0f64; 16];
        let mut large = Vec::new();
        let y: &mut [f64] = if n <= small.len() {
            &mut small[..n]
        } else {
            large.resize(n, 0.0);
            &mut large
        };
        for (yi, &p) in y.iter_mut().zip(&self.perm) {
            *yi = b[p];
        }
        for i in 0..n {
            let row = &self.a[i * n..i * n + i];
            let s: f64 = row.iter().zip(&y[..i]).map(|(a, yj)| a * yj).sum();
            y[i] -= s;
        }
        for i in (0..n).rev() {
            let row = &self.a[i * n + i + 1..(i + 1) * n];
            let s: f64 = row.iter().zip(&y[i + 1..]).map(|(a, yj)| a * yj).sum();
            y[i] = (y[i] - s) / self.a[i * n + i];
        }
        b.copy_from_slice(y);
    }
}

/// A solution of a singular but consistent `A x = b` (row-major `a`), or None when the
/// system is inconsistent.
///
/// Mixed systems meet such matrices legitimately: two stuck friction elements on the same
/// shaft leave the split of the holding torque between them undetermined. Gaussian
/// elimination with full pivoting finds the rank; the variables without a pivot keep
/// their values from `x0` (continuity with the previous solution) and the rest follow.
pub fn solve_consistent_singular(n: usize, a: &[f64], b: &[f64], x0: &[f64]) -> Option<Vec<f64>> {
    // a NaN entry (`0/0` at a singular point of the equations) is no equation at all: the
    // norms and the residual test below would pass over it (`f64::max` drops NaN)
    if a.iter().chain(b).any(|v| !v.is_finite()) {
        return None;
    }
    let norm_a = a.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let norm_x0 = x0.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let norm_b = b.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    // work on the correction d = x - x0: A d = b - A x0
    let mut r: Vec<f64> = (0..n)
        .map(|i| b[i] - (0..n).map(|j| a[i * n + j] * x0[j]).sum::<f64>())
        .collect();
    let mut m = a.to_vec();
    let mut cols: Vec<usize> = (0..n).collect();
    let tiny = norm_a.max(f64::MIN_POSITIVE) * 1e-12;
    let mut rank = 0;
    for k in 0..n {
        let (mut pi, mut pj, mut best) = (k, k, 0.0f64);
        for i in k..n {
            for j in k..n {
                let v = m[i * n + j].abs();
                if v > best {
                    (pi, pj, best) = (i, j, v);
                }
            }
        }
        if best <= tiny || !best.is_finite() {
            break;
        }
        if pi != k {
            for j in 0..n {
                m.swap(k * n + j, pi * n + j);
            }
            r.swap(k, pi);
        }
        if pj != k {
            for i in 0..n {
                m.swap(i * n + k, i * n + pj);
            }
            cols.swap(k, pj);
        }
        for i in k + 1..n {
            let f = m[i * n + k] / m[k * n + k];
            if f != 0.0 {
                for j in k..n {
                    m[i * n + j] -= f * m[k * n + j];
                }
                r[i] -= f * r[k];
            }
        }
        rank = k + 1;
    }
    // the rows without a pivot must be satisfied already
    let tol = 1e-9 * (norm_b + norm_a * norm_x0).max(f64::MIN_POSITIVE);
    if r[rank..].iter().any(|v| v.abs() > tol) {
        return None;
    }
    let mut d = vec![0.0; n];
    for k in (0..rank).rev() {
        let s: f64 = (k + 1..rank).map(|j| m[k * n + j] * d[j]).sum();
        d[k] = (r[k] - s) / m[k * n + k];
    }
    let mut x = x0.to_vec();
    for (k, &c) in cols.iter().enumerate() {
        x[c] += d[k];
    }
    let residual = (0..n).fold(0.0f64, |acc, i| {
        let ax: f64 = (0..n).map(|j| a[i * n + j] * x[j]).sum();
        acc.max((ax - b[i]).abs())
    });
    let norm_x = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    (residual.is_finite() && residual <= 1e-8 * (norm_b + norm_a * norm_x).max(1e-300)).then_some(x)
}

/// The minimum-norm solution of a singular but consistent `A x = b` (row-major `a`), with
/// the norm weighted by `w` (`sum (x_j / w_j)^2`, the unknowns' nominal values), or None
/// when the system is inconsistent.
///
/// Unlike `solve_consistent_singular` this depends on the equations alone, not on values
/// left in memory by earlier evaluations: the undetermined part of the solution (how two
/// stuck friction elements on one shaft share the holding torque) is the same whatever
/// trial point an event iteration or a retried step evaluated before. With `x = W u` the
/// minimum-norm `u` lies in the row space of `A W`: `u = (A W)^T z` for any solution `z`
/// of `(A W)(A W)^T z = b`, itself singular but consistent.
pub fn solve_min_norm(n: usize, a: &[f64], b: &[f64], w: &[f64]) -> Option<Vec<f64>> {
    let aw: Vec<f64> = (0..n * n).map(|k| a[k] * w[k % n]).collect();
    let gram: Vec<f64> = (0..n * n)
        .map(|k| {
            let (i, j) = (k / n, k % n);
            (0..n).map(|l| aw[i * n + l] * aw[j * n + l]).sum()
        })
        .collect();
    let z = solve_consistent_singular(n, &gram, b, &vec![0.0; n])?;
    let x: Vec<f64> = (0..n)
        .map(|j| w[j] * (0..n).map(|i| aw[i * n + j] * z[i]).sum::<f64>())
        .collect();
    let norm_a = a.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let norm_b = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let norm_x = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let residual = (0..n).fold(0.0f64, |acc, i| {
        let ax: f64 = (0..n).map(|j| a[i * n + j] * x[j]).sum();
        acc.max((ax - b[i]).abs())
    });
    (residual.is_finite() && residual <= 1e-8 * (norm_b + norm_a * norm_x).max(1e-300)).then_some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_with_pivoting() {
        // first pivot is zero: needs a row swap
        let a = vec![0.0, 2.0, 1.0, 1.0, 1.0, 0.0, 3.0, 0.0, 1.0];
        let x_true = [1.0, -2.0, 3.0];
        let mut b: Vec<f64> = (0..3)
            .map(|i| (0..3).map(|j| a[i * 3 + j] * x_true[j]).sum())
            .collect();
        let lu = DenseLu::factor(3, a).expect("regular");
        lu.solve(&mut b);
        for (x, t) in b.iter().zip(x_true) {
            assert!((x - t).abs() < 1e-12, "{b:?}");
        }
    }

    #[test]
    fn min_norm_splits_an_undetermined_sum_by_the_weights() {
        // x + y = 3 twice: the minimum of (x/1)^2 + (y/2)^2 is at x = 3/5, y = 12/5
        let a = vec![1.0, 1.0, 2.0, 2.0];
        let x = solve_min_norm(2, &a, &[3.0, 6.0], &[1.0, 2.0]).expect("consistent");
        assert!(
            (x[0] - 0.6).abs() < 1e-12 && (x[1] - 2.4).abs() < 1e-12,
            "{x:?}"
        );
        assert_eq!(solve_min_norm(2, &a, &[3.0, 5.0], &[1.0, 1.0]), None);
    }

    #[test]
    fn a_singular_system_with_a_nan_row_has_no_solution() {
        // x + y = 2 twice, and a row that is 0/0 where it is evaluated: the NaN row is
        // not an equation that holds, whatever x and y are
        let a = vec![1.0, 1.0, 0.0, 1.0, 1.0, 0.0, f64::NAN, 1.0, 1.0];
        assert!(solve_consistent_singular(3, &a, &[2.0, 2.0, 0.0], &[0.0; 3]).is_none());
        let b = [2.0, 2.0, f64::NAN];
        let regular_rows = vec![1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        assert!(solve_consistent_singular(3, &regular_rows, &b, &[0.0; 3]).is_none());
        let b = [2.0, 2.0, 0.0];
        assert!(solve_consistent_singular(3, &regular_rows, &b, &[0.0; 3]).is_some());
    }

    #[test]
    fn reports_singular_column() {
        let a = vec![1.0, 2.0, 2.0, 4.0];
        assert_eq!(DenseLu::factor(2, a).err(), Some(Singular { column: 1 }));
    }
}
