//! The interface shared by all integrators, and helpers they have in common.
//!
//! The driver (`crate::driver`) owns event handling and output; an integrator only knows how
//! to take one accepted step towards a limit it must not cross (a time event or the stop
//! time), and to interpolate inside the last step (dense output).

use crate::system::{OdeSystem, Tolerances};
use moss_codegen::RuntimeError;
use std::fmt;

/// Counters of one integrator (summed over restarts).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IntegratorStats {
    pub steps: u64,
    pub rejected_steps: u64,
    pub rhs_evaluations: u64,
    pub jacobian_evaluations: u64,
    /// Runs of the symbolic tangent program (one per colour of a symbolic Jacobian).
    pub tangent_runs: u64,
    pub lu_factorizations: u64,
    /// Of the sparse factorizations, those done along the pivots of the previous one.
    pub lu_refactorizations: u64,
    pub newton_iterations: u64,
    pub newton_failures: u64,
}

impl IntegratorStats {
    /// Sum of two sets of counters (an integrator switch keeps both).
    pub fn plus(&self, o: &IntegratorStats) -> IntegratorStats {
        IntegratorStats {
            steps: self.steps + o.steps,
            rejected_steps: self.rejected_steps + o.rejected_steps,
            rhs_evaluations: self.rhs_evaluations + o.rhs_evaluations,
            jacobian_evaluations: self.jacobian_evaluations + o.jacobian_evaluations,
            tangent_runs: self.tangent_runs + o.tangent_runs,
            lu_factorizations: self.lu_factorizations + o.lu_factorizations,
            lu_refactorizations: self.lu_refactorizations + o.lu_refactorizations,
            newton_iterations: self.newton_iterations + o.newton_iterations,
            newton_failures: self.newton_failures + o.newton_failures,
        }
    }
}

/// Why a step could not be taken.
#[derive(Clone, Debug, PartialEq)]
pub enum StepError {
    /// The model failed (assert, division by zero, no convergence of an algebraic loop, ...)
    /// and reducing the step did not help.
    Model(RuntimeError),
    /// The step size fell below what floating point can resolve at `t`.
    StepTooSmall { t: f64, h: f64 },
    /// The iteration matrix is singular even with a fresh Jacobian and tiny steps.
    SingularMatrix { t: f64 },
}

impl fmt::Display for StepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StepError::Model(e) => write!(f, "{e}"),
            StepError::StepTooSmall { t, h } => write!(
                f,
                "at time {t}: the step size ({h:e}) became too small; the model may be \
                 discontinuous without an event, stiff for an explicit solver (try \
                 `--solver bdf`), or its solution runs away at this tolerance (try a smaller \
                 `--tolerance`)"
            ),
            StepError::SingularMatrix { t } => {
                write!(f, "at time {t}: the Newton iteration matrix is singular")
            }
        }
    }
}

/// An integrator with error control and dense output.
pub trait Integrator {
    /// Start (or restart after an event) at `(t, x)`: forgets all history, chooses an initial
    /// step size.
    fn reset(&mut self, sys: &mut dyn OdeSystem, t: f64, x: &[f64]) -> Result<(), StepError>;

    /// Take one accepted step; the new time never exceeds `t_limit` and equals it exactly
    /// when the step lands there.
    fn step(&mut self, sys: &mut dyn OdeSystem, t_limit: f64) -> Result<(), StepError>;

    /// Time at the end of the last accepted step (or of the reset).
    fn t(&self) -> f64;
    /// Time at the start of the last accepted step.
    fn t_prev(&self) -> f64;
    /// States at `t()`.
    fn x(&self) -> &[f64];
    /// States at `t` in `[t_prev(), t()]`, from the dense output of the last step.
    fn interpolate(&self, t: f64, out: &mut [f64]);
    fn stats(&self) -> IntegratorStats;
    /// Short name for messages ("dopri5", "bdf").
    fn name(&self) -> &'static str;
    /// The recent steps were limited by stability rather than accuracy (explicit methods
    /// only): the problem is stiff here and an implicit method would do better.
    fn is_stiff(&self) -> bool {
        false
    }
}

/// Smallest step worth taking at time `t`: a few units in the last place.
pub fn min_step(t: f64) -> f64 {
    (t.abs().max(1e-300) * f64::EPSILON * 16.0).max(f64::MIN_POSITIVE * 1e10)
}

/// The initial step is at least this many times [`min_step`].
const SMALLEST_INITIAL_STEPS: f64 = 1000.0;

/// How often [`initial_step`] shrinks its probe step when the model fails there.
const INITIAL_STEP_PROBES: u32 = 8;

