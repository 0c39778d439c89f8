//! The components of the bundled library (`library/Modelica`), checked from the physics.
//!
//! Every test builds a small model on the bundled library, runs it through the `moss` binary
//! (`moss simulate model.mo -o result.csv`) and checks the CSV against what the component must
//! do: closed-form solutions, conservation of energy and momentum (the energy dissipated by an
//! element is integrated by an extra state `der(E) = element.lossPower` and compared with the
//! loss of kinetic and potential energy), kinematic constraints, the force laws recomputed from
//! the element's own relative motion, and the stick/slip transitions of the friction elements at
//! the torque the parameters predict. Tolerances are stated at every check: tight (1e-6 relative
//! or better) where the result is an algebraic identity, looser where an integrated quantity is
//! compared with a closed form (the solver tolerance of each model is given in its experiment
//! annotation).

mod library_support;

use library_support::{assert_close, assert_rel, simulate_source, Trajectories};

/// Energy balance `initial energy = kinetic + potential + dissipated` at every output point.
#[track_caller]
fn assert_energy_conserved(run: &Trajectories, what: &str, energy: &[f64], rel: f64) {
    let e0 = energy[0];
    let worst = energy.iter().map(|e| (e - e0).abs()).fold(0.0, f64::max);
    assert!(
        worst <= rel * e0.abs(),
        "{}: {what} drifts by {worst} from its initial value {e0} (tolerance {rel} relative)",
        run.label
    );
}

// ---------------------------------------------------------------------------------------------
// Rotational: inertia, spring, damper, spring-damper
// ---------------------------------------------------------------------------------------------

/// An inertia spinning down through a `Damper` to a `Fixed` housing: w(t) = w0*exp(-d*t/J),
/// and the energy dissipated (the integral of `lossPower`) is J*(w0^2 - w^2)/2.
#[test]
fn rotational_damper_spin_down_dissipates_kinetic_energy() {
    let run = simulate_source(
        "DamperSpinDown",
        r#"
model DamperSpinDown
  import Modelica.Mechanics.Rotational.Components;
  Components.Inertia inertia(J=2, phi(start=0, fixed=true), w(start=10, fixed=true));
  Components.Damper damper(d=0.5);
  Components.Fixed fixed(phi0=0.3);
  Real E_loss(start=0, fixed=true) "Dissipated energy";
equation
  connect(inertia.flange_b, damper.flange_a);
  connect(damper.flange_b, fixed.flange);
  der(E_loss) = damper.lossPower;
  annotation(experiment(StopTime=4, Interval=0.01, Tolerance=1e-8));
end DamperSpinDown;
"#,
        &[],
    );
    let (j, d, w0) = (2.0, 0.5, 10.0);
    for t in [0.5, 1.0, 2.0, 4.0] {
        let w = w0 * f64::exp(-d * t / j);
        assert_rel(
            &format!("inertia.w at {t}"),
            run.at("inertia.w", t),
            w,
            1e-6,
        );
        assert_rel(
            &format!("dissipated energy at {t}"),
            run.at("E_loss", t),
            0.5 * j * (w0 * w0 - w * w),
            1e-6,
        );
        // phi(t) = w0*J/d*(1 - exp(-d t/J))
        assert_rel(
            &format!("inertia.phi at {t}"),
            run.at("inertia.phi", t),
            w0 * j / d * (1.0 - f64::exp(-d * t / j)),
            1e-6,
        );
    }
    // The fixed flange stays at phi0 and the damper's relative angle is measured from it.
    assert_eq!(run.max("fixed.flange.phi"), 0.3);
    assert_eq!(run.min("fixed.flange.phi"), 0.3);
    let tau = run.get("damper.tau");
    for ((tau, w), p) in tau
        .iter()
        .zip(run.get("damper.w_rel"))
        .zip(run.get("damper.lossPower"))
    {
        assert_close("damper.tau = d*w_rel", *tau, d * w, 1e-9 * (1.0 + w.abs()));
        assert_close("lossPower = tau*w_rel", p, tau * w, 1e-9 * (1.0 + p.abs()));
    }
}

