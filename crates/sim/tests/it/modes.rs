//! Mode switching of small Modelica models written here, through the whole back end (real
//! frontend without the bundled library, symbolic stage, interpreter, simulator): a mode
//! decided by a relation must settle in the event iteration and stay settled afterwards,
//! even where the relation's operands are equal up to rounding in the mode it selects.

use moss_codegen::Interpreter;
use moss_frontend::{flatten_model, LoadOptions};
use moss_results::SimResult;
use moss_sim::{simulate_with_stats, SimOptions, Simulation, Solver};
use moss_symbolic::CausalProgram;
use std::sync::atomic::{AtomicUsize, Ordering};

static NEXT_DIR: AtomicUsize = AtomicUsize::new(0);

/// Flatten and translate the last class of `source`.
fn translate(source: &str) -> CausalProgram {
    let dir = std::env::temp_dir().join(format!(
        "moss-sim-modes-{}-{}",
        std::process::id(),
        NEXT_DIR.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let file = dir.join("Test.mo");
    std::fs::write(&file, source).expect("write test source");
    let opts = LoadOptions {
        libs: Vec::new(),
        use_modelicapath: false,
        use_bundled: false,
    };
    let flat = flatten_model(&opts, &file.to_string_lossy());
    let _ = std::fs::remove_dir_all(&dir);
    let flat = match flat {
        Ok(f) => f.model,
        Err(e) => panic!(
            "flattening failed: {}",
            e.diagnostics
                .iter()
                .map(|d| d.render(&e.sources))
                .collect::<Vec<_>>()
                .join("\n")
        ),
    };
    moss_symbolic::translate(&flat).unwrap_or_else(|d| {
        panic!(
            "translation failed: {}",
            d.iter()
                .map(|d| d.render(&flat.sources))
                .collect::<Vec<_>>()
                .join("\n")
        )
    })
}

fn simulate(source: &str, opts: &SimOptions) -> Simulation {
    let program = translate(source);
    let mut model = Interpreter::new(program.clone()).unwrap_or_else(|e| panic!("{e}"));
    simulate_with_stats(&mut model, &program, opts).unwrap_or_else(|e| panic!("{e}"))
}

fn series(r: &SimResult, name: &str) -> Vec<f64> {
    r.series(name)
        .unwrap_or_else(|| panic!("`{name}` not in the result"))
}

/// Value of `name` at the last row with time <= `t`.
fn at(r: &SimResult, name: &str, t: f64) -> f64 {
    let time = r.time();
    let v = series(r, name);
    let i = time.iter().rposition(|&tk| tk <= t).expect("row before t");
    v[i]
}

/// A force limiter: it passes the demanded force until that exceeds `fMax`, then holds
/// `fMax`. The mode is decided on the transmitted force itself (like the breakaway test of a
/// friction element on its own friction torque), so in the limited mode the relation's
/// operands are equal: `f > fMax` with `f = fMax`. The event iteration must keep the mode it
/// switched to, not flip back and forth between the two.
const FORCE_LIMITER: &str = "
model ForceLimiter
  parameter Real fMax = 0.3;
  Real demand;
  Real f \"transmitted force\";
  Real x(start = 0, fixed = true) \"position driven by the transmitted force\";
  Boolean limited;
equation
  demand = 2*time;
  limited = f > fMax;
  f = if limited then fMax else demand;
  der(x) = f;
end ForceLimiter;
";

#[test]
fn mode_decided_on_its_own_output_settles_at_the_limit() {
    let opts = SimOptions {
        stop_time: Some(1.0),
        ..SimOptions::default()
    };
    let sim = simulate(FORCE_LIMITER, &opts);
    let r = &sim.result;
    // the switch happens where the demand reaches the limit (t = 0.15): the first event
    // finds the relation flipping back in the event iteration and gives it a hysteresis,
    // the second (1e-10 later) settles in the limited mode
    assert!(sim.stats.state_events <= 2, "{}", sim.stats);
    assert_eq!(at(r, "limited", 0.1), 0.0);
    assert_eq!(at(r, "limited", 0.5), 1.0);
    assert!((at(r, "f", 0.1) - 0.2).abs() < 1e-9);
    assert_eq!(at(r, "f", 0.9), 0.3);
    // x = t^2 up to 0.15, then grows by 0.3 per second
    let x_end = 0.15f64.powi(2) + 0.3 * 0.85;
    assert!(
        (at(r, "x", 1.0) - x_end).abs() < 1e-6,
        "x(1) = {}",
        at(r, "x", 1.0)
    );
}

/// A first-order lag whose time constant depends on the sign of its input error (the
/// control voltage of a thyristor: fast on, slow off). After the input drops to zero the
/// error decays exponentially towards zero and is left at rounding-noise size, where an
/// explicit integrator at its stability limit makes its sign alternate from step to step.
/// Those sign changes of noise must not be events.
const ASYMMETRIC_LAG: &str = "
model AsymmetricLag
  parameter Real Ton = 1e-3;
  parameter Real Toff = 3e-3;
  Real u = if time < 0.01 then 1 else 0;
  Real y(start = 0, fixed = true);
equation
  der(y) = (u - y)/(if u - y > 0 then Ton else Toff);
end AsymmetricLag;
";

#[test]
fn relation_on_a_decayed_error_does_not_chatter() {
    for solver in [Solver::Dopri5, Solver::Bdf] {
        let opts = SimOptions {
            stop_time: Some(2.0),
            interval: Some(1e-3),
            solver,
            ..SimOptions::default()
        };
        let sim = simulate(ASYMMETRIC_LAG, &opts);
        let r = &sim.result;
        // rising with Ton until the input drops, then falling with Toff
        let y_drop = 1.0 - (-0.01f64 / 1e-3).exp();
        assert!((at(r, "y", 0.01) - y_drop).abs() < 1e-4, "{solver:?}");
        let y_later = y_drop * (-0.005f64 / 3e-3).exp();
        assert!(
            (at(r, "y", 0.015) - y_later).abs() < 1e-4,
            "{solver:?}: y(0.015) = {}",
            at(r, "y", 0.015)
        );
        assert!(
            at(r, "y", 2.0).abs() < 1e-5,
            "{solver:?}: y(2) = {}",
            at(r, "y", 2.0)
        );
        // the input's drop is a time event; after it the error's sign flips on noise at
        // most a couple of times before the relation is recognized as chattering
        assert!(
            sim.stats.state_events <= 3,
            "{solver:?}: {} state events",
            sim.stats.state_events
        );
    }
}

/// A capacitor charging towards 1 with a guard that it never overshoots. An event at
/// t = 0.07 restarts the integrator close to the end value; the explicit Euler probe that
/// chooses the first step must not be mistaken for the solution (it overshoots the guard).
const GUARDED_CHARGE: &str = "
model GuardedCharge
  parameter Real tau = 0.01;
  Real v(start = 0, fixed = true);
  Boolean late = time > 0.07;
equation
  der(v) = (1 - v)/tau;
  assert(v <= 1.0001, \"overcharged\");
end GuardedCharge;
";

#[test]
fn failed_probe_of_the_first_step_after_an_event_is_retried_closer() {
    for solver in [Solver::Dopri5, Solver::Bdf] {
        let opts = SimOptions {
            stop_time: Some(1.0),
            solver,
            ..SimOptions::default()
        };
        let sim = simulate(GUARDED_CHARGE, &opts);
        let r = &sim.result;
        assert_eq!(sim.stats.time_events, 1, "{solver:?}");
        let expected = 1.0 - (-0.1f64 / 0.01).exp();
        assert!((at(r, "v", 0.1) - expected).abs() < 1e-5, "{solver:?}");
    }
}

/// A characteristic that differs from its far-field value only in a narrow window (a
/// resonance, a latch): from the start value x = 0 the residual is flat, so Newton has no
/// slope to follow and a sign-change search steps over the window. The simplified model
/// (linear, pointing at the window) is solvable, and continuation from it reaches the actual
/// operating point x = 100 + sqrt(ln 2).
const NARROW_WINDOW: &str = "
model NarrowWindow
  parameter Real x0 = 100;
  Real x(start = 0);
  Real y(start = 0, fixed = true);
equation
  0 = homotopy(actual = 1 - 2*exp(-(x - x0)^2), simplified = x - x0);
  der(y) = x - y;
end NarrowWindow;
";

#[test]
fn initialization_follows_the_homotopy_path_when_the_actual_problem_fails() {
    let opts = SimOptions {
        stop_time: Some(1.0),
        ..SimOptions::default()
    };
    let sim = simulate(NARROW_WINDOW, &opts);
    let x = at(&sim.result, "x", 0.0);
    let expected = 100.0 + 2f64.ln().sqrt();
    assert!((x - expected).abs() < 1e-8, "x = {x}");
    // the actual equation holds during the simulation too
    assert!((at(&sim.result, "x", 1.0) - expected).abs() < 1e-8);
}

#[test]
fn homotopy_is_the_actual_expression_when_that_initializes() {
    // same characteristic, started inside the window: no continuation needed, and the
    // result is the actual problem's root, not the simplified one's (x = 100)
    let source = NARROW_WINDOW.replace("Real x(start = 0)", "Real x(start = 100.5)");
    let sim = simulate(&source, &SimOptions::default());
    let x = at(&sim.result, "x", 0.0);
    assert!((x - (100.0 + 2f64.ln().sqrt())).abs() < 1e-8, "x = {x}");
}

/// An integrator closed through a Schmitt trigger (a relaxation oscillator): the trigger is
/// an algebraic loop with positive feedback and a saturating gain, so inside its hysteresis
/// band it has three solutions. The simplified expression of `homotopy` picks the low
/// branch at the start (from the start value the actual problem is solved by the unstable
/// balance y = 0, where nothing ever moves); then each evaluation must stay on the branch
/// the trajectory is on until that branch ends at c = +-0.49, whatever later stage or
/// output point was evaluated before it. Exact: a triangle wave of slope 1 switching at
/// t = 0.49 + 0.98 k.
const RELAXATION: &str = "
model Relaxation
  Real c(start = 0, fixed = true);
  Real y(start = 0);
  Real v;
equation
  v = c + 0.5*y;
  y = homotopy(actual = smooth(0, noEvent(if 100*v > 1 then 1 else if 100*v < -1 then -1 else 100*v)), simplified = -1);
  der(c) = -y;
end Relaxation;
";

#[test]
fn a_loop_with_several_solutions_starts_on_the_homotopy_branch_and_stays_on_its_branch() {
    let opts = SimOptions {
        stop_time: Some(4.0),
        interval: Some(0.01),
        ..SimOptions::default()
    };
    let sim = simulate(RELAXATION, &opts);
    assert_eq!(at(&sim.result, "y", 0.0), -1.0);
    let y = sim.result.series("y").expect("y is recorded");
    let c = sim.result.series("c").expect("c is recorded");
    let times = sim.result.time();
    let switches: Vec<f64> = (1..times.len())
        .filter(|&k| (y[k] > 0.0) != (y[k - 1] > 0.0))
        .map(|k| times[k])
        .collect();
    let expected = [0.49, 1.47, 2.45, 3.43];
    assert_eq!(switches.len(), expected.len(), "switches at {switches:?}");
    for (t, e) in switches.iter().zip(expected) {
        // the first output point at or after the switch
        assert!(
            *t >= e - 1e-6 && *t <= e + 0.01 + 1e-6,
            "switches at {switches:?}"
        );
    }
    let peak = c.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    assert!((peak - 0.49).abs() < 2e-3, "amplitude {peak}");
}

/// A fast first-order stage at rest (one state exactly zero, another within the tolerance
/// of zero) hit by a steep input at t = 0.5, as the integrators of a switched-capacitor
/// filter are at every clock edge: the first step after the restart must be one the
/// integrator can take, however steep the derivative.
const KICKED_STAGE: &str = "
model KickedStage
  parameter Real tau = 1e-6;
  Real u = if time < 0.5 then 0 else 1e3;
  Real a(start = 1e-10, fixed = true);
  Real b(start = 0, fixed = true);
equation
  der(a) = 0;
  der(b) = (u - b)/tau;
end KickedStage;
";

#[test]
fn first_step_after_a_steep_kick_is_resolvable() {
    for solver in [Solver::Auto, Solver::Bdf] {
        let opts = SimOptions {
            stop_time: Some(1.0),
            solver,
            ..SimOptions::default()
        };
        let sim = simulate(KICKED_STAGE, &opts);
        let r = &sim.result;
        assert_eq!(at(r, "b", 0.4), 0.0, "{solver:?}");
        let b = at(r, "b", 1.0);
        assert!((b - 1e3).abs() < 1e-3, "{solver:?}: b(1) = {b}");
    }
}

#[test]
fn derivative_that_is_not_finite_is_named_when_the_step_collapses() {
    // a damper whose constant was left at zero: der(x) = -x/0
    let source = "
model UnsetDamper
  parameter Real d = 0;
  Real x(start = 1, fixed = true);
equation
  der(x) = -x/d;
end UnsetDamper;
";
    let program = translate(source);
    let mut model = Interpreter::new(program.clone()).unwrap_or_else(|e| panic!("{e}"));
    let err = match simulate_with_stats(&mut model, &program, &SimOptions::default()) {
        Ok(_) => panic!("a division by zero cannot simulate"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("not finite"), "{err}");
    assert!(err.contains("der(x) = -inf"), "{err}");
}
