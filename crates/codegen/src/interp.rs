//! The interpreter of the causal program: compiled steps (see `compile.rs`) executed on a
//! `Machine`, plus the event logic (modes, event iteration, samples, time events) behind
//! [`ExecutableModel`].

use crate::compile::{compile_program, CallTarget, Code, LinearStep, Step, WhenStep};
use crate::func::Env;
use crate::linalg::DenseLu;
use crate::machine::{DelayLine, Machine};
use crate::model::{EventOutcome, ExecutableModel, ModelStats, RuntimeError};
use crate::tangent_slices::Slice;
use crate::tape::{compare_with_hysteresis, hysteresis_shift, run_until_call, Instr, Stop, Tape};
use crate::value::{to_modelica_string, Value};
use moss_frontend::flat::AssertLevel;
use moss_symbolic::program::{ValueType, VarKind};
use moss_symbolic::CausalProgram;
use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

/// Upper bound on the passes of one event iteration.
pub const MAX_EVENT_ITERATIONS: u32 = 100;

/// A relation that changes again at an event within this time (relative to max(1, |t|))
/// of its previous change is chattering.
const CHATTER_TIME: f64 = 1e-9;

/// Executes a [`CausalProgram`]; implements [`crate::ExecutableModel`].
///
/// Cloning gives an independent instance in the same state that shares the compiled code
/// (immutable after compilation): how a caller that runs a program many times (parameter
/// sweeps in `moss-python`) avoids compiling it again for every run.
#[derive(Clone)]
pub struct Interpreter {
    /// Shared with the caller where it needs the program too (the result table, options):
    /// a large model's program is over a gigabyte, too much to copy.
    pub program: std::sync::Arc<CausalProgram>,
    code: Arc<Code>,
    m: Machine,
    stats: ModelStats,
    overrides: Vec<(u32, f64)>,
    /// Per sample: start, interval, index of the next instant.
    sample_state: Vec<(f64, f64, u64)>,
    /// Event time of each `time <op> e` zero crossing (NaN for the others).
    time_events: Vec<f64>,
    pending_terminate: Option<String>,
    /// Time of the last event at which each relation changed (NaN: never).
    last_change: Vec<f64>,
    /// The memory holds a continuous-mode evaluation at its current time and states (lets
    /// `zero_crossings` right after `derivatives` at the same point skip the blocks).
    continuous_valid: bool,
    /// The slices of the tangent program run so far, by the positions of their nonzero
    /// seeds (one per colour of Jacobian columns; see `tangent_slices`).
    tangent_slices: HashMap<Vec<u32>, Arc<Slice>>,
    /// Every tangent slot holds zero between runs of the tangent program (false until the
    /// first run has cleared them, and after a run that failed or a restored snapshot).
    tangents_zeroed: bool,
}

/// At most this many seed patterns keep their slice (a model has one per colour); others run
/// the whole tangent program.
const MAX_TANGENT_SLICES: usize = 4096;

/// The run-time state of an [`Interpreter`] (see [`Interpreter::snapshot`]).
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Snapshot {
    m: Machine,
    stats: ModelStats,
    overrides: Vec<(u32, f64)>,
    sample_state: Vec<(f64, f64, u64)>,
    time_events: Vec<f64>,
    pending_terminate: Option<String>,
    last_change: Vec<f64>,
    continuous_valid: bool,
}

impl Interpreter {
    /// Compile the program's expressions into the interpreter's internal form.
    pub fn new(
        program: impl Into<std::sync::Arc<CausalProgram>>,
    ) -> Result<Interpreter, RuntimeError> {
        let program = program.into();
        let code = compile_program(&program).map_err(|e| RuntimeError {
            time: 0.0,
            message: format!("cannot compile `{}`: {e}", program.name),
            details: vec![],
        })?;
        let n = program.vars.len();
        let mut m = Machine {
            mem: vec![0.0; code.mem_size],
            n,
            rel: vec![false; program.zero_crossings.len()],
            rel_touched: vec![false; program.zero_crossings.len()],
            // switched on per relation once it chatters (see `note_relation_changes`)
            hysteresis: vec![0.0; program.zero_crossings.len()],
            homotopy_lambda: 1.0,
            sample_active: vec![false; program.samples.len()],
            when_cur: vec![false; code.when_count as usize],
            when_pre: vec![false; code.when_count as usize],
            delays: vec![DelayLine::default(); code.delay_recorders.len()],
            ..Machine::default()
        };
        for &(r, x) in &code.static_init {
            m.mem[r as usize] = x;
        }
        for (i, v) in program.vars.iter().enumerate() {
            // a String slot holds a handle: 0 is the empty string until a block writes it
            let start = if v.ty == ValueType::String {
                0.0
            } else {
                v.start
            };
            m.mem[i] = start;
            m.mem[n + i] = start;
        }
        Ok(Interpreter {
            sample_state: vec![(0.0, 0.0, 0); program.samples.len()],
            time_events: vec![f64::NAN; program.zero_crossings.len()],
            last_change: vec![f64::NAN; program.zero_crossings.len()],
            program,
            code: Arc::new(code),
            m,
            stats: ModelStats::default(),
            overrides: vec![],
            pending_terminate: None,
            continuous_valid: false,
            tangent_slices: HashMap::default(),
            tangents_zeroed: false,
        })
    }

    /// Number of tape instructions of the compiled program (for benchmarks and reports).
    pub fn instruction_count(&self) -> usize {
        self.code.n_instructions
    }

    /// Steps of the simulation that run in event mode only (`event_only.rs`), and all of
    /// them.
    pub fn event_only_steps(&self) -> (usize, usize) {
        let only = self.code.steps_event_only.iter().filter(|&&e| e).count();
        (only, self.code.steps.len())
    }

    /// Warnings raised by `assert(..., level = AssertionLevel.warning)`.
    pub fn warning_messages(&self) -> &[String] {
        &self.m.warnings
    }

