//! Structural checks and index reduction.
//!
//! 1. Count check: scalar equations vs unknowns (highest derivatives and algebraics).
//! 2. Pantelides' algorithm: equations that cannot be matched to a highest-derivative
//!    variable are differentiated (with every equation on the failed augmenting path) until a
//!    complete matching exists. Differentiated equations are appended to `m.eqs` with
//!    `diff_of`/`diffed` links; new derivative variables are created by `Model::der_var`.
//! 3. Dummy derivatives (Mattsson–Söderlind), with static selection: level by level, from the
//!    highest differentiated equations down, as many highest-order derivatives as there are
//!    differentiated equations become algebraic "dummy" derivatives; the choice is a matching
//!    that prefers variables whose base variable has a low `stateSelect` priority. A selection
//!    is only accepted when the coefficients of the chosen derivatives do not depend on the
//!    solution (constant or parameter Jacobian entries); otherwise the model would need dynamic
//!    state selection, which is reported as an error naming the constraint.

use crate::ir::VarIx;
use crate::matching::{self, Matching, Visit, NONE};
use crate::model::{EqBody, Model, SEq, VKind};
use crate::preferred_states::{
    has_undifferentiated_preferred, preferred_derivative_definitions, preferred_state_chains,
    undifferentiated_preferred,
};
use crate::state_sets::{build_state_set, StateSet, Through};
use moss_frontend::flat::StateSelect;
use moss_syntax::Diagnostic;
use rustc_hash::FxHashMap as HashMap;

/// Result of index reduction.
pub struct IndexInfo {
    /// 1 + the largest number of times an equation was differentiated (0 without states).
    pub index: u32,
    pub dummies: Vec<VarIx>,
    /// Constraints whose states are chosen at run time.
    pub state_sets: Vec<StateSet>,
}

const MAX_DIFFERENTIATIONS: u32 = 6;

fn highest_unknown(m: &Model, v: VarIx, taken: &[bool]) -> bool {
    let sv = &m.vars[v as usize];
    sv.is_unknown() && sv.kind != VKind::Parameter && sv.der.is_none() && !taken[v as usize]
}

/// Outputs of fixed-causality units (algorithms, when, multi-output calls): these variables
/// are matched to their unit and unavailable to other equations.
pub(crate) fn unit_outputs(m: &Model) -> Result<Vec<bool>, Vec<Diagnostic>> {
    let mut taken = vec![false; m.vars.len()];
    let mut errors = Vec::new();
    for eq in &m.eqs {
        for v in eq.fixed_outputs().unwrap_or_default() {
            if taken[v as usize] {
                errors.push(
                    Diagnostic::error(
                        eq.origin.span,
                        format!(
                            "variable `{}` is assigned by more than one algorithm, when-equation or function call",
                            m.vars[v as usize].name
                        ),
                    )
                    .with_help("each variable must be computed in exactly one place"),
                );
            }
            taken[v as usize] = true;
        }
    }
    if errors.is_empty() {
        Ok(taken)
    } else {
        Err(errors)
    }
}

/// Run the count check and Pantelides; returns the index and leaves `m.eqs` extended.
///
/// `stateSelect = prefer` and `always` also ask for variables that do not appear
/// differentiated to become states when possible (spec 4.9.4). The common case is a
/// velocity defined as a derivative, `v_rel = der(s_rel)` in the MSL's compliant elements
/// with relative states: `v_rel` becomes a state candidate once that equation is
/// differentiated as well, so that index reduction sees `der(v_rel)`. Which variables are
/// states matters beyond numerics: a `reinit` of one state leaves the others unchanged, so
/// the relative velocity of a spring-damper must be a state for it to stay continuous when
/// the mass at one end is stopped. The extra differentiation is a trial on a copy of the
/// model: it is kept only when it succeeds, makes those variables states, and costs no
/// preferred variable its state; otherwise the plain reduction stands.
pub fn reduce_index(m: &mut Model) -> Result<IndexInfo, Vec<Diagnostic>> {
    let mut wanted = preferred_derivative_definitions(m);
    if wanted.is_empty() && !has_undifferentiated_preferred(m) {
        return pantelides_and_dummies(m, &[]);
    }
    let mut plain = m.clone();
    let info = pantelides_and_dummies(&mut plain, &[])?;
    let preferred_states: Vec<VarIx> = (0..plain.vars.len() as VarIx)
        .filter(|&v| {
            is_state_after_reduction(&plain, v)
                && plain.vars[v as usize].state_select >= StateSelect::Prefer
        })
        .collect();
    let not_states: Vec<VarIx> = (0..m.vars.len() as VarIx)
        .filter(|&v| undifferentiated_preferred(m, v) && !is_state_after_reduction(&plain, v))
        .filter(|&v| !wanted.iter().any(|&(x, _)| x == v))
        .collect();
    wanted.extend(preferred_state_chains(m, &not_states, &mut plain));
    if wanted.is_empty() {
        *m = plain;
        return Ok(info);
    }
    // a second trial drops the definitions whose variable did not become a state, so that
    // no equation is differentiated for nothing
    for _ in 0..2 {
        let mut trial = m.clone();
        let Ok(t) = pantelides_and_dummies(&mut trial, &wanted) else {
            break;
        };
        if !preferred_states
            .iter()
            .all(|&v| is_state_after_reduction(&trial, v))
        {
            break;
        }
        let became: Vec<(VarIx, u32)> = wanted
            .iter()
            .copied()
            .filter(|&(x, _)| is_state_after_reduction(&trial, x))
            .collect();
        if became.len() == wanted.len() {
            *m = trial;
            // the index is a property of the DAE, not of the state choice
            return Ok(IndexInfo {
                index: info.index,
                dummies: t.dummies,
                state_sets: t.state_sets,
            });
        }
        if became.is_empty() {
            break;
        }
        wanted = became;
    }
    *m = plain;
    Ok(info)
}

