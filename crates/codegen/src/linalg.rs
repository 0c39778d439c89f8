//! Small dense linear algebra for the equation-system blocks: LU with partial pivoting.
//! (Systems reaching the interpreter after tearing are small; large sparse ones use
//! `sparse.rs`.)

/// Dense row-major LU factorization with partial pivoting, in place.
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
        let mut y: Vec<f64> = self.perm.iter().map(|&p| b[p]).collect();
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
        b.copy_from_slice(&y);
    }
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
    fn reports_singular_column() {
        let a = vec![1.0, 2.0, 2.0, 4.0];
        assert_eq!(DenseLu::factor(2, a).err(), Some(Singular { column: 1 }));
    }
}
