//! Structural parameters, conditional components, inner/outer, records.

use crate::common;
use common::*;
use moss_frontend::stats::stats;

#[test]
fn disabled_conditional_component_drops_its_connections() {
    let m = flat("Structure.Optional");
    assert!(!var_names(&m).iter().any(|n| n.starts_with("g.")));
    assert_eq!(
        equations(&m),
        [
            "'r.p.v' - 'r.n.v' = 'r.R' * 'r.p.i';",
            "'r.p.i' + 'r.n.i' = 0;",
            // the if-equation on a parameter keeps only the selected branch
            "'r.p.v' = 2;",
            "'r.n.v' = 0;",
            // unconnected flows are zero
            "'r.p.i' = 0;",
            "'r.n.i' = 0;"
        ]
    );
    let s = stats(&m);
    assert_eq!((s.equations, s.variables), (6, 4));
}

#[test]
fn outer_components_refer_to_the_inner_one() {
    let m = flat("Structure.World");
    assert_eq!(var_names(&m), ["env.T", "u1.t", "u2.t"]);
    assert_eq!(equations(&m), ["'u1.t' = 'env.T';", "'u2.t' = 'env.T';"]);
}

#[test]
fn missing_inner_gets_a_default_inner_with_a_warning() {
    let r = moss_frontend::flatten_model(
        &moss_frontend::LoadOptions {
            libs: vec![fixtures()],
            use_modelicapath: false,
            use_bundled: false,
        },
        "Structure.NoInner",
    )
    .expect("flattens with a default inner");
    assert_eq!(var_names(&r.model), ["u.t", "env.T"]);
    assert_eq!(equations(&r.model), ["'u.t' = 'env.T';"]);
    let w = moss_syntax::diag::render_all(&r.warnings, &r.model.sources);
    assert!(w.starts_with("warning: no `inner` declaration for `outer env`; a default `inner Env env` is added at the top level\n"), "{w}");
}

#[test]
fn records_are_scalarized_and_constructors_fill_fields() {
    let m = flat("Structure.Records");
    assert_eq!(
        equations(&m),
        ["'a.x' = 1;", "'a.y' = 2;", "'b.x' = 3;", "'b.y' = 4;"]
    );
    assert_eq!(declaration(&m, "c.x"), "parameter Real 'c.x' = 5;");
}

/// A connector with more potential than flow variables is rejected (spec 9.3.1), at the
/// component that uses it.
#[test]
fn unbalanced_connector_is_an_error() {
    let e = flat_error("Structure.UsesUnbalanced");
    assert!(
        e.starts_with("error: connector `Structure.Unbalanced` is not balanced: 1 flow and 2 potential variables\n"),
        "{e}"
    );
    assert!(e.contains("Structure.mo:72:5"), "{e}");
    assert!(
        e.contains("help: a connector needs one flow variable"),
        "{e}"
    );
}

/// `connector PairOutput = output Pair` makes a connector of a record (as complex signals
/// are declared): its instances can be connected, field by field.
#[test]
fn short_connector_class_of_a_record_is_a_connector() {
    let m = flat_text(
        "Signals",
        "model Signals
  record Pair
    Real a;
    Real b;
  end Pair;
  connector PairInput = input Pair;
  connector PairOutput = output Pair;
  block Source
    PairOutput y;
  equation
    y.a = time;
    y.b = 2*time;
  end Source;
  block Sink
    PairInput u;
    Real s = u.a + u.b;
  end Sink;
  Source src;
  Sink snk;
equation
  connect(src.y, snk.u);
end Signals;
",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let eqs = equations(&m);
    for e in ["'src.y.a' = 'snk.u.a';", "'src.y.b' = 'snk.u.b';"] {
        assert!(eqs.contains(&e.to_string()), "{e} missing in {eqs:#?}");
    }
}

/// A redeclaration of a conditional component keeps the original condition (spec 4.4.5), as
/// the MSL machines do with `redeclare ThermalAmbientDCPM thermalAmbient(...)` of a
/// `thermalAmbient ... if not useThermalPort`: with the condition lost, the internal ambient
/// and the external one both fixed the port temperatures.
#[test]
fn redeclared_conditional_component_keeps_its_condition() {
    let text = r#"
model Test
  model Ambient
    Real T = 293.15;
  end Ambient;
  model HotAmbient
    extends Ambient(T = 350);
    parameter Real extra = 1;
  end HotAmbient;
  partial model Machine
    parameter Boolean useThermalPort = false;
    replaceable Ambient ambient if not useThermalPort;
    Real heat = 1;
  end Machine;
  model DCMachine
    extends Machine(redeclare HotAmbient ambient(extra = 2));
  end DCMachine;
  DCMachine internal;
  DCMachine external_(useThermalPort = true);
end Test;
"#;
    let m = flat_text("Test", text).expect("flattens");
    let names = var_names(&m);
    assert!(names.iter().any(|n| n == "internal.ambient.T"), "{names:?}");
    assert!(
        names.iter().any(|n| n == "internal.ambient.extra"),
        "{names:?}"
    );
    assert!(
        !names.iter().any(|n| n.starts_with("external_.ambient")),
        "the disabled redeclared component is gone: {names:?}"
    );
}

/// Spec 5.6.1: an element inherited twice must be identical after modification. The MSL's
/// `SimpleGenericOrifice` extends one base with `m_flow(stateSelect = s)` and another that
/// declares `m_flow(..., stateSelect = s)`: identical. A real difference is still an error.
#[test]
fn elements_inherited_twice_are_compared_after_modification() {
    let ok = r#"
model Twice
  partial model A
    parameter Boolean steady = true;
    Real m(start = 1);
  end A;
  partial model B
    parameter Boolean steady = true;
    Real m(start = 1, stateSelect = if steady then StateSelect.default else StateSelect.prefer);
  end B;
  model C
    extends A(m(stateSelect = if steady then StateSelect.default else StateSelect.prefer));
    extends B;
  equation
    der(m) = -m;
  end C;
  C c;
end Twice;
"#;
    let m = flat_text("Twice", ok).expect("identical after modification");
    assert!(var_names(&m).iter().any(|n| n == "c.m"));
    let bad = ok.replace(
        "else StateSelect.prefer));\n    extends B;",
        "else StateSelect.avoid));\n    extends B;",
    );
    let e = flat_text("Twice", &bad).expect_err("different after modification");
    assert!(
        e.contains("`m` is inherited twice with different declarations"),
        "{e}"
    );
}