/// A variable is a state when it has a derivative that index reduction did not make a dummy.
fn is_state_after_reduction(m: &Model, v: VarIx) -> bool {
    let sv = &m.vars[v as usize];
    sv.kind == VKind::Continuous
        && !sv.eliminated
        && sv.der.is_some_and(|d| !m.vars[d as usize].dummy)
}

/// Pantelides and the dummy derivatives; the equations of `extra` (see
/// [`preferred_derivative_definitions`](crate::preferred_states::preferred_derivative_definitions)) are differentiated once before the matching.
/// The unknowns an equation can be matched to: an equation defining a discrete (Integer,
/// Boolean, enumeration) variable, `phase = if h < hl then 1 else 2`, cannot be solved for
/// the Real variables of its relations, nor a Real equation for the discrete variables of
/// its conditions. Otherwise an augmenting path runs through the discrete equation and
/// index reduction differentiates it into `0 = 0`.
fn solvable_incidence(m: &mut Model, eq: &SEq) -> Vec<VarIx> {
    let mut inc = m.incidence(eq);
    let EqBody::Eq { lhs, rhs } = eq.body else {
        return inc;
    };
    // the type of a side that is a plain variable; a Real one makes it a Real equation
    // (`x = n` converts an Integer)
    let var_types: Vec<bool> = [lhs, rhs]
        .into_iter()
        .filter_map(|side| match *m.arena.node(side) {
            crate::ir::Node::Var(v) => {
                Some(m.vars[v as usize].ty == crate::program::ValueType::Real)
            }
            _ => None,
        })
        .collect();
    let real = |m: &Model, v: VarIx| m.vars[v as usize].ty == crate::program::ValueType::Real;
    if !var_types.is_empty() && var_types.iter().all(|r| !r) {
        inc.retain(|&v| !real(m, v));
    } else if inc.iter().any(|&v| real(m, v)) {
        // a Real equation is not solved for an Integer or Boolean read in its conditions
        inc.retain(|&v| real(m, v));
    }
    inc
}

