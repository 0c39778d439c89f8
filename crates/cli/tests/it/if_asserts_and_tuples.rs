//! Three equation forms of spec chapters 8 and 11:
//! - an `assert` inside an if-equation with a varying condition is no equation (8.3.4
//!   counts equations only): it is checked while its branch is active;
//! - a when-equation whose condition merely mentions `initial()` (`not initial()`) takes no
//!   part in initialization (8.6): only `initial()` itself enables it there;
//! - a tuple assignment `(a, b) := f(literal)` in an algorithm gets every output of the
//!   call, not the first output folded at translation time (11.2.1).

use crate::library_support;

use library_support::{assert_close, moss_command, scratch_dir, simulate_source};

/// `moss simulate` of `source` that must fail; returns what moss printed on stderr.
fn failing_run(name: &str, source: &str) -> String {
    let dir = scratch_dir(name);
    let file = dir.join(format!("{name}.mo"));
    std::fs::write(&file, source).unwrap();
    let out = moss_command()
        .current_dir(&dir)
        .arg("simulate")
        .arg(&file)
        .arg("-o")
        .arg(dir.join("r.csv"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{name} must fail:\n{stderr}");
    stderr
}

fn guarded_assert(bound: f64) -> String {
    format!(
        r#"
model GuardedAssert
  Real x = time;
equation
  if x > 0.5 then
    assert(x < {bound}, "x passed the bound");
  elseif x > 0.2 then
    assert(x > 0.2, "never fails");
  end if;
  annotation(experiment(StopTime = 1));
end GuardedAssert;
"#
    )
}

#[test]
fn an_assert_in_an_if_equation_is_checked_only_in_its_branch() {
    // bound 2: never violated; the run ends normally
    let r = simulate_source("GuardedAssert", &guarded_assert(2.0), &[]);
    assert_close("end time", *r.time().last().unwrap(), 1.0, 1e-12);
    // bound 0.7: violated from t = 0.7 on (the branch is active from 0.5)
    let stderr = failing_run("GuardedAssert", &guarded_assert(0.7));
    assert!(
        stderr.contains("assertion failed: x passed the bound"),
        "{stderr}"
    );
    // bound 0.3: violated by x, but the branch is inactive until 0.5, and the run fails
    // there and not at 0.3
    let stderr = failing_run("GuardedAssert", &guarded_assert(0.3));
    assert!(stderr.contains("at time 0.5"), "{stderr}");
}

#[test]
fn a_when_on_not_initial_keeps_its_variable_at_the_start_value_initially() {
    let source = r#"
model NotInitial
  Boolean close(start = false, fixed = true);
  Real x(start = 3, fixed = true);
equation
  when not initial() then
    x = 6;
  end when;
  when x >= 5 then
    close = true;
  elsewhen x >= 4 then
    close = false;
  end when;
  annotation(experiment(StopTime = 0.1));
end NotInitial;
"#;
    let r = simulate_source("NotInitial", source, &[]);
    // x = 3 at initialization, 6 from the event at the start: the edge of x >= 5 closes
    assert_close("x after the start", r.last("x"), 6.0, 0.0);
    assert_close("close after the start", r.last("close"), 1.0, 0.0);
}

#[test]
fn a_tuple_assignment_of_a_call_with_literal_arguments_gets_every_output() {
    let source = r#"
model LiteralTuple
  function f
    input Real x;
    output Real r1;
    output Real r2;
    output Real r3;
  algorithm
    r1 := x * 2;
    r2 := x * 3;
    r3 := x * 4;
  end f;
  Real a, b, c;
algorithm
  (a, b, c) := f(1.5);
  annotation(experiment(StopTime = 0.1));
end LiteralTuple;
"#;
    let r = simulate_source("LiteralTuple", source, &[]);
    assert_close("a", r.last("a"), 3.0, 1e-12);
    assert_close("b", r.last("b"), 4.5, 1e-12);
    assert_close("c", r.last("c"), 6.0, 1e-12);
}
