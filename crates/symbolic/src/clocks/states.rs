//! Discretization of clocked partitions after index reduction (spec 16.8.2: the
//! continuous-time equations of a partition with a solver method are transformed to state
//! space form, then each state is integrated from tick to tick).
//!
//! The clock lowering ([`super::lower`]) leaves `der(x)` of these partitions as it is, so
//! index reduction sees the partition like any continuous part of the model: constraints
//! between differentiated variables (an inverse model whose output is a filtered signal,
//! `c = filter.x[3]`) are differentiated and the dummy derivatives chosen with `stateSelect`
//! and `fixed` as everywhere else. This pass then turns each state `x` of a discretized
//! partition into an algebraic variable computed at the ticks:
//!
//! - `$previous(x)` and, for the methods that use it, `$previous(der(x))` are discrete
//!   variables assigned in the partition's `when tick` clause from the values before the
//!   tick (their start values at the first tick);
//! - `x = if ticks <= 1 then $previous(x) else step`, with the method's step
//!   ([`super::discretize::step`]);
//! - `der(x)` becomes an algebraic variable of the partition's equations (like a dummy
//!   derivative), so that nothing in the partition is integrated by the simulator.
//!
//! The partition's variables lose their `fixed` attributes here (they belong to
//! `$previous`, not to the initialization problem), after alias elimination has moved them
//! to the variables it keeps.

use super::discretize::SolverMethod;
use super::lower::DiscretizedPartition;
use crate::ir::{ExprId, Node, Rel, VarIx};
use crate::model::{EqBody, Model, SEq, SVar, VKind, WhenItem};
use crate::program::ValueType;
use moss_syntax::Diagnostic;
use std::collections::HashSet;

/// Discretizes the states of every partition of `parts` (see the module documentation);
/// returns the variables discretized.
pub fn discretize_states(
    m: &mut Model,
    parts: &[DiscretizedPartition],
) -> Result<Vec<VarIx>, Vec<Diagnostic>> {
    let mut all = Vec::new();
    for part in parts {
        all.extend(discretize_partition(m, part)?);
    }
    Ok(all)
}

fn discretize_partition(
    m: &mut Model,
    part: &DiscretizedPartition,
) -> Result<Vec<VarIx>, Vec<Diagnostic>> {
    let members: HashSet<&str> = part.members.iter().map(String::as_str).collect();
    let (Some(&ticks), Some(&step)) = (m.by_name.get(&part.ticks), m.by_name.get(&part.step))
    else {
        // the clock pass created these variables; a missing one is a bug of that pass
        return Err(vec![Diagnostic::error(
            Default::default(),
            format!(
                "internal error: the tick variables of a discretized clocked partition ({}) are missing",
                part.tick
            ),
        )]);
    };
    let Some(when_eq) = tick_clause(m, ticks) else {
        return Err(vec![Diagnostic::error(
            Default::default(),
            format!(
                "internal error: the `when {}` clause of a discretized clocked partition is missing",
                part.tick
            ),
        )]);
    };
    let states: Vec<VarIx> = (0..m.vars.len() as VarIx)
        .filter(|&v| {
            let sv = &m.vars[v as usize];
            !sv.eliminated
                && sv.kind == VKind::Continuous
                && members.contains(sv.name.as_str())
                && sv.der.is_some_and(|d| !m.vars[d as usize].dummy)
        })
        .collect();
    let mut items = Vec::new();
    let mut eqs = Vec::new();
    for &x in &states {
        let (item_list, eq) = discretize_state(m, x, part.solver, ticks, step);
        items.extend(item_list);
        eqs.push(eq);
    }
    if let EqBody::When(branches) = &mut m.eqs[when_eq].body {
        branches[0].items.extend(items);
    }
    m.eqs.extend(eqs);
    for sv in m.vars.iter_mut() {
        if members.contains(sv.name.as_str()) {
            sv.fixed = None;
        }
    }
    Ok(states)
}

