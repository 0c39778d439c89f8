//! Functions: collected with full names, defaults and named arguments placed at call sites,
//! annotations kept, evaluation at translation time for structural uses.

use crate::common;
use common::*;
use moss_frontend::flat::FunctionBody;

#[test]
fn calls_get_defaults_and_named_arguments_in_order() {
    let m = flat("Functions.Use");
    let eqs = equations(&m);
    assert!(
        eqs.contains(&"y1 = 'Functions.poly'(time, 1, 3);".to_string()),
        "{eqs:#?}"
    );
    // b defaults to 2*a with a = 2
    assert!(
        eqs.contains(&"y2 = 'Functions.poly'(time, 2, 4);".to_string()),
        "{eqs:#?}"
    );
    assert!(
        eqs.contains(&"(a, b) = 'Functions.twoOut'(time);".to_string()),
        "{eqs:#?}"
    );
}

#[test]
fn called_functions_and_their_derivatives_are_collected() {
    let m = flat("Functions.Use");
    let names: Vec<&String> = m.functions.keys().collect();
    assert_eq!(
        names,
        ["Functions.poly", "Functions.polyDer", "Functions.twoOut"]
    );
    let poly = &m.functions["Functions.poly"];
    assert!(poly.inline);
    assert_eq!(poly.derivatives[0].function, "Functions.polyDer");
    assert_eq!(poly.inputs.len(), 3);
    assert!(matches!(&poly.body, FunctionBody::Algorithm(s) if s.len() == 1));
}

#[test]
fn function_evaluated_for_an_array_size() {
    let m = flat("Functions.Use");
    let z: Vec<String> = var_names(&m)
        .into_iter()
        .filter(|n| n.starts_with('z'))
        .collect();
    assert_eq!(z, ["z[1]", "z[2]", "z[3]"]);
}

#[test]
fn record_inputs_are_passed_field_by_field() {
    let m = flat("Functions.UseRecord");
    assert_eq!(
        equations(&m),
        ["y = 'Functions.applyTwice'('par.gain', {'par.offset[1]', 'par.offset[2]'}, time);"]
    );
    let f = &m.functions["Functions.apply"];
    let inputs: Vec<&str> = f.inputs.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(inputs, ["p.gain", "p.offset", "u"]);
    let twice = moss_frontend::print::print_model(&m);
    assert!(twice.contains("y := 'Functions.apply'('p.gain', 'p.offset', 'Functions.apply'('p.gain', 'p.offset', u));"), "{twice}");
}

#[test]
fn calls_are_vectorized_over_extra_dimensions() {
    let m = flat("Functions.Vectorized");
    assert_eq!(
        equations(&m),
        [
            "'a[1]' = 'Functions.twice'(1 * time);",
            "'a[2]' = 'Functions.twice'(2 * time);",
            "'a[3]' = 'Functions.twice'(3 * time);",
            "'b[1]' = 'Functions.apply'('ps[1].gain', {'ps[1].offset[1]', 'ps[1].offset[2]'}, time);",
            "'b[2]' = 'Functions.apply'('ps[2].gain', {'ps[2].offset[1]', 'ps[2].offset[2]'}, time);"
        ]
    );
}

#[test]
fn record_outputs_become_output_lists() {
    let m = flat("Functions.UsePair");
    assert_eq!(
        equations(&m),
        [
            "('p.a', 'p.b') = 'Functions.makePair'(time);",
            "('q.a', 'q.b') = 'Functions.swap'('p.a', 'p.b');"
        ]
    );
    let text = moss_frontend::print::print_model(&m);
    // `makePair` only assigns its outputs from its inputs: inlined into the caller
    assert!(
        text.contains(
            "  't.a' := 'p.b';\n  't.b' := 2 * 'p.b';\n  'q.a' := 'p.b';\n  'q.b' := 't.b';\n"
        ),
        "{text}"
    );
}

