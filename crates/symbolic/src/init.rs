//! The initialization system: all equations of the simulation system (including the
//! differentiated ones from index reduction), the initial equations, `v = start` for every
//! continuous variable with `fixed=true`, and the when-equations: branches containing
//! `initial()` contribute their equations; variables assigned only in other branches are
//! held at their start values (`pre(v) = start` for discrete variables), as are the
//! variables of algorithms made only of when-statements that do not fire initially (unless an
//! initial algorithm computes them). States, derivatives
//! and `fixed=false` parameters are unknowns. `der(x) = 0` initial equations (steady state)
//! are ordinary equations here. `homotopy(actual, simplified)` was replaced by `actual` during
//! conversion.
//!
//! The `pre` values of discrete variables are the start values, except for those variables
//! whose `pre(v)` an initial equation mentions (`pre(newActive) = pre(localActive)` of the
//! MSL's state graph steps, `pre(t_start) = time`): there `pre(v)` is an unknown of its own
//! (a hidden variable `pre(v)` standing for it in every initialization equation), with
//! `pre(v) = start` as a start-value equation that the initial equations override, and a
//! variable held by an inactive `when` is `v = pre(v)` (spec 8.6).
//!
//! Balancing: equations generated from start values are matched last and unknowns that are
//! states are matched last, so that
//! - an under-determined system fixes free states (then other variables) at their start
//!   values, with a warning naming them;
//! - an over-determined system drops redundant start-value or initial equations, with a
//!   warning naming them; each dropped equation becomes a warning-level `Assert` at the end of
//!   the initialization blocks, so an inconsistent one is reported at run time.

use crate::ir::{ExprId, Node, VarIx};
use crate::matching::{self, NONE};
use crate::model::{Effect, EqBody, Model, SEq, SVar, VKind, WhenItem};
use crate::solve::{self, LoopStats, WBlock};
use moss_frontend::flat::{AssertLevel, StateSelect, Statement};
use moss_syntax::Diagnostic;
use rustc_hash::FxHashMap as HashMap;

fn start_expr(m: &mut Model, v: VarIx) -> ExprId {
    match m.vars[v as usize].start {
        Some(s) => s,
        None => m.arena.zero(),
    }
}

fn start_eq(m: &mut Model, v: VarIx) -> SEq {
    let lhs = m.arena.var(v);
    let rhs = start_expr(m, v);
    let mut eq = SEq::new(EqBody::Eq { lhs, rhs }, m.vars[v as usize].origin.clone());
    eq.from_start = true;
    eq
}

/// Equations of the initialization problem (before balancing), the index of the first one
/// that comes from an initial equation or a start value (those may be dropped), and the
/// index of the first default `pre(v) = start` (those are last, and dropped silently: an
/// initial equation saying otherwise is the normal case, not a conflict).
fn collect_equations(m: &mut Model) -> (Vec<SEq>, usize, usize) {
    let mut eqs = Vec::new();
    let sim = m.eqs.clone();
    let by_initial_units = outputs_of_initial_units(m);
    let pre_of = pre_unknowns(m);
    // a variable that keeps its `pre` value during initialization
    let held = |m: &mut Model, v: VarIx| match pre_of.get(&v) {
        Some(&p) => {
            let lhs = m.arena.var(v);
            let rhs = m.arena.var(p);
            SEq::new(EqBody::Eq { lhs, rhs }, m.vars[v as usize].origin.clone())
        }
        None => start_eq(m, v),
    };
    for eq in sim {
        match &eq.body {
            // an algorithm made of when-statements that do not fire at initialization: its
            // variables keep their `pre` values, held at their start values unless an initial
            // algorithm or initial equation computes them
            EqBody::Algorithm { index, outputs, .. }
                if inactive_at_initialization(&m.algorithms[*index]) =>
            {
                for &v in outputs {
                    if !by_initial_units[v as usize] {
                        eqs.push(held(m, v));
                    }
                }
            }
            EqBody::When(branches) => {
                let mut assigned_initially = Vec::new();
                for b in branches.iter().filter(|b| b.initial) {
                    for it in &b.items {
                        match it {
                            WhenItem::Assign { var, expr } => {
                                let lhs = m.arena.var(*var);
                                eqs.push(SEq::new(
                                    EqBody::Eq { lhs, rhs: *expr },
                                    eq.origin.clone(),
                                ));
                                assigned_initially.push(*var);
                            }
                            WhenItem::CallOutputs {
                                outputs,
                                func,
                                args,
                            } if !outputs.is_empty() => {
                                eqs.push(SEq::new(
                                    EqBody::Call {
                                        outputs: outputs.clone(),
                                        func: func.clone(),
                                        args: args.clone(),
                                    },
                                    eq.origin.clone(),
                                ));
                                assigned_initially.extend(outputs.iter().flatten());
                            }
                            _ => {}
                        }
                    }
                }
                for v in eq.fixed_outputs().unwrap_or_default() {
                    if !assigned_initially.contains(&v) && !by_initial_units[v as usize] {
                        eqs.push(held(m, v));
                    }
                }
            }
            _ => eqs.push(eq),
        }
    }
    let first_initial = eqs.len();
    eqs.extend(m.init_eqs.clone());
    // start values of state-set candidates computed from their constraints at the first
    // choice come last, so that they are the ones dropped when the start values
    // over-determine the problem
    let last = crate::state_sets::start_values_to_drop_first(m);
    for deferred in [false, true] {
        for v in 0..m.vars.len() as VarIx {
            let sv = &m.vars[v as usize];
            if sv.kind == VKind::Continuous
                && !sv.eliminated
                && sv.fixed == Some(true)
                && last[v as usize] == deferred
            {
                eqs.push(start_eq(m, v));
            }
        }
    }
    let first_pre_default = eqs.len();
    if !pre_of.is_empty() {
        let mut pre_of: Vec<(VarIx, VarIx)> = pre_of.into_iter().collect();
        pre_of.sort_unstable();
        substitute_pre(m, &mut eqs, &pre_of);
        for &(v, p) in &pre_of {
            // `pre(v) = start`, shown as written
            let mut eq = start_eq(m, p);
            let pre = m.arena.intern(Node::Pre(v));
            if let EqBody::Eq { rhs, .. } = eq.body {
                eq.shown = Some((pre, rhs));
            }
            eqs.push(eq);
        }
    }
    (eqs, first_initial, first_pre_default)
}