/// A free `Spring` between two inertias conserves energy and momentum; a `SpringDamper` to the
/// housing follows the damped oscillator's closed form and dissipates exactly the energy lost.
#[test]
fn rotational_spring_and_spring_damper_follow_the_oscillator() {
    let run = simulate_source(
        "RotationalOscillators",
        r#"
model RotationalOscillators
  import Modelica.Mechanics.Rotational.Components;
  // two inertias on a free spring (unstretched angle 0.1), started towards each other
  Components.Inertia j1(J=1, phi(start=0, fixed=true), w(start=2, fixed=true));
  Components.Inertia j2(J=3, phi(start=0.5, fixed=true), w(start=0, fixed=true));
  Components.Spring spring(c=12, phi_rel0=0.1);
  // damped oscillator: J = 1, c = 100, d = 2 (zeta = 0.1, w_n = 10 rad/s)
  Components.Inertia j3(J=1, phi(start=1, fixed=true), w(start=0, fixed=true));
  Components.SpringDamper springDamper(c=100, d=2);
  Components.Fixed fixed;
  Real E_loss(start=0, fixed=true);
  Real E_free "Energy of the free pair";
  Real E_damped "Energy of the damped oscillator plus dissipated energy";
equation
  connect(j1.flange_b, spring.flange_a);
  connect(spring.flange_b, j2.flange_a);
  connect(fixed.flange, springDamper.flange_a);
  connect(springDamper.flange_b, j3.flange_a);
  der(E_loss) = springDamper.lossPower;
  E_free = 0.5*j1.J*j1.w^2 + 0.5*j2.J*j2.w^2 + 0.5*spring.c*(spring.phi_rel - spring.phi_rel0)^2;
  E_damped = 0.5*j3.J*j3.w^2 + 0.5*springDamper.c*springDamper.phi_rel^2 + E_loss;
  annotation(experiment(StopTime=3, Interval=0.005, Tolerance=1e-9));
end RotationalOscillators;
"#,
        &[],
    );
    // Energy: 0.5*1*4 + 0.5*12*(0.5 - 0.1)^2 = 2.96 J, constant.
    assert_close("E_free at t = 0", run.first("E_free"), 2.96, 1e-12);
    assert_energy_conserved(&run, "E_free", &run.get("E_free"), 1e-6);
    assert_energy_conserved(&run, "E_damped", &run.get("E_damped"), 1e-6);
    // Momentum J1*w1 + J2*w2 = 2 stays.
    for (w1, w2) in run.get("j1.w").iter().zip(run.get("j2.w")) {
        assert_close("angular momentum", w1 + 3.0 * w2, 2.0, 1e-6);
    }
    // Relative motion of the free pair: reduced inertia 3/4, frequency sqrt(12/(3/4)) = 4 rad/s,
    // phi_rel(t) - 0.1 = 0.4*cos(4t) - (2/4)*sin(4t) (relative speed -2 at t = 0).
    for t in [0.3, 1.1, 2.7] {
        let expected = 0.1 + 0.4 * f64::cos(4.0 * t) - 0.5 * f64::sin(4.0 * t);
        assert_close(
            &format!("spring.phi_rel at {t}"),
            run.at("spring.phi_rel", t),
            expected,
            1e-6,
        );
    }
    // Damped oscillator from phi = 1 at rest: phi(t) = exp(-zeta wn t)(cos wd t + zeta wn/wd sin wd t).
    let (zeta, wn) = (0.1, 10.0);
    let wd = wn * f64::sqrt(1.0 - zeta * zeta);
    for t in [0.1, 0.37, 1.0, 2.5] {
        let expected =
            f64::exp(-zeta * wn * t) * (f64::cos(wd * t) + zeta * wn / wd * f64::sin(wd * t));
        assert_close(
            &format!("j3.phi at {t}"),
            run.at("j3.phi", t),
            expected,
            1e-6,
        );
    }
    // Everything is dissipated in the end: 0.5*c*1^2 = 50 J minus what is still stored.
    let stored = 0.5 * run.last("j3.w").powi(2) + 50.0 * run.last("j3.phi").powi(2);
    assert_rel(
        "dissipated energy at 3 s",
        run.last("E_loss"),
        50.0 - stored,
        1e-6,
    );
    assert!(run.last("E_loss") > 49.0, "E_loss = {}", run.last("E_loss"));
}

// ---------------------------------------------------------------------------------------------
// Rotational: ideal gears and sensors
// ---------------------------------------------------------------------------------------------

