//! Discrete-event logic of the kind the MSL's `Electrical.Digital` library is built from,
//! end to end on models written here: enumeration-valued signals, table sources written as
//! algorithms (`if time >= t[i] then y := x[i]`), inertial delays (`when change(x)` arming a
//! `time >= t_next` event), gates with `pre()` outputs, transport delays through
//! `integer(delay(xr, tau))`, register loops with `break`, and functions that look up
//! constant tables with their inputs. Every expected trace is worked out by hand in the
//! comments next to it.

use crate::library_support;

use library_support::{assert_close, simulate_source, Trajectories};

/// The logic values of the models below, as the result file stores them (1-based).
const U: f64 = 1.0;
const ZERO: f64 = 3.0;
const ONE: f64 = 4.0;

/// The transitions of `name` after the start: `(time, new value)`.
fn transitions(run: &Trajectories, name: &str) -> Vec<(f64, f64)> {
    let (time, y) = (run.time(), run.get(name));
    (1..time.len())
        .filter(|&i| y[i] != y[i - 1])
        .map(|i| (time[i], y[i]))
        .collect()
}

fn assert_trace(run: &Trajectories, name: &str, expected: &[(f64, f64)]) {
    let got = transitions(run, name);
    assert_eq!(
        got.len(),
        expected.len(),
        "{name}: transitions {got:?}, expected {expected:?}"
    );
    for (&(t, v), &(te, ve)) in got.iter().zip(expected) {
        assert_eq!(v, ve, "{name}: transitions {got:?}, expected {expected:?}");
        assert_close(&format!("{name} switching to {v}"), t, te, 1e-9);
    }
}

/// Shared classes: a four-valued logic, a table source, an inertial delay whose delay
/// depends on the direction of the change, an inverter with a `pre()` output and a
/// transport delay, in the style of the MSL's digital library.
const LOGIC: &str = r#"
  type Logic = enumeration('U', 'X', '0', '1');
  constant Logic NotTable[Logic] = {Logic.'U', Logic.'X', Logic.'1', Logic.'0'};
  // 1: rising (tLH), -1: falling (tHL), 0: no delay; rows old value, columns new value
  constant Integer DelayTable[Logic, Logic] = [0, 0, -1, 1; 0, 0, -1, 1; 1, 1, 0, 1; -1, -1, -1, 0];

  block Table
    parameter Logic x[:] = {Logic.'1'};
    parameter Real t[size(x, 1)] = {1};
    parameter Logic y0 = Logic.'U';
    output Logic y;
  algorithm
    y := y0;
    for i in 1:size(x, 1) loop
      if time >= t[i] then
        y := x[i];
      end if;
    end for;
  end Table;

  block InertialDelay
    parameter Real tLH = 0;
    parameter Real tHL = 0;
    parameter Logic y0 = Logic.'U';
    input Logic x;
    output Logic y(start = y0, fixed = true);
  protected
    Logic y_aux(start = y0, fixed = true);
    Logic y_old(start = y0, fixed = true);
    Integer lh;
    Real delayTime;
    discrete Real t_next;
  algorithm
    when {initial(), change(x) and not initial()} then
      y_old := if initial() or pre(y) == Logic.'U' then y0 else pre(y);
      lh := DelayTable[y_old, x];
      delayTime := if lh > 0 then tLH else if lh < 0 then tHL else 0;
      t_next := time + delayTime;
      if lh == 0 or delayTime < 1e-15 then
        y_aux := x;
      end if;
    elsewhen time >= t_next then
      y_aux := x;
    end when;
    y := y_aux;
  end InertialDelay;

  block Inverter
    input Logic x;
    output Logic y;
  protected
    Logic aux(start = Logic.'U', fixed = true);
  equation
    aux = NotTable[x];
    y = pre(aux);
  end Inverter;

  block TransportDelay
    parameter Real delayTime = 0;
    parameter Logic y0 = Logic.'U';
    input Logic x(start = Logic.'U', fixed = true);
    output Logic y;
  protected
    constant Logic values[:] = Logic.'U':Logic.'1';
    Logic x_delayed;
    Real xr;
  equation
    xr = Integer(pre(x));
    x_delayed = values[integer(delay(xr, delayTime))];
    y = if time >= delayTime then x_delayed else y0;
  end TransportDelay;
"#;

