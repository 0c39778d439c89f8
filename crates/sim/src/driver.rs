//! The event loop: integrate, detect zero crossings after every accepted step, locate the
//! earliest one on the dense output, record both sides of the event, run the model's event
//! iteration, restart the integrator; land exactly on time events; write output rows on the
//! grid from the dense output.
//!
//! Output rows are computed by re-evaluating the model (continuous mode) at the interpolated
//! states, so algebraic variables are consistent with the states. An event produces two rows
//! with the same time: the left limit (continuous-mode evaluation just before the event) and
//! the right limit (after the event iteration).
//!
//! The integrator is restarted after every event, not only when `reinit` changed states: a
//! discrete change usually makes the right-hand side discontinuous, and a multistep history
//! (or DOPRI5's first-same-as-last stage) from before the event would spoil the next steps.
//!
//! Right after a restart a zero-crossing function starts near zero, and a relation can flip
//! and flip back within one step (a ball bouncing ever lower); the first few steps after a
//! restart are therefore also probed at interior points of the dense output. This only helps
//! as far as the dense output resolves the motion (BDF's first steps are order 1).

use crate::bdf::Bdf;
use crate::dopri5::Dopri5;
use crate::events::{has_crossed, illinois, root_time_tolerance};
use crate::fixed::{FixedMethod, FixedStep};
use crate::integrator::{Integrator, IntegratorStats, StepError};
use crate::options::{output_grid, resolve, Resolved, SimOptions, Solver};
use crate::record::Recorder;
use crate::system::{ModelSystem, Tolerances};
use moss_codegen::{ExecutableModel, ModelStats, RuntimeError};
use moss_symbolic::program::RelOp;
use moss_symbolic::CausalProgram;
use std::collections::VecDeque;
use std::fmt;
use std::time::Instant;

/// Figures of one run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SimStats {
    pub solver: String,
    pub integrator: IntegratorStats,
    pub state_events: u64,
    pub time_events: u64,
    /// Integrator restarts (after events).
    pub restarts: u64,
    /// Zero-crossing function evaluations made by the simulator (root finding included).
    pub zero_crossing_evaluations: u64,
    pub output_rows: u64,
    pub init_seconds: f64,
    pub simulate_seconds: f64,
    pub model: ModelStats,
}

impl fmt::Display for SimStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = &self.integrator;
        writeln!(f, "solver:                 {}", self.solver)?;
        writeln!(
            f,
            "steps:                  {} ({} rejected)",
            i.steps, i.rejected_steps
        )?;
        writeln!(f, "rhs evaluations:        {}", i.rhs_evaluations)?;
        writeln!(
            f,
            "jacobian evaluations:   {} ({} tangent runs)",
            i.jacobian_evaluations, i.tangent_runs
        )?;
        if i.lu_refactorizations > 0 {
            writeln!(
                f,
                "lu factorizations:      {} ({} refactored along kept pivots)",
                i.lu_factorizations, i.lu_refactorizations
            )?;
        } else {
            writeln!(f, "lu factorizations:      {}", i.lu_factorizations)?;
        }
        writeln!(
            f,
            "newton iterations:      {} ({} convergence failures)",
            i.newton_iterations, i.newton_failures
        )?;
        writeln!(
            f,
            "events:                 {} state, {} time ({} restarts)",
            self.state_events, self.time_events, self.restarts
        )?;
        writeln!(
            f,
            "zero-crossing evals:    {}",
            self.zero_crossing_evaluations
        )?;
        let m = &self.model;
        writeln!(
            f,
            "nonlinear solves:       {} ({} iterations, {} Newton failures)",
            m.nonlinear_solves, m.nonlinear_iterations, m.nonlinear_fallbacks
        )?;
        writeln!(
            f,
            "function calls:         {} ({} answered by the memo, {} run compiled, {} of them as native code)",
            m.function_calls, m.memo_hits, m.scalar_calls, m.native_calls
        )?;
        if m.sparse_factorizations + m.sparse_refactorizations > 0 {
            writeln!(
                f,
                "sparse linear solves:   {} ({} refactored along the last pivots)",
                m.sparse_factorizations + m.sparse_refactorizations,
                m.sparse_refactorizations
            )?;
        }
        if m.kept_matrix_solves > 0 {
            writeln!(
                f,
                "linear solves on kept factors: {} (their matrices' inputs unchanged)",
                m.kept_matrix_solves
            )?;
        }
        writeln!(f, "output rows:            {}", self.output_rows)?;
        writeln!(f, "initialization time:    {:.6} s", self.init_seconds)?;
        write!(f, "integration time:       {:.6} s", self.simulate_seconds)
    }
}