/// The `when tick` clause the clock pass made for the partition: the one that counts its
/// ticks (its condition may have become an alias of the base clock's tick).
fn tick_clause(m: &Model, ticks: VarIx) -> Option<usize> {
    m.eqs.iter().position(|eq| match &eq.body {
        EqBody::When(branches) => {
            branches.len() == 1
                && branches[0]
                    .items
                    .iter()
                    .any(|it| matches!(it, WhenItem::Assign { var, .. } if *var == ticks))
        }
        _ => false,
    })
}

/// The `when` assignments and the equation that discretize state `x`.
fn discretize_state(
    m: &mut Model,
    x: VarIx,
    method: SolverMethod,
    ticks: VarIx,
    step: VarIx,
) -> (Vec<WhenItem>, SEq) {
    let d = m.vars[x as usize]
        .der
        .expect("a state has a derivative variable");
    let origin = m.vars[x as usize].origin.clone();
    let name = m.vars[x as usize].name.clone();
    let start = m.vars[x as usize].start;
    let start_given = m.vars[x as usize].start_given;
    let x_prev = previous_variable(
        m,
        &format!("$previous({name})"),
        start,
        start_given,
        &origin,
    );
    let mut items = vec![previous_update(m, x_prev, x, ticks)];
    let d_prev = if method.uses_previous_derivative() {
        let zero = m.arena.zero();
        let p = previous_variable(
            m,
            &format!("$previous(der({name}))"),
            Some(zero),
            false,
            &origin,
        );
        items.push(previous_update(m, p, d, ticks));
        Some(p)
    } else {
        None
    };
    let h = m.arena.var(step);
    let xp = m.arena.var(x_prev);
    let dx = m.arena.var(d);
    let dp = d_prev.map(|p| m.arena.var(p));
    let slope = match (method, dp) {
        (SolverMethod::ExplicitEuler, Some(dp)) => dp,
        (SolverMethod::ImplicitTrapezoid, Some(dp)) => {
            let half = m.arena.num(0.5);
            let sum = m.arena.add(dx, dp);
            m.arena.mul(half, sum)
        }
        _ => dx,
    };
    let increment = m.arena.mul(h, slope);
    let stepped = m.arena.add(xp, increment);
    let n = m.arena.var(ticks);
    let one = m.arena.one();
    let first = m.arena.rel(Rel::Le, n, one, false);
    let rhs = m.arena.if_(first, xp, stepped);
    let lhs = m.arena.var(x);
    // `der(x)` is computed by the partition's equations at each tick, like a dummy derivative
    m.vars[d as usize].dummy = true;
    (items, SEq::new(EqBody::Eq { lhs, rhs }, origin))
}

/// A discrete Real holding a value from before the partition's tick.
fn previous_variable(
    m: &mut Model,
    name: &str,
    start: Option<ExprId>,
    start_given: bool,
    origin: &moss_frontend::flat::Origin,
) -> VarIx {
    let mut sv = SVar::new(name.to_string(), VKind::Discrete, ValueType::Real);
    sv.start = start;
    sv.start_given = start_given;
    sv.hidden = true;
    sv.protected_from_alias = true;
    sv.origin = origin.clone();
    sv.description = "previous value in a discretized clocked partition".into();
    m.add_var(sv)
}

/// `prev := if pre(ticks) == 0 then pre(prev) else pre(v)`: the value of `v` before this
/// tick, its start value at the first.
fn previous_update(m: &mut Model, prev: VarIx, v: VarIx, ticks: VarIx) -> WhenItem {
    let ticks_before = m.arena.intern(Node::Pre(ticks));
    let zero = m.arena.zero();
    let first = m.arena.rel(Rel::Eq, ticks_before, zero, false);
    let keep = m.arena.intern(Node::Pre(prev));
    let before = m.arena.intern(Node::Pre(v));
    let expr = m.arena.if_(first, keep, before);
    WhenItem::Assign { var: prev, expr }
}
