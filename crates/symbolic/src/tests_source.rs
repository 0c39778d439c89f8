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

/// Two inductors in series around a parallel pair of resistors: the connection equations at
/// the two ends of the pair, `L1.i = R1.i + R2.i` and `L2.i = R1.i + R2.i`, are each regular
/// but together say `L1.i = L2.i`. Unseen, both currents were states (and the pair's block
/// singular); the shared sum makes them aliases and the model an index-1 system with one
/// state (the currents of inductors in series are one quantity).
#[test]
fn ends_of_a_parallel_pair_carry_the_same_flow() {
    let src = format!(
        "{PINS}
model Resistor
  parameter Real R = 1;
  Pin p;
  Pin n;
equation
  p.v - n.v = R*p.i;
  p.i + n.i = 0;
end Resistor;
model Inductor
  parameter Real L = 1;
  Real i(start = 0, fixed = true);
  Pin p;
  Pin n;
equation
  L*der(i) = p.v - n.v;
  p.i + n.i = 0;
  i = p.i;
end Inductor;
model Source
  Pin p;
  Pin n;
equation
  p.v - n.v = 2;
  p.i + n.i = 0;
end Source;
model Ground
  Pin p;
equation
  p.v = 0;
end Ground;
model Circuit
  Source s;
  Inductor L1(L = 1);
  Resistor R1(R = 2);
  Resistor R2(R = 2);
  Inductor L2(L = 3, i(fixed = false));
  Ground g;
equation
  connect(s.p, L1.p);
  connect(L1.n, R1.p);
  connect(L1.n, R2.p);
  connect(R1.n, L2.p);
  connect(R2.n, L2.p);
  connect(L2.n, s.n);
  connect(s.n, g.p);
end Circuit;
"
    );
    let p = translate_source(&src);
    assert_eq!(p.states.len(), 1, "states: {:?}", p.states);
    // one current through the chain: di/dt = (2 - 1*i)/(1 + 3) at i = 0
    let ev = evaluate(&p);
    let der_state = p.derivatives[0];
    assert!((ev.get(&p.vars[der_state as usize].name) - 0.5).abs() < 1e-12);
}

/// `cos(pi/2)` of an evaluated orientation is 6.1e-17 in floating point: a coefficient that is
/// zero. Evaluated as exactly zero, the winding equations lose the term and are solved for
/// the other flux component instead of dividing by it.
#[test]
fn orientations_at_right_angles_give_exact_zero_coefficients() {
    let p = translate_source(
        "model TwoWindings
  parameter Real o[2] = {0, 2*atan(1)} annotation(Evaluate=true);
  parameter Real c[2] = {cos(o[k]) for k in 1:2};
  parameter Real s[2] = {sin(o[k]) for k in 1:2};
  Real phi_re, phi_im;
  Real i[2](each start = 1, each fixed = true);
equation
  for k in 1:2 loop
    -i[k] = c[k]*der(phi_re) + s[k]*der(phi_im);
  end for;
  phi_re = c[1]*i[1] + c[2]*i[2];
  phi_im = s[1]*i[1] + s[2]*i[2];
end TwoWindings;",
    );
    let evaluated: Vec<(&str, f64)> = p
        .report
        .evaluated_parameters
        .iter()
        .map(|e| (e.name.as_str(), e.value))
        .collect();
    assert!(evaluated.contains(&("c[2]", 0.0)), "{evaluated:?}");
    assert!(evaluated.contains(&("s[1]", 0.0)), "{evaluated:?}");
    let ev = evaluate(&p);
    assert_eq!(ev.get("der(phi_re)"), -1.0);
    assert_eq!(ev.get("der(phi_im)"), -1.0);
}

