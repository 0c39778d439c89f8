//! Arrays are scalarized: matrix products, element-wise operators, slices, `end`, `sum`,
//! for-loops.

use crate::common;
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

/// `if i < n then x[i + 1] else 0` in a for-loop: the branch beyond the end is never selected
/// (n is known), so it is dropped instead of reported out of bounds; a branch that is selected
/// and out of bounds is still an error.
#[test]
fn if_expression_branches_never_selected_may_index_beyond_the_end() {
    let text = "model Ladder\n  parameter Integer n = 3;\n  Real x[n];\nequation\n  for i in 1:n loop\n    x[i] = (if i < n then x[i + 1] else 0) + (if i > 1 then x[i - 1] else 1) + time;\n  end for;\nend Ladder;\n";
    let m = flat_text("Ladder", text).expect("flattens");
    let eqs = equations(&m);
    assert_eq!(eqs.len(), 3, "{eqs:?}");
    assert!(eqs[2].contains("0 +"), "{eqs:?}");
    assert!(eqs[0].contains("+ 1 +"), "{eqs:?}");
    let bad = "model Bad\n  parameter Integer n = 3;\n  Real x[n];\nequation\n  for i in 1:n loop\n    x[i] = (if i <= n then x[i + 1] else 0) + time;\n  end for;\nend Bad;\n";
    let e = flat_text("Bad", bad).expect_err("out of bounds");
    assert!(e.contains("index 4 is out of bounds 1..3"), "{e}");
}

/// An empty array keeps the sizes its declaration and its constructor give: a table
/// `fill(0.0, 0, 2)` has two columns, so the MSL's default `columns = 2:size(table, 2)` of a
/// table read from a file is `{2}`.
#[test]
fn empty_arrays_keep_their_inner_sizes() {
    let m = flat_text(
        "EmptyTable",
        "model EmptyTable
  parameter Real table[:, :] = fill(0.0, 0, 2);
  parameter Integer columns[:] = 2:size(table, 2);
  parameter Integer n = size(columns, 1);
  parameter Integer shape[2] = size(table);
  parameter Real z[:, :] = zeros(0, 3);
  parameter Integer nz = size(z, 2);
end EmptyTable;",
    )
    .expect("flattens");
    assert_eq!(
        declaration(&m, "columns[1]"),
        "parameter Integer 'columns[1]' = 2;"
    );
    assert_eq!(declaration(&m, "n"), "parameter Integer n = 1;");
    assert_eq!(
        declaration(&m, "shape[2]"),
        "parameter Integer 'shape[2]' = 2;"
    );
    assert_eq!(declaration(&m, "nz"), "parameter Integer nz = 3;");
}

/// Products over an empty inner dimension are zeros of the outer dimensions (spec 10.6.7:
/// `[4, 0] * [0, 4]` is a 4×4 zero matrix), though an empty array value keeps no trailing
/// dimensions: the shapes come from the declarations (compliance suite
/// `Arrays.Operations.MatrixProduct.ArrayMatrixMatrixMul6`, `ArrayVectorMatrixMul5`).
#[test]
fn products_over_an_empty_inner_dimension_are_zeros() {
    let m = flat_text(
        "EmptyProducts",
        "model EmptyProducts
  Real x[2, 0], y[0, 3], u[0], w[0];
  Real z[2, 3] = x * y;
  Real v[3] = u * y;
  Real r[2] = x * w;
  Real s = u * w;
equation
  u = w;
end EmptyProducts;",
    )
    .unwrap();
    let eqs = equations(&m);
    for e in [
        "'z[2,3]' = 0.0;",
        "'v[3]' = 0.0;",
        "'r[2]' = 0.0;",
        "s = 0.0;",
    ] {
        assert!(eqs.contains(&e.to_string()), "{e} not in {eqs:?}");
    }
    assert_eq!(eqs.len(), 6 + 3 + 2 + 1, "{eqs:?}");
}
