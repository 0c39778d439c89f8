//! `inverse` annotations (spec 12.8): an equation `h = h_T(p, props, T)` solved for `T` uses
//! the inverse the function offers, `T = T_h(p, props, h)`, instead of iterating on `T`. The
//! MSL declares such pairs for media (`Incompressible.TableBased`, ideal gases) and for the
//! pressure losses of `Fluid.Dissipation` and `Fluid.Fittings`.

use crate::library_support;

use library_support::{assert_close, moss_command, scratch_dir, simulate_source};

/// Enthalpy of a liquid with a linearly rising heat capacity and its closed-form inverse,
/// with a record input and the inverse's arguments named in another order.
const ENTHALPY: &str = r#"
model InverseAnnotated
  record Props
    Real cp0;
    Real a;
  end Props;
  function h_T "enthalpy with a temperature-dependent heat capacity"
    input Real p;
    input Props props;
    input Real T;
    output Real h;
  algorithm
    h := props.cp0*(T - 273.15) + props.a*(T - 273.15)^2 + 1e-3*p;
    annotation(Inline = false, inverse(T = T_h(props = props, h = h, p = p)));
  end h_T;
  function T_h
    input Real p;
    input Props props;
    input Real h;
    output Real T;
  protected
    Real c;
  algorithm
    c := 1e-3*p - h;
    T := 273.15 + (-props.cp0 + sqrt(props.cp0^2 - 4*props.a*c))/(2*props.a);
  end T_h;
  parameter Props props(cp0 = 4184, a = 0.5);
  parameter Real p = 1e5;
  Real h = 1e5 + 4e5*time;
  Real T;
  Real h2 "the forward direction: a plain call";
equation
  h = h_T(p, props, T);
  h2 = h_T(p, props, T + 1);
end InverseAnnotated;
"#;

fn dump(name: &str, source: &str) -> String {
    let dir = scratch_dir(name);
    let file = dir.join(format!("{name}.mo"));
    std::fs::write(&file, source).expect("writes the model");
    let out = moss_command()
        .args(["translate", "--dump"])
        .arg(&file)
        .output()
        .expect("runs the moss binary");
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

#[test]
fn an_equation_solved_for_an_input_uses_the_declared_inverse() {
    let text = dump("InverseAnnotated", ENTHALPY);
    let simulation = text
        .split("simulation blocks")
        .nth(1)
        .expect("the dump lists the simulation blocks");
    assert!(
        simulation.contains("T := InverseAnnotated.T_h(p, props.cp0, props.a, h)"),
        "T is not assigned from the inverse:\n{simulation}"
    );
    assert!(
        !simulation.contains("solve"),
        "an equation is still iterated:\n{simulation}"
    );
    let run = simulate_source("InverseAnnotated", ENTHALPY, &["--stop-time", "1"]);
    for t in [0.0, 0.37, 1.0] {
        let (h, temp) = (run.at("h", t), run.at("T", t));
        let dt = temp - 273.15;
        assert_close(
            &format!("h_T(T) at t = {t}"),
            4184.0 * dt + 0.5 * dt * dt + 100.0,
            h,
            1e-6,
        );
        let dt1 = dt + 1.0;
        assert_close(
            &format!("h2 at t = {t}"),
            run.at("h2", t),
            4184.0 * dt1 + 0.5 * dt1 * dt1 + 100.0,
            1e-6,
        );
    }
}

/// An inverse whose arguments are not plain formals of the function cannot be mapped; the
/// annotation is only an offer (spec 12.8), so the equation is solved numerically.
#[test]
fn an_inverse_that_cannot_be_mapped_leaves_the_equation_to_newton() {
    let source = ENTHALPY.replace(
        "inverse(T = T_h(props = props, h = h, p = p))",
        "inverse(T = T_h(props = props, h = 2*h, p = p))",
    );
    let text = dump("InverseAnnotated", &source);
    assert!(!text.contains("T_h("), "the inverse is used:\n{text}");
    let run = simulate_source("InverseAnnotated", &source, &["--stop-time", "1"]);
    let dt = run.at("T", 1.0) - 273.15;
    assert_close(
        "h_T(T) at t = 1",
        4184.0 * dt + 0.5 * dt * dt + 100.0,
        5e5,
        1e-6,
    );
}
