//! End to end: `cardinality` in asserts and default equations. A load needs its pin `p`
//! connected and fixes the voltage of `n` itself when nobody connects it (the current
//! leaves through the load's own ground); connected to a source it runs (Ohm's law against
//! the default ground), left alone its assert stops the run at initialization with the
//! model's message.

use crate::library_support;

use library_support::{assert_close, moss_command, scratch_dir, simulate_source};

const PARTS: &str = r#"
  connector Pin
    Real v;
    flow Real i;
  end Pin;
  model Resistor
    parameter Real R = 2;
    Pin p, n;
  equation
    assert(cardinality(p) > 0, "pin p of the resistor must be connected");
    if cardinality(n) == 0 then
      n.v = 0;
    end if;
    p.v - n.v = R*p.i;
  end Resistor;
  model Source
    Pin p;
  equation
    p.v = 1 + time;
  end Source;
"#;

#[test]
fn connected_part_runs_with_its_default_ground() {
    let source = format!(
        "model Wired\n{PARTS}\n  Source s;\n  Resistor r;\nequation\n  connect(s.p, r.p);\n  annotation(experiment(StopTime = 1));\nend Wired;\n"
    );
    let run = simulate_source("Wired", &source, &[]);
    // n is grounded by the default equation, so the current is (1 + t)/R into p.
    assert_close("current at t = 0.5", run.at("r.p.i", 0.5), 0.75, 1e-9);
    assert_close("default ground of n", run.last("r.n.v"), 0.0, 1e-12);
}

#[test]
fn unconnected_part_stops_with_its_assert_message() {
    let dir = scratch_dir("cardinality-alone");
    let file = dir.join("Alone.mo");
    let source = format!("model Alone\n{PARTS}\n  Resistor r;\n  Source s;\nend Alone;\n");
    std::fs::write(&file, source).expect("write model");
    let out = moss_command()
        .current_dir(&dir)
        .arg("simulate")
        .arg(&file)
        .output()
        .expect("runs the moss binary");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("pin p of the resistor must be connected"),
        "{stderr}"
    );
}
