//! Dynamic state selection: state sets chosen at run time.
//!
//! When the dummy-derivative method (see [`crate::index`]) meets constraints whose
//! coefficients depend on the solution (the Cartesian pendulum's `x^2 + y^2 = L^2`, whose
//! derivative has the coefficients `2x` and `2y`), no fixed choice of states stays valid: the
//! constraint is solved for `x` near the bottom, for `y` near the horizontal. Following
//! Mattsson and Söderlind's dummy derivatives with dynamic pivoting (Mattsson, Olsson,
//! Söderlind, "Dynamic selection of states in Dymola", Modelica Workshop 2000) and the
//! "state set" formulation OpenModelica uses, the `g` constraints of such a level and their
//! `n` candidate derivatives become one *state set*:
//!
//! - every candidate becomes a dummy derivative (its integral an algebraic variable);
//! - `k = n - g` new states `s[j]` stand for the candidates chosen as states, selected by a
//!   discrete Integer bit mask `mask`: `s[j] = sum_i w(mask, j, i) * x[i]` and
//!   `der(s[j]) = sum_i w(mask, j, i) * der(x[i])` with `w = $stateSetWeight` (1 for the
//!   `j`-th chosen candidate, 0 otherwise). The constraints and these equations together
//!   determine every candidate from the states, whichever mask holds;
//! - a `when` clause re-chooses the mask: at initialization from the start values, and at an
//!   event located where the block of the constraint Jacobian that the constraints are solved
//!   with becomes ten times worse than the best block complete pivoting finds
//!   (`$stateSetQuality < 0.1`). At the switch the states are re-initialized from the
//!   candidates' values just before the event (`pre`), so the solution stays continuous: the
//!   candidates do not move, only which of them the integrator carries.
//!
//! The run-time functions ([`weight`], [`quality`], [`select`]) are here, beside the
//! equations that call them, and are called by the code generator's built-ins:
//!
//! - `$stateSetWeight(mask, j, i)`: 1 when candidate `i` (1-based) is the `j`-th state of
//!   `mask` (bit `i - 1` set: a state), else 0;
//! - `$stateSetQuality(mask, n, J...)`: `|det J[:, dummies(mask)]|` relative to the best
//!   block complete pivoting finds, in `[0, 1]` (1 when the Jacobian carries no information);
//!   `J` is the `g x n` constraint Jacobian, row by row;
//! - `$stateSetSelect(mask, n, J...)`: the mask complete pivoting prefers; the current mask
//!   is kept while its block is at least half as good (so near-ties never switch).

use crate::ir::{ExprId, Node, Rel, VarIx};
use crate::model::{EqBody, Model, SEq, SVar, VKind, WhenBranch, WhenItem};
use crate::program::ValueType;
use moss_frontend::flat::{Origin, StateSelect};
use rustc_hash::FxHashMap as HashMap;

/// A choice is kept at a selection while its block is at least this good: the selection
/// clause runs for every set when any set switches, and a set that is still good keeps its
/// states.
const KEEP_ABOVE: f64 = 0.5;

/// The built-ins' names.
pub const WEIGHT: &str = "$stateSetWeight";
pub const QUALITY: &str = "$stateSetQuality";
pub const SELECT: &str = "$stateSetSelect";

/// A switch happens when the current block is this much worse than the best one.
const SWITCH_BELOW: f64 = 0.1;

/// What a state set was built from, for the translation report.
#[derive(Clone, Debug)]
pub struct StateSet {
    /// The candidates' integrals (the variables that may be states).
    pub candidates: Vec<VarIx>,
    /// The number of them that are states at any time.
    pub states: usize,
    /// The constraint equations (differentiated once more than the candidates' level).
    pub constraints: Vec<u32>,
    /// The new state variables and the mask.
    pub set_states: Vec<VarIx>,
    pub mask: VarIx,
    /// `$stateSetQuality(pre(mask), n, J) < 0.1`, and what the selection clause does for
    /// this set: `mask = $stateSetSelect(...)`, then the `reinit`s of the set's states.
    switch_condition: ExprId,
    selection: Vec<WhenItem>,
}

/// The unknowns of a level that a state set's constraints reach through other equations
/// solved at the same level (a rotation matrix's entries between a constraint element and
/// the angles a free-motion joint offers as candidates), with those equations. The set's
/// Jacobian includes them, so that the choice is made on the total dependence of the
/// constraints on the candidates, not on the entries that happen to be written in the
/// constraint equations.
#[derive(Clone, Debug, Default)]
pub struct Through {
    pub eqs: Vec<u32>,
    pub vars: Vec<VarIx>,
}

