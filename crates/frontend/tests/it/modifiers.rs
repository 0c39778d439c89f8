//! Modifiers (spec chapter 7): extends with modifiers, outer modifiers win, final,
//! redeclaration of components and classes.

use crate::common;
use common::*;

#[test]
fn outer_modifiers_override_extends_modifiers() {
    let m = flat("Modifiers.Outer");
    assert_eq!(declaration(&m, "d.k"), "parameter Real 'd.k' = 7;");
    assert_eq!(declaration(&m, "d.m"), "parameter Real 'd.m' = 3;");
    // extends Base(x(start = 2)) overrides the declaration's start = 1; nominal is kept.
    assert_eq!(
        declaration(&m, "d.x"),
        "Real 'd.x'(start = 2, nominal = 10);"
    );
    assert_eq!(declaration(&m, "d.p"), "parameter Real 'd.p' = 'd.m' * 2;");
    assert_eq!(equations(&m), ["der('d.x') = -'d.k' * 'd.x';"]);
}

#[test]
fn redeclared_component_and_class_use_the_new_type() {
    let m = flat("Modifiers.Redeclared");
    assert_eq!(
        equations(&m),
        [
            "'blk.y' = 2 * 'blk.g' * 'blk.u';",
            "'other.y' = 2 * 'other.g' * 'other.u';",
            "'blk.u' = time;",
            "'other.u' = time;"
        ]
    );
    // With `constrainedby`, the original declaration's modifier (g = 3) is not carried over.
    assert_eq!(declaration(&m, "blk.g"), "parameter Real 'blk.g' = 2;");
    assert_eq!(declaration(&m, "other.g"), "parameter Real 'other.g' = 5;");
}

#[test]
fn final_modifier_is_applied() {
    let m = flat("Modifiers.WithFinal");
    assert_eq!(declaration(&m, "b.k"), "parameter Real 'b.k' = 3;");
}

#[test]
fn evaluate_annotation_is_recorded_on_parameters_only() {
    let m = flat_text(
        "EvaluateFlag",
        "model Cap
  parameter Real C = 1e-6 annotation(Evaluate=true);
  parameter Real G = 2 annotation(Evaluate=false, Dialog(group=\"x\"));
  Real v annotation(Evaluate=true);
equation
  C*der(v) = -G*v;
end Cap;
model EvaluateFlag
  parameter Real c0 = 0 \"zero capacitance\" annotation(Evaluate=true);
  Cap cap(final C = c0);
end EvaluateFlag;",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let flag = |name: &str| {
        m.variables
            .iter()
            .find(|v| v.name == name)
            .unwrap_or_else(|| panic!("no variable {name}"))
            .evaluate
    };
    assert!(flag("c0"));
    // declared with the annotation in `Cap`; binding it by a modifier keeps the flag
    assert!(flag("cap.C"));
    assert!(!flag("cap.G"));
    // not a parameter: nothing to evaluate
    assert!(!flag("cap.v"));
    assert_eq!(
        declaration(&m, "c0"),
        "parameter Real c0 = 0 \"zero capacitance\" annotation(Evaluate=true);"
    );
}

/// A record component bound as a whole to another record takes the sizes of its `:` fields
/// from that binding, not from its own declaration's default (the MSL battery cells'
/// `cell(cellData = cellData)` with a 30-row OCV table against a 2-row default).
#[test]
fn record_bound_as_a_whole_sizes_its_open_fields_from_the_binding() {
    let m = common::flat_text(
        "RecordSizes",
        r#"
model RecordSizes
  record R
    parameter Real t[:, 2] = [0, 0; 1, 1];
  end R;
  model User
    parameter R r;
    Real y = r.t[size(r.t, 1), 2];
  end User;
  parameter R data(t = [0, 0; 1, 1; 2, 4]);
  User u(r = data);
end RecordSizes;
"#,
    )
    .expect("flattens");
    let rows = m
        .variables
        .iter()
        .filter(|v| v.name.starts_with("u.r.t[") && v.name.ends_with(",1]"))
        .count();
    assert_eq!(rows, 3, "u.r.t has the binding's three rows");
    assert!(
        m.variables.iter().any(|v| v.name == "u.r.t[3,2]"),
        "the last element exists"
    );
}

/// A modifier of a class element (`B(x = 4)`) applies to every component of that class
/// declared in the modified instance, below the components' own modifiers (spec 7.2), also
/// for a protected class reached through `extends` (compliance suite
/// `Scoping.Visibility.ModifyInheritedProtectedClass`).
#[test]
fn a_class_element_modifier_reaches_the_components_of_that_class() {
    let m = flat_text(
        "ClassMod",
        "model ClassMod
  model A
  protected
    model B
      Real x = 2.0;
      parameter Real k = 1;
    end B;
    B b;
    B c(x = 5.0);
  end A;
  model A2
    model B
      Real x = 2.0;
      parameter Real k = 1;
    end B;
    B b;
  end A2;
  extends A(B(x = 4.0));
  A2 a(B(k = 3));
end ClassMod;",
    )
    .unwrap();
    let eqs = equations(&m);
    assert!(eqs.contains(&"'b.x' = 4.0;".to_string()), "{eqs:?}");
    // the component's own modifier wins over the class's
    assert!(eqs.contains(&"'c.x' = 5.0;".to_string()), "{eqs:?}");
    assert!(eqs.contains(&"'a.b.x' = 2.0;".to_string()), "{eqs:?}");
    assert_eq!(declaration(&m, "a.b.k"), "parameter Real 'a.b.k' = 3;");
    assert_eq!(declaration(&m, "b.k"), "parameter Real 'b.k' = 1;");
    // a protected class is modified only through `extends`
    let err = rejection_of(
        "ProtectedClassMod",
        "model ProtectedClassMod
  model A
  protected
    model B
      Real x = 2.0;
    end B;
    B b;
  end A;
  A a(B(x = 3));
end ProtectedClassMod;",
    );
    assert!(err.contains("`B` is protected"), "{err}");
}

/// `package P2 = P(redeclare model A = B)`: names looked up through `P2` find the
/// redeclared class, as a component type and as a base class (compliance suite
/// `Inheritance.Flattening.ReplacedBaseClass`); `P` itself is unchanged.
#[test]
fn a_short_package_definition_redeclares_its_classes_for_lookups_through_it() {
    let m = flat_text(
        "ShortRedeclare",
        "model ShortRedeclare
  package P
    replaceable model A
      Integer x = 2;
    end A;
  end P;
  model B
    Integer x = 3;
  end B;
  package P2 = P(redeclare model A = B);
  package P3 = P2;
  extends P2.A;
  P2.A a;
  P3.A a3;
  P.A original;
end ShortRedeclare;",
    )
    .unwrap();
    let eqs = equations(&m);
    for e in ["x = 3;", "'a.x' = 3;", "'a3.x' = 3;", "'original.x' = 2;"] {
        assert!(eqs.contains(&e.to_string()), "{e} not in {eqs:?}");
    }
}
