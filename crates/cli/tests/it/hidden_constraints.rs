//! Constraints on states that only a linear combination of equations shows
//! (`moss_symbolic::hidden_constraints`), end to end on circuits written here.

use crate::library_support;

use library_support::{assert_close, moss_command, scratch_dir, simulate_source};

/// Three chokes from a grounded three-phase source into resistors in delta: the delta has
/// no connection to ground, so the sum of the node balances of its three corners is
/// `i1 + i2 + i3 = 0` although each balance has unknowns of its own.
const CHOKES_INTO_DELTA: &str = r#"
connector Pin
  Real v;
  flow Real i;
end Pin;

model Resistor
  parameter Real R = 1;
  Pin p, n;
  Real i = p.i;
equation
  p.v - n.v = R*p.i;
  p.i + n.i = 0;
end Resistor;

model Inductor
  parameter Real L = 1;
  Pin p, n;
  Real i(start = 0, fixed = true);
equation
  L*der(i) = p.v - n.v;
  p.i = i;
  p.i + n.i = 0;
end Inductor;

model SineSource
  parameter Real V = 1;
  parameter Real f = 50;
  parameter Real phase = 0;
  Pin p, n;
equation
  p.v - n.v = V*sin(2*3.141592653589793*f*time + phase);
  p.i + n.i = 0;
end SineSource;

model Ground
  Pin p;
equation
  p.v = 0;
end Ground;

model ChokesIntoDelta
  parameter Real R = 3;
  parameter Real L = 0.01;
  SineSource s1(V = 100, phase = 0);
  SineSource s2(V = 100, phase = -2*3.141592653589793/3);
  SineSource s3(V = 100, phase = -4*3.141592653589793/3);
  Ground g;
  Inductor l1(L = L), l2(L = L), l3(L = L);
  Resistor rab(R = R), rbc(R = R), rca(R = R);
equation
  connect(s1.n, g.p); connect(s2.n, g.p); connect(s3.n, g.p);
  connect(s1.p, l1.p); connect(s2.p, l2.p); connect(s3.p, l3.p);
  connect(l1.n, rab.p); connect(rab.n, l2.n);
  connect(l2.n, rbc.p); connect(rbc.n, l3.n);
  connect(l3.n, rca.p); connect(rca.n, l1.n);
end ChokesIntoDelta;
"#;

/// The delta of R is a star of R/3 per phase: from rest,
/// `i_k = V/|Z| (sin(w t + p_k - th) - sin(p_k - th) exp(-t R / (3 L)))`,
/// `Z = R/3 + j w L`, `th = arg Z`.
fn choke_current(k: usize, t: f64) -> f64 {
    let (v, r, l) = (100.0f64, 3.0f64, 0.01f64);
    let w = 2.0 * std::f64::consts::PI * 50.0;
    let phase = -(k as f64) * 2.0 * std::f64::consts::PI / 3.0;
    let (re, im) = (r / 3.0, w * l);
    let z = re.hypot(im);
    let th = im.atan2(re);
    v / z * ((w * t + phase - th).sin() - (phase - th).sin() * (-t * r / (3.0 * l)).exp())
}

#[test]
fn choke_currents_into_an_ungrounded_delta_are_constrained() {
    let run = simulate_source(
        "ChokesIntoDelta",
        CHOKES_INTO_DELTA,
        &[
            "--stop-time",
            "0.06",
            "--interval",
            "0.0005",
            "--tolerance",
            "1e-8",
        ],
    );
    for t in [0.0025, 0.011, 0.0235, 0.05] {
        for (k, name) in ["l1.i", "l2.i", "l3.i"].iter().enumerate() {
            assert_close(
                &format!("{name} at {t}"),
                run.at(name, t),
                choke_current(k, t),
                1e-4 * 100.0 / 3.0,
            );
        }
        let sum = run.at("l1.i", t) + run.at("l2.i", t) + run.at("l3.i", t);
        assert!(sum.abs() < 1e-9, "the choke currents sum to {sum} at {t}");
    }
}

#[test]
fn translate_dump_names_the_hidden_constraint() {
    let dir = scratch_dir("hidden_constraint_dump");
    let file = dir.join("ChokesIntoDelta.mo");
    std::fs::write(&file, CHOKES_INTO_DELTA).expect("write the model");
    let out = moss_command()
        .args(["translate", "--dump"])
        .arg(&file)
        .output()
        .expect("run moss translate");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("hidden constraints (1"))
        .unwrap_or_else(|| panic!("no hidden constraint reported:\n{text}"));
    for current in ["l1.i", "l2.i", "l3.i"] {
        assert!(line.contains(current), "{line}");
    }
    let states = text
        .lines()
        .find(|l| l.starts_with("states ("))
        .expect("a states line");
    assert!(states.starts_with("states (2)"), "{states}");
}

/// Three windings in delta, in alpha-beta-zero form, with a DC current source between two
/// terminals: the source and the middle terminal's balance fix `i1 - i3` and `i1 - i2`,
/// which do not involve the zero-sequence current, so `ia`, `ib` are constants (though
/// `stateSelect = prefer`) and `i0` is the state: it decays with `R0/L0` from its fixed
/// start. Choosing `der(i0)` as the dummy (structurally valid) had left `i0` at 5/3
/// forever and `ia` as the state, without a word.
#[test]
fn delta_winding_on_dc_keeps_its_zero_sequence_state() {
    let run = simulate_source(
        "DeltaWindingOnDC",
        r#"
model DeltaWindingOnDC
  parameter Real I = 10;
  parameter Real R = 0.5, L = 0.01, R0 = 0.2, L0 = 0.002;
  parameter Real k = sqrt(2/3), s = sqrt(3)/2;
  Real i1, i2, i3, v1, v2, v3;
  Real ia(stateSelect = StateSelect.prefer), ib(stateSelect = StateSelect.prefer);
  Real i0(start = 1, fixed = true);
  Real va, vb, v0, uA, uB, uC;
equation
  ia = k*(i1 - i2/2 - i3/2);
  ib = k*s*(i2 - i3);
  i0 = (i1 + i2 + i3)/3;
  va = k*(v1 - v2/2 - v3/2);
  vb = k*s*(v2 - v3);
  v0 = (v1 + v2 + v3)/3;
  va = R*ia + L*der(ia);
  vb = R*ib + L*der(ib);
  v0 = R0*i0 + L0*der(i0);
  v1 = uA - uB;
  v2 = uB - uC;
  v3 = uC - uA;
  uC = 0;
  I = i1 - i3;
  0 = i2 - i1;
end DeltaWindingOnDC;
"#,
        &["--stop-time", "0.05", "--tolerance", "1e-9"],
    );
    let k = (2.0f64 / 3.0).sqrt();
    for t in [0.0, 0.01, 0.03, 0.05] {
        let i0 = (-0.2 * t / 0.002f64).exp();
        assert_close(&format!("i0 at {t}"), run.at("i0", t), i0, 1e-6);
        assert_close(
            &format!("i1 at {t}"),
            run.at("i1", t),
            i0 + 10.0 / 3.0,
            1e-6,
        );
        assert_close(&format!("ia at {t}"), run.at("ia", t), k * 10.0 / 2.0, 1e-9);
    }
}
