//! The mechanisms state graphs (like the MSL's `Modelica.StateGraph`) rely on, end to end on
//! small self-contained models:
//!
//! - `pre` values of discrete variables as unknowns of the initialization problem: a step is
//!   active through `active = pre(newActive)` with the initial equations `active = true` and
//!   `pre(newActive) = pre(active)`, a transition's timer starts from `pre(t_start) = time`;
//!   a variable held by an inactive `when` equals its `pre` value given by an initial
//!   equation;
//! - `inner outer` components: a local reference denotes the outer one (the enclosing
//!   level's), while the components inside see the inner one (a composite step reports
//!   itself to its parent's root and counts its own steps with its own root).

use crate::library_support;

use library_support::{assert_close, moss_command, scratch_dir, Trajectories};

/// Simulate `source` and return the trajectories and what moss wrote on stderr (warnings).
fn simulate_with_warnings(name: &str, source: &str) -> (Trajectories, String) {
    let dir = scratch_dir(name);
    let file = dir.join(format!("{name}.mo"));
    std::fs::write(&file, source).expect("writes the model");
    let csv = dir.join("result.csv");
    let out = moss_command()
        .current_dir(&dir)
        .arg("simulate")
        .arg(&file)
        .arg("-o")
        .arg(&csv)
        .output()
        .expect("runs the moss binary");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "moss simulate {name} failed:\n{stderr}"
    );
    let result = moss_results::read_result(&csv).expect("reads the result");
    let _ = std::fs::remove_dir_all(&dir);
    let run = Trajectories {
        label: name.to_string(),
        result,
    };
    (run, stderr)
}

/// Steps and timed transitions written the way the MSL's StateGraph writes them.
const STATE_GRAPH: &str = r#"
package SG
  connector StepIn
    output Boolean occupied;
    input Boolean set;
  end StepIn;
  connector StepOut
    output Boolean available;
    input Boolean reset;
  end StepOut;
  connector TransitionIn
    input Boolean available;
    output Boolean reset;
  end TransitionIn;
  connector TransitionOut
    input Boolean occupied;
    output Boolean set;
  end TransitionOut;

  block Step
    parameter Boolean initialStep = false;
    Boolean active;
    Boolean newActive;
    StepIn inPort;
    StepOut outPort;
  initial equation
    active = initialStep;
    pre(newActive) = pre(active);
  equation
    active = pre(newActive);
    newActive = inPort.set or active and not outPort.reset;
    inPort.occupied = active;
    outPort.available = active;
  end Step;

  block Transition "fires waitTime after it became enabled"
    parameter Real waitTime;
    TransitionIn inPort;
    TransitionOut outPort;
    Boolean enableFire;
    Boolean fire;
    discrete Real t_start;
  initial equation
    pre(t_start) = time;
    pre(enableFire) = false;
  equation
    enableFire = inPort.available and not outPort.occupied;
    when enableFire then
      t_start = time;
    end when;
    fire = enableFire and time >= t_start + waitTime;
    inPort.reset = fire;
    outPort.set = fire;
  end Transition;
end SG;

model TwoSteps
  SG.Step s1(initialStep = true);
  SG.Step s2;
  SG.Transition t12(waitTime = 0.7);
  SG.Transition t21(waitTime = 0.4);
equation
  connect(s1.outPort, t12.inPort);
  connect(t12.outPort, s2.inPort);
  connect(s2.outPort, t21.inPort);
  connect(t21.outPort, s1.inPort);
  annotation(experiment(StartTime = 0.5, StopTime = 3));
end TwoSteps;
"#;

