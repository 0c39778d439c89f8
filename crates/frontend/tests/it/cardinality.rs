//! The deprecated `cardinality(c)` operator: the number of `connect` equations that name the
//! scalar connector `c`, known at translation time, so asserts and if-equations on it fold.

use crate::common;
use common::*;
use moss_frontend::flat::Expr;
use moss_frontend::FlatModel;

/// A two-pin part that insists on `p` being connected and grounds `n` when nobody connects it.
const PARTS: &str = r#"
  connector Pin
    Real v;
    flow Real i;
  end Pin;
  model Part
    Pin p, n;
    parameter Real r = 1;
    parameter Integer np = cardinality(p) "how often p is connected";
  equation
    assert(cardinality(p) > 0, "p must be connected");
    if cardinality(n) == 0 then
      n.v = 0;
    end if;
    p.i + n.i = 0;
    p.v - n.v = r*p.i;
  end Part;
  model Source
    Pin p;
  equation
    p.v = 1;
  end Source;
"#;

fn model(name: &str, body: &str) -> FlatModel {
    let text = format!("model {name}\n{PARTS}\n{body}\nend {name};\n");
    match flat_text(name, &text) {
        Ok(m) => m,
        Err(e) => panic!("{e}"),
    }
}

fn binding(m: &FlatModel, name: &str) -> Option<Expr> {
    m.variables
        .iter()
        .find(|v| v.name == name)
        .and_then(|v| v.binding.clone())
}

fn asserts(m: &FlatModel) -> Vec<String> {
    equations(m)
        .into_iter()
        .filter(|e| e.starts_with("assert("))
        .collect()
}

#[test]
fn connected_twice_counts_two_and_defaults_apply_only_to_unconnected_connectors() {
    let m = model(
        "Twice",
        "  Source s;\n  Part a, b;\nequation\n  connect(s.p, a.p);\n  connect(a.p, b.p);\n  connect(a.n, b.n);\n",
    );
    assert_eq!(binding(&m, "a.np"), Some(Expr::Integer(2)));
    assert_eq!(binding(&m, "b.np"), Some(Expr::Integer(1)));
    let eqs = equations(&m);
    // a.n and b.n are connected: no default equation for them.
    assert!(
        !eqs.iter()
            .any(|e| e == "'a.n.v' = 0;" || e == "'b.n.v' = 0;"),
        "{eqs:#?}"
    );
    let checks = asserts(&m);
    assert_eq!(checks.len(), 2, "{checks:#?}");
    for a in checks {
        assert!(a.starts_with("assert(true"), "{a}");
    }
    assert!(!moss_frontend::print::print_model(&m).contains("cardinality"));
}

#[test]
fn unconnected_connector_folds_the_assert_to_false_and_takes_the_default() {
    let m = model("Alone", "  Part a;\n");
    assert_eq!(binding(&m, "a.np"), Some(Expr::Integer(0)));
    let eqs = equations(&m);
    assert!(eqs.iter().any(|e| e == "'a.n.v' = 0;"), "{eqs:#?}");
    // The assert keeps its message and fails when the model runs.
    assert_eq!(
        asserts(&m),
        vec!["assert(false, \"p must be connected\", AssertionLevel.error);".to_string()]
    );
}

#[test]
fn connects_in_for_loops_and_active_conditional_connects_count() {
    let m = model(
        "Chain",
        "  parameter Boolean closeLoop = false;\n  Source s;\n  Part parts[3];\nequation\n  connect(s.p, parts[1].p);\n  for i in 1:2 loop\n    connect(parts[i].n, parts[i + 1].p);\n  end for;\n  if closeLoop then\n    connect(parts[3].n, s.p);\n  end if;\n",
    );
    assert_eq!(binding(&m, "parts[1].np"), Some(Expr::Integer(1)));
    assert_eq!(binding(&m, "parts[3].np"), Some(Expr::Integer(1)));
    let eqs = equations(&m);
    // Only the last part's n is free (the conditional connect is inactive).
    assert!(eqs.iter().any(|e| e == "'parts[3].n.v' = 0;"), "{eqs:#?}");
    assert!(!eqs.iter().any(|e| e == "'parts[1].n.v' = 0;"), "{eqs:#?}");
    assert!(!eqs.iter().any(|e| e == "'parts[2].n.v' = 0;"), "{eqs:#?}");
}

#[test]
fn elements_of_connector_arrays_are_counted_one_by_one() {
    let text = r#"model Ports
  connector Pin
    Real v;
    flow Real i;
  end Pin;
  model Hub
    Pin q[2];
  equation
    for i in 1:2 loop
      if cardinality(q[i]) == 0 then
        q[i].v = 0;
      end if;
    end for;
    q[1].v = q[2].v + q[1].i;
  end Hub;
  model Source
    Pin p;
  equation
    p.v = 1;
  end Source;
  Hub h;
  Source s;
equation
  connect(s.p, h.q[2]);
end Ports;
"#;
    let m = flat_text("Ports", text).unwrap_or_else(|e| panic!("{e}"));
    let eqs = equations(&m);
    assert!(eqs.iter().any(|e| e == "'h.q[1].v' = 0;"), "{eqs:#?}");
    assert!(!eqs.iter().any(|e| e == "'h.q[2].v' = 0;"), "{eqs:#?}");
}

#[test]
fn cardinality_of_an_array_of_connectors_is_an_error_with_its_position() {
    let text = r#"model Whole
  connector Pin
    Real v;
    flow Real i;
  end Pin;
  Pin q[2];
equation
  assert(cardinality(q) > 0, "connect q");
  q[1].v = 0;
  q[2].v = 0;
end Whole;
"#;
    let e = flat_text("Whole", text).expect_err("array argument must be rejected");
    assert!(e.contains("needs a scalar connector"), "{e}");
    assert!(e.contains("Whole.mo:8:22"), "{e}");
}

#[test]
fn cardinality_of_a_variable_that_is_no_connector_is_an_error() {
    let text = r#"model NoConnector
  Real x;
equation
  x = if cardinality(x) > 0 then 1 else 0;
end NoConnector;
"#;
    let e = flat_text("NoConnector", text).expect_err("non-connector must be rejected");
    assert!(e.contains("not a connector"), "{e}");
    assert!(e.contains("NoConnector.mo:4"), "{e}");
}
