//! `when` statements in algorithm sections, end to end: their relations are event sources
//! of the simulation, a vector condition fires on the rising edge of any element, and a
//! function's array output is scattered into the elements of an array variable. Outside
//! `when`, relations and step functions of an algorithm generate events too, and its
//! discrete results change only at them.

use crate::library_support;

use library_support::{assert_close, simulate_source};

#[test]
fn algorithm_when_fires_at_its_own_time_events() {
    // nothing else in the model causes an event: the relation itself must stop the solver
    let run = simulate_source(
        "AlgorithmWhen",
        "model AlgorithmWhen
  discrete Integer n(start = 0, fixed = true);
  discrete Real t1(start = -1, fixed = true);
algorithm
  when time >= 0.3 then
    n := pre(n) + 1;
    t1 := time;
  end when;
end AlgorithmWhen;",
        &[],
    );
    assert_eq!(run.before("n", 0.3), 0.0);
    assert_eq!(run.last("n"), 1.0);
    assert_close("firing time", run.last("t1"), 0.3, 1e-9);
}

#[test]
fn vector_condition_fires_on_each_element_edge() {
    // `{c1, c2}` fires when c2 becomes true although c1 is still true (unlike `c1 or c2`),
    // and at initialization through its `initial()` element
    let run = simulate_source(
        "VectorWhen",
        "model VectorWhen
  discrete Integer n(start = 0, fixed = true);
algorithm
  when {time >= 0.3, time >= 0.6, initial()} then
    n := pre(n) + 1;
  end when;
end VectorWhen;",
        &[],
    );
    assert_eq!(run.first("n"), 1.0);
    assert_eq!(run.at("n", 0.45), 2.0);
    assert_eq!(run.last("n"), 3.0);
}

#[test]
fn array_output_of_a_call_fills_the_elements() {
    let run = simulate_source(
        "ArrayTarget",
        "model ArrayTarget
  function split
    input Real u;
    output Real lo;
    output Real parts[2];
    output Real grid[2, 2];
  algorithm
    lo := u - 1;
    parts := {u, 2*u};
    grid := [u, 1; 2, 3*u];
  end split;
  Real a;
  Real b[2];
  Real g[2, 2];
algorithm
  (a, b, g) := split(time);
end ArrayTarget;",
        &[],
    );
    assert_close("a(1)", run.last("a"), 0.0, 1e-12);
    assert_close("b[1](1)", run.last("b[1]"), 1.0, 1e-12);
    assert_close("b[2](0.5)", run.at("b[2]", 0.5), 1.0, 1e-9);
    // a matrix output fills the elements in row-major order
    assert_close("g[1,2]", run.last("g[1,2]"), 1.0, 1e-12);
    assert_close("g[2,1]", run.last("g[2,1]"), 2.0, 1e-12);
    assert_close("g[2,2](0.5)", run.at("g[2,2]", 0.5), 1.5, 1e-9);
}

/// A discrete controller written as an algorithm, `when sample(0, Ts)` directly in the
/// statement (not through a Boolean variable): it fires at every sample instant, and the
/// state follows the sampled closed loop x((k+1)Ts) = (3 e^-Ts - 2) x(kTs) exactly.
#[test]
fn sample_in_an_algorithm_when_statement_fires_every_period() {
    let run = simulate_source(
        "AlgSample",
        r#"
model AlgSample
  parameter Real Ts = 0.1;
  Real x(start = 1, fixed = true);
  discrete Real u(start = 0, fixed = true);
  Integer n(start = 0, fixed = true);
equation
  der(x) = -x + u;
algorithm
  when sample(0, Ts) then
    u := -2 * x;
    n := pre(n) + 1;
  end when;
  annotation(experiment(StopTime = 1, Interval = 0.05, Tolerance = 1e-10));
end AlgSample;
"#,
        &[],
    );
    assert_eq!(run.last("n"), 11.0, "samples at 0, 0.1, ..., 1");
    let factor = 3.0 * f64::exp(-0.1) - 2.0;
    for k in 1..=9 {
        let t = 0.1 * k as f64;
        assert_close(&format!("x({t})"), run.before("x", t), factor.powi(k), 1e-7);
    }
}

/// Outside `when`, an algorithm's Integer results of step functions of a state change at
/// events of their own, exactly where the argument passes an integer, and keep their values
/// in between: `integer(4 x)` with `x = t` steps at every quarter, `div(integer(10 x), 3)`
/// at 0.3, 0.6, 0.9; the Boolean of an if-condition switches at its time event.
#[test]
fn step_functions_and_relations_outside_when_switch_at_events() {
    let run = simulate_source(
        "AlgSteps",
        "model AlgSteps
  Real x(start = 0, fixed = true);
  Integer quarters;
  Integer thirds;
  Boolean late;
equation
  der(x) = 1;
algorithm
  quarters := integer(4*x);
  thirds := div(integer(10*x), 3);
  late := false;
  if time >= 0.55 then
    late := true;
  end if;
  annotation(experiment(StopTime = 0.95, Interval = 0.1, Tolerance = 1e-10));
end AlgSteps;",
        &[],
    );
    let steps = |name: &str| -> Vec<(f64, f64)> {
        run.jumps(name)
            .into_iter()
            .map(|(t, _, after)| (t, after))
            .collect()
    };
    let expect = |name: &str, want: &[(f64, f64)]| {
        let got = steps(name);
        assert_eq!(got.len(), want.len(), "{name}: {got:?}");
        for (&(t, v), &(tw, vw)) in got.iter().zip(want) {
            assert_eq!(v, vw, "{name}: {got:?}");
            assert_close(&format!("{name} -> {v}"), t, tw, 1e-9);
        }
    };
    expect("quarters", &[(0.25, 1.0), (0.5, 2.0), (0.75, 3.0)]);
    expect("thirds", &[(0.3, 1.0), (0.6, 2.0), (0.9, 3.0)]);
    expect("late", &[(0.55, 1.0)]);
    // between events the values hold, also at output points just before an event
    assert_eq!(run.before("quarters", 0.5), 1.0);
    assert_eq!(run.at("thirds", 0.45), 1.0);
}

