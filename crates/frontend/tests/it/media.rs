//! Replaceable medium packages in the style of Modelica.Media (fixture `MediaLike.mo`): a
//! partial package whose constants, record types and functions are completed by the
//! packages that extend it, used through `replaceable package Medium` redeclared at
//! different levels. Names in the inherited text are looked up in the extending package
//! (with its extends modifiers), and outside it in the classes enclosing the text.

use crate::common;
use common::*;
use moss_frontend::FlatModel;

fn function_text(m: &FlatModel, name: &str) -> String {
    let text = moss_frontend::print::print_model(m);
    let start = format!("function '{name}'");
    let Some(at) = text.find(&start) else {
        panic!("no function {name} in\n{text}")
    };
    let rest = &text[at..];
    let end = rest.find("\nend ").unwrap_or(rest.len());
    rest[..end].to_string()
}

/// The medium's equations, written in the partial packages, with the constants of `Water`.
fn assert_water_medium(eqs: &[String], prefix: &str) {
    for e in [
        format!("'{prefix}medium.MM' = 0.018;"),
        format!("'{prefix}medium.h' = 4184 * ('{prefix}medium.T' - 273.15);"),
    ] {
        assert!(eqs.contains(&e), "missing `{e}` in {eqs:#?}");
    }
}

#[test]
fn constants_given_by_the_extends_modifier_of_a_local_alias() {
    let m = flat("MediaLike.Direct");
    let eqs = equations(&m);
    assert_water_medium(&eqs, "");
    assert!(eqs.contains(&"MM = 0.018;".to_string()), "{eqs:#?}");
    // A type of the partial package takes the medium name of the concrete one.
    assert_eq!(
        declaration(&m, "medium.T"),
        "Real 'medium.T'(quantity = \"Temperature.water\", unit = \"K\");"
    );
}

#[test]
fn medium_redeclared_in_an_extends_modifier() {
    let m = flat("MediaLike.OneLevel");
    let eqs = equations(&m);
    assert_water_medium(&eqs, "");
    // A record constant set by the extends modifier of the concrete package.
    assert!(eqs.contains(&"Tc = 647;".to_string()), "{eqs:#?}");
    // The record type redeclared in the concrete package is the one the functions return.
    assert!(
        eqs.contains(
            &"('state.p', 'state.T') = 'MediaLike.Water.setState_pT'('medium.p', 'medium.T');"
                .to_string()
        ),
        "{eqs:#?}"
    );
}

#[test]
fn medium_redeclared_two_levels_up() {
    let m = flat("MediaLike.Top");
    let eqs = equations(&m);
    assert_water_medium(&eqs, "two.user.");
    assert!(
        eqs.contains(&"'two.user.Tc' = 647;".to_string()),
        "{eqs:#?}"
    );
    assert!(eqs.contains(
        &"('two.user.smooth.p', 'two.user.smooth.T') = 'MediaLike.Water.setSmoothState'(time - 0.5, 'two.user.state.p', 'two.user.state.T', 200000.0, 350);"
            .to_string()
    ), "{eqs:#?}");
}

#[test]
fn inherited_functions_call_the_functions_of_the_concrete_package() {
    let m = flat("MediaLike.OneLevel");
    // Not replaced itself, but its calls reach the replacements and the constants of `Water`.
    let f = function_text(&m, "MediaLike.Water.specificEnthalpy_pT");
    assert!(
        f.contains("h := 'MediaLike.Water.specificEnthalpy'(p, T, 1);"),
        "{f}"
    );
    let f = function_text(&m, "MediaLike.Water.specificEnthalpy");
    assert!(
        f.contains("h := scale * 4184 * ('state.T' - 273.15);"),
        "{f}"
    );
    // `Utilities` is only visible from where the inherited text is written.
    let f = function_text(&m, "MediaLike.Water.setSmoothState");
    assert!(
        f.contains(
            "'state.p' := 'MediaLike.Interfaces.Utilities.choose'(x, 'state_a.p', 'state_b.p');"
        ),
        "{f}"
    );
    assert!(f.contains("input Real 'state_a.T';"), "{f}");
}

#[test]
fn short_class_modifier_of_a_medium_reaches_its_inherited_classes() {
    let m = flat("MediaLike.Modified");
    let eqs = equations(&m);
    assert!(
        eqs.contains(&"'medium.h' = 1000 * ('medium.T' - 273.15);".to_string()),
        "{eqs:#?}"
    );
    assert!(
        eqs.contains(&"'medium.MM' = 0.018;".to_string()),
        "{eqs:#?}"
    );
}

#[test]
fn the_partial_medium_itself_is_refused_with_a_location() {
    let e = match moss_frontend::flatten_model(
        &moss_frontend::LoadOptions {
            libs: vec![fixtures()],
            use_modelicapath: false,
            use_bundled: true,
        },
        "MediaLike.UseMedium",
    ) {
        Ok(_) => panic!("the partial medium has no values"),
        Err(e) => moss_syntax::diag::render_all(&e.diagnostics, &e.sources),
    };
    assert!(
        e.contains("error: `medium` is declared with the partial class `MediaLike.Interfaces.PartialMedium.BaseProperties`"),
        "{e}"
    );
    // Located at the declaration in `UseMedium`.
    let text = std::fs::read_to_string(fixtures().join("MediaLike.mo")).expect("fixture");
    let line = 1 + text
        .lines()
        .position(|l| l == "    Medium.BaseProperties medium;")
        .expect("declaration in the fixture");
    assert!(e.contains(&format!("MediaLike.mo:{line}:5")), "{e}");
}