/// `IdealGear` (ratio 4) between a driven inertia and a load inertia, measured by every
/// rotational sensor. The gear is massless and lossless, so the input sees the load inertia
/// divided by ratio^2: J_eff = 0.1 + 1.6/16 = 0.2 and a constant 2 N.m accelerates the input at
/// 10 rad/s2. The torque into the gear is 2 - 0.1*10 = 1 N.m, the torque out of it 4 N.m.
#[test]
fn rotational_ideal_gear_and_sensors() {
    let run = simulate_source(
        "GearWithSensors",
        r#"
model GearWithSensors
  import Modelica.Mechanics.Rotational.*;
  Sources.ConstantTorque drive(tau_constant=2);
  Components.Inertia j1(J=0.1, phi(start=0, fixed=true), w(start=0, fixed=true));
  Sensors.TorqueSensor torqueSensor;
  Sensors.PowerSensor powerSensor;
  Components.IdealGear gear(ratio=4, useSupport=true);
  Components.Fixed housing;
  Sensors.MultiSensor multiSensor;
  Components.Inertia j2(J=1.6);
  Sensors.AngleSensor angle2;
  Sensors.SpeedSensor speed2;
  Sensors.AccSensor acc2;
  Sensors.RelAngleSensor relAngle;
  Sensors.RelSpeedSensor relSpeed;
  Sensors.RelAccSensor relAcc;
equation
  connect(drive.flange, j1.flange_a);
  connect(j1.flange_b, torqueSensor.flange_a);
  connect(torqueSensor.flange_b, powerSensor.flange_a);
  connect(powerSensor.flange_b, gear.flange_a);
  connect(gear.support, housing.flange);
  connect(gear.flange_b, multiSensor.flange_a);
  connect(multiSensor.flange_b, j2.flange_a);
  connect(angle2.flange, j2.flange_b);
  connect(speed2.flange, j2.flange_b);
  connect(acc2.flange, j2.flange_b);
  connect(relAngle.flange_a, j1.flange_a);
  connect(relAngle.flange_b, j2.flange_b);
  connect(relSpeed.flange_a, j1.flange_a);
  connect(relSpeed.flange_b, j2.flange_b);
  connect(relAcc.flange_a, j1.flange_a);
  connect(relAcc.flange_b, j2.flange_b);
  annotation(experiment(StopTime=2, Interval=0.01, Tolerance=1e-8));
end GearWithSensors;
"#,
        &[],
    );
    for t in [0.5, 1.0, 2.0] {
        let (w1, phi1) = (10.0 * t, 5.0 * t * t);
        assert_rel(&format!("j1.w at {t}"), run.at("j1.w", t), w1, 1e-6);
        assert_rel(&format!("j1.phi at {t}"), run.at("j1.phi", t), phi1, 1e-6);
        assert_rel(
            &format!("angle2.phi at {t}"),
            run.at("angle2.phi", t),
            phi1 / 4.0,
            1e-6,
        );
        assert_rel(
            &format!("speed2.w at {t}"),
            run.at("speed2.w", t),
            w1 / 4.0,
            1e-6,
        );
        assert_rel(
            &format!("relAngle.phi_rel at {t}"),
            run.at("relAngle.phi_rel", t),
            phi1 / 4.0 - phi1,
            1e-6,
        );
        assert_rel(
            &format!("relSpeed.w_rel at {t}"),
            run.at("relSpeed.w_rel", t),
            w1 / 4.0 - w1,
            1e-6,
        );
        assert_rel(
            &format!("powerSensor.power at {t}"),
            run.at("powerSensor.power", t),
            1.0 * w1,
            1e-6,
        );
        assert_rel(
            &format!("multiSensor.power at {t}"),
            run.at("multiSensor.power", t),
            4.0 * w1 / 4.0,
            1e-6,
        );
        assert_rel(
            &format!("multiSensor.w at {t}"),
            run.at("multiSensor.w", t),
            w1 / 4.0,
            1e-6,
        );
    }
    assert_rel("acc2.a", run.at("acc2.a", 1.0), 2.5, 1e-6);
    assert_rel(
        "relAcc.a_rel",
        run.at("relAcc.a_rel", 1.0),
        2.5 - 10.0,
        1e-6,
    );
    assert_rel(
        "torqueSensor.tau",
        run.at("torqueSensor.tau", 1.0),
        1.0,
        1e-6,
    );
    assert_rel("multiSensor.tau", run.at("multiSensor.tau", 1.0), 4.0, 1e-6);
    // The gear's kinematic constraint and power balance hold at every output point.
    let phi_a = run.get("gear.flange_a.phi");
    let phi_b = run.get("gear.flange_b.phi");
    for (a, b) in phi_a.iter().zip(&phi_b) {
        assert_close(
            "flange_a.phi = 4*flange_b.phi",
            *a,
            4.0 * b,
            1e-9 * (1.0 + a.abs()),
        );
    }
    let tau_a = run.get("gear.flange_a.tau");
    let tau_b = run.get("gear.flange_b.tau");
    for (a, b) in tau_a.iter().zip(&tau_b) {
        assert_close("4*tau_a + tau_b = 0", 4.0 * a + b, 0.0, 1e-9);
    }
    // The housing takes the reaction: support torque = -(tau_a + tau_b) = 3 N.m.
    assert_rel(
        "housing torque",
        run.at("housing.flange.tau", 1.0).abs(),
        3.0,
        1e-6,
    );
}

/// `IdealPlanetary` (ring/sun = 2) with all three shafts free: the Willis equation
/// (1 + ratio)*w_carrier = w_sun + ratio*w_ring holds at every instant, the gear neither stores
/// nor dissipates power, and the accelerations follow from the torque relations
/// ring.tau = 2*sun.tau, carrier.tau = -3*sun.tau with a 10 N.m drive on the sun.
#[test]
fn rotational_ideal_planetary_obeys_willis() {
    let run = simulate_source(
        "PlanetaryFree",
        r#"
model PlanetaryFree
  import Modelica.Mechanics.Rotational.*;
  Sources.ConstantTorque drive(tau_constant=10);
  Components.Inertia sunInertia(J=0.1, phi(start=0, fixed=true), w(start=0, fixed=true));
  Components.IdealPlanetary planetary(ratio=2);
  Components.Inertia carrierInertia(J=2, phi(start=0, fixed=true), w(start=0, fixed=true));
  Components.Inertia ringInertia(J=1);
  Real E_kin = 0.5*(sunInertia.J*sunInertia.w^2 + carrierInertia.J*carrierInertia.w^2 + ringInertia.J*ringInertia.w^2);
  Real W_in(start=0, fixed=true) "Work done by the drive";
equation
  connect(drive.flange, sunInertia.flange_a);
  connect(sunInertia.flange_b, planetary.sun);
  connect(planetary.carrier, carrierInertia.flange_a);
  connect(planetary.ring, ringInertia.flange_a);
  der(W_in) = 10*sunInertia.w;
  annotation(experiment(StopTime=1, Interval=0.01, Tolerance=1e-8));
end PlanetaryFree;
"#,
        &[],
    );
    let (ws, wc, wr) = (
        run.get("sunInertia.w"),
        run.get("carrierInertia.w"),
        run.get("ringInertia.w"),
    );
    for i in 0..ws.len() {
        assert_close(
            "Willis: 3*w_carrier = w_sun + 2*w_ring",
            3.0 * wc[i],
            ws[i] + 2.0 * wr[i],
            1e-8 * (1.0 + ws[i].abs()),
        );
    }
    // x = sun.tau: J_s a_s = 10 - x, J_c a_c = 3x, J_r a_r = -2x and 3 a_c = a_s + 2 a_r.
    let x = 10.0 / (0.1 * (9.0 / 2.0 + 4.0 / 1.0) + 1.0);
    assert_rel(
        "sun flange torque",
        run.at("planetary.sun.tau", 0.5),
        x,
        1e-6,
    );
    assert_rel(
        "ring torque = 2*sun torque",
        run.at("planetary.ring.tau", 0.5),
        2.0 * x,
        1e-6,
    );
    assert_rel(
        "carrier torque",
        run.at("planetary.carrier.tau", 0.5),
        -3.0 * x,
        1e-6,
    );
    assert_rel(
        "carrier speed at 1 s",
        run.last("carrierInertia.w"),
        3.0 * x / 2.0,
        1e-6,
    );
    assert_rel(
        "ring speed at 1 s",
        run.last("ringInertia.w"),
        -2.0 * x,
        1e-6,
    );
    assert_rel(
        "sun speed at 1 s",
        run.last("sunInertia.w"),
        (10.0 - x) / 0.1,
        1e-6,
    );
    // Lossless: the drive's work is all kinetic energy.
    assert_rel(
        "work = kinetic energy",
        run.last("W_in"),
        run.last("E_kin"),
        1e-6,
    );
}

