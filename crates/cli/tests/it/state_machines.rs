//! State machines (spec chapter 17) end to end: the tick-by-tick trace of delayed and
//! immediate transitions, the hierarchical and parallel example of spec 17.3.8 (merged
//! `outer output` definitions, reset transitions, delayed resets of inactive states), and
//! the errors for parallel assignments and a machine without initial state.

use crate::library_support;

use library_support::{simulate_source, translate_failure, Trajectories};

/// Values of `name` at ticks 0, 1, ... of a 0.1 s clock (read mid-interval).
fn per_tick(run: &Trajectories, name: &str, ticks: usize) -> Vec<i64> {
    (0..ticks)
        .map(|k| run.at(name, 0.1 * k as f64 + 0.05).round() as i64)
        .collect()
}

const TWO_STATES: &str = r#"
model TwoStates
  inner Integer v(start = 0);
  block Up
    outer output Integer v;
  equation
    v = previous(v) + 2;
  end Up;
  block Down
    outer output Integer v;
  equation
    v = previous(v) - 1;
  end Down;
  Up up;
  Down down;
  Boolean tick = sample(true, Clock(1, 10));
equation
  initialState(up);
  transition(up, down, v >= 6 and tick, immediate = false);
  transition(down, up, v == 0, immediate = false);
end TwoStates;
"#;

/// Delayed transitions: the condition seen at tick k switches the state at tick k + 1, and
/// the entered state runs its equations at that tick.
#[test]
fn delayed_transitions_switch_one_tick_later() {
    let run = simulate_source("TwoStates", TWO_STATES, &["--stop-time", "1.6"]);
    assert_eq!(
        per_tick(&run, "v", 16),
        vec![2, 4, 6, 5, 4, 3, 2, 1, 0, 2, 4, 6, 5, 4, 3, 2]
    );
}

/// An immediate transition fires at the tick its condition holds, before the source state
/// runs: the target's equations run at that very tick; `ticksInState()` counts the ticks
/// of the active state.
#[test]
fn immediate_transitions_and_ticks_in_state() {
    let run = simulate_source(
        "Immediate",
        r#"
model Immediate
  inner Integer v(start = 0);
  inner Integer n(start = 0);
  block Count
    outer output Integer v;
    outer output Integer n;
  equation
    v = previous(v) + 1;
    n = ticksInState();
  end Count;
  block Hold
    outer output Integer v;
    outer output Integer n;
  equation
    v = previous(v);
    n = ticksInState();
  end Hold;
  Count count;
  Hold hold;
  Real t = sample(time, Clock(1, 10));
equation
  initialState(count);
  transition(count, hold, t > 0.25);
  transition(hold, count, ticksInState() >= 3, immediate = false);
end Immediate;
"#,
        &["--stop-time", "1.2"],
    );
    // ticks 0..2 count (v = 1, 2, 3); at tick 3 (t = 0.3) the immediate transition makes
    // `hold` active at once; after 3 ticks in `hold` the delayed transition returns to
    // `count`, which runs for that one tick (a state entered by a delayed transition is
    // active for at least one tick: only the selected state's immediate transitions are
    // considered) before t > 0.25 sends it back to `hold`
    assert_eq!(
        per_tick(&run, "v", 12),
        vec![1, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5]
    );
    assert_eq!(
        per_tick(&run, "n", 7),
        vec![1, 2, 3, 1, 2, 3, 1],
        "ticksInState restarts at each entry"
    );
}

const HIERARCHICAL: &str = r#"
block Hierarchical
  inner Integer v(start = 0);
  State1 state1;
  State2 state2;
  Boolean tick = sample(true, Clock(1, 10));
equation
  initialState(state1);
  transition(state1, state2,
             activeState(state1.stateD) and activeState(state1.stateY) and tick,
             immediate = false);
  transition(state2, state1, v >= 20, immediate = false);
public
  block State1
    inner Integer count(start = 0);
    inner outer output Integer v;
    block StateA
      outer output Integer v;
    equation
      v = previous(v) + 2;
    end StateA;
    StateA stateA;
    block StateB
      outer output Integer v;
    equation
      v = previous(v) - 1;
    end StateB;
    StateB stateB;
    block StateC
      outer output Integer count;
    equation
      count = previous(count) + 1;
    end StateC;
    StateC stateC;
    block StateD
    end StateD;
    StateD stateD;
  equation
    initialState(stateA);
    transition(stateA, stateB, v >= 6, immediate = false);
    transition(stateB, stateC, v == 0, immediate = false);
    transition(stateC, stateA, true, immediate = false, priority = 2);
    transition(stateC, stateD, count >= 2, immediate = false);
  public
    block StateX
      outer input Integer v;
      Integer i(start = 0);
      Integer w;
    equation
      i = previous(i) + 1;
      w = v;
    end StateX;
    StateX stateX;
    block StateY
      Integer j(start = 0);
    equation
      j = previous(j) + 1;
    end StateY;
    StateY stateY;
  equation
    initialState(stateX);
    transition(stateX, stateY, stateX.i > 20,
               immediate = false, reset = false);
  end State1;
  block State2
    outer output Integer v;
  equation
    v = previous(v) + 5;
  end State2;
