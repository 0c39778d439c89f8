//! Operator records: overloaded operators and constructors call the record's operator
//! functions; calls with literal arguments are evaluated at translation time.

use crate::common;
use common::*;

#[test]
fn overloaded_operators_call_operator_functions() {
    let m = flat("Ops.Use");
    assert_eq!(
        equations(&m),
        [
            "('x.re', 'x.im') = 'Ops.Cplx.\\'constructor\\'.fromReal'(time, 1);",
            // `Cplx(2)` is computed now: (2, 0)
            "('y.re', 'y.im') = 'Ops.Cplx.\\'+\\''('x.re', 'x.im', 2, 0);",
            "('z.re', 'z.im') = 'Ops.Cplx.\\'-\\'.negate'(/* output 1 of */ 'Ops.Cplx.\\'-\\'.subtract'('x.re', 'x.im', 'y.re', 'y.im'), /* output 2 of */ 'Ops.Cplx.\\'-\\'.subtract'('x.re', 'x.im', 'y.re', 'y.im'));"
        ]
    );
    // Field modifiers of a record output are the defaults of its field variables.
    let f = &m.functions["Ops.Cplx.'constructor'.fromReal"];
    let defaults: Vec<String> = f
        .outputs
        .iter()
        .map(|o| moss_frontend::print::print_expr(o.default.as_ref().expect("default")))
        .collect();
    assert_eq!(defaults, ["re", "im"]);
}

#[test]
fn vector_times_vector_of_operator_records_is_their_scalar_product() {
    let m = flat("Ops.Dot");
    let eqs = equations(&m);
    // k[1]*u[1] + k[2]*u[2] with the record's '*' and '+'
    let y = eqs
        .iter()
        .find(|e| e.starts_with("('y.re', 'y.im') = "))
        .unwrap_or_else(|| panic!("no equation for y in {eqs:#?}"));
    assert!(y.contains("'Ops.Cplx.\\'+\\''("), "{y}");
    assert_eq!(y.matches("'Ops.Cplx.\\'*\\''(").count(), 4, "{y}");
    assert!(y.contains("'u[1].re'") && y.contains("'u[2].im'"), "{y}");
}