/// Events repeating without time advancing.
#[derive(Clone, Debug, PartialEq)]
pub struct Chattering {
    pub time: f64,
    /// Index into `program.zero_crossings` (None: many different events in a tiny window).
    pub zero_crossing: Option<usize>,
    pub description: String,
    pub events: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub enum SimErrorKind {
    /// Invalid options (bad times, unknown parameter, bad regular expression).
    Options(String),
    /// The model failed (assert, no convergence, ...).
    Runtime(RuntimeError),
    /// The integrator gave up.
    Integrator(StepError),
    Chattering(Chattering),
}

impl fmt::Display for SimErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimErrorKind::Options(m) => write!(f, "{m}"),
            SimErrorKind::Runtime(e) => write!(f, "{e}"),
            SimErrorKind::Integrator(e) => write!(f, "{e}"),
            SimErrorKind::Chattering(c) => match c.zero_crossing {
                Some(_) => write!(
                    f,
                    "at time {}: chattering: the zero crossing `{}` fired {} times in a row \
                     without time advancing; the model switches back and forth (consider \
                     hysteresis, or `noEvent` if the switch is harmless)",
                    c.time, c.description, c.events
                ),
                None => write!(
                    f,
                    "at time {}: chattering: {} events in a tiny time window{}",
                    c.time,
                    c.events,
                    if c.description.is_empty() {
                        String::new()
                    } else {
                        format!(" (last: `{}`)", c.description)
                    }
                ),
            },
        }
    }
}

/// A failed simulation: what went wrong, the rows recorded until then, and the figures.
#[derive(Debug)]
pub struct SimError<R> {
    pub kind: SimErrorKind,
    pub partial: Option<Box<R>>,
    pub stats: Box<SimStats>,
}

impl<R> fmt::Display for SimError<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind)
    }
}

impl<R: fmt::Debug> std::error::Error for SimError<R> {}

/// What the event loop produces; `R` is the recorder's output.
pub struct Finished<R> {
    pub result: R,
    pub stats: SimStats,
    /// Message of `terminate()` when the model ended the run early.
    pub terminated: Option<String>,
}

/// Run the simulation, recording rows with `recorder`.
pub fn run<Rec: Recorder>(
    model: &mut dyn ExecutableModel,
    program: &CausalProgram,
    opts: &SimOptions,
    mut recorder: Rec,
) -> Result<Finished<Rec::Output>, SimError<Rec::Output>> {
    let mut stats = SimStats::default();
    let fail_early = |kind: SimErrorKind, stats: SimStats| SimError {
        kind,
        partial: None,
        stats: Box::new(stats),
    };
    let resolved =
        resolve(opts, program).map_err(|m| fail_early(SimErrorKind::Options(m), stats.clone()))?;
    for (name, value) in &opts.parameters {
        model
            .set_parameter(name, *value)
            .map_err(|e| fail_early(SimErrorKind::Options(e.message), stats.clone()))?;
    }
    let init_start = Instant::now();
    model
        .initialize(resolved.start)
        .map_err(|e| fail_early(SimErrorKind::Runtime(e), stats.clone()))?;
    stats.init_seconds = init_start.elapsed().as_secs_f64();
    let sim_start = Instant::now();
    let mut event_loop = EventLoop::new(model, program, opts, resolved, &mut stats, &mut recorder);
    let outcome = event_loop.run();
    let integ_stats = event_loop.retired.plus(&event_loop.integ.stats());
    let rows = event_loop.rows;
    drop(event_loop);
    stats.integrator = integ_stats;
    stats.output_rows = rows;
    stats.model = model.stats();
    stats.simulate_seconds = sim_start.elapsed().as_secs_f64();
    match outcome {
        Ok(terminated) => Ok(Finished {
            result: recorder.finish(),
            stats,
            terminated,
        }),
        Err(kind) => Err(SimError {
            kind,
            partial: Some(Box::new(recorder.finish())),
            stats: Box::new(stats),
        }),
    }
}

/// How one segment driven by [`advance`] ended.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Segment {
    /// Where the segment ended: its stop time, or the event time of a `terminate()`.
    pub t_end: f64,
    /// The message of `terminate()` if the model ended the run inside the segment.
    pub terminated: Option<String>,
    /// `Solver::Auto` found the problem stiff and continued with BDF: later segments should
    /// start with BDF.
    pub switched_to_bdf: bool,
    pub state_events: u64,
    pub time_events: u64,
}

