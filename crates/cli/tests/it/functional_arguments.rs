//! Functional input arguments and function partial application (spec 12.4.2), end to end:
//! a bisection solver and a recursive adaptive Simpson rule take the function they work on
//! as an input; models pass function names and partial applications (`function g(p = ...)`)
//! whose bound values change with time, functions pass their functional input on (to
//! themselves, recursively) and partially apply it further. The results are checked against
//! closed forms; passing a function of the wrong interface is a located error.

use crate::library_support;

use library_support::{assert_close, moss_command, scratch_dir, simulate_source};

/// The library part shared by the models below.
const FUNCTIONS: &str = r#"
partial function Scalar "y = f(u)"
  input Real u;
  output Real y;
end Scalar;

partial function Scalar2 "y = f(u, w)"
  input Real u;
  input Real w;
  output Real y;
end Scalar2;

function shiftedSine "A*sin(w*u) - s"
  extends Scalar;
  input Real A = 1;
  input Real w = 1;
  input Real s = 0;
algorithm
  y := A*sin(w*u) - s;
end shiftedSine;

function cubic "u^3 - 2"
  extends Scalar;
algorithm
  y := u^3 - 2;
end cubic;

function weighted "sum(c)*u - w (with a record and an array bound)"
  extends Scalar2;
  input Real c[:];
algorithm
  y := sum(c)*u - w;
end weighted;

function bisect "zero of f in [a0, b0], f(a0) and f(b0) of opposite signs"
  input Scalar f;
  input Real a0;
  input Real b0;
  output Real u;
protected
  Real a = a0;
  Real b = b0;
  Real fa;
  Real m;
  Integer i = 0;
algorithm
  fa := f(a);
  while i < 80 loop
    m := (a + b)/2;
    if f(m)*fa > 0 then
      a := m;
      fa := f(a);
    else
      b := m;
    end if;
    i := i + 1;
  end while;
  u := (a + b)/2;
end bisect;

function simpson "integral of f over [a, b], adaptive and recursive"
  input Scalar f;
  input Real a;
  input Real b;
  input Real tol = 1e-10;
  output Real I;
protected
  Real m = (a + b)/2;
  Real whole;
  Real left;
  Real right;
algorithm
  whole := (b - a)/6*(f(a) + 4*f(m) + f(b));
  left := (m - a)/6*(f(a) + 4*f((a + m)/2) + f(m));
  right := (b - m)/6*(f(m) + 4*f((m + b)/2) + f(b));
  if abs(left + right - whole) < 15*tol then
    I := left + right;
  else
    I := simpson(f, a, m, tol/2) + simpson(f, m, b, tol/2);
  end if;
end simpson;

function inverse2 "u with g(u, w) = 0: the functional input partially applied further"
  input Scalar2 g;
  input Real w;
  output Real u;
algorithm
  u := bisect(function g(w = w), -10, 10);
end inverse2;

function asinVia "asin(y) through bisect, from inside a function"
  input Real y;
  output Real x;
algorithm
  x := bisect(function shiftedSine(s = y), -1.5, 1.5);
end asinVia;
"#;

#[test]
fn functional_arguments_compute_what_their_functions_define() {
    let source = format!(
        r#"{FUNCTIONS}
model Uses
  parameter Real A = 2;
  parameter Real w = 3;
  final parameter Real area = simpson(function shiftedSine(A = A, w = w), 0, 1)
    "a parameter computed through a functional argument";
  Real x "A*sin(x) = y(t)";
  Real y = 0.2 + 0.5*time;
  Real r = bisect(cubic, 0, 2) "a function name passed";
  Real z = asinVia(y/A);
  Real v = inverse2(function weighted(c = {{1, 2, 1}}), 1 + time);
equation
  x = bisect(function shiftedSine(A = A, s = y), -1.5, 1.5);
  annotation(experiment(StopTime = 1, Interval = 0.1));
end Uses;
"#
    );
    let run = simulate_source("Uses", &source, &[]);
    let (a, w) = (2.0f64, 3.0f64);
    assert_close("area", run.first("area"), a * (1.0 - w.cos()) / w, 1e-8);
    assert_close("r", run.first("r"), 2f64.cbrt(), 1e-10);
    for (k, &t) in run.time().iter().enumerate() {
        let y = 0.2 + 0.5 * t;
        let exact = (y / a).asin();
        assert_close(&format!("x at {t}"), run.get("x")[k], exact, 1e-10);
        assert_close(&format!("z at {t}"), run.get("z")[k], exact, 1e-10);
        assert_close(
            &format!("v at {t}"),
            run.get("v")[k],
            (1.0 + t) / 4.0,
            1e-10,
        );
    }
}

