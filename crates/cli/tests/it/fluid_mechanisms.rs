//! Mechanisms the Modelica.Fluid and Modelica.Media examples need, on small self-written
//! models with closed-form solutions: an Integer output of a record-returning medium
//! function (`phase` of `setState_phX`) inside an algebraic loop, and a `noDerivative`
//! annotation that names a record input (`derivative(noDerivative = properties)` of the
//! IF97 property functions), and a record with an array field returned by a function whose
//! scalar fields are differentiated (`der(smoothState.p)` with `smoothState =
//! setSmoothState(...)` of the moist-air and mixture-gas examples), and the mixing of stream
//! variables at a junction through flow reversals.

use crate::library_support;

use library_support::{assert_close, simulate_source};

/// `p + d = 3` with `d = density(setState(p, h))`: the call unit `(st.p, st.h, st.phase) =
/// setState(p, h)` (not inlinable: it has a `while` loop) is inside the loop, and one of
/// its outputs is the Integer `st.phase`, which the density reads. Tearing iterates on `p`
/// and assigns the phase inside the loop.
const PHASE_IN_LOOP: &str = r#"model PhaseInLoop
  record State
    Real p;
    Real h;
    Integer phase;
  end State;
  function setState
    input Real p;
    input Real h;
    input Integer phase = 0;
    output State s;
  protected
    Integer k = 0;
  algorithm
    while k < 2 loop
      k := k + 1;
    end while;
    s := State(p = p, h = h, phase = if phase <> 0 then phase elseif p < 10 then 1 else 2);
  end setState;
  function density
    input State s;
    output Real d;
  algorithm
    d := if s.phase == 1 then s.p*s.p/s.h else 2*s.p*s.p/s.h;
  end density;
  State st;
  Real p;
  Real d;
equation
  st = setState(p, 1 + time);
  d = density(st);
  p + d = 3;
end PhaseInLoop;
"#;

#[test]
fn integer_output_of_a_call_inside_an_algebraic_loop_is_assigned_not_iterated() {
    let run = simulate_source("PhaseInLoop", PHASE_IN_LOOP, &["--stop-time", "1"]);
    // phase 1: p + p^2/h = 3, so p = (-h + sqrt(h^2 + 12 h))/2 with h = 1 + t
    let p = |h: f64| (-h + (h * h + 12.0 * h).sqrt()) / 2.0;
    assert_close("p(0)", run.first("p"), p(1.0), 1e-9);
    assert_close("p(1)", run.last("p"), p(2.0), 1e-9);
    assert_close("d(1)", run.last("d"), 3.0 - p(2.0), 1e-9);
    assert_close("st.phase", run.last("st.phase"), 1.0, 0.0);
}

/// `derivative(noDerivative = c) = f_der` with a record input `c`: the record is one flat
/// input per field, and none of them gets a derivative argument. `y = f(x, c)` is
/// differentiated by index reduction (`z = der(y)`), and the generated derivative of `g`
/// (an algorithm with a `while` loop, not inlinable) calls `f_der`.
const NO_DERIVATIVE_RECORD: &str = r#"model NoDerRecord
  record Coefficients
    Real a;
    Real b;
  end Coefficients;
  function f
    input Real x;
    input Coefficients c;
    output Real y;
  algorithm
    y := c.a*x^2 + c.b;
    annotation(derivative(noDerivative = c) = f_der);
  end f;
  function f_der
    input Real x;
    input Coefficients c;
    input Real dx;
    output Real dy;
  algorithm
    dy := 2*c.a*x*dx;
  end f_der;
  function g
    input Real x;
    input Real a;
    output Real y;
  protected
    Integer k = 0;
  algorithm
    while k < 1 loop
      k := k + 1;
    end while;
    y := f(x, Coefficients(a = a, b = 7));
  end g;
  parameter Coefficients c(a = 3, b = 5);
  Real x(start = 1, fixed = true);
  Real y;
  Real z;
  Real v;
  Real w;
equation
  der(x) = 1;
  y = f(x, c);
  z = der(y);
  v = g(x, 3);
  w = der(v);
end NoDerRecord;
"#;

