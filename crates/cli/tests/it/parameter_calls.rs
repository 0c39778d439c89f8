//! A record parameter bound to a function that is not inlined, `final parameter Coeffs c =
//! coeffs(k)`, and a parameter computed from one of its fields: the fields are outputs of
//! one call of parameters, computed with the parameters. (They used to be hidden variables
//! solved with the equations, after the parameter blocks had read them as zero: the SPICE
//! transistors' temperature records.)
//!
//! The model: der(x) = -a x + b with a = 2k, b = k + 1, x(0) = 1, whose solution is
//! x(t) = b/a + (1 - b/a) exp(-a t).

use crate::library_support;

use library_support::{assert_close, simulate_source};

const PARAM_CALL: &str = r#"
record Coeffs
  Real a;
  Real b;
end Coeffs;

function coeffs "not inlined: a while loop"
  input Real k;
  output Coeffs c;
protected
  Integer n = 0;
algorithm
  while n < 1 loop
    c.a := 2*k;
    c.b := k + 1;
    n := n + 1;
  end while;
end coeffs;

model ParamCall
  parameter Real k = 3;
  final parameter Coeffs c = coeffs(k);
  parameter Real rate = c.a "a parameter computed from the record";
  Real x(start = 1, fixed = true);
equation
  der(x) = -rate*x + c.b;
  annotation(experiment(StopTime = 1, Interval = 0.01));
end ParamCall;
"#;

#[test]
fn parameters_bound_to_a_function_call_have_its_values() {
    let run = simulate_source("ParamCall", PARAM_CALL, &[]);
    let (a, b) = (6.0, 4.0);
    assert_close("c.a", run.first("c.a"), a, 1e-12);
    assert_close("c.b", run.first("c.b"), b, 1e-12);
    assert_close("rate", run.first("rate"), a, 1e-12);
    let x = run.get("x");
    for (k, &t) in run.time().iter().enumerate() {
        let exact = b / a + (1.0 - b / a) * (-a * t).exp();
        assert_close(&format!("x at t = {t}"), x[k], exact, 1e-5);
    }
}