fn logic_model(name: &str, body: &str) -> String {
    format!("model {name}\n{LOGIC}\n{body}\nend {name};\n")
}

/// Source 'U' until 1, then '0', '1' at 2, a glitch back to '0' at 2.3, '1' at 4. The
/// inertial delay (rise 0.5, fall 0.2, from y0 = 'U') passes '0' at 1.2, swallows the 0.3 s
/// pulse at 2 (shorter than the rise delay: at 2.3 its input equals its output again) and
/// rises at 4.5. The inverter follows at the same instants, one event pass later. The
/// transport delay (0.1) gives its y0 = '0' before 0.1, then the inverter's value 0.1 s
/// earlier: 'U' (its value after initialization), '1' from 1.3, '0' from 4.6. The output
/// grid (0.07) hits none of these times: each is an event of its own.
#[test]
fn gate_chain_with_inertial_and_transport_delays_switches_at_hand_computed_times() {
    let source = logic_model(
        "GateChain",
        r#"
  Table source(x = {Logic.'0', Logic.'1', Logic.'0', Logic.'1'}, t = {1, 2, 2.3, 4});
  InertialDelay inertial(tLH = 0.5, tHL = 0.2);
  Inverter inverter;
  TransportDelay transport(delayTime = 0.1, y0 = Logic.'0');
equation
  inertial.x = source.y;
  inverter.x = inertial.y;
  transport.x = inverter.y;
  annotation(experiment(StopTime = 5, Interval = 0.07));"#,
    );
    let run = simulate_source("GateChain", &source, &[]);
    assert_trace(
        &run,
        "source.y",
        &[(1.0, ZERO), (2.0, ONE), (2.3, ZERO), (4.0, ONE)],
    );
    assert_eq!(run.first("inertial.y"), U);
    assert_trace(&run, "inertial.y", &[(1.2, ZERO), (4.5, ONE)]);
    assert_trace(&run, "inverter.y", &[(1.2, ONE), (4.5, ZERO)]);
    assert_eq!(run.first("transport.y"), ZERO);
    assert_trace(&run, "transport.y", &[(0.1, U), (1.3, ONE), (4.6, ZERO)]);
}

/// A table source switches by its own time events, and `change()` of its output fires at
/// each of them with `pre()` the value before: the counter steps exactly at the table times
/// and the remembered previous values are the table's.
#[test]
fn table_source_written_as_algorithm_switches_at_its_times() {
    let source = logic_model(
        "TableEvents",
        r#"
  Table source(x = {Logic.'0', Logic.'1', Logic.'0'}, t = {0.25, 0.5, 0.75});
  discrete Integer changes(start = 0, fixed = true);
  discrete Logic previous(start = Logic.'X', fixed = true);
equation
  when change(source.y) then
    changes = pre(changes) + 1;
    previous = pre(source.y);
  end when;
  annotation(experiment(StopTime = 1, Interval = 0.3));"#,
    );
    let run = simulate_source("TableEvents", &source, &[]);
    assert_trace(&run, "source.y", &[(0.25, ZERO), (0.5, ONE), (0.75, ZERO)]);
    assert_trace(&run, "changes", &[(0.25, 1.0), (0.5, 2.0), (0.75, 3.0)]);
    assert_trace(&run, "previous", &[(0.25, U), (0.5, ZERO), (0.75, ONE)]);
}

/// The transport delay's input starts as '0' although its declared start value is 'U': its
/// Real copy `xr = Integer(pre(x))` is 1 during initialization and 3 right after. The delayed
/// value is the one after initialization ('0'), and the event helper of `integer()` must
/// follow that first change although it happens without any crossing in time. Then the
/// input's steps at 0.4 and 0.6 come out 0.05 later.
#[test]
fn transport_delay_starts_from_the_value_after_initialization() {
    let source = logic_model(
        "TransportStart",
        r#"
  Table source(x = {Logic.'1', Logic.'0'}, t = {0.4, 0.6}, y0 = Logic.'0');
  TransportDelay transport(delayTime = 0.05, y0 = Logic.'X');
equation
  transport.x = source.y;
  annotation(experiment(StopTime = 1, Interval = 0.03));"#,
    );
    let run = simulate_source("TransportStart", &source, &[]);
    assert_eq!(run.first("transport.y"), 2.0);
    assert_trace(
        &run,
        "transport.y",
        &[(0.05, ZERO), (0.45, ONE), (0.65, ZERO)],
    );
}

