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
