//! Protected variables of functions: record locals start with the bindings of their
//! record class (spec 12.4.4: a function's locals are initialized by their bindings), and
//! constant coefficient tables are read in place without changing any result.

use crate::library_support;

use library_support::{assert_close, simulate_source};

/// Coefficients in a record whose fields get their values from the record class itself
/// (`b`, `Plain.x`), from the modifiers of an `extends` clause (`Coeffs`: `n`, `a`), and
/// from a modifier of a nested record field (`Outer.part(w = 7)`), the way the MSL's
/// R134a medium keeps its equation-of-state coefficients.
const RECORD_LOCALS: &str = r#"
model RecordLocals
  record Base
    parameter Integer n = 2;
    parameter Real[n] a;
    parameter Real b = 3;
  end Base;
  record Coeffs
    extends Base(n = 3, a = {1, 2, 4});
  end Coeffs;
  record Plain
    Real x = 5;
    Real y;
    Real z = 2*x "follows x as the variable sets it";
  end Plain;
  record Inner
    Real v = 0.5;
    Real w = 1;
  end Inner;
  record Outer
    Inner part(w = 7);
  end Outer;
  function poly "a[1] + a[2]*u + a[3]*u^2 + b + x + v + w"
    input Real u;
    output Real y;
  protected
    Coeffs c;
    Plain p;
    Outer o;
  algorithm
    y := c.a[1] + c.a[2]*u + c.a[3]*u^2 + c.b + p.x + o.part.v + o.part.w;
  end poly;
  function makePlain "a record output starts with its class's bindings too"
    input Real u;
    output Plain p(x = 4, z = 2*p.x);
  algorithm
    p.y := u;
  end makePlain;
  Real y = poly(time);
  Plain q = makePlain(2*time);
  annotation(experiment(StopTime = 1, Interval = 0.25));
end RecordLocals;
"#;

#[test]
fn record_locals_start_with_the_bindings_of_their_class() {
    let run = simulate_source("RecordLocals", RECORD_LOCALS, &[]);
    for t in [0.0, 0.25, 0.5, 1.0] {
        let exact = 1.0 + 2.0 * t + 4.0 * t * t + 3.0 + 5.0 + 0.5 + 7.0;
        assert_close(&format!("y({t})"), run.at("y", t), exact, 1e-12);
        assert_close(&format!("q.x({t})"), run.at("q.x", t), 4.0, 1e-12);
        assert_close(&format!("q.z({t})"), run.at("q.z", t), 8.0, 1e-12);
        assert_close(&format!("q.y({t})"), run.at("q.y", t), 2.0 * t, 1e-12);
    }
}

/// A piecewise-cubic table read by slices (`coef[k, 1:4]`) and by single elements, next to
/// a local that starts from a constant table and is then changed: the first must be read in
/// place, the second must start from the table again on every call.
const TABLES: &str = r#"
model Tables
  function cubic
    input Real x;
    input Real[4] c;
    output Real y;
  algorithm
    y := c[1] + x*(c[2] + x*(c[3] + x*c[4]));
  end cubic;
  function spline "two pieces on [0, 1) and [1, 2)"
    input Real x;
    output Real y;
  protected
    constant Real breaks[:] = {0, 1, 2};
    constant Real coef[2, 4] = [1, 1, 0, 0; 2, 1, 0, 1];
    Real scratch[3] = {10, 20, 30};
    Integer k;
  algorithm
    k := if x < breaks[2] then 1 else 2;
    scratch[k] := scratch[k] + x;
    y := cubic(x - breaks[k], coef[k, 1:4]) + scratch[1] + scratch[2];
  end spline;
  Real y = spline(2*time);
  annotation(experiment(StopTime = 1, Interval = 0.25));
end Tables;
"#;

#[test]
fn constant_tables_are_read_in_place_and_changed_locals_restart() {
    let run = simulate_source("Tables", TABLES, &[]);
    for t in [0.0, 0.25, 0.75, 1.0] {
        let x = 2.0 * t;
        let exact = if x < 1.0 {
            // piece 1: 1 + x; scratch[1] grew by x in this call only
            1.0 + x + (10.0 + x) + 20.0
        } else {
            let s = x - 1.0;
            2.0 + s + s * s * s + 10.0 + (20.0 + x)
        };
        assert_close(&format!("y({t})"), run.at("y", t), exact, 1e-12);
    }
}

/// Record locals of a function bound as a whole (`final constant Complex r = Complex(a,
/// b)`, `Complex t[2] = {...}` of the IAPWS-09 ice Gibbs function in
/// `Media.Air.ReferenceMoistAir`): the binding gives the fields their values. They were left
/// without values (0: the ice enthalpy was NaN), and so was a record local bound to a call
/// of a record-returning function (`State s = setState(p, T)`): silently wrong results.
const WHOLE_RECORD_BINDINGS: &str = r#"model WholeRecordBindings
  record Pair
    Real a;
    Real b;
  end Pair;
  function make
    input Real a;
    input Real b;
    output Pair p;
  algorithm
    p := Pair(a = a, b = b);
  end make;
  function f
    input Real x;
    output Real y;
    output Real z;
  protected
    final constant Pair r = Pair(1, 2);
    final Pair t[2] = {Pair(3, 4), Pair(5, x)};
    Pair s = Pair(x, 2 * x);
    Pair c = make(x, 100);
  algorithm
    y := r.a + 10 * r.b + t[1].a * t[2].b;
    z := s.b + t[2].a + c.b - c.a;
  end f;
  Real y;
  Real z;
equation
  (y, z) = f(1 + time);
end WholeRecordBindings;
"#;

#[test]
fn record_locals_bound_as_a_whole_get_their_field_values() {
    let run = simulate_source(
        "WholeRecordBindings",
        WHOLE_RECORD_BINDINGS,
        &["--stop-time", "1"],
    );
    // y = 1 + 20 + 3 x, z = 2 x + 5 + 100 - x with x = 1 + t
    assert_close("y(0)", run.first("y"), 24.0, 1e-12);
    assert_close("y(1)", run.last("y"), 27.0, 1e-12);
    assert_close("z(1)", run.last("z"), 107.0, 1e-12);
}
