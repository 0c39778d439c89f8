//! Integrators on plain ODEs: convergence order, stiff reference solutions, dense output.
#![allow(clippy::needless_range_loop)]

use moss_codegen::RuntimeError;
use moss_sim::bdf::Bdf;
use moss_sim::dopri5::Dopri5;
use moss_sim::{Integrator, OdeSystem, Tolerances};

/// An ODE given by a closure.
struct Ode<F: FnMut(f64, &[f64], &mut [f64])> {
    n: usize,
    f: F,
    pattern: Vec<(u32, u32)>,
}

impl<F: FnMut(f64, &[f64], &mut [f64])> OdeSystem for Ode<F> {
    fn dim(&self) -> usize {
        self.n
    }
    fn rhs(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), RuntimeError> {
        (self.f)(t, x, dx);
        Ok(())
    }
    fn jacobian_pattern(&self) -> &[(u32, u32)] {
        &self.pattern
    }
}

fn run_to(integ: &mut dyn Integrator, sys: &mut dyn OdeSystem, t0: f64, x0: &[f64], t_end: f64) {
    integ.reset(sys, t0, x0).expect("reset");
    while integ.t() < t_end {
        integ.step(sys, t_end).expect("step");
    }
}

fn decay() -> Ode<impl FnMut(f64, &[f64], &mut [f64])> {
    Ode {
        n: 1,
        f: |_t, x: &[f64], dx: &mut [f64]| dx[0] = -x[0],
        pattern: vec![(0, 0)],
    }
}

/// Global error at t = 1 of DOPRI5 forced to take `steps` equal steps on y' = -y.
fn dopri_fixed_step_error(steps: usize) -> f64 {
    let h = 1.0 / steps as f64;
    // A huge tolerance accepts every step; max_step pins the size.
    let mut integ = Dopri5::new(1, Tolerances::uniform(1e10, 1e10, 1), h);
    let mut sys = decay();
    integ.reset(&mut sys, 0.0, &[1.0]).expect("reset");
    integ.set_step_size(h);
    while integ.t() < 1.0 {
        integ.step(&mut sys, 1.0).expect("step");
    }
    assert_eq!(integ.stats().steps as usize, steps);
    (integ.x()[0] - (-1.0f64).exp()).abs()
}

#[test]
fn dopri5_is_fifth_order() {
    let e1 = dopri_fixed_step_error(10);
    let e2 = dopri_fixed_step_error(20);
    let order = (e1 / e2).log2();
    assert!(
        (order - 5.0).abs() < 0.3,
        "observed order {order} (errors {e1:e}, {e2:e})"
    );
}

#[test]
fn dopri5_dense_output_is_accurate() {
    let mut integ = Dopri5::new(1, Tolerances::uniform(1e-8, 1e-10, 1), 10.0);
    let mut sys = decay();
    integ.reset(&mut sys, 0.0, &[1.0]).expect("reset");
    let mut worst: f64 = 0.0;
    while integ.t() < 5.0 {
        integ.step(&mut sys, 5.0).expect("step");
        let (a, b) = (integ.t_prev(), integ.t());
        for k in 0..=10 {
            let t = a + (b - a) * k as f64 / 10.0;
            let mut y = [0.0];
            integ.interpolate(t, &mut y);
            worst = worst.max((y[0] - (-t).exp()).abs());
        }
    }
    assert!(worst < 1e-7, "dense output error {worst:e}");
}

#[test]
fn tolerance_controls_error_for_both_methods() {
    for rtol in [1e-4, 1e-6, 1e-8] {
        let mut sys = decay();
        let mut d = Dopri5::new(1, Tolerances::uniform(rtol, rtol, 1), 10.0);
        run_to(&mut d, &mut sys, 0.0, &[1.0], 3.0);
        let mut b = Bdf::new(1, Tolerances::uniform(rtol, rtol, 1), 10.0, &[(0, 0)]);
        run_to(&mut b, &mut sys, 0.0, &[1.0], 3.0);
        let exact = (-3.0f64).exp();
        for (name, x) in [("dopri5", d.x()[0]), ("bdf", b.x()[0])] {
            let err = (x - exact).abs() / exact;
            assert!(err < 100.0 * rtol, "{name} rtol {rtol}: error {err:e}");
        }
    }
}

fn robertson() -> Ode<impl FnMut(f64, &[f64], &mut [f64])> {
    Ode {
        n: 3,
        f: |_t, y: &[f64], dy: &mut [f64]| {
            dy[0] = -0.04 * y[0] + 1e4 * y[1] * y[2];
            dy[2] = 3e7 * y[1] * y[1];
            dy[1] = -dy[0] - dy[2];
        },
        pattern: vec![],
    }
}

