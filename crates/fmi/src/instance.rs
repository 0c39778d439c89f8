//! One FMU instance in Rust terms: the interpreter of the stored program, the FMI state
//! machine, and the mapping of FMI calls onto `moss-codegen`'s `ExecutableModel` and
//! `moss-sim`'s `advance`. The C functions (`fmi2.rs`, `fmi3.rs`) only convert arguments and
//! statuses.
//!
//! Evaluation is lazy: setting time, states or inputs marks the model stale, and the next
//! read (derivatives, event indicators, variable values) evaluates it once.

use crate::payload::Payload;
use crate::variables::{self, BaseType, Causality, Table};
use moss_codegen::{ExecutableModel, Interpreter};
use moss_sim::{SimOptions, Solver};
use moss_symbolic::program::RelOp;
use moss_symbolic::CausalProgram;

/// The interface an instance was created for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    ModelExchange,
    CoSimulation,
}

/// The states of the FMI state machine that this runtime distinguishes (FMI 3.0's step mode
/// is `StepComplete`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Mode {
    Instantiated,
    Initialization,
    /// Model Exchange: event mode (also right after initialization).
    Event,
    /// Model Exchange: continuous-time mode.
    Continuous,
    /// Co-Simulation: between steps.
    StepComplete,
    Terminated,
}

/// What `fmi2NewDiscreteStates` reports.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EventInfo {
    /// The message of a `terminate()` the event iteration ran into.
    pub terminate: Option<String>,
    pub states_changed: bool,
    pub next_event_time: Option<f64>,
}

/// What `fmi2DoStep` reports.
#[derive(Clone, Debug, PartialEq)]
pub enum StepResult {
    Completed,
    /// The model called `terminate()` at this time.
    Terminated {
        time: f64,
        message: String,
    },
}

pub type Result<T> = std::result::Result<T, String>;

/// Everything of an instance that changes while it runs (`fmi2GetFMUstate`): the
/// interpreter's run-time state and the instance's own fields. Serialized with postcard
/// (`fmi2SerializeFMUstate`).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct State {
    /// Slots of the program the state belongs to (a state of another model is refused).
    slots: usize,
    model: moss_codegen::interp::Snapshot,
    mode: Mode,
    time: f64,
    start_time: f64,
    stop_time: Option<f64>,
    tolerance: Option<f64>,
    x: Vec<f64>,
    dx: Vec<f64>,
    stale: bool,
    init_stale: bool,
    initialized: bool,
    initial_event_done: bool,
    pending: std::collections::HashMap<u32, f64>,
    /// Co-Simulation steps use BDF (see [`Instance`]'s `solver`).
    bdf: bool,
    last_successful_time: f64,
    terminated: bool,
}

impl State {
    /// The fingerprint of the serialized types ([`crate::payload::FINGERPRINT`]), then the
    /// state: a state serialized by another build is refused, not misread.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let tagged = (crate::payload::FINGERPRINT, self);
        postcard::to_stdvec(&tagged).map_err(|e| format!("cannot serialize the FMU state: {e}"))
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<State> {
        let (fingerprint, rest) = postcard::take_from_bytes::<u64>(bytes)
            .map_err(|e| format!("not a serialized FMU state of moss: {e}"))?;
        if fingerprint != crate::payload::FINGERPRINT {
            return Err("not a serialized FMU state of moss: written by another build".into());
        }
        postcard::from_bytes(rest).map_err(|e| format!("not a serialized FMU state of moss: {e}"))
    }
}

pub struct Instance {
    pub kind: Kind,
    /// The program the interpreter runs, shared with it: `advance` needs it beside the model, and
    /// `reset` compiles it again.
    program: std::sync::Arc<CausalProgram>,
    pub table: Table,
    model: Interpreter,
    pub mode: Mode,
    pub time: f64,
    start_time: f64,
    stop_time: Option<f64>,
    tolerance: Option<f64>,
    x: Vec<f64>,
    dx: Vec<f64>,
    /// Time, states or inputs changed since the model was last evaluated.
    stale: bool,
    /// Parameters or inputs changed since `initialize` last ran (initialization mode).
    init_stale: bool,
    initialized: bool,
    /// Model Exchange: `initialize` already ran the event iteration at the start time, so
    /// the first `fmi2NewDiscreteStates` after it has nothing left to do.
    initial_event_done: bool,
    /// Parameter values set before initialization, per slot (what getters return then).
    pending: std::collections::HashMap<u32, f64>,
    /// Co-Simulation: `Solver::Auto` starts every step with DOPRI5 until one step finds the
    /// model stiff; from then on steps use BDF.
    solver: Solver,
    pub last_successful_time: f64,
    pub terminated: bool,
}