/// Two `when` equations that depend on each other as units but not equation by equation:
/// the first assigns `a` and reads `b` for `c`, the second assigns `b` from `a`. Sorted as
/// whole clauses they form a loop; split per variable (spec 8.3.5: each equation of a
/// `when` clause is conditional on its own) they order as a, b, c. At the event, t = 0.5:
/// a = 2 t = 1, b = a + 10 = 11, c = b + 1 = 12.
#[test]
fn when_clauses_that_loop_only_as_units_are_sorted_per_equation() {
    let run = simulate_source(
        "WhenUnits",
        "model WhenUnits
  Real x(start = 0, fixed = true);
  discrete Real a(start = 0, fixed = true);
  discrete Real b(start = 0, fixed = true);
  discrete Real c(start = 0, fixed = true);
equation
  der(x) = 1;
  when x > 0.5 then
    a = 2*time;
    c = b + 1;
  end when;
  when x > 0.5 then
    b = a + 10;
  end when;
end WhenUnits;",
        &["--stop-time", "1"],
    );
    assert_close("a before", run.at("a", 0.25), 0.0, 0.0);
    assert_close("c before", run.at("c", 0.25), 0.0, 0.0);
    assert_close("a", run.last("a"), 1.0, 1e-8);
    assert_close("b", run.last("b"), 11.0, 1e-8);
    assert_close("c", run.last("c"), 12.0, 1e-8);
}

const TABLE_ALGORITHM: &str = "model TableAlgorithm
  parameter Real table[3, 2] = [0, 0; 1, 2; 2, 2];
  discrete Real a(start = 0, fixed = true);
  discrete Real b(start = 0, fixed = true);
  discrete Real nextEvent(start = 0, fixed = true);
  Real y;
  Real x(start = 0, fixed = true);
algorithm
  if size(table, 1) > 1 then
    assert(table[1, 1] == 0, \"the table starts at t = 0\");
  end if;
  when {time >= pre(nextEvent), initial()} then
    if time < table[2, 1] then
      a := (table[2, 2] - table[1, 2])/(table[2, 1] - table[1, 1]);
      b := table[1, 2];
      nextEvent := table[2, 1];
    else
      a := 0;
      b := table[3, 2];
      nextEvent := 1e10;
    end if;
  end when;
equation
  y = a*time + b;
  der(x) = y;
  annotation(experiment(StopTime = 2));
end TableAlgorithm;";

/// Translate a model text (its last class) to an interpreter, with the bundled library.
fn interpreter_of(name: &str, source: &str) -> moss_codegen::Interpreter {
    let dir = library_support::scratch_dir(name);
    let file = dir.join(format!("{name}.mo"));
    std::fs::write(&file, source).expect("writes the model");
    let opts = moss_frontend::api::LoadOptions {
        libs: vec![],
        use_modelicapath: false,
        use_bundled: true,
    };
    let flat = moss_frontend::api::flatten_model(&opts, &file.to_string_lossy())
        .unwrap_or_else(|_| panic!("{name} flattens"))
        .model;
    let program = moss_symbolic::translate(&flat).unwrap_or_else(|_| panic!("{name} translates"));
    moss_codegen::Interpreter::new(program).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// An algorithm of `when` statements (and a check of parameters) assigns nothing between
/// events, as the MSL's `TimeTable` computes its interpolation coefficients at its time
/// events only: it runs in event mode only, and the table is still followed (y = 2 t up to
/// the table's second point, 2 after it; x its integral).
#[test]
fn algorithms_of_when_statements_run_at_events_only() {
    let model = interpreter_of("TableAlgorithm", TABLE_ALGORITHM);
    let (only, _) = model.event_only_steps();
    // The same algorithm reading time outside its `when`: it runs between events too.
    let timed = TABLE_ALGORITHM.replace(
        "  if size(table, 1) > 1 then",
        "  if time > 100 then\n    assert(false, \"late\");\n  end if;\n  if size(table, 1) > 1 then",
    );
    let (only_timed, _) = interpreter_of("TableAlgorithmTimed", &timed).event_only_steps();
    assert!(
        only > only_timed,
        "event-only steps: {only} (when statements only) vs {only_timed} (reads time)"
    );
    for source in [TABLE_ALGORITHM.to_string(), timed] {
        let run = simulate_source("TableAlgorithm", &source, &[]);
        assert_close("y(0.5)", run.at("y", 0.5), 1.0, 1e-9);
        assert_close("y(1.5)", run.at("y", 1.5), 2.0, 1e-9);
        // x = t² up to 1, then 1 + 2 (t - 1)
        assert_close("x(2)", run.last("x"), 3.0, 1e-5);
    }
}
