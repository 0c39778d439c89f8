//! Counts for `moss check`: scalar equations, unknowns, states (variables under `der`),
//! parameters and discrete variables.

use crate::flat::{Causality, Equation, Expr, FlatModel, Statement, Variability};
use std::collections::BTreeSet;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Scalar equations (including those of connections, bindings and algorithms).
    pub equations: usize,
    /// Unknowns: continuous and discrete variables that are not top-level inputs.
    pub variables: usize,
    pub states: usize,
    pub parameters: usize,
    pub discrete: usize,
    pub inputs: usize,
}

fn count_eq(e: &Equation) -> usize {
    match e {
        Equation::Equal { lhs, .. } => match lhs {
            Expr::Tuple(items) => items.iter().flatten().map(expr_size).sum(),
            other => expr_size(other),
        },
        Equation::If {
            branches, else_, ..
        } => match branches.first() {
            Some((_, b)) => b.iter().map(count_eq).sum(),
            None => else_.iter().map(count_eq).sum(),
        },
        Equation::When { branches, .. } => branches
            .first()
            .map(|(_, b)| b.iter().map(count_eq).sum())
            .unwrap_or(0),
        _ => 0,
    }
}

fn expr_size(e: &Expr) -> usize {
    match e {
        Expr::Array(items) => items.iter().map(expr_size).sum(),
        _ => 1,
    }
}

fn assigned(s: &Statement, out: &mut BTreeSet<String>) {
    match s {
        Statement::Assign { target, .. } => collect_vars(target, out),
        Statement::TupleAssign { targets, .. } => {
            targets.iter().flatten().for_each(|t| collect_vars(t, out))
        }
        Statement::If {
            branches, else_, ..
        } => {
            branches
                .iter()
                .flat_map(|(_, b)| b)
                .for_each(|x| assigned(x, out));
            else_.iter().for_each(|x| assigned(x, out));
        }
        Statement::For { body, .. } | Statement::While { body, .. } => {
            body.iter().for_each(|x| assigned(x, out))
        }
        Statement::When { branches, .. } => branches
            .iter()
            .flat_map(|(_, b)| b)
            .for_each(|x| assigned(x, out)),
        _ => {}
    }
}

fn collect_vars(e: &Expr, out: &mut BTreeSet<String>) {
    crate::walk::visit(e, &mut |x| {
        if let Expr::Var { name, .. } = x {
            out.insert(name.clone());
        }
    });
}

/// Names of variables that appear under `der(...)`.
pub fn state_names(m: &FlatModel) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut f = |e: &Expr| {
        crate::walk::visit(e, &mut |x| {
            if let Expr::Call { func, args } = x {
                if func == "der" {
                    if let Some(Expr::Var { name, .. }) = args.first() {
                        out.insert(name.clone());
                    }
                }
            }
        })
    };
    for eq in &m.equations {
        crate::walk::equation_exprs(eq, &mut f);
    }
    out
}

pub fn stats(m: &FlatModel) -> Stats {
    let mut s = Stats {
        equations: m.equations.iter().map(count_eq).sum(),
        ..Stats::default()
    };
    for a in &m.algorithms {
        let mut set = BTreeSet::new();
        a.statements.iter().for_each(|x| assigned(x, &mut set));
        s.equations += set.len();
    }
    for v in &m.variables {
        match v.variability {
            Variability::Constant | Variability::Parameter => s.parameters += 1,
            Variability::Discrete | Variability::Continuous => {
                if v.causality == Causality::Input {
                    s.inputs += 1;
                } else {
                    s.variables += 1;
                    if v.variability == Variability::Discrete {
                        s.discrete += 1;
                    }
                }
            }
        }
    }
    s.states = state_names(m).len();
    s
}
