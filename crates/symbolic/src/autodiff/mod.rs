//! Derivatives of user functions by differentiating their algorithm (forward mode, source
//! transformation), for the functions that have no `derivative` annotation.
//!
//! For `f(u1, .., un)` with an algorithm body, `f.$der` takes the inputs of `f` followed by
//! one derivative input `$du` per Real input, and returns the derivatives of the Real
//! outputs of `f` (in order). Its body is the body of `f` where every assignment `v := e` of
//! a Real variable is preceded by `$dv := Σ ∂e/∂w · $dw` (the assignment reads the old
//! values, so the derivative is computed first). Control flow is kept: relations are
//! constants for differentiation, as everywhere in moss. The outputs of `f` become locals.
//!
//! The derivative functions are registered like `derivative` annotations (every Real input
//! gets a derivative argument), so index reduction and the symbolic ODE Jacobian
//! differentiate calls of such functions; the generated functions that end up called reach
//! the causal program ([`referenced_generated_functions`]).

use moss_frontend::flat::{
    BinaryOp, Expr, Function, FunctionBody, FunctionVar, ScalarType, Statement, Subscript, UnaryOp,
};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::collections::BTreeMap;

mod activity;
mod liveness;
mod temporaries;

/// Function name -> (derivative function, which inputs get a derivative argument).
pub type DerivativeMap = HashMap<String, (String, Vec<bool>)>;

/// Suffix of a generated derivative function (`$` cannot appear in a Modelica name); the
/// name is [`moss_frontend::flat::generated_derivative_name`], which partial derivatives
/// (`der(f, x)`, spec 12.7.2) call.
const SUFFIX: &str = ".$der";

/// Derivatives of derivatives are generated up to this order (second derivatives are
/// needed by index-3 systems).
const MAX_ORDER: usize = 2;

/// Name of the generated derivative of `f`.
pub fn derivative_function_name(f: &str) -> String {
    moss_frontend::flat::generated_derivative_name(f)
}

/// Name of the derivative variable of a function variable in a derivative function of
/// order `order`: `$d1_x` in `f.$der`; `$d2_x` and `$d2_$d1_x` in `f.$der.$der` (the order
/// keeps the names of different orders apart: `$d1_x` is an input of `f.$der.$der` too).
fn derivative_var_name(order: usize, v: &str) -> String {
    format!("$d{order}_{v}")
}

/// Order of the derivative function of `f` (1 for an original function).
fn order_of_derivative(f: &str) -> usize {
    f.matches(SUFFIX).count() + 1
}

/// The result of [`generate_derivatives`].
#[derive(Default)]
pub struct Generated {
    /// The generated derivative functions by name.
    pub functions: BTreeMap<String, Function>,
    /// Entries to add to the derivative map (the generated functions, all Real inputs
    /// differentiated).
    pub fder: DerivativeMap,
    /// For the functions of `fder` whose derivative holds only along a zero derivative of
    /// some inputs (frozen by [`activity`]): per input of the function, whether its
    /// derivative must be zero.
    pub zero_required: HashMap<String, Vec<bool>>,
    /// Why the functions without a derivative have none (the first statement that could
    /// not be differentiated), for messages.
    pub failures: HashMap<String, String>,
}

/// For each function of `fder` (annotated or generated), the index of the derivative output
/// of each of its outputs (`None` for outputs that are not Real). The derivative function
/// returns the derivatives of the Real outputs, in order.
pub fn derivative_output_indices(
    functions: &BTreeMap<String, Function>,
    generated: &BTreeMap<String, Function>,
    fder: &DerivativeMap,
) -> HashMap<String, Vec<Option<u32>>> {
    let mut out = HashMap::default();
    for f in fder.keys() {
        let Some(func) = functions.get(f).or_else(|| generated.get(f)) else {
            continue;
        };
        let mut k = 0u32;
        let ix = func
            .outputs
            .iter()
            .map(|o| {
                (o.ty == ScalarType::Real).then(|| {
                    k += 1;
                    k - 1
                })
            })
            .collect();
        out.insert(f.clone(), ix);
    }
    out
}

/// Generate the derivative of every function with an algorithm body that `annotated` (the
/// `derivative` annotations) does not cover, and of those derivatives (up to
/// [`MAX_ORDER`]). Functions whose algorithm cannot be differentiated get none.
pub fn generate_derivatives(
    functions: &BTreeMap<String, Function>,
    annotated: &DerivativeMap,
) -> Generated {
    generate_derivatives_with(functions, Vec::new(), annotated)
}

/// [`generate_derivatives`] for `functions` and `extra` (a model's algorithm sections as
/// functions, see [`crate::algorithm_functions`]), which are returned with the generated
/// functions: the program calls them where a tangent needs their values.
pub fn generate_derivatives_with(
    functions: &BTreeMap<String, Function>,
    extra: Vec<Function>,
    annotated: &DerivativeMap,
) -> Generated {
    let extra_names: Vec<String> = extra.iter().map(|f| f.name.clone()).collect();
    let mut g = Generator {
        base: functions,
        fder: annotated.clone(),
        out: extra.into_iter().map(|f| (f.name.clone(), f)).collect(),
        tried: HashSet::default(),
        zero_required: HashMap::default(),
        failures: HashMap::default(),
    };
    for name in functions.keys().chain(&extra_names) {
        g.derivative_of(name);
    }
    let first: Vec<String> = g.out.keys().cloned().collect();
    for name in first {
        g.derivative_of(&name);
    }
    let fder = g
        .fder
        .into_iter()
        .filter(|(f, _)| !annotated.contains_key(f))
        .collect();
    Generated {
        functions: g.out,
        fder,
        zero_required: g.zero_required,
        failures: g.failures,
    }
}

/// The generated functions called (directly or through other generated functions) by the
/// calls named in `called`.
pub fn referenced_generated_functions(
    generated: &BTreeMap<String, Function>,
    called: impl IntoIterator<Item = String>,
) -> BTreeMap<String, Function> {
    let mut out = BTreeMap::new();
    let mut stack: Vec<String> = called.into_iter().collect();
    while let Some(name) = stack.pop() {
        if out.contains_key(&name) {
            continue;
        }
        let Some(f) = generated.get(&name) else {
            continue;
        };
        if let FunctionBody::Algorithm(stmts) = &f.body {
            for s in stmts {
                statement_calls(s, &mut stack);
            }
        }
        out.insert(name, f.clone());
    }
    out
}

/// The generated functions that the bodies of `functions` call by name.
pub fn generated_functions_called_by(
    functions: &BTreeMap<String, Function>,
    generated: &BTreeMap<String, Function>,
) -> Vec<String> {
    let mut calls = Vec::new();
    for f in functions.values() {
        if let FunctionBody::Algorithm(stmts) = &f.body {
            for s in stmts {
                statement_calls(s, &mut calls);
            }
        }
    }
    calls.retain(|c| generated.contains_key(c));
    calls
}