    /// A copy of everything that changes while the model runs (memory, `pre` values,
    /// relations, samples, delay histories; not the compiled code), to go back to later with
    /// [`Interpreter::restore_snapshot`] (an FMU's `fmi2GetFMUstate`/`fmi2SetFMUstate`).
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            m: self.m.clone(),
            stats: self.stats.clone(),
            overrides: self.overrides.clone(),
            sample_state: self.sample_state.clone(),
            time_events: self.time_events.clone(),
            pending_terminate: self.pending_terminate.clone(),
            last_change: self.last_change.clone(),
            continuous_valid: self.continuous_valid,
        }
    }

    /// Go back to a [`Interpreter::snapshot`] of this interpreter.
    pub fn restore_snapshot(&mut self, s: &Snapshot) {
        self.m.clone_from(&s.m);
        self.stats.clone_from(&s.stats);
        self.overrides.clone_from(&s.overrides);
        self.sample_state.clone_from(&s.sample_state);
        self.time_events.clone_from(&s.time_events);
        self.pending_terminate.clone_from(&s.pending_terminate);
        self.last_change.clone_from(&s.last_change);
        self.continuous_valid = s.continuous_valid;
        self.tangents_zeroed = false;
    }

    /// Drive the top-level input in `slot` from outside (an FMU's `fmi2SetReal`): the value
    /// holds from now on, and also through later calls of `initialize` (which otherwise
    /// start every input at its start value).
    pub fn set_input(&mut self, slot: u32, value: f64) -> Result<(), RuntimeError> {
        let kind = self.program.vars.get(slot as usize).map(|v| v.kind);
        if kind != Some(VarKind::Input) {
            return Err(RuntimeError {
                time: self.m.time(),
                message: format!("cannot set slot {slot} as an input: it is not a top-level input"),
                details: vec![],
            });
        }
        self.overrides.retain(|(s, _)| *s != slot);
        self.overrides.push((slot, value));
        self.m.mem[slot as usize] = value;
        self.continuous_valid = false;
        Ok(())
    }

    /// The slice of the tangent program for the seeds at positions `nonzero`, found once
    /// per pattern; `None` runs the whole program. Clears every tangent slot before the
    /// first sliced run (their values from elsewhere would stand for steps it skips).
    fn tangent_slice(&mut self, nonzero: Vec<u32>) -> Option<Arc<Slice>> {
        let ts = self.code.tangent_steps.as_ref()?;
        if !self.tangents_zeroed {
            for &v in &ts.tangent_writes {
                self.m.mem[v as usize] = 0.0;
            }
        }
        // a run that fails leaves tangents behind: the next one clears them again
        self.tangents_zeroed = false;
        if let Some(s) = self.tangent_slices.get(&nonzero) {
            return Some(Arc::clone(s));
        }
        if self.tangent_slices.len() >= MAX_TANGENT_SLICES {
            return None;
        }
        let s = Arc::new(ts.slice(&nonzero));
        self.tangent_slices.insert(nonzero, Arc::clone(&s));
        Some(s)
    }

    fn rt(&mut self) -> Rt<'_> {
        Rt {
            code: &self.code,
            m: &mut self.m,
            stats: &mut self.stats,
            program: &self.program,
        }
    }

    fn set_states(&mut self, t: f64, x: &[f64]) {
        self.m.set_time(t);
        for (&s, &v) in self.program.states.iter().zip(x) {
            self.m.mem[s as usize] = v;
        }
    }

    fn get_states(&self, x: &mut [f64]) {
        for (xi, &s) in x.iter_mut().zip(&self.program.states) {
            *xi = self.m.mem[s as usize];
        }
    }

    /// Evaluate the blocks in continuous mode.
    fn eval_continuous(&mut self) -> Result<(), RuntimeError> {
        self.m.event_mode = false;
        let mut rt = self.rt();
        let code = rt.code;
        // blocks whose inputs are constant between events keep their values (event_only.rs),
        // after they have run once in continuous mode since the event
        let settled = rt.m.event_only_settled;
        let result = code
            .steps
            .iter()
            .zip(&code.steps_event_only)
            .filter(|(_, &event_only)| !(event_only && settled))
            .try_for_each(|(s, _)| rt.run_step(s))
            .and_then(|()| rt.record_delays());
        self.continuous_valid = result.is_ok();
        self.m.event_only_settled |= result.is_ok();
        result
    }

    /// Only the blocks the zero crossings need (`Code::zc_steps`), in continuous mode: the
    /// other variables keep values of another point, so the memory is no evaluation at
    /// this point for anything else (`continuous_valid` is false until the next full one).
    fn eval_zero_crossing_blocks(&mut self) -> Result<(), RuntimeError> {
        self.m.event_mode = false;
        self.continuous_valid = false;
        let mut rt = self.rt();
        let code = rt.code;
        let Some((steps, event_only)) = &code.zc_steps else {
            return Ok(());
        };
        let settled = rt.m.event_only_settled;
        steps
            .iter()
            .zip(event_only)
            .filter(|(_, &event_only)| !(event_only && settled))
            .try_for_each(|(s, _)| rt.run_step(s))
    }

    /// The guesses of the nonlinear solves of an evaluation at time `t`. Going forward in
    /// time (the stages of a step, the iterations of an implicit method), each evaluation
    /// continues from the one before: when a stage ends up past the point where the branch
    /// of a loop with several solutions ends (an impasse, as a multivibrator's trigger
    /// reaches), the jump to the other branch sticks. Going back, the evaluation starts from
    /// the accepted trajectory instead, not from a trial stage that may lie past a switching
    /// point it has not reached: a step retried smaller from where the last accepted step
    /// ended, and output points and the root search of an event inside that step from where
    /// it started (see [`ExecutableModel::step_accepted`]).
    fn start_from_guesses(&mut self, t: f64) {
        let forward = self.m.last_evaluation.is_some_and(|last| t >= last);
        self.m.last_evaluation = Some(t);
        if forward {
            return;
        }
        let guess = match self.m.step_end_time {
            Some(end) if t >= end => &self.m.step_end_guess,
            _ => &self.m.step_start_guess,
        };
        put_guesses(&mut self.m.mem, &self.code.guess_slots, guess);
    }

    /// True when the last continuous evaluation was at exactly `(t, x)`.
    fn evaluated_at(&self, t: f64, x: &[f64]) -> bool {
        self.continuous_valid
            && self.m.time().to_bits() == t.to_bits()
            && self
                .program
                .states
                .iter()
                .zip(x)
                .all(|(&s, xi)| self.m.mem[s as usize].to_bits() == xi.to_bits())
    }

    /// Start/interval of every sample and the instants due at `t0`.
    fn start_samples(&mut self, t0: f64) -> Result<(), RuntimeError> {
        for i in 0..self.code.samples.len() {
            let (start, interval) = {
                let mut rt = self.rt();
                let code = rt.code;
                let s = &code.samples[i];
                rt.run_tape(&s.code)?;
                (rt.m.mem[s.start as usize], rt.m.mem[s.interval as usize])
            };
            if interval.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) || !start.is_finite()
            {
                return Err(self.error(format!(
                    "sample {i}: interval must be positive and start finite (start = {start}, interval = {interval})"
                )));
            }
            let k = if start >= t0 {
                0
            } else {
                ((t0 - start) / interval - 1e-9).ceil().max(0.0) as u64
            };
            self.sample_state[i] = (start, interval, k);
        }
        Ok(())
    }

    fn sample_time(&self, i: usize) -> f64 {
        let (start, interval, k) = self.sample_state[i];
        start + k as f64 * interval
    }

    /// Mark the samples whose instant is `t` as active.
    fn activate_samples(&mut self, t: f64) {
        for i in 0..self.sample_state.len() {
            let ts = self.sample_time(i);
            let interval = self.sample_state[i].1;
            self.m.sample_active[i] = t >= ts - sample_eps(ts, interval);
        }
    }

    /// Move active samples to their next instant.
    fn advance_samples(&mut self, t: f64) {
        for i in 0..self.sample_state.len() {
            if self.m.sample_active[i] {
                let interval = self.sample_state[i].1;
                while self.sample_time(i) <= t + sample_eps(t, interval) {
                    self.sample_state[i].2 += 1;
                }
                self.m.sample_active[i] = false;
            }
        }
    }

    fn update_time_events(&mut self) -> Result<(), RuntimeError> {
        for i in 0..self.code.zc.len() {
            let mut rt = self.rt();
            let code = rt.code;
            if let Some((tc, r)) = &code.zc[i].time_event {
                rt.run_tape(tc)?;
                let te = rt.m.mem[*r as usize];
                self.time_events[i] = te;
            }
        }
        Ok(())
    }

    /// After the start or an event at `t`: the solution there is where the next step
    /// starts, so it is the guess of every evaluation that goes back to the step's start
    /// (output points inside the first step, a retried step). Taking the end of that first
    /// step instead let an output point early in a long first step start Newton from a
    /// solution far away (a picosecond ramp in `Spice3.Examples.Inverter`: 0.72 V for 0.125 V).
    fn restart_from_here(&mut self, t: f64) {
        let m = &mut self.m;
        m.step_end_guess.clear();
        m.step_end_guess
            .extend(self.code.guess_slots.iter().map(|&s| m.mem[s as usize]));
        m.step_end_time = Some(t);
    }

    fn error(&self, message: String) -> RuntimeError {
        RuntimeError {
            time: self.m.time(),
            message,
            details: vec![],
        }
    }

    /// Event iteration: repeat the blocks in event mode until no discrete variable and no
    /// relation changes.
    fn event_iteration(&mut self) -> Result<u32, RuntimeError> {
        self.m.event_mode = true;
        self.m.event_only_settled = false;
        let result = self.event_iteration_inner();
        self.m.event_mode = false;
        result
    }

    fn event_iteration_inner(&mut self) -> Result<u32, RuntimeError> {
        let rel_at_start = self.m.rel.clone();
        let mut rel_before = self.m.rel.clone();
        let mut flips = vec![0u32; rel_before.len()];
        let result = self.event_passes(&mut rel_before, &mut flips);
        self.note_relation_changes(&rel_at_start);
        result
    }

    /// Switch the hysteresis on for relations that chatter: one that flipped back within
    /// this event iteration, or that changes again at an event right after the previous one
    /// (the operands of a relation equal up to rounding in the mode it selects, a lag whose
    /// error decays into noise). Relations that switch cleanly keep switching exactly at zero.
    fn note_relation_changes(&mut self, rel_at_start: &[bool]) {
        let t = self.m.time();
        let tiny = CHATTER_TIME * t.abs().max(1.0);
        for (i, &before) in rel_at_start.iter().enumerate() {
            if self.m.rel[i] == before {
                continue;
            }
            if t - self.last_change[i] <= tiny {
                self.m.hysteresis[i] = self.code.zc[i].hysteresis;
            }
            self.last_change[i] = t;
        }
    }

    fn event_passes(
        &mut self,
        rel_before: &mut [bool],
        flips: &mut [u32],
    ) -> Result<u32, RuntimeError> {
        for pass in 1..=MAX_EVENT_ITERATIONS {
            self.stats.event_iterations += 1;
            self.m.rel_touched.iter_mut().for_each(|t| *t = false);
            {
                let mut rt = self.rt();
                let code = rt.code;
                rt.run_steps(&code.steps)?;
                rt.record_delays()?;
                rt.refresh_untouched_relations()?;
            }
            let changed = self.any_change_since_pre(rel_before);
            for (i, (&now, &before)) in self.m.rel.iter().zip(rel_before.iter()).enumerate() {
                if now != before {
                    flips[i] += 1;
                    if flips[i] >= 2 {
                        self.m.hysteresis[i] = self.code.zc[i].hysteresis;
                    }
                }
            }
            if !changed {
                return Ok(pass);
            }
            if pass == MAX_EVENT_ITERATIONS {
                let changed = self.changes_since_pre(rel_before);
                return Err(RuntimeError {
                    time: self.m.time(),
                    message: format!(
                        "event iteration did not converge after {MAX_EVENT_ITERATIONS} passes: \
                         the model keeps switching (discrete variables or conditions depend on \
                         each other in a loop)"
                    ),
                    details: changed,
                });
            }
            self.m.copy_values_to_pre();
            rel_before.copy_from_slice(&self.m.rel);
        }
        Ok(MAX_EVENT_ITERATIONS)
    }

    /// Did a discrete variable or a relation change in the last pass? (Checked after every
    /// pass of every event: no text is built here, see [`Self::changes_since_pre`].)
    fn any_change_since_pre(&self, rel_before: &[bool]) -> bool {
        let n = self.m.n;
        let discrete = self.code.discrete.iter().any(|&v| {
            let (now, pre) = (self.m.mem[v as usize], self.m.mem[n + v as usize]);
            now != pre && !(now.is_nan() && pre.is_nan())
        });
        discrete || self.m.rel.iter().zip(rel_before).any(|(a, b)| a != b)
    }

    /// Descriptions of discrete variables and relations that changed in the last pass.
    fn changes_since_pre(&self, rel_before: &[bool]) -> Vec<String> {
        let mut out = vec![];
        let n = self.m.n;
        for &v in &self.code.discrete {
            let (now, pre) = (self.m.mem[v as usize], self.m.mem[n + v as usize]);
            if now != pre && !(now.is_nan() && pre.is_nan()) {
                out.push(format!(
                    "{} changed from {pre} to {now}",
                    self.program.vars[v as usize].name
                ));
            }
        }
        for (i, (&now, &before)) in self.m.rel.iter().zip(rel_before).enumerate() {
            if now != before {
                out.push(format!(
                    "condition `{}` changed from {before} to {now}",
                    self.program.zero_crossings[i].description
                ));
            }
        }
        out
    }
}

