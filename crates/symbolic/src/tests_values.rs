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

/// A capacitor in parallel with two capacitors in series, charged through a resistor: the
/// loop of capacitors `v1 = v2 + v3` (not an alias) makes the system index 2; it must be
/// differentiated once and leaves two of the three voltages as states.
const CAPACITOR_LOOP: &str = "model CapacitorLoop
  parameter Real V = 10;
  parameter Real R = 2;
  parameter Real C1 = 1;
  parameter Real C2 = 3;
  parameter Real C3 = 6;
  Real v1;
  Real v2(start = 1, fixed = true);
  Real v3(start = 2, fixed = true);
  Real i1;
  Real i2;
  Real i;
equation
  C1*der(v1) = i1;
  C2*der(v2) = i2;
  C3*der(v3) = i2;
  v1 = v2 + v3;
  i = i1 + i2;
  V - v1 = R*i;
end CapacitorLoop;";

#[test]
fn capacitor_loop_is_index_two_with_two_states() {
    let p = translate_source(CAPACITOR_LOOP);
    assert_eq!(p.report.index_before_reduction, 2);
    assert_eq!(p.states.len(), 2);
    assert_eq!(p.report.dummy_derivatives.len(), 1);
    let ev = evaluate(&p);
    // at v1 = 3 the capacitors act as one of C1 + C2*C3/(C2 + C3) = 3
    assert!((ev.get("v1") - 3.0).abs() < 1e-12);
    let dv1 = (10.0 - 3.0) / (2.0 * 3.0);
    assert!((ev.get("der(v1)") - dv1).abs() < 1e-12);
    assert!((ev.get("der(v2)") + ev.get("der(v3)") - dv1).abs() < 1e-12);
    assert!((3.0 * ev.get("der(v2)") - 6.0 * ev.get("der(v3)")).abs() < 1e-12);
}

#[test]
fn under_determined_initialization_frees_the_state_not_its_derivative() {
    // no start value is fixed: the state takes its start value; a steady state
    // (`der(s) = 0`) would be a different, unrequested initialization
    let p = translate_source(&spring_damper("= 2"));
    let w = p.report.warnings.join("\n");
    assert!(
        w.contains("under-determined") && w.contains("s = 0.2"),
        "{w}"
    );
    assert!(!w.contains("der(s) = 0"), "{w}");
}

#[test]
fn over_determined_initialization_drops_the_start_equation_and_names_it() {
    // the initial equation is what the modeller asked for; the fixed start value gives way
    let p = translate_source(
        "model Twice
  Real x(start = 1, fixed = true);
initial equation
  x = 2;
equation
  der(x) = -x;
end Twice;",
    );
    let w = p.report.warnings.join("\n");
    assert!(w.contains("over-determined") && w.contains("x = 1"), "{w}");
    assert!(!w.contains("x = 2"), "{w}");
    assert_eq!(evaluate(&p).get("x"), 2.0);
    // the dropped equation is still checked after initialization (and fails here)
    assert!(p
        .init_blocks
        .iter()
        .any(|b| matches!(b, Block::Assert { .. })));
}

/// A sine source drives an inductor into a node with a resistor and a capacitor to ground;
/// `c_decl` declares the capacitance `C`, which reaches the capacitor through `Cnode`.
fn source_rlc(c_decl: &str) -> String {
    format!(
        "model SourceRLC
  {c_decl}
  parameter Real Cnode = C;
  parameter Real R = 2;
  parameter Real L = 0.5;
  parameter Real G = Cnode + 1/R \"bound to an evaluated and a tunable parameter\";
  Real iL(start = 0, fixed = true);
  Real v;
  Real iC;
equation
  L*der(iL) = sin(time) - v;
  iC = Cnode*der(v);
  iL = iC + v/R;
end SourceRLC;"
    )
}

