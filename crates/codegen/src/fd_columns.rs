//! Column groups for finite-difference Jacobians of torn nonlinear systems.
//!
//! A torn system without a symbolic Jacobian (too many iteration variables, or calls
//! without derivatives) is differentiated numerically: one residual evaluation per
//! perturbed column. Its Jacobian is usually sparse — the pressures and temperatures of a
//! discretized pipe affect only their neighbours' residuals — and columns that share no
//! row can be perturbed together (Curtis, Powell and Reid 1974): one evaluation gives all
//! of them. The pattern comes from the dependencies through the inner blocks, collected
//! once at compile time; the groups from a greedy colouring of the columns. A 100-unknown
//! steady-state initialization of two 20-segment pipes needs a handful of evaluations per
//! Jacobian instead of 100, each running every medium property function of the loop.

use crate::event_only::outputs_of;
use moss_symbolic::program::{Block, PExpr, VarId};
use std::collections::HashMap;

/// Which residual rows each column affects, and the columns grouped so that no two in a
/// group share a row.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnGroups {
    /// `col_rows[c]`: the rows whose residual depends on iteration variable `c`.
    pub col_rows: Vec<Vec<u32>>,
    pub groups: Vec<Vec<u32>>,
}

/// Groups for the torn system, or `None` when grouping saves nothing (or an inner block's
/// dependencies are not known, a `when` clause).
pub fn column_groups(
    iteration_vars: &[VarId],
    inner: &[Block],
    residuals: &[PExpr],
) -> Option<ColumnGroups> {
    let n = iteration_vars.len();
    let words = n.div_ceil(64);
    let mut deps: HashMap<VarId, Vec<u64>> = HashMap::new();
    for (c, &v) in iteration_vars.iter().enumerate() {
        let mut bits = vec![0u64; words];
        bits[c / 64] |= 1 << (c % 64);
        deps.insert(v, bits);
    }
    for b in inner {
        block_dependencies(b, &mut deps, words)?;
    }
    let mut col_rows: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (r, e) in residuals.iter().enumerate() {
        let mut bits = vec![0u64; words];
        expr_dependencies(e, &deps, &mut bits);
        for (c, rows) in col_rows.iter_mut().enumerate() {
            if bits[c / 64] >> (c % 64) & 1 == 1 {
                rows.push(r as u32);
            }
        }
    }
    let groups = colour_columns(&col_rows, residuals.len());
    (groups.len() < n).then_some(ColumnGroups { col_rows, groups })
}

/// Greedy colouring: each column takes the first group none of whose columns shares a row
/// with it.
fn colour_columns(col_rows: &[Vec<u32>], n_rows: usize) -> Vec<Vec<u32>> {
    let mut groups: Vec<Vec<u32>> = Vec::new();
    // rows already covered by each group
    let mut covered: Vec<Vec<bool>> = Vec::new();
    for (c, rows) in col_rows.iter().enumerate() {
        let free = covered
            .iter()
            .position(|cov| rows.iter().all(|&r| !cov[r as usize]));
        let g = match free {
            Some(g) => g,
            None => {
                groups.push(Vec::new());
                covered.push(vec![false; n_rows]);
                groups.len() - 1
            }
        };
        groups[g].push(c as u32);
        for &r in rows {
            covered[g][r as usize] = true;
        }
    }
    groups
}

/// Add to `deps` the iteration variables each variable block `b` assigns depends on.
fn block_dependencies(b: &Block, deps: &mut HashMap<VarId, Vec<u64>>, words: usize) -> Option<()> {
    let mut reads = vec![0u64; words];
    let outputs: Vec<VarId> = match b {
        Block::Assign { var, expr } => {
            expr_dependencies(expr, deps, &mut reads);
            vec![*var]
        }
        Block::SolveScalar {
            var,
            residual,
            derivative,
            ..
        } => {
            expr_dependencies(residual, deps, &mut reads);
            if let Some(d) = derivative {
                expr_dependencies(d, deps, &mut reads);
            }
            vec![*var]
        }
        Block::Linear { vars, matrix, rhs } => {
            for (_, _, a) in matrix {
                expr_dependencies(a, deps, &mut reads);
            }
            for e in rhs {
                expr_dependencies(e, deps, &mut reads);
            }
            vars.clone()
        }
        Block::Nonlinear {
            iteration_vars,
            inner,
            residuals,
            ..
        } => {
            // the nested loop's unknowns depend on whatever any part of it reads
            let mut local = deps.clone();
            for b in inner {
                block_dependencies(b, &mut local, words)?;
            }
            for e in residuals {
                expr_dependencies(e, &local, &mut reads);
            }
            for b in inner {
                let mut outs = Vec::new();
                outputs_of(b, &mut outs);
                for v in outs {
                    if let Some(bits) = local.get(&v) {
                        or_into(&mut reads, bits);
                    }
                }
            }
            let mut outs = iteration_vars.clone();
            for b in inner {
                outputs_of(b, &mut outs);
            }
            outs
        }
        Block::CallOutputs { outputs, args, .. } => {
            for e in args {
                expr_dependencies(e, deps, &mut reads);
            }
            outputs.iter().flatten().copied().collect()
        }
        Block::Algorithm {
            inputs, outputs, ..
        } => {
            for v in inputs {
                if let Some(bits) = deps.get(v) {
                    or_into(&mut reads, bits);
                }
            }
            outputs.clone()
        }
        Block::Assert { .. } | Block::Terminate { .. } | Block::Reinit { .. } => Vec::new(),
        Block::When { .. } => return None,
    };
    for v in outputs {
        let entry = deps.entry(v).or_insert_with(|| vec![0u64; words]);
        or_into(entry, &reads);
    }
    Some(())
}

