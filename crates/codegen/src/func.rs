//! The function interpreter: flat `Function` bodies and model `algorithm` sections.
//!
//! Flat statements are compiled once into [`FStmt`]/[`FExpr`] trees in which every name is
//! resolved: function locals to frame indices, model variables to slots, callees to indices
//! of the compiled function table, built-ins to [`Builtin`]. Execution walks these trees with
//! dynamically typed [`Value`]s (arrays of dynamic size, Integers, strings). This is the
//! flexible, slower path; model equations run on the expression tapes instead.

use crate::builtins::{call_builtin, libm_function, Builtin};
use crate::machine::Machine;
use crate::value::{array_literal, to_modelica_string, ArrayVal, VResult, Value};
use moss_frontend::flat::{
    AssertLevel, BinaryOp, Expr, Function, FunctionBody, FunctionVar, ScalarType, Statement,
    Subscript, UnaryOp,
};
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeSet;

/// Scalar type of a slot or local, for reading slots as values and coercing assignments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    Real,
    Int,
    Bool,
    Str,
}

impl Ty {
    pub fn of_scalar(t: &ScalarType) -> Ty {
        match t {
            ScalarType::Real => Ty::Real,
            ScalarType::Integer | ScalarType::Enumeration { .. } => Ty::Int,
            // functions never take clocks (spec 16.3); the clock pass removed them
            ScalarType::Boolean | ScalarType::Clock => Ty::Bool,
            ScalarType::String => Ty::Str,
        }
    }

    pub fn value_of(self, x: f64) -> Value {
        match self {
            Ty::Real => Value::Real(x),
            Ty::Int => Value::Int(x.round() as i64),
            Ty::Bool => Value::Bool(x != 0.0),
            Ty::Str => Value::Str(String::new()),
        }
    }

    /// Whether [`Ty::coerce`] changes the scalar `v` (array elements are never arrays).
    fn converts(self, v: &Value) -> bool {
        matches!(
            (self, v),
            (Ty::Real, Value::Int(_) | Value::Bool(_)) | (Ty::Int, Value::Real(_))
        )
    }

    fn zero(self) -> Value {
        self.value_of(0.0)
    }

    /// Convert an assigned value to the declared type (Integer -> Real widening).
    fn coerce(self, v: Value) -> Value {
        match (self, v) {
            (Ty::Real, Value::Int(i)) => Value::Real(i as f64),
            (Ty::Real, Value::Bool(b)) => Value::Real(b as i64 as f64),
            (Ty::Int, Value::Real(x)) => Value::Int(x.round() as i64),
            (Ty::Bool, Value::Real(x)) => Value::Bool(x != 0.0),
            (Ty::Bool, Value::Int(i)) => Value::Bool(i != 0),
            // checked by variant, without copying elements: this runs on every assignment
            (ty @ (Ty::Real | Ty::Int), Value::Array(a))
                if a.data.iter().any(|e| ty.converts(e)) =>
            {
                Value::Array(ArrayVal {
                    dims: a.dims,
                    data: a.data.into_iter().map(|e| ty.coerce(e)).collect(),
                })
            }
            (_, v) => v,
        }
    }
}

#[derive(Clone, Debug)]
pub enum FExpr {
    Const(Value),
    Local(u32),
    /// Raw register of the machine memory, read as a Real (tape-computed call arguments).
    Mem(u32),
    Slot(u32, Ty),
    /// `name = scale * target + offset`
    Alias(u32, f64, f64),
    Pre(u32, Ty),
    Time,
    Neg(Box<FExpr>),
    Not(Box<FExpr>),
    Bin(BinaryOp, Box<FExpr>, Box<FExpr>),
    Index(Box<FExpr>, Vec<FSub>),
    Builtin(Builtin, Vec<FExpr>),
    /// User function `f`, output `index`.
    Call(u32, Vec<FExpr>, usize),
    If(Vec<(FExpr, FExpr)>, Box<FExpr>),
    Array(Vec<FExpr>),
    /// Array of the given dimensions from scalar leaves in row-major order.
    FlatArray(Vec<usize>, Vec<FExpr>),
    Range(Box<FExpr>, Option<Box<FExpr>>, Box<FExpr>),
    Initial,
    Terminal,
    Sample(u32),
}

#[derive(Clone, Debug)]
pub enum FSub {
    Index(FExpr),
    All,
}

#[derive(Clone, Debug)]
pub enum FTarget {
    Local(u32, Ty),
    LocalIndexed(u32, Vec<FSub>),
    Slot(u32),
    Alias(u32, f64, f64),
    /// `{a[1], a[2], ...}`: an array output scattered into scalar model variables.
    Elements(Vec<FTarget>),
}

#[derive(Clone, Debug)]
pub struct WhenBranchStmt {
    pub cond: FExpr,
    pub body: Vec<FStmt>,
    /// Index into `Machine::when_cur/when_pre`; a vector condition `{c1, ..., cn}` uses
    /// `id .. id + n`, one edge per element.
    pub id: u32,
    pub has_initial: bool,
}

#[derive(Clone, Debug)]
pub enum FStmt {
    Assign(FTarget, FExpr),
    Tuple(Vec<Option<FTarget>>, u32, Vec<FExpr>),
    If(Vec<(FExpr, Vec<FStmt>)>, Vec<FStmt>),
    For(u32, FExpr, Vec<FStmt>),
    While(FExpr, Vec<FStmt>),
    When(Vec<WhenBranchStmt>),
    Reinit(u32, FExpr),
    Assert(FExpr, FExpr, AssertLevel),
    Terminate(FExpr),
    Eval(FExpr),
    Return,
    Break,
}

#[derive(Clone, Debug)]
pub struct FVarDecl {
    pub name: String,
    pub slot: u32,
    pub ty: Ty,
    pub dims: Vec<Option<FExpr>>,
    pub default: Option<FExpr>,
}

#[derive(Clone, Debug)]
pub enum CBody {
    Stmts(Vec<FStmt>),
    /// `external "C"` call of a C math library function.
    Libm {
        func: Builtin,
        args: Vec<FExpr>,
    },
    /// `external "C"` call of a function of the MSL's C support library that moss
    /// implements natively (see `native.rs`). `arg_outputs[i]` names the output an argument
    /// passes (written back after the call), `result` the output taking the return value.
    Native {
        func: crate::native::Native,
        args: Vec<FExpr>,
        arg_outputs: Vec<Option<usize>>,
        result: Option<usize>,
    },
    /// `external "C"` call of user C code, compiled and loaded by `extc.rs`.
    ExternC(Box<crate::extc::CCall>),
    /// Cannot be executed; the message says why (reported if the function is ever needed).
    Unsupported(String),
}

#[derive(Clone, Debug)]
pub struct CFunction {
    pub name: String,
    pub inputs: Vec<FVarDecl>,
    pub outputs: Vec<FVarDecl>,
    /// Outputs and locals in the order their bindings and sizes are evaluated before the
    /// body runs (see [`initialization_order`]).
    pub initialized: Vec<FVarDecl>,
    pub local_types: Vec<Ty>,
    pub body: CBody,
    /// Functions called by this one (indices), to check reachability of unsupported ones.
    pub callees: BTreeSet<u32>,
    /// Pure by itself: not declared `impure`, and a Modelica algorithm or a math-library
    /// function (native library functions may keep state or touch files).
    pub own_pure: bool,
    /// Its body loops or calls other functions: skipping it is worth a memo lookup.
    pub costly: bool,
    /// Outputs of recent calls are reused (see `memo.rs`); set once all functions are
    /// compiled, since purity depends on the callees.
    pub memo: bool,
    /// The compiled scalar form (`scalar_fn.rs`), when every variable is a scalar and the
    /// body stays within what that form covers.
    pub scalar: Option<std::sync::Arc<crate::scalar_fn::ScalarFn>>,
    /// Native code of the scalar form (`jit.rs`), compiled once the function is called
    /// often.
    pub native: crate::jit::NativeSlot,
}

/// Model variable names visible to algorithm sections.
#[derive(Default)]
pub struct ModelNames {
    pub vars: HashMap<String, (u32, Ty)>,
    pub aliases: HashMap<String, (u32, f64, f64)>,
}

