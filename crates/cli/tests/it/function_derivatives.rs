//! Derivatives of user functions generated from their algorithms (no `derivative`
//! annotation): index reduction differentiating a call, and the symbolic ODE Jacobian of a
//! right-hand side that calls such functions.

use crate::library_support;

use library_support::{assert_close, moss_command, scratch_dir, simulate_source};

/// `oddPower(x, n) = x*|x|^(n-1)` computed by a loop and a sign correction, so it cannot be
/// inlined: index reduction of `oddPower(x, 3) = 1 + t` must call its generated derivative.
/// A function with a for-loop and an if-statement, shared by the models below (each model
/// marks where it goes with `$ODD_POWER`).
const ODD_POWER: &str = r#"function oddPower "x*|x|^(n-1) by repeated multiplication"
    input Real x;
    input Integer n;
    output Real y;
  protected
    Real ax;
  algorithm
    ax := abs(x);
    y := 1;
    for k in 1:n loop
      y := y*ax;
    end for;
    if x < 0 then
      y := -y;
    end if;
  end oddPower;"#;

/// The model text with the shared function put in.
fn with_odd_power(model: &str) -> String {
    model.replace("$ODD_POWER", ODD_POWER)
}

const CONSTRAINED_CUBE: &str = r#"
model ConstrainedCube "x^3 = 1 + t by index reduction: x = (1 + t)^(1/3)"
  $ODD_POWER
  Real x(start = 1, fixed = true);
  Real y(start = 1, fixed = true) "the driven coordinate";
  Real v "velocity of x";
equation
  der(x) = v;
  der(y) = 1;
  oddPower(x, 3) = y;
  annotation(experiment(StopTime = 2, Interval = 0.05, Tolerance = 1e-8));
end ConstrainedCube;
"#;

#[test]
fn index_reduction_differentiates_a_function_algorithm() {
    let run = simulate_source("ConstrainedCube", &with_odd_power(CONSTRAINED_CUBE), &[]);
    for t in [0.5, 1.0, 1.5, 2.0] {
        let exact_x = (1.0f64 + t).powf(1.0 / 3.0);
        let exact_v = (1.0f64 + t).powf(-2.0 / 3.0) / 3.0;
        assert_close(&format!("x({t})"), run.at("x", t), exact_x, 1e-5);
        assert_close(&format!("v({t})"), run.at("v", t), exact_v, 1e-5);
    }
}

/// A right-hand side through a function with an if, a for loop, a local and a call of
/// another algorithm function: `der(x) = -decay(x)`, `decay(x) = x + x^3/3` written out.
const DECAY: &str = r#"
model Decay "der(x) = -(x + x^3/3), der(z) = -2 z^2 through algorithm functions"
  function cube "x^3 by a loop"
    input Real x;
    output Real y = 1;
  algorithm
    for k in 1:3 loop
      y := y*x;
    end for;
  end cube;
  function decay
    input Real x;
    input Real c[2] "weights of x and x^3";
    output Real r;
  protected
    Real t;
  algorithm
    t := cube(x);
    if c[2] > 0 then
      r := c[1]*x + c[2]*t;
    else
      r := c[1]*x;
    end if;
  end decay;
  function twoSquares "2 u^2 and its double, as two outputs"
    input Real u;
    output Real a;
    output Real b;
  algorithm
    a := 2*u^2;
    b := 2*a;
  end twoSquares;
  parameter Real c[2] = {1, 1/3};
  Real x(start = 1, fixed = true);
  Real z(start = 1, fixed = true);
  Real w;
equation
  der(x) = -decay(x, c);
  w = twoSquares(z);
  der(z) = -w;
  annotation(experiment(StopTime = 1, Interval = 0.01, Tolerance = 1e-9));
end Decay;
"#;

fn translate_report(name: &str, source: &str) -> String {
    let dir = scratch_dir(name);
    let file = dir.join(format!("{name}.mo"));
    std::fs::write(&file, source).expect("writable scratch folder");
    let out = moss_command()
        .current_dir(&dir)
        .arg("translate")
        .arg(&file)
        .output()
        .expect("runs the moss binary");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "moss translate {name} failed:\n{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
    text
}

