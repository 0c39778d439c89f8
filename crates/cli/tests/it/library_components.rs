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

use crate::library_support;

use library_support::{
    assert_close, assert_rel, elastogap_restitution, simulate_source, Trajectories,
};

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

// ---------------------------------------------------------------------------------------------
// Contacts: ElastoBacklash, ElastoBacklash2, ElastoGap
// ---------------------------------------------------------------------------------------------

/// The ElastoBacklash torque recomputed from the element's own deflection and speed: zero in
/// the free play |phi_rel - phi_rel0| <= b/2, else the spring torque on the deflection beyond
/// the free play plus the damping torque d*w_rel limited to the spring torque's magnitude.
fn backlash_torque(c: f64, d: f64, b: f64, phi_rel: f64, w_rel: f64) -> f64 {
    let tau_c = if phi_rel > b / 2.0 {
        c * (phi_rel - b / 2.0)
    } else if phi_rel < -b / 2.0 {
        c * (phi_rel + b / 2.0)
    } else {
        return 0.0;
    };
    tau_c + (d * w_rel).clamp(-tau_c.abs(), tau_c.abs())
}

/// An inertia (J = 1, 1 rad/s) rattling in the free play (b = 0.2 rad) of an `ElastoBacklash`
/// (c = 1000, d = 5) to the housing, and the same with `ElastoBacklash2` (full damping torque
/// while the contact pushes, nothing when it would pull). For both: the torque follows the
/// contact law at every output point, it never pulls (same sign as the deflection), and
/// kinetic + spring energy + the integral of `lossPower` stays at the initial 0.5 J.
#[test]
fn backlash_contact_law_and_energy_balance() {
    let run = simulate_source(
        "BacklashRattle",
        r#"
model BacklashRattle
  import Modelica.Mechanics.Rotational.Components;
  Components.Fixed housing;
  Components.ElastoBacklash backlash(b=0.2, c=1000, d=5);
  Components.Inertia j1(J=1, phi(start=0, fixed=true), w(start=1, fixed=true));
  Components.ElastoBacklash2 backlash2(b=0.2, c=1000, d=5);
  Components.Inertia j2(J=1, phi(start=0, fixed=true), w(start=1, fixed=true));
  Real E_loss1(start=0, fixed=true);
  Real E_loss2(start=0, fixed=true);
  Real E1 = 0.5*j1.J*j1.w^2 + 0.5*backlash.c*max(abs(backlash.phi_rel) - 0.1, 0)^2 + E_loss1;
  Real E2 = 0.5*j2.J*j2.w^2 + 0.5*backlash2.c*max(abs(backlash2.phi_rel) - 0.1, 0)^2 + E_loss2;
equation
  connect(housing.flange, backlash.flange_a);
  connect(backlash.flange_b, j1.flange_a);
  connect(housing.flange, backlash2.flange_a);
  connect(backlash2.flange_b, j2.flange_a);
  der(E_loss1) = backlash.lossPower;
  der(E_loss2) = backlash2.lossPower;
  annotation(experiment(StopTime=3, Interval=0.001, Tolerance=1e-9));
end BacklashRattle;
"#,
        &[],
    );
    let (phi, w, tau) = (
        run.get("backlash.phi_rel"),
        run.get("backlash.w_rel"),
        run.get("backlash.tau"),
    );
    for i in 0..phi.len() {
        let expected = backlash_torque(1000.0, 5.0, 0.2, phi[i], w[i]);
        assert_close(
            &format!("ElastoBacklash torque at t = {}", run.time()[i]),
            tau[i],
            expected,
            1e-6 * (1.0 + expected.abs()),
        );
        // Never pulls: a torque against the deflection is allowed only at the level of the
        // event location (relations switch within 1e-10 of the contact angle, c*1e-10 here).
        assert!(
            tau[i] * phi[i].signum() >= -1e-6,
            "ElastoBacklash pulls at t = {}: tau = {}",
            run.time()[i],
            tau[i]
        );
    }
    let (phi2, w2, tau2) = (
        run.get("backlash2.phi_rel"),
        run.get("backlash2.w_rel"),
        run.get("backlash2.tau"),
    );
    for i in 0..phi2.len() {
        let (p, v) = (phi2[i], w2[i]);
        let tau_c = if p.abs() > 0.1 {
            1000.0 * (p - 0.1 * p.signum())
        } else {
            0.0
        };
        let full = tau_c + 5.0 * v;
        let expected = if tau_c != 0.0 && full * p > 0.0 {
            full
        } else {
            0.0
        };
        // at the instant the torque would change sign the element switches by an event; the
        // output point at that time may show either side; so may a point within the relations'
        // switching band (1e-10) of the contact angle
        if (full * p).abs() > 1e-6 && (p.abs() - 0.1).abs() > 1e-9 {
            assert_close(
                &format!("ElastoBacklash2 torque at t = {}", run.time()[i]),
                tau2[i],
                expected,
                1e-6 * (1.0 + expected.abs()),
            );
        }
        assert!(
            tau2[i] * p.signum() >= -1e-6,
            "ElastoBacklash2 pulls at t = {}",
            run.time()[i]
        );
    }
    // The inertia hits the flank at 0.1 s (free play 0.1 rad at 1 rad/s).
    assert_close(
        "first contact",
        run.upward_crossings("backlash.phi_rel", 0.1)[0],
        0.1,
        1e-6,
    );
    assert_energy_conserved(&run, "E1", &run.get("E1"), 1e-5);
    assert_energy_conserved(&run, "E2", &run.get("E2"), 1e-5);
    assert!(
        run.last("E_loss1") > 0.05,
        "backlash dissipates: {}",
        run.last("E_loss1")
    );
    assert!(
        run.last("E_loss2") > run.last("E_loss1"),
        "the unclipped damping dissipates more"
    );
}

/// A mass (m = 1, 1 m/s) running into an `ElastoGap` (c = 1000, d = 10, s_rel0 = 0.5) in front
/// of a wall, and another into a Hertzian gap (n = 1.5, c = 1e4, no damping). The contact force
/// recomputed from s_rel and v_rel equals c*(s_rel - s_rel0) plus the damping force d*v_rel
/// clamped to the spring force (so the gap never pulls, f <= 0), the energy balance holds with
/// the integral of `lossPower`, the rebound speed is e*v_in with e from the contact law, and the
/// undamped Hertz contact returns the full speed after a peak compression (1.25e-4)^0.4 m.
#[test]
fn elastogap_contact_law_restitution_and_energy() {
    let run = simulate_source(
        "GapImpact",
        r#"
model GapImpact
  import Modelica.Mechanics.Translational.Components;
  Components.Mass mass1(m=1, s(start=0, fixed=true), v(start=1, fixed=true));
  Components.ElastoGap gap1(c=1000, d=10, s_rel0=0.5);
  Components.Fixed wall1(s0=1);
  Components.Mass mass2(m=1, s(start=0, fixed=true), v(start=1, fixed=true));
  Components.ElastoGap gap2(c=1e4, d=0, s_rel0=0.5, n=1.5);
  Components.Fixed wall2(s0=1);
  Real E_loss1(start=0, fixed=true);
  Real E1 = 0.5*mass1.m*mass1.v^2 + 0.5*gap1.c*max(gap1.s_rel0 - gap1.s_rel, 0)^2 + E_loss1;
  Real E2 = 0.5*mass2.m*mass2.v^2 + gap2.c*max(gap2.s_rel0 - gap2.s_rel, 0)^2.5/2.5;
equation
  connect(mass1.flange_b, gap1.flange_a);
  connect(gap1.flange_b, wall1.flange);
  connect(mass2.flange_b, gap2.flange_a);
  connect(gap2.flange_b, wall2.flange);
  der(E_loss1) = gap1.lossPower;
  annotation(experiment(StopTime=1.5, Interval=0.0005, Tolerance=1e-9));
end GapImpact;
"#,
        &[],
    );
    let (s_rel, v_rel, f) = (
        run.get("gap1.s_rel"),
        run.get("gap1.v_rel"),
        run.get("gap1.f"),
    );
    let mut in_contact = 0;
    for i in 0..s_rel.len() {
        let expected = if s_rel[i] < 0.5 {
            in_contact += 1;
            let f_c = 1000.0 * (s_rel[i] - 0.5);
            f_c + (10.0 * v_rel[i]).clamp(f_c, -f_c)
        } else {
            0.0
        };
        assert_close(
            &format!("gap force at t = {}", run.time()[i]),
            f[i],
            expected,
            1e-6 * (1.0 + expected.abs()),
        );
        assert!(
            f[i] <= 0.0,
            "gap pulls at t = {}: f = {}",
            run.time()[i],
            f[i]
        );
    }
    assert!(
        in_contact > 50,
        "only {in_contact} output points in contact"
    );
    // The clipping is active somewhere: at the end of the contact the unclipped law would pull.
    assert!(
        (0..s_rel.len()).any(|i| s_rel[i] < 0.5 && 10.0 * v_rel[i] > 1000.0 * (0.5 - s_rel[i])),
        "the damping limit is never reached"
    );
    assert_energy_conserved(&run, "E1", &run.get("E1"), 1e-6);
    assert_energy_conserved(&run, "E2", &run.get("E2"), 1e-6);
    let e = elastogap_restitution(1.0, 1000.0, 10.0, 0.0, 1.0);
    // The clipping removes damping: e lies above the linear spring-damper's value.
    let zeta = 10.0 / (2.0 * f64::sqrt(1000.0));
    let e_linear = f64::exp(-zeta * std::f64::consts::PI / f64::sqrt(1.0 - zeta * zeta));
    assert!(
        e > e_linear && e < 1.0,
        "restitution from the contact law: {e} (linear: {e_linear})"
    );
    assert_close("rebound speed (ElastoGap)", run.last("mass1.v"), -e, 1e-5);
    assert_close(
        "dissipated energy",
        run.last("E_loss1"),
        0.5 * (1.0 - e * e),
        1e-5,
    );
    assert_close(
        "rebound speed (Hertz, undamped)",
        run.last("mass2.v"),
        -1.0,
        1e-5,
    );
    assert_close(
        "peak Hertz compression",
        0.5 - run.min("gap2.s_rel"),
        1.25e-4f64.powf(0.4),
        1e-5,
    );
    // Hertz force law f = -c*x^1.5 at every point of contact.
    for (s, f) in run.get("gap2.s_rel").iter().zip(run.get("gap2.f")) {
        let x = (0.5 - s).max(0.0);
        assert_close("Hertz force", f, -1e4 * x.powf(1.5), 1e-6 * (1.0 + f.abs()));
    }
}