/// Rotation to translation: `IdealRollingWheel` (radius 0.5 m) and `IdealGearR2T`
/// (10 rad/m), each driving a `Mass`, with a `Rod` and a `Fixed` translational flange.
/// Wheel: a = (tau/r)/(m + J/r^2) = 6/2.4 = 2.5 m/s2; R2T: a = tau*ratio/(m + J*ratio^2) = 5 m/s2.
#[test]
fn rotational_to_translational_converters_keep_their_kinematics() {
    let run = simulate_source(
        "RotToTrans",
        r#"
model RotToTrans
  import Modelica.Mechanics.Rotational;
  import Modelica.Mechanics.Translational;
  Rotational.Sources.ConstantTorque torque1(tau_constant=3);
  Rotational.Components.Inertia wheelInertia(J=0.1, phi(start=0, fixed=true), w(start=0, fixed=true));
  Rotational.Components.IdealRollingWheel wheel(radius=0.5);
  Translational.Components.Mass vehicle(m=2);
  Rotational.Sources.ConstantTorque torque2(tau_constant=1);
  Rotational.Components.Inertia spindle(J=0.01, phi(start=0, fixed=true), w(start=0, fixed=true));
  Translational.Components.IdealGearR2T r2t(ratio=10);
  Translational.Components.Mass slider(m=1, L=0.2);
  Translational.Components.Rod rod(L=0.5);
  Translational.Components.Mass follower(m=0);
  Translational.Components.Fixed fixed(s0=1.5);
  Translational.Components.Spring anchor(c=0);
  Translational.Sensors.PositionSensor followerPosition;
equation
  connect(torque1.flange, wheelInertia.flange_a);
  connect(wheelInertia.flange_b, wheel.flangeR);
  connect(wheel.flangeT, vehicle.flange_a);
  connect(torque2.flange, spindle.flange_a);
  connect(spindle.flange_b, r2t.flangeR);
  connect(r2t.flangeT, slider.flange_a);
  connect(slider.flange_b, rod.flange_a);
  connect(rod.flange_b, follower.flange_a);
  connect(follower.flange_b, followerPosition.flange);
  connect(fixed.flange, anchor.flange_a);
  connect(anchor.flange_b, follower.flange_b);
  annotation(experiment(StopTime=2, Interval=0.01, Tolerance=1e-8));
end RotToTrans;
"#,
        &[],
    );
    for t in [0.5, 1.0, 2.0] {
        assert_rel(
            &format!("vehicle.v at {t}"),
            run.at("vehicle.v", t),
            2.5 * t,
            1e-6,
        );
        assert_rel(
            &format!("slider flange speed at {t}"),
            run.at("slider.v", t),
            5.0 * t,
            1e-6,
        );
        assert_rel(
            &format!("spindle.w at {t}"),
            run.at("spindle.w", t),
            50.0 * t,
            1e-6,
        );
    }
    let (phi, s) = (run.get("wheelInertia.phi"), run.get("vehicle.s"));
    for (p, s) in phi.iter().zip(&s) {
        assert_close("rolling: s = r*phi", *s, 0.5 * p, 1e-9 * (1.0 + p.abs()));
    }
    let (phi, s) = (run.get("spindle.phi"), run.get("r2t.flangeT.s"));
    for (p, s) in phi.iter().zip(&s) {
        assert_close("spindle: phi = 10*s", *p, 10.0 * s, 1e-9 * (1.0 + p.abs()));
    }
    // Ground force of the wheel: tau/r minus what accelerates the wheel inertia.
    assert_rel(
        "wheel ground force",
        run.at("vehicle.flange_a.f", 1.0),
        2.0 * 2.5,
        1e-6,
    );
    // The rod keeps its length; the fixed flange stays at s0.
    let (a, b) = (run.get("rod.flange_a.s"), run.get("rod.flange_b.s"));
    for (a, b) in a.iter().zip(&b) {
        assert_close("rod length", b - a, 0.5, 1e-9);
    }
    // slider: flange_a at the spindle's s = 2.5 m at 1 s, length 0.2 m; then the 0.5 m rod.
    assert_close(
        "slider.s (centre)",
        run.at("slider.s", 1.0),
        2.5 + 0.1,
        1e-6,
    );
    assert_close(
        "slider.flange_b.s",
        run.at("slider.flange_b.s", 1.0),
        2.5 + 0.2,
        1e-6,
    );
    assert_close(
        "follower position",
        run.at("followerPosition.s", 1.0),
        2.5 + 0.2 + 0.5,
        1e-6,
    );
    assert_eq!(run.max("fixed.flange.s"), 1.5);
}

