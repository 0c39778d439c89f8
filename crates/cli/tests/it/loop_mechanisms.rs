//! Mechanisms of closed kinematic loops on small models with exact solutions: what the
//! MultiBody loop examples need (analytic loop joints compute parameters during
//! initialization from array-valued functions; a `StateSelect.always` joint beside varying
//! loop constraints; initialization of a loop from start values at which a rotated axis has
//! a zero component).

use crate::library_support;

use library_support::{assert_close, moss_command, scratch_dir, simulate_source};

/// An initial equation with an array-valued call inside the arguments of another
/// (`n = resolve(R, rotate(phi0, e))`), defining `fixed = false` parameters, and a parameter
/// bound to an array-valued call of those (`e2 = normalized(n)`), which cannot be known at
/// translation time and is computed by initialization too.
const INIT_CALLS: &str = r#"
model InitCalls
  function rotate
    input Real a;
    input Real v[2];
    output Real y[2];
  algorithm
    y := {cos(a)*v[1] - sin(a)*v[2], sin(a)*v[1] + cos(a)*v[2]};
  end rotate;
  function scaled
    input Real k;
    input Real v[2];
    output Real y[2];
  algorithm
    y := k*v;
  end scaled;
  function normalized
    input Real v[2];
    output Real y[2];
  algorithm
    y := v/sqrt(v*v);
  end normalized;
  parameter Real e[2] = {1, 0};
  Real phi(start = 0.5, fixed = true);
  parameter Real n[2](each fixed = false);
  parameter Real e2[2] = normalized(n);
  Real p[2];
initial equation
  n = scaled(3, rotate(phi, e));
equation
  der(phi) = 1;
  p = phi*e2;
end InitCalls;
"#;

#[test]
fn array_calls_in_initial_equations_and_parameters_of_initialization() {
    let run = simulate_source("InitCalls", INIT_CALLS, &["--stop-time", "1"]);
    let (c, s) = (0.5f64.cos(), 0.5f64.sin());
    assert_close("n[1]", run.first("n[1]"), 3.0 * c, 1e-9);
    assert_close("n[2]", run.first("n[2]"), 3.0 * s, 1e-9);
    assert_close("e2[1]", run.last("e2[1]"), c, 1e-9);
    assert_close("e2[2]", run.last("e2[2]"), s, 1e-9);
    // phi = 0.5 + t, p = phi e2
    assert_close("p[1](1)", run.at("p[1]", 1.0), 1.5 * c, 1e-6);
    assert_close("p[2](1)", run.at("p[2]", 1.0), 1.5 * s, 1e-6);
}

/// A function evaluated at translation time whose locals are a Real range (`d:d:1`) and an
/// array comprehension over a local bound (`{1 - (b - i)*d for i in 1:b}`, which needs a
/// loop before the body): the parameter it binds is known, so it can size an array.
const TABLE_FUNCTION: &str = r#"
model TableFunction
  function ramp
    input Integer n;
    output Real y[n];
  protected
    Real a = ceil(n/2);
    Real d = 1/a;
    Integer b = integer(a);
    Real up[:] = d:d:1;
    Real down[:] = {1 - (b - i)*d for i in 1:b};
  algorithm
    y := cat(1, up, down)*10;
  end ramp;
  parameter Real r[4] = ramp(4);
  parameter Integer m = integer(r[2]/10 + 0.5) + 1 "2, known at translation time";
  Real x[m](each start = 1, each fixed = true);
equation
  der(x) = -r[1:m].*x;
end TableFunction;
"#;

#[test]
fn translation_time_functions_with_real_ranges_and_comprehension_locals() {
    let run = simulate_source("TableFunction", TABLE_FUNCTION, &["--stop-time", "0.2"]);
    // a = 2, d = 0.5: up = {0.5, 1}, down = {0.5, 1}
    for (i, r) in [5.0, 10.0, 5.0, 10.0].into_iter().enumerate() {
        assert_close(
            &format!("r[{}]", i + 1),
            run.first(&format!("r[{}]", i + 1)),
            r,
            1e-12,
        );
    }
    assert_close(
        "x[1](0.2)",
        run.at("x[1]", 0.2),
        (-5.0f64 * 0.2).exp(),
        1e-5,
    );
    assert_close(
        "x[2](0.2)",
        run.at("x[2]", 0.2),
        (-10.0f64 * 0.2).exp(),
        1e-5,
    );
}

/// `a` (and its velocity) are declared `StateSelect.always`; `b` and `c` are tied to `a` by
/// constraints, one of them with a varying coefficient (`sin(c) + a = 0`). The dummy
/// derivatives must be those of `b` and `c`: `a` and `wa` stay the states (they used to be
/// made dummies because a constraint had a constant coefficient in `der(a)`).
const ALWAYS_IN_LOOP: &str = r#"
model AlwaysInLoop
  Real a(stateSelect = StateSelect.always, start = 0.3, fixed = true);
  Real wa(stateSelect = StateSelect.always, start = 0.5, fixed = true);
  Real b, c, vb, vc, fb, fc;
equation
  der(a) = wa;
  der(wa) = -a;
  b + sin(a) = 0;
  sin(c) + a = 0;
  der(b) = vb;
  der(c) = vc;
  der(vb) = fb;
  der(vc) = fc;
end AlwaysInLoop;
"#;

