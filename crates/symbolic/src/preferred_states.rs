//! Preferred states that do not appear differentiated (spec 4.9.4: `stateSelect = prefer`
//! and `always` ask for a state "if possible"). Index reduction offers them as candidates
//! by differentiating, on a trial copy of the model, the equations that tie them to the
//! differentiated variables: a velocity's definition `v_rel = der(s_rel)`, or a short chain
//! of algebraic equations to a differentiated variable of lower priority (a tank's level to
//! its mass). `index::reduce_index` runs the trial and keeps it only when it succeeds.

use crate::ir::VarIx;
use crate::model::{EqBody, Model, VKind};
use moss_frontend::flat::StateSelect;
use rustc_hash::FxHashMap as HashMap;

/// A Real unknown with `stateSelect` prefer or always that does not appear differentiated.
pub(crate) fn undifferentiated_preferred(m: &Model, v: VarIx) -> bool {
    let sv = &m.vars[v as usize];
    sv.kind == VKind::Continuous
        && !sv.eliminated
        && sv.state_select >= StateSelect::Prefer
        && sv.der.is_none()
        && sv.der_of.is_none()
}

pub(crate) fn has_undifferentiated_preferred(m: &Model) -> bool {
    (0..m.vars.len() as VarIx).any(|v| undifferentiated_preferred(m, v))
}

/// Longest chain of equations differentiated to make a preferred variable a state.
const MAX_CHAIN: usize = 3;

/// Equations visited per preferred variable (bounds the search on large models).
const MAX_CHAIN_SEARCH: usize = 256;

/// For each preferred variable of `xs` that is not a state: the shortest chain of equations
/// (at most [`MAX_CHAIN`]) that ties it to a differentiated variable of lower `stateSelect`
/// priority, through algebraic unknowns. A tank's `level` (prefer) is tied to its mass `m`
/// (differentiated in the mass balance) by `V = A*level + V0` and `m = V*d`; a medium's
/// `p`, `h` (prefer in the volumes of `Modelica.Fluid`) to the volume's `m`, `U` by
/// `d = rho(p, h)`, `m = V*d`, `U = m*u`. Differentiated, these chains make `der(level)`
/// (`der(p)`, `der(h)`) candidates of the dummy-derivative selection, which then keeps the
/// preferred variables and makes `der(m)` a dummy: the states Modelica tools choose (spec
/// 4.9.4 asks that prefer variables be states when possible), the ones a model's
/// `assert(level <= height)` and initial equations are written for, and for a liquid the
/// only accurate ones: its pressure moves by the bulk modulus, 2.2e9 Pa per unit of
/// relative density, so a mass integrated to a relative 1e-6 leaves the pressure 2 kPa off
/// (`Fluid.Examples.NonCircularPipes`). A chain through a function without a derivative
/// fails to differentiate, and the trial is dropped.
///
/// Chains through equations that the plain reduction differentiated are left alone: there
/// the dummy selection already weighed the preferences at the constraint's levels, and
/// differentiating the chain as well reshapes an index-reduced system (a machine's damper
/// currents: the stator transformation then became a loop torn through `sin(gamma)`, zero
/// at the start).
pub(crate) fn preferred_state_chains(
    m: &mut Model,
    xs: &[VarIx],
    plain: &mut Model,
) -> Vec<(VarIx, u32)> {
    if xs.is_empty() {
        return Vec::new();
    }
    let mut var_eqs: Vec<Vec<u32>> = vec![Vec::new(); m.vars.len()];
    let mut eq_vars: Vec<Vec<VarIx>> = Vec::with_capacity(m.eqs.len());
    for e in 0..m.eqs.len() {
        let eq = m.eqs[e].clone();
        let inc = match eq.body {
            EqBody::Eq { .. } if eq.diff_of.is_none() => m.incidence(&eq),
            _ => Vec::new(),
        };
        for &v in &inc {
            var_eqs[v as usize].push(e as u32);
        }
        eq_vars.push(inc);
    }
    // derivatives that the plain reduction's differentiated equations mention
    let mut in_reduction = vec![false; plain.vars.len()];
    for e in 0..plain.eqs.len() {
        if plain.eqs[e].diff_of.is_some() {
            let eq = plain.eqs[e].clone();
            for v in plain.incidence(&eq) {
                in_reduction[v as usize] = true;
            }
        }
    }
    let mut out = Vec::new();
    for &x in xs {
        let Some((chain, target)) = chain_to_lower_state(m, x, &var_eqs, &eq_vars) else {
            continue;
        };
        let target_der = m.vars[target as usize].der;
        if chain
            .iter()
            .any(|&e| plain.eqs[e as usize].diffed.is_some())
            || target_der.is_some_and(|d| in_reduction[d as usize])
        {
            continue;
        }
        out.extend(chain.into_iter().map(|e| (x, e)));
    }
    out
}

