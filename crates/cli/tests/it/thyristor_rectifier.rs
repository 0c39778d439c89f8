//! An ideal thyristor (written as the MSL's `IdealThyristor`: `off = s < 0 or pre(off) and
//! not fire`, with `off(start = offStart, fixed = true)`) in a half-wave rectifier with an
//! R-L load, end to end against the closed-form conduction interval: the thyristor blocks
//! until it is fired, conducts from the firing time, and turns off at the current zero,
//! after the voltage zero because of the inductance.
//!
//! The start value of `off` is a parameter, so it is computed before initialization; it must
//! also be `pre(off)` when initialization begins, or the thyristor conducts from t = 0.

use crate::library_support;

use library_support::{assert_close, simulate_source};
use std::f64::consts::PI;

const HALF_WAVE: &str = r#"
model Thyristor "ideal thyristor"
  parameter Real Ron = 1e-5 "on resistance";
  parameter Real Goff = 1e-5 "off conductance";
  parameter Boolean offStart = true "state before the start";
  Real v "voltage from anode to cathode";
  Real i "current from anode to cathode";
  Real s(start = 0) "position on the characteristic";
  Boolean off(start = offStart, fixed = true);
  input Boolean fire;
equation
  off = s < 0 or pre(off) and not fire;
  v = s*(if off then 1 else Ron);
  i = s*(if off then Goff else 1);
end Thyristor;

model HalfWave "a sine source feeding an R-L load through a thyristor fired once"
  parameter Real V = 100, f = 50, R = 10, L = 0.02;
  parameter Real tFire = 1/300 "firing at 60 degrees";
  Thyristor th;
  Real i(start = 0, fixed = true) "load current";
equation
  th.fire = time >= tFire and time < tFire + 5e-4;
  V*sin(2*Modelica.Constants.pi*f*time) = th.v + R*i + L*der(i);
  th.i = i;
  annotation(experiment(StopTime = 0.03, Interval = 1e-4));
end HalfWave;
"#;

const V: f64 = 100.0;
const F: f64 = 50.0;
const R: f64 = 10.0;
const L: f64 = 0.02;
const T_FIRE: f64 = 1.0 / 300.0;

/// Load current while the thyristor conducts after firing at `T_FIRE` with zero current:
/// the steady sine response `V/Z sin(wt - phi)` plus the decaying term that starts it at 0.
fn conduction_current(t: f64) -> f64 {
    let w = 2.0 * PI * F;
    let z = R.hypot(w * L);
    let phi = (w * L).atan2(R);
    let tau = L / R;
    V / z * ((w * t - phi).sin() - (w * T_FIRE - phi).sin() * (-(t - T_FIRE) / tau).exp())
}

/// The current zero that ends conduction: in the negative half-wave of the source (between
/// 1/(2f) and 1/f), found by bisection.
fn extinction_time() -> f64 {
    let (mut a, mut b) = (0.5 / F, 1.0 / F);
    for _ in 0..100 {
        let m = 0.5 * (a + b);
        if conduction_current(m) > 0.0 {
            a = m;
        } else {
            b = m;
        }
    }
    a
}

/// The largest |i| between `t0` and `t1`.
fn largest_magnitude(run: &library_support::Trajectories, t0: f64, t1: f64) -> f64 {
    run.max_between("i", t0, t1)
        .abs()
        .max(run.min_between("i", t0, t1).abs())
}

#[test]
fn thyristor_conducts_from_firing_to_the_current_zero() {
    let run = simulate_source("HalfWave", HALF_WAVE, &[]);
    let t_off = extinction_time();
    // blocking from the start: `pre(off)` is the parameter start value `offStart = true`
    assert_eq!(run.first("th.off"), 1.0, "blocking at the start");
    // only the off-state leakage Goff*v flows before the firing (below 1 mA here)
    let leak = largest_magnitude(&run, 0.0, T_FIRE - 1e-6);
    assert!(leak < 1e-3, "current before firing: {leak} A");
    // exactly two switchings: on at the firing time, off at the current zero
    let switches = run.jumps("th.off");
    assert_eq!(switches.len(), 2, "switchings of th.off: {switches:?}");
    assert_close("turn-on time", switches[0].0, T_FIRE, 1e-9);
    assert_eq!((switches[0].1, switches[0].2), (1.0, 0.0));
    assert_close("turn-off time", switches[1].0, t_off, 1e-6);
    assert_eq!((switches[1].1, switches[1].2), (0.0, 1.0));
    // the inductance carries the current past the source voltage zero at 10 ms
    assert!(t_off > 0.5 / F + 1e-3, "extinction at {t_off} s");
    // the current follows the closed form while conducting (the leakage current before the
    // firing is the only difference, 1e-4 of the peak)
    for (t, i) in run.points_between("i", T_FIRE + 1e-4, t_off - 1e-4) {
        assert_close(&format!("i at {t}"), i, conduction_current(t), 2e-3);
    }
    // and stays blocked through the rest of the negative half-wave
    let after = largest_magnitude(&run, t_off + 1e-4, 0.03);
    assert!(after < 1e-3, "current after turn-off: {after} A");
}