// ---------------------------------------------------------------------------------------------
// Translational friction: SupportFriction, Brake, MassWithStopAndFriction
// ---------------------------------------------------------------------------------------------

/// Translational friction. (1) `SupportFriction` with the force table 2 + v (peak 1.5: static
/// limit 3 N) under a force ramp f = t on a 1 kg mass: stuck until 3 s, then v' = t - 2 - v with
/// v(3) = 0, whose solution is v = t - 3. (2) `Brake` (fn = 20 N, mu = 0.25, peak 1.1: sliding
/// force 5 N, static limit 5.5 N) on a 2 kg mass at 4 m/s: stops after 1.6 s and 3.2 m having
/// dissipated 16 J, then holds a 4 N push that starts at 2 s.
#[test]
fn translational_support_friction_and_brake() {
    let run = simulate_source(
        "SlidingFriction",
        r#"
model SlidingFriction
  import Modelica.Mechanics.Translational.*;
  Modelica.Blocks.Sources.Ramp ramp(height=5, duration=5);
  Sources.Force push;
  Components.Mass mass1(m=1, s(start=0, fixed=true), v(start=0, fixed=true));
  Components.SupportFriction friction(f_pos=[0, 2; 1, 3], peak=1.5);
  Real W_in(start=0, fixed=true);
  Real E_loss(start=0, fixed=true);
  Components.Mass mass2(m=2, s(start=0, fixed=true), v(start=4, fixed=true));
  Components.Brake brake(fn_max=20, mu_pos=[0, 0.25], peak=1.1, useSupport=true);
  Components.Fixed ground;
  Modelica.Blocks.Sources.Constant pressure(k=1);
  Sources.ForceStep push2(stepForce=4, startTime=2);
  Real E_brake(start=0, fixed=true);
equation
  connect(ramp.y, push.f);
  connect(push.flange, mass1.flange_a);
  connect(mass1.flange_b, friction.flange_a);
  der(W_in) = ramp.y*mass1.v;
  der(E_loss) = friction.lossPower;
  connect(push2.flange, mass2.flange_a);
  connect(mass2.flange_b, brake.flange_a);
  connect(brake.support, ground.flange);
  connect(pressure.y, brake.f_normalized);
  der(E_brake) = brake.lossPower;
  annotation(experiment(StopTime=5, Interval=0.01, Tolerance=1e-8));
end SlidingFriction;
"#,
        &[],
    );
    assert_eq!(
        max_abs_between(&run, "mass1.v", 0.0, 2.99),
        0.0,
        "SupportFriction slipped early"
    );
    assert_close("holding force at 2 s", run.at("friction.f", 2.0), 2.0, 1e-6);
    for t in [3.5, 4.0, 5.0] {
        assert_close(
            &format!("mass1.v at {t}"),
            run.at("mass1.v", t),
            t - 3.0,
            1e-3,
        );
        assert_close(
            &format!("mass1.s at {t}"),
            run.at("mass1.s", t),
            (t - 3.0).powi(2) / 2.0,
            1e-3,
        );
    }
    assert_eq!(run.at("friction.mode", 4.0), 1.0);
    assert_rel(
        "work = kinetic + dissipated",
        run.last("W_in"),
        0.5 * run.last("mass1.v").powi(2) + run.last("E_loss"),
        1e-6,
    );
    // E_loss = int_3^5 (2 + v) v dt with v = t - 3: 2*2 + 8/3.
    assert_close(
        "dissipated energy",
        run.last("E_loss"),
        4.0 + 8.0 / 3.0,
        0.01,
    );
    // Brake
    assert_close("mass2.v at 1 s", run.at("mass2.v", 1.0), 4.0 - 2.5, 1e-6);
    assert_close("stopping distance", run.at("mass2.s", 1.9), 3.2, 1e-5);
    assert!(
        max_abs_between(&run, "mass2.v", 1.61, 5.0) < 1e-9,
        "brake slipped after stopping"
    );
    assert_close("dissipated energy (brake)", run.last("E_brake"), 16.0, 1e-4);
    assert_close("holding force at 3 s", run.at("brake.f", 3.0), 4.0, 1e-6);
    assert_close(
        "ground reaction at 3 s",
        run.at("ground.flange.f", 3.0).abs(),
        4.0,
        1e-6,
    );
}

/// Time at which a mass started at rest reaches `distance` under a constant `force`, with the
/// friction law of `MassWithStopAndFriction` (viscous + Coulomb + Stribeck), integrated with RK4.
fn stribeck_travel_time(
    m: f64,
    force: f64,
    f_prop: f64,
    f_coulomb: f64,
    f_stribeck: f64,
    fexp: f64,
    distance: f64,
) -> f64 {
    let accel = |v: f64| (force - f_prop * v - f_coulomb - f_stribeck * f64::exp(-fexp * v)) / m;
    let h = 1e-5;
    let (mut t, mut s, mut v) = (0.0f64, 0.0f64, 0.0f64);
    while s < distance {
        let k1 = (v, accel(v));
        let k2 = (v + 0.5 * h * k1.1, accel(v + 0.5 * h * k1.1));
        let k3 = (v + 0.5 * h * k2.1, accel(v + 0.5 * h * k2.1));
        let k4 = (v + h * k3.1, accel(v + h * k3.1));
        let s_new = s + h / 6.0 * (k1.0 + 2.0 * k2.0 + 2.0 * k3.0 + k4.0);
        let v_new = v + h / 6.0 * (k1.1 + 2.0 * k2.1 + 2.0 * k3.1 + k4.1);
        if s_new >= distance {
            return t + h * (distance - s) / (s_new - s);
        }
        (t, s, v) = (t + h, s_new, v_new);
    }
    t
}

