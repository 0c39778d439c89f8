//! Dynamic state selection end to end: models whose constraints have solution-dependent
//! coefficients, so that no fixed choice of states stays valid. Checked against closed forms
//! (the period of a pendulum released from the horizontal), conservation laws, the
//! constraints themselves, and the continuity of the solution across the state switches.

use crate::library_support;

use library_support::{
    assert_close, moss_command, scratch_dir, simulate_source_with_stats, Trajectories,
};

const PENDULUM: &str = r#"
model Pendulum "Cartesian pendulum, index 3"
  parameter Real m = 1, g = 9.81, L = 1;
  parameter Real x0 = 1, y0 = 0, vx0 = 0;
  Real x(start = x0, fixed = true), y(start = y0, fixed = true);
  Real vx(start = vx0, fixed = true), vy(start = 0, fixed = true);
  Real F;
  Real E = m*g*y + 0.5*m*(vx^2 + vy^2) "energy";
equation
  der(x) = vx;
  der(y) = vy;
  m*der(vx) = -F*x;
  m*der(vy) = -F*y - m*g;
  x^2 + y^2 = L^2;
end Pendulum;
"#;

/// The complete elliptic integral of the first kind K(k), by the arithmetic-geometric mean.
fn elliptic_k(k: f64) -> f64 {
    let (mut a, mut b) = (1.0f64, (1.0 - k * k).sqrt());
    for _ in 0..40 {
        let (an, bn) = (0.5 * (a + b), (a * b).sqrt());
        a = an;
        b = bn;
    }
    std::f64::consts::PI / (2.0 * a)
}

fn assert_continuous(run: &Trajectories, names: &[&str]) {
    for name in names {
        let jumps = run.jumps(name);
        assert!(
            jumps.iter().all(|(_, a, b)| (a - b).abs() < 1e-9),
            "{name} jumps at a state switch: {jumps:?}"
        );
    }
}

/// Released from the horizontal, the pendulum swings through the bottom (where x = 0 and
/// the constraint can no longer be solved for x) and back: the states must switch between
/// x and y twice per half period, and it returns to its start after the period
/// T = 4 sqrt(L/g) K(sin 45°).
#[test]
fn pendulum_released_from_the_horizontal_keeps_its_period_and_energy() {
    let (g, l): (f64, f64) = (9.81, 1.0);
    let period = 4.0 * (l / g).sqrt() * elliptic_k(std::f64::consts::FRAC_1_SQRT_2);
    let stop = format!("{period}");
    let (run, stats) = simulate_source_with_stats(
        "Pendulum",
        PENDULUM,
        &["--stop-time", &stop, "--tolerance", "1e-9"],
    );
    // position and velocity sets switch together, at |x| = 0.1 |y| and |y| = 0.1 |x|
    assert!(
        stats.state_events >= 4,
        "expected state switches, got {stats:?}"
    );
    assert_continuous(&run, &["x", "y", "vx", "vy"]);
    assert_close("x after one period", run.last("x"), 1.0, 1e-6);
    assert_close("y after one period", run.last("y"), 0.0, 1e-4);
    let down = run.downward_crossings("x", 0.0);
    let up = run.upward_crossings("x", 0.0);
    assert_eq!((down.len(), up.len()), (1, 1), "{down:?} {up:?}");
    assert_close("x = 0 at a quarter period", down[0], period / 4.0, 1e-3);
    assert_close("x = 0 at three quarters", up[0], 0.75 * period, 1e-3);
    assert_close("lowest point", run.min("y"), -1.0, 1e-6);
    assert_close("energy, highest", run.max("E"), 0.0, 1e-5);
    assert_close("energy, lowest", run.min("E"), 0.0, 1e-5);
    let radius: Vec<f64> = run
        .get("x")
        .iter()
        .zip(run.get("y"))
        .map(|(x, y)| (x * x + y * y).sqrt())
        .collect();
    assert!(radius.iter().all(|r| (r - 1.0).abs() < 1e-9), "constraint");
}

