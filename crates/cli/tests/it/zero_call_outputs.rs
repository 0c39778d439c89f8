//! Outputs of a function call that are zero at every value of the call's varying arguments
//! (a semiconductor's junction capacitance with a model card that has none, computed with
//! its current in one call) become constants, so `c*der(v)` vanishes and `v` is algebraic:
//! the structure the MSL's Spice3 examples need (`CGS = 0`, `CGD = 0`).

use crate::library_support;

use library_support::{assert_close, simulate_source};

/// A diode-like device (its current from a series summed in a `while` loop, so the call is
/// not inlined) whose capacitance is `cj0` times a voltage-dependent factor (two
/// branches, as the SPICE junction capacitance), with `cj0 = 0` on the model card. With the
/// capacitance recognised as zero, `v` is fixed by the node equation alone:
/// `(u - v)/R = Is (exp(v/Vt) - 1)`; otherwise `v` is a state whose derivative is computed
/// by dividing by the zero capacitance.
const ZERO_CAPACITANCE: &str = r#"
model ZeroCapacitance
  function device
    input Real cj0;
    input Real v;
    output Real i;
    output Real c;
  protected
    Real f;
    Real term = 1;
    Integer k = 0;
  algorithm
    // exp(v/0.5) - 1 by its series, until the terms are negligible: a loop whose length
    // depends on v (so the function is not inlined, and its current stays unknown)
    i := 0;
    while abs(term) > 1e-17 or k < 3 loop
      k := k + 1;
      term := term*(v/0.5)/k;
      i := i + term;
    end while;
    i := 1e-3*i;
    if v < 0.25 then
      f := 1/sqrt(1 - v/0.5);
      c := cj0*f;
    else
      c := cj0/2*(1 + v);
    end if;
  end device;
  parameter Real cj0 = 0 annotation(Evaluate = true);
  parameter Real R = 1000;
  Real v(start = 0), i, c, ic, u;
equation
  u = 2*sin(time);
  (i, c) = device(cj0, v);
  ic = c*der(v);
  (u - v)/R = i + ic;
end ZeroCapacitance;
"#;

/// The solution of `u - v = exp(2 v) - 1` (R = 1000, Is = 1e-3, Vt = 0.5) by Newton.
fn node_voltage(u: f64) -> f64 {
    let mut v = 0.0;
    for _ in 0..100 {
        let r = u - v - ((2.0 * v).exp() - 1.0);
        let d = -1.0 - 2.0 * (2.0 * v).exp();
        v -= r / d;
    }
    v
}

#[test]
fn a_capacitance_output_that_is_zero_at_every_voltage_makes_the_voltage_algebraic() {
    let run = simulate_source("ZeroCapacitance", ZERO_CAPACITANCE, &["--stop-time", "3"]);
    // points of the output grid (500 intervals): no interpolation between rows
    for t in [0.0, 0.6, 1.5, 2.4] {
        let u = 2.0 * f64::sin(t);
        assert_close(&format!("v({t})"), run.at("v", t), node_voltage(u), 1e-6);
        assert_close(&format!("c({t})"), run.at("c", t), 0.0, 0.0);
        assert_close(&format!("ic({t})"), run.at("ic", t), 0.0, 0.0);
    }
}
