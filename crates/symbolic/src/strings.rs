//! String parameters and constants leave the numeric program.
//!
//! The causal program computes `f64` slots; a String has no place there. String parameters
//! are used in messages, file names and structural choices (`if C1 == "D" then 1 else 3`,
//! with `C1 = substring(VectorGroup, 1, 1)`). Their bindings are evaluated here, at
//! translation time: each reference is replaced by its value, string operations on literals
//! fold in the expression arena ([`crate::ir::Arena::add`], `rel`, `call`), and the variables
//! whose value is a literal are removed. References inside algorithm sections (by name) are
//! replaced by the literal as well. Strings whose value cannot be known before simulation
//! (bound to a function result) are left as they were.

use crate::ir::{ExprId, Node, VarIx};
use crate::model::{EqBody, Model, VKind};
use crate::program::ValueType;
use moss_frontend::flat::{Expr, Statement};
use moss_frontend::walk;
use rustc_hash::FxHashMap as HashMap;

/// Fold String parameters and constants into their uses; returns how many were removed.
pub fn fold_string_parameters(m: &mut Model) -> usize {
    let values = string_values(m);
    if values.is_empty() {
        return 0;
    }
    m.substitute_vars(&values);
    let literal: HashMap<String, String> = values
        .iter()
        .filter_map(|(&v, &e)| {
            let text = m.arena.as_str(e)?.to_string();
            Some((m.vars[v as usize].name.clone(), text))
        })
        .collect();
    for alg in &mut m.algorithms {
        for s in alg.iter_mut() {
            replace_in_statement(s, &literal);
        }
    }
    let mut removed = 0;
    for (&v, &e) in &values {
        if m.arena.as_str(e).is_some() {
            m.vars[v as usize].eliminated = true;
            removed += 1;
        }
    }
    drop_eliminated_algorithm_inputs(m);
    removed
}

fn is_string_parameter(m: &Model, v: usize) -> bool {
    let sv = &m.vars[v];
    sv.ty == ValueType::String
        && matches!(sv.kind, VKind::Parameter | VKind::Constant)
        && !sv.eliminated
        && sv.fixed != Some(false)
}

/// Value of every String parameter: its binding (else its start value) with the other
/// String parameters substituted, folded as far as literals allow.
fn string_values(m: &mut Model) -> HashMap<VarIx, ExprId> {
    let mut raw: HashMap<VarIx, ExprId> = HashMap::default();
    for v in 0..m.vars.len() {
        if !is_string_parameter(m, v) {
            continue;
        }
        let sv = &m.vars[v];
        if let Some(e) = sv.binding.or(sv.start) {
            raw.insert(v as VarIx, e);
        }
    }
    // Each round resolves one more level of parameters bound to parameters; the depth of such
    // chains is small, and a cycle simply stays unresolved.
    let mut values = raw.clone();
    for _ in 0..16 {
        let mut changed = false;
        let keys: Vec<VarIx> = values.keys().copied().collect();
        for v in keys {
            let e = values[&v];
            let mut memo = HashMap::default();
            let current = values.clone();
            let new = m.arena.substitute(
                e,
                &mut |_, n| match n {
                    Node::Var(x) if *x != v => current.get(x).copied(),
                    _ => None,
                },
                false,
                &mut memo,
            );
            if new != e {
                values.insert(v, new);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    values
}

/// Algorithm sections name variables: a String parameter with a literal value becomes that
/// literal.
fn replace_in_statement(s: &mut Statement, literal: &HashMap<String, String>) {
    walk::statement_exprs_mut(s, &mut |e| replace_in_expr(e, literal));
}

fn replace_in_expr(e: &mut Expr, literal: &HashMap<String, String>) {
    if let Expr::Var { name, subscripts } = e {
        if subscripts.is_empty() {
            if let Some(text) = literal.get(name.as_str()) {
                *e = Expr::String(text.clone());
                return;
            }
        }
    }
    walk::exprs_mut(e, &mut |x| replace_in_expr(x, literal));
}

fn drop_eliminated_algorithm_inputs(m: &mut Model) {
    let Model {
        vars,
        eqs,
        init_eqs,
        ..
    } = m;
    for eq in eqs.iter_mut().chain(init_eqs.iter_mut()) {
        if let EqBody::Algorithm { inputs, .. } = &mut eq.body {
            inputs.retain(|&v| !vars[v as usize].eliminated);
        }
    }
}
