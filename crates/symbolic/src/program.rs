//! The causal program: the single output of `moss-symbolic`, executed by `moss-codegen`
//! (interpreter now, JIT later). Nothing downstream looks at equations again.
//!
//! # Execution model
//! All runtime values live in one `f64` vector indexed by [`VarId`] (Booleans are 0.0/1.0,
//! Integers and enumerations are whole numbers), plus a second vector of the same length with
//! the `pre` values, plus one Boolean per zero crossing (the frozen relation values).
//!
//! - [`CausalProgram::parameter_blocks`] compute dependent parameters (run once before
//!   initialization, and again after `-p NAME=VALUE` overrides of independent parameters).
//! - [`CausalProgram::start_blocks`] compute the start values that depend on parameters,
//!   before initialization; they are then also the `pre` values.
//! - [`CausalProgram::init_blocks`] solve the initialization problem at the start time: after
//!   them every variable (states, derivatives, algebraics, discretes) holds a consistent value.
//!   While they run, `initial()` is true and every relation is evaluated live.
//! - [`CausalProgram::blocks`] compute, from time, states, parameters and discrete values,
//!   every derivative and algebraic variable, and (in event mode) every discrete variable.
//!   * **Continuous mode** (integration steps): a relation with a zero-crossing index returns
//!     its frozen value; `When` blocks do not fire; discrete variables therefore keep their
//!     values.
//!   * **Event mode**: relations are evaluated live and their frozen values updated; `When`
//!     branches fire when one of their condition variables is true and its `pre` value is
//!     false (elsewhen priority: the first firing branch wins). The runtime repeats the whole
//!     list, copying values to `pre` between passes, until no discrete variable and no relation
//!     changes (event iteration). This also resolves mixed continuous/discrete loops
//!     (friction `locked`/`startForward`), because relations are treated as inputs when the
//!     blocks are sorted.
//! - Zero-crossing `i` is the sign of [`ZeroCrossing::expr`]; a sign change during a step is an
//!   event. A relation of the form `time >= p` (p not depending on states) also carries the
//!   event time in [`ZeroCrossing::time_event`] so the runtime can hit it exactly.

use moss_frontend::flat::{AssertLevel, Experiment, Function, Statement};
use std::collections::BTreeMap;

/// Index into [`CausalProgram::vars`].
pub type VarId = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum VarKind {
    Constant,
    /// Parameter whose value is given (binding evaluates to a literal, or set by the user).
    Parameter,
    /// Parameter computed from others by [`CausalProgram::parameter_blocks`] (or `fixed=false`
    /// parameters computed by initialization).
    DependentParameter,
    State,
    /// `der(state)`; [`CausalProgram::derivatives`] pairs it with its state.
    Derivative,
    Algebraic,
    Discrete,
    /// Top-level input (value held at its start value unless driven externally).
    Input,
    /// Slot of the tangent program ([`OdeJacobian`]): a seed or a directional derivative,
    /// not a model variable.
    Tangent,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum ValueType {
    Real,
    Integer,
    Boolean,
    Enumeration,
    String,
}

/// One runtime slot.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ProgVar {
    /// Full Modelica name (`inertia1.w`, `der(inertia1.phi)`), or `$...` for generated ones.
    pub name: String,
    pub kind: VarKind,
    pub ty: ValueType,
    /// Start value (the literal value when the start attribute is a constant; otherwise 0 and
    /// the initialization blocks compute it).
    pub start: f64,
    pub nominal: f64,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub unit: String,
    pub description: String,
    /// Protected or generated: hidden from results unless asked for.
    pub hidden: bool,
}

/// `name = scale * target + offset`: an eliminated variable recoverable at no cost.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Alias {
    pub name: String,
    pub target: VarId,
    pub scale: f64,
    pub offset: f64,
    pub unit: String,
    pub description: String,
    pub kind: VarKind,
    pub hidden: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum RelOp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
}

/// Expression of the causal program. Variables are slots; everything is a scalar except
/// [`PExpr::Array`], which only appears as an argument of a function call.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum PExpr {
    Const(f64),
    Str(String),
    Var(VarId),
    /// `pre(v)` (also used for the left limit of discrete variables at events).
    Pre(VarId),
    Time,
    Neg(Box<PExpr>),
    Not(Box<PExpr>),
    Arith(ArithOp, Box<PExpr>, Box<PExpr>),
    And(Box<PExpr>, Box<PExpr>),
    Or(Box<PExpr>, Box<PExpr>),
    /// A relation. `zc = Some(i)`: event-generating, frozen in continuous mode (see module
    /// docs). `zc = None`: inside `noEvent`, always evaluated live.
    Rel {
        op: RelOp,
        lhs: Box<PExpr>,
        rhs: Box<PExpr>,
        zc: Option<u32>,
    },
    /// `if c then a else b` (elseif chains are nested).
    If(Box<PExpr>, Box<PExpr>, Box<PExpr>),
    /// Built-in function (plain name: `sin`, `abs`, `min`, `div`, `String`, ...; see
    /// `moss_frontend::flat::BUILTINS`) or user function (full name, key of
    /// [`CausalProgram::functions`]); returns output 0 of the function.
    Call {
        func: String,
        args: Vec<PExpr>,
    },
    Array(Vec<PExpr>),
    /// `initial()`, `terminal()`
    Initial,
    Terminal,
    /// `sample(start, interval)`: true at the event instants of sample `id`.
    Sample(u32),
}