// ---------------------------------------------------------------------------------------------
// Rotational friction: BearingFriction, Brake, Clutch, OneWayClutch, LossyGear
// ---------------------------------------------------------------------------------------------

/// Largest |x| of `name` over `t0 <= time <= t1`.
fn max_abs_between(run: &Trajectories, name: &str, t0: f64, t1: f64) -> f64 {
    run.points_between(name, t0, t1)
        .into_iter()
        .map(|(_, y)| y.abs())
        .fold(0.0, f64::max)
}

/// `BearingFriction` with sliding torque 2 N.m and peak 1.5 (static limit 3 N.m) under a drive
/// torque ramp tau = t: the shaft sticks until the drive reaches 3 N.m at t = 3 s, then slides
/// with w(t) = t^2/2 - 2t + 3/2 (w(6) = 7.5 rad/s) and dissipates 2*int(w) = 18 J by t = 6 s.
/// The mirrored bearing (ramp -t, torque table 2 + 0.2*|w|) breaks away at -3 N.m and follows
/// u' = t - 2 - 0.2u for u = -w, u(3) = 0: u(6) = -5 + 20*exp(-0.6).
#[test]
fn rotational_bearing_friction_sticks_below_peak_torque() {
    let run = simulate_source(
        "BearingStickSlip",
        r#"
model BearingStickSlip
  import Modelica.Mechanics.Rotational.*;
  Modelica.Blocks.Sources.Ramp ramp(height=6, duration=6);
  Sources.Torque drive;
  Components.Inertia inertia(J=1, phi(start=0, fixed=true), w(start=0, fixed=true));
  Components.BearingFriction bearing(tau_pos=[0, 2], peak=1.5);
  Modelica.Blocks.Math.Gain minus(k=-1);
  Sources.Torque driveBack;
  Components.Inertia inertiaBack(J=1, phi(start=0, fixed=true), w(start=0, fixed=true));
  Components.BearingFriction bearingBack(tau_pos=[0, 2; 10, 4], peak=1.5, useSupport=true);
  Components.Fixed housing;
  Real W_in(start=0, fixed=true) "Work of the drive";
  Real E_loss(start=0, fixed=true) "Energy dissipated by the bearing";
equation
  connect(ramp.y, drive.tau);
  connect(drive.flange, inertia.flange_a);
  connect(inertia.flange_b, bearing.flange_a);
  connect(ramp.y, minus.u);
  connect(minus.y, driveBack.tau);
  connect(driveBack.flange, inertiaBack.flange_a);
  connect(inertiaBack.flange_b, bearingBack.flange_b);
  connect(bearingBack.support, housing.flange);
  der(W_in) = ramp.y*inertia.w;
  der(E_loss) = bearing.lossPower;
  annotation(experiment(StopTime=6, Interval=0.01, Tolerance=1e-8));
end BearingStickSlip;
"#,
        &[],
    );
    // Stuck while |tau| < peak*tau0 = 3 N.m (t < 3 s), sliding afterwards.
    assert_eq!(
        max_abs_between(&run, "inertia.w", 0.0, 2.99),
        0.0,
        "forward bearing slipped early"
    );
    assert_eq!(
        max_abs_between(&run, "inertiaBack.w", 0.0, 2.99),
        0.0,
        "backward bearing slipped early"
    );
    assert!(
        run.min_between("bearing.mode", 0.01, 2.99) == 0.0
            && run.max_between("bearing.mode", 0.01, 2.99) == 0.0
    );
    assert!(
        run.at("inertia.w", 3.05) > 0.0,
        "forward bearing still stuck at 3.05 s"
    );
    assert!(
        run.at("inertiaBack.w", 3.05) < 0.0,
        "backward bearing still stuck at 3.05 s"
    );
    assert_eq!(run.at("bearing.mode", 4.0), 1.0);
    assert_eq!(run.at("bearingBack.mode", 4.0), -1.0);
    // While stuck the bearing holds exactly the drive torque.
    assert_close(
        "stuck bearing torque at 2 s",
        run.at("bearing.tau", 2.0),
        2.0,
        1e-6,
    );
    for t in [4.0, 5.0, 6.0] {
        let w = t * t / 2.0 - 2.0 * t + 1.5;
        assert_close(
            &format!("forward w at {t}"),
            run.at("inertia.w", t),
            w,
            2e-3,
        );
        let u = 5.0 * t - 35.0 + 20.0 * f64::exp(0.6) * f64::exp(-0.2 * t);
        assert_close(
            &format!("backward w at {t}"),
            run.at("inertiaBack.w", t),
            -u,
            2e-3,
        );
    }
    assert_close("sliding torque", run.at("bearing.tau", 5.0), 2.0, 1e-9);
    assert_close(
        "sliding torque backward",
        run.at("bearingBack.tau", 5.0),
        -(2.0 + 0.2 * run.at("inertiaBack.w", 5.0).abs()),
        1e-6,
    );
    // Energy: 18 J dissipated, and work in = kinetic energy + dissipated energy.
    assert_close("dissipated energy", run.last("E_loss"), 18.0, 0.02);
    assert_rel(
        "work = kinetic + dissipated",
        run.last("W_in"),
        0.5 * run.last("inertia.w").powi(2) + run.last("E_loss"),
        1e-6,
    );
}