impl Instance {
    pub fn new(kind: Kind, payload: Payload) -> Result<Instance> {
        let offered = match kind {
            Kind::ModelExchange => payload.model_exchange,
            Kind::CoSimulation => payload.co_simulation,
        };
        if !offered {
            return Err(format!(
                "this FMU was exported without {kind:?} (moss fmu --kind); export it with --kind both"
            ));
        }
        let table = variables::table(&payload.program, &payload.outputs);
        let program = std::sync::Arc::new(payload.program);
        let model = Interpreter::new(std::sync::Arc::clone(&program)).map_err(|e| e.to_string())?;
        let n = program.states.len();
        let start_time = program.experiment.start_time.unwrap_or(0.0);
        Ok(Instance {
            kind,
            program,
            table,
            model,
            mode: Mode::Instantiated,
            time: start_time,
            start_time,
            stop_time: None,
            tolerance: None,
            x: vec![0.0; n],
            dx: vec![0.0; n],
            stale: true,
            init_stale: true,
            initialized: false,
            initial_event_done: false,
            pending: Default::default(),
            solver: Solver::Auto,
            last_successful_time: start_time,
            terminated: false,
        })
    }

    pub fn n_states(&self) -> usize {
        self.x.len()
    }

    pub fn n_event_indicators(&self) -> usize {
        self.program.zero_crossings.len()
    }

    fn expect_mode(&self, what: &str, allowed: &[Mode]) -> Result<()> {
        if allowed.contains(&self.mode) {
            Ok(())
        } else {
            Err(format!("{what} is not allowed in {:?} mode", self.mode))
        }
    }

    pub fn setup_experiment(
        &mut self,
        tolerance: Option<f64>,
        start: f64,
        stop: Option<f64>,
    ) -> Result<()> {
        self.expect_mode("setting up the experiment", &[Mode::Instantiated])?;
        if !start.is_finite() || stop.is_some_and(|s| s.is_nan() || s < start) {
            return Err(format!(
                "invalid experiment: start time {start}, stop time {stop:?}"
            ));
        }
        if tolerance.is_some_and(|t| t.is_nan() || t <= 0.0 || t >= 1.0) {
            return Err(format!("invalid tolerance {tolerance:?}"));
        }
        self.start_time = start;
        self.time = start;
        self.last_successful_time = start;
        self.stop_time = stop;
        self.tolerance = tolerance;
        Ok(())
    }

    pub fn enter_initialization(&mut self) -> Result<()> {
        self.expect_mode("entering initialization mode", &[Mode::Instantiated])?;
        self.mode = Mode::Initialization;
        Ok(())
    }

    /// Solve the initialization problem with the parameters and inputs set so far.
    fn initialize(&mut self) -> Result<()> {
        self.model
            .initialize(self.start_time)
            .map_err(|e| e.to_string())?;
        self.model.states(&mut self.x);
        self.time = self.start_time;
        self.initialized = true;
        self.init_stale = false;
        // `initialize` leaves the event-mode values of the start time in memory.
        self.stale = false;
        Ok(())
    }

    pub fn exit_initialization(&mut self) -> Result<()> {
        self.expect_mode("leaving initialization mode", &[Mode::Initialization])?;
        if self.init_stale || !self.initialized {
            self.initialize()?;
        }
        if let Some(msg) = self.model.take_initial_terminate() {
            self.terminated = true;
            return Err(format!(
                "the model called terminate() at the start time: {msg}"
            ));
        }
        self.initial_event_done = true;
        self.mode = match self.kind {
            Kind::ModelExchange => Mode::Event,
            Kind::CoSimulation => Mode::StepComplete,
        };
        Ok(())
    }

    pub fn terminate(&mut self) -> Result<()> {
        if matches!(
            self.mode,
            Mode::Event | Mode::Continuous | Mode::StepComplete
        ) && !self.terminated
        {
            // `terminal()` is true once, at the end.
            self.model
                .terminate(self.time, &self.x)
                .map_err(|e| e.to_string())?;
        }
        self.mode = Mode::Terminated;
        Ok(())
    }

