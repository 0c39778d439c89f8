//! A function call with several outputs (here a record result) inside an algebraic loop:
//! the call becomes part of the torn nonlinear system, computed once per iteration from the
//! iteration variables, as a semiconductor model computes its junction currents from the
//! node voltages those currents determine.
//!
//! The circuit: a sine source drives a resistor R, a diode and a capacitor C in series. The
//! diode's current and conductance come from one call of a function that is not inlined
//! (a `while` loop), so the loop `vd -> i -> vd` goes through the call unit.

use crate::library_support;

use library_support::{assert_close, moss_command, scratch_dir, simulate_source};

const DIODE_LOOP: &str = r#"
record JunctionState "current and conductance of a junction"
  Real i;
  Real g;
end JunctionState;

function junction "junction current, computed in a loop so that it is not inlined"
  input Real v;
  input Real Is;
  input Real Vt;
  output JunctionState s;
protected
  Integer k = 0;
algorithm
  while k < 1 loop
    s.i := Is*(exp(v/Vt) - 1);
    s.g := Is/Vt*exp(v/Vt);
    k := k + 1;
  end while;
end junction;

model DiodeLoop "a source charging a capacitor through a resistor and a diode"
  parameter Real R = 100;
  parameter Real C = 1e-3;
  parameter Real Is = 1e-9;
  parameter Real Vt = 0.025;
  Real vd "diode voltage";
  Real vc(start = 0, fixed = true) "capacitor voltage";
  JunctionState js;
equation
  js = junction(vd, Is, Vt);
  2*sin(10*time) = R*js.i + vd + vc;
  C*der(vc) = js.i;
  annotation(experiment(StopTime = 1, Interval = 0.01));
end DiodeLoop;
"#;

#[test]
fn a_call_with_several_outputs_is_solved_inside_a_loop() {
    let run = simulate_source("DiodeLoop", DIODE_LOOP, &[]);
    let (r, is, vt) = (100.0, 1e-9, 0.025);
    let (vd, vc, i, g) = (
        run.get("vd"),
        run.get("vc"),
        run.get("js.i"),
        run.get("js.g"),
    );
    for (k, &t) in run.time().iter().enumerate() {
        let source = 2.0 * (10.0 * t).sin();
        assert_close(
            &format!("mesh voltage at t = {t}"),
            r * i[k] + vd[k] + vc[k],
            source,
            1e-6,
        );
        let exact = is * ((vd[k] / vt).exp() - 1.0);
        assert_close(&format!("diode current at t = {t}"), i[k], exact, 1e-9);
        let conductance = is / vt * (vd[k] / vt).exp();
        assert_close(&format!("conductance at t = {t}"), g[k], conductance, 1e-9);
    }
    // the diode conducts during the positive half-wave: the capacitor charges
    assert!(run.max("vc") > 0.5, "vc stays low: {}", run.max("vc"));
    assert!(
        run.max("js.i") > 1e-3,
        "no forward current: {}",
        run.max("js.i")
    );
}

#[test]
fn the_call_runs_once_per_iteration_of_the_torn_system() {
    let dir = scratch_dir("DiodeLoopDump");
    let file = dir.join("DiodeLoop.mo");
    std::fs::write(&file, DIODE_LOOP).expect("writes the model");
    let out = moss_command()
        .arg("translate")
        .arg(&file)
        .arg("--dump")
        .output()
        .expect("runs the moss binary");
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let simulation = text
        .split("simulation blocks")
        .nth(1)
        .expect("the dump lists the simulation blocks");
    assert!(
        simulation.contains("nonlinear system, iteration variables [vd]"),
        "no torn system iterating on vd:\n{simulation}"
    );
    // one call unit computing both outputs, not one call per output
    assert_eq!(
        simulation.matches("junction(").count(),
        1,
        "the call is not grouped:\n{simulation}"
    );
    assert!(
        simulation.contains("(js.i, js.g) := junction("),
        "{simulation}"
    );
}

/// The same circuit with the call written as a tuple equation whose first output is a record
/// and whose second is a scalar, `(js, pw) = junctionPower(...)`: the record is one output
/// per field.
const DIODE_TUPLE: &str = r#"
record JunctionState "current and conductance of a junction"
  Real i;
  Real g;
end JunctionState;

function junctionPower "junction current and dissipated power, not inlined"
  input Real v;
  input Real Is;
  input Real Vt;
  output JunctionState s;
  output Real p;
protected
  Integer k = 0;
algorithm
  while k < 1 loop
    s.i := Is*(exp(v/Vt) - 1);
    s.g := Is/Vt*exp(v/Vt);
    p := v*s.i;
    k := k + 1;
  end while;
end junctionPower;

model DiodeTuple
  parameter Real R = 100;
  parameter Real C = 1e-3;
  Real vd "diode voltage";
  Real vc(start = 0, fixed = true) "capacitor voltage";
  JunctionState js;
  Real pw "power dissipated in the diode";
equation
  (js, pw) = junctionPower(vd, 1e-9, 0.025);
  2*sin(10*time) = R*js.i + vd + vc;
  C*der(vc) = js.i;
  annotation(experiment(StopTime = 1, Interval = 0.01));
end DiodeTuple;
"#;

#[test]
fn a_tuple_equation_with_a_record_output_is_solved_inside_a_loop() {
    let run = simulate_source("DiodeTuple", DIODE_TUPLE, &[]);
    let (vd, vc, i, pw) = (run.get("vd"), run.get("vc"), run.get("js.i"), run.get("pw"));
    for (k, &t) in run.time().iter().enumerate() {
        let source = 2.0 * (10.0 * t).sin();
        assert_close(
            &format!("mesh voltage at t = {t}"),
            100.0 * i[k] + vd[k] + vc[k],
            source,
            1e-6,
        );
        assert_close(&format!("power at t = {t}"), pw[k], vd[k] * i[k], 1e-9);
    }
    assert!(
        run.max("pw") > 1e-4,
        "no power dissipated: {}",
        run.max("pw")
    );
}