/// How far before its instant `ts` a sample of period `interval` counts as reached: the
/// round-off of the event time only. Relative to the time itself, never a fixed amount (a
/// picosecond pulse source, `Spice3.Examples.Inverter`, saw its next tick 1 ps early with
/// an absolute 1e-12 and restarted its pulse in the middle), and a small fraction of the
/// period at most (ticks of a fast sampler late in a long run stay apart).
fn sample_eps(ts: f64, interval: f64) -> f64 {
    (1e-12 * ts.abs()).min(1e-6 * interval)
}

/// Execution context: compiled code + machine + counters.
struct Rt<'a> {
    code: &'a Code,
    m: &'a mut Machine,
    stats: &'a mut ModelStats,
    program: &'a CausalProgram,
}

impl Rt<'_> {
    fn error(&self, message: String, details: Vec<String>) -> RuntimeError {
        RuntimeError {
            time: self.m.time(),
            message,
            details,
        }
    }

    fn var_name(&self, v: u32) -> &str {
        &self.program.vars[v as usize].name
    }

    fn env(&mut self) -> Env<'_> {
        Env {
            m: self.m,
            funcs: &self.code.funcs,
            depth: 0,
        }
    }

    fn run_tape(&mut self, tape: &Tape) -> Result<(), RuntimeError> {
        let mut pc = 0;
        let native = tape.native();
        loop {
            // SAFETY: `tape` comes from `compile_program`, which checked every operand against
            // `code.mem_size`, and the machine memory was allocated with that size.
            let stop = match native {
                Some(native) => unsafe { native.run(pc, self.m) },
                None => unsafe { run_until_call(tape, pc, self.m) },
            };
            match stop {
                Stop::Done => return Ok(()),
                Stop::Call(p) => {
                    if let Instr::Generic { d, call } = tape[p] {
                        let expr = &self.code.generic[call as usize];
                        if let Some(x) = self.planned_generic_call(call as usize)? {
                            self.m.mem[d as usize] = x;
                            pc = p + 1;
                            continue;
                        }
                        let v = self
                            .env()
                            .eval(expr, &mut vec![])
                            .and_then(|v| v.as_f64())
                            .map_err(|e| self.error(e, vec![]))?;
                        self.m.mem[d as usize] = v;
                    }
                    pc = p + 1;
                }
            }
        }
    }

    /// A generic expression that is a call of a compiled function, by its call plan:
    /// `None` when it is not such a call or has no plan.
    fn planned_generic_call(&mut self, call: usize) -> Result<Option<f64>, RuntimeError> {
        let code = self.code;
        let crate::func::FExpr::Call(f, args, index) = &code.generic[call] else {
            return Ok(None);
        };
        let Some(sf) = code.funcs[*f as usize].scalar.as_deref() else {
            return Ok(None);
        };
        // the plan hands over flattened outputs: an array output is taken whole elsewhere
        let Some(position) = sf.flat_position(*index) else {
            return Ok(None);
        };
        let plan =
            code.generic_plans[call].get_or_init(|| crate::scalar_fn::CallPlan::new(sf, args));
        let Some(plan) = plan else {
            return Ok(None);
        };
        let mut x = None;
        self.env()
            .call_planned(*f, plan, &mut |k, v| {
                if k == position {
                    x = Some(v);
                }
            })
            .map_err(|e| self.error(e, vec![]))?;
        match x {
            Some(x) => Ok(Some(x)),
            None => Err(self.error(
                format!(
                    "function `{}` has no output {}",
                    code.funcs[*f as usize].name,
                    index + 1
                ),
                vec![],
            )),
        }
    }

    /// Record the current value of every delayed expression in its history.
    fn record_delays(&mut self) -> Result<(), RuntimeError> {
        for (i, r) in self.code.delay_recorders.iter().enumerate() {
            self.run_tape(&r.code)?;
            let (now, x) = (self.m.time(), self.m.mem[r.out as usize]);
            let event = self.m.event_mode;
            self.m.delays[i].record(now, x, event);
        }
        Ok(())
    }

    fn run_steps(&mut self, steps: &[Step]) -> Result<(), RuntimeError> {
        for s in steps {
            self.run_step(s)?;
        }
        Ok(())
    }

    fn run_step(&mut self, s: &Step) -> Result<(), RuntimeError> {
        match s {
            Step::Tape(code) => self.run_tape(code),
            Step::Scalar(s) => self.solve_scalar(s),
            Step::Linear(l) => self.solve_linear(l),
            Step::Nonlinear(nl) => self.solve_nonlinear(nl),
            Step::CallOutputs {
                code,
                target,
                args,
                outputs,
                plan,
                directions,
                direction_cells,
            } => {
                self.run_tape(code)?;
                if !directions.is_empty()
                    && self.along_zero_direction(args, directions, direction_cells)
                {
                    for slot in outputs.iter().flatten() {
                        self.m.mem[*slot as usize] = 0.0;
                    }
                    return Ok(());
                }
                self.call_outputs(target, args, outputs, plan)
            }
            Step::Algorithm {
                stmts,
                frame_size,
                discrete_outputs,
                continuous_outputs,
            } => {
                // Modelica semantics of entering an algorithm section
                for &v in discrete_outputs {
                    let pre = self.m.mem[self.m.pre_index(v)];
                    self.m.mem[v as usize] = pre;
                }
                for &(v, start) in continuous_outputs {
                    self.m.mem[v as usize] = start;
                }
                let mut frame = vec![Value::Int(0); *frame_size as usize];
                self.env()
                    .exec_block(stmts, &mut frame)
                    .map_err(|e| self.error(e, vec![]))?;
                // Discrete variables change only at events. The algorithm evaluates its
                // relations live, so between events (and at the left limit of an event, which
                // becomes `pre`) its discrete outputs keep the values of the last event; the
                // relations' zero crossings stop the integration where they switch.
                if !self.m.event_mode && !self.m.initial {
                    for &v in discrete_outputs {
                        let pre = self.m.mem[self.m.pre_index(v)];
                        self.m.mem[v as usize] = pre;
                    }
                }
                Ok(())
            }
            Step::When(branches) => self.run_when(branches),
            Step::Reinit { code, out, var } => {
                self.run_tape(code)?;
                self.m.mem[*var as usize] = self.m.mem[*out as usize];
                self.m.states_changed = true;
                Ok(())
            }
            Step::Value { expr, out } => {
                let mut env = self.env();
                let x = env.eval(expr, &mut vec![]).and_then(|v| env.slot_number(v));
                self.m.mem[*out as usize] = x.map_err(|e| self.error(e, vec![]))?;
                Ok(())
            }
            Step::Assert {
                code,
                out,
                value_cond,
                message,
                level,
            } => {
                self.run_tape(code)?;
                if let Some(c) = value_cond {
                    let holds = self.env().eval(c, &mut vec![]).and_then(|v| v.as_bool());
                    if holds.map_err(|e| self.error(e, vec![]))? {
                        return Ok(());
                    }
                } else if self.m.mem[*out as usize] != 0.0 {
                    return Ok(());
                }
                let text = self.message(message);
                match level {
                    AssertLevel::Error => {
                        Err(self.error(format!("assertion failed: {text}"), vec![]))
                    }
                    AssertLevel::Warning => {
                        if !self.m.warnings.contains(&text) {
                            eprintln!("warning: at time {}: assertion: {text}", self.m.time());
                            self.m.warnings.push(text);
                        }
                        Ok(())
                    }
                }
            }
            Step::Terminate { message } => {
                let text = self.message(message);
                self.m.terminate = Some(text);
                Ok(())
            }
        }
    }

    fn message(&mut self, e: &crate::func::FExpr) -> String {
        match self.env().eval(e, &mut vec![]) {
            Ok(v) => to_modelica_string(&v, 6),
            Err(err) => format!("(message could not be evaluated: {err})"),
        }
    }

    /// A branch fires when one of its conditions is true and was false before (event mode),
    /// or, during initialization, when it may fire at initial time and a condition is true.
    fn run_when(&mut self, branches: &[WhenStep]) -> Result<(), RuntimeError> {
        if !self.m.event_mode && !self.m.initial {
            return Ok(());
        }
        let n = self.m.n;
        for b in branches {
            let fires = b.conditions.iter().any(|&c| {
                let now = self.m.mem[c as usize] != 0.0;
                if self.m.initial {
                    b.fires_at_initial && now
                } else {
                    now && self.m.mem[n + c as usize] == 0.0
                }
            });
            if fires {
                return self.run_steps(&b.body);
            }
        }
        Ok(())
    }

    /// Whether every direction argument (positions `directions` of `args`) is zero. The
    /// arguments' memory cells are gathered once (`cells`); an argument that is not a cell,
    /// an array literal of cells or a zero constant counts as not zero.
    fn along_zero_direction(
        &self,
        args: &[crate::func::FExpr],
        directions: &[usize],
        cells: &std::sync::OnceLock<Option<Box<[u32]>>>,
    ) -> bool {
        let cells = cells.get_or_init(|| {
            let mut out = Vec::new();
            directions
                .iter()
                .all(|&k| args.get(k).is_some_and(|a| zero_test_cells(a, &mut out)))
                .then(|| out.into_boxed_slice())
        });
        match cells {
            Some(cells) => cells.iter().all(|&r| self.m.mem[r as usize] == 0.0),
            None => false,
        }
    }

    fn call_outputs(
        &mut self,
        target: &CallTarget,
        args: &[crate::func::FExpr],
        outputs: &[Option<u32>],
        plan: &std::sync::OnceLock<Option<crate::scalar_fn::CallPlan>>,
    ) -> Result<(), RuntimeError> {
        let mut frame = vec![];
        let code = self.code;
        if let CallTarget::User(f) = target {
            if let Some(sf) = code.funcs[*f as usize].scalar.as_deref() {
                let plan = plan.get_or_init(|| crate::scalar_fn::CallPlan::new(sf, args));
                if let Some(plan) = plan {
                    let mut stored = 0;
                    let mut values = [0.0f64; 16];
                    let mut rest = Vec::new();
                    // outputs go through a small buffer: `mem` is borrowed by the call
                    let r = self.env().call_planned(*f, plan, &mut |k, v| {
                        stored = stored.max(k + 1);
                        match values.get_mut(k) {
                            Some(slot) => *slot = v,
                            None => rest.push(v),
                        }
                    });
                    r.map_err(|e| self.error(e, vec![]))?;
                    if stored >= outputs.len() {
                        for (k, o) in outputs.iter().enumerate() {
                            if let Some(slot) = o {
                                let v = values.get(k).copied().unwrap_or_else(|| rest[k - 16]);
                                self.m.mem[*slot as usize] = v;
                            }
                        }
                        return Ok(());
                    }
                }
                let mut outs = Vec::with_capacity(outputs.len());
                let called = self
                    .env()
                    .call_scalar_exprs(*f, args, &mut frame, &mut outs);
                match called {
                    Ok(true) if outs.len() >= outputs.len() => {
                        for (o, x) in outputs.iter().zip(outs) {
                            if let Some(slot) = o {
                                self.m.mem[*slot as usize] = x;
                            }
                        }
                        return Ok(());
                    }
                    Ok(_) => {}
                    Err(e) => return Err(self.error(e, vec![])),
                }
            }
        }
        let mut env = self.env();
        let result = (|| {
            let vals = args
                .iter()
                .map(|a| env.eval(a, &mut frame))
                .collect::<Result<Vec<_>, _>>()?;
            match target {
                CallTarget::User(f) => env.call(*f, vals),
                CallTarget::Builtin(b) => Ok(vec![crate::builtins::call_builtin(*b, &vals)?]),
            }
        })();
        let outs = result.map_err(|e| self.error(e, vec![]))?;
        let flat: Vec<Value> = outs.iter().flat_map(|v| v.flatten()).collect();
        if flat.len()
            < outputs
                .iter()
                .rposition(|o| o.is_some())
                .map_or(0, |p| p + 1)
        {
            return Err(self.error(
                format!(
                    "function call returned {} values, {} expected",
                    flat.len(),
                    outputs.len()
                ),
                vec![],
            ));
        }
        for (o, v) in outputs.iter().zip(flat) {
            if let Some(slot) = o {
                self.m.mem[*slot as usize] = match v {
                    Value::Str(text) => self.m.strings.intern(&text),
                    v => v.as_f64().map_err(|e| self.error(e, vec![]))?,
                };
            }
        }
        Ok(())
    }

    /// Relations not evaluated during an event pass (e.g. in an untaken `if` branch) still
    /// get a frozen value consistent with their zero-crossing function, so the integrator
    /// does not see a spurious sign mismatch.
    fn refresh_untouched_relations(&mut self) -> Result<(), RuntimeError> {
        for i in 0..self.code.zc.len() {
            if self.m.rel_touched[i] {
                continue;
            }
            let z = &self.code.zc[i];
            self.run_tape(&z.code)?;
            let eps = if self.m.initial || self.m.states_changed {
                0.0
            } else {
                self.m.hysteresis[i]
            };
            self.m.rel[i] =
                compare_with_hysteresis(z.op, self.m.mem[z.out as usize], self.m.rel[i], eps);
        }
        Ok(())
    }

    // ----- equation systems -------------------------------------------------------------

    fn scalar_residual(
        &mut self,
        s: &crate::compile::ScalarStep,
        x: f64,
    ) -> Result<f64, RuntimeError> {
        self.m.mem[s.var as usize] = x;
        self.run_tape(&s.code)?;
        Ok(self.m.mem[s.out as usize])
    }

    fn solve_scalar(&mut self, s: &crate::compile::ScalarStep) -> Result<(), RuntimeError> {
        self.stats.nonlinear_solves += 1;
        let nominal = self.program.vars[s.var as usize].nominal.abs().max(1e-300);
        let x0 = self.m.mem[s.var as usize];
        let x0 = if x0.is_finite() { x0 } else { 0.0 };
        match crate::solve::solve_scalar(self, s, x0, nominal)? {
            Ok(x) => {
                // leave every dependent register consistent with the solution
                self.scalar_residual(s, x)?;
                Ok(())
            }
            Err((x, f)) => {
                self.m.mem[s.var as usize] = x0;
                Err(self.error(
                    format!("cannot solve for `{}`", self.var_name(s.var)),
                    vec![
                        format!(
                            "residual: {} = {f} at {} = {x}",
                            s.text,
                            self.var_name(s.var)
                        ),
                        format!("start value {x0}"),
                    ],
                ))
            }
        }
    }

    fn solve_linear(&mut self, l: &LinearStep) -> Result<(), RuntimeError> {
        let kept = l
            .cache
            .as_ref()
            .is_some_and(|c| self.m.kept_matrix(c).is_some());
        if !kept {
            self.run_tape(&l.matrix_code)?;
        }
        self.run_tape(&l.code)?;
        let n = l.vars.len();
        let mut b: Vec<f64> = l.rhs.iter().map(|&r| self.m.mem[r as usize]).collect();
        let solved = if kept {
            self.m.kept_matrix_solves += 1;
            self.solve_with_kept_matrix(l, &mut b)
        } else {
            self.factor_and_solve(l, &mut b)
        };
        let solved = match solved {
            Ok(()) => Ok(b),
            // not during initialization: there a singular system means unknowns the
            // initial equations leave open (parameters with fixed = false), which must
            // be reported, not silently kept at their start values; unless the matrix
            // depends on modes (two locked frictions in series leave the split of the
            // torque open in that mode only)
            Err(why) if !self.m.initial || l.mode_dependent => {
                self.solve_singular_linear(l).ok_or(why)
            }
            Err(why) => Err(why),
        };
        match solved {
            Ok(x) => {
                for (&v, &xi) in l.vars.iter().zip(&x) {
                    self.m.mem[v as usize] = xi;
                }
                Ok(())
            }
            Err(why) => {
                let names: Vec<&str> = l.vars.iter().map(|&v| self.var_name(v)).collect();
                let shown = names
                    .iter()
                    .take(20)
                    .copied()
                    .collect::<Vec<_>>()
                    .join(", ");
                Err(self.error(
                    format!("singular linear system in {n} unknowns: {why}"),
                    vec![format!(
                        "unknowns: {shown}{}",
                        if n > 20 { ", ..." } else { "" }
                    )],
                ))
            }
        }
    }

    fn solve_with_kept_matrix(&mut self, l: &LinearStep, b: &mut [f64]) -> Result<(), String> {
        let kept = l
            .cache
            .as_ref()
            .and_then(|c| self.m.kept_matrices.get(c.id))
            .and_then(Option::as_ref);
        match (&l.sparse, kept) {
            (Some((sys, _)), _) => sys.solve_kept(&mut self.m.sparse_factors, b),
            (
                None,
                Some(crate::kept_factors::KeptMatrix {
                    dense: Some(lu), ..
                }),
            ) => {
                lu.solve(b);
                Ok(())
            }
            (None, _) => Err("the kept factorization is missing (internal)".into()),
        }
    }

    /// Assemble the matrix from its entries, factor it and solve; the factors of a cached
    /// matrix are kept with the values of its inputs.
    fn factor_and_solve(&mut self, l: &LinearStep, b: &mut [f64]) -> Result<(), String> {
        let n = l.vars.len();
        if let Some(c) = &l.cache {
            self.m.drop_kept_matrix(c);
        }
        let dense = match &l.sparse {
            Some((sys, positions)) => {
                let mut values = vec![0.0; sys.nnz()];
                for (&(_, _, reg), &k) in l.entries.iter().zip(positions) {
                    values[k] += self.m.mem[reg as usize];
                }
                sys.solve(&mut self.m.sparse_factors, &values, b)?;
                None
            }
            None => {
                let mut a = vec![0.0; n * n];
                for &(r, c, reg) in &l.entries {
                    a[r as usize * n + c as usize] += self.m.mem[reg as usize];
                }
                let lu = DenseLu::factor(n, a)
                    .map_err(|s| format!("no pivot for `{}`", self.var_name(l.vars[s.column])))?;
                lu.solve(b);
                Some(lu)
            }
        };
        if let Some(c) = &l.cache {
            self.m
                .keep_matrix(c, dense.map(std::sync::Arc::new), Default::default());
        }
        Ok(())
    }

    /// A singular linear system that is still consistent (stuck friction elements sharing
    /// one shaft): the undetermined unknowns keep their current values.
    fn solve_singular_linear(&self, l: &LinearStep) -> Option<Vec<f64>> {
        let n = l.vars.len();
        let mut a = vec![0.0; n * n];
        for &(r, c, reg) in &l.entries {
            a[r as usize * n + c as usize] += self.m.mem[reg as usize];
        }
        let b: Vec<f64> = l.rhs.iter().map(|&r| self.m.mem[r as usize]).collect();
        let x0: Vec<f64> = l
            .vars
            .iter()
            .map(|&v| {
                let x = self.m.mem[v as usize];
                if x.is_finite() {
                    x
                } else {
                    0.0
                }
            })
            .collect();
        crate::linalg::solve_consistent_singular(n, &a, &b, &x0)
    }

    /// A torn loop; when it fails and has a fallback tearing (safe divisors only), the loop
    /// is solved again that way from the values its variables had before.
    fn solve_nonlinear(&mut self, nl: &crate::compile::NonlinearStep) -> Result<(), RuntimeError> {
        let Some(fb) = &nl.fallback else {
            return crate::solve::solve_nonlinear(self, nl);
        };
        let before: Vec<f64> = fb.slots.iter().map(|&v| self.m.mem[v as usize]).collect();
        match crate::solve::solve_nonlinear(self, nl) {
            Ok(()) => Ok(()),
            Err(first) => {
                for (&v, &x) in fb.slots.iter().zip(&before) {
                    self.m.mem[v as usize] = x;
                }
                self.stats.nonlinear_fallbacks += 1;
                self.run_steps(&fb.steps).map_err(|_| first)
            }
        }
    }
}

