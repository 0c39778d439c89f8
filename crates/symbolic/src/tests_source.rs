//! End-to-end tests from small Modelica sources written here: flattened by the real frontend
//! (no bundled library), then translated. Used where the symbolic stage depends on what the
//! frontend produces (connection equations, top-level connectors, functions).

use crate::api::translate_here;
use crate::program::{CausalProgram, VarKind};
use crate::testeval::Eval;
use moss_frontend::{flatten_model, FlatModel, LoadOptions};
use std::sync::atomic::{AtomicUsize, Ordering};

static NEXT_DIR: AtomicUsize = AtomicUsize::new(0);

/// Flatten the last class of `source` (written to a fresh temporary file).
pub fn flatten_source(source: &str) -> FlatModel {
    let dir = std::env::temp_dir().join(format!(
        "moss-symbolic-test-{}-{}",
        std::process::id(),
        NEXT_DIR.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let file = dir.join("Test.mo");
    std::fs::write(&file, source).expect("write test source");
    let opts = LoadOptions {
        libs: Vec::new(),
        use_modelicapath: false,
        use_bundled: false,
    };
    let result = flatten_model(&opts, &file.to_string_lossy());
    let _ = std::fs::remove_dir_all(&dir);
    match result {
        Ok(f) => f.model,
        Err(e) => panic!(
            "flattening failed: {}",
            e.diagnostics
                .iter()
                .map(|d| d.render(&e.sources))
                .collect::<Vec<_>>()
                .join("\n")
        ),
    }
}

pub fn translate_source(source: &str) -> CausalProgram {
    let flat = flatten_source(source);
    match translate_here(&flat) {
        Ok(p) => p,
        Err(d) => panic!(
            "translation failed: {}",
            d.iter()
                .map(|d| d.render(&flat.sources))
                .collect::<Vec<_>>()
                .join("\n")
        ),
    }
}

pub fn kind(p: &CausalProgram, name: &str) -> Option<VarKind> {
    p.var_by_name(name).map(|v| p.vars[v as usize].kind)
}

/// Evaluate the initialization and one pass of the simulation blocks at the start values.
pub fn evaluate(p: &CausalProgram) -> Eval<'_> {
    let mut ev = Eval::new(p);
    ev.run(&p.parameter_blocks);
    ev.run(&p.start_blocks);
    ev.initial = true;
    ev.run(&p.init_blocks);
    ev.initial = false;
    ev.run(&p.blocks);
    ev
}

const PINS: &str = "
connector Pin
  Real v;
  flow Real i;
end Pin;
connector RealInput = input Real;
connector RealOutput = output Real;
";

#[test]
fn connected_top_level_input_stays_an_input() {
    let src = format!(
        "{PINS}
block Gain
  parameter Real k = 2;
  RealInput u;
  RealOutput y;
equation
  y = k*u;
end Gain;
model Top
  RealInput u(start = 3);
  RealOutput y;
  Gain g;
equation
  connect(u, g.u);
  connect(g.y, y);
end Top;
"
    );
    let p = translate_source(&src);
    assert_eq!(kind(&p, "u"), Some(VarKind::Input));
    let ev = evaluate(&p);
    assert_eq!(ev.get("y"), 6.0);
}

#[test]
fn bound_top_level_input_is_computed() {
    let p = translate_source(
        "model Top
  input Real u = 2*time + 1;
  output Real y;
equation
  y = 3*u;
end Top;",
    );
    assert_ne!(kind(&p, "u"), Some(VarKind::Input));
    assert_eq!(evaluate(&p).get("y"), 3.0);
}

#[test]
fn floating_component_pins_are_grounded_one_at_a_time() {
    let src = format!(
        "{PINS}
model Resistor
  parameter Real R = 2;
  Real v;
  Real i;
  Pin p;
  Pin n(v(start = 1));
equation
  v = p.v - n.v;
  0 = p.i + n.i;
  i = p.i;
  v = R*i;
end Resistor;
"
    );
    let p = translate_source(&src);
    // one reference potential is enough: the last pin is grounded, the other stays open
    assert_eq!(kind(&p, "n.v"), Some(VarKind::Input));
    assert_ne!(kind(&p, "p.v"), Some(VarKind::Input));
    assert!(p.report.warnings.iter().any(|w| w.contains("`n.v`")));
    let ev = evaluate(&p);
    // open pin p: no current, so both pins sit at the grounded potential (start value 1)
    assert_eq!(ev.get("i"), 0.0);
    assert_eq!(ev.get("p.v"), 1.0);
}

#[test]
fn determined_pins_stay_open() {
    let src = format!(
        "{PINS}
model Source
  parameter Real V = 5;
  Pin p;
equation
  p.v = V;
end Source;
"
    );
    let p = translate_source(&src);
    assert_ne!(kind(&p, "p.v"), Some(VarKind::Input));
    assert!(p.report.warnings.iter().all(|w| !w.contains("top-level")));
    assert_eq!(evaluate(&p).get("p.v"), 5.0);
}

const STATE1: &str = "
function state1
  input Real u[2];
  input Real dummy;
  output Real s;
algorithm
  s := u[1];
  annotation(derivative(noDerivative = u) = state1der1);
end state1;
function state1der1
  input Real u[2];
  input Real dummy;
  input Real dummy_der;
  output Real sder1;
algorithm
  sder1 := u[2];
end state1der1;
";

#[test]
fn array_argument_with_no_derivative_is_not_differentiated() {
    // the adaptor pattern: the state comes with its derivative in an array argument that
    // the derivative function reads instead of differentiating it
    let src = format!(
        "{STATE1}
model Inverse
  parameter Real C = 2;
  Real v(start = 0);
  Real i;
  Real p;
  Real pder;
equation
  p = sin(time);
  pder = cos(time);
  v = state1({{p, pder}}, time);
  i = C*der(v);
end Inverse;
"
    );
    let p = translate_source(&src);
    assert!(p.states.is_empty(), "v is fixed by the constraint");
    let ev = evaluate(&p);
    assert_eq!(ev.get("i"), 2.0);
    // inlined after index reduction: no call of the adaptor functions is left
    let text = crate::dump::program_text(&p);
    assert!(!text.contains("state1"), "{text}");
}

#[test]
fn calls_of_annotated_functions_expose_the_arguments_they_read() {
    // `state1({a, b}, time)` reads only `a`: the constraint between two states is found and
    // differentiated (otherwise it would be solved for `b`, which it does not contain)
    let src = format!(
        "{STATE1}
model Coupled
  Real a(start = 1, fixed = true);
  Real b;
  Real c(start = 1);
  Real w;
equation
  der(a) = -a;
  b = der(a);
  c = state1({{a, b}}, time);
  der(c) = w;
end Coupled;
"
    );
    let p = translate_source(&src);
    assert_eq!(p.states.len(), 1);
    assert_eq!(evaluate(&p).get("w"), -1.0);
}

#[test]
fn second_derivative_annotation_on_the_first_derivative() {
    let src = "
function position
  input Real q[3];
  input Real dummy;
  output Real s;
algorithm
  s := q[1];
  annotation(derivative(noDerivative = q) = position_der);
end position;
function position_der
  input Real q[3];
  input Real dummy;
  input Real dummy_der;
  output Real sd;
algorithm
  sd := q[2];
  annotation(derivative(noDerivative = q, order = 2) = position_der2);
end position_der;
function position_der2
  input Real q[3];
  input Real dummy;
  input Real dummy_der;
  input Real dummy_der2;
  output Real sdd;
algorithm
  sdd := q[3];
end position_der2;
model Drive
  parameter Real m = 3;
  Real s;
  Real v;
  Real f;
equation
  s = position({cos(time), -sin(time), -cos(time)}, time);
  v = der(s);
  m*der(v) = f;
end Drive;
";
    let p = translate_source(src);
    assert!(p.states.is_empty());
    let ev = evaluate(&p);
    assert_eq!(ev.get("f"), -3.0);
    assert_eq!(ev.get("v"), 0.0);
}

#[test]
fn parameter_condition_around_a_derivative_is_evaluated() {
    let model = |flag: bool| {
        format!(
            "model Structural
  parameter Boolean use_der = {flag};
  Real y;
  Real y1;
equation
  y = 2*sin(time);
  y1 = if use_der then der(y) else 0;
end Structural;"
        )
    };
    // false: no derivative of `y` exists, so there is nothing to differentiate
    let p = translate_source(&model(false));
    assert_eq!(p.report.index_before_reduction, 0);
    assert_eq!(evaluate(&p).get("y1"), 0.0);
    let p = translate_source(&model(true));
    assert_eq!(evaluate(&p).get("y1"), 2.0);
}

#[test]
fn straight_line_function_without_annotation_is_inlined_for_differentiation() {
    let src = "
function scaled
  input Real u[2];
  output Real y;
protected
  Real t;
algorithm
  t := u[1]*u[2];
  y := t + 1;
end scaled;
model Constrained
  Real x(start = 1, fixed = true);
  Real w;
  Real z;
equation
  der(x) = -x;
  w = scaled({x, 3});
  der(w) = z;
end Constrained;
";
    let p = translate_source(src);
    assert_eq!(p.states.len(), 1);
    assert_eq!(evaluate(&p).get("z"), -3.0);
}

#[test]
fn algorithm_assigning_array_outputs_of_a_call_defines_every_element() {
    let src = "
function split
  input Real x;
  output Integer info;
  output Real a[2];
algorithm
  info := 1;
  a := {x, 2*x};
end split;
model Tuple
  Real u;
  Integer info(start = 0, fixed = true);
  Real a[2](each start = 5, each fixed = true);
equation
  u = time + 1;
algorithm
  when time > 0.5 then
    (info, a) := split(u);
  end when;
end Tuple;
";
    let p = translate_source(src);
    // assigned only inside `when`: discrete, initialized through `pre` without conflict
    for name in ["a[1]", "a[2]"] {
        assert_eq!(kind(&p, name), Some(VarKind::Discrete), "{name}");
    }
    assert!(
        p.report
            .warnings
            .iter()
            .all(|w| !w.contains("over-determined")),
        "{:?}",
        p.report.warnings
    );
    let outputs: Vec<&str> = p
        .blocks
        .iter()
        .filter_map(|b| match b {
            crate::program::Block::Algorithm { outputs, .. } => Some(outputs),
            _ => None,
        })
        .flatten()
        .map(|&v| p.vars[v as usize].name.as_str())
        .collect();
    assert_eq!(outputs, ["info", "a[1]", "a[2]"]);
}

#[test]
fn initial_algorithm_defines_variables_of_a_when_algorithm() {
    // as in an AD converter: the when-algorithm does not fire at initialization, so the
    // initial algorithm alone computes its variables there
    let src = "
model Converter
  Real u;
  Integer z(start = 0, fixed = true);
  Integer y[2];
initial algorithm
  for i in 1:2 loop
    y[i] := 7;
  end for;
algorithm
  when sample(0, 0.1) then
    z := integer(u);
    for i in 1:2 loop
      y[i] := mod(z, 2);
      z := div(z, 2);
    end for;
  end when;
equation
  u = 3*time;
end Converter;
";
    let p = translate_source(src);
    let init_algorithms: Vec<&Vec<u32>> = p
        .init_blocks
        .iter()
        .filter_map(|b| match b {
            crate::program::Block::Algorithm { outputs, .. } => Some(outputs),
            _ => None,
        })
        .collect();
    assert_eq!(init_algorithms.len(), 1, "only the initial algorithm runs");
    assert!(
        p.report
            .warnings
            .iter()
            .all(|w| !w.contains("over-determined")),
        "{:?}",
        p.report.warnings
    );
}

#[test]
fn loop_through_pre_of_another_algorithm_is_not_algebraic() {
    let src = "
model Radio
  Boolean a(start = false, fixed = true);
  Boolean b(start = false, fixed = true);
  Boolean pa;
  Boolean pb;
algorithm
  pa := pre(b);
  when pa then
    a := false;
  end when;
  when sample(0.5, 1) then
    a := true;
  end when;
algorithm
  pb := pre(a);
  when pb then
    b := false;
  end when;
  when sample(1, 1) then
    b := true;
  end when;
end Radio;
";
    let p = translate_source(src);
    assert_eq!(
        p.blocks
            .iter()
            .filter(|b| matches!(b, crate::program::Block::Algorithm { .. }))
            .count(),
        2
    );
}

fn call_outputs_of(p: &CausalProgram, blocks: &[crate::program::Block]) -> Vec<Vec<String>> {
    blocks
        .iter()
        .filter_map(|b| match b {
            crate::program::Block::CallOutputs { outputs, .. } => Some(
                outputs
                    .iter()
                    .map(|o| o.map_or("_".to_string(), |v| p.vars[v as usize].name.clone()))
                    .collect(),
            ),
            _ => None,
        })
        .collect()
}

#[test]
fn tuple_equation_with_array_outputs_assigns_every_element() {
    // the while loop keeps the call (an inlinable body would give one equation per element)
    let model = |lhs: &str| {
        format!(
            "
function coeffs
  input Real n;
  output Real a[2];
  output Real b;
algorithm
  a := {{1, n}};
  b := 0;
  while b < 3 loop
    b := b + 1;
  end while;
end coeffs;
model Coef
  parameter Real a[2](each fixed = false);
  parameter Real b(fixed = false);
  Real x(start = 0, fixed = true);
initial equation
  {lhs} = coeffs(x + 2);
equation
  der(x) = a[1] + a[2]*b;
end Coef;
"
        )
    };
    let p = translate_source(&model("(a, b)"));
    assert!(
        p.report.warnings.iter().all(|w| !w.contains("determined")),
        "{:?}",
        p.report.warnings
    );
    assert_eq!(call_outputs_of(&p, &p.init_blocks), [["a[1]", "a[2]", "b"]]);
    // a skipped array output keeps the positions of the following outputs
    let src = model("(, b)").replace("a[1] + a[2]*b", "b");
    let p = translate_source(&src);
    assert_eq!(call_outputs_of(&p, &p.init_blocks), [["_", "_", "b"]]);
}