/// Name resolution while compiling one function body or algorithm.
pub struct Scope<'a> {
    pub locals: Vec<(String, u32, Ty)>,
    /// Locals never assigned whose binding is a constant (a medium's coefficient tables):
    /// read as [`FExpr::Const`] in place instead of being copied into every call's frame.
    pub constants: HashMap<String, Value>,
    pub frame_size: u32,
    pub model: Option<&'a ModelNames>,
    pub fn_index: &'a HashMap<String, u32>,
    pub callees: BTreeSet<u32>,
    /// Next id of an algorithm `when` statement (model context).
    pub when_count: &'a mut u32,
    pub context: String,
}

impl<'a> Scope<'a> {
    pub fn new(
        fn_index: &'a HashMap<String, u32>,
        model: Option<&'a ModelNames>,
        when_count: &'a mut u32,
        context: String,
    ) -> Scope<'a> {
        Scope {
            locals: vec![],
            constants: HashMap::default(),
            frame_size: 0,
            model,
            fn_index,
            callees: BTreeSet::new(),
            when_count,
            context,
        }
    }

    fn add_local(&mut self, name: &str, ty: Ty) -> u32 {
        let slot = self.frame_size;
        self.frame_size += 1;
        self.locals.push((name.to_string(), slot, ty));
        slot
    }

    pub(crate) fn lookup_local(&self, name: &str) -> Option<(u32, Ty)> {
        self.locals
            .iter()
            .rev()
            .find(|(n, _, _)| n == name)
            .map(|(_, s, t)| (*s, *t))
    }

    fn err(&self, msg: String) -> String {
        format!("{}: {msg}", self.context)
    }

    pub fn compile_expr(&mut self, e: &Expr) -> VResult<FExpr> {
        Ok(match e {
            Expr::Real(x) => FExpr::Const(Value::Real(*x)),
            Expr::Integer(i) => FExpr::Const(Value::Int(*i)),
            Expr::Boolean(b) => FExpr::Const(Value::Bool(*b)),
            Expr::String(s) => FExpr::Const(Value::Str(s.clone())),
            Expr::Enum { index, .. } => FExpr::Const(Value::Int(*index as i64)),
            Expr::Var { name, subscripts } => {
                let base = self.resolve_var(name)?;
                if subscripts.is_empty() {
                    base
                } else {
                    FExpr::Index(Box::new(base), self.compile_subs(subscripts)?)
                }
            }
            Expr::Time => FExpr::Time,
            Expr::Unary { op, arg } => {
                let a = Box::new(self.compile_expr(arg)?);
                match op {
                    UnaryOp::Neg => FExpr::Neg(a),
                    UnaryOp::Not => FExpr::Not(a),
                }
            }
            Expr::Binary { op, lhs, rhs } => FExpr::Bin(
                *op,
                Box::new(self.compile_expr(lhs)?),
                Box::new(self.compile_expr(rhs)?),
            ),
            Expr::Call { func, args } => self.compile_call(func, args, 0)?,
            Expr::If { branches, else_ } => {
                let mut bs = Vec::with_capacity(branches.len());
                for (c, v) in branches {
                    bs.push((self.compile_expr(c)?, self.compile_expr(v)?));
                }
                FExpr::If(bs, Box::new(self.compile_expr(else_)?))
            }
            Expr::Array(elems) => {
                let elems: Vec<FExpr> = elems
                    .iter()
                    .map(|x| self.compile_expr(x))
                    .collect::<VResult<_>>()?;
                constant_array(elems)
            }
            Expr::Range { start, step, stop } => FExpr::Range(
                Box::new(self.compile_expr(start)?),
                match step {
                    Some(s) => Some(Box::new(self.compile_expr(s)?)),
                    None => None,
                },
                Box::new(self.compile_expr(stop)?),
            ),
            Expr::Tuple(_) => {
                return Err(self.err("a tuple is only allowed as an assignment target".into()))
            }
            Expr::CallOutput { call, index } => match call.as_ref() {
                Expr::Call { func, args } => self.compile_call(func, args, *index)?,
                _ => {
                    return Err(self.err("output selection of something that is not a call".into()))
                }
            },
        })
    }

    fn resolve_var(&self, name: &str) -> VResult<FExpr> {
        if let Some(v) = self.constants.get(name) {
            return Ok(FExpr::Const(v.clone()));
        }
        if let Some((slot, _)) = self.lookup_local(name) {
            return Ok(FExpr::Local(slot));
        }
        if let Some(m) = self.model {
            if let Some(&(v, ty)) = m.vars.get(name) {
                return Ok(FExpr::Slot(v, ty));
            }
            if let Some(&(v, s, o)) = m.aliases.get(name) {
                return Ok(FExpr::Alias(v, s, o));
            }
        }
        Err(self.err(format!("unknown variable `{name}`")))
    }

    fn compile_subs(&mut self, subs: &[Subscript]) -> VResult<Vec<FSub>> {
        subs.iter()
            .map(|s| match s {
                Subscript::Index(e) => Ok(FSub::Index(self.compile_expr(e)?)),
                Subscript::All => Ok(FSub::All),
            })
            .collect()
    }

    fn compile_args(&mut self, args: &[Expr]) -> VResult<Vec<FExpr>> {
        args.iter().map(|a| self.compile_expr(a)).collect()
    }

    fn model_slot_of(&self, e: &Expr) -> Option<(u32, Ty)> {
        if let Expr::Var { name, subscripts } = e {
            if subscripts.is_empty() && self.lookup_local(name).is_none() {
                return self.model.and_then(|m| m.vars.get(name).copied());
            }
        }
        None
    }

    fn compile_call(&mut self, func: &str, args: &[Expr], index: usize) -> VResult<FExpr> {
        match func {
            "pre" | "edge" | "change" => {
                let (v, ty) = args
                    .first()
                    .and_then(|a| self.model_slot_of(a))
                    .ok_or_else(|| {
                        self.err(format!("`{func}` needs a model variable as argument"))
                    })?;
                let pre = FExpr::Pre(v, ty);
                let cur = FExpr::Slot(v, ty);
                return Ok(match func {
                    "pre" => pre,
                    "edge" => FExpr::Bin(
                        BinaryOp::And,
                        Box::new(cur),
                        Box::new(FExpr::Not(Box::new(pre))),
                    ),
                    _ => FExpr::Bin(BinaryOp::Ne, Box::new(cur), Box::new(pre)),
                });
            }
            "initial" => return Ok(FExpr::Initial),
            "terminal" => return Ok(FExpr::Terminal),
            _ => {}
        }
        if let Some(&f) = self.fn_index.get(func) {
            self.callees.insert(f);
            return Ok(FExpr::Call(f, self.compile_args(args)?, index));
        }
        if let Some(b) = Builtin::from_name(func) {
            if index != 0 {
                return Err(self.err(format!("built-in `{func}` has only one output")));
            }
            return Ok(FExpr::Builtin(b, self.compile_args(args)?));
        }
        Err(self.err(format!(
            "cannot call `{func}`: neither a supported built-in nor a function of the model"
        )))
    }

    fn compile_target(&mut self, e: &Expr) -> VResult<FTarget> {
        if let Expr::Array(_) = e {
            // nested literals (matrices) in row-major order, like the array value's data
            let mut leaves = Vec::new();
            array_leaves(e, &mut leaves);
            let ts = leaves.into_iter().map(|x| self.compile_target(x));
            return Ok(FTarget::Elements(ts.collect::<VResult<_>>()?));
        }
        let Expr::Var { name, subscripts } = e else {
            return Err(self.err("assignment target is not a variable".into()));
        };
        if let Some((slot, ty)) = self.lookup_local(name) {
            if subscripts.is_empty() {
                return Ok(FTarget::Local(slot, ty));
            }
            return Ok(FTarget::LocalIndexed(slot, self.compile_subs(subscripts)?));
        }
        if !subscripts.is_empty() {
            return Err(self.err(format!("cannot subscript model variable `{name}`")));
        }
        match self.resolve_var(name)? {
            FExpr::Slot(v, _) => Ok(FTarget::Slot(v)),
            FExpr::Alias(v, s, o) => Ok(FTarget::Alias(v, s, o)),
            _ => Err(self.err(format!("cannot assign to `{name}`"))),
        }
    }

    pub fn compile_stmts(&mut self, stmts: &[Statement]) -> VResult<Vec<FStmt>> {
        stmts.iter().map(|s| self.compile_stmt(s)).collect()
    }

    fn compile_stmt(&mut self, s: &Statement) -> VResult<FStmt> {
        Ok(match s {
            Statement::Assign { target, value, .. } => {
                FStmt::Assign(self.compile_target(target)?, self.compile_expr(value)?)
            }
            Statement::TupleAssign { targets, value, .. } => {
                let Expr::Call { func, args } = value else {
                    return Err(
                        self.err("tuple assignment from something that is not a call".into())
                    );
                };
                let f = *self.fn_index.get(func).ok_or_else(|| {
                    self.err(format!("unknown function `{func}` in tuple assignment"))
                })?;
                self.callees.insert(f);
                let ts = targets
                    .iter()
                    .map(|t| t.as_ref().map(|t| self.compile_target(t)).transpose())
                    .collect::<VResult<_>>()?;
                FStmt::Tuple(ts, f, self.compile_args(args)?)
            }
            Statement::If {
                branches, else_, ..
            } => {
                let mut bs = Vec::new();
                for (c, body) in branches {
                    bs.push((self.compile_expr(c)?, self.compile_stmts(body)?));
                }
                FStmt::If(bs, self.compile_stmts(else_)?)
            }
            Statement::For {
                var, range, body, ..
            } => {
                let r = self.compile_expr(range)?;
                let mark = self.locals.len();
                let slot = self.add_local(var, Ty::Int);
                let b = self.compile_stmts(body)?;
                self.locals.truncate(mark);
                FStmt::For(slot, r, b)
            }
            Statement::While {
                condition, body, ..
            } => FStmt::While(self.compile_expr(condition)?, self.compile_stmts(body)?),
            Statement::When { branches, .. } => {
                let mut bs = Vec::new();
                for (c, body) in branches {
                    let id = *self.when_count;
                    *self.when_count += match c {
                        Expr::Array(es) => es.len().max(1) as u32,
                        _ => 1,
                    };
                    bs.push(WhenBranchStmt {
                        has_initial: c.enables_at_initialization(),
                        cond: self.compile_expr(c)?,
                        body: self.compile_stmts(body)?,
                        id,
                    });
                }
                FStmt::When(bs)
            }
            Statement::Reinit { var, value, .. } => {
                let v = match self.resolve_var(var)? {
                    FExpr::Slot(v, _) => v,
                    _ => return Err(self.err(format!("reinit of `{var}`, which is not a state"))),
                };
                FStmt::Reinit(v, self.compile_expr(value)?)
            }
            Statement::Assert {
                condition,
                message,
                level,
                ..
            } => FStmt::Assert(
                self.compile_expr(condition)?,
                self.compile_expr(message)?,
                *level,
            ),
            Statement::Terminate { message, .. } => FStmt::Terminate(self.compile_expr(message)?),
            Statement::Call { func, args, .. } => FStmt::Eval(self.compile_call(func, args, 0)?),
            Statement::Return { .. } => FStmt::Return,
            Statement::Break { .. } => FStmt::Break,
        })
    }
}