/// Access for the solvers in `solve.rs`.
pub(crate) trait SolverHost {
    fn mem(&mut self) -> &mut Vec<f64>;
    fn run_steps_host(&mut self, steps: &[Step]) -> Result<(), RuntimeError>;
    fn run_tape_host(&mut self, code: &Tape) -> Result<(), RuntimeError>;
    fn scalar_residual_host(
        &mut self,
        s: &crate::compile::ScalarStep,
        x: f64,
    ) -> Result<f64, RuntimeError>;
    fn count_iteration(&mut self);
    fn count_solve(&mut self);
    /// The damped Newton of a nonlinear solve failed; a fallback runs.
    fn count_fallback(&mut self);
    fn fail(&self, message: String, details: Vec<String>) -> RuntimeError;
    fn name(&self, v: u32) -> String;
    /// Number of variable slots at the start of the memory.
    fn n_slots(&self) -> usize;
    /// The machine, for the kept matrices of torn linear loops.
    fn machine(&mut self) -> &mut Machine;
}

impl SolverHost for Rt<'_> {
    fn mem(&mut self) -> &mut Vec<f64> {
        &mut self.m.mem
    }
    fn run_steps_host(&mut self, steps: &[Step]) -> Result<(), RuntimeError> {
        self.run_steps(steps)
    }
    fn run_tape_host(&mut self, code: &Tape) -> Result<(), RuntimeError> {
        self.run_tape(code)
    }
    fn scalar_residual_host(
        &mut self,
        s: &crate::compile::ScalarStep,
        x: f64,
    ) -> Result<f64, RuntimeError> {
        self.scalar_residual(s, x)
    }
    fn count_iteration(&mut self) {
        self.stats.nonlinear_iterations += 1;
    }
    fn count_solve(&mut self) {
        self.stats.nonlinear_solves += 1;
    }
    fn count_fallback(&mut self) {
        self.stats.nonlinear_fallbacks += 1;
    }
    fn fail(&self, message: String, details: Vec<String>) -> RuntimeError {
        self.error(message, details)
    }
    fn name(&self, v: u32) -> String {
        self.var_name(v).to_string()
    }
    fn n_slots(&self) -> usize {
        self.m.n
    }
    fn machine(&mut self) -> &mut Machine {
        self.m
    }
}