fn pantelides_and_dummies(
    m: &mut Model,
    extra: &[(VarIx, u32)],
) -> Result<IndexInfo, Vec<Diagnostic>> {
    // variables from here on are derivatives introduced by differentiating equations
    let n_model = m.vars.len();
    let mut taken = unit_outputs(m)?;
    let eq_ids: Vec<u32> = (0..m.eqs.len() as u32)
        .filter(|&e| matches!(m.eqs[e as usize].body, EqBody::Eq { .. }))
        .collect();
    let mut adj: Vec<Vec<VarIx>> = Vec::with_capacity(m.eqs.len());
    for i in 0..m.eqs.len() {
        let eq = m.eqs[i].clone();
        adj.push(if matches!(eq.body, EqBody::Eq { .. }) {
            solvable_incidence(m, &eq)
        } else {
            Vec::new()
        });
    }
    let unknowns: Vec<VarIx> = (0..m.vars.len() as VarIx)
        .filter(|&v| highest_unknown(m, v, &taken))
        .collect();
    if eq_ids.len() != unknowns.len() {
        return Err(count_error(m, &eq_ids, &unknowns, &adj, &taken));
    }
    check_collapsed_structure(m, &eq_ids, &adj, &taken)?;
    let mut depth: HashMap<u32, u32> = HashMap::default();
    // a differentiated definition takes the place of the original in the matching, like
    // the equations Pantelides differentiates itself
    let mut eq_ids = eq_ids;
    for &(_, e) in extra {
        // chains of two preferred variables may share an equation
        if m.eqs[e as usize].diffed.is_some() {
            continue;
        }
        let ne = differentiate_equation(m, e)?;
        depth.insert(ne, 1);
        let eq = m.eqs[ne as usize].clone();
        adj.push(m.incidence(&eq));
        if let Some(slot) = eq_ids.iter_mut().find(|k| **k == e) {
            *slot = ne;
        }
    }
    taken.resize(m.vars.len(), false);
    let mut mt = {
        let allowed = |v: VarIx| highest_unknown(m, v, &taken);
        let mut mt = Matching::new(adj.len(), m.vars.len());
        mt.greedy(&eq_ids, &adj, &allowed);
        mt
    };
    let mut vis = Visit::default();
    let mut max_diff = 0u32;
    for &k in &eq_ids {
        let mut cur = k;
        loop {
            if mt.var_of_eq[cur as usize] != NONE {
                break;
            }
            let ok = {
                let allowed = |v: VarIx| highest_unknown(m, v, &taken);
                mt.augment(cur, &adj, &allowed, &mut vis)
            };
            if ok {
                break;
            }
            let d = depth.get(&cur).copied().unwrap_or(0);
            if !touches_states(m, &vis.eqs) || d >= MAX_DIFFERENTIATIONS {
                return Err(singular_error(m, &eq_ids, &adj, &taken, d));
            }
            let new_of = pantelides_step(m, &vis, &mut adj, &mut mt, &mut depth)?;
            for ne in new_of.values() {
                max_diff = max_diff.max(depth.get(ne).copied().unwrap_or(0));
            }
            taken.resize(m.vars.len(), false);
            match new_of.get(&cur) {
                Some(&n) => cur = n,
                None => break,
            }
        }
    }
    let has_states = m.vars.iter().any(|v| v.der.is_some() && !v.eliminated);
    let index = if max_diff > 0 {
        max_diff + 1
    } else {
        u32::from(has_states)
    };
    let (dummies, state_sets) = if max_diff > 0 || !extra.is_empty() {
        select_dummy_derivatives(m, n_model)?
    } else {
        (Vec::new(), Vec::new())
    };
    Ok(IndexInfo {
        index,
        dummies,
        state_sets,
    })
}

/// The variable a derivative belongs to (`x` for `der(der(x))`).
fn base_var(m: &Model, v: VarIx) -> VarIx {
    let mut b = v;
    while let Some(p) = m.vars[b as usize].der_of {
        b = p;
    }
    b
}

/// Pantelides terminates exactly when the equations can be matched to the variables with all
/// derivatives of a variable counted as that variable (Pantelides' theorem); otherwise the
/// system is structurally singular whatever is differentiated. Checking this first gives a
/// diagnosis in terms of the user's variables and equations.
fn check_collapsed_structure(
    m: &mut Model,
    eq_ids: &[u32],
    adj: &[Vec<VarIx>],
    taken: &[bool],
) -> Result<(), Vec<Diagnostic>> {
    match collapsed_singular_parts(m, eq_ids, adj, taken) {
        None => Ok(()),
        Some(parts) => Err(matching::singular_diagnostics(
            m,
            &m.eqs,
            &parts,
            "the model ",
        )),
    }
}

/// The Dulmage–Mendelsohn parts of the structure with every derivative counted as its base
/// variable, or `None` when that structure is nonsingular (then index reduction succeeds).
/// `eq_ids` are the plain equations, `adj` their incidence, `taken` the unit outputs.
pub(crate) fn collapsed_singular_parts(
    m: &mut Model,
    eq_ids: &[u32],
    adj: &[Vec<VarIx>],
    taken: &[bool],
) -> Option<matching::DmParts> {
    let mut collapsed: Vec<Vec<VarIx>> = vec![Vec::new(); adj.len()];
    for &e in eq_ids {
        let mut vs: Vec<VarIx> = adj[e as usize]
            .iter()
            .map(|&v| base_var(m, v))
            .filter(|&b| !taken[b as usize])
            .collect();
        // states appear in equations too (they are not in `adj`, which lists highest
        // derivatives): add them through a full scan of the equation
        if let EqBody::Eq { lhs, rhs } = m.eqs[e as usize].body {
            let mut all = Vec::new();
            m.arena.vars_of(lhs, true, &mut all);
            m.arena.vars_of(rhs, true, &mut all);
            for v in all {
                let sv = &m.vars[v as usize];
                if sv.is_unknown() && sv.kind != VKind::Parameter {
                    let b = base_var(m, v);
                    if !taken[b as usize] {
                        vs.push(b);
                    }
                }
            }
        }
        vs.sort_unstable();
        vs.dedup();
        collapsed[e as usize] = vs;
    }
    let bases: Vec<VarIx> = (0..m.vars.len() as VarIx)
        .filter(|&v| {
            let sv = &m.vars[v as usize];
            sv.is_unknown()
                && sv.kind != VKind::Parameter
                && sv.der_of.is_none()
                && !taken[v as usize]
        })
        .collect();
    let is_base = {
        let mut b = vec![false; m.vars.len()];
        for &v in &bases {
            b[v as usize] = true;
        }
        b
    };
    let allowed = |v: VarIx| is_base[v as usize];
    let mt = matching::maximum_matching(eq_ids, &collapsed, m.vars.len(), &allowed, None);
    if eq_ids.iter().all(|&e| mt.var_of_eq[e as usize] != NONE) {
        return None;
    }
    Some(matching::dulmage_mendelsohn(
        eq_ids, &bases, &collapsed, &mt, &allowed,
    ))
}

