//! Algorithm sections of a model as functions, so that the ODE Jacobian can differentiate
//! them.
//!
//! The tangent program (`jacobian.rs`) differentiates the simulation blocks forward. An
//! algorithm section is a block of statements, not of expressions, and a model with one
//! that computes continuous variables from the states had no symbolic Jacobian (Spice3's
//! semiconductor resistor computes its current in one: `Graetz`). The statements are the
//! body of a function of the variables the section reads, returning those it assigns,
//! which start from their start values as the section's do (spec 11.1.2). Named
//! `$algorithm<k>` (`$` cannot appear in a Modelica name), the function goes to the
//! generator of derivative functions (`autodiff`) with the library's functions; the
//! section's tangent is then a call unit of `$algorithm<k>.$der`, like any call with
//! several outputs.
//!
//! Only a section that a function can be is one: no `when`, `reinit`, `terminate` or call
//! statements, no `time` and no operators on the model's time (`pre`, `der`, `sample`,
//! ...), every variable by its scalar name. Why another one is not is kept, and the
//! Jacobian report gives it.

use crate::ir::VarIx;
use crate::model::{EqBody, Model};
use crate::program::ValueType;
use moss_frontend::flat::{Expr, Function, FunctionBody, FunctionVar, ScalarType, Statement};
use moss_frontend::walk;
use rustc_hash::FxHashSet as HashSet;

/// Operators whose value depends on the model's time or events, which a function has no
/// access to.
const TIME_OPERATORS: &[&str] = &[
    "pre",
    "edge",
    "change",
    "der",
    "initial",
    "terminal",
    "sample",
    "delay",
    "spatialDistribution",
    "cardinality",
    "hold",
    "previous",
    "interval",
    "firstTick",
];

/// The name of the function standing for algorithm section `index` of `Model::algorithms`.
pub fn function_name(index: usize) -> String {
    format!("$algorithm{index}")
}

/// The algorithm sections among the simulation's equations as functions, and for the
/// others the reason (by the name the function would have had).
pub fn algorithm_functions(m: &Model) -> (Vec<Function>, Vec<(String, String)>) {
    let mut functions = Vec::new();
    let mut reasons = Vec::new();
    for eq in &m.eqs {
        let EqBody::Algorithm {
            index,
            outputs,
            inputs,
        } = &eq.body
        else {
            continue;
        };
        let name = function_name(*index);
        match as_function(m, &name, *index, inputs, outputs) {
            Ok(mut f) => {
                f.origin = eq.origin.clone();
                functions.push(f);
            }
            Err(why) => reasons.push((name, why)),
        }
    }
    (functions, reasons)
}

fn as_function(
    m: &Model,
    name: &str,
    index: usize,
    inputs: &[VarIx],
    outputs: &[VarIx],
) -> Result<Function, String> {
    let stmts = &m.algorithms[index];
    let mut declared: HashSet<&str> = HashSet::default();
    let mut function_inputs = Vec::with_capacity(inputs.len());
    for &v in inputs {
        let var = &m.vars[v as usize];
        declared.insert(&var.name);
        function_inputs.push(FunctionVar {
            name: var.name.clone(),
            ty: scalar_type(var.ty, &var.name)?,
            dims: Vec::new(),
            default: None,
        });
    }
    let mut function_outputs = Vec::with_capacity(outputs.len());
    for &v in outputs {
        let var = &m.vars[v as usize];
        declared.insert(&var.name);
        let start = var.start.and_then(|s| m.arena.as_const(s)).unwrap_or(0.0);
        function_outputs.push(FunctionVar {
            name: var.name.clone(),
            ty: scalar_type(var.ty, &var.name)?,
            dims: Vec::new(),
            default: Some(start_value(var.ty, start)),
        });
    }
    let mut iterators = HashSet::default();
    if let Some(why) = unsupported(stmts, &mut iterators) {
        return Err(why);
    }
    if let Some(unknown) = undeclared_name(stmts, &declared, &iterators) {
        return Err(format!(
            "it reads `{unknown}`, which is no variable of the model"
        ));
    }
    Ok(Function {
        name: name.to_string(),
        inputs: function_inputs,
        outputs: function_outputs,
        locals: Vec::new(),
        body: FunctionBody::Algorithm(stmts.clone()),
        derivatives: Vec::new(),
        inverses: Vec::new(),
        inline: false,
        smooth_order: None,
        is_impure: false,
        origin: Default::default(),
    })
}