#[test]
fn inputs_added_by_function_extends_come_after_the_inherited_ones() {
    let m = flat("MediaLike.OneLevel");
    let eqs = equations(&m);
    assert!(
        eqs.contains(
            &"h3 = 'MediaLike.Water.specificEnthalpy'('state.p', 'state.T', 1);".to_string()
        ),
        "{eqs:#?}"
    );
    let f = function_text(&m, "MediaLike.Water.specificEnthalpy");
    let state = f.find("input Real 'state.T';").expect("state input");
    let scale = f.find("input Real scale = 1;").expect("scale input");
    assert!(state < scale, "{f}");
}

#[test]
fn array_called_as_a_function_is_the_array_constructor() {
    let m = flat_text(
        "ArrayCall",
        "package ArrayCall
           constant Real[3] n = array(1, 2, 3);
           function f
             input Real x;
             output Real y;
           protected
             Real c[2] = array(x, 2*x);
           algorithm
             y := c[1] + c[2];
           end f;
         end ArrayCall;
         model M
           parameter Integer k = size(ArrayCall.n, 1);
           Real x[k] = ArrayCall.n;
           Real y = ArrayCall.f(time);
         end M;",
    );
    let m = match m {
        Ok(m) => m,
        Err(e) => panic!("{e}"),
    };
    let eqs = equations(&m);
    assert!(eqs.contains(&"'x[3]' = 3;".to_string()), "{eqs:#?}");
    let f = function_text(&m, "ArrayCall.f");
    assert!(f.contains("{x, 2 * x}"), "{f}");
}

#[test]
fn if_bindings_with_known_conditions_are_no_cycle() {
    let model = |cond: &str| {
        format!(
            "model StartValues
               parameter Real p = 2;
               parameter Boolean use_T = {cond};
               parameter Real T_start = if use_T then 300 else h_start/1000;
               parameter Real h_start = if use_T then 1000*T_start else 3e5;
               Real x(start = T_start, fixed = true);
             equation
               der(x) = -x;
             end StartValues;"
        )
    };
    assert!(flat_text("StartValues", &model("true")).is_ok());
    assert!(flat_text("StartValues", &model("false")).is_ok());
    // A condition that is not known keeps both branches: then it is a cycle.
    let e = match flat_text("StartValues", &model("p > 1")) {
        Ok(_) => panic!("the bindings are cyclic"),
        Err(e) => e,
    };
    assert!(e.contains("depends on itself"), "{e}");
}