/// Started at the bottom fast enough to loop (v² > 5 g L), the pendulum passes x = 0 at the
/// top and bottom and y = 0 on both sides, turn after turn.
#[test]
fn looping_pendulum_crosses_both_axes_and_conserves_energy() {
    let source = PENDULUM.replace(
        "parameter Real x0 = 1, y0 = 0, vx0 = 0;",
        "parameter Real x0 = 0, y0 = -1, vx0 = 8;",
    );
    let (run, stats) = simulate_source_with_stats(
        "Looping",
        &source,
        &["--stop-time", "3", "--tolerance", "1e-9"],
    );
    assert!(stats.state_events >= 8, "{stats:?}");
    assert_continuous(&run, &["x", "y", "vx", "vy"]);
    let turns = run.upward_crossings("y", 0.0).len();
    assert!(turns >= 3, "y = 0 passed upwards {turns} times");
    assert!(run.downward_crossings("y", 0.0).len() >= 3);
    assert!(run.upward_crossings("x", 0.0).len() >= 3);
    assert!(run.downward_crossings("x", 0.0).len() >= 3);
    let e0 = -9.81 + 0.5 * 64.0;
    assert_close("energy, highest", run.max("E"), e0, 1e-5);
    assert_close("energy, lowest", run.min("E"), e0, 1e-5);
}

/// A four-bar linkage in joint angles that is not a Grashof linkage (every link rocks): at
/// each end of its range a link's angle turns back and stops being a valid coordinate, so the
/// state moves from link to link. The loop must stay closed and the kinetic energy constant.
#[test]
fn triple_rocker_four_bar_switches_states_and_stays_closed() {
    let source = r#"
model TripleRocker "Planar four-bar in joint angles with Lagrange multipliers"
  parameter Real a = 0.4, b = 0.5, c = 0.45, d = 0.6 "crank, coupler, rocker, ground";
  parameter Real J1 = 0.01, J2 = 0.02, J3 = 0.015;
  Real phi1(start = 1.5707963267948966, fixed = true);
  Real phi2(start = 0.0769);
  Real phi3(start = 1.798);
  Real w1(start = 2, fixed = true), w2, w3;
  Real lambda1, lambda2;
  Real Ekin = 0.5*(J1*w1^2 + J2*w2^2 + J3*w3^2);
  Real closure = a*cos(phi1) + b*cos(phi2) - d - c*cos(phi3);
equation
  der(phi1) = w1;
  der(phi2) = w2;
  der(phi3) = w3;
  J1*der(w1) = lambda1*a*sin(phi1) - lambda2*a*cos(phi1);
  J2*der(w2) = lambda1*b*sin(phi2) - lambda2*b*cos(phi2);
  J3*der(w3) = -lambda1*c*sin(phi3) + lambda2*c*cos(phi3);
  a*cos(phi1) + b*cos(phi2) = d + c*cos(phi3);
  a*sin(phi1) + b*sin(phi2) = c*sin(phi3);
end TripleRocker;
"#;
    let (run, stats) = simulate_source_with_stats(
        "TripleRocker",
        source,
        &["--stop-time", "10", "--tolerance", "1e-8"],
    );
    assert!(stats.state_events >= 2, "{stats:?}");
    assert_continuous(&run, &["phi1", "phi2", "phi3", "w1", "w2", "w3"]);
    // the crank rocks: its angle turns back at both ends of its range
    assert!(run.max("phi1") < std::f64::consts::PI && run.min("phi1") > -std::f64::consts::PI);
    assert!(run.upward_crossings("w1", 0.0).len() >= 2);
    let closure = run.get("closure");
    assert!(closure.iter().all(|c| c.abs() < 1e-9), "loop closure");
    let e0 = 0.5 * 0.01 * 4.0;
    let first = run.first("Ekin");
    assert!(first > 0.5 * e0, "{first}");
    assert_close("kinetic energy, highest", run.max("Ekin"), first, 1e-6);
    assert_close("kinetic energy, lowest", run.min("Ekin"), first, 1e-6);
}