#[test]
fn right_hand_side_through_function_algorithms_has_a_symbolic_jacobian() {
    let report = translate_report("Decay", DECAY);
    let line = report
        .lines()
        .find(|l| l.contains("ODE Jacobian:"))
        .unwrap_or_else(|| panic!("no Jacobian line in:\n{report}"));
    assert!(line.contains("2x2"), "{line}");
    assert!(line.contains("symbolic"), "{line}");
}

/// The solution of `der(x) = -(x + x^3/3)` is `x^2 = 1 / ((1 + 1/3) e^(2t) - 1/3)` and
/// that of `der(z) = -2 z^2` is `z = 1 / (1 + 2t)`: the run with the symbolic Jacobian
/// (BDF uses it) follows them.
#[test]
fn stiff_solver_with_generated_jacobian_follows_the_closed_form() {
    let run = simulate_source("Decay", DECAY, &["--solver", "bdf"]);
    for t in [0.25f64, 0.5, 1.0] {
        let x = 1.0 / ((4.0 / 3.0) * (2.0 * t).exp() - 1.0 / 3.0f64).sqrt();
        assert_close(&format!("x({t})"), run.at("x", t), x, 1e-5);
        assert_close(
            &format!("z({t})"),
            run.at("z", t),
            1.0 / (1.0 + 2.0 * t),
            1e-5,
        );
    }
}

/// `oddPower(x, 3) = y` with `x = cos(t)` given by its own ODE: the acceleration of `y`
/// needs the constraint differentiated twice, i.e. the derivative of the generated
/// derivative function.
const TWICE_DIFFERENTIATED: &str = r#"
model TwiceDifferentiated "y = x^3 with x = cos(t): ay needs the second derivative"
  $ODD_POWER
  Real x(start = 1, fixed = true);
  Real vx(start = 0, fixed = true);
  Real y;
  Real vy;
  Real ay;
equation
  der(x) = vx;
  der(vx) = -x;
  der(y) = vy;
  der(vy) = ay;
  oddPower(x, 3) = y;
  annotation(experiment(StopTime = 3, Interval = 0.05, Tolerance = 1e-9));
end TwiceDifferentiated;
"#;

#[test]
fn index_three_constraint_uses_the_second_derivative() {
    let run = simulate_source(
        "TwiceDifferentiated",
        &with_odd_power(TWICE_DIFFERENTIATED),
        &[],
    );
    for t in [0.6f64, 1.2, 1.8, 2.4, 3.0] {
        let (c, s) = (t.cos(), t.sin());
        assert_close(&format!("y({t})"), run.at("y", t), c * c * c, 1e-5);
        assert_close(&format!("vy({t})"), run.at("vy", t), -3.0 * c * c * s, 1e-5);
        let ay = 6.0 * c * s * s - 3.0 * c * c * c;
        assert_close(&format!("ay({t})"), run.at("ay", t), ay, 1e-4);
    }
}

/// A multi-output function whose outputs feed the right-hand side (a call unit), and the
/// table interpolation that replaces table blocks (a matrix input).
const MULTI_OUTPUT: &str = r#"
model PolarDrift "a multi-output call and a table lookup in the right-hand side"
  function polar "radius and angle of (x, y), and a count"
    input Real x;
    input Real y;
    output Real r;
    output Integer n;
    output Real phi;
  algorithm
    r := sqrt(x^2 + y^2);
    n := 0;
    for k in 1:3 loop
      n := n + 1;
    end for;
    phi := atan2(y, x);
  end polar;
  parameter Real table[3, 2] = [0, 0; 1, 2; 2, 3];
  Real x(start = 1, fixed = true);
  Real y(start = 0.2, fixed = true);
  Real r;
  Integer n;
  Real phi;
equation
  (r, n, phi) = polar(x, y);
  der(x) = -y*r - 0.1*x*phi - MossTables.interpolate(table, 2, y, 1, 2);
  der(y) = x*r*n;
end PolarDrift;
"#;

/// The program of the last class of `source`, flattened and translated by the library.
fn translate_in_process(name: &str, source: &str) -> moss_symbolic::CausalProgram {
    let dir = scratch_dir(name);
    let file = dir.join(format!("{name}.mo"));
    std::fs::write(&file, source).expect("writable scratch folder");
    let opts = moss_frontend::LoadOptions {
        libs: Vec::new(),
        use_modelicapath: false,
        use_bundled: false,
    };
    let flat = moss_frontend::flatten_model(&opts, &file.to_string_lossy())
        .unwrap_or_else(|e| panic!("{name} does not flatten: {:?}", e.diagnostics));
    let _ = std::fs::remove_dir_all(&dir);
    moss_symbolic::translate(&flat.model)
        .unwrap_or_else(|e| panic!("{name} does not translate: {e:?}"))
}

