//! Blocks that need not run between events.
//!
//! In continuous mode (integration steps) discrete variables keep their values, `pre`
//! values and `sample` are fixed and event-generating relations are frozen. A block that
//! reads nothing else — only parameters, discrete variables, `pre` values and the outputs
//! of other such blocks, never time, a state, a top-level input, `sample`, `initial()` or
//! `terminal()` (true in event mode only) — therefore computes the
//! same values at every right-hand-side evaluation between two events. Those blocks run
//! in event mode and at initialization only. Clocked partitions are of this kind (their
//! equations read only the values sampled at their ticks, see `moss_symbolic::clocks`), so
//! a fast clock costs nothing between its ticks; so are the Boolean networks of digital
//! circuits and state graphs.
//!
//! The classification is conservative: `when` blocks always run. An algorithm section runs
//! between events unless it is made of `when` statements only, besides asserts (and `if`s
//! around them) that read no varying variable and not `time`: in continuous mode its `when`
//! statements do not fire, so its outputs keep the values the last event gave them (the
//! MSL's `TimeTable`, whose interpolation coefficients change at its time events only).
//! Every other algorithm's outputs count as varying.

use moss_frontend::flat::{Expr, Statement};
use moss_symbolic::program::{Block, CausalProgram, PExpr, VarKind};

/// For each block of `p.blocks`: true when it only needs to run in event mode.
pub fn event_only_blocks(p: &CausalProgram) -> Vec<bool> {
    let mut varying: Vec<bool> = p
        .vars
        .iter()
        .map(|v| matches!(v.kind, VarKind::State | VarKind::Input))
        .collect();
    p.blocks
        .iter()
        .map(|b| classify(p, b, &mut varying))
        .collect()
}

fn classify(p: &CausalProgram, b: &Block, varying: &mut [bool]) -> bool {
    let event_only = match b {
        // `when` bodies do not run between events: what they assign stays constant
        Block::When { .. } => return false,
        Block::Algorithm {
            statements, inputs, ..
        } => algorithm_fires_at_events_only(p, statements, inputs, varying),
        _ => !reads_varying(b, varying),
    };
    if !event_only {
        let mut outputs = Vec::new();
        outputs_of(b, &mut outputs);
        for v in outputs {
            if let Some(slot) = varying.get_mut(v as usize) {
                *slot = true;
            }
        }
    }
    event_only
}

/// An algorithm whose top-level statements are `when` statements, and asserts or `if`s of
/// asserts that read neither `time` nor a varying input: between events it assigns nothing.
fn algorithm_fires_at_events_only(
    p: &CausalProgram,
    statements: &[Statement],
    inputs: &[u32],
    varying: &[bool],
) -> bool {
    let mut read = Vec::new();
    let mut has_when = false;
    for s in statements {
        match s {
            Statement::When { .. } => has_when = true,
            other => {
                if !checks_only(other, &mut read) {
                    return false;
                }
            }
        }
    }
    // A varying input read outside the `when` statements (by name, or as an element of an
    // array read whole).
    let varying_read = inputs.iter().any(|&v| {
        varying.get(v as usize).copied().unwrap_or(true)
            && p.vars.get(v as usize).is_some_and(|var| {
                read.iter().any(|r: &&str| {
                    var.name == *r
                        || var
                            .name
                            .strip_prefix(*r)
                            .is_some_and(|rest| rest.starts_with('[') || rest.starts_with('.'))
                })
            })
    });
    has_when && !varying_read
}

/// Whether `s` only checks (asserts, possibly inside `if`s) without `time`; collects the
/// names it reads.
fn checks_only<'a>(s: &'a Statement, read: &mut Vec<&'a str>) -> bool {
    match s {
        Statement::Assert {
            condition, message, ..
        } => names_read(condition, read) && names_read(message, read),
        Statement::If {
            branches, else_, ..
        } => {
            branches
                .iter()
                .all(|(c, body)| names_read(c, read) && body.iter().all(|b| checks_only(b, read)))
                && else_.iter().all(|b| checks_only(b, read))
        }
        _ => false,
    }
}

