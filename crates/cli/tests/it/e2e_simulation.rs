//! End to end: Modelica text → `moss simulate` → trajectories, on realistic models written
//! here, each checked against physics or a closed form.
//!
//! - a bouncing ball (`when` + `reinit`): impact times, impact speeds and apex heights of the
//!   geometric series, and the chattering diagnostic at the accumulation point of the impacts;
//! - stiff problems: Van der Pol with mu = 1000 (relaxation oscillation: slow-branch time and
//!   the asymptotic period) and Robertson's kinetics (reference values at t = 40), with the
//!   run statistics showing that the default solver turns to BDF and needs few steps;
//! - a drive train with a position constraint between two inertias (an ideal gear; index
//!   reduction with dummy derivatives), library and hand-written, with either side's states;
//! - stick-slip: a mass with Coulomb friction pulled through a spring at constant speed, or by
//!   an oscillating end so that it slides both ways, hand-written with stick/slip modes and with
//!   the bundled `SupportFriction`, against the piecewise analytic solution;
//! - a resting mass on `SupportFriction` pushed through its static friction level: the mode
//!   trace (stuck, sliding, stuck again) and the motion against the piecewise solution, with
//!   both integrators;
//! - two brakes on one shaft stopping together: the holding torque, which the stuck modes
//!   leave undetermined, is split by the least-norm rule, not by the sliding history;
//! - the two contact models of `examples/`: the ElastoGap ball and the rigid-stop ball with the
//!   matched coefficient of restitution.
//!
//! Tolerances are stated at each check; the models set their solver tolerance in the
//! `experiment` annotation and run for a few seconds of model time at most (the stiff ones for
//! longer, which is their point), so each test takes milliseconds of simulation.

use crate::library_support;

use library_support::{
    assert_close, assert_rel, elastogap_contact, moss_command, scratch_dir, simulate_repo_file,
    simulate_source, simulate_source_with_stats, Trajectories,
};
use std::f64::consts::PI;

// ---------------------------------------------------------------------------------------------
// Bouncing ball
// ---------------------------------------------------------------------------------------------

const BOUNCING_BALL: &str = r#"
model BouncingBall "Point mass dropped onto a rigid floor; every impact reverses and scales the speed"
  parameter Real g = 9.81 "Gravity [m/s2]";
  parameter Real e = 0.8 "Coefficient of restitution";
  parameter Real h0 = 2 "Drop height [m]";
  Real h(start=h0, fixed=true) "Height above the floor [m]";
  Real v(start=0, fixed=true) "Upward speed [m/s]";
equation
  der(h) = v;
  der(v) = -g;
  when h <= 0 then
    reinit(v, -e*pre(v));
  end when;
  annotation(experiment(StopTime=4.5, Interval=0.01, Tolerance=1e-8));
end BouncingBall;
"#;

/// Impacts of a ball dropped from `h0` with restitution `e` before `stop`: (time, impact speed).
/// The first comes after sqrt(2 h0/g) at sqrt(2 g h0); the ball leaves each impact with e times
/// its impact speed v and comes back after 2 e v/g at speed e v, so every flight is e times
/// the one before. (The impacts accumulate at t1*(1 + e)/(1 - e); the list ends at the first
/// impact slower than 1 mm/s if `stop` lies beyond.)
fn bouncing_ball_impacts(g: f64, e: f64, h0: f64, stop: f64) -> Vec<(f64, f64)> {
    let mut t = (2.0 * h0 / g).sqrt();
    let mut v = (2.0 * g * h0).sqrt();
    let mut impacts = Vec::new();
    while t < stop && v > 1e-3 {
        impacts.push((t, v));
        v *= e;
        t += 2.0 * v / g;
    }
    impacts
}

/// The impact rows of a result: events at which `v` jumps from downward to upward, as
/// (time, speed before, speed after).
fn impacts_in(run: &Trajectories, v: &str) -> Vec<(f64, f64, f64)> {
    run.jumps(v)
        .into_iter()
        .filter(|&(_, before, after)| before < 0.0 && after > 0.0)
        .collect()
}

/// Impact times to 1e-6 s, impact speeds and rebound speeds, and apex heights e^(2k)*h0.
#[test]
fn bouncing_ball_impacts_follow_the_geometric_series() {
    let run = simulate_source("BouncingBall", BOUNCING_BALL, &[]);
    let (g, e, h0) = (9.81, 0.8, 2.0);
    let expected = bouncing_ball_impacts(g, e, h0, 4.5);
    let impacts = impacts_in(&run, "v");
    assert_eq!(
        impacts.len(),
        expected.len(),
        "impacts at {:?}, expected at {:?}",
        impacts.iter().map(|i| i.0).collect::<Vec<_>>(),
        expected.iter().map(|i| i.0).collect::<Vec<_>>()
    );
    assert!(expected.len() >= 6, "the test should see several impacts");
    for (k, (&(t, before, after), &(t_exp, v_exp))) in impacts.iter().zip(&expected).enumerate() {
        assert_close(&format!("time of impact {}", k + 1), t, t_exp, 1e-6);
        assert_rel(&format!("speed at impact {}", k + 1), -before, v_exp, 1e-6);
        assert_rel(
            &format!("rebound speed {}", k + 1),
            after,
            -e * before,
            1e-9,
        );
    }
    // Apex k (after impact k, halfway to the next) is at e^(2k)*h0. Read at the analytic apex
    // time from the output grid (0.01 s): linear interpolation near the top misses at most
    // g*(0.005 s)^2/2 = 1.2e-4 m.
    for (k, &(t_k, v_k)) in expected.iter().enumerate() {
        let v_out = e * v_k;
        let t_apex = t_k + v_out / g;
        if t_apex > 4.5 {
            break;
        }
        let apex = e.powi(2 * (k as i32 + 1)) * h0;
        assert_close(
            &format!("apex {} height", k + 1),
            run.at("h", t_apex),
            apex,
            2e-4,
        );
    }
    // The event is located on the floor: the ball never sinks into it.
    assert!(
        run.min("h") > -1e-9,
        "the ball went below the floor: min h = {}",
        run.min("h")
    );
}

/// The usual cure for the accumulation point: the ball stops bouncing once an impact is slower
/// than `vmin`. A `when` clause sets the discrete `flying` and reinitializes `v` with its new
/// value; gravity is switched off by an `if` in the equation. The impacts follow the geometric
/// series until the first with speed below 0.5 m/s (the 12th: 6.26*0.8^11 = 0.54 still
/// bounces, the 13th at 0.43 does not); from then on the ball rests on the floor.
#[test]
fn bouncing_ball_comes_to_rest_below_a_minimum_rebound_speed() {
    let source = r#"
model BouncingBallRest "Bouncing ball that stays on the floor once an impact is slower than vmin"
  parameter Real g = 9.81;
  parameter Real e = 0.8;
  parameter Real vmin = 0.5 "Slowest impact that still bounces [m/s]";
  Real h(start=2, fixed=true);
  Real v(start=0, fixed=true);
  Boolean flying(start=true, fixed=true);
equation
  der(h) = v;
  der(v) = if flying then -g else 0;
  when h <= 0 then
    flying = -pre(v) > vmin;
    reinit(v, if flying then -e*pre(v) else 0);
  end when;
  annotation(experiment(StopTime=8, Interval=0.01, Tolerance=1e-8));
end BouncingBallRest;
"#;
    let run = simulate_source("BouncingBallRest", source, &[]);
    let (g, e, h0, vmin) = (9.81, 0.8, 2.0, 0.5);
    let expected: Vec<(f64, f64)> = bouncing_ball_impacts(g, e, h0, 8.0)
        .into_iter()
        .take_while(|&(_, v)| v > vmin)
        .collect();
    let impacts = impacts_in(&run, "v");
    assert_eq!(impacts.len(), expected.len(), "impacts {impacts:?}");
    assert_eq!(expected.len(), 12);
    for (k, (&(t, _, _), &(t_exp, _))) in impacts.iter().zip(&expected).enumerate() {
        assert_close(&format!("time of impact {}", k + 1), t, t_exp, 1e-6);
    }
    // The last impact (speed e^12 * 6.26 = 0.43 m/s) stops the ball.
    let (t_last, v_last) = {
        let (t, v) = *expected.last().expect("impacts");
        (t + 2.0 * e * v / g, e * v)
    };
    let stops: Vec<(f64, f64, f64)> = run
        .jumps("v")
        .into_iter()
        .filter(|&(_, before, after)| before < 0.0 && after == 0.0)
        .collect();
    assert_eq!(stops.len(), 1, "stops {stops:?}");
    assert_close("time the ball stops", stops[0].0, t_last, 1e-6);
    assert_rel("its last impact speed", -stops[0].1, v_last, 1e-6);
    for (t, h) in run.points_between("h", t_last + 1e-9, 8.0) {
        assert!(
            h.abs() < 1e-9,
            "the ball left the floor at t = {t}: h = {h}"
        );
    }
    assert_eq!(run.last("flying"), 0.0);
}