/// The values of `items` when every one is a constant.
pub(crate) fn constant_values(items: &[FExpr]) -> Option<Vec<Value>> {
    items
        .iter()
        .map(|e| match e {
            FExpr::Const(v) => Some(v.clone()),
            _ => None,
        })
        .collect()
}

/// An array literal whose elements are all constants (a medium's coefficient table) is
/// built once here, not on every evaluation: then `n[i]` reads the table in place
/// (`Env::const_position`) instead of building the whole array to take one element.
/// Literals whose elements do not fit together stay as they are and report at run time.
fn constant_array(elems: Vec<FExpr>) -> FExpr {
    match constant_values(&elems).map(array_literal) {
        Some(Ok(v)) => FExpr::Const(v),
        _ => FExpr::Array(elems),
    }
}

fn array_leaves<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match e {
        Expr::Array(items) => items.iter().for_each(|x| array_leaves(x, out)),
        other => out.push(other),
    }
}

/// Compile one flat function. Unknown external functions compile to
/// [`CBody::Unsupported`] so the error is raised only if the function is actually used.
pub fn compile_function(f: &Function, fn_index: &HashMap<String, u32>) -> VResult<CFunction> {
    let mut when_count = 0u32;
    let mut scope = Scope::new(
        fn_index,
        None,
        &mut when_count,
        format!("function `{}`", f.name),
    );
    let declare = |scope: &mut Scope, vars: &[FunctionVar]| -> Vec<(u32, Ty)> {
        vars.iter()
            .map(|v| {
                let ty = Ty::of_scalar(&v.ty);
                (scope.add_local(&v.name, ty), ty)
            })
            .collect()
    };
    let in_slots = declare(&mut scope, &f.inputs);
    let out_slots = declare(&mut scope, &f.outputs);
    let loc_slots = declare(&mut scope, &f.locals);
    let decls =
        |scope: &mut Scope, vars: &[FunctionVar], slots: &[(u32, Ty)]| -> VResult<Vec<FVarDecl>> {
            vars.iter()
                .zip(slots)
                .map(|(v, &(slot, ty))| {
                    Ok(FVarDecl {
                        name: v.name.clone(),
                        slot,
                        ty,
                        dims: v
                            .dims
                            .iter()
                            .map(|d| d.as_ref().map(|e| scope.compile_expr(e)).transpose())
                            .collect::<VResult<_>>()?,
                        default: v
                            .default
                            .as_ref()
                            .map(|e| scope.compile_expr(e))
                            .transpose()?,
                    })
                })
                .collect()
        };
    if let FunctionBody::Algorithm(stmts) = &f.body {
        scope.constants = constant_locals(&mut scope, &f.locals, stmts);
    }
    let inputs = decls(&mut scope, &f.inputs, &in_slots)?;
    let outputs = decls(&mut scope, &f.outputs, &out_slots)?;
    let locals = decls(&mut scope, &f.locals, &loc_slots)?;
    let body = match &f.body {
        FunctionBody::Algorithm(stmts) => CBody::Stmts(scope.compile_stmts(stmts)?),
        FunctionBody::External {
            language,
            name,
            output,
            args,
            ..
        } => compile_external(&mut scope, f, language, name, output, args, &f.outputs)?,
    };
    let mut local_types = vec![Ty::Real; scope.frame_size as usize];
    for (_, slot, ty) in &scope.locals {
        local_types[*slot as usize] = *ty;
    }
    let declared: Vec<&FunctionVar> = f.outputs.iter().chain(&f.locals).collect();
    let decls_all: Vec<&FVarDecl> = outputs.iter().chain(&locals).collect();
    let initialized = initialization_order(&declared)
        .into_iter()
        .map(|i| decls_all[i].clone())
        .filter(|d| !scope.constants.contains_key(&d.name))
        .collect();
    let own_pure = !f.is_impure
        && matches!(body, CBody::Stmts(_) | CBody::Libm { .. })
        && !matches!(&f.body, FunctionBody::Algorithm(stmts) if reads_simulation_state(stmts));
    let costly = !scope.callees.is_empty()
        || matches!(&f.body, FunctionBody::Algorithm(stmts) if has_loop(stmts));
    Ok(CFunction {
        name: f.name.clone(),
        inputs,
        outputs,
        initialized,
        local_types,
        body,
        callees: std::mem::take(&mut scope.callees),
        own_pure,
        costly,
        memo: false,
        scalar: None,
        native: Default::default(),
    })
}

/// The locals of a function body that are constants: a binding that compiles to a
/// constant value (literal tables, package constants) and no assignment anywhere in the
/// body. Array constants are the point: copying a spline table into the frame on every
/// call dominated the property functions of media models.
fn constant_locals(
    scope: &mut Scope,
    locals: &[FunctionVar],
    body: &[Statement],
) -> HashMap<String, Value> {
    let assigned = moss_frontend::flat::assigned_names(body);
    let mut out = HashMap::default();
    for v in locals {
        let Some(default) = &v.default else { continue };
        if assigned.contains(v.name.as_str()) {
            continue;
        }
        if let Ok(FExpr::Const(value)) = scope.compile_expr(default) {
            if value.is_array() {
                out.insert(v.name.clone(), Ty::of_scalar(&v.ty).coerce(value));
            }
        }
    }
    out
}