fn or_into(into: &mut [u64], bits: &[u64]) {
    into.iter_mut().zip(bits).for_each(|(a, b)| *a |= b);
}

/// Add the dependencies of every variable `e` reads (`pre` values are fixed during the
/// iteration).
fn expr_dependencies(e: &PExpr, deps: &HashMap<VarId, Vec<u64>>, out: &mut [u64]) {
    match e {
        PExpr::Var(v) => {
            if let Some(bits) = deps.get(v) {
                or_into(out, bits);
            }
        }
        PExpr::Time
        | PExpr::Initial
        | PExpr::Terminal
        | PExpr::Sample(_)
        | PExpr::Const(_)
        | PExpr::Str(_)
        | PExpr::Pre(_) => {}
        PExpr::Neg(a) | PExpr::Not(a) => expr_dependencies(a, deps, out),
        PExpr::Arith(_, a, b) | PExpr::And(a, b) | PExpr::Or(a, b) => {
            expr_dependencies(a, deps, out);
            expr_dependencies(b, deps, out);
        }
        PExpr::Rel { lhs, rhs, .. } => {
            expr_dependencies(lhs, deps, out);
            expr_dependencies(rhs, deps, out);
        }
        PExpr::If(c, a, b) => {
            expr_dependencies(c, deps, out);
            expr_dependencies(a, deps, out);
            expr_dependencies(b, deps, out);
        }
        PExpr::Call { args, .. } => args.iter().for_each(|a| expr_dependencies(a, deps, out)),
        PExpr::Array(items) => items.iter().for_each(|a| expr_dependencies(a, deps, out)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use moss_symbolic::program::ArithOp;

    fn var(v: VarId) -> PExpr {
        PExpr::Var(v)
    }

    fn add(a: PExpr, b: PExpr) -> PExpr {
        PExpr::Arith(ArithOp::Add, Box::new(a), Box::new(b))
    }

    /// A chain of 10 unknowns (iteration variables 0..10), each residual reading its two
    /// neighbours through inner assignments (`w_k := x_k + x_{k+1}`): three evaluations
    /// give the whole tridiagonal Jacobian.
    #[test]
    fn a_tridiagonal_pattern_needs_three_groups() {
        let n = 10u32;
        let tears: Vec<VarId> = (0..n).collect();
        // inner w_k = x_k + x_{k+1} (vars 100 + k)
        let inner: Vec<Block> = (0..n - 1)
            .map(|k| Block::Assign {
                var: 100 + k,
                expr: add(var(k), var(k + 1)),
            })
            .collect();
        // residual k reads w_{k-1} and x_k (so x_{k-1}, x_k and, through w_{k-1}, x_k)
        // and x_{k+1}
        let residuals: Vec<PExpr> = (0..n)
            .map(|k| {
                let mut e = var(k);
                if k > 0 {
                    e = add(e, var(100 + k - 1));
                }
                if k + 1 < n {
                    e = add(e, var(k + 1));
                }
                e
            })
            .collect();
        let g = column_groups(&tears, &inner, &residuals).expect("grouped");
        assert_eq!(g.groups.len(), 3, "{:?}", g.groups);
        assert_eq!(g.col_rows[0], [0, 1]);
        assert_eq!(g.col_rows[5], [4, 5, 6]);
        // no two columns of a group share a row
        for group in &g.groups {
            let mut seen = std::collections::HashSet::new();
            for &c in group {
                for &r in &g.col_rows[c as usize] {
                    assert!(seen.insert(r), "row {r} twice in group {group:?}");
                }
            }
        }
    }

    /// A dense system (every residual reads every unknown) gains nothing: no groups.
    #[test]
    fn a_dense_pattern_is_not_grouped() {
        let tears: Vec<VarId> = (0..8).collect();
        let sum = tears.iter().skip(1).fold(var(0), |e, &v| add(e, var(v)));
        let residuals = vec![sum; 8];
        assert_eq!(column_groups(&tears, &[], &residuals), None);
    }
}
