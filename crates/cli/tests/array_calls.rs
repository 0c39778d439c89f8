//! Array-valued function calls used inside larger expressions (`2 * f(x) + v`, `A * f(x)`):
//! the frontend binds each distinct call to an auxiliary array once, and the trajectories
//! equal the closed forms of the expressions.

mod library_support;

use library_support::{assert_close, simulate_source};

const ROTATING_VECTOR: &str = r#"
model RotatingVector
  function rot
    input Real a;
    output Real y[2];
  algorithm
    y := {cos(a), sin(a)};
  end rot;
  parameter Real A[2,2] = [2, 1; 1, 3];
  Real phi(start = 0, fixed = true);
  Real p[2];
  Real q[2];
equation
  der(phi) = 1;
  p = 2 * rot(phi) + {1, 0};
  q = A * rot(phi);
end RotatingVector;
"#;

#[test]
fn array_calls_inside_expressions_follow_the_closed_form() {
    let run = simulate_source("RotatingVector", ROTATING_VECTOR, &["--stop-time", "2"]);
    for (i, &t) in run.time().iter().enumerate().step_by(25) {
        let (c, s) = (t.cos(), t.sin());
        let at = |name: &str| run.get(name)[i];
        assert_close("p[1]", at("p[1]"), 2.0 * c + 1.0, 1e-5);
        assert_close("p[2]", at("p[2]"), 2.0 * s, 1e-5);
        assert_close("q[1]", at("q[1]"), 2.0 * c + s, 1e-5);
        assert_close("q[2]", at("q[2]"), c + 3.0 * s, 1e-5);
    }
}

const SUM_BY_LOOP: &str = r#"
model SumByLoop
  Real y[3](each start = 1, each fixed = true);
  Real s;
algorithm
  s := 0;
  for v in y loop
    s := s + v;
  end for;
equation
  der(y) = {1, 2, 3};
end SumByLoop;
"#;

/// A for-statement over an array of time-varying values (spec 11.2.2) iterates its elements.
#[test]
fn for_loop_over_a_varying_array_sums_its_elements() {
    let run = simulate_source("SumByLoop", SUM_BY_LOOP, &["--stop-time", "1"]);
    for (i, &t) in run.time().iter().enumerate().step_by(50) {
        assert_close("s", run.get("s")[i], 3.0 + 6.0 * t, 1e-6);
    }
}
