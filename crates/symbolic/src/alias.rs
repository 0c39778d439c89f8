//! Alias elimination: equations `a = b`, `a = -b`, `a = c*b` (constant `c`) and
//! `a = b + c` between two unknowns of the same class are removed; one variable of each
//! alias group becomes the representative and the others are recorded as
//! `name = scale * representative + offset`.
//!
//! Groups are kept in a union-find structure with affine edges (path compression composes
//! the maps), so the pass is near-linear. The representative is chosen by a score: states,
//! `stateSelect` prefer/always, visible (non-protected) names, fixed starts and start values
//! win. Parameters are never alias targets: an equation `a = p` stays an equation, so a
//! `fixed=true` start of `a` is never lost. When an eliminated variable is differentiated,
//! the representative gets a derivative too and `der(eliminated)` becomes an alias of it.

use crate::ir::{ExprId, Node, VarIx};
use crate::model::{EqBody, Model, VKind};
use crate::program::ValueType;
use moss_frontend::flat::StateSelect;
use rustc_hash::FxHashMap as HashMap;

/// An eliminated variable: `var = scale * target + offset`.
#[derive(Clone, Debug)]
pub struct AliasOf {
    pub var: VarIx,
    pub target: VarIx,
    pub scale: f64,
    pub offset: f64,
}

/// If the equation is an alias `x = k*y + d`, return `(x, y, k, d)`.
fn alias_pattern(m: &Model, lhs: ExprId, rhs: ExprId) -> Option<(VarIx, VarIx, f64, f64)> {
    // lhs - rhs = kx*x + ky*y + c
    let (terms, c) = linear_form(m, lhs, rhs)?;
    let [(x, kx), (y, ky)] = terms.as_slice() else {
        return None;
    };
    // kx*x + ky*y + c = 0  ->  x = (-ky/kx) y - c/kx
    Some((*x, *y, -ky / kx, -c / kx))
}

/// `lhs - rhs` as `sum(k_i * v_i) + c` with at most two variables and nonzero coefficients.
fn linear_form(m: &Model, lhs: ExprId, rhs: ExprId) -> Option<(Vec<(VarIx, f64)>, f64)> {
    linear_form_with_at_most(m, lhs, rhs, 2)
}

/// `lhs - rhs` as `sum(k_i * v_i) + c` (constant `k_i`, `c`) with at most `max_terms`
/// variables, all with nonzero coefficients.
pub(crate) fn linear_form_with_at_most(
    m: &Model,
    lhs: ExprId,
    rhs: ExprId,
    max_terms: usize,
) -> Option<(Vec<(VarIx, f64)>, f64)> {
    let mut terms: Vec<(VarIx, f64)> = Vec::new();
    let mut c = 0.0;
    // a sum of n terms nests about n deep
    let depth_limit = 8.max(2 * max_terms as u32 + 4);
    let mut magnitudes: Vec<f64> = Vec::new();
    let mut walk = LinearWalk {
        m,
        terms: &mut terms,
        magnitudes: &mut magnitudes,
        c: &mut c,
        max_terms,
        depth_limit,
    };
    walk.collect(lhs, 1.0, 0)?;
    walk.collect(rhs, -1.0, 0)?;
    // a coefficient gathered from terms that cancel up to rounding (`i - 0.9999999999999999*i`
    // of evaluated winding orientations) is zero, not 1e-16
    let mut kept = magnitudes.iter();
    terms.retain(|t| {
        let magnitude = kept.next().copied().unwrap_or(0.0);
        t.1 != 0.0 && t.1.abs() > 8.0 * f64::EPSILON * magnitude
    });
    if terms.len() > max_terms {
        return None;
    }
    Some((terms, c))
}

struct LinearWalk<'a> {
    m: &'a Model,
    terms: &'a mut Vec<(VarIx, f64)>,
    /// Per term, the sum of the magnitudes of its contributions.
    magnitudes: &'a mut Vec<f64>,
    c: &'a mut f64,
    max_terms: usize,
    depth_limit: u32,
}