fn statement_calls(s: &Statement, out: &mut Vec<String>) {
    let mut s = s.clone();
    moss_frontend::walk::statement_exprs_mut(&mut s, &mut |e| {
        moss_frontend::walk::visit(e, &mut |x| {
            if let Expr::Call { func, .. } = x {
                out.push(func.clone());
            }
        });
    });
}

struct Generator<'a> {
    base: &'a BTreeMap<String, Function>,
    fder: DerivativeMap,
    out: BTreeMap<String, Function>,
    /// Functions whose generation was started (cycle protection: a recursive function has
    /// no generated derivative).
    tried: HashSet<String>,
    /// See [`Generated::zero_required`].
    zero_required: HashMap<String, Vec<bool>>,
    /// See [`Generated::failures`].
    failures: HashMap<String, String>,
}

impl Generator<'_> {
    fn lookup(&self, name: &str) -> Option<&Function> {
        self.base.get(name).or_else(|| self.out.get(name))
    }

    /// The derivative of `f` (annotated, or generated now), if there is one.
    fn derivative_of(&mut self, f: &str) -> Option<(String, Vec<bool>)> {
        if let Some(d) = self.fder.get(f) {
            return Some(d.clone());
        }
        if !self.tried.insert(f.to_string()) || order_of_derivative(f) > MAX_ORDER {
            return None;
        }
        let func = self.lookup(f)?.clone();
        let (d, frozen) = match differentiate_function(&func, self) {
            Ok(d) => d,
            Err(why) => {
                self.failures.insert(f.to_string(), why);
                return None;
            }
        };
        if !frozen.is_empty() {
            let required = func.inputs.iter().map(|i| frozen.contains(&i.name));
            self.zero_required.insert(f.to_string(), required.collect());
        }
        let mask = func
            .inputs
            .iter()
            .map(|i| i.ty == ScalarType::Real)
            .collect();
        let entry = (d.name.clone(), mask);
        self.fder.insert(f.to_string(), entry.clone());
        self.out.insert(d.name.clone(), d);
        Some(entry)
    }
}

/// Can `f` be differentiated by this module at all (before looking at its statements)?
fn is_candidate(f: &Function) -> bool {
    matches!(f.body, FunctionBody::Algorithm(_))
        && !f.is_impure
        && f.outputs.iter().any(|o| o.ty == ScalarType::Real)
}

/// The derivative function of `f` (see the module documentation), with the inputs it had
/// to freeze (see [`activity`]; empty when it differentiates along every input).
fn differentiate_function(
    f: &Function,
    g: &mut Generator,
) -> Result<(Function, HashSet<String>), String> {
    if !is_candidate(f) {
        let what = match (&f.body, f.is_impure) {
            (FunctionBody::External { .. }, _) => "an external function",
            (_, true) => "impure",
            (FunctionBody::Algorithm(_), false) => "without a Real output",
        };
        return Err(format!("`{}` is {what}", f.name));
    }
    let FunctionBody::Algorithm(stmts) = &f.body else {
        return Err(format!("`{}` has no algorithm", f.name));
    };
    let first = match differentiate_with(f, stmts, g, None) {
        Ok(d) => return Ok((d, HashSet::default())),
        Err(e) => e,
    };
    // Freeze the inputs the failing statement depends on, and again while another
    // statement fails on inputs not frozen yet.
    let real_inputs: Vec<&str> = f
        .inputs
        .iter()
        .filter(|i| i.ty == ScalarType::Real)
        .map(|i| i.name.as_str())
        .collect();
    let deps = activity::input_dependencies(f, stmts, &real_inputs);
    let mut frozen: HashSet<String> = HashSet::default();
    let mut failure = first;
    let mut inactive_before: Option<HashSet<String>> = None;
    loop {
        for t in &failure.targets {
            frozen.extend(deps.get(t).into_iter().flatten().cloned());
        }
        // (a derivative along no input at all is no derivative)
        if failure.targets.is_empty() || frozen.len() == real_inputs.len() {
            return Err(failure.message);
        }
        let inactive = activity::inactive_under(&deps, &frozen);
        // the same constants as in the last attempt fail the same way
        if inactive_before.as_ref() == Some(&inactive) {
            return Err(failure.message);
        }
        inactive_before = Some(inactive.clone());
        match differentiate_with(f, stmts, g, Some((&frozen, inactive))) {
            Ok(d) => return Ok((d, frozen)),
            Err(e) => failure = e,
        }
    }
}

/// Why a derivative function could not be built: the message, and the variables assigned
/// by the outermost statement that failed (empty when no assignment failed).
struct Failure {
    message: String,
    targets: Vec<String>,
}

/// The derivative function of `f`, with `frozen` inputs and the variables depending on them
/// only (`inactive`) constant for differentiation.
fn differentiate_with(
    f: &Function,
    stmts: &[Statement],
    g: &mut Generator,
    frozen: Option<(&HashSet<String>, HashSet<String>)>,
) -> Result<Function, Failure> {
    let mut vars = HashMap::default();
    for v in f.inputs.iter().chain(&f.outputs).chain(&f.locals) {
        vars.insert(v.name.clone(), v.clone());
    }
    let order = order_of_derivative(&f.name);
    let constants = constant_locals(f, stmts);
    let (frozen, inactive) = match frozen {
        Some((fr, ina)) => (fr.clone(), ina),
        None => (HashSet::default(), HashSet::default()),
    };
    let mut d = Differ {
        vars,
        constants,
        inactive,
        failed_targets: Vec::new(),
        loop_vars: Vec::new(),
        order,
        temporaries: Vec::new(),
        g,
    };
    let failure = |d: &mut Differ, message: String| Failure {
        message,
        targets: std::mem::take(&mut d.failed_targets),
    };
    let mut inputs = f.inputs.clone();
    inputs.extend(
        f.inputs
            .iter()
            .filter(|v| v.ty == ScalarType::Real)
            .map(|v| derivative_var(order, v)),
    );
    let outputs: Vec<FunctionVar> = f
        .outputs
        .iter()
        .filter(|v| v.ty == ScalarType::Real)
        .map(|v| derivative_var(order, v))
        .collect();
    // the outputs of `f` become locals; declaration bindings become leading assignments
    // (in the order `f` initializes them: outputs, then locals) so they get derivatives too
    let mut locals = Vec::new();
    let mut body = Vec::new();
    for v in f.outputs.iter().chain(&f.locals) {
        let mut primal = v.clone();
        if d.constants.contains(&v.name) || d.inactive.contains(&v.name) {
            // a table of coefficients, or a value of frozen inputs only: same binding, no
            // derivative
            locals.push(primal);
            continue;
        }
        if let Some(value) = primal.default.take() {
            let s = Statement::Assign {
                target: Expr::Var {
                    name: v.name.clone(),
                    subscripts: Vec::new(),
                },
                value,
                origin: f.origin.clone(),
            };
            let ds = d.statement(&s).map_err(|m| failure(&mut d, m))?;
            body.extend(ds);
        }
        locals.push(primal);
        if v.ty == ScalarType::Real && !f.outputs.iter().any(|o| o.name == v.name) {
            locals.push(derivative_var(order, v));
        }
    }
    let ds = d.statements(stmts).map_err(|m| failure(&mut d, m))?;
    body.extend(ds);
    let mut body = liveness::without_dead_assignments(body, outputs.iter().map(|o| o.name.clone()));
    if let Some(guard) = zero_direction_guard(&inputs[f.inputs.len()..], &outputs, &f.origin) {
        body.insert(0, guard);
    }
    // (the inactive outputs are those of frozen inputs, or of none: a constant)
    let zeros = zero_inactive_outputs(f, &d.inactive, order).map_err(|m| Failure {
        message: m,
        targets: Vec::new(),
    })?;
    body.splice(0..0, zeros);
    body.splice(0..0, frozen_directions_asserted(f, &frozen, order));
    for t in std::mem::take(&mut d.temporaries) {
        locals.push(derivative_var(order, &t));
        locals.push(t);
    }
    Ok(Function {
        name: derivative_function_name(&f.name),
        inputs,
        outputs,
        locals,
        body: FunctionBody::Algorithm(body),
        derivatives: Vec::new(),
        inline: false,
        smooth_order: None,
        inverses: Vec::new(),
        is_impure: false,
        origin: f.origin.clone(),
    })
}

