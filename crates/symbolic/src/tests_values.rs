//! Structure that depends on parameter values: String parameters folded at translation time,
//! and parameters whose zero value makes an equation singular (evaluated, then the structure
//! is analysed again).

use crate::program::{Block, VarKind};
use crate::tests_source::{evaluate, kind, translate_source};
use moss_frontend::flat::{Expr, Statement};

/// A spring and a damper in parallel, free at both ends (the force through them is zero):
/// with `d = 0` the spring alone must carry no force, which fixes the elongation.
fn spring_damper(d: &str) -> String {
    format!(
        "model SpringDamperFree
  parameter Real c = 100;
  parameter Real d {d};
  parameter Real s0 = 0.1;
  Real s(start = 0.2);
  Real v;
  Real f;
equation
  v = der(s);
  f = c*(s - s0) + d*v;
  f = 0;
end SpringDamperFree;"
    )
}

#[test]
fn zero_damping_is_evaluated_and_the_constraint_found() {
    let p = translate_source(&spring_damper("(start = 0)"));
    // without the value, v would be computed as -c*(s - s0)/d: a division by zero
    assert_eq!(kind(&p, "d"), Some(VarKind::Constant));
    assert!(
        p.report
            .warnings
            .iter()
            .any(|w| w.contains("parameter `d` = 0 is evaluated") && w.contains("`v`")),
        "{:?}",
        p.report.warnings
    );
    assert!(p.states.is_empty(), "s is constrained, not a state");
    let ev = evaluate(&p);
    assert!((ev.get("s") - 0.1).abs() < 1e-12);
    assert_eq!(ev.get("v"), 0.0);
    assert_eq!(ev.get("f"), 0.0);
}

#[test]
fn nonzero_damping_stays_a_tunable_parameter() {
    let p = translate_source(&spring_damper("= 2"));
    assert_eq!(kind(&p, "d"), Some(VarKind::Parameter));
    assert!(p.report.warnings.iter().all(|w| !w.contains("evaluated")));
    assert_eq!(kind(&p, "s"), Some(VarKind::State));
    let ev = evaluate(&p);
    // v = -c*(s - s0)/d at s = 0.2
    assert!((ev.get("v") + 5.0).abs() < 1e-12);
}

#[test]
fn string_parameters_leave_the_numeric_program() {
    let p = translate_source(
        r#"model Windings
  parameter String group = "Dy";
  parameter String primary = group + "1";
  parameter Real V = 400;
  parameter Real Vph = V / (if primary == "Dy1" then 1 else 2);
  Real x(start = 1, fixed = true);
  Real y;
equation
  der(x) = -x;
  assert(x > -1, "winding " + primary + " out of range");
algorithm
  y := if group == "Dy" then Vph else 0;
end Windings;"#,
    );
    assert!(p.var_by_name("group").is_none());
    assert!(p.var_by_name("primary").is_none());
    let mut ev = crate::testeval::Eval::new(&p);
    ev.run(&p.parameter_blocks);
    assert_eq!(ev.get("Vph"), 400.0);
    // the algorithm reads the literal, not a slot
    let alg = p
        .blocks
        .iter()
        .find_map(|b| match b {
            Block::Algorithm { statements, .. } => Some(statements.clone()),
            _ => None,
        })
        .expect("the algorithm block");
    let mut names = Vec::new();
    for s in &alg {
        collect_names(s, &mut names);
    }
    assert!(!names.contains(&"group".to_string()), "{names:?}");
}

fn collect_names(s: &Statement, out: &mut Vec<String>) {
    let mut s = s.clone();
    moss_frontend::walk::statement_exprs_mut(&mut s, &mut |e| {
        moss_frontend::walk::visit(e, &mut |x| {
            if let Expr::Var { name, .. } = x {
                out.push(name.clone());
            }
        })
    });
}

#[test]
fn string_functions_fold_on_literals() {
    let mut a = crate::ir::Arena::new();
    let group = a.str("Dy01");
    let (one, two) = (a.num(1.0), a.num(2.0));
    let first = a.call(
        "Modelica.Utilities.Strings.substring",
        vec![group, one, one],
    );
    assert_eq!(a.as_str(first), Some("D"));
    let both = a.call(
        "Modelica.Utilities.Strings.substring",
        vec![group, one, two],
    );
    assert_eq!(a.as_str(both), Some("Dy"));
    let len = a.call("Modelica.Utilities.Strings.length", vec![group]);
    assert_eq!(a.as_const(len), Some(4.0));
    let d = a.str("D");
    let is_d = a.rel(crate::ir::Rel::Eq, first, d, false);
    assert_eq!(a.as_const(is_d), Some(1.0));
    let lower = a.str("d");
    let case_insensitive = a.num(0.0);
    let same = a.call(
        "Modelica.Utilities.Strings.isEqual",
        vec![d, lower, case_insensitive],
    );
    assert_eq!(a.as_const(same), Some(1.0));
    // an index out of range is the function's run-time error: the call stays
    let five = a.num(5.0);
    let bad = a.call(
        "Modelica.Utilities.Strings.substring",
        vec![group, five, five],
    );
    assert!(a.as_str(bad).is_none());
}