impl LinearWalk<'_> {
    fn collect(&mut self, e: ExprId, k: f64, depth: u32) -> Option<()> {
        if depth > self.depth_limit || self.terms.len() > self.max_terms {
            return None;
        }
        let a = &self.m.arena;
        match a.node(e) {
            Node::Const(_) => *self.c += k * a.as_const(e)?,
            Node::Var(v) => match self.terms.iter().position(|t| t.0 == *v) {
                Some(i) => {
                    self.terms[i].1 += k;
                    self.magnitudes[i] += k.abs();
                }
                None => {
                    self.terms.push((*v, k));
                    self.magnitudes.push(k.abs());
                }
            },
            Node::Neg(x) => self.collect(*x, -k, depth + 1)?,
            Node::Add(x, y) => {
                let (x, y) = (*x, *y);
                self.collect(x, k, depth + 1)?;
                self.collect(y, k, depth + 1)?;
            }
            Node::Sub(x, y) => {
                let (x, y) = (*x, *y);
                self.collect(x, k, depth + 1)?;
                self.collect(y, -k, depth + 1)?;
            }
            Node::Mul(x, y) => match (a.as_const(*x), a.as_const(*y)) {
                (Some(f), None) => self.collect(*y, k * f, depth + 1)?,
                (None, Some(f)) => self.collect(*x, k * f, depth + 1)?,
                _ => return None,
            },
            Node::Div(x, y) => {
                let f = a.as_const(*y)?;
                if f == 0.0 {
                    return None;
                }
                self.collect(*x, k / f, depth + 1)?;
            }
            _ => return None,
        }
        Some(())
    }
}

/// May take part in an alias equation. Protected variables (computed by units, read by
/// algorithms, reinit targets) may only be representatives, never eliminated.
fn eligible(m: &Model, v: VarIx) -> bool {
    let sv = &m.vars[v as usize];
    !sv.eliminated && sv.der_of.is_none() && matches!(sv.kind, VKind::Continuous | VKind::Discrete)
}

fn protected(m: &Model, v: VarIx) -> bool {
    m.vars[v as usize].protected_from_alias
}

fn score(m: &Model, v: VarIx) -> i32 {
    let sv = &m.vars[v as usize];
    let mut s = 0;
    if sv.der.is_some() {
        s += 64;
    }
    s += match sv.state_select {
        StateSelect::Always => 128,
        StateSelect::Prefer => 32,
        StateSelect::Avoid => -32,
        StateSelect::Never => -64,
        StateSelect::Default => 0,
    };
    if sv.fixed == Some(true) {
        s += 8;
    }
    if !sv.hidden {
        s += 4;
    }
    if sv.start.is_some() {
        s += 2;
    }
    s
}

struct UnionFind {
    /// `x = scale * parent + offset`
    parent: Vec<(VarIx, f64, f64)>,
}

impl UnionFind {
    /// Root of `x` and the affine map from the root, with path compression (iterative).
    fn find(&mut self, x: VarIx) -> (VarIx, f64, f64) {
        let mut path = Vec::new();
        let mut cur = x;
        while self.parent[cur as usize].0 != cur {
            path.push(cur);
            cur = self.parent[cur as usize].0;
        }
        let root = cur;
        // compose from the node nearest the root outwards
        for &n in path.iter().rev() {
            let (p, s, o) = self.parent[n as usize];
            let (_, ps, po) = self.parent[p as usize];
            let (ps, po) = if p == root { (1.0, 0.0) } else { (ps, po) };
            self.parent[n as usize] = (root, s * ps, s * po + o);
        }
        let (_, s, o) = self.parent[x as usize];
        if x == root {
            (root, 1.0, 0.0)
        } else {
            (root, s, o)
        }
    }
}