/// Make the candidate derivatives `dx` of the constraints `g` one state set. `order` lists
/// the candidates from the preferred dummy to the preferred state; the last `k` of it are the
/// states until the first choice at initialization.
pub fn build_state_set(
    m: &mut Model,
    g: &[u32],
    dx: &[VarIx],
    order: &[VarIx],
    through: &Through,
) -> StateSet {
    let number = m
        .vars
        .iter()
        .filter(|v| v.name.starts_with("$stateSet") && v.name.ends_with(".mask"))
        .count()
        + 1;
    let prefix = format!("$stateSet{number}");
    let origin = m.eqs[g[0] as usize].origin.clone();
    let n = dx.len();
    let k = n - g.len();
    let x: Vec<VarIx> = dx
        .iter()
        .map(|&d| {
            // candidates are derivatives (`index.rs` offers only those); never panic
            m.vars[d as usize].der_of.unwrap_or(d)
        })
        .collect();
    let default_states: Vec<VarIx> = order[order.len() - k..].to_vec();
    let mut default_mask = 0i64;
    for (i, d) in dx.iter().enumerate() {
        if default_states.contains(d) {
            default_mask |= 1 << i;
        }
    }
    let mut rows_eqs = g.to_vec();
    rows_eqs.extend_from_slice(&through.eqs);
    let jac = constraint_jacobian(m, &rows_eqs, dx, &through.vars);
    let p = through.vars.len();
    // the first choice as initialization will make it, where the start values tell
    let at_start: Option<Vec<f64>> = jac
        .iter()
        .map(|&e| crate::zero_params::start_point_value(m, e))
        .collect();
    if let Some(values) = at_start {
        default_mask = select(default_mask, n, p, &values);
    }
    for (i, &xi) in x.iter().enumerate() {
        if default_mask & (1 << i) == 0 {
            m.start_last.push(xi);
        }
    }
    let mask = add_mask(m, &prefix, default_mask, &origin, &x);
    let mut set_states = Vec::with_capacity(k);
    let mut state_items = Vec::with_capacity(k);
    for j in 1..=k {
        let start = nth_state(&x, default_mask, j).and_then(|v| m.vars[v as usize].start);
        let s = add_set_state(m, &prefix, j, start, &origin, &x);
        let ds = m.der_var(s);
        // the equations use the mask before the event: at a switch they keep computing the
        // candidates from the old choice until the states are re-initialized for the new
        let weights: Vec<ExprId> = (1..=n).map(|i| weight_expr(m, mask, j, i, true)).collect();
        let sum_x = weighted_sum(m, &weights, &x);
        let sum_dx = weighted_sum(m, &weights, dx);
        let lhs = m.arena.var(s);
        m.eqs
            .push(SEq::new(EqBody::Eq { lhs, rhs: sum_x }, origin.clone()));
        let lhs = m.arena.var(ds);
        m.eqs
            .push(SEq::new(EqBody::Eq { lhs, rhs: sum_dx }, origin.clone()));
        let chosen: Vec<ExprId> = (1..=n).map(|i| weight_expr(m, mask, j, i, false)).collect();
        let value = weighted_sum(m, &chosen, &x);
        state_items.push(WhenItem::Reinit {
            var: s,
            expr: value,
        });
        set_states.push(s);
    }
    let (switch_condition, selection) = selection(m, mask, n, p, &jac, state_items);
    StateSet {
        candidates: x,
        states: k,
        constraints: g.to_vec(),
        set_states,
        mask,
        switch_condition,
        selection,
    }
}

