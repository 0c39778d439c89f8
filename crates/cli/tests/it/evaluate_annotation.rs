//! `annotation(Evaluate=true)` on parameters: their values are used at translation time, so a
//! capacitance that is zero removes its `C*der(v)` term and `v` is no longer a state (as other
//! tools do), a nonzero one changes nothing in the results, and `-p` on such a parameter (or on
//! one bound to it) is refused with a message that says why.
//!
//! The circuit: a sine source drives an inductor L into a node with a resistor R and a
//! capacitor C to ground. With C = 0 it is an RL circuit, `L di/dt = sin(t) - R i` with
//! i(0) = 0, whose solution is
//! i(t) = (R sin t - L cos t + L exp(-R t/L)) / (R^2 + L^2).

use crate::library_support;

use library_support::{assert_close, moss_command, scratch_dir, simulate_source};

/// The circuit with the capacitance declaration `c_decl` (the whole `parameter ... ;` line)
/// and the capacitor voltage declaration `v_decl`.
fn rlc_source(c_decl: &str, v_decl: &str) -> String {
    format!(
        r#"
model SourceRLC "Sine source, series inductor, resistor and capacitor in parallel to ground"
  {c_decl}
  parameter Real Cnode = C "capacitance of the node, passed on as a component would";
  parameter Real R = 2;
  parameter Real L = 0.5;
  Real iL(start = 0, fixed = true) "inductor current";
  {v_decl}
  Real iC "capacitor current";
equation
  L*der(iL) = sin(time) - v;
  iC = Cnode*der(v);
  iL = iC + v/R;
  annotation(experiment(StopTime = 3, Interval = 0.01, Tolerance = 1e-9));
end SourceRLC;
"#
    )
}

/// `moss <args>` on the source written to a scratch file: (success, stdout, stderr).
fn run_moss(name: &str, source: &str, args: &[&str]) -> (bool, String, String) {
    let dir = scratch_dir(name);
    let file = dir.join(format!("{name}.mo"));
    std::fs::write(&file, source)
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", file.display()));
    let out = moss_command()
        .current_dir(&dir)
        .arg(args[0])
        .arg(&file)
        .args(&args[1..])
        .output()
        .expect("runs the moss binary");
    let _ = std::fs::remove_dir_all(&dir);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The state names listed by `moss translate` (the lines under `states (n):`).
fn states_of(translate_output: &str) -> Vec<String> {
    translate_output
        .lines()
        .skip_while(|l| !l.starts_with("states ("))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.trim().split(':').next().map(str::to_string))
        .collect()
}

#[test]
fn zero_evaluated_capacitance_leaves_an_rl_circuit() {
    let source = rlc_source(
        "parameter Real C = 0 annotation(Evaluate=true);",
        "Real v \"capacitor voltage\";",
    );
    let (ok, out, err) = run_moss("ZeroC", &source, &["translate"]);
    assert!(ok, "{out}{err}");
    assert_eq!(states_of(&out), vec!["iL".to_string()], "{out}");
    assert!(
        out.contains("C = 0: declared with annotation(Evaluate=true)"),
        "{out}"
    );
    assert!(
        out.contains("Cnode = 0: bound to the evaluated parameter `C`"),
        "{out}"
    );

    let run = simulate_source("ZeroC", &source, &[]);
    let (r, l) = (2.0, 0.5);
    let (il, v, ic) = (run.get("iL"), run.get("v"), run.get("iC"));
    for (k, &t) in run.time().iter().enumerate() {
        let exact = (r * t.sin() - l * t.cos() + l * (-r * t / l).exp()) / (r * r + l * l);
        assert_close(&format!("iL at t = {t}"), il[k], exact, 1e-6);
        assert_close(&format!("v = R*iL at t = {t}"), v[k], r * il[k], 1e-9);
        assert_eq!(ic[k], 0.0, "no current into a zero capacitance at t = {t}");
    }
}

#[test]
fn nonzero_evaluated_capacitance_gives_the_same_trajectories() {
    let v_decl = "Real v(start = 0, fixed = true) \"capacitor voltage\";";
    let evaluated = simulate_source(
        "EvaluatedC",
        &rlc_source("parameter Real C = 0.2 annotation(Evaluate=true);", v_decl),
        &[],
    );
    let tunable = simulate_source(
        "TunableC",
        &rlc_source("parameter Real C = 0.2;", v_decl),
        &[],
    );
    assert_eq!(evaluated.time(), tunable.time());
    for name in ["iL", "v", "iC"] {
        let (a, b) = (evaluated.get(name), tunable.get(name));
        for (k, &t) in evaluated.time().iter().enumerate() {
            assert_close(&format!("{name} at t = {t}"), a[k], b[k], 1e-8);
        }
    }
    // the capacitor does charge: a second state, not an RL circuit
    let v = evaluated.get("v");
    assert!(v.iter().any(|x| x.abs() > 0.1), "v stays near zero: {v:?}");
}

