//! Equations that share a sum: `a = x + y` and `b = x + y` (two ends of elements in
//! parallel: the flux through a winding and its stray path in a machine, the currents of
//! parallel branches) imply `a = b`, but each is regular on its own and the structural
//! analysis cannot see the pair's dependence. It then takes `a` and `b` as independent
//! (both as states, or both as known when solving for `x` and `y`), and the block that solves
//! the pair for `x` and `y` is singular: every step's linear system is noise.
//!
//! This pass replaces the second equation by the difference that cancels the shared part,
//! `b - a = 0`, which is equivalent (the first stays) and has fewer terms; alias elimination
//! then merges `a` and `b`. Only linear equations with constant coefficients in Real
//! variables are combined, each equation at most once per round, and only when the
//! combination has fewer terms than the equation it replaces, so the rounds terminate.
//! Candidate pairs are found through an index of the coefficient ratios of variable pairs:
//! linear in the number of equations for bounded equation length.

use crate::alias::linear_form_with_at_most;
use crate::ir::{ExprId, VarIx};
use crate::model::{EqBody, Model};
use crate::program::ValueType;
use rustc_hash::FxHashMap as HashMap;

/// Longest equation (in variables) that is combined.
const MAX_TERMS: usize = 12;

/// Equations compared per shared variable pair (a bus with many equations over the same
/// pair would otherwise make the pass quadratic).
const MAX_PER_KEY: usize = 8;

/// Rounds of combination (each replaces disjoint pairs; chains need a few).
const MAX_ROUNDS: usize = 4;

/// `sum(k_i * v_i) + c = 0`, terms sorted by variable.
#[derive(Clone, Debug)]
struct LinearEq {
    terms: Vec<(VarIx, f64)>,
    c: f64,
}

/// Replace equations that share a weighted sum of at least two variables with another
/// equation by the combination of the two that cancels it. Returns whether any changed.
pub fn expose_shared_sums(m: &mut Model) -> bool {
    let mut changed = false;
    for _ in 0..MAX_ROUNDS {
        if !one_round(m) {
            break;
        }
        changed = true;
    }
    changed
}

fn one_round(m: &mut Model) -> bool {
    let forms: Vec<Option<LinearEq>> = (0..m.eqs.len()).map(|i| combinable(m, i)).collect();
    let mut by_pair: HashMap<(VarIx, VarIx, u64), Vec<u32>> = HashMap::default();
    let mut used = vec![false; m.eqs.len()];
    let mut replacements: Vec<(usize, LinearEq)> = Vec::new();
    for (b, form) in forms.iter().enumerate() {
        let Some(fb) = form else { continue };
        let mut partner = None;
        for key in pair_keys(fb) {
            let list = by_pair.entry(key).or_default();
            if partner.is_none() && !used[b] {
                partner = list
                    .iter()
                    .copied()
                    .filter(|&a| !used[a as usize])
                    .find_map(|a| {
                        let fa = forms[a as usize].as_ref()?;
                        let combined = cancel_shared(fa, fb)?;
                        (combined.terms.len() < fb.terms.len()).then_some((a, combined))
                    });
            }
            if list.len() < MAX_PER_KEY {
                list.push(b as u32);
            }
        }
        if let Some((a, combined)) = partner {
            used[a as usize] = true;
            used[b] = true;
            replacements.push((b, combined));
        }
    }
    for (b, form) in &replacements {
        let lhs = expression_of(m, form);
        let rhs = m.arena.zero();
        m.eqs[*b].body = EqBody::Eq { lhs, rhs };
    }
    !replacements.is_empty()
}

/// The linear form of equation `i` when it may take part: a plain equation of the model (not
/// a derivative, a start value or a loop residue) linear with constant coefficients in at
/// least three Real variables.
fn combinable(m: &Model, i: usize) -> Option<LinearEq> {
    let eq = &m.eqs[i];
    if eq.diff_of.is_some() || eq.from_start || eq.loop_residue {
        return None;
    }
    let EqBody::Eq { lhs, rhs } = eq.body else {
        return None;
    };
    let (mut terms, c) = linear_form_with_at_most(m, lhs, rhs, MAX_TERMS)?;
    if terms.len() < 3
        || terms
            .iter()
            .any(|&(v, _)| m.vars[v as usize].ty != ValueType::Real)
    {
        return None;
    }
    terms.sort_unstable_by_key(|t| t.0);
    Some(LinearEq { terms, c })
}