    /// Back to the state right after instantiation (the program is compiled again).
    pub fn reset(&mut self) -> Result<()> {
        self.model =
            Interpreter::new(std::sync::Arc::clone(&self.program)).map_err(|e| e.to_string())?;
        let start = self.program.experiment.start_time.unwrap_or(0.0);
        self.mode = Mode::Instantiated;
        self.time = start;
        self.start_time = start;
        self.last_successful_time = start;
        self.stop_time = None;
        self.tolerance = None;
        self.stale = true;
        self.init_stale = true;
        self.initialized = false;
        self.initial_event_done = false;
        self.pending.clear();
        self.solver = Solver::Auto;
        self.terminated = false;
        Ok(())
    }

    /// A copy of the instance's run-time state.
    pub fn state(&self) -> State {
        State {
            slots: self.program.vars.len(),
            model: self.model.snapshot(),
            mode: self.mode,
            time: self.time,
            start_time: self.start_time,
            stop_time: self.stop_time,
            tolerance: self.tolerance,
            x: self.x.clone(),
            dx: self.dx.clone(),
            stale: self.stale,
            init_stale: self.init_stale,
            initialized: self.initialized,
            initial_event_done: self.initial_event_done,
            pending: self.pending.clone(),
            bdf: self.solver == Solver::Bdf,
            last_successful_time: self.last_successful_time,
            terminated: self.terminated,
        }
    }

    /// Go back to a state taken with [`Instance::state`] (of this instance: the states of
    /// another model would not fit, which the sizes check).
    pub fn set_state(&mut self, s: &State) -> Result<()> {
        if s.x.len() != self.x.len() || s.slots != self.program.vars.len() {
            return Err("the FMU state belongs to another model".into());
        }
        self.model.restore_snapshot(&s.model);
        self.mode = s.mode;
        self.time = s.time;
        self.start_time = s.start_time;
        self.stop_time = s.stop_time;
        self.tolerance = s.tolerance;
        self.x.clone_from(&s.x);
        self.dx.clone_from(&s.dx);
        self.stale = s.stale;
        self.init_stale = s.init_stale;
        self.initialized = s.initialized;
        self.initial_event_done = s.initial_event_done;
        self.pending.clone_from(&s.pending);
        self.solver = if s.bdf { Solver::Bdf } else { Solver::Auto };
        self.last_successful_time = s.last_successful_time;
        self.terminated = s.terminated;
        Ok(())
    }

    /// Bring the model's memory up to date with time, states and inputs.
    fn refresh(&mut self) -> Result<()> {
        match self.mode {
            Mode::Instantiated => Ok(()),
            Mode::Initialization => {
                if self.init_stale || !self.initialized {
                    self.initialize()?;
                }
                Ok(())
            }
            _ => {
                if self.stale && self.initialized {
                    self.model
                        .derivatives(self.time, &self.x, &mut self.dx)
                        .map_err(|e| e.to_string())?;
                    self.stale = false;
                }
                Ok(())
            }
        }
    }

    /// The values of the variables `vrs` (all of type `ty`) into `out`; for Reals also
    /// FMI 3.0's `time` and event indicator variables.
    pub fn get(&mut self, vrs: &[u32], ty: BaseType, out: &mut [f64]) -> Result<()> {
        let extra = |vr: u32| vr as usize >= self.table.vars.len();
        if ty == BaseType::Real && vrs.iter().any(|&vr| extra(vr)) {
            return self.get_with_extras(vrs, out);
        }
        for &vr in vrs {
            self.var_of_type(vr, ty)?;
        }
        self.refresh()?;
        let values = self.model.values();
        for (o, &vr) in out.iter_mut().zip(vrs) {
            let v = &self.table.vars[vr as usize];
            let slot = v.source.slot();
            let raw = match self.mode {
                Mode::Instantiated => self
                    .pending
                    .get(&slot)
                    .copied()
                    .unwrap_or(values[slot as usize]),
                _ => values[slot as usize],
            };
            *o = v.source.read(raw);
        }
        Ok(())
    }

    /// [`Instance::get`] for a list that names `time` or event indicators.
    fn get_with_extras(&mut self, vrs: &[u32], out: &mut [f64]) -> Result<()> {
        let n_ind = self.n_event_indicators();
        let mut indicators = None;
        for (o, &vr) in out.iter_mut().zip(vrs) {
            if vr == self.table.time_vr() {
                *o = self.time;
            } else if vr > self.table.time_vr()
                && ((vr - self.table.time_vr() - 1) as usize) < n_ind
            {
                if indicators.is_none() {
                    let mut z = vec![0.0; n_ind];
                    self.event_indicators(&mut z)?;
                    indicators = Some(z);
                }
                let i = (vr - self.table.time_vr() - 1) as usize;
                *o = indicators.as_ref().map_or(0.0, |z| z[i]);
            } else if (vr as usize) < self.table.vars.len() {
                let mut one = [0.0];
                self.get(&[vr], BaseType::Real, &mut one)?;
                *o = one[0];
            } else {
                return Err(format!("unknown value reference {vr}"));
            }
        }
        Ok(())
    }