/// Does `stmts` read the state of the simulation (`time`, `initial()`, `terminal()`,
/// `sample`) — which makes equal arguments no promise of equal outputs?
fn reads_simulation_state(stmts: &[Statement]) -> bool {
    let mut found = false;
    for s in stmts {
        moss_frontend::walk::statement_exprs(s, &mut |e| {
            moss_frontend::walk::visit(e, &mut |x| match x {
                Expr::Time => found = true,
                Expr::Call { func, .. } => {
                    found |= matches!(func.as_str(), "initial" | "terminal" | "sample")
                }
                _ => {}
            })
        });
    }
    found
}

/// Does `stmts` contain a `for` or `while` loop (at any depth)?
fn has_loop(stmts: &[Statement]) -> bool {
    stmts.iter().any(|s| match s {
        Statement::For { .. } | Statement::While { .. } => true,
        Statement::If {
            branches, else_, ..
        } => branches.iter().any(|(_, b)| has_loop(b)) || has_loop(else_),
        Statement::When { branches, .. } => branches.iter().any(|(_, b)| has_loop(b)),
        _ => false,
    })
}

/// Indices of `vars` (outputs and locals) in an order in which every binding and size
/// expression only uses variables initialized before it: bindings are equations, and the
/// MSL writes `output Real x[max(nrow, ncol)] = cat(1, b, zeros(max(nrow, ncol) - nrow))`
/// before `protected Integer nrow = size(A, 1)`. Declaration order otherwise; variables on
/// a cycle (an error the frontend reports) keep it.
fn initialization_order(vars: &[&FunctionVar]) -> Vec<usize> {
    let index: HashMap<&str, usize> = vars
        .iter()
        .enumerate()
        .map(|(i, v)| (v.name.as_str(), i))
        .collect();
    let deps: Vec<Vec<usize>> = vars
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let mut d = Vec::new();
            let exprs = v.default.iter().chain(v.dims.iter().flatten());
            for e in exprs {
                moss_frontend::walk::visit(e, &mut |x| {
                    if let Expr::Var { name, .. } = x {
                        if let Some(&j) = index.get(name.as_str()) {
                            if j != i {
                                d.push(j);
                            }
                        }
                    }
                });
            }
            d
        })
        .collect();
    let mut placed = vec![false; vars.len()];
    let mut order = Vec::with_capacity(vars.len());
    while order.len() < vars.len() {
        let ready: Vec<usize> = (0..vars.len())
            .filter(|&i| !placed[i] && deps[i].iter().all(|&j| placed[j]))
            .collect();
        let next = if ready.is_empty() {
            (0..vars.len()).filter(|&i| !placed[i]).collect()
        } else {
            ready
        };
        for i in next {
            placed[i] = true;
            order.push(i);
        }
    }
    order
}

fn compile_external(
    scope: &mut Scope,
    f: &Function,
    language: &str,
    name: &str,
    output: &Option<String>,
    args: &[Expr],
    outputs: &[FunctionVar],
) -> VResult<CBody> {
    let libm = libm_function(name);
    let out_ok = match output {
        Some(o) => outputs.first().map(|v| &v.name == o).unwrap_or(false),
        None => false,
    };
    let output_index = |n: &str| outputs.iter().position(|v| v.name == n);
    if let Some(func) = crate::native::native_function(name, language) {
        let arg_outputs = args
            .iter()
            .map(|a| match a {
                Expr::Var { name, subscripts } if subscripts.is_empty() => output_index(name),
                _ => None,
            })
            .collect();
        return Ok(CBody::Native {
            func,
            args: scope.compile_args(args)?,
            arg_outputs,
            result: output.as_deref().and_then(output_index),
        });
    }
    match (language, libm) {
        // `external "builtin"` is how libraries declare the standard math functions
        ("C" | "builtin", Some(func)) if out_ok && outputs.len() == 1 => Ok(CBody::Libm {
            func,
            args: scope.compile_args(args)?,
        }),
        ("C", _) => Ok(CBody::ExternC(Box::new(crate::extc_args::c_call(
            scope, f, name, output, args,
        )?))),
        _ => Ok(CBody::Unsupported(format!(
            "function `{}` calls external {language} function `{name}`, which moss cannot \
             execute (C functions with their code in the `Include` or `Library` annotation, C \
             math library functions, the MSL's C support functions and LAPACK's dgesv, \
             dgelsy, dgetrf, dgetri and dgetrs run); give the function a Modelica algorithm \
             body instead",
            f.name
        ))),
    }
}

/// The number `Env::eval` gives for a slot of type `ty` holding `x` (an Integer slot rounds,
/// a Boolean one is 0 or 1), without building the value.
fn slot_as_number(ty: Ty, x: f64) -> f64 {
    match ty {
        Ty::Int => x.round(),
        Ty::Bool => f64::from(u8::from(x != 0.0)),
        Ty::Real | Ty::Str => x,
    }
}

/// What a statement list did to the control flow.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Flow {
    Next,
    Break,
    Return,
}

pub(crate) const MAX_CALL_DEPTH: u32 = 500;
const MAX_WHILE_ITERATIONS: u64 = 100_000_000;

/// Evaluation environment: model memory plus the compiled functions.
pub struct Env<'a> {
    pub m: &'a mut Machine,
    pub funcs: &'a [CFunction],
    pub depth: u32,
}

