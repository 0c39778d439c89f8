//! `moss-sim`: numerical integration of an [`moss_codegen::ExecutableModel`] with events.
//!
//! - [`dopri5`]: explicit Dormand–Prince 5(4) with dense output and stiffness detection
//!   (non-stiff problems).
//! - [`bdf`]: variable-order BDF 1–5 with a sparse finite-difference Jacobian (stiff problems).
//! - The default, [`Solver::Auto`], runs DOPRI5 and switches to BDF once DOPRI5 finds the
//!   problem stiff.
//! - [`fixed`]: fixed-step explicit Euler and RK4, for debugging models.
//! - [`driver`]: the event loop — zero crossings located on the dense output, time events hit
//!   exactly, event iteration, restarts, chattering guard — and output on a time grid with
//!   both sides of every event.
//! - [`record`]: which variables go into the [`SimResult`] and how they are stored.
//!
//! Entry points: [`simulate`] and [`simulate_with_stats`] (rows kept in memory), and
//! [`simulate_to_file`] (rows written as they are produced); [`advance`] integrates one
//! segment of a run driven from outside (an FMU's co-simulation step).

// Numerical kernels index several arrays in lockstep; iterator chains would hide that.
#![allow(clippy::needless_range_loop)]

pub mod bdf;
pub mod dopri5;
pub mod driver;
pub mod events;
pub mod fixed;
pub mod integrator;
pub mod jacobian;
pub mod linalg;
pub mod options;
pub mod record;
pub mod system;

pub use driver::{advance, Chattering, Segment, SimErrorKind, SimStats};
pub use integrator::{Integrator, IntegratorStats, StepError};
pub use options::{ChatteringGuard, SimOptions, Solver};
pub use system::{OdeSystem, Tolerances};

use moss_codegen::ExecutableModel;
use moss_results::SimResult;
use moss_symbolic::CausalProgram;

/// A failed simulation, with the rows recorded before the failure.
pub type SimError = driver::SimError<SimResult>;

/// A successful simulation.
#[derive(Debug)]
pub struct Simulation {
    pub result: SimResult,
    pub stats: SimStats,
    /// The message of `terminate()` if the model ended the run before the stop time.
    pub terminated: Option<String>,
}

/// Simulate `model` (a fresh, uninitialized instance of `program`) with `opts`. The run
/// statistics are also stored as text in `result.stats`.
pub fn simulate(
    model: &mut dyn ExecutableModel,
    program: &CausalProgram,
    opts: &SimOptions,
) -> Result<SimResult, SimError> {
    simulate_with_stats(model, program, opts).map(|s| s.result)
}

/// [`simulate`], also returning the statistics in structured form.
pub fn simulate_with_stats(
    model: &mut dyn ExecutableModel,
    program: &CausalProgram,
    opts: &SimOptions,
) -> Result<Simulation, SimError> {
    let filter = match opts.vars.as_deref().map(record::compile_filter).transpose() {
        Ok(f) => f,
        Err(message) => {
            return Err(SimError {
                kind: SimErrorKind::Options(message),
                partial: None,
                stats: Box::default(),
            })
        }
    };
    let recorder = record::ResultRecorder::new(program, filter).with_protected(opts.protected);
    match driver::run(model, program, opts, recorder) {
        Ok(done) => {
            let mut result = done.result;
            result.stats = stats_as_text(&done.stats);
            Ok(Simulation {
                result,
                stats: done.stats,
                terminated: done.terminated,
            })
        }
        Err(mut e) => {
            if let Some(r) = &mut e.partial {
                r.stats = stats_as_text(&e.stats);
            }
            Err(e)
        }
    }
}

/// A simulation whose rows went straight into a file ([`simulate_to_file`]).
#[derive(Debug)]
pub struct StreamedSimulation {
    pub file: record::Streamed,
    pub stats: SimStats,
    pub terminated: Option<String>,
}

/// [`simulate_with_stats`], writing the rows to `path` (`.csv` or `.mat`) while the
/// simulation runs instead of keeping them: memory stays bounded by the variable table,
/// however many rows the run produces. A failed run leaves the rows before the failure.
pub fn simulate_to_file(
    model: &mut dyn ExecutableModel,
    program: &CausalProgram,
    opts: &SimOptions,
    path: &std::path::Path,
) -> Result<StreamedSimulation, driver::SimError<record::Streamed>> {
    let filter = match opts.vars.as_deref().map(record::compile_filter).transpose() {
        Ok(f) => f,
        Err(message) => {
            return Err(driver::SimError {
                kind: SimErrorKind::Options(message),
                partial: None,
                stats: Box::default(),
            })
        }
    };
    let table = record::ResultRecorder::new(program, filter).with_protected(opts.protected);
    let recorder = record::StreamingRecorder::with_table(table, path);
    driver::run(model, program, opts, recorder).map(|done| StreamedSimulation {
        file: done.result,
        stats: done.stats,
        terminated: done.terminated,
    })
}

/// The statistics as `(name, value)` pairs for [`SimResult::stats`].
pub fn stats_as_text(s: &SimStats) -> Vec<(String, String)> {
    let i = &s.integrator;
    let pairs: [(&str, String); 15] = [
        ("solver", s.solver.clone()),
        ("steps", i.steps.to_string()),
        ("rejected_steps", i.rejected_steps.to_string()),
        ("rhs_evaluations", i.rhs_evaluations.to_string()),
        ("jacobian_evaluations", i.jacobian_evaluations.to_string()),
        ("tangent_runs", i.tangent_runs.to_string()),
        ("lu_factorizations", i.lu_factorizations.to_string()),
        ("lu_refactorizations", i.lu_refactorizations.to_string()),
        ("newton_iterations", i.newton_iterations.to_string()),
        ("state_events", s.state_events.to_string()),
        ("time_events", s.time_events.to_string()),
        (
            "zero_crossing_evaluations",
            s.zero_crossing_evaluations.to_string(),
        ),
        ("output_rows", s.output_rows.to_string()),
        ("init_seconds", format!("{:.6}", s.init_seconds)),
        ("simulate_seconds", format!("{:.6}", s.simulate_seconds)),
    ];
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}
