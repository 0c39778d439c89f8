//! Equations whose coefficient of the variable they are solved for depends on a mode: the
//! stuck phase of a friction element (`a = if locked then 0 else sa - tau0`) where the
//! motion is known, as at the initialization of a drive that starts at rest on a
//! prescribed path (the MSL's RobotR3). In the locked mode the equation does not determine
//! `sa` at all.

use crate::library_support;

use library_support::{assert_close, simulate_source};

/// The acceleration is prescribed, so the friction equation is a block of its own for the
/// path parameter `sa`. While locked, nothing asks the element for a torque: `sa` (the
/// holding torque) is the least-norm solution 0, not the NaN of dividing by the zero
/// coefficient. Once sliding, `sa = a + tau0`, and the drive torque is `u = J a + tau0`.
const LOCKED_AT_START: &str = r#"
model LockedAtStart
  parameter Real J = 2;
  parameter Real tau0 = 1;
  Boolean locked;
  Real a, sa, tau, u;
  Real q(start = 0, fixed = true);
equation
  locked = time < 0.5;
  a = if time < 0.5 then 0 else 2*(time - 0.5);
  a = if locked then 0 else sa - tau0;
  tau = if locked then sa else tau0;
  u = J*a + tau;
  der(q) = u;
end LockedAtStart;
"#;

#[test]
fn a_locked_friction_equation_with_known_motion_takes_the_least_norm_torque() {
    let run = simulate_source("LockedAtStart", LOCKED_AT_START, &["--stop-time", "1"]);
    // initialization and the locked phase
    assert_close("sa(0)", run.first("sa"), 0.0, 1e-12);
    assert_close("tau(0)", run.first("tau"), 0.0, 1e-12);
    assert_close("u(0.25)", run.at("u", 0.25), 0.0, 1e-12);
    // sliding: sa = 2 (t - 0.5) + tau0
    assert_close("sa(0.75)", run.at("sa", 0.75), 1.5, 1e-9);
    assert_close("u(1)", run.last("u"), 3.0, 1e-9);
    // q(1) = integral over [0.5, 1] of (2 J (t - 0.5) + tau0) = J/4 + 1/2
    assert_close("q(1)", run.last("q"), 1.0, 1e-6);
}

/// The stuck-to-sliding release of a friction element at `w = 0` (the seed's
/// BearingFriction): at the first event `startForward` becomes true while `w` is still
/// exactly 0, so the mode stays stuck; the element accelerates, and `w > 0` fires a second
/// event a few ulps later, where the mode becomes forward and `startForward` false again.
/// The two events are closer than event location can resolve, so the result shows them as
/// one instant: the left limit before the first (stuck, not starting) and the right limit
/// after the second (forward), never the intermediate state that lasted no measurable time.
const RELEASE_AT_ZERO_SPEED: &str = r#"
model ReleaseAtZeroSpeed
  parameter Real tau0 = 1;
  Real tau = 2*time;
  Real w(start = 0, fixed = true);
  Boolean startForward(start = false, fixed = true);
  Integer mode(start = 0, fixed = true);
equation
  startForward = pre(mode) == 0 and tau > tau0;
  mode = if (pre(mode) == 1 or startForward) and w > 0 then 1 else 0;
  der(w) = if mode == 1 or startForward then tau - tau0 else 0;
end ReleaseAtZeroSpeed;
"#;

#[test]
fn events_closer_than_their_location_are_recorded_as_one_instant() {
    let run = simulate_source(
        "ReleaseAtZeroSpeed",
        RELEASE_AT_ZERO_SPEED,
        &["--stop-time", "1"],
    );
    let t = run.time();
    let start = run.get("startForward");
    let mode = run.get("mode");
    // The release happens at tau = tau0, t = 0.5: the grid row at 0.5, then the left limit
    // of the first event and the right limit of the second (without merging, the first
    // event's right row and the second's left row, both with startForward true, come between).
    let release: Vec<usize> = (0..t.len())
        .filter(|&i| (t[i] - 0.5).abs() < 1e-9)
        .collect();
    let modes: Vec<f64> = release.iter().map(|&i| mode[i]).collect();
    assert_eq!(
        modes,
        [0.0, 0.0, 1.0],
        "grid row, left limit, right limit: {release:?}"
    );
    assert!(
        start.iter().all(|&s| s == 0.0),
        "startForward never recorded true"
    );
    // sliding from t = 0.5: w' = 2 t - 1, so w(1) = 1/4
    assert_close("w(1)", run.last("w"), 0.25, 1e-6);
}
