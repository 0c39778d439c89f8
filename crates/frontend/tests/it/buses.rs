//! Expandable connectors, assertions checked at translation time, protected access.

use crate::common;
use common::*;
use moss_frontend::stats::stats;

#[test]
fn expandable_connectors_are_augmented_and_unused_elements_dropped() {
    let m = flat("Buses.System");
    let names = var_names(&m);
    assert!(names.contains(&"bus.extra".to_string()), "{names:?}");
    assert!(names.contains(&"sub.bus.extra".to_string()), "{names:?}");
    assert!(
        !names.iter().any(|n| n.contains("declaredButUnused")),
        "{names:?}"
    );
    let eqs = equations(&m);
    for e in [
        "'bus.speed' = 'src.y';",
        "'src.y' = 'sub.bus.speed';",
        "'sub.bus.speed' = 'sub.sink.u';",
        "'src2.y' = 'sub.bus.extra';",
    ] {
        assert!(eqs.contains(&e.to_string()), "{e} missing in {eqs:#?}");
    }
    let s = stats(&m);
    assert_eq!((s.equations, s.variables), (8, 8));
}

#[test]
fn failing_assertion_on_parameters_is_an_error() {
    let e = flat_error("Buses.CheckedParameter");
    assert!(
        e.starts_with("error: assertion fails for the given parameter values: k must be larger than 3\n  --> Buses.mo:38:5\n"),
        "{e}"
    );
}

#[test]
fn protected_elements_are_not_accessible_from_outside() {
    let e = flat_error("Buses.PeekProtected");
    assert!(
        e.starts_with("error: `secret` is protected in `h` and cannot be accessed from outside\n"),
        "{e}"
    );
}

/// Arrays of expandable connectors connected as whole arrays (`connect(cell.bus, stack.bus)`,
/// as the MSL battery stacks do) are connected element by element, each pair of buses
/// sharing its elements: what a cell puts on its bus is present in the stack's bus.
#[test]
fn arrays_of_expandable_connectors_connect_element_by_element() {
    let text = r#"
model Stack
  expandable connector CellBus
    Real T;
    Real v;
  end CellBus;
  expandable connector StackBus
    parameter Integer n = 2;
    CellBus cellBus[n];
  end StackBus;
  connector RealOutput = output Real;
  block Source
    RealOutput y;
    parameter Real k = 1;
  equation
    y = k;
  end Source;
  model Cell
    parameter Real T0 = 300;
    Source src(k = T0);
    CellBus cellBus;
  equation
    connect(src.y, cellBus.T);
  end Cell;
  Cell cell[2](T0 = {300, 310});
  StackBus stackBus;
  Real total = sum(stackBus.cellBus.T);
equation
  connect(cell.cellBus, stackBus.cellBus);
end Stack;
"#;
    let m = flat_text("Stack", text).expect("flattens");
    let names = var_names(&m);
    for present in ["stackBus.cellBus[1].T", "stackBus.cellBus[2].T"] {
        assert!(names.iter().any(|n| n == present), "{present}: {names:?}");
    }
    // `v` is declared but never connected: only potentially present
    assert!(!names.iter().any(|n| n.ends_with(".v")), "{names:?}");
    let eqs = equations(&m).join("\n");
    assert!(
        eqs.contains("'cell[2].cellBus.T' = 'stackBus.cellBus[2].T'")
            || eqs.contains("'stackBus.cellBus[2].T' = 'cell[2].cellBus.T'"),
        "{eqs}"
    );
}