/// A preferred variable tied to a balance by algebraic equations becomes the state: the
/// level of a tank (`stateSelect = prefer`) rather than the mass whose derivative the mass
/// balance writes. `V = A*level + V0` and `m = V*d` are differentiated for it (as Modelica
/// tools do), so the level starts exactly at its start value and the model's
/// `assert(level <= height)` holds at a full tank (it failed at 2.0000000000000004 when the
/// level was computed back from the mass).
#[test]
fn preferred_level_is_the_state_of_a_tank_balance() {
    let p = translate_source(
        "model Tank
  parameter Real A = 2, V0 = 0.1, d = 998.2, height = 2;
  Real level(stateSelect = StateSelect.prefer, start = 2, fixed = true);
  Real V(stateSelect = StateSelect.never);
  Real m;
  Real q_out;
equation
  V = A*level + V0;
  m = V*d;
  der(m) = -q_out;
  q_out = 10*level;
  assert(level <= height, \"Tank starts to overflow\");
end Tank;",
    );
    let states: Vec<&str> = p
        .states
        .iter()
        .map(|&s| p.vars[s as usize].name.as_str())
        .collect();
    assert_eq!(states, ["level"]);
    let ev = evaluate(&p);
    assert_eq!(ev.get("level"), 2.0);
    // der(level) = -q_out/(A*d)
    assert!((ev.get("der(level)") + 20.0 / (2.0 * 998.2)).abs() < 1e-12);
}

/// A liquid's density with its derivative, shared by the medium-state tests below.
const LIQUID_DENSITY: &str = "  function rho \"density of a slightly compressible liquid\"
    input Real p;
    input Real h;
    output Real d;
  algorithm
    d := 1000*exp(4.5e-10*(p - 1e5) - 2e-7*(h - 1e5));
    annotation(derivative = rho_der);
  end rho;
  function rho_der
    input Real p;
    input Real h;
    input Real dp;
    input Real dh;
    output Real dd;
  algorithm
    dd := rho(p, h)*(4.5e-10*dp - 2e-7*dh);
  end rho_der;";

/// A liquid volume in the form of `Modelica.Fluid`: mass and energy balances on `m`, `U`,
/// the medium's `p` and `h` preferred states, tied to them by a nonlinear density function
/// (with its derivative) and `U = m*u`. The preferred variables become the states (the
/// chains are differentiated through the property function): integrated as the mass, the
/// pressure of a liquid would carry the mass's error times the bulk modulus.
#[test]
fn preferred_medium_states_through_a_property_function() {
    let p = translate_source(
        &"model LiquidVolume
$LIQUID_DENSITY
  parameter Real V = 1e-3;
  Real p(stateSelect = StateSelect.prefer, start = 1e6, fixed = true);
  Real h(stateSelect = StateSelect.prefer, start = 1e5, fixed = true);
  Real d, u, m, U;
equation
  d = rho(p, h);
  u = h - p/d;
  m = V*d;
  U = m*u;
  der(m) = 0.1*(1 - p/1e6) + 0.01;
  der(U) = 1e5*(0.1*(1 - p/1e6) + 0.01) + 50;
end LiquidVolume;"
            .replace("$LIQUID_DENSITY", LIQUID_DENSITY),
    );
    let mut states: Vec<&str> = p
        .states
        .iter()
        .map(|&s| p.vars[s as usize].name.as_str())
        .collect();
    states.sort();
    assert_eq!(states, ["h", "p"]);
    let ev = evaluate(&p);
    assert_eq!(ev.get("p"), 1e6);
    // der(m) = V*d*(4.5e-10*der(p) - 2e-7*der(h)) = 0.01 at the start
    let d = ev.get("d");
    let dm = 1e-3 * d * (4.5e-10 * ev.get("der(p)") - 2e-7 * ev.get("der(h)"));
    assert!((dm - 0.01).abs() < 1e-9, "der(m) = {dm}");
}

/// The chain to differentiate for a preferred variable stays inside its component when a
/// path of the same length leaves it through a connection: here the valve equation mentions
/// the volume's pressure and the flow into a pump, whose volume flow mentions the pump's
/// mass. That path (taken first, in equation order, by a plain breadth-first search) drags
/// the pump's characteristic, which has no derivative, into the reduction; the trial then
/// failed as a whole and the volume kept `m`, `U` as states (`Fluid.Examples.AST_BatchPlant`:
/// the pressures of shut pipes drifted). The tighter chain `d = rho(p, h)`, `m = V*d` wins.
#[test]
fn preferred_state_chains_stay_inside_their_component() {
    let p = translate_source(
        &"model VolumeBesidePump
$LIQUID_DENSITY
  function head \"pump characteristic without a derivative\"
    input Real V_flow;
    output Real dp;
    external \"C\" dp = pumpHead(V_flow);
  end head;
  parameter Real V = 1e-3, V_pump = 1e-4;
  Real p(stateSelect = StateSelect.prefer, start = 1e6, fixed = true);
  Real h(stateSelect = StateSelect.prefer, start = 1e5, fixed = true);
  Real d, u, m, U;
  Real m_flow \"from the volume through the valve into the pump\";
  Real m_pump(start = 0.1, fixed = true), V_flow, p_pump;
equation
  m_flow = 1e-6*(p - p_pump);
  V_flow = m_flow/(m_pump/V_pump);
  p_pump = 1e5 + head(V_flow);
  der(m_pump) = m_flow - 0.01;
  d = rho(p, h);
  u = h - p/d;
  m = V*d;
  U = m*u;
  der(m) = -m_flow + 0.02;
  der(U) = -m_flow*h + 0.02*1e5;
end VolumeBesidePump;"
            .replace("$LIQUID_DENSITY", LIQUID_DENSITY),
    );
    let mut states: Vec<&str> = p
        .states
        .iter()
        .map(|&s| p.vars[s as usize].name.as_str())
        .collect();
    states.sort();
    assert_eq!(states, ["h", "m_pump", "p"]);
}

/// A record-returning setter like `Medium.setState_phX` (`state := ThermodynamicState(p = p,
/// T = T_h(h))`) whose body calls a function that cannot be inlined: the body is inlined
/// around the call, so `state.p = p` can be solved for `p` when another equation fixes the
/// state's pressure (a pipe's port pressure determined by its momentum balance).
#[test]
fn body_around_a_call_that_cannot_be_inlined_is_inlined() {
    let src = "
function halvings \"not inlinable: a while loop\"
  input Real h;
  output Real T;
algorithm
  T := h;
  while T > 10 loop
    T := T / 2;
  end while;
end halvings;
function setState
  input Real p;
  input Real h;
  input Real X[:];
  output Real sp;
  output Real sT;
  output Real sX[2];
algorithm
  sp := if size(X, 1) == 2 then p else p;
  sT := halvings(h);
  sX := if size(X, 1) == 2 then X else cat(1, X, {1 - sum(X)});
end setState;
model PortState
  Real p;
  Real sp;
  Real sT;
  Real sX[2];
equation
  (sp, sT, sX) = setState(p, 3.0, {0.25});
  sp = 1 + 2 * time;
end PortState;
";
    // without the inlining: structurally singular (`p` undetermined, `sp` given twice)
    let p = translate_source(src);
    let blocks = format!("{:?}", p.blocks);
    assert!(!blocks.contains("setState"), "{blocks}");
    assert!(blocks.contains("halvings"), "{blocks}");
    // `p` from `sp` at t = 0, and the elements of `cat(1, X, {1 - sum(X)})` (the branch of
    // a constant condition); the test evaluator knows no user functions, so the block of
    // `halvings` is left out
    let without_call: Vec<_> = p
        .blocks
        .iter()
        .filter(|b| !format!("{b:?}").contains("halvings"))
        .cloned()
        .collect();
    let mut ev = Eval::new(&p);
    ev.run(&without_call);
    assert_eq!(ev.get("p"), 1.0);
    assert_eq!((ev.get("sX[1]"), ev.get("sX[2]")), (0.25, 0.75));
}

/// `semiLinear(x, a, b)` is `smooth(0, ...)` (spec 3.7.4.1): continuous in `x`, so its switch
/// at `x = 0` makes no zero crossing (a stream port's flow resting at zero made events chatter).
#[test]
fn semi_linear_makes_no_zero_crossing() {
    let src = "
model Reversal
  Real m = sin(time);
  Real H;
equation
  H = semiLinear(m, 2, 3);
end Reversal;
";
    let p = translate_source(src);
    assert!(p.zero_crossings.is_empty(), "{:?}", p.zero_crossings);
}

/// Rule 2 of spec 3.7.2.5: an unconnected port whose two flows are zero leaves
/// `H_flow = semiLinear(m_flow, h, h_medium)` true for any `h`; the equation becomes
/// `h = h_medium` (the compliance suite's `Classes.Balancing.CorrectBalance5`: without it,
/// "structurally singular").
#[test]
fn semi_linear_at_zero_flow_equates_its_stream_values() {
    let src = "
model Boundary
  connector Port
    Real p;
    flow Real m_flow;
    Real h;
    flow Real H_flow;
  end Port;
  Port port;
  Real h_medium = 3e5 + time;
equation
  port.p = 1e5;
  port.H_flow = semiLinear(port.m_flow, port.h, h_medium);
end Boundary;
";
    let p = translate_source(src);
    let ev = evaluate(&p);
    assert_eq!(ev.get("port.m_flow"), 0.0);
    assert_eq!(ev.get("port.H_flow"), 0.0);
    assert_eq!(ev.get("port.h"), ev.get("h_medium"));
    assert_eq!(ev.get("port.h"), 3e5);
}

/// A setter inlined around calls it cannot inline (`(p, T) = blend(x, pa, p2)` becomes
/// `p = x*pa + (1 - x)*p2`, `T = halvings(p)`), whose output is differentiated (`der(p)`):
/// differentiating `p` reads `p2`, an output of a unit, so that unit is split for index
/// reduction like the units whose outputs appear differentiated themselves. (Without: "the
/// system is structurally singular: ... not determined: dp, der(p2)", as
/// `Modelica.Media.Examples.WaterIF97` with `setSmoothState` and `setState_pT`.)
#[test]
fn units_read_by_definitions_of_differentiated_variables_are_split() {
    let src = "
function halvings \"not inlinable: a while loop\"
  input Real h;
  output Real T;
algorithm
  T := h;
  while T > 1e10 loop
    T := T / 2;
  end while;
  annotation(derivative = halvings_der);
end halvings;
function halvings_der
  input Real h;
  input Real dh;
  output Real dT;
algorithm
  dT := dh;
end halvings_der;
function source \"a unit: a setter whose body calls a setter through a tuple assignment\"
  input Real t;
  output Integer phase;
  output Real p;
  output Real T;
algorithm
  (phase, p, T) := inner_source(t);
end source;
function inner_source
  input Real t;
  output Integer phase;
  output Real p;
  output Real T;
algorithm
  phase := 1;
  p := 1 + t;
  T := halvings(2 * t);
end inner_source;
function blend
  input Real x;
  input Real pa;
  input Real pb;
  output Real p;
  output Real T;
algorithm
  p := x * pa + (1 - x) * pb;
  T := halvings(p);
end blend;
model SP2
  Integer phase;
  Real p2;
  Real T2;
  Real p;
  Real T;
  Real pa = 3;
  Real dp;
equation
  (phase, p2, T2) = source(time);
  (p, T) = blend(0.25, pa, p2);
  dp = der(p);
end SP2;
";
    let p = translate_source(src);
    assert_eq!(kind(&p, "dp"), Some(VarKind::Algebraic));
    assert!(p.states.is_empty());
}

/// The nonlinear loops of initialization iterate on variables whose start value the model
/// gives (a pressure `p(start = 2e5)`), not on those whose only start value is their type's
/// (`type Density = Real(start = 1)`), though tearing on either needs one iteration variable.
#[test]
fn initialization_iterates_on_variables_with_given_start_values() {
    let src = "
model GivenStart
  type Density = Real(start = 1);
  Density d;
  Real p(start = 2e5);
equation
  d = 1000 + 1e-3*sqrt(p);
  p = 2e8/d;
end GivenStart;
";
    let iterated = |p: &CausalProgram| -> Vec<String> {
        p.init_blocks
            .iter()
            .filter_map(|b| match b {
                crate::program::Block::Nonlinear { iteration_vars, .. } => Some(iteration_vars),
                _ => None,
            })
            .flatten()
            .map(|&v| p.vars[v as usize].name.clone())
            .collect()
    };
    let p = translate_source(src);
    assert_eq!(iterated(&p), ["p"]);
    let ev = evaluate(&p);
    let d = ev.get("d");
    assert!((d - 1000.447).abs() < 1e-3, "d = {d}");
    // `start = 0` is what a variable without a start value has: no preference
    let p = translate_source(&src.replace("p(start = 2e5)", "p(start = 0)"));
    assert_eq!(iterated(&p), ["d"]);
}

/// Of two aliases, the start value a model gives wins over one that only comes from a type,
/// without a warning about conflicting start values.
#[test]
fn given_start_value_beats_a_type_default_in_an_alias_set() {
    let src = "
model AliasStarts
  type Density = Real(start = 1);
  Density d;
  Real rho(start = 995);
  Real x(start = 1, fixed = true);
equation
  rho = d;
  der(x) = -x;
  d*d*d = 1e9*(1 + 0.001*x);
end AliasStarts;
";
    let p = translate_source(src);
    assert!(
        p.report
            .warnings
            .iter()
            .all(|w| !w.contains("different start value")),
        "{:?}",
        p.report.warnings
    );
    let kept = p
        .var_by_name("d")
        .or_else(|| p.var_by_name("rho"))
        .expect("one of the aliases is kept");
    assert_eq!(p.vars[kept as usize].start, 995.0);
}

/// The balances of a volume of a medium with states `p` and `T`, written (as index
/// reduction writes them for the MSL's fluid volumes) through the derivative functions of
/// its property functions: a loop in `der(p)`, `der(T)`. Derivative functions are linear in
/// their direction arguments, so the loop is linear, solved in one step. (The derivative
/// functions loop, so that they are called, not inlined.)
#[test]
fn loops_through_derivative_functions_are_linear_in_the_derivatives() {
    let src = "
model Volume
  function rho_pT
    input Real p;
    input Real T;
    output Real d = 0;
  algorithm
    for k in 1:2 loop
      d := d + (p/(287*T) + 1e-9*p*p)/2;
    end for;
    annotation(derivative = rho_pT_der);
  end rho_pT;
  function rho_pT_der
    input Real p;
    input Real T;
    input Real dp;
    input Real dT;
    output Real dd = 0;
  protected
    Integer k = 0;
  algorithm
    while k < 2 loop
      dd := dd + ((1/(287*T) + 2e-9*p)*dp - p/(287*T*T)*dT)/2;
      k := k + 1;
    end while;
  end rho_pT_der;
  function u_pT
    input Real p;
    input Real T;
    output Real u = 0;
  algorithm
    for k in 1:2 loop
      u := u + (718*T + 1e-3*p)/2;
    end for;
    annotation(derivative = u_pT_der);
  end u_pT;
  function u_pT_der
    input Real p;
    input Real T;
    input Real dp;
    input Real dT;
    output Real du = 0;
  protected
    Integer k = 0;
  algorithm
    while k < 2 loop
      du := du + (718*dT + 1e-3*dp)/2;
      k := k + 1;
    end while;
  end u_pT_der;
  parameter Real V = 0.1;
  Real p(start = 1e5, fixed = true);
  Real T(start = 300, fixed = true);
equation
  V*rho_pT_der(p, T, der(p), der(T)) = 1e-3;
  1e-3*u_pT(p, T) + V*rho_pT(p, T)*u_pT_der(p, T, der(p), der(T)) = 500;
end Volume;
";
    let p = translate_source(src);
    let loops: Vec<bool> = p
        .blocks
        .iter()
        .filter_map(|b| match b {
            crate::program::Block::Nonlinear { linear, .. } => Some(*linear),
            crate::program::Block::Linear { .. } => Some(true),
            _ => None,
        })
        .collect();
    assert_eq!(loops, [true], "one loop, linear in der(p), der(T)");
}

/// A position given with its derivatives as a `noDerivative` input (the MSL's
/// `Rotational.Sources.Move`): index reduction differentiates `position_der` with respect
/// to time through its `order = 2` annotation, and creates no derivatives of the inputs
/// that need none.
#[test]
fn moved_position_is_differentiated_twice_through_its_annotations() {
    let src = "
model MoveLike
  function position
    input Real q_qd_qdd[3];
    input Real dummy;
    output Real q;
  algorithm
    q := q_qd_qdd[1];
    annotation(derivative(noDerivative = q_qd_qdd) = position_der);
  end position;
  function position_der
    input Real q_qd_qdd[3];
    input Real dummy;
    input Real dummy_der;
    output Real qd;
  algorithm
    qd := q_qd_qdd[2];
    annotation(derivative(order = 2, noDerivative = q_qd_qdd) = position_der2);
  end position_der;
  function position_der2
    input Real q_qd_qdd[3];
    input Real dummy;
    input Real dummy_der;
    input Real dummy_der2;
    output Real qdd;
  algorithm
    qdd := q_qd_qdd[3];
  end position_der2;
  Real u[3];
  Real phi;
  Real w;
  Real tau;
equation
  u = {sin(time), cos(time), -sin(time)};
  phi = position(u, time);
  w = der(phi);
  2*der(w) = tau;
end MoveLike;
";
    let p = translate_source(src);
    assert!(p.states.is_empty(), "phi and w are given by the position");
    assert!(p.var_by_name("tau").is_some());
}
