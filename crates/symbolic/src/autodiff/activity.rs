//! Which variables of a function vary with which of its inputs (activity analysis).
//!
//! A derivative function differentiates along every Real input, so one statement it cannot
//! differentiate (an external call: `Matrices.solve`, which calls LAPACK) costs the whole
//! function its derivative. Often that statement only reads inputs that no caller varies:
//! a pump's `quadraticFlow(V_flow, V_flow_nominal, head_nominal)` fits its parabola with
//! `Matrices.solve` from the two nominal arrays, which every call site passes as
//! parameters or literals. When the plain derivative fails, the generator therefore
//! *freezes* the inputs that the failing statement depends on: every variable that depends
//! on frozen inputs only is then constant for differentiation, and the derivative function
//! is valid wherever the frozen inputs have a zero derivative. Call sites check that
//! (`Arena::fder_zero_required`), and the derivative function asserts it, so a varying
//! frozen input gives an error or the finite-difference fallback, never a wrong
//! derivative.
//!
//! The analysis is data flow only (a condition selects a branch but has no derivative, as
//! everywhere in moss) and flow-insensitive: a variable depends on the union of what every
//! assignment to it reads, subscripts included, so it errs on the side of activity.

use moss_frontend::flat::{Expr, Function, Statement};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// For each variable of `f` (inputs, outputs, locals), the names of the inputs in
/// `tracked` its value depends on through bindings and the assignments of `body`.
pub(super) fn input_dependencies(
    f: &Function,
    body: &[Statement],
    tracked: &[&str],
) -> HashMap<String, HashSet<String>> {
    let mut deps: HashMap<String, HashSet<String>> = HashMap::default();
    for v in f.inputs.iter().chain(&f.outputs).chain(&f.locals) {
        deps.insert(v.name.clone(), HashSet::default());
    }
    for i in tracked {
        deps.entry(i.to_string()).or_default().insert(i.to_string());
    }
    let mut flows: Vec<(Vec<String>, HashSet<String>)> = Vec::new();
    for v in f.outputs.iter().chain(&f.locals) {
        if let Some(b) = &v.default {
            flows.push((vec![v.name.clone()], names_read(b)));
        }
    }
    collect_flows(body, &mut flows);
    // propagate to a fixed point (a loop may feed a variable back into itself)
    loop {
        let mut changed = false;
        for (targets, reads) in &flows {
            let incoming: HashSet<String> = reads
                .iter()
                .filter_map(|r| deps.get(r))
                .flatten()
                .cloned()
                .collect();
            for t in targets {
                let entry = deps.entry(t.clone()).or_default();
                let before = entry.len();
                entry.extend(incoming.iter().cloned());
                changed |= entry.len() != before;
            }
        }
        if !changed {
            return deps;
        }
    }
}

/// The variables that depend on no input outside `frozen` (the frozen inputs among them).
pub(super) fn inactive_under(
    deps: &HashMap<String, HashSet<String>>,
    frozen: &HashSet<String>,
) -> HashSet<String> {
    deps.iter()
        .filter(|(_, d)| d.iter().all(|i| frozen.contains(i)))
        .map(|(v, _)| v.clone())
        .collect()
}

/// Each assignment of `stmts` as (targets, names its value and target subscripts read).
fn collect_flows(stmts: &[Statement], out: &mut Vec<(Vec<String>, HashSet<String>)>) {
    for s in stmts {
        match s {
            Statement::Assign { target, value, .. } => {
                let mut reads = names_read(value);
                reads.extend(names_read(target));
                if let Expr::Var { name, .. } = target {
                    out.push((vec![name.clone()], reads));
                }
            }
            Statement::TupleAssign { targets, value, .. } => {
                let mut reads = names_read(value);
                let mut names = Vec::new();
                for t in targets.iter().flatten() {
                    reads.extend(names_read(t));
                    if let Expr::Var { name, .. } = t {
                        names.push(name.clone());
                    }
                }
                out.push((names, reads));
            }
            Statement::If {
                branches, else_, ..
            } => {
                for (_, body) in branches {
                    collect_flows(body, out);
                }
                collect_flows(else_, out);
            }
            Statement::When { branches, .. } => {
                for (_, body) in branches {
                    collect_flows(body, out);
                }
            }
            Statement::For { body, .. } | Statement::While { body, .. } => collect_flows(body, out),
            Statement::Assert { .. }
            | Statement::Terminate { .. }
            | Statement::Call { .. }
            | Statement::Reinit { .. }
            | Statement::Return { .. }
            | Statement::Break { .. } => {}
        }
    }
}

/// The variables `e` reads (a target's own name included: an element assignment keeps the
/// other elements, and a variable depending on itself changes nothing).
fn names_read(e: &Expr) -> HashSet<String> {
    let mut out = HashSet::default();
    moss_frontend::walk::visit(e, &mut |x| {
        if let Expr::Var { name, .. } = x {
            out.insert(name.clone());
        }
    });
    out
}