/// Integrate an initialized model from `t0` to `t1` with the event loop of [`run`]: every
/// state event inside the segment is located and handled, time events are hit exactly, and
/// the model is left evaluated at `t1` with its states there (`ExecutableModel::states`).
/// The segment starts from the model's current states: those of its last evaluation (the
/// interpreter keeps them in its memory), so the end of one segment is the start of the
/// next.
/// No rows are recorded and `terminal()` is not evaluated at `t1`. This is a co-simulation
/// step (`fmi2DoStep`): the integrator starts afresh at `t0` because inputs may have changed
/// there. From `opts` only the tolerance, solver, Jacobian mode, maximum step and chattering
/// guard are used.
pub fn advance(
    model: &mut dyn ExecutableModel,
    program: &CausalProgram,
    opts: &SimOptions,
    t0: f64,
    t1: f64,
) -> Result<Segment, SimErrorKind> {
    let seg_opts = SimOptions {
        start_time: Some(t0),
        stop_time: Some(t1),
        interval: Some((t1 - t0).max(f64::MIN_POSITIVE)),
        intervals: None,
        parameters: Vec::new(),
        progress: None,
        ..opts.clone()
    };
    let resolved = resolve(&seg_opts, program).map_err(SimErrorKind::Options)?;
    let mut stats = SimStats::default();
    let mut recorder = NoRows;
    let mut event_loop = EventLoop::new(
        model,
        program,
        &seg_opts,
        resolved,
        &mut stats,
        &mut recorder,
    );
    event_loop.segment = true;
    let outcome = event_loop.run();
    let switched_to_bdf = opts.solver == Solver::Auto && !event_loop.may_switch_to_bdf;
    let t_event = event_loop.last_event_time;
    drop(event_loop);
    let terminated = outcome?;
    Ok(Segment {
        t_end: if terminated.is_some() { t_event } else { t1 },
        terminated,
        switched_to_bdf,
        state_events: stats.state_events,
        time_events: stats.time_events,
    })
}

/// The recorder of [`advance`]: keeps nothing (so going back to a checkpoint is always
/// possible).
struct NoRows;

impl Recorder for NoRows {
    type Output = ();
    fn record(&mut self, _t: f64, _values: &[f64]) {}
    fn finish(self) {}
    fn truncate(&mut self, _rows: usize) -> bool {
        true
    }
}

/// Relation of each zero crossing (`>` when the program does not say).
fn crossing_ops(program: &CausalProgram, n: usize) -> Vec<RelOp> {
    (0..n)
        .map(|i| program.zero_crossings.get(i).map_or(RelOp::Gt, |z| z.op))
        .collect()
}

/// Absolute tolerance of each state: the relative tolerance times its nominal value.
fn state_tolerances(program: &CausalProgram, n: usize, rtol: f64) -> Tolerances {
    let atol = (0..n)
        .map(|i| {
            let nominal = program
                .states
                .get(i)
                .and_then(|&v| program.vars.get(v as usize))
                .map_or(1.0, |v| v.nominal.abs());
            rtol * if nominal > 0.0 && nominal.is_finite() {
                nominal
            } else {
                1.0
            }
        })
        .collect();
    Tolerances::new(rtol, atol)
}

/// Where the earliest zero crossing of a step lies.
struct Crossing {
    t_lo: f64,
    t_hi: f64,
    index: usize,
}

struct EventLoop<'a, Rec: Recorder> {
    model: &'a mut dyn ExecutableModel,
    program: &'a CausalProgram,
    opts: &'a SimOptions,
    r: Resolved,
    stats: &'a mut SimStats,
    recorder: &'a mut Rec,
    integ: Box<dyn Integrator>,
    ops: Vec<RelOp>,
    frozen: Vec<bool>,
    /// Zero-crossing values at the start of the current step.
    g_prev: Vec<f64>,
    g: Vec<f64>,
    grid: Vec<f64>,
    next_out: usize,
    x: Vec<f64>,
    dx: Vec<f64>,
    rows: u64,
    /// Recent event times (all kinds), for the chattering window.
    recent_events: VecDeque<f64>,
    /// (zero crossing, consecutive events with vanishing time advance)
    repeats: Option<(usize, usize)>,
    last_event_time: f64,
    /// The time of the last event and the number of recorded rows right after its
    /// right-limit row (see `merge_into_previous_event`).
    last_event_row: Option<(f64, usize)>,
    /// Accepted steps since the last (re)start of the integrator.
    steps_since_restart: u32,
    /// `--solver auto` and still on DOPRI5.
    may_switch_to_bdf: bool,
    tol: Tolerances,
    /// Counters of integrators replaced during the run.
    retired: IntegratorStats,
    /// `--solver auto` on DOPRI5: the point to go back to with BDF if DOPRI5 fails before it
    /// recognizes the problem as stiff (the last (re)start, or a later step).
    checkpoint: Option<Checkpoint>,
    /// The next checkpoint, taken during the run (see `advance_checkpoint`).
    candidate: Option<Checkpoint>,
    steps_since_candidate: u32,
    /// One segment of a longer run driven from outside ([`advance`]): the stop time is a
    /// communication point, not the end, so `terminal()` is not evaluated there.
    segment: bool,
}

