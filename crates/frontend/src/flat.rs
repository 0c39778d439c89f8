//! The flat model: the single output of the frontend and the single input of `moss-symbolic`.
//!
//! Invariants kept at this boundary (the frontend guarantees them, later stages rely on them):
//! - Every variable is a **scalar** with a unique full Modelica name (`a.b[2].c`). Arrays of the
//!   model are expanded element by element; only function bodies keep arrays.
//! - Every [`Expr::Var`] in model equations names a variable of [`FlatModel::variables`]; names
//!   of enumeration literals, constants of packages and record fields are already resolved.
//! - Connections are expanded into plain equations (potentials equal, flows summing to zero,
//!   unconnected flows zero, `inStream`/`actualStream` expanded).
//! - Every function called anywhere is in [`FlatModel::functions`], keyed by its full name;
//!   built-in operators keep their plain names (see [`BUILTINS`]).
//! - Bindings of non-parameter variables have been turned into equations; parameters and
//!   constants keep their binding in [`Variable::binding`].
//! - Structural parameters (array sizes, `for` ranges, `if` conditions on parameters,
//!   conditional components) have been evaluated away.
//! - Every equation carries an [`Origin`] pointing at the user's source.

use moss_syntax::Span;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Where a flat item came from: the source span and the instance path (e.g. `inertia1`).
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Origin {
    pub span: Span,
    pub instance: Arc<str>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Variability {
    Constant,
    Parameter,
    Discrete,
    Continuous,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Causality {
    Input,
    Output,
    Internal,
}

/// Scalar type of a flat variable.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum ScalarType {
    Real,
    Integer,
    Boolean,
    String,
    /// A clock (spec 16.3): only clock constructors, clock operators and other clocks are
    /// assigned to it; the clock pass of `moss-symbolic` removes clock variables.
    Clock,
    /// Enumeration with its full type name and literal names (1-based values).
    Enumeration {
        name: Arc<str>,
        literals: Vec<Arc<str>>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum StateSelect {
    Never,
    Avoid,
    Default,
    Prefer,
    Always,
}

/// Type attributes of a scalar variable, already evaluated where possible.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Attributes {
    pub start: Option<Expr>,
    /// The start value comes from the variable's declaration or a modification of it, not
    /// only from its type (`type Density = Real(start = 1)`): a meaningful first guess.
    #[cfg_attr(feature = "serde", serde(default))]
    pub start_given: bool,
    pub fixed: Option<bool>,
    pub nominal: Option<Expr>,
    pub min: Option<Expr>,
    pub max: Option<Expr>,
    pub unit: Option<String>,
    pub display_unit: Option<String>,
    pub quantity: Option<String>,
    pub state_select: Option<StateSelect>,
}

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Variable {
    /// Full scalar name, e.g. `clutch1.mode` or `table[2,1]`.
    pub name: String,
    pub ty: ScalarType,
    pub variability: Variability,
    pub causality: Causality,
    /// Binding equation (`= expr`) of parameters and constants. For other variables the
    /// frontend emits the binding as an equation instead and leaves this `None`.
    pub binding: Option<Expr>,
    pub attrs: Attributes,
    /// Declared `flow` (kept for diagnostics and balance checks).
    pub is_flow: bool,
    pub is_stream: bool,
    pub is_protected: bool,
    /// Declared with `annotation(Evaluate=true)`: the value is to be used at translation
    /// time (parameters and constants only), so it can no longer be changed before a run.
    pub evaluate: bool,
    pub description: String,
    pub origin: Origin,
}

/// Flat expression. Shared by equations, algorithms and function bodies.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Expr {
    Real(f64),
    Integer(i64),
    Boolean(bool),
    String(String),
    /// Enumeration literal: type name, literal name, 1-based index.
    Enum {
        ty: Arc<str>,
        literal: Arc<str>,
        index: u32,
    },
    /// A model variable by full scalar name (model context), or a function local with dynamic
    /// subscripts (function context; `subscripts` is always empty in model equations).
    Var {
        name: String,
        subscripts: Vec<Subscript>,
    },
    /// The built-in variable `time`.
    Time,
    Unary {
        op: UnaryOp,
        arg: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// Call of a built-in operator (plain name, see [`BUILTINS`]) or of a function in
    /// [`FlatModel::functions`] (full name). Named arguments are already placed in order and
    /// defaults filled in.
    Call {
        func: String,
        args: Vec<Expr>,
    },
    /// `if c1 then e1 elseif c2 then e2 else e3`.
    If {
        branches: Vec<(Expr, Expr)>,
        else_: Box<Expr>,
    },
    /// Array literal `{a, b, c}`; matrices are arrays of arrays (row-major).
    Array(Vec<Expr>),
    /// Range `start:step:stop` (step `None` means 1); used in `for` loops and function bodies.
    Range {
        start: Box<Expr>,
        step: Option<Box<Expr>>,
        stop: Box<Expr>,
    },
    /// Output list of a function call used as a statement/equation target: `(a, , b)`.
    Tuple(Vec<Option<Expr>>),
    /// Selection of output `index` (0-based) of a multi-output function call.
    CallOutput {
        call: Box<Expr>,
        index: usize,
    },
}

impl Expr {
    /// Does this `when` condition make its equations or statements active at
    /// initialization (spec 8.6)? `initial()` itself, an element of the condition vector, or
    /// an operand of `or` (true whenever `initial()` is). A condition that merely mentions
    /// `initial()` (`not initial()`, `initial() and c`, the argument of a function,
    /// `foo(initial())`) does not: decided on the flat condition, so that inlining `foo`
    /// later cannot change the answer.
    pub fn enables_at_initialization(&self) -> bool {
        match self {
            Expr::Call { func, args } => func == "initial" && args.is_empty(),
            Expr::Binary {
                op: BinaryOp::Or,
                lhs,
                rhs,
            } => lhs.enables_at_initialization() || rhs.enables_at_initialization(),
            Expr::Array(items) => items.iter().any(Expr::enables_at_initialization),
            _ => false,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Subscript {
    Index(Expr),
    /// `:` (whole dimension)
    All,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum UnaryOp {
    Neg,
    Not,
}

/// Binary operators are the syntax tree's own: the element-wise forms occur in flat
/// expressions only inside function bodies, before their scalarization.
pub use moss_syntax::ast::BinaryOp;

/// The clock constructor and the clock operators of spec chapter 16 (besides `sample`, which
/// is also the time-event operator of chapter 3).
pub const CLOCK_OPERATORS: &[&str] = &[
    "Clock",
    "previous",
    "hold",
    "subSample",
    "superSample",
    "shiftSample",
    "backSample",
    "noClock",
    "firstTick",
    "interval",
];

/// Built-in operators and functions that may appear in [`Expr::Call`] under their plain name.
/// Everything else called must be a key of [`FlatModel::functions`].
pub const BUILTINS: &[&str] = &[
    // differential / event operators
    "der",
    "pre",
    "edge",
    "change",
    "initial",
    "terminal",
    "sample",
    "noEvent",
    "smooth",
    "homotopy",
    "reinit",
    "delay",
    "cardinality",
    "semiLinear",
    // synchronous language (spec 16): [`CLOCK_OPERATORS`], removed by the clock pass of
    // `moss-symbolic` (as is `sample` with a Clock or without a second argument)
    "Clock",
    "previous",
    "hold",
    "subSample",
    "superSample",
    "shiftSample",
    "backSample",
    "noClock",
    "firstTick",
    "interval",
    // state machines (spec 17)
    "transition",
    "initialState",
    "activeState",
    "ticksInState",
    "timeInState",
    // scalar math
    "abs",
    "sign",
    "sqrt",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "atan2",
    "sinh",
    "cosh",
    "tanh",
    "exp",
    "log",
    "log10",
    "min",
    "max",
    "div",
    "mod",
    "rem",
    "ceil",
    "floor",
    "integer",
    "Integer",
    "Real",
    "String",
    "Boolean",
    // array functions (function bodies, or arguments already scalarized)
    "size",
    "ndims",
    "sum",
    "product",
    "fill",
    "zeros",
    "ones",
    "linspace",
    "cat",
    "transpose",
    "identity",
    "diagonal",
    "cross",
    "skew",
    "outerProduct",
    "symmetric",
    "scalar",
    "vector",
    "matrix",
    // assertions in expressions
    "assert",
    "terminate",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum AssertLevel {
    Error,
    Warning,
}

/// A flat equation. Inside `when` branches only `Equal` (with a variable or tuple on the left),
/// `Reinit`, `Assert`, `Terminate` and `Call` appear.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Equation {
    Equal {
        lhs: Expr,
        rhs: Expr,
        origin: Origin,
    },
    If {
        branches: Vec<(Expr, Vec<Equation>)>,
        else_: Vec<Equation>,
        origin: Origin,
    },
    When {
        branches: Vec<(Expr, Vec<Equation>)>,
        origin: Origin,
    },
    Reinit {
        var: String,
        value: Expr,
        origin: Origin,
    },
    Assert {
        condition: Expr,
        message: Expr,
        level: AssertLevel,
        origin: Origin,
    },
    Terminate {
        message: Expr,
        origin: Origin,
    },
    /// A function called for its side effects (no outputs).
    Call {
        func: String,
        args: Vec<Expr>,
        origin: Origin,
    },
}

impl Equation {
    /// Where the equation was written.
    pub fn origin(&self) -> &Origin {
        match self {
            Equation::Equal { origin, .. }
            | Equation::If { origin, .. }
            | Equation::When { origin, .. }
            | Equation::Reinit { origin, .. }
            | Equation::Assert { origin, .. }
            | Equation::Terminate { origin, .. }
            | Equation::Call { origin, .. } => origin,
        }
    }
}

/// Names assigned anywhere in `stmts`: targets of assignments and tuple assignments, also
/// inside branches, loops and `when` clauses.
pub fn assigned_names(stmts: &[Statement]) -> std::collections::HashSet<&str> {
    fn walk<'s>(stmts: &'s [Statement], out: &mut std::collections::HashSet<&'s str>) {
        let target = |t: &'s Expr, out: &mut std::collections::HashSet<&'s str>| {
            if let Expr::Var { name, .. } = t {
                out.insert(name.as_str());
            }
        };
        for s in stmts {
            match s {
                Statement::Assign { target: t, .. } => target(t, out),
                Statement::TupleAssign { targets, .. } => {
                    targets.iter().flatten().for_each(|t| target(t, out))
                }
                Statement::If {
                    branches, else_, ..
                } => {
                    branches.iter().for_each(|(_, b)| walk(b, out));
                    walk(else_, out);
                }
                Statement::For { body, .. } | Statement::While { body, .. } => walk(body, out),
                Statement::When { branches, .. } => branches.iter().for_each(|(_, b)| walk(b, out)),
                _ => {}
            }
        }
    }
    let mut out = std::collections::HashSet::new();
    walk(stmts, &mut out);
    out
}

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Statement {
    /// `target := value`; target is `Expr::Var` (possibly subscripted inside functions).
    Assign {
        target: Expr,
        value: Expr,
        origin: Origin,
    },
    /// `(a, , b) := f(x)`
    TupleAssign {
        targets: Vec<Option<Expr>>,
        value: Expr,
        origin: Origin,
    },
    If {
        branches: Vec<(Expr, Vec<Statement>)>,
        else_: Vec<Statement>,
        origin: Origin,
    },
    For {
        var: String,
        range: Expr,
        body: Vec<Statement>,
        origin: Origin,
    },
    While {
        condition: Expr,
        body: Vec<Statement>,
        origin: Origin,
    },
    When {
        branches: Vec<(Expr, Vec<Statement>)>,
        origin: Origin,
    },
    Reinit {
        var: String,
        value: Expr,
        origin: Origin,
    },
    Assert {
        condition: Expr,
        message: Expr,
        level: AssertLevel,
        origin: Origin,
    },
    Terminate {
        message: Expr,
        origin: Origin,
    },
    Call {
        func: String,
        args: Vec<Expr>,
        origin: Origin,
    },
    Return {
        origin: Origin,
    },
    Break {
        origin: Origin,
    },
}

impl Statement {
    /// Where the statement was written (every statement has an origin).
    pub fn origin(&self) -> &Origin {
        match self {
            Statement::Assign { origin, .. }
            | Statement::TupleAssign { origin, .. }
            | Statement::If { origin, .. }
            | Statement::For { origin, .. }
            | Statement::While { origin, .. }
            | Statement::When { origin, .. }
            | Statement::Reinit { origin, .. }
            | Statement::Assert { origin, .. }
            | Statement::Terminate { origin, .. }
            | Statement::Call { origin, .. }
            | Statement::Return { origin }
            | Statement::Break { origin } => origin,
        }
    }
}

/// An algorithm section of the model: statements on scalar model variables.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Algorithm {
    pub statements: Vec<Statement>,
    pub origin: Origin,
}

/// A formal parameter or local of a function. Dimensions: `None` for `:`.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct FunctionVar {
    pub name: String,
    pub ty: ScalarType,
    pub dims: Vec<Option<Expr>>,
    pub default: Option<Expr>,
}

/// The name of the derivative function that the symbolic stage generates for a function
/// without a `derivative` annotation by differentiating its algorithm (`$` cannot appear in
/// a Modelica name). Partial derivatives (`der(f, x)`) call it.
pub fn generated_derivative_name(f: &str) -> String {
    format!("{f}.$der")
}

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum FunctionBody {
    Algorithm(Vec<Statement>),
    /// `external "C" out = name(args)`; only known library functions can be executed.
    External {
        language: String,
        name: String,
        output: Option<String>,
        args: Vec<Expr>,
        /// The C code the call needs (the external clause's annotation); empty for the
        /// library functions moss runs natively.
        #[cfg_attr(feature = "serde", serde(default))]
        code: ExternalCode,
    },
}

/// What the annotation of an external clause says about the code to compile and link
/// (spec 12.9.4), with `modelica://` URIs already resolved to directories that exist. The
/// default directories of the function's top-level library (`Resources/Include`,
/// `Resources/Library`) are included when they exist.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ExternalCode {
    /// `Include` texts, each pasted into the generated C file once.
    pub includes: Vec<String>,
    /// Directories for `#include` (`IncludeDirectory`).
    pub include_dirs: Vec<String>,
    /// Libraries to link (`Library`, without `lib` prefix and suffix).
    pub libraries: Vec<String>,
    /// Directories searched for them (`LibraryDirectory`).
    pub library_dirs: Vec<String>,
    /// Variables of the function that are external objects (C `void*` handles, held as
    /// Integers).
    pub objects: Vec<String>,
}

/// `annotation(derivative(order=2, noDerivative=x, zeroDerivative=y) = f_der)`
/// `annotation(inverse(T = T_ph(p, h)))` on `h = h_pT(p, T)` (spec 12.8): where an equation
/// `h = h_pT(p, T)` must be solved for `T`, `T = T_ph(p, h)` may be used instead.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct InverseAnnotation {
    /// The input of this function that the inverse computes (`T`).
    pub input: String,
    /// Full name of the inverse function.
    pub function: String,
    /// Its arguments, each a formal input or the output of this function, by position
    /// (`None`) or by the inverse's input name (`Some`).
    pub args: Vec<(Option<String>, String)>,
}

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DerivativeAnnotation {
    pub function: String,
    pub order: u32,
    pub no_derivative: Vec<String>,
    pub zero_derivative: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Function {
    /// Full name, e.g. `Modelica.Math.Vectors.interpolate`.
    pub name: String,
    pub inputs: Vec<FunctionVar>,
    pub outputs: Vec<FunctionVar>,
    pub locals: Vec<FunctionVar>,
    pub body: FunctionBody,
    pub derivatives: Vec<DerivativeAnnotation>,
    pub inverses: Vec<InverseAnnotation>,
    pub inline: bool,
    pub smooth_order: Option<u32>,
    pub is_impure: bool,
    pub origin: Origin,
}

/// Values of the `experiment` annotation; `None` where the model says nothing.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Experiment {
    pub start_time: Option<f64>,
    pub stop_time: Option<f64>,
    pub tolerance: Option<f64>,
    pub interval: Option<f64>,
}

#[derive(Clone, Debug, Default)]
pub struct FlatModel {
    /// Full name of the instantiated class.
    pub name: String,
    pub variables: Vec<Variable>,
    pub equations: Vec<Equation>,
    pub initial_equations: Vec<Equation>,
    pub algorithms: Vec<Algorithm>,
    pub initial_algorithms: Vec<Algorithm>,
    pub functions: BTreeMap<String, Function>,
    pub experiment: Experiment,
    /// Parameters whose values the frontend used to build the structure (array sizes, `for`
    /// ranges, `if` conditions, dimension arguments): changing one of them before a run
    /// would have no effect, so later stages refuse it.
    pub structural_parameters: Vec<String>,
    /// The source files the spans point into.
    pub sources: Arc<moss_syntax::SourceMap>,
    /// Variables declared `inner outer` (an intermediate level of a state machine), each
    /// with the variable of the enclosing level it stands for as `outer`.
    pub inner_outer: Vec<(String, String)>,
}