/// Which variables' `fixed = true` start equations initialization should drop first when
/// they over-determine it: the candidates [`build_state_set`] recorded, and the variables a
/// plain equation `a = b` makes equal to them (`vx` of `der(x) = vx`).
pub fn start_values_to_drop_first(m: &mut Model) -> Vec<bool> {
    let mut last = vec![false; m.vars.len()];
    if m.start_last.is_empty() {
        return last;
    }
    let mut pairs: Vec<(VarIx, VarIx)> = Vec::new();
    for eq in &m.eqs {
        if let EqBody::Eq { lhs, rhs } = eq.body {
            if let (Node::Var(a), Node::Var(b)) = (m.arena.node(lhs), m.arena.node(rhs)) {
                pairs.push((*a, *b));
            }
        }
    }
    let mut stack = m.start_last.clone();
    while let Some(v) = stack.pop() {
        if std::mem::replace(&mut last[v as usize], true) {
            continue;
        }
        // the derivative of a candidate computed from the constraints is computed from
        // the differentiated constraints too
        if let Some(d) = m.vars[v as usize].der {
            stack.push(d);
        }
        for &(a, b) in &pairs {
            if a == v && !last[b as usize] {
                stack.push(b);
            } else if b == v && !last[a as usize] {
                stack.push(a);
            }
        }
    }
    last
}

/// The `j`-th candidate of `mask` (1-based), if any.
fn nth_state(x: &[VarIx], mask: i64, j: usize) -> Option<VarIx> {
    x.iter()
        .enumerate()
        .filter(|(i, _)| mask & (1 << i) != 0)
        .nth(j - 1)
        .map(|(_, &v)| v)
}

fn names(m: &Model, x: &[VarIx]) -> String {
    x.iter()
        .map(|&v| m.vars[v as usize].name.clone())
        .collect::<Vec<_>>()
        .join(", ")
}

fn add_mask(m: &mut Model, prefix: &str, start: i64, origin: &Origin, x: &[VarIx]) -> VarIx {
    let mut sv = SVar::new(
        format!("{prefix}.mask"),
        VKind::Discrete,
        ValueType::Integer,
    );
    sv.hidden = true;
    sv.protected_from_alias = true;
    sv.origin = origin.clone();
    sv.start = Some(m.arena.num(start as f64));
    sv.description = format!("which of {} are states (bit i: candidate i+1)", names(m, x));
    m.add_var(sv)
}

fn add_set_state(
    m: &mut Model,
    prefix: &str,
    j: usize,
    start: Option<ExprId>,
    origin: &Origin,
    x: &[VarIx],
) -> VarIx {
    let mut sv = SVar::new(
        format!("{prefix}.x[{j}]"),
        VKind::Continuous,
        ValueType::Real,
    );
    sv.hidden = true;
    sv.protected_from_alias = true;
    sv.origin = origin.clone();
    sv.start = start;
    sv.fixed = Some(false);
    sv.description = format!("state {j} chosen at run time among {}", names(m, x));
    m.add_var(sv)
}

fn weight_expr(m: &mut Model, mask: VarIx, j: usize, i: usize, pre: bool) -> ExprId {
    let mv = if pre {
        m.arena.intern(Node::Pre(mask))
    } else {
        m.arena.var(mask)
    };
    let jj = m.arena.num(j as f64);
    let ii = m.arena.num(i as f64);
    m.arena.call(WEIGHT, vec![mv, jj, ii])
}

/// `sum_i w[i] * v[i]`.
fn weighted_sum(m: &mut Model, w: &[ExprId], v: &[VarIx]) -> ExprId {
    let mut acc = m.arena.zero();
    for (&wi, &vi) in w.iter().zip(v) {
        let x = m.arena.var(vi);
        let t = m.arena.mul(wi, x);
        acc = m.arena.add(acc, t);
    }
    acc
}

/// `d(lhs - rhs)/d dx[i]` of every constraint, row by row, each column scaled by the
/// `stateSelect` of its candidate: the pivoting picks a column as a dummy the more readily
/// the larger it is, so `never` and `avoid` candidates are computed from the constraints and
/// `prefer` and `always` ones stay states unless their column is all that keeps the block
/// regular (spec 4.9.4: stateSelect is a preference, `always` and `never` included, where the
/// constraints leave no other choice).
fn constraint_jacobian(m: &mut Model, g: &[u32], dx: &[VarIx], y: &[VarIx]) -> Vec<ExprId> {
    let mut scale: Vec<f64> = dx
        .iter()
        .map(|&d| {
            // a generated derivative (the velocity level's `der(x)`) follows its variable
            let mut x = m.vars[d as usize].der_of.unwrap_or(d);
            while let Some(b) = m.vars[x as usize].der_of {
                x = b;
            }
            match m.vars[x as usize].state_select {
                StateSelect::Never => 1e3,
                StateSelect::Avoid => 1e1,
                StateSelect::Default => 1.0,
                StateSelect::Prefer => 1e-1,
                StateSelect::Always => 1e-3,
            }
        })
        .collect();
    // the unknowns eliminated through the other equations are not weighted
    scale.extend(std::iter::repeat_n(1.0, y.len()));
    let cols: Vec<VarIx> = dx.iter().chain(y).copied().collect();
    let mut out = Vec::with_capacity(g.len() * cols.len());
    for &e in g {
        // differentiated constraints are plain equations; anything else gives no pivots
        let EqBody::Eq { lhs, rhs } = m.eqs[e as usize].body else {
            out.extend(std::iter::repeat_n(m.arena.zero(), cols.len()));
            continue;
        };
        let r = m.arena.sub(lhs, rhs);
        for (&v, &w) in cols.iter().zip(&scale) {
            let c = m
                .arena
                .diff_var(r, v, &mut HashMap::default())
                .unwrap_or_else(|_| m.arena.zero());
            let c = if w == 1.0 {
                c
            } else {
                let w = m.arena.num(w);
                m.arena.mul(w, c)
            };
            out.push(c);
        }
    }
    out
}

