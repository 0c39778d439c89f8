//! Large sparse linear systems, solved by LU factorization that is computed once with
//! pivoting and then refactored along the same pivot sequence.
//!
//! A `Linear` block is solved at every evaluation of the model with new values on the same
//! pattern (the acceleration system of a MultiBody mechanism: 1,711 unknowns for
//! `Loops.EngineV6`, once per right-hand side). A full factorization with partial pivoting
//! searches the reach of every column and a pivot; most of its time is that search. Like
//! KLU's `refactor`, the pivot sequence and the patterns of `L` and `U` of the last full
//! factorization are kept per model instance ([`SparseFactors`] in the machine) and the next
//! matrix is factored numerically on them alone. When a pivot gets small against its column
//! (threshold [`REFACTOR_PIVOT_THRESHOLD`], a rotation's cosine passing through zero), the
//! factorization starts over with pivoting and the new sequence is kept.
//!
//! The full factorization is faer's (a fill-reducing COLAMD column order, computed once per
//! system and shared by every instance, and Gilbert–Peierls with partial pivoting).

use faer::perm::PermRef;
use faer::sparse::linalg::lu::simplicial::{
    factorize_simplicial_numeric_lu, factorize_simplicial_numeric_lu_scratch, SimplicialLu,
};
use faer::sparse::linalg::lu::{factorize_symbolic_lu, LuSymbolicParams};
use faer::sparse::linalg::SupernodalThreshold;
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use std::sync::OnceLock;

/// Systems at least this large with at most a quarter of the entries filled use the sparse LU.
pub const SPARSE_MIN_SIZE: usize = 40;

/// A refactorization keeps its pivot sequence while every pivot is at least this fraction of
/// the largest entry below it in its column (threshold partial pivoting, as UMFPACK's
/// default); below it the matrix is factored again with pivoting.
pub const REFACTOR_PIVOT_THRESHOLD: f64 = 0.1;

/// The fixed structure of one large linear system: its matrix in compressed sparse column
/// form (rows sorted in each column) and its fill-reducing column order.
pub struct SparseSystem {
    pub n: usize,
    /// Place of this system's factor in [`SparseFactors`] (numbered by the compiler).
    pub id: usize,
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    /// COLAMD column order, computed at the first solve.
    ordering: OnceLock<Result<ColumnOrder, String>>,
}

/// A column permutation as `(forward, inverse)` index vectors.
type ColumnOrder = (Vec<usize>, Vec<usize>);

/// Per-instance factors of the program's sparse systems (a scratch, never part of the state).
#[derive(Clone, Debug, Default)]
pub struct SparseFactors {
    factors: Vec<Option<Factor>>,
    /// Full factorizations (with pivot search) and refactorizations done so far.
    pub full: u64,
    pub refactored: u64,
}

/// `P_r A P_c = L U` with the row permutation `P_r` (as `row_pos`: original row -> pivot
/// position) and `L`, `U` in compressed columns over pivot positions. `L` has a unit diagonal
/// that is not stored; `U`'s columns list their off-diagonal rows in increasing order (a
/// valid elimination order, since `L` is lower triangular) and its diagonal is `u_diag`.
#[derive(Clone, Debug)]
struct Factor {
    row_pos: Vec<usize>,
    l_ptr: Vec<usize>,
    l_idx: Vec<usize>,
    l_val: Vec<f64>,
    u_ptr: Vec<usize>,
    u_idx: Vec<usize>,
    u_val: Vec<f64>,
    u_diag: Vec<f64>,
    /// Dense work vector over pivot positions, all zero between uses.
    work: Vec<f64>,
}

impl SparseSystem {
    /// The system of size `n` whose entries are at `pattern` (unique positions). Returns it
    /// with the place of each pattern entry in the compressed values that [`Self::solve`]
    /// takes.
    pub fn new(n: usize, id: usize, pattern: &[(usize, usize)]) -> (SparseSystem, Vec<usize>) {
        let mut order: Vec<usize> = (0..pattern.len()).collect();
        order.sort_unstable_by_key(|&k| (pattern[k].1, pattern[k].0));
        let mut col_ptr = vec![0; n + 1];
        let mut row_idx = Vec::with_capacity(pattern.len());
        let mut place = vec![0; pattern.len()];
        for (slot, &k) in order.iter().enumerate() {
            let (r, c) = pattern[k];
            col_ptr[c + 1] += 1;
            row_idx.push(r);
            place[k] = slot;
        }
        for c in 0..n {
            col_ptr[c + 1] += col_ptr[c];
        }
        let sys = SparseSystem {
            n,
            id,
            col_ptr,
            row_idx,
            ordering: OnceLock::new(),
        };
        (sys, place)
    }