/// The discrete variables whose `pre` value is an unknown of the initialization problem
/// (those an initial equation mentions in `pre(...)`), each mapped to the hidden variable
/// created to stand for it.
fn pre_unknowns(m: &mut Model) -> HashMap<VarIx, VarIx> {
    let mut mentioned = Vec::new();
    for eq in &m.init_eqs {
        match &eq.body {
            EqBody::Eq { lhs, rhs } => {
                m.arena.pre_vars_of(*lhs, &mut mentioned);
                m.arena.pre_vars_of(*rhs, &mut mentioned);
            }
            EqBody::Call { args, outputs, .. } => {
                for &a in args {
                    m.arena.pre_vars_of(a, &mut mentioned);
                }
                if eq.pre_outputs {
                    mentioned.extend(outputs.iter().flatten().copied());
                }
            }
            _ => {}
        }
    }
    mentioned.sort_unstable();
    mentioned.dedup();
    let mut out = HashMap::default();
    for v in mentioned {
        let sv = &m.vars[v as usize];
        if sv.kind != VKind::Discrete || sv.eliminated {
            continue;
        }
        let mut p = SVar::new(format!("pre({})", sv.name), VKind::Discrete, sv.ty);
        p.start = sv.start;
        p.hidden = true;
        p.protected_from_alias = true;
        p.origin = sv.origin.clone();
        p.description = format!("pre value of {} at initialization", sv.name);
        out.insert(v, m.add_var(p));
    }
    out
}

/// Replace `pre(v)` by its unknown in every equation of the initialization problem (the
/// `shown` text keeps `pre(v)`). Event relations are rewritten too: initialization
/// evaluates them live.
fn substitute_pre(m: &mut Model, eqs: &mut [SEq], pre_of: &[(VarIx, VarIx)]) {
    let map: HashMap<VarIx, VarIx> = pre_of.iter().copied().collect();
    let mut memo = HashMap::default();
    let mut leaf = |a: &mut crate::ir::Arena, n: &Node| match n {
        Node::Pre(v) => map.get(v).map(|&p| a.var(p)),
        _ => None,
    };
    for eq in eqs.iter_mut() {
        if eq.pre_outputs {
            if let EqBody::Call { outputs, .. } = &mut eq.body {
                for o in outputs.iter_mut().flatten() {
                    if let Some(&p) = map.get(o) {
                        *o = p;
                    }
                }
            }
            eq.pre_outputs = false;
        }
        if matches!(eq.body, EqBody::Eq { .. } | EqBody::Call { .. }) {
            let arena = &mut m.arena;
            crate::model::map_exprs(&mut eq.body, &mut |e| {
                arena.substitute(e, &mut leaf, false, &mut memo)
            });
        }
    }
}

