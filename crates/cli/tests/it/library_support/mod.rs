//! Shared helpers of the tests that run models on the bundled library through the `moss` binary:
//! simulate a model (source text, file or class name), read the CSV result back and look at
//! trajectories the way the physics checks need them (value at a time, extrema, integrals).
//!
//! Every run writes into its own folder under Cargo's per-target temporary directory, so tests
//! may run in parallel.

#![allow(dead_code)] // each test file uses a different part of the helpers

use moss_results::SimResult;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Fresh scratch folder for one simulation run (unique per process and call).
pub fn scratch_dir(label: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "moss-library-{}-{}-{label}",
        std::process::id(),
        n
    ));
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    dir
}

/// The `moss` binary with the bundled library as the only library: MODELICAPATH is removed from
/// the environment, so a Modelica Standard Library installed on the machine is not used.
pub fn moss_command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_moss"));
    command.env_remove("MODELICAPATH");
    command
}

/// Run `moss simulate <target> -o <dir>/result.csv <args>` and read the result.
/// Panics with moss's messages if the simulation fails.
pub fn simulate_target(target: &str, dir: &Path, args: &[&str]) -> Trajectories {
    run_simulate(target, dir, args).0
}

/// `moss simulate` as in [`simulate_target`], also returning what moss printed on stdout (the
/// run statistics when `--stats` is among `args`).
fn run_simulate(target: &str, dir: &Path, args: &[&str]) -> (Trajectories, String) {
    let csv = dir.join("result.csv");
    // run inside the scratch folder, so files a model writes (and relative targets) stay there
    let out = moss_command()
        .current_dir(dir)
        .arg("simulate")
        .arg(target)
        .arg("-o")
        .arg(&csv)
        .args(args)
        .output()
        .expect("runs the moss binary");
    assert!(
        out.status.success(),
        "moss simulate {target} {args:?} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let result = moss_results::read_result(&csv)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", csv.display()));
    let run = Trajectories {
        label: target.to_string(),
        result,
    };
    (run, String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Simulate a model given as Modelica source text (the file's last class is simulated).
pub fn simulate_source(name: &str, source: &str, args: &[&str]) -> Trajectories {
    simulate_source_reporting(name, source, args).0
}

/// Simulate source text with `--stats` and return the run statistics moss printed with the
/// trajectories.
pub fn simulate_source_with_stats(
    name: &str,
    source: &str,
    args: &[&str],
) -> (Trajectories, RunStats) {
    let mut all: Vec<&str> = args.to_vec();
    all.push("--stats");
    let (run, stdout) = simulate_source_reporting(name, source, &all);
    let stats = RunStats::parse(&stdout)
        .unwrap_or_else(|| panic!("{name}: no run statistics in moss's output:\n{stdout}"));
    (run, stats)
}

fn simulate_source_reporting(name: &str, source: &str, args: &[&str]) -> (Trajectories, String) {
    let dir = scratch_dir(name);
    let file = dir.join(format!("{name}.mo"));
    std::fs::write(&file, source)
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", file.display()));
    let (mut run, stdout) = run_simulate(&file.to_string_lossy(), &dir, args);
    run.label = name.to_string();
    // The model text is in the test; the result is in memory.
    let _ = std::fs::remove_dir_all(&dir);
    (run, stdout)
}

/// The figures of `moss simulate --stats` that tests look at.
#[derive(Debug, Clone, PartialEq)]
pub struct RunStats {
    /// The solver line, e.g. `bdf` or `auto: dopri5, stiff from t = 0.03: bdf`.
    pub solver: String,
    /// Accepted integration steps.
    pub steps: usize,
    /// Rejected integration steps.
    pub rejected: usize,
    /// Right-hand side evaluations.
    pub rhs_evaluations: usize,
    /// State events located.
    pub state_events: usize,
    /// Runs of the symbolic tangent program (Jacobian columns computed exactly).
    pub tangent_runs: usize,
    /// Sparse LU factorizations done along the pivots of the previous one.
    pub lu_refactorizations: usize,
    /// Nonlinear (and torn linear) solves and their iterations.
    pub nonlinear_solves: usize,
    pub nonlinear_iterations: usize,
    /// Linear solves on factors kept from an earlier solve.
    pub kept_matrix_solves: usize,
}

impl RunStats {
    /// Read the statistics block printed by `moss simulate --stats`.
    pub fn parse(text: &str) -> Option<RunStats> {
        let field = |key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(key))
                .map(str::trim)
        };
        let first_number = |s: &str| -> Option<usize> {
            s.split(|c: char| !c.is_ascii_digit())
                .find(|w| !w.is_empty())?
                .parse()
                .ok()
        };
        let steps = field("steps:")?;
        let rejected = steps.split_once('(').and_then(|(_, r)| first_number(r))?;
        Some(RunStats {
            solver: field("solver:")?.to_string(),
            steps: first_number(steps)?,
            rejected,
            rhs_evaluations: first_number(field("rhs evaluations:")?)?,
            state_events: first_number(field("events:")?)?,
            tangent_runs: field("jacobian evaluations:")
                .and_then(|j| j.split_once('('))
                .and_then(|(_, r)| first_number(r))
                .unwrap_or(0),
            lu_refactorizations: field("lu factorizations:")
                .and_then(|j| j.split_once('('))
                .and_then(|(_, r)| first_number(r))
                .unwrap_or(0),
            nonlinear_solves: field("nonlinear solves:")
                .and_then(first_number)
                .unwrap_or(0),
            nonlinear_iterations: field("nonlinear solves:")
                .and_then(|j| j.split_once('('))
                .and_then(|(_, r)| first_number(r))
                .unwrap_or(0),
            kept_matrix_solves: field("linear solves on kept factors:")
                .and_then(first_number)
                .unwrap_or(0),
        })
    }
}

