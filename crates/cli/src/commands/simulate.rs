//! `moss simulate MODEL_OR_FILE`: flatten, translate, interpret and integrate a model, and
//! write its trajectories.
//!
//! Pipeline: `moss_frontend::flatten_model` → `moss_symbolic::translate` →
//! `moss_codegen::Interpreter` → `moss_sim::simulate`. Simulation settings come from the
//! command line, else from the model's `experiment` annotation, else 0..1 s, 500 intervals,
//! tolerance 1e-6.
//!
//! The result goes to `-o FILE` (`.csv` or `.mat` by extension), by default
//! `<ModelName>_res.csv` in the current directory: CSV because every tool (spreadsheets,
//! pandas, `moss compare`) reads it; `-o x.mat` gives the Dymola/OpenModelica MAT layout.
//!
//! Exit status: 0 success, 1 model error (diagnostics, runtime failure, chattering),
//! 2 usage error.

use moss_codegen::{ExecutableModel, Interpreter};
use moss_frontend::api::{flatten_model, LoadOptions};
use moss_results::Format;
use moss_sim::jacobian::JacobianMode;
use moss_sim::{simulate_to_file, SimOptions, Solver};
use moss_syntax::SourceMap;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Arguments of `moss simulate`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Class name (e.g. `Modelica.Blocks.Examples.PID_Controller`) or a `.mo` file (its last
    /// top-level class).
    #[arg(value_name = "MODEL_OR_FILE")]
    pub model: String,
    /// Start time in seconds [default: experiment StartTime, else 0].
    #[arg(long, allow_hyphen_values = true)]
    pub start_time: Option<f64>,
    /// Stop time in seconds [default: experiment StopTime, else 1].
    #[arg(long)]
    pub stop_time: Option<f64>,
    /// Output interval in seconds [default: experiment Interval, else span/500].
    #[arg(long, conflicts_with = "intervals")]
    pub interval: Option<f64>,
    /// Number of output intervals (alternative to --interval).
    #[arg(long)]
    pub intervals: Option<usize>,
    /// Relative tolerance [default: experiment Tolerance, else 1e-6].
    #[arg(long)]
    pub tolerance: Option<f64>,
    /// Integrator: `auto` (DOPRI5, switching to BDF for good when the problem turns out
    /// stiff), `bdf` (stiff, variable order 1-5), `dopri5` (explicit Runge-Kutta 5(4)), or the
    /// fixed-step `euler` / `rk4` (for debugging).
    #[arg(long, default_value = "auto", value_parser = parse_solver)]
    pub solver: Solver,
    /// Where BDF's Jacobian values come from: `auto` (the symbolic Jacobian built by the
    /// translation, else finite differences; `moss translate` says which) or `numeric`
    /// (finite differences always, for comparison).
    #[arg(long, default_value = "auto", value_parser = parse_jacobian)]
    pub jacobian: JacobianMode,
    /// Largest integration step in seconds; the step of `euler`/`rk4` [default: span/50,
    /// or the output interval for the fixed-step methods].
    #[arg(long)]
    pub max_step: Option<f64>,
    /// Override a parameter: `-p NAME=VALUE` (repeatable; `true`/`false` for Booleans).
    #[arg(short = 'p', long = "param", value_name = "NAME=VALUE", value_parser = parse_param)]
    pub params: Vec<(String, f64)>,
    /// Result file, `.csv` or `.mat` [default: `<ModelName>_res.csv`].
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Store only variables whose full name matches this regular expression (whole-name
    /// match, e.g. `'body\..*|der\(.*\)'`).
    #[arg(long, value_name = "REGEX")]
    pub vars: Option<String>,
    /// Also store protected variables (left out by default, as other tools do; a `--vars`
    /// pattern that names them stores them anyway).
    #[arg(long)]
    pub protected: bool,
    /// Library directory to search before MODELICAPATH and the bundled library (repeatable).
    #[arg(long = "lib", value_name = "DIR")]
    pub libs: Vec<PathBuf>,
    /// Print run statistics (steps, evaluations, events, time per stage).
    #[arg(long)]
    pub stats: bool,
}

fn parse_solver(s: &str) -> Result<Solver, String> {
    Solver::parse(s)
        .ok_or_else(|| format!("unknown solver `{s}`; use auto, bdf, dopri5, euler or rk4"))
}

fn parse_jacobian(s: &str) -> Result<JacobianMode, String> {
    JacobianMode::parse(s)
        .ok_or_else(|| format!("unknown Jacobian mode `{s}`; use auto or numeric"))
}

pub fn parse_param(s: &str) -> Result<(String, f64), String> {
    let Some((name, value)) = s.split_once('=') else {
        return Err(format!("expected NAME=VALUE, got `{s}`"));
    };
    let name = name.trim();
    if name.is_empty() {
        return Err(format!("missing parameter name in `{s}`"));
    }
    let value = value.trim();
    let v = match value {
        "true" => 1.0,
        "false" => 0.0,
        _ => value
            .parse::<f64>()
            .map_err(|_| format!("`{value}` is not a number (in `{s}`)"))?,
    };
    Ok((name.to_string(), v))
}

pub fn run(args: Args) -> u8 {
    if let Some(code) = check_usage(&args) {
        return code;
    }
    let mut timer = Stages::default();
    let started = Instant::now();
    let program = match translate_model(&args) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let program = std::sync::Arc::new(program);
    let mut model = match Interpreter::new(std::sync::Arc::clone(&program)) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e}");
            return super::EXIT_MODEL_ERROR;
        }
    };
    timer.translate = started.elapsed();

    let progress = Progress::new();
    let opts = sim_options(&args, &program, &progress);
    let path = args
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("{}_res.csv", program.name)));
    let outcome = simulate_to_file(&mut model, &program, &opts, &path);
    progress.clear();
    for w in model.warnings() {
        eprintln!("warning: {w}");
    }
    let (file, stats, failed) = match outcome {
        Ok(sim) => {
            if let Some(msg) = &sim.terminated {
                eprintln!("note: the model called terminate(): {msg}");
            }
            (Some(sim.file), sim.stats, false)
        }
        Err(e) => {
            eprintln!("error: simulation failed {}", describe(&e.kind));
            if matches!(e.kind, moss_sim::SimErrorKind::Options(_)) {
                return super::EXIT_USAGE;
            }
            (e.partial.map(|r| *r), *e.stats, true)
        }
    };
    timer.init = Duration::from_secs_f64(stats.init_seconds);
    timer.simulate = Duration::from_secs_f64(stats.simulate_seconds);
    if let Some(file) = &file {
        // Rows are written on another thread during the run: what the run waited for at
        // its end, and how long the writer worked in all.
        timer.write = Duration::from_secs_f64(file.finish_seconds);
        timer.writer_busy = Duration::from_secs_f64(file.write_seconds);
    }
    if let Some(file) = file.filter(|f| f.rows > 0 || f.error.is_some()) {
        if !report_output(&file, &path, failed) {
            return super::EXIT_MODEL_ERROR;
        }
    }
    if args.stats {
        println!("{stats}");
        println!("{timer}");
    }
    if failed {
        super::EXIT_MODEL_ERROR
    } else {
        super::EXIT_OK
    }
}