/// Every column of the symbolic Jacobian (tangent program through the generated derivative
/// functions) against central differences of the right-hand side, at a few states.
fn check_jacobian_against_differences(name: &str, source: &str, points: &[Vec<f64>]) {
    use moss_codegen::ExecutableModel;
    let program = translate_in_process(name, source);
    let mut m = moss_codegen::Interpreter::new(program).expect("compiles");
    assert!(m.has_symbolic_jacobian(), "{name}: no symbolic Jacobian");
    m.initialize(0.0).expect("initializes");
    for x in points {
        let n = x.len();
        let rhs = |m: &mut moss_codegen::Interpreter, x: &[f64]| {
            let mut dx = vec![0.0; n];
            m.derivatives(0.0, x, &mut dx).expect("right-hand side");
            dx
        };
        for j in 0..n {
            let h = 1e-6 * (1.0 + x[j].abs());
            let (mut up, mut down) = (x.clone(), x.clone());
            up[j] += h;
            down[j] -= h;
            let (fu, fd) = (rhs(&mut m, &up), rhs(&mut m, &down));
            let mut seed = vec![0.0; n];
            seed[j] = 1.0;
            let mut column = vec![0.0; n];
            rhs(&mut m, x);
            m.jacobian_times(0.0, x, &seed, &mut column)
                .expect("tangent program runs");
            for i in 0..n {
                let difference = (fu[i] - fd[i]) / (2.0 * h);
                assert!(
                    (column[i] - difference).abs() <= 1e-6 * (1.0 + difference.abs()),
                    "{name} at {x:?}: J[{i}][{j}] = {} symbolic, {difference} by differences",
                    column[i]
                );
            }
        }
    }
}

#[test]
fn generated_derivatives_give_the_jacobian_of_the_right_hand_side() {
    check_jacobian_against_differences(
        "Decay",
        DECAY,
        &[vec![1.0, 1.0], vec![-0.7, 0.4], vec![2.5, -1.3]],
    );
    // y away from the table's breakpoints 0, 1, 2 (the interpolation has kinks there)
    check_jacobian_against_differences(
        "PolarDrift",
        MULTI_OUTPUT,
        &[vec![1.0, 0.2], vec![-0.6, 1.4], vec![0.3, 2.7]],
    );
}

/// An array-valued function with a `derivative` annotation whose result is differentiated
/// twice (MultiBody's `frame_b.r_0 = frame_a.r_0 + resolve1(R, r)` with `r_0` a state
/// candidate): the call, a unit of several outputs, is expanded into scalar equations before
/// index reduction, which then differentiates them. p = (cos t, sin t).
#[test]
fn array_call_with_derivative_annotation_is_differentiated_twice() {
    let source = r#"
model Circle
  function rotate
    input Real phi;
    input Real v[2];
    output Real y[2];
  algorithm
    y := {cos(phi)*v[1] - sin(phi)*v[2], sin(phi)*v[1] + cos(phi)*v[2]};
    annotation(derivative(noDerivative = v) = rotate_der);
  end rotate;
  function rotate_der
    input Real phi;
    input Real v[2];
    input Real dphi;
    output Real dy[2];
  algorithm
    dy := {(-sin(phi)*v[1] - cos(phi)*v[2])*dphi, (cos(phi)*v[1] - sin(phi)*v[2])*dphi};
  end rotate_der;
  Real phi = time;
  Real p[2];
  Real vel[2];
  Real acc[2];
equation
  p = rotate(phi, {1, 0});
  vel = der(p);
  acc = der(vel);
end Circle;
"#;
    let run = simulate_source("Circle", source, &["--stop-time", "2"]);
    for t in [0.5, 1.0, 1.5, 2.0] {
        let f = |name: &str, want: f64| {
            assert_close(&format!("{name} at {t}"), run.at(name, t), want, 1e-6)
        };
        f("p[1]", f64::cos(t));
        f("vel[1]", -f64::sin(t));
        f("vel[2]", f64::cos(t));
        f("acc[1]", -f64::cos(t));
        f("acc[2]", -f64::sin(t));
    }
}

