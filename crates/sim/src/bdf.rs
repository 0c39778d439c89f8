//! Variable-order (1–5), variable-step backward differentiation formulas for stiff systems.
//!
//! Formulation: the "quasi-constant step size" BDF of Shampine & Reichelt (The MATLAB ODE
//! Suite, SIAM J. Sci. Comput. 18, 1997). The history is kept as backward differences
//! `D[0..=k]` of the solution at equally spaced points; a step-size change by a factor `r`
//! maps them with a small `(k+1)×(k+1)` matrix, so every step is a constant-step BDF step.
//! The corrector is a simplified Newton iteration with `M = I - c J`, `c = h / γ_k`; `J` is a
//! grouped finite-difference Jacobian that is kept across steps and only re-evaluated when
//! the Newton iteration fails to converge with a stale one (like DASSL/CVODE), or after an
//! event (a restart starts with a fresh one). `M` is refactorized only when `c` drifts by
//! more than 30 % from the value it was factorized for; in between, Newton corrections are
//! rescaled by `2 / (1 + c/c_old)`.
//! Order and step are chosen after `k + 1` steps of equal size from the error estimates of
//! orders `k - 1`, `k`, `k + 1`. Dense output interpolates the backward-difference
//! polynomial of the last step (a parabola through the exact start slope for the first step
//! after a restart).

use crate::integrator::{initial_step, min_step, Integrator, IntegratorStats, StepError};
use crate::jacobian::{FdJacobian, JacobianMode};
use crate::linalg::{LinearSolver, LuFactors, SparsePattern};
use crate::system::{OdeSystem, Tolerances};
use moss_codegen::RuntimeError;

pub const MAX_ORDER: usize = 5;
const NEWTON_MAX_ITER: usize = 4;
const MIN_FACTOR: f64 = 0.2;
const MAX_FACTOR: f64 = 10.0;
/// Keep the factorized iteration matrix while `c = h/γ_k` changes by less than this fraction
/// (the Newton correction is rescaled instead; CVODE uses the same bound).
const MAX_GAMMA_CHANGE: f64 = 0.3;

/// Whether the simplified Newton iteration should give up after its iteration `k` (from 0),
/// whose correction has scaled norm `norm` and shrank by `rate` against the previous one.
///
/// The first rate says little: a corrector whose first step moved a stiff variable far from
/// the prediction (a thyristor's voltage, 1e5 V per ampere while it blocks) changes every
/// quadratic function of it (a power, an RMS integrand) by almost as much again in the
/// second step, with the third step at rounding. Judged on that one rate the iteration
/// looks too slow and the step is rejected, over and over. So the first rate only stops an
/// iteration whose correction did not shrink at all; from the second on, the iteration
/// stops when it cannot reach the tolerance in the iterations left at its current rate.
/// (CVODE lets the correction double before it gives up; a corrector let run that far
/// settles on the other side of a switching op-amp or arc instead of halving the step.)
fn diverging(k: usize, rate: f64, norm: f64, newton_tol: f64) -> bool {
    if k == 1 {
        return rate >= FIRST_RATE_DIVERGENCE;
    }
    let remaining = (NEWTON_MAX_ITER - k) as i32;
    rate >= 1.0 || rate.powi(remaining) / (1.0 - rate) * norm > newton_tol
}

/// A Newton correction whose scaled norm is below this fraction of the Newton tolerance
/// has converged whatever its rate (it is rounding).
const NEGLIGIBLE_CORRECTION: f64 = 1e-6;

/// The first contraction rate from which the Newton iteration is taken as not converging.
const FIRST_RATE_DIVERGENCE: f64 = 1.0;

/// `γ_k = Σ_{j=1..k} 1/j`: the leading coefficient of the order-k BDF in difference form.
fn gamma(k: usize) -> f64 {
    (1..=k).map(|j| 1.0 / j as f64).sum()
}

/// Local error constant of the order-k BDF.
fn error_const(k: usize) -> f64 {
    1.0 / (k as f64 + 1.0)
}

