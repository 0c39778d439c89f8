//! Rejected models and their exact diagnostics (snapshots with file paths shortened).

use crate::common;
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

/// Two classes extending each other: a cycle of extends clauses (spec 7.1) was accepted, and
/// each class got only the elements collected before the cycle closed.
#[test]
fn a_cycle_of_extends_clauses_is_rejected() {
    let text = "model A\n  extends B;\n  Real x = 1;\nend A;\nmodel B\n  extends A;\n  Real y = 2;\nend B;\nmodel T\n  A a;\nend T;\n";
    let e = flat_text("Cycle", text).expect_err("a cycle of extends clauses is illegal");
    assert!(
        e.starts_with("error: class `A` extends itself through `B`\n"),
        "{e}"
    );
    assert!(e.contains("Cycle.mo:1:7\n"), "{e}");
    assert!(
        e.contains("= help: the extends clauses form a cycle; remove one of them"),
        "{e}"
    );
}

/// A chain of 60 extends clauses (found probing the frontend with deep inputs beside the
/// fuzz campaigns): the collection of
/// elements stopped at 40 levels without a word, and the model checked as empty. Now the
/// limit is an error at the class where it is reached.
#[test]
fn an_overlong_inheritance_chain_is_reported() {
    let mut text = String::new();
    for i in 0..60 {
        text.push_str(&format!("model E{i}\n  extends E{};\nend E{i};\n", i + 1));
    }
    text.push_str("model E60\n  Real x = 1;\nend E60;\nmodel Top\n  extends E0;\nend Top;\n");
    let e = flat_text("Chain", &text).expect_err("60 levels of inheritance are over the limit");
    assert!(
        e.starts_with("error: classes inherit more than 40 levels deep at `E40`\n"),
        "{e}"
    );
    // `model E40` is on line 121 (three lines per class), its name at column 7.
    assert!(e.contains("Chain.mo:121:7\n"), "{e}");
    assert!(
        e.contains("= help: shorten the chain of extends clauses (or short class definitions)"),
        "{e}"
    );
    // 40 levels are fine, and everything inherited arrives.
    let mut ok = String::new();
    for i in 0..30 {
        ok.push_str(&format!("model E{i}\n  extends E{};\nend E{i};\n", i + 1));
    }
    ok.push_str("model E30\n  Real x = 1;\nend E30;\nmodel Top\n  extends E0;\nend Top;\n");
    let m = flat_text("Chain30", &ok).expect("30 levels of inheritance are fine");
    assert_eq!(moss_frontend::stats::stats(&m).variables, 1);
}

/// Array constructors and ranges with a constant size beyond the frontend's limit (found
/// probing beside the fuzz campaigns: `fill(1, 100000, 100000)` and `1:1e-7:1e5` ran until
/// killed, building 10^10 and 10^12 elements) are rejected at the expression.
#[test]
fn oversized_constructors_and_ranges_are_rejected() {
    let cases = [
        ("Fill", "fill(1, 100000, 100000)", "this `fill`", "2:25"),
        ("Zeros", "zeros(1000000000, 0)", "this `zeros`", "2:25"),
        ("Ident", "identity(100000)", "this `identity`", "2:25"),
        (
            "Lin",
            "linspace(0, 1, 1000000000)",
            "this `linspace`",
            "2:25",
        ),
        ("RealRange", "1:0.0000001:100000", "this range", "2:25"),
        ("IntRange", "1:9000000000000000000", "this range", "2:25"),
    ];
    for (name, expr, what, at) in cases {
        let text = format!(
            "model {name}\n  parameter Real a[:] = {expr};\n  Real x = a[1];\nend {name};\n"
        );
        let e = flat_text(name, &text).expect_err(expr);
        assert!(
            e.starts_with(&format!(
                "error: {what} has more than 2000000 elements; moss expands arrays element by element\n"
            )),
            "{expr}: {e}"
        );
        assert!(e.contains(&format!("{name}.mo:{at}\n")), "{expr}: {e}");
        assert!(
            e.contains("= help: use smaller dimensions or a larger step"),
            "{e}"
        );
    }
    // Integer ranges keep their elements, also with a negative step.
    let m = flat_text(
        "Down",
        "model Down\n  parameter Integer a[:] = 5:-2:2;\n  Real x = sum(a);\nend Down;\n",
    )
    .expect("a descending range");
    let text = moss_frontend::print::print_model(&m);
    assert!(text.contains("parameter Integer 'a[1]' = 5;\n"), "{text}");
    assert!(text.contains("parameter Integer 'a[2]' = 3;\n"), "{text}");
    assert!(!text.contains("'a[3]'"), "{text}");
}