/// Differentiating only helps when the coloured equations involve differentiated
/// variables; otherwise the failure is a structural singularity.
fn touches_states(m: &mut Model, eqs: &[u32]) -> bool {
    eqs.iter().any(|&e| {
        let mut vs = Vec::new();
        if let EqBody::Eq { lhs, rhs } = m.eqs[e as usize].body {
            m.arena.vars_of(lhs, true, &mut vs);
            m.arena.vars_of(rhs, true, &mut vs);
        }
        vs.iter().any(|&v| m.vars[v as usize].der.is_some())
    })
}

/// One Pantelides step after a failed augmenting search: every coloured variable gets a
/// derivative, every coloured equation is differentiated, and the matching moves up one
/// derivative (A(j) is matched to B(assign(j))). Returns equation -> its derivative.
fn pantelides_step(
    m: &mut Model,
    vis: &Visit,
    adj: &mut Vec<Vec<VarIx>>,
    mt: &mut Matching,
    depth: &mut HashMap<u32, u32>,
) -> Result<HashMap<u32, u32>, Vec<Diagnostic>> {
    for &v in &vis.vars {
        m.der_var(v);
    }
    let mut new_of = HashMap::default();
    for &e in &vis.eqs {
        let ne = differentiate_equation(m, e)?;
        depth.insert(ne, depth.get(&e).copied().unwrap_or(0) + 1);
        new_of.insert(e, ne);
        let eq = m.eqs[ne as usize].clone();
        adj.push(m.incidence(&eq));
    }
    mt.grow(m.eqs.len(), m.vars.len());
    for &v in &vis.vars {
        let e = mt.eq_of_var[v as usize];
        if let (Some(&be), Some(dv)) = (new_of.get(&e), m.vars[v as usize].der) {
            mt.set(be, dv);
        }
    }
    Ok(new_of)
}

fn differentiate_equation(m: &mut Model, e: u32) -> Result<u32, Vec<Diagnostic>> {
    let eq = m.eqs[e as usize].clone();
    let EqBody::Eq { lhs, rhs } = eq.body else {
        return Err(vec![Diagnostic::error(
            eq.origin.span,
            "index reduction would have to differentiate an algorithm, when-equation or function call with several outputs",
        )
        .with_help("write the constraint as ordinary equations")]);
    };
    let diff = |m: &mut Model, x| {
        m.diff_time(x).map_err(|e| {
            let help = match e.function() {
                Some(f) => format!(
                    "add `annotation(derivative = ...)` to `{f}`, or reformulate the constraint"
                ),
                None => "reformulate the constraint".to_string(),
            };
            vec![Diagnostic::error(
                eq.origin.span,
                format!(
                    "index reduction must differentiate `{}`, but {}",
                    m.eq_text(&eq),
                    m.arena.explain(&e)
                ),
            )
            .with_help(help)]
        })
    };
    let dl = diff(m, lhs)?;
    let dr = diff(m, rhs)?;
    let ne = m.eqs.len() as u32;
    let mut neq = SEq::new(EqBody::Eq { lhs: dl, rhs: dr }, eq.origin.clone());
    neq.diff_of = Some(e);
    m.eqs.push(neq);
    m.eqs[e as usize].diffed = Some(ne);
    Ok(ne)
}

/// Preference for making derivative `v` a dummy (lower = dummy first): the `stateSelect` of
/// its integral (the variable that would stop being a state), then derivatives that index
/// reduction introduced (`v` numbered from `n_model` on: the model never differentiates the
/// integral), then derivatives whose integral is itself a generated derivative (so that model
/// variables like `w` stay states rather than `der(phi)`), then later-declared base variables.
///
/// A variable the modeller differentiates is the one the model's equations are written
/// around, and usually the one of the natural scale: a hysteresis model states `der(B)` for
/// its flux density (about 1 T) and ties the flux `Phi = B*A` (1e-4 Wb) to it; made the state,
/// `Phi` would be integrated with an absolute tolerance of its nominal 1 and lose 7 % of B.
/// [`keep_priority`] of a `StateSelect.always` variable's derivative.
const ALWAYS: u8 = 4;