/// One step of the causal program.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Block {
    /// `var := expr` (an equation solved symbolically for its matched variable).
    Assign {
        var: VarId,
        expr: PExpr,
    },
    /// Solve `residual(var) = 0` for one scalar by Newton iteration, starting from the current
    /// value of `var`. `derivative` is d residual / d var when known symbolically.
    SolveScalar {
        var: VarId,
        residual: PExpr,
        derivative: Option<PExpr>,
    },
    /// Linear system `A x = b` in the variables `vars`, with sparse entries `(row, col, a_rc)`;
    /// entries and right-hand sides may use variables computed by earlier blocks.
    Linear {
        vars: Vec<VarId>,
        matrix: Vec<(u32, u32, PExpr)>,
        rhs: Vec<PExpr>,
    },
    /// Torn nonlinear system: given values of `iteration_vars`, run `inner` (which computes the
    /// other loop variables), then evaluate `residuals`; Newton drives the residuals to zero.
    /// `jacobian`: symbolic entries d residual_r / d iteration_var_c when available.
    /// `linear`: the residuals are affine in the iteration variables (a torn linear loop):
    /// one step `x - J⁻¹ r(x)` is the solution, without a convergence test; the general
    /// solver is the fallback when `J` is singular.
    Nonlinear {
        iteration_vars: Vec<VarId>,
        inner: Vec<Block>,
        residuals: Vec<PExpr>,
        jacobian: Option<Vec<(u32, u32, PExpr)>>,
        linear: bool,
        /// The same loop (same unknowns) torn dividing only by constants and parameters,
        /// when this tearing divides by expressions that may vanish: tried when this one
        /// fails (non-finite values where a divisor is zero, or no convergence).
        #[cfg_attr(feature = "serde", serde(default))]
        fallback: Option<Box<Block>>,
    },
    /// `(out1, out2, ...) = f(args)`: a function call with several outputs (or an array
    /// output expanded element-wise). `None` skips an output.
    CallOutputs {
        outputs: Vec<Option<VarId>>,
        func: String,
        args: Vec<PExpr>,
    },
    /// An algorithm section, executed as a unit. Statements use full variable names (resolve
    /// them against [`CausalProgram::vars`] once at compile time); `outputs` are the
    /// variables it assigns.
    Algorithm {
        statements: Vec<Statement>,
        inputs: Vec<VarId>,
        outputs: Vec<VarId>,
    },
    /// `when` / `elsewhen`: see module docs for the firing rule.
    When {
        branches: Vec<WhenBranch>,
    },
    Reinit {
        var: VarId,
        value: PExpr,
    },
    Assert {
        condition: PExpr,
        message: PExpr,
        level: AssertLevel,
    },
    Terminate {
        message: PExpr,
    },
}

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct WhenBranch {
    /// Boolean condition slots (computed by earlier blocks); the branch fires when any of them
    /// is true while its `pre` value is false.
    pub conditions: Vec<VarId>,
    /// True when `initial()` enables the condition (`when initial()`, `when {initial(), c}`,
    /// `when initial() or c`): the branch may fire during initialization.
    pub fires_at_initial: bool,
    /// Assign (to discrete variables), Reinit, Assert, Terminate, CallOutputs, Algorithm.
    pub body: Vec<Block>,
}

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ZeroCrossing {
    /// `lhs - rhs` of the relation; its sign change is the event.
    pub expr: PExpr,
    pub op: RelOp,
    /// When the relation is `time <op> e` with `e` free of states and algebraics: `e`.
    pub time_event: Option<PExpr>,
    /// Human-readable relation and source location, for chattering messages.
    pub description: String,
}

/// The symbolic Jacobian of the ODE as a tangent program (see `moss_symbolic::jacobian`):
/// after [`CausalProgram::blocks`] ran in continuous mode at `(t, x)`, set `seeds[j]` to
/// `s_j` for every state `j` and run `blocks`; then `outputs[i]` holds `(J s)_i`, the
/// directional derivative of `der(states[i])` along `s` (`None`: identically 0).
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct OdeJacobian {
    pub seeds: Vec<VarId>,
    pub outputs: Vec<Option<VarId>>,
    pub blocks: Vec<Block>,
}

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SampleDef {
    pub start: PExpr,
    pub interval: PExpr,
}

