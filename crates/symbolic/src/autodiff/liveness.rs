//! Removing the statements of a derivative function whose results nothing reads.
//!
//! Differentiation writes a derivative statement for every Real assignment, but not every
//! derivative reaches an output. Records passed to functions are the common case: in
//! `rho_ph` of IF97, `(aux.p, aux.T, ...) := waterBaseProp_ph(p, h)` feeds
//! `rho_props_ph(p, h, aux)`, whose `derivative` annotation declares `aux` a
//! `noDerivative` input. The derivative of the property call (the Gibbs function's own
//! derivative, the largest function of a water model) is then computed and never used.
//!
//! The same holds for the function's own values: a derivative function returns derivatives
//! only, so `rho := rho_props_ph(...)` is dead in `rho_ph.$der` unless a derivative reads
//! `rho`. The analysis is flow-insensitive and so conservative: a variable is live when it
//! is an output or read by a statement that stays; an assignment (functions are pure, so
//! calls have no effects) stays when it assigns a live variable; assertions, loops and
//! other statements always stay; `if`s left with nothing to do go.

use moss_frontend::flat::{Expr, Statement, Subscript};
use rustc_hash::FxHashSet as HashSet;

/// `body` without the assignments that no output depends on.
pub(super) fn without_dead_assignments(
    body: Vec<Statement>,
    outputs: impl IntoIterator<Item = String>,
) -> Vec<Statement> {
    let mut live: HashSet<String> = outputs.into_iter().collect();
    loop {
        let before = live.len();
        mark_reads_of_kept(&body, &mut live);
        if live.len() == before {
            break;
        }
    }
    prune(body, &live)
}

/// Whether statement `s` assigns only variables that are not live (it has no effect on
/// what the function returns).
fn is_dead(s: &Statement, live: &HashSet<String>) -> bool {
    let dead_target = |t: &Expr| match t {
        Expr::Var { name, .. } => !live.contains(name),
        _ => false,
    };
    match s {
        Statement::Assign { target, .. } => dead_target(target),
        Statement::TupleAssign { targets, .. } => targets.iter().flatten().all(dead_target),
        _ => false,
    }
}

fn mark_reads_of_kept(stmts: &[Statement], live: &mut HashSet<String>) {
    for s in stmts {
        if is_dead(s, live) {
            continue;
        }
        match s {
            Statement::Assign { target, value, .. } => {
                target_reads(target, live);
                expr_reads(value, live);
            }
            Statement::TupleAssign { targets, value, .. } => {
                targets.iter().flatten().for_each(|t| target_reads(t, live));
                expr_reads(value, live);
            }
            Statement::If {
                branches, else_, ..
            } => {
                for (c, body) in branches {
                    expr_reads(c, live);
                    mark_reads_of_kept(body, live);
                }
                mark_reads_of_kept(else_, live);
            }
            Statement::When { branches, .. } => {
                for (c, body) in branches {
                    expr_reads(c, live);
                    mark_reads_of_kept(body, live);
                }
            }
            Statement::For { range, body, .. } => {
                expr_reads(range, live);
                mark_reads_of_kept(body, live);
            }
            Statement::While {
                condition, body, ..
            } => {
                expr_reads(condition, live);
                mark_reads_of_kept(body, live);
            }
            Statement::Assert {
                condition, message, ..
            } => {
                expr_reads(condition, live);
                expr_reads(message, live);
            }
            Statement::Terminate { message, .. } => expr_reads(message, live),
            Statement::Call { args, .. } => args.iter().for_each(|a| expr_reads(a, live)),
            Statement::Reinit { value, .. } => expr_reads(value, live),
            Statement::Return { .. } | Statement::Break { .. } => {}
        }
    }
}

fn prune(stmts: Vec<Statement>, live: &HashSet<String>) -> Vec<Statement> {
    let mut out = Vec::with_capacity(stmts.len());
    for s in stmts {
        if is_dead(&s, live) {
            continue;
        }
        match s {
            Statement::If {
                branches,
                else_,
                origin,
            } => {
                let branches: Vec<(Expr, Vec<Statement>)> = branches
                    .into_iter()
                    .map(|(c, b)| (c, prune(b, live)))
                    .collect();
                let else_ = prune(else_, live);
                // the conditions of a function's `if` have no effects of their own
                if branches.iter().all(|(_, b)| b.is_empty()) && else_.is_empty() {
                    continue;
                }
                out.push(Statement::If {
                    branches,
                    else_,
                    origin,
                });
            }
            Statement::For {
                var,
                range,
                body,
                origin,
            } => out.push(Statement::For {
                var,
                range,
                body: prune(body, live),
                origin,
            }),
            Statement::While {
                condition,
                body,
                origin,
            } => out.push(Statement::While {
                condition,
                body: prune(body, live),
                origin,
            }),
            other => out.push(other),
        }
    }
    out
}

/// The variables an assignment target reads: its subscripts (an element assignment keeps
/// the other elements, so the target itself counts as read too).
fn target_reads(t: &Expr, live: &mut HashSet<String>) {
    if let Expr::Var { name, subscripts } = t {
        if !subscripts.is_empty() {
            live.insert(name.clone());
        }
        subscript_reads(subscripts, live);
    }
}

fn subscript_reads(subscripts: &[Subscript], live: &mut HashSet<String>) {
    for s in subscripts {
        if let Subscript::Index(e) = s {
            expr_reads(e, live);
        }
    }
}

fn expr_reads(e: &Expr, live: &mut HashSet<String>) {
    moss_frontend::walk::visit(e, &mut |x| {
        if let Expr::Var { name, .. } = x {
            if !live.contains(name) {
                live.insert(name.clone());
            }
        }
    });
}