/// Past the accumulation point of the impacts, t1*(1 + e)/(1 - e) (the sum of the geometric
/// series of flight times), the ball would need infinitely many events. moss stops there with
/// exit status 1 and a chattering diagnostic that names the zero crossing, and writes the
/// result up to that point, which ends at the accumulation time (to 1e-6 s).
#[test]
fn bouncing_ball_stops_with_a_diagnostic_at_the_accumulation_point() {
    let dir = scratch_dir("BouncingBallZeno");
    let file = dir.join("BouncingBall.mo");
    let csv = dir.join("result.csv");
    std::fs::write(&file, BOUNCING_BALL).expect("writable scratch folder");
    let out = moss_command()
        .arg("simulate")
        .arg(&file)
        .arg("--stop-time")
        .arg("8")
        .arg("-o")
        .arg(&csv)
        .output()
        .expect("runs the moss binary");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("chattering"), "{stderr}");
    assert!(
        stderr.contains("h <= 0"),
        "the zero crossing is not named: {stderr}"
    );
    let result = moss_results::read_result(&csv).expect("the partial result is written");
    let (g, e, h0): (f64, f64, f64) = (9.81, 0.8, 2.0);
    let accumulation = (2.0 * h0 / g).sqrt() * (1.0 + e) / (1.0 - e);
    let last = *result.time().last().expect("rows up to the failure");
    assert_close("end of the partial result", last, accumulation, 1e-6);
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------------------
// Stiff problems
// ---------------------------------------------------------------------------------------------

const VAN_DER_POL: &str = r#"
model VanDerPol "Relaxation oscillator: slow drift along the branches |x| > 1, fast jumps between them"
  parameter Real mu = 1000;
  Real x(start=2, fixed=true);
  Real y(start=0, fixed=true);
equation
  der(x) = y;
  der(y) = mu*(1 - x^2)*y - x;
  annotation(experiment(StopTime=2500, Interval=0.5, Tolerance=1e-8));
end VanDerPol;
"#;

/// Magnitude of the first zero of the Airy function Ai (the O(mu^(-1/3)) term of the period).
const AIRY_FIRST_ZERO: f64 = 2.338_107_410_459_767;

/// Van der Pol with mu = 1000 from (2, 0): on the slow branch mu*(1 - x^2)*dx/dt = x, so x falls
/// from 2 to 1.5 in mu*(7/8 + ln(3/4)) (error O(1/mu)); the period of the relaxation oscillation
/// is mu*(3 - 2 ln 2) + 3*a1*mu^(-1/3) + O(ln(mu)/mu) with a1 the first Airy zero
/// (1614.407 s; the neglected terms are about 0.01 s). The period is measured between two
/// downward crossings of x = 1.5, which lie on the slow branch where the output grid resolves
/// them. The default solver must notice the stiffness and finish in few steps.
#[test]
fn van_der_pol_relaxation_period_matches_the_asymptotic_formula() {
    let (run, stats) = simulate_source_with_stats("VanDerPol", VAN_DER_POL, &[]);
    let mu: f64 = 1000.0;
    let crossings = run.downward_crossings("x", 1.5);
    assert_eq!(
        crossings.len(),
        2,
        "downward crossings of 1.5: {crossings:?}"
    );
    assert_close(
        "time from x = 2 down to x = 1.5 (slow branch)",
        crossings[0],
        mu * (0.875 + f64::ln(0.75)),
        0.01,
    );
    let asymptotic_period =
        mu * (3.0 - 2.0 * f64::ln(2.0)) + 3.0 * AIRY_FIRST_ZERO * mu.powf(-1.0 / 3.0);
    assert_close(
        "period",
        crossings[1] - crossings[0],
        asymptotic_period,
        0.05,
    );
    // The jumps start at |x| = 1 and land at |x| = 2 (up to O(mu^(-4/3))).
    assert_close("largest x", run.max("x"), 2.0, 1e-3);
    assert_close("smallest x", run.min("x"), -2.0, 1e-3);
    // An explicit method would need millions of steps (step size bounded by about 1/mu on
    // the slow branches).
    assert!(
        stats.solver.ends_with("bdf"),
        "the default solver did not switch to BDF: {stats:?}"
    );
    assert!(stats.steps < 10_000, "too many steps: {stats:?}");
}

const ROBERTSON: &str = r#"
model Robertson "Robertson's autocatalytic reaction (rate constants 0.04, 1e4, 3e7)"
  Real y1(start=1, fixed=true);
  Real y2(start=0, fixed=true);
  Real y3(start=0, fixed=true);
equation
  der(y1) = -0.04*y1 + 1e4*y2*y3;
  der(y2) = 0.04*y1 - 1e4*y2*y3 - 3e7*y2^2;
  der(y3) = 3e7*y2^2;
  annotation(experiment(StopTime=40, Interval=0.1, Tolerance=1e-8));
end Robertson;
"#;

/// Robertson's kinetics at t = 40: y1 = 0.7158271, y2 = 9.185535e-6, y3 = 0.2841637 (the
/// reference values of the stiff test set, Hairer & Wanner), to 1e-5 relative with the default
/// solver and with BDF; y1 + y2 + y3 = 1 holds throughout (the rates sum to zero, which every
/// linear multistep and Runge-Kutta method keeps up to the Newton tolerance). The default
/// solver switches to BDF and needs a small fraction of the steps of the explicit method.
#[test]
fn robertson_kinetics_reach_the_reference_values_with_few_steps() {
    let reference = [
        ("y1", 0.715_827_1),
        ("y2", 9.185_535e-6),
        ("y3", 0.284_163_7),
    ];
    let (auto, auto_stats) = simulate_source_with_stats("Robertson", ROBERTSON, &[]);
    let bdf = simulate_source("Robertson", ROBERTSON, &["--solver", "bdf"]);
    for run in [&auto, &bdf] {
        for (name, value) in reference {
            assert_rel(&format!("{name}(40)"), run.last(name), value, 1e-5);
        }
        let total = run
            .get("y1")
            .iter()
            .zip(run.get("y2"))
            .zip(run.get("y3"))
            .map(|((a, b), c)| (a + b + c - 1.0).abs())
            .fold(0.0, f64::max);
        assert!(total < 1e-9, "y1 + y2 + y3 drifts from 1 by {total}");
    }
    assert!(
        auto_stats.solver.ends_with("bdf"),
        "the default solver did not switch to BDF: {auto_stats:?}"
    );
    assert!(auto_stats.steps < 1000, "too many steps: {auto_stats:?}");
    // The explicit method alone: stable steps are bounded by the fast reaction (rate about
    // 1e4 at the end), so it needs far more of them.
    let (_, explicit_stats) =
        simulate_source_with_stats("Robertson", ROBERTSON, &["--solver", "dopri5"]);
    assert!(
        explicit_stats.steps > 10 * auto_stats.steps,
        "the problem did not look stiff: dopri5 {explicit_stats:?}, auto {auto_stats:?}"
    );
}

