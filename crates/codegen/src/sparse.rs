//! Large sparse linear systems: faer's sparse LU with partial pivoting. The sparsity pattern
//! of a `Linear` block never changes, so the symbolic analysis is done once and reused.

use faer::linalg::solvers::Solve;
use faer::sparse::linalg::solvers::{Lu, SymbolicLu};
use faer::sparse::{SparseColMat, Triplet};
use faer::MatMut;
use std::sync::OnceLock;

/// Systems at least this large with at most a quarter of the entries filled use the sparse LU.
pub const SPARSE_MIN_SIZE: usize = 40;

/// A fixed sparsity pattern with its cached symbolic factorization.
pub struct SparseSystem {
    pub n: usize,
    /// Unique `(row, col)` positions.
    pub pattern: Vec<(usize, usize)>,
    symbolic: OnceLock<SymbolicLu<usize>>,
}

impl SparseSystem {
    pub fn new(n: usize, pattern: Vec<(usize, usize)>) -> SparseSystem {
        SparseSystem {
            n,
            pattern,
            symbolic: OnceLock::new(),
        }
    }

    /// Solve `A x = b` where `values[k]` is the entry at `pattern[k]`; `b` becomes `x`.
    pub fn solve(&self, values: &[f64], b: &mut [f64]) -> Result<(), String> {
        let triplets: Vec<Triplet<usize, usize, f64>> = self
            .pattern
            .iter()
            .zip(values)
            .map(|(&(r, c), &v)| Triplet::new(r, c, v))
            .collect();
        let mat = SparseColMat::<usize, f64>::try_new_from_triplets(self.n, self.n, &triplets)
            .map_err(|e| format!("cannot build the sparse matrix: {e:?}"))?;
        let symbolic = match self.symbolic.get() {
            Some(s) => s.clone(),
            None => {
                let s = SymbolicLu::try_new(mat.symbolic())
                    .map_err(|e| format!("sparse LU analysis failed: {e:?}"))?;
                let _ = self.symbolic.set(s.clone());
                s
            }
        };
        let lu = Lu::try_new_with_symbolic(symbolic, mat.as_ref())
            .map_err(|e| format!("the matrix is singular ({e:?})"))?;
        lu.solve_in_place(MatMut::from_column_major_slice_mut(b, self.n, 1));
        if b.iter().all(|x| x.is_finite()) {
            Ok(())
        } else {
            Err("the matrix is singular (the solution is not finite)".into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tridiagonal_system() {
        let n = 100;
        let mut pattern = vec![];
        let mut values = vec![];
        for i in 0..n {
            pattern.push((i, i));
            values.push(4.0);
            if i > 0 {
                pattern.push((i, i - 1));
                values.push(-1.0);
            }
            if i + 1 < n {
                pattern.push((i, i + 1));
                values.push(-1.0);
            }
        }
        let x_true: Vec<f64> = (0..n).map(|i| (i as f64).sin()).collect();
        let mut b = vec![0.0; n];
        for (&(r, c), &v) in pattern.iter().zip(&values) {
            b[r] += v * x_true[c];
        }
        let sys = SparseSystem::new(n, pattern);
        // twice: the second solve reuses the symbolic analysis
        for _ in 0..2 {
            let mut x = b.clone();
            sys.solve(&values, &mut x).expect("regular");
            for (a, t) in x.iter().zip(&x_true) {
                assert!((a - t).abs() < 1e-12);
            }
        }
    }
}