/// A point to go back to: the last (re)start, or a later accepted step before which the
/// run has moved on (`advance_checkpoint`). No event has happened since, so the model's
/// discrete state is still the one of that point.
struct Checkpoint {
    t: f64,
    x: Vec<f64>,
    recorded_rows: usize,
    rows: u64,
    next_out: usize,
    g_prev: Vec<f64>,
}

/// Accepted steps, or recorded rows, between two checkpoints of `--solver auto` (see
/// `advance_checkpoint`).
const CHECKPOINT_SPACING: u32 = 256;

/// Steps after a restart whose interior is probed for zero crossings.
const PROBED_STEPS_AFTER_RESTART: u32 = 4;

impl<'a, Rec: Recorder> EventLoop<'a, Rec> {
    fn new(
        model: &'a mut dyn ExecutableModel,
        program: &'a CausalProgram,
        opts: &'a SimOptions,
        r: Resolved,
        stats: &'a mut SimStats,
        recorder: &'a mut Rec,
    ) -> Self {
        let n = model.n_states();
        let nz = model.n_zero_crossings();
        let tol = state_tolerances(program, n, r.tolerance);
        let integ: Box<dyn Integrator> = match r.solver {
            Solver::Dopri5 | Solver::Auto => Box::new(Dopri5::new(n, tol.clone(), r.max_step)),
            Solver::Bdf => {
                let mut bdf = Bdf::new(n, tol.clone(), r.max_step, model.jacobian_pattern());
                bdf.set_jacobian_mode(opts.jacobian);
                Box::new(bdf)
            }
            Solver::Euler => Box::new(FixedStep::new(n, FixedMethod::Euler, r.max_step)),
            Solver::Rk4 => Box::new(FixedStep::new(n, FixedMethod::Rk4, r.max_step)),
        };
        stats.solver = if r.solver == Solver::Auto {
            "auto: dopri5".to_string()
        } else {
            integ.name().to_string()
        };
        EventLoop {
            may_switch_to_bdf: r.solver == Solver::Auto,
            tol,
            retired: IntegratorStats::default(),
            checkpoint: None,
            candidate: None,
            steps_since_candidate: 0,
            segment: false,
            ops: crossing_ops(program, nz),
            frozen: model.relation_values().to_vec(),
            g_prev: vec![0.0; nz],
            g: vec![0.0; nz],
            grid: output_grid(r.start, r.stop, r.interval),
            next_out: 0,
            x: vec![0.0; n],
            dx: vec![0.0; n],
            rows: 0,
            recent_events: VecDeque::new(),
            repeats: None,
            last_event_time: r.start,
            last_event_row: None,
            steps_since_restart: 0,
            model,
            program,
            opts,
            r,
            stats,
            recorder,
            integ,
        }
    }

    /// Returns the `terminate()` message if the model ended the run.
    fn run(&mut self) -> Result<Option<String>, SimErrorKind> {
        let t0 = self.r.start;
        self.model.states(&mut self.x);
        self.record_current(t0);
        self.next_out = 1;
        self.restart(t0)?;
        let stop = self.r.stop;
        while self.integ.t() < stop {
            if self.may_switch_to_bdf && self.integ.is_stiff() {
                self.switch_to_bdf()?;
            }
            let t = self.integ.t();
            // (A time event not after `t` would break the model's contract: ignore it.)
            let time_event = self
                .model
                .next_time_event(t)
                .filter(|&te| te > t && te <= stop);
            let t_limit = time_event.unwrap_or(stop);
            if let Err(e) = self.step(t_limit) {
                if self.back_to_checkpoint_with_bdf()? {
                    continue;
                }
                return Err(e);
            }
            if let Some(p) = &self.opts.progress {
                p(self.integ.t());
            }
            let landed_on_time_event = time_event == Some(self.integ.t());
            if let Some(c) = self.find_crossing(landed_on_time_event)? {
                self.record_grid_before(c.t_hi)?;
                // A `time >= p` relation flipping where the step landed on p is a time event.
                if landed_on_time_event && c.t_hi == self.integ.t() {
                    self.stats.time_events += 1;
                } else {
                    self.stats.state_events += 1;
                }
                if let Some(msg) = self.handle_event(c.t_lo, c.t_hi, Some(c.index))? {
                    return Ok(Some(msg));
                }
            } else if landed_on_time_event {
                let te = self.integ.t();
                self.record_grid_before(te)?;
                self.stats.time_events += 1;
                if let Some(msg) = self.handle_event(te, te, None)? {
                    return Ok(Some(msg));
                }
            } else {
                self.record_grid_through(self.integ.t())?;
                std::mem::swap(&mut self.g_prev, &mut self.g);
                self.advance_checkpoint();
            }
        }
        // Grid points left (only when the last event landed on the stop time).
        self.record_grid_through(stop)?;
        self.x.copy_from_slice(self.integ.x());
        if self.segment {
            // Leave the model evaluated at the end point, where the caller reads it.
            self.model
                .derivatives(stop, &self.x, &mut self.dx)
                .map_err(SimErrorKind::Runtime)?;
            return Ok(None);
        }
        self.model
            .terminate(stop, &self.x)
            .map_err(SimErrorKind::Runtime)?;
        Ok(None)
    }

