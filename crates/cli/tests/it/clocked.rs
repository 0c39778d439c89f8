//! The synchronous language (spec chapter 16) end to end on small models written here:
//! clocked partitions against closed forms, sub-, super- and shift-sampling tick counts,
//! discretized partitions against the exact recurrences of their solver methods, event
//! clocks, exact rational clocks combined through an inferred factor, and clock errors
//! reported with their places.

use crate::library_support;

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
    assert_close(
        "SemiImplicitEuler",
        decay_with("SemiImplicitEuler"),
        (1.0 - h).powi(9),
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

/// ExplicitEuler takes the slope of the previous tick, SemiImplicitEuler the previous
/// states with this tick's inputs: `der(x) = u - x` with `u = time` sampled on a 0.1 s clock
/// from x_1 = 0 gives x_(i+1) = x_i + 0.1 (t_(i-1) - x_i) and x_(i+1) = x_i + 0.1 (t_i - x_i).
#[test]
fn semi_implicit_euler_reads_old_states_and_new_inputs() {
    let after_five_ticks = |method: &str| {
        let run = simulate_source(
            &format!("Lag{method}"),
            &format!(
                r#"
model Lag{method}
  Real x(start = 0);
  Real y = hold(x);
equation
  der(x) = sample(time, Clock(Clock(0.1), solverMethod = "{method}")) - x;
end Lag{method};
"#
            ),
            &["--stop-time", "0.45"],
        );
        run.last("y")
    };
    let recurrence = |input_lag: usize| {
        let mut x = 0.0f64;
        for i in 1..5 {
            // ticks i = 1, 2, ... at t = 0.1 (i - 1); step from tick i to tick i + 1
            let t = 0.1 * (i + 1 - input_lag - 1) as f64;
            x += 0.1 * (t - x);
        }
        x
    };
    assert_close(
        "ExplicitEuler",
        after_five_ticks("ExplicitEuler"),
        recurrence(1),
        1e-12,
    );
    assert_close(
        "SemiImplicitEuler",
        after_five_ticks("SemiImplicitEuler"),
        recurrence(0),
        1e-12,
    );
}

/// Index reduction inside a discretized partition (spec 16.8.2: the partition is brought to
/// state-space form, then discretized): a filter state `x` with `der(x) = -x` and an inverse
/// model `der(y) = -2 y + u` tied to it by `x = y^3 + y`. The constraint is differentiated,
/// `der(x) = (3 y^2 + 1) der(y)`; `y` (`stateSelect = prefer`) is the state and `x` follows
/// from it. With ExplicitEuler on a 0.1 s clock, from y_1 = 0.5 at the first tick:
/// x_i = y_i^3 + y_i, der(y)_i = -x_i / (3 y_i^2 + 1), u_i = der(y)_i + 2 y_i and
/// y_(i+1) = y_i + 0.1 der(y)_i.
#[test]
fn constraints_in_a_discretized_partition_are_index_reduced() {
    let run = simulate_source(
        "InverseInClock",
        r#"
model InverseInClock
  Real x(start = 1);
  Real y(start = 0.5, fixed = true, stateSelect = StateSelect.prefer);
  Real u;
  Real uc = hold(u);
  Real xc = hold(x);
equation
  der(x) = -x + 0*sample(0, Clock(Clock(0.1), solverMethod = "ExplicitEuler"));
  x = y^3 + y;
  der(y) = -2*y + u;
end InverseInClock;
"#,
        &["--stop-time", "0.35"],
    );
    let mut y = 0.5f64;
    for (i, t) in [(1, 0.05), (2, 0.15), (3, 0.25), (4, 0.34)] {
        let x = y.powi(3) + y;
        let dy = -x / (3.0 * y * y + 1.0);
        let u = dy + 2.0 * y;
        assert_close(&format!("x after tick {i}"), run.at("xc", t), x, 1e-12);
        assert_close(&format!("u after tick {i}"), run.at("uc", t), u, 1e-12);
        y += 0.1 * dy;
    }
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

/// Spec 16.3: an event clock ticks when `edge(pre(condition))` becomes true, one event
/// iteration after its condition, and `sample` reads left limits in that iteration: the
/// specification's own example samples `b = true` at the first tick (t = 0.5).
#[test]
fn event_clock_samples_the_condition_that_made_it_tick() {
    let run = simulate_source(
        "SpecEventClock",
        r#"
model SpecEventClock
  Boolean b = time >= 0.5;
  Clock c = Clock(b);
  Boolean b2 = sample(b, c);
  Integer n(start = 0);
equation
  n = previous(n) + 1 + 0*integer(sample(time, c));
end SpecEventClock;
"#,
        &["--stop-time", "1"],
    );
    assert_close("ticks", run.last("n"), 1.0, 0.0);
    assert_close("b2 after the tick", run.at("b2", 0.75), 1.0, 0.0);
}

/// An event clock whose own partition switches its condition off again through `hold`
/// (the pattern of the MSL's conjunctive/disjunctive clocks: a flip-flop set by an input
/// and reset by the clock's tick). The delay of spec 16.3 makes this a sequence of event
/// iterations, not an algebraic loop: one tick per rising edge of the request.
#[test]
fn event_clock_resetting_its_own_condition_ticks_once_per_request() {
    let run = simulate_source(
        "SelfReset",
        r#"
model SelfReset
  Boolean request = sin(2*Modelica.Constants.pi*time) > 0;
  Boolean pending(start = false, fixed = true);
  Boolean served "true for the event instant at which the clock ticked";
  Boolean toggled;
  Boolean toggle(start = false);
  Integer n(start = 0);
  Clock c = Clock(pending);
equation
  toggle = not sample(hold(toggle), c);
  n = previous(n) + (if toggle then 1 else 1);
  toggled = hold(toggle);
  served = toggled <> pre(toggled);
  pending = (edge(request) or pre(pending)) and not served;
end SelfReset;
"#,
        &["--stop-time", "3.2"],
    );
    // requests rise just after 0, at 1, 2 and 3 s: four ticks; `toggle` alternates from its
    // start value (false) because `sample(hold(toggle))` at the first tick is that start
    assert_close("ticks", run.last("n"), 4.0, 0.0);
    for (t, want) in [(0.5, 1.0), (1.5, 0.0), (2.5, 1.0), (3.1, 0.0)] {
        assert_close(&format!("toggled at {t}"), run.at("toggled", t), want, 0.0);
    }
    assert_close("nothing pending at the end", run.last("pending"), 0.0, 0.0);
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

/// One step of xorshift64* as the MSL's C code defines it (state as two 32-bit words, low
/// word first; result mapped to (0, 1]), to check moss's native generator.
fn xorshift64star(words: [i64; 2]) -> ([i64; 2], f64) {
    let mut x = (words[0] as i32 as u32 as u64) | ((words[1] as i32 as u32 as u64) << 32);
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    let x = x.wrapping_mul(2_685_821_657_736_338_717);
    let out = [(x as u32) as i32 as i64, ((x >> 32) as u32) as i32 as i64];
    (out, (x as i64) as f64 * 5.421_010_862_427_522e-20 + 0.5)
}

const GENERATOR: &str = r#"
  function step
    input Integer stateIn[2];
    output Real y;
    output Integer stateOut[2];
  external "C" ModelicaRandom_xorshift64star(stateIn, stateOut, y);
  end step;
  function seeded "the state one step after {seed, 0}"
    input Integer seed;
    output Integer s[2];
  protected
    Real r;
  algorithm
    (r, s) := step({seed, 0});
  end seeded;
"#;

/// A start value computed by an array-valued function with an external body (which moss
/// cannot evaluate while translating) becomes an initial equation for the `pre` values;
/// in a clocked partition it is what `previous` gives at the first tick. The random numbers
/// drawn are those of the MSL's C generator.
#[test]
fn random_state_started_by_an_external_array_function() {
    let run = simulate_source(
        "ClockedNoise",
        &format!(
            r#"
model ClockedNoise
{GENERATOR}
  Real r;
  Real u;
  Integer st[2](start = seeded(1));
equation
  u = sample(0, Clock(0.1));
  (r, st) = step(previous(st));
  assert(u == 0 or r >= 0, "keeps u in the partition of r");
end ClockedNoise;
"#
        ),
        &["--stop-time", "0.25"],
    );
    let (s1, _) = xorshift64star([1, 0]);
    let (s2, r1) = xorshift64star(s1);
    let (_, r2) = xorshift64star(s2);
    assert_close("first draw", run.at("r", 0.05), r1, 1e-15);
    assert_close("second draw", run.at("r", 0.15), r2, 1e-15);
}