/// Constant propagation: an equation `k*x + c1 = c2`, or `x = e` with `e` a parameter
/// expression, defines `x` as a constant; `x` is then replaced by its value in every other
/// equation (transitively: `y = 2*x` then defines `y`).
/// The defining equations stay, so the variables are still computed (and reported). This
/// removes e.g. grounded supports and unconnected flows from index reduction and loops.
/// Returns the number of variables found constant.
///
/// Substitutions are batched: a value found goes onto the equation's pending list, and the
/// equation is rewritten once per round with all of them. One equation can mention hundreds
/// of such variables (a pipe's nominal friction loss, the sum over all its segments of an
/// inlined pressure-loss function of their roughnesses): rewriting it for each one made the
/// pass quadratic in the number of segments.
pub fn propagate_constants(m: &mut Model) -> usize {
    let n_eq = m.eqs.len();
    let mut occurrences: Vec<Vec<u32>> = vec![Vec::new(); m.vars.len()];
    // unknowns an equation mentions, an upper bound once substitutions are pending
    let mut unknowns: Vec<usize> = Vec::with_capacity(n_eq);
    for i in 0..n_eq as u32 {
        let vs = equation_vars(m, i);
        unknowns.push(
            vs.iter()
                .filter(|&&v| m.vars[v as usize].is_unknown())
                .count(),
        );
        for v in vs {
            occurrences[v as usize].push(i);
        }
    }
    let mut value: Vec<Option<ExprId>> = vec![None; m.vars.len()];
    let mut pending: Vec<Vec<VarIx>> = vec![Vec::new(); n_eq];
    let mut queue: Vec<u32> = (0..n_eq as u32).rev().collect();
    let mut dirty: Vec<u32> = Vec::new();
    let mut found = 0;
    loop {
        while let Some(i) = queue.pop() {
            apply_pending(m, i, &mut pending[i as usize], &value);
            let EqBody::Eq { lhs, rhs } = m.eqs[i as usize].body else {
                continue;
            };
            let Some((x, c)) = constant_definition(m, lhs, rhs) else {
                continue;
            };
            if value[x as usize].is_some() || !eligible(m, x) || protected(m, x) {
                continue;
            }
            if m.vars[x as usize].der.is_some() {
                continue;
            }
            value[x as usize] = Some(c);
            found += 1;
            for &e in &occurrences[x as usize] {
                if e == i {
                    continue;
                }
                // an equation left without unknowns would be redundant or conflicting; it
                // keeps `x` so that the structural diagnosis can name it. With few unknowns
                // left that is decided on the equation brought up to date; with many, one
                // more substitution cannot leave it without any.
                if unknowns[e as usize] <= FEW_UNKNOWNS {
                    apply_pending(m, e, &mut pending[e as usize], &value);
                    if !has_other_unknown(m, e, x) {
                        continue;
                    }
                }
                if pending[e as usize].is_empty() {
                    dirty.push(e);
                }
                pending[e as usize].push(x);
                unknowns[e as usize] = unknowns[e as usize].saturating_sub(1);
            }
        }
        if dirty.is_empty() {
            break;
        }
        dirty.sort_unstable_by(|a, b| b.cmp(a));
        dirty.dedup();
        queue = std::mem::take(&mut dirty);
    }
    found
}

/// Below this many unknowns, whether an equation keeps another unknown than the one being
/// substituted is checked exactly (folding may remove more than the substituted variable).
const FEW_UNKNOWNS: usize = 4;

/// The variables an equation mentions, each once.
fn equation_vars(m: &mut Model, e: u32) -> Vec<VarIx> {
    let mut body = m.eqs[e as usize].body.clone();
    let mut exprs = Vec::new();
    crate::model::map_exprs(&mut body, &mut |ex| {
        exprs.push(ex);
        ex
    });
    let mut vs = Vec::new();
    for ex in exprs {
        m.arena.vars_of(ex, false, &mut vs);
    }
    vs.sort_unstable();
    vs.dedup();
    vs
}