/// Simulate a `.mo` file of the repository (path relative to the workspace root).
pub fn simulate_repo_file(relative: &str, args: &[&str]) -> Trajectories {
    let file = workspace_root().join(relative);
    let label = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let dir = scratch_dir(&label);
    let mut run = simulate_target(&file.to_string_lossy(), &dir, args);
    run.label = label;
    let _ = std::fs::remove_dir_all(&dir);
    run
}

/// The workspace root (two levels above this crate's manifest).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A simulation result with accessors for physics checks.
pub struct Trajectories {
    /// Model name, used in failure messages.
    pub label: String,
    pub result: SimResult,
}

impl Trajectories {
    /// The output times (events appear twice: left and right limit).
    pub fn time(&self) -> &[f64] {
        self.result.time()
    }

    /// Trajectory of `name`; panics with the names that are there if it is missing.
    pub fn get(&self, name: &str) -> Vec<f64> {
        self.result.series(name).unwrap_or_else(|| {
            let prefix = name.split('.').next().unwrap_or(name);
            let similar: Vec<&str> = self
                .result
                .names()
                .filter(|n| n.starts_with(prefix))
                .collect();
            panic!(
                "{}: no variable {name} in the result; variables starting with {prefix}: {similar:?}",
                self.label
            )
        })
    }

    /// Value of `name` at time `t`, linearly interpolated between output points. At an event
    /// time (two rows with the same time) the value after the event is returned.
    pub fn at(&self, name: &str, t: f64) -> f64 {
        interpolate(self.time(), &self.get(name), t)
    }

    /// Value of `name` just before time `t` (the left limit at an event time).
    pub fn before(&self, name: &str, t: f64) -> f64 {
        let time = self.time();
        let y = self.get(name);
        let i = time.partition_point(|&s| s < t);
        if i < time.len() && time[i] == t {
            return y[i];
        }
        interpolate(time, &y, t)
    }

    /// Final value of `name`.
    pub fn last(&self, name: &str) -> f64 {
        *self.get(name).last().expect("the result has rows")
    }

    /// Initial value of `name`.
    pub fn first(&self, name: &str) -> f64 {
        self.get(name)[0]
    }