const ANNOTATED_SECOND_DERIVATIVE: &str = r#"
model AnnotatedSecondDerivative "x1 = f(t + 1, w) twice differentiated through annotations"
  function f
    input Real u;
    input Real w;
    output Real y;
  algorithm
    y := w * u^3;
    annotation(derivative(noDerivative = w) = f_d);
  end f;
  function f_d
    input Real u;
    input Real w;
    input Real du;
    output Real dy;
  algorithm
    dy := 3 * w * u^2 * du;
    annotation(derivative(noDerivative = w, order = 1) = f_dd);
  end f_d;
  function f_dd "inputs of f_d, then the derivative of its du only"
    input Real u;
    input Real w;
    input Real du;
    input Real ddu;
    output Real ddy;
  algorithm
    ddy := 6 * w * u * du^2 + 3 * w * u^2 * ddu;
  end f_dd;
  parameter Real w = 2;
  Real x[3];
equation
  x[1] = f(time + 1, w);
  der(x[1:2]) = x[2:3];
  annotation(experiment(StopTime = 1, Interval = 0.5));
end AnnotatedSecondDerivative;
"#;

/// The derivative named on a first derivative (`f_d`, `derivative(order = 1) = f_dd`) takes
/// the inputs of `f_d` and one more derivative of its derivative inputs only (spec 12.7.1),
/// so `f_dd` is called with 4 arguments: x3 = 6 w (t + 1).
#[test]
fn derivative_annotated_on_the_first_derivative_takes_the_new_derivatives_only() {
    let run = simulate_source(
        "AnnotatedSecondDerivative",
        ANNOTATED_SECOND_DERIVATIVE,
        &[],
    );
    assert_close("x[2] at t = 1", run.last("x[2]"), 3.0 * 2.0 * 4.0, 1e-6);
    assert_close("x[3] at t = 1", run.last("x[3]"), 6.0 * 2.0 * 2.0, 1e-6);
}

/// Partial derivatives of functions (spec 12.7.2): `der(g, T)` of a Gibbs-like function
/// with a loop and an array input, the second partial derivative `der(g_T, p)` built on it,
/// and a two-output function, used in equations with time-varying arguments and checked
/// against the closed forms.
const PARTIAL_DERIVATIVES: &str = r#"
model PartialDerivatives
  function g "c[1] p^2 T + c[2] T^3 by a loop over the coefficients"
    input Real p;
    input Real T;
    input Real c[2];
    output Real y;
  protected
    Real terms[2];
  algorithm
    terms := {p^2*T, T^3};
    y := 0;
    for k in 1:2 loop
      y := y + c[k]*terms[k];
    end for;
  end g;
  function g_T = der(g, T);
  function g_Tp = der(g_T, p);
  function polar
    input Real r;
    input Real phi;
    output Real x;
    output Real y;
  algorithm
    x := r*cos(phi);
    y := r*sin(phi);
  end polar;
  function polar_phi = der(polar, phi);
  parameter Real c[2] = {2, 0.5};
  Real p = 1 + time;
  Real T = 2 - time;
  Real dg_dT = g_T(p, T, c);
  Real d2g_dTdp = g_Tp(p, T, c);
  Real dx_dphi;
  Real dy_dphi;
equation
  (dx_dphi, dy_dphi) = polar_phi(2, time);
  annotation(experiment(StopTime = 1, Interval = 0.1));
end PartialDerivatives;
"#;

#[test]
fn partial_derivatives_of_functions_match_their_closed_forms() {
    let run = simulate_source("PartialDerivatives", PARTIAL_DERIVATIVES, &[]);
    for t in [0.0, 0.3, 0.7, 1.0] {
        let (p, temp) = (1.0 + t, 2.0 - t);
        assert_close(
            &format!("dg_dT({t})"),
            run.at("dg_dT", t),
            2.0 * p * p + 1.5 * temp * temp,
            1e-9,
        );
        assert_close(
            &format!("d2g_dTdp({t})"),
            run.at("d2g_dTdp", t),
            4.0 * p,
            1e-9,
        );
        assert_close(
            &format!("dx_dphi({t})"),
            run.at("dx_dphi", t),
            -2.0 * t.sin(),
            1e-9,
        );
        assert_close(
            &format!("dy_dphi({t})"),
            run.at("dy_dphi", t),
            2.0 * t.cos(),
            1e-9,
        );
    }
}