/// Matrix `R(k, r)` mapping backward differences for step `h` to those for step `r h`
/// (column-product form of Shampine & Reichelt, eq. 2.9); row-major, `(k+1)×(k+1)`.
fn difference_map(k: usize, r: f64) -> Vec<f64> {
    let m = k + 1;
    let mut out = vec![0.0; m * m];
    for j in 0..m {
        let mut prod = 1.0;
        out[j] = 1.0;
        for i in 1..m {
            prod *= if j == 0 {
                0.0
            } else {
                (i as f64 - 1.0 - r * j as f64) / i as f64
            };
            out[i * m + j] = prod;
        }
    }
    out
}

/// The last step's interpolating polynomial.
struct DenseOutput {
    t: f64,
    h: f64,
    d: Vec<Vec<f64>>,
    /// First step after a (re)start: `(t0, y0, f(t0, y0))`. The order-1 polynomial is a
    /// straight line; with the exact start slope the step is interpolated by a parabola
    /// instead, so zero crossings that go out and back within the step (a ball bouncing ever
    /// lower) stay visible to the event detection.
    start: Option<(f64, Vec<f64>, Vec<f64>)>,
}

pub struct Bdf {
    n: usize,
    tol: Tolerances,
    max_step: f64,
    newton_tol: f64,
    t: f64,
    t_prev: f64,
    h: f64,
    order: usize,
    n_equal_steps: usize,
    /// Backward differences `D[0..MAX_ORDER+3]`.
    d: Vec<Vec<f64>>,
    jac: FdJacobian,
    jac_values: Vec<f64>,
    jac_valid: bool,
    /// The Jacobian was evaluated during the current step attempt.
    jac_fresh: bool,
    /// The current Jacobian came from the symbolic tangent program (exact at the point).
    jac_symbolic: bool,
    solver: LinearSolver,
    lu: Option<LuFactors>,
    /// `c` of the factorized iteration matrix.
    lu_c: f64,
    matrix: Vec<f64>,
    dense: DenseOutput,
    /// `(t, x, f(t, x))` at the last reset, until the first step after it is accepted.
    restart_slope: Option<(f64, Vec<f64>, Vec<f64>)>,
    x: Vec<f64>,
    // Work vectors.
    y_pred: Vec<f64>,
    psi: Vec<f64>,
    y: Vec<f64>,
    acc: Vec<f64>,
    f: Vec<f64>,
    dy: Vec<f64>,
    scale: Vec<f64>,
    stats: IntegratorStats,
}

/// Result of one Newton solve of the corrector equation.
struct NewtonResult {
    converged: bool,
    iterations: usize,
    model_error: Option<RuntimeError>,
}

impl Bdf {
    pub fn new(n: usize, tol: Tolerances, max_step: f64, pattern: &[(u32, u32)]) -> Bdf {
        let sp = SparsePattern::from_entries(n, pattern);
        let nnz = sp.nnz();
        let v = || vec![0.0; n];
        let newton_tol = (10.0 * f64::EPSILON / tol.rtol).max(0.03f64.min(tol.rtol.sqrt()));
        Bdf {
            n,
            tol,
            max_step,
            newton_tol,
            t: 0.0,
            t_prev: 0.0,
            h: 0.0,
            order: 1,
            n_equal_steps: 0,
            d: vec![v(); MAX_ORDER + 3],
            jac: FdJacobian::new(sp.clone()),
            jac_values: vec![0.0; nnz],
            jac_valid: false,
            jac_fresh: false,
            jac_symbolic: false,
            solver: LinearSolver::new(sp),
            lu: None,
            lu_c: f64::NAN,
            matrix: vec![0.0; nnz],
            dense: DenseOutput {
                t: 0.0,
                h: 1.0,
                d: vec![v()],
                start: None,
            },
            restart_slope: None,
            x: v(),
            y_pred: v(),
            psi: v(),
            y: v(),
            acc: v(),
            f: v(),
            dy: v(),
            scale: v(),
            stats: IntegratorStats::default(),
        }
    }