#[test]
fn evaluated_zero_capacitance_removes_the_capacitor_state() {
    let p = translate_source(&source_rlc(
        "parameter Real C = 0 annotation(Evaluate=true);",
    ));
    assert_eq!(kind(&p, "C"), Some(VarKind::Constant));
    assert_eq!(kind(&p, "Cnode"), Some(VarKind::Constant));
    // G also depends on R, which stays tunable, so G is computed from R as before
    assert_ne!(kind(&p, "G"), Some(VarKind::Constant));
    assert_eq!(kind(&p, "R"), Some(VarKind::Parameter));
    assert_eq!(kind(&p, "iL"), Some(VarKind::State));
    assert_eq!(kind(&p, "v"), Some(VarKind::Algebraic));
    assert_eq!(p.states.len(), 1);
    assert!(
        p.report.dummy_derivatives.is_empty(),
        "no index reduction is needed"
    );
    let names: Vec<&str> = p
        .report
        .evaluated_parameters
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(names, ["C", "Cnode"]);
    // asked for by the model: reported, but not warned about
    assert!(p.report.warnings.iter().all(|w| !w.contains("evaluated")));
}

#[test]
fn capacitance_without_the_annotation_stays_tunable() {
    for decl in [
        "parameter Real C = 0.1;",
        "parameter Real C = 0.1 annotation(Evaluate=false);",
    ] {
        let p = translate_source(&source_rlc(decl));
        assert_eq!(kind(&p, "C"), Some(VarKind::Parameter), "{decl}");
        assert!(p.report.evaluated_parameters.is_empty(), "{decl}");
        assert_eq!(kind(&p, "v"), Some(VarKind::State), "{decl}");
        assert_eq!(p.states.len(), 2, "{decl}");
    }
}

#[test]
fn evaluated_boolean_is_reported_as_written() {
    let p = translate_source(
        "model Switchable
  parameter Boolean useDamping = true annotation(Evaluate=true);
  parameter Real d = 0.5;
  Real x(start = 1, fixed = true);
equation
  der(x) = if useDamping then -d*x else 0;
end Switchable;",
    );
    let e = p
        .report
        .evaluated("useDamping")
        .unwrap_or_else(|| panic!("{:?}", p.report.evaluated_parameters));
    assert_eq!(e.value_text(), "true");
    assert_eq!(kind(&p, "d"), Some(VarKind::Parameter));
    assert_eq!(kind(&p, "x"), Some(VarKind::State));
}

/// The assignments of the program that divide by a variable named `name`.
fn divisions_by(p: &crate::CausalProgram, name: &str) -> Vec<String> {
    let text = crate::dump::program_text(p);
    text.lines()
        .filter(|l| l.contains(":=") && l.contains(&format!("/{name})")))
        .map(str::to_string)
        .collect()
}

/// A torn loop never divides by a parameter whose value is zero (the off-diagonal entry of a
/// diagonal inductance matrix in a machine's air gap), nor by the sine or cosine of a
/// changing angle (an entry of a rotation matrix), though both are allowed divisors in
/// general: the first is always a division by zero, the second once a turn.
#[test]
fn tearing_avoids_zero_parameters_and_oscillating_divisors() {
    let p = translate_source(
        "model Tear
  parameter Real l12 = 0;
  parameter Real l11 = 2;
  Real x(start = 1);
  Real y(start = 1);
  Real z(start = 1);
  Real phi = 3*time;
equation
  l12*x + l11*y + y^3 = 1 + time;
  x + z*sin(phi) + y = 2;
  z + x^3 + cos(phi)*y = 3;
end Tear;",
    );
    let text = crate::dump::program_text(&p);
    assert!(text.contains("nonlinear system"), "{text}");
    assert!(divisions_by(&p, "l12").is_empty(), "{text}");
    assert!(
        !text.contains("/sin(phi)") && !text.contains("/cos(phi)"),
        "{text}"
    );
}

#[test]
fn structural_parameters_are_reported_by_name_and_array_element_only() {
    // `m` (or its element) sizes `x`; `mm` only starts with the same letter and sizes
    // nothing: it must stay settable.
    let p = translate_source(
        "model Sized
  parameter Integer m[2] = {2, 3};
  parameter Integer mm = 5;
  Real x[m[1]](each start = 1, each fixed = true);
equation
  der(x) = -mm*x;
end Sized;",
    );
    let names: Vec<&str> = p
        .report
        .evaluated_parameters
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    assert!(p.report.evaluated("m[1]").is_some(), "{names:?}");
    assert!(p.report.evaluated("mm").is_none(), "{names:?}");
    assert_eq!(
        names.len(),
        names.iter().collect::<std::collections::HashSet<_>>().len(),
        "each reported once: {names:?}"
    );
}