/// Reference values at t = 40 (the classic test problem; y3 follows from y1 + y2 + y3 = 1).
const ROBERTSON_40: [f64; 3] = [0.715_827_068_7, 9.185_534_765e-6, 0.284_163_745_7];

#[test]
fn bdf_solves_robertson() {
    let mut sys = robertson();
    let mut b = Bdf::new(3, Tolerances::new(1e-6, vec![1e-8, 1e-12, 1e-8]), 1e3, &[]);
    run_to(&mut b, &mut sys, 0.0, &[1.0, 0.0, 0.0], 40.0);
    for i in 0..3 {
        let rel = (b.x()[i] - ROBERTSON_40[i]).abs() / ROBERTSON_40[i];
        assert!(
            rel < 1e-4,
            "y{} = {} (reference {})",
            i + 1,
            b.x()[i],
            ROBERTSON_40[i]
        );
    }
    let s = b.stats();
    assert!(s.steps < 500, "too many steps: {s:?}");
    assert!(
        s.jacobian_evaluations < s.steps,
        "Jacobian not reused: {s:?}"
    );
}

/// Van der Pol with mu = 1000 in Liénard-free form: x' = y, y' = mu (1 - x^2) y - x.
fn van_der_pol(mu: f64) -> Ode<impl FnMut(f64, &[f64], &mut [f64])> {
    Ode {
        n: 2,
        f: move |_t, x: &[f64], dx: &mut [f64]| {
            dx[0] = x[1];
            dx[1] = mu * (1.0 - x[0] * x[0]) * x[1] - x[0];
        },
        pattern: vec![(0, 1), (1, 0), (1, 1)],
    }
}

#[test]
fn bdf_beats_dopri5_on_stiff_van_der_pol() {
    // Over [0, 100] the solution crawls along the slow manifold (x from 2 down to ~1.9).
    let t_end = 100.0;
    let tol = || Tolerances::uniform(1e-6, 1e-6, 2);
    let mut sys = van_der_pol(1000.0);
    let mut b = Bdf::new(2, tol(), 1e3, &sys.pattern.clone());
    run_to(&mut b, &mut sys, 0.0, &[2.0, 0.0], t_end);
    let mut d = Dopri5::new(2, tol(), 1e3);
    run_to(&mut d, &mut sys, 0.0, &[2.0, 0.0], t_end);
    let rel = (b.x()[0] - d.x()[0]).abs() / d.x()[0].abs();
    assert!(rel < 1e-4, "bdf x = {}, dopri5 x = {}", b.x()[0], d.x()[0]);
    let (sb, sd) = (b.stats(), d.stats());
    assert!(
        sd.steps > 20 * sb.steps,
        "dopri5 should need far more steps: bdf {sb:?}, dopri5 {sd:?}"
    );
}

#[test]
fn bdf_dense_output_between_steps() {
    let mut sys = decay();
    let mut b = Bdf::new(1, Tolerances::uniform(1e-8, 1e-10, 1), 10.0, &[(0, 0)]);
    b.reset(&mut sys, 0.0, &[1.0]).expect("reset");
    let mut worst: f64 = 0.0;
    while b.t() < 5.0 {
        b.step(&mut sys, 5.0).expect("step");
        let (a, e) = (b.t_prev(), b.t());
        for k in 0..=4 {
            let t = a + (e - a) * k as f64 / 4.0;
            let mut y = [0.0];
            b.interpolate(t, &mut y);
            worst = worst.max((y[0] - (-t).exp()).abs());
        }
    }
    assert!(worst < 1e-6, "dense output error {worst:e}");
}

#[test]
fn bdf_uses_sparse_lu_for_large_banded_system() {
    // 1-D heat equation, n = 400: tridiagonal Jacobian, stiff.
    let n = 400;
    let mut pattern = Vec::new();
    for i in 0..n as u32 {
        pattern.push((i, i));
        if i > 0 {
            pattern.push((i, i - 1));
        }
        if i + 1 < n as u32 {
            pattern.push((i, i + 1));
        }
    }
    let k = (n as f64 + 1.0).powi(2);
    let mut sys = Ode {
        n,
        f: move |_t, u: &[f64], du: &mut [f64]| {
            for i in 0..u.len() {
                let l = if i > 0 { u[i - 1] } else { 0.0 };
                let r = if i + 1 < u.len() { u[i + 1] } else { 0.0 };
                du[i] = k * (l - 2.0 * u[i] + r);
            }
        },
        pattern,
    };
    // Initial condition: the slowest eigenmode, which decays as exp(-lambda t).
    let pi = std::f64::consts::PI;
    let h = 1.0 / (n as f64 + 1.0);
    let x0: Vec<f64> = (1..=n).map(|i| (pi * i as f64 * h).sin()).collect();
    let lambda = 4.0 * k * (pi * h / 2.0).sin().powi(2);
    let mut b = Bdf::new(
        n,
        Tolerances::uniform(1e-6, 1e-8, n),
        1.0,
        &sys.pattern.clone(),
    );
    run_to(&mut b, &mut sys, 0.0, &x0, 0.1);
    let decay = (-lambda * 0.1).exp();
    let mid = n / 2;
    let rel = (b.x()[mid] - x0[mid] * decay).abs() / (x0[mid] * decay);
    assert!(rel < 1e-3, "relative error {rel:e}");
    // Three colours: each Jacobian costs 3 + 1 evaluations, not n.
    let s = b.stats();
    assert!(s.rhs_evaluations < 50 * s.steps + 4 * n as u64, "{s:?}");
}

