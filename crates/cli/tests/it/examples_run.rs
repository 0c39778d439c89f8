//! Every model in `examples/` runs: `moss simulate examples/<Name>.mo` succeeds, reaches the
//! stop time of its `experiment` annotation and writes finite, non-empty trajectories. The
//! examples are found by listing the folder, so a new example is covered without editing this
//! file; most also get one cheap physical check (a kinematic constraint, a conservation law or
//! a closed form) of what `examples/README.md` says they show.
//!
//! The same results exercise `moss plot` (PNG and SVG images, unknown variables) and
//! `moss compare` (a result against itself and against a perturbed copy, CSV against MAT).

use crate::library_support;

use library_support::{
    assert_close, assert_rel, elastogap_contact, moss_command, scratch_dir, workspace_root,
    Trajectories,
};
use std::path::{Path, PathBuf};
use std::process::Output;

/// The `.mo` files of `examples/`, sorted by name.
fn example_files() -> Vec<PathBuf> {
    let dir = workspace_root().join("examples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|entry| entry.expect("readable directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "mo"))
        .collect();
    files.sort();
    files
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Run `moss simulate FILE -o OUT` with extra arguments.
fn simulate_to(file: &Path, out: &Path, args: &[&str]) -> Output {
    moss_command()
        .arg("simulate")
        .arg(file)
        .arg("-o")
        .arg(out)
        .args(args)
        .output()
        .expect("runs the moss binary")
}