fn keep_priority(m: &Model, v: VarIx, n_model: usize) -> (u8, u8, u8, i64) {
    let integral = m.vars[v as usize].der_of.unwrap_or(v);
    let mut base = integral;
    while let Some(b) = m.vars[base as usize].der_of {
        base = b;
    }
    let p = match m.vars[integral as usize].state_select {
        StateSelect::Never => 0,
        StateSelect::Avoid => 1,
        StateSelect::Default => 2,
        StateSelect::Prefer => 3,
        StateSelect::Always => ALWAYS,
    };
    let in_model = u8::from((v as usize) < n_model);
    let generated = u8::from(m.vars[integral as usize].der_of.is_none());
    (p, in_model, generated, -(base as i64))
}

/// Matching of the equations `g` to the candidates `h` (sorted, preferred dummies first) that
/// is optimal for the preference order: candidates are offered one by one and kept when an
/// augmenting path exists (greedy on the transversal matroid), so a less preferred dummy is
/// only used when the preferred ones cannot cover the equations.
fn preferred_matching(m: &mut Model, g: &[u32], h: &[VarIx]) -> Matching {
    let g_local: HashMap<u32, u32> = g.iter().enumerate().map(|(i, &e)| (e, i as u32)).collect();
    // left side: candidates (local index), right side: equations (local index)
    let mut adj: Vec<Vec<u32>> = vec![Vec::new(); h.len()];
    let pos: HashMap<VarIx, usize> = h.iter().enumerate().map(|(i, &v)| (v, i)).collect();
    for &e in g {
        let eq = m.eqs[e as usize].clone();
        for v in m.incidence(&eq) {
            if let Some(&i) = pos.get(&v) {
                adj[i].push(g_local[&e]);
            }
        }
    }
    let mut local = Matching::new(h.len(), g.len());
    let mut vis = Visit::default();
    let mut matched = 0;
    for i in 0..h.len() as u32 {
        if matched == g.len() {
            break;
        }
        if local.augment(i, &adj, &|_| true, &mut vis) {
            matched += 1;
        }
    }
    let mut mt = Matching::new(m.eqs.len(), m.vars.len());
    for (i, &v) in h.iter().enumerate() {
        let e = local.var_of_eq[i];
        if e != NONE {
            mt.set(g[e as usize], v);
        }
    }
    mt
}

fn select_dummy_derivatives(
    m: &mut Model,
    n_model: usize,
) -> Result<(Vec<VarIx>, Vec<StateSet>), Vec<Diagnostic>> {
    let mut g: Vec<u32> = (0..m.eqs.len() as u32)
        .filter(|&e| m.eqs[e as usize].diff_of.is_some() && m.eqs[e as usize].diffed.is_none())
        .collect();
    let mut candidates: Option<Vec<bool>> = None;
    let mut dummies = Vec::new();
    let mut sets = Vec::new();
    while !g.is_empty() {
        // candidate variables: highest derivatives at the top level, else the integrals of the
        // previous level's dummies
        let mut h: Vec<VarIx> = Vec::new();
        for &e in &g {
            let eq = m.eqs[e as usize].clone();
            for v in m.incidence(&eq) {
                let sv = &m.vars[v as usize];
                let ok = sv.der_of.is_some()
                    && match &candidates {
                        None => sv.der.is_none(),
                        Some(c) => c.get(v as usize).copied().unwrap_or(false),
                    };
                if ok {
                    h.push(v);
                }
            }
        }
        h.sort_unstable();
        h.dedup();
        h.sort_by_key(|&v| keep_priority(m, v, n_model));
        let mt = preferred_matching(m, &g, &h);
        let mut selected = Vec::new();
        let mut fixed_choice = true;
        for &e in &g {
            let v = mt.var_of_eq[e as usize];
            if v == NONE {
                return Err(no_dummy_error(m, e));
            }
            fixed_choice &= static_coefficient(m, e, v);
            selected.push(v);
        }
        if !fixed_choice {
            // `StateSelect.always` candidates stay states whenever the other candidates can
            // be the dummies of this level: the state-set machinery below only chooses among
            // the rest (otherwise a square varying part would make them dummies).
            let others: Vec<VarIx> = h
                .iter()
                .copied()
                .filter(|&v| keep_priority(m, v, n_model).0 < ALWAYS)
                .collect();
            let covered = |m: &mut Model, hs: &[VarIx]| {
                let mt = preferred_matching(m, &g, hs);
                g.iter().all(|&e| mt.var_of_eq[e as usize] != NONE)
            };
            let h_use = if others.len() < h.len() && covered(m, &others) {
                others
            } else {
                h.clone()
            };
            let n_sets = sets.len();
            selected = select_with_state_sets(m, &g, &h_use, &mut sets)?;
            // without a state set the choice is static: check it like a fixed one
            if sets.len() == n_sets {
                selected = crate::dummy_pivots::regular_selection(m, &g, &h_use, &selected);
            }
        } else {
            selected = crate::dummy_pivots::regular_selection(m, &g, &h, &selected);
        }
        for &v in &selected {
            m.vars[v as usize].dummy = true;
            dummies.push(v);
        }
        let next_g: Vec<u32> = g
            .iter()
            .filter_map(|&e| m.eqs[e as usize].diff_of)
            .filter(|&p| m.eqs[p as usize].diff_of.is_some())
            .collect();
        let mut next = vec![false; m.vars.len()];
        for b in selected.iter().filter_map(|&v| m.vars[v as usize].der_of) {
            if m.vars[b as usize].der_of.is_some() {
                next[b as usize] = true;
            }
        }
        candidates = Some(next);
        g = next_g;
    }
    crate::state_sets::add_selection_clause(m, &sets);
    Ok((dummies, sets))
}