    /// Choose where Jacobian values come from (symbolic when available by default).
    pub fn set_jacobian_mode(&mut self, mode: crate::jacobian::JacobianMode) {
        self.jac.mode = mode;
    }

    /// Current order (for tests and statistics).
    pub fn order(&self) -> usize {
        self.order
    }

    /// Predictor `y_pred = Σ_{j<=k} D_j`, its error scale, and `psi = Σ_{1<=j<=k} γ_j D_j / γ_k`.
    fn predict(&mut self, k: usize, gammas: &[f64; MAX_ORDER + 1]) {
        self.y_pred.copy_from_slice(&self.d[0]);
        self.psi.iter_mut().for_each(|v| *v = 0.0);
        for j in 1..=k {
            let (dj, g) = (&self.d[j], gammas[j] / gammas[k]);
            for i in 0..self.n {
                self.y_pred[i] += dj[i];
                self.psi[i] += g * dj[i];
            }
        }
        for i in 0..self.n {
            self.scale[i] = self.tol.scale(i, self.y_pred[i].abs());
        }
    }

    /// Rescale the differences of order `order` for a step size multiplied by `factor`.
    fn change_step(&mut self, factor: f64) {
        let k = self.order;
        let m = k + 1;
        let r = difference_map(k, factor);
        let u = difference_map(k, 1.0);
        // RU = R · U; new D_j = Σ_i RU[i][j] D_i.
        let mut ru = vec![0.0; m * m];
        for i in 0..m {
            for j in 0..m {
                ru[i * m + j] = (0..m).map(|l| r[i * m + l] * u[l * m + j]).sum();
            }
        }
        // Component by component, so no copy of the history is needed.
        let mut old = [0.0; MAX_ORDER + 1];
        for p in 0..self.n {
            for i in 0..m {
                old[i] = self.d[i][p];
            }
            for j in 0..m {
                self.d[j][p] = (0..m).map(|i| ru[i * m + j] * old[i]).sum();
            }
        }
        self.h *= factor;
        self.n_equal_steps = 0;
    }

    /// Evaluate the Jacobian at the predicted point; `Ok(false)` when it is not finite there
    /// (the step is then retried shorter, with a Jacobian at its own prediction).
    fn evaluate_jacobian(&mut self, sys: &mut dyn OdeSystem, t: f64) -> Result<bool, RuntimeError> {
        sys.rhs(t, &self.y_pred, &mut self.f)?;
        self.stats.rhs_evaluations += 1;
        let cost = self.jac.evaluate_best(
            sys,
            t,
            &self.y_pred,
            &self.f,
            &self.tol,
            &mut self.jac_values,
        )?;
        self.stats.rhs_evaluations += cost.rhs_evaluations;
        self.stats.tangent_runs += cost.tangent_runs;
        self.stats.jacobian_evaluations += 1;
        self.jac_symbolic = cost.rhs_evaluations == 0;
        // At the predicted point of a step that is too long the Jacobian may not exist (a
        // junction driven to hundreds of volts: exp overflows). Kept, every retry with a
        // shorter step would solve with NaN; not kept, the retry evaluates it again at its
        // own, closer prediction.
        if self.jac_values.iter().any(|v| !v.is_finite()) {
            return Ok(false);
        }
        self.jac_valid = true;
        self.jac_fresh = true;
        self.lu = None;
        Ok(true)
    }