impl Env<'_> {
    /// Call function `f` with positional arguments; returns all outputs.
    pub fn call(&mut self, f: u32, args: Vec<Value>) -> VResult<Vec<Value>> {
        let funcs = self.funcs;
        let func = &funcs[f as usize];
        if self.depth >= MAX_CALL_DEPTH {
            return Err(format!(
                "function `{}`: call depth exceeds {MAX_CALL_DEPTH} (unbounded recursion?)",
                func.name
            ));
        }
        if args.len() > func.inputs.len() {
            return Err(format!(
                "function `{}` takes {} inputs, called with {}",
                func.name,
                func.inputs.len(),
                args.len()
            ));
        }
        if func.scalar.as_deref().is_some_and(|sf| sf.accepts(&args)) {
            self.m.memo.calls += 1;
            return self.call_scalar_values(f, &args);
        }
        self.m.memo.calls += 1;
        let key = if func.memo {
            crate::memo::call_key(&args)
        } else {
            None
        };
        if let Some(k) = &key {
            if let Some(outs) = self.m.memo.lookup(f, k) {
                self.m.memo.hits += 1;
                return Ok(outs);
            }
        }
        self.depth += 1;
        let r = self.call_inner(func, args).map_err(|e| {
            if e.starts_with("in function") {
                e
            } else {
                format!("in function `{}`: {e}", func.name)
            }
        });
        self.depth -= 1;
        if let (Some(k), Ok(outs)) = (key, &r) {
            self.m.memo.store(f, k, outs);
        }
        r
    }

    fn call_inner(&mut self, func: &CFunction, args: Vec<Value>) -> VResult<Vec<Value>> {
        let mut frame: Vec<Value> = func.local_types.iter().map(|t| t.zero()).collect();
        let nargs = args.len();
        for (decl, a) in func.inputs.iter().zip(args) {
            frame[decl.slot as usize] = decl.ty.coerce(a);
        }
        for decl in &func.inputs[nargs..] {
            let d = decl
                .default
                .as_ref()
                .ok_or_else(|| format!("input `{}` has no value and no default", decl.name))?;
            let v = self.eval(d, &mut frame)?;
            frame[decl.slot as usize] = decl.ty.coerce(v);
        }
        for decl in &func.initialized {
            let v = self.initial_local(decl, &mut frame)?;
            frame[decl.slot as usize] = v;
        }
        match &func.body {
            CBody::Stmts(stmts) => {
                self.exec(stmts, &mut frame)?;
            }
            CBody::Libm { func: b, args } => {
                let vals = args
                    .iter()
                    .map(|a| self.eval(a, &mut frame))
                    .collect::<VResult<Vec<_>>>()?;
                let out = func
                    .outputs
                    .first()
                    .ok_or("external function without output")?;
                frame[out.slot as usize] = out.ty.coerce(call_builtin(*b, &vals)?);
            }
            CBody::Native {
                func: native,
                args,
                arg_outputs,
                result,
            } => {
                let vals = args
                    .iter()
                    .map(|a| self.eval(a, &mut frame))
                    .collect::<VResult<Vec<_>>>()?;
                let r = crate::native::call_native(*native, &vals)?;
                let mut store = |i: usize, v: Value| {
                    if let Some(o) = func.outputs.get(i) {
                        frame[o.slot as usize] = o.ty.coerce(v);
                    }
                };
                if let (Some(i), Some(v)) = (*result, r.returned) {
                    store(i, v);
                }
                for (pos, v) in r.written {
                    if let Some(Some(i)) = arg_outputs.get(pos) {
                        store(*i, v);
                    }
                }
            }
            CBody::ExternC(call) => crate::extc_args::run(self, call, &mut frame)?,
            CBody::Unsupported(msg) => return Err(msg.clone()),
        }
        Ok(func
            .outputs
            .iter()
            .map(|o| std::mem::replace(&mut frame[o.slot as usize], Value::Int(0)))
            .collect())
    }

    /// Value of an output or local before the body runs: its binding, or a zero array of
    /// its declared size, or a scalar zero.
    fn initial_local(&mut self, decl: &FVarDecl, frame: &mut Vec<Value>) -> VResult<Value> {
        if let Some(d) = &decl.default {
            let v = self.eval(d, frame)?;
            return Ok(decl.ty.coerce(v));
        }
        if decl.dims.is_empty() {
            return Ok(decl.ty.zero());
        }
        let mut dims = Vec::with_capacity(decl.dims.len());
        for d in &decl.dims {
            match d {
                Some(e) => {
                    let n = self.eval(e, frame)?.as_i64()?;
                    dims.push(
                        usize::try_from(n).map_err(|_| {
                            format!("`{}` declared with negative size {n}", decl.name)
                        })?,
                    );
                }
                // `:` sizes are fixed by the first assignment
                None => dims.push(0),
            }
        }
        Ok(Value::Array(ArrayVal::filled(dims, decl.ty.zero())))
    }

    pub fn exec_block(&mut self, stmts: &[FStmt], frame: &mut Vec<Value>) -> VResult<()> {
        self.exec(stmts, frame).map(|_| ())
    }

    fn exec(&mut self, stmts: &[FStmt], frame: &mut Vec<Value>) -> VResult<Flow> {
        for s in stmts {
            let flow = self.exec_one(s, frame)?;
            if flow != Flow::Next {
                return Ok(flow);
            }
        }
        Ok(Flow::Next)
    }

    fn exec_one(&mut self, s: &FStmt, frame: &mut Vec<Value>) -> VResult<Flow> {
        match s {
            FStmt::Assign(t, e) => {
                let v = self.eval(e, frame)?;
                self.assign(t, v, frame)?;
            }
            FStmt::Tuple(targets, f, args) => {
                let vals = self.eval_args(args, frame)?;
                let outs = self.call(*f, vals)?;
                for (t, v) in targets.iter().zip(outs) {
                    if let Some(t) = t {
                        self.assign(t, v, frame)?;
                    }
                }
            }
            FStmt::If(branches, else_) => {
                for (c, body) in branches {
                    if self.eval(c, frame)?.as_bool()? {
                        return self.exec(body, frame);
                    }
                }
                return self.exec(else_, frame);
            }
            FStmt::For(slot, range, body) => return self.exec_for(*slot, range, body, frame),
            FStmt::While(c, body) => {
                let mut count = 0u64;
                while self.eval(c, frame)?.as_bool()? {
                    count += 1;
                    if count > MAX_WHILE_ITERATIONS {
                        return Err(format!(
                            "while loop did not end after {MAX_WHILE_ITERATIONS} iterations"
                        ));
                    }
                    match self.exec(body, frame)? {
                        Flow::Break => break,
                        Flow::Return => return Ok(Flow::Return),
                        Flow::Next => {}
                    }
                }
            }
            FStmt::When(branches) => return self.exec_when(branches, frame),
            FStmt::Reinit(v, e) => {
                let x = self.eval(e, frame)?.as_f64()?;
                self.m.mem[*v as usize] = x;
                self.m.states_changed = true;
            }
            FStmt::Assert(c, msg, level) => {
                if !self.eval(c, frame)?.as_bool()? {
                    let text = to_modelica_string(&self.eval(msg, frame)?, 6);
                    match level {
                        AssertLevel::Error => return Err(format!("assertion failed: {text}")),
                        AssertLevel::Warning => {
                            if !self.m.warnings.contains(&text) {
                                eprintln!("warning: assertion at time {}: {text}", self.m.time());
                                self.m.warnings.push(text);
                            }
                        }
                    }
                }
            }
            FStmt::Terminate(msg) => {
                let text = to_modelica_string(&self.eval(msg, frame)?, 6);
                self.m.terminate = Some(text);
            }
            // a call statement discards its outputs; functions without outputs
            // (checks made only of asserts) are legal here and return nothing
            FStmt::Eval(FExpr::Call(f, args, _)) => {
                let vals = self.eval_args(args, frame)?;
                self.call(*f, vals)?;
            }
            FStmt::Eval(e) => {
                self.eval(e, frame)?;
            }
            FStmt::Return => return Ok(Flow::Return),
            FStmt::Break => return Ok(Flow::Break),
        }
        Ok(Flow::Next)
    }

    fn exec_for(
        &mut self,
        slot: u32,
        range: &FExpr,
        body: &[FStmt],
        frame: &mut Vec<Value>,
    ) -> VResult<Flow> {
        // ranges are iterated without building the array
        if let FExpr::Range(a, step, b) = range {
            let (a, b) = (self.eval(a, frame)?, self.eval(b, frame)?);
            let step = match step {
                Some(s) => self.eval(s, frame)?,
                None => Value::Int(1),
            };
            if let (Value::Int(a), Value::Int(b), Value::Int(s)) = (&a, &b, &step) {
                if *s == 0 {
                    return Err("for loop range with step 0".into());
                }
                let mut i = *a;
                while (*s > 0 && i <= *b) || (*s < 0 && i >= *b) {
                    frame[slot as usize] = Value::Int(i);
                    match self.exec(body, frame)? {
                        Flow::Break => break,
                        Flow::Return => return Ok(Flow::Return),
                        Flow::Next => {}
                    }
                    i += s;
                }
                return Ok(Flow::Next);
            }
            let r = range_values(&a, Some(&step), &b)?;
            return self.for_each(slot, r.flatten(), body, frame);
        }
        let r = self.eval(range, frame)?;
        let n = r.dims().first().copied().unwrap_or(1);
        let mut items = Vec::with_capacity(n);
        for i in 0..n {
            items.push(if r.is_array() {
                r.first_dim_elem(i)?
            } else {
                r.clone()
            });
        }
        self.for_each(slot, items, body, frame)
    }

    fn for_each(
        &mut self,
        slot: u32,
        items: Vec<Value>,
        body: &[FStmt],
        frame: &mut Vec<Value>,
    ) -> VResult<Flow> {
        for it in items {
            frame[slot as usize] = it;
            match self.exec(body, frame)? {
                Flow::Break => break,
                Flow::Return => return Ok(Flow::Return),
                Flow::Next => {}
            }
        }
        Ok(Flow::Next)
    }

    /// `when` statement: a branch fires when its condition becomes true at an event (or at
    /// initialization if `initial()` enables it, see [`Expr::enables_at_initialization`]);
    /// the first firing branch wins.
    fn exec_when(&mut self, branches: &[WhenBranchStmt], frame: &mut Vec<Value>) -> VResult<Flow> {
        let mut fired = false;
        for b in branches {
            // `when {c1, c2}` fires when any element becomes true: one edge per element
            let conds = match self.eval(&b.cond, frame)? {
                Value::Array(a) => a.data,
                scalar => vec![scalar],
            };
            let mut fires = false;
            for (k, c) in conds.iter().enumerate() {
                let c = c.as_bool()?;
                let id = b.id as usize + k;
                let Some(&was) = self.m.when_pre.get(id) else {
                    return Err("a when condition changed its size".to_string());
                };
                fires |= if self.m.initial {
                    b.has_initial && c
                } else {
                    self.m.event_mode && c && !was
                };
                // Outside events only a false value is recorded: a `sample` that was true at
                // the last event is false again before the next, and that is the `pre` value
                // the next edge is measured from. Relations here are evaluated live, so a
                // true value outside events may be the coming event itself (`time >= 0.5`
                // evaluated at the event's left limit) and must not count as its `pre`.
                if self.m.event_mode || self.m.initial || !c {
                    self.m.when_cur[id] = c;
                }
            }
            if fires && !fired {
                fired = true;
                let flow = self.exec(&b.body, frame)?;
                if flow != Flow::Next {
                    return Ok(flow);
                }
            }
        }
        Ok(Flow::Next)
    }

    fn assign(&mut self, t: &FTarget, v: Value, frame: &mut Vec<Value>) -> VResult<()> {
        match t {
            FTarget::Local(slot, ty) => frame[*slot as usize] = ty.coerce(v),
            FTarget::LocalIndexed(slot, subs) => {
                if let Some(flat) = self.scalar_position(subs, *slot, frame)? {
                    if let Value::Array(a) = &mut frame[*slot as usize] {
                        let elem = &mut a.data[flat];
                        *elem = match elem {
                            Value::Real(_) => Ty::Real.coerce(v),
                            _ => v,
                        };
                        return Ok(());
                    }
                }
                let dims = frame[*slot as usize].dims();
                let sels = self.eval_subs(subs, &dims, frame)?;
                let target = &mut frame[*slot as usize];
                scatter(target, &sels, v)?;
            }
            FTarget::Slot(s) => self.m.mem[*s as usize] = self.slot_number(v)?,
            FTarget::Elements(ts) => {
                let Value::Array(a) = v else {
                    return Err(format!("cannot assign a {} to an array", v.type_name()));
                };
                if a.data.len() != ts.len() {
                    return Err(format!(
                        "cannot assign an array of size {:?} to {} elements",
                        a.dims,
                        ts.len()
                    ));
                }
                for (t, x) in ts.iter().zip(a.data) {
                    self.assign(t, x, frame)?;
                }
            }
            FTarget::Alias(s, scale, offset) => {
                self.m.mem[*s as usize] = (v.as_f64()? - offset) / scale
            }
        }
        Ok(())
    }

    /// The value of a model slot of type `ty` (a String slot holds a handle into the pool).
    fn slot_value(&self, ty: Ty, x: f64) -> Value {
        match ty {
            Ty::Str => Value::Str(self.m.strings.text(x).to_string()),
            _ => ty.value_of(x),
        }
    }

    /// What a model slot stores for `v`: the number, or the handle of a String.
    pub fn slot_number(&mut self, v: Value) -> VResult<f64> {
        match v {
            Value::Str(s) => Ok(self.m.strings.intern(&s)),
            v => v.as_f64(),
        }
    }

    /// A dynamic state-selection built-in, its arguments read as numbers into a pooled
    /// buffer: `$stateSetQuality` takes the constraints' whole Jacobian (dozens of entries)
    /// at every evaluation, and building them as values dominated such models.
    fn state_set_builtin(
        &mut self,
        b: Builtin,
        args: &[FExpr],
        frame: &mut Vec<Value>,
    ) -> VResult<Value> {
        let mut xs = self.m.frames.take(0);
        let mut read = || -> VResult<()> {
            for a in args {
                let x = match a {
                    FExpr::Mem(i) => self.m.mem[*i as usize],
                    FExpr::Slot(v, ty) if *ty != Ty::Str => {
                        slot_as_number(*ty, self.m.mem[*v as usize])
                    }
                    FExpr::Pre(v, ty) if *ty != Ty::Str => {
                        slot_as_number(*ty, self.m.mem[self.m.pre_index(*v)])
                    }
                    FExpr::Alias(v, s, o) => s * self.m.mem[*v as usize] + o,
                    other => self.eval(other, frame)?.as_f64()?,
                };
                xs.push(x);
            }
            Ok(())
        };
        let r = read().and_then(|_| crate::builtins::state_set_builtin(b, &xs));
        self.m.frames.give(xs);
        r
    }

    fn eval_args(&mut self, args: &[FExpr], frame: &mut Vec<Value>) -> VResult<Vec<Value>> {
        args.iter().map(|a| self.eval(a, frame)).collect()
    }

    fn index_local(&mut self, slot: u32, subs: &[FSub], frame: &mut Vec<Value>) -> VResult<Value> {
        if let Some(flat) = self.scalar_position(subs, slot, frame)? {
            return match &frame[slot as usize] {
                Value::Array(a) => Ok(a.data[flat].clone()),
                other => Err(format!("cannot subscript a {}", other.type_name())),
            };
        }
        let dims = frame[slot as usize].dims();
        let sels = self.eval_subs(subs, &dims, frame)?;
        gather(&frame[slot as usize], &sels)
    }

    fn size_of_local(
        &mut self,
        slot: u32,
        dim: Option<&FExpr>,
        frame: &mut Vec<Value>,
    ) -> VResult<Value> {
        let dims = frame[slot as usize].dims();
        match dim {
            Some(k) => {
                let k = self.eval(k, frame)?.as_i64()?;
                let d = usize::try_from(k - 1)
                    .ok()
                    .and_then(|i| dims.get(i))
                    .ok_or_else(|| format!("size: dimension {k} out of range for {dims:?}"))?;
                Ok(Value::Int(*d as i64))
            }
            None => Ok(Value::vector(
                dims.iter().map(|&d| Value::Int(d as i64)).collect(),
            )),
        }
    }

    /// Flat position of `a[i, j, ...]` when every dimension gets one scalar index (the common
    /// case in loops); `None` for slices.
    fn scalar_position(
        &mut self,
        subs: &[FSub],
        slot: u32,
        frame: &mut Vec<Value>,
    ) -> VResult<Option<usize>> {
        let n_dims = match &frame[slot as usize] {
            Value::Array(a) => a.dims.len(),
            _ => return Ok(None),
        };
        if subs.len() != n_dims || subs.len() > 8 {
            return Ok(None);
        }
        let mut idx = [0i64; 8];
        for (k, s) in subs.iter().enumerate() {
            let FSub::Index(e) = s else { return Ok(None) };
            match self.eval(e, frame)? {
                Value::Int(i) => idx[k] = i,
                Value::Real(x) if x.fract() == 0.0 => idx[k] = x as i64,
                _ => return Ok(None),
            }
        }
        let Value::Array(a) = &frame[slot as usize] else {
            return Ok(None);
        };
        let mut flat = 0usize;
        for (k, &n) in a.dims.iter().enumerate() {
            flat = flat * n + checked_index(idx[k], n)?;
        }
        Ok(Some(flat))
    }

    /// Flat position of `a[i, j, ...]` in a constant array when every dimension gets one
    /// scalar index; `None` for slices.
    fn const_position(
        &mut self,
        a: &ArrayVal,
        subs: &[FSub],
        frame: &mut Vec<Value>,
    ) -> VResult<Option<usize>> {
        if subs.len() != a.dims.len() {
            return Ok(None);
        }
        let mut flat = 0usize;
        for (s, &n) in subs.iter().zip(&a.dims) {
            let FSub::Index(e) = s else { return Ok(None) };
            let i = match self.eval(e, frame)? {
                Value::Int(i) => i,
                Value::Real(x) if x.fract() == 0.0 => x as i64,
                _ => return Ok(None),
            };
            flat = flat * n + checked_index(i, n)?;
        }
        Ok(Some(flat))
    }

    fn eval_subs(
        &mut self,
        subs: &[FSub],
        dims: &[usize],
        frame: &mut Vec<Value>,
    ) -> VResult<Vec<Sel>> {
        if subs.len() > dims.len() {
            return Err(format!(
                "{} subscripts for an array with {} dimensions",
                subs.len(),
                dims.len()
            ));
        }
        let mut sels = Vec::with_capacity(dims.len());
        for (k, &n) in dims.iter().enumerate() {
            let sel = match subs.get(k) {
                None | Some(FSub::All) => Sel::Many((0..n).collect()),
                Some(FSub::Index(e)) => match self.eval(e, frame)? {
                    Value::Array(a) => Sel::Many(
                        a.data
                            .iter()
                            .map(|i| checked_index(i.as_i64()?, n))
                            .collect::<VResult<_>>()?,
                    ),
                    v => Sel::One(checked_index(v.as_i64()?, n)?),
                },
            };
            sels.push(sel);
        }
        Ok(sels)
    }

    pub fn eval(&mut self, e: &FExpr, frame: &mut Vec<Value>) -> VResult<Value> {
        // local arrays are read in place, not copied (loops over tables stay linear)
        match e {
            FExpr::Index(base, subs) => {
                if let FExpr::Local(slot) = **base {
                    return self.index_local(slot, subs, frame);
                }
                // a constant table (`n[i]` of a medium's coefficients) is read in place too
                if let FExpr::Const(whole @ Value::Array(a)) = &**base {
                    if let Some(flat) = self.const_position(a, subs, frame)? {
                        return Ok(a.data[flat].clone());
                    }
                    // a slice (`coef[int, 1:4]`) gathers from the table without copying it
                    let sels = self.eval_subs(subs, &whole.dims(), frame)?;
                    return gather(whole, &sels);
                }
            }
            FExpr::Builtin(Builtin::Size, args) => {
                if let Some(FExpr::Local(slot)) = args.first() {
                    return self.size_of_local(*slot, args.get(1), frame);
                }
            }
            _ => {}
        }
        Ok(match e {
            FExpr::Const(v) => v.clone(),
            FExpr::Local(s) => frame[*s as usize].clone(),
            FExpr::Mem(i) => Value::Real(self.m.mem[*i as usize]),
            FExpr::Slot(v, ty) => self.slot_value(*ty, self.m.mem[*v as usize]),
            FExpr::Alias(v, s, o) => Value::Real(s * self.m.mem[*v as usize] + o),
            FExpr::Pre(v, ty) => self.slot_value(*ty, self.m.mem[self.m.pre_index(*v)]),
            FExpr::Time => Value::Real(self.m.time()),
            FExpr::Neg(a) => neg(self.eval(a, frame)?)?,
            FExpr::Not(a) => Value::Bool(!self.eval(a, frame)?.as_bool()?),
            FExpr::Bin(op, a, b) => {
                let x = self.eval(a, frame)?;
                // short-circuit Boolean operators (guards like `i <= n and x[i] > 0`)
                match (op, &x) {
                    (BinaryOp::And, v) if !v.is_array() && !v.as_bool()? => {
                        return Ok(Value::Bool(false))
                    }
                    (BinaryOp::Or, v) if !v.is_array() && v.as_bool()? => {
                        return Ok(Value::Bool(true))
                    }
                    _ => {}
                }
                let y = self.eval(b, frame)?;
                match (&x, &y) {
                    (Value::Real(p), Value::Real(q))
                        if !matches!(op, BinaryOp::And | BinaryOp::Or) =>
                    {
                        real_op(*op, *p, *q)
                    }
                    _ => binop(*op, x, y)?,
                }
            }
            FExpr::Index(base, subs) => {
                let b = self.eval(base, frame)?;
                let sels = self.eval_subs(subs, &b.dims(), frame)?;
                gather(&b, &sels)?
            }
            FExpr::Builtin(
                b @ (Builtin::StateSetWeight | Builtin::StateSetQuality | Builtin::StateSetSelect),
                args,
            ) => self.state_set_builtin(*b, args, frame)?,
            FExpr::Builtin(b, args) => {
                let vals = self.eval_args(args, frame)?;
                call_builtin(*b, &vals)?
            }
            FExpr::Call(f, args, index) => {
                let position = self.funcs[*f as usize]
                    .scalar
                    .as_deref()
                    .and_then(|sf| sf.flat_position(*index));
                if let Some(position) = position {
                    let mut outs = Vec::new();
                    if self.call_scalar_exprs(*f, args, frame, &mut outs)? {
                        let func = &self.funcs[*f as usize];
                        let x = outs.get(position).copied().ok_or_else(|| {
                            format!("function `{}` has no output {}", func.name, index + 1)
                        })?;
                        let ty = func.outputs.get(*index).map_or(Ty::Real, |d| d.ty);
                        return Ok(ty.value_of(x));
                    }
                }
                let vals = self.eval_args(args, frame)?;
                let mut outs = self.call(*f, vals)?;
                if *index >= outs.len() {
                    return Err(format!(
                        "function `{}` has no output {}",
                        self.funcs[*f as usize].name,
                        index + 1
                    ));
                }
                outs.swap_remove(*index)
            }
            FExpr::If(branches, else_) => {
                for (c, v) in branches {
                    if self.eval(c, frame)?.as_bool()? {
                        return self.eval(v, frame);
                    }
                }
                self.eval(else_, frame)?
            }
            FExpr::Array(elems) => array_literal(self.eval_args(elems, frame)?)?,
            FExpr::FlatArray(dims, leaves) => Value::Array(ArrayVal {
                dims: dims.clone(),
                data: self.eval_args(leaves, frame)?,
            }),
            FExpr::Range(a, step, b) => {
                let a = self.eval(a, frame)?;
                let s = match step {
                    Some(s) => Some(self.eval(s, frame)?),
                    None => None,
                };
                let b = self.eval(b, frame)?;
                range_values(&a, s.as_ref(), &b)?
            }
            FExpr::Initial => Value::Bool(self.m.initial),
            FExpr::Terminal => Value::Bool(self.m.terminal),
            FExpr::Sample(id) => Value::Bool(
                self.m
                    .sample_active
                    .get(*id as usize)
                    .copied()
                    .unwrap_or(false),
            ),
        })
    }
}