#[test]
fn no_derivative_naming_a_record_input_covers_its_fields() {
    let run = simulate_source("NoDerRecord", NO_DERIVATIVE_RECORD, &["--stop-time", "1"]);
    // x = 1 + t, y = 3 x^2 + 5, der(y) = 6 x; v = 3 x^2 + 7, der(v) = 6 x
    assert_close("z(0)", run.first("z"), 6.0, 1e-9);
    assert_close("z(1)", run.last("z"), 12.0, 1e-6);
    assert_close("w(1)", run.last("w"), 12.0, 1e-6);
    assert_close("v(1)", run.last("v"), 19.0, 1e-6);
}

/// `s = mix(time - 0.5, s1, s2)` returns a record with a scalar field `p` and an array field
/// `X`; `der(s.p)` needs the call differentiated. The scalar output becomes an equation of
/// its own (differentiated through the generated derivative of `mix`), the array output
/// stays computed by the call.
const ARRAY_FIELD_RECORD: &str = r#"
model ArrRec
  record S
    Real p;
    Real X[2];
  end S;
  function step
    input Real x;
    input Real a;
    input Real b;
    output Real y;
  algorithm
    y := if x > 0 then b else a;
    annotation(smoothOrder = 1);
  end step;
  function mix
    input Real x;
    input S a;
    input S b;
    output S s;
  algorithm
    s := S(p = step(x, a.p, b.p), X = step(x, a.X, b.X));
  end mix;
  S s1;
  S s2;
  S s;
  Real dp;
equation
  s1.p = 1 + time;
  s1.X = {time, 1 - time};
  s2.p = 2;
  s2.X = {0.5, 0.5};
  s = mix(time - 0.5, s1, s2);
  dp = der(s.p);
end ArrRec;
"#;

#[test]
fn scalar_field_of_a_record_with_an_array_field_is_differentiated() {
    let run = simulate_source("ArrRec", ARRAY_FIELD_RECORD, &["--stop-time", "1"]);
    // before t = 0.5 the mix is s1 (p = 1 + t, X = {t, 1 - t}), after it s2 (p = 2)
    assert_close("dp(0.25)", run.at("dp", 0.25), 1.0, 1e-9);
    assert_close("dp(0.75)", run.at("dp", 0.75), 0.0, 1e-9);
    assert_close("s.p(0.25)", run.at("s.p", 0.25), 1.25, 1e-9);
    assert_close("s.X[1](0.25)", run.at("s.X[1]", 0.25), 0.25, 1e-9);
    assert_close("s.X[2](0.75)", run.at("s.X[2]", 0.75), 0.5, 1e-9);
}

/// Stream connections through a component's own connectors: the mixing of an inside
/// connector reads `inStream` of an outside connector of its set, which the set one level up
/// resolves (`inStream(w.pipe.a.h_outflow)` is `inStream(w.a.h_outflow)`, which is
/// `src.port.h_outflow`).
const NESTED_STREAMS: &str = r#"
model NestedStream
  connector FluidPort
    Real p;
    flow Real m_flow;
    stream Real h_outflow;
  end FluidPort;
  model Source
    FluidPort port;
    Real h;
    parameter Real m = 1;
  equation
    port.m_flow = -m;
    port.h_outflow = h;
  end Source;
  model Sink
    FluidPort port;
    Real hIn;
  equation
    port.p = 1;
    port.h_outflow = 0;
    hIn = inStream(port.h_outflow);
  end Sink;
  model Pipe
    FluidPort a;
    FluidPort b;
    Real hIn;
  equation
    a.m_flow + b.m_flow = 0;
    a.p = b.p;
    b.h_outflow = inStream(a.h_outflow);
    a.h_outflow = inStream(b.h_outflow);
    hIn = inStream(a.h_outflow);
  end Pipe;
  model Wrapper
    FluidPort a;
    FluidPort b;
    Pipe pipe;
  equation
    connect(a, pipe.a);
    connect(pipe.b, b);
  end Wrapper;
  Source src(h = 10 + time);
  Wrapper w;
  Sink snk;
equation
  connect(src.port, w.a);
  connect(w.b, snk.port);
end NestedStream;
"#;

#[test]
fn in_stream_through_an_outside_connector_is_resolved_one_level_up() {
    let run = simulate_source("NestedStream", NESTED_STREAMS, &["--stop-time", "1"]);
    // the source's enthalpy 10 + t reaches the pipe inside the wrapper and the sink
    assert_close("w.pipe.hIn(0.5)", run.at("w.pipe.hIn", 0.5), 10.5, 1e-9);
    assert_close("snk.hIn(1)", run.last("snk.hIn"), 11.0, 1e-9);
}