/// Substitute the values of `pending` into equation `e`, all in one rewrite.
fn apply_pending(m: &mut Model, e: u32, pending: &mut Vec<VarIx>, value: &[Option<ExprId>]) {
    if pending.is_empty() {
        return;
    }
    let subst: HashMap<VarIx, ExprId> = pending
        .drain(..)
        .filter_map(|v| Some((v, value[v as usize]?)))
        .collect();
    let mut f = |_: &mut crate::ir::Arena, n: &Node| match n {
        Node::Var(v) => subst.get(v).copied(),
        _ => None,
    };
    let mut memo = HashMap::default();
    let mut body = m.eqs[e as usize].body.clone();
    crate::model::map_exprs(&mut body, &mut |ex| {
        m.arena.substitute(ex, &mut f, false, &mut memo)
    });
    m.eqs[e as usize].body = body;
}

fn has_other_unknown(m: &mut Model, e: u32, x: VarIx) -> bool {
    if !matches!(m.eqs[e as usize].body, EqBody::Eq { .. }) {
        return true;
    }
    equation_vars(m, e)
        .iter()
        .any(|&v| v != x && m.vars[v as usize].is_unknown())
}

/// `k*x + c1 = c2` (or mirrored) with a constant `k != 0`: `(x, (c2 - c1)/k)`; or
/// `x = e` (or mirrored) with `e` a parameter expression: `(x, e)`.
fn constant_definition(m: &mut Model, lhs: ExprId, rhs: ExprId) -> Option<(VarIx, ExprId)> {
    if let Some((terms, c)) = linear_form(m, lhs, rhs) {
        if let [(x, k)] = terms.as_slice() {
            let value = -c / k;
            return value.is_finite().then(|| (*x, m.arena.num(value)));
        }
    }
    for (side, other) in [(lhs, rhs), (rhs, lhs)] {
        if let Node::Var(x) = *m.arena.node(side) {
            if m.vars[x as usize].is_unknown() && m.is_parameter_expr(other) {
                return Some((x, other));
            }
        }
    }
    None
}

/// Eliminate aliases in `m.eqs`; returns the eliminated variables.
///
/// Besides the alias equations themselves, two equations defining two preferred states by
/// the same expression (`x = e`, `y = e`, e.g. the same relative angle declared in a
/// component and in the component it is built of) make `x` and `y` aliases: left as two
/// variables, both would be chosen as states, and the constraint `x = y` between them is invisible to the
/// structural analysis (each equation is regular, the pair is numerically singular).
/// Rounds repeat while new duplicates appear (the derivatives of merged variables).
pub fn eliminate_aliases(m: &mut Model) -> Vec<AliasOf> {
    let mut aliases = eliminate_alias_equations(m);
    for _ in 0..MAX_DUPLICATE_ROUNDS {
        // both rewrites run (no short circuit): each may expose aliases for the other
        let duplicates = rewrite_duplicate_definitions(m);
        let shared = crate::shared_sums::expose_shared_sums(m);
        if !duplicates && !shared {
            break;
        }
        let more = eliminate_alias_equations(m);
        aliases = compose_aliases(aliases, more);
    }
    aliases
}

/// Rounds of duplicate-definition merging (each is linear; one or two suffice in practice).
const MAX_DUPLICATE_ROUNDS: usize = 4;

/// Rewrite the second of two equations `x = e`, `y = e` (same `e`, which mentions an
/// unknown) into the alias equation `y = x`. Returns whether any was rewritten.
fn rewrite_duplicate_definitions(m: &mut Model) -> bool {
    let mut first: HashMap<ExprId, VarIx> = HashMap::default();
    let mut rewrites = Vec::new();
    for i in 0..m.eqs.len() {
        let EqBody::Eq { lhs, rhs } = m.eqs[i].body else {
            continue;
        };
        let Some((x, e)) = definition(m, lhs, rhs) else {
            continue;
        };
        match first.get(&e) {
            None => {
                first.insert(e, x);
            }
            Some(&y) if y != x && mergeable(m, x, y) => rewrites.push((i, x, y)),
            Some(_) => {}
        }
    }
    for &(i, x, y) in &rewrites {
        let (vx, vy) = (m.arena.var(x), m.arena.var(y));
        m.eqs[i].body = EqBody::Eq { lhs: vx, rhs: vy };
    }
    !rewrites.is_empty()
}

