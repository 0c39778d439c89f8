//! `moss fmu`: FMUs exported by moss (FMI 2.0 and 3.0), checked from outside with FMPy as
//! another tool would use them: `fmpy.validate_fmu` must find no problem, and
//! `fmpy.simulate_fmu` runs each FMU
//! as Model Exchange (FMPy's CVode drives moss's derivatives, event indicators and event
//! iteration) and as Co-Simulation (moss's own integrators and event loop inside
//! `fmi2DoStep`). The results are compared with `moss simulate` with the tube method
//! (`moss compare`) and with closed forms.
//!
//! The tests need Python 3 with FMPy (`pip install fmpy`, done by `.ci/run`). Without it
//! they print why and pass, except under CI (`CI` set), where a missing FMPy is a failure.

use crate::library_support;

use library_support::{moss_command, scratch_dir, simulate_target, Trajectories};
use std::path::{Path, PathBuf};
use std::process::Command;

/// True when `python3 -c "import fmpy"` works; otherwise prints the reason (and fails
/// under CI, which installs FMPy).
fn fmpy_ready() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import fmpy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "FMPy is not importable under CI; .ci/run installs it with pip"
        );
        eprintln!("skipping: FMPy is not importable (python3 -m pip install fmpy)");
    }
    ok
}

/// Both FMI versions `moss fmu --fmi` writes.
const VERSIONS: [&str; 2] = ["2", "3"];