/// Search from `x` over equations and algebraic unknowns for an equation that mentions a
/// differentiated variable of lower priority than `x`; the equations on the way.
///
/// Of the chains with the fewest equations, the one whose equations mention the fewest
/// unknowns in all wins: the tight relation inside one component (`d = rho(p, h)`,
/// `m = V*d`: five unknowns) rather than an equally short path that leaves it through a
/// connection (a valve's port temperature, which mentions the volume's pressure and the
/// flow into a pump, then the pump's volume flow, which mentions the pump's mass: eight).
/// Differentiating such a path drags the connected component's equations into the
/// reduction, and one of them without a derivative (a pump characteristic) sinks the
/// whole trial.
fn chain_to_lower_state(
    m: &Model,
    x: VarIx,
    var_eqs: &[Vec<u32>],
    eq_vars: &[Vec<VarIx>],
) -> Option<(Vec<u32>, VarIx)> {
    let priority = m.vars[x as usize].state_select;
    let lower_state = |v: VarIx| {
        let sv = &m.vars[v as usize];
        sv.kind == VKind::Continuous
            && !sv.eliminated
            && sv.der.is_some()
            && sv.der_of.is_none()
            && sv.state_select < priority
    };
    let algebraic = |v: VarIx| {
        let sv = &m.vars[v as usize];
        sv.kind == VKind::Continuous
            && !sv.eliminated
            && sv.der.is_none()
            && sv.der_of.is_none()
            && sv.ty == crate::program::ValueType::Real
    };
    // parent links with the cost (unknowns mentioned so far) of the best path found:
    // equation -> the variable it was reached from, variable -> its equation
    let mut eq_from: HashMap<u32, (VarIx, usize)> = HashMap::default();
    let mut var_from: HashMap<VarIx, (u32, usize)> = HashMap::default();
    let mut frontier: Vec<(VarIx, usize)> = vec![(x, 0)];
    for _ in 0..MAX_CHAIN {
        // equations of this level, each with its cheapest path
        let mut level: Vec<u32> = Vec::new();
        let mut exhausted = false;
        'expand: for &(v, cost) in &frontier {
            for &e in &var_eqs[v as usize] {
                let c = cost + eq_vars[e as usize].len();
                match eq_from.get(&e) {
                    Some(&(_, old)) if old <= c || !level.contains(&e) => continue,
                    Some(_) => {}
                    None if eq_from.len() >= MAX_CHAIN_SEARCH => {
                        exhausted = true;
                        break 'expand;
                    }
                    None => level.push(e),
                }
                eq_from.insert(e, (v, c));
            }
        }
        let hit = level
            .iter()
            .filter_map(|&e| {
                let target = *eq_vars[e as usize].iter().find(|&&w| lower_state(w))?;
                Some((eq_from[&e].1, e, target))
            })
            .min();
        if let Some((_, e, target)) = hit {
            let mut chain = vec![e];
            let mut cur = eq_from[&e].0;
            while cur != x {
                let (pe, _) = *var_from.get(&cur)?;
                chain.push(pe);
                cur = eq_from.get(&pe)?.0;
            }
            return Some((chain, target));
        }
        if exhausted {
            return None;
        }
        let mut next: Vec<(VarIx, usize)> = Vec::new();
        for &e in &level {
            let c = eq_from[&e].1;
            for &w in &eq_vars[e as usize] {
                if w == x || !algebraic(w) {
                    continue;
                }
                match var_from.get(&w) {
                    Some(&(_, old)) if old <= c => continue,
                    // reached on an earlier level: that shorter path stands
                    Some(_) if !next.iter().any(|&(n, _)| n == w) => continue,
                    _ => {}
                }
                var_from.insert(w, (e, c));
                match next.iter_mut().find(|(n, _)| *n == w) {
                    Some(slot) => slot.1 = c,
                    None => next.push((w, c)),
                }
            }
        }
        frontier = next;
    }
    None
}

/// Equations `x = der(y)` (either side) whose `x` has `stateSelect` prefer or always but
/// no derivative of its own: the variable and the equation to differentiate for it.
pub(crate) fn preferred_derivative_definitions(m: &Model) -> Vec<(VarIx, u32)> {
    let plain_var = |e| match m.arena.node(e) {
        crate::ir::Node::Var(v) => Some(*v),
        _ => None,
    };
    let mut out: Vec<(VarIx, u32)> = Vec::new();
    for (i, eq) in m.eqs.iter().enumerate() {
        let EqBody::Eq { lhs, rhs } = eq.body else {
            continue;
        };
        let (Some(a), Some(b)) = (plain_var(lhs), plain_var(rhs)) else {
            continue;
        };
        for (x, d) in [(a, b), (b, a)] {
            let (sx, sd) = (&m.vars[x as usize], &m.vars[d as usize]);
            let candidate = sx.kind == VKind::Continuous
                && !sx.eliminated
                && sx.state_select >= StateSelect::Prefer
                && sx.der.is_none()
                && sx.der_of.is_none()
                && sd.der_of.is_some()
                && sd.der.is_none();
            if candidate && !out.iter().any(|&(v, _)| v == x) {
                out.push((x, i as u32));
            }
        }
    }
    out
}