fn check_error(name: &str, model: &str) -> String {
    let dir = scratch_dir(name);
    let file = dir.join(format!("{name}.mo"));
    std::fs::write(&file, format!("{FUNCTIONS}\n{model}")).expect("write model");
    let out = moss_command()
        .args(["check", &file.to_string_lossy()])
        .output()
        .expect("run moss");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(1), "{name} should be refused");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_function_of_another_interface_is_refused_where_it_is_passed() {
    let lines = FUNCTIONS.lines().count();
    // `weighted` takes (u, w, c): with `u` bound, its first free input is not `u`.
    let err = check_error(
        "WrongInterface",
        "model WrongInterface\n  Real x = bisect(function weighted(u = 1, c = {1}), 0, 1);\nend WrongInterface;\n",
    );
    assert!(
        err.contains("`weighted` does not match the functional input `f` of `bisect`")
            && err.contains("its inputs not bound are (w), `Scalar` declares (u)"),
        "{err}"
    );
    assert!(
        err.contains(&format!("WrongInterface.mo:{}:", lines + 3)),
        "not located at the argument: {err}"
    );
    // `c` of `weighted` bound, but `w` neither bound nor defaulted.
    let err = check_error(
        "Unbound",
        "model Unbound\n  Real x = bisect(function weighted(c = {1}), 0, 1);\nend Unbound;\n",
    );
    assert!(
        err.contains("input `w` of `weighted` is not an input of `Scalar` and has no default"),
        "{err}"
    );
    let err = check_error(
        "NoSuchInput",
        "model NoSuchInput\n  Real x = bisect(function shiftedSine(k = 1), 0, 1);\nend NoSuchInput;\n",
    );
    assert!(err.contains("`shiftedSine` has no input `k`"), "{err}");
    let err = check_error(
        "NotAFunction",
        "model NotAFunction\n  Real x = bisect(2, 0, 1);\nend NotAFunction;\n",
    );
    assert!(
        err.contains("the functional input `f` of `bisect` takes a function name"),
        "{err}"
    );
}

/// A partial application that binds a functional input of the function it passes (spec
/// 12.4.2.1, the specification's own surface quadrature, compliance suite
/// `Functions.HigherOrder.PartialApplication3`): `function quadratureOnce(y1 = y1, y2 = y2,
/// integrand = integrand)` in a function and the same written in a model, with the inner
/// function partially applied in turn and its bound value changing with time. The passed
/// function's output is named differently from the partial function's (`z`, not `y`), as in
/// the specification's example. Trapezoid rules: `quadratureOnce` integrates `g(t, x)`
/// over `t` in `[0, 2]` (it binds `y` to its `x`), with `g(x, y) = k x y + y`:
/// `2x + 2kx`; over `x` in `[0, 1]`: `1 + k`.
#[test]
fn a_partial_application_binds_a_functional_input_in_turn() {
    let run = simulate_source(
        "SurfaceQuadrature",
        r#"model SurfaceQuadrature
  partial function Integrand
    input Real x;
    output Real y;
  end Integrand;
  partial function SurfaceIntegrand
    input Real x;
    input Real y;
    output Real z;
  end SurfaceIntegrand;
  function quadrature
    input Real x1;
    input Real x2;
    input Integrand integrand;
    output Real integral;
  algorithm
    integral := (x2 - x1)*(integrand(x1) + integrand(x2))/2;
  end quadrature;
  function quadratureOnce
    input Real x;
    input Real y1;
    input Real y2;
    input SurfaceIntegrand integrand;
    output Real z;
  algorithm
    z := quadrature(y1, y2, function integrand(y = x));
  end quadratureOnce;
  function surfaceQuadrature
    input Real x1;
    input Real x2;
    input Real y1;
    input Real y2;
    input SurfaceIntegrand integrand;
    output Real integral;
  algorithm
    integral := quadrature(x1, x2, function quadratureOnce(y1 = y1, y2 = y2, integrand = integrand));
  end surfaceQuadrature;
  function quadrature2 "passes its functional input on"
    input Real x1;
    input Real x2;
    input Integrand integrand;
    output Real integral;
  algorithm
    integral := quadrature(x1, (x1 + x2)/2, integrand) + quadrature((x1 + x2)/2, x2, integrand);
  end quadrature2;
  function scaled
    extends SurfaceIntegrand;
    input Real k;
  algorithm
    z := k*x*y + y;
  end scaled;
  Real passedOn = quadrature2(0, 1, function quadratureOnce(y1 = 0, y2 = 2, integrand = function scaled(k = 3)));
  Real inFunction = surfaceQuadrature(0, 1, 0, 2, function scaled(k = 3));
  Real inModel = quadrature(0, 1, function quadratureOnce(y1 = 0, y2 = 2, integrand = function scaled(k = time)));
end SurfaceQuadrature;"#,
        &["--stop-time", "1"],
    );
    assert_close("bound in a function", run.first("inFunction"), 4.0, 1e-12);
    // `2x + 2kx` is linear in x: the split trapezoid rule is exact too
    assert_close("passed on", run.first("passedOn"), 4.0, 1e-12);
    for t in [0.0, 0.5, 1.0] {
        assert_close(
            &format!("bound in the model at {t}"),
            run.at("inModel", t),
            1.0 + t,
            1e-9,
        );
    }
}
