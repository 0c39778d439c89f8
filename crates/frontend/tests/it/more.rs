//! Subscripts known only at run time, enumeration/Boolean dimensions and ranges, deduced
//! for-ranges, reductions and array constructors inside functions, class restrictions.

use crate::common;
use common::*;
use moss_frontend::flat::{FunctionBody, Statement};

#[test]
fn run_time_subscript_becomes_a_selection() {
    let m = flat("More.DynamicIndex");
    assert!(equations(&m).contains(
        &"y = if k == 1 then 'table[1]' elseif k == 2 then 'table[2]' else 'table[3]';".to_string()
    ));
}

#[test]
fn enumeration_and_boolean_dimensions_and_ranges() {
    let m = flat("More.EnumLoop");
    assert_eq!(
        equations(&m),
        [
            "'x[1]' = 1;",
            "'x[2]' = 2;",
            "'x[3]' = 3;",
            "'on[1]' = true;",
            "'on[2]' = false;"
        ]
    );
}

#[test]
fn for_range_deduced_from_subscripts() {
    let m = flat("More.ImplicitFor");
    assert_eq!(equations(&m), ["'x[1]' = 1;", "'x[2]' = 2;", "'x[3]' = 3;"]);
}

#[test]
fn reductions_in_functions_become_loops_and_array_results_one_equation() {
    let m = flat("More.Reductions");
    assert_eq!(var_names(&m), ["v[1]", "v[2]", "v[3]", "z[1]", "z[2]"]);
    assert_eq!(
        equations(&m),
        ["{'z[1]', 'z[2]'} = 'More.squares'('More.countPositive'({'v[1]', 'v[2]', 'v[3]'}));"]
    );
    let f = &m.functions["More.countPositive"];
    let FunctionBody::Algorithm(body) = &f.body else {
        panic!("algorithm expected")
    };
    assert!(matches!(body[1], Statement::For { .. }), "{body:#?}");
    assert_eq!(f.locals[0].name, "moss_tmp1");
}

#[test]
fn class_restrictions() {
    let e = flat_error("More.UsesBadRecord");
    assert!(
        e.starts_with("error: record `More.R` cannot have equations\n"),
        "{e}"
    );
    let e = flat_error("More.ExtendsConnector");
    assert!(
        e.starts_with("error: a model cannot extend the connector `More.C`\n"),
        "{e}"
    );
    let e = flat_error("More.NotConnector");
    assert!(
        e.starts_with("error: `a` is not a connector and cannot be connected\n"),
        "{e}"
    );
}

#[test]
fn if_equation_inside_when_becomes_if_expressions() {
    let m = flat("More.WhenIf");
    assert_eq!(
        equations(&m),
        [
            "when sample(0, 1) then",
            "a = if time > 2 then 1 else 4;",
            "b = if time > 2 then 2 else 3;",
            "end when;"
        ]
    );
}

#[test]
fn assignment_to_a_run_time_subscript_selects_the_element() {
    let m = flat("More.DynamicAssign");
    let text = moss_frontend::print::print_model(&m);
    assert!(
        text.contains("      if k == 1 then\n        'buf[1]' := time;\n      elseif k == 2 then\n        'buf[2]' := time;\n      end if;\n"),
        "{text}"
    );
}