/// `der(f, x)` of something that is no input of `f`, or no scalar Real input, is a located
/// error that names the function.
#[test]
fn partial_derivative_with_respect_to_a_non_input_is_an_error() {
    let f = r#"  function f
    input Real x;
    input Integer n;
    output Real y;
  algorithm
    y := x^n;
  end f;
"#;
    for (wrt, message) in [
        ("z", "`z` is not an input of `BadPartial.f`"),
        ("n", "`n` is not a scalar Real input of `BadPartial.f`"),
    ] {
        let dir = scratch_dir("partial_derivative_error");
        let path = dir.join("BadPartial.mo");
        let text = format!(
            "model BadPartial\n{f}  function f_d = der(f, {wrt});\n  Real a = f_d(time, 2);\nend BadPartial;\n"
        );
        std::fs::write(&path, text).expect("write model");
        let out = moss_command()
            .args(["check", path.to_str().expect("utf-8")])
            .output()
            .expect("run moss");
        let text = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{text}");
        assert!(text.contains(message), "{text}");
        assert!(text.contains("BadPartial.mo:9:"), "{text}");
    }
}

/// A right-hand side through a two-output function that stays a call (its `while` loop keeps
/// it from being inlined).
const LOOPED_POLAR: &str = r#"
model LoopedPolar
  function polar "radius and angle of (x, y), the radius by Heron's iteration"
    input Real x;
    input Real y;
    output Real r;
    output Real phi;
  protected
    Real s;
    Integer k;
  algorithm
    s := x^2 + y^2;
    r := 1 + s;
    k := 0;
    while k < 40 loop
      r := 0.5*(r + s/r);
      k := k + 1;
    end while;
    phi := atan2(y, x);
  end polar;
  Real x(start = 1, fixed = true);
  Real y(start = 0.2, fixed = true);
  Real r;
  Real phi;
equation
  (r, phi) = polar(x, y);
  der(x) = -y*r - 0.1*x*phi;
  der(y) = x*r + phi;
end LoopedPolar;
"#;

/// The tangents of a multi-output call's outputs come from one call of its derivative (a
/// unit in the tangent program), not one call per output: a device function of Spice3 has a
/// dozen outputs, and one call per output made the tangent program of a four-bit adder too
/// large to use.
#[test]
fn tangents_of_a_multi_output_call_come_from_one_derivative_call() {
    use moss_symbolic::program::{Block, PExpr};
    fn calls_in(e: &PExpr, func: &str) -> usize {
        match e {
            PExpr::Call { func: f, args } => {
                usize::from(f == func) + args.iter().map(|a| calls_in(a, func)).sum::<usize>()
            }
            PExpr::Arith(_, a, b) | PExpr::And(a, b) | PExpr::Or(a, b) => {
                calls_in(a, func) + calls_in(b, func)
            }
            PExpr::Rel { lhs, rhs, .. } => calls_in(lhs, func) + calls_in(rhs, func),
            PExpr::Neg(a) | PExpr::Not(a) => calls_in(a, func),
            PExpr::If(c, a, b) => calls_in(c, func) + calls_in(a, func) + calls_in(b, func),
            PExpr::Array(items) => items.iter().map(|a| calls_in(a, func)).sum(),
            _ => 0,
        }
    }
    let program = translate_in_process("LoopedPolar", LOOPED_POLAR);
    let jacobian = program.ode_jacobian.expect("a symbolic Jacobian");
    let derivative = "LoopedPolar.polar.$der";
    let (mut units, mut in_expressions) = (0, 0);
    for b in &jacobian.blocks {
        match b {
            Block::CallOutputs { func, outputs, .. } if func == derivative => {
                units += 1;
                assert_eq!(outputs.iter().flatten().count(), 2, "{outputs:?}");
            }
            Block::Assign { expr, .. } => in_expressions += calls_in(expr, derivative),
            _ => {}
        }
    }
    assert_eq!((units, in_expressions), (1, 0), "{:#?}", jacobian.blocks);
    check_jacobian_against_differences(
        "LoopedPolar",
        LOOPED_POLAR,
        &[vec![1.0, 0.2], vec![-0.6, 1.4], vec![0.3, -2.7]],
    );
}