/// `MassWithStopAndFriction` (m = 1, L = 0.2, stops at ±1, so the centre moves in [-0.9, 0.9];
/// friction 0.5*v + 2 + exp(-2|v|), static limit 1.001*3 N). Pushed with 5 N it breaks away,
/// slides to the right stop (arrival time from the friction law) and stops there; a 2.5 N pull
/// (from 2 s) is below the static limit and does not move it; a 6 N pull (from 4 s) drives it to
/// the left stop. It never leaves [-0.9, 0.9], and before the first impact the work of the
/// force equals kinetic energy plus the integral of `lossPower`.
#[test]
fn mass_with_stop_and_friction_stays_between_its_stops() {
    let run = simulate_source(
        "StopAndFriction",
        r#"
model StopAndFriction
  import Modelica.Mechanics.Translational.*;
  Modelica.Blocks.Sources.TimeTable forceTable(table=[0, 5; 2, 5; 2, -2.5; 4, -2.5; 4, -6; 8, -6]);
  Sources.Force push;
  Components.MassWithStopAndFriction mass(m=1, L=0.2, smax=1, smin=-1, F_prop=0.5, F_Coulomb=2,
    F_Stribeck=1, fexp=2, s(start=0, fixed=true), v(start=0, fixed=true));
  Real W_in(start=0, fixed=true);
  Real E_loss(start=0, fixed=true);
equation
  connect(forceTable.y, push.f);
  connect(push.flange, mass.flange_a);
  der(W_in) = forceTable.y*mass.v;
  der(E_loss) = mass.lossPower;
  annotation(experiment(StopTime=8, Interval=0.005, Tolerance=1e-8));
end StopAndFriction;
"#,
        &[],
    );
    assert!(
        run.max("mass.s") <= 0.9 + 1e-9,
        "beyond the right stop: {}",
        run.max("mass.s")
    );
    assert!(
        run.min("mass.s") >= -0.9 - 1e-9,
        "beyond the left stop: {}",
        run.min("mass.s")
    );
    let t_right = stribeck_travel_time(1.0, 5.0, 0.5, 2.0, 1.0, 2.0, 0.9);
    let arrival = run.upward_crossings("mass.s", 0.9 - 1e-9)[0];
    assert_close("arrival at the right stop", arrival, t_right, 2e-3);
    // Energy balance up to just before the impact (the impact itself is an inelastic reinit).
    let before = t_right - 0.02;
    assert_rel(
        "work = kinetic + dissipated before the impact",
        run.at("W_in", before),
        0.5 * run.at("mass.v", before).powi(2) + run.at("E_loss", before),
        1e-5,
    );
    // At the stop: exactly at 0.9, at rest, through the 2.5 N pull.
    for (t, s) in run.points_between("mass.s", t_right + 0.01, 4.0) {
        assert_close(&format!("mass.s at {t} (right stop)"), s, 0.9, 1e-9);
    }
    assert!(max_abs_between(&run, "mass.v", t_right + 0.01, 4.0) < 1e-9);
    let t_left = 4.0 + stribeck_travel_time(1.0, 6.0, 0.5, 2.0, 1.0, 2.0, 1.8);
    let arrival = run.downward_crossings("mass.s", -0.9 + 1e-9)[0];
    assert_close("arrival at the left stop", arrival, t_left, 2e-3);
    assert_close("final position", run.last("mass.s"), -0.9, 1e-9);
    assert_close("final speed", run.last("mass.v"), 0.0, 1e-9);
    assert!(
        run.min("mass.lossPower") >= -1e-9,
        "friction generates energy"
    );
}

// ---------------------------------------------------------------------------------------------
// Motion and torque/force sources
// ---------------------------------------------------------------------------------------------

/// Rotational sources, each on its own inertia, against their closed forms.
#[test]
fn rotational_sources_drive_as_specified() {
    let run = simulate_source(
        "RotationalSources",
        r#"
model RotationalSources
  import Modelica.Mechanics.Rotational.*;
  import Modelica.Constants.pi;
  Modelica.Blocks.Sources.Sine sine(amplitude=0.5, f=1);
  Sources.Position position(exact=true);
  Components.Inertia jPos(J=2);
  Modelica.Blocks.Sources.Step step(height=1, startTime=0.1);
  Sources.Position filtered(exact=false, f_crit=5);
  Components.Inertia jFilt(J=1);
  Modelica.Blocks.Sources.Step speedStep(height=3, startTime=0.5);
  Sources.Speed speed(exact=false, f_crit=2);
  Components.Inertia jSpeed(J=1);
  Modelica.Blocks.Sources.Constant acc(k=2);
  Sources.Accelerate accelerate;
  Components.Inertia jAcc(J=1);
  Sources.ConstantSpeed constantSpeed(w_fixed=3);
  Components.Inertia jConst(J=1, phi(start=0, fixed=true));
  Sources.TorqueStep torqueStep(stepTorque=2, offsetTorque=1, startTime=1);
  Components.Inertia jStep(J=1, phi(start=0, fixed=true), w(start=0, fixed=true));
  Sources.LinearSpeedDependentTorque linearLoad(tau_nominal=-2, w_nominal=10, TorqueDirection=false);
  Components.Inertia jLin(J=1, phi(start=0, fixed=true), w(start=10, fixed=true));
  Sources.QuadraticSpeedDependentTorque quadraticLoad(tau_nominal=-1, w_nominal=10, TorqueDirection=false);
  Components.Inertia jQuad(J=1, phi(start=0, fixed=true), w(start=10, fixed=true));
  Sources.InverseSpeedDependentTorque constantPower(tau_nominal=2, w_nominal=5, TorqueDirection=true);
  Components.Inertia jInv(J=1, phi(start=0, fixed=true), w(start=1, fixed=true));
  Sources.SignTorque signLoad(tau_nominal=-1, reg=Modelica.Blocks.Types.Regularization.Linear, w0=0.01);
  Components.Inertia jSign(J=1, phi(start=0, fixed=true), w(start=2, fixed=true));
  Modelica.Blocks.Sources.Constant torque2Value(k=3);
  Sources.Torque2 torque2;
  Components.Inertia jA(J=1, phi(start=0, fixed=true), w(start=0, fixed=true));
  Components.Inertia jB(J=2, phi(start=0, fixed=true), w(start=0, fixed=true));
  Modelica.Blocks.Sources.Sine moveQ(f=1/(2*pi));
  Modelica.Blocks.Sources.Sine moveQd(f=1/(2*pi), phase=pi/2);
  Modelica.Blocks.Sources.Sine moveQdd(amplitude=-1, f=1/(2*pi));
  Sources.Move move;
  Components.Inertia jMove(J=4);
equation
  connect(sine.y, position.phi_ref);
  connect(position.flange, jPos.flange_a);
  connect(step.y, filtered.phi_ref);
  connect(filtered.flange, jFilt.flange_a);
  connect(speedStep.y, speed.w_ref);
  connect(speed.flange, jSpeed.flange_a);
  connect(acc.y, accelerate.a_ref);
  connect(accelerate.flange, jAcc.flange_a);
  connect(constantSpeed.flange, jConst.flange_a);
  connect(torqueStep.flange, jStep.flange_a);
  connect(linearLoad.flange, jLin.flange_a);
  connect(quadraticLoad.flange, jQuad.flange_a);
  connect(constantPower.flange, jInv.flange_a);
  connect(signLoad.flange, jSign.flange_a);
  connect(torque2Value.y, torque2.tau);
  connect(torque2.flange_a, jA.flange_b);
  connect(torque2.flange_b, jB.flange_a);
  connect(moveQ.y, move.u[1]);
  connect(moveQd.y, move.u[2]);
  connect(moveQdd.y, move.u[3]);
  connect(move.flange, jMove.flange_a);
  annotation(experiment(StopTime=3, Interval=0.01, Tolerance=1e-8));
end RotationalSources;
"#,
        &[],
    );
    use std::f64::consts::PI;
    for t in [0.3, 1.1, 2.45] {
        let w = 2.0 * PI;
        assert_close(
            &format!("exact position at {t}"),
            run.at("jPos.phi", t),
            0.5 * f64::sin(w * t),
            1e-7,
        );
        // the source holds the inertia on the path: J*a = -J*0.5*w^2*sin(w t)
        assert_close(
            &format!("jPos.a at {t}"),
            run.at("jPos.a", t),
            -0.5 * w * w * f64::sin(w * t),
            1e-4,
        );
        assert_close(
            &format!("Move: phi = sin(t) at {t}"),
            run.at("jMove.phi", t),
            f64::sin(t),
            1e-6,
        );
        assert_close(
            &format!("Move: w = cos(t) at {t}"),
            run.at("jMove.w", t),
            f64::cos(t),
            1e-6,
        );
        assert_close(
            &format!("Move torque at {t}"),
            run.at("move.flange.tau", t),
            4.0 * f64::sin(t),
            1e-5,
        );
    }
    // Filtered position: starts at phi_ref = 0 and settles on the step (time constant ~ 1/w_crit).
    assert_close(
        "filtered position before the step",
        run.at("jFilt.phi", 0.09),
        0.0,
        1e-9,
    );
    assert_close(
        "filtered position settled",
        run.at("jFilt.phi", 1.5),
        1.0,
        1e-6,
    );
    // Speed, first-order filter with w_crit = 4*pi: w = 3*(1 - exp(-w_crit (t - 0.5))).
    for t in [0.55, 0.6, 1.0] {
        let w = 3.0 * (1.0 - f64::exp(-4.0 * PI * (t - 0.5)));
        assert_close(
            &format!("filtered speed at {t}"),
            run.at("jSpeed.w", t),
            w,
            1e-5,
        );
    }
    assert_close("Accelerate: w = 2t", run.at("jAcc.w", 2.0), 4.0, 1e-6);
    assert_close("Accelerate: phi = t^2", run.at("jAcc.phi", 2.0), 4.0, 1e-6);
    assert_close(
        "ConstantSpeed: phi = 3t",
        run.at("jConst.phi", 2.0),
        6.0,
        1e-6,
    );
    assert_close(
        "TorqueStep before the step",
        run.at("jStep.w", 0.9),
        0.9,
        1e-6,
    );
    assert_close(
        "TorqueStep after the step",
        run.at("jStep.w", 2.0),
        1.0 + 3.0,
        1e-6,
    );
    for t in [1.0, 3.0] {
        assert_rel(
            &format!("linear load at {t}"),
            run.at("jLin.w", t),
            10.0 * f64::exp(-0.2 * t),
            1e-6,
        );
        assert_rel(
            &format!("quadratic load at {t}"),
            run.at("jQuad.w", t),
            10.0 / (1.0 + 0.1 * t),
            1e-6,
        );
        // constant power 10 W: J w dw/dt = 10, w^2 = 1 + 20 t
        assert_rel(
            &format!("constant power at {t}"),
            run.at("jInv.w", t),
            f64::sqrt(1.0 + 20.0 * t),
            1e-6,
        );
    }
    assert_close(
        "sign torque decelerates at 1 rad/s2",
        run.at("jSign.w", 1.0),
        1.0,
        1e-6,
    );
    assert!(
        run.last("jSign.w").abs() <= 0.01,
        "sign torque leaves the speed inside its band"
    );
    // Torque2: drives the flange_b side forward, the flange_a side back; momentum stays zero.
    assert_close("jA.w", run.at("jA.w", 1.0), -3.0, 1e-6);
    assert_close("jB.w", run.at("jB.w", 1.0), 1.5, 1e-6);
}