    /// Largest value of `name` over the output points with `t0 <= time <= t1`.
    pub fn max_between(&self, name: &str, t0: f64, t1: f64) -> f64 {
        self.window(name, t0, t1).fold(f64::NEG_INFINITY, f64::max)
    }

    /// Smallest value of `name` over the output points with `t0 <= time <= t1`.
    pub fn min_between(&self, name: &str, t0: f64, t1: f64) -> f64 {
        self.window(name, t0, t1).fold(f64::INFINITY, f64::min)
    }

    /// Largest value over the whole run.
    pub fn max(&self, name: &str) -> f64 {
        self.get(name).into_iter().fold(f64::NEG_INFINITY, f64::max)
    }

    /// Smallest value over the whole run.
    pub fn min(&self, name: &str) -> f64 {
        self.get(name).into_iter().fold(f64::INFINITY, f64::min)
    }

    /// Largest |a - b| over all output points.
    pub fn max_abs_diff(&self, a: &str, b: &str) -> f64 {
        self.get(a)
            .iter()
            .zip(self.get(b))
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max)
    }

    /// Values of `name` at the output points with `t0 <= time <= t1`, with their times.
    pub fn points_between(&self, name: &str, t0: f64, t1: f64) -> Vec<(f64, f64)> {
        self.time()
            .iter()
            .copied()
            .zip(self.get(name))
            .filter(|&(t, _)| t >= t0 && t <= t1)
            .collect()
    }

    fn window(&self, name: &str, t0: f64, t1: f64) -> impl Iterator<Item = f64> {
        self.points_between(name, t0, t1)
            .into_iter()
            .map(|(_, y)| y)
    }

    /// The event instants at which `name` jumps: `(time, left limit, right limit)` for every pair
    /// of rows with the same time (the result records both sides of each event) whose values
    /// differ.
    pub fn jumps(&self, name: &str) -> Vec<(f64, f64, f64)> {
        let time = self.time();
        let y = self.get(name);
        (1..time.len())
            .filter(|&i| time[i] == time[i - 1] && y[i] != y[i - 1])
            .map(|i| (time[i], y[i - 1], y[i]))
            .collect()
    }

    /// Times at which `name` crosses `level` going upwards (linear interpolation between points).
    pub fn upward_crossings(&self, name: &str, level: f64) -> Vec<f64> {
        crossings(self.time(), &self.get(name), level, true)
    }

    /// Times at which `name` crosses `level` going downwards.
    pub fn downward_crossings(&self, name: &str, level: f64) -> Vec<f64> {
        crossings(self.time(), &self.get(name), level, false)
    }
}

/// Linear interpolation in `(time, y)`; at a duplicated time the later row wins.
pub fn interpolate(time: &[f64], y: &[f64], t: f64) -> f64 {
    assert!(!time.is_empty(), "empty trajectory");
    if t <= time[0] {
        return y[0];
    }
    let i = time.partition_point(|&s| s <= t);
    if i >= time.len() {
        return y[time.len() - 1];
    }
    let (t0, t1) = (time[i - 1], time[i]);
    if t == t0 || t1 == t0 {
        return y[i - 1];
    }
    y[i - 1] + (y[i] - y[i - 1]) * (t - t0) / (t1 - t0)
}

fn crossings(time: &[f64], y: &[f64], level: f64, upward: bool) -> Vec<f64> {
    let mut out = Vec::new();
    for i in 1..time.len() {
        let (a, b) = (y[i - 1] - level, y[i] - level);
        let crosses = if upward {
            a < 0.0 && b >= 0.0
        } else {
            a > 0.0 && b <= 0.0
        };
        if crosses {
            let dt = time[i] - time[i - 1];
            out.push(if dt > 0.0 {
                time[i - 1] + dt * a / (a - b)
            } else {
                time[i]
            });
        }
    }
    out
}

/// Assert `|actual - expected| <= tol`, naming the quantity in the message.
#[track_caller]
pub fn assert_close(what: &str, actual: f64, expected: f64, tol: f64) {
    assert!(
        (actual - expected).abs() <= tol,
        "{what}: got {actual}, expected {expected} (tolerance {tol}, off by {})",
        (actual - expected).abs()
    );
}