/// `x = e` or `e = x` with `x` an unknown that may be an alias and `e` an expression
/// (not `x` itself) that mentions an unknown: `(x, e)`.
fn definition(m: &mut Model, lhs: ExprId, rhs: ExprId) -> Option<(VarIx, ExprId)> {
    for (side, other) in [(lhs, rhs), (rhs, lhs)] {
        let Node::Var(x) = *m.arena.node(side) else {
            continue;
        };
        if !eligible(m, x) || !m.vars[x as usize].is_unknown() {
            continue;
        }
        let mut vs = Vec::new();
        m.arena.vars_of(other, false, &mut vs);
        if !vs.contains(&x) && vs.iter().any(|&v| m.vars[v as usize].is_unknown()) {
            return Some((x, other));
        }
    }
    None
}

/// Only preferred states are merged: two of them for one quantity is the case that goes
/// wrong (both kept as states). Merging every duplicate (`R[2,2] = R[1,1] = cos(angle)` of a
/// rotation matrix, the speeds of rigidly connected inertias) is also correct, but changes
/// which candidates dynamic state selection sees around a machine's air gap, where the
/// state set's view of the constraints is not complete yet.
fn mergeable(m: &Model, x: VarIx, y: VarIx) -> bool {
    let (vx, vy) = (&m.vars[x as usize], &m.vars[y as usize]);
    let preferred = |s: StateSelect| matches!(s, StateSelect::Prefer | StateSelect::Always);
    vx.kind == vy.kind
        && vx.ty == vy.ty
        && !(protected(m, x) && protected(m, y))
        && preferred(vx.state_select)
        && preferred(vy.state_select)
}

/// Aliases of a first round (`v = s*t + o`) followed by those of a later round, whose
/// eliminated variables may be the first round's targets.
fn compose_aliases(first: Vec<AliasOf>, later: Vec<AliasOf>) -> Vec<AliasOf> {
    let map: HashMap<VarIx, (VarIx, f64, f64)> = later
        .iter()
        .map(|a| (a.var, (a.target, a.scale, a.offset)))
        .collect();
    let mut out: Vec<AliasOf> = first
        .into_iter()
        .map(|a| match map.get(&a.target) {
            Some(&(t, s, o)) => AliasOf {
                var: a.var,
                target: t,
                scale: a.scale * s,
                offset: a.scale * o + a.offset,
            },
            None => a,
        })
        .collect();
    out.extend(later);
    out
}

