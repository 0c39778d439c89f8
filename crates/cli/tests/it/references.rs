//! The example models of the bundled library against the Modelica Association's reference
//! results for the same MSL examples.
//!
//! `tests/data/references/<Model>/` holds the reference trajectories (`<Short>.csv`: `time` and
//! the comparison signals, copied unchanged from the MAP-LIB reference results by
//! `examples/tools/trim_references.py`) and `comparisonSignals.txt`. Each test simulates
//! `<Model>` with `moss simulate` on the bundled library alone (the model's own experiment
//! settings) and compares every comparison signal by the tube method with the MSL regression
//! tolerance 0.002 (`moss_results::compare`). A failure lists every signal that left the tube,
//! with the number of points outside, the largest distance and the time of the first failure.

use crate::library_support;

use library_support::{moss_command, scratch_dir, simulate_target};
use moss_results::compare::{compare_results, read_signal_list, CompareOptions, Status};
use std::path::{Path, PathBuf};

/// Folder of the reference data.
fn references_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/references")
}

/// Reference CSV and signal list of `model`.
fn reference_files(model: &str) -> (PathBuf, PathBuf) {
    let short = model.rsplit('.').next().unwrap_or(model);
    let dir = references_dir().join(model);
    (
        dir.join(format!("{short}.csv")),
        dir.join("comparisonSignals.txt"),
    )
}

/// One line per signal that did not pass.
fn describe_failure(report: &moss_results::compare::SignalReport) -> String {
    match &report.status {
        Status::Fail => format!(
            "  {}: {} of {} points outside the tube (dt = {:.3e} s, dy = {:.3e}), largest distance {:.3e}, first at t = {}",
            report.name,
            report.points_outside,
            report.points_checked,
            report.dt,
            report.dy,
            report.max_distance,
            report.first_failure.map_or("?".to_string(), |t| t.to_string())
        ),
        other => format!("  {}: {other:?}", report.name),
    }
}

/// Simulate `model` on the bundled library and compare it with its reference.
fn check_reference(model: &str) {
    let (reference_csv, signals_file) = reference_files(model);
    let reference = moss_results::read_result(&reference_csv)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", reference_csv.display()));
    let signals = read_signal_list(&signals_file)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", signals_file.display()));
    assert!(!signals.is_empty(), "{model}: no comparison signals");
    let dir = scratch_dir(model.rsplit('.').next().unwrap_or(model));
    let run = simulate_target(model, &dir, &[]);
    let _ = std::fs::remove_dir_all(&dir);
    let report = compare_results(
        &run.result,
        &reference,
        &signals,
        &CompareOptions::default(),
    );
    let failures: Vec<String> = report
        .signals
        .iter()
        .filter(|s| !s.passed())
        .map(describe_failure)
        .collect();
    assert!(
        failures.is_empty(),
        "{model}: {} of {} comparison signals failed (tube tolerance 0.002):\n{}",
        failures.len(),
        signals.len(),
        failures.join("\n")
    );
    assert_eq!(report.signals.len(), signals.len());
}

/// The models with reference data, one test each.
macro_rules! reference_tests {
    ($($test:ident => $model:literal,)*) => {
        $(
            #[test]
            fn $test() {
                check_reference($model);
            }
        )*

        /// Every folder of reference data has its test above (and every test its data).
        #[test]
        fn every_reference_folder_is_tested() {
            let mut tested = vec![$($model),*];
            tested.sort_unstable();
            let mut folders: Vec<String> = std::fs::read_dir(references_dir())
                .expect("reference data folder exists")
                .filter_map(|e| e.ok())
                .filter(|e| e.path().is_dir())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            folders.sort_unstable();
            assert_eq!(folders, tested);
        }
    };
}

reference_tests! {
    blocks_pid_controller => "Modelica.Blocks.Examples.PID_Controller",
    rotational_backlash => "Modelica.Mechanics.Rotational.Examples.Backlash",
    rotational_coupled_clutches => "Modelica.Mechanics.Rotational.Examples.CoupledClutches",
    rotational_elastic_bearing => "Modelica.Mechanics.Rotational.Examples.ElasticBearing",
    rotational_first => "Modelica.Mechanics.Rotational.Examples.First",
    rotational_friction => "Modelica.Mechanics.Rotational.Examples.Friction",
    rotational_lossy_gear_demo1 => "Modelica.Mechanics.Rotational.Examples.LossyGearDemo1",
    rotational_one_way_clutch => "Modelica.Mechanics.Rotational.Examples.OneWayClutch",
    rotational_rolling_wheel => "Modelica.Mechanics.Rotational.Examples.RollingWheel",
    translational_accelerate => "Modelica.Mechanics.Translational.Examples.Accelerate",
    translational_brake => "Modelica.Mechanics.Translational.Examples.Brake",
    translational_damper => "Modelica.Mechanics.Translational.Examples.Damper",
    translational_elasto_gap => "Modelica.Mechanics.Translational.Examples.ElastoGap",
    translational_friction => "Modelica.Mechanics.Translational.Examples.Friction",
    translational_oscillator => "Modelica.Mechanics.Translational.Examples.Oscillator",
    translational_pre_load => "Modelica.Mechanics.Translational.Examples.PreLoad",
    translational_sign_convention => "Modelica.Mechanics.Translational.Examples.SignConvention",
}

/// The same comparison through the command line: `moss compare` exits with 0 and reports every
/// signal passed for a matching result, and exits non-zero naming the signal for a result that
/// leaves the tube (here: the First example simulated with a stiffer shaft).
#[test]
fn moss_compare_command_accepts_and_rejects() {
    let model = "Modelica.Mechanics.Rotational.Examples.First";
    let (reference_csv, signals_file) = reference_files(model);
    let dir = scratch_dir("compare-cli");
    let good = dir.join("good.csv");
    let bad = dir.join("bad.csv");
    for (out, extra) in [(&good, None), (&bad, Some("spring.c=2e4"))] {
        let mut command = moss_command();
        command.arg("simulate").arg(model).arg("-o").arg(out);
        if let Some(param) = extra {
            command.arg("-p").arg(param);
        }
        let status = command.output().expect("runs moss simulate");
        assert!(
            status.status.success(),
            "{}",
            String::from_utf8_lossy(&status.stderr)
        );
    }
    let compare = |result: &Path| {
        let out = moss_command()
            .arg("compare")
            .arg(result)
            .arg(&reference_csv)
            .arg("--signals")
            .arg(&signals_file)
            .output()
            .expect("runs moss compare");
        (
            out.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    };
    let (ok, text) = compare(&good);
    assert!(ok, "{text}");
    assert!(text.contains("4 of 4 signals passed"), "{text}");
    let (ok, text) = compare(&bad);
    assert!(!ok, "a result with a different spring passed:\n{text}");
    let failed_line = text
        .lines()
        .find(|l| l.starts_with("inertia3.w"))
        .unwrap_or_else(|| panic!("no line for inertia3.w:\n{text}"));
    assert!(failed_line.contains("FAIL"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