const SATURATED_DRAG: &str = r#"
model SaturatedDrag "Unit mass against a sign friction regularized by a steep logistic curve"
  parameter Real v0 = 1e-3 "Regularization speed";
  Real v(start = -2, fixed = true);
  Real x(start = 0, fixed = true);
equation
  der(v) = -(2/(1 + exp(-v/v0)) - 1);
  der(x) = v;
  annotation(experiment(StopTime=1, Tolerance=1e-8));
end SaturatedDrag;
"#;

/// The friction term saturates at -1 for v << -v0 and the mass accelerates at 1: v = -2 + t,
/// x = -2 t + t^2/2. The symbolic derivative of the logistic curve, 2 exp(-v/v0) v'/v0 /
/// (1 + exp(-v/v0))^2, is inf/inf for v < -0.71 (exp overflows where the curve itself is
/// a clean -1): BDF must not take that NaN into its iteration matrix (every step failed,
/// however small; the MSL's SignForce in the conveyor drives stopped like this). The Jacobian
/// falls back to differences, and the run reaches the closed form.
#[test]
fn overflowing_symbolic_jacobian_falls_back_to_differences() {
    let (run, stats) =
        simulate_source_with_stats("SaturatedDrag", SATURATED_DRAG, &["--solver", "bdf"]);
    assert_close("v(1)", run.last("v"), -1.0, 1e-9);
    assert_close("x(1)", run.last("x"), -1.5, 1e-6);
    assert!(
        stats.tangent_runs > 0,
        "no symbolic Jacobian was tried: {stats:?}"
    );
}

const DIFFUSION: &str = r#"
model Diffusion "Heat equation on 120 cells, started in its slowest mode"
  parameter Integer n = 120;
  parameter Real k = 1e4;
  constant Real pi = 3.141592653589793;
  Real x[n](start = {sin(pi*i/(n + 1)) for i in 1:n}, each fixed = true);
equation
  der(x[1]) = k*(x[2] - 2*x[1]);
  for i in 2:n - 1 loop
    der(x[i]) = k*(x[i - 1] - 2*x[i] + x[i + 1]);
  end for;
  der(x[n]) = k*(x[n - 1] - 2*x[n]);
  annotation(experiment(StopTime=2, Tolerance=1e-8));
end Diffusion;
"#;

/// A stiff system above the dense limit: BDF factors its sparse iteration matrix with
/// pivoting once and refactors the later ones (new `h`, same pattern) along those pivots.
/// The slowest sine mode decays as exp(-4 k sin²(π / (2 (n + 1))) t), from 1 to 0.26 at
/// t = 2; the fastest eigenvalue is -4e4, so only an implicit method gets there in few steps.
#[test]
fn sparse_iteration_matrices_are_refactored_along_kept_pivots() {
    let (run, stats) = simulate_source_with_stats("Diffusion", DIFFUSION, &["--solver", "bdf"]);
    let n = 120.0f64;
    let rate = 4.0 * 1e4 * (std::f64::consts::PI / (2.0 * (n + 1.0))).sin().powi(2);
    for i in [1usize, 60, 120] {
        let mode = (std::f64::consts::PI * i as f64 / (n + 1.0)).sin();
        assert_close(
            &format!("x[{i}](2)"),
            run.last(&format!("x[{i}]")),
            mode * (-rate * 2.0).exp(),
            1e-6,
        );
    }
    assert!(
        stats.lu_refactorizations > 0,
        "no refactorization: {stats:?}"
    );
    assert!(stats.steps < 400, "too many steps: {stats:?}");
}

const TORN_LOOPS: &str = r#"
model TornLoops "A torn linear loop with a parameter matrix, one whose matrix follows x"
  parameter Real a = 4, b = 1, c = 3;
  Real x(start = 1, fixed = true);
  Real y1, y2, y3, z1, z2;
equation
  a*y1 + b*y2 + y3 = x;
  b*y1 + c*y2 + y3 = 2*x;
  y1 + y2 + a*y3 = sin(10*time);
  (2 + x^2)*z1 + z2 = 1;
  z1 + (3 + exp(x))*z2 = cos(time);
  der(x) = -y1 - y2 - y3 + 0.1*z1 - z2;
  annotation(experiment(StopTime = 2));
end TornLoops;
"#;

/// Torn linear loops keep their Jacobian and its factors while the Jacobian's inputs keep
/// their values: the parameter loop for the whole run, the loop whose matrix follows `x`
/// not at all. Each solve is still one exact step (as many iterations as solves: a stale
/// Jacobian would leave residuals that need Newton iterations), and the loops' equations
/// hold at every output point.
#[test]
fn torn_linear_loops_reuse_their_jacobian_while_its_inputs_hold() {
    let (run, stats) = simulate_source_with_stats("TornLoops", TORN_LOOPS, &[]);
    assert!(
        stats.kept_matrix_solves > 0,
        "no kept Jacobian used: {stats:?}"
    );
    assert!(
        stats.kept_matrix_solves < stats.nonlinear_solves,
        "the loop whose matrix follows x cannot keep it: {stats:?}"
    );
    assert_eq!(
        stats.nonlinear_iterations, stats.nonlinear_solves,
        "{stats:?}"
    );
    for k in 0..=20 {
        let t = 0.1 * k as f64;
        let at = |n: &str| run.at(n, t);
        let (x, y1, y2, y3) = (at("x"), at("y1"), at("y2"), at("y3"));
        let (z1, z2) = (at("z1"), at("z2"));
        assert_close("row 1", 4.0 * y1 + y2 + y3, x, 1e-9);
        assert_close("row 2", y1 + 3.0 * y2 + y3, 2.0 * x, 1e-9);
        assert_close("row 3", y1 + y2 + 4.0 * y3, (10.0 * t).sin(), 1e-9);
        assert_close("z row 1", (2.0 + x * x) * z1 + z2, 1.0, 1e-9);
        assert_close("z row 2", z1 + (3.0 + x.exp()) * z2, t.cos(), 1e-9);
    }
}

/// Robertson's kinetics over eleven decades of time (to t = 1e11), the classic test of a stiff
/// solver's Jacobian: y2 falls to about 1e-13, far below the absolute tolerance. BDF with the
/// symbolic Jacobian (the default: every Jacobian evaluation runs the tangent program, no
/// difference quotients) needs under a thousand steps at tolerance 1e-8 and ends at the
/// reference values of the stiff test set (y1 = 2.083340e-8, y3 = 0.99999997917); finite
/// differences (steps scaled to each state's error weight) reach the same values.
#[test]
fn robertson_to_1e11_with_the_symbolic_jacobian() {
    let args = [
        "--solver",
        "bdf",
        "--stop-time",
        "1e11",
        "--intervals",
        "500",
        "--tolerance",
        "1e-8",
    ];
    let (run, stats) = simulate_source_with_stats("Robertson", ROBERTSON, &args);
    assert!(
        stats.tangent_runs > 0,
        "no symbolic Jacobian used: {stats:?}"
    );
    assert!(stats.steps < 1_500, "too many steps: {stats:?}");
    let mut numeric_args = args.to_vec();
    numeric_args.extend(["--jacobian", "numeric"]);
    let (numeric_run, numeric) = simulate_source_with_stats("Robertson", ROBERTSON, &numeric_args);
    assert_eq!(numeric.tangent_runs, 0, "{numeric:?}");
    // y1 and y2 end near and far below the absolute tolerance (1e-8): their errors follow
    // the step sequence (the first step, bounded by the slope of y2 from zero, moves y1 by
    // 1.4 %, i.e. 3e-10); y1 is held to 5 % of the absolute tolerance, y2 to 2 %.
    for r in [&run, &numeric_run] {
        assert_close("y1(1e11)", r.last("y1"), 2.083_340e-8, 5e-10);
        assert_rel("y2(1e11)", r.last("y2"), 8.333_361e-14, 2e-2);
        assert_close("y3(1e11)", r.last("y3"), 0.999_999_979_166_5, 1e-9);
    }
}