/// One round of alias elimination over the alias equations `x = k*y + d`.
fn eliminate_alias_equations(m: &mut Model) -> Vec<AliasOf> {
    let n = m.vars.len();
    let mut uf = UnionFind {
        parent: (0..n as VarIx).map(|i| (i, 1.0, 0.0)).collect(),
    };
    let mut removed = vec![false; m.eqs.len()];
    let mut pending: Vec<(VarIx, VarIx, f64, f64, Option<usize>)> = Vec::new();
    for (i, eq) in m.eqs.iter().enumerate() {
        let EqBody::Eq { lhs, rhs } = eq.body else {
            continue;
        };
        let Some((x, y, k, d)) = alias_pattern(m, lhs, rhs) else {
            continue;
        };
        if !eligible(m, x)
            || !eligible(m, y)
            || (protected(m, x) && protected(m, y))
            || m.vars[x as usize].kind != m.vars[y as usize].kind
        {
            continue;
        }
        let (tx, ty) = (m.vars[x as usize].ty, m.vars[y as usize].ty);
        if tx != ty || (tx != ValueType::Real && (k != 1.0 || d != 0.0)) {
            continue;
        }
        pending.push((x, y, k, d, Some(i)));
        removed[i] = true;
    }
    let mut k_i = 0;
    while k_i < pending.len() {
        let (x, y, k, d, src) = pending[k_i];
        k_i += 1;
        if uf.parent.len() < m.vars.len() {
            let start = uf.parent.len() as VarIx;
            uf.parent
                .extend((start..m.vars.len() as VarIx).map(|i| (i, 1.0, 0.0)));
        }
        let (rx, sx, ox) = uf.find(x);
        let (ry, sy, oy) = uf.find(y);
        if rx == ry || (protected(m, rx) && protected(m, ry)) {
            // cycle in the alias graph: the equation is redundant or fixes a value, so it
            // stays an ordinary equation (structural analysis reports it if redundant)
            if let Some(i) = src {
                removed[i] = false;
            }
            continue;
        }
        // sx*rx + ox = k*(sy*ry + oy) + d
        // the derivative of a kept variable must stay (it is the state derivative slot)
        let der_bonus = |uf: &mut UnionFind, v: VarIx| match m.vars[v as usize].der_of {
            Some(b) if uf.find(b).0 == b => 1000,
            _ => 0,
        };
        let pin = |v: VarIx| if protected(m, v) { 1_000_000 } else { 0 };
        let sc_x = score(m, rx) + der_bonus(&mut uf, rx) + pin(rx);
        let sc_y = score(m, ry) + der_bonus(&mut uf, ry) + pin(ry);
        let (keep, drop, s, o) = if sc_x >= sc_y {
            // ry = (sx*rx + ox - k*oy - d) / (k*sy)
            let den = k * sy;
            (rx, ry, sx / den, (ox - k * oy - d) / den)
        } else {
            // rx = (k*sy*ry + k*oy + d - ox) / sx
            (ry, rx, k * sy / sx, (k * oy + d - ox) / sx)
        };
        uf.parent[drop as usize] = (keep, s, o);
        // derivatives follow their variables
        if let Some(dd) = m.vars[drop as usize].der {
            let dk = m.der_var(keep);
            pending.push((dd, dk, s, 0.0, None));
        }
    }
    let mut keep_eqs = Vec::with_capacity(m.eqs.len());
    for (i, eq) in std::mem::take(&mut m.eqs).into_iter().enumerate() {
        if !removed.get(i).copied().unwrap_or(false) {
            keep_eqs.push(eq);
        }
    }
    m.eqs = keep_eqs;
    let mut aliases = Vec::new();
    for v in 0..uf.parent.len() as VarIx {
        let (r, s, o) = uf.find(v);
        if r != v {
            aliases.push(AliasOf {
                var: v,
                target: r,
                scale: s,
                offset: o,
            });
        }
    }
    merge_start_values(m, &aliases);
    substitute_aliases(m, &aliases);
    aliases
}