impl ExecutableModel for Interpreter {
    fn n_states(&self) -> usize {
        self.program.states.len()
    }

    fn n_zero_crossings(&self) -> usize {
        self.program.zero_crossings.len()
    }

    fn set_parameter(&mut self, name: &str, value: f64) -> Result<(), RuntimeError> {
        if let Some(ep) = self.program.report.evaluated(name) {
            return Err(RuntimeError {
                time: 0.0,
                message: format!(
                    "cannot set `{name}`: it was evaluated at translation ({}), so the model is built for the value {}; to vary it, change its value in the model (or remove annotation(Evaluate=true)) and translate again",
                    ep.why,
                    ep.value_text()
                ),
                details: vec![],
            });
        }
        let (slot, scale, offset) = if let Some(v) = self.program.var_by_name(name) {
            (v, 1.0, 0.0)
        } else if let Some(a) = self.program.aliases.iter().find(|a| a.name == name) {
            (a.target, a.scale, a.offset)
        } else {
            return Err(RuntimeError {
                time: 0.0,
                message: format!("cannot set `{name}`: the model has no variable of that name"),
                details: vec![],
            });
        };
        let var = &self.program.vars[slot as usize];
        if var.kind != VarKind::Parameter {
            let why = match var.kind {
                VarKind::DependentParameter => {
                    "it is computed from other parameters; set those instead"
                }
                VarKind::Constant => "it is a constant",
                _ => "it is not a parameter",
            };
            return Err(RuntimeError {
                time: 0.0,
                message: format!("cannot set `{name}`: {why}"),
                details: vec![],
            });
        }
        if scale == 0.0 {
            return Err(RuntimeError {
                time: 0.0,
                message: format!("cannot set `{name}`: alias with scale 0"),
                details: vec![],
            });
        }
        self.overrides.retain(|(s, _)| *s != slot);
        self.overrides.push((slot, (value - offset) / scale));
        Ok(())
    }