/// `Brake` (fn = 10 N, mu = 0.5, peak 1.2: sliding torque 5 N.m, static limit 6 N.m) on a shaft
/// spinning at 10 rad/s (J = 1): it decelerates at 5 rad/s2 and stops at t = 2 s, having
/// dissipated the 50 J of kinetic energy; it then holds a 5.5 N.m drive (from 3 s) and breaks
/// away only when the drive rises to 6.5 N.m at 5 s, accelerating at 6.5 - 5 = 1.5 rad/s2.
/// The drive comes from a `TimeTable` with jumps.
#[test]
fn rotational_brake_stops_holds_and_breaks_away() {
    let run = simulate_source(
        "BrakeHold",
        r#"
model BrakeHold
  import Modelica.Mechanics.Rotational.*;
  Modelica.Blocks.Sources.TimeTable driveTable(table=[0, 0; 3, 0; 3, 5.5; 5, 5.5; 5, 6.5; 8, 6.5]);
  Modelica.Blocks.Sources.Constant pressure(k=1);
  Sources.Torque drive;
  Components.Inertia shaft(J=1, phi(start=0, fixed=true), w(start=10, fixed=true));
  Components.Brake brake(fn_max=10, mu_pos=[0, 0.5], peak=1.2);
  Real W_in(start=0, fixed=true);
  Real E_loss(start=0, fixed=true);
equation
  connect(driveTable.y, drive.tau);
  connect(drive.flange, shaft.flange_a);
  connect(shaft.flange_b, brake.flange_a);
  connect(pressure.y, brake.f_normalized);
  der(W_in) = driveTable.y*shaft.w;
  der(E_loss) = brake.lossPower;
  annotation(experiment(StopTime=8, Interval=0.01, Tolerance=1e-8));
end BrakeHold;
"#,
        &[],
    );
    for t in [0.5, 1.0, 1.9] {
        assert_close(
            &format!("shaft.w at {t}"),
            run.at("shaft.w", t),
            10.0 - 5.0 * t,
            1e-6,
        );
    }
    assert_close(
        "dissipated energy at stop",
        run.at("E_loss", 2.5),
        50.0,
        1e-4,
    );
    // The stop is located by a zero crossing: what remains of w is below the event tolerance.
    assert!(
        max_abs_between(&run, "shaft.w", 2.01, 4.99) < 1e-9,
        "brake slipped while holding"
    );
    assert_close("holding torque at 4 s", run.at("brake.tau", 4.0), 5.5, 1e-6);
    assert_eq!(run.at("brake.mode", 4.0), 0.0);
    for t in [6.0, 7.0, 8.0] {
        assert_close(
            &format!("shaft.w at {t}"),
            run.at("shaft.w", t),
            1.5 * (t - 5.0),
            1e-3,
        );
    }
    // 50 J while stopping plus 5 N.m over 1.5*9/2 = 6.75 rad after the break-away.
    assert_close(
        "dissipated energy at 8 s",
        run.last("E_loss"),
        50.0 + 5.0 * 6.75,
        0.02,
    );
    assert_rel(
        "work + initial energy = kinetic + dissipated",
        run.last("W_in") + 50.0,
        0.5 * run.last("shaft.w").powi(2) + run.last("E_loss"),
        1e-6,
    );
}

/// Two `Clutch`es. (1) J1 = 1 at 10 rad/s, J2 = 1 at rest, sliding torque 5 N.m: the speeds meet
/// at 5 rad/s after 1 s and stay together; momentum 10 is conserved and 25 J are dissipated.
/// (2) Two resting inertias, a drive torque 2t on the first: the clutch carries t N.m and sticks
/// until t exceeds peak*tau0 = 1.2*5 = 6 N.m at t = 6 s (w = t^2/2 = 18 rad/s); then the driven
/// side gains 5 rad/s2 and the slip grows as w3 - w4 = (t - 4)(t - 6).
#[test]
fn rotational_clutch_engages_and_slips_at_the_static_limit() {
    let run = simulate_source(
        "ClutchPair",
        r#"
model ClutchPair
  import Modelica.Mechanics.Rotational.*;
  Modelica.Blocks.Sources.Constant engaged(k=1);
  Components.Inertia j1(J=1, phi(start=0, fixed=true), w(start=10, fixed=true));
  Components.Clutch clutch1(fn_max=10, mu_pos=[0, 0.5]);
  Components.Inertia j2(J=1, phi(start=0, fixed=true), w(start=0, fixed=true));
  Modelica.Blocks.Sources.Ramp ramp(height=16, duration=8);
  Sources.Torque drive;
  Components.Inertia j3(J=1, phi(start=0, fixed=true), w(start=0, fixed=true));
  Components.Clutch clutch2(fn_max=10, mu_pos=[0, 0.5], peak=1.2);
  Components.Inertia j4(J=1, phi(start=0, fixed=true), w(start=0, fixed=true));
  Real E_loss(start=0, fixed=true);
equation
  connect(j1.flange_b, clutch1.flange_a);
  connect(clutch1.flange_b, j2.flange_a);
  connect(engaged.y, clutch1.f_normalized);
  connect(ramp.y, drive.tau);
  connect(drive.flange, j3.flange_a);
  connect(j3.flange_b, clutch2.flange_a);
  connect(clutch2.flange_b, j4.flange_a);
  connect(engaged.y, clutch2.f_normalized);
  der(E_loss) = clutch1.lossPower;
  annotation(experiment(StopTime=8, Interval=0.01, Tolerance=1e-8));
end ClutchPair;
"#,
        &[],
    );
    let (w1, w2) = (run.get("j1.w"), run.get("j2.w"));
    for (a, b) in w1.iter().zip(&w2) {
        assert_close("momentum of the clutch pair", a + b, 10.0, 1e-6);
    }
    assert_close("j1.w at 0.5 s", run.at("j1.w", 0.5), 7.5, 1e-6);
    assert_close("j2.w at 0.5 s", run.at("j2.w", 0.5), 2.5, 1e-6);
    assert!(
        max_abs_between(&run, "clutch1.w_rel", 1.01, 8.0) < 1e-9,
        "clutch1 slips after engaging"
    );
    assert_close("common speed", run.last("j2.w"), 5.0, 1e-6);
    assert_close("dissipated energy", run.last("E_loss"), 25.0, 1e-4);
    assert_eq!(run.at("clutch1.mode", 0.5), -1.0);
    assert_eq!(run.at("clutch1.mode", 4.0), 0.0);
    // Second pair: stuck until 6 s, carrying half of the drive.
    assert_eq!(
        max_abs_between(&run, "clutch2.w_rel", 0.0, 5.98),
        0.0,
        "clutch2 slipped early"
    );
    assert_close(
        "clutch2 torque at 4 s",
        run.at("clutch2.tau", 4.0).abs(),
        4.0,
        1e-6,
    );
    assert_close("j4.w at 6 s", run.at("j4.w", 6.0), 18.0, 1e-3);
    assert!(
        run.at("clutch2.w_rel", 6.1) < 0.0,
        "clutch2 still stuck at 6.1 s"
    );
    for t in [7.0, 8.0] {
        assert_close(
            &format!("slip at {t}"),
            -run.at("clutch2.w_rel", t),
            (t - 4.0) * (t - 6.0),
            2e-3,
        );
        assert_close(
            &format!("j4.w at {t}"),
            run.at("j4.w", t),
            18.0 + 5.0 * (t - 6.0),
            2e-3,
        );
    }
    assert_close(
        "sliding clutch torque",
        run.at("clutch2.tau", 7.0).abs(),
        5.0,
        1e-9,
    );
}

