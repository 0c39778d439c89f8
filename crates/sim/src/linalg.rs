//! Linear algebra for the Newton iteration of implicit methods: the iteration matrix
//! `M = I - c J` in a sparse (compressed column) layout, factorized either densely (small
//! systems: partial-pivoting LU, no allocation per factorization) or sparsely (large
//! systems: the LU of `moss_codegen`'s sparse linear systems, which factors the first matrix
//! with pivoting and refactors the next ones along the same pivot sequence while its pivots
//! hold, as KLU does: successive iteration matrices differ in `c` and in the Jacobian's
//! values, hardly ever in which pivot is good).

use moss_codegen::{SparseLu, SparseSystem};
use std::sync::Arc;

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
    Sparse(Box<SparseLu>, Arc<SparseSystem>),
}

/// Factorizes matrices with one sparsity pattern, choosing dense or sparse LU by size.
pub struct LinearSolver {
    pattern: SparsePattern,
    dense_work: Vec<f64>,
    /// The sparse system of the pattern (built at the first sparse factorization) and the
    /// last factors, whose pivot sequence the next factorization tries first.
    sparse: Option<Arc<SparseSystem>>,
    last: Option<SparseLu>,
    /// Sparse factorizations that searched pivots / that refactored along kept ones.
    pub pivoted: u64,
    pub refactored: u64,
}

impl LinearSolver {
    pub fn new(pattern: SparsePattern) -> LinearSolver {
        LinearSolver {
            pattern,
            dense_work: Vec::new(),
            sparse: None,
            last: None,
            pivoted: 0,
            refactored: 0,
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
        let pattern = &self.pattern;
        let system = self.sparse.get_or_insert_with(|| {
            // The pattern is stored by columns with sorted rows, the order SparseSystem
            // keeps: the values need no permutation.
            let entries: Vec<(usize, usize)> = (0..n)
                .flat_map(|j| pattern.col(j).iter().map(move |&i| (i, j)))
                .collect();
            Arc::new(SparseSystem::new(n, 0, &entries).0)
        });
        let (lu, refactored) = system
            .factor(self.last.take(), values)
            .map_err(|_| Singular)?;
        if refactored {
            self.refactored += 1;
        } else {
            self.pivoted += 1;
        }
        self.last = Some(lu.clone());
        Ok(LuFactors::Sparse(Box::new(lu), Arc::clone(system)))
    }
}

impl LuFactors {
    /// Solve `M x = b` in place.
    pub fn solve(&mut self, b: &mut [f64]) {
        match self {
            LuFactors::Dense(lu) => lu.solve(b),
            LuFactors::Sparse(lu, system) => {
                // The factorization checked every pivot, so the solve cannot fail.
                let _ = system.solve_factored(lu, b);
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
        let mut lu = solver.factorize(&values).expect("nonsingular");
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

    /// `max |M x - b|` for `M` given by `values` in `pattern` order.
    fn residual(pattern: &SparsePattern, values: &[f64], x: &[f64], b: &[f64]) -> f64 {
        let mut r: Vec<f64> = b.iter().map(|v| -v).collect();
        for j in 0..pattern.n {
            for (k, &i) in pattern.col(j).iter().enumerate() {
                r[i] += values[pattern.col_ptr[j] + k] * x[j];
            }
        }
        r.iter().fold(0.0f64, |m, v| m.max(v.abs()))
    }

    #[test]
    fn sparse_factorizations_refactor_along_kept_pivots_and_pivot_again_when_needed() {
        let n = 200;
        let pattern = SparsePattern::from_entries(n, &tridiagonal(n));
        let fill = |diag: &dyn Fn(usize) -> f64| -> Vec<f64> {
            let mut v = vec![0.0; pattern.nnz()];
            for j in 0..n {
                for (k, &i) in pattern.col(j).iter().enumerate() {
                    v[pattern.col_ptr[j] + k] = if i == j { diag(j) } else { -1.0 };
                }
            }
            v
        };
        let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.3).cos()).collect();
        let mut solver = LinearSolver::new(pattern.clone());
        // Diagonally dominant matrices of one pattern: the first with pivoting, the next
        // (another `c`) along its pivots.
        let mut solve_and_check = |values: &[f64]| {
            let mut x = b.clone();
            let mut lu = solver.factorize(values).expect("nonsingular");
            lu.solve(&mut x);
            assert!(residual(&pattern, values, &x, &b) < 1e-12);
            (solver.pivoted, solver.refactored)
        };
        for (round, scale) in [4.0, 3.0, 2.5].into_iter().enumerate() {
            assert_eq!(solve_and_check(&fill(&|_| scale)), (1, round as u64));
        }
        // A small diagonal (against the -1 beside it): the kept pivots fail, the matrix is
        // factored with pivoting (row exchanges).
        assert_eq!(solve_and_check(&fill(&|_| 1e-3)), (2, 2));
    }

    #[test]
    fn singular_matrix_is_reported() {
        let pattern = SparsePattern::from_entries(2, &[]);
        let mut solver = LinearSolver::new(pattern);
        assert!(solver.factorize(&[1.0, 1.0, 1.0, 1.0]).is_err());
    }
}