/// `moss translate` names the state sets, their candidates and the constraint behind each.
#[test]
fn translate_reports_the_state_sets() {
    let dir = scratch_dir("pendulum-translate");
    let file = dir.join("Pendulum.mo");
    std::fs::write(&file, PENDULUM).unwrap();
    let out = moss_command()
        .arg("translate")
        .arg(&file)
        .output()
        .expect("moss runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("state set 1 (dynamic state selection): 1 of 2 chosen at run time"),
        "{text}"
    );
    assert!(text.contains("constraint: x^2 + y^2 = L^2"), "{text}");
    assert!(
        text.contains("dynamic state selection: one of x, y"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The instants of the events in a result (both sides of an event share a time).
fn event_times(run: &Trajectories) -> Vec<f64> {
    let t = run.time();
    let mut out: Vec<f64> = (1..t.len())
        .filter(|&i| t[i] == t[i - 1])
        .map(|i| t[i])
        .collect();
    out.dedup();
    out
}

/// `stateSelect` weighs the run-time choice: with `x(stateSelect = never)` the constraint is
/// solved for x as long as its pivot is not nearly zero, so the first switch (towards the
/// bottom, where x = 0) comes much later than the default's switch at |x| = 0.1 |y|.
#[test]
fn state_select_never_delays_making_a_candidate_a_state() {
    let args = ["--stop-time", "0.7", "--tolerance", "1e-10"];
    let default = simulate_source_with_stats("PendulumDefault", PENDULUM, &args).0;
    let never_x = PENDULUM.replace("Pendulum", "PendulumNever").replace(
        "Real x(start = x0, fixed = true)",
        "Real x(start = x0, fixed = true, stateSelect = StateSelect.never)",
    );
    let never = simulate_source_with_stats("PendulumNever", &never_x, &args).0;
    let first_default = event_times(&default)[0];
    let first_never = event_times(&never)[0];
    // the bottom is reached at a quarter period, 0.592 s
    assert!((0.55..0.58).contains(&first_default), "{first_default}");
    assert!((0.59..0.593).contains(&first_never), "{first_never}");
    assert_close(
        "same motion",
        never.at("y", 0.65),
        default.at("y", 0.65),
        1e-4,
    );
}

/// Orientation records returned by inlined functions built from `outerProduct`, `identity`,
/// `skew` and `external "builtin"` sine and cosine (the form of MultiBody's `Frames`
/// functions): index reduction differentiates through them, so the angular acceleration
/// `der(w_a)` of a frame rotated by a joint is computed. Here the joint angle is a harmonic
/// oscillator, phi = cos(t), so w_a[3] = der(phi) = -sin(t) and z_a[3] = -cos(t).
#[test]
fn orientation_records_from_inlined_functions_are_differentiated() {
    let source = r#"
model RotatedFrame
  record Orientation
    Real T[3, 3];
    Real w[3];
  end Orientation;
  function sine
    input Real u;
    output Real y;
  external "builtin" y = sin(u);
  end sine;
  function cosine
    input Real u;
    output Real y;
  external "builtin" y = cos(u);
  end cosine;
  function planarRotation
    input Real e[3];
    input Real angle;
    input Real der_angle;
    output Orientation R;
  algorithm
    R := Orientation(T = outerProduct(e, e) + (identity(3) - outerProduct(e, e))*cosine(angle)
      - skew(e)*sine(angle), w = e*der_angle);
    annotation(Inline = true);
  end planarRotation;
  function absoluteRotation
    input Orientation R1;
    input Orientation R_rel;
    output Orientation R2;
  algorithm
    R2 := Orientation(T = R_rel.T*R1.T, w = R_rel.T*R1.w + R_rel.w);
    annotation(Inline = true);
  end absoluteRotation;
  function angularVelocity2
    input Orientation R;
    output Real w[3];
  algorithm
    w := R.w;
    annotation(Inline = true);
  end angularVelocity2;
  parameter Real e[3] = {0, 0, 1};
  Real phi(start = 1, fixed = true);
  Real w(start = 0, fixed = true);
  Orientation R0(T = identity(3), w = zeros(3));
  Orientation R;
  Real w_a[3];
  Real z_a[3];
equation
  der(phi) = w;
  der(w) = -phi;
  R = absoluteRotation(R0, planarRotation(e, phi, w));
  w_a = angularVelocity2(R);
  z_a = der(w_a);
end RotatedFrame;
"#;
    let (run, _) = simulate_source_with_stats("RotatedFrame", source, &["--stop-time", "3"]);
    for t in [0.5, 1.0, 2.0, 3.0] {
        let what = format!("at t = {t}");
        assert_close(
            &format!("w_a[3] {what}"),
            run.at("w_a[3]", t),
            -f64::sin(t),
            1e-4,
        );
        assert_close(
            &format!("z_a[3] {what}"),
            run.at("z_a[3]", t),
            -f64::cos(t),
            1e-4,
        );
        assert_close(
            &format!("R.T[1,1] {what}"),
            run.at("R.T[1,1]", t),
            f64::cos(t).cos(),
            1e-4,
        );
    }
}

/// A free rigid body with quaternions: four candidates, the normalization constraint, three
/// states chosen at run time (as MultiBody's `Body` with `useQuaternions = true`). Spinning
/// near its intermediate axis it tumbles (w[2] flips sign again and again), so every
/// quaternion component passes through zero and the choice moves. Over a long run the
/// quaternion stays normalized to rounding, and the kinetic energy and the magnitude of the
/// angular momentum (both invariants of Euler's equations) stay constant.
#[test]
fn tumbling_body_keeps_its_quaternion_normalized() {
    let source = r#"
model Tumble "Free rigid body with quaternions and the normalization constraint"
  parameter Real I[3] = {1, 2, 3};
  Real Q[4](start = {0, 0, 0, 1}, each fixed = true);
  Real w[3](start = {0.1, 2, 0.05}, each fixed = true);
  Real norm = Q*Q;
  Real E = 0.5*(I[1]*w[1]^2 + I[2]*w[2]^2 + I[3]*w[3]^2);
  Real L = sqrt((I[1]*w[1])^2 + (I[2]*w[2])^2 + (I[3]*w[3])^2);
equation
  w = 2*{{Q[4], Q[3], -Q[2], -Q[1]}, {-Q[3], Q[4], Q[1], -Q[2]}, {Q[2], -Q[1], Q[4], -Q[3]}}*der(Q);
  0 = Q*Q - 1;
  I[1]*der(w[1]) = (I[2] - I[3])*w[2]*w[3];
  I[2]*der(w[2]) = (I[3] - I[1])*w[3]*w[1];
  I[3]*der(w[3]) = (I[1] - I[2])*w[1]*w[2];
end Tumble;
"#;
    let (run, stats) = simulate_source_with_stats(
        "Tumble",
        source,
        &["--stop-time", "100", "--tolerance", "1e-8"],
    );
    assert!(stats.state_events >= 10, "{stats:?}");
    assert_continuous(
        &run,
        &["Q[1]", "Q[2]", "Q[3]", "Q[4]", "w[1]", "w[2]", "w[3]"],
    );
    assert!(
        run.max("w[2]") > 1.9 && run.min("w[2]") < -1.9,
        "it tumbles"
    );
    assert_close("|Q|^2, highest", run.max("norm"), 1.0, 1e-10);
    assert_close("|Q|^2, lowest", run.min("norm"), 1.0, 1e-10);
    let (e0, l0) = (run.first("E"), run.first("L"));
    assert_close("energy, highest", run.max("E"), e0, 1e-5);
    assert_close("energy, lowest", run.min("E"), e0, 1e-5);
    assert_close("momentum, highest", run.max("L"), l0, 1e-5);
    assert_close("momentum, lowest", run.min("L"), l0, 1e-5);
}
