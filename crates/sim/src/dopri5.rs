//! Explicit Runge–Kutta method of Dormand and Prince, order 5 with an embedded order-4 error
//! estimate, "first same as last" (the last stage is the first of the next step), a PI
//! step-size controller and the 4th-order continuous extension for dense output.
//!
//! Coefficients: J. R. Dormand, P. J. Prince, "A family of embedded Runge-Kutta formulae",
//! J. Comp. Appl. Math. 6 (1980); dense output and PI control after Hairer, Nørsett & Wanner,
//! Solving ODEs I, II.4-II.6.

use crate::integrator::{initial_step, min_step, Integrator, IntegratorStats, StepError};
use crate::system::{OdeSystem, Tolerances};

const C2: f64 = 1.0 / 5.0;
const C3: f64 = 3.0 / 10.0;
const C4: f64 = 4.0 / 5.0;
const C5: f64 = 8.0 / 9.0;
const A21: f64 = 1.0 / 5.0;
const A31: f64 = 3.0 / 40.0;
const A32: f64 = 9.0 / 40.0;
const A41: f64 = 44.0 / 45.0;
const A42: f64 = -56.0 / 15.0;
const A43: f64 = 32.0 / 9.0;
const A51: f64 = 19372.0 / 6561.0;
const A52: f64 = -25360.0 / 2187.0;
const A53: f64 = 64448.0 / 6561.0;
const A54: f64 = -212.0 / 729.0;
const A61: f64 = 9017.0 / 3168.0;
const A62: f64 = -355.0 / 33.0;
const A63: f64 = 46732.0 / 5247.0;
const A64: f64 = 49.0 / 176.0;
const A65: f64 = -5103.0 / 18656.0;
const A71: f64 = 35.0 / 384.0;
const A73: f64 = 500.0 / 1113.0;
const A74: f64 = 125.0 / 192.0;
const A75: f64 = -2187.0 / 6784.0;
const A76: f64 = 11.0 / 84.0;
/// Difference between the 5th- and 4th-order weights (error estimate).
const E1: f64 = 71.0 / 57600.0;
const E3: f64 = -71.0 / 16695.0;
const E4: f64 = 71.0 / 1920.0;
const E5: f64 = -17253.0 / 339200.0;
const E6: f64 = 22.0 / 525.0;
const E7: f64 = -1.0 / 40.0;
/// Weights of the continuous extension.
const D1: f64 = -12715105075.0 / 11282082432.0;
const D3: f64 = 87487479700.0 / 32700410799.0;
const D4: f64 = -10690763975.0 / 1880347072.0;
const D5: f64 = 701980252875.0 / 199316789632.0;
const D6: f64 = -1453857185.0 / 822651844.0;
const D7: f64 = 69997945.0 / 29380423.0;

/// PI controller: exponent of the current error and of the previous one.
const BETA: f64 = 0.04;
const EXPO1: f64 = 0.2 - BETA * 0.75;
const SAFETY: f64 = 0.9;
const MAX_GROWTH: f64 = 10.0;
const MAX_SHRINK: f64 = 5.0;
/// `h |λ|` beyond which a step counts as limited by stability rather than accuracy. Hairer
/// and Wanner use 3.25, the edge of the stability region on the negative real axis; but
/// their estimate of `|λ|` (two stage derivatives at the same time) is low where the
/// Jacobian changes fast along the step (friction laws near zero flow, media functions), and
/// a stiff fluid system (a pump volume of compressible water) was seen to settle at
/// `h |λ| ≈ 1.94` step after step, never counted. Accuracy-limited steps have `h |λ|` near
/// `tol^(1/5)`, below 0.4 even at a relative tolerance of 1e-2, so 1.5 still tells them apart.
const STIFF_H_LAMBDA: f64 = 1.5;
/// Stability-limited steps in a row that make the problem count as stiff.
const STIFF_STEPS_TO_SWITCH: u32 = 15;
/// Consecutive failed model evaluations (inside a trial step) before giving up.
const MAX_MODEL_FAILURES: u32 = 12;

pub struct Dopri5 {
    tol: Tolerances,
    max_step: f64,
    t: f64,
    t_prev: f64,
    h: f64,
    x: Vec<f64>,
    /// f(t, x), the first stage of the next step.
    k1: Vec<f64>,
    k: [Vec<f64>; 6],
    y_stage: Vec<f64>,
    y_new: Vec<f64>,
    /// Dense output coefficients of the last step (see [`Dopri5::interpolate`]).
    cont: [Vec<f64>; 5],
    facold: f64,
    last_rejected: bool,
    /// Stiffness detection: consecutive accepted steps that looked stability-limited, and
    /// consecutive ones that did not.
    stiff_steps: u32,
    nonstiff_steps: u32,
    stats: IntegratorStats,
}