/// Collects the variable names `e` reads; false when it reads `time` or calls an event
/// operator (`initial()`, `sample`, `pre`, `delay`, ...), whose value differs between
/// events and at them.
fn names_read<'a>(e: &'a Expr, read: &mut Vec<&'a str>) -> bool {
    fn all<'a>(es: impl IntoIterator<Item = &'a Expr>, read: &mut Vec<&'a str>) -> bool {
        es.into_iter().all(|x| names_read(x, read))
    }
    match e {
        Expr::Real(_)
        | Expr::Integer(_)
        | Expr::Boolean(_)
        | Expr::String(_)
        | Expr::Enum { .. } => true,
        Expr::Var { name, subscripts } => {
            read.push(name);
            subscripts.iter().all(|s| match s {
                moss_frontend::flat::Subscript::Index(x) => names_read(x, read),
                moss_frontend::flat::Subscript::All => true,
            })
        }
        Expr::Time => false,
        Expr::Unary { arg, .. } => names_read(arg, read),
        Expr::Binary { lhs, rhs, .. } => names_read(lhs, read) && names_read(rhs, read),
        Expr::Call { func, args } => {
            const EVENT_OPERATORS: &[&str] = &[
                "pre", "edge", "change", "initial", "terminal", "sample", "delay", "der",
            ];
            !EVENT_OPERATORS.contains(&func.as_str()) && all(args, read)
        }
        Expr::If { branches, else_ } => {
            branches
                .iter()
                .all(|(c, v)| names_read(c, read) && names_read(v, read))
                && names_read(else_, read)
        }
        Expr::Array(xs) => all(xs, read),
        Expr::Range { start, step, stop } => {
            names_read(start, read)
                && step.as_deref().is_none_or(|x| names_read(x, read))
                && names_read(stop, read)
        }
        Expr::Tuple(xs) => all(xs.iter().flatten(), read),
        Expr::CallOutput { call, .. } => names_read(call, read),
    }
}

fn reads_varying(b: &Block, varying: &[bool]) -> bool {
    let e = |x: &PExpr| expr_varies(x, varying);
    match b {
        Block::Assign { expr, .. } => e(expr),
        Block::SolveScalar {
            residual,
            derivative,
            ..
        } => e(residual) || derivative.as_ref().is_some_and(e),
        Block::Linear { matrix, rhs, .. } => {
            matrix.iter().any(|(_, _, a)| e(a)) || rhs.iter().any(e)
        }
        Block::Nonlinear {
            inner,
            residuals,
            jacobian,
            ..
        } => {
            inner.iter().any(|b| reads_varying(b, varying))
                || residuals.iter().any(e)
                || jacobian
                    .as_ref()
                    .is_some_and(|j| j.iter().any(|(_, _, a)| e(a)))
        }
        Block::CallOutputs { args, .. } => args.iter().any(e),
        Block::Assert {
            condition, message, ..
        } => e(condition) || e(message),
        Block::Terminate { message } => e(message),
        Block::Reinit { value, .. } => e(value),
        Block::When { .. } | Block::Algorithm { .. } => true,
    }
}

fn expr_varies(x: &PExpr, varying: &[bool]) -> bool {
    match x {
        // `sample`, `initial()` and `terminal()` are true in event mode only: what they
        // compute is not the same between events as at the end of the event
        PExpr::Time | PExpr::Initial | PExpr::Terminal | PExpr::Sample(_) => true,
        PExpr::Var(v) => varying.get(*v as usize).copied().unwrap_or(true),
        PExpr::Const(_) | PExpr::Str(_) | PExpr::Pre(_) => false,
        PExpr::Neg(a) | PExpr::Not(a) => expr_varies(a, varying),
        PExpr::Arith(_, a, b) | PExpr::And(a, b) | PExpr::Or(a, b) => {
            expr_varies(a, varying) || expr_varies(b, varying)
        }
        // frozen between events when event-generating, but the operands are counted anyway
        PExpr::Rel { lhs, rhs, .. } => expr_varies(lhs, varying) || expr_varies(rhs, varying),
        PExpr::If(c, a, b) => {
            expr_varies(c, varying) || expr_varies(a, varying) || expr_varies(b, varying)
        }
        PExpr::Call { func, args } => {
            // `delay` reads its history at `time - tau`
            func == "delay" || args.iter().any(|a| expr_varies(a, varying))
        }
        PExpr::Array(items) => items.iter().any(|a| expr_varies(a, varying)),
    }
}

/// The variables block `b` assigns (a nonlinear loop: its inner blocks' too).
pub(crate) fn outputs_of(b: &Block, out: &mut Vec<u32>) {
    match b {
        Block::Assign { var, .. } | Block::SolveScalar { var, .. } => out.push(*var),
        Block::Linear { vars, .. } => out.extend(vars),
        Block::Nonlinear {
            iteration_vars,
            inner,
            ..
        } => {
            out.extend(iteration_vars);
            for b in inner {
                outputs_of(b, out);
            }
        }
        Block::CallOutputs { outputs, .. } => out.extend(outputs.iter().flatten()),
        Block::Algorithm { outputs, .. } => out.extend(outputs),
        Block::When { branches } => {
            for br in branches {
                for b in &br.body {
                    outputs_of(b, out);
                }
            }
        }
        Block::Reinit { .. } | Block::Assert { .. } | Block::Terminate { .. } => {}
    }
}