#[test]
fn setting_an_evaluated_parameter_is_refused_with_the_reason() {
    let source = rlc_source(
        "parameter Real C = 0 annotation(Evaluate=true);",
        "Real v \"capacitor voltage\";",
    );
    let (ok, out, err) = run_moss("SetZeroC", &source, &["simulate", "-p", "C=1e-3"]);
    assert!(!ok, "setting an evaluated parameter must fail:\n{out}{err}");
    assert!(
        err.contains("cannot set `C`: it was evaluated at translation (declared with annotation(Evaluate=true))"),
        "{err}"
    );
    assert!(err.contains("translate again"), "{err}");
    let (ok, out, err) = run_moss("SetZeroCnode", &source, &["simulate", "-p", "Cnode=1e-3"]);
    assert!(!ok, "{out}{err}");
    assert!(
        err.contains("cannot set `Cnode`: it was evaluated at translation (bound to the evaluated parameter `C`)"),
        "{err}"
    );
    // parameters the annotation does not reach stay tunable
    let (ok, out, err) = run_moss("SetR", &source, &["simulate", "-p", "R=3"]);
    assert!(ok, "{out}{err}");
}

/// `n` lags in series; `n` sizes the array, `T` is an ordinary parameter.
const LAGS: &str = r#"
model Lags
  parameter Integer n = 3;
  parameter Real T = 0.5;
  parameter Boolean extra = false;
  Real x[n](each start = 0, each fixed = true);
  Real y;
equation
  T*der(x[1]) = 1 - x[1];
  for i in 2:n loop
    T*der(x[i]) = x[i - 1] - x[i];
  end for;
  if extra then
    y = 2*x[n];
  else
    y = x[n];
  end if;
end Lags;
"#;

#[test]
fn structural_parameters_are_refused_instead_of_ignored() {
    // Before, `-p n=4` simulated the 3-element model as if nothing had been asked.
    for (param, name) in [("n=4", "n"), ("extra=true", "extra")] {
        let (ok, out, err) = run_moss("StructuralLags", LAGS, &["simulate", "-p", param]);
        assert!(!ok, "setting `{param}` must fail:\n{out}{err}");
        assert!(
            err.contains(&format!(
                "cannot set `{name}`: it was evaluated at translation"
            )) && err.contains("model structure"),
            "{err}"
        );
    }
    // the parameter that sizes nothing stays settable
    let (ok, out, err) = run_moss("TunableLags", LAGS, &["simulate", "-p", "T=0.25"]);
    assert!(ok, "{out}{err}");
}

/// The circuit with its capacitance in a record `card` declared with `annotation(Evaluate=true)`
/// and a capacitance computed from it the way SPICE model cards do: the default `-1e40`
/// means "not given", tested by a relation.
const CARD_RLC: &str = r#"
record Card
  parameter Real C = -1e40 "capacitance, not given by default";
  parameter Real R = 2;
end Card;
model CardRLC "The RLC circuit with its parameters in an evaluated record"
  parameter Card card(C = 0) annotation(Evaluate=true);
  parameter Real Cnode = if card.C > -1e39 then card.C else 1e-3;
  parameter Real L = 0.5;
  Real iL(start = 0, fixed = true) "inductor current";
  Real v "capacitor voltage";
  Real iC "capacitor current";
equation
  L*der(iL) = sin(time) - v;
  iC = Cnode*der(v);
  iL = iC + v/card.R;
  annotation(experiment(StopTime = 3, Interval = 0.01, Tolerance = 1e-9));
end CardRLC;
"#;

#[test]
fn evaluate_on_a_record_applies_to_its_fields() {
    // spec 18.3: on a structured component the annotation applies to all its components;
    // `Cnode`'s binding, a relation on the evaluated field, is evaluated too
    let (ok, out, err) = run_moss("CardRLC", CARD_RLC, &["translate"]);
    assert!(ok, "{out}{err}");
    assert!(
        out.contains("card.C = 0: declared with annotation(Evaluate=true)"),
        "{out}"
    );
    assert!(
        out.contains("Cnode = 0: bound to the evaluated parameter `card.C`"),
        "{out}"
    );
    assert_eq!(states_of(&out), vec!["iL".to_string()], "{out}");
    let run = simulate_source("CardRLC", CARD_RLC, &[]);
    let (r, l) = (2.0, 0.5);
    let il = run.get("iL");
    for (k, &t) in run.time().iter().enumerate() {
        let exact = (r * t.sin() - l * t.cos() + l * (-r * t / l).exp()) / (r * r + l * l);
        assert_close(&format!("iL at t = {t}"), il[k], exact, 1e-6);
    }
}