    fn step(&mut self, t_limit: f64) -> Result<(), SimErrorKind> {
        let mut sys = ModelSystem {
            model: &mut *self.model,
        };
        self.steps_since_restart += 1;
        let result = self.integ.step(&mut sys, t_limit);
        match result {
            Ok(()) => {
                self.model.step_accepted(self.integ.t());
                Ok(())
            }
            Err(StepError::Model(e)) => Err(SimErrorKind::Runtime(e)),
            Err(e @ StepError::StepTooSmall { .. }) => Err(self
                .non_finite_derivatives()
                .unwrap_or(SimErrorKind::Integrator(e))),
            Err(e) => Err(SimErrorKind::Integrator(e)),
        }
    }

    /// After the step size collapsed: if the derivatives at the integrator's current point
    /// are not finite (a division by a parameter left at zero, a square root of a negative
    /// number), that is the cause, and naming the states says where to look.
    fn non_finite_derivatives(&mut self) -> Option<SimErrorKind> {
        let t = self.integ.t();
        self.x.copy_from_slice(self.integ.x());
        self.model.derivatives(t, &self.x, &mut self.dx).ok()?;
        let bad: Vec<String> = self
            .dx
            .iter()
            .enumerate()
            .filter(|(_, d)| !d.is_finite())
            .map(|(i, d)| {
                let name = self
                    .program
                    .states
                    .get(i)
                    .and_then(|&v| self.program.vars.get(v as usize))
                    .map_or_else(|| format!("state {i}"), |v| v.name.clone());
                format!("der({name}) = {d}")
            })
            .collect();
        if bad.is_empty() {
            return None;
        }
        Some(SimErrorKind::Runtime(RuntimeError {
            time: t,
            message: format!(
                "the derivatives of {} state(s) are not finite, so no step can be taken; \
                 check the parameters they depend on (a division by a parameter that is zero, \
                 e.g. one without a value)",
                bad.len()
            ),
            details: bad.into_iter().take(10).collect(),
        }))
    }

    /// `--solver auto`: DOPRI5 found the problem stiff; continue with BDF from the current
    /// point (for the rest of the run).
    fn switch_to_bdf(&mut self) -> Result<(), SimErrorKind> {
        let (t, x) = (self.integ.t(), self.integ.x().to_vec());
        let n = x.len();
        let mut bdf = Bdf::new(
            n,
            self.tol.clone(),
            self.r.max_step,
            self.model.jacobian_pattern(),
        );
        bdf.set_jacobian_mode(self.opts.jacobian);
        self.retired = self.retired.plus(&self.integ.stats());
        self.integ = Box::new(bdf);
        self.may_switch_to_bdf = false;
        self.stats.solver = format!("auto: dopri5, stiff from t = {t}: bdf");
        let mut sys = ModelSystem {
            model: &mut *self.model,
        };
        self.integ.reset(&mut sys, t, &x).map_err(|e| match e {
            StepError::Model(e) => SimErrorKind::Runtime(e),
            e => SimErrorKind::Integrator(e),
        })?;
        // Zero crossings at (t, x) are already in `g_prev`; only the probing restarts.
        self.steps_since_restart = 0;
        Ok(())
    }

