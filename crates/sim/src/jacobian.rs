//! Sparse Jacobians of the ODE grouped by column colouring (Curtis, Powell & Reid): columns
//! that share no row can be seeded together, so a banded or block-diagonal Jacobian costs a
//! handful of evaluations instead of `n`. Each colour is one run of the model's symbolic
//! tangent program (`J · s` exactly) when it has one, else one perturbed right-hand side
//! (forward differences).

use crate::linalg::SparsePattern;
use crate::system::{OdeSystem, Tolerances};
use moss_codegen::RuntimeError;

/// A greedy colouring of the columns of `pattern`: `colour[j]` for every column, and the
/// columns of each colour.
#[derive(Clone, Debug)]
pub struct ColumnColouring {
    pub colour: Vec<usize>,
    pub groups: Vec<Vec<usize>>,
}

impl ColumnColouring {
    pub fn new(pattern: &SparsePattern) -> ColumnColouring {
        let n = pattern.n;
        // Columns of each row, to find the columns that conflict with a given one.
        let mut row_cols: Vec<Vec<usize>> = vec![Vec::new(); n];
        for j in 0..n {
            for &i in pattern.col(j) {
                row_cols[i].push(j);
            }
        }
        let mut colour = vec![usize::MAX; n];
        let mut forbidden_by = vec![usize::MAX; n + 1];
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for j in 0..n {
            for &i in pattern.col(j) {
                for &k in &row_cols[i] {
                    if colour[k] != usize::MAX {
                        forbidden_by[colour[k]] = j;
                    }
                }
            }
            let c = (0..).find(|&c| forbidden_by[c] != j).unwrap_or(0);
            colour[j] = c;
            if c == groups.len() {
                groups.push(Vec::new());
            }
            groups[c].push(j);
        }
        ColumnColouring { colour, groups }
    }
}

/// Where Jacobian values come from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum JacobianMode {
    /// The symbolic tangent program when the model has one, else finite differences.
    #[default]
    Auto,
    /// Finite differences even when a symbolic Jacobian exists (for comparisons).
    Numeric,
}

impl JacobianMode {
    pub fn parse(s: &str) -> Option<JacobianMode> {
        match s.to_ascii_lowercase().as_str() {
            "auto" | "symbolic" => Some(JacobianMode::Auto),
            "numeric" | "fd" | "finite-differences" => Some(JacobianMode::Numeric),
            _ => None,
        }
    }
}

/// How many evaluations one Jacobian cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JacobianCost {
    pub rhs_evaluations: u64,
    pub tangent_runs: u64,
}

/// Evaluates `df/dx` into pattern-ordered values, colour by colour.
pub struct FdJacobian {
    pub pattern: SparsePattern,
    colouring: ColumnColouring,
    pub mode: JacobianMode,
    x_pert: Vec<f64>,
    f_pert: Vec<f64>,
    delta: Vec<f64>,
}

impl FdJacobian {
    pub fn new(pattern: SparsePattern) -> FdJacobian {
        let n = pattern.n;
        FdJacobian {
            colouring: ColumnColouring::new(&pattern),
            pattern,
            mode: JacobianMode::Auto,
            x_pert: vec![0.0; n],
            f_pert: vec![0.0; n],
            delta: vec![0.0; n],
        }
    }

    /// `values[k]` = d f_i / d x_j for the k-th pattern entry `(i, j)`, from the system's
    /// symbolic Jacobian when it has one (and the mode allows it), else by forward
    /// differences from `f0 = f(t, x)`.
    ///
    /// A symbolic Jacobian with an entry that is not finite is replaced by forward
    /// differences: the tangent program evaluates derivative formulas whose intermediate
    /// terms can overflow where the function itself does not (`d/dz 2/(1 + exp(-z))` is
    /// `2 exp(-z) / (1 + exp(-z))^2`, `inf/inf` for `z < -709`, while the function is a
    /// clean `-1`), and a NaN in the iteration matrix makes every step fail however small.
    /// A tangent program that fails is replaced the same way: its linear systems have the
    /// matrices of the model's, and where the model solves a singular but consistent system
    /// (ideal switches and diodes all off in a bridge) the tangent system has no unique
    /// solution, while differences of the right-hand side still give a usable matrix.
    pub fn evaluate_best(
        &mut self,
        sys: &mut dyn OdeSystem,
        t: f64,
        x: &[f64],
        f0: &[f64],
        tol: &Tolerances,
        values: &mut [f64],
    ) -> Result<JacobianCost, RuntimeError> {
        if self.mode == JacobianMode::Auto && sys.has_symbolic_jacobian() {
            let (runs, exact) = match self.evaluate_symbolic(sys, t, x, values) {
                Ok(runs) => (runs, values.iter().all(|v| v.is_finite())),
                Err(_) => (self.colouring.groups.len() as u64, false),
            };
            let rhs_evaluations = if exact {
                0
            } else {
                self.evaluate(sys, t, x, f0, tol, values)?
            };
            return Ok(JacobianCost {
                rhs_evaluations,
                tangent_runs: runs,
            });
        }
        let used = self.evaluate(sys, t, x, f0, tol, values)?;
        Ok(JacobianCost {
            rhs_evaluations: used,
            tangent_runs: 0,
        })
    }