/// Each step is active from the firing of its input transition to the firing of its output
/// transition; both transitions wait from the instant they became enabled. Starting at 0.5,
/// with waits 0.7 and 0.4: s1 on [0.5, 1.2), s2 on [1.2, 1.6), s1 on [1.6, 2.3), s2 on
/// [2.3, 2.7), s1 from 2.7. The first wait counts from the start time (`pre(t_start) =
/// time`), not from the start value 0 of `t_start`.
#[test]
fn two_step_graph_switches_at_the_hand_computed_times() {
    let (run, warnings) = simulate_with_warnings("TwoSteps", STATE_GRAPH);
    // the initial equations determine every `pre` value: nothing is dropped or guessed
    assert!(
        !warnings.contains("initialization problem"),
        "unexpected initialization warnings:\n{warnings}"
    );
    assert_eq!(
        run.first("s1.active"),
        1.0,
        "the initial step is active at the start"
    );
    assert_eq!(run.first("s2.active"), 0.0);
    assert_eq!(run.first("t12.enableFire"), 1.0);
    let switches: Vec<(f64, f64, f64)> = run.jumps("s1.active");
    let times: Vec<f64> = switches.iter().map(|j| j.0).collect();
    let expected = [1.2, 1.6, 2.3, 2.7];
    assert_eq!(
        times.len(),
        expected.len(),
        "s1.active switches: {switches:?}"
    );
    for (k, (&t, &e)) in times.iter().zip(&expected).enumerate() {
        assert_close(&format!("switch {k} of s1.active"), t, e, 1e-9);
        // the steps alternate: s2 is active exactly when s1 is not
        let s1_after = switches[k].2;
        assert_eq!(s1_after, if k % 2 == 0 { 0.0 } else { 1.0 });
        assert_eq!(run.at("s2.active", t + 0.01), 1.0 - s1_after);
    }
    // the timer restarted at each enabling
    assert_close("t21 started", run.at("t21.t_start", 1.4), 1.2, 1e-9);
    assert_close("t12 restarted", run.at("t12.t_start", 2.0), 1.6, 1e-9);
}

/// A variable assigned only in a `when` keeps its `pre` value during initialization, and an
/// initial equation on that `pre` value sets it (not the start value).
#[test]
fn when_variables_start_from_their_initial_pre_values() {
    let (run, warnings) = simulate_with_warnings(
        "HeldPre",
        "model HeldPre
  discrete Real tLast(start = 0);
  Integer n(start = 0);
initial equation
  pre(tLast) = -1;
  pre(n) = 5;
equation
  when time >= 0.5 then
    tLast = time;
    n = pre(n) + 1;
  end when;
end HeldPre;",
    );
    assert!(
        !warnings.contains("initialization problem"),
        "unexpected initialization warnings:\n{warnings}"
    );
    assert_eq!(run.first("tLast"), -1.0);
    assert_eq!(run.first("n"), 5.0);
    assert_eq!(run.before("n", 0.5), 5.0);
    assert_close("tLast after the event", run.last("tLast"), 0.5, 1e-9);
    assert_eq!(run.last("n"), 6.0);
}

/// A root collects the flows of the users connected to it. `Group` is a user of the root
/// around it and the root of the users inside it: in `Group`, `root` written locally (its
/// connect, `seen`) is the enclosing one, while `a` and `b` (through `outer root`) see the
/// group's own.
const NESTED_ROOTS: &str = r#"
package IO
  connector P
    Real e;
    flow Real f;
  end P;
  model Root
    P p;
    Real total "sum of the flows of the users";
  equation
    p.e = 0;
    total = -p.f;
  end Root;
  model Leaf
    parameter Real w;
    P q;
  equation
    q.f = w;
  end Leaf;
  model User
    outer Root root;
    parameter Real w;
    Leaf leaf(w = w);
    Real seen = root.total;
  equation
    connect(leaf.q, root.p);
  end User;
  model Group
    inner outer Root root;
    User a(w = 1);
    User b(w = 2);
    Leaf leaf(w = 10);
    Real seen = root.total;
  equation
    connect(leaf.q, root.p);
  end Group;
end IO;

model NestedRoots
  inner IO.Root root;
  IO.Group g;
  IO.User u(w = 100);
end NestedRoots;
"#;

#[test]
fn inner_outer_is_outer_locally_and_inner_below() {
    let (run, _) = simulate_with_warnings("NestedRoots", NESTED_ROOTS);
    // the top root counts the group's own leaf and the user beside the group
    assert_close("root.total", run.last("root.total"), 110.0, 1e-12);
    // the group's root counts only the users inside the group
    assert_close("g.root.total", run.last("g.root.total"), 3.0, 1e-12);
    assert_close("g.a.seen", run.last("g.a.seen"), 3.0, 1e-12);
    assert_close("g.seen", run.last("g.seen"), 110.0, 1e-12);
    assert_close("u.seen", run.last("u.seen"), 110.0, 1e-12);
}