fn scalar_type(ty: ValueType, name: &str) -> Result<ScalarType, String> {
    match ty {
        ValueType::Real => Ok(ScalarType::Real),
        ValueType::Integer => Ok(ScalarType::Integer),
        ValueType::Boolean => Ok(ScalarType::Boolean),
        ValueType::Enumeration | ValueType::String => Err(format!(
            "it uses `{name}`, of an enumeration or String type"
        )),
    }
}

/// The start value as a literal of the variable's type.
fn start_value(ty: ValueType, start: f64) -> Expr {
    match ty {
        ValueType::Integer => Expr::Integer(start as i64),
        ValueType::Boolean => Expr::Boolean(start != 0.0),
        _ => Expr::Real(start),
    }
}

/// What in `stmts` a function cannot do, if anything; collects the `for` iterators.
fn unsupported<'s>(stmts: &'s [Statement], iterators: &mut HashSet<&'s str>) -> Option<String> {
    let why = unsupported_statement(stmts, iterators)
        .or_else(|| stmts.iter().find_map(unsupported_expr))?;
    Some(format!("it has {why}"))
}

/// A statement a function cannot have.
fn unsupported_statement<'s>(
    stmts: &'s [Statement],
    iterators: &mut HashSet<&'s str>,
) -> Option<String> {
    stmts.iter().find_map(|s| match s {
        Statement::When { .. } => Some("a `when` statement".to_string()),
        Statement::Reinit { .. } => Some("`reinit`".to_string()),
        Statement::Terminate { .. } => Some("`terminate`".to_string()),
        Statement::Call { func, .. } => Some(format!("a call statement of `{func}`")),
        Statement::If {
            branches, else_, ..
        } => branches
            .iter()
            .find_map(|(_, body)| unsupported_statement(body, iterators))
            .or_else(|| unsupported_statement(else_, iterators)),
        Statement::For { var, body, .. } => {
            iterators.insert(var);
            unsupported_statement(body, iterators)
        }
        Statement::While { body, .. } => unsupported_statement(body, iterators),
        _ => None,
    })
}

/// `time`, an operator on the model's time, or a subscripted variable anywhere in `s`.
fn unsupported_expr(s: &Statement) -> Option<String> {
    let mut why = None;
    walk::statement_exprs(s, &mut |e| {
        walk::visit(e, &mut |x| {
            if why.is_some() {
                return;
            }
            why = match x {
                Expr::Time => Some("`time`".to_string()),
                Expr::Call { func, .. } if TIME_OPERATORS.contains(&func.as_str()) => {
                    Some(format!("`{func}`"))
                }
                Expr::Var { name, subscripts } if !subscripts.is_empty() => {
                    Some(format!("the subscripted variable `{name}[...]`"))
                }
                _ => None,
            };
        });
    });
    why
}

/// A variable name in `stmts` that is neither declared nor a `for` iterator.
fn undeclared_name(
    stmts: &[Statement],
    declared: &HashSet<&str>,
    iterators: &HashSet<&str>,
) -> Option<String> {
    let mut unknown = None;
    for s in stmts {
        walk::statement_exprs(s, &mut |e| {
            walk::visit(e, &mut |x| {
                if let Expr::Var { name, .. } = x {
                    let known =
                        declared.contains(name.as_str()) || iterators.contains(name.as_str());
                    if !known && unknown.is_none() {
                        unknown = Some(name.clone());
                    }
                }
            });
        });
        if unknown.is_some() {
            break;
        }
    }
    unknown
}

/// The variables the function `f` (one of [`algorithm_functions`]) reads and writes, in its
/// order, as variables of `m`; `None` when one is no longer there.
pub fn signature(m: &Model, f: &Function) -> Option<(Vec<VarIx>, Vec<VarIx>)> {
    let find = |v: &FunctionVar| m.by_name.get(&v.name).copied();
    let inputs = f.inputs.iter().map(find).collect::<Option<Vec<_>>>()?;
    let outputs = f.outputs.iter().map(find).collect::<Option<Vec<_>>>()?;
    Some((inputs, outputs))
}