#[test]
fn always_states_stay_states_beside_varying_constraints() {
    let dir = scratch_dir("always-in-loop");
    let file = dir.join("AlwaysInLoop.mo");
    std::fs::write(&file, ALWAYS_IN_LOOP).expect("writes the model");
    let out = moss_command()
        .arg("translate")
        .arg(&file)
        .output()
        .expect("runs moss");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    let states: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("states ("))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .map(|l| l.trim().split(':').next().unwrap_or(""))
        .collect();
    assert_eq!(states, ["a", "wa"], "{text}");
    assert!(!text.contains("cannot be honoured"), "{text}");
    let run = simulate_source("AlwaysInLoop", ALWAYS_IN_LOOP, &["--stop-time", "1"]);
    for t in [0.25, 0.5, 1.0] {
        let a = 0.3 * f64::cos(t) + 0.5 * f64::sin(t);
        assert_close(&format!("a({t})"), run.at("a", t), a, 1e-5);
        assert_close(&format!("b({t})"), run.at("b", t), -a.sin(), 1e-5);
        assert_close(&format!("c({t})"), run.at("c", t), -a.asin(), 1e-5);
    }
}

/// Initialization of a loop where a length along a rotated axis, `x = s c1`, `y = s c2`, is
/// found from `x = L`, `y = 0`: solving `y = s c2` for `s` divides by `c2 = sin(phi)`, which
/// is 0 at the start values and at the solution. Initialization tears dividing only by
/// parameters and constants, so it is solved from there: `s = L`, `phi = 0`.
const ROTATED_AXIS_INIT: &str = r#"
model RotatedAxisInit
  parameter Real L = 2;
  Real s(start = 1);
  Real phi(start = 0);
  Real c1, c2;
  Real x, y;
initial equation
  x = L;
  y = 0;
equation
  c1 = cos(phi);
  c2 = sin(phi);
  y = s*c2;
  x = s*c1;
  der(s) = 1;
  der(phi) = 0.5;
end RotatedAxisInit;
"#;

#[test]
fn initialization_never_divides_by_a_varying_axis_component() {
    let run = simulate_source("RotatedAxisInit", ROTATED_AXIS_INIT, &["--stop-time", "1"]);
    assert_close("s(0)", run.first("s"), 2.0, 1e-8);
    assert_close("phi(0)", run.first("phi"), 0.0, 1e-8);
    assert_close("s(1)", run.at("s", 1.0), 3.0, 1e-6);
    assert_close("y(1)", run.at("y", 1.0), 3.0 * 0.5f64.sin(), 1e-6);
}

/// A function called through an outer component, `world.field(x)`, whose inner instance
/// redeclares it (`inner World world(redeclare function field = linearField(k = k))`, a
/// user-defined gravity field): the call uses the redeclared function with its modifier,
/// not the default the class declares. `der(v) = k x` with `k = -4` gives `x = cos(2 t)`.
const FIELD_THROUGH_OUTER: &str = r#"
model FieldThroughOuter
  partial function partialField
    input Real x;
    output Real g;
  end partialField;
  function constantField
    extends partialField;
    input Real g0 = 0;
  algorithm
    g := g0;
  end constantField;
  function linearField
    extends partialField;
    input Real k;
  algorithm
    g := k*x;
  end linearField;
  model World
    replaceable function field = constantField constrainedby partialField;
  end World;
  model Mass
    outer World world;
    Real x(start = 1, fixed = true);
    Real v(start = 0, fixed = true);
  equation
    der(x) = v;
    der(v) = world.field(x);
  end Mass;
  parameter Real k = -4;
  inner World world(redeclare function field = linearField(k = k));
  Mass m;
end FieldThroughOuter;
"#;

#[test]
fn function_redeclared_in_an_inner_instance_is_called_through_outer() {
    let run = simulate_source(
        "FieldThroughOuter",
        FIELD_THROUGH_OUTER,
        &["--stop-time", "1", "--tolerance", "1e-8"],
    );
    for t in [0.25, 0.5, 1.0] {
        assert_close(
            &format!("m.x({t})"),
            run.at("m.x", t),
            (2.0 * t).cos(),
            1e-5,
        );
    }
}

/// A matrix constructor of vectors and matrices inside a function (`[zeros(n), v; M]`, a
/// color map of the MultiBody visualizers): concatenation with each vector a column
/// (spec 10.4.2), evaluated at translation time for a parameter.
const MATRIX_OF_COLUMNS: &str = r#"
model MatrixOfColumns
  function columns
    input Integer n;
    output Real y[n + 1, 3];
  protected
    Real v[:] = 1:n;
    Real m[1, 3] = [7, 8, 9];
  algorithm
    y := [zeros(n), v, fill(2, n); m];
  end columns;
  parameter Real c[3, 3] = columns(2);
  Real x(start = 0, fixed = true);
equation
  der(x) = c[2, 2] + c[3, 3];
end MatrixOfColumns;
"#;

#[test]
fn matrix_constructor_of_vectors_in_a_function_concatenates_columns() {
    let run = simulate_source("MatrixOfColumns", MATRIX_OF_COLUMNS, &["--stop-time", "1"]);
    let expected = [[0.0, 1.0, 2.0], [0.0, 2.0, 2.0], [7.0, 8.0, 9.0]];
    for (i, row) in expected.iter().enumerate() {
        for (j, &v) in row.iter().enumerate() {
            let name = format!("c[{},{}]", i + 1, j + 1);
            assert_close(&name, run.first(&name), v, 1e-12);
        }
    }
    assert_close("x(1)", run.at("x", 1.0), 11.0, 1e-9);
}