    /// Restart the integrator at `t` from the model's current states.
    fn restart(&mut self, t: f64) -> Result<(), SimErrorKind> {
        self.model.states(&mut self.x);
        let mut sys = ModelSystem {
            model: &mut *self.model,
        };
        self.integ
            .reset(&mut sys, t, &self.x)
            .map_err(|e| match e {
                StepError::Model(e) => SimErrorKind::Runtime(e),
                e => SimErrorKind::Integrator(e),
            })?;
        self.steps_since_restart = 0;
        self.frozen.clear();
        self.frozen.extend_from_slice(self.model.relation_values());
        // One frozen value per zero crossing, whatever the model reports.
        self.frozen.resize(self.g.len(), false);
        self.eval_crossings(t, true)?;
        std::mem::swap(&mut self.g_prev, &mut self.g);
        if self.may_switch_to_bdf {
            // Going back never reaches before the newest checkpoint. The newest row stays
            // open: an event right after may merge into it (`merge_into_previous_event`).
            self.recorder.commit(self.recorder.rows().saturating_sub(1));
            self.candidate = None;
            self.steps_since_candidate = 0;
            self.checkpoint = Some(Checkpoint {
                t,
                x: self.x.clone(),
                recorded_rows: self.recorder.rows(),
                rows: self.rows,
                next_out: self.next_out,
                g_prev: self.g_prev.clone(),
            });
        }
        Ok(())
    }

    /// `--solver auto` between events: the point to go back to moves forward with the run,
    /// so that the rows before it become final (written out by a streaming recorder) instead
    /// of being held until the next event. The newest point is kept as a candidate and only
    /// becomes the checkpoint when the next candidate is taken, so the checkpoint always lies
    /// at least [`CHECKPOINT_SPACING`] steps or rows behind the integrator: DOPRI5 running
    /// away on a stiff problem is not caught at the first bad step, and going back must land
    /// before it.
    fn advance_checkpoint(&mut self) {
        if !self.may_switch_to_bdf {
            return;
        }
        self.steps_since_candidate += 1;
        let rows = self.recorder.rows();
        let since = self.candidate.as_ref().map_or(0, |c| c.recorded_rows);
        if self.steps_since_candidate < CHECKPOINT_SPACING
            && rows.saturating_sub(since) < CHECKPOINT_SPACING as usize
        {
            return;
        }
        let candidate = Checkpoint {
            t: self.integ.t(),
            x: self.integ.x().to_vec(),
            recorded_rows: rows,
            rows: self.rows,
            next_out: self.next_out,
            g_prev: self.g_prev.clone(),
        };
        self.steps_since_candidate = 0;
        if let Some(older) = self.candidate.replace(candidate) {
            self.recorder.commit(older.recorded_rows);
            self.checkpoint = Some(older);
        }
    }

    /// `--solver auto`: DOPRI5 failed (at loose tolerances a stiff problem can run away at
    /// the stability limit before the stiffness test has seen enough steps). Go back to the
    /// checkpoint, forget the rows recorded since, and integrate from there with BDF.
    /// False when there is nothing to go back to (not on auto's DOPRI5, or a recorder that
    /// cannot forget rows); the caller then reports the failure.
    fn back_to_checkpoint_with_bdf(&mut self) -> Result<bool, SimErrorKind> {
        if !self.may_switch_to_bdf {
            return Ok(false);
        }
        let Some(ck) = self.checkpoint.take() else {
            return Ok(false);
        };
        self.candidate = None;
        if !self.recorder.truncate(ck.recorded_rows) {
            return Ok(false);
        }
        let failed_at = self.integ.t();
        self.rows = ck.rows;
        self.next_out = ck.next_out;
        // put the checkpoint's states back into the model
        self.model
            .derivatives(ck.t, &ck.x, &mut self.dx)
            .map_err(SimErrorKind::Runtime)?;
        let mut bdf = Bdf::new(
            ck.x.len(),
            self.tol.clone(),
            self.r.max_step,
            self.model.jacobian_pattern(),
        );
        bdf.set_jacobian_mode(self.opts.jacobian);
        self.retired = self.retired.plus(&self.integ.stats());
        self.integ = Box::new(bdf);
        self.may_switch_to_bdf = false;
        self.stats.solver = format!(
            "auto: dopri5 failed at t = {failed_at}, bdf from t = {}",
            ck.t
        );
        let mut sys = ModelSystem {
            model: &mut *self.model,
        };
        self.integ
            .reset(&mut sys, ck.t, &ck.x)
            .map_err(|e| match e {
                StepError::Model(e) => SimErrorKind::Runtime(e),
                e => SimErrorKind::Integrator(e),
            })?;
        self.g_prev = ck.g_prev;
        self.steps_since_restart = 0;
        Ok(true)
    }

    /// Zero-crossing values into `self.g` at `t`: at the step end (`at_end`) from the
    /// integrator's states, otherwise from its dense output.
    fn eval_crossings(&mut self, t: f64, at_end: bool) -> Result<(), SimErrorKind> {
        if at_end {
            self.x.copy_from_slice(self.integ.x());
        } else {
            self.integ.interpolate(t, &mut self.x);
        }
        if self.g.is_empty() {
            return Ok(());
        }
        self.stats.zero_crossing_evaluations += 1;
        self.model
            .zero_crossings(t, &self.x, &mut self.g)
            .map_err(SimErrorKind::Runtime)
    }