/// Two connected expandable connectors also connect the expandable connectors they contain
/// (a stack bus with one bus per cell, read by a transcription block through its own stack
/// bus), and a matrix of signals connected to a bus element declared as a matrix keeps its
/// indices (`v[i,j]`).
#[test]
fn nested_buses_are_shared_and_matrix_elements_keep_their_indices() {
    let text = r#"
model Transcribe
  expandable connector CellBus
    Real v;
  end CellBus;
  expandable connector StackBus
    CellBus cellBus[2, 2];
  end StackBus;
  expandable connector ArrayBus
    Real v[2, 2];
  end ArrayBus;
  connector RealOutput = output Real;
  connector RealInput = input Real;
  block Source
    RealOutput y;
    parameter Real k = 1;
  equation
    y = k;
  end Source;
  block Gain
    RealInput u;
    RealOutput y;
  equation
    y = 2*u;
  end Gain;
  model Cell
    parameter Real k = 1;
    Source src(k = k);
    CellBus cellBus;
  equation
    connect(src.y, cellBus.v);
  end Cell;
  model Stack
    Cell cell[2, 2](k = {{1, 2}, {3, 4}});
    StackBus stackBus;
  equation
    connect(cell.cellBus, stackBus.cellBus);
  end Stack;
  model Transcription
    StackBus stackBus;
    ArrayBus arrays;
    Gain gain[2, 2];
  equation
    connect(gain.u, stackBus.cellBus.v);
    connect(gain.y, arrays.v);
  end Transcription;
  Stack stack;
  Transcription t;
equation
  connect(stack.stackBus, t.stackBus);
end Transcribe;
"#;
    let m = flat_text("Transcribe", text).expect("flattens");
    let names = var_names(&m);
    for present in [
        "t.stackBus.cellBus[2,1].v",
        "t.arrays.v[1,2]",
        "t.arrays.v[2,1]",
    ] {
        assert!(names.iter().any(|n| n == present), "{present}: {names:?}");
    }
    assert!(!names.iter().any(|n| n == "t.arrays.v[3]"), "{names:?}");
    let s = stats(&m);
    assert_eq!(s.equations, s.variables, "balanced");
}

/// Spec 9.1.3: a signal that the components connected to a set of expandable connectors
/// only read has no source (the compliance suite's
/// `Connections.Expandable.MissingNonInput`); the same read through two connected buses
/// with a writer on the other is fine, and so is a bus of the model itself, whose signals
/// read only come from outside.
#[test]
fn a_bus_signal_only_read_has_no_source() {
    const PARTS: &str = "
  expandable connector EC
  end EC;
  connector RealInput = input Real;
  connector RealOutput = output Real;
  model Reader
    RealInput ri = 1.0;
  end Reader;
  model Writer
    RealOutput ro = time;
  end Writer;
  model M
    EC ec;
    Reader a;
  equation
    connect(a.ri, ec.ri);
  end M;";
    let e = rejection_of(
        "OnlyRead",
        &format!("model OnlyRead\n{PARTS}\n  M m;\nend OnlyRead;"),
    );
    assert!(
        e.starts_with("error: `m.ec.ri` is connected only to inputs (`m.a.ri`): nothing in its expandable connectors provides its value\n"),
        "{e}"
    );
    // a writer on a connected bus is the source
    let ok = flat_text(
        "ReadAndWritten",
        &format!(
            "model ReadAndWritten\n{PARTS}
  model N
    EC ec;
    Writer w;
    M m;
  equation
    connect(w.ro, ec.ri);
    connect(ec, m.ec);
  end N;
  N n;
end ReadAndWritten;"
        ),
    );
    assert!(ok.is_ok(), "{}", ok.err().unwrap_or_default());
    // a bus of the model itself: the signal is an input of the model
    let top = flat_text(
        "TopBus",
        &format!(
            "model TopBus\n{PARTS}
  EC ec;
  Reader a;
equation
  connect(a.ri, ec.ri);
end TopBus;"
        ),
    );
    assert!(top.is_ok(), "{}", top.err().unwrap_or_default());
}

/// Spec 9.1.3: the signals declared in an expandable connector are only potentially
/// present, so a modifier of the bus instance cannot give them values (compliance suite
/// `Connections.Expandable.PotentiallyPresentMod`); its parameters may be modified, as the
/// MSL's battery stack bus is sized (`StackBus stackBus(Ns = Ns)`).
#[test]
fn signals_of_an_expandable_connector_cannot_be_modified() {
    const PARTS: &str = "
  expandable connector EC
    parameter Integer n = 1;
    Real x;
  end EC;
  connector RealOutput = output Real;
  RealOutput ro = time;";
    let e = rejection_of(
        "ModifiedSignal",
        &format!("model ModifiedSignal\n{PARTS}\n  EC ec(x = 1.0);\nequation\n  connect(ro, ec.x);\nend ModifiedSignal;"),
    );
    assert!(
        e.starts_with("error: `x` of the expandable connector `ec` cannot be modified: its elements are only potentially present\n"),
        "{e}"
    );
    let ok = flat_text(
        "ModifiedParameter",
        &format!("model ModifiedParameter\n{PARTS}\n  EC ec(n = 3);\nequation\n  connect(ro, ec.x);\nend ModifiedParameter;"),
    );
    assert!(ok.is_ok(), "{}", ok.err().unwrap_or_default());
}