    fn var_of_type(&self, vr: u32, ty: BaseType) -> Result<&variables::FmuVar> {
        let v = self
            .table
            .get(vr)
            .ok_or_else(|| format!("unknown value reference {vr}"))?;
        if v.ty != ty {
            return Err(format!(
                "`{}` (value reference {vr}) is of type {:?}, not {ty:?}",
                v.name, v.ty
            ));
        }
        Ok(v)
    }

    /// Set the variables `vrs` (all of type `ty`): parameters before the end of
    /// initialization, inputs at any time.
    pub fn set(&mut self, vrs: &[u32], ty: BaseType, values: &[f64]) -> Result<()> {
        for (&vr, &value) in vrs.iter().zip(values) {
            let v = self.var_of_type(vr, ty)?.clone();
            match v.causality {
                Causality::Parameter => {
                    self.expect_mode(
                        &format!("setting the parameter `{}`", v.name),
                        &[Mode::Instantiated, Mode::Initialization],
                    )?;
                    self.model
                        .set_parameter(&v.name, value)
                        .map_err(|e| e.message)?;
                    let raw = v
                        .source
                        .write(value)
                        .ok_or_else(|| format!("cannot set `{}`", v.name))?;
                    self.pending.insert(v.source.slot(), raw);
                    self.init_stale = true;
                }
                Causality::Input => {
                    if self.mode == Mode::Terminated {
                        return Err(format!("cannot set `{}` after termination", v.name));
                    }
                    let raw = v
                        .source
                        .write(value)
                        .ok_or_else(|| format!("cannot set `{}`", v.name))?;
                    self.model
                        .set_input(v.source.slot(), raw)
                        .map_err(|e| e.message)?;
                    self.stale = true;
                    self.init_stale = true;
                }
                c => {
                    return Err(format!(
                        "cannot set `{}`: only parameters and inputs can be set, it is {c:?}",
                        v.name
                    ))
                }
            }
        }
        Ok(())
    }

    /// `fmi2GetDirectionalDerivative`: `dv_unknown = J dv_known` with `J` the partial
    /// derivatives of the unknowns (any Real variables) with respect to the knowns (states and
    /// inputs) at the current point, in continuous-time mode (relations frozen). When the
    /// unknowns are state derivatives and the knowns states, the model's symbolic tangent
    /// program gives `J dv` exactly (if the translation built one); otherwise central
    /// differences along `dv`, with a step scaled to the knowns' nominal values.
    pub fn directional_derivative(
        &mut self,
        unknowns: &[u32],
        knowns: &[u32],
        dv_known: &[f64],
        dv_unknown: &mut [f64],
    ) -> Result<()> {
        if !self.initialized || matches!(self.mode, Mode::Instantiated | Mode::Initialization) {
            return Err("directional derivatives are available after initialization".into());
        }
        for &vr in unknowns.iter().chain(knowns) {
            self.var_of_type(vr, BaseType::Real)?;
        }
        let state_index = |vr: u32| self.table.states.iter().position(|&s| s == vr);
        let mut seed = vec![0.0; self.x.len()];
        let mut input_seed = Vec::new();
        for (&vr, &d) in knowns.iter().zip(dv_known) {
            let v = &self.table.vars[vr as usize];
            match state_index(vr) {
                Some(i) => seed[i] += d,
                None if v.causality == Causality::Input => input_seed.push((vr, d)),
                None => {
                    return Err(format!(
                        "`{}` is not a known (a state or an input) of a directional derivative",
                        v.name
                    ))
                }
            }
        }
        let derivative_rows: Option<Vec<usize>> = unknowns
            .iter()
            .map(|&vr| self.table.derivatives.iter().position(|&d| d == vr))
            .collect();
        match derivative_rows {
            Some(rows) if input_seed.is_empty() && self.model.has_symbolic_jacobian() => {
                let mut out = vec![0.0; self.x.len()];
                self.model
                    .jacobian_times(self.time, &self.x, &seed, &mut out)
                    .map_err(|e| e.to_string())?;
                for (o, r) in dv_unknown.iter_mut().zip(rows) {
                    *o = out[r];
                }
                self.stale = true;
                Ok(())
            }
            _ => self.central_difference(unknowns, &seed, &input_seed, dv_unknown),
        }
    }

