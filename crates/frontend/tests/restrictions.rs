//! Models that break a rule of inheritance or modification (spec 4.5.2, 5.4, 7.1.3, 7.2)
//! are rejected with a diagnostic that points at the offending text.

mod common;
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