/// Translational masses, compliances, sources and sensors. Two masses (1 and 3 kg) on a free
/// `SpringDamper` conserve momentum, and their kinetic + spring energy plus the dissipated
/// energy stays constant; a `Spring` + `Damper` pair to a wall gives the damped oscillator.
#[test]
fn translational_masses_compliances_sources_and_sensors() {
    let run = simulate_source(
        "TranslationalParts",
        r#"
model TranslationalParts
  import Modelica.Mechanics.Translational.*;
  Components.Mass m1(m=1, s(start=0, fixed=true), v(start=2, fixed=true));
  Components.SpringDamper springDamper(c=30, d=1.5, s_rel0=1);
  Components.Mass m2(m=3, s(start=1.2, fixed=true), v(start=0, fixed=true));
  Components.Fixed wall(s0=0);
  Components.Spring spring(c=100, s_rel0=0.5);
  Components.Damper damper(d=2);
  Components.Mass m3(m=1, L=0.1, s(start=1.05, fixed=true), v(start=0, fixed=true));
  Sensors.PositionSensor pos3;
  Sensors.SpeedSensor speed3;
  Sensors.AccSensor acc3;
  Sources.ConstantForce constantForce(f_constant=2);
  Components.Mass m4(m=0.5, s(start=0, fixed=true), v(start=0, fixed=true));
  Sensors.ForceSensor forceSensor;
  Sensors.PowerSensor powerSensor;
  Sensors.MultiSensor multiSensor;
  Components.Mass m5(m=1.5);
  Sensors.RelPositionSensor relPos;
  Sensors.RelSpeedSensor relSpeed;
  Sensors.RelAccSensor relAcc;
  Modelica.Blocks.Sources.Constant f2(k=3);
  Sources.Force2 force2;
  Components.Mass m6(m=1, s(start=0, fixed=true), v(start=0, fixed=true));
  Components.Mass m7(m=2, s(start=1, fixed=true), v(start=0, fixed=true));
  Sources.ConstantSpeed constantSpeed(v_fixed=1.5);
  Components.Mass m8(m=1, s(start=0, fixed=true));
  Modelica.Blocks.Sources.Ramp ramp(height=2, duration=2);
  Sources.Position position(exact=true);
  Components.Mass m9(m=2);
  Sources.LinearSpeedDependentForce linearForce(f_nominal=-3, v_nominal=1, ForceDirection=false);
  Components.Mass m10(m=1, s(start=0, fixed=true), v(start=5, fixed=true));
  Sources.QuadraticSpeedDependentForce dragForce(f_nominal=-0.5, v_nominal=1, ForceDirection=false);
  Components.Mass m11(m=1, s(start=0, fixed=true), v(start=5, fixed=true));
  Sources.SignForce signForce(f_nominal=-2, reg=Modelica.Blocks.Types.Regularization.Linear, v0=0.01);
  Components.Mass m12(m=1, s(start=0, fixed=true), v(start=3, fixed=true));
  Modelica.Blocks.Sources.Constant a_ref(k=-1);
  Sources.Accelerate accelerate;
  Components.Mass m13(m=1);
  Real E_loss(start=0, fixed=true);
  Real E_pair = 0.5*m1.m*m1.v^2 + 0.5*m2.m*m2.v^2 + 0.5*springDamper.c*(springDamper.s_rel - springDamper.s_rel0)^2 + E_loss;
equation
  connect(m1.flange_b, springDamper.flange_a);
  connect(springDamper.flange_b, m2.flange_a);
  der(E_loss) = springDamper.lossPower;
  connect(wall.flange, spring.flange_a);
  connect(wall.flange, damper.flange_a);
  connect(spring.flange_b, m3.flange_a);
  connect(damper.flange_b, m3.flange_a);
  connect(pos3.flange, m3.flange_a);
  connect(speed3.flange, m3.flange_a);
  connect(acc3.flange, m3.flange_a);
  connect(constantForce.flange, m4.flange_a);
  connect(m4.flange_b, forceSensor.flange_a);
  connect(forceSensor.flange_b, powerSensor.flange_a);
  connect(powerSensor.flange_b, multiSensor.flange_a);
  connect(multiSensor.flange_b, m5.flange_a);
  connect(relPos.flange_a, m1.flange_a);
  connect(relPos.flange_b, m2.flange_b);
  connect(relSpeed.flange_a, m1.flange_a);
  connect(relSpeed.flange_b, m2.flange_b);
  connect(relAcc.flange_a, m1.flange_a);
  connect(relAcc.flange_b, m2.flange_b);
  connect(f2.y, force2.f);
  connect(force2.flange_a, m6.flange_b);
  connect(force2.flange_b, m7.flange_a);
  connect(constantSpeed.flange, m8.flange_a);
  connect(ramp.y, position.s_ref);
  connect(position.flange, m9.flange_a);
  connect(linearForce.flange, m10.flange_a);
  connect(dragForce.flange, m11.flange_a);
  connect(signForce.flange, m12.flange_a);
  connect(a_ref.y, accelerate.a_ref);
  connect(accelerate.flange, m13.flange_a);
  annotation(experiment(StopTime=3, Interval=0.01, Tolerance=1e-9));
end TranslationalParts;
"#,
        &[],
    );
    for (v1, v2) in run.get("m1.v").iter().zip(run.get("m2.v")) {
        assert_close("momentum", v1 + 3.0 * v2, 2.0, 1e-6);
    }
    assert_energy_conserved(&run, "E_pair", &run.get("E_pair"), 1e-6);
    // m3: x = s_flange - 0.5 (spring rest length), x(0) = 0.5, m x'' = -100 x - 2 x'.
    let (zeta, wn) = (2.0 / (2.0 * 10.0), 10.0);
    let wd = wn * f64::sqrt(1.0 - zeta * zeta);
    for t in [0.2, 0.9, 2.0] {
        let x =
            0.5 * f64::exp(-zeta * wn * t) * (f64::cos(wd * t) + zeta * wn / wd * f64::sin(wd * t));
        assert_close(
            &format!("oscillator position at {t}"),
            run.at("pos3.s", t),
            0.5 + x,
            1e-6,
        );
        assert_close(
            &format!("centre of m3 at {t}"),
            run.at("m3.s", t),
            0.55 + x,
            1e-6,
        );
        assert_close(
            &format!("speed sensor at {t}"),
            run.at("speed3.v", t),
            run.at("m3.v", t),
            1e-9,
        );
        assert_close(
            &format!("acc sensor at {t}"),
            run.at("acc3.a", t),
            run.at("m3.a", t),
            1e-6,
        );
    }
    // 2 N on 0.5 + 1.5 kg: a = 1 m/s2, 1.5 N passed on to m5, power 1.5*v.
    assert_close("m5.v at 2 s", run.at("m5.v", 2.0), 2.0, 1e-6);
    assert_close("force sensor", run.at("forceSensor.f", 2.0), 1.5, 1e-6);
    assert_close("power sensor", run.at("powerSensor.power", 2.0), 3.0, 1e-6);
    assert_close(
        "multi sensor power",
        run.at("multiSensor.power", 2.0),
        3.0,
        1e-6,
    );
    assert_close("multi sensor v", run.at("multiSensor.v", 2.0), 2.0, 1e-6);
    let t = 1.3;
    assert_close(
        "relative position",
        run.at("relPos.s_rel", t),
        run.at("m2.flange_b.s", t) - run.at("m1.flange_a.s", t),
        1e-9,
    );
    assert_close(
        "relative speed",
        run.at("relSpeed.v_rel", t),
        run.at("m2.v", t) - run.at("m1.v", t),
        1e-6,
    );
    assert_close(
        "relative acceleration",
        run.at("relAcc.a_rel", t),
        run.at("m2.a", t) - run.at("m1.a", t),
        1e-5,
    );
    // Force2 pushes the two masses apart: momentum zero.
    assert_close("m6.v", run.at("m6.v", 1.0), -3.0, 1e-6);
    assert_close("m7.v", run.at("m7.v", 1.0), 1.5, 1e-6);
    assert_close("constant speed", run.at("m8.s", 2.0), 3.0, 1e-6);
    assert_close("exact position on the ramp", run.at("m9.s", 1.0), 1.0, 1e-9);
    assert_close(
        "position source force (no acceleration on the ramp)",
        run.at("m9.flange_a.f", 1.0),
        0.0,
        1e-6,
    );
    assert_rel(
        "linear damping force",
        run.at("m10.v", 1.0),
        5.0 * f64::exp(-3.0),
        1e-6,
    );
    assert_rel(
        "quadratic drag",
        run.at("m11.v", 2.0),
        5.0 / (1.0 + 0.5 * 5.0 * 2.0),
        1e-6,
    );
    assert_close(
        "sign force decelerates at 2 m/s2",
        run.at("m12.v", 1.0),
        1.0,
        1e-6,
    );
    assert!(
        run.last("m12.v").abs() <= 0.01,
        "sign force leaves the speed inside its band"
    );
    assert_close("Accelerate: v = -t", run.at("m13.v", 2.0), -2.0, 1e-9);
    assert_close("Accelerate: s = -t^2/2", run.at("m13.s", 2.0), -2.0, 1e-9);
}