/// `$dy := 0` for the outputs that depend on frozen inputs only (their derivative is zero
/// wherever the derivative function holds). Only scalar outputs can be zeroed without
/// knowing their size.
fn zero_inactive_outputs(
    f: &Function,
    inactive: &HashSet<String>,
    order: usize,
) -> Result<Vec<Statement>, String> {
    let mut out = Vec::new();
    for o in f.outputs.iter().filter(|o| o.ty == ScalarType::Real) {
        if !inactive.contains(&o.name) {
            continue;
        }
        if !o.dims.is_empty() {
            return Err(format!(
                "output `{}` of `{}` depends only on inputs that cannot be differentiated",
                o.name, f.name
            ));
        }
        out.push(Statement::Assign {
            target: Expr::Var {
                name: derivative_var_name(order, &o.name),
                subscripts: Vec::new(),
            },
            value: real(0.0),
            origin: f.origin.clone(),
        });
    }
    Ok(out)
}

/// `assert($dx == 0, ...)` for each frozen input `x`: the derivative function treats it as
/// constant, so a caller that varies it must get an error, not a wrong derivative (the
/// symbolic call sites check it before they call; a partial derivative `der(f, x)` along
/// a frozen `x` would not).
fn frozen_directions_asserted(
    f: &Function,
    frozen: &HashSet<String>,
    order: usize,
) -> Vec<Statement> {
    f.inputs
        .iter()
        .filter(|i| frozen.contains(&i.name))
        .map(|i| {
            let d = Expr::Var {
                name: derivative_var_name(order, &i.name),
                subscripts: Vec::new(),
            };
            // max(abs(.)) of an array, the value itself of a scalar
            let size = if i.dims.is_empty() {
                call("abs", vec![d])
            } else {
                call("max", vec![call("abs", vec![d])])
            };
            Statement::Assert {
                condition: bin(BinaryOp::Eq, size, real(0.0)),
                message: Expr::String(format!(
                    "the derivative of `{}` is only known where its input `{}` is constant \
                     (`{}` cannot be differentiated with respect to it)",
                    f.name, i.name, f.name
                )),
                level: moss_frontend::flat::AssertLevel::Error,
                origin: f.origin.clone(),
            }
        })
        .collect()
}

/// `if $d_x1 == 0 and ... then $d_y1 := 0; ...; return; end if;`: along the zero direction
/// every derivative is zero, whatever the primal values. The tangent program of a circuit
/// runs each column colour through every device's derivative function, and most devices see
/// none of that colour's seeds (a Spice3 adder: 80 colours, a hundred transistors). Only
/// for scalar derivative inputs and outputs (all of them, or no guard).
fn zero_direction_guard(
    derivative_inputs: &[FunctionVar],
    outputs: &[FunctionVar],
    origin: &moss_frontend::flat::Origin,
) -> Option<Statement> {
    let scalar = |v: &FunctionVar| v.dims.is_empty() && v.ty == ScalarType::Real;
    if derivative_inputs.is_empty()
        || outputs.is_empty()
        || !derivative_inputs.iter().all(scalar)
        || !outputs.iter().all(scalar)
    {
        return None;
    }
    let var = |name: &str| Expr::Var {
        name: name.to_string(),
        subscripts: Vec::new(),
    };
    let condition = derivative_inputs
        .iter()
        .map(|d| bin(BinaryOp::Eq, var(&d.name), real(0.0)))
        .reduce(|a, b| bin(BinaryOp::And, a, b))?;
    let mut then: Vec<Statement> = outputs
        .iter()
        .map(|o| Statement::Assign {
            target: var(&o.name),
            value: real(0.0),
            origin: origin.clone(),
        })
        .collect();
    then.push(Statement::Return {
        origin: origin.clone(),
    });
    Some(Statement::If {
        branches: vec![(condition, then)],
        else_: Vec::new(),
        origin: origin.clone(),
    })
}

/// The protected locals of `f` whose binding is made of literals only (a medium's table
/// of coefficients) and that the body never assigns. The derivative function keeps them as
/// they are: turning their bindings into leading assignments, as for other variables,
/// would make them variables that every call fills again (and that the function
/// interpreter can no longer read as constants in place), with zero derivatives to match.
fn constant_locals(f: &Function, body: &[Statement]) -> HashSet<String> {
    let assigned = moss_frontend::flat::assigned_names(body);
    f.locals
        .iter()
        .filter(|v| v.default.as_ref().is_some_and(is_literal))
        .filter(|v| !assigned.contains(v.name.as_str()))
        .map(|v| v.name.clone())
        .collect()
}

/// A literal: numbers, Booleans, strings and arrays and arithmetic of them.
fn is_literal(e: &Expr) -> bool {
    match e {
        Expr::Real(_)
        | Expr::Integer(_)
        | Expr::Boolean(_)
        | Expr::String(_)
        | Expr::Enum { .. } => true,
        Expr::Array(items) => items.iter().all(is_literal),
        Expr::Unary { arg, .. } => is_literal(arg),
        Expr::Binary { lhs, rhs, .. } => is_literal(lhs) && is_literal(rhs),
        _ => false,
    }
}

