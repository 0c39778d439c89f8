//! The interface between an executable model (interpreter now, JIT later) and the simulator.
//!
//! The simulator (`moss-sim`) only talks to a `dyn ExecutableModel`; it never looks at the
//! causal program's blocks. See `moss_symbolic::program` for the execution semantics.

use std::fmt;

/// A failure while executing the model, with enough context to act on it.
#[derive(Clone, Debug, PartialEq)]
pub struct RuntimeError {
    /// Simulation time at which it happened.
    pub time: f64,
    pub message: String,
    /// Further lines: equations with the largest residuals, variables involved, ...
    pub details: Vec<String>,
}

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at time {}: {}", self.time, self.message)?;
        for d in &self.details {
            write!(f, "\n  {d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for RuntimeError {}

/// What an event iteration did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EventOutcome {
    /// A `reinit` changed states (or discrete changes changed the state derivatives' structure):
    /// the integrator must restart from the new state vector.
    pub states_changed: bool,
    /// `terminate()` was called, or `terminal` handling is complete.
    pub terminate: Option<String>,
    /// Number of passes of the event iteration.
    pub iterations: u32,
}

/// Counters kept by the executable model.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ModelStats {
    pub derivative_evaluations: u64,
    pub zero_crossing_evaluations: u64,
    pub event_iterations: u64,
    pub nonlinear_solves: u64,
    pub nonlinear_iterations: u64,
    /// Nonlinear solves whose damped Newton failed, so a fallback (Levenberg–Marquardt,
    /// other start values) ran.
    pub nonlinear_fallbacks: u64,
    /// Calls of Modelica functions run by the function interpreter, and how many of them
    /// the call memo answered (`memo.rs`).
    pub function_calls: u64,
    pub memo_hits: u64,
    /// Calls run by the compiled scalar form of their function.
    pub scalar_calls: u64,
    /// Compiled calls that ran as native code.
    pub native_calls: u64,
    /// Runs of the symbolic tangent program (Jacobian-vector products).
    pub jacobian_products: u64,
    /// LU factorizations of large sparse linear systems with a pivot search, and those
    /// refactored along the pivots of the one before (`sparse.rs`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub sparse_factorizations: u64,
    #[cfg_attr(feature = "serde", serde(default))]
    pub sparse_refactorizations: u64,
    /// Linear solves with the factors kept from an earlier solve, whose matrix inputs had
    /// not changed (`kept_factors.rs`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub kept_matrix_solves: u64,
}

pub trait ExecutableModel {
    fn n_states(&self) -> usize;
    fn n_zero_crossings(&self) -> usize;

    /// Override an independent parameter before `initialize` (`-p NAME=VALUE`).
    fn set_parameter(&mut self, name: &str, value: f64) -> Result<(), RuntimeError>;

    /// Evaluate parameters, solve the initialization problem at `t0`, then run the event
    /// iteration at `t0` so that all discrete variables are consistent.
    fn initialize(&mut self, t0: f64) -> Result<(), RuntimeError>;

    /// Current state vector.
    fn states(&self, x: &mut [f64]);

    /// Continuous mode: set time and states, compute all derivatives (into `dx`) and
    /// algebraic variables.
    fn derivatives(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), RuntimeError>;

    /// The integrator accepted a step ending at time `t` with the last evaluation: nonlinear
    /// solves of evaluations that go back in time start from the values of the accepted
    /// steps, not from those of a trial stage beyond them (which may lie past a switching
    /// point and pick another root of a loop with several, such as a Schmitt trigger's).
    fn step_accepted(&mut self, _t: f64) {}

    /// [`ExecutableModel::derivatives`] at an output point inside or at the end of the
    /// last accepted step.
    fn output_point(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), RuntimeError> {
        self.derivatives(t, x, dx)
    }

    /// Continuous mode: values of the zero-crossing functions at `(t, x)` (computes the
    /// blocks first). A sign different from the frozen relation value means an event.
    fn zero_crossings(&mut self, t: f64, x: &[f64], g: &mut [f64]) -> Result<(), RuntimeError>;

    /// Frozen value of each event-generating relation (true/false) since the last event.
    fn relation_values(&self) -> &[bool];

    /// Event mode at time `t` with states `x`: iterate to a fixed point (relations live,
    /// `when` branches firing, `reinit` applied to `x`).
    fn event_update(&mut self, t: f64, x: &mut [f64]) -> Result<EventOutcome, RuntimeError>;

    /// Earliest scheduled time event strictly after `t` (samples, `time >= p` relations).
    fn next_time_event(&self, t: f64) -> Option<f64>;

    /// Called once at the stop time: evaluates with `terminal()` true.
    fn terminate(&mut self, t: f64, x: &[f64]) -> Result<(), RuntimeError>;

    /// All current slot values (index = `VarId`), for result output.
    fn values(&self) -> &[f64];

    /// Structural nonzeros of d der(x_i)/d x_j.
    fn jacobian_pattern(&self) -> &[(u32, u32)];

    /// The model computes products of its Jacobian with vectors symbolically
    /// ([`ExecutableModel::jacobian_times`]); otherwise the simulator uses finite differences.
    fn has_symbolic_jacobian(&self) -> bool {
        false
    }

    /// Continuous mode: `out = J s` with `J = d der(x) / d x` at `(t, x)` and `s = seed`,
    /// from the symbolic tangent program. Cheapest right after `derivatives` at the same
    /// point, whose values it reuses.
    fn jacobian_times(
        &mut self,
        t: f64,
        x: &[f64],
        seed: &[f64],
        out: &mut [f64],
    ) -> Result<(), RuntimeError> {
        let _ = (x, seed, out);
        Err(RuntimeError {
            time: t,
            message: "this model has no symbolic Jacobian".into(),
            details: vec![],
        })
    }

    fn stats(&self) -> ModelStats;

    /// A `terminate(message)` that fired during `initialize` (the event iteration at the start
    /// time), taken once; later ones are reported by `event_update`.
    fn take_initial_terminate(&mut self) -> Option<String> {
        None
    }

    /// Messages of `assert(..., level = AssertionLevel.warning)` raised so far (each once).
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }
}
