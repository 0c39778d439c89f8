//! Models that break a rule of inheritance or modification (spec 4.5.2, 5.4, 7.1.3, 7.2)
//! are rejected with a diagnostic that points at the offending text.

use crate::common;
use common::*;

/// The rendered diagnostics of a model that must be rejected.
fn rejected(name: &str, text: &str) -> String {
    match flat_text(name, text) {
        Ok(_) => panic!("`{name}` was expected to fail"),
        Err(e) => e,
    }
}

#[test]
fn class_extending_an_array_class_cannot_add_components() {
    let e = rejected(
        "CellBank",
        "model CellBank
  model Cell
    Real v = 1.0;
  end Cell;
  model Cells = Cell[2];
  model Bank
    extends Cells;
    Real total = 2.0;
  end Bank;
  Bank b;
end CellBank;
",
    );
    assert!(
        e.starts_with("error: `CellBank.Bank` extends `Cells`, which is an array class, so it cannot also have components\n"),
        "{e}"
    );
    assert!(e.contains("CellBank.mo:8:5"), "{e}");
    assert!(e.contains("extended here"), "{e}");
    assert!(e.contains("help: a class extending an array class"), "{e}");
}

#[test]
fn class_extending_a_simple_type_or_prefixed_class_cannot_add_bases() {
    let e = rejected(
        "PinBase",
        "model PinBase
  connector Pin
    Real v;
    flow Real i;
  end Pin;
  connector Tagged
    extends Real;
    extends Pin;
  end Tagged;
  Tagged t;
end PinBase;
",
    );
    assert!(
        e.starts_with("error: `PinBase.Tagged` extends `Real`, which is a simple type, so it cannot also have other non-empty base classes\n"),
        "{e}"
    );
    assert!(e.contains("PinBase.mo:8:5"), "{e}");
    let e = rejected(
        "InputBase",
        "model InputBase
  model Source
    Real y = 1.0;
  end Source;
  model InSource = input Source;
  model Pair
    extends InSource;
    extends Source;
  end Pair;
  Pair p;
end InputBase;
",
    );
    assert!(
        e.contains("which is a class with an input/output prefix"),
        "{e}"
    );
}