    /// After the Newton iteration failed three times in one step with a fresh symbolic
    /// Jacobian (at the step and at its half and quarter): the same point by finite
    /// differences instead. (Most failures are nonlinearity that a shorter step cures;
    /// differences at the first failure cost `RoomCO2WithControls` 65 extra Jacobians and
    /// 13 % of its run, at the second 31 and 6 %.)
    ///
    /// The tangent program is exact on each side of a switch that `noEvent` hides, but a
    /// step that crosses one (an evaporator tank's `if noEvent(T < Tsat)` heating branch
    /// against its boiling branch, a sliding mode on `T = Tsat`) needs the jump: Newton
    /// with the exact one-sided slope overshoots from side to side, the step collapses, and
    /// the run crawls on with steps of 1e-8 s. Differences across the switch see the jump
    /// as a steep slope, the implicit step settles on the switching surface, as it does
    /// with finite differences throughout. The next Jacobian is symbolic again.
    fn evaluate_jacobian_numerically(
        &mut self,
        sys: &mut dyn OdeSystem,
        t: f64,
    ) -> Result<bool, RuntimeError> {
        let mode = self.jac.mode;
        self.jac.mode = JacobianMode::Numeric;
        let r = self.evaluate_jacobian(sys, t);
        self.jac.mode = mode;
        r
    }

    /// Factorize `I - c J`.
    fn factorize(&mut self, c: f64) -> bool {
        let pattern = self.solver.pattern();
        for j in 0..self.n {
            let start = pattern.col_ptr[j];
            for (k, &i) in pattern.col(j).iter().enumerate() {
                let v = -c * self.jac_values[start + k];
                self.matrix[start + k] = if i == j { 1.0 + v } else { v };
            }
        }
        self.stats.lu_factorizations += 1;
        match self.solver.factorize(&self.matrix) {
            Ok(lu) => {
                self.lu = Some(lu);
                self.lu_c = c;
                true
            }
            Err(_) => {
                self.lu = None;
                false
            }
        }
    }

    /// Simplified Newton iteration for `y - c f(t, y) = y_pred - psi` (in terms of the
    /// correction `acc = y - y_pred`).
    fn newton(&mut self, sys: &mut dyn OdeSystem, t_new: f64, c: f64) -> NewtonResult {
        self.y.copy_from_slice(&self.y_pred);
        self.acc.iter_mut().for_each(|v| *v = 0.0);
        let mut old_norm: Option<f64> = None;
        let mut result = NewtonResult {
            converged: false,
            iterations: 0,
            model_error: None,
        };
        let Some(lu) = &mut self.lu else {
            return result;
        };
        let gamma_ratio = c / self.lu_c;
        for k in 0..NEWTON_MAX_ITER {
            result.iterations = k + 1;
            self.stats.newton_iterations += 1;
            self.stats.rhs_evaluations += 1;
            if let Err(e) = sys.rhs(t_new, &self.y, &mut self.f) {
                result.model_error = Some(e);
                return result;
            }
            if self.f.iter().any(|v| !v.is_finite()) {
                return result;
            }
            for i in 0..self.n {
                self.dy[i] = c * self.f[i] - self.psi[i] - self.acc[i];
            }
            lu.solve(&mut self.dy);
            if gamma_ratio != 1.0 {
                // The matrix was factorized for c_old: scale the correction as CVODE does.
                let scale = 2.0 / (1.0 + gamma_ratio);
                self.dy.iter_mut().for_each(|v| *v *= scale);
            }
            let norm = crate::system::rms(self.dy.iter().zip(&self.scale).map(|(d, s)| d / s));
            if !norm.is_finite() {
                return result;
            }
            // A correction this far below the tolerance is rounding: its ratio to the last
            // one says nothing (a model at rest, corrections of 1e-31 that "grow" by 2).
            let negligible = norm <= NEGLIGIBLE_CORRECTION * self.newton_tol;
            let rate = old_norm.map(|o| norm / o);
            if let Some(rate) = rate {
                if !negligible && diverging(k, rate, norm, self.newton_tol) {
                    return result;
                }
            }
            for i in 0..self.n {
                self.y[i] += self.dy[i];
                self.acc[i] += self.dy[i];
            }
            if negligible || rate.is_some_and(|r| r / (1.0 - r) * norm < self.newton_tol) {
                result.converged = true;
                return result;
            }
            old_norm = Some(norm);
        }
        result
    }