/// Flatten and translate the model, printing diagnostics; `Err` is the exit code.
fn translate_model(args: &Args) -> Result<moss_symbolic::CausalProgram, u8> {
    let load = LoadOptions {
        libs: args.libs.clone(),
        use_modelicapath: true,
        use_bundled: true,
    };
    let flat = match flatten_model(&load, &args.model) {
        Ok(f) => f,
        Err(failure) => {
            print_diagnostics(&failure.diagnostics, &failure.sources);
            return Err(super::EXIT_MODEL_ERROR);
        }
    };
    print_diagnostics(&flat.warnings, &flat.model.sources);
    let program = match moss_symbolic::translate(&flat.model) {
        Ok(p) => p,
        Err(diagnostics) => {
            print_diagnostics(&diagnostics, &flat.model.sources);
            return Err(super::EXIT_MODEL_ERROR);
        }
    };
    for w in &program.report.warnings {
        eprintln!("warning: {w}");
    }
    // The symbolic stage is done with the flat model; freeing one of 10^5 variables and
    // equations takes a noticeable part of a second, so that happens beside the rest of
    // the run instead of before it.
    std::thread::spawn(move || drop(flat));
    Ok(program)
}

fn sim_options(
    args: &Args,
    program: &moss_symbolic::CausalProgram,
    progress: &Progress,
) -> SimOptions {
    let exp = &program.experiment;
    SimOptions {
        start_time: args.start_time,
        stop_time: args.stop_time,
        interval: args.interval,
        intervals: args.intervals,
        tolerance: args.tolerance,
        solver: args.solver,
        jacobian: args.jacobian,
        parameters: args.params.clone(),
        vars: args.vars.clone(),
        protected: args.protected,
        max_step: args.max_step,
        progress: progress.callback(
            args.start_time.or(exp.start_time).unwrap_or(0.0),
            args.stop_time.or(exp.stop_time).unwrap_or(1.0),
        ),
        ..Default::default()
    }
}

/// Say where the result went; false (after an error message) if writing it failed.
fn report_output(file: &moss_sim::record::Streamed, path: &std::path::Path, partial: bool) -> bool {
    if let Some(e) = &file.error {
        eprintln!("error: cannot write the result: {e}");
        return false;
    }
    if partial {
        eprintln!(
            "note: results up to the failure written to {}",
            path.display()
        );
    } else {
        eprintln!("wrote {} ({} rows)", path.display(), file.rows);
    }
    true
}

