//! The event loop on hand-written models: state events located to closed-form times, time
//! events hit exactly, both sides of events in the output, chattering, terminate, errors,
//! result variables.

use crate::common;

use common::TestModel;
use moss_sim::{simulate, simulate_with_stats, SimErrorKind, SimOptions, Solver};
use moss_symbolic::program::RelOp;

const G: f64 = 9.81;
const E: f64 = 0.8;

/// h'' = -g from h = 1 at rest; `when h < 0 then reinit(v, -e*pre(v))`.
fn bouncing_ball() -> TestModel {
    TestModel::new(&["h", "v"], &[1.0, 0.0], |_t, x, dx| {
        dx[0] = x[1];
        dx[1] = -G;
    })
    .crossing(RelOp::Lt, "h < 0", |_t, x| x[0])
    .on_event(|_t, x, before, now| {
        if now[0] && !before[0] {
            x[1] *= -E;
        }
        None
    })
}

/// Impact times of the bouncing ball before `t_end`: t1 = sqrt(2 h0 / g), then flights of
/// 2 e^k t1.
fn impact_times(t_end: f64) -> Vec<f64> {
    let t1 = (2.0 / G).sqrt();
    let mut times = vec![t1];
    let mut k = 1;
    loop {
        let next = times[times.len() - 1] + 2.0 * E.powi(k) * t1;
        if next > t_end {
            return times;
        }
        times.push(next);
        k += 1;
    }
}

/// Times of the event row pairs where `name` jumps (left and right values differ).
fn jumps(result: &moss_results::SimResult, name: &str) -> Vec<f64> {
    let t = result.time();
    let v = result.series(name).expect("variable stored");
    (1..t.len())
        .filter(|&i| t[i] == t[i - 1] && (v[i] - v[i - 1]).abs() > 1e-9)
        .map(|i| t[i])
        .collect()
}

#[test]
fn bouncing_ball_impacts_match_closed_form_with_both_solvers() {
    let expected = impact_times(3.0);
    assert_eq!(expected.len(), 6);
    for solver in [Solver::Dopri5, Solver::Bdf, Solver::Rk4] {
        let mut model = bouncing_ball();
        let program = model.program();
        let opts = SimOptions {
            stop_time: Some(3.0),
            tolerance: Some(1e-8),
            solver,
            // Only used by the fixed-step RK4 (exact on this piecewise quadratic motion).
            max_step: (solver == Solver::Rk4).then_some(1e-2),
            ..Default::default()
        };
        let sim = simulate_with_stats(&mut model, &program, &opts).expect("simulates");
        let found = jumps(&sim.result, "v");
        assert_eq!(
            found.len(),
            expected.len(),
            "{solver:?}: impacts at {found:?}"
        );
        for (f, e) in found.iter().zip(&expected) {
            assert!(
                (f - e).abs() < 1e-6,
                "{solver:?}: impact at {f}, expected {e}"
            );
        }
        // Each impact: h ≈ 0 on both sides, v reversed and scaled by e.
        let (t, h, v) = (
            sim.result.time(),
            sim.result.series("h").expect("h"),
            sim.result.series("v").expect("v"),
        );
        for i in 1..t.len() {
            if t[i] == t[i - 1] && (v[i] - v[i - 1]).abs() > 1e-9 {
                assert!(h[i].abs() < 1e-9 && h[i - 1].abs() < 1e-9, "h = {}", h[i]);
                assert!((v[i] + E * v[i - 1]).abs() < 1e-9 * v[i].abs().max(1.0));
            }
        }
        assert!(sim.stats.state_events >= 6, "{:?}", sim.stats);
    }
}