    /// The differences after an accepted step with correction `acc` (D_{k+1} of the new
    /// point), and the snapshot for dense output.
    fn update_differences(&mut self) {
        let k = self.order;
        for i in 0..self.n {
            self.d[k + 2][i] = self.acc[i] - self.d[k + 1][i];
            self.d[k + 1][i] = self.acc[i];
        }
        for j in (0..=k).rev() {
            let (lo, hi) = self.d.split_at_mut(j + 1);
            for (a, b) in lo[j].iter_mut().zip(&hi[0]) {
                *a += b;
            }
        }
        self.dense.t = self.t;
        self.dense.h = self.h;
        // Reuse the snapshot's buffers.
        self.dense.d.resize_with(k + 1, || vec![0.0; self.n]);
        for (dst, src) in self.dense.d.iter_mut().zip(&self.d[..=k]) {
            dst.copy_from_slice(src);
        }
        self.dense.start = self.restart_slope.take().filter(|_| k == 1);
    }

    /// After `k + 1` equal steps: choose order k-1, k or k+1 and the next step size.
    fn adapt_order_and_step(&mut self, error_norm: f64, safety: f64) {
        let k = self.order;
        let norm_of = |s: &Self, row: usize, ck: f64| {
            crate::system::rms((0..s.n).map(|i| ck * s.d[row][i] / s.scale[i]))
        };
        let err_m = if k > 1 {
            norm_of(self, k, error_const(k - 1))
        } else {
            f64::INFINITY
        };
        let err_p = if k < MAX_ORDER {
            norm_of(self, k + 2, error_const(k + 1))
        } else {
            f64::INFINITY
        };
        let factors = [
            err_m.powf(-1.0 / k as f64),
            error_norm.powf(-1.0 / (k as f64 + 1.0)),
            err_p.powf(-1.0 / (k as f64 + 2.0)),
        ];
        let (best, &best_factor) =
            factors
                .iter()
                .enumerate()
                .fold((1, &factors[1]), |b, c| if *c.1 > *b.1 { c } else { b });
        self.order = k + best - 1;
        let factor = (safety * best_factor).min(MAX_FACTOR);
        let factor = if factor.is_finite() {
            factor
        } else {
            MAX_FACTOR
        };
        self.change_step(factor);
    }
}

impl Integrator for Bdf {
    fn reset(&mut self, sys: &mut dyn OdeSystem, t: f64, x: &[f64]) -> Result<(), StepError> {
        self.t = t;
        self.t_prev = t;
        self.x.copy_from_slice(x);
        sys.rhs(t, x, &mut self.f).map_err(StepError::Model)?;
        self.stats.rhs_evaluations += 1;
        let f0 = self.f.clone();
        self.h = initial_step(
            sys,
            t,
            x,
            &f0,
            1,
            &self.tol,
            self.max_step,
            &mut self.stats.rhs_evaluations,
        )
        .map_err(StepError::Model)?;
        for row in &mut self.d {
            row.iter_mut().for_each(|v| *v = 0.0);
        }
        self.d[0].copy_from_slice(x);
        for i in 0..self.n {
            self.d[1][i] = f0[i] * self.h;
        }
        self.order = 1;
        self.n_equal_steps = 0;
        // A restart evaluates a fresh Jacobian. The one from before the event can belong to
        // another mode of the model: with it the simplified Newton iteration still converges,
        // but only to within its tolerance, and the leftover couples into states whose
        // derivative is now exactly zero. A stuck friction element then drifts off zero
        // velocity (by 1e-8 in Translational.Examples.HeatLosses) and later starts sliding
        // in the wrong direction.
        self.jac_fresh = false;
        self.jac_valid = false;
        self.lu = None;
        self.dense = DenseOutput {
            t,
            h: self.h,
            d: vec![x.to_vec()],
            start: None,
        };
        self.restart_slope = Some((t, x.to_vec(), f0));
        Ok(())
    }