/// The derivative variable of `v`: same type and dimensions, no binding.
fn derivative_var(order: usize, v: &FunctionVar) -> FunctionVar {
    FunctionVar {
        name: derivative_var_name(order, &v.name),
        ty: v.ty.clone(),
        dims: v.dims.clone(),
        default: None,
    }
}

/// The differentiator of one function body.
struct Differ<'g, 'a> {
    /// Inputs, outputs and locals of the function by name.
    vars: HashMap<String, FunctionVar>,
    /// Locals bound to a literal and never assigned (see [`constant_locals`]): their
    /// derivative is zero.
    constants: HashSet<String>,
    /// Frozen inputs and the variables that depend on them only (see [`activity`]): their
    /// derivative is zero too.
    inactive: HashSet<String>,
    /// The variables assigned by the outermost statement whose differentiation failed
    /// (what [`activity`] freezes the inputs of).
    failed_targets: Vec<String>,
    /// `for` variables in scope (Integer-valued, no derivative).
    loop_vars: Vec<String>,
    /// Order of the derivative function being built (see [`derivative_var_name`]).
    order: usize,
    /// Locals introduced for repeated operands (see [`temporaries`]).
    temporaries: Vec<FunctionVar>,
    g: &'g mut Generator<'a>,
}

fn real(x: f64) -> Expr {
    Expr::Real(x)
}

fn bin(op: BinaryOp, lhs: Expr, rhs: Expr) -> Expr {
    Expr::Binary {
        op,
        lhs: Box::new(lhs),
        rhs: Box::new(rhs),
    }
}

fn call(func: &str, args: Vec<Expr>) -> Expr {
    Expr::Call {
        func: func.to_string(),
        args,
    }
}

fn neg(e: Expr) -> Expr {
    Expr::Unary {
        op: UnaryOp::Neg,
        arg: Box::new(e),
    }
}

/// Sum of two optional derivatives (`None` is zero).
fn add(a: Option<Expr>, b: Option<Expr>, op: BinaryOp) -> Option<Expr> {
    match (a, b) {
        (None, x) | (x, None) => x,
        (Some(a), Some(b)) => Some(bin(op, a, b)),
    }
}

/// `a - b` of optional derivatives.
fn sub(a: Option<Expr>, b: Option<Expr>, op: BinaryOp) -> Option<Expr> {
    match (a, b) {
        (a, None) => a,
        (None, Some(b)) => Some(neg(b)),
        (Some(a), Some(b)) => Some(bin(op, a, b)),
    }
}

/// `factor .* d` for an optional derivative `d` (element-wise, so it also applies to the
/// vectorized calls of scalar built-ins).
fn chain(factor: Expr, d: Option<Expr>) -> Option<Expr> {
    d.map(|d| bin(BinaryOp::ElemMul, factor, d))
}

/// Element-wise (`.`) form of an arithmetic operator.
fn elementwise(op: BinaryOp) -> BinaryOp {
    match op {
        BinaryOp::Add => BinaryOp::ElemAdd,
        BinaryOp::Sub => BinaryOp::ElemSub,
        BinaryOp::Mul => BinaryOp::ElemMul,
        BinaryOp::Div => BinaryOp::ElemDiv,
        BinaryOp::Pow => BinaryOp::ElemPow,
        other => other,
    }
}

/// Is `e` a literal number (Integer or Real)?
fn literal(e: &Expr) -> Option<f64> {
    match e {
        Expr::Real(x) => Some(*x),
        Expr::Integer(i) => Some(*i as f64),
        _ => None,
    }
}

impl Differ<'_, '_> {
    fn statements(&mut self, stmts: &[Statement]) -> Result<Vec<Statement>, String> {
        let mut out = Vec::with_capacity(2 * stmts.len());
        for s in stmts {
            out.extend(self.statement(s)?);
        }
        Ok(out)
    }

    /// The statement with its derivative statements. When it fails, the variables it
    /// assigns are left in `failed_targets` (the outermost assignment's, since it
    /// overwrites those of the temporaries and nested statements it failed in).
    fn statement(&mut self, s: &Statement) -> Result<Vec<Statement>, String> {
        let r = self.statement_with_derivative(s);
        if r.is_err() {
            let names = |t: &Expr| match t {
                Expr::Var { name, .. } => Some(name.clone()),
                _ => None,
            };
            match s {
                Statement::Assign { target, .. } => {
                    self.failed_targets = names(target).into_iter().collect()
                }
                Statement::TupleAssign { targets, .. } => {
                    self.failed_targets = targets.iter().flatten().filter_map(names).collect()
                }
                _ => {}
            }
        }
        r
    }

    fn statement_with_derivative(&mut self, s: &Statement) -> Result<Vec<Statement>, String> {
        Ok(match s {
            Statement::Assign {
                target,
                value,
                origin,
            } => {
                let Expr::Var { name, subscripts } = target else {
                    return Err("assignment to something that is not a variable".into());
                };
                if !self.is_real_var(name) {
                    return Ok(vec![s.clone()]);
                }
                if let Expr::Call { func, args } = value {
                    if self.is_vectorized_call(func, args) {
                        return self.vectorized_assignment(s, name, subscripts, func, args);
                    }
                }
                let dtarget = Expr::Var {
                    name: derivative_var_name(self.order, name),
                    subscripts: subscripts.clone(),
                };
                let mut temps = Vec::new();
                let value = self.with_temporaries(value, origin, &mut temps);
                let mut out = Vec::with_capacity(2 * temps.len() + 2);
                for t in &temps {
                    out.extend(self.statement(t)?);
                }
                let s = &Statement::Assign {
                    target: target.clone(),
                    value: value.clone(),
                    origin: origin.clone(),
                };
                out.extend(match self.diff(&value)? {
                    // computed before the assignment, which may overwrite what it reads
                    Some(dv) => vec![
                        Statement::Assign {
                            target: dtarget,
                            value: dv,
                            origin: origin.clone(),
                        },
                        s.clone(),
                    ],
                    // a zero of the target's size, known after the assignment
                    None => vec![
                        s.clone(),
                        Statement::Assign {
                            target: dtarget,
                            value: self.zero_like(target)?,
                            origin: origin.clone(),
                        },
                    ],
                });
                out
            }
            Statement::TupleAssign {
                targets,
                value,
                origin,
            } => self.tuple_assign(s, targets, value, origin)?,
            Statement::If {
                branches,
                else_,
                origin,
            } => {
                let mut bs = Vec::with_capacity(branches.len());
                for (c, body) in branches {
                    bs.push((c.clone(), self.statements(body)?));
                }
                vec![Statement::If {
                    branches: bs,
                    else_: self.statements(else_)?,
                    origin: origin.clone(),
                }]
            }
            Statement::For {
                var,
                range,
                body,
                origin,
            } => {
                self.loop_vars.push(var.clone());
                let body = self.statements(body);
                self.loop_vars.pop();
                vec![Statement::For {
                    var: var.clone(),
                    range: range.clone(),
                    body: body?,
                    origin: origin.clone(),
                }]
            }
            Statement::While {
                condition,
                body,
                origin,
            } => vec![Statement::While {
                condition: condition.clone(),
                body: self.statements(body)?,
                origin: origin.clone(),
            }],
            Statement::Assert { .. }
            | Statement::Terminate { .. }
            | Statement::Call { .. }
            | Statement::Return { .. }
            | Statement::Break { .. } => vec![s.clone()],
            Statement::When { .. } | Statement::Reinit { .. } => {
                return Err("when/reinit in a function".into())
            }
        })
    }