fn no_dummy_error(m: &Model, e: u32) -> Vec<Diagnostic> {
    let eq = &m.eqs[e as usize];
    vec![Diagnostic::error(
        eq.origin.span,
        format!(
            "index reduction failed: no derivative can be chosen as dummy for the differentiated constraint `{}`",
            m.eq_text(eq)
        ),
    )
    .with_help("check the constraint equations of this component for redundancy")]
}

/// The dummies of one level when no fixed choice is valid for all of it. Equations that can
/// be solved for a candidate with a coefficient that cannot vanish keep a fixed dummy
/// (candidates that no varying coefficient touches are offered first, so that the varying
/// part keeps as many candidates as possible); the remaining equations and the candidates
/// they mention become a state set chosen at run time ([`crate::state_sets`]), unless there
/// are exactly as many candidates as equations (then there is nothing to choose: all are
/// dummies, and the constraint Jacobian's regularity is the model's own property, as for the
/// rotation matrix of a machine's air gap).
fn select_with_state_sets(
    m: &mut Model,
    g: &[u32],
    h: &[VarIx],
    sets: &mut Vec<StateSet>,
) -> Result<Vec<VarIx>, Vec<Diagnostic>> {
    let pos: HashMap<VarIx, usize> = h.iter().enumerate().map(|(i, &v)| (v, i)).collect();
    let mut fixed_adj: Vec<Vec<u32>> = vec![Vec::new(); h.len()];
    let mut any_adj: Vec<Vec<u32>> = vec![Vec::new(); h.len()];
    let mut varying = vec![false; h.len()];
    for (ge, &e) in g.iter().enumerate() {
        let eq = m.eqs[e as usize].clone();
        for v in m.incidence(&eq) {
            let Some(&i) = pos.get(&v) else { continue };
            any_adj[i].push(ge as u32);
            if static_coefficient(m, e, v) {
                fixed_adj[i].push(ge as u32);
            } else {
                varying[i] = true;
            }
        }
    }
    let mut order: Vec<usize> = (0..h.len()).collect();
    order.sort_by_key(|&i| varying[i]);
    // 1. as many equations as possible get a fixed-coefficient dummy (greedy over the
    //    candidates in preference order: a maximum matching over the fixed edges)
    let mut fixed = Matching::new(h.len(), g.len());
    let mut vis = Visit::default();
    for &i in &order {
        fixed.augment(i as u32, &fixed_adj, &|_| true, &mut vis);
    }
    // 2. the other equations are matched over any edge; augmenting paths may move a fixed
    //    equation to another candidate, so the classification follows the final matching
    let mut eq_adj: Vec<Vec<VarIx>> = vec![Vec::new(); g.len()];
    for (i, es) in any_adj.iter().enumerate() {
        for &ge in es {
            eq_adj[ge as usize].push(i as VarIx);
        }
    }
    let mut full = Matching::new(g.len(), h.len());
    for (i, &ge) in fixed.var_of_eq.iter().enumerate() {
        if ge != NONE {
            full.set(ge, i as VarIx);
        }
    }
    for ge in 0..g.len() as u32 {
        if full.var_of_eq[ge as usize] == NONE && !full.augment(ge, &eq_adj, &|_| true, &mut vis) {
            return Err(no_dummy_error(m, g[ge as usize]));
        }
    }
    let is_fixed_edge = |ge: usize, i: usize| fixed_adj[i].contains(&(ge as u32));
    let in_g_d: Vec<bool> = (0..g.len())
        .map(|ge| !is_fixed_edge(ge, full.var_of_eq[ge] as usize))
        .collect();
    let g_d: Vec<usize> = (0..g.len()).filter(|&ge| in_g_d[ge]).collect();
    let mut selected: Vec<VarIx> = (0..g.len())
        .filter(|&ge| !in_g_d[ge])
        .map(|ge| h[full.var_of_eq[ge] as usize])
        .collect();
    // the set's candidates: what the varying equations mention and no fixed equation took
    let h_d: Vec<usize> = (0..h.len())
        .filter(|&i| {
            let owner = full.eq_of_var[i];
            (owner == NONE || in_g_d[owner as usize])
                && any_adj[i].iter().any(|&ge| in_g_d[ge as usize])
        })
        .collect();
    let dx: Vec<VarIx> = h_d.iter().map(|&i| h[i]).collect();
    if dx.len() > g_d.len() {
        if dx.len() > 62 {
            let eq = &m.eqs[g[g_d[0]] as usize];
            return Err(vec![Diagnostic::error(
                eq.origin.span,
                format!(
                    "dynamic state selection for `{}` would choose among {} candidates; at most 62 are supported",
                    m.eq_text(eq),
                    dx.len()
                ),
            )
            .with_help("set stateSelect=StateSelect.prefer or .avoid on the variables of this constraint to narrow the choice")]);
        }
        let constraints: Vec<u32> = g_d.iter().map(|&ge| g[ge]).collect();
        // `h` is sorted from the preferred dummy to the preferred state
        let order: Vec<VarIx> = h.iter().copied().filter(|v| dx.contains(v)).collect();
        let mut dx_sorted = dx.clone();
        dx_sorted.sort_unstable();
        let through = unknowns_through(g, h, &g_d, &h_d, &full, &any_adj);
        sets.push(build_state_set(
            m,
            &constraints,
            &dx_sorted,
            &order,
            &through,
        ));
    }
    selected.extend(dx);
    Ok(selected)
}