/// Global error at t = 1 of a fixed-step method on y' = -y with `steps` steps.
fn fixed_step_error(method: moss_sim::fixed::FixedMethod, steps: usize) -> f64 {
    let mut integ = moss_sim::fixed::FixedStep::new(1, method, 1.0 / steps as f64);
    let mut sys = decay();
    run_to(&mut integ, &mut sys, 0.0, &[1.0], 1.0);
    assert_eq!(integ.stats().steps as usize, steps);
    (integ.x()[0] - (-1.0f64).exp()).abs()
}

#[test]
fn fixed_step_methods_have_their_order() {
    use moss_sim::fixed::FixedMethod;
    for (method, expected) in [(FixedMethod::Euler, 1.0), (FixedMethod::Rk4, 4.0)] {
        let order = (fixed_step_error(method, 20) / fixed_step_error(method, 40)).log2();
        assert!(
            (order - expected).abs() < 0.15,
            "{method:?}: observed order {order}"
        );
    }
}

/// A stiff variable `y` tracking a rectified sine and an integrator of a quadratic in it,
/// `x' = (a y)^2` (the RMS integrand of a thyristor voltage, volts per ampere of 1e4). The
/// corrector's first step moves `y` by its prediction error; the second corrects `x` by the
/// square of that, about as much as the first, and the third is at rounding. Declaring the
/// iteration stalled on that first rate rejected one step in five and refreshed the
/// Jacobian for each; the iteration must be let run.
#[test]
fn bdf_corrector_is_not_rejected_on_its_first_rate() {
    let (k, a) = (1e5, 1e4);
    let system = || Ode {
        n: 2,
        f: move |t: f64, y: &[f64], dy: &mut [f64]| {
            dy[0] = -k * (y[0] - 1e-3 * (100.0 * t).sin().abs());
            dy[1] = (a * y[0]) * (a * y[0]);
        },
        pattern: vec![(0, 0), (1, 0)],
    };
    let run = |rtol: f64| {
        let mut sys = system();
        let mut b = Bdf::new(
            2,
            Tolerances::uniform(rtol, rtol, 2),
            1e3,
            &[(0, 0), (1, 0)],
        );
        run_to(&mut b, &mut sys, 0.0, &[0.0, 0.0], 1.0);
        (b.x()[1], b.stats().clone())
    };
    let (x, stats) = run(1e-6);
    let (x_fine, _) = run(1e-10);
    assert_eq!(stats.newton_failures, 0, "{stats:?}");
    assert!(stats.jacobian_evaluations <= 5, "{stats:?}");
    assert!(
        (x - x_fine).abs() < 1e-4 * x_fine,
        "x = {x}, fine tolerance {x_fine}"
    );
}

/// A model at rest whose right-hand side is rounding noise (the balances of a room of air
/// at its start state evaluate to 1e-31 or so, differently at each point): the corrector's
/// corrections are 1e-30 of the tolerance and their ratios random. Taken as a diverging
/// iteration, every step was rejected until the step size fell below its minimum.
#[test]
fn bdf_accepts_corrections_at_rounding_level() {
    // rounding noise of 1e-31 whose sign alternates from one evaluation to the next (the
    // algebraic loops behind it start from where the last evaluation left them)
    let mut sign = 1.0;
    let mut sys = Ode {
        n: 4,
        f: move |_t: f64, _y: &[f64], dy: &mut [f64]| {
            sign = -sign;
            for (i, d) in dy.iter_mut().enumerate() {
                *d = sign * 1e-31 * (1.0 + 0.1 * i as f64);
            }
        },
        pattern: vec![(0, 0), (1, 1), (2, 2), (3, 3)],
    };
    let mut b = Bdf::new(
        4,
        Tolerances::uniform(1e-6, 1e-6, 4),
        1e3,
        &[(0, 0), (1, 1), (2, 2), (3, 3)],
    );
    b.reset(&mut sys, 0.0, &[293.15; 4]).expect("reset");
    while b.t() < 100.0 {
        b.step(&mut sys, 100.0).expect("steps at rest");
    }
    let s = b.stats();
    assert!(s.steps < 100, "{s:?}");
    assert!((b.x()[0] - 293.15).abs() < 1e-9);
}
