//! Splitting `when` equations into one equation per assigned variable.
//!
//! A `when` clause is kept as one unit through sorting: its body runs once when it fires.
//! That unit can close a cycle that its equations taken one by one do not: the MSL's
//! Preisach hysteresis assigns `bSavI` and `bI = if asc then bSav[1] else aSav[1]` in one
//! clause, while `bSav` is assigned from `bSavI` in another, so the two clauses depend on
//! each other although no variable depends on itself. Each equation of a `when` clause is
//! conditional on its own (spec 8.3.5: `v = expr` inside `when c` means `v = if edge(c)
//! then expr else pre(v)`), so splitting the clause into one clause per variable, with the
//! same branches and conditions, keeps the meaning and lets sorting order the equations
//! individually. Only done when sorting found a `when` clause inside a loop: the units stay
//! whole otherwise (fewer condition evaluations, the usual case).

use crate::ir::VarIx;
use crate::model::{EqBody, Model, WhenBranch, WhenItem};
use rustc_hash::FxHashSet as HashSet;

/// Split every `when` equation of `m.eqs` that assigns several variables: the first part
/// replaces it (indices of other equations stay valid), the others are appended. Items that
/// assign no single variable (reinit, assert, terminate, multi-output calls) stay together
/// in one part. Whether anything was split.
pub fn split_when_equations(m: &mut Model) -> bool {
    let mut split_any = false;
    for i in 0..m.eqs.len() {
        let EqBody::When(branches) = &m.eqs[i].body else {
            continue;
        };
        let mut parts = split_branches(branches).into_iter();
        let Some(first) = parts.next() else {
            continue;
        };
        split_any = true;
        let template = m.eqs[i].clone();
        m.eqs[i].body = EqBody::When(first);
        for part in parts {
            let mut eq = template.clone();
            eq.body = EqBody::When(part);
            m.eqs.push(eq);
        }
    }
    split_any
}

/// The branches of one `when` equation split by assigned variable (each part keeps every
/// branch, so the elsewhen priorities stay), or nothing when there is one part only.
fn split_branches(branches: &[WhenBranch]) -> Vec<Vec<WhenBranch>> {
    let mut keys: Vec<Option<VarIx>> = Vec::new();
    let mut seen = HashSet::default();
    for item in branches.iter().flat_map(|b| &b.items) {
        let k = key(item);
        if seen.insert(k) {
            keys.push(k);
        }
    }
    if keys.len() < 2 {
        return Vec::new();
    }
    keys.iter()
        .map(|&k| {
            branches
                .iter()
                .map(|b| WhenBranch {
                    conds: b.conds.clone(),
                    slots: b.slots.clone(),
                    initial: b.initial,
                    items: b.items.iter().filter(|it| key(it) == k).cloned().collect(),
                })
                .collect()
        })
        .collect()
}

/// The variable an item assigns, None for the items kept together.
fn key(item: &WhenItem) -> Option<VarIx> {
    match item {
        WhenItem::Assign { var, .. } => Some(*var),
        _ => None,
    }
}