    fn initialize(&mut self, t0: f64) -> Result<(), RuntimeError> {
        self.continuous_valid = false;
        let n = self.m.n;
        for (i, v) in self.program.vars.iter().enumerate() {
            self.m.mem[i] = v.start;
        }
        for &(s, x) in &self.overrides {
            self.m.mem[s as usize] = x;
        }
        self.m.mem.copy_within(0..n, n);
        self.m.set_time(t0);
        self.m.states_changed = false;
        self.m.terminate = None;
        self.m.when_cur.iter_mut().for_each(|w| *w = false);
        self.m.when_pre.iter_mut().for_each(|w| *w = false);
        self.m.hysteresis.iter_mut().for_each(|h| *h = 0.0);
        self.m.delays.iter_mut().for_each(DelayLine::clear);
        self.m.forget_guesses();
        self.last_change.iter_mut().for_each(|t| *t = f64::NAN);
        self.m.initial = true;
        self.m.event_mode = true;
        self.m.event_only_settled = false;
        let result = (|| {
            let mut rt = self.rt();
            let code = rt.code;
            rt.run_steps(&code.param_steps)
                .map_err(|e| with_context(e, "while computing parameters"))?;
            rt.run_steps(&code.start_steps)
                .map_err(|e| with_context(e, "while computing start values"))?;
            // start values are the `pre` values when initialization begins
            rt.m.mem.copy_within(0..n, n);
            Ok(())
        })()
        .and_then(|()| {
            self.solve_initial_system()
                .map_err(|e| with_context(e, "during initialization"))
        })
        .and_then(|()| {
            // relations not met by the initialization blocks take their value at t0
            let mut rt = self.rt();
            rt.m.rel_touched.iter_mut().for_each(|t| *t = false);
            rt.refresh_untouched_relations()
        });
        self.m.initial = false;
        self.m.event_mode = false;
        result?;
        self.m.copy_values_to_pre();
        self.start_samples(t0)?;
        self.activate_samples(t0);
        self.event_iteration()
            .map_err(|e| with_context(e, "in the event iteration at the start time"))?;
        self.advance_samples(t0);
        self.update_time_events()?;
        self.pending_terminate = self.m.terminate.take();
        self.restart_from_here(t0);
        Ok(())
    }