fn merge_start_values(m: &mut Model, aliases: &[AliasOf]) {
    for a in aliases {
        let (start, fixed, given, name) = {
            let v = &m.vars[a.var as usize];
            (v.start, v.fixed, v.start_given, v.name.clone())
        };
        let Some(start) = start else { continue };
        let t = a.target as usize;
        // target = (start - offset)/scale, folded when the start value is a literal
        let conv = {
            let ar = &mut m.arena;
            let off = ar.num(a.offset);
            let sc = ar.num(a.scale);
            let shifted = ar.sub(start, off);
            ar.div(shifted, sc)
        };
        let target_fixed = m.vars[t].fixed == Some(true);
        let target_given = m.vars[t].start_given;
        let this_fixed = fixed == Some(true);
        match m.vars[t].start {
            None => {
                m.vars[t].start = Some(conv);
                m.vars[t].start_given = given;
                if this_fixed {
                    m.vars[t].fixed = Some(true);
                }
            }
            Some(ts) if ts != conv => {
                if this_fixed && !target_fixed {
                    m.vars[t].start = Some(conv);
                    m.vars[t].start_given = given;
                    m.vars[t].fixed = Some(true);
                } else if !this_fixed && !target_fixed && given != target_given {
                    // a start value the model gives beats one that only comes from a type
                    // (`type Density = Real(start = 1)`): no conflict to report
                    if given {
                        m.vars[t].start = Some(conv);
                        m.vars[t].start_given = true;
                    }
                } else if this_fixed || !target_fixed {
                    let target = m.vars[t].name.clone();
                    let w = if a.scale == 1.0 && a.offset == 0.0 {
                        format!(
                            "alias `{name}` of `{target}` has a different start value ({} vs \
                             {}); using {}",
                            m.text(start),
                            m.text(ts),
                            m.text(ts)
                        )
                    } else {
                        // say what the alias's start value means for the variable kept
                        let relation = alias_relation(&target, a.scale, a.offset);
                        format!(
                            "`{name}` = {relation} has start value {}, which means `{target}` = \
                             {}, but `{target}` has start value {}; using {}",
                            m.text(start),
                            m.text(conv),
                            m.text(ts),
                            m.text(ts)
                        )
                    };
                    m.warnings.push(w);
                }
            }
            Some(_) => {
                if this_fixed {
                    m.vars[t].fixed = Some(true);
                }
            }
        }
    }
}

/// `scale*target + offset` written the way a user would (`-x`, `2*x + 1`, `x - 3`).
fn alias_relation(target: &str, scale: f64, offset: f64) -> String {
    let scaled = if scale == 1.0 {
        target.to_string()
    } else if scale == -1.0 {
        format!("-{target}")
    } else {
        format!("{scale}*{target}")
    };
    if offset == 0.0 {
        scaled
    } else if offset < 0.0 {
        format!("{scaled} - {}", -offset)
    } else {
        format!("{scaled} + {offset}")
    }
}