/// Figures reported by `moss translate`.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TranslationReport {
    /// (pass name, seconds)
    pub pass_times: Vec<(String, f64)>,
    pub index_before_reduction: u32,
    /// Constraints on the states found in linear dependencies between equations (see
    /// `moss_symbolic::hidden_constraints`), each replacing one of the equations it combines.
    #[cfg_attr(feature = "serde", serde(default))]
    pub hidden_constraints: Vec<String>,
    pub dummy_derivatives: Vec<String>,
    /// Sizes of algebraic loops before tearing and after (number of iteration variables).
    pub loops_before_tearing: Vec<usize>,
    pub loops_after_tearing: Vec<usize>,
    /// How each state was chosen (e.g. "stateSelect=prefer", "only candidate").
    pub state_choices: Vec<(String, String)>,
    /// Parameters turned into constants at translation time (`annotation(Evaluate=true)`,
    /// bindings on such parameters only, or a zero value that makes an equation singular).
    /// They can no longer be set before a run.
    pub evaluated_parameters: Vec<EvaluatedParam>,
    /// How the ODE Jacobian is computed.
    pub jacobian: JacobianSource,
    pub warnings: Vec<String>,
    /// Dynamic state selection: the candidates of each state set, chosen at run time.
    pub state_sets: Vec<StateSetReport>,
}

/// One dynamic state set (see `moss_symbolic::state_sets`).
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct StateSetReport {
    /// The variables of which `states.len()` are states at any time.
    pub candidates: Vec<String>,
    /// The set's own state variables (`$stateSetN.x[j]`), each standing for a candidate.
    pub states: Vec<String>,
    /// The Integer variable whose bits tell which candidates are states.
    pub mask: String,
    /// The constraints as written (the set uses them differentiated as far as its level)
    /// that determine the other candidates.
    pub constraints: Vec<String>,
}

/// Where the values of the ODE Jacobian come from.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum JacobianSource {
    /// The tangent program [`CausalProgram::ode_jacobian`].
    Symbolic,
    /// Finite differences over the pattern, for the reason given.
    FiniteDifferences(String),
}

impl Default for JacobianSource {
    fn default() -> Self {
        JacobianSource::FiniteDifferences("no tangent program was built".into())
    }
}

/// A parameter evaluated at translation time: its value and why it was evaluated.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct EvaluatedParam {
    pub name: String,
    pub value: f64,
    pub ty: ValueType,
    pub why: String,
}

impl EvaluatedParam {
    /// The value as written in Modelica (`true`/`false` for Booleans).
    pub fn value_text(&self) -> String {
        match self.ty {
            ValueType::Boolean => (self.value != 0.0).to_string(),
            _ => crate::ir::fmt_num(self.value),
        }
    }
}

impl TranslationReport {
    /// The evaluated parameter of this name, if it was evaluated at translation time.
    pub fn evaluated(&self, name: &str) -> Option<&EvaluatedParam> {
        self.evaluated_parameters.iter().find(|p| p.name == name)
    }
}

#[derive(Clone, Debug, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CausalProgram {
    pub name: String,
    pub vars: Vec<ProgVar>,
    pub aliases: Vec<Alias>,
    /// State slots; `derivatives[i]` is the slot of `der(states[i])`.
    pub states: Vec<VarId>,
    pub derivatives: Vec<VarId>,
    pub parameter_blocks: Vec<Block>,
    /// Start values that depend on parameters, computed after the parameters: like literal
    /// start values ([`ProgVar::start`]) they are the first value and the `pre` value of
    /// their variables when initialization begins (a discrete `y(start = y0, fixed = true)`
    /// assigned only in a `when` keeps `pre(y) = y0` until the `when` fires).
    pub start_blocks: Vec<Block>,
    pub init_blocks: Vec<Block>,
    pub blocks: Vec<Block>,
    pub zero_crossings: Vec<ZeroCrossing>,
    /// The indices of [`CausalProgram::blocks`] that the zero crossings need, in order
    /// (those computing what their expressions read, transitively): locating an event
    /// evaluates the crossings at many points between two steps, and the switches of a
    /// power converter need 5 of its 253 blocks.
    /// `None` when not computed (a program built by hand).
    #[cfg_attr(feature = "serde", serde(default))]
    pub zero_crossing_blocks: Option<Vec<u32>>,
    pub samples: Vec<SampleDef>,
    /// Structural nonzeros `(i, j)` of `d der(states[i]) / d states[j]`.
    pub jacobian_pattern: Vec<(u32, u32)>,
    /// Their values, symbolically (`None`: see [`TranslationReport::jacobian`]).
    pub ode_jacobian: Option<OdeJacobian>,
    pub functions: BTreeMap<String, Function>,
    pub experiment: Experiment,
    pub report: TranslationReport,
}

impl CausalProgram {
    /// Slot of a variable by full name (linear scan; build a map when calling often).
    pub fn var_by_name(&self, name: &str) -> Option<VarId> {
        self.vars
            .iter()
            .position(|v| v.name == name)
            .map(|i| i as VarId)
    }
}