// ---------------------------------------------------------------------------------------------
// Blocks: sources and tables
// ---------------------------------------------------------------------------------------------

/// Compare a signal with its closed form `f` at every output point. At an event (two rows with
/// the same time) the first row is compared with the left limit f(t - 1e-12), the second with the
/// right limit f(t + 1e-12); other points within 1e-9 s of a jump may match either side.
#[track_caller]
fn assert_signal(run: &Trajectories, name: &str, f: impl Fn(f64) -> f64, tol: f64) {
    let time = run.time();
    let y = run.get(name);
    for i in 0..time.len() {
        let t = time[i];
        let expected = if i + 1 < time.len() && time[i + 1] == t {
            f(t - 1e-12)
        } else if i > 0 && time[i - 1] == t {
            f(t + 1e-12)
        } else {
            // An output point within 1e-9 s of a discontinuity may lie on either side of it
            // (the event time and the output grid are rounded independently).
            [f(t), f(t - 1e-9), f(t + 1e-9)]
                .into_iter()
                .min_by(|a, b| (y[i] - a).abs().total_cmp(&(y[i] - b).abs()))
                .unwrap_or(f64::NAN)
        };
        assert!(
            (y[i] - expected).abs() <= tol,
            "{}: {name} at t = {t} (row {i}) is {}, expected {expected} (tolerance {tol})",
            run.label,
            y[i]
        );
    }
}

/// Linear interpolation in a table of (x, y) rows; at a repeated abscissa the later row wins;
/// outside the table the first or last two rows are extrapolated.
fn table_linear(rows: &[(f64, f64)], x: f64) -> f64 {
    let n = rows.len();
    let mut i = 0;
    while i < n - 2 && x >= rows[i + 1].0 {
        i += 1;
    }
    let ((x0, y0), (x1, y1)) = (rows[i], rows[i + 1]);
    if x1 == x0 {
        return y1;
    }
    y0 + (y1 - y0) * (x - x0) / (x1 - x0)
}

/// Every periodic and aperiodic signal source against its defining formula, at every output
/// point (left and right limits at the events); `TimeTable` and `CombiTimeTable` (jumps,
/// several columns, offsets, shift and time scale, periodic/hold extrapolation, constant
/// segments, a String `tableName`) against an independent table interpolation.
#[test]
fn signal_sources_match_their_definitions() {
    let run = simulate_source(
        "SignalSources",
        r#"
model SignalSources
  import Modelica.Blocks.Sources;
  import Modelica.Blocks.Types;
  Sources.Constant const(k=-2.5);
  Sources.Step step(height=2, offset=1, startTime=0.5);
  Sources.Ramp ramp(height=3, duration=1, offset=-1, startTime=0.5);
  Sources.Sine sine(amplitude=2, f=1.5, phase=0.3, offset=0.5, startTime=0.2);
  Sources.Cosine cosine(amplitude=1.5, f=0.5);
  Sources.ExpSine expSine(amplitude=2, f=2, phase=0.1, damping=1);
  Sources.Exponentials exponentials(outMax=2, riseTime=1, riseTimeConst=0.2, fallTimeConst=0.4, startTime=0.5);
  Sources.Pulse pulse(amplitude=3, width=30, period=0.4, nperiod=5, offset=0.5, startTime=0.25);
  Sources.SawTooth sawTooth(amplitude=2, period=0.7, startTime=0.1);
  Sources.Trapezoid trapezoid(amplitude=2, rising=0.1, width=0.2, falling=0.3, period=1, nperiod=2,
    offset=-0.5, startTime=0.3);
  Sources.ContinuousClock clock(offset=1, startTime=0.4);
  Sources.TimeTable timeTable(table=[0, 0; 1, 2; 1, 3; 2, 1; 2.5, 2], offset=0.2, startTime=0.5, shiftTime=0.5);
  Sources.CombiTimeTable periodic(table=[0, 0, 10; 1, 1, 20; 2, 4, 20; 2, 5, 0; 3, 5, 0], columns={2, 3},
    extrapolation=Types.Extrapolation.Periodic, tableName="periodicTable", offset={0, 1});
  Sources.CombiTimeTable held(table=[0, 1; 0.5, 2; 1, 4], smoothness=Types.Smoothness.ConstantSegments,
    extrapolation=Types.Extrapolation.HoldLastPoint, timeScale=2, shiftTime=0.5);
  annotation(experiment(StopTime=4, Interval=0.01, Tolerance=1e-8));
end SignalSources;
"#,
        &[],
    );
    use std::f64::consts::PI;
    let tol = 1e-9;
    assert_signal(&run, "const.y", |_| -2.5, tol);
    assert_signal(&run, "step.y", |t| if t < 0.5 { 1.0 } else { 3.0 }, tol);
    assert_signal(
        &run,
        "ramp.y",
        |t| -1.0 + 3.0 * ((t - 0.5) / 1.0).clamp(0.0, 1.0),
        tol,
    );
    assert_signal(
        &run,
        "sine.y",
        |t| {
            0.5 + if t < 0.2 {
                0.0
            } else {
                2.0 * f64::sin(2.0 * PI * 1.5 * (t - 0.2) + 0.3)
            }
        },
        tol,
    );
    assert_signal(
        &run,
        "cosine.y",
        |t| 1.5 * f64::cos(2.0 * PI * 0.5 * t),
        tol,
    );
    assert_signal(
        &run,
        "expSine.y",
        |t| 2.0 * f64::exp(-t) * f64::sin(2.0 * PI * 2.0 * t + 0.1),
        tol,
    );
    assert_signal(
        &run,
        "exponentials.y",
        |t| {
            if t < 0.5 {
                0.0
            } else if t < 1.5 {
                2.0 * (1.0 - f64::exp(-(t - 0.5) / 0.2))
            } else {
                2.0 * (1.0 - f64::exp(-1.0 / 0.2)) * f64::exp(-(t - 1.5) / 0.4)
            }
        },
        tol,
    );
    assert_signal(
        &run,
        "pulse.y",
        |t| {
            let k = ((t - 0.25) / 0.4).floor();
            let high = t >= 0.25 && k < 5.0 && t - 0.25 - k * 0.4 < 0.3 * 0.4;
            0.5 + if high { 3.0 } else { 0.0 }
        },
        1e-6,
    );
    assert_signal(
        &run,
        "sawTooth.y",
        |t| {
            if t < 0.1 {
                return 0.0;
            }
            let k = ((t - 0.1) / 0.7).floor();
            2.0 * (t - 0.1 - k * 0.7) / 0.7
        },
        1e-6,
    );
    assert_signal(
        &run,
        "trapezoid.y",
        |t| {
            let k = ((t - 0.3) / 1.0).floor();
            if t < 0.3 || k >= 2.0 {
                return -0.5;
            }
            let tau = t - 0.3 - k;
            -0.5 + if tau < 0.1 {
                2.0 * tau / 0.1
            } else if tau < 0.3 {
                2.0
            } else if tau < 0.6 {
                2.0 * (0.6 - tau) / 0.3
            } else {
                0.0
            }
        },
        1e-6,
    );
    assert_signal(&run, "clock.y", |t| 1.0 + (t - 0.4).max(0.0), tol);
    let tt = [(0.0, 0.0), (1.0, 2.0), (1.0, 3.0), (2.0, 1.0), (2.5, 2.0)];
    assert_signal(
        &run,
        "timeTable.y",
        |t| {
            0.2 + if t < 0.5 {
                0.0
            } else {
                table_linear(&tt, t - 0.5)
            }
        },
        tol,
    );
    // Periodic table of period 3 (first to last abscissa), two columns, offsets {0, 1}.
    let col2 = [(0.0, 0.0), (1.0, 1.0), (2.0, 4.0), (2.0, 5.0), (3.0, 5.0)];
    let col3 = [
        (0.0, 10.0),
        (1.0, 20.0),
        (2.0, 20.0),
        (2.0, 0.0),
        (3.0, 0.0),
    ];
    assert_signal(
        &run,
        "periodic.y[1]",
        |t| table_linear(&col2, t.rem_euclid(3.0)),
        tol,
    );
    assert_signal(
        &run,
        "periodic.y[2]",
        |t| 1.0 + table_linear(&col3, t.rem_euclid(3.0)),
        tol,
    );
    // Constant segments, hold last point, table time (t - 0.5)/2.
    assert_signal(
        &run,
        "held.y[1]",
        |t| {
            let x = (t - 0.5) / 2.0;
            if x < 0.5 {
                1.0
            } else if x < 1.0 {
                2.0
            } else {
                4.0
            }
        },
        tol,
    );
    // Jumps of the tables produce events: both limits are in the result.
    let at_jump = run.points_between("timeTable.y", 1.5, 1.5);
    assert_eq!(
        at_jump.len(),
        2,
        "the jump of timeTable at 1.5 s is an event"
    );
    assert_eq!(run.at("periodic.t_max", 0.0), 3.0);
}