    fn step(&mut self, sys: &mut dyn OdeSystem, t_limit: f64) -> Result<(), StepError> {
        let t = self.t;
        if self.h > self.max_step {
            self.change_step(self.max_step / self.h);
        }
        self.jac_fresh = false;
        let mut last_model_error: Option<RuntimeError> = None;
        // Newton failures of this step with a fresh symbolic Jacobian (see
        // `evaluate_jacobian_numerically`)
        let mut tangent_failures = 0;
        let (error_norm, safety) = loop {
            if self.h < min_step(t) {
                return Err(match last_model_error {
                    Some(e) => StepError::Model(e),
                    None => StepError::StepTooSmall { t, h: self.h },
                });
            }
            let mut t_new = t + self.h;
            if t_new >= t_limit || t_limit - t_new < min_step(t_limit) {
                t_new = t_limit;
                self.change_step((t_limit - t) / self.h);
            }
            let k = self.order;
            let gammas: [f64; MAX_ORDER + 1] = std::array::from_fn(gamma);
            let alpha = gammas[k];
            self.predict(k, &gammas);
            let c = self.h / alpha;
            let mut newton = loop {
                if !self.jac_valid {
                    match self.evaluate_jacobian(sys, t_new) {
                        Ok(true) => {}
                        Ok(false) => {
                            break NewtonResult {
                                converged: false,
                                iterations: 0,
                                model_error: None,
                            }
                        }
                        Err(e) => {
                            break NewtonResult {
                                converged: false,
                                iterations: 0,
                                model_error: Some(e),
                            }
                        }
                    }
                }
                let stale_c = (c / self.lu_c - 1.0).abs() > MAX_GAMMA_CHANGE;
                if (self.lu.is_none() || stale_c) && !self.factorize(c) {
                    if self.jac_fresh {
                        break NewtonResult {
                            converged: false,
                            iterations: 0,
                            model_error: None,
                        };
                    }
                    self.jac_valid = false;
                    continue;
                }
                let r = self.newton(sys, t_new, c);
                if r.converged {
                    break r;
                }
                // Cheapest remedy first: a matrix for the current c, then a fresh Jacobian.
                if self.lu_c != c && r.model_error.is_none() {
                    self.lu = None;
                    continue;
                }
                if self.jac_fresh && self.jac_symbolic && r.model_error.is_none() {
                    tangent_failures += 1;
                }
                // (a shorter step is the usual remedy; differences only once that failed)
                if self.jac_fresh
                    && self.jac_symbolic
                    && r.model_error.is_none()
                    && tangent_failures >= 3
                {
                    match self.evaluate_jacobian_numerically(sys, t_new) {
                        Ok(true) => continue,
                        _ => break r,
                    }
                }
                if self.jac_fresh {
                    break r;
                }
                self.jac_valid = false;
            };
            if !newton.converged {
                self.stats.newton_failures += 1;
                self.stats.rejected_steps += 1;
                last_model_error = newton.model_error.take();
                self.change_step(0.5);
                self.lu = None;
                continue;
            }
            let safety = 0.9 * (2 * NEWTON_MAX_ITER + 1) as f64
                / (2 * NEWTON_MAX_ITER + newton.iterations) as f64;
            for i in 0..self.n {
                self.scale[i] = self.tol.scale(i, self.y[i].abs());
            }
            let ck = error_const(k);
            let error_norm =
                crate::system::rms((0..self.n).map(|i| ck * self.acc[i] / self.scale[i]));
            if error_norm > 1.0 || !error_norm.is_finite() {
                let factor = if error_norm.is_finite() {
                    (safety * error_norm.powf(-1.0 / (k as f64 + 1.0))).max(MIN_FACTOR)
                } else {
                    MIN_FACTOR
                };
                self.stats.rejected_steps += 1;
                self.change_step(factor);
                continue;
            }
            self.t_prev = t;
            self.t = t_new;
            break (error_norm, safety);
        };
        self.stats.steps += 1;
        self.x.copy_from_slice(&self.y);
        self.update_differences();
        self.n_equal_steps += 1;
        if self.n_equal_steps > self.order {
            self.adapt_order_and_step(error_norm, safety);
        }
        Ok(())
    }

