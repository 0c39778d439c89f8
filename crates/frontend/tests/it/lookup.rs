//! Name lookup (spec chapter 5): imports of every form, encapsulated classes, global names,
//! constants of enclosing packages, short type classes with attributes.

use crate::common;
use common::*;

#[test]
fn imports_and_package_constants_resolve() {
    let m = flat("Lookup.Imports");
    assert_eq!(
        equations(&m),
        [
            "a = 9.81;",
            "b = 19.62;",
            "'c[1]' = 9.81;",
            "'c[2]' = 9.81;",
            "'c[3]' = 9.81;"
        ]
    );
    // Renaming import of a short type class keeps its attributes.
    assert_eq!(declaration(&m, "a"), "Real a(unit = \"m\", min = 0);");
}

#[test]
fn encapsulated_class_sees_only_its_imports() {
    let m = flat("Lookup.Sealed");
    assert_eq!(equations(&m), ["x = 9.81;"]);
    let e = flat_error("Lookup.SealedBad");
    assert!(e.starts_with("error: unknown name `Consts.g`\n"), "{e}");
    assert!(e.contains("^^^^^^^^ not found in this scope"), "{e}");
}

#[test]
fn predefined_enumerations_and_user_enumerations() {
    let m = flat("Structure.Enums");
    assert_eq!(
        declaration(&m, "x"),
        "Real x(stateSelect = StateSelect.prefer);"
    );
    assert_eq!(
        declaration(&m, "mode"),
        "parameter 'Structure.Mode' mode = 'Structure.Mode'.Slow;"
    );
    assert!(equations(&m).contains(&"k = Integer(mode);".to_string()));
}
