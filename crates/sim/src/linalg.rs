//! Linear algebra for the Newton iteration of implicit methods: the iteration matrix
//! `M = I - c J` in a sparse (compressed column) layout, factorized either densely (small
//! systems: partial-pivoting LU, no allocation per factorization) or with faer's sparse LU
//! (large systems; the symbolic analysis is done once per sparsity pattern).

use faer::linalg::solvers::Solve;
use faer::sparse::linalg::solvers::{Lu as SparseLuFactors, SymbolicLu};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};

/// Systems up to this size are factorized densely.
pub const DENSE_LIMIT: usize = 64;

/// A square matrix with a fixed sparsity pattern, stored by columns with sorted row indices.
/// The diagonal is always part of the pattern.
#[derive(Clone, Debug)]
pub struct SparsePattern {
    pub n: usize,
    pub col_ptr: Vec<usize>,
    pub row_idx: Vec<usize>,
}

impl SparsePattern {
    /// Pattern of `(row, col)` entries plus the diagonal; an empty list means dense.
    pub fn from_entries(n: usize, entries: &[(u32, u32)]) -> SparsePattern {
        let mut cols: Vec<Vec<usize>> = vec![Vec::new(); n];
        if entries.is_empty() {
            for (j, c) in cols.iter_mut().enumerate() {
                let _ = j;
                c.extend(0..n);
            }
        } else {
            for &(r, c) in entries {
                let (r, c) = (r as usize, c as usize);
                if r < n && c < n {
                    cols[c].push(r);
                }
            }
            for (j, c) in cols.iter_mut().enumerate() {
                c.push(j);
            }
        }
        let mut col_ptr = Vec::with_capacity(n + 1);
        let mut row_idx = Vec::new();
        col_ptr.push(0);
        for c in &mut cols {
            c.sort_unstable();
            c.dedup();
            row_idx.extend_from_slice(c);
            col_ptr.push(row_idx.len());
        }
        SparsePattern {
            n,
            col_ptr,
            row_idx,
        }
    }

    pub fn nnz(&self) -> usize {
        self.row_idx.len()
    }

    /// Rows of column `j`.
    pub fn col(&self, j: usize) -> &[usize] {
        &self.row_idx[self.col_ptr[j]..self.col_ptr[j + 1]]
    }

    /// Position of the diagonal entry of column `j` in the value array.
    pub fn diag_pos(&self, j: usize) -> usize {
        let col = self.col(j);
        // The diagonal is always present (see `from_entries`).
        self.col_ptr[j] + col.binary_search(&j).unwrap_or(0)
    }
}

/// Factorization failed: the matrix is (numerically) singular.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Singular;

/// LU factors of an iteration matrix.
pub enum LuFactors {
    Dense(DenseLu),
    Sparse(Box<SparseLuFactors<usize, f64>>),
}

/// Factorizes matrices with one sparsity pattern, choosing dense or sparse LU by size.
pub struct LinearSolver {
    pattern: SparsePattern,
    symbolic: Option<SymbolicLu<usize>>,
    dense_work: Vec<f64>,
}

impl LinearSolver {
    pub fn new(pattern: SparsePattern) -> LinearSolver {
        LinearSolver {
            pattern,
            symbolic: None,
            dense_work: Vec::new(),
        }
    }

    pub fn pattern(&self) -> &SparsePattern {
        &self.pattern
    }

    pub fn uses_sparse(&self) -> bool {
        self.pattern.n > DENSE_LIMIT
    }

    /// Factorize the matrix with values `values` (in pattern order).
    pub fn factorize(&mut self, values: &[f64]) -> Result<LuFactors, Singular> {
        let n = self.pattern.n;
        if !self.uses_sparse() {
            self.dense_work.clear();
            self.dense_work.resize(n * n, 0.0);
            for j in 0..n {
                for (k, &i) in self.pattern.col(j).iter().enumerate() {
                    self.dense_work[i * n + j] = values[self.pattern.col_ptr[j] + k];
                }
            }
            return DenseLu::factorize(n, std::mem::take(&mut self.dense_work))
                .map(LuFactors::Dense);
        }
        let symbolic_ref = SymbolicSparseColMatRef::new_checked(
            n,
            n,
            &self.pattern.col_ptr,
            None,
            &self.pattern.row_idx,
        );
        if self.symbolic.is_none() {
            self.symbolic = Some(SymbolicLu::try_new(symbolic_ref).map_err(|_| Singular)?);
        }
        let symbolic = self.symbolic.clone().ok_or(Singular)?;
        let mat = SparseColMatRef::new(symbolic_ref, values);
        let lu = SparseLuFactors::try_new_with_symbolic(symbolic, mat).map_err(|_| Singular)?;
        Ok(LuFactors::Sparse(Box::new(lu)))
    }
}