#[test]
fn a_class_declared_again_with_another_annotation_is_the_inherited_one() {
    let m = flat_text(
        "Again",
        "package Again
           package P constant Real c = 2; end P;
           partial model A
             replaceable package Medium = P \"medium\" annotation(Dialog(tab = \"a\"));
           end A;
           model B
             extends A;
             replaceable package Medium = P \"the medium\";
             Real x = Medium.c;
           end B;
         end Again;
         model M
           extends Again.B;
         end M;",
    );
    let m = match m {
        Ok(m) => m,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(equations(&m), ["x = 2;"]);
}

#[test]
fn base_of_model_extends_in_the_concrete_package_sees_its_constants() {
    // `Mixture` has its own `redeclare model extends BaseProperties`: the inherited
    // `BaseProperties` of the partial package sizes `X` by the substances of `Mixture`.
    let m = flat("MediaLike.MixtureUser");
    let eqs = equations(&m);
    for e in [
        "'medium.X[2]' = 0.5;",
        "'medium.Xsum' = 'medium.X[1]' + 'medium.X[2]';",
        "'medium.MM' = 0.03;",
    ] {
        assert!(eqs.contains(&e.to_string()), "missing `{e}` in {eqs:#?}");
    }
}

#[test]
fn record_array_constants_indexed_in_function_loops() {
    let m = flat("MediaLike.MixtureUser");
    let f = function_text(&m, "MediaLike.Mixture.maxCriticalTemperature");
    assert!(
        f.contains("T := max(T, if i == 1 then 400 else 500);"),
        "{f}"
    );
    // A whole element as a record argument: its fields, chosen by the loop index.
    let f = function_text(&m, "MediaLike.Mixture.totalMolarMass");
    assert!(
        f.contains("'MediaLike.Mixture.molarMassFrom'(if i == 1 then 0.03 else 0.03, if i == 1 then 400 else 500)"),
        "{f}"
    );
}

#[test]
fn function_redeclared_with_modifiers_takes_them_from_the_instance() {
    // As the Fluid pumps: `redeclare function flowCharacteristic = quadraticFlow(V_flow_nominal
    // = {0, V_flow_op})` in an extends modifier, where `V_flow_op` is a parameter of the pump.
    let m = flat_text(
        "Owner",
        "package Owner
           function quadratic
             input Real x;
             input Real k = 1;
             output Real y;
           algorithm
             y := k*x^2;
           end quadratic;
           partial model Base
             replaceable function f = quadratic;
             Real y = f(time);
           end Base;
           model Pump
             parameter Real k0 = 2;
             final parameter Real kop = 3*k0;
             extends Base(redeclare function f = quadratic(k = kop));
           end Pump;
         end Owner;
         model M
           Owner.Pump p(k0 = 5);
         end M;",
    );
    let m = match m {
        Ok(m) => m,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(equations(&m), ["'p.y' = 'Owner.Pump.f'(time, 'p.kop');"]);
}

/// A constant of a partial package (`h_default = specificEnthalpy_pTX(...)`, calling a
/// function that calls a replaceable one) read through a package that extends it: the
/// functions are the extending package's, at every level — the one redeclared in an extends
/// modifier, the one redeclared in the body of an intermediate package, and the constants
/// those functions read are the extending package's too.
#[test]
fn inherited_package_constant_uses_the_redeclared_functions() {
    let text = r#"
package Pk
  partial package P
    constant Real p0 = 1;
    constant Real k;
    replaceable partial function f
      input Real x;
      output Real y;
    end f;
    replaceable function g
      input Real x;
      output Real y;
    algorithm
      y := f(x) + 1;
    end g;
    replaceable function h
      input Real x;
      output Real y;
    algorithm
      y := x;
    end h;
    constant Real c = g(p0);
    constant Real d = h(p0);
  end P;
  partial package B
    extends P(p0 = 3);
    redeclare function extends f
    algorithm
      y := k*x;
    end f;
    redeclare function h
      input Real x;
      output Real y;
    algorithm
      y := 10*k*x;
    end h;
  end B;
  function Twice
    input Real x;
    output Real y;
  algorithm
    y := 2*x;
  end Twice;
  package Q
    extends B(k = 2);
  end Q;
  package R
    extends P(k = 5, redeclare function f = Twice);
  end R;
end Pk;
model M
  Real a = Pk.Q.c;
  Real b = Pk.Q.d;
  Real e = Pk.R.c;
  Real q = Pk.Q.g(1);
end M;
"#;
    let m = flat_text("Pk", text).expect("flattens");
    let eqs = equations(&m);
    for e in ["a = 7;", "b = 60;", "e = 3;", "q = 3;"] {
        assert!(eqs.contains(&e.to_string()), "missing `{e}` in {eqs:#?}");
    }
}

/// A replaceable function declared as a short class with modifiers in a base model
/// (`replaceable function eff = Chars.constant(eta = 0.8)`), called from the base model's
/// equations in an instance of a model that extends it from another package: the short
/// class's base is looked up where it is written, not from the derived model.
#[test]
fn inherited_short_function_definition_finds_its_base_where_it_is_written() {
    let text = r#"
package Lib
  package Base
    package Chars
      function constant_
        input Real v;
        input Real eta = 0.5;
        output Real y;
      algorithm
        y := eta + 0*v;
      end constant_;
    end Chars;
    partial model PartialPump
      replaceable function eff = Chars.constant_(eta = 0.8);
      Real e = eff(time);
    end PartialPump;
  end Base;
  model Pump
    extends Base.PartialPump;
  end Pump;
end Lib;
model M
  Lib.Pump p;
end M;
"#;
    let m = flat_text("Lib", text).expect("flattens");
    let eqs = equations(&m);
    assert!(
        eqs.iter()
            .any(|e| e.starts_with("'p.e' = ") && e.contains("0.8")),
        "{eqs:#?}"
    );
}

/// A package's extends clause modifies an inherited type (`extends PartialMedium(
/// SpecificEnthalpy(start = 1e5, nominal = 5e5))`): every use of the type through the
/// package carries the modifier, merged with the type's own attributes, also inside records
/// and functions of the package, with the package's constants evaluated (they are no
/// variables of the model); the base package's type itself is unchanged.
#[test]
fn extends_modifier_of_an_inherited_type_applies_to_its_uses() {
    let text = r#"
package Pm
  partial package P
    type T = Real(min = 0, nominal = 10, unit = "J/kg");
    record State
      T h;
    end State;
  end P;
  package Q
    constant Real s0 = 5;
    extends P(T(start = s0, nominal = 20));
  end Q;
end Pm;
model M
  Pm.Q.T x = 1;
  Pm.Q.State s(h = 2);
  Pm.P.T y = 3;
end M;
"#;
    let m = flat_text("Pm", text).expect("flattens");
    assert_eq!(
        declaration(&m, "x"),
        "Real x(unit = \"J/kg\", min = 0, start = 5, nominal = 20);"
    );
    assert!(
        declaration(&m, "s.h").contains("start = 5, nominal = 20"),
        "{}",
        declaration(&m, "s.h")
    );
    assert_eq!(
        declaration(&m, "y"),
        "Real y(unit = \"J/kg\", min = 0, nominal = 10);"
    );
}