/// The longest first step along which no state moves by more than a tenth of its magnitude
/// plus its absolute tolerance at the initial slope (the upper bound of CVODE's initial step,
/// Hindmarsh et al., "SUNDIALS", 2005): a transistor whose junction states start at zero
/// with slopes of 5e19 V/s (a femtofarad against a 100-ohm base resistance) otherwise starts
/// with a step that moves them by kilovolts, where the implicit methods' Newton iteration
/// lands on no solution of the circuit and the error estimate cannot tell.
fn explicit_move_bound(x: &[f64], f0: &[f64], tol: &Tolerances) -> f64 {
    let steepest = x
        .iter()
        .zip(f0)
        .zip(&tol.atol)
        .map(|((x, f), atol)| f.abs() / (0.1 * x.abs() + atol))
        .fold(0.0f64, f64::max);
    if steepest > 0.0 && steepest.is_finite() {
        1.0 / steepest
    } else {
        f64::INFINITY
    }
}

/// Initial step size from the norms of `x`, `f(x)` and a difference quotient of `f`, as in
/// Hairer, Nørsett & Wanner, Solving ODEs I, II.4: the step for which the leading error
/// term of a method of order `order` is about the tolerance.
#[allow(clippy::too_many_arguments)]
pub fn initial_step(
    sys: &mut dyn OdeSystem,
    t: f64,
    x: &[f64],
    f0: &[f64],
    order: u32,
    tol: &Tolerances,
    max_step: f64,
    rhs_count: &mut u64,
) -> Result<f64, RuntimeError> {
    let n = x.len();
    if n == 0 {
        return Ok(max_step);
    }
    let d0 = tol.norm(x, x);
    let d1 = tol.norm(f0, x);
    let bound = explicit_move_bound(x, f0, tol);
    let mut h0 = if d0 < 1e-5 || d1 < 1e-5 {
        1e-6
    } else {
        0.01 * d0 / d1
    }
    .min(bound)
    .min(max_step);
    let mut f1 = vec![0.0; n];
    // The explicit Euler probe may leave the model's domain (an assert on a current that
    // must not reverse, a square root of a vanishing quantity): probe closer before giving up.
    let mut probes_left = INITIAL_STEP_PROBES;
    loop {
        let x1: Vec<f64> = x.iter().zip(f0).map(|(x, f)| x + h0 * f).collect();
        *rhs_count += 1;
        match sys.rhs(t + h0, &x1, &mut f1) {
            Ok(()) => break,
            Err(e) => {
                probes_left -= 1;
                if probes_left == 0 || h0 * 0.01 < min_step(t) {
                    return Err(e);
                }
                h0 *= 0.01;
            }
        }
    }
    let diff: Vec<f64> = f1.iter().zip(f0).map(|(a, b)| a - b).collect();
    let d2 = tol.norm(&diff, x) / h0;
    let h1 = if d1.max(d2) <= 1e-15 {
        (h0 * 1e-3).max(1e-6)
    } else {
        (0.01 / d1.max(d2)).powf(1.0 / (order as f64 + 1.0))
    };
    // A step the integrator can take at all: states within the tolerance of zero hit by a
    // steep input (a filter at rest at a clock edge) make the estimate far smaller than
    // what floating point resolves at t, which would end the run; error control shrinks a
    // step that is too large.
    let h = (100.0 * h0)
        .min(h1)
        .min(bound)
        .max(SMALLEST_INITIAL_STEPS * min_step(t))
        .min(max_step);
    Ok(if h.is_finite() && h > 0.0 { h } else { 1e-6 })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `x' = (0.5 - x) / 1e-20` from 0: a junction behind a tiny capacitance.
    struct TinyTimeConstant;

    impl OdeSystem for TinyTimeConstant {
        fn dim(&self) -> usize {
            1
        }
        fn rhs(&mut self, _t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), RuntimeError> {
            dx[0] = (0.5 - x[0]) / 1e-20;
            Ok(())
        }
        fn jacobian_pattern(&self) -> &[(u32, u32)] {
            &[]
        }
    }

    #[test]
    fn the_first_step_does_not_move_a_state_far_beyond_its_tolerance() {
        let tol = Tolerances::uniform(1e-6, 1e-6, 1);
        let x = [0.0];
        let f0 = [0.5e20];
        let mut count = 0;
        let h = initial_step(
            &mut TinyTimeConstant,
            0.0,
            &x,
            &f0,
            1,
            &tol,
            1e-3,
            &mut count,
        )
        .expect("an initial step");
        // moved by at most a tenth of the value plus the absolute tolerance at the slope
        assert!(h * f0[0] <= 1e-6 * (1.0 + 1e-12), "h = {h:e}");
        assert!(h > 0.0);
    }
}
