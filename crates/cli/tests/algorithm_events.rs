//! `when` statements in algorithm sections, end to end: their relations are event sources
//! of the simulation, a vector condition fires on the rising edge of any element, and a
//! function's array output is scattered into the elements of an array variable.

mod library_support;

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