/// The switch condition of one set, and its part of the selection clause.
fn selection(
    m: &mut Model,
    mask: VarIx,
    n: usize,
    p: usize,
    jac: &[ExprId],
    reinits: Vec<WhenItem>,
) -> (ExprId, Vec<WhenItem>) {
    let pre_mask = m.arena.intern(Node::Pre(mask));
    let nn = m.arena.num(n as f64);
    let pp = m.arena.num(p as f64);
    let mut live = vec![pre_mask, nn, pp];
    live.extend_from_slice(jac);
    let quality = m.arena.call(QUALITY, live);
    let limit = m.arena.num(SWITCH_BELOW);
    let worse = m.arena.rel(Rel::Lt, quality, limit, true);
    // held false during initialization, so that a choice that is bad from the start
    // switches at the event that follows it
    let init = m.arena.intern(Node::Initial);
    let after_init = m.arena.not(init);
    let worse = m.arena.and(after_init, worse);
    let mut args = vec![pre_mask, nn, pp];
    args.extend_from_slice(jac);
    let choice = m.arena.call(SELECT, args);
    let mut items = vec![WhenItem::Assign {
        var: mask,
        expr: choice,
    }];
    items.extend(reinits);
    (worse, items)
}

/// One clause chooses the states of every set: `when {initial(), q1 < 0.1, q2 < 0.1, ...}
/// then mask1 = $stateSetSelect(pre(mask1), ...); reinit(...); mask2 = ...; end when;`.
/// One clause, because sets often degrade together (the pendulum's position and velocity
/// sets have the same Jacobian): when one switches, the others are chosen again at the same
/// event from the same values before it, instead of at an event a moment later where a
/// constraint solved with a bad pivot may already have jumped to another root.
pub fn add_selection_clause(m: &mut Model, sets: &[StateSet]) {
    if sets.is_empty() {
        return;
    }
    let origin = m.eqs[sets[0].constraints[0] as usize].origin.clone();
    let conds: Vec<ExprId> = sets.iter().map(|s| s.switch_condition).collect();
    let items: Vec<WhenItem> = sets.iter().flat_map(|s| s.selection.clone()).collect();
    let mut slots = Vec::new();
    for (i, &c) in conds.iter().enumerate() {
        let mut sv = SVar::new(
            format!("$stateSets.condition{}", i + 1),
            VKind::Discrete,
            ValueType::Boolean,
        );
        sv.hidden = true;
        sv.protected_from_alias = true;
        sv.origin = origin.clone();
        sv.description = format!("condition: {}", m.text(c));
        let slot = m.add_var(sv);
        let lhs = m.arena.var(slot);
        m.eqs
            .push(SEq::new(EqBody::Eq { lhs, rhs: c }, origin.clone()));
        slots.push(slot);
    }
    m.eqs.push(SEq::new(
        EqBody::When(vec![WhenBranch {
            conds,
            slots,
            initial: false,
            items,
        }]),
        origin,
    ));
}

/// Candidate `i` (0-based) is the `j`-th (1-based) set bit of `mask`.
pub fn weight(mask: i64, j: i64, i: i64) -> f64 {
    if !(0..63).contains(&i) || mask & (1 << i) == 0 {
        return 0.0;
    }
    let below = (mask & ((1i64 << i) - 1)).count_ones() as i64;
    if below + 1 == j {
        1.0
    } else {
        0.0
    }
}

