//! Expandable connectors, assertions checked at translation time, protected access.

mod common;
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