    /// `(a, , b) := f(x)`: `($da, , $db) := f.$der(x, $dx)` first (the call may read the
    /// targets), with zeros after the assignment when the arguments have no derivative.
    fn tuple_assign(
        &mut self,
        s: &Statement,
        targets: &[Option<Expr>],
        value: &Expr,
        origin: &moss_frontend::flat::Origin,
    ) -> Result<Vec<Statement>, String> {
        let Expr::Call { func, args } = value else {
            return Err("tuple assignment of something that is not a call".into());
        };
        let real_targets: Vec<(usize, &Expr)> = targets
            .iter()
            .enumerate()
            .filter_map(|(i, t)| t.as_ref().map(|t| (i, t)))
            .filter(|(_, t)| matches!(t, Expr::Var { name, .. } if self.is_real_var(name)))
            .collect();
        if real_targets.is_empty() {
            return Ok(vec![s.clone()]);
        }
        let order = self.order;
        let derivative_target = move |t: &Expr| match t {
            Expr::Var { name, subscripts } => Expr::Var {
                name: derivative_var_name(order, name),
                subscripts: subscripts.clone(),
            },
            other => other.clone(),
        };
        let Some(dcall) = self.diff_user_call(func, args)? else {
            let mut out = vec![s.clone()];
            for (_, t) in real_targets {
                out.push(Statement::Assign {
                    target: derivative_target(t),
                    value: self.zero_like(t)?,
                    origin: origin.clone(),
                });
            }
            return Ok(out);
        };
        let callee = self
            .g
            .lookup(func)
            .ok_or_else(|| format!("unknown function `{func}`"))?;
        let index = output_derivative_indices(callee);
        let n = index.iter().flatten().count();
        let mut dtargets = vec![None; n];
        for (i, t) in real_targets {
            if let Some(Some(k)) = index.get(i) {
                dtargets[*k] = Some(derivative_target(t));
            }
        }
        let derivative = Statement::TupleAssign {
            targets: dtargets.clone(),
            value: dcall,
            origin: origin.clone(),
        };
        let scalar_targets = targets.iter().flatten().all(|t| self.ndims(t) == Some(0));
        let derivative = match self.zero_seeds(func, args)? {
            Some(zero) if scalar_targets => Statement::If {
                branches: vec![(
                    zero,
                    dtargets
                        .iter()
                        .flatten()
                        .map(|t| Statement::Assign {
                            target: t.clone(),
                            value: real(0.0),
                            origin: origin.clone(),
                        })
                        .collect(),
                )],
                else_: vec![derivative],
                origin: origin.clone(),
            },
            _ => derivative,
        };
        Ok(vec![derivative, s.clone()])
    }

    fn is_real_var(&self, name: &str) -> bool {
        !self.loop_vars.iter().any(|v| v == name)
            && !self.constants.contains(name)
            && !self.inactive.contains(name)
            && self
                .vars
                .get(name)
                .is_some_and(|v| v.ty == ScalarType::Real)
    }

    /// A zero of the size of `e`: `0.0`, or `fill(0.0, size(e, 1), ...)`.
    fn zero_like(&self, e: &Expr) -> Result<Expr, String> {
        let n = self
            .ndims(e)
            .ok_or_else(|| "an expression of unknown dimensions".to_string())?;
        if n == 0 {
            return Ok(real(0.0));
        }
        let mut args = vec![real(0.0)];
        for k in 1..=n {
            args.push(call("size", vec![e.clone(), Expr::Integer(k as i64)]));
        }
        Ok(call("fill", args))
    }

    /// `d` or a zero of the size of `e` when `d` is `None`.
    fn or_zero(&self, d: Option<Expr>, e: &Expr) -> Result<Expr, String> {
        match d {
            Some(d) => Ok(d),
            None => self.zero_like(e),
        }
    }

    /// Number of dimensions of the value of `e` (`None` when unknown).
    fn ndims(&self, e: &Expr) -> Option<usize> {
        match e {
            Expr::Real(_)
            | Expr::Integer(_)
            | Expr::Boolean(_)
            | Expr::String(_)
            | Expr::Enum { .. }
            | Expr::Time => Some(0),
            Expr::Var { name, subscripts } => {
                let declared = match self.vars.get(name) {
                    Some(v) if !self.loop_vars.contains(name) => v.dims.len(),
                    _ => 0,
                };
                let mut n = declared;
                for s in subscripts {
                    if let Subscript::Index(x) = s {
                        if self.ndims(x)? == 0 {
                            n = n.checked_sub(1)?;
                        }
                    }
                }
                Some(n)
            }
            Expr::Unary { arg, .. } => self.ndims(arg),
            Expr::Binary { op, lhs, rhs } => {
                let (a, b) = (self.ndims(lhs)?, self.ndims(rhs)?);
                Some(match op {
                    BinaryOp::Mul => match (a, b) {
                        (0, n) | (n, 0) => n,
                        (1, 1) => 0,
                        (1, 2) | (2, 1) => 1,
                        _ => 2,
                    },
                    BinaryOp::Div | BinaryOp::Pow => a,
                    _ => a.max(b),
                })
            }
            Expr::Call { func, args } => self.call_ndims(func, args),
            Expr::If { branches, else_ } => match branches.first() {
                Some((_, v)) => self.ndims(v),
                None => self.ndims(else_),
            },
            Expr::Array(items) => Some(1 + items.first().map_or(Some(0), |x| self.ndims(x))?),
            Expr::Range { .. } => Some(1),
            Expr::Tuple(_) => None,
            Expr::CallOutput { call, index } => {
                let Expr::Call { func, .. } = call.as_ref() else {
                    return None;
                };
                Some(self.g.lookup(func)?.outputs.get(*index)?.dims.len())
            }
        }
    }