/// Checks that need no model: returns the exit code on a usage error.
fn check_usage(args: &Args) -> Option<u8> {
    let usage = |msg: String, help: &str| {
        eprintln!("error: {msg}");
        eprintln!("   = help: {help}");
        Some(super::EXIT_USAGE)
    };
    if args.model.ends_with(".mo") && !std::path::Path::new(&args.model).is_file() {
        return usage(
            format!("no such file: {}", args.model),
            "give an existing .mo file or a class name such as Modelica.Blocks.Examples.PID_Controller",
        );
    }
    if let Some(out) = &args.output {
        if Format::from_path(out).is_none() {
            return usage(
                format!("cannot tell the result format of `{}`", out.display()),
                "use a file name ending in .csv or .mat",
            );
        }
    }
    for dir in &args.libs {
        if !dir.is_dir() {
            return usage(
                format!("--lib {}: not a directory", dir.display()),
                "give the directory that contains the library (e.g. the folder holding Modelica/)",
            );
        }
    }
    if let Some(re) = &args.vars {
        if let Err(e) = moss_sim::record::compile_filter(re) {
            return usage(
                e,
                "the filter is a regular expression matched against whole names",
            );
        }
    }
    None
}

fn describe(kind: &moss_sim::SimErrorKind) -> String {
    match kind {
        moss_sim::SimErrorKind::Options(m) => format!("to start: {m}"),
        k => k.to_string(),
    }
}

fn print_diagnostics(diags: &[moss_syntax::Diagnostic], sources: &SourceMap) {
    let stderr = std::io::stderr();
    let mut err = stderr.lock();
    for d in diags {
        let _ = write!(err, "{}", d.render(sources));
    }
}

/// Wall-clock time per stage.
#[derive(Default)]
struct Stages {
    translate: Duration,
    init: Duration,
    simulate: Duration,
    /// Waiting for the writer after the run.
    write: Duration,
    /// The writer's own time, mostly beside the run.
    writer_busy: Duration,
}

impl std::fmt::Display for Stages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "time per stage [s]:     translate {:.3}, init {:.3}, simulate {:.3}, write {:.3} \
             (the writer worked {:.3} s beside the run)",
            self.translate.as_secs_f64(),
            self.init.as_secs_f64(),
            self.simulate.as_secs_f64(),
            self.write.as_secs_f64(),
            self.writer_busy.as_secs_f64()
        )
    }
}

/// A one-line progress bar on stderr, shown only when stderr is a terminal and the run has
/// taken more than a second; redrawn at most ten times a second.
struct Progress {
    state: Option<Arc<Mutex<ProgressState>>>,
}

struct ProgressState {
    started: Instant,
    last_draw: Option<Instant>,
    drawn: bool,
}

impl Progress {
    fn new() -> Progress {
        let state = std::io::stderr().is_terminal().then(|| {
            Arc::new(Mutex::new(ProgressState {
                started: Instant::now(),
                last_draw: None,
                drawn: false,
            }))
        });
        Progress { state }
    }

    fn callback(&self, start: f64, stop: f64) -> Option<moss_sim::options::ProgressFn> {
        let state = self.state.clone()?;
        let span = (stop - start).max(f64::MIN_POSITIVE);
        Some(Arc::new(move |t: f64| {
            let Ok(mut s) = state.lock() else { return };
            let now = Instant::now();
            if now.duration_since(s.started) < Duration::from_secs(1) {
                return;
            }
            if s.last_draw
                .is_some_and(|d| now.duration_since(d) < Duration::from_millis(100))
            {
                return;
            }
            s.last_draw = Some(now);
            s.drawn = true;
            let frac = ((t - start) / span).clamp(0.0, 1.0);
            let width = 30;
            let filled = (frac * width as f64) as usize;
            eprint!(
                "\r[{}{}] {:5.1}%  t = {:<12.6}",
                "#".repeat(filled),
                "-".repeat(width - filled),
                100.0 * frac,
                t
            );
        }))
    }

    /// Erase the bar if it was drawn.
    fn clear(&self) {
        if let Some(state) = &self.state {
            if state.lock().is_ok_and(|s| s.drawn) {
                eprint!("\r{}\r", " ".repeat(60));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_parse() {
        assert_eq!(parse_param("a.b=2.5"), Ok(("a.b".into(), 2.5)));
        assert_eq!(parse_param(" k = true"), Ok(("k".into(), 1.0)));
        assert!(parse_param("k").is_err());
        assert!(parse_param("=1").is_err());
        assert!(parse_param("k=abc").unwrap_err().contains("not a number"));
    }

    #[test]
    fn solvers_parse() {
        assert_eq!(parse_solver("BDF"), Ok(Solver::Bdf));
        assert_eq!(parse_solver("dopri5"), Ok(Solver::Dopri5));
        assert_eq!(parse_solver("rk4"), Ok(Solver::Rk4));
        assert!(parse_solver("ode45").is_err());
    }
}
