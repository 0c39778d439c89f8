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
//! The classification is conservative: `when` blocks and algorithm sections always run, and
//! an algorithm's outputs count as varying.

use moss_symbolic::program::{Block, CausalProgram, PExpr, VarKind};

/// For each block of `p.blocks`: true when it only needs to run in event mode.
pub fn event_only_blocks(p: &CausalProgram) -> Vec<bool> {
    let mut varying: Vec<bool> = p
        .vars
        .iter()
        .map(|v| matches!(v.kind, VarKind::State | VarKind::Input))
        .collect();
    p.blocks.iter().map(|b| classify(b, &mut varying)).collect()
}

fn classify(b: &Block, varying: &mut [bool]) -> bool {
    let event_only = match b {
        // `when` bodies do not run between events: what they assign stays constant
        Block::When { .. } => return false,
        Block::Algorithm { .. } => false,
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
