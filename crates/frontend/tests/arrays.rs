//! Arrays are scalarized: matrix products, element-wise operators, slices, `end`, `sum`,
//! for-loops.

mod common;
use common::*;

#[test]
fn array_operations_are_expanded_element_wise() {
    let m = flat("Arrays.Ops");
    assert_eq!(
        equations(&m),
        [
            "'x[1]' = 'A[1,1]' * 'v[1]' + 'A[1,2]' * 'v[2]';",
            "'x[2]' = 'A[2,1]' * 'v[1]' + 'A[2,2]' * 'v[2]';",
            "'y[1]' = 2 * 'x[1]' + 'v[1]';",
            "'y[2]' = 2 * 'x[2]' + 'v[2]';",
            "s = 'x[1]' + 'x[2]';",
            "last = 'y[2]';",
            "'col[1]' = 'A[1,1]' * 'v[1]';",
            "'col[2]' = 'A[2,1]' * 'v[2]';"
        ]
    );
    assert_eq!(declaration(&m, "A[2,1]"), "parameter Real 'A[2,1]' = 3;");
}

#[test]
fn for_equations_are_unrolled() {
    let m = flat("Arrays.Loops");
    assert_eq!(
        equations(&m),
        [
            "'x[1]' = 1;",
            "'x[2]' = 'x[1]' + 2;",
            "'x[3]' = 'x[2]' + 3;"
        ]
    );
}