    fn call_ndims(&self, func: &str, args: &[Expr]) -> Option<usize> {
        let first = || args.first().map_or(Some(0), |a| self.ndims(a));
        match func {
            "size" if args.len() == 1 => Some(1),
            "size" | "ndims" | "sum" | "product" | "scalar" | "min" | "max"
                if args.len() <= 1 || func == "size" =>
            {
                Some(0)
            }
            "fill" => Some(first()? + args.len() - 1),
            "zeros" | "ones" => Some(args.len()),
            "identity" | "diagonal" | "skew" | "outerProduct" | "transpose" | "symmetric"
            | "matrix" => Some(2),
            "linspace" | "vector" | "cross" => Some(1),
            "cat" => args.get(1).and_then(|a| self.ndims(a)),
            "smooth" => args.get(1).and_then(|a| self.ndims(a)),
            _ => match self.g.lookup(func) {
                Some(f) => Some(f.outputs.first()?.dims.len()),
                None => first(),
            },
        }
    }

    /// The derivative of `e` (`None` when it is structurally zero: literals, Integer and
    /// Boolean expressions, variables that are not Real).
    fn diff(&mut self, e: &Expr) -> Result<Option<Expr>, String> {
        Ok(match e {
            Expr::Real(_)
            | Expr::Integer(_)
            | Expr::Boolean(_)
            | Expr::String(_)
            | Expr::Enum { .. }
            | Expr::Range { .. } => None,
            Expr::Var { name, subscripts } => self.is_real_var(name).then(|| Expr::Var {
                name: derivative_var_name(self.order, name),
                subscripts: subscripts.clone(),
            }),
            Expr::Time => return Err("`time` in a function".into()),
            Expr::Unary { op, arg } => match op {
                UnaryOp::Neg => self.diff(arg)?.map(neg),
                UnaryOp::Not => None,
            },
            Expr::Binary { op, lhs, rhs } => self.diff_binary(*op, lhs, rhs)?,
            Expr::Call { func, args } => self.diff_call(func, args)?,
            Expr::If { branches, else_ } => {
                let mut ds = Vec::with_capacity(branches.len());
                for (_, v) in branches {
                    ds.push(self.diff(v)?);
                }
                let de = self.diff(else_)?;
                if de.is_none() && ds.iter().all(Option::is_none) {
                    return Ok(None);
                }
                let mut out = Vec::with_capacity(branches.len());
                for ((c, v), d) in branches.iter().zip(ds) {
                    out.push((c.clone(), self.or_zero(d, v)?));
                }
                Some(Expr::If {
                    branches: out,
                    else_: Box::new(self.or_zero(de, else_)?),
                })
            }
            Expr::Array(items) => {
                let mut ds = Vec::with_capacity(items.len());
                for x in items {
                    ds.push(self.diff(x)?);
                }
                if ds.iter().all(Option::is_none) {
                    return Ok(None);
                }
                let mut out = Vec::with_capacity(items.len());
                for (x, d) in items.iter().zip(ds) {
                    out.push(self.or_zero(d, x)?);
                }
                Some(Expr::Array(out))
            }
            Expr::Tuple(_) => return Err("a tuple inside an expression".into()),
            Expr::CallOutput { call, index } => {
                let Expr::Call { func, args } = call.as_ref() else {
                    return Err("output selection of something that is not a call".into());
                };
                let callee = self
                    .g
                    .lookup(func)
                    .ok_or_else(|| format!("unknown function `{func}`"))?;
                let Some(Some(k)) = output_derivative_indices(callee).get(*index).copied() else {
                    return Ok(None);
                };
                let d = self.diff_user_call(func, args)?.map(|c| Expr::CallOutput {
                    call: Box::new(c),
                    index: k,
                });
                return self.unless_zero_seeds(func, args, e, d);
            }
        })
    }

    fn diff_binary(&mut self, op: BinaryOp, a: &Expr, b: &Expr) -> Result<Option<Expr>, String> {
        use BinaryOp::*;
        if matches!(op, And | Or | Lt | Le | Gt | Ge | Eq | Ne) {
            return Ok(None);
        }
        let (da, db) = (self.diff(a)?, self.diff(b)?);
        if da.is_none() && db.is_none() {
            return Ok(None);
        }
        Ok(match op {
            Add | ElemAdd => add(da, db, op),
            Sub | ElemSub => sub(da, db, op),
            // the product rule holds for matrix products too (bilinear)
            Mul | ElemMul => add(
                da.map(|d| bin(op, d, b.clone())),
                db.map(|d| bin(op, a.clone(), d)),
                elementwise(Add),
            ),
            Div | ElemDiv => {
                // d(a/b) = da/b - a*db/(b*b)
                let eop = elementwise(op);
                let t2 = db.map(|d| {
                    bin(
                        eop,
                        bin(elementwise(Mul), a.clone(), d),
                        bin(ElemMul, b.clone(), b.clone()),
                    )
                });
                sub(da.map(|d| bin(op, d, b.clone())), t2, ElemSub)
            }
            Pow | ElemPow => {
                if op == Pow && self.ndims(a) != Some(0) {
                    return Err("power of a matrix".into());
                }
                // d(a^b) = b*a^(b-1)*da + a^b*log(a)*db
                let t1 = da.map(|d| {
                    let (coef, exponent) = match literal(b) {
                        Some(c) => (real(c), real(c - 1.0)),
                        None => (b.clone(), bin(Sub, b.clone(), real(1.0))),
                    };
                    let p = bin(ElemPow, a.clone(), exponent);
                    bin(ElemMul, bin(ElemMul, coef, p), d)
                });
                let t2 = db.map(|d| {
                    let p = bin(ElemPow, a.clone(), b.clone());
                    bin(ElemMul, bin(ElemMul, p, call("log", vec![a.clone()])), d)
                });
                add(t1, t2, ElemAdd)
            }
            And | Or | Lt | Le | Gt | Ge | Eq | Ne => None,
        })
    }