    /// After a step: the earliest zero crossing inside it, if any relation changed.
    fn find_crossing(
        &mut self,
        landed_on_time_event: bool,
    ) -> Result<Option<Crossing>, SimErrorKind> {
        if self.g.is_empty() {
            return Ok(None);
        }
        let (t0, t_step_end) = (self.integ.t_prev(), self.integ.t());
        // Right after a restart, g starts near zero and a relation can flip and flip back
        // within one step (a ball bouncing ever lower): probe inside those steps too.
        let interior: &[f64] = if self.steps_since_restart <= PROBED_STEPS_AFTER_RESTART {
            &[0.25, 0.5, 0.75]
        } else {
            &[]
        };
        let probes = interior
            .iter()
            .map(|f| t0 + f * (t_step_end - t0))
            .chain(std::iter::once(t_step_end));
        let mut found: Option<(f64, Vec<usize>)> = None;
        for tp in probes {
            self.eval_crossings(tp, tp == t_step_end)?;
            let changed: Vec<usize> = (0..self.g.len())
                .filter(|&i| has_crossed(self.ops[i], self.frozen[i], self.g_prev[i], self.g[i]))
                .collect();
            if !changed.is_empty() {
                found = Some((tp, changed));
                break;
            }
        }
        let Some((t1, changed)) = found else {
            return Ok(None);
        };
        let landed_on_time_event = landed_on_time_event && t1 == t_step_end;
        let g_end = self.g.clone();
        let tol = root_time_tolerance(t0, t1);
        let mut best: Option<Crossing> = None;
        for i in changed {
            let (mut a, mut ga) = (t0, self.g_prev[i]);
            let limit = best.as_ref().map_or(t1, |c| c.t_hi);
            // Only a root before the best one so far matters.
            if limit < t1 {
                self.eval_crossings(limit, false)?;
                if !has_crossed(self.ops[i], self.frozen[i], self.g_prev[i], self.g[i]) {
                    continue;
                }
            }
            let gb = if limit < t1 { self.g[i] } else { g_end[i] };
            // A step that landed on a time event usually changed its relation right there.
            if landed_on_time_event && limit == t1 && t1 - tol > t0 {
                self.eval_crossings(t1 - tol, false)?;
                if !has_crossed(self.ops[i], self.frozen[i], self.g_prev[i], self.g[i]) {
                    (a, ga) = (t1 - tol, self.g[i]);
                }
            }
            let (op, frozen, g_start) = (self.ops[i], self.frozen[i], self.g_prev[i]);
            let (lo, hi) = illinois(a, ga, limit, gb, tol, |t| {
                self.eval_crossings(t, false)?;
                let g = self.g[i];
                Ok::<_, SimErrorKind>((g, has_crossed(op, frozen, g_start, g)))
            })?;
            best = Some(Crossing {
                t_lo: lo,
                t_hi: hi,
                index: i,
            });
        }
        Ok(best)
    }

    /// Handle an event located in `[t_lo, t_hi]`: left row, event iteration at `t_hi`, right
    /// row, restart. Returns the `terminate()` message if the model ended the run.
    fn handle_event(
        &mut self,
        t_lo: f64,
        t_hi: f64,
        crossing: Option<usize>,
    ) -> Result<Option<String>, SimErrorKind> {
        self.check_chattering(t_hi, crossing)?;
        // The rows of this event carry the time of the instant it belongs to.
        let merged = self.merge_into_previous_event(t_hi);
        let label = merged.unwrap_or(t_hi);
        // Left limit: continuous mode just before the event, labelled with the event time.
        // Evaluated even when its row is merged away: the event iteration starts from it.
        self.integ.interpolate(t_lo, &mut self.x);
        if t_lo == self.integ.t() {
            self.x.copy_from_slice(self.integ.x());
        }
        self.model
            .derivatives(t_lo, &self.x, &mut self.dx)
            .map_err(SimErrorKind::Runtime)?;
        if merged.is_none() {
            self.record_current(t_hi);
        }
        // Right limit.
        if t_hi == self.integ.t() {
            self.x.copy_from_slice(self.integ.x());
        } else {
            self.integ.interpolate(t_hi, &mut self.x);
        }
        let outcome = self
            .model
            .event_update(t_hi, &mut self.x)
            .map_err(SimErrorKind::Runtime)?;
        self.record_current(label);
        self.last_event_row = Some((label, self.recorder.rows()));
        // Grid points at the event time are represented by the event rows.
        while self.next_out < self.grid.len() && self.grid[self.next_out] <= t_hi {
            self.next_out += 1;
        }
        if let Some(msg) = outcome.terminate {
            self.model
                .terminate(t_hi, &self.x)
                .map_err(SimErrorKind::Runtime)?;
            return Ok(Some(msg));
        }
        self.stats.restarts += 1;
        self.restart(t_hi).map(|_| None)
    }

