//! The synchronous language (spec chapter 16) end to end on small models written here:
//! clocked partitions against closed forms, sub-, super- and shift-sampling tick counts,
//! discretized partitions against the exact recurrences of their solver methods, event
//! clocks, exact rational clocks combined through an inferred factor, and clock errors
//! reported with their places.

mod library_support;

use library_support::{assert_close, simulate_source, translate_failure};

/// `x = previous(x) + sample(time)` with `x.start = 1` on a 0.1 s clock: at tick i (t = 0.1 i)
/// `x = 1 + 0.1 (0 + 1 + ... + i) = 1 + 0.05 i (i + 1)`; `hold` keeps it until the next tick.
#[test]
fn clocked_accumulator_matches_its_closed_form() {
    let run = simulate_source(
        "Accumulator",
        r#"
model Accumulator
  Clock c = Clock(0.1);
  Real u = time;
  Real x(start = 1);
  Real y;
  Integer n(start = 0);
  Boolean first;
equation
  x = previous(x) + sample(u, c);
  n = previous(n) + 1 + integer(0*x);
  first = firstTick() and x > -1e9;
  y = hold(x);
end Accumulator;
"#,
        &["--stop-time", "1.05"],
    );
    for i in 0..=10 {
        let t = 0.1 * i as f64 + 0.03;
        let expected = 1.0 + 0.05 * (i * (i + 1)) as f64;
        assert_close(&format!("y after tick {i}"), run.at("y", t), expected, 1e-9);
        assert_close(
            &format!("n after tick {i}"),
            run.at("n", t),
            (i + 1) as f64,
            0.0,
        );
    }
    assert_close(
        "firstTick() on the first tick",
        run.at("first", 0.05),
        1.0,
        0.0,
    );
    assert_close("firstTick() later", run.at("first", 0.15), 0.0, 0.0);
    // `sample` takes the left limit: the value of `u` at the tick itself for a continuous `u`
    assert_close(
        "held value just before tick 5",
        run.before("y", 0.5),
        2.0,
        1e-9,
    );
}

/// One 0.1 s base clock, and partitions ticking every 3rd tick, twice per tick, and half a
/// tick later: their tick counters by t = 0.99 are 4, 20 and 10 (ticks at 0.05, ..., 0.95).
#[test]
fn sub_super_and_shift_sampling_tick_at_the_right_instants() {
    let run = simulate_source(
        "Resampling",
        r#"
model Resampling
  Integer base(start = 0);
  Integer slow(start = 0);
  Integer fast(start = 0);
  Integer shifted(start = 0);
  Real t_slow, t_shifted;
  Real u = sin(time);
  Real us;
equation
  us = sample(u, Clock(1, 10));
  base = previous(base) + 1 + integer(0*us);
  slow = previous(slow) + integer(0*subSample(us, 3)) + 1;
  fast = previous(fast) + integer(0*superSample(us, 2)) + 1;
  shifted = previous(shifted) + integer(0*shiftSample(us, 1, 2)) + 1;
  t_slow = sample(time) + 0*subSample(us, 3);
  t_shifted = sample(time) + 0*shiftSample(us, 1, 2);
end Resampling;
"#,
        &["--stop-time", "0.99"],
    );
    assert_close("base ticks", run.last("base"), 10.0, 0.0);
    assert_close("subSample(3) ticks", run.last("slow"), 4.0, 0.0);
    assert_close("superSample(2) ticks", run.last("fast"), 20.0, 0.0);
    assert_close("shiftSample(1/2) ticks", run.last("shifted"), 10.0, 0.0);
    assert_close("last slow tick time", run.last("t_slow"), 0.9, 1e-12);
    assert_close("last shifted tick time", run.last("t_shifted"), 0.95, 1e-12);
    let first_shift = run.upward_crossings("shifted", 0.5);
    assert_close("first shifted tick", first_shift[0], 0.05, 1e-9);
}

fn decay_with(method: &str) -> f64 {
    let run = simulate_source(
        &format!("Decay{method}"),
        &format!(
            r#"
model Decay{method}
  Real x(start = 1);
  Real y;
equation
  der(x) = -x + 0*sample(0, Clock(Clock(0.1), solverMethod = "{method}"));
  y = hold(x);
end Decay{method};
"#
        ),
        &["--stop-time", "0.95"],
    );
    run.last("y")
}

/// `der(x) = -x` discretized on a 0.1 s clock: x at the first tick is the start value, then
/// one step per tick, so after the tick at t = 0.9 x is the 9th power of the step factor.
#[test]
fn discretized_partitions_follow_their_solver_methods() {
    let h = 0.1f64;
    assert_close(
        "ExplicitEuler",
        decay_with("ExplicitEuler"),
        (1.0 - h).powi(9),
        1e-12,
    );
    assert_close(
        "ImplicitEuler",
        decay_with("ImplicitEuler"),
        (1.0 / (1.0 + h)).powi(9),
        1e-9,
    );
    assert_close(
        "ImplicitTrapezoid",
        decay_with("ImplicitTrapezoid"),
        ((1.0 - h / 2.0) / (1.0 + h / 2.0)).powi(9),
        1e-9,
    );
    assert_close(
        "ExplicitMidPoint2",
        decay_with("ExplicitMidPoint2"),
        (1.0 - h + h * h / 2.0).powi(9),
        1e-12,
    );
    let rk4 = 1.0 - h + h * h / 2.0 - h.powi(3) / 6.0 + h.powi(4) / 24.0;
    assert_close(
        "ExplicitRungeKutta4",
        decay_with("ExplicitRungeKutta4"),
        rk4.powi(9),
        1e-12,
    );
}