impl Dopri5 {
    pub fn new(n: usize, tol: Tolerances, max_step: f64) -> Dopri5 {
        let v = || vec![0.0; n];
        Dopri5 {
            tol,
            max_step,
            t: 0.0,
            t_prev: 0.0,
            h: 0.0,
            x: v(),
            k1: v(),
            k: [v(), v(), v(), v(), v(), v()],
            y_stage: v(),
            y_new: v(),
            cont: [v(), v(), v(), v(), v()],
            facold: 1e-4,
            last_rejected: false,
            stiff_steps: 0,
            nonstiff_steps: 0,
            stats: IntegratorStats::default(),
        }
    }

    /// Override the size of the next step (e.g. for fixed-step convergence studies: combine
    /// with a huge tolerance and `max_step = h`).
    pub fn set_step_size(&mut self, h: f64) {
        self.h = h;
    }

    /// Stages 2..7 of a step of size `h` from `(t, x)`; fills `y_new` and `k[0..6]` (stages
    /// 2..7; `k[5]` is f at the new point).
    fn trial_step(&mut self, sys: &mut dyn OdeSystem, h: f64) -> Result<(), StepError> {
        let n = self.x.len();
        let t = self.t;
        let (x, k1) = (&self.x, &self.k1);
        let [k2, k3, k4, k5, k6, k7] = &mut self.k;
        let y = &mut self.y_stage;
        let mut eval = |tt: f64, y: &[f64], out: &mut Vec<f64>, count: &mut u64| {
            *count += 1;
            sys.rhs(tt, y, out).map_err(StepError::Model)
        };
        let cnt = &mut self.stats.rhs_evaluations;
        for i in 0..n {
            y[i] = x[i] + h * A21 * k1[i];
        }
        eval(t + C2 * h, y, k2, cnt)?;
        for i in 0..n {
            y[i] = x[i] + h * (A31 * k1[i] + A32 * k2[i]);
        }
        eval(t + C3 * h, y, k3, cnt)?;
        for i in 0..n {
            y[i] = x[i] + h * (A41 * k1[i] + A42 * k2[i] + A43 * k3[i]);
        }
        eval(t + C4 * h, y, k4, cnt)?;
        for i in 0..n {
            y[i] = x[i] + h * (A51 * k1[i] + A52 * k2[i] + A53 * k3[i] + A54 * k4[i]);
        }
        eval(t + C5 * h, y, k5, cnt)?;
        for i in 0..n {
            y[i] = x[i] + h * (A61 * k1[i] + A62 * k2[i] + A63 * k3[i] + A64 * k4[i] + A65 * k5[i]);
        }
        eval(t + h, y, k6, cnt)?;
        let y_new = &mut self.y_new;
        for i in 0..n {
            y_new[i] =
                x[i] + h * (A71 * k1[i] + A73 * k3[i] + A74 * k4[i] + A75 * k5[i] + A76 * k6[i]);
        }
        eval(t + h, y_new, k7, cnt)?;
        Ok(())
    }

    /// Weighted RMS norm of the local error estimate of the trial step.
    fn error_norm(&self, h: f64) -> f64 {
        let k1 = &self.k1;
        let [_, k3, k4, k5, k6, k7] = &self.k;
        let err = (0..self.x.len()).map(|i| {
            let e =
                h * (E1 * k1[i] + E3 * k3[i] + E4 * k4[i] + E5 * k5[i] + E6 * k6[i] + E7 * k7[i]);
            e / self.tol.scale(i, self.x[i].abs().max(self.y_new[i].abs()))
        });
        crate::system::rms(err)
    }

    /// Hairer & Wanner's test (Solving ODEs II, IV.2): k7 and k6 are both f at t + h, at
    /// y_new and at the stage-6 point; `h |k7 - k6| / |y_new - y6|` estimates `h |λ|` for
    /// the dominant eigenvalue. Beyond [`STIFF_H_LAMBDA`] (near the edge of DOPRI5's stability region on the
    /// negative real axis) the step size is set by stability, not accuracy.
    fn update_stiffness(&mut self, h: f64) {
        let k6 = &self.k[4];
        let k7 = &self.k[5];
        let num: f64 = k7.iter().zip(k6).map(|(a, b)| (a - b) * (a - b)).sum();
        let den: f64 = self
            .y_new
            .iter()
            .zip(&self.y_stage)
            .map(|(a, b)| (a - b) * (a - b))
            .sum();
        if den <= 0.0 {
            return;
        }
        if h * (num / den).sqrt() > STIFF_H_LAMBDA {
            self.nonstiff_steps = 0;
            self.stiff_steps += 1;
        } else {
            self.nonstiff_steps += 1;
            if self.nonstiff_steps >= 6 {
                self.stiff_steps = 0;
            }
        }
    }