/// The constraint Jacobian over the `n` candidates: `jac` holds rows of `n + p` entries, the
/// last `p` columns for the unknowns that the constraints reach through other equations of
/// the level (see [`Through`]); those are eliminated (Gaussian elimination with partial
/// pivoting on their columns), which leaves the Schur complement: how the constraints
/// depend on the candidates once the intermediate unknowns follow. `None` when the sizes do
/// not fit or the intermediate unknowns are not determined by their equations.
fn rows(n: usize, p: usize, jac: &[f64]) -> Option<Vec<Vec<f64>>> {
    let width = n + p;
    if n == 0 || n > 62 || !jac.len().is_multiple_of(width) {
        return None;
    }
    let mut a: Vec<Vec<f64>> = jac.chunks(width).map(|r| r.to_vec()).collect();
    for c in n..width {
        let scale = a.iter().map(|r| r[c].abs()).fold(0.0, f64::max);
        let piv = (0..a.len()).max_by(|&x, &y| a[x][c].abs().total_cmp(&a[y][c].abs()))?;
        if scale == 0.0 || !scale.is_finite() {
            return None;
        }
        let pivot_row = a.swap_remove(piv);
        for row in a.iter_mut() {
            let f = row[c] / pivot_row[c];
            if f != 0.0 {
                for (x, &q) in row.iter_mut().zip(&pivot_row) {
                    *x -= f * q;
                }
            }
        }
    }
    if a.len() > n {
        return None;
    }
    Some(
        a.into_iter()
            .map(|mut r| {
                r.truncate(n);
                r
            })
            .collect(),
    )
}

/// `|det|` of the square block of the columns `cols`, by elimination with partial pivoting.
fn block_det(a: &[Vec<f64>], cols: &[usize]) -> f64 {
    let g = a.len();
    let mut b: Vec<Vec<f64>> = a
        .iter()
        .map(|r| cols.iter().map(|&c| r[c]).collect())
        .collect();
    let mut det = 1.0;
    for c in 0..g {
        let p = (c..g)
            .max_by(|&x, &y| b[x][c].abs().total_cmp(&b[y][c].abs()))
            .unwrap_or(c);
        let piv = b[p][c];
        if piv == 0.0 || !piv.is_finite() {
            return 0.0;
        }
        b.swap(p, c);
        det *= piv.abs();
        let (top, below) = b.split_at_mut(c + 1);
        let pivot_row = &top[c];
        for row in below.iter_mut() {
            let f = row[c] / piv;
            for (x, &p) in row[c..].iter_mut().zip(&pivot_row[c..]) {
                *x -= f * p;
            }
        }
    }
    det
}

/// Complete pivoting: the columns chosen as pivots (the candidates to compute from the
/// constraints) and the product of the pivots' magnitudes.
fn best_pivots(a: &[Vec<f64>], n: usize) -> (Vec<usize>, f64) {
    let g = a.len();
    let mut b = a.to_vec();
    let mut free_rows: Vec<usize> = (0..g).collect();
    let mut free_cols: Vec<usize> = (0..n).collect();
    let mut chosen = Vec::with_capacity(g);
    let mut det = 1.0;
    for _ in 0..g {
        let mut best = (0usize, 0usize, 0.0f64);
        for (ri, &r) in free_rows.iter().enumerate() {
            for (ci, &c) in free_cols.iter().enumerate() {
                let v = b[r][c].abs();
                if v > best.2 {
                    best = (ri, ci, v);
                }
            }
        }
        if best.2 == 0.0 || !best.2.is_finite() {
            return (chosen, 0.0);
        }
        let r = free_rows.swap_remove(best.0);
        let c = free_cols.swap_remove(best.1);
        det *= best.2;
        chosen.push(c);
        let pivot_row = b[r].clone();
        for &o in &free_rows {
            let f = b[o][c] / pivot_row[c];
            if f != 0.0 {
                for (x, &p) in b[o].iter_mut().zip(&pivot_row) {
                    *x -= f * p;
                }
            }
        }
    }
    chosen.sort_unstable();
    (chosen, det)
}

fn dummies_of(mask: i64, n: usize) -> Vec<usize> {
    (0..n).filter(|&i| mask & (1 << i) == 0).collect()
}