/// The level's unknowns that a state set's constraints reach through equations with fixed
/// dummies, and those equations: from the unknowns the constraints mention besides the
/// candidates, the equation each is solved from, then the unknowns that equation mentions,
/// and so on. Unknowns no equation of the level takes are states' derivatives (known to the
/// set) and end the walk. Past [`MAX_THROUGH`] unknowns the set keeps the written Jacobian
/// (an empty walk): its cost is paid at every step.
fn unknowns_through(
    g: &[u32],
    h: &[VarIx],
    g_d: &[usize],
    h_d: &[usize],
    full: &Matching,
    any_adj: &[Vec<u32>],
) -> Through {
    let mut eq_vars: Vec<Vec<usize>> = vec![Vec::new(); g.len()];
    for (i, es) in any_adj.iter().enumerate() {
        for &ge in es {
            eq_vars[ge as usize].push(i);
        }
    }
    let mut seen_var = vec![false; h.len()];
    for &i in h_d {
        seen_var[i] = true;
    }
    let mut seen_eq = vec![false; g.len()];
    for &ge in g_d {
        seen_eq[ge] = true;
    }
    let mut queue: Vec<usize> = g_d.to_vec();
    let mut through = Through::default();
    while let Some(ge) = queue.pop() {
        for &i in &eq_vars[ge] {
            if seen_var[i] {
                continue;
            }
            seen_var[i] = true;
            let owner = full.eq_of_var[i];
            if owner == NONE || seen_eq[owner as usize] {
                continue;
            }
            seen_eq[owner as usize] = true;
            through.vars.push(h[i]);
            through.eqs.push(g[owner as usize]);
            if through.vars.len() > MAX_THROUGH {
                return Through::default();
            }
            queue.push(owner as usize);
        }
    }
    through
}

/// At most this many intermediate unknowns enter a state set's Jacobian.
const MAX_THROUGH: usize = 48;

/// A fixed dummy is valid when its coefficient in the equation cannot vanish during the
/// simulation; we accept constant and parameter coefficients, and the residues of
/// connection loops.
fn static_coefficient(m: &mut Model, e: u32, v: VarIx) -> bool {
    let EqBody::Eq { lhs, rhs } = m.eqs[e as usize].body else {
        return true;
    };
    let r = m.arena.sub(lhs, rhs);
    let coef = m.arena.diff_var(r, v, &mut HashMap::default());
    let Ok(coef) = coef else { return true };
    if m.is_parameter_expr(coef) && m.arena.as_const(coef) != Some(0.0) {
        return true;
    }
    let mut root = e;
    while let Some(p) = m.eqs[root as usize].diff_of {
        root = p;
    }
    // The residue of a connection loop is zero where both sides of the connection agree,
    // and equalityConstraint functions are regular there (`sin(a - b)` has the coefficient
    // `cos(0) = 1`): the coefficient keeps away from zero on the consistent solution.
    m.eqs[root as usize].loop_residue
}

