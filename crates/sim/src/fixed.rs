//! Fixed-step explicit Euler and classical Runge–Kutta 4, for debugging models (no error
//! control: the step is what you ask for). Dense output: cubic Hermite interpolation from the
//! states and derivatives at both ends of the step (linear for Euler).

use crate::integrator::{Integrator, IntegratorStats, StepError};
use crate::system::OdeSystem;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FixedMethod {
    Euler,
    Rk4,
}

pub struct FixedStep {
    method: FixedMethod,
    h: f64,
    t: f64,
    t_prev: f64,
    x: Vec<f64>,
    x_prev: Vec<f64>,
    f: Vec<f64>,
    f_prev: Vec<f64>,
    k: [Vec<f64>; 3],
    y: Vec<f64>,
    stats: IntegratorStats,
}

impl FixedStep {
    pub fn new(n: usize, method: FixedMethod, h: f64) -> FixedStep {
        let v = || vec![0.0; n];
        FixedStep {
            method,
            h,
            t: 0.0,
            t_prev: 0.0,
            x: v(),
            x_prev: v(),
            f: v(),
            f_prev: v(),
            k: [v(), v(), v()],
            y: v(),
            stats: IntegratorStats::default(),
        }
    }

    fn eval(&mut self, sys: &mut dyn OdeSystem, t: f64, which: usize) -> Result<(), StepError> {
        self.stats.rhs_evaluations += 1;
        sys.rhs(t, &self.y, &mut self.k[which])
            .map_err(StepError::Model)
    }
}

impl Integrator for FixedStep {
    fn reset(&mut self, sys: &mut dyn OdeSystem, t: f64, x: &[f64]) -> Result<(), StepError> {
        self.t = t;
        self.t_prev = t;
        self.x.copy_from_slice(x);
        self.x_prev.copy_from_slice(x);
        self.stats.rhs_evaluations += 1;
        sys.rhs(t, x, &mut self.f).map_err(StepError::Model)?;
        self.f_prev.copy_from_slice(&self.f);
        Ok(())
    }

    fn step(&mut self, sys: &mut dyn OdeSystem, t_limit: f64) -> Result<(), StepError> {
        let remaining = t_limit - self.t;
        // Land on the limit; absorb a sliver smaller than a thousandth of a step.
        let lands = self.h >= remaining * (1.0 - 1e-3);
        let h = if lands { remaining } else { self.h };
        let n = self.x.len();
        let t = self.t;
        self.x_prev.copy_from_slice(&self.x);
        self.f_prev.copy_from_slice(&self.f);
        match self.method {
            FixedMethod::Euler => {
                for i in 0..n {
                    self.x[i] += h * self.f[i];
                }
            }
            FixedMethod::Rk4 => {
                for i in 0..n {
                    self.y[i] = self.x[i] + 0.5 * h * self.f[i];
                }
                self.eval(sys, t + 0.5 * h, 0)?;
                for i in 0..n {
                    self.y[i] = self.x[i] + 0.5 * h * self.k[0][i];
                }
                self.eval(sys, t + 0.5 * h, 1)?;
                for i in 0..n {
                    self.y[i] = self.x[i] + h * self.k[1][i];
                }
                self.eval(sys, t + h, 2)?;
                for i in 0..n {
                    self.x[i] += h / 6.0
                        * (self.f[i] + 2.0 * self.k[0][i] + 2.0 * self.k[1][i] + self.k[2][i]);
                }
            }
        }
        self.t_prev = t;
        self.t = if lands { t_limit } else { t + h };
        self.stats.rhs_evaluations += 1;
        sys.rhs(self.t, &self.x, &mut self.f)
            .map_err(StepError::Model)?;
        self.stats.steps += 1;
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
        let h = self.t - self.t_prev;
        if h <= 0.0 {
            out.copy_from_slice(&self.x);
            return;
        }
        let s = ((t - self.t_prev) / h).clamp(0.0, 1.0);
        for i in 0..out.len() {
            let (y0, y1) = (self.x_prev[i], self.x[i]);
            out[i] = match self.method {
                FixedMethod::Euler => y0 + s * (y1 - y0),
                FixedMethod::Rk4 => {
                    // Cubic Hermite basis.
                    let (s2, s3) = (s * s, s * s * s);
                    (2.0 * s3 - 3.0 * s2 + 1.0) * y0
                        + (s3 - 2.0 * s2 + s) * h * self.f_prev[i]
                        + (-2.0 * s3 + 3.0 * s2) * y1
                        + (s3 - s2) * h * self.f[i]
                }
            };
        }
    }

    fn stats(&self) -> IntegratorStats {
        self.stats.clone()
    }
    fn name(&self) -> &'static str {
        match self.method {
            FixedMethod::Euler => "euler",
            FixedMethod::Rk4 => "rk4",
        }
    }
}