/// `OneWayClutch`: the input (J = 1) is driven with +2 N.m until 1 s and -2 N.m afterwards; the
/// output (J = 1) has no load. With the clutch pack open the freewheel couples the shafts while
/// the input drives forward (both reach 1 rad/s at 1 s) and lets the output overrun afterwards
/// (output stays at 1 rad/s, the input falls to -1 rad/s at 2 s). With the pack closed
/// (5 N.m > 1 N.m needed) both decelerate together to 0 at 2 s.
#[test]
fn rotational_one_way_clutch_freewheels_one_way() {
    let run = simulate_source(
        "Freewheel",
        r#"
model Freewheel
  import Modelica.Mechanics.Rotational.*;
  Modelica.Blocks.Sources.Step torqueProfile(offset=2, height=-4, startTime=1);
  Modelica.Blocks.Sources.Constant open(k=0);
  Modelica.Blocks.Sources.Constant closed(k=1);
  Sources.Torque drive1;
  Components.Inertia in1(J=1, phi(start=0, fixed=true), w(start=0, fixed=true));
  Components.OneWayClutch freewheel(fn_max=10, mu_pos=[0, 0.5]);
  Components.Inertia out1(J=1, phi(start=0, fixed=true), w(start=0, fixed=true));
  Sources.Torque drive2;
  Components.Inertia in2(J=1, phi(start=0, fixed=true), w(start=0, fixed=true));
  Components.OneWayClutch packed(fn_max=10, mu_pos=[0, 0.5]);
  Components.Inertia out2(J=1, phi(start=0, fixed=true), w(start=0, fixed=true));
equation
  connect(torqueProfile.y, drive1.tau);
  connect(drive1.flange, in1.flange_a);
  connect(in1.flange_b, freewheel.flange_a);
  connect(freewheel.flange_b, out1.flange_a);
  connect(open.y, freewheel.f_normalized);
  connect(torqueProfile.y, drive2.tau);
  connect(drive2.flange, in2.flange_a);
  connect(in2.flange_b, packed.flange_a);
  connect(packed.flange_b, out2.flange_a);
  connect(closed.y, packed.f_normalized);
  annotation(experiment(StopTime=2, Interval=0.005, Tolerance=1e-8));
end Freewheel;
"#,
        &[],
    );
    for t in [0.5, 1.0] {
        assert_close(&format!("in1.w at {t}"), run.at("in1.w", t), t, 1e-6);
        assert_close(&format!("out1.w at {t}"), run.at("out1.w", t), t, 1e-6);
    }
    for t in [1.5, 2.0] {
        assert_close(
            &format!("in1.w at {t}"),
            run.at("in1.w", t),
            1.0 - 2.0 * (t - 1.0),
            1e-5,
        );
        assert_close(
            &format!("out1.w at {t} (overrunning)"),
            run.at("out1.w", t),
            1.0,
            1e-5,
        );
        assert_close(
            &format!("in2.w at {t}"),
            run.at("in2.w", t),
            1.0 - (t - 1.0),
            1e-5,
        );
        assert_close(
            &format!("out2.w at {t}"),
            run.at("out2.w", t),
            1.0 - (t - 1.0),
            1e-5,
        );
    }
    // The output never runs slower than the input: w_rel = w_out - w_in >= 0 throughout.
    assert!(
        run.min("freewheel.w_rel") > -1e-9,
        "freewheel.w_rel = {}",
        run.min("freewheel.w_rel")
    );
    assert_eq!(run.at("freewheel.stuck", 0.5), 1.0);
    assert_eq!(run.at("freewheel.stuck", 1.5), 0.0);
    assert_eq!(
        max_abs_between(&run, "packed.w_rel", 0.0, 2.0),
        0.0,
        "closed pack slipped"
    );
}