#[test]
fn empty_base_classes_and_nested_classes_may_accompany_a_simple_type() {
    let m = flat_text(
        "AngleType",
        "model AngleType
  class Icon
  end Icon;
  type Angle
    extends Real(unit = \"rad\");
    extends Icon;
    function wrap
      input Angle a;
      output Angle b = a;
    end wrap;
  end Angle;
  Angle phi = 1.0;
end AngleType;
",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(var_names(&m), vec!["phi"]);
}

#[test]
fn block_cannot_extend_a_type() {
    let e = rejected(
        "GainType",
        "model GainType
  type Voltage = Real(unit = \"V\");
  block Gain
    extends Voltage;
  end Gain;
  Gain g = 1.0;
end GainType;
",
    );
    assert!(
        e.starts_with("error: a block cannot extend the type `GainType.Voltage`\n  --> "),
        "{e}"
    );
    assert!(e.contains("GainType.mo:4:5"), "{e}");
}

#[test]
fn element_modified_twice() {
    let e = rejected(
        "TwiceModified",
        "model TwiceModified
  model Tank
    parameter Real area = 1;
    parameter Real height = 2;
  end Tank;
  model Wide = Tank(area = 2, area = 3);
  Tank t(area = 2, height = 3, area = 4);
  Wide w;
end TwiceModified;
",
    );
    assert!(e.starts_with("error: `area` is modified twice\n"), "{e}");
    assert!(e.contains("TwiceModified.mo:6:31"), "{e}");
    assert!(e.contains("first modified here"), "{e}");
    assert!(e.contains("help: keep only one modification"), "{e}");
}

#[test]
fn final_elements_cannot_be_modified() {
    let e = rejected(
        "FinalGain",
        "model FinalGain
  model Filter
    parameter Real k = 1;
  end Filter;
  model Controller
    parameter Real gain = 2;
    Filter f(final k = gain);
  end Controller;
  Controller ok(gain = 4);
  Controller c(f(k = 3));
end FinalGain;
",
    );
    assert!(
        e.starts_with("error: `f.k` is final and cannot be modified\n"),
        "{e}"
    );
    assert!(e.contains("FinalGain.mo:10:18"), "{e}");
    assert!(e.contains("FinalGain.mo:7:14"), "{e}");
    assert!(e.contains("declared final here"), "{e}");
    let e = rejected(
        "FinalBase",
        "model FinalBase
  model Filter
    parameter Real k = 1;
  end Filter;
  model Controller
    extends Filter(final k = 2);
  end Controller;
  Controller c(k = 3);
end FinalBase;
",
    );
    assert!(
        e.starts_with("error: `k` is final and cannot be modified\n"),
        "{e}"
    );
    assert!(e.contains("FinalBase.mo:8:16"), "{e}");
    let e = rejected(
        "FinalField",
        "model FinalField
  record Limits
    final parameter Integer n = 10;
    parameter Integer m = 20;
  end Limits;
  Limits l(n = 3);
end FinalField;
",
    );
    assert!(
        e.starts_with("error: `n` is final and cannot be modified\n"),
        "{e}"
    );
    assert!(e.contains("FinalField.mo:6:12"), "{e}");
    let e = rejected(
        "FinalUnit",
        "model FinalUnit
  type Length = Real(final unit = \"m\");
  Length x(unit = \"mm\") = 1;
end FinalUnit;
",
    );
    assert!(
        e.starts_with("error: `x.unit` is final and cannot be modified\n"),
        "{e}"
    );
    assert!(e.contains("FinalUnit.mo:3:12"), "{e}");
}

#[test]
fn outer_components_cannot_be_modified() {
    let e = rejected(
        "OuterMod",
        "model OuterMod
  model Sensor
    outer parameter Real gravity;
    Real w = gravity;
  end Sensor;
  inner parameter Real gravity = 9.81;
  Sensor s(gravity = 1.6);
end OuterMod;
",
    );
    assert!(
        e.starts_with("error: `outer gravity` is modified, but an outer component cannot have modifications\n"),
        "{e}"
    );
    assert!(e.contains("OuterMod.mo:7:12"), "{e}");
    assert!(
        e.contains("help: modify the matching `inner` declaration"),
        "{e}"
    );
    let e = rejected(
        "OuterBinding",
        "model OuterBinding
  model Sensor
    outer parameter Real gravity = 1.6;
  end Sensor;
  inner parameter Real gravity = 9.81;
  Sensor s;
end OuterBinding;
",
    );
    assert!(e.contains("OuterBinding.mo:3:34"), "{e}");
}

#[test]
fn predefined_type_names_and_stream_prefixes() {
    let e = rejected(
        "Real",
        "model Real
  Integer n = 1;
end Real;
",
    );
    assert!(
        e.starts_with(
            "error: `Real` is the name of a predefined type and cannot be used for a class\n"
        ),
        "{e}"
    );
    assert!(e.contains("Real.mo:1:7"), "{e}");
    let e = rejected(
        "StreamModel",
        "model StreamModel
  stream Real h = 1.0;
end StreamModel;
",
    );
    assert!(
        e.starts_with("error: model `StreamModel` cannot have stream components\n"),
        "{e}"
    );
    assert!(e.contains("StreamModel.mo:2:3"), "{e}");
}

#[test]
fn protected_elements_cannot_be_reached_with_dot_notation() {
    let e = rejected(
        "HiddenClass",
        "model HiddenClass
  model Pump
  protected
    model Impeller
      Real w = 1.0;
    end Impeller;
  end Pump;
  Pump.Impeller i;
end HiddenClass;
",
    );
    assert!(
        e.starts_with("error: `Impeller` is protected in `HiddenClass.Pump` and cannot be accessed with dot notation\n"),
        "{e}"
    );
    assert!(e.contains("HiddenClass.mo:8:8"), "{e}");
    assert!(e.contains("help: only public elements"), "{e}");
    let e = rejected(
        "HiddenConstant",
        "model HiddenConstant
  package Data
  protected
    constant Real g = 9.81;
  end Data;
  Real y = Data.g;
end HiddenConstant;
",
    );
    assert!(
        e.starts_with("error: `g` is protected in `HiddenConstant.Data` and cannot be accessed with dot notation\n"),
        "{e}"
    );
    assert!(e.contains("HiddenConstant.mo:6:17"), "{e}");
}

#[test]
fn protected_extends_hides_the_inherited_elements() {
    let e = rejected(
        "HiddenBase",
        "model HiddenBase
  model Mass
    Real m = 2;
  end Mass;
  model Body
  protected
    extends Mass;
  end Body;
  Body b;
  Real y = b.m;
end HiddenBase;
",
    );
    assert!(
        e.starts_with("error: `m` is protected in `b` and cannot be accessed from outside\n"),
        "{e}"
    );
    assert!(e.contains("HiddenBase.mo:10:14"), "{e}");
    // Inside the class the inherited element is used as usual.
    let m = flat_text(
        "HiddenUse",
        "model HiddenUse
  model Mass
    Real m = 2;
  end Mass;
  model Body
    Real w = 2 * m;
  protected
    extends Mass;
  end Body;
  Body b;
end HiddenUse;
",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(var_names(&m), vec!["b.w", "b.m"]);
}

#[test]
fn protected_elements_cannot_be_modified_or_redeclared_through_a_component() {
    let e = rejected(
        "HiddenMod",
        "model HiddenMod
  model Valve
  protected
    parameter Real k = 2.0;
  end Valve;
  Valve v(k = 4.0);
end HiddenMod;
",
    );
    assert!(
        e.starts_with(
            "error: `k` is protected in `HiddenMod.Valve` and cannot be modified from outside\n"
        ),
        "{e}"
    );
    assert!(e.contains("HiddenMod.mo:6:11"), "{e}");
    let e = rejected(
        "HiddenRedeclare",
        "model HiddenRedeclare
  model Valve
  protected
    replaceable Real k = 2.0;
  end Valve;
  Valve v(redeclare Real k = 4.0);
end HiddenRedeclare;
",
    );
    assert!(
        e.starts_with("error: `k` is protected in `HiddenRedeclare.Valve` and cannot be redeclared from outside\n"),
        "{e}"
    );
    // A modifier in an extends clause may change a protected element.
    let m = flat_text(
        "HiddenExtends",
        "model HiddenExtends
  model Valve
    Real y = k;
  protected
    parameter Real k = 2.0;
  end Valve;
  extends Valve(k = 4.0);
end HiddenExtends;
",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        declaration(&m, "k").contains("= 4.0"),
        "{}",
        declaration(&m, "k")
    );
}

#[test]
fn replacing_class_must_be_a_subtype_of_the_constraining_class() {
    let e = rejected(
        "NotSubtype",
        "model NotSubtype
  model Small
    Real x = 1.0;
  end Small;
  model Big
    Real x = 2.0;
    Real y = 3.0;
  end Big;
  model Holder
    replaceable Big b constrainedby Big;
  end Holder;
  Holder h(redeclare Small b);
end NotSubtype;
",
    );
    assert!(
        e.starts_with("error: `NotSubtype.Small` is not a subtype of `NotSubtype.Big`: it has no element `y`\n"),
        "{e}"
    );
    assert!(e.contains("NotSubtype.mo:12:22"), "{e}");
    assert!(
        e.contains("help: a replacing class must have every public element"),
        "{e}"
    );
    let e = rejected(
        "NotSubtypeClass",
        "model NotSubtypeClass
  model Small
    Real x = 1.0;
  end Small;
  model Big
    Real x = 2.0;
    Real y = 3.0;
  end Big;
  replaceable model M = Small constrainedby Big;
  M m;
end NotSubtypeClass;
",
    );
    assert!(
        e.starts_with("error: `NotSubtypeClass.M` is not a subtype of `NotSubtypeClass.Big`: it has no element `y`\n"),
        "{e}"
    );
    assert!(e.contains("NotSubtypeClass.mo:9:21"), "{e}");
    // A class with more elements is a subtype.
    let m = flat_text(
        "Subtype",
        "model Subtype
  model Small
    Real x = 1.0;
  end Small;
  model Big
    Real x = 2.0;
    Real y = 3.0;
  end Big;
  model Holder
    replaceable model M = Small;
    M m;
  end Holder;
  Holder h(redeclare model M = Big);
end Subtype;
",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(var_names(&m), vec!["h.m.x", "h.m.y"]);
}

#[test]
fn final_class_cannot_be_redeclared() {
    let e = rejected(
        "FinalClass",
        "model FinalClass
  model Holder
    final replaceable model M
      Real x = 1.0;
    end M;
    M m;
  end Holder;
  model Other
    Real x = 2.0;
  end Other;
  Holder h(redeclare model M = Other);
end FinalClass;
",
    );
    assert!(
        e.starts_with("error: `M` is final and cannot be redeclared\n"),
        "{e}"
    );
    assert!(e.contains("FinalClass.mo:11:28"), "{e}");
}

#[test]
fn inherited_class_must_be_replaceable_to_be_redeclared() {
    let e = rejected(
        "FixedInner",
        "model FixedInner
  model Base
    model Part
      Real x = 1.0;
    end Part;
  end Base;
  extends Base;
  model extends Part
    Real y = 2.0;
  end Part;
  Part p;
end FixedInner;
",
    );
    assert!(
        e.starts_with("error: `model extends Part`: the inherited `Part` is not replaceable, so it cannot be redeclared\n"),
        "{e}"
    );
    assert!(e.contains("FixedInner.mo:8:17"), "{e}");
    assert!(
        e.contains("help: declare it `replaceable` in the base class"),
        "{e}"
    );
    let e = rejected(
        "FinalInner",
        "model FinalInner
  model Base
    final replaceable model Part
      Real x = 1.0;
    end Part;
  end Base;
  extends Base;
  redeclare model Part
    Real x = 3.0;
  end Part;
  Part p;
end FinalInner;
",
    );
    assert!(
        e.starts_with("error: `redeclare model Part`: the inherited `Part` is final and cannot be redeclared\n"),
        "{e}"
    );
    assert!(e.contains("FinalInner.mo:8:19"), "{e}");
}

#[test]
fn class_extends_without_redeclare_only_defines_the_local_class() {
    let m = flat_text(
        "LocalExtends",
        "model LocalExtends
  model Base
    replaceable model Part
      Real x = 1.0;
    end Part;
    Part inherited;
  end Base;
  extends Base;
  model extends Part
    Real y = 2.0;
  end Part;
  Part own;
end LocalExtends;
",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut names = var_names(&m);
    names.sort();
    assert_eq!(names, vec!["inherited.x", "own.x", "own.y"]);
}

#[test]
fn connector_components_and_stream_connectors() {
    let e = rejected(
        "ParamPort",
        "model ParamPort
  connector Port
    Real e;
    flow Real f;
  end Port;
  parameter Port p;
end ParamPort;
",
    );
    assert!(
        e.starts_with(
            "error: `p`: a connector component cannot be declared parameter or constant\n"
        ),
        "{e}"
    );
    assert!(e.contains("ParamPort.mo:6:3"), "{e}");
    let e = rejected(
        "TwoFlows",
        "model TwoFlows
  connector FluidPort
    Real p[2];
    flow Real m_flow[2];
    stream Real h;
  end FluidPort;
  model Pipe
    FluidPort a;
  equation
    a.p = {1, 2};
    a.h = 3;
  end Pipe;
  Pipe pipe;
end TwoFlows;
",
    );
    assert!(
        e.starts_with("error: stream connector `TwoFlows.FluidPort` has 2 scalar flow variables, but it must have exactly one\n"),
        "{e}"
    );
    assert!(e.contains("TwoFlows.mo:2:13"), "{e}");
}

#[test]
fn inner_must_match_its_outer_declarations() {
    let e = rejected(
        "InnerSize",
        "model InnerSize
  model Probe
    outer Real g[2];
    Real y = g[1];
  end Probe;
  inner Real g[3] = {1, 2, 3};
  Probe p;
end InnerSize;
",
    );
    assert!(
        e.starts_with("error: the `inner g` that `outer g` refers to does not match it: its dimensions [3] differ from the outer dimensions [2]\n"),
        "{e}"
    );
    assert!(e.contains("InnerSize.mo:3:16"), "{e}");
    assert!(e.contains("inner declared here"), "{e}");
    let e = rejected(
        "InnerType",
        "model InnerType
  model Probe
    outer Integer n;
  end Probe;
  inner Real n = 2;
  Probe p;
end InnerType;
",
    );
    assert!(
        e.starts_with("error: the `inner n` that `outer n` refers to does not match it: `Real` is not a subtype of `Integer`\n"),
        "{e}"
    );
    let e = rejected(
        "OuterMember",
        "model OuterMember
  record Base
    Real a = 1;
  end Base;
  record Full
    extends Base;
    Real b = 2;
  end Full;
  model Probe
    outer Base env;
    Real y = env.b;
  end Probe;
  inner Full env;
  Probe p;
end OuterMember;
",
    );
    assert!(
        e.starts_with(
            "error: `outer env` is declared as `OuterMember.Base`, which has no element `b`\n"
        ),
        "{e}"
    );
    assert!(e.contains("OuterMember.mo:11:18"), "{e}");
}

#[test]
fn redeclaration_keeps_the_visibility_of_the_original() {
    let e = rejected(
        "Visibility",
        "model Visibility
  model Base
  protected
    replaceable model Part
      Real x = 1.0;
    end Part;
  end Base;
  model Derived
    extends Base;
    redeclare model Part
      Real x = 2.0;
    end Part;
    Part p;
  end Derived;
  Derived d;
end Visibility;
",
    );
    assert!(
        e.starts_with("error: `redeclare model Part`: the inherited `Part` is protected, and a redeclaration cannot change that\n"),
        "{e}"
    );
    assert!(e.contains("Visibility.mo:10:21"), "{e}");
}

#[test]
fn names_of_classes_and_components_do_not_clash() {
    let e = rejected(
        "Clash",
        "model Clash
  Real x = 1.0;
  model x
  end x;
end Clash;
",
    );
    assert!(
        e.starts_with("error: `x` is declared both as a class and as a component\n"),
        "{e}"
    );
    assert!(e.contains("Clash.mo:3:9"), "{e}");
    let e = rejected(
        "Shadow",
        "model Shadow
  model Base
    model Part
      Real x = 2;
    end Part;
  end Base;
  model Part
    Real x = 3;
  end Part;
  extends Base;
  Part p;
end Shadow;
",
    );
    assert!(
        e.starts_with("error: class `Part` is also inherited from `Shadow.Base` with a different definition\n"),
        "{e}"
    );
    assert!(e.contains("Shadow.mo:7:9"), "{e}");
}

#[test]
fn imports_name_public_elements_of_packages() {
    let e = rejected(
        "ImportModel",
        "model ImportModel
  model Holder
    constant Real c = 1;
  end Holder;
  model User
    import ImportModel.Holder.c;
    Real y = c;
  end User;
  User u;
end ImportModel;
",
    );
    assert!(
        e.starts_with("error: `ImportModel.Holder` is a model, but imports can only name packages and their elements\n"),
        "{e}"
    );
    assert!(e.contains("ImportModel.mo:6:5"), "{e}");
    let e = rejected(
        "ImportHidden",
        "model ImportHidden
  package P
    constant Real a = 1;
  protected
    constant Real b = 2;
  end P;
  model User
    import ImportHidden.P.b;
    Real y = b;
  end User;
  User u;
end ImportHidden;
",
    );
    assert!(
        e.starts_with("error: `b` is protected in `ImportHidden.P` and cannot be imported\n"),
        "{e}"
    );
    let e = rejected(
        "ImportTwice",
        "model ImportTwice
  package P
    constant Real a = 1;
  end P;
  package Q
    constant Real a = 2;
  end Q;
  model User
    import ImportTwice.P.a;
    import a = ImportTwice.Q.a;
    Real y = a;
  end User;
  User u;
end ImportTwice;
",
    );
    assert!(e.starts_with("error: `a` is imported twice\n"), "{e}");
    assert!(e.contains("ImportTwice.mo:10:5"), "{e}");
}

#[test]
fn functions_called_through_components() {
    let text = |call: &str, decl: &str| {
        format!(
            "model Calls
  model Tool
    function twice
      input Real u;
      output Real y = 2 * u;
    end twice;
    package Inner
      function half
        input Real u;
        output Real y = u / 2;
      end half;
    end Inner;
  protected
    function hidden
      input Real u;
      output Real y = u;
    end hidden;
  end Tool;
  {decl}
  Real x = {call};
end Calls;
"
        )
    };
    let m = flat_text(
        "Calls",
        &text("t.Inner.half(4.0) + t.twice(1.0)", "Tool t;"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(var_names(&m), vec!["x"]);
    let e = rejected("Calls", &text("t.twice(1.0)", "Tool t[2];"));
    assert!(
        e.starts_with("error: a function cannot be called through the array `t`\n"),
        "{e}"
    );
    assert!(e.contains("Calls.mo:20:12"), "{e}");
    assert!(
        e.contains("help: call the function by its class name"),
        "{e}"
    );
    let e = rejected("Calls", &text("t[1].twice(1.0)", "Tool t[2];"));
    assert!(
        e.starts_with("error: a function cannot be called through the array element `t[...]`\n"),
        "{e}"
    );
    let e = rejected("Calls", &text("t.hidden(1.0)", "Tool t;"));
    assert!(
        e.starts_with(
            "error: `hidden` is protected in `Calls.Tool` and cannot be called from outside\n"
        ),
        "{e}"
    );
    let e = rejected("Calls", &text("t.twice(1.0)", "Tool t if true;"));
    assert!(
        e.starts_with("error: a function cannot be called through the conditional component `t`\n"),
        "{e}"
    );
}

#[test]
fn classes_inside_models_are_reached_only_when_encapsulated() {
    let e = rejected(
        "Nested",
        "model Nested
  model Outer
    Real v = 1.0;
    model Part
      Real w = 2.0;
    end Part;
    encapsulated model Sealed
      Real s = 3.0;
    end Sealed;
  end Outer;
  Outer.Sealed ok;
  Outer.Part p;
end Nested;
",
    );
    assert!(
        e.starts_with("error: `Part` cannot be looked up inside `Nested.Outer`, which is not a package and has variables or equations\n"),
        "{e}"
    );
    assert!(e.contains("Nested.mo:12:9"), "{e}");
    assert!(e.contains("help: declare the class `encapsulated`"), "{e}");
}

/// A constant is named through a class only if that class is package-like (spec 5.3.2):
/// components cannot be encapsulated, so a model with variables hides them all.
#[test]
fn constants_inside_models_are_not_reached_through_dot_notation() {
    let e = rejected(
        "ConstInModel",
        "model ConstInModel
  model A
    constant Real x = 2.0;
    Real y = 3.0;
  end A;
  model B
    constant Real x = 4.0;
  end B;
  constant Real fromB = .ConstInModel.B.x;
  constant Real fromA = .ConstInModel.A.x;
end ConstInModel;
",
    );
    assert!(
        e.starts_with("error: `x` cannot be looked up inside `ConstInModel.A`, which is not a package and has variables or equations\n"),
        "{e}"
    );
    assert!(e.contains("ConstInModel.mo:10:41"), "{e}");
}

#[test]
fn base_classes_are_found_without_inherited_names_and_are_not_replaceable() {
    let e = rejected(
        "InheritedName",
        "model InheritedName
  model A
    model B
      Real x = 1;
    end B;
  end A;
  extends A;
  extends B;
end InheritedName;
",
    );
    assert!(e.starts_with("error: base class `B` not found\n"), "{e}");
    assert!(e.contains("InheritedName.mo:8:11"), "{e}");
    let e = rejected(
        "ReplaceableBase",
        "model ReplaceableBase
  replaceable model A
    Real x = 2;
  end A;
  extends A;
end ReplaceableBase;
",
    );
    assert!(
        e.starts_with("error: `A` is replaceable and cannot be used as a base class\n"),
        "{e}"
    );
    assert!(e.contains("ReplaceableBase.mo:5:11"), "{e}");
}

#[test]
fn connected_variables_have_the_same_type_and_variability() {
    let text = |second: &str| {
        format!(
            "model Mismatch
  connector A
    Real e;
    flow Real f;
    parameter Real r = 1;
  end A;
  connector B
    {second}
    flow Real f;
  end B;
  model Two
    A a;
    B b;
  end Two;
  Two t;
equation
  connect(t.a, t.b);
  t.a.e = 1;
  t.a.f = 2;
end Mismatch;
"
        )
    };
    let e = rejected("Mismatch", &text("Integer e; parameter Real r = 1;"));
    assert!(
        e.starts_with("error: connect: `t.a.e` is Real but `t.b.e` is Integer\n"),
        "{e}"
    );
    assert!(e.contains("Mismatch.mo:17:3"), "{e}");
    assert!(
        e.contains("help: connected variables must have the same type"),
        "{e}"
    );
    let e = rejected("Mismatch", &text("Real e; constant Real r = 1;"));
    assert!(
        e.starts_with("error: connect: `t.a.r` is a parameter but `t.b.r` is a constant\n"),
        "{e}"
    );
    let m = flat_text("Mismatch", &text("Real e; parameter Real r = 1;"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        equations(&m).contains(&"'t.a.e' = 't.b.e';".to_string()),
        "{:?}",
        equations(&m)
    );
}

#[test]
fn operator_records_are_not_extended_and_operators_hold_functions() {
    let e = rejected(
        "OpExtends",
        "model OpExtends
  operator record Pair
    Real a;
    Real b;
  end Pair;
  operator record Triple
    extends Pair;
    Real c;
  end Triple;
  Triple t(a = 1, b = 2, c = 3);
end OpExtends;
",
    );
    assert!(
        e.starts_with("error: `Pair` is an operator record and cannot be extended\n"),
        "{e}"
    );
    assert!(e.contains("OpExtends.mo:7:5"), "{e}");
    let e = rejected(
        "OpEnclosing",
        "model OpEnclosing
  package Numbers
    operator record Pair
      Real a;
    end Pair;
  end Numbers;
  package More
    extends Numbers;
    constant Real k = 2;
  end More;
  Real y = More.k;
end OpEnclosing;
",
    );
    assert!(
        e.starts_with(
            "error: `Numbers` encloses the operator record `Pair` and cannot be extended\n"
        ),
        "{e}"
    );
    let e = rejected(
        "OpContents",
        "model OpContents
  operator record Pair
    Real a;
    encapsulated operator '+'
      constant Real offset = 1;
      function add
        input Real x;
        output Real y = x;
      end add;
    end '+';
  end Pair;
  Pair p(a = 1);
end OpContents;
",
    );
    assert!(
        e.starts_with("error: operator `'+'` may only contain functions\n"),
        "{e}"
    );
    assert!(e.contains("OpContents.mo:5:7"), "{e}");
}

#[test]
fn no_lookup_inside_partial_classes() {
    let e = rejected(
        "PartialLookup",
        "model PartialLookup
  partial package Settings
    constant Real gain = 2;
  end Settings;
  package Chosen
    extends Settings;
  end Chosen;
  Real ok = Chosen.gain;
  Real y = Settings.gain;
end PartialLookup;
",
    );
    assert!(
        e.starts_with(
            "error: `gain` is looked up inside `PartialLookup.Settings`, which is partial\n"
        ),
        "{e}"
    );
    assert!(e.contains("PartialLookup.mo:9:21"), "{e}");
}

#[test]
fn connect_only_under_parameter_conditions() {
    let text = |cond: &str| {
        format!(
            "model Switching
  connector Pin
    Real v;
    flow Real i;
  end Pin;
  model Two
    Pin a, b;
  end Two;
  parameter Boolean closed = true;
  Two t;
equation
  t.a.v = 1;
  t.a.i = 2;
  if {cond} then
    connect(t.a, t.b);
  else
    t.b.v = 0;
    t.b.i = 0;
  end if;
end Switching;
"
        )
    };
    let m = flat_text("Switching", &text("closed")).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        equations(&m).contains(&"'t.a.v' = 't.b.v';".to_string()),
        "{:?}",
        equations(&m)
    );
    let e = rejected("Switching", &text("time < 1"));
    assert!(
        e.starts_with("error: `connect` inside an if-equation whose condition is not a parameter expression\n"),
        "{e}"
    );
    assert!(e.contains("Switching.mo:15:5"), "{e}");
    assert!(
        e.contains("this condition varies during the simulation"),
        "{e}"
    );
}

#[test]
fn connectors_are_reached_through_one_component_at_most() {
    let e = rejected(
        "DeepConnect",
        "model DeepConnect
  connector Pin
    Real v;
    flow Real i;
  end Pin;
  model Inner
    Pin p, n;
  end Inner;
  model Outer
    Inner inner1;
  end Outer;
  Outer o;
equation
  connect(o.inner1.p, o.inner1.n);
  o.inner1.p.v = 1;
  o.inner1.p.i = 2;
end DeepConnect;
",
    );
    assert!(
        e.starts_with("error: `o.inner1.p` is not a connector reference: `inner1` is not a connector of `o`\n"),
        "{e}"
    );
    assert!(e.contains("DeepConnect.mo:14:11"), "{e}");
}

#[test]
fn block_connectors_are_causal() {
    let text = |port: &str| {
        format!(
            "model BlockPorts
  connector Pin
    Real v;
    flow Real i;
  end Pin;
  connector Signal
    output Real y;
    parameter Real scale = 1;
  end Signal;
  block Source
    {port}
  end Source;
  Source s;
end BlockPorts;
"
        )
    };
    let m = flat_text("BlockPorts", &text("Signal out(y = 1);")).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        var_names(&m).contains(&"s.out.y".to_string()),
        "{:?}",
        var_names(&m)
    );
    let e = rejected("BlockPorts", &text("Pin p;"));
    assert!(
        e.starts_with("error: `s.p` is a connector of the block `BlockPorts.Source`, but its variable `v` is neither input nor output\n"),
        "{e}"
    );
    assert!(e.contains("BlockPorts.mo:11:5"), "{e}");
    assert!(
        e.contains("help: a block may only have causal connectors"),
        "{e}"
    );
}