/// One key per pair of variables of the equation: the pair and the ratio of their
/// coefficients. Two equations with a common key are proportional on at least that pair.
fn pair_keys(f: &LinearEq) -> Vec<(VarIx, VarIx, u64)> {
    let mut keys = Vec::new();
    for (i, &(p, kp)) in f.terms.iter().enumerate() {
        for &(q, kq) in &f.terms[i + 1..] {
            keys.push((p, q, (kq / kp).to_bits()));
        }
    }
    keys
}

/// `b - lambda * a` with `lambda` chosen so that the variables on which `a` and `b` are
/// proportional cancel (coefficients within rounding of zero are dropped).
fn cancel_shared(a: &LinearEq, b: &LinearEq) -> Option<LinearEq> {
    let lambda = a.terms.iter().find_map(|&(v, ka)| {
        let &(_, kb) = b.terms.iter().find(|t| t.0 == v)?;
        Some(kb / ka)
    })?;
    let mut terms: Vec<(VarIx, f64)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.terms.len() || j < b.terms.len() {
        let take_a = j == b.terms.len() || (i < a.terms.len() && a.terms[i].0 < b.terms[j].0);
        let take_b = i == a.terms.len() || (j < b.terms.len() && b.terms[j].0 < a.terms[i].0);
        if take_a {
            terms.push((a.terms[i].0, -lambda * a.terms[i].1));
            i += 1;
        } else if take_b {
            terms.push(b.terms[j]);
            j += 1;
        } else {
            let (v, kb) = b.terms[j];
            let k = kb - lambda * a.terms[i].1;
            if k.abs() > 1e-12 * kb.abs() {
                terms.push((v, k));
            }
            i += 1;
            j += 1;
        }
    }
    Some(LinearEq {
        terms,
        c: b.c - lambda * a.c,
    })
}

/// `sum(k_i * v_i) + c` as an expression.
fn expression_of(m: &mut Model, f: &LinearEq) -> ExprId {
    let a = &mut m.arena;
    let mut e = a.num(f.c);
    for &(v, k) in &f.terms {
        let x = a.var(v);
        let term = if k == 1.0 {
            x
        } else if k == -1.0 {
            a.neg(x)
        } else {
            let kk = a.num(k);
            a.mul(kk, x)
        };
        e = a.add(e, term);
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(terms: &[(VarIx, f64)], c: f64) -> LinearEq {
        LinearEq {
            terms: terms.to_vec(),
            c,
        }
    }

    #[test]
    fn a_shared_sum_cancels_to_an_alias() {
        // a - x - y = 0 and b - x - y = 0  ->  b - a = 0
        let a = form(&[(0, 1.0), (2, -1.0), (3, -1.0)], 0.0);
        let b = form(&[(1, 1.0), (2, -1.0), (3, -1.0)], 0.0);
        let c = cancel_shared(&a, &b).unwrap();
        assert_eq!(c.terms, vec![(0, -1.0), (1, 1.0)]);
        assert_eq!(pair_keys(&a)[2], pair_keys(&b)[2]);
    }

    #[test]
    fn scaled_equations_cancel_with_their_ratio() {
        // 2x + 2y - a = 1 and x + y + b = 0  ->  b + a/2 = -1/2
        let a = form(&[(0, -1.0), (2, 2.0), (3, 2.0)], -1.0);
        let b = form(&[(1, 1.0), (2, 1.0), (3, 1.0)], 0.0);
        let c = cancel_shared(&a, &b).unwrap();
        assert_eq!(c.terms, vec![(0, 0.5), (1, 1.0)]);
        assert_eq!(c.c, 0.5);
    }
}