/// How good the current choice is compared with the best one, in `[0, 1]`.
pub fn quality(mask: i64, n: usize, p: usize, jac: &[f64]) -> f64 {
    let Some(a) = rows(n, p, jac) else {
        return 1.0;
    };
    let dummies = dummies_of(mask, n);
    if dummies.len() != a.len() {
        return 0.0;
    }
    let (_, best) = best_pivots(&a, n);
    if best == 0.0 {
        return 1.0;
    }
    (block_det(&a, &dummies) / best).min(1.0)
}

/// The choice to use: the current one while it is at least half as good as the best, else
/// the best.
pub fn select(mask: i64, n: usize, p: usize, jac: &[f64]) -> i64 {
    let Some(a) = rows(n, p, jac) else {
        return mask;
    };
    if quality(mask, n, p, jac) >= KEEP_ABOVE {
        return mask;
    }
    let (pivots, det) = best_pivots(&a, n);
    if det == 0.0 || pivots.len() != a.len() {
        return mask;
    }
    let all = (1i64 << n) - 1;
    pivots.iter().fold(all, |m, &c| m & !(1 << c))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The constraints as written mention the candidates only through intermediate unknowns
    /// `y` (whose own equations are among the rows): by the written entries alone candidate
    /// 1 is never involved and the first row is zero; after eliminating `y` the constraints
    /// are solved for candidates 1 and 3, and candidate 2 is the state.
    #[test]
    fn intermediate_unknowns_are_eliminated_before_the_choice() {
        #[rustfmt::skip]
        let jac = [
            0.0, 0.0, 0.0,   1.0, 0.0, // constraint: y1 = f(x), f flat at the start
            0.0, 0.0, -1.0,  0.0, 1.0, // constraint: y2 = x3
            1.0, 0.0, 0.0,   1.0, 0.0, // y1 = -x1
            0.0, 0.0, 0.0,   0.0, 1.0, // y2 = 0
        ];
        assert_eq!(select(0b001, 3, 2, &jac), 0b010);
        assert_eq!(quality(0b010, 3, 2, &jac), 1.0);
        assert_eq!(quality(0b001, 3, 2, &jac), 0.0);
        // without the elimination the first row carries no information: no switch
        let written = [0.0, 0.0, 0.0, 0.0, 0.0, -1.0];
        assert_eq!(select(0b001, 3, 0, &written), 0b001);
    }

    #[test]
    fn weights_pick_the_jth_state() {
        // candidates 0..4, states 1 and 3
        let mask = 0b1010;
        assert_eq!(weight(mask, 1, 1), 1.0);
        assert_eq!(weight(mask, 2, 3), 1.0);
        assert_eq!(weight(mask, 1, 3), 0.0);
        assert_eq!(weight(mask, 1, 0), 0.0);
        assert_eq!(weight(mask, 2, 2), 0.0);
    }

    #[test]
    fn pendulum_constraint_pivots_on_the_larger_coordinate() {
        // J = [2x, 2y]; x = 0.99, y = 0.1: compute x from the constraint, y is the state
        let jac = [1.98, 0.2];
        assert_eq!(select(0b01, 2, 0, &jac), 0b10);
        assert!(quality(0b01, 2, 0, &jac) < 0.11);
        assert_eq!(quality(0b10, 2, 0, &jac), 1.0);
        // a good current choice is kept even when another is as good
        assert_eq!(select(0b01, 2, 0, &[1.0, 1.0]), 0b01);
    }

    #[test]
    fn two_constraints_over_three_candidates() {
        // rows: [1 0 1], [0 1 1]: any two columns are regular, the first two form I
        let jac = [1.0, 0.0, 1.0, 0.0, 1.0, 1.0];
        assert!((quality(0b100, 3, 0, &jac) - 1.0).abs() < 1e-12);
        // with candidate 0 a state, columns 1 and 2 form [[0,1],[1,1]] (|det| 1)
        assert!((quality(0b001, 3, 0, &jac) - 1.0).abs() < 1e-12);
        // a singular block is the worst choice
        let jac = [1.0, 2.0, 0.0, 2.0, 4.0, 1.0];
        assert_eq!(quality(0b100, 3, 0, &jac), 0.0);
        let m = select(0b100, 3, 0, &jac);
        assert!(quality(m, 3, 0, &jac) > 0.5, "{m:b}");
    }

    #[test]
    fn malformed_arguments_keep_the_choice() {
        assert_eq!(select(0b1, 3, 0, &[1.0, 2.0]), 0b1);
        assert_eq!(quality(0b1, 0, 0, &[]), 1.0);
    }
}