/// At a loose tolerance (1e-4) the explicit method of the default solver accepts steps at its
/// stability limit that drive y2 negative, and the solution runs away before the stiffness test
/// has seen enough steps. The default solver then goes back to its last restart (the start),
/// drops the rows recorded since and integrates with BDF: the run succeeds, its rows are in
/// time order without duplicates from the abandoned attempt, and y(40) is within the tolerance.
#[test]
fn default_solver_recovers_from_a_runaway_explicit_start() {
    let (run, stats) = simulate_source_with_stats("Robertson", ROBERTSON, &["--tolerance", "1e-4"]);
    assert!(
        stats.solver.contains("dopri5 failed") && stats.solver.ends_with("bdf from t = 0"),
        "expected the fallback to BDF from the start: {stats:?}"
    );
    let time = run.time();
    assert!(
        time.windows(2).all(|w| w[0] <= w[1]),
        "rows out of time order after the fallback"
    );
    assert_eq!(
        time.len(),
        401,
        "one row per output point (Interval 0.1 to 40)"
    );
    assert_rel("y1(40)", run.last("y1"), 0.715_827_1, 1e-4);
    assert_rel("y3(40)", run.last("y3"), 0.284_163_7, 1e-4);
    assert!(run.min("y2") > -1e-6, "y2 went negative: {}", run.min("y2"));
}

// ---------------------------------------------------------------------------------------------
// Drive train with a kinematic constraint
// ---------------------------------------------------------------------------------------------

/// A motor inertia J1 drives a load inertia J2 through an ideal gear (phi1 = r*phi2), with the
/// torque T0*cos(Omega*t); once with the bundled Rotational library and once in plain
/// equations. The gear constraint ties two would-be state positions together, so the model
/// needs index reduction; `load_state_select` picks which side keeps the states.
fn geared_drive_source(load_state_select: &str) -> String {
    format!(
        r#"
model GearedDrive "Motor and load inertias coupled by an ideal gear, driven by a cosine torque"
  import Modelica.Mechanics.Rotational.Components;
  import Modelica.Mechanics.Rotational.Sources;
  parameter Real J1 = 0.5 "Motor inertia";
  parameter Real J2 = 8 "Load inertia";
  parameter Real r = 4 "Gear ratio phi1/phi2";
  parameter Real T0 = 10 "Torque amplitude";
  parameter Real Omega = 3 "Torque frequency [rad/s]";
  Modelica.Blocks.Sources.Cosine driveSignal(amplitude=T0, f=Omega/(2*Modelica.Constants.pi));
  Sources.Torque torque;
  Components.Inertia motor(J=J1, phi(start=0, fixed=true), w(start=0, fixed=true));
  Components.IdealGear gear(ratio=r);
  Components.Inertia load(J=J2, stateSelect=StateSelect.{load_state_select});
  // the same drive train in plain equations
  Real phi1(start=0, fixed=true);
  Real w1(start=0, fixed=true);
  Real phi2(stateSelect=StateSelect.{load_state_select});
  Real w2(stateSelect=StateSelect.{load_state_select});
  Real tauGear "Torque of the gear on the motor shaft";
equation
  connect(driveSignal.y, torque.tau);
  connect(torque.flange, motor.flange_a);
  connect(motor.flange_b, gear.flange_a);
  connect(gear.flange_b, load.flange_a);
  der(phi1) = w1;
  J1*der(w1) = driveSignal.y + tauGear;
  der(phi2) = w2;
  J2*der(w2) = -r*tauGear "the gear passes r times the torque, power is conserved";
  phi1 = r*phi2;
  annotation(experiment(StopTime=3, Interval=0.01, Tolerance=1e-9));
end GearedDrive;
"#
    )
}