fn checked_index(i: i64, n: usize) -> VResult<usize> {
    if i >= 1 && (i as usize) <= n {
        Ok(i as usize - 1)
    } else {
        Err(format!("index {i} out of bounds 1..{n}"))
    }
}

/// Selection along one dimension: a single index (dimension dropped) or a list (kept).
pub enum Sel {
    One(usize),
    Many(Vec<usize>),
}

/// Flat indices selected by `sels` (row-major), and the dims of the result.
fn selected(dims: &[usize], sels: &[Sel]) -> (Vec<usize>, Vec<usize>) {
    let mut flat = vec![0usize];
    let mut out_dims = Vec::new();
    for (k, sel) in sels.iter().enumerate() {
        let stride: usize = dims[k + 1..].iter().product();
        let idx: &[usize] = match sel {
            Sel::One(i) => std::slice::from_ref(i),
            Sel::Many(v) => {
                out_dims.push(v.len());
                v
            }
        };
        let mut next = Vec::with_capacity(flat.len() * idx.len());
        for base in &flat {
            for i in idx {
                next.push(base + i * stride);
            }
        }
        flat = next;
    }
    (flat, out_dims)
}

fn gather(base: &Value, sels: &[Sel]) -> VResult<Value> {
    let a = base.as_array()?;
    let (flat, dims) = selected(&a.dims, sels);
    if dims.is_empty() {
        return Ok(a.data[flat[0]].clone());
    }
    Ok(Value::Array(ArrayVal::new(
        dims,
        flat.iter().map(|&i| a.data[i].clone()).collect(),
    )))
}