    fn t(&self) -> f64 {
        self.t
    }
    fn t_prev(&self) -> f64 {
        self.t_prev
    }
    fn x(&self) -> &[f64] {
        &self.x
    }

    fn interpolate(&self, t: f64, out: &mut [f64]) {
        let dense = &self.dense;
        if let Some((t0, y0, f0)) = &dense.start {
            let h = dense.t - t0;
            let s = if h > 0.0 { (t - t0) / h } else { 1.0 };
            for i in 0..out.len() {
                let y1 = dense.d[0][i];
                out[i] = y0[i] + s * h * f0[i] + s * s * (y1 - y0[i] - h * f0[i]);
            }
            return;
        }
        out.copy_from_slice(&dense.d[0]);
        let mut p = 1.0;
        for (j, dj) in dense.d.iter().enumerate().skip(1) {
            let node = dense.t - (j as f64 - 1.0) * dense.h;
            p *= (t - node) / (j as f64 * dense.h);
            for (o, v) in out.iter_mut().zip(dj) {
                *o += v * p;
            }
        }
    }

    fn stats(&self) -> IntegratorStats {
        IntegratorStats {
            lu_refactorizations: self.solver.refactored,
            ..self.stats.clone()
        }
    }
    fn name(&self) -> &'static str {
        "bdf"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `x' = -1e6 (x - cos t) - s (x - cos t)` whose tangent knows the first term only, as a
    /// tangent program at a switch that `noEvent` hides knows one side: `s` is the steep
    /// side the step crosses into.
    struct HiddenSteepSide {
        s: f64,
    }

    impl OdeSystem for HiddenSteepSide {
        fn dim(&self) -> usize {
            1
        }
        fn rhs(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), RuntimeError> {
            dx[0] = -(1e6 + self.s) * (x[0] - t.cos());
            Ok(())
        }
        fn jacobian_pattern(&self) -> &[(u32, u32)] {
            &[(0, 0)]
        }
        fn has_symbolic_jacobian(&self) -> bool {
            true
        }
        fn jacobian_times(
            &mut self,
            _t: f64,
            _x: &[f64],
            seed: &[f64],
            out: &mut [f64],
        ) -> Result<(), RuntimeError> {
            out[0] = -1e6 * seed[0];
            Ok(())
        }
    }

    #[test]
    fn a_newton_failure_with_the_tangent_retries_with_differences() {
        let mut sys = HiddenSteepSide { s: 1e9 };
        let tol = Tolerances::uniform(1e-6, 1e-6, 1);
        let mut bdf = Bdf::new(1, tol, 1.0, &[(0, 0)]);
        bdf.reset(&mut sys, 0.0, &[1.0]).expect("starts");
        for _ in 0..10_000 {
            if bdf.t() >= 1.0 {
                break;
            }
            bdf.step(&mut sys, 1.0).expect("steps");
        }
        let stats = bdf.stats();
        assert_eq!(bdf.t(), 1.0, "{stats:?}");
        // differences see the steep side: the run follows cos t with steps as long as
        // the exact Jacobian would allow (without them Newton diverges for every step
        // above 1e-9 s)
        assert!((bdf.x()[0] - 1f64.cos()).abs() < 1e-6, "{}", bdf.x()[0]);
        assert!(stats.steps < 500, "{stats:?}");
        assert!(
            stats.tangent_runs > 0 && stats.rhs_evaluations > stats.steps,
            "{stats:?}"
        );
    }

    #[test]
    fn difference_map_identity_for_unit_factor() {
        // R(k,1)·R(k,1) = I: U is an involution.
        for k in 1..=MAX_ORDER {
            let m = k + 1;
            let u = difference_map(k, 1.0);
            for i in 0..m {
                for j in 0..m {
                    let v: f64 = (0..m).map(|l| u[i * m + l] * u[l * m + j]).sum();
                    let expect = if i == j { 1.0 } else { 0.0 };
                    assert!((v - expect).abs() < 1e-12, "k={k} ({i},{j}) = {v}");
                }
            }
        }
    }
}