    fn diff_call(&mut self, func: &str, args: &[Expr]) -> Result<Option<Expr>, String> {
        if !moss_frontend::flat::BUILTINS.contains(&func) {
            let first_is_real = self
                .g
                .lookup(func)
                .and_then(|f| f.outputs.first())
                .is_some_and(|o| o.ty == ScalarType::Real);
            // otherwise an Integer, Boolean, String or enumeration value
            return match first_is_real {
                true => {
                    let d = self.diff_user_call(func, args)?;
                    let call = Expr::Call {
                        func: func.to_string(),
                        args: args.to_vec(),
                    };
                    self.unless_zero_seeds(func, args, &call, d)
                }
                false => Ok(None),
            };
        }
        let mut ds = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            ds.push(match func {
                // piecewise constant values, and arguments that are sizes or flags
                "size" | "ndims" | "zeros" | "ones" | "identity" | "String" | "Boolean"
                | "Integer" | "integer" | "div" | "floor" | "ceil" | "sign" => None,
                "fill" if i > 0 => None,
                _ => self.diff(a)?,
            });
        }
        if ds.iter().all(Option::is_none) {
            return Ok(None);
        }
        let x = args.first().cloned().unwrap_or(real(0.0));
        let dx = ds.first().cloned().flatten();
        let two = || real(2.0);
        let one = || real(1.0);
        let sq = |e: Expr| bin(BinaryOp::ElemMul, e.clone(), e);
        let div = |a: Expr, b: Expr| bin(BinaryOp::ElemDiv, a, b);
        let all = |s: &Self, ds: Vec<Option<Expr>>| -> Result<Vec<Expr>, String> {
            ds.into_iter()
                .zip(args)
                .map(|(d, a)| s.or_zero(d, a))
                .collect()
        };
        Ok(match (func, args.len()) {
            ("sin", 1) => chain(call("cos", vec![x]), dx),
            ("cos", 1) => chain(neg(call("sin", vec![x])), dx),
            ("tan", 1) => chain(div(one(), sq(call("cos", vec![x]))), dx),
            ("exp", 1) => chain(call("exp", vec![x]), dx),
            ("log", 1) => chain(div(one(), x), dx),
            ("log10", 1) => chain(
                div(
                    one(),
                    bin(BinaryOp::ElemMul, x, real(std::f64::consts::LN_10)),
                ),
                dx,
            ),
            ("sqrt", 1) => chain(
                div(one(), bin(BinaryOp::ElemMul, two(), call("sqrt", vec![x]))),
                dx,
            ),
            ("asin", 1) => chain(
                div(
                    one(),
                    call("sqrt", vec![bin(BinaryOp::ElemSub, one(), sq(x))]),
                ),
                dx,
            ),
            ("acos", 1) => chain(
                neg(div(
                    one(),
                    call("sqrt", vec![bin(BinaryOp::ElemSub, one(), sq(x))]),
                )),
                dx,
            ),
            ("atan", 1) => chain(div(one(), bin(BinaryOp::ElemAdd, one(), sq(x))), dx),
            ("atan2", 2) => {
                // d atan2(y, x) = (x dy - y dx) / (x^2 + y^2)
                let (y, xx) = (&args[0], &args[1]);
                let den = bin(BinaryOp::ElemAdd, sq(xx.clone()), sq(y.clone()));
                let num = sub(
                    chain(xx.clone(), ds[0].clone()),
                    chain(y.clone(), ds[1].clone()),
                    BinaryOp::ElemSub,
                );
                num.map(|n| div(n, den))
            }
            ("sinh", 1) => chain(call("cosh", vec![x]), dx),
            ("cosh", 1) => chain(call("sinh", vec![x]), dx),
            ("tanh", 1) => chain(bin(BinaryOp::ElemSub, one(), sq(call("tanh", vec![x]))), dx),
            // d|x| = sign(x) dx (0 at the kink, like the subgradient midpoint)
            ("abs", 1) => chain(call("sign", vec![x]), dx),
            ("min", 2) | ("max", 2) => {
                if self.ndims(&args[0]) != Some(0) {
                    return Err(format!("{func} of arrays"));
                }
                let op = if func == "min" {
                    BinaryOp::Le
                } else {
                    BinaryOp::Ge
                };
                let c = bin(op, args[0].clone(), args[1].clone());
                let mut ds = all(self, ds)?;
                let d1 = ds.pop().unwrap_or(real(0.0));
                let d0 = ds.pop().unwrap_or(real(0.0));
                Some(Expr::If {
                    branches: vec![(c, d0)],
                    else_: Box::new(d1),
                })
            }
            ("Real", 1)
            | ("noEvent", 1)
            | ("sum", 1)
            | ("scalar", 1)
            | ("vector", 1)
            | ("matrix", 1)
            | ("transpose", 1)
            | ("symmetric", 1)
            | ("diagonal", 1)
            | ("skew", 1) => dx.map(|d| call(func, vec![d])),
            ("smooth", 2) => ds[1].clone(),
            ("homotopy", 2) => dx,
            // mod(x, y) = x - floor(x/y)*y, rem(x, y) = x - div(x, y)*y (piecewise)
            ("mod", 2) | ("rem", 2) => {
                let q = if func == "mod" {
                    call("floor", vec![div(args[0].clone(), args[1].clone())])
                } else {
                    call("div", args.to_vec())
                };
                sub(dx, chain(q, ds[1].clone()), BinaryOp::ElemSub)
            }
            ("fill", _) => dx.map(|d| {
                let mut a = vec![d];
                a.extend(args[1..].iter().cloned());
                call("fill", a)
            }),
            ("linspace", 3) => {
                let mut a = all(self, ds[..2].to_vec())?;
                a.push(args[2].clone());
                Some(call("linspace", a))
            }
            ("cat", _) if args.len() >= 2 => {
                let mut a = vec![args[0].clone()];
                a.extend(all(self, ds)?.into_iter().skip(1));
                Some(call("cat", a))
            }
            ("cross", 2) | ("outerProduct", 2) => add(
                ds[0].clone().map(|d| call(func, vec![d, args[1].clone()])),
                ds[1].clone().map(|d| call(func, vec![args[0].clone(), d])),
                BinaryOp::ElemAdd,
            ),
            _ => return Err(format!("built-in `{func}` cannot be differentiated here")),
        })
    }

    /// The derivative of the (first output of the) call `func(args)` of a user function:
    /// its derivative function with the derivatives of the differentiated inputs appended.
    fn diff_user_call(&mut self, func: &str, args: &[Expr]) -> Result<Option<Expr>, String> {
        if self.is_vectorized_call(func, args) {
            // `smoothStep(x, a.X, b.X, dx)` over the arrays `X`: the function is applied
            // element by element (spec 12.4.6), its derivative function would receive the
            // arrays whole, where its scalar guard `$d1_y1 == 0` cannot compare them
            return Err(format!(
                "the vectorized call of `{func}` is not differentiated"
            ));
        }
        let Some((fd, mask)) = self.g.derivative_of(func) else {
            // a function without derivative is still constant where its Real arguments
            // are (`symmetricOrientation(m)`, recursive, of an Integer)
            return match self.any_argument_varies(func, args)? {
                false => Ok(None),
                true => Err(match self.g.failures.get(func) {
                    Some(why) => format!("function `{func}` has no derivative: {why}"),
                    None => format!("function `{func}` has no derivative"),
                }),
            };
        };
        let required = self.g.zero_required.get(func).cloned().unwrap_or_default();
        let mut dargs = Vec::new();
        for (i, (a, m)) in args.iter().zip(&mask).enumerate() {
            if !*m {
                continue;
            }
            let d = self.diff(a)?;
            if d.is_some() && required.get(i).copied().unwrap_or(false) {
                return Err(format!(
                    "the derivative of `{func}` needs a constant argument {}",
                    i + 1
                ));
            }
            dargs.push((d, a));
        }
        if dargs.iter().all(|(d, _)| d.is_none()) {
            return Ok(None);
        }
        let mut new_args = args.to_vec();
        for (d, a) in dargs {
            new_args.push(self.or_zero(d, a)?);
        }
        Ok(Some(call(&fd, new_args)))
    }
}