/// `delay()` read only inside a `when` body (evaluated at two instants) still sees the whole
/// history of its argument: a step at 0.5 delayed by 0.2 is 0 when read at 0.699 and 1 when
/// read at 0.8, not a value interpolated between the instants the body ran.
#[test]
fn delay_read_inside_a_when_body_sees_the_recorded_history() {
    let run = simulate_source(
        "DelayInWhen",
        "model DelayInWhen
  Real u = if time >= 0.5 then 1 else 0;
  discrete Real early(start = -1, fixed = true);
  discrete Real late(start = -1, fixed = true);
equation
  when time >= 0.699 then
    early = delay(u, 0.2);
  end when;
  when time >= 0.8 then
    late = delay(u, 0.2);
  end when;
  annotation(experiment(StopTime = 1, Interval = 0.1));
end DelayInWhen;",
        &[],
    );
    assert_eq!(run.last("early"), 0.0);
    assert_eq!(run.last("late"), 1.0);
}

/// A `break` inside a for-loop of a model algorithm (loops there are unrolled) leaves that
/// loop only: the statements after the loop still run, and an inner loop's break does not
/// end the outer one (nor, with two iterators, the iteration over the first).
#[test]
fn break_in_an_algorithm_loop_leaves_only_that_loop() {
    let run = simulate_source(
        "LoopBreak",
        "model LoopBreak
  parameter Real v[4] = {1, 5, 2, 7};
  Integer firstBig;
  Integer visited;
  Integer nested;
  Integer pairs;
  Integer after;
algorithm
  firstBig := 0;
  visited := 0;
  for i in 1:4 loop
    visited := visited + 1;
    if v[i] > 4 then
      firstBig := i;
      break;
    end if;
  end for;
  nested := 0;
  for i in 1:3 loop
    for j in 1:3 loop
      if j > i then
        break;
      end if;
      nested := nested + 1;
    end for;
  end for;
  pairs := 0;
  for i in 1:2, j in 1:3 loop
    if j == 2 then
      break;
    end if;
    pairs := pairs + 10*i + j;
  end for;
  after := 1;
end LoopBreak;",
        &[],
    );
    assert_eq!(run.last("firstBig"), 2.0);
    assert_eq!(run.last("visited"), 2.0);
    // i = 1: j = 1; i = 2: j = 1, 2; i = 3: j = 1, 2, 3
    assert_eq!(run.last("nested"), 6.0);
    // (i, j) = (1, 1) and (2, 1)
    assert_eq!(run.last("pairs"), 32.0);
    assert_eq!(run.last("after"), 1.0);
}

/// A function looks up a constant table with the values of its array input (an address
/// decoder): the subscript is only known when the function runs.
#[test]
fn function_looks_up_a_constant_table_with_its_inputs() {
    let source = logic_model(
        "Decoder",
        r#"
  // weak values count as their strong ones, unknown ones make the address invalid
  constant Logic X01Table[Logic] = {Logic.'X', Logic.'X', Logic.'0', Logic.'1'};
  function address
    input Integer n;
    input Logic bits[n];
    output Integer a;
  protected
    Logic b;
  algorithm
    a := 1;
    for i in 1:n loop
      b := X01Table[bits[i]];
      if b == Logic.'1' then
        a := a + integer(2^(i - 1));
      elseif b == Logic.'X' then
        a := 0;
        break;
      end if;
    end for;
  end address;
  Table low(x = {Logic.'1', Logic.'0'}, t = {0.2, 0.6}, y0 = Logic.'0');
  Table high(x = {Logic.'1', Logic.'U'}, t = {0.4, 0.8}, y0 = Logic.'0');
  Integer a;
equation
  a = address(2, {low.y, high.y});
  annotation(experiment(StopTime = 1, Interval = 0.1));"#,
    );
    let run = simulate_source("Decoder", &source, &[]);
    // 00 -> 1, 01 (low bit set) -> 2 at 0.2, 11 -> 4 at 0.4, 10 -> 3 at 0.6, 'U' -> 0 at 0.8
    assert_eq!(run.first("a"), 1.0);
    assert_trace(&run, "a", &[(0.2, 2.0), (0.4, 4.0), (0.6, 3.0), (0.8, 0.0)]);
}
