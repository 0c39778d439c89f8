//! Stiff relaxation oscillations through the full simulator (events used as a stopwatch).

use crate::common;

use common::TestModel;
use moss_sim::{simulate_with_stats, SimOptions, Solver};
use moss_symbolic::program::RelOp;
use std::cell::RefCell;
use std::rc::Rc;

/// Van der Pol with mu = 1000 (x(0) = 2): records the times x crosses 0 downwards.
fn van_der_pol(mu: f64) -> (TestModel, Rc<RefCell<Vec<f64>>>) {
    let downward_crossings = Rc::new(RefCell::new(Vec::new()));
    let log = downward_crossings.clone();
    let model = TestModel::new(&["x", "y"], &[2.0, 0.0], move |_t, s, ds| {
        ds[0] = s[1];
        ds[1] = mu * (1.0 - s[0] * s[0]) * s[1] - s[0];
    })
    .pattern(vec![(0, 1), (1, 0), (1, 1)])
    .crossing(RelOp::Gt, "x > 0", |_t, s| s[0])
    .on_event(move |t, _s, before, now| {
        if before[0] && !now[0] {
            log.borrow_mut().push(t);
        }
        None
    });
    (model, downward_crossings)
}

#[test]
fn van_der_pol_period_for_mu_1000_with_bdf_and_auto() {
    let mu = 1000.0f64;
    // Asymptotic period (Dorodnitsyn): mu (3 - 2 ln 2) + 3 a mu^(-1/3) + O(ln(mu) / mu), with
    // a = 2.338107 the magnitude of the first zero of the Airy function Ai.
    let period = mu * (3.0 - 2.0 * 2f64.ln()) + 3.0 * 2.338107 * mu.powf(-1.0 / 3.0);
    for solver in [Solver::Bdf, Solver::Auto] {
        let (mut model, crossings) = van_der_pol(mu);
        let program = model.program();
        let opts = SimOptions {
            stop_time: Some(4200.0),
            tolerance: Some(1e-8),
            solver,
            ..Default::default()
        };
        let sim = simulate_with_stats(&mut model, &program, &opts).expect("simulates");
        let t = crossings.borrow();
        assert_eq!(t.len(), 3, "{solver:?}: crossings at {t:?}");
        for w in t.windows(2) {
            let measured = w[1] - w[0];
            assert!(
                (measured - period).abs() < 0.05,
                "{solver:?}: period {measured}, asymptotic {period}"
            );
        }
        // Two sharp relaxation jumps per period, yet a few thousand steps in all.
        let s = &sim.stats.integrator;
        assert!(s.steps < 10_000, "{solver:?}: {s:?}");
        assert!(s.jacobian_evaluations < s.steps / 10, "{solver:?}: {s:?}");
        if solver == Solver::Auto {
            assert!(sim.stats.solver.contains("bdf"), "{}", sim.stats.solver);
        }
    }
}

#[test]
fn auto_stays_explicit_on_a_non_stiff_problem() {
    // A harmonic oscillator: eigenvalues ±i, never stiff.
    let mut model = TestModel::new(&["x", "v"], &[1.0, 0.0], |_t, s, ds| {
        ds[0] = s[1];
        ds[1] = -s[0];
    });
    let program = model.program();
    let opts = SimOptions {
        stop_time: Some(20.0),
        ..Default::default()
    };
    let sim = simulate_with_stats(&mut model, &program, &opts).expect("simulates");
    assert_eq!(sim.stats.solver, "auto: dopri5");
    let x_end = *sim.result.series("x").expect("x").last().expect("rows");
    assert!((x_end - 20f64.cos()).abs() < 1e-4, "x(20) = {x_end}");
}