    fn states(&self, x: &mut [f64]) {
        self.get_states(x);
    }

    fn derivatives(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), RuntimeError> {
        self.stats.derivative_evaluations += 1;
        // guesses first: a candidate of a dynamic state set may be solved for in one choice
        // of states and be a state in another
        self.start_from_guesses(t);
        self.set_states(t, x);
        self.eval_continuous()?;
        for (d, &s) in dx.iter_mut().zip(&self.program.derivatives) {
            *d = self.m.mem[s as usize];
        }
        Ok(())
    }

    fn output_point(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), RuntimeError> {
        // from the previous output point when it lies in the same step, else (going back in
        // time) from where the step started
        let m = &mut self.m;
        let chain = m
            .output_time
            .is_some_and(|prev| m.step_start_time.is_none_or(|start| prev >= start));
        if chain {
            put_guesses(&mut m.mem, &self.code.guess_slots, &m.output_guess);
            m.last_evaluation = Some(t);
        } else {
            m.last_evaluation = None;
        }
        let result = self.derivatives(t, x, dx);
        let m = &mut self.m;
        m.output_guess.clear();
        m.output_guess
            .extend(self.code.guess_slots.iter().map(|&s| m.mem[s as usize]));
        m.output_time = Some(t);
        // the next step goes on from the end of the last one, not from this point inside it
        m.last_evaluation = None;
        result
    }

    fn has_symbolic_jacobian(&self) -> bool {
        self.code.jacobian_steps.is_some()
    }

    fn jacobian_times(
        &mut self,
        t: f64,
        x: &[f64],
        seed: &[f64],
        out: &mut [f64],
    ) -> Result<(), RuntimeError> {
        if self.program.ode_jacobian.is_none() {
            return Err(RuntimeError {
                time: t,
                message: "this model has no symbolic Jacobian".into(),
                details: vec![],
            });
        }
        if !self.evaluated_at(t, x) {
            self.set_states(t, x);
            self.eval_continuous()?;
        }
        let seeds = self.program.ode_jacobian.iter().flat_map(|j| &j.seeds);
        let mut nonzero = Vec::new();
        for (k, (&s, &v)) in seeds.zip(seed).enumerate() {
            self.m.mem[s as usize] = v;
            if v != 0.0 {
                nonzero.push(k as u32);
            }
        }
        self.stats.jacobian_products += 1;
        let slice = self.tangent_slice(nonzero);
        let code = Arc::clone(&self.code);
        let Some(steps) = &code.jacobian_steps else {
            return Ok(());
        };
        let mut rt = self.rt();
        match &slice {
            Some(slice) => {
                for &k in &slice.steps {
                    rt.run_step(&steps[k as usize])?;
                }
            }
            None => rt.run_steps(steps)?,
        }
        let jac = self.program.ode_jacobian.as_ref().map(|j| &j.outputs);
        for (o, slot) in out.iter_mut().zip(jac.into_iter().flatten()) {
            *o = slot.map_or(0.0, |s| self.m.mem[s as usize]);
        }
        if let Some(slice) = slice {
            for &v in &slice.zero {
                self.m.mem[v as usize] = 0.0;
            }
            self.tangents_zeroed = true;
        }
        Ok(())
    }

    fn zero_crossings(&mut self, t: f64, x: &[f64], g: &mut [f64]) -> Result<(), RuntimeError> {
        self.stats.zero_crossing_evaluations += 1;
        if !self.evaluated_at(t, x) {
            self.start_from_guesses(t);
            self.set_states(t, x);
            if self.code.zc_steps.is_some() {
                self.eval_zero_crossing_blocks()?;
            } else {
                self.eval_continuous()?;
            }
        }
        let mut rt = self.rt();
        let code = rt.code;
        // shifted by the hysteresis, so that the sign change the simulator looks for is the
        // one that flips the relation in the event iteration
        for (i, (gi, z)) in g.iter_mut().zip(&code.zc).enumerate() {
            rt.run_tape(&z.code)?;
            let shift = hysteresis_shift(z.op, rt.m.rel[i], rt.m.hysteresis[i]);
            *gi = rt.m.mem[z.out as usize] + shift;
        }
        Ok(())
    }

    fn relation_values(&self) -> &[bool] {
        &self.m.rel
    }

    fn step_accepted(&mut self, t: f64) {
        let m = &mut self.m;
        std::mem::swap(&mut m.step_start_guess, &mut m.step_end_guess);
        m.step_end_guess.clear();
        m.step_end_guess
            .extend(self.code.guess_slots.iter().map(|&s| m.mem[s as usize]));
        if m.step_start_guess.is_empty() {
            // the first step after a start or an event: it started from the event's solution
            m.step_start_guess.clone_from(&m.step_end_guess);
        }
        m.step_start_time = m.step_end_time;
        m.step_end_time = Some(t);
    }

    fn event_update(&mut self, t: f64, x: &mut [f64]) -> Result<EventOutcome, RuntimeError> {
        // the event may switch the branch a loop is on: its own solution is the next guess
        self.m.forget_guesses();
        let result = self.event_update_inner(t, x);
        // the memory now holds event-mode values
        self.continuous_valid = false;
        result
    }