    /// Central differences of the unknowns along the seed of states and inputs.
    fn central_difference(
        &mut self,
        unknowns: &[u32],
        seed: &[f64],
        input_seed: &[(u32, f64)],
        out: &mut [f64],
    ) -> Result<()> {
        let inputs: Vec<(u32, f64, f64)> = input_seed
            .iter()
            .map(|&(vr, d)| {
                let slot = self.table.vars[vr as usize].source.slot();
                (vr, self.model.values()[slot as usize], d)
            })
            .collect();
        // Each known moves by about the cube root of the machine epsilon relative to its
        // nominal value (inputs: their magnitude, at least 1), which balances truncation and
        // rounding errors of central differences.
        let nominal = |n: f64| if n > 0.0 && n.is_finite() { n } else { 1.0 };
        let ratio = seed
            .iter()
            .zip(&self.program.states)
            .map(|(d, &s)| d.abs() / nominal(self.program.vars[s as usize].nominal.abs()))
            .chain(inputs.iter().map(|(_, u, d)| d.abs() / u.abs().max(1.0)))
            .fold(0.0f64, f64::max);
        if ratio == 0.0 || !ratio.is_finite() {
            out.iter_mut().for_each(|o| *o = 0.0);
            return Ok(());
        }
        let eps = 6e-6 / ratio;
        let mut plus = vec![0.0; unknowns.len()];
        let mut minus = vec![0.0; unknowns.len()];
        let x0 = self.x.clone();
        let result = (|| {
            for (sign, values) in [(1.0, &mut plus), (-1.0, &mut minus)] {
                let x: Vec<f64> = x0
                    .iter()
                    .zip(seed)
                    .map(|(x, d)| x + sign * eps * d)
                    .collect();
                for &(vr, u, d) in &inputs {
                    let slot = self.table.vars[vr as usize].source.slot();
                    self.model
                        .set_input(slot, u + sign * eps * d)
                        .map_err(|e| e.message)?;
                }
                self.model
                    .derivatives(self.time, &x, &mut self.dx)
                    .map_err(|e| e.to_string())?;
                let now = self.model.values();
                for (v, &vr) in values.iter_mut().zip(unknowns) {
                    let var = &self.table.vars[vr as usize];
                    *v = var.source.read(now[var.source.slot() as usize]);
                }
            }
            Ok::<(), String>(())
        })();
        // Back to the point itself, whatever happened.
        for &(vr, u, _) in &inputs {
            let slot = self.table.vars[vr as usize].source.slot();
            let _ = self.model.set_input(slot, u);
        }
        self.x = x0;
        self.stale = true;
        result?;
        for ((o, p), m) in out.iter_mut().zip(&plus).zip(&minus) {
            *o = (p - m) / (2.0 * eps);
        }
        Ok(())
    }

    // ---- Model Exchange ----

    pub fn set_time(&mut self, t: f64) -> Result<()> {
        self.expect_mode("setting the time", &[Mode::Event, Mode::Continuous])?;
        if !t.is_finite() {
            return Err(format!("invalid time {t}"));
        }
        self.time = t;
        self.stale = true;
        Ok(())
    }

    pub fn set_states(&mut self, x: &[f64]) -> Result<()> {
        self.expect_mode("setting the states", &[Mode::Event, Mode::Continuous])?;
        self.check_len("states", x.len(), self.x.len())?;
        self.x.copy_from_slice(x);
        self.stale = true;
        Ok(())
    }

    fn check_len(&self, what: &str, given: usize, expected: usize) -> Result<()> {
        if given == expected {
            Ok(())
        } else {
            Err(format!("{given} {what} given, the model has {expected}"))
        }
    }

    pub fn states(&self, out: &mut [f64]) -> Result<()> {
        self.check_len("states", out.len(), self.x.len())?;
        out.copy_from_slice(&self.x);
        Ok(())
    }

    pub fn nominals(&self, out: &mut [f64]) -> Result<()> {
        self.check_len("states", out.len(), self.x.len())?;
        for (o, &s) in out.iter_mut().zip(&self.program.states) {
            let n = self.program.vars[s as usize].nominal.abs();
            *o = if n > 0.0 && n.is_finite() { n } else { 1.0 };
        }
        Ok(())
    }