/// A pipe's port whose mass flow a flow source fixes (`Fluid.Pipes.DynamicPipe` with
/// `modelStructure = a_v_b` behind a `MassFlowSource_T`): the friction law reads the port's
/// state `state_a = setState_ph(p_port, h)`, so the port pressure is determined only through
/// the state's pressure. The setter calls a function it cannot inline (`T_h`, a `while`
/// loop, as a medium's temperature inversion), and is inlined around that call:
/// `state_a.p = p_port` is solved for `p_port`. (Kept as a call unit, `state_a.p` was an
/// output of the call: "structurally singular", `p_port` undetermined.)
const PORT_PRESSURE: &str = r#"model PortPressure
  record State
    Real p;
    Real T;
  end State;
  function T_h
    input Real h;
    output Real T;
  algorithm
    T := h / 1000;
    while T > 1e9 loop
      T := T / 2;
    end while;
  end T_h;
  function setState_ph
    input Real p;
    input Real h;
    output State s;
  algorithm
    s := State(p = p, T = T_h(h));
  end setState_ph;
  parameter Real m_flow = 2 "fixed by the source";
  parameter Real R = 3 "laminar resistance";
  parameter Real p_vol = 1e5 "pressure of the volume behind the port";
  Real p_port;
  Real m;
  State state_a;
equation
  state_a = setState_ph(p_port, 3e5 + 1e5 * time);
  m = m_flow;
  m = (state_a.p - p_vol) / R * (state_a.T / 300);
end PortPressure;
"#;

#[test]
fn port_pressure_is_solved_through_an_inlined_state_setter() {
    let run = simulate_source("PortPressure", PORT_PRESSURE, &["--stop-time", "1"]);
    // m = (p - p_vol)/R * T/300 with T = h/1000: p = p_vol + m R 300 / T
    let p = |t: f64| 1e5 + 2.0 * 3.0 * 300.0 / ((3e5 + 1e5 * t) / 1000.0);
    assert_close("p_port(0)", run.first("p_port"), p(0.0), 1e-9);
    assert_close("p_port(1)", run.last("p_port"), p(1.0), 1e-9);
    assert_close("state_a.T(1)", run.last("state_a.T"), 400.0, 1e-9);
}

/// A valve whose opening is a discrete variable that takes the value of a zero parameter
/// (`opening_min = 0`, a closed `ValveDiscrete` of the AST_BatchPlant at the start):
/// `m = y*k*dp` in a loop. The tearing with the fewest iteration variables solves the valve
/// for `dp` (dividing by `y*k`, 0/0 while closed); variables assigned a value that is zero
/// in some branch are never divided by, so the loop is torn on `pb` and `pa` instead.
const CLOSED_VALVE: &str = r#"model ClosedValve
  parameter Real opening_min = 0;
  parameter Real k = 2;
  discrete Real y;
  Real m;
  Real dp;
  Real pa;
  Real pb;
equation
  when {initial(), time > 0.5} then
    y = if time > 0.5 then 1 else opening_min;
  end when;
  m = y * k * dp;
  dp = pa - pb;
  m = pb + sin(pb);
  pa + sin(pa) = 5 - m;
end ClosedValve;
"#;

#[test]
fn tearing_never_divides_by_an_opening_that_can_be_zero() {
    let run = simulate_source("ClosedValve", CLOSED_VALVE, &["--stop-time", "1"]);
    // closed: no flow, pb + sin(pb) = 0, pa + sin(pa) = 5
    assert_close("m(0)", run.first("m"), 0.0, 1e-12);
    assert_close("pb(0)", run.first("pb"), 0.0, 1e-9);
    let pa0 = run.first("pa");
    assert_close("pa(0) + sin(pa(0))", pa0 + pa0.sin(), 5.0, 1e-9);
    // open: every equation of the loop holds
    let (m, dp, pa, pb) = (
        run.last("m"),
        run.last("dp"),
        run.last("pa"),
        run.last("pb"),
    );
    assert!(m > 1.0, "flow through the open valve: {m}");
    assert_close("valve", m, 2.0 * dp, 1e-9);
    assert_close("pipe", m, pb + pb.sin(), 1e-9);
    assert_close("source", pa + pa.sin(), 5.0 - m, 1e-9);
}