    fn next_time_event(&self, t: f64) -> Option<f64> {
        let samples = (0..self.sample_state.len()).map(|i| self.sample_time(i));
        samples
            .chain(self.time_events.iter().copied())
            .filter(|&te| te.is_finite() && te > t)
            .fold(None, |best: Option<f64>, te| {
                Some(best.map_or(te, |b| b.min(te)))
            })
    }

    fn terminate(&mut self, t: f64, x: &[f64]) -> Result<(), RuntimeError> {
        self.set_states(t, x);
        self.eval_continuous()?;
        self.continuous_valid = false;
        self.m.copy_values_to_pre();
        self.m.terminal = true;
        let r = self.event_iteration();
        self.m.terminal = false;
        r.map(|_| ())
    }

    fn values(&self) -> &[f64] {
        &self.m.mem[..self.m.n]
    }

    fn jacobian_pattern(&self) -> &[(u32, u32)] {
        &self.program.jacobian_pattern
    }

    fn stats(&self) -> ModelStats {
        ModelStats {
            function_calls: self.m.memo.calls,
            memo_hits: self.m.memo.hits,
            scalar_calls: self.m.memo.scalar_calls,
            native_calls: self.m.memo.native_calls,
            sparse_factorizations: self.m.sparse_factors.full,
            sparse_refactorizations: self.m.sparse_factors.refactored,
            kept_matrix_solves: self.m.kept_matrix_solves,
            ..self.stats.clone()
        }
    }

    fn warnings(&self) -> Vec<String> {
        self.m.warnings.clone()
    }

    fn take_initial_terminate(&mut self) -> Option<String> {
        self.pending_terminate.take()
    }
}

/// Write `guess` into the iteration variables `slots` (nothing when there is no guess: the
/// first step after an event starts from the event's own solution).
fn put_guesses(mem: &mut [f64], slots: &[u32], guess: &[f64]) {
    if guess.len() != slots.len() {
        return;
    }
    for (&s, &g) in slots.iter().zip(guess) {
        mem[s as usize] = g;
    }
}

/// Largest step of the homotopy parameter during continuation.
const HOMOTOPY_MAX_STEP: f64 = 0.25;
/// Continuation gives up when its step has to shrink below this.
const HOMOTOPY_MIN_STEP: f64 = 1e-4;

/// The machine state the initialization blocks change, saved to go back to after a failed
/// continuation step.
struct InitSnapshot {
    mem: Vec<f64>,
    rel: Vec<bool>,
    when_cur: Vec<bool>,
}

impl Interpreter {
    /// Run the initialization blocks. When the model uses `homotopy`, follow the homotopy
    /// path first: solve the problem with every `homotopy(actual, simplified)` replaced by
    /// `simplified`, then move the parameter to 1 (the actual problem) in steps, each solved
    /// from the solution of the previous one (spec 3.7.4.4). The simplified expressions are
    /// how a model picks one of several solutions (`LimiterHomotopy.LowerLimit` starts a
    /// Schmitt trigger saturated low, where solving the actual problem from the start values
    /// lands on its unstable balance at zero), so the path comes first; the actual problem is
    /// solved directly when the path fails.
    fn solve_initial_system(&mut self) -> Result<(), RuntimeError> {
        if !self.code.has_homotopy {
            return self.run_init_steps();
        }
        let start = self.init_snapshot();
        let Err(why) = self.follow_homotopy_path() else {
            return Ok(());
        };
        self.restore(&start);
        self.run_init_steps().map_err(|e| RuntimeError {
            details: [
                e.details.clone(),
                vec![format!("the homotopy path failed before: {why}")],
            ]
            .concat(),
            ..e
        })
    }

    fn run_init_steps(&mut self) -> Result<(), RuntimeError> {
        let mut rt = self.rt();
        let code = rt.code;
        rt.run_steps(&code.init_steps)?;
        rt.record_delays()
    }

    /// Continuation from the simplified (lambda = 0) to the actual (lambda = 1) problem;
    /// the step of lambda grows after successes and shrinks after failures.
    fn follow_homotopy_path(&mut self) -> Result<(), String> {
        let mut lambda = 0.0;
        let mut step = HOMOTOPY_MAX_STEP;
        self.m.homotopy_lambda = lambda;
        let result = self.run_init_steps();
        if let Err(e) = result {
            self.m.homotopy_lambda = 1.0;
            return Err(format!(
                "the simplified problem has no solution: {}",
                e.message
            ));
        }
        let mut last_good = self.init_snapshot();
        while lambda < 1.0 {
            let next = (lambda + step).min(1.0);
            self.m.homotopy_lambda = next;
            match self.run_init_steps() {
                Ok(()) => {
                    lambda = next;
                    last_good = self.init_snapshot();
                    step = (2.0 * step).min(HOMOTOPY_MAX_STEP);
                }
                Err(e) => {
                    self.restore(&last_good);
                    step *= 0.25;
                    if step < HOMOTOPY_MIN_STEP {
                        self.m.homotopy_lambda = 1.0;
                        return Err(format!(
                            "stalled at homotopy parameter {lambda}: {}",
                            e.message
                        ));
                    }
                }
            }
        }
        self.m.homotopy_lambda = 1.0;
        Ok(())
    }

    fn init_snapshot(&self) -> InitSnapshot {
        InitSnapshot {
            mem: self.m.mem.clone(),
            rel: self.m.rel.clone(),
            when_cur: self.m.when_cur.clone(),
        }
    }

    fn restore(&mut self, s: &InitSnapshot) {
        self.m.mem.copy_from_slice(&s.mem);
        self.m.rel.copy_from_slice(&s.rel);
        self.m.when_cur.copy_from_slice(&s.when_cur);
    }

    fn event_update_inner(&mut self, t: f64, x: &mut [f64]) -> Result<EventOutcome, RuntimeError> {
        self.set_states(t, x);
        self.m.states_changed = false;
        // left limit: values just before the event become `pre`
        self.eval_continuous()?;
        self.m.copy_values_to_pre();
        self.activate_samples(t);
        let iterations = self.event_iteration()?;
        self.advance_samples(t);
        self.update_time_events()?;
        self.get_states(x);
        self.restart_from_here(t);
        let terminate = self.pending_terminate.take().or(self.m.terminate.take());
        Ok(EventOutcome {
            states_changed: self.m.states_changed,
            terminate,
            iterations,
        })
    }
}

fn with_context(mut e: RuntimeError, context: &str) -> RuntimeError {
    e.message = format!("{context}: {}", e.message);
    e
}

/// The memory cells whose values are an argument's (a cell, or an array literal of cells),
/// skipping zero constants; false when the argument is anything else.
fn zero_test_cells(a: &crate::func::FExpr, out: &mut Vec<u32>) -> bool {
    use crate::func::FExpr;
    use crate::value::Value;
    match a {
        FExpr::Mem(r) | FExpr::Slot(r, _) => {
            out.push(*r);
            true
        }
        FExpr::Const(Value::Real(x)) => *x == 0.0,
        FExpr::Const(Value::Int(0)) => true,
        FExpr::Array(items) | FExpr::FlatArray(_, items) => {
            items.iter().all(|x| zero_test_cells(x, out))
        }
        _ => false,
    }
}