/// `LossyGear` (ratio 2). (1) Input drives, mesh efficiency 0.8: J1 = 1 with 10 N.m, J2 = 3.2 on
/// the output, so J2/(eta*ratio^2) = 1 and the input accelerates at 5 rad/s2; the output
/// receives 0.8 of the input power and lossPower = 0.2*5*w. (2) Output drives (8 N.m on
/// J4 = 4), eta_mf2 = 0.5: the input (J3 = 1, already turning at 0.1 rad/s) accelerates at
/// 4/3 rad/s2 and receives half the power. (Started from rest, moss's event iteration cycles
/// at t = 0 between the two mesh-direction branches: reported as a compiler issue.) (3) Bearing friction 1 N.m, ideal meshes: stuck until the drive ramp t exceeds 1 N.m,
/// then the input accelerates at (t - 1)/2 (w(3) = 1 rad/s).
#[test]
fn rotational_lossy_gear_efficiency_and_locking() {
    let run = simulate_source(
        "LossyGears",
        r#"
model LossyGears
  import Modelica.Mechanics.Rotational.*;
  Sources.ConstantTorque drive1(tau_constant=10);
  Components.Inertia j1(J=1, phi(start=0, fixed=true), w(start=0, fixed=true));
  Components.LossyGear gear1(ratio=2, lossTable=[0, 0.8, 0.8, 0, 0]);
  Components.Inertia j2(J=3.2);
  Components.Inertia j3(J=1, phi(start=0, fixed=true), w(start=0.1, fixed=true));
  Components.LossyGear gear2(ratio=2, lossTable=[0, 0.8, 0.5, 0, 0]);
  Components.Inertia j4(J=4);
  Sources.ConstantTorque drive2(tau_constant=8);
  Modelica.Blocks.Sources.Ramp ramp(height=3, duration=3);
  Sources.Torque drive3;
  Components.Inertia j5(J=1, phi(start=0, fixed=true), w(start=0, fixed=true));
  Components.LossyGear gear3(ratio=2, lossTable=[0, 1, 1, 1, 1]);
  Components.Inertia j6(J=4);
  Real E_loss1(start=0, fixed=true);
  Real W_in1(start=0, fixed=true);
equation
  connect(drive1.flange, j1.flange_a);
  connect(j1.flange_b, gear1.flange_a);
  connect(gear1.flange_b, j2.flange_a);
  connect(j3.flange_b, gear2.flange_a);
  connect(gear2.flange_b, j4.flange_a);
  connect(j4.flange_b, drive2.flange);
  connect(ramp.y, drive3.tau);
  connect(drive3.flange, j5.flange_a);
  connect(j5.flange_b, gear3.flange_a);
  connect(gear3.flange_b, j6.flange_a);
  der(E_loss1) = gear1.lossPower;
  der(W_in1) = 10*j1.w;
  annotation(experiment(StopTime=3, Interval=0.01, Tolerance=1e-8));
end LossyGears;
"#,
        &[],
    );
    for t in [0.5, 1.0, 3.0] {
        assert_close(&format!("j1.w at {t}"), run.at("j1.w", t), 5.0 * t, 1e-5);
        assert_close(
            &format!("j3.w at {t}"),
            run.at("j3.w", t),
            0.1 + 4.0 / 3.0 * t,
            1e-5,
        );
    }
    // Power flow at both flanges (power into the gear is tau*w at each flange).
    let t = 2.0;
    let p_in = run.at("gear1.flange_a.tau", t) * run.at("j1.w", t);
    let p_out = -run.at("gear1.flange_b.tau", t) * run.at("j2.w", t);
    assert_rel("gear1 efficiency", p_out / p_in, 0.8, 1e-6);
    assert_rel(
        "gear1 lossPower",
        run.at("gear1.lossPower", t),
        0.2 * p_in,
        1e-6,
    );
    let p_in2 = run.at("gear2.flange_b.tau", t) * run.at("j4.w", t);
    let p_out2 = -run.at("gear2.flange_a.tau", t) * run.at("j3.w", t);
    assert_rel(
        "gear2 efficiency (output drives)",
        p_out2 / p_in2,
        0.5,
        1e-6,
    );
    assert_eq!(run.at("gear1.mode", 1.0), 1.0);
    assert_rel(
        "gear1: work = kinetic + dissipated",
        run.last("W_in1"),
        0.5 * run.last("j1.w").powi(2) + 0.5 * 3.2 * run.last("j2.w").powi(2) + run.last("E_loss1"),
        1e-6,
    );
    // Kinematics: flange_a.phi = 2*flange_b.phi.
    let (a, b) = (run.get("gear2.flange_a.phi"), run.get("gear2.flange_b.phi"));
    for (a, b) in a.iter().zip(&b) {
        assert_close("gear2 ratio", *a, 2.0 * b, 1e-9 * (1.0 + a.abs()));
    }
    // Third gear: stuck until 1 s, then rolling.
    assert_eq!(
        max_abs_between(&run, "j5.w", 0.0, 0.99),
        0.0,
        "gear3 rolled before the drive exceeded the friction"
    );
    assert_eq!(run.at("gear3.mode", 0.5), 0.0);
    assert_eq!(run.at("gear3.mode", 2.0), 1.0);
    assert_close("j5.w at 2 s", run.at("j5.w", 2.0), 0.25, 1e-3);
    assert_close("j5.w at 3 s", run.last("j5.w"), 1.0, 1e-3);
    assert!(run.min("gear1.lossPower") >= -1e-9 && run.min("gear3.lossPower") >= -1e-9);
}