/// Assert `|actual - expected| <= rel*|expected|`.
#[track_caller]
pub fn assert_rel(what: &str, actual: f64, expected: f64, rel: f64) {
    assert!(
        (actual - expected).abs() <= rel * expected.abs(),
        "{what}: got {actual}, expected {expected} (relative tolerance {rel}, off by {:.3e} relative)",
        (actual - expected).abs() / expected.abs()
    );
}

/// Coefficient of restitution of the ElastoGap contact law (exponent 1) for a body of mass `m`
/// hitting it at speed `v_in`, with a constant acceleration `g` pressing it into the contact.
/// See [`elastogap_contact`].
pub fn elastogap_restitution(m: f64, c: f64, d: f64, g: f64, v_in: f64) -> f64 {
    elastogap_contact(m, c, d, g, v_in).restitution
}

/// One impact on an ElastoGap contact, integrated from the contact law.
#[derive(Debug, Clone, Copy)]
pub struct ContactImpact {
    /// Exit speed over impact speed.
    pub restitution: f64,
    /// Time from touching the contact until leaving it [s].
    pub duration: f64,
}

/// One impact of a body of mass `m` hitting an ElastoGap contact (exponent 1) at speed `v_in`,
/// with a constant acceleration `g` pressing it into the contact.
///
/// With compression x and compression rate xd the contact force is
/// c*x + clamp(d*xd, -c*x, c*x) (the damping force is limited to the spring force, so the
/// contact never pulls); m*xdd = m*g - force is integrated with RK4 (200000 steps per period
/// of the undamped contact) from x = 0, xd = v_in until the contact opens again; the exit speed
/// and time are interpolated at x = 0.
pub fn elastogap_contact(m: f64, c: f64, d: f64, g: f64, v_in: f64) -> ContactImpact {
    let accel = |x: f64, xd: f64| {
        let spring = c * x.max(0.0);
        g - (spring + (d * xd).clamp(-spring, spring)) / m
    };
    let period = 2.0 * std::f64::consts::PI * (m / c).sqrt();
    let h = period / 200_000.0;
    let (mut x, mut xd) = (0.0f64, v_in);
    for step in 0..10_000_000 {
        let k1 = (xd, accel(x, xd));
        let k2 = (
            xd + 0.5 * h * k1.1,
            accel(x + 0.5 * h * k1.0, xd + 0.5 * h * k1.1),
        );
        let k3 = (
            xd + 0.5 * h * k2.1,
            accel(x + 0.5 * h * k2.0, xd + 0.5 * h * k2.1),
        );
        let k4 = (xd + h * k3.1, accel(x + h * k3.0, xd + h * k3.1));
        let x_new = x + h / 6.0 * (k1.0 + 2.0 * k2.0 + 2.0 * k3.0 + k4.0);
        let xd_new = xd + h / 6.0 * (k1.1 + 2.0 * k2.1 + 2.0 * k3.1 + k4.1);
        if x_new < 0.0 && xd_new < 0.0 {
            let f = x / (x - x_new);
            return ContactImpact {
                restitution: -(xd + f * (xd_new - xd)) / v_in,
                duration: (step as f64 + f) * h,
            };
        }
        (x, xd) = (x_new, xd_new);
    }
    panic!("the contact did not open again (m = {m}, c = {c}, d = {d}, g = {g}, v_in = {v_in})")
}

/// `moss translate` of `source` (written to `<name>.mo` in a scratch folder), expected to fail
/// with a model error (exit status 1); returns what moss wrote on stderr.
pub fn translate_failure(name: &str, source: &str) -> String {
    let dir = scratch_dir(name);
    let file = dir.join(format!("{name}.mo"));
    std::fs::write(&file, source).expect("writes the model");
    let out = moss_command()
        .arg("translate")
        .arg(&file)
        .output()
        .expect("runs the moss binary");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "a model error:\n{stderr}");
    stderr
}