/// `moss fmu <target> --fmi <version> -o <dir>/<name><version>.fmu <args>`; panics with
/// moss's messages on failure.
fn export(dir: &Path, target: &str, name: &str, version: &str, args: &[&str]) -> PathBuf {
    let fmu = dir.join(format!("{name}{version}.fmu"));
    let out = moss_command()
        .current_dir(dir)
        .arg("fmu")
        .arg(target)
        .arg("-o")
        .arg(&fmu)
        .args(["--fmi", version])
        .args(args)
        .output()
        .expect("runs moss");
    assert!(
        out.status.success(),
        "moss fmu {target} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    fmu
}

/// Write `source` to `<dir>/<name>.mo`.
fn write_model(dir: &Path, name: &str, source: &str) -> String {
    let path = dir.join(format!("{name}.mo"));
    std::fs::write(&path, source).expect("writes the model");
    path.to_string_lossy().into_owned()
}

/// The FMPy driver: validate, simulate, write the result as CSV. Arguments: FMU, interface,
/// output interval (0: FMPy's default), result file, comma-separated outputs, optional
/// input CSV (time and one column per input).
const FMPY_RUN: &str = r#"
import sys
import numpy as np
import fmpy
from fmpy.validation import validate_fmu

fmu, kind, interval, out, names = sys.argv[1:6]
problems = validate_fmu(fmu)
if problems:
    print("validate_fmu found problems:", *problems, sep="\n")
    sys.exit(3)
kw = {}
if float(interval) > 0:
    kw["output_interval"] = float(interval)
if len(sys.argv) > 6:
    kw["input"] = np.genfromtxt(sys.argv[6], delimiter=",", names=True)
result = fmpy.simulate_fmu(fmu, fmi_type=kind, output=names.split(","), **kw)
# every column as a number (FMPy's own CSV writer spells Booleans True/False)
columns = result.dtype.names
with open(out, "w") as f:
    f.write(",".join('"%s"' % c for c in columns) + "\n")
    for row in result:
        f.write(",".join(repr(float(row[c])) for c in columns) + "\n")
"#;

/// Run the FMU with FMPy as `kind` ("ModelExchange" or "CoSimulation") and read back the
/// result.
fn run_fmpy(
    fmu: &Path,
    kind: &str,
    interval: f64,
    outputs: &[&str],
    input: Option<&Path>,
) -> (PathBuf, Trajectories) {
    let csv = fmu.with_extension(format!("{kind}.csv"));
    let mut cmd = Command::new("python3");
    cmd.args(["-c", FMPY_RUN])
        .arg(fmu)
        .arg(kind)
        .arg(interval.to_string())
        .arg(&csv)
        .arg(outputs.join(","));
    if let Some(i) = input {
        cmd.arg(i);
    }
    let out = cmd.output().expect("runs python3");
    assert!(
        out.status.success(),
        "FMPy failed on {} as {kind}:\n{}{}",
        fmu.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let result = moss_results::read_result(&csv)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", csv.display()));
    let label = format!("{} ({kind})", fmu.display());
    (csv, Trajectories { label, result })
}

/// `moss compare result reference [--signals FILE]` passes (the tube method, default
/// tolerance).
fn assert_in_tube(result: &Path, reference: &Path) {
    assert_in_tube_of(result, reference, None);
}

fn assert_in_tube_of(result: &Path, reference: &Path, signals: Option<&Path>) {
    let mut cmd = moss_command();
    cmd.arg("compare").arg(result).arg(reference);
    if let Some(s) = signals {
        cmd.arg("--signals").arg(s);
    }
    let out = cmd.output().expect("runs moss");
    assert!(
        out.status.success(),
        "{} is not inside the tube of {}:\n{}{}",
        result.display(),
        reference.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Simulate with moss and keep only `names` (the reference for `moss compare`).
fn moss_reference(dir: &Path, target: &str, names: &[&str]) -> PathBuf {
    let vars = names
        .join("|")
        .replace('.', "\\.")
        .replace('[', "\\[")
        .replace(']', "\\]");
    simulate_target(target, dir, &["--vars", &vars]);
    dir.join("result.csv")
}

const BALL: &str = r#"
model Ball "Point mass dropped onto a rigid floor; every impact reverses and scales the speed"
  parameter Real e = 0.8 "Coefficient of restitution";
  parameter Real g = 9.81 "Gravity";
  parameter Real h0 = 1 "Drop height";
  Real h(start = h0, fixed = true, unit = "m") "Height above the floor";
  Real v(start = 0, fixed = true, unit = "m/s") "Upward speed";
  output Real apex(start = h0, fixed = true, unit = "m") "Height of the latest apex";
  output Integer bounces(start = 0, fixed = true) "Impacts so far";
equation
  der(h) = v;
  der(v) = -g;
  when h <= 0 then
    reinit(v, -e*pre(v));
    bounces = pre(bounces) + 1;
  end when;
  when v <= 0 then
    apex = h;
  end when;
  annotation(experiment(StopTime = 3.5, Interval = 0.01, Tolerance = 1e-8));
end Ball;
"#;

/// Height of the ball at time `t` from the closed form: free fall from h0, each impact
/// reverses the speed and scales it by e.
fn ball_height(g: f64, e: f64, h0: f64, t: f64) -> f64 {
    let mut t_impact = (2.0 * h0 / g).sqrt();
    if t <= t_impact {
        return h0 - 0.5 * g * t * t;
    }
    let mut v = e * (2.0 * g * h0).sqrt();
    loop {
        let flight = 2.0 * v / g;
        if t <= t_impact + flight {
            let s = t - t_impact;
            return v * s - 0.5 * g * s * s;
        }
        t_impact += flight;
        v *= e;
    }
}

/// Number of impacts of the closed-form ball before `stop`.
fn impacts_before(g: f64, e: f64, h0: f64, stop: f64) -> usize {
    let (mut t, mut v, mut impacts) = ((2.0 * h0 / g).sqrt(), e * (2.0 * g * h0).sqrt(), 0);
    while t <= stop && impacts < 1000 {
        impacts += 1;
        t += 2.0 * v / g;
        v *= e;
    }
    impacts
}

/// The ball as Model Exchange and as Co-Simulation with a coarse 0.1 s communication step:
/// valid for FMPy, both inside the tube of `moss simulate`, and the CS run at every
/// communication point on the closed-form trajectory.
#[test]
fn bouncing_ball_runs_as_model_exchange_and_co_simulation() {
    if !fmpy_ready() {
        return;
    }
    let dir = scratch_dir("fmu-ball");
    let model = write_model(&dir, "Ball", BALL);
    let reference = moss_reference(&dir, &model, &["h", "apex"]);
    for version in VERSIONS {
        let fmu = export(&dir, &model, "Ball", version, &[]);
        let names = ["h", "apex", "bounces"];
        let (me_csv, me) = run_fmpy(&fmu, "ModelExchange", 0.01, &names, None);
        assert_in_tube(&me_csv, &reference);
        assert_eq!(
            me.last("bounces"),
            impacts_before(9.81, 0.8, 1.0, 3.5) as f64,
            "FMI {version}: impacts before t = 3.5"
        );
        let (_, cs) = run_fmpy(&fmu, "CoSimulation", 0.1, &names, None);
        assert_eq!(cs.time().len(), 36, "one row per 0.1 s communication point");
        for (&t, &h) in cs.time().iter().zip(&cs.get("h")) {
            let exact = ball_height(9.81, 0.8, 1.0, t);
            assert!(
                (h - exact).abs() < 1e-5,
                "FMI {version} CS height at t = {t}: {h}, closed form {exact}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// No event is lost inside a Co-Simulation step: with a 0.1 s communication step the
/// impacts and the apexes (both state events) fall inside steps, yet every apex after the
/// k-th impact is at e^(2k) h0, and the impact count matches the closed form.
#[test]
fn co_simulation_steps_lose_no_event() {
    if !fmpy_ready() {
        return;
    }
    let dir = scratch_dir("fmu-apex");
    let model = write_model(&dir, "Ball", BALL);
    let (e, g, h0) = (0.85f64, 9.81f64, 1.0f64);
    for version in VERSIONS {
        // e = 0.85: the impacts accumulate at 5.6 s, well after the stop time
        let fmu = export(
            &dir,
            &model,
            "Ball",
            version,
            &["--kind", "cs", "-p", "e=0.85"],
        );
        let (_, cs) = run_fmpy(&fmu, "CoSimulation", 0.1, &["apex", "bounces"], None);
        assert_eq!(
            cs.last("bounces"),
            impacts_before(g, e, h0, 3.5) as f64,
            "FMI {version}: impacts seen by the FMU"
        );
        let mut apexes: Vec<f64> = cs.get("apex");
        apexes.dedup();
        assert!(apexes.len() >= 5, "too few apexes recorded: {apexes:?}");
        for (k, a) in apexes.iter().enumerate() {
            let expected = h0 * e.powi(2 * k as i32);
            assert!(
                (a - expected).abs() < 1e-6,
                "FMI {version}: apex {k}: {a}, expected {expected} (all: {apexes:?})"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// CoupledClutches from the bundled library (friction elements switching between sliding
/// and stuck, a mixed continuous/discrete system) agrees both ways with `moss simulate` and
/// with the Modelica Association's reference result (its 17 comparison signals, Booleans
/// and Integers of the friction modes included).
#[test]
fn coupled_clutches_match_moss_simulate_and_the_reference() {
    if !fmpy_ready() {
        return;
    }
    let dir = scratch_dir("fmu-clutches");
    let target = "Modelica.Mechanics.Rotational.Examples.CoupledClutches";
    let names = ["J1.w", "J2.w", "J3.w", "J4.w"];
    let reference = moss_reference(&dir, target, &names);
    let data = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/references")
        .join(target);
    let (ma_reference, signals) = (
        data.join("CoupledClutches.csv"),
        data.join("comparisonSignals.txt"),
    );
    let compared: Vec<String> = std::fs::read_to_string(&signals)
        .expect("reads the signal list")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && *l != "time")
        .map(String::from)
        .collect();
    let compared: Vec<&str> = compared.iter().map(String::as_str).collect();
    for version in VERSIONS {
        let fmu = export(&dir, target, "CoupledClutches", version, &[]);
        for kind in ["ModelExchange", "CoSimulation"] {
            let (csv, _) = run_fmpy(&fmu, kind, 0.001, &names, None);
            assert_in_tube(&csv, &reference);
            let (csv, _) = run_fmpy(&fmu, kind, 0.001, &compared, None);
            assert_in_tube_of(&csv, &ma_reference, Some(&signals));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

const FILTER: &str = r#"
model Filter "First-order lag driven from outside"
  input Real u(start = 0) "Driving input";
  output Real y(start = 0, fixed = true) "Filtered input";
  parameter Real T = 0.2 "Time constant";
equation
  T*der(y) = u - y;
  annotation(experiment(StopTime = 2, Interval = 0.01));
end Filter;
"#;

const BLOCK_LAG: &str = r#"
model BlockLag "The same lag with the library's block and connectors at the top level"
  Modelica.Blocks.Interfaces.RealInput u "Driving input";
  Modelica.Blocks.Interfaces.RealOutput y "Filtered input";
  Modelica.Blocks.Continuous.FirstOrder lag(T = 0.2, initType = Modelica.Blocks.Types.Init.InitialState);
equation
  connect(u, lag.u);
  connect(lag.y, y);
  annotation(experiment(StopTime = 2, Interval = 0.01));
end BlockLag;
"#;

/// A top-level input driven by FMPy from a table (a unit step at 0.5 s), declared as
/// `input Real` and as a `RealInput` connector: the output follows y = 1 - exp(-(t - 0.5)/T)
/// after the step, as Model Exchange and as Co-Simulation.
#[test]
fn inputs_are_driven_from_outside() {
    if !fmpy_ready() {
        return;
    }
    let dir = scratch_dir("fmu-input");
    let table = dir.join("input.csv");
    std::fs::write(&table, "time,u\n0,0\n0.5,0\n0.5,1\n2,1\n").expect("writes the table");
    let models = [("Filter", FILTER), ("BlockLag", BLOCK_LAG)];
    let runs = models.iter().flat_map(|m| {
        VERSIONS.iter().flat_map(move |v| {
            [("ModelExchange", 1e-3), ("CoSimulation", 1e-5)].map(|(kind, tol)| (*m, *v, kind, tol))
        })
    });
    for ((name, source), version, kind, tol) in runs {
        let model = write_model(&dir, name, source);
        let fmu = export(&dir, &model, name, version, &[]);
        let (_, run) = run_fmpy(&fmu, kind, 0.05, &["u", "y"], Some(&table));
        for &t in &[0.25, 1.0, 1.5, 2.0] {
            let expected = if t <= 0.5 {
                0.0
            } else {
                1.0 - (-(t - 0.5) / 0.2f64).exp()
            };
            let y = run.at("y", t);
            assert!(
                (y - expected).abs() < tol,
                "{name}, FMI {version} {kind}: y({t}) = {y}, expected {expected}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

const GEARED: &str = r#"
model GearedPair "Two inertias tied by a gear: phi1 = r*phi2 makes the model index 2"
  parameter Real J1 = 0.5 "Motor inertia";
  parameter Real J2 = 8 "Load inertia";
  parameter Real r = 4 "Gear ratio";
  parameter Real T0 = 10 "Torque amplitude";
  parameter Real Omega = 3 "Torque frequency";
  Real phi1(start = 0, fixed = true);
  Real w1(start = 0, fixed = true);
  Real phi2;
  Real w2;
  Real tauGear "Torque of the gear on the motor shaft";
  output Real loadSpeed = w2;
equation
  der(phi1) = w1;
  J1*der(w1) = T0*cos(Omega*time) + tauGear;
  der(phi2) = w2;
  J2*der(w2) = -r*tauGear;
  phi1 = r*phi2;
  annotation(experiment(StopTime = 3, Interval = 0.01, Tolerance = 1e-9));
end GearedPair;
"#;

/// An index-reduced model (moss differentiates the gear constraint and keeps one pair of
/// states): the load speed is w2 = T0 sin(Omega t) / (r J Omega) with J = J1 + J2/r^2, as
/// Model Exchange and as Co-Simulation.
#[test]
fn index_reduced_model_runs_both_ways() {
    if !fmpy_ready() {
        return;
    }
    let dir = scratch_dir("fmu-geared");
    let model = write_model(&dir, "GearedPair", GEARED);
    let j = 0.5 + 8.0 / 16.0;
    let runs = VERSIONS
        .iter()
        .flat_map(|v| ["ModelExchange", "CoSimulation"].map(|kind| (*v, kind)));
    for (version, kind) in runs {
        let fmu = export(&dir, &model, "GearedPair", version, &[]);
        let (_, run) = run_fmpy(&fmu, kind, 0.1, &["loadSpeed"], None);
        for (&t, &w2) in run.time().iter().zip(&run.get("loadSpeed")) {
            let expected = 10.0 * (3.0 * t).sin() / (4.0 * j * 3.0);
            assert!(
                (w2 - expected).abs() < 1e-4,
                "FMI {version} {kind}: w2({t}) = {w2}, expected {expected}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Exit codes as for every subcommand: an unknown FMI version or FMU kind, a parameter that
/// is not one and a runtime library that is missing or not this build's are usage errors, a
/// broken model a model error, and no FMU is written in any case.
#[test]
fn bad_requests_are_refused_with_the_usual_exit_codes() {
    let dir = scratch_dir("fmu-errors");
    let model = write_model(&dir, "Ball", BALL);
    let broken = write_model(
        &dir,
        "Broken",
        "model Broken\n  Real x;\nequation\n  der(x) = y;\nend Broken;\n",
    );
    // a file that is no runtime library of this moss (a library built from other sources
    // looks the same: it lacks this build's fingerprint marker)
    let stale = dir.join("libstale.so");
    std::fs::write(&stale, b"\x7fELF not the runtime").expect("writes the file");
    let stale = stale.to_string_lossy().into_owned();
    let cases: [(&[&str], i32, &str); 6] = [
        (&[&model, "--fmi", "4"], 2, "unknown FMI version"),
        (&[&model, "-p", "h=2"], 2, "cannot set `h`"),
        (&[&model, "--kind", "hybrid"], 2, "unknown FMU kind"),
        (
            &[&model, "--runtime", &stale],
            2,
            "not built from the same sources",
        ),
        (
            &[&model, "--runtime", "/nonexistent/lib.so"],
            2,
            "no such file",
        ),
        (&[&broken], 1, "y"),
    ];
    for (args, code, message) in cases {
        let fmu = dir.join("out.fmu");
        let out = moss_command()
            .arg("fmu")
            .args(args)
            .arg("-o")
            .arg(&fmu)
            .output()
            .expect("runs moss");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(!fmu.exists(), "{args:?} wrote an FMU");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
