//! Equations whose coefficient of the variable they are solved for depends on a mode: the
//! stuck phase of a friction element (`a = if locked then 0 else sa - tau0`) where the
//! motion is known, as at the initialization of a drive that starts at rest on a
//! prescribed path (the MSL's RobotR3). In the locked mode the equation does not determine
//! `sa` at all.

mod library_support;

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