fn scatter(target: &mut Value, sels: &[Sel], v: Value) -> VResult<()> {
    let Value::Array(a) = target else {
        return Err("subscripted assignment to a scalar".into());
    };
    let (flat, dims) = selected(&a.dims, sels);
    let elem_ty = a.data.first().map(|e| match e {
        Value::Real(_) => Ty::Real,
        _ => Ty::Int,
    });
    let vals = v.flatten();
    if dims.is_empty() {
        a.data[flat[0]] = match elem_ty {
            Some(Ty::Real) => Ty::Real.coerce(v),
            _ => v,
        };
        return Ok(());
    }
    if vals.len() != flat.len() {
        return Err(format!(
            "assignment of {} elements to a slice of {} elements",
            vals.len(),
            flat.len()
        ));
    }
    for (i, x) in flat.into_iter().zip(vals) {
        a.data[i] = match elem_ty {
            Some(Ty::Real) => Ty::Real.coerce(x),
            _ => x,
        };
    }
    Ok(())
}

fn range_values(a: &Value, step: Option<&Value>, b: &Value) -> VResult<Value> {
    let all_int = matches!(a, Value::Int(_))
        && matches!(b, Value::Int(_))
        && step.map(|s| matches!(s, Value::Int(_))).unwrap_or(true);
    if all_int {
        let (a, b) = (a.as_i64()?, b.as_i64()?);
        let s = step.map(|s| s.as_i64()).transpose()?.unwrap_or(1);
        if s == 0 {
            return Err("range with step 0".into());
        }
        let mut v = Vec::new();
        let mut i = a;
        while (s > 0 && i <= b) || (s < 0 && i >= b) {
            v.push(Value::Int(i));
            i += s;
        }
        return Ok(Value::vector(v));
    }
    let (a, b) = (a.as_f64()?, b.as_f64()?);
    let s = step.map(|s| s.as_f64()).transpose()?.unwrap_or(1.0);
    if s == 0.0 {
        return Err("range with step 0".into());
    }
    let n = ((b - a) / s + 1e-10).floor();
    let n = if n < 0.0 { 0 } else { n as usize + 1 };
    Ok(Value::vector(
        (0..n).map(|k| Value::Real(a + k as f64 * s)).collect(),
    ))
}