    /// Coefficients of the continuous extension of the accepted step of size `h`.
    fn store_dense_output(&mut self, h: f64) {
        let k1 = &self.k1;
        let [_, k3, k4, k5, k6, k7] = &self.k;
        let [r1, r2, r3, r4, r5] = &mut self.cont;
        for i in 0..self.x.len() {
            let dy = self.y_new[i] - self.x[i];
            let bspl = h * k1[i] - dy;
            r1[i] = self.x[i];
            r2[i] = dy;
            r3[i] = bspl;
            r4[i] = dy - h * k7[i] - bspl;
            r5[i] =
                h * (D1 * k1[i] + D3 * k3[i] + D4 * k4[i] + D5 * k5[i] + D6 * k6[i] + D7 * k7[i]);
        }
    }
}

impl Integrator for Dopri5 {
    fn reset(&mut self, sys: &mut dyn OdeSystem, t: f64, x: &[f64]) -> Result<(), StepError> {
        self.t = t;
        self.t_prev = t;
        self.x.copy_from_slice(x);
        sys.rhs(t, x, &mut self.k1).map_err(StepError::Model)?;
        self.stats.rhs_evaluations += 1;
        let estimate = initial_step(
            sys,
            t,
            x,
            &self.k1,
            5,
            &self.tol,
            self.max_step,
            &mut self.stats.rhs_evaluations,
        )
        .map_err(StepError::Model)?;
        // On a restart after an event, the step the controller proposed last is a good bound:
        // the estimate knows nothing about stability limits.
        self.h = if self.h > 0.0 {
            estimate.min(self.h)
        } else {
            estimate
        };
        self.facold = 1e-4;
        self.last_rejected = false;
        for (r, x) in self.cont[0].iter_mut().zip(x) {
            *r = *x;
        }
        for c in &mut self.cont[1..] {
            c.iter_mut().for_each(|v| *v = 0.0);
        }
        Ok(())
    }

    fn step(&mut self, sys: &mut dyn OdeSystem, t_limit: f64) -> Result<(), StepError> {
        let mut model_failures = 0;
        loop {
            let remaining = t_limit - self.t;
            let mut h = self.h.min(self.max_step);
            // Land exactly on the limit; avoid leaving a sliver behind.
            let lands = h >= remaining * 0.999;
            if lands {
                h = remaining;
            }
            if h < min_step(self.t) && !lands {
                return Err(StepError::StepTooSmall { t: self.t, h });
            }
            match self.trial_step(sys, h) {
                Ok(()) => model_failures = 0,
                Err(StepError::Model(e)) => {
                    // A trial point outside the model's domain: retry with a smaller step.
                    model_failures += 1;
                    self.stats.rejected_steps += 1;
                    if model_failures >= MAX_MODEL_FAILURES || h < min_step(self.t) * 4.0 {
                        return Err(StepError::Model(e));
                    }
                    self.h = h * 0.25;
                    self.last_rejected = true;
                    continue;
                }
                Err(e) => return Err(e),
            }
            let err = self.error_norm(h);
            if !err.is_finite() {
                self.stats.rejected_steps += 1;
                self.h = h * 0.25;
                self.last_rejected = true;
                if self.h < min_step(self.t) {
                    return Err(StepError::StepTooSmall {
                        t: self.t,
                        h: self.h,
                    });
                }
                continue;
            }
            let fac11 = err.powf(EXPO1);
            if err <= 1.0 {
                let fac =
                    (fac11 / self.facold.powf(BETA) / SAFETY).clamp(1.0 / MAX_GROWTH, MAX_SHRINK);
                let mut h_new = h / fac;
                if self.last_rejected {
                    h_new = h_new.min(h);
                }
                self.facold = err.max(1e-4);
                self.last_rejected = false;
                self.store_dense_output(h);
                self.update_stiffness(h);
                self.t_prev = self.t;
                self.t = if lands { t_limit } else { self.t + h };
                std::mem::swap(&mut self.x, &mut self.y_new);
                std::mem::swap(&mut self.k1, &mut self.k[5]);
                self.stats.steps += 1;
                // Keep the proposed size even if this step was shortened to hit the limit.
                self.h = if lands { h_new.max(self.h) } else { h_new };
                return Ok(());
            }
            self.stats.rejected_steps += 1;
            self.last_rejected = true;
            self.h = h / (fac11 / SAFETY).min(MAX_SHRINK);
        }
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
        let h = self.t - self.t_prev;
        if h <= 0.0 {
            out.copy_from_slice(&self.x);
            return;
        }
        let s = ((t - self.t_prev) / h).clamp(0.0, 1.0);
        let s1 = 1.0 - s;
        let [r1, r2, r3, r4, r5] = &self.cont;
        for i in 0..out.len() {
            out[i] = r1[i] + s * (r2[i] + s1 * (r3[i] + s * (r4[i] + s1 * r5[i])));
        }
    }

    fn stats(&self) -> IntegratorStats {
        self.stats.clone()
    }
    fn name(&self) -> &'static str {
        "dopri5"
    }
    fn is_stiff(&self) -> bool {
        self.stiff_steps >= STIFF_STEPS_TO_SWITCH
    }
}
