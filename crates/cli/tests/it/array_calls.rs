//! Array-valued function calls used inside larger expressions (`2 * f(x) + v`, `A * f(x)`):
//! the frontend binds each distinct call to an auxiliary array once, and the trajectories
//! equal the closed forms of the expressions.

use crate::library_support;

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

/// Complex arithmetic written as functions with two outputs (as operator records flatten):
/// the voltage of an impedance is given twice, as the difference of its pin voltages and as
/// `Z * i`. Both tuple equations name the same outputs `(vr, vi)`, so neither call may
/// compute them: the functions are inlined and the current follows from `i = v / Z`.
const PHASOR_IMPEDANCE: &str = r#"
model PhasorImpedance
  function subtract
    input Real a_re;
    input Real a_im;
    input Real b_re;
    input Real b_im;
    output Real c_re;
    output Real c_im;
  algorithm
    c_re := a_re - b_re;
    c_im := a_im - b_im;
  end subtract;
  function multiply
    input Real a_re;
    input Real a_im;
    input Real b_re;
    input Real b_im;
    output Real c_re = a_re*b_re;
    output Real c_im;
  algorithm
    c_re := c_re - a_im*b_im;
    c_im := a_re*b_im + a_im*b_re;
  end multiply;
  parameter Real R = 2;
  parameter Real X = 1;
  Real p_re, p_im "voltage phasor of the upper pin";
  Real vr, vi "voltage across the impedance";
  Real ir, ii "current through the impedance";
equation
  p_re = cos(time);
  p_im = sin(time);
  (vr, vi) = subtract(p_re, p_im, 0, 0);
  (vr, vi) = multiply(R, X, ir, ii);
end PhasorImpedance;
"#;

#[test]
fn tuple_equations_of_inlinable_functions_are_solved_implicitly() {
    let run = simulate_source("PhasorImpedance", PHASOR_IMPEDANCE, &["--stop-time", "2"]);
    // i = (cos t + j sin t) / (R + j X)
    let (r, x) = (2.0, 1.0);
    let d = r * r + x * x;
    for (i, &t) in run.time().iter().enumerate().step_by(25) {
        let (c, s) = (t.cos(), t.sin());
        assert_close("ir", run.get("ir")[i], (c * r + s * x) / d, 1e-9);
        assert_close("ii", run.get("ii")[i], (s * r - c * x) / d, 1e-9);
        assert_close("vr", run.get("vr")[i], c, 1e-9);
    }
}

const MATRIX_POWER: &str = r#"
model MatrixPower "A ^ k of a square matrix is a matrix power, not element-wise"
  parameter Real A[2, 2] = [1, 2; 3, 4];
  Real I[2, 2] = A ^ 0;
  Real B[2, 2] = A ^ 2;
  Real C[2, 2] = {{1, 1}, {0, 1}} ^ 3;
  Real D[2, 2] = time * A ^ 1;
  annotation(experiment(StopTime = 1, Interval = 0.5));
end MatrixPower;
"#;

/// `A ^ 0` is the identity, `A ^ k` the product of k factors (spec 10.6.5).
#[test]
fn matrix_power_is_a_repeated_product() {
    let run = simulate_source("MatrixPower", MATRIX_POWER, &[]);
    let expect = [
        ("I[1,1]", 1.0),
        ("I[1,2]", 0.0),
        ("I[2,1]", 0.0),
        ("I[2,2]", 1.0),
        ("B[1,1]", 7.0),
        ("B[1,2]", 10.0),
        ("B[2,1]", 15.0),
        ("B[2,2]", 22.0),
        ("C[1,2]", 3.0),
        ("C[2,1]", 0.0),
        ("D[2,2]", 4.0),
    ];
    for (name, value) in expect {
        assert_close(name, run.last(name), value, 1e-12);
    }
}