#[test]
fn output_grid_plus_two_rows_per_event() {
    let mut model = bouncing_ball();
    let program = model.program();
    let opts = SimOptions {
        stop_time: Some(1.0),
        intervals: Some(10),
        ..Default::default()
    };
    let sim = simulate_with_stats(&mut model, &program, &opts).expect("simulates");
    let t = sim.result.time();
    let events = sim.stats.state_events + sim.stats.time_events;
    // The impact is two events: `h < 0` fires, and after the reinit the relation flips back
    // at once. Closer than event location resolves, they are one instant in the result:
    // one pair of rows (left limit before the first, right limit after the second).
    let pairs = (1..t.len()).filter(|&i| t[i] == t[i - 1]).count() as u64;
    assert_eq!(events, 2, "{:?}", sim.stats);
    assert_eq!(pairs, 1);
    assert_eq!(t.len() as u64, 11 + 2 * pairs);
    assert_eq!(t[0], 0.0);
    assert_eq!(*t.last().expect("rows"), 1.0);
    // Grid rows are interpolated, not step ends: h follows the parabola before the impact.
    let h = sim.result.series("h").expect("h");
    for (ti, hi) in t.iter().zip(&h) {
        if *ti < 0.45 {
            assert!(
                (hi - (1.0 - 0.5 * G * ti * ti)).abs() < 1e-5,
                "h({ti}) = {hi}"
            );
        }
    }
}

#[test]
fn time_events_are_hit_exactly() {
    // Sawtooth: der(x) = 1, x reset to 0 at t = 0.1, 0.35, 0.6, 0.85.
    let mut model = TestModel::new(&["x"], &[0.0], |_t, _x, dx| dx[0] = 1.0)
        .time_event(0.1, 0.25)
        .on_event(|_t, x, _, _| {
            x[0] = 0.0;
            None
        });
    let program = model.program();
    for solver in [Solver::Dopri5, Solver::Bdf] {
        let opts = SimOptions {
            stop_time: Some(1.0),
            intervals: Some(4),
            solver,
            ..Default::default()
        };
        let sim = simulate_with_stats(&mut model, &program, &opts).expect("simulates");
        let r = &sim.result;
        let t = r.time();
        let x = r.series("x").expect("x");
        let event_times: Vec<f64> = (1..t.len())
            .filter(|&i| t[i] == t[i - 1])
            .map(|i| t[i])
            .collect();
        let expected: Vec<f64> = (0..4).map(|k| 0.1 + k as f64 * 0.25).collect();
        assert_eq!(event_times, expected, "{solver:?}");
        for i in 1..t.len() {
            if t[i] == t[i - 1] {
                assert_eq!(x[i], 0.0);
                let since_last = if t[i] == 0.1 { 0.1 } else { 0.25 };
                assert!(
                    (x[i - 1] - since_last).abs() < 1e-9,
                    "left limit {}",
                    x[i - 1]
                );
            }
        }
        assert_eq!(sim.stats.time_events, 4);
        assert_eq!(sim.stats.state_events, 0);
    }
}

#[test]
fn chattering_stops_with_the_zero_crossing_named() {
    // der(x) = if x > 0 then -1 else 1: reaches 0 at t = 1, then switches forever.
    let mut model = TestModel::new(&["x"], &[1.0], |_t, _x, _dx| {})
        .full_rhs(|_t, _x, rel, dx| {
            dx[0] = if rel[0] { -1.0 } else { 1.0 };
            Ok(())
        })
        .crossing(RelOp::Gt, "x > 0 (Sliding.mo:3:20)", |_t, x| x[0]);
    let program = model.program();
    let opts = SimOptions {
        stop_time: Some(2.0),
        ..Default::default()
    };
    let err = simulate(&mut model, &program, &opts).expect_err("chatters");
    let SimErrorKind::Chattering(c) = &err.kind else {
        panic!("expected chattering, got {}", err.kind);
    };
    assert!((c.time - 1.0).abs() < 1e-6, "at {}", c.time);
    let msg = err.to_string();
    assert!(
        msg.contains("x > 0 (Sliding.mo:3:20)") && msg.contains("chattering"),
        "{msg}"
    );
    let partial = err.partial.expect("partial result");
    assert!(partial.len() > 1 && *partial.time().last().unwrap_or(&0.0) <= c.time);
}

#[test]
fn terminate_ends_the_run_cleanly() {
    let mut model = TestModel::new(&["x"], &[0.0], |_t, _x, dx| dx[0] = 2.0)
        .crossing(RelOp::Ge, "x >= 1", |_t, x| x[0] - 1.0)
        .on_event(|_t, _x, before, now| (now[0] && !before[0]).then(|| "x reached 1".to_string()));
    let program = model.program();
    let sim = simulate_with_stats(&mut model, &program, &SimOptions::default()).expect("ok");
    assert_eq!(sim.terminated.as_deref(), Some("x reached 1"));
    let last = *sim.result.time().last().expect("rows");
    assert!((last - 0.5).abs() < 1e-9, "ended at {last}");
}