/// Variables computed by units of the initial equations (initial algorithms, calls).
fn outputs_of_initial_units(m: &Model) -> Vec<bool> {
    let mut out = vec![false; m.vars.len()];
    for eq in m.init_eqs.iter().filter(|e| !e.pre_outputs) {
        for v in eq.fixed_outputs().unwrap_or_default() {
            out[v as usize] = true;
        }
        // `r = f(...)` for a discrete `r` held by an inactive `when`: the initial equation
        // gives its value, so `r = pre(r)` is not added (its `pre` follows from `r`). With
        // `fixed = true`, `pre(r) = r.start` is given (spec 8.6): `r` is held at its start
        // value and the initial equation determines what it names on its other side.
        if let EqBody::Eq { lhs, .. } = &eq.body {
            if let Node::Var(v) = *m.arena.node(*lhs) {
                let sv = &m.vars[v as usize];
                if sv.kind == VKind::Discrete && sv.fixed != Some(true) {
                    out[v as usize] = true;
                }
            }
        }
    }
    out
}

/// Is an algorithm only when-statements whose conditions do not enable them at initialization
/// ([`moss_frontend::flat::Expr::enables_at_initialization`])? Then it computes nothing
/// during initialization.
fn inactive_at_initialization(stmts: &[Statement]) -> bool {
    stmts.iter().all(|s| match s {
        Statement::When { branches, .. } => {
            branches.iter().all(|(c, _)| !c.enables_at_initialization())
        }
        _ => false,
    })
}

/// Build and causalize the initialization system.
pub fn initialization(
    m: &mut Model,
    is_state: &[bool],
    stats: &mut LoopStats,
) -> Result<(Vec<WBlock>, Vec<SEq>), Vec<Diagnostic>> {
    let (mut eqs, first_initial, first_pre_default) = collect_equations(m);
    let mut unknown: Vec<bool> = m.vars.iter().map(|v| v.is_unknown()).collect();
    unknown.resize(m.vars.len(), false);
    balance(
        m,
        &mut eqs,
        (first_initial, first_pre_default),
        &unknown,
        is_state,
    )?;
    let blocks = solve::causalize(
        m,
        &eqs,
        &unknown,
        "the initialization problem ",
        true,
        stats,
    )?;
    Ok((blocks, eqs))
}

