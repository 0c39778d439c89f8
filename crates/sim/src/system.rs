//! What the integrators see of a model: a right-hand side `x' = f(t, x)`, its Jacobian
//! sparsity, and the error weights.
//!
//! Keeping the integrators behind this small trait (rather than `ExecutableModel`) lets the
//! unit tests drive them with plain closures and keeps event handling out of them.

use moss_codegen::{ExecutableModel, RuntimeError};

/// An ordinary differential equation `x' = f(t, x)`.
pub trait OdeSystem {
    fn dim(&self) -> usize;
    fn rhs(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), RuntimeError>;
    /// Structural nonzeros `(row, col)` of df/dx. Empty means "unknown" (treated as dense).
    fn jacobian_pattern(&self) -> &[(u32, u32)];
    /// `jacobian_times` is available (the Jacobian is known symbolically).
    fn has_symbolic_jacobian(&self) -> bool {
        false
    }
    /// `out = (df/dx)(t, x) · seed`. Only called when `has_symbolic_jacobian`.
    fn jacobian_times(
        &mut self,
        t: f64,
        x: &[f64],
        seed: &[f64],
        out: &mut [f64],
    ) -> Result<(), RuntimeError> {
        let _ = (t, x, seed, out);
        unreachable_jacobian(t)
    }
}

fn unreachable_jacobian(t: f64) -> Result<(), RuntimeError> {
    Err(RuntimeError {
        time: t,
        message: "internal error: symbolic Jacobian requested from a system without one".into(),
        details: vec![],
    })
}

/// The continuous-mode view of an executable model.
pub struct ModelSystem<'a> {
    pub model: &'a mut dyn ExecutableModel,
}

impl OdeSystem for ModelSystem<'_> {
    fn dim(&self) -> usize {
        self.model.n_states()
    }
    fn rhs(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), RuntimeError> {
        self.model.derivatives(t, x, dx)
    }
    fn jacobian_pattern(&self) -> &[(u32, u32)] {
        self.model.jacobian_pattern()
    }
    fn has_symbolic_jacobian(&self) -> bool {
        self.model.has_symbolic_jacobian()
    }
    fn jacobian_times(
        &mut self,
        t: f64,
        x: &[f64],
        seed: &[f64],
        out: &mut [f64],
    ) -> Result<(), RuntimeError> {
        self.model.jacobian_times(t, x, seed, out)
    }
}

/// Relative and absolute tolerances; errors are measured in the weighted RMS norm
/// `sqrt(mean((e_i / (atol_i + rtol * |y_i|))^2))`, so a norm <= 1 means "within tolerance".
#[derive(Clone, Debug)]
pub struct Tolerances {
    pub rtol: f64,
    /// One entry per state.
    pub atol: Vec<f64>,
}

impl Tolerances {
    pub fn new(rtol: f64, atol: Vec<f64>) -> Tolerances {
        Tolerances { rtol, atol }
    }

    /// Same absolute tolerance for every component.
    pub fn uniform(rtol: f64, atol: f64, n: usize) -> Tolerances {
        Tolerances {
            rtol,
            atol: vec![atol; n],
        }
    }

    /// Scale of component `i` for a solution magnitude `y_abs`.
    #[inline]
    pub fn scale(&self, i: usize, y_abs: f64) -> f64 {
        self.atol[i] + self.rtol * y_abs
    }

    /// Weighted RMS norm of `e` with weights from `y`.
    pub fn norm(&self, e: &[f64], y: &[f64]) -> f64 {
        rms(e
            .iter()
            .zip(y)
            .enumerate()
            .map(|(i, (e, y))| e / self.scale(i, y.abs())))
    }
}

/// Root mean square of an iterator of values (0 for an empty one).
pub fn rms(values: impl Iterator<Item = f64>) -> f64 {
    let mut sum = 0.0;
    let mut n = 0usize;
    for v in values {
        sum += v * v;
        n += 1;
    }
    if n == 0 {
        0.0
    } else {
        (sum / n as f64).sqrt()
    }
}