    pub fn derivatives(&mut self, out: &mut [f64]) -> Result<()> {
        self.check_len("derivatives", out.len(), self.x.len())?;
        if !self.initialized {
            return Err("derivatives are available after initialization".into());
        }
        // Always evaluate: the memory may hold event-mode or event-indicator values, whose
        // evaluation does not fill `dx`.
        self.stale = true;
        self.refresh()?;
        out.copy_from_slice(&self.dx);
        Ok(())
    }

    /// Event indicators: one per zero crossing, changing sign exactly where the relation
    /// changes its value (`g` for `>`/`>=`, `-g` for `<`/`<=`, with `g = lhs - rhs` as the
    /// program defines it).
    pub fn event_indicators(&mut self, out: &mut [f64]) -> Result<()> {
        let n = self.n_event_indicators();
        self.check_len("event indicators", out.len(), n)?;
        if !self.initialized {
            return Err("event indicators are available after initialization".into());
        }
        self.model
            .zero_crossings(self.time, &self.x, out)
            .map_err(|e| e.to_string())?;
        for (z, zc) in out.iter_mut().zip(&self.program.zero_crossings) {
            if matches!(zc.op, RelOp::Lt | RelOp::Le) {
                *z = -*z;
            }
        }
        // The memory need not hold a whole evaluation at (time, x): the crossings may have
        // run only the blocks they need, so `stale` stays as it was.
        Ok(())
    }

    pub fn enter_event_mode(&mut self) -> Result<()> {
        self.expect_mode("entering event mode", &[Mode::Event, Mode::Continuous])?;
        self.mode = Mode::Event;
        Ok(())
    }

    pub fn enter_continuous_mode(&mut self) -> Result<()> {
        self.expect_mode("entering continuous-time mode", &[Mode::Event])?;
        self.mode = Mode::Continuous;
        Ok(())
    }

    /// The event iteration at the current time and states (all of it: moss iterates to a
    /// fixed point in one call, so no further call is needed).
    pub fn new_discrete_states(&mut self) -> Result<EventInfo> {
        self.expect_mode("the event iteration", &[Mode::Event])?;
        let mut info = EventInfo::default();
        if self.initial_event_done {
            self.initial_event_done = false;
        } else {
            let before = self.x.clone();
            let outcome = self
                .model
                .event_update(self.time, &mut self.x)
                .map_err(|e| e.to_string())?;
            self.stale = false;
            info.states_changed = outcome.states_changed || before != self.x;
            if outcome.terminate.is_some() {
                self.terminated = true;
            }
            info.terminate = outcome.terminate;
        }
        info.next_event_time = self.model.next_time_event(self.time);
        Ok(info)
    }

    // ---- Co-Simulation ----

    pub fn do_step(&mut self, t: f64, h: f64) -> Result<StepResult> {
        self.expect_mode("a co-simulation step", &[Mode::StepComplete])?;
        let tol = 1e-9 * t.abs().max(1.0);
        if (t - self.time).abs() > tol {
            return Err(format!(
                "a step from t = {t}, but the FMU is at t = {}",
                self.time
            ));
        }
        if h.is_nan() || h < 0.0 || h.is_infinite() {
            return Err(format!("invalid communication step size {h}"));
        }
        let opts = SimOptions {
            tolerance: self.tolerance,
            solver: self.solver,
            max_step: self.max_step(),
            ..Default::default()
        };
        let t1 = self.time + h;
        let seg = moss_sim::advance(&mut self.model, &self.program, &opts, self.time, t1)
            .map_err(|e| e.to_string())?;
        if seg.switched_to_bdf {
            self.solver = Solver::Bdf;
        }
        self.model.states(&mut self.x);
        self.stale = false;
        // `t + h` exactly, the communication point the importer expects (or the event time
        // of a `terminate()`).
        self.time = if seg.terminated.is_some() {
            seg.t_end
        } else {
            t + h
        };
        self.last_successful_time = self.time;
        match seg.terminated {
            Some(message) => {
                self.terminated = true;
                Ok(StepResult::Terminated {
                    time: seg.t_end,
                    message,
                })
            }
            None => Ok(StepResult::Completed),
        }
    }

    /// Largest integration step: a fiftieth of the experiment, as `moss simulate` uses,
    /// so that results do not depend on the communication step.
    fn max_step(&self) -> Option<f64> {
        let exp = &self.program.experiment;
        let start = exp.start_time.unwrap_or(self.start_time);
        let stop = self.stop_time.or(exp.stop_time)?;
        let span = stop - start;
        (span > 0.0).then_some(span / 50.0)
    }
}