/// The stages of the explicit multi-stage methods see the continuous-time input averaged
/// over the step and the time in the middle of it: `der(x) = u` with `u = time` sampled,
/// ExplicitMidPoint2 integrates it exactly (x_i = t_i^2 / 2 from x_0 = 0).
#[test]
fn midpoint_stage_uses_the_averaged_input() {
    let run = simulate_source(
        "MidPointInput",
        r#"
model MidPointInput
  Real x(start = 0);
  Real y;
equation
  der(x) = sample(time, Clock(Clock(0.1), solverMethod = "ExplicitMidPoint2"));
  y = hold(x);
end MidPointInput;
"#,
        &["--stop-time", "0.95"],
    );
    assert_close(
        "x after the tick at 0.9",
        run.last("y"),
        0.9 * 0.9 / 2.0,
        1e-12,
    );
}

/// An event clock ticks when its condition becomes true; `interval()` is the time since the
/// previous tick (`startInterval` at the first).
#[test]
fn event_clock_ticks_on_rising_conditions() {
    let run = simulate_source(
        "EventClock",
        r#"
model EventClock
  Integer n(start = 0);
  Real dt;
  Real tick_time;
equation
  when Clock(sin(2*Modelica.Constants.pi*time) > 0.5, 0.25) then
    n = previous(n) + 1;
    dt = interval();
    tick_time = sample(time);
  end when;
end EventClock;
"#,
        &["--stop-time", "3"],
    );
    assert_close("ticks in 3 s", run.last("n"), 3.0, 0.0);
    assert_close("first interval", run.at("dt", 0.5), 0.25, 1e-12);
    assert_close("later interval", run.last("dt"), 1.0, 1e-6);
    assert_close(
        "last tick time",
        run.last("tick_time"),
        2.0 + 1.0 / 12.0,
        1e-6,
    );
}

/// Two exact clocks (10 ms and 2 ms) in one base partition through a super-sampling with an
/// inferred factor: the fast partition ticks 5 times per slow tick, exactly together.
#[test]
fn exact_clocks_combine_through_an_inferred_factor() {
    let run = simulate_source(
        "ExactClocks",
        r#"
model ExactClocks
  Real u = time;
  Real slow;
  Real fast;
  Integer nfast(start = 0);
equation
  slow = sample(u, Clock(10, 1000));
  fast = superSample(slow) + 0*sample(u, Clock(2, 1000));
  nfast = previous(nfast) + 1 + integer(0*fast);
end ExactClocks;
"#,
        &["--stop-time", "0.1"],
    );
    // ticks at 0, 2, ..., 100 ms: 51 fast ticks, the last at the stop time
    assert_close("fast ticks", run.last("nfast"), 51.0, 0.0);
    assert_close("held slow value", run.at("fast", 0.015), 0.01, 1e-12);
}

/// Two different base clocks meeting in one partition are rejected, naming both places.
#[test]
fn conflicting_clocks_are_located_errors() {
    let stderr = translate_failure(
        "Conflict",
        "model Conflict\n  Real u = time;\n  Real y;\nequation\n  y = sample(u, Clock(0.1))\n    + sample(u, Clock(0.2));\nend Conflict;\n",
    );
    assert!(
        stderr.contains("conflicting clocks"),
        "names the problem: {stderr}"
    );
    assert!(stderr.contains("Conflict.mo:5:"), "locates it: {stderr}");
    assert!(
        stderr.contains("the other clock comes from here"),
        "names the other side: {stderr}"
    );
}

/// `previous` of a variable outside any clocked partition and an unsupported solver method
/// are refused with a clear message.
#[test]
fn unsupported_solver_method_is_named() {
    let stderr = translate_failure(
        "Rk",
        "model Rk\n  Real x(start = 1);\nequation\n  der(x) = -x + 0*sample(0, Clock(Clock(0.1), solverMethod = \"External\"));\nend Rk;\n",
    );
    assert!(
        stderr.contains("\"External\"") && stderr.contains("ExplicitRungeKutta4"),
        "names the method and the supported ones: {stderr}"
    );
}

/// `Clock(dt)` with an interval computed in its own partition: the first tick at the start,
/// each next one `dt` (as computed at the tick) later; `interval()` is the time since the
/// previous tick.
#[test]
fn clock_with_a_varying_interval() {
    let run = simulate_source(
        "VaryingClock",
        r#"
model VaryingClock
  Integer n(start = 0);
  Real dt(start = 0.1);
  Real t_tick;
  Real h;
equation
  when Clock(dt) then
    n = previous(n) + 1;
    dt = if n < 3 then 0.1 else 0.2;
    t_tick = sample(time);
    h = interval();
  end when;
end VaryingClock;
"#,
        &["--stop-time", "0.95"],
    );
    let ticks = [0.0, 0.1, 0.2, 0.4, 0.6, 0.8];
    for (k, t) in ticks.iter().enumerate() {
        assert_close(
            &format!("tick {k} count"),
            run.at("n", t + 0.05),
            (k + 1) as f64,
            0.0,
        );
        assert_close(
            &format!("tick {k} time"),
            run.at("t_tick", t + 0.05),
            *t,
            1e-9,
        );
    }
    assert_close("interval after the switch", run.last("h"), 0.2, 1e-9);
}