/// A function returning a record with array fields (an orientation: matrix and vector), used
/// as a binding and as the right side of an equation: one equation for all outputs, the
/// array fields as array literals of their variables.
#[test]
fn record_with_array_fields_from_one_call() {
    let m = flat_text(
        "Frames",
        "model Frames
  record Orientation
    Real T[2, 2];
    Real w[2];
  end Orientation;
  function turn
    input Real phi;
    output Orientation R;
  algorithm
    R := Orientation(T = [cos(phi), sin(phi); -sin(phi), cos(phi)], w = {0, 0});
  end turn;
  model Body
    input Orientation R = turn(time);
    Orientation R2;
  equation
    R2 = turn(2*time);
  end Body;
  Body b;
end Frames;
",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let eqs = equations(&m);
    for e in [
        "({{'b.R.T[1,1]', 'b.R.T[1,2]'}, {'b.R.T[2,1]', 'b.R.T[2,2]'}}, {'b.R.w[1]', 'b.R.w[2]'}) = 'Frames.turn'(time);",
        "({{'b.R2.T[1,1]', 'b.R2.T[1,2]'}, {'b.R2.T[2,1]', 'b.R2.T[2,2]'}}, {'b.R2.w[1]', 'b.R2.w[2]'}) = 'Frames.turn'(2 * time);",
    ] {
        assert!(eqs.contains(&e.to_string()), "{e} missing in {eqs:#?}");
    }
}

/// A parameter record bound to a function whose record result has an array field (like an
/// orientation built from two axis vectors): its fields get the values computed now, while
/// a variable record of the same kind keeps one equation for the whole call.
#[test]
fn parameter_record_bound_to_a_call_with_array_fields_is_computed() {
    let text = r#"model Axes
  record Frame
    Real T[2, 2];
    Real s;
  end Frame;
  function fromAngle
    input Real a;
    output Frame f;
  algorithm
    f := Frame(T = {{cos(a), sin(a)}, {-sin(a), cos(a)}}, s = 2*a);
  end fromAngle;
  parameter Real angle = 0;
  parameter Frame R = fromAngle(angle);
  Frame F = fromAngle(time);
end Axes;
"#;
    let m = flat_text("Axes", text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        declaration(&m, "R.T[1,1]"),
        "parameter Real 'R.T[1,1]' = 1.0;"
    );
    assert_eq!(
        declaration(&m, "R.T[2,1]"),
        "parameter Real 'R.T[2,1]' = -0.0;"
    );
    assert_eq!(declaration(&m, "R.s"), "parameter Real 'R.s' = 0;");
    let eqs = equations(&m);
    assert!(
        eqs.iter()
            .any(|e| e.contains("'F.s') = 'Axes.fromAngle'(time)")),
        "{eqs:#?}"
    );
}

/// A world model defines its gravity function as a short definition whose defaults name
/// the world's parameters; bodies call it through their `outer` world. The defaults are
/// taken from the inner world instance (with its modifiers), and an array-valued call in
/// them (`g*unit(n)`) is computed now.
const WORLD: &str = r#"model Gravity
  function unit
    input Real v[2];
    output Real y[2];
  algorithm
    y := v/sqrt(v*v);
  end unit;
  function field
    input Real r[2];
    input Real g[2];
    input Real mu;
    output Real a[2];
  algorithm
    a := g + mu*r;
  end field;
  model World
    parameter Real g = 9.81;
    parameter Real n[2] = {0, -2};
    parameter Real mu = 0.5;
    replaceable function gravity = field(g = g*unit(n), mu = mu);
  end World;
  model Body
    outer World world;
    Real r[2](each start = 1, each fixed = true);
    Real a[2];
  equation
    a = world.gravity(r);
    der(r) = a;
  end Body;
  inner World world(mu = 0.1);
  Body b;
end Gravity;
"#;

#[test]
fn short_function_definition_defaults_come_from_the_instance_called_through() {
    let m = flat_text("Gravity", WORLD).unwrap_or_else(|e| panic!("{e}"));
    let eqs = equations(&m);
    assert!(
        eqs.iter().any(|e| e
            == "{'b.a[1]', 'b.a[2]'} = 'Gravity.World.gravity'({'b.r[1]', 'b.r[2]'}, {0.0, -9.81}, 'world.mu');"),
        "{eqs:#?}"
    );
    assert_eq!(
        declaration(&m, "world.mu"),
        "parameter Real 'world.mu' = 0.1;"
    );
}

/// `y = f(x + g(x))` with `g` array-valued: the whole call `f` stays, the elements of `g`
/// in its argument come from an auxiliary array bound to `g(x)`.
#[test]
fn array_call_inside_the_argument_of_a_whole_call_is_lifted() {
    let text = r#"model Nested
  function twice
    input Real v[2];
    output Real y[2];
  algorithm
    y := 2*v;
  end twice;
  function total
    input Real v[2];
    output Real s;
  algorithm
    s := v[1] + v[2];
  end total;
  Real x[2] = {time, 1};
  Real y[2];
  Real s;
equation
  y = twice(x + twice(x));
  s = total(x + twice(x));
end Nested;
"#;
    let m = flat_text("Nested", text).unwrap_or_else(|e| panic!("{e}"));
    let eqs = equations(&m);
    assert!(
        eqs.iter()
            .any(|e| e == "{'$array1[1]', '$array1[2]'} = 'Nested.twice'({'x[1]', 'x[2]'});"),
        "{eqs:#?}"
    );
    assert!(
        eqs.iter().any(|e| {
            e
            == "{'y[1]', 'y[2]'} = 'Nested.twice'({'x[1]' + '$array1[1]', 'x[2]' + '$array1[2]'});"
        }),
        "{eqs:#?}"
    );
    assert!(
        eqs.iter()
            .any(|e| e == "s = 'Nested.total'({'x[1]' + '$array1[1]', 'x[2]' + '$array1[2]'});"),
        "{eqs:#?}"
    );
}

/// A parameter record bound to an if-expression that picks between two calls with array
/// fields in their results is computed at translation time as well.
#[test]
fn parameter_record_bound_to_a_choice_between_calls_is_computed() {
    let text = r#"model Choice
  record Frame
    Real T[2];
    Real s;
  end Frame;
  function scaled
    input Real k;
    output Frame f;
  algorithm
    f := Frame(T = {k, 2*k}, s = k);
  end scaled;
  function flipped
    input Real k;
    output Frame f;
  algorithm
    f := Frame(T = {-k, k}, s = 0);
  end flipped;
  parameter Boolean flip = true;
  parameter Real k = 3;
  parameter Frame R = if flip then flipped(k) else scaled(k);
  Real x(start = 1, fixed = true);
equation
  der(x) = R.T[1]*x;
end Choice;
"#;
    let m = flat_text("Choice", text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(declaration(&m, "R.T[1]"), "parameter Real 'R.T[1]' = -3;");
    assert_eq!(declaration(&m, "R.T[2]"), "parameter Real 'R.T[2]' = 3;");
    assert_eq!(declaration(&m, "R.s"), "parameter Real 'R.s' = 0;");
}