// ---------------------------------------------------------------------------------------------
// Blocks: continuous, math, nonlinear
// ---------------------------------------------------------------------------------------------

/// Linear continuous blocks driven by a unit step at 0.5 s, against their step responses
/// (tau = t - 0.5): FirstOrder (k = 2, T = 0.5, starting from y = 1): free decay, then
/// 2 + (y(0.5) - 2)*exp(-tau/T); TransferFunction 1/(0.5s + 1): 1 - exp(-tau/0.5); Integrator
/// (k = 3) reset to -1 at 2 s; LimIntegrator capped at 1; SecondOrder (w = 10, D = 0.2);
/// PI (k = 2, T = 0.5): 2*(1 + tau/0.5); PID (k = 2, Ti = 0.5, Td = 0.1, Nd = 10):
/// 2*(1 + tau/0.5 + 10*exp(-tau*Nd/Td)); Derivative (T = 0.01) of a ramp of slope 2:
/// 2*(1 - exp(-tau/T)).
#[test]
fn continuous_blocks_follow_their_step_responses() {
    let run = simulate_source(
        "ContinuousBlocks",
        r#"
model ContinuousBlocks
  import Modelica.Blocks;
  import Modelica.Blocks.Types.Init;
  Blocks.Sources.Step step(startTime=0.5);
  Blocks.Continuous.FirstOrder firstOrder(k=2, T=0.5, initType=Init.InitialOutput, y_start=1);
  Blocks.Continuous.TransferFunction transferFunction(b={1}, a={0.5, 1}, initType=Init.InitialState);
  Blocks.Sources.BooleanStep resetSignal(startTime=2);
  Blocks.Sources.Constant setValue(k=-1);
  Blocks.Continuous.Integrator integrator(k=3, use_reset=true, use_set=true);
  Blocks.Sources.Constant one(k=1);
  Blocks.Continuous.LimIntegrator limIntegrator(k=1, outMax=1);
  Blocks.Continuous.SecondOrder secondOrder(w=10, D=0.2, initType=Init.InitialState);
  Blocks.Continuous.PI pi(k=2, T=0.5, initType=Init.InitialState);
  Blocks.Continuous.PID pid(k=2, Ti=0.5, Td=0.1, Nd=10, initType=Init.InitialState);
  Blocks.Sources.Ramp ramp(height=2, duration=10, startTime=0.5);
  Blocks.Continuous.Derivative derivative(k=10, T=0.01, initType=Init.InitialState);
equation
  connect(step.y, firstOrder.u);
  connect(step.y, transferFunction.u);
  connect(step.y, integrator.u);
  connect(resetSignal.y, integrator.reset);
  connect(setValue.y, integrator.set);
  connect(one.y, limIntegrator.u);
  connect(step.y, secondOrder.u);
  connect(step.y, pi.u);
  connect(step.y, pid.u);
  connect(ramp.y, derivative.u);
  annotation(experiment(StopTime=3, Interval=0.01, Tolerance=1e-9));
end ContinuousBlocks;
"#,
        &[],
    );
    let tol = 1e-6;
    let y05 = f64::exp(-0.5 / 0.5);
    assert_signal(
        &run,
        "firstOrder.y",
        |t| {
            if t < 0.5 {
                f64::exp(-t / 0.5)
            } else {
                2.0 + (y05 - 2.0) * f64::exp(-(t - 0.5) / 0.5)
            }
        },
        tol,
    );
    assert_signal(
        &run,
        "transferFunction.y",
        |t| {
            if t < 0.5 {
                0.0
            } else {
                1.0 - f64::exp(-(t - 0.5) / 0.5)
            }
        },
        tol,
    );
    assert_signal(
        &run,
        "integrator.y",
        |t| {
            if t < 0.5 {
                0.0
            } else if t < 2.0 {
                3.0 * (t - 0.5)
            } else {
                -1.0 + 3.0 * (t - 2.0)
            }
        },
        tol,
    );
    assert_signal(&run, "limIntegrator.y", |t| t.min(1.0), tol);
    let (d, w) = (0.2, 10.0);
    let wd = w * f64::sqrt(1.0 - d * d);
    assert_signal(
        &run,
        "secondOrder.y",
        |t| {
            let tau = (t - 0.5).max(0.0);
            1.0 - f64::exp(-d * w * tau) * (f64::cos(wd * tau) + d * w / wd * f64::sin(wd * tau))
        },
        tol,
    );
    assert_signal(
        &run,
        "pi.y",
        |t| {
            if t < 0.5 {
                0.0
            } else {
                2.0 * (1.0 + (t - 0.5) / 0.5)
            }
        },
        tol,
    );
    assert_signal(
        &run,
        "pid.y",
        |t| {
            if t < 0.5 {
                0.0
            } else {
                let tau = t - 0.5;
                2.0 * (1.0 + tau / 0.5 + 10.0 * f64::exp(-tau * 10.0 / 0.1))
            }
        },
        1e-5,
    );
    // derivative: k = 10 times the slope 0.2 of the ramp, lagged by T = 0.01 s.
    assert_signal(
        &run,
        "derivative.y",
        |t| {
            if t < 0.5 {
                0.0
            } else {
                2.0 * (1.0 - f64::exp(-(t - 0.5) / 0.01))
            }
        },
        tol,
    );
}