#[test]
fn model_errors_stop_with_message_time_and_partial_result() {
    let mut model = TestModel::new(&["x"], &[0.0], |_t, _x, _dx| {}).full_rhs(|t, _x, _rel, dx| {
        if t > 0.5 {
            return Err("assertion failed: t <= 0.5".into());
        }
        dx[0] = 1.0;
        Ok(())
    });
    let program = model.program();
    for solver in [Solver::Dopri5, Solver::Bdf] {
        let opts = SimOptions {
            solver,
            ..Default::default()
        };
        let err = simulate(&mut model, &program, &opts).expect_err("fails");
        let SimErrorKind::Runtime(e) = &err.kind else {
            panic!("expected a runtime error, got {}", err.kind);
        };
        assert!(e.message.contains("assertion failed"));
        assert!(
            (e.time - 0.5).abs() < 1e-3,
            "{solver:?} failed at {}",
            e.time
        );
        let partial = err.partial.expect("partial");
        let last = *partial.time().last().expect("rows");
        assert!(last <= 0.5 && last > 0.45, "{solver:?}: last row at {last}");
    }
}

#[test]
fn algebraic_outputs_are_recomputed_at_output_points() {
    let mut model =
        TestModel::new(&["x"], &[1.0], |_t, x, dx| dx[0] = -x[0]).output("y", |_t, x| x[0] * x[0]);
    let program = model.program();
    let r = simulate(&mut model, &program, &SimOptions::default()).expect("ok");
    let (x, y) = (r.series("x").expect("x"), r.series("y").expect("y"));
    assert_eq!(r.len(), 501);
    for (x, y) in x.iter().zip(&y) {
        assert!((y - x * x).abs() < 1e-14);
    }
    let der = r.series("der(x)").expect("der(x)");
    for (x, d) in x.iter().zip(&der) {
        assert!((d + x).abs() < 1e-14);
    }
}

#[test]
fn variables_filter_aliases_and_parameters() {
    let mut model = TestModel::new(&["x"], &[1.0], |_t, x, dx| dx[0] = -x[0])
        .parameter("k", 2.0)
        .alias("minus_x", "x", -1.0, 0.0)
        .alias("x_plus_1", "x", 1.0, 1.0)
        .alias("k_alias", "k", 3.0, 0.0);
    let program = model.program();
    let opts = SimOptions {
        parameters: vec![("k".into(), 5.0)],
        ..Default::default()
    };
    let r = simulate(&mut model, &program, &opts).expect("ok");
    use moss_results::Storage;
    let storage = |n: &str| r.var(n).map(|v| v.storage);
    assert!(matches!(
        storage("minus_x"),
        Some(Storage::Alias { negated: true, .. })
    ));
    assert_eq!(storage("k"), Some(Storage::Constant(5.0)));
    assert_eq!(storage("k_alias"), Some(Storage::Constant(15.0)));
    let (x, xp1) = (
        r.series("x").expect("x"),
        r.series("x_plus_1").expect("x_plus_1"),
    );
    assert!(x.iter().zip(&xp1).all(|(a, b)| (a + 1.0 - b).abs() < 1e-15));

    let opts = SimOptions {
        vars: Some("x|k.*".into()),
        ..Default::default()
    };
    let r = simulate(&mut model, &program, &opts).expect("ok");
    let names: Vec<&str> = r.names().collect();
    assert_eq!(names, vec!["k", "k_alias", "x"]);

    let opts = SimOptions {
        vars: Some("x(".into()),
        ..Default::default()
    };
    let err = simulate(&mut model, &program, &opts).expect_err("bad regex");
    assert!(err.to_string().contains("invalid variable filter"), "{err}");
}

#[test]
fn unknown_parameter_is_an_options_error() {
    let mut model = TestModel::new(&["x"], &[1.0], |_t, x, dx| dx[0] = -x[0]);
    let program = model.program();
    let opts = SimOptions {
        parameters: vec![("nope".into(), 1.0)],
        ..Default::default()
    };
    let err = simulate(&mut model, &program, &opts).expect_err("unknown");
    assert!(matches!(err.kind, SimErrorKind::Options(_)), "{}", err.kind);
}