    /// One tangent run per colour, seeded with ones on the colour's columns. Returns the
    /// number of runs.
    pub fn evaluate_symbolic(
        &mut self,
        sys: &mut dyn OdeSystem,
        t: f64,
        x: &[f64],
        values: &mut [f64],
    ) -> Result<u64, RuntimeError> {
        let mut runs = 0;
        // `x_pert` holds the seed, `f_pert` the product.
        self.x_pert.iter_mut().for_each(|v| *v = 0.0);
        for group in &self.colouring.groups {
            for &j in group {
                self.x_pert[j] = 1.0;
            }
            sys.jacobian_times(t, x, &self.x_pert, &mut self.f_pert)?;
            runs += 1;
            for &j in group {
                self.x_pert[j] = 0.0;
                let start = self.pattern.col_ptr[j];
                for (k, &i) in self.pattern.col(j).iter().enumerate() {
                    values[start + k] = self.f_pert[i];
                }
            }
        }
        Ok(runs)
    }

    pub fn n_colours(&self) -> usize {
        self.colouring.groups.len()
    }

    /// `values[k]` = d f_i / d x_j for the k-th pattern entry `(i, j)`; `f0 = f(t, x)`.
    /// Returns the number of right-hand-side evaluations used.
    pub fn evaluate(
        &mut self,
        sys: &mut dyn OdeSystem,
        t: f64,
        x: &[f64],
        f0: &[f64],
        tol: &Tolerances,
        values: &mut [f64],
    ) -> Result<u64, RuntimeError> {
        let sqrt_eps = f64::EPSILON.sqrt();
        let mut evaluations = 0;
        for group in &self.colouring.groups {
            self.x_pert.copy_from_slice(x);
            for &j in group {
                // Step relative to the larger of |x_j| and its error weight atol + rtol |x_j|
                // (as DASSL does), signed like x_j: a state far below its absolute
                // tolerance (Robertson's y2 ~ 1e-13) gets a step of its own size, not one
                // that swamps its curvature.
                let scale = x[j].abs().max(tol.scale(j, x[j].abs())).max(1e-300);
                let mut d = sqrt_eps * scale;
                if x[j] < 0.0 {
                    d = -d;
                }
                // Make the perturbation exactly representable.
                self.x_pert[j] = x[j] + d;
                self.delta[j] = self.x_pert[j] - x[j];
            }
            sys.rhs(t, &self.x_pert, &mut self.f_pert)?;
            evaluations += 1;
            for &j in group {
                let start = self.pattern.col_ptr[j];
                for (k, &i) in self.pattern.col(j).iter().enumerate() {
                    values[start + k] = (self.f_pert[i] - f0[i]) / self.delta[j];
                }
            }
        }
        Ok(evaluations)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tridiagonal_needs_three_colours() {
        let n = 50;
        let mut e = Vec::new();
        for i in 0..n as u32 {
            if i > 0 {
                e.push((i, i - 1));
            }
            if i + 1 < n as u32 {
                e.push((i, i + 1));
            }
        }
        let pattern = SparsePattern::from_entries(n, &e);
        let c = ColumnColouring::new(&pattern);
        assert_eq!(c.groups.len(), 3);
        // No two columns of one colour share a row.
        for g in &c.groups {
            let mut seen = vec![false; n];
            for &j in g {
                for &i in pattern.col(j) {
                    assert!(!seen[i], "row {i} hit twice in one colour");
                    seen[i] = true;
                }
            }
        }
    }

    #[test]
    fn dense_pattern_needs_n_colours() {
        let pattern = SparsePattern::from_entries(5, &[]);
        assert_eq!(ColumnColouring::new(&pattern).groups.len(), 5);
    }
}
