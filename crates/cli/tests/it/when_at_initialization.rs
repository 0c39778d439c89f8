//! Which `when` equations and statements take part in initialization (spec 8.6): those whose
//! condition is `initial()`, has it as an element of the condition vector or as an operand of
//! `or`. A condition that only passes `initial()` to a function is not active there, even
//! when the function is inlined. A discrete variable with `fixed = true` that no active
//! `when` assigns starts from its start value, also when an initial equation names it.

use crate::library_support;

use library_support::simulate_source;

#[test]
fn a_function_of_initial_does_not_activate_a_when_equation_at_initialization() {
    let run = simulate_source(
        "FooInitial",
        "model FooInitial
  function foo
    input Boolean b;
    output Boolean b2;
  algorithm
    b2 := b;
  end foo;
  Real x(start = 0, fixed = true);
  Real y(start = 0, fixed = true);
  Real z(start = 0, fixed = true);
  parameter Real p(fixed = false, start = 7);
  parameter Real q(fixed = false, start = 7);
  parameter Real r(fixed = false, start = 7);
equation
  when {foo(initial()), sample(0.1, 0.1)} then
    x = 2;
  end when;
  when {initial(), sample(0.1, 0.1)} then
    y = 2;
  end when;
  when foo(initial()) then
    z = 2;
  end when;
initial equation
  x = p;
  y = q;
  z = r;
end FooInitial;",
        &["--stop-time", "0.2"],
    );
    // x and z keep their start values at initialization; y is assigned by its active when
    assert_eq!(run.first("p"), 0.0);
    assert_eq!(run.first("q"), 2.0);
    assert_eq!(run.first("r"), 0.0);
    assert_eq!(run.first("x"), 0.0);
    assert_eq!(run.last("x"), 2.0);
    assert_eq!(run.last("z"), 0.0);
}

#[test]
fn a_when_statement_enabled_only_through_a_function_waits_for_its_event() {
    let run = simulate_source(
        "FooInitialAlgorithm",
        "model FooInitialAlgorithm
  function foo
    input Boolean b;
    output Boolean b2;
  algorithm
    b2 := b;
  end foo;
  discrete Integer n(start = 0, fixed = true);
  discrete Integer k(start = 0, fixed = true);
algorithm
  when {foo(initial()), time >= 0.5} then
    n := pre(n) + 1;
  end when;
  when {initial(), time >= 0.5} then
    k := pre(k) + 1;
  end when;
end FooInitialAlgorithm;",
        &[],
    );
    assert_eq!(run.first("n"), 0.0);
    assert_eq!(run.last("n"), 1.0);
    assert_eq!(run.first("k"), 1.0);
    assert_eq!(run.last("k"), 2.0);
}

#[test]
fn a_fixed_discrete_variable_named_by_an_initial_equation_starts_from_its_start_value() {
    // `pre(z) = z.start` and the inactive `when` holds `z = pre(z)`: the initial equation
    // determines `r`, not `z` (which once took `r`'s start value, with a warning)
    let run = simulate_source(
        "FixedDiscrete",
        "model FixedDiscrete
  Real z(start = 1, fixed = true);
  Real w(start = 1);
  parameter Real r(fixed = false, start = 5);
equation
  when sample(0.1, 0.1) then
    z = 2;
    w = 3;
  end when;
initial equation
  z = r;
  w = 4;
end FixedDiscrete;",
        &["--stop-time", "0.2"],
    );
    assert_eq!(run.first("z"), 1.0);
    assert_eq!(run.first("r"), 1.0);
    // without `fixed = true`, `pre(w)` is free and the initial equation gives `w`
    assert_eq!(run.first("w"), 4.0);
    assert_eq!(run.last("w"), 3.0);
    assert_eq!(run.last("z"), 2.0);
}