#[test]
fn model_without_states_still_produces_rows() {
    let mut model = TestModel::new(&[], &[], |_t, _x, _dx| {}).output("s", |t, _x| t.sin());
    let program = model.program();
    let opts = SimOptions {
        intervals: Some(10),
        ..Default::default()
    };
    let r = simulate(&mut model, &program, &opts).expect("ok");
    assert_eq!(r.len(), 11);
    let (t, s) = (r.time().to_vec(), r.series("s").expect("s"));
    assert!(t.iter().zip(&s).all(|(t, s)| (t.sin() - s).abs() < 1e-15));
}

#[test]
fn zeno_bouncing_ball_is_reported_as_chattering_at_the_accumulation_time() {
    // Impacts accumulate at t1 (1 + 2e / (1 - e)). Only DOPRI5: BDF restarts at order 1
    // (implicit Euler), which damps the last micro-bounces below what the zero-crossing
    // checks can resolve, so there the ball may sink through the floor instead.
    let zeno = (2.0 / G).sqrt() * (1.0 + 2.0 * E / (1.0 - E));
    let solver = Solver::Dopri5;
    let mut model = bouncing_ball();
    let program = model.program();
    let opts = SimOptions {
        stop_time: Some(6.0),
        solver,
        ..Default::default()
    };
    let err = simulate(&mut model, &program, &opts).expect_err("Zeno");
    let SimErrorKind::Chattering(c) = &err.kind else {
        panic!("expected chattering, got {}", err.kind);
    };
    assert!(
        (c.time - zeno).abs() < 1e-3,
        "stopped at {}, Zeno time {zeno}",
        c.time
    );
    assert!(err.to_string().contains("h < 0"));
}

#[test]
fn trial_steps_outside_the_domain_are_retried_then_reported() {
    // der(x) = -sqrt(x) reaches x = 0 at t = 2 (x0 = 1); beyond, every step leaves the domain.
    for solver in [Solver::Dopri5, Solver::Bdf] {
        let mut model =
            TestModel::new(&["x"], &[1.0], |_t, _x, _dx| {}).full_rhs(|_t, x, _rel, dx| {
                if x[0] < 0.0 {
                    return Err(format!("sqrt of a negative number ({})", x[0]));
                }
                dx[0] = -x[0].sqrt();
                Ok(())
            });
        let program = model.program();
        let opts = SimOptions {
            stop_time: Some(3.0),
            solver,
            ..Default::default()
        };
        let err = simulate(&mut model, &program, &opts).expect_err("leaves the domain");
        let SimErrorKind::Runtime(e) = &err.kind else {
            panic!("{solver:?}: expected a runtime error, got {}", err.kind);
        };
        assert!(
            e.message.contains("sqrt of a negative number"),
            "{solver:?}: {e}"
        );
        assert!(
            (e.time - 2.0).abs() < 0.05,
            "{solver:?}: failed at {}",
            e.time
        );
        // Rows up to the failure were kept and are accurate.
        let partial = err.partial.expect("partial result");
        let (t, x) = (partial.time().to_vec(), partial.series("x").expect("x"));
        let i = t.iter().position(|&ti| ti >= 1.0).expect("row at 1 s");
        let exact = (1.0 - t[i] / 2.0).powi(2);
        assert!(
            (x[i] - exact).abs() < 1e-4,
            "{solver:?}: x({}) = {}",
            t[i],
            x[i]
        );
    }
}

/// A recorder that only counts: how many rows it holds at most before the simulator
/// declares them final (what a streaming writer keeps in memory).
#[derive(Default)]
struct HeldRows {
    rows: usize,
    committed: usize,
    max_held: usize,
}

impl moss_sim::record::Recorder for HeldRows {
    type Output = (usize, usize);
    fn record(&mut self, _t: f64, _values: &[f64]) {
        self.rows += 1;
        self.max_held = self.max_held.max(self.rows - self.committed);
    }
    fn finish(self) -> (usize, usize) {
        (self.rows, self.max_held)
    }
    fn rows(&self) -> usize {
        self.rows
    }
    fn truncate(&mut self, rows: usize) -> bool {
        assert!(rows >= self.committed, "went back before a committed row");
        self.rows = rows;
        true
    }
    fn commit(&mut self, rows: usize) {
        assert!(rows <= self.rows && rows >= self.committed);
        self.committed = rows;
    }
}