    /// Number of stored entries (the length of the values [`Self::solve`] takes).
    pub fn nnz(&self) -> usize {
        self.row_idx.len()
    }

    fn structure(&self) -> SymbolicSparseColMatRef<'_, usize> {
        SymbolicSparseColMatRef::new_checked(self.n, self.n, &self.col_ptr, None, &self.row_idx)
    }

    fn ordering(&self) -> Result<&ColumnOrder, String> {
        self.ordering
            .get_or_init(|| {
                let params = LuSymbolicParams {
                    supernodal_flop_ratio_threshold: SupernodalThreshold::FORCE_SIMPLICIAL,
                    ..Default::default()
                };
                let symbolic = factorize_symbolic_lu(self.structure(), params)
                    .map_err(|e| format!("sparse LU analysis failed: {e:?}"))?;
                let (fwd, inv) = symbolic.col_perm().arrays();
                Ok((fwd.to_vec(), inv.to_vec()))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Solve `A x = b`, where `values` are the entries of `A` in the order [`Self::new`]
    /// returned; `b` becomes `x`. The factor of this instance (in `factors`) is refactored
    /// when its pivots still hold, computed anew otherwise.
    pub fn solve(
        &self,
        factors: &mut SparseFactors,
        values: &[f64],
        b: &mut [f64],
    ) -> Result<(), String> {
        let (col_fwd, col_inv) = self.ordering()?;
        if factors.factors.len() <= self.id {
            factors.factors.resize(self.id + 1, None);
        }
        let refactored = match &mut factors.factors[self.id] {
            Some(f) => f.refactor(self, col_fwd, values),
            None => false,
        };
        if refactored {
            factors.refactored += 1;
        } else {
            factors.full += 1;
            factors.factors[self.id] = Some(Factor::pivoted(self, col_fwd, col_inv, values)?);
        }
        let Some(factor) = factors.factors[self.id].as_mut() else {
            return Err("the sparse factorization is missing".into());
        };
        factor.solve(col_fwd, b);
        if b.iter().all(|x| x.is_finite()) {
            Ok(())
        } else {
            Err("the matrix is singular (the solution is not finite)".into())
        }
    }
}

/// The LU factors of one matrix on a [`SparseSystem`]'s pattern, kept by the caller for
/// solves with several right-hand sides (the iteration matrix of an implicit integrator,
/// factored once and used for every Newton iteration of several steps) and for refactoring
/// the next matrix along the same pivots.
#[derive(Clone, Debug)]
pub struct SparseLu(Factor);

impl SparseSystem {
    /// Factor the matrix with entries `values` (in the order [`Self::new`] returned):
    /// refactored along `previous`'s pivot sequence when its pivots still hold (the second
    /// value is then true), with pivoting otherwise.
    pub fn factor(
        &self,
        previous: Option<SparseLu>,
        values: &[f64],
    ) -> Result<(SparseLu, bool), String> {
        let (col_fwd, col_inv) = self.ordering()?;
        if let Some(SparseLu(mut f)) = previous {
            if f.refactor(self, col_fwd, values) {
                return Ok((SparseLu(f), true));
            }
        }
        Ok((
            SparseLu(Factor::pivoted(self, col_fwd, col_inv, values)?),
            false,
        ))
    }

    /// `b := A⁻¹ b` with the factor that the last [`Self::solve`] of this system left in
    /// `factors` (the matrix is known not to have changed since).
    pub fn solve_kept(&self, factors: &mut SparseFactors, b: &mut [f64]) -> Result<(), String> {
        let (col_fwd, _) = self.ordering()?;
        match factors.factors.get_mut(self.id) {
            Some(Some(factor)) => {
                factor.solve(col_fwd, b);
                Ok(())
            }
            _ => Err("the kept sparse factorization is missing".into()),
        }
    }

    /// `b := A⁻¹ b` with factors from [`Self::factor`] of this system.
    pub fn solve_factored(&self, lu: &mut SparseLu, b: &mut [f64]) -> Result<(), String> {
        let (col_fwd, _) = self.ordering()?;
        lu.0.solve(col_fwd, b);
        Ok(())
    }
}

impl Factor {
    /// Factor with partial pivoting (faer's Gilbert–Peierls) and keep the patterns.
    fn pivoted(
        sys: &SparseSystem,
        col_fwd: &[usize],
        col_inv: &[usize],
        values: &[f64],
    ) -> Result<Factor, String> {
        let n = sys.n;
        let a = SparseColMatRef::new(sys.structure(), values);
        let mut lu = SimplicialLu::<usize, f64>::new();
        let mut row_perm = vec![0; n];
        let mut row_pos = vec![0; n];
        let mut mem = faer::dyn_stack::MemBuffer::new(factorize_simplicial_numeric_lu_scratch::<
            usize,
            f64,
        >(n, n));
        let col_perm = PermRef::new_checked(col_fwd, col_inv, n);
        factorize_simplicial_numeric_lu(
            &mut row_perm,
            &mut row_pos,
            &mut lu,
            a,
            col_perm,
            faer::dyn_stack::MemStack::new(&mut mem),
        )
        .map_err(|e| format!("the matrix is singular ({e:?})"))?;
        let (l_ptr, l_idx, l_val) = strict_lower(lu.l_factor_unsorted());
        let (u_ptr, u_idx, u_val, u_diag) = sorted_upper(lu.u_factor_unsorted());
        Ok(Factor {
            row_pos,
            l_ptr,
            l_idx,
            l_val,
            u_ptr,
            u_idx,
            u_val,
            u_diag,
            work: vec![0.0; n],
        })
    }

    /// Factor `values` along the kept pivot sequence and patterns; false (and the factor
    /// unusable until computed anew) when a pivot falls below the threshold.
    fn refactor(&mut self, sys: &SparseSystem, col_fwd: &[usize], values: &[f64]) -> bool {
        let x = &mut self.work;
        for (j, &pj) in col_fwd.iter().enumerate() {
            for p in sys.col_ptr[pj]..sys.col_ptr[pj + 1] {
                x[self.row_pos[sys.row_idx[p]]] = values[p];
            }
            for p in self.u_ptr[j]..self.u_ptr[j + 1] {
                let k = self.u_idx[p];
                let ukj = x[k];
                x[k] = 0.0;
                self.u_val[p] = ukj;
                if ukj != 0.0 {
                    for q in self.l_ptr[k]..self.l_ptr[k + 1] {
                        x[self.l_idx[q]] -= self.l_val[q] * ukj;
                    }
                }
            }
            let pivot = x[j];
            x[j] = 0.0;
            let below = &self.l_idx[self.l_ptr[j]..self.l_ptr[j + 1]];
            let largest = below.iter().fold(0.0f64, |m, &i| m.max(x[i].abs()));
            let holds = pivot.is_finite()
                && pivot != 0.0
                && pivot.abs() >= REFACTOR_PIVOT_THRESHOLD * largest;
            if !holds {
                x.iter_mut().for_each(|v| *v = 0.0);
                return false;
            }
            self.u_diag[j] = pivot;
            for q in self.l_ptr[j]..self.l_ptr[j + 1] {
                let i = self.l_idx[q];
                self.l_val[q] = x[i] / pivot;
                x[i] = 0.0;
            }
        }
        true
    }

    /// `b := A⁻¹ b` with the current factors.
    fn solve(&mut self, col_fwd: &[usize], b: &mut [f64]) {
        let y = &mut self.work;
        for (r, &v) in b.iter().enumerate() {
            y[self.row_pos[r]] = v;
        }
        for k in 0..y.len() {
            let yk = y[k];
            if yk != 0.0 {
                for q in self.l_ptr[k]..self.l_ptr[k + 1] {
                    y[self.l_idx[q]] -= self.l_val[q] * yk;
                }
            }
        }
        for k in (0..y.len()).rev() {
            let yk = y[k] / self.u_diag[k];
            y[k] = yk;
            if yk != 0.0 {
                for p in self.u_ptr[k]..self.u_ptr[k + 1] {
                    y[self.u_idx[p]] -= self.u_val[p] * yk;
                }
            }
        }
        for (j, &pj) in col_fwd.iter().enumerate() {
            b[pj] = y[j];
            y[j] = 0.0;
        }
    }
}

/// The strictly lower part of faer's unit lower factor (rows already in pivot positions).
fn strict_lower(l: SparseColMatRef<'_, usize, f64>) -> (Vec<usize>, Vec<usize>, Vec<f64>) {
    let mut ptr = vec![0];
    let (mut idx, mut val) = (vec![], vec![]);
    for j in 0..l.ncols() {
        for (&i, &v) in l.row_idx_of_col_raw(j).iter().zip(l.val_of_col(j)) {
            if i != j {
                idx.push(i);
                val.push(v);
            }
        }
        ptr.push(idx.len());
    }
    (ptr, idx, val)
}

/// faer's upper factor with each column's off-diagonal rows sorted and the diagonal apart.
type UpperParts = (Vec<usize>, Vec<usize>, Vec<f64>, Vec<f64>);

fn sorted_upper(u: SparseColMatRef<'_, usize, f64>) -> UpperParts {
    let mut ptr = vec![0];
    let (mut idx, mut val) = (vec![], vec![]);
    let mut diag = vec![0.0; u.ncols()];
    for (j, d) in diag.iter_mut().enumerate() {
        let mut col: Vec<(usize, f64)> = vec![];
        for (&i, &v) in u.row_idx_of_col_raw(j).iter().zip(u.val_of_col(j)) {
            if i == j {
                *d = v;
            } else {
                col.push((i, v));
            }
        }
        col.sort_unstable_by_key(|e| e.0);
        idx.extend(col.iter().map(|e| e.0));
        val.extend(col.iter().map(|e| e.1));
        ptr.push(idx.len());
    }
    (ptr, idx, val, diag)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `A x_true` for the pattern and values.
    fn product(n: usize, pattern: &[(usize, usize)], values: &[f64], x: &[f64]) -> Vec<f64> {
        let mut b = vec![0.0; n];
        for (&(r, c), &v) in pattern.iter().zip(values) {
            b[r] += v * x[c];
        }
        b
    }

    /// Solve through `sys` with values given in pattern order.
    fn solve(
        sys: &SparseSystem,
        place: &[usize],
        factors: &mut SparseFactors,
        values: &[f64],
        b: &mut [f64],
    ) -> Result<(), String> {
        let mut compressed = vec![0.0; sys.nnz()];
        for (&k, &v) in place.iter().zip(values) {
            compressed[k] = v;
        }
        sys.solve(factors, &compressed, b)
    }

    fn max_error(x: &[f64], x_true: &[f64]) -> f64 {
        x.iter()
            .zip(x_true)
            .map(|(a, t)| (a - t).abs())
            .fold(0.0, f64::max)
    }

    #[test]
    fn tridiagonal_system_is_refactored_on_its_pivots() {
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
        let (sys, place) = SparseSystem::new(n, 0, &pattern);
        let mut factors = SparseFactors::default();
        for scale in [1.0, 2.0, 3.0] {
            let scaled: Vec<f64> = values.iter().map(|v| v * scale).collect();
            let mut x = product(n, &pattern, &scaled, &x_true);
            solve(&sys, &place, &mut factors, &scaled, &mut x).expect("regular");
            assert!(max_error(&x, &x_true) < 1e-12);
        }
        assert_eq!((factors.full, factors.refactored), (1, 2));
    }

    /// A pivot that vanishes on the kept sequence (a rotation passing through 90 degrees)
    /// makes the next solve pivot again, and the answer stays right all along.
    #[test]
    fn a_vanishing_pivot_is_factored_again_with_pivoting() {
        // block diagonal rotations [c -s; s c] coupled in a chain, plus a diagonal tail
        let blocks = 30;
        let n = 2 * blocks;
        let mut pattern = vec![];
        for k in 0..blocks {
            let (a, b) = (2 * k, 2 * k + 1);
            pattern.extend([(a, a), (a, b), (b, a), (b, b)]);
            if k + 1 < blocks {
                pattern.push((b, a + 2));
            }
        }
        let values_at = |phi: f64| -> Vec<f64> {
            let (s, c) = phi.sin_cos();
            let mut v = vec![];
            for k in 0..blocks {
                v.extend([c, -s, s, c]);
                if k + 1 < blocks {
                    v.push(0.5);
                }
            }
            v
        };
        let x_true: Vec<f64> = (0..n).map(|i| 1.0 + (i as f64).cos()).collect();
        let (sys, place) = SparseSystem::new(n, 3, &pattern);
        let mut factors = SparseFactors::default();
        let steps = 40;
        for step in 0..=steps {
            let phi = std::f64::consts::PI * step as f64 / steps as f64;
            let values = values_at(phi);
            let mut x = product(n, &pattern, &values, &x_true);
            solve(&sys, &place, &mut factors, &values, &mut x).expect("regular");
            assert!(max_error(&x, &x_true) < 1e-10, "phi = {phi}");
        }
        assert!(factors.full >= 2, "{} full factorizations", factors.full);
        assert!(factors.refactored > factors.full);
    }

    #[test]
    fn a_singular_matrix_is_reported() {
        let n = 50;
        // two equal rows
        let mut pattern = vec![];
        let mut values = vec![];
        for i in 0..n {
            pattern.push((i, i));
            values.push(1.0);
        }
        pattern.push((1, 0));
        values.push(1.0);
        pattern.push((0, 1));
        values.push(1.0);
        let (sys, place) = SparseSystem::new(n, 0, &pattern);
        let mut b = vec![1.0; n];
        let err = solve(&sys, &place, &mut SparseFactors::default(), &values, &mut b);
        assert!(err.unwrap_err().contains("singular"));
    }
}