impl Differ<'_, '_> {
    /// `v := f(x, a, b)` applied element by element over the vectors `a`, `b` (spec
    /// 12.4.6; `state.X := smoothStep(x, state_a.X, state_b.X, x_small)` of the media's
    /// `setSmoothState`): the derivative is the same loop over the derivative function,
    /// `for $i in 1:size(a, 1) loop $dv[$i] := f.$der(x, a[$i], b[$i], dx, $da[$i], $db[$i]);`
    /// (the derivative function itself takes scalars: its zero-direction guard compares
    /// them). Only whole vector variables are taken apart here.
    fn vectorized_assignment(
        &mut self,
        s: &Statement,
        target: &str,
        target_subscripts: &[Subscript],
        func: &str,
        args: &[Expr],
    ) -> Result<Vec<Statement>, String> {
        let unsupported = || format!("the vectorized call of `{func}` is not differentiated");
        let inputs: Vec<usize> = self
            .g
            .lookup(func)
            .ok_or_else(unsupported)?
            .inputs
            .iter()
            .map(|i| i.dims.len())
            .collect();
        if !target_subscripts.is_empty()
            || self.ndims(&Expr::Var {
                name: target.to_string(),
                subscripts: Vec::new(),
            }) != Some(1)
        {
            return Err(unsupported());
        }
        let index = format!("$i{}", self.order);
        let at = Subscript::Index(Expr::Var {
            name: index.clone(),
            subscripts: Vec::new(),
        });
        let mut element_args = Vec::with_capacity(args.len());
        let mut vector = None;
        for (a, declared) in args.iter().zip(inputs.iter().chain(std::iter::repeat(&0))) {
            match self.ndims(a) {
                Some(n) if n == *declared => element_args.push(a.clone()),
                Some(n) if n == declared + 1 => {
                    let Expr::Var { name, subscripts } = a else {
                        return Err(unsupported());
                    };
                    if !subscripts.is_empty() {
                        return Err(unsupported());
                    }
                    vector.get_or_insert_with(|| a.clone());
                    element_args.push(Expr::Var {
                        name: name.clone(),
                        subscripts: vec![at.clone()],
                    });
                }
                _ => return Err(unsupported()),
            }
        }
        let vector = vector.ok_or_else(unsupported)?;
        let origin = s.origin().clone();
        self.loop_vars.push(index.clone());
        let d = self.diff_user_call(func, &element_args);
        self.loop_vars.pop();
        let value = match d? {
            Some(d) => d,
            None => real(0.0),
        };
        let derivative = Statement::For {
            var: index,
            range: Expr::Range {
                start: Box::new(Expr::Integer(1)),
                step: None,
                stop: Box::new(call("size", vec![vector, Expr::Integer(1)])),
            },
            body: vec![Statement::Assign {
                target: Expr::Var {
                    name: derivative_var_name(self.order, target),
                    subscripts: vec![at],
                },
                value,
                origin: origin.clone(),
            }],
            origin,
        };
        Ok(vec![derivative, s.clone()])
    }

    /// Is `func(args)` a vectorized call: an argument with more dimensions than its input?
    fn is_vectorized_call(&self, func: &str, args: &[Expr]) -> bool {
        let Some(f) = self.g.lookup(func) else {
            return false;
        };
        args.iter()
            .zip(&f.inputs)
            .any(|(a, i)| self.ndims(a).is_some_and(|n| n > i.dims.len()))
    }

    /// Does an argument of `func(args)` for a Real input (or an input of a function not
    /// known here) have a derivative?
    fn any_argument_varies(&mut self, func: &str, args: &[Expr]) -> Result<bool, String> {
        let real_inputs: Option<Vec<bool>> = self
            .g
            .lookup(func)
            .map(|f| f.inputs.iter().map(|i| i.ty == ScalarType::Real).collect());
        for (i, a) in args.iter().enumerate() {
            let real = real_inputs
                .as_ref()
                .is_none_or(|r| r.get(i) != Some(&false));
            if real && self.diff(a)?.is_some() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The condition "every derivative argument of `func(args)` is zero", when the
    /// derivative arguments are scalars cheap to test (variables and literals).
    ///
    /// A derivative function is often called with zero derivatives: the Jacobian of a torn
    /// system with respect to `der(p)` differentiates `rho_ph_der(p, h, p_der, h_der)` along
    /// `p_der` alone, and the derivative of the property call inside it (`p`, `h` fixed)
    /// is then zero. The test skips such calls (the IF97 Gibbs function's derivative, the
    /// largest function of a water pipe, in that case).
    fn zero_seeds(&mut self, func: &str, args: &[Expr]) -> Result<Option<Expr>, String> {
        let Some((_, mask)) = self.g.derivative_of(func) else {
            return Ok(None);
        };
        let mut zero: Option<Expr> = None;
        for (a, m) in args.iter().zip(&mask) {
            if !*m {
                continue;
            }
            let Some(d) = self.diff(a)? else { continue };
            let cheap = matches!(&d, Expr::Var { subscripts, .. } if subscripts.is_empty())
                || literal(&d).is_some();
            // (the derivative variables are not declared here: the primal has the shape)
            if !cheap || self.ndims(a) != Some(0) {
                return Ok(None);
            }
            let test = bin(BinaryOp::Eq, d, real(0.0));
            zero = Some(match zero {
                None => test,
                Some(z) => bin(BinaryOp::And, z, test),
            });
        }
        Ok(zero)
    }

    /// Derivative `d` of the scalar value `e` of a call of `func(args)`, computed only when
    /// a derivative argument is not zero ([`Self::zero_seeds`]).
    fn unless_zero_seeds(
        &mut self,
        func: &str,
        args: &[Expr],
        e: &Expr,
        d: Option<Expr>,
    ) -> Result<Option<Expr>, String> {
        let Some(d) = d else { return Ok(None) };
        if self.ndims(e) != Some(0) {
            return Ok(Some(d));
        }
        Ok(Some(match self.zero_seeds(func, args)? {
            Some(zero) => Expr::If {
                branches: vec![(zero, real(0.0))],
                else_: Box::new(d),
            },
            None => d,
        }))
    }
}

/// For each output of `f`, the index of its derivative among the outputs of the derivative
/// function (the Real outputs, in order).
fn output_derivative_indices(f: &Function) -> Vec<Option<usize>> {
    let mut k = 0;
    f.outputs
        .iter()
        .map(|o| {
            (o.ty == ScalarType::Real).then(|| {
                k += 1;
                k - 1
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