#[test]
fn rows_become_final_during_a_long_run_without_events() {
    // A non-stiff oscillator on `auto` stays on DOPRI5, which may still go back to its last
    // checkpoint: rows must become final as the checkpoint moves, not only at events.
    for solver in [Solver::Auto, Solver::Dopri5, Solver::Bdf] {
        let mut model = TestModel::new(&["x", "v"], &[1.0, 0.0], |_t, x, dx| {
            dx[0] = x[1];
            dx[1] = -x[0];
        });
        let program = model.program();
        let opts = SimOptions {
            solver,
            stop_time: Some(100.0),
            intervals: Some(20_000),
            ..Default::default()
        };
        let done = moss_sim::driver::run(&mut model, &program, &opts, HeldRows::default())
            .unwrap_or_else(|e| panic!("{solver:?}: {e}"));
        let (rows, max_held) = done.result;
        assert_eq!(rows, 20_001, "{solver:?}");
        assert!(
            max_held <= 2 * 256 + 64,
            "{solver:?}: {max_held} rows held before they became final"
        );
    }
}

#[test]
fn a_streamed_result_file_equals_the_file_of_the_result_in_memory() {
    // Events (two rows at one time), restarts and moving checkpoints, for both formats.
    let dir = std::env::temp_dir().join(format!("moss-sim-stream-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch folder");
    for solver in [Solver::Auto, Solver::Bdf] {
        for ext in ["csv", "mat"] {
            let opts = SimOptions {
                solver,
                stop_time: Some(3.0),
                intervals: Some(3_000),
                ..Default::default()
            };
            let mut model = bouncing_ball();
            let program = model.program();
            let result = simulate(&mut model, &program, &opts).expect("simulates");
            let whole = dir.join(format!("whole.{ext}"));
            moss_results::write_result(&result, &whole).expect("writes");

            let mut model = bouncing_ball();
            let streamed = dir.join(format!("streamed.{ext}"));
            let done = moss_sim::simulate_to_file(&mut model, &program, &opts, &streamed)
                .expect("simulates");
            assert_eq!(done.file.error, None);
            assert_eq!(done.file.rows, result.len());
            assert!(result.len() > 3_001, "the ball bounces: event rows");
            assert_eq!(
                std::fs::read(&whole).expect("read"),
                std::fs::read(&streamed).expect("read"),
                "{solver:?} {ext}: the streamed file differs"
            );
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `advance` (one segment of the event loop, an FMU's co-simulation step): stepping the ball
/// in 0.1 s segments, with impacts inside segments, gives the closed-form heights at every
/// segment end and counts every impact, as one whole run does; a segment leaves the model's
/// states at its end.
#[test]
fn segments_handle_the_events_inside_them() {
    let mut model = bouncing_ball();
    let program = model.program();
    let opts = SimOptions {
        tolerance: Some(1e-8),
        max_step: Some(0.06),
        ..Default::default()
    };
    moss_codegen::ExecutableModel::initialize(&mut model, 0.0).expect("initializes");
    let t1 = (2.0 / G).sqrt();
    let height = |t: f64| {
        // closed form: free fall, then flights of 2 e^k t1 starting at the impacts
        let impacts = impact_times(3.0);
        match impacts.iter().rposition(|&ti| ti <= t) {
            None => 1.0 - 0.5 * G * t * t,
            Some(k) => {
                let v = E.powi(k as i32 + 1) * G * t1;
                let s = t - impacts[k];
                v * s - 0.5 * G * s * s
            }
        }
    };
    let (mut t, mut state_events) = (0.0, 0);
    let mut x = [0.0; 2];
    for k in 1..=30 {
        let t_next = k as f64 * 0.1;
        let seg = moss_sim::advance(&mut model, &program, &opts, t, t_next).expect("steps");
        assert_eq!(seg.t_end, t_next);
        assert!(seg.terminated.is_none());
        state_events += seg.state_events;
        t = t_next;
        moss_codegen::ExecutableModel::states(&model, &mut x);
        assert!(
            (x[0] - height(t)).abs() < 1e-6,
            "h({t}) = {}, closed form {}",
            x[0],
            height(t)
        );
    }
    // each impact is a state event; between impacts the relation h < 0 flips back once
    assert!(state_events >= impact_times(3.0).len() as u64);
}