impl LuFactors {
    /// Solve `M x = b` in place.
    pub fn solve(&self, b: &mut [f64]) {
        match self {
            LuFactors::Dense(lu) => lu.solve(b),
            LuFactors::Sparse(lu) => {
                let n = b.len();
                let rhs = faer::MatMut::from_column_major_slice_mut(b, n, 1);
                lu.solve_in_place(rhs);
            }
        }
    }
}

/// Dense LU with partial pivoting, row-major.
pub struct DenseLu {
    n: usize,
    a: Vec<f64>,
    perm: Vec<usize>,
}

impl DenseLu {
    pub fn factorize(n: usize, mut a: Vec<f64>) -> Result<DenseLu, Singular> {
        let mut perm: Vec<usize> = (0..n).collect();
        for k in 0..n {
            let (p, pmax) = (k..n)
                .map(|i| (i, a[i * n + k].abs()))
                .fold(
                    (k, -1.0),
                    |best, cur| if cur.1 > best.1 { cur } else { best },
                );
            if pmax == 0.0 || !pmax.is_finite() {
                return Err(Singular);
            }
            if p != k {
                for j in 0..n {
                    a.swap(k * n + j, p * n + j);
                }
                perm.swap(k, p);
            }
            let pivot = a[k * n + k];
            for i in k + 1..n {
                let l = a[i * n + k] / pivot;
                a[i * n + k] = l;
                if l != 0.0 {
                    for j in k + 1..n {
                        a[i * n + j] -= l * a[k * n + j];
                    }
                }
            }
        }
        Ok(DenseLu { n, a, perm })
    }

    pub fn solve(&self, b: &mut [f64]) {
        let n = self.n;
        let mut y: Vec<f64> = self.perm.iter().map(|&p| b[p]).collect();
        for i in 0..n {
            let mut s = y[i];
            for j in 0..i {
                s -= self.a[i * n + j] * y[j];
            }
            y[i] = s;
        }
        for i in (0..n).rev() {
            let mut s = y[i];
            for j in i + 1..n {
                s -= self.a[i * n + j] * y[j];
            }
            y[i] = s / self.a[i * n + i];
        }
        b.copy_from_slice(&y);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn residual_after_solve(
        n: usize,
        entries: &[(u32, u32)],
        val: impl Fn(usize, usize) -> f64,
    ) -> f64 {
        let pattern = SparsePattern::from_entries(n, entries);
        let mut values = vec![0.0; pattern.nnz()];
        for j in 0..n {
            for (k, &i) in pattern.col(j).iter().enumerate() {
                values[pattern.col_ptr[j] + k] = val(i, j);
            }
        }
        let mut solver = LinearSolver::new(pattern.clone());
        let lu = solver.factorize(&values).expect("nonsingular");
        let b: Vec<f64> = (0..n).map(|i| (i as f64).sin() + 1.0).collect();
        let mut x = b.clone();
        lu.solve(&mut x);
        // r = M x - b
        let mut r = b.iter().map(|v| -v).collect::<Vec<_>>();
        for j in 0..n {
            for (k, &i) in pattern.col(j).iter().enumerate() {
                r[i] += values[pattern.col_ptr[j] + k] * x[j];
            }
        }
        r.iter().fold(0.0f64, |m, v| m.max(v.abs()))
    }

    fn tridiagonal(n: usize) -> Vec<(u32, u32)> {
        let mut e = Vec::new();
        for i in 0..n {
            if i > 0 {
                e.push((i as u32, i as u32 - 1));
            }
            if i + 1 < n {
                e.push((i as u32, i as u32 + 1));
            }
        }
        e
    }

    #[test]
    fn dense_lu_solves_with_pivoting() {
        // Zero on the first diagonal entry forces a row exchange.
        let r = residual_after_solve(3, &[], |i, j| match (i, j) {
            (0, 0) => 0.0,
            _ => 1.0 + (i * 3 + j) as f64,
        });
        assert!(r < 1e-12, "residual {r}");
    }

    #[test]
    fn sparse_lu_solves_tridiagonal() {
        let n = 500;
        let r = residual_after_solve(n, &tridiagonal(n), |i, j| if i == j { 4.0 } else { -1.0 });
        assert!(r < 1e-12, "residual {r}");
    }

    #[test]
    fn singular_matrix_is_reported() {
        let pattern = SparsePattern::from_entries(2, &[]);
        let mut solver = LinearSolver::new(pattern);
        assert!(solver.factorize(&[1.0, 1.0, 1.0, 1.0]).is_err());
    }
}