fn count_error(
    m: &mut Model,
    eq_ids: &[u32],
    unknowns: &[VarIx],
    adj: &[Vec<VarIx>],
    taken: &[bool],
) -> Vec<Diagnostic> {
    let n_units: usize = m
        .eqs
        .iter()
        .filter_map(|e| e.fixed_outputs())
        .map(|o| o.len())
        .sum();
    let n_eq = eq_ids.len() + n_units;
    let n_var = unknowns.len() + taken.iter().filter(|&&t| t).count();
    let (more, fix) = if n_eq > n_var {
        (
            "equations than unknowns",
            "remove the extra equations or turn parameters into variables",
        )
    } else {
        ("unknowns than equations", "add equations (or bindings) for the undetermined variables, or declare known values as parameters")
    };
    let mut d = Diagnostic::error(
        moss_syntax::Span::DUMMY,
        format!(
            "model `{}` is not balanced: {} equations, {} unknowns ({} more {})",
            m.name,
            n_eq,
            n_var,
            n_eq.abs_diff(n_var),
            more
        )
        .replace(
            "(1 more equations than unknowns)",
            "(1 more equation than unknowns)",
        )
        .replace(
            "(1 more unknowns than equations)",
            "(1 more unknown than equations)",
        ),
    )
    .with_help(fix);
    let mut out = Vec::new();
    let tk = taken.to_vec();
    let allowed = |v: VarIx| highest_unknown(m, v, &tk);
    let mt = matching::maximum_matching(eq_ids, adj, m.vars.len(), &allowed, None);
    let parts = matching::dulmage_mendelsohn(eq_ids, unknowns, adj, &mt, &allowed);
    let details = matching::singular_diagnostics(m, &m.eqs, &parts, "the system ");
    if details.is_empty() {
        d = d.with_note(
            "a count mismatch without a structurally singular part: check the unit equations",
        );
    }
    out.push(d);
    out.extend(details);
    out
}

fn singular_error(
    m: &mut Model,
    eq_ids: &[u32],
    adj: &[Vec<VarIx>],
    taken: &[bool],
    depth: u32,
) -> Vec<Diagnostic> {
    let tk = taken.to_vec();
    let unknowns: Vec<VarIx> = (0..m.vars.len() as VarIx)
        .filter(|&v| highest_unknown(m, v, &tk))
        .collect();
    let allowed = |v: VarIx| highest_unknown(m, v, &tk);
    let _ = eq_ids;
    let active: Vec<u32> = (0..m.eqs.len() as u32)
        .filter(|&e| {
            let eq = &m.eqs[e as usize];
            matches!(eq.body, EqBody::Eq { .. }) && eq.diffed.is_none()
        })
        .collect();
    let mt = matching::maximum_matching(&active, adj, m.vars.len(), &allowed, None);
    let parts = matching::dulmage_mendelsohn(&active, &unknowns, adj, &mt, &allowed);
    let mut out = matching::singular_diagnostics(m, &m.eqs, &parts, "the model ");
    if depth >= MAX_DIFFERENTIATIONS {
        out.insert(
            0,
            Diagnostic::error(
                moss_syntax::Span::DUMMY,
                format!("index reduction gave up after {depth} differentiations"),
            ),
        );
    }
    if out.is_empty() {
        out.push(Diagnostic::error(
            moss_syntax::Span::DUMMY,
            "the model is structurally singular",
        ));
    }
    out
}

#[cfg(test)]
mod discrete_matching_tests {
    use crate::testutil::ModelBuilder;
    use moss_frontend::flat::ScalarType;

    /// A discrete equation is solved for its discrete variable only, and a Real equation
    /// never for the Integer it reads: otherwise an augmenting path of index reduction runs
    /// through `phase = if ...` and differentiates it into `0 = 0`.
    #[test]
    fn discrete_and_real_equations_match_their_own_kind() {
        let mut b = ModelBuilder::new();
        b.vars("p h d", "");
        b.discrete("phase", ScalarType::Integer);
        b.eq("phase = if h < 1.5 or p > 3 then 2 else 1");
        b.eq("d = p/h*(1 + 0.001*phase)");
        let mut m = b.model();
        let names = |m: &crate::model::Model, vs: Vec<u32>| -> Vec<String> {
            let mut n: Vec<String> = vs
                .iter()
                .map(|&v| m.vars[v as usize].name.clone())
                .collect();
            n.sort();
            n
        };
        let e0 = m.eqs[0].clone();
        let i0 = super::solvable_incidence(&mut m, &e0);
        assert_eq!(names(&m, i0), ["phase"]);
        let e1 = m.eqs[1].clone();
        let i1 = super::solvable_incidence(&mut m, &e1);
        assert_eq!(names(&m, i1), ["d", "h", "p"]);
    }
}