    /// An event that follows the previous one closer than event location can resolve
    /// (within [`root_time_tolerance`], with no row recorded in between) happens at the same
    /// instant as far as the result can tell: a friction element whose stuck phase ends at
    /// `w = 0` switches its `startForward` flag at one event and its mode, once `w` has left
    /// zero, at a second one a few ulps later. Its rows are merged into the previous event's:
    /// the previous right-limit row (a state that lasted no measurable time) is dropped and
    /// this event records no left-limit row, so the result shows the left limit before the
    /// first event and the right limit after the last, both at the first event's time (two
    /// rows with one time mark an event). Returns that time; `None` (nothing changed) when
    /// the events are apart or the recorder has already written the row out.
    fn merge_into_previous_event(&mut self, t: f64) -> Option<f64> {
        let (t_prev, rows_after) = self.last_event_row?;
        let rows = self.recorder.rows();
        if rows != rows_after || rows == 0 || t - t_prev > root_time_tolerance(t_prev, t) {
            return None;
        }
        if !self.recorder.truncate(rows - 1) {
            return None;
        }
        self.rows -= 1;
        for ck in [&mut self.checkpoint, &mut self.candidate]
            .into_iter()
            .flatten()
        {
            ck.recorded_rows = ck.recorded_rows.min(rows - 1);
            ck.rows = ck.rows.min(self.rows);
        }
        Some(t_prev)
    }

    fn check_chattering(&mut self, t: f64, crossing: Option<usize>) -> Result<(), SimErrorKind> {
        let guard = &self.opts.chattering;
        let span = (self.r.stop - self.r.start).max(1.0);
        let tiny = guard.tiny_advance * span.max(t.abs());
        let advance = t - self.last_event_time;
        self.last_event_time = t;
        let description = |i: usize| {
            self.program
                .zero_crossings
                .get(i)
                .map_or_else(|| format!("zero crossing {i}"), |z| z.description.clone())
        };
        if let Some(i) = crossing {
            let count = match self.repeats {
                Some((j, c)) if j == i && advance < tiny => c + 1,
                _ => 1,
            };
            self.repeats = Some((i, count));
            if count > guard.max_repeats {
                return Err(SimErrorKind::Chattering(Chattering {
                    time: t,
                    zero_crossing: Some(i),
                    description: description(i),
                    events: count,
                }));
            }
        }
        self.recent_events.push_back(t);
        if self.recent_events.len() > guard.max_events_in_window {
            self.recent_events.pop_front();
            let oldest = self.recent_events.front().copied().unwrap_or(t);
            if t - oldest < guard.window * span {
                return Err(SimErrorKind::Chattering(Chattering {
                    time: t,
                    zero_crossing: None,
                    description: crossing.map(description).unwrap_or_default(),
                    events: self.recent_events.len(),
                }));
            }
        }
        Ok(())
    }

    /// Record the model's current values as a row at time `t`.
    fn record_current(&mut self, t: f64) {
        self.recorder.record(t, self.model.values());
        self.rows += 1;
        if !self.may_switch_to_bdf {
            // No way back any more: every row but the newest is final (a streaming recorder
            // writes it); the newest may still merge with an event right after it.
            self.recorder.commit(self.recorder.rows().saturating_sub(1));
        }
    }

    /// Output grid points strictly before `t`.
    fn record_grid_before(&mut self, t: f64) -> Result<(), SimErrorKind> {
        self.record_grid(|tk| tk < t)
    }

    /// Output grid points up to and including `t`.
    fn record_grid_through(&mut self, t: f64) -> Result<(), SimErrorKind> {
        self.record_grid(|tk| tk <= t)
    }

    fn record_grid(&mut self, include: impl Fn(f64) -> bool) -> Result<(), SimErrorKind> {
        while self.next_out < self.grid.len() && include(self.grid[self.next_out]) {
            let tk = self.grid[self.next_out];
            if tk == self.integ.t() {
                self.x.copy_from_slice(self.integ.x());
            } else {
                self.integ.interpolate(tk, &mut self.x);
            }
            self.model
                .output_point(tk, &self.x, &mut self.dx)
                .map_err(SimErrorKind::Runtime)?;
            self.record_current(tk);
            self.next_out += 1;
        }
        Ok(())
    }
}