fn balance(
    m: &mut Model,
    eqs: &mut Vec<SEq>,
    (first_initial, first_pre_default): (usize, usize),
    unknown: &[bool],
    is_state: &[bool],
) -> Result<(), Vec<Diagnostic>> {
    let state = |v: VarIx| is_state.get(v as usize).copied().unwrap_or(false);
    let mut taken = vec![false; m.vars.len()];
    for eq in eqs.iter() {
        for v in eq.fixed_outputs().unwrap_or_default() {
            taken[v as usize] = true;
        }
    }
    let mut adj: Vec<Vec<VarIx>> = Vec::with_capacity(eqs.len());
    for eq in eqs.iter() {
        let mut inc = if eq.fixed_outputs().is_some() {
            Vec::new()
        } else {
            m.incidence(eq)
        };
        inc.retain(|&v| unknown[v as usize]);
        // non-states first: augmenting paths then leave states unmatched when there is a choice
        inc.sort_by_key(|&v| state(v));
        adj.push(inc);
    }
    let order: Vec<u32> =
        (0..eqs.len() as u32)
            .filter(|&e| eqs[e as usize].fixed_outputs().is_none() && !eqs[e as usize].from_start)
            .chain((0..eqs.len() as u32).filter(|&e| {
                eqs[e as usize].fixed_outputs().is_none() && eqs[e as usize].from_start
            }))
            .collect();
    let allowed = |v: VarIx| unknown[v as usize] && !taken[v as usize];
    // Two phases, because shortest augmenting paths ignore the preference order of `adj`:
    // the equations of the model are first matched to non-states only; augmenting paths
    // never unmatch a variable, so every state left free afterwards could not be avoided,
    // and an under-determined system fixes states at their start values, not derivatives.
    let model_eqs: Vec<u32> = order
        .iter()
        .copied()
        .filter(|&e| (e as usize) < first_initial && !eqs[e as usize].from_start)
        .collect();
    // A variable with `stateSelect` prefer or always and a start value that is not a state
    // (a tank's `level` beside its states `m` and `U`) is what the modeller meant to start
    // from: the tools that make it a state fix it at its start value when initialization is
    // under-determined, so it is left free before the states are (its equations then compute
    // the states, e.g. the mass from the level).
    let preferred = |v: VarIx| {
        let sv = &m.vars[v as usize];
        !state(v)
            && sv.kind == VKind::Continuous
            && sv.state_select >= StateSelect::Prefer
            && sv.start.is_some()
    };
    let ordinary = |v: VarIx| allowed(v) && !state(v) && !preferred(v);
    let mut phase1 = matching::maximum_matching(&model_eqs, &adj, m.vars.len(), &ordinary, None);
    if (0..m.vars.len() as VarIx).any(|v| allowed(v) && preferred(v)) {
        let not_preferred = |v: VarIx| allowed(v) && !preferred(v);
        phase1 = matching::maximum_matching(
            &model_eqs,
            &adj,
            m.vars.len(),
            &not_preferred,
            Some(phase1),
        );
    }
    // Then the initial equations, before any start-value equation: the greedy pass of one
    // matching over both would let `pre(v) = start` take `pre(v)` before the initial
    // equation that determines it through a chain (`active = true`, `active = pre(newActive)`,
    // `pre(newActive) = pre(active)`) is reached, and augmenting paths never unmatch an
    // equation, so the initial equation would be dropped instead.
    let given: Vec<u32> = order
        .iter()
        .copied()
        .filter(|&e| !eqs[e as usize].from_start)
        .collect();
    // (still leaving the preferred variables for last where the initial equations allow)
    let not_preferred = |v: VarIx| allowed(v) && !preferred(v);
    let phase2 =
        matching::maximum_matching(&given, &adj, m.vars.len(), &not_preferred, Some(phase1));
    let phase2 = matching::maximum_matching(&given, &adj, m.vars.len(), &allowed, Some(phase2));
    let mt = matching::maximum_matching(&order, &adj, m.vars.len(), &allowed, Some(phase2));
    // over-determined: drop unmatched start/initial equations
    let mut dropped = Vec::new();
    let mut checks = Vec::new();
    let mut keep = vec![true; eqs.len()];
    for &e in &order {
        if mt.var_of_eq[e as usize] != NONE {
            continue;
        }
        let eq = &eqs[e as usize];
        let droppable = eq.from_start || e as usize >= first_initial;
        if !droppable {
            continue;
        }
        keep[e as usize] = false;
        if e as usize >= first_pre_default {
            continue;
        }
        let text = m.eq_text(eq);
        if let EqBody::Eq { lhs, rhs } = eq.body {
            checks.push(consistency_check(m, lhs, rhs, &text, eq.origin.clone()));
        }
        dropped.push(text);
    }
    if !dropped.is_empty() {
        m.warnings.push(format!(
            "the initialization problem is over-determined; dropping (checked after initialization): {}",
            dropped.join("; ")
        ));
    }
    // under-determined: fix unmatched unknowns at their start values (states first)
    let mut free: Vec<VarIx> = (0..m.vars.len() as VarIx)
        .filter(|&v| allowed(v) && mt.eq_of_var[v as usize] == NONE)
        .collect();
    free.sort_by_key(|&v| (!state(v), m.vars[v as usize].start.is_none(), v));
    let mut fixed_names = Vec::new();
    let mut new_eqs = Vec::new();
    for v in free {
        let st = start_expr(m, v);
        fixed_names.push(format!("{} = {}", m.vars[v as usize].name, m.text(st)));
        new_eqs.push(start_eq(m, v));
    }
    if !fixed_names.is_empty() {
        m.warnings.push(format!(
            "the initialization problem is under-determined; fixing {} variable(s) at start values: {} (add initial equations or fixed=true to choose)",
            fixed_names.len(),
            list_with_limit(&fixed_names, WARNING_LIST_MAX)
        ));
    }
    let mut i = 0;
    eqs.retain(|_| {
        let k = keep[i];
        i += 1;
        k
    });
    eqs.extend(new_eqs);
    eqs.extend(checks);
    Ok(())
}

/// A dropped redundant equation is checked after initialization: a warning-level assert
/// `abs(lhs - rhs) <= 1e-6*(1 + abs(lhs) + abs(rhs))`.
fn consistency_check(
    m: &mut Model,
    lhs: ExprId,
    rhs: ExprId,
    text: &str,
    origin: moss_frontend::flat::Origin,
) -> SEq {
    let a = &mut m.arena;
    let d = a.sub(lhs, rhs);
    let ad = a.call("abs", vec![d]);
    let al = a.call("abs", vec![lhs]);
    let ar = a.call("abs", vec![rhs]);
    let one = a.one();
    let s1 = a.add(one, al);
    let s2 = a.add(s1, ar);
    let tol = a.num(1e-6);
    let bound = a.mul(tol, s2);
    let cond = a.rel(crate::ir::Rel::Le, ad, bound, false);
    let msg = a.intern(crate::ir::Node::Str(
        format!("initial equation `{text}` was dropped as redundant but is not satisfied").into(),
    ));
    SEq::new(
        EqBody::Effect(Effect::Assert {
            cond,
            msg,
            level: AssertLevel::Warning,
        }),
        origin,
    )
}

/// Names a warning lists before it says how many more there are: a chain of 10,000 springs
/// must not print a 400 kB line.
const WARNING_LIST_MAX: usize = 20;

/// `a, b, c` for up to `max` items, else the first `max` and `... and N more`.
fn list_with_limit(items: &[String], max: usize) -> String {
    if items.len() <= max {
        return items.join(", ");
    }
    format!(
        "{}, ... and {} more",
        items[..max].join(", "),
        items.len() - max
    )
}