/// `x' = -k (x - cos t)` with k = 1e4, x(0) = 1: x(t) = (k^2 cos t + k sin t) / (k^2 + 1)
/// + e^(-k t) / (k^2 + 1). Its symbolic Jacobian is `tangent`, which may be broken.
fn relaxation_to_cosine(
    tangent: impl FnMut(f64, &[f64], &[f64], &mut [f64]) -> Result<(), String> + 'static,
) -> TestModel {
    let k = 1e4;
    TestModel::new(&["x"], &[1.0], move |t, s, ds| {
        ds[0] = -k * (s[0] - t.cos());
    })
    .pattern(vec![(0, 0)])
    .tangent(tangent)
}

/// BDF on a stiff problem whose symbolic Jacobian fails (a tangent linear system that is
/// singular where the model's own system is singular but consistent) or is not finite (a
/// derivative formula that overflows where the function does not): each evaluation falls
/// back to differences of the right-hand side, and the run reaches the closed form. Before,
/// every step failed, however small.
#[test]
fn bdf_differences_a_jacobian_the_tangent_program_cannot_give() {
    let k: f64 = 1e4;
    let exact =
        |t: f64| (k * k * t.cos() + k * t.sin()) / (k * k + 1.0) + (-k * t).exp() / (k * k + 1.0);
    let failing = relaxation_to_cosine(|_, _, _, _| Err("singular linear system".into()));
    let overflowing = relaxation_to_cosine(|_, _, seed, out| {
        out[0] = f64::INFINITY * seed[0] - f64::INFINITY;
        Ok(())
    });
    for (label, mut model) in [("failing", failing), ("overflowing", overflowing)] {
        let program = model.program();
        let opts = SimOptions {
            stop_time: Some(2.0),
            tolerance: Some(1e-8),
            solver: Solver::Bdf,
            ..Default::default()
        };
        let sim = simulate_with_stats(&mut model, &program, &opts)
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        let x_end = *sim.result.series("x").expect("x").last().expect("rows");
        assert!(
            (x_end - exact(2.0)).abs() < 1e-6,
            "{label}: x(2) = {x_end}, exact {}",
            exact(2.0)
        );
        // stiff (k = 1e4) yet few steps: the differenced Jacobian is a good one
        let s = &sim.stats.integrator;
        assert!(s.steps < 2_000, "{label}: {s:?}");
        assert!(
            s.tangent_runs > 0,
            "{label}: the tangent program was not tried: {s:?}"
        );
    }
}

/// A volume drained through a regularized square-root friction law toward a second volume
/// (`m = Δp/sqrt(|Δp| + ε)`, a closed valve's leak): near Δp = 0 the Jacobian changes within
/// a step, and Hairer and Wanner's estimate of `h |λ|` settles near 1.9 step after step,
/// below their 3.25. `auto` must still call it stiff: DOPRI5 alone took 141 million steps for
/// these ten seconds.
#[test]
fn auto_switches_on_a_stiff_square_root_friction_law() {
    let mut model = TestModel::new(&["p", "q"], &[1.0, 0.0], |t, s, ds| {
        let dp = s[0] - s[1];
        let m = dp / (dp.abs() + 1e-6).sqrt();
        ds[0] = -1e5 * m + t.sin();
        ds[1] = 1e3 * m - s[1];
    })
    .pattern(vec![(0, 0), (0, 1), (1, 0), (1, 1)]);
    let program = model.program();
    let opts = SimOptions {
        stop_time: Some(10.0),
        ..Default::default()
    };
    let sim = simulate_with_stats(&mut model, &program, &opts).expect("simulates");
    assert!(sim.stats.solver.contains("bdf"), "{}", sim.stats.solver);
    let s = &sim.stats.integrator;
    assert!(s.steps < 2_000, "{s:?}");
    // Quasi-static after the transient: p follows the source through the friction law.
    let p = sim.result.series("p").expect("p");
    let q = sim.result.series("q").expect("q");
    let (p_end, q_end) = (*p.last().expect("rows"), *q.last().expect("rows"));
    assert!((p_end - q_end).abs() < 1e-3, "p = {p_end}, q = {q_end}");
}