fn substitute_aliases(m: &mut Model, aliases: &[AliasOf]) {
    if aliases.is_empty() {
        return;
    }
    let mut map: HashMap<VarIx, (VarIx, f64, f64)> = HashMap::default();
    for a in aliases {
        m.vars[a.var as usize].eliminated = true;
        map.insert(a.var, (a.target, a.scale, a.offset));
    }
    let mut memo = HashMap::default();
    let mut f = |ar: &mut crate::ir::Arena, n: &Node| -> Option<ExprId> {
        let (v, pre) = match n {
            Node::Var(v) => (*v, false),
            Node::Pre(v) => (*v, true),
            _ => return None,
        };
        let &(t, s, o) = map.get(&v)?;
        let base = if pre {
            ar.intern(Node::Pre(t))
        } else {
            ar.var(t)
        };
        let sc = ar.num(s);
        let scaled = ar.mul(sc, base);
        let off = ar.num(o);
        Some(ar.add(scaled, off))
    };
    let mut sub = |m: &mut Model, e: ExprId| m.arena.substitute(e, &mut f, false, &mut memo);
    let mut eqs = std::mem::take(&mut m.eqs);
    let mut init = std::mem::take(&mut m.init_eqs);
    for eq in eqs.iter_mut().chain(init.iter_mut()) {
        crate::model::map_exprs(&mut eq.body, &mut |e| sub(m, e));
    }
    m.eqs = eqs;
    m.init_eqs = init;
    for i in 0..m.vars.len() {
        if let Some(st) = m.vars[i].start {
            let st = sub(m, st);
            m.vars[i].start = Some(st);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::ModelBuilder;

    #[test]
    fn chain_of_aliases_keeps_state_as_representative() {
        let mut b = ModelBuilder::new();
        b.vars("x v y z w", "").start("y", 2.0).fixed("y");
        b.eq("der(x) = v");
        b.eq("der(v) = -x");
        b.eq("y = x");
        b.eq("z = -2*y");
        b.eq("w = z + 1");
        let mut m = b.model();
        let al = super::eliminate_aliases(&mut m);
        assert_eq!(m.eqs.len(), 2);
        let find = |n: &str| {
            al.iter()
                .find(|a| m.vars[a.var as usize].name == n)
                .unwrap()
        };
        let z = find("z");
        assert_eq!(m.vars[z.target as usize].name, "x");
        assert_eq!((z.scale, z.offset), (-2.0, 0.0));
        let w = find("w");
        assert_eq!((w.scale, w.offset), (-2.0, 1.0));
        // the fixed start of y moved to x
        let x = m.by_name["x"] as usize;
        assert_eq!(m.vars[x].fixed, Some(true));
        assert_eq!(m.arena.as_const(m.vars[x].start.unwrap()), Some(2.0));
    }

    #[test]
    fn two_definitions_by_the_same_expression_are_aliases() {
        use moss_frontend::flat::StateSelect;
        let mut b = ModelBuilder::new();
        b.vars("a b r s wr ws c d", "");
        for v in ["r", "s", "wr", "ws"] {
            b.state_select(v, StateSelect::Prefer);
        }
        // not preferred states: not merged as duplicate definitions, but the shared sum
        // `a + b` makes them aliases (`shared_sums.rs`)
        b.eq("c = a + b");
        b.eq("d = a + b");
        b.eq("der(a) = -a");
        b.eq("der(b) = -2*b");
        b.eq("r = b - a");
        b.eq("s = b - a");
        b.eq("wr = der(r)");
        b.eq("ws = der(s)");
        let mut m = b.model();
        let al = super::eliminate_aliases(&mut m);
        let target = |n: &str| {
            al.iter()
                .find(|x| m.vars[x.var as usize].name == n)
                .map(|x| m.vars[x.target as usize].name.clone())
        };
        // one of r/s is eliminated in favour of the other, and then one of wr/ws
        let rs = [target("r"), target("s")];
        assert!(
            rs.contains(&Some("r".into())) || rs.contains(&Some("s".into())),
            "{rs:?}"
        );
        let ws = [target("wr"), target("ws")];
        assert!(
            ws.contains(&Some("wr".into())) || ws.contains(&Some("ws".into())),
            "{ws:?}"
        );
        assert_eq!(m.eqs.len(), 5, "three of the eight equations were merged");
        assert!(target("c").is_some() != target("d").is_some());
    }

    #[test]
    fn conflicting_start_values_warn_and_parameters_are_not_targets() {
        let mut b = ModelBuilder::new();
        b.vars("a c", "").start("a", 1.0).start("c", 3.0);
        b.params("p", 1.0);
        b.eq("a = c");
        b.eq("c = p");
        let mut m = b.model();
        let al = super::eliminate_aliases(&mut m);
        assert_eq!(al.len(), 1);
        assert_eq!(m.eqs.len(), 1, "the equation with a parameter stays");
        assert!(
            m.warnings[0].contains("different start value"),
            "{:?}",
            m.warnings
        );
    }

    #[test]
    fn offset_alias_start_conflict_is_stated_for_the_kept_variable() {
        let mut b = ModelBuilder::new();
        b.vars("x y", "").start("x", 1.0).start("y", 1.0);
        b.eq("der(x) = -x");
        b.eq("y = x + 1");
        let mut m = b.model();
        super::eliminate_aliases(&mut m);
        // y.start = 1 means x = 0, which differs from x.start = 1 (equal numbers, yet a conflict)
        assert_eq!(
            m.warnings,
            [
                "`y` = x + 1 has start value 1, which means `x` = 0, but `x` has start value 1; \
              using 1"
            ]
        );
    }
}