/// Math and nonlinear blocks: algebraic identities at every output point.
#[test]
fn math_and_nonlinear_blocks_compute_their_functions() {
    let run = simulate_source(
        "MathBlocks",
        r#"
model MathBlocks
  import Modelica.Blocks;
  Blocks.Sources.Sine u1(amplitude=2, f=0.5);
  Blocks.Sources.Ramp u2(height=3, duration=4, offset=0.5);
  Blocks.Math.Gain gain(k=-1.5);
  Blocks.Math.Add add(k1=2, k2=-3);
  Blocks.Math.Add3 add3(k1=1, k2=2, k3=3);
  Blocks.Math.Feedback feedback;
  Blocks.Math.Product product;
  Blocks.Math.Division division;
  Blocks.Math.Abs abs1;
  Blocks.Math.Sign sign1;
  Blocks.Math.Sqrt sqrt1;
  Blocks.Math.Exp exp1;
  Blocks.Math.Max max1;
  Blocks.Math.Min min1;
  Blocks.Nonlinear.Limiter limiter(uMax=1.2, uMin=-0.7);
  Blocks.Nonlinear.DeadZone deadZone(uMax=0.5);
  Blocks.Math.Sum sum(nin=2, k={1, 4});
equation
  connect(u1.y, gain.u);
  connect(u1.y, add.u1);
  connect(u2.y, add.u2);
  connect(u1.y, add3.u1);
  connect(u2.y, add3.u2);
  connect(gain.y, add3.u3);
  connect(u1.y, feedback.u1);
  connect(u2.y, feedback.u2);
  connect(u1.y, product.u1);
  connect(u2.y, product.u2);
  connect(u1.y, division.u1);
  connect(u2.y, division.u2);
  connect(u1.y, abs1.u);
  connect(u1.y, sign1.u);
  connect(u2.y, sqrt1.u);
  connect(u1.y, exp1.u);
  connect(u1.y, max1.u1);
  connect(u2.y, max1.u2);
  connect(u1.y, min1.u1);
  connect(u2.y, min1.u2);
  connect(u1.y, limiter.u);
  connect(u1.y, deadZone.u);
  connect(u1.y, sum.u[1]);
  connect(u2.y, sum.u[2]);
  annotation(experiment(StopTime=4, Interval=0.01));
end MathBlocks;
"#,
        &[],
    );
    let (a, b) = (run.get("u1.y"), run.get("u2.y"));
    type BlockFunction = Box<dyn Fn(f64, f64) -> f64>;
    let checks: Vec<(&str, BlockFunction)> = vec![
        ("gain.y", Box::new(|a, _| -1.5 * a)),
        ("add.y", Box::new(|a, b| 2.0 * a - 3.0 * b)),
        ("add3.y", Box::new(|a, b| a + 2.0 * b + 3.0 * (-1.5 * a))),
        ("feedback.y", Box::new(|a, b| a - b)),
        ("product.y", Box::new(|a, b| a * b)),
        ("division.y", Box::new(|a, b| a / b)),
        ("abs1.y", Box::new(|a, _| a.abs())),
        (
            "sign1.y",
            Box::new(|a, _| {
                if a > 0.0 {
                    1.0
                } else if a < 0.0 {
                    -1.0
                } else {
                    0.0
                }
            }),
        ),
        ("sqrt1.y", Box::new(|_, b| b.sqrt())),
        ("exp1.y", Box::new(|a, _| a.exp())),
        ("max1.y", Box::new(f64::max)),
        ("min1.y", Box::new(f64::min)),
        ("limiter.y", Box::new(|a, _| a.clamp(-0.7, 1.2))),
        (
            "deadZone.y",
            Box::new(|a, _| {
                if a > 0.5 {
                    a - 0.5
                } else if a < -0.5 {
                    a + 0.5
                } else {
                    0.0
                }
            }),
        ),
        ("sum.y", Box::new(|a, b| a + 4.0 * b)),
    ];
    for (name, f) in checks {
        let y = run.get(name);
        for i in 0..y.len() {
            let expected = f(a[i], b[i]);
            assert_close(
                &format!("{name} at t = {}", run.time()[i]),
                y[i],
                expected,
                1e-12 * (1.0 + expected.abs()),
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Thermal: capacitors, conductors, sources, sensors, and the heat ports of lossy components
// ---------------------------------------------------------------------------------------------

/// HeatCapacitor + ThermalConductor to a fixed temperature: T = 300 + 100*exp(-G t/C);
/// two capacitors through a ThermalResistor approach the capacity-weighted mean
/// (C1 T1 + C2 T2 conserved, difference decaying with 1/(R C1 C2/(C1 + C2)) = 1/7.5 s);
/// a prescribed heat flow of 50 W into 10 J/K heats at 5 K/s, measured by the heat flow and
/// temperature sensors; Convection with Gc = 2 W/K; the Celsius sources and sensor.
#[test]
fn thermal_capacitors_approach_equilibrium_exponentially() {
    let run = simulate_source(
        "ThermalNetwork",
        r#"
model ThermalNetwork
  import Modelica.Thermal.HeatTransfer;
  HeatTransfer.Components.HeatCapacitor body(C=100, T(start=400, fixed=true));
  HeatTransfer.Components.ThermalConductor conductor(G=5);
  HeatTransfer.Sources.FixedTemperature ambient(T=300);
  HeatTransfer.Components.HeatCapacitor c1(C=100, T(start=400, fixed=true));
  HeatTransfer.Components.ThermalResistor resistor(R=0.1);
  HeatTransfer.Components.HeatCapacitor c2(C=300, T(start=300, fixed=true));
  Modelica.Blocks.Sources.Constant heating(k=50);
  HeatTransfer.Sources.PrescribedHeatFlow heater;
  HeatTransfer.Sensors.HeatFlowSensor heatFlowSensor;
  HeatTransfer.Components.HeatCapacitor c3(C=10, T(start=290, fixed=true));
  HeatTransfer.Sensors.TemperatureSensor thermometer;
  HeatTransfer.Sensors.RelTemperatureSensor relThermometer;
  Modelica.Blocks.Sources.Constant gc(k=2);
  HeatTransfer.Components.Convection convection;
  HeatTransfer.Components.HeatCapacitor c4(C=20, T(start=350, fixed=true));
  HeatTransfer.Celsius.FixedTemperature fluid(T=20);
  HeatTransfer.Celsius.TemperatureSensor celsius;
  Real U1 = c1.C*c1.T + c2.C*c2.T "Heat stored in the pair";
equation
  connect(body.port, conductor.port_a);
  connect(conductor.port_b, ambient.port);
  connect(c1.port, resistor.port_a);
  connect(resistor.port_b, c2.port);
  connect(heating.y, heater.Q_flow);
  connect(heater.port, heatFlowSensor.port_a);
  connect(heatFlowSensor.port_b, c3.port);
  connect(thermometer.port, c3.port);
  connect(relThermometer.port_a, c3.port);
  connect(relThermometer.port_b, ambient.port);
  connect(gc.y, convection.Gc);
  connect(c4.port, convection.solid);
  connect(convection.fluid, fluid.port);
  connect(celsius.port, c4.port);
  annotation(experiment(StopTime=20, Interval=0.05, Tolerance=1e-9));
end ThermalNetwork;
"#,
        &[],
    );
    for t in [1.0, 5.0, 20.0] {
        assert_rel(
            &format!("body.T at {t}"),
            run.at("body.T", t),
            300.0 + 100.0 * f64::exp(-0.05 * t),
            1e-8,
        );
        let diff = 100.0 * f64::exp(-t / 7.5);
        assert_rel(
            &format!("c1.T at {t}"),
            run.at("c1.T", t),
            325.0 + 0.75 * diff,
            1e-8,
        );
        assert_rel(
            &format!("c2.T at {t}"),
            run.at("c2.T", t),
            325.0 - 0.25 * diff,
            1e-8,
        );
        assert_rel(
            &format!("c3.T at {t}"),
            run.at("thermometer.T", t),
            290.0 + 5.0 * t,
            1e-8,
        );
        assert_close(
            &format!("relative temperature at {t}"),
            run.at("relThermometer.T_rel", t),
            290.0 + 5.0 * t - 300.0,
            1e-6,
        );
        // convection to 20 degC = 293.15 K with Gc/C = 0.1 1/s
        let t4 = 293.15 + (350.0 - 293.15) * f64::exp(-0.1 * t);
        assert_rel(&format!("c4.T at {t}"), run.at("c4.T", t), t4, 1e-8);
        assert_close(
            &format!("Celsius sensor at {t}"),
            run.at("celsius.T", t),
            t4 - 273.15,
            1e-6,
        );
    }
    assert_energy_conserved(&run, "C1*T1 + C2*T2", &run.get("U1"), 1e-10);
    assert_close(
        "heat flow sensor",
        run.at("heatFlowSensor.Q_flow", 3.0),
        50.0,
        1e-9,
    );
    assert_close(
        "conductor heat flow at 0",
        run.first("conductor.Q_flow"),
        500.0,
        1e-9,
    );
}

/// The heat ports of dissipative components (`useHeatPort = true`): what `lossPower`
/// dissipates arrives as heat. A Damper spins down an inertia (J = 2, 10 rad/s: 100 J), a
/// Brake stops another (J = 1, 6 rad/s: 18 J), an ElastoGap stops a mass in a sticky contact
/// (m = 1, 1 m/s; at most 0.5 J); each heats its own capacitor (10 J/K) by energy/C.
#[test]
fn heat_ports_receive_the_dissipated_energy() {
    let run = simulate_source(
        "HeatPorts",
        r#"
model HeatPorts
  import Modelica.Mechanics.Rotational;
  import Modelica.Mechanics.Translational;
  import Modelica.Thermal.HeatTransfer;
  Rotational.Components.Inertia j1(J=2, phi(start=0, fixed=true), w(start=10, fixed=true));
  Rotational.Components.Damper damper(d=1, useHeatPort=true);
  Rotational.Components.Fixed fixed;
  HeatTransfer.Components.HeatCapacitor heat1(C=10, T(start=293.15, fixed=true));
  Rotational.Components.Inertia j2(J=1, phi(start=0, fixed=true), w(start=6, fixed=true));
  Rotational.Components.Brake brake(fn_max=4, mu_pos=[0, 0.5], useHeatPort=true);
  Modelica.Blocks.Sources.Constant pressure(k=1);
  HeatTransfer.Components.HeatCapacitor heat2(C=10, T(start=293.15, fixed=true));
  Translational.Components.Mass mass(m=1, s(start=0, fixed=true), v(start=1, fixed=true));
  Translational.Components.ElastoGap gap(c=1000, d=200, s_rel0=0.5, useHeatPort=true);
  Translational.Components.Fixed wall(s0=1);
  HeatTransfer.Components.HeatCapacitor heat3(C=10, T(start=293.15, fixed=true));
  Real E_gap(start=0, fixed=true);
equation
  connect(j1.flange_b, damper.flange_a);
  connect(damper.flange_b, fixed.flange);
  connect(damper.heatPort, heat1.port);
  connect(j2.flange_b, brake.flange_a);
  connect(pressure.y, brake.f_normalized);
  connect(brake.heatPort, heat2.port);
  connect(mass.flange_b, gap.flange_a);
  connect(gap.flange_b, wall.flange);
  connect(gap.heatPort, heat3.port);
  der(E_gap) = gap.lossPower;
  annotation(experiment(StopTime=20, Interval=0.01, Tolerance=1e-9));
end HeatPorts;
"#,
        &[],
    );
    // Damper: w = 10*exp(-t/2); heat = J/2*(100 - w^2).
    for t in [1.0, 5.0, 20.0] {
        let w = 10.0 * f64::exp(-t / 2.0);
        assert_close(
            &format!("damper heat at {t}"),
            run.at("heat1.T", t),
            293.15 + (100.0 - w * w) / 10.0,
            1e-6,
        );
    }
    // Brake: 2 N.m stops the shaft after 3 s; 18 J of heat.
    assert_close("brake heat", run.last("heat2.T"), 293.15 + 1.8, 1e-6);
    assert_close(
        "brake heat half way",
        run.at("heat2.T", 1.5),
        293.15 + (18.0 - 0.5 * 3.0f64.powi(2)) / 10.0,
        1e-6,
    );
    // ElastoGap: the heat equals the integral of lossPower and the kinetic energy lost.
    let lost = 0.5
        - 0.5 * run.last("mass.v").powi(2)
        - 0.5 * 1000.0 * (0.5 - run.last("gap.s_rel")).max(0.0).powi(2);
    assert_close(
        "gap heat = integral of lossPower",
        (run.last("heat3.T") - 293.15) * 10.0,
        run.last("E_gap"),
        1e-7,
    );
    assert_close(
        "gap heat = mechanical energy lost",
        run.last("E_gap"),
        lost,
        1e-6,
    );
    assert!(
        run.last("E_gap") > 0.1,
        "the mass reached the gap: {}",
        run.last("E_gap")
    );
    // heatPort.Q_flow = -lossPower at every point
    for (q, p) in run
        .get("damper.heatPort.Q_flow")
        .iter()
        .zip(run.get("damper.lossPower"))
    {
        assert_close("damper heat flow", *q, -p, 1e-9 * (1.0 + p.abs()));
    }
}

// ---------------------------------------------------------------------------------------------
// Table splines
// ---------------------------------------------------------------------------------------------

/// The spline options of the MSL's 1-D tables (`smoothness` 2 Akima, 4 Fritsch-Butland,
/// 5 Steffen, 6 modified Akima) on the table of y = x^2 at x = 0 .. 4, through the
/// interpolation functions that stand in for the C table code. The divided differences are
/// 1, 3, 5, 7 (Akima's extrapolated ones -3, -1 and 9, 11), so Akima's slopes are the
/// exact 0, 2, 4, 6, 8 and its Hermite cubic reproduces the parabola; the others are worked
/// out below. `v` is the derivative of the Akima value through index reduction (the
/// function's derivative annotation).
const TABLE_SPLINES: &str = r#"
model TableSplines
  parameter Real table[5, 2] = [0, 0; 1, 1; 2, 4; 3, 9; 4, 16];
  Real x(start = 0, fixed = true);
  Real akima = MossTables.interpolate(table, 2, x, 2, 2);
  Real fritschButland = MossTables.interpolate(table, 2, x, 4, 2);
  Real steffen = MossTables.interpolate(table, 2, x, 5, 2);
  Real modifiedAkima = MossTables.interpolate(table, 2, x, 6, 2);
  Real linear = MossTables.interpolate(table, 2, x, 1, 2);
  Real v;
equation
  der(x) = 1;
  v = der(akima);
end TableSplines;
"#;

#[test]
fn table_splines_follow_the_msl_definitions() {
    let run = simulate_source("TableSplines", TABLE_SPLINES, &["--stop-time", "5"]);
    // inside: x = 1.5 (interval 2) and x = 0.5 (interval 1)
    assert_close("linear(1.5)", run.at("linear", 1.5), 2.5, 1e-9);
    assert_close("akima(1.5)", run.at("akima", 1.5), 2.25, 1e-9);
    assert_close("akima(3.5)", run.at("akima", 3.5), 12.25, 1e-9);
    assert_close("d akima/dx (1.5)", run.at("v", 1.5), 3.0, 1e-6);
    // Fritsch-Butland: harmonic means 1.5 and 3.75 at x = 1, 2; cubic 1 + 1.5h + 2.25h^2 - 0.75h^3
    assert_close(
        "fritschButland(1.5)",
        run.at("fritschButland", 1.5),
        2.21875,
        1e-9,
    );
    // Steffen: slope 1 (one-sided) at x = 0, 2 at x = 1; cubic h - h^2 + h^3 = 0.375 at h = 0.5
    assert_close("steffen(0.5)", run.at("steffen", 0.5), 0.375, 1e-9);
    assert_close("steffen(1.5)", run.at("steffen", 1.5), 2.25, 1e-9);
    // modified Akima: slopes 3/2 and 11/3 at x = 1, 2 (weights 2 + 0 against 2 + 4, 2 + 2
    // against 2 + 6); the cubic gives 1 + 59/48 at x = 1.5
    assert_close(
        "modifiedAkima(1.5)",
        run.at("modifiedAkima", 1.5),
        1.0 + 59.0 / 48.0,
        1e-9,
    );
    // beyond the table (LastTwoPoints): along the end slope, 8 for Akima, 7 for Fritsch-Butland
    assert_close("akima(5)", run.at("akima", 5.0), 24.0, 1e-9);
    assert_close(
        "fritschButland(5)",
        run.at("fritschButland", 5.0),
        23.0,
        1e-9,
    );
    assert_close("linear(5)", run.at("linear", 5.0), 23.0, 1e-9);
}
