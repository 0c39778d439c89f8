//! Rejected models and their exact diagnostics (snapshots with file paths shortened).

mod common;
use common::*;

#[test]
fn partial_class_cannot_be_instantiated() {
    assert_eq!(
        flat_error("Errors.UsesPartial"),
        "error: `p` is declared with the partial class `Errors.Part`, which cannot be instantiated
  --> Errors.mo:6:5
  |
6 |     Part p;
  |     ^^^^^^ 
   = help: use a non-partial class that extends it, or redeclare the component
"
    );
}

#[test]
fn unknown_name() {
    assert_eq!(
        flat_error("Errors.UnknownName"),
        "error: unknown name `y`
  --> Errors.mo:9:14
  |
9 |     Real x = y + 1;
  |              ^ not found in this scope
"
    );
}

#[test]
fn array_size_must_be_a_parameter() {
    let e = flat_error("Errors.NonStructural");
    assert!(e.starts_with("error: `n` is not a parameter or constant, so its value is not known at translation time\n  --> Errors.mo:13:12\n"), "{e}");
}

#[test]
fn structural_error_through_a_modifier_points_at_the_modifier_and_the_instance() {
    assert_eq!(
        flat_error("Errors.UsesSized"),
        "error: `t` is not a parameter or constant, so its value is not known at translation time
  --> Errors.mo:43:17
   |
43 |     Sized s(n = t);
   |                 ^ 
  --> Errors.mo:43:11
   |
43 |     Sized s(n = t);
   |           ^^^^^^^^ in instance `s` declared here
"
    );
}

#[test]
fn equation_sizes_and_indices_are_checked() {
    let e = flat_error("Errors.WrongSizes");
    assert!(
        e.starts_with("error: the two sides of the equation have different sizes: [2] and [3]\n"),
        "{e}"
    );
    let e = flat_error("Errors.BadIndex");
    assert!(
        e.starts_with("error: index 3 is out of bounds 1..2\n  --> Errors.mo:23:7\n"),
        "{e}"
    );
}

#[test]
fn unknown_named_argument() {
    let e = flat_error("Errors.BadArgument");
    assert!(
        e.starts_with("error: `Errors.BadArgument.f` has no input `c`\n  --> Errors.mo:33:16\n"),
        "{e}"
    );
}

#[test]
fn parameter_depending_on_a_variable() {
    let e = flat_error("Errors.ParamOnContinuous");
    assert!(
        e.starts_with("error: parameter `p` depends on `v`, which varies during the simulation\n"),
        "{e}"
    );
}

#[test]
fn missing_class_and_non_model() {
    let e = flat_error("Nowhere.Model");
    assert!(e.contains("error: class `Nowhere.Model` not found"), "{e}");
    assert!(
        e.contains("no library `Nowhere` on the library path"),
        "{e}"
    );
    let e = flat_error("Functions.poly");
    assert!(
        e.contains("error: `Functions.poly` is a function, not a model"),
        "{e}"
    );
}

#[test]
fn recursive_and_oversized_models_are_rejected_without_crashing() {
    let e = flat_error("Errors.Recursive");
    assert!(
        e.starts_with("error: instances nest more than 64 levels deep at `a.a."),
        "{e}"
    );
    let e = flat_error("Errors.SelfExtending");
    assert!(
        e.starts_with("error: class `Errors.SelfExtending` extends itself\n"),
        "{e}"
    );
    let e = flat_error("Errors.Huge");
    assert!(
        e.starts_with("error: `x` has more than 2000000 elements"),
        "{e}"
    );
}