fn neg(v: Value) -> VResult<Value> {
    Ok(match v {
        Value::Real(x) => Value::Real(-x),
        Value::Int(i) => Value::Int(-i),
        Value::Array(a) => Value::Array(ArrayVal {
            dims: a.dims,
            data: a.data.into_iter().map(neg).collect::<VResult<_>>()?,
        }),
        o => return Err(format!("cannot negate a {}", o.type_name())),
    })
}

fn scalar_op(op: BinaryOp, x: &Value, y: &Value) -> VResult<Value> {
    use BinaryOp::*;
    if let (Value::Str(a), Value::Str(b)) = (x, y) {
        return Ok(match op {
            Add | ElemAdd => Value::Str(format!("{a}{b}")),
            Eq => Value::Bool(a == b),
            Ne => Value::Bool(a != b),
            Lt => Value::Bool(a < b),
            Le => Value::Bool(a <= b),
            Gt => Value::Bool(a > b),
            Ge => Value::Bool(a >= b),
            _ => return Err(format!("operator {op:?} is not defined for strings")),
        });
    }
    if let (Value::Int(a), Value::Int(b)) = (x, y) {
        let (a, b) = (*a, *b);
        match op {
            Add | ElemAdd => return Ok(Value::Int(a.wrapping_add(b))),
            Sub | ElemSub => return Ok(Value::Int(a.wrapping_sub(b))),
            Mul | ElemMul => return Ok(Value::Int(a.wrapping_mul(b))),
            _ => {}
        }
    }
    if matches!(op, And | Or) {
        let (a, b) = (x.as_bool()?, y.as_bool()?);
        return Ok(Value::Bool(if op == And { a && b } else { a || b }));
    }
    Ok(real_op(op, x.as_f64()?, y.as_f64()?))
}

/// A binary operator on two Reals: the common case of function bodies, without the
/// dispatch on value kinds and array shapes of [`binop`] (and the end of [`scalar_op`]).
fn real_op(op: BinaryOp, a: f64, b: f64) -> Value {
    use BinaryOp::*;
    match op {
        Add | ElemAdd => Value::Real(a + b),
        Sub | ElemSub => Value::Real(a - b),
        Mul | ElemMul => Value::Real(a * b),
        Div | ElemDiv => Value::Real(a / b),
        Pow | ElemPow => Value::Real(crate::builtins::pow(a, b)),
        Lt => Value::Bool(a < b),
        Le => Value::Bool(a <= b),
        Gt => Value::Bool(a > b),
        Ge => Value::Bool(a >= b),
        Eq => Value::Bool(a == b),
        Ne => Value::Bool(a != b),
        // not reached: Boolean operators are handled before (`binop`, `scalar_op`)
        And | Or => unreachable_bool(),
    }
}

fn unreachable_bool() -> Value {
    // And/Or are handled before the numeric conversion above
    Value::Bool(false)
}

fn elementwise(op: BinaryOp, x: Value, y: Value) -> VResult<Value> {
    match (x, y) {
        (Value::Array(a), Value::Array(b)) => {
            if a.dims != b.dims {
                return Err(format!(
                    "{op:?} of arrays with sizes {:?} and {:?}",
                    a.dims, b.dims
                ));
            }
            let data = a
                .data
                .iter()
                .zip(&b.data)
                .map(|(p, q)| scalar_op(op, p, q))
                .collect::<VResult<_>>()?;
            Ok(Value::Array(ArrayVal::new(a.dims, data)))
        }
        (Value::Array(a), s) => {
            let data = a
                .data
                .iter()
                .map(|p| scalar_op(op, p, &s))
                .collect::<VResult<_>>()?;
            Ok(Value::Array(ArrayVal::new(a.dims, data)))
        }
        (s, Value::Array(b)) => {
            let data = b
                .data
                .iter()
                .map(|q| scalar_op(op, &s, q))
                .collect::<VResult<_>>()?;
            Ok(Value::Array(ArrayVal::new(b.dims, data)))
        }
        (x, y) => scalar_op(op, &x, &y),
    }
}

/// Binary operators with Modelica's array semantics (`*` is the matrix product).
pub fn binop(op: BinaryOp, x: Value, y: Value) -> VResult<Value> {
    use BinaryOp::*;
    if op == Mul && x.is_array() && y.is_array() {
        return matmul(&x, &y);
    }
    if matches!(op, Add | Sub) && (x.is_array() != y.is_array()) {
        return Err(format!("{op:?} of an array and a scalar (use .{op:?})"));
    }
    elementwise(op, x, y)
}

fn dot(a: &[Value], b: &[Value]) -> VResult<Value> {
    let mut acc = Value::Int(0);
    for (p, q) in a.iter().zip(b) {
        acc = scalar_op(BinaryOp::Add, &acc, &scalar_op(BinaryOp::Mul, p, q)?)?;
    }
    Ok(acc)
}

fn matmul(x: &Value, y: &Value) -> VResult<Value> {
    let (a, b) = (x.as_array()?, y.as_array()?);
    match (a.dims.len(), b.dims.len()) {
        (1, 1) if a.dims == b.dims => dot(&a.data, &b.data),
        (2, 1) if a.dims[1] == b.dims[0] => {
            let (r, c) = (a.dims[0], a.dims[1]);
            let data = (0..r)
                .map(|i| dot(&a.data[i * c..(i + 1) * c], &b.data))
                .collect::<VResult<_>>()?;
            Ok(Value::Array(ArrayVal::new(vec![r], data)))
        }
        (1, 2) if a.dims[0] == b.dims[0] => {
            let (r, c) = (b.dims[0], b.dims[1]);
            let data = (0..c)
                .map(|j| {
                    let col: Vec<Value> = (0..r).map(|i| b.data[i * c + j].clone()).collect();
                    dot(&a.data, &col)
                })
                .collect::<VResult<_>>()?;
            Ok(Value::Array(ArrayVal::new(vec![c], data)))
        }
        (2, 2) if a.dims[1] == b.dims[0] => {
            let (r, k, c) = (a.dims[0], a.dims[1], b.dims[1]);
            let mut data = Vec::with_capacity(r * c);
            for i in 0..r {
                for j in 0..c {
                    let col: Vec<Value> = (0..k).map(|l| b.data[l * c + j].clone()).collect();
                    data.push(dot(&a.data[i * k..(i + 1) * k], &col)?);
                }
            }
            Ok(Value::Array(ArrayVal::new(vec![r, c], data)))
        }
        _ => Err(format!(
            "cannot multiply arrays of sizes {:?} and {:?}",
            a.dims, b.dims
        )),
    }
}