fn text_of(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The `StopTime` of a model's `experiment` annotation, read from its text.
fn stop_time(source: &str) -> Option<f64> {
    let rest = &source[source.find("StopTime")? + "StopTime".len()..];
    let value = rest.trim_start().strip_prefix('=')?.trim_start();
    let end = value
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+')))
        .unwrap_or(value.len());
    value[..end].parse().ok()
}

/// Simulate one example and check what every example must satisfy; Err describes what went
/// wrong.
fn run_example(file: &Path) -> Result<Trajectories, String> {
    let name = stem(file);
    let dir = scratch_dir(&name);
    let csv = dir.join("result.csv");
    let out = simulate_to(file, &csv, &[]);
    if !out.status.success() {
        return Err(format!("exit status {}:\n{}", out.status, text_of(&out)));
    }
    let result = moss_results::read_result(&csv).map_err(|e| format!("unreadable result: {e}"))?;
    let _ = std::fs::remove_dir_all(&dir);
    if result.len() < 2 {
        return Err(format!("only {} result rows", result.len()));
    }
    for (t, row) in result.rows() {
        if let Some(col) = row.iter().position(|v| !v.is_finite()) {
            return Err(format!("non-finite value in column {col} at t = {t}"));
        }
    }
    let source = std::fs::read_to_string(file).map_err(|e| e.to_string())?;
    let stop = stop_time(&source).ok_or("no StopTime in the experiment annotation")?;
    let last = *result.time().last().expect("rows checked above");
    if (last - stop).abs() > 1e-9 * stop.max(1.0) {
        return Err(format!(
            "the result ends at t = {last}, not at StopTime = {stop}"
        ));
    }
    Ok(Trajectories {
        label: name,
        result,
    })
}

/// One physical check per example (by file name); examples without an entry get only the
/// generic checks of `run_example`.
fn physics_check(name: &str) -> Option<fn(&Trajectories)> {
    Some(match name {
        "BouncingBallElastoGap" => check_bouncing_ball_elastogap,
        "BouncingBallStop" => check_bouncing_ball_stop,
        "BrakeStop" => check_brake_stop,
        "ContactComparison" => check_contact_comparison,
        "ContactComparisonStiff" => check_contact_comparison_stiff,
        "CoupledClutchesSequence" => check_coupled_clutches_sequence,
        "DriveWithGearAndBacklash" => check_drive_with_gear_and_backlash,
        "InitializeFlangeDemo" => check_initialize_flange_demo,
        "LossyGearLockAndRoll" => check_lossy_gear_lock_and_roll,
        "OneWayClutchDemo" => check_one_way_clutch_demo,
        "PlanetaryGear" => check_planetary_gear,
        "RollingWheelDemo" => check_rolling_wheel_demo,
        _ => return None,
    })
}

/// The examples `physics_check` knows, so that renaming one cannot silently drop its check.
const CHECKED_EXAMPLES: [&str; 12] = [
    "BouncingBallElastoGap",
    "BouncingBallStop",
    "BrakeStop",
    "ContactComparison",
    "ContactComparisonStiff",
    "CoupledClutchesSequence",
    "DriveWithGearAndBacklash",
    "InitializeFlangeDemo",
    "LossyGearLockAndRoll",
    "OneWayClutchDemo",
    "PlanetaryGear",
    "RollingWheelDemo",
];

#[test]
fn every_example_simulates_to_finite_results_and_passes_its_physics_check() {
    let files = example_files();
    let names: Vec<String> = files.iter().map(|f| stem(f)).collect();
    for checked in CHECKED_EXAMPLES {
        assert!(
            names.iter().any(|n| n == checked),
            "examples/{checked}.mo is gone; update CHECKED_EXAMPLES and physics_check"
        );
    }
    let mut failures = Vec::new();
    for (file, name) in files.iter().zip(&names) {
        match run_example(file) {
            Ok(run) => {
                if let Some(check) = physics_check(name) {
                    check(&run);
                }
            }
            Err(why) => failures.push(format!("examples/{name}.mo: {why}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn stop_time_is_read_from_the_experiment_annotation() {
    assert_eq!(
        stop_time("annotation(experiment(StopTime=2.5, Interval=0.001));"),
        Some(2.5)
    );
    assert_eq!(stop_time("experiment(StopTime = 1e3)"), Some(1000.0));
    assert_eq!(stop_time("experiment(Interval=0.1)"), None);
}

// ---------------------------------------------------------------------------------------------
// Physical checks, one per example
// ---------------------------------------------------------------------------------------------

/// Standard gravity, as `Modelica.Constants.g_n`.
const G_N: f64 = 9.80665;

/// Heights above `level` of the apexes of `ball.s` (where `ball.v` turns from up to down).
fn apexes_above(run: &Trajectories, level: f64) -> Vec<f64> {
    let v = run.get("ball.v");
    let s = run.get("ball.s");
    (1..v.len())
        .filter(|&i| v[i - 1] > 0.0 && v[i] <= 0.0)
        .map(|i| s[i - 1].max(s[i]) - level)
        .collect()
}

/// Each rebound of the ElastoGap ball (m = 0.5 kg, c = 5e4 N/m, d = 10 N.s/m, contact at
/// 0.05 m) reaches e(v)^2 times the previous height above the contact, e(v) being the
/// restitution of the contact law at the impact speed v = sqrt(2 g h); to 0.2 % (the apex is
/// read from the 1 ms output grid).
fn check_bouncing_ball_elastogap(run: &Trajectories) {
    let apexes = apexes_above(run, 0.05);
    assert!(apexes.len() >= 5, "apexes {apexes:?}");
    let mut height = 4.0 - 0.05;
    for (k, &apex) in apexes.iter().take(5).enumerate() {
        let e = elastogap_contact(0.5, 5e4, 10.0, G_N, (2.0 * G_N * height).sqrt()).restitution;
        assert_rel(
            &format!("BouncingBallElastoGap apex {}", k + 1),
            apex,
            e * e * height,
            2e-3,
        );
        height = apex;
    }
}

/// The rigid-stop ball never passes the stop at 0.05 m and each apex is e^2 = 0.9086^2 times
/// the previous height above it.
fn check_bouncing_ball_stop(run: &Trajectories) {
    assert!(
        run.min("ball.s") >= 0.05 - 1e-9,
        "the ball passed the stop: min ball.s = {}",
        run.min("ball.s")
    );
    let e: f64 = 0.9086;
    let apexes = apexes_above(run, 0.05);
    assert!(apexes.len() >= 5, "apexes {apexes:?}");
    let mut height = 4.0 - 0.05;
    for (k, &apex) in apexes.iter().enumerate() {
        height *= e * e;
        assert_rel(
            &format!("BouncingBallStop apex {}", k + 1),
            apex,
            height,
            1e-4,
        );
    }
}

/// The shaft (J = 1) accelerates with the 5 N.m drive from 20 rad/s; from 0.5 s the brake's
/// 20 N.m sliding torque decelerates it at 15 rad/s2, so it stops at 0.5 + 22.5/15 = 2.0 s, and
/// then the brake (static limit 24 N.m) holds it against the drive.
fn check_brake_stop(run: &Trajectories) {
    for (t, w) in run.points_between("shaft.w", 0.0, 3.0) {
        let expected = if t <= 0.5 {
            20.0 + 5.0 * t
        } else {
            (22.5 - 15.0 * (t - 0.5)).max(0.0)
        };
        assert_close(&format!("BrakeStop shaft.w at {t}"), w, expected, 1e-6);
    }
}

/// Before either slider reaches a wall (7 m), both follow the free motion under the force
/// 10*sin(2 pi 0.1 t) from rest: s = (10/(m W))*(t - sin(W t)/W) with W = 0.2 pi. The hard stop
/// holds `massStop` within the walls; the ElastoGap mass enters a wall by at most
/// `max_penetration` and otherwise follows the stop mass.
fn check_contact_pair(run: &Trajectories, max_penetration: f64) {
    let w = 0.2 * std::f64::consts::PI;
    let free = |t: f64| 10.0 / w * (t - (w * t).sin() / w);
    for name in ["massGap.s", "massStop.s"] {
        for (t, s) in run.points_between(name, 0.0, 1.5) {
            assert_close(&format!("{} {name} at {t}", run.label), s, free(t), 1e-5);
        }
    }
    assert!(
        run.max("massStop.s") <= 7.0 + 1e-9 && run.min("massStop.s") >= -7.0 - 1e-9,
        "{}: massStop.s left the walls",
        run.label
    );
    let penetration = run.max("massGap.s").max(-run.min("massGap.s")) - 7.0;
    assert!(
        penetration > 0.0 && penetration <= max_penetration,
        "{}: the ElastoGap mass enters the wall by {penetration} m",
        run.label
    );
    let gap = run.max_abs_diff("massGap.s", "massStop.s");
    assert!(
        gap <= max_penetration,
        "{}: the two sliders are {gap} m apart",
        run.label
    );
}

fn check_contact_comparison(run: &Trajectories) {
    check_contact_pair(run, 0.4);
}

/// Ten times the stiffness: the penetration shrinks to about a third (it scales roughly like
/// 1/sqrt(c) for the impact).
fn check_contact_comparison_stiff(run: &Trajectories) {
    check_contact_pair(run, 0.12);
}

/// Clutches only exchange torque inside the chain: the angular momentum
/// 2*w_flywheel + 0.5*(w1 + w2 + w3) = 200 stays, and after the last clutch sticks everything
/// turns at 200/3.5 rad/s.
fn check_coupled_clutches_sequence(run: &Trajectories) {
    let (wf, w1, w2, w3) = (
        run.get("flywheel.w"),
        run.get("J1.w"),
        run.get("J2.w"),
        run.get("J3.w"),
    );
    for i in 0..wf.len() {
        let momentum = 2.0 * wf[i] + 0.5 * (w1[i] + w2[i] + w3[i]);
        assert_close(
            "CoupledClutchesSequence angular momentum",
            momentum,
            200.0,
            1e-6,
        );
    }
    for name in ["flywheel.w", "J1.w", "J2.w", "J3.w"] {
        assert_rel(
            &format!("CoupledClutchesSequence final {name}"),
            run.last(name),
            200.0 / 3.5,
            1e-6,
        );
    }
}

/// The gear turns the shaft input 5 times slower than the motor; the backlash shaft carries no
/// torque while its flanks are apart (|phi_rel| < b/2 = 0.025 rad).
fn check_drive_with_gear_and_backlash(run: &Trajectories) {
    let motor = run.get("motor.phi");
    let gear_out = run.get("gear.flange_b.phi");
    for (m, g) in motor.iter().zip(&gear_out) {
        assert_close("DriveWithGearAndBacklash gear", *m, 5.0 * g, 1e-9);
    }
    let mut apart = 0;
    for (phi_rel, tau) in run.get("shaft.phi_rel").iter().zip(run.get("shaft.tau")) {
        if phi_rel.abs() < 0.025 - 1e-9 {
            apart += 1;
            assert!(
                tau.abs() < 1e-9,
                "DriveWithGearAndBacklash: shaft torque {tau} with the flanks apart (phi_rel = {phi_rel})"
            );
        }
    }
    assert!(apart > 0, "the backlash was never open");
}

/// From the angle 0.5 rad and speed 2 rad/s set by `InitializeFlange`, the inertia (0.1 kg.m2)
/// on the spring-damper (10 N.m/rad, 0.2 N.m.s/rad) is a damped oscillator:
/// phi = exp(-z wn t)*(phi0 cos(wd t) + (w0 + z wn phi0)/wd sin(wd t)).
fn check_initialize_flange_demo(run: &Trajectories) {
    let (j, c, d, phi0, w0) = (0.1, 10.0, 0.2, 0.5, 2.0);
    let wn = f64::sqrt(c / j);
    let z = d / (2.0 * f64::sqrt(c * j));
    let wd = wn * f64::sqrt(1.0 - z * z);
    for (t, phi) in run.points_between("inertia.phi", 0.0, 5.0) {
        let expected = f64::exp(-z * wn * t)
            * (phi0 * f64::cos(wd * t) + (w0 + z * wn * phi0) / wd * f64::sin(wd * t));
        assert_close(
            &format!("InitializeFlangeDemo inertia.phi at {t}"),
            phi,
            expected,
            1e-5,
        );
    }
}

/// The gear keeps input = 3 * output angle, never produces energy (lossPower >= 0) and goes
/// through rolling forward, locked, rolling backward, locked (README).
fn check_lossy_gear_lock_and_roll(run: &Trajectories) {
    for (a, b) in run
        .get("inputShaft.phi")
        .iter()
        .zip(run.get("outputShaft.phi"))
    {
        assert_close("LossyGearLockAndRoll gear", *a, 3.0 * b, 1e-9);
    }
    assert!(
        run.min("gear.lossPower") >= -1e-9,
        "LossyGearLockAndRoll: negative loss power {}",
        run.min("gear.lossPower")
    );
    for (t, mode) in [(1.0, 1.0), (2.0, 0.0), (3.0, -1.0), (4.8, 0.0)] {
        assert_eq!(run.at("gear.mode", t), mode, "gear.mode at {t}");
    }
}

/// While the clutch pack is open (before 3 s) the freewheel only pushes the output forward: the
/// output never turns slower than the input.
fn check_one_way_clutch_demo(run: &Trajectories) {
    let input = run.get("inputShaft.w");
    for ((t, out), inp) in run
        .points_between("outputShaft.w", 0.0, 6.0)
        .into_iter()
        .zip(input)
    {
        if t < 3.0 {
            assert!(
                out >= inp - 1e-9,
                "OneWayClutchDemo: output {out} slower than input {inp} at t = {t}"
            );
        }
    }
}

/// With the ring held, the carrier turns at sun/(1 + 2); the sun torque (10 N.m from 0.1 s)
/// appears 3 times at the carrier, whose damper (2 N.m.s/rad) limits it to 15 rad/s. Reduced to
/// the carrier, the inertia is 1 + 0.01*3^2 = 1.09, so w = 15*(1 - exp(-(t - 0.1)*2/1.09)).
fn check_planetary_gear(run: &Trajectories) {
    let sun = run.get("sunSpeed.w");
    for ((t, carrier), sun) in run
        .points_between("carrierSpeed.w", 0.0, 5.0)
        .into_iter()
        .zip(sun)
    {
        assert_close(
            &format!("PlanetaryGear speeds at {t}"),
            carrier,
            sun / 3.0,
            1e-9,
        );
        let expected = if t <= 0.1 {
            0.0
        } else {
            15.0 * (1.0 - f64::exp(-(t - 0.1) * 2.0 / 1.09))
        };
        assert_close(
            &format!("PlanetaryGear carrier speed at {t}"),
            carrier,
            expected,
            1e-4,
        );
    }
}

/// The wheel rolls without slip: vehicle speed = radius * wheel speed.
fn check_rolling_wheel_demo(run: &Trajectories) {
    for (v, w) in run.get("vehicle.v").iter().zip(run.get("wheel.w")) {
        assert_close("RollingWheelDemo rolling", *v, 0.3 * w, 1e-9);
    }
    assert!(run.last("vehicle.v") > 20.0, "the vehicle hardly moved");
}

// ---------------------------------------------------------------------------------------------
// moss plot and moss compare on an example's result
// ---------------------------------------------------------------------------------------------

/// Simulate `examples/BouncingBallStop.mo` into `dir/<file_name>` and return the path.
fn bouncing_ball_result(dir: &Path, file_name: &str) -> PathBuf {
    let out_file = dir.join(file_name);
    let file = workspace_root().join("examples/BouncingBallStop.mo");
    let out = simulate_to(&file, &out_file, &[]);
    assert!(out.status.success(), "{}", text_of(&out));
    out_file
}

fn moss(args: &[&std::ffi::OsStr]) -> Output {
    moss_command()
        .args(args)
        .output()
        .expect("runs the moss binary")
}

#[test]
fn plot_writes_png_and_svg_images() {
    let dir = scratch_dir("plot");
    let result = bouncing_ball_result(&dir, "ball.csv");
    let png = dir.join("ball.png");
    let out = moss(&[
        "plot".as_ref(),
        result.as_os_str(),
        "ball.s".as_ref(),
        "ball.v".as_ref(),
        "-o".as_ref(),
        png.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text_of(&out));
    let bytes = std::fs::read(&png).expect("the PNG was written");
    assert!(bytes.len() > 1000, "PNG of {} bytes", bytes.len());
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG file");

    let svg = dir.join("ball.svg");
    let out = moss(&[
        "plot".as_ref(),
        result.as_os_str(),
        "--vars".as_ref(),
        "ball.s".as_ref(),
        "-o".as_ref(),
        svg.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text_of(&out));
    let text = std::fs::read_to_string(&svg).expect("the SVG was written");
    assert!(text.contains("<svg"), "not an SVG file");
    assert!(
        text.contains("ball.s"),
        "the SVG does not name the plotted variable"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn plot_of_an_unknown_variable_fails_with_a_message() {
    let dir = scratch_dir("plot-unknown");
    let result = bouncing_ball_result(&dir, "ball.csv");
    let png = dir.join("none.png");
    let out = moss(&[
        "plot".as_ref(),
        result.as_os_str(),
        "ball.height".as_ref(),
        "-o".as_ref(),
        png.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text_of(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no variable `ball.height`"),
        "the message does not name the variable: {stderr}"
    );
    assert!(!png.exists(), "an image was written for a failed plot");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Multiply the values of `column` after `from_time` by `factor` in a CSV result (moss's
/// layout: a header of quoted names, then one row of numbers per output point).
fn perturb_csv(source: &Path, target: &Path, column: &str, from_time: f64, factor: f64) {
    let text = std::fs::read_to_string(source).expect("readable CSV");
    let mut lines = text.lines();
    let header = lines.next().expect("a header line");
    let col = header
        .split(',')
        .position(|h| h.trim_matches('"') == column)
        .unwrap_or_else(|| panic!("no column {column} in {header}"));
    let mut out = vec![header.to_string()];
    for line in lines {
        let mut cells: Vec<String> = line.split(',').map(str::to_string).collect();
        let t: f64 = cells[0].parse().expect("a time value");
        if t > from_time {
            let v: f64 = cells[col].parse().expect("a number");
            cells[col] = format!("{:e}", v * factor);
        }
        out.push(cells.join(","));
    }
    std::fs::write(target, out.join("\n") + "\n").expect("writable CSV");
}

#[test]
fn compare_passes_a_result_against_itself_and_names_a_perturbed_signal() {
    let dir = scratch_dir("compare");
    let result = bouncing_ball_result(&dir, "ball.csv");
    let out = moss(&["compare".as_ref(), result.as_os_str(), result.as_os_str()]);
    assert_eq!(out.status.code(), Some(0), "{}", text_of(&out));
    let text = text_of(&out);
    assert!(text.contains("PASSED"), "{text}");
    assert!(!text.contains("FAIL"), "{text}");

    // The same run written as MAT compares equal to the CSV.
    let mat = bouncing_ball_result(&dir, "ball.mat");
    let out = moss(&["compare".as_ref(), mat.as_os_str(), result.as_os_str()]);
    assert_eq!(out.status.code(), Some(0), "{}", text_of(&out));

    // 5 % more height after 5 s: only ball.s leaves the tube.
    let perturbed = dir.join("perturbed.csv");
    perturb_csv(&result, &perturbed, "ball.s", 5.0, 1.05);
    let out = moss(&[
        "compare".as_ref(),
        perturbed.as_os_str(),
        result.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text_of(&out));
    let text = text_of(&out);
    let failing: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("FAIL") && !l.starts_with("FAILED"))
        .collect();
    assert_eq!(failing.len(), 1, "{text}");
    assert!(
        failing[0].split_whitespace().next() == Some("ball.s"),
        "the failing line does not name ball.s: {text}"
    );
    // The first point outside the tube is just after the perturbation starts.
    let first_fail: f64 = failing[0]
        .split_whitespace()
        .last()
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("no first failure time in {:?}", failing[0]));
    assert!(
        (5.0..5.01).contains(&first_fail),
        "first failure at {first_fail}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