/// With phi2 = phi1/r, power balance tau*w1 = d/dt(J1*w1^2/2 + J2*w2^2/2) gives
/// tau = (J1 + J2/r^2)*a1: the motor sees the effective inertia J1 + J2/r^2, so
/// a1 = tau/(J1 + J2/r^2), a2 = a1/r, and the gear holds the motor back with
/// tau*(J2/r^2)/(J1 + J2/r^2). For tau = T0*cos(Omega t) from rest:
/// w1 = T0*sin(Omega t)/(J Omega), phi1 = T0*(1 - cos(Omega t))/(J Omega^2). Checked at every
/// output point for both state selections (motor states, or load states preferred).
#[test]
fn geared_drive_train_follows_the_effective_inertia() {
    let (j1, j2, r, t0, omega) = (0.5, 8.0, 4.0, 10.0, 3.0);
    let j_eff = j1 + j2 / (r * r);
    for state_select in ["default", "prefer"] {
        let run = simulate_source("GearedDrive", &geared_drive_source(state_select), &[]);
        let time = run.time().to_vec();
        let series = |name: &str| run.get(name);
        let (motor_phi, motor_w, motor_a) =
            (series("motor.phi"), series("motor.w"), series("motor.a"));
        let (load_phi, load_w, load_a) = (series("load.phi"), series("load.w"), series("load.a"));
        let (phi1, w1, phi2, w2) = (series("phi1"), series("w1"), series("phi2"), series("w2"));
        let (tau_gear, load_tau) = (series("tauGear"), series("load.flange_a.tau"));
        for i in 0..time.len() {
            let t = time[i];
            let what = |q: &str| format!("{q} at t = {t} (load stateSelect {state_select})");
            let tau = t0 * f64::cos(omega * t);
            let a = tau / j_eff;
            let w = t0 * f64::sin(omega * t) / (j_eff * omega);
            let phi = t0 * (1.0 - f64::cos(omega * t)) / (j_eff * omega * omega);
            // the integrated quantities to the solver tolerance, the algebraic ones tighter
            assert_close(&what("motor.phi"), motor_phi[i], phi, 1e-7);
            assert_close(&what("phi1"), phi1[i], phi, 1e-7);
            assert_close(&what("motor.w"), motor_w[i], w, 1e-7);
            assert_close(&what("w1"), w1[i], w, 1e-7);
            assert_close(&what("motor.a"), motor_a[i], a, 1e-7);
            assert_close(&what("phi2 = phi1/r"), phi2[i], phi1[i] / r, 1e-9);
            assert_close(
                &what("load.phi = motor.phi/r"),
                load_phi[i],
                motor_phi[i] / r,
                1e-9,
            );
            assert_close(&what("load.w = motor.w/r"), load_w[i], motor_w[i] / r, 1e-9);
            assert_close(&what("w2 = w1/r"), w2[i], w1[i] / r, 1e-9);
            assert_close(&what("load.a = motor.a/r"), load_a[i], motor_a[i] / r, 1e-7);
            assert_close(
                &what("gear torque on the motor"),
                tau_gear[i],
                -tau * (j2 / (r * r)) / j_eff,
                1e-7,
            );
            // the torque into the load accelerates it: J2*a2
            assert_close(&what("load torque"), load_tau[i], j2 * load_a[i], 1e-7);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Stick-slip
// ---------------------------------------------------------------------------------------------

/// Hand-written: a mass on the ground with Coulomb friction (static limit Fs, sliding force Fk)
/// pulled through a spring whose far end is at `end_position` (a Modelica expression of
/// `time`). While stuck, the friction force is the path parameter `sp` (whatever holds the
/// mass); it breaks away when that would exceed Fs and slides with the friction force Fk
/// against the motion until the speed is zero again. The acceleration while sliding is written
/// through the same `sp`, continuous at the breakaway point, so the mode switch needs no change
/// of the equation structure.
fn stick_slip_source(name: &str, end_position: &str, stop_time: f64) -> String {
    format!(
        r#"
model {name} "Mass with Coulomb friction pulled through a spring"
  parameter Real m = 1 "Mass [kg]";
  parameter Real k = 100 "Spring constant [N/m]";
  parameter Real vd = 0.1 "Speed of the spring's far end [m/s] (constant-speed pull)";
  parameter Real A = 0.3 "Amplitude of the spring's far end [m] (oscillating pull)";
  parameter Real Omega = 2 "Angular frequency of the oscillating pull [rad/s]";
  parameter Real Fs = 10 "Static friction limit [N]";
  parameter Real Fk = 6 "Sliding friction [N]";
  Real x(start=0, fixed=true) "Position of the mass";
  Real v(start=0, fixed=true) "Speed of the mass";
  Real a "Acceleration";
  Real u = {end_position} - x "Spring extension";
  Real f "Friction force against the motion";
  Real sp "Path parameter: friction force while stuck";
  Boolean startForward "Breaking away forward";
  Boolean startBackward "Breaking away backward";
  Boolean locked "Stuck";
  Integer mode(start=0, fixed=true) "1 sliding forward, 0 stuck, -1 sliding backward";
equation
  der(x) = v;
  der(v) = a;
  m*a = k*u - f;
  startForward = pre(mode) == 0 and sp > Fs;
  startBackward = pre(mode) == 0 and sp < -Fs;
  locked = not (startForward or startBackward or pre(mode) == 1 or pre(mode) == -1);
  a = if locked then 0 elseif startForward or pre(mode) == 1 then (sp - Fs)/m else (sp + Fs)/m;
  f = if locked then sp elseif startForward or pre(mode) == 1 then Fk else -Fk;
  mode = if (pre(mode) == 1 or startForward) and v > 0 then 1
    elseif (pre(mode) == -1 or startBackward) and v < 0 then -1 else 0;
  annotation(experiment(StopTime={stop_time}, Interval=0.01, Tolerance=1e-8));
end {name};
"#
    )
}

/// The same system on the bundled library: `puller` (declared by `puller_declaration`, with
/// `puller_connections`) pulls a `Spring`, the `Mass` slides on a `SupportFriction` with the
/// force table [0, Fk] and peak Fs/Fk.
fn stick_slip_library_source(
    name: &str,
    puller_declaration: &str,
    puller_connections: &str,
    stop_time: f64,
) -> String {
    format!(
        r#"
model {name} "Mass on SupportFriction pulled through a spring"
  import Modelica.Mechanics.Translational.Components;
  import Modelica.Mechanics.Translational.Sources;
  parameter Real m = 1;
  parameter Real k = 100;
  parameter Real vd = 0.1;
  parameter Real A = 0.3;
  parameter Real Omega = 2;
  parameter Real Fs = 10;
  parameter Real Fk = 6;
  {puller_declaration}
  Components.Spring spring(c=k);
  Components.Mass slider(m=m, s(start=0, fixed=true), v(start=0, fixed=true));
  Components.SupportFriction friction(f_pos=[0, Fk], peak=Fs/Fk);
equation
  {puller_connections}
  connect(puller.flange, spring.flange_a);
  connect(spring.flange_b, slider.flange_a);
  connect(slider.flange_b, friction.flange_a);
  annotation(experiment(StopTime={stop_time}, Interval=0.01, Tolerance=1e-8));
end {name};
"#
    )
}

/// The analytic stick-slip cycle of a mass m with static friction Fs and sliding friction Fk,
/// pulled from rest through a relaxed spring k whose end moves at vd.
///
/// In terms of the spring extension u = vd*t - x: stuck, u grows at vd until k*u = Fs
/// (u_s = Fs/k, first at t = Fs/(k vd)); sliding, m*u'' = -(k*u - Fk), a harmonic motion about
/// u_e = Fk/k with omega = sqrt(k/m) starting at u_s with u' = vd. The mass stops when u' = vd
/// again: by symmetry after (2*pi - 2*phi)/omega with tan(phi) = (u_s - u_e)*omega/vd, at
/// u_r = 2*u_e - u_s. It then sticks while u grows from u_r to u_s, for 2*(Fs - Fk)/(k vd).
struct StickSlipCycle {
    vd: f64,
    omega: f64,
    u_s: f64,
    u_e: f64,
    u_r: f64,
    first_breakaway: f64,
    slip: f64,
    stick: f64,
}

impl StickSlipCycle {
    fn new(m: f64, k: f64, vd: f64, fs: f64, fk: f64) -> Self {
        let omega = (k / m).sqrt();
        let (u_s, u_e) = (fs / k, fk / k);
        let phi = f64::atan((u_s - u_e) * omega / vd);
        StickSlipCycle {
            vd,
            omega,
            u_s,
            u_e,
            u_r: 2.0 * u_e - u_s,
            first_breakaway: u_s / vd,
            slip: (2.0 * PI - 2.0 * phi) / omega,
            stick: 2.0 * (fs - fk) / (k * vd),
        }
    }

    fn period(&self) -> f64 {
        self.slip + self.stick
    }

    /// Breakaway times before `stop`.
    fn breakaways(&self, stop: f64) -> Vec<f64> {
        (0..)
            .map(|n| self.first_breakaway + n as f64 * self.period())
            .take_while(|&t| t < stop)
            .collect()
    }

    /// Position of the mass at time t.
    fn position(&self, t: f64) -> f64 {
        if t < self.first_breakaway {
            return 0.0;
        }
        let n = ((t - self.first_breakaway) / self.period()).floor();
        let breakaway = self.first_breakaway + n * self.period();
        let tau = t - breakaway;
        let u = if tau < self.slip {
            let wt = self.omega * tau;
            self.u_e + (self.u_s - self.u_e) * wt.cos() + self.vd / self.omega * wt.sin()
        } else {
            // stuck since breakaway + slip: x stays where it stopped
            let stopped = breakaway + self.slip;
            self.u_r + self.vd * (t - stopped)
        };
        self.vd * t - u
    }
}

/// Check a stick-slip run against the analytic cycle: the position at every output point, the
/// times the mode variable switches, and the friction force while stuck.
fn check_stick_slip(run: &Trajectories, x: &str, v: &str, mode: &str, friction: &str) {
    let (m, k, vd, fs, fk) = (1.0, 100.0, 0.1, 10.0, 6.0);
    let cycle = StickSlipCycle::new(m, k, vd, fs, fk);
    let stop = 4.0;
    for (t, x_t) in run.points_between(x, 0.0, stop) {
        assert_close(
            &format!("{}: {x} at t = {t}", run.label),
            x_t,
            cycle.position(t),
            1e-6,
        );
    }
    // Mode switches (both sides of each event are in the result): 0 -> 1 at every breakaway
    // (the switch waits for the speed to become positive, which follows the breakaway event
    // within the event tolerance), 1 -> 0 when the slide ends.
    let switches: Vec<(f64, f64, f64)> = mode_switches(run, mode);
    let breakaways = cycle.breakaways(stop);
    assert_eq!(
        switches.len(),
        2 * breakaways.len(),
        "{}: {mode} switches {switches:?}, expected breakaways at {breakaways:?}",
        run.label
    );
    for (n, &t_b) in breakaways.iter().enumerate() {
        let (t_start, from, to) = switches[2 * n];
        assert_eq!((from, to), (0.0, 1.0), "{}: switch {n}", run.label);
        assert_close(&format!("{}: breakaway {n}", run.label), t_start, t_b, 1e-6);
        let (t_end, from, to) = switches[2 * n + 1];
        assert_eq!((from, to), (1.0, 0.0), "{}: switch {n}", run.label);
        assert_close(
            &format!("{}: end of slide {n}", run.label),
            t_end,
            t_b + cycle.slip,
            1e-6,
        );
        assert_close(
            &format!("{}: position where slide {n} ends", run.label),
            run.at(x, t_end),
            vd * (t_b + cycle.slip) - cycle.u_r,
            1e-6,
        );
    }
    // While stuck the mass rests and friction balances the spring, never beyond Fs.
    let modes = run.get(mode);
    let speeds = run.get(v);
    let forces = run.get(friction);
    for (i, &t) in run.time().iter().enumerate() {
        if modes[i] == 0.0 {
            assert!(
                speeds[i].abs() < 1e-8,
                "{}: moving while stuck at t = {t}: {v} = {}",
                run.label,
                speeds[i]
            );
            assert!(
                forces[i].abs() <= fs + 1e-6,
                "{}: friction {} beyond the static limit at t = {t}",
                run.label,
                forces[i]
            );
        } else {
            assert_close(
                &format!("{}: sliding friction at t = {t}", run.label),
                forces[i],
                fk,
                1e-9,
            );
        }
    }
}

/// Changes of an integer-valued variable, as (time, old value, new value).
fn mode_switches(run: &Trajectories, name: &str) -> Vec<(f64, f64, f64)> {
    let time = run.time();
    let y = run.get(name);
    (1..time.len())
        .filter(|&i| y[i] != y[i - 1])
        .map(|i| (time[i], y[i - 1], y[i]))
        .collect()
}

#[test]
fn stick_slip_oscillator_follows_the_piecewise_solution() {
    let source = stick_slip_source("StickSlip", "vd*time", 4.0);
    let run = simulate_source("StickSlip", &source, &[]);
    check_stick_slip(&run, "x", "v", "mode", "f");
}

#[test]
fn stick_slip_on_support_friction_follows_the_piecewise_solution() {
    let source = stick_slip_library_source(
        "StickSlipLibrary",
        "Sources.ConstantSpeed puller(v_fixed=vd, s(start=0, fixed=true));",
        "",
        4.0,
    );
    let run = simulate_source("StickSlipLibrary", &source, &[]);
    check_stick_slip(&run, "slider.s", "slider.v", "friction.mode", "friction.f");
}

/// One phase of the stick-slip motion under an oscillating pull.
#[derive(Debug)]
enum FrictionPhase {
    /// Resting at `x`.
    Stuck { x: f64 },
    /// Sliding in direction `dir` (+1/-1) from `t0`:
    /// x = a sin(Omega t) - dir*Fk/k + c cos(w (t - t0)) + d sin(w (t - t0)).
    Sliding { t0: f64, dir: f64, c: f64, d: f64 },
}

/// Reference solution, phase by phase, of the mass (m, k, Fs, Fk as in the models) pulled
/// through the spring by an end moving as A*sin(Omega t), from rest at x = 0.
///
/// Stuck at x, the spring force k*(A sin(Omega t) - x) holds until its magnitude reaches Fs.
/// Sliding in direction s, m x'' + k x = k A sin(Omega t) - s Fk is solved in closed form
/// (particular part a sin(Omega t) - s Fk/k with a = k A/(k - m Omega^2), plus the free
/// oscillation at w = sqrt(k/m) fitted to the position and zero speed at the breakaway); the
/// slide ends when the speed returns to zero. Phase boundaries are the roots of these closed
/// forms, bracketed on a 1 ms grid and bisected to 1e-14 s.
struct OscillatingPullReference {
    m: f64,
    k: f64,
    fs: f64,
    fk: f64,
    amplitude: f64,
    omega_pull: f64,
    phases: Vec<(FrictionPhase, f64)>,
}

impl OscillatingPullReference {
    fn new(stop: f64) -> Self {
        let mut reference = OscillatingPullReference {
            m: 1.0,
            k: 100.0,
            fs: 10.0,
            fk: 6.0,
            amplitude: 0.3,
            omega_pull: 2.0,
            phases: Vec::new(),
        };
        let (mut t, mut x) = (0.0, 0.0);
        while t < stop {
            let stuck = FrictionPhase::Stuck { x };
            let breakaway =
                reference.first_root(t, stop, |r, s| r.fs - (r.k * (r.pull(s) - x)).abs());
            reference.phases.push((stuck, breakaway));
            if breakaway >= stop {
                break;
            }
            let dir = (reference.pull(breakaway) - x).signum();
            let slide = reference.slide_from(breakaway, x, dir);
            let end = reference.first_root(breakaway + 1e-9, stop, |r, s| dir * r.speed(&slide, s));
            x = reference.position_in(&slide, end);
            reference.phases.push((slide, end));
            t = end;
        }
        reference
    }

    fn pull(&self, t: f64) -> f64 {
        self.amplitude * (self.omega_pull * t).sin()
    }

    fn w(&self) -> f64 {
        (self.k / self.m).sqrt()
    }

    /// Amplitude of the particular solution.
    fn forced(&self) -> f64 {
        self.k * self.amplitude / (self.k - self.m * self.omega_pull * self.omega_pull)
    }

    fn slide_from(&self, t0: f64, x0: f64, dir: f64) -> FrictionPhase {
        let particular = self.forced() * (self.omega_pull * t0).sin() - dir * self.fk / self.k;
        let particular_speed = self.forced() * self.omega_pull * (self.omega_pull * t0).cos();
        FrictionPhase::Sliding {
            t0,
            dir,
            c: x0 - particular,
            d: -particular_speed / self.w(),
        }
    }

    fn position_in(&self, phase: &FrictionPhase, t: f64) -> f64 {
        match *phase {
            FrictionPhase::Stuck { x, .. } => x,
            FrictionPhase::Sliding { t0, dir, c, d } => {
                let wt = self.w() * (t - t0);
                self.forced() * (self.omega_pull * t).sin() - dir * self.fk / self.k
                    + c * wt.cos()
                    + d * wt.sin()
            }
        }
    }

    fn speed(&self, phase: &FrictionPhase, t: f64) -> f64 {
        match *phase {
            FrictionPhase::Stuck { .. } => 0.0,
            FrictionPhase::Sliding { t0, c, d, .. } => {
                let w = self.w();
                let wt = w * (t - t0);
                self.forced() * self.omega_pull * (self.omega_pull * t).cos() - c * w * wt.sin()
                    + d * w * wt.cos()
            }
        }
    }

    /// First time in (from, stop] where `g` turns non-positive (stop if it never does).
    fn first_root(&self, from: f64, stop: f64, g: impl Fn(&Self, f64) -> f64) -> f64 {
        let step = 1e-3;
        let mut a = from;
        while a < stop {
            let b = (a + step).min(stop);
            if g(self, b) <= 0.0 {
                let (mut lo, mut hi) = (a, b);
                while hi - lo > 1e-14 {
                    let mid = 0.5 * (lo + hi);
                    if g(self, mid) <= 0.0 {
                        hi = mid;
                    } else {
                        lo = mid;
                    }
                }
                return hi;
            }
            a = b;
        }
        stop
    }

    fn position(&self, t: f64) -> f64 {
        let (phase, _) = self
            .phases
            .iter()
            .find(|(_, end)| t <= *end)
            .unwrap_or_else(|| self.phases.last().expect("at least one phase"));
        self.position_in(phase, t)
    }

    /// Times at which the mode changes, with the new mode (1 forward, -1 backward, 0 stuck).
    fn switches(&self) -> Vec<(f64, f64)> {
        let mut out = Vec::new();
        for (i, (phase, end)) in self.phases.iter().enumerate() {
            if i + 1 == self.phases.len() {
                break;
            }
            match phase {
                FrictionPhase::Stuck { .. } => {
                    if let (FrictionPhase::Sliding { dir, .. }, _) = &self.phases[i + 1] {
                        out.push((*end, *dir));
                    }
                }
                FrictionPhase::Sliding { .. } => out.push((*end, 0.0)),
            }
        }
        out
    }
}

/// The spring's far end oscillates (0.3 m, 2 rad/s), so the mass sticks, slides forward,
/// sticks, slides backward, ...: both stick-slip models (hand-written modes and the bundled
/// `SupportFriction`) follow the phase-by-phase reference to 1e-6 m and switch modes at its
/// times to 1e-6 s, including the backward breakaways.
#[test]
fn stick_slip_under_an_oscillating_pull_slides_both_ways() {
    let stop = 6.0;
    let reference = OscillatingPullReference::new(stop);
    let expected = reference.switches();
    assert!(
        expected.iter().any(|&(_, mode)| mode < 0.0),
        "the reference should slide backward: {expected:?}"
    );
    let hand = simulate_source(
        "StickSlipOscillating",
        &stick_slip_source("StickSlipOscillating", "A*sin(Omega*time)", stop),
        &[],
    );
    let library = simulate_source(
        "StickSlipOscillatingLibrary",
        &stick_slip_library_source(
            "StickSlipOscillatingLibrary",
            "Sources.Position puller(exact=true); Modelica.Blocks.Sources.Sine pull(amplitude=A, f=Omega/(2*Modelica.Constants.pi));",
            "connect(pull.y, puller.s_ref);",
            stop,
        ),
        &[],
    );
    for (run, x, mode) in [
        (&hand, "x", "mode"),
        (&library, "slider.s", "friction.mode"),
    ] {
        for (t, x_t) in run.points_between(x, 0.0, stop) {
            assert_close(
                &format!("{}: {x} at t = {t}", run.label),
                x_t,
                reference.position(t),
                1e-6,
            );
        }
        // A breakaway shows as 0 -> +-1 once the speed has left zero (within the event
        // tolerance of the breakaway); a stop as +-1 -> 0.
        let switches = mode_switches(run, mode);
        assert_eq!(
            switches.len(),
            expected.len(),
            "{}: {mode} switches {switches:?}, expected {expected:?}",
            run.label
        );
        for (&(t, _, to), &(t_exp, mode_exp)) in switches.iter().zip(&expected) {
            assert_eq!(to, mode_exp, "{}: mode after t = {t}", run.label);
            assert_close(&format!("{}: mode switch", run.label), t, t_exp, 1e-6);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Release at the stick boundary
// ---------------------------------------------------------------------------------------------

/// A resting mass on `SupportFriction` pushed by F(t) = A sin(Omega t): the push rises through
/// the static friction level Fs, the mass breaks away, slides forward against Fk, and sticks
/// again when its speed returns to zero while |F| < Fs. The run stops before the push reaches
/// -Fs (the backward breakaway).
const FRICTION_RELEASE: &str = r#"
model FrictionRelease "Mass on SupportFriction pushed through its static friction level"
  import Modelica.Mechanics.Translational.Components;
  import Modelica.Mechanics.Translational.Sources;
  parameter Real m = 1;
  parameter Real A = 12;
  parameter Real Omega = 2;
  parameter Real Fs = 10;
  parameter Real Fk = 6;
  Modelica.Blocks.Sources.Sine push(amplitude=A, f=Omega/(2*Modelica.Constants.pi));
  Sources.Force force;
  Components.Mass slider(m=m, s(start=0, fixed=true), v(start=0, fixed=true));
  Components.SupportFriction friction(f_pos=[0, Fk], peak=Fs/Fk);
equation
  connect(push.y, force.f);
  connect(force.flange, slider.flange_a);
  connect(slider.flange_b, friction.flange_a);
  annotation(experiment(StopTime=2, Interval=0.01, Tolerance=1e-8));
end FrictionRelease;
"#;

/// The piecewise solution of `FrictionRelease`: at rest until A sin(Omega t_b) = Fs, then
/// m v' = A sin(Omega t) - Fk, so
/// v(t) = (A/Omega (cos(Omega t_b) - cos(Omega t)) - Fk (t - t_b)) / m and
/// x(t) = (A/Omega (cos(Omega t_b) (t - t_b) - (sin(Omega t) - sin(Omega t_b))/Omega)
///         - Fk (t - t_b)^2/2) / m, until v returns to zero at t_s; at rest at x(t_s) after.
struct Release {
    m: f64,
    a: f64,
    omega: f64,
    fk: f64,
    t_b: f64,
    t_s: f64,
}

impl Release {
    fn new(m: f64, a: f64, omega: f64, fs: f64, fk: f64) -> Release {
        let t_b = (fs / a).asin() / omega;
        let mut r = Release {
            m,
            a,
            omega,
            fk,
            t_b,
            t_s: f64::NAN,
        };
        // v > 0 right after t_b (the push still rises) and decreases to zero before the push
        // falls to -A; bisection on the sign change
        let (mut lo, mut hi) = (t_b + 1e-3, t_b + std::f64::consts::PI / omega);
        assert!(r.speed(lo) > 0.0 && r.speed(hi) < 0.0);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if r.speed(mid) > 0.0 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        r.t_s = 0.5 * (lo + hi);
        r
    }

    fn push(&self, t: f64) -> f64 {
        self.a * (self.omega * t).sin()
    }

    fn speed(&self, t: f64) -> f64 {
        let (w, tb) = (self.omega, self.t_b);
        (self.a / w * ((w * tb).cos() - (w * t).cos()) - self.fk * (t - tb)) / self.m
    }

    fn position(&self, t: f64) -> f64 {
        let (w, tb) = (self.omega, self.t_b);
        let t = t.clamp(tb, self.t_s);
        let dt = t - tb;
        (self.a / w * ((w * tb).cos() * dt - ((w * t).sin() - (w * tb).sin()) / w)
            - 0.5 * self.fk * dt * dt)
            / self.m
    }
}

/// Mode trace stuck -> sliding forward -> stuck, with the switches at the analytic breakaway
/// and stopping times (1e-6 s), the position along the piecewise solution (1e-6 m), no
/// backward sliding ever, and while stuck a resting mass (|v| < 1e-8 m/s) held by a friction
/// force that balances the push within the static limit. Both integrators: the stiff one
/// restarts after each event, and its stuck phase must not drift off zero speed.
#[test]
fn friction_released_at_the_stick_boundary_follows_the_piecewise_solution() {
    let (m, a, omega, fs, fk) = (1.0, 12.0, 2.0, 10.0, 6.0);
    let r = Release::new(m, a, omega, fs, fk);
    // the push at the end of the slide must be inside the static band (it sticks again), and
    // the run must end before the backward breakaway
    assert!(r.push(r.t_s).abs() < fs && r.push(2.0) > -fs);
    for solver in ["dopri5", "bdf"] {
        let run = simulate_source("FrictionRelease", FRICTION_RELEASE, &["--solver", solver]);
        let label = format!("{} ({solver})", run.label);
        let switches = mode_switches(&run, "friction.mode");
        assert_eq!(
            switches.len(),
            2,
            "{label}: friction.mode switches {switches:?}, expected 0 -> 1 at {} and 1 -> 0 at {}",
            r.t_b,
            r.t_s
        );
        assert_eq!((switches[0].1, switches[0].2), (0.0, 1.0), "{label}");
        assert_close(&format!("{label}: breakaway"), switches[0].0, r.t_b, 1e-6);
        assert_eq!((switches[1].1, switches[1].2), (1.0, 0.0), "{label}");
        assert_close(
            &format!("{label}: end of slide"),
            switches[1].0,
            r.t_s,
            1e-6,
        );
        for (t, x) in run.points_between("slider.s", 0.0, 2.0) {
            assert_close(
                &format!("{label}: slider.s at t = {t}"),
                x,
                r.position(t),
                1e-6,
            );
        }
        let (modes, locked, speeds, forces) = (
            run.get("friction.mode"),
            run.get("friction.locked"),
            run.get("slider.v"),
            run.get("friction.f"),
        );
        for (i, &t) in run.time().iter().enumerate() {
            assert!(modes[i] >= 0.0, "{label}: sliding backward at t = {t}");
            if modes[i] == 0.0 {
                assert!(
                    speeds[i].abs() < 1e-8,
                    "{label}: moving while stuck at t = {t}: v = {}",
                    speeds[i]
                );
            }
            // locked: the friction force holds the mass against the push; otherwise (sliding,
            // or starting to slide within the breakaway event) it is the sliding force
            if locked[i] == 1.0 {
                assert_eq!(modes[i], 0.0, "{label}: locked while sliding at t = {t}");
                assert!(
                    forces[i].abs() <= fs + 1e-6,
                    "{label}: friction {} at t = {t}",
                    forces[i]
                );
                assert_close(
                    &format!("{label}: friction balancing the push at t = {t}"),
                    forces[i],
                    r.push(t),
                    1e-6,
                );
            } else {
                assert_close(
                    &format!("{label}: sliding friction at t = {t}"),
                    forces[i],
                    fk,
                    1e-9,
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The two contact models of examples/
// ---------------------------------------------------------------------------------------------

/// `examples/BouncingBallStop.mo` (rigid stop, reinit with e = 0.9086) against
/// `examples/BouncingBallElastoGap.mo` (ElastoGap c = 5e4 N/m, d = 10 N.s/m), both dropping a
/// 0.5 kg ball from 4.0 m onto a contact at 0.05 m.
///
/// 1. The rigid ball follows the geometric series of its restitution exactly: impacts to 1e-6 s.
/// 2. The ElastoGap ball follows the same series with the restitution and contact duration of
///    its contact law at each impact speed (integrated by `elastogap_contact`): contact starts
///    to 1e-4 s.
/// 3. The two agree: the apex heights above the contact point within 0.5 %, and each contact
///    start of the ElastoGap ball is the rigid impact delayed by the earlier contacts (about
///    10 ms each) within 5 ms (the ElastoGap's restitution falls slightly for the slower
///    impacts, 0.9086 at 8.8 m/s, so its flights get a little shorter than the rigid ball's).
#[test]
fn elastogap_ball_and_rigid_stop_ball_agree() {
    let (m, c, d, g, contact, drop) = (0.5, 5e4, 10.0, 9.80665, 0.05, 4.0);
    let e_stop = 0.9086;
    let stop_time = 10.0;
    let gap = simulate_repo_file("examples/BouncingBallElastoGap.mo", &[]);
    let stop = simulate_repo_file("examples/BouncingBallStop.mo", &[]);

    // 1. the rigid stop: reinit events
    let stop_impacts = impacts_in(&stop, "ball.v");
    let expected = bouncing_ball_impacts(g, e_stop, drop - contact, stop_time);
    assert_eq!(
        stop_impacts.len(),
        expected.len(),
        "rigid-stop impacts at {stop_impacts:?}"
    );
    for (k, (&(t, _, _), &(t_exp, _))) in stop_impacts.iter().zip(&expected).enumerate() {
        assert_close(&format!("rigid impact {}", k + 1), t, t_exp, 1e-6);
    }

    // 2. the ElastoGap: contact from the downward to the upward crossing of the contact point
    let touch = gap.downward_crossings("ball.s", contact);
    let leave = gap.upward_crossings("ball.s", contact);
    let mut predicted = Vec::new();
    let mut t = (2.0 * (drop - contact) / g).sqrt();
    let mut v = g * t;
    while t < stop_time {
        predicted.push(t);
        let impact = elastogap_contact(m, c, d, g, v);
        t += impact.duration;
        v *= impact.restitution;
        t += 2.0 * v / g;
    }
    assert_eq!(
        touch.len(),
        predicted.len(),
        "ElastoGap contacts at {touch:?}, predicted at {predicted:?}"
    );
    for (k, (&t, &t_exp)) in touch.iter().zip(&predicted).enumerate() {
        assert_close(&format!("ElastoGap contact {}", k + 1), t, t_exp, 1e-4);
    }

    // 3. the two models side by side
    let mut delay = 0.0;
    for k in 0..stop_impacts.len().min(touch.len()) {
        assert_close(
            &format!(
                "contact {} of the ElastoGap ball versus the rigid impact",
                k + 1
            ),
            touch[k] - delay,
            stop_impacts[k].0,
            5e-3,
        );
        delay += leave[k] - touch[k];
    }
    let gap_apexes = apexes_above(&gap, contact);
    let stop_apexes = apexes_above(&stop, contact);
    assert!(gap_apexes.len() >= 7, "apexes {gap_apexes:?}");
    for (k, (a, b)) in gap_apexes.iter().zip(&stop_apexes).enumerate() {
        assert_rel(&format!("apex {} above the contact", k + 1), *a, *b, 5e-3);
    }
    assert_rel(
        "first apex of the rigid ball",
        stop_apexes[0],
        e_stop * e_stop * (drop - contact),
        1e-4,
    );
}

/// Heights above `level` of the apexes of `ball.s` (where `ball.v` turns from up to down).
fn apexes_above(run: &Trajectories, level: f64) -> Vec<f64> {
    let v = run.get("ball.v");
    let s = run.get("ball.s");
    (1..v.len())
        .filter(|&i| v[i - 1] > 0.0 && v[i] <= 0.0)
        .map(|i| s[i - 1].max(s[i]) - level)
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Two brakes stuck on one shaft
// ---------------------------------------------------------------------------------------------

/// Two friction brakes with the stuck/sliding state machine of the MSL's friction elements
/// on one shaft. Sliding forward from w = 1 they decelerate it at (T - 2 - 1)/J = -2.5 until
/// t = 0.4; then both lock and only the sum of their holding torques is determined
/// (`b1.tau + b2.tau = T`): a singular but consistent torn linear loop.
const TWO_BRAKES: &str = r#"
model TwoBrakes "Two Coulomb brakes on one shaft, both stuck once it stops"
  model Brake
    parameter Real tau_max "Sliding friction torque";
    Real w;
    Real a;
    Real sa "Path parameter: the holding torque while locked";
    Real tau;
    Boolean startForward;
    Boolean startBackward;
    Boolean locked;
    Integer mode(start = 1, fixed = true);
  equation
    startForward = pre(mode) == 0 and sa > tau_max;
    startBackward = pre(mode) == 0 and sa < -tau_max;
    locked = not (pre(mode) == 1 or startForward or pre(mode) == -1 or startBackward);
    a = if locked then 0 else if startForward or pre(mode) == 1 then sa - tau_max
      else sa + tau_max;
    tau = if locked then sa else if startForward or pre(mode) == 1 then tau_max
      else -tau_max;
    mode = if (pre(mode) == 1 or startForward) and w > 0 then 1
      else if (pre(mode) == -1 or startBackward) and w < 0 then -1 else 0;
  end Brake;
  parameter Real J = 1;
  parameter Real T = 0.5 "Constant driving torque";
  Real w(start = 1, fixed = true);
  Real a;
  Brake b1(tau_max = 2);
  Brake b2(tau_max = 1);
equation
  b1.w = w;
  b2.w = w;
  b1.a = a;
  b2.a = a;
  der(w) = a;
  J*a = T - b1.tau - b2.tau;
end TwoBrakes;
"#;

/// While both brakes slide their path parameters are accelerations plus offsets (-0.5 and
/// -1.5); continuing from those values would split the holding torque 0.75 / -0.25. The
/// least-norm solution of the loop's unknowns splits it evenly, 0.25 each, whatever came
/// before: both stay locked (|0.25| below either limit) and the shaft rests.
#[test]
fn brakes_stuck_together_share_the_holding_torque_evenly() {
    let run = simulate_source("TwoBrakes", TWO_BRAKES, &["--stop-time", "1"]);
    assert_close("w(0.2)", run.at("w", 0.2), 0.5, 1e-9);
    assert_close("b1.sa(0.2)", run.at("b1.sa", 0.2), -0.5, 1e-9);
    assert_close("b2.sa(0.2)", run.at("b2.sa", 0.2), -1.5, 1e-9);
    for t in [0.5, 0.8, 1.0] {
        assert_close(&format!("w({t})"), run.at("w", t), 0.0, 1e-9);
        assert_close(&format!("b1.mode({t})"), run.at("b1.mode", t), 0.0, 0.0);
        assert_close(&format!("b2.mode({t})"), run.at("b2.mode", t), 0.0, 0.0);
        assert_close(&format!("b1.tau({t})"), run.at("b1.tau", t), 0.25, 1e-9);
        assert_close(&format!("b2.tau({t})"), run.at("b2.tau", t), 0.25, 1e-9);
    }
    // the stop itself: the mode switches once, at t = 0.4
    let stops = run.jumps("b1.mode");
    assert_eq!(stops.len(), 1, "{stops:?}");
    assert_close("stop time", stops[0].0, 0.4, 1e-6);
}