/// Three pipes meet at a junction, fed by a source at `1 + sin(t)`, a mixing volume at 1 and
/// a source at `1 - sin(t)/2`: the junction's pressure is their mean, the flows reverse
/// together at every multiple of pi (where all three are zero at once, the mixing rule's
/// 0/0), and between reversals the volume either receives the first source's enthalpy
/// (100) or delivers its own. Closed form: the volume's enthalpy falls by the factor
/// `exp(-(1 - cos t)/6)` towards 100 while it receives, and holds while it delivers; what
/// flows towards the first source while it draws is the mixture `(h_vol + 1600)/5` of the
/// two others (inflows |sin|/6 and 2|sin|/3).
const JUNCTION: &str = r#"
connector Port
  Real p;
  flow Real m_flow;
  stream Real h_outflow;
end Port;
model Source "fixed pressure p_in and enthalpy h of the fluid it delivers"
  input Real p_in;
  parameter Real h;
  Port port;
equation
  port.p = p_in;
  port.h_outflow = h;
end Source;
model Pipe "laminar pipe without storage"
  parameter Real k = 1;
  Port a;
  Port b;
  Real H_flow "enthalpy flow from a to b";
equation
  a.m_flow + b.m_flow = 0;
  a.m_flow = k*(a.p - b.p);
  a.h_outflow = inStream(b.h_outflow);
  b.h_outflow = inStream(a.h_outflow);
  H_flow = a.m_flow*actualStream(a.h_outflow);
end Pipe;
model Volume "mixing volume of constant mass at a fixed pressure"
  parameter Real m = 1;
  parameter Real p = 1;
  Port port;
  Real h(start = 200, fixed = true);
equation
  port.p = p;
  port.h_outflow = h;
  m*der(h) = port.m_flow*(actualStream(port.h_outflow) - h);
end Volume;
model Junction3
  Source s1(p_in = 1 + sin(time), h = 100);
  Volume vol;
  Source s3(p_in = 1 - 0.5*sin(time), h = 400);
  Pipe p1;
  Pipe p2;
  Pipe p3;
equation
  connect(s1.port, p1.a);
  connect(vol.port, p2.a);
  connect(s3.port, p3.a);
  connect(p1.b, p2.b);
  connect(p1.b, p3.b);
end Junction3;
"#;

#[test]
fn stream_mixing_at_a_junction_through_flow_reversals() {
    let run = simulate_source(
        "Junction3",
        JUNCTION,
        &[
            "--stop-time",
            "10",
            "--interval",
            "0.01",
            "--tolerance",
            "1e-10",
        ],
    );
    let after_first = 100.0 + 100.0 * (-1.0_f64 / 3.0).exp();
    let after_second = 100.0 + 100.0 * (-2.0_f64 / 3.0).exp();
    assert_close(
        "vol.h while delivering",
        run.at("vol.h", 4.5),
        after_first,
        1e-6,
    );
    assert!(
        run.max_between("vol.h", 3.3, 6.2) - run.min_between("vol.h", 3.3, 6.2) < 1e-6,
        "vol.h must hold while the volume delivers"
    );
    assert_close(
        "vol.h after the second intake",
        run.at("vol.h", 9.5),
        after_second,
        1e-6,
    );
    for t in [4.5, 5.5] {
        let mix = (run.at("vol.h", t) + 1600.0) / 5.0;
        assert_close(
            &format!("mixture towards s1 at {t}"),
            run.at("p1.a.h_outflow", t),
            mix,
            1e-7,
        );
    }
    // the enthalpy flow goes through zero with the mass flow: no jump anywhere, also not at
    // the event rows of a reversal (its slope is at most about 0.83*360 per second)
    let time = run.time().to_vec();
    let h_flow = run.get("p1.H_flow");
    for k in 1..time.len() {
        let jump = (h_flow[k] - h_flow[k - 1]).abs();
        assert!(
            jump <= 300.0 * (time[k] - time[k - 1]) + 1e-6,
            "p1.H_flow jumps by {jump} between t = {} and {}",
            time[k - 1],
            time[k]
        );
    }
    // the enthalpy a port would receive stays between the enthalpies that can arrive
    for name in ["p1.a.h_outflow", "p2.a.h_outflow", "p3.a.h_outflow"] {
        assert!(
            run.min(name) >= 100.0 - 1e-9 && run.max(name) <= 400.0 + 1e-9,
            "{name}"
        );
    }
}
