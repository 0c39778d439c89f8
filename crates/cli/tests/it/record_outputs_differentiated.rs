//! A record returned by a function that is not inlined, with its fields differentiated
//! (`der(state.p)` of `state = setSmoothState(...)` in the MSL's medium examples): the call is
//! split into one equation per output so that index reduction differentiates it through the
//! function's generated derivative. And a reduction nested in a reduction of a function body,
//! whose inner sum depends on the outer index.

use crate::library_support;

use library_support::{assert_close, simulate_source};

const MODEL: &str = r#"
record R
  Real a;
  Real b;
end R;

function f "not inlined: a while loop"
  input Real x;
  output R r;
protected
  Integer n = 0;
algorithm
  while n < 1 loop
    r.a := x^2;
    r.b := sin(x);
    n := n + 1;
  end while;
end f;

function g "nested reductions: sum over i of y[i] / sum over j of (i*y[j])"
  input Real y[:];
  output Real s;
algorithm
  s := sum(y[i]/sum(i*y[j] for j in 1:size(y, 1)) for i in 1:size(y, 1));
end g;

model D
  Real x = 1 + time;
  R r = f(x);
  Real da = der(r.a);
  Real db = der(r.b);
  Real s = g({x, 2*x, 3*x});
  annotation(experiment(StopTime = 1, Interval = 0.1));
end D;
"#;

#[test]
fn differentiated_record_outputs_and_nested_reductions() {
    let run = simulate_source("D", MODEL, &[]);
    for (k, &t) in run.time().iter().enumerate() {
        let x = 1.0 + t;
        assert_close(&format!("da at {t}"), run.get("da")[k], 2.0 * x, 1e-6);
        assert_close(&format!("db at {t}"), run.get("db")[k], x.cos(), 1e-6);
        // sum_i y_i / (i sum_j y_j) with y = (x, 2x, 3x): (1 + 1 + 1)/6
        assert_close(&format!("s at {t}"), run.get("s")[k], 0.5, 1e-12);
    }
}