end Hierarchical;
"#;

/// The example of spec 17.3.8: two parallel machines inside `state1`, `v` assigned at
/// three levels through `inner outer`, `count` reset by the reset transition back to
/// `state1`, `j` of the inactive `stateY` reset only when `stateY` is entered again.
#[test]
fn hierarchical_and_parallel_example_of_the_specification() {
    let run = simulate_source("Hierarchical", HIERARCHICAL, &["--stop-time", "5.5"]);
    let v = per_tick(&run, "v", 54);
    // stateA up to 6, stateB down to 0, stateC, again, then stateD
    assert_eq!(
        &v[..21],
        &[2, 4, 6, 5, 4, 3, 2, 1, 0, 0, 2, 4, 6, 5, 4, 3, 2, 1, 0, 0, 0]
    );
    // stateD and stateY active (ticks 20, 21): state2 adds 5 until v >= 20
    assert_eq!(&v[21..27], &[0, 5, 10, 15, 20, 22]);
    let count = per_tick(&run, "state1.count", 27);
    assert_eq!(count[9], 1, "stateC counts once per visit");
    assert_eq!(count[19], 2);
    assert_eq!(count[26], 0, "the reset transition to state1 resets count");
    let i = per_tick(&run, "state1.stateX.i", 27);
    assert_eq!(&i[..3], &[1, 2, 3]);
    assert_eq!(i[20], 21, "stateX runs in parallel until i > 20");
    assert_eq!(i[26], 1, "stateX restarts after the reset transition");
    let j = per_tick(&run, "state1.stateY.j", 54);
    assert_eq!(j[21], 1, "stateY entered");
    assert_eq!(j[26], 1, "stateY inactive: j keeps its value");
    // after the reset, stateY is entered again when i > 20 once more (tick 47): j restarts
    assert_eq!(j[47], 1);
    assert_eq!(j[49], 3);
    assert_eq!(
        per_tick(&run, "state1.stateX.w", 3),
        vec![2, 4, 6],
        "w = v in stateX"
    );
}

/// Two parallel machines assigning one variable violate the single-assignment rule.
#[test]
fn parallel_assignments_are_rejected() {
    let stderr = translate_failure(
        "Parallel",
        r#"
model Parallel
  inner Integer v(start = 0);
  block Inc
    outer output Integer v;
  equation
    v = previous(v) + 1;
  end Inc;
  block Idle
  end Idle;
  Inc a;
  Idle b;
  Inc c;
  Idle d;
  Boolean tick = sample(true, Clock(0.1));
equation
  initialState(a);
  transition(a, b, tick);
  initialState(c);
  transition(c, d, tick);
end Parallel;
"#,
    );
    assert!(
        stderr.contains("can be active at the same tick"),
        "names the problem: {stderr}"
    );
    assert!(stderr.contains("Parallel.mo:"), "locates it: {stderr}");
}

#[test]
fn machine_without_initial_state_is_rejected() {
    let stderr = translate_failure(
        "NoInitial",
        r#"
model NoInitial
  block S
  end S;
  S a;
  S b;
  Boolean tick = sample(true, Clock(0.1));
equation
  transition(a, b, tick);
end NoInitial;
"#,
    );
    assert!(stderr.contains("has no initial state"), "{stderr}");
    assert!(
        stderr.contains("initialState(a)"),
        "suggests the fix: {stderr}"
    );
}

#[test]
fn active_state_of_an_instance_that_is_no_state_is_rejected() {
    let stderr = translate_failure(
        "NotAState",
        r#"
model NotAState
  block S
  end S;
  S a;
  S b;
  S c;
  Boolean tick = sample(true, Clock(0.1));
equation
  initialState(a);
  transition(a, b, tick and activeState(c));
end NotAState;
"#,
    );
    assert!(stderr.contains("`c` is not a state"), "{stderr}");
    assert!(stderr.contains("NotAState.mo:11:"), "locates it: {stderr}");
}
