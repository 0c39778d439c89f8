//! Causalization of one equation system: matching, BLT sorting, and turning each block into
//! a computation.
//!
//! - A single equation is solved symbolically for its matched variable when it is linear in
//!   it (the coefficient does not depend on the variable) or when the variable sits at the
//!   end of a chain of invertible operations (`exp`, `log`, `sqrt`, odd powers, `atan`, ...):
//!   `Assign`; otherwise `SolveScalar` with the symbolic derivative as Newton slope.
//! - An algebraic loop whose equations are all linear in the loop variables (coefficients
//!   free of loop variables; event relations count as frozen inputs) becomes `Linear` with
//!   symbolic matrix entries and right-hand sides.
//! - Any other loop is torn: equations that have a single unknown left and are linear in it
//!   are assigned causally (preferably only where the coefficient, the divisor, is a
//!   constant or parameter expression); when none is left, the unknown occurring in most of the remaining
//!   equations becomes an iteration variable (a Cellier-style heuristic). The unused equations
//!   are the residuals; the Jacobian of the residuals w.r.t. the iteration variables is built
//!   by forward differentiation through the inner assignments.

use crate::ir::{Arena, ExprId, Node, VarIx};
use crate::matching::{self, Matching, NONE};
use crate::model::{EqBody, Model, SEq, VKind};
use crate::sort;
use moss_syntax::Diagnostic;
use rustc_hash::FxHashMap as HashMap;

/// A block before conversion to the program form (expressions still in the arena).
#[derive(Clone, Debug)]
pub enum WBlock {
    Assign {
        var: VarIx,
        expr: ExprId,
    },
    SolveScalar {
        var: VarIx,
        residual: ExprId,
        derivative: Option<ExprId>,
    },
    Linear {
        vars: Vec<VarIx>,
        matrix: Vec<(u32, u32, ExprId)>,
        rhs: Vec<ExprId>,
    },
    Nonlinear {
        iteration_vars: Vec<VarIx>,
        inner: Vec<WBlock>,
        residuals: Vec<ExprId>,
        jacobian: Option<Vec<(u32, u32, ExprId)>>,
        /// Affine in the iteration variables (see `program::Block::Nonlinear`).
        linear: bool,
        /// The same loop torn dividing only by constants and parameters, when this tearing
        /// divides by expressions that may vanish (see `program::Block::Nonlinear`).
        fallback: Option<Box<WBlock>>,
    },
    /// A fixed-causality unit (when, algorithm, multi-output call, assert): equation index.
    Unit(u32),
}

#[derive(Default, Debug)]
pub struct LoopStats {
    pub before: Vec<usize>,
    pub after: Vec<usize>,
    /// Tear nonlinear loops dividing only by parameters and constants whenever that is
    /// possible, however many iteration variables it takes (initialization: solved once,
    /// from start values at which a varying divisor may well be zero).
    pub strict_tearing: bool,
    /// Iterate nonlinear loops on variables with a start value from the model whenever
    /// possible (initialization: Newton starts from the start values).
    pub prefer_given_starts: bool,
}

/// Result of solving one equation for one variable.
pub enum Solved {
    Explicit(ExprId),
    Implicit {
        residual: ExprId,
        derivative: Option<ExprId>,
    },
}

fn contains(a: &mut Arena, e: ExprId, v: VarIx) -> bool {
    a.depends_on(e, &|x| x == v, true)
}

/// Solve `lhs = rhs` for `v` (linear solving, then inversion of functions).
pub fn solve_for(a: &mut Arena, lhs: ExprId, rhs: ExprId, v: VarIx) -> Solved {
    solve_for_with(a, lhs, rhs, v, true)
}

/// Solve `lhs = rhs` for `v`; `invert`: also peel invertible functions. Tearing does not
/// invert: inverses like cube roots and logarithms are singular or undefined where the
/// forward functions are smooth, which would hurt the Newton iteration on the residuals.
pub fn solve_for_with(a: &mut Arena, lhs: ExprId, rhs: ExprId, v: VarIx, invert: bool) -> Solved {
    if *a.node(lhs) == Node::Var(v) && !contains(a, rhs, v) {
        return Solved::Explicit(rhs);
    }
    if *a.node(rhs) == Node::Var(v) && !contains(a, lhs, v) {
        return Solved::Explicit(lhs);
    }
    let r = a.sub(lhs, rhs);
    let d = a.diff_var(r, v, &mut HashMap::default());
    match d {
        Ok(d) if !contains(a, d, v) && a.as_const(d) != Some(0.0) => {
            let mut f = |ar: &mut Arena, n: &Node| match n {
                Node::Var(x) if *x == v => Some(ar.zero()),
                _ => None,
            };
            let r0 = a.substitute(r, &mut f, true, &mut HashMap::default());
            let nr0 = a.neg(r0);
            Solved::Explicit(a.div(nr0, d))
        }
        Ok(d) => match invert.then(|| invert_either_side(a, lhs, rhs, v)).flatten() {
            Some(x) => Solved::Explicit(x),
            None => Solved::Implicit {
                residual: r,
                derivative: Some(d),
            },
        },
        Err(_) => match invert.then(|| invert_either_side(a, lhs, rhs, v)).flatten() {
            Some(x) => Solved::Explicit(x),
            None => Solved::Implicit {
                residual: r,
                derivative: None,
            },
        },
    }
}

/// `lhs = rhs` where `v` occurs on one side only, exactly once along a chain of invertible
/// operations: peel the operations off (`exp` <-> `log`, `sqrt`, odd powers, `atan`, ...).
fn invert_either_side(a: &mut Arena, lhs: ExprId, rhs: ExprId, v: VarIx) -> Option<ExprId> {
    match (contains(a, lhs, v), contains(a, rhs, v)) {
        (true, false) => invert(a, lhs, rhs, v),
        (false, true) => invert(a, rhs, lhs, v),
        _ => None,
    }
}

/// Solve `side = value` for `v`, where `side` contains `v` and `value` does not.
fn invert(a: &mut Arena, side: ExprId, value: ExprId, v: VarIx) -> Option<ExprId> {
    let mut side = side;
    let mut value = value;
    // each step removes one operation; bounded by the expression depth
    for _ in 0..64 {
        match a.node(side).clone() {
            Node::Var(x) if x == v => return Some(value),
            Node::Neg(u) => {
                value = a.neg(value);
                side = u;
            }
            Node::Add(p, q) | Node::Sub(p, q) | Node::Mul(p, q) | Node::Div(p, q) => {
                let op = a.node(side).clone();
                let (in_p, in_q) = (contains(a, p, v), contains(a, q, v));
                if in_p == in_q {
                    return None;
                }
                value = match (op, in_p) {
                    (Node::Add(..), true) => a.sub(value, q),
                    (Node::Add(..), false) => a.sub(value, p),
                    (Node::Sub(..), true) => a.add(value, q),
                    (Node::Sub(..), false) => a.sub(p, value),
                    (Node::Mul(..), true) => a.div(value, q),
                    (Node::Mul(..), false) => a.div(value, p),
                    (Node::Div(..), true) => a.mul(value, q),
                    (Node::Div(..), false) => a.div(p, value),
                    _ => return None,
                };
                side = if in_p { p } else { q };
            }
            Node::Pow(u, n) => {
                let k = a.as_const(n)?;
                // odd integer powers and square roots written as powers are invertible
                let odd = k.fract() == 0.0 && (k as i64) % 2 != 0;
                if !odd || contains(a, n, v) {
                    return None;
                }
                let inv = a.num(1.0 / k);
                let s = a.call("sign", vec![value]);
                let m = a.call("abs", vec![value]);
                let p = a.pow(m, inv);
                value = a.mul(s, p);
                side = u;
            }
            Node::Call(f, args) if a.finv.contains_key(&*f) => {
                let (input, x) = annotated_inverse(a, &f, &args, v, value)?;
                value = x;
                side = args[input];
            }
            Node::Call(f, args) if args.len() == 1 => {
                let inverse = match &*f {
                    "exp" => "log",
                    "log" => "exp",
                    "atan" => "tan",
                    "asin" => "sin",
                    "acos" => "cos",
                    "sqrt" => {
                        let two = a.num(2.0);
                        value = a.pow(value, two);
                        side = args[0];
                        continue;
                    }
                    "log10" => {
                        let ten = a.num(10.0);
                        value = a.pow(ten, value);
                        side = args[0];
                        continue;
                    }
                    _ => return None,
                };
                value = a.call(inverse, vec![value]);
                side = args[0];
            }
            _ => return None,
        }
    }
    None
}

/// `f(args) = value` solved for the one argument that contains `v`, by the inverse that an
/// `inverse` annotation of `f` offers for it (spec 12.8): that argument's position and the
/// inverse's call.
fn annotated_inverse(
    a: &mut Arena,
    f: &str,
    args: &[ExprId],
    v: VarIx,
    value: ExprId,
) -> Option<(usize, ExprId)> {
    let with_v: Vec<usize> = (0..args.len())
        .filter(|&i| contains(a, args[i], v))
        .collect();
    let [input] = with_v[..] else {
        return None;
    };
    let inv = a.finv.get(f)?.iter().find(|x| x.input == input)?.clone();
    let inv_args = inv
        .args
        .iter()
        .map(|s| match *s {
            crate::ir::InverseArg::Input(j) => args[j],
            crate::ir::InverseArg::Output => value,
        })
        .collect();
    Some((input, a.call(&inv.function, inv_args)))
}

/// Causalize the equations `eqs` for the unknowns marked in `unknown`.
pub fn causalize(
    m: &mut Model,
    eqs: &[SEq],
    unknown: &[bool],
    context: &str,
    live_relations: bool,
    stats: &mut LoopStats,
) -> Result<Vec<WBlock>, Vec<Diagnostic>> {
    let is_unknown = |v: VarIx| unknown.get(v as usize).copied().unwrap_or(false);
    let mt = match_system(m, eqs, &is_unknown, context)?;
    let _ = live_relations;
    let comps = sorted_components(m, eqs, &mt, &is_unknown);
    let mut blocks = Vec::with_capacity(comps.len());
    let mut vanishing = Vanishing::default();
    for comp in comps {
        let b = component_block(m, eqs, &mt, &comp, context, stats, &vanishing)?;
        vanishing.note(m, eqs, &b);
        blocks.push(b);
    }
    Ok(blocks)
}

/// Variables that are exactly zero in some mode by construction: assigned an expression
/// that is zero in some branch of its if-expressions, through zero-valued parameters and
/// other such variables (a discrete valve's opening ramps between `opening_min = 0` and 1:
/// `y := if time < T then endValue - ... else endValue`, `endValue := if open then 1 else
/// offset`, `offset := opening_min`). Tearing never divides by them: `m_flow = y*k*dp`
/// solved for `dp` fails while the valve is closed. Collected along the sorted blocks, so a
/// loop sees every assignment before it; one pass, linear in the model.
#[derive(Default)]
struct Vanishing {
    vars: std::collections::HashSet<VarIx>,
}

impl Vanishing {
    fn note(&mut self, m: &mut Model, eqs: &[SEq], b: &WBlock) {
        match b {
            WBlock::Assign { var, expr } => self.note_value(m, *var, *expr),
            // the assignments inside a torn loop (a mixed loop of discrete variables)
            WBlock::Nonlinear { inner, .. } => {
                for b in inner {
                    self.note(m, eqs, b);
                }
            }
            // a discrete variable assigned in a `when` keeps any of its assigned values
            WBlock::Unit(e) => {
                let Some(EqBody::When(branches)) = eqs.get(*e as usize).map(|q| &q.body) else {
                    return;
                };
                let assigned: Vec<(VarIx, ExprId)> = branches
                    .iter()
                    .flat_map(|b| &b.items)
                    .filter_map(|it| match it {
                        crate::model::WhenItem::Assign { var, expr } => Some((*var, *expr)),
                        _ => None,
                    })
                    .collect();
                for (var, expr) in assigned {
                    self.note_value(m, var, expr);
                }
            }
            _ => {}
        }
    }

    fn note_value(&mut self, m: &mut Model, var: VarIx, expr: ExprId) {
        if self.may_vanish(m, expr) {
            self.vars.insert(var);
        }
    }

    fn contains(&self, v: VarIx) -> bool {
        self.vars.contains(&v)
    }

    /// Is `e` zero for some choice of its if-branches, given the zero-valued parameters
    /// and the variables already known to vanish?
    fn may_vanish(&self, m: &mut Model, e: ExprId) -> bool {
        match m.arena.node(e).clone() {
            Node::Const(_) => m.arena.as_const(e) == Some(0.0),
            Node::Var(v) => {
                self.vars.contains(&v)
                    || (matches!(m.vars[v as usize].kind, VKind::Parameter | VKind::Constant)
                        && crate::zero_params::parameter_value(m, e) == Some(0.0))
            }
            Node::If(_, x, y) => self.may_vanish(m, x) || self.may_vanish(m, y),
            Node::Neg(x) | Node::Div(x, _) => self.may_vanish(m, x),
            Node::Mul(x, y) => self.may_vanish(m, x) || self.may_vanish(m, y),
            _ => false,
        }
    }
}

/// Complete matching of the system: units get their outputs, plain equations are matched by
/// augmenting paths; a structurally singular system is diagnosed.
fn match_system(
    m: &mut Model,
    eqs: &[SEq],
    is_unknown: &dyn Fn(VarIx) -> bool,
    context: &str,
) -> Result<Matching, Vec<Diagnostic>> {
    let n = eqs.len();
    let mut adj: Vec<Vec<VarIx>> = Vec::with_capacity(n);
    let mut mt = Matching::new(n, m.vars.len());
    let mut plain = Vec::new();
    let mut errors = Vec::new();
    for (i, eq) in eqs.iter().enumerate() {
        let Some(outs) = eq.fixed_outputs() else {
            let mut inc = m.incidence(eq);
            inc.retain(|&v| is_unknown(v));
            plain.push(i as u32);
            adj.push(inc);
            continue;
        };
        for v in outs.into_iter().filter(|&v| is_unknown(v)) {
            if mt.eq_of_var[v as usize] != NONE {
                errors.push(Diagnostic::error(
                    eq.origin.span,
                    format!(
                        "variable `{}` is computed in more than one place",
                        m.var_name(v)
                    ),
                ));
            }
            mt.eq_of_var[v as usize] = i as u32;
        }
        adj.push(Vec::new());
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let taken: Vec<bool> = mt.eq_of_var.iter().map(|&e| e != NONE).collect();
    let allowed = |v: VarIx| is_unknown(v) && !taken[v as usize];
    let mt = matching::maximum_matching(&plain, &adj, m.vars.len(), &allowed, Some(mt));
    let unknowns: Vec<VarIx> = (0..m.vars.len() as VarIx).filter(|&v| allowed(v)).collect();
    let complete = plain.iter().all(|&e| mt.var_of_eq[e as usize] != NONE)
        && unknowns.iter().all(|&v| mt.eq_of_var[v as usize] != NONE);
    if !complete {
        let parts = matching::dulmage_mendelsohn(&plain, &unknowns, &adj, &mt, &allowed);
        return Err(matching::singular_diagnostics(m, eqs, &parts, context));
    }
    Ok(mt)
}

/// Strongly connected components of the dependency graph in execution order; equations
/// without outputs (asserts, reinit-only whens) come last.
///
/// The components (blocks, algebraic loops) come from the dependencies *without* operands of
/// event relations, which are frozen inputs in continuous mode. Their order, however, prefers
/// to respect those operands too, so that relations evaluated live (event mode,
/// initialization) see fresh values. A mixed loop (a cycle only through relation operands,
/// e.g. friction: `startForward` reads `sa` in a relation, `locked` reads `startForward`, the
/// equations for `sa` read `locked`) is broken at its switching equations — discrete
/// equations that only read discrete values and event relations: the others read their value
/// from the previous pass. Such values are constant between events, so this is exact in
/// continuous mode, and in event mode the conditions act as guesses that the event iteration
/// confirms (the continuous part is solved for the guessed mode before the conditions are
/// re-evaluated, as mixed systems are solved in other Modelica tools).
fn sorted_components(
    m: &mut Model,
    eqs: &[SEq],
    mt: &Matching,
    is_unknown: &dyn Fn(VarIx) -> bool,
) -> Vec<Vec<u32>> {
    let n = eqs.len();
    let outputs: Vec<Vec<VarIx>> = eqs
        .iter()
        .enumerate()
        .map(|(i, eq)| match eq.fixed_outputs() {
            Some(o) => o.into_iter().filter(|&v| is_unknown(v)).collect(),
            None => vec![mt.var_of_eq[i]],
        })
        .collect();
    let roots: Vec<u32> = (0..n as u32)
        .filter(|&i| !outputs[i as usize].is_empty())
        .chain((0..n as u32).filter(|&i| outputs[i as usize].is_empty()))
        .collect();
    let deps = dependencies(m, eqs, mt, &outputs, is_unknown, true);
    let comps = sort::tarjan(&deps, &roots);
    let full = dependencies(m, eqs, mt, &outputs, is_unknown, false);
    let preferred = break_mixed_loops(m, eqs, mt, full, &roots);
    let preferred_comps = sort::tarjan(&preferred, &roots);
    if same_partition(&preferred_comps, &comps, n) {
        preferred_comps
    } else {
        comps
    }
}

/// Remove, inside every cycle of `full`, the dependencies on switching equations.
fn break_mixed_loops(
    m: &mut Model,
    eqs: &[SEq],
    mt: &Matching,
    full: Vec<Vec<u32>>,
    roots: &[u32],
) -> Vec<Vec<u32>> {
    const NO_CYCLE: u32 = u32::MAX;
    let n = eqs.len();
    let mut cycle_of = vec![NO_CYCLE; n];
    for (k, comp) in sort::tarjan(&full, roots).iter().enumerate() {
        if comp.len() > 1 {
            for &e in comp {
                cycle_of[e as usize] = k as u32;
            }
        }
    }
    if cycle_of.iter().all(|&c| c == NO_CYCLE) {
        return full;
    }
    let switching: Vec<bool> = (0..n)
        .map(|i| {
            cycle_of[i] != NO_CYCLE
                && is_switching_equation(m, &eqs[i], mt.var_of_eq[i], &|v: VarIx| {
                    let p = mt.eq_of_var.get(v as usize).copied().unwrap_or(NONE);
                    p != NONE && cycle_of[p as usize] == cycle_of[i]
                })
        })
        .collect();
    full.into_iter()
        .enumerate()
        .map(|(x, ds)| {
            ds.into_iter()
                .filter(|&t| {
                    let t = t as usize;
                    !(switching[t] && cycle_of[t] == cycle_of[x] && cycle_of[x] != NO_CYCLE)
                })
                .collect()
        })
        .collect()
}

/// A plain equation for a discrete variable that reads only discrete values, parameters and
/// event relations (so its value cannot change between events), with an event relation on a
/// value computed in the same cycle (`in_cycle`): the switching condition of a mixed loop.
fn is_switching_equation(
    m: &mut Model,
    eq: &SEq,
    v: VarIx,
    in_cycle: &dyn Fn(VarIx) -> bool,
) -> bool {
    let EqBody::Eq { lhs, rhs } = eq.body else {
        return false;
    };
    if v == NONE || m.vars[v as usize].kind != VKind::Discrete {
        return false;
    }
    let mut vs = Vec::new();
    m.arena.vars_of(lhs, true, &mut vs);
    m.arena.vars_of(rhs, true, &mut vs);
    let frozen = vs.iter().all(|&x| {
        matches!(
            m.vars[x as usize].kind,
            VKind::Discrete | VKind::Parameter | VKind::Constant
        )
    });
    if !frozen {
        return false;
    }
    // operands of the event relations: all variables minus those read outside relations
    let mut all = Vec::new();
    m.arena.vars_of(lhs, false, &mut all);
    m.arena.vars_of(rhs, false, &mut all);
    all.iter().any(|x| !vs.contains(x) && in_cycle(*x))
}

/// Do both component lists partition the equations identically?
fn same_partition(a: &[Vec<u32>], b: &[Vec<u32>], n: usize) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut id = vec![u32::MAX; n];
    for (k, comp) in b.iter().enumerate() {
        for &e in comp {
            id[e as usize] = k as u32;
        }
    }
    a.iter().all(|comp| {
        let k = id[comp[0] as usize];
        comp.iter().all(|&e| id[e as usize] == k) && b[k as usize].len() == comp.len()
    })
}

/// The computation of one strongly connected component.
fn component_block(
    m: &mut Model,
    eqs: &[SEq],
    mt: &Matching,
    comp: &[u32],
    context: &str,
    stats: &mut LoopStats,
    vanishing: &Vanishing,
) -> Result<WBlock, Vec<Diagnostic>> {
    if let [e] = comp {
        return Ok(match eqs[*e as usize].body {
            EqBody::Eq { lhs, rhs } => {
                let v = mt.var_of_eq[*e as usize];
                let b = single(&mut m.arena, lhs, rhs, v);
                if divides_by_parameter_expression(m, &b) {
                    if let Some(coefficient) = crate::zero_params::zero_pivot(m, lhs, rhs, v) {
                        let equation = m.eq_text(&eqs[*e as usize]);
                        m.zero_pivots.push(crate::zero_params::ZeroPivot {
                            var: v,
                            coefficient,
                            equation,
                        });
                    }
                }
                b
            }
            _ => WBlock::Unit(*e),
        });
    }
    if let Some(&u) = comp.iter().find(|&&e| {
        !matches!(
            eqs[e as usize].body,
            EqBody::Eq { .. } | EqBody::Call { .. }
        )
    }) {
        let eq = &eqs[u as usize];
        let message = format!(
            "{context}has an algebraic loop through `{}`, which is not supported",
            m.eq_text(eq)
        );
        return Err(vec![loop_diagnostic(m, eqs, comp, eq, message).with_help(
            "break the loop, e.g. by using pre() of a discrete variable",
        )]);
    }
    let (pairs, calls) = loop_equations(m, eqs, mt, comp);
    // An Integer or Boolean output of a function call (the `phase` of a medium's
    // `setState_phX(p, h)`) is computed by the call from the iteration variables like its
    // Real outputs. Any other discrete unknown of a loop is defined by an equation of its
    // own (`on = noEvent(x > 0)`), which would need iterating on it: refused.
    let call_outputs: std::collections::HashSet<VarIx> = comp
        .iter()
        .flat_map(|&e| computed_by_call(&m.arena, &eqs[e as usize]))
        .collect();
    let mut discrete_vars = std::collections::HashSet::new();
    for &(_, _, v) in &pairs {
        if m.vars[v as usize].ty == crate::program::ValueType::Real {
            continue;
        }
        if !call_outputs.contains(&v) {
            return Err(discrete_loop_error(m, eqs, comp, context, v));
        }
        discrete_vars.insert(v);
    }
    stats.before.push(pairs.len());
    // Parameters and constants are safe divisors for tearing; a linear loop, which is
    // torn only to make it smaller, also avoids those that are zero at their current values
    // (an inertia J = 0 of a massless wheel).
    let mut loop_vars = Vec::new();
    let mut vs = Vec::new();
    for &(l, r, _) in &pairs {
        // a fresh vector per call: `vars_of` sorts what it is given
        for side in [l, r] {
            vs.clear();
            m.arena.vars_of(side, false, &mut vs);
            loop_vars.extend_from_slice(&vs);
        }
    }
    loop_vars.sort_unstable();
    loop_vars.dedup();
    let mut invariant = std::collections::HashSet::new();
    let mut nonzero_invariant = std::collections::HashSet::new();
    for v in loop_vars {
        if !matches!(m.vars[v as usize].kind, VKind::Parameter | VKind::Constant) {
            continue;
        }
        invariant.insert(v);
        let e = m.arena.var(v);
        if crate::zero_params::parameter_value(m, e) != Some(0.0) {
            nonzero_invariant.insert(v);
        }
    }
    let time_invariant = |v: VarIx| invariant.contains(&v);
    // a variable that vanishes in some mode counts as a zero-valued parameter: never a divisor
    let nonzero = |v: VarIx| nonzero_invariant.contains(&v);
    let vanishes = |v: VarIx| vanishing.contains(v);
    let discrete = |v: VarIx| discrete_vars.contains(&v);
    let given_start: std::collections::HashSet<VarIx> = if stats.prefer_given_starts {
        pairs
            .iter()
            .map(|p| p.2)
            .filter(|&v| {
                // `start = 0` says no more than a variable without a start value
                let sv = &m.vars[v as usize];
                sv.start_given && sv.start.is_some_and(|e| m.arena.as_const(e) != Some(0.0))
            })
            .collect()
    } else {
        Default::default()
    };
    let good_guess = |v: VarIx| given_start.contains(&v);
    let traits = LoopTraits {
        time_invariant: &time_invariant,
        nonzero_invariant: &nonzero,
        vanishes: &vanishes,
        discrete: &discrete,
        good_guess: stats.prefer_given_starts.then_some(&good_guess),
    };
    let b = algebraic_loop(&mut m.arena, &pairs, &traits, stats.strict_tearing);
    if let Some(v) = iterated_discrete(&b, &discrete) {
        return Err(discrete_loop_error(m, eqs, comp, context, v));
    }
    let b = regroup_calls(&m.arena, b, &calls);
    stats.after.push(match &b {
        WBlock::Nonlinear { iteration_vars, .. } => iteration_vars.len(),
        WBlock::Linear { vars, .. } => vars.len(),
        _ => 1,
    });
    Ok(b)
}

/// The variables an equation assigns from one function call: the outputs of a call unit,
/// or `v` of `v = f(...)` and `v = f(...)[k]`.
fn computed_by_call(a: &Arena, eq: &SEq) -> Vec<VarIx> {
    match &eq.body {
        EqBody::Call { outputs, .. } => outputs.iter().flatten().copied().collect(),
        EqBody::Eq { lhs, rhs } => {
            let is_call = |x: ExprId| matches!(a.node(x), Node::Call(..) | Node::CallOutput(..));
            match (a.node(*lhs), a.node(*rhs)) {
                (Node::Var(v), _) if is_call(*rhs) => vec![*v],
                (_, Node::Var(v)) if is_call(*lhs) => vec![*v],
                _ => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}

fn discrete_loop_error(
    m: &Model,
    eqs: &[SEq],
    comp: &[u32],
    context: &str,
    v: VarIx,
) -> Vec<Diagnostic> {
    let message = format!(
        "{context}has an algebraic loop through the discrete variable `{}`, which cannot be solved numerically",
        m.var_name(v)
    );
    vec![loop_diagnostic(m, eqs, comp, &eqs[comp[0] as usize], message)
        .with_help("break the loop with pre(...) or with an event-generating relation (relations inside noEvent(...) are evaluated continuously and do not break loops)")]
}

/// A discrete variable of a torn loop that tearing could only make an iteration variable
/// (or any discrete variable of a loop solved whole as a linear system): Newton's method
/// cannot iterate on an Integer or Boolean.
fn iterated_discrete(b: &WBlock, discrete: &dyn Fn(VarIx) -> bool) -> Option<VarIx> {
    let vars = match b {
        WBlock::Nonlinear { iteration_vars, .. } => iteration_vars,
        WBlock::Linear { vars, .. } => vars,
        _ => return None,
    };
    vars.iter().copied().find(|&v| discrete(v))
}

/// A call unit `(o1, o2, ...) = f(args)` of a loop: its equation, the call expression and how
/// many outputs it assigns.
struct LoopCall {
    unit: u32,
    call: ExprId,
    outputs: usize,
}

/// The scalar equations of a loop, each with its matched variable, and the multi-output
/// calls among them. A call `(o1, o2, ...) = f(args)` inside a loop (a transistor model's
/// currents computed by one function of the node voltages that the currents determine)
/// enters as one equation `o_k = f(args)[k]` per output, so tearing treats it like any other
/// equation: its outputs are computed from the iteration variables, or are iteration
/// variables themselves with `o_k - f(args)[k]` as residual. [`regroup_calls`] then makes
/// the call run once per iteration instead of once per output.
fn loop_equations(
    m: &mut Model,
    eqs: &[SEq],
    mt: &Matching,
    comp: &[u32],
) -> (Vec<(ExprId, ExprId, VarIx)>, Vec<LoopCall>) {
    let mut pairs = Vec::new();
    let mut calls = Vec::new();
    for &e in comp {
        match &eqs[e as usize].body {
            EqBody::Eq { lhs, rhs } => pairs.push((*lhs, *rhs, mt.var_of_eq[e as usize])),
            EqBody::Call {
                outputs,
                func,
                args,
            } => {
                let call = m.arena.intern(Node::Call(
                    std::sync::Arc::from(func.as_str()),
                    args.clone().into_boxed_slice(),
                ));
                let mut n = 0;
                for (k, o) in outputs.iter().enumerate() {
                    let Some(v) = *o else { continue };
                    let value = m.arena.intern(Node::CallOutput(call, k as u32));
                    pairs.push((m.arena.var(v), value, v));
                    n += 1;
                }
                calls.push(LoopCall {
                    unit: e,
                    call,
                    outputs: n,
                });
            }
            _ => {}
        }
    }
    (pairs, calls)
}

/// In a torn loop, the assignments `o_k := f(args)[k]` of all outputs of one call (see
/// [`loop_equations`]) become the call unit itself, at the place of the first of them: all of
/// them read the same arguments, which are computed before that place. A call with an
/// output that tearing made an iteration variable keeps one call per output.
fn regroup_calls(a: &Arena, b: WBlock, calls: &[LoopCall]) -> WBlock {
    let WBlock::Nonlinear {
        iteration_vars,
        mut inner,
        residuals,
        jacobian,
        linear,
        fallback,
    } = b
    else {
        return b;
    };
    let fallback = fallback.map(|f| Box::new(regroup_calls(a, *f, calls)));
    for &LoopCall {
        unit,
        call,
        outputs: n_outputs,
    } in calls
    {
        let selects = |b: &WBlock| match b {
            WBlock::Assign { expr, .. } => {
                matches!(a.node(*expr), Node::CallOutput(c, _) if *c == call)
            }
            _ => false,
        };
        let places: Vec<usize> = (0..inner.len()).filter(|&i| selects(&inner[i])).collect();
        // an output left out is an iteration variable the unit must not overwrite
        if places.is_empty() || places.len() != n_outputs {
            continue;
        }
        let first = places[0];
        inner[first] = WBlock::Unit(unit);
        for &i in places[1..].iter().rev() {
            inner.remove(i);
        }
    }
    WBlock::Nonlinear {
        iteration_vars,
        inner,
        residuals,
        jacobian,
        linear,
        fallback,
    }
}

fn loop_diagnostic(m: &Model, eqs: &[SEq], comp: &[u32], at: &SEq, message: String) -> Diagnostic {
    let mut d = Diagnostic::error(at.origin.span, message);
    for &e in comp.iter().take(8) {
        d = d.with_note(format!("in the loop: {}", m.eq_text(&eqs[e as usize])));
    }
    d
}

fn dependencies(
    m: &mut Model,
    eqs: &[SEq],
    mt: &Matching,
    outputs: &[Vec<VarIx>],
    is_unknown: &dyn Fn(VarIx) -> bool,
    skip_event_rel: bool,
) -> Vec<Vec<u32>> {
    let mut deps = Vec::with_capacity(eqs.len());
    for (i, eq) in eqs.iter().enumerate() {
        let outs = &outputs[i];
        let mut d: Vec<u32> = m
            .reads_with(eq, skip_event_rel)
            .into_iter()
            .filter(|&v| is_unknown(v) && !outs.contains(&v))
            .map(|v| mt.eq_of_var[v as usize])
            .filter(|&p| p != NONE && p != i as u32)
            .collect();
        d.sort_unstable();
        d.dedup();
        deps.push(d);
    }
    deps
}

/// Is the block an assignment `v := ±(x / d)` with `d` a parameter expression that is not a
/// literal? (A cheap filter before [`crate::zero_params::zero_pivot`] differentiates.)
fn divides_by_parameter_expression(m: &mut Model, b: &WBlock) -> bool {
    let WBlock::Assign { expr, .. } = b else {
        return false;
    };
    let mut e = *expr;
    if let Node::Neg(x) = *m.arena.node(e) {
        e = x;
    }
    let Node::Div(_, d) = *m.arena.node(e) else {
        return false;
    };
    m.arena.as_const(d).is_none() && m.is_parameter_expr(d)
}

fn single(a: &mut Arena, lhs: ExprId, rhs: ExprId, v: VarIx) -> WBlock {
    if let Some(b) = mode_dependent_single(a, lhs, rhs, v) {
        return b;
    }
    match solve_for(a, lhs, rhs, v) {
        Solved::Explicit(expr) => WBlock::Assign { var: v, expr },
        Solved::Implicit {
            residual,
            derivative,
        } => WBlock::SolveScalar {
            var: v,
            residual,
            derivative,
        },
    }
}

/// An equation linear in `v` whose coefficient is zero in some branch of an if-expression
/// (friction: `a_relfric = if locked then 0 else sa - tau0_max`, matched to `sa` where the
/// motion is known, as at initialization): dividing by the coefficient gives NaN in that
/// mode, where the equation does not determine `v` at all but only has to hold. It becomes a
/// torn linear system of one unknown, whose runtime takes the solution of least norm when
/// the coefficient is zero and the residual consistent (the locked element holds no torque
/// the rest of the system does not ask for), and the exact solution otherwise.
fn mode_dependent_single(a: &mut Arena, lhs: ExprId, rhs: ExprId, v: VarIx) -> Option<WBlock> {
    if *a.node(lhs) == Node::Var(v) || *a.node(rhs) == Node::Var(v) {
        return None;
    }
    let r = a.sub(lhs, rhs);
    let d = a.diff_var(r, v, &mut HashMap::default()).ok()?;
    if contains(a, d, v) || !zero_in_some_branch(a, d) {
        return None;
    }
    Some(WBlock::Nonlinear {
        iteration_vars: vec![v],
        inner: Vec::new(),
        residuals: vec![r],
        jacobian: Some(vec![(0, 0, d)]),
        linear: true,
        fallback: None,
    })
}

/// Is `e` zero for some choice of the branches of its if-expressions (a literal zero branch,
/// possibly under products, quotients and negations)?
fn zero_in_some_branch(a: &Arena, e: ExprId) -> bool {
    match a.node(e) {
        Node::If(_, x, y) => {
            a.as_const(*x) == Some(0.0)
                || a.as_const(*y) == Some(0.0)
                || zero_in_some_branch(a, *x)
                || zero_in_some_branch(a, *y)
        }
        Node::Neg(x) | Node::Div(x, _) => zero_in_some_branch(a, *x),
        Node::Mul(x, y) => zero_in_some_branch(a, *x) || zero_in_some_branch(a, *y),
        _ => false,
    }
}

/// What the variables of a loop are, as far as tearing it cares.
pub struct LoopTraits<'t> {
    /// Parameters and constants.
    pub time_invariant: &'t dyn Fn(VarIx) -> bool,
    /// Parameters and constants that are not zero at their values.
    pub nonzero_invariant: &'t dyn Fn(VarIx) -> bool,
    /// Variables that are zero in some mode (see `Vanishing`).
    pub vanishes: &'t dyn Fn(VarIx) -> bool,
    /// Integer and Boolean unknowns.
    pub discrete: &'t dyn Fn(VarIx) -> bool,
    /// When set (initialization), variables whose start value is a good first guess:
    /// nonlinear loops iterate on them whenever they can.
    pub good_guess: Option<&'t dyn Fn(VarIx) -> bool>,
}

/// A strongly connected block of equations `(lhs, rhs, matched var)`. `time_invariant`
/// tells parameters and constants (safe divisors when tearing) from other variables.
///
/// `discrete` marks the Integer and Boolean unknowns of the loop (the `phase` output of a
/// medium's `setState_phX` called on the loop's pressure and enthalpy). They are never
/// tearing variables: each is assigned from the iteration variables inside the loop, like
/// a discrete variable outside loops is assigned from its inputs at every evaluation, and
/// it contributes nothing to the Jacobian. A loop in which one can only be iterated on is
/// the caller's error ([`iterated_discrete`]).
pub fn algebraic_loop(
    a: &mut Arena,
    pairs: &[(ExprId, ExprId, VarIx)],
    traits: &LoopTraits,
    strict: bool,
) -> WBlock {
    let LoopTraits {
        time_invariant,
        nonzero_invariant,
        vanishes,
        discrete,
        good_guess,
    } = *traits;
    // parameters whose value is zero, and variables that are zero in some mode: never
    // divided by, even where any divisor is allowed
    let zero = |v: VarIx| (time_invariant(v) && !nonzero_invariant(v)) || vanishes(v);
    let vars: Vec<VarIx> = pairs.iter().map(|p| p.2).collect();
    let col: HashMap<VarIx, u32> = vars
        .iter()
        .enumerate()
        .map(|(i, &v)| (v, i as u32))
        .collect();
    // a linear solve would give an Integer a fractional value: such loops are torn
    let has_discrete = vars.iter().any(|&v| discrete(v));
    let lin = if has_discrete {
        None
    } else {
        linear_loop(a, pairs, &vars, &col)
    };
    if let Some(lin) = lin {
        // Tearing costs more than linear in the loop size; large linear loops go to the
        // sparse LU as they are.
        if vars.len() > MAX_TORN_LINEAR {
            return lin;
        }
        // A linear loop that tears into fewer unknowns, dividing only by constants and
        // parameters, is solved in that form: with its exact (constant) symbolic Jacobian,
        // Newton's first step from the current values is the solution, and where coefficients
        // that conditions switch off leave the system singular but consistent (stuck friction
        // elements, the quadrant torques of a lossy gear) the nonlinear solver's
        // minimum-change solution still applies.
        let tp = TearSetup {
            safe_divisors: Some(nonzero_invariant),
            zero_parameter: &zero,
            discrete,
            good_guess: None,
        };
        return match tear(a, pairs, &vars, &col, &tp) {
            WBlock::Nonlinear {
                iteration_vars,
                inner,
                residuals,
                jacobian: Some(jacobian),
                ..
            } if iteration_vars.len() < vars.len() => WBlock::Nonlinear {
                iteration_vars,
                inner,
                residuals,
                jacobian: Some(jacobian),
                linear: true,
                fallback: None,
            },
            _ => lin,
        };
    }
    // Tearing assigns an equation to a variable by dividing by its coefficient. A
    // coefficient that varies with time may be zero (`P = v*i` solved for `i` at `v = 0`,
    // e.g. at the start), so tearing that divides only by constants and parameters is
    // preferred when it needs no more iteration variables.
    let mut setup = TearSetup {
        safe_divisors: Some(time_invariant),
        zero_parameter: &zero,
        discrete,
        good_guess,
    };
    let safe = tear(a, pairs, &vars, &col, &setup);
    setup.safe_divisors = None;
    let any = tear(a, pairs, &vars, &col, &setup);
    let n_tears = |b: &WBlock| match b {
        WBlock::Nonlinear { iteration_vars, .. } => iteration_vars.len(),
        _ => 0,
    };
    if strict || n_tears(&safe) <= n_tears(&any) {
        safe
    } else {
        // where a divisor of the chosen tearing vanishes (a machine's `omega` at standstill)
        // the run falls back to the safe one
        let mut any = any;
        if let WBlock::Nonlinear { fallback, .. } = &mut any {
            *fallback = Some(Box::new(safe));
        }
        any
    }
}

fn linear_loop(
    a: &mut Arena,
    pairs: &[(ExprId, ExprId, VarIx)],
    vars: &[VarIx],
    col: &HashMap<VarIx, u32>,
) -> Option<WBlock> {
    let in_loop = |x: VarIx| col.contains_key(&x);
    let mut matrix = Vec::new();
    let mut rhs = Vec::new();
    let mut zero_memo = HashMap::default();
    for (row, &(l, r, _)) in pairs.iter().enumerate() {
        let res = a.sub(l, r);
        let mut vs = Vec::new();
        a.vars_of(res, true, &mut vs);
        for v in vs.into_iter().filter(|&v| in_loop(v)) {
            let d = a.diff_var(res, v, &mut HashMap::default()).ok()?;
            if a.depends_on(d, &in_loop, true) {
                return None;
            }
            if a.as_const(d) != Some(0.0) {
                matrix.push((row as u32, col[&v], d));
            }
        }
        let mut f = |ar: &mut Arena, n: &Node| match n {
            Node::Var(x) if col.contains_key(x) => Some(ar.zero()),
            _ => None,
        };
        let r0 = a.substitute(res, &mut f, true, &mut zero_memo);
        rhs.push(a.neg(r0));
    }
    Some(WBlock::Linear {
        vars: vars.to_vec(),
        matrix,
        rhs,
    })
}

/// Largest linear loop that is torn (larger ones are solved whole, with the sparse LU).
const MAX_TORN_LINEAR: usize = 200;

/// Largest total size (tree nodes) of a symbolic torn-system Jacobian.
const MAX_JACOBIAN_TREE: usize = 20_000;

/// Maximum size for building the symbolic Jacobian of a torn system.
const MAX_SYMBOLIC_JACOBIAN: usize = 40;

/// Is `e` zero for some choice of branches of its if-expressions (a zero branch, possibly
/// under products, quotients and negations)?
fn may_be_zero_by_branch(a: &Arena, e: ExprId) -> bool {
    match a.node(e) {
        Node::Const(_) => a.as_const(e) == Some(0.0),
        Node::If(_, x, y) => may_be_zero_by_branch(a, *x) || may_be_zero_by_branch(a, *y),
        Node::Neg(x) | Node::Div(x, _) => may_be_zero_by_branch(a, *x),
        Node::Mul(x, y) => may_be_zero_by_branch(a, *x) || may_be_zero_by_branch(a, *y),
        // the selection weight of a dynamic state set is 0 for the candidates not chosen
        Node::Call(f, _) if f.as_ref() == crate::state_sets::WEIGHT => true,
        // a sine or cosine of a changing angle passes through zero (the entries of a rotation
        // matrix: a machine's air gap, a mechanism's joint): dividing by it fails once a turn
        Node::Call(f, args) if matches!(f.as_ref(), "sin" | "cos") => {
            args.first().is_some_and(|&x| varies(a, x))
        }
        _ => false,
    }
}

/// Is `e` a product or quotient with a factor that is a zero-valued parameter, in some branch
/// of its if-expressions? (A discrete valve's `m_flow = (if open then k else opening_min*k)*dp`
/// with `opening_min = 0` does not determine `dp` while it is closed.)
fn has_zero_factor(a: &Arena, e: ExprId, zero: &dyn Fn(VarIx) -> bool) -> bool {
    match a.node(e) {
        Node::Var(v) => zero(*v),
        Node::If(_, x, y) => has_zero_factor(a, *x, zero) || has_zero_factor(a, *y, zero),
        Node::Neg(x) | Node::Div(x, _) => has_zero_factor(a, *x, zero),
        Node::Mul(x, y) => has_zero_factor(a, *x, zero) || has_zero_factor(a, *y, zero),
        _ => false,
    }
}

/// Does `e` read a variable or `time` (so that it may change during a run)?
fn varies(a: &Arena, e: ExprId) -> bool {
    match a.node(e) {
        Node::Var(_) | Node::Pre(_) | Node::Time => true,
        Node::Const(_) | Node::Str(_) => false,
        Node::Neg(x) | Node::Not(x) | Node::CallOutput(x, _) => varies(a, *x),
        Node::Add(x, y)
        | Node::Sub(x, y)
        | Node::Mul(x, y)
        | Node::Div(x, y)
        | Node::Pow(x, y)
        | Node::And(x, y)
        | Node::Or(x, y) => varies(a, *x) || varies(a, *y),
        Node::Rel { lhs, rhs, .. } => varies(a, *lhs) || varies(a, *rhs),
        Node::If(c, x, y) => varies(a, *c) || varies(a, *x) || varies(a, *y),
        Node::Call(_, xs) | Node::Array(xs) => xs.iter().any(|&x| varies(a, x)),
        Node::Initial | Node::Terminal | Node::Sample(_) => true,
    }
}

/// State of the causal propagation inside a loop being torn.
#[derive(Clone)]
struct TearState {
    count: Vec<usize>,
    known: Vec<bool>,
    used: Vec<bool>,
    n_known: usize,
    order: Vec<(usize, usize, ExprId)>,
}

struct TearProblem<'p> {
    pairs: &'p [(ExprId, ExprId, VarIx)],
    vars: &'p [VarIx],
    /// When set, only solutions whose coefficient is free of time-varying variables count.
    safe_divisors: Option<&'p dyn Fn(VarIx) -> bool>,
    /// Parameters that are zero at their values (`L[1,2]` of a diagonal inductance matrix).
    zero_parameter: &'p dyn Fn(VarIx) -> bool,
    eq_vars: Vec<Vec<usize>>,
    var_eqs: Vec<Vec<usize>>,
    /// (equation, local var) -> explicit solution, computed on demand.
    solutions: HashMap<(usize, usize), Option<ExprId>>,
}

impl TearProblem<'_> {
    fn solution(&mut self, a: &mut Arena, e: usize, c: usize) -> Option<ExprId> {
        if let Some(&s) = self.solutions.get(&(e, c)) {
            return s;
        }
        let (l, r, _) = self.pairs[e];
        let v = self.vars[c];
        let s = match solve_for_with(a, l, r, v, false) {
            Solved::Explicit(x) if self.coefficient_is_safe(a, l, r, v) => Some(x),
            _ => None,
        };
        self.solutions.insert((e, c), s);
        s
    }

    /// With `safe_divisors`: is d(lhs - rhs)/dv free of time and of time-varying variables?
    /// A coefficient that is zero in some branch of an if-expression (`if locked then 1
    /// else 0`, friction) is never safe: in that mode the equation does not determine `v`.
    fn coefficient_is_safe(&self, a: &mut Arena, l: ExprId, r: ExprId, v: VarIx) -> bool {
        if *a.node(l) == Node::Var(v) || *a.node(r) == Node::Var(v) {
            return true;
        }
        let res = a.sub(l, r);
        let Ok(d) = a.diff_var(res, v, &mut HashMap::default()) else {
            return false;
        };
        if may_be_zero_by_branch(a, d) || has_zero_factor(a, d, self.zero_parameter) {
            return false;
        }
        let Some(fixed) = self.safe_divisors else {
            return true;
        };
        if a.as_const(d).is_some() {
            return true;
        }
        let mut vs = Vec::new();
        a.vars_of(d, false, &mut vs);
        vs.iter().all(|&x| fixed(x)) && !a.any_node(d, &mut |n| matches!(n, Node::Time))
    }

    /// Mark `c` known and assign every equation that becomes solvable (transitively). A
    /// variable is marked known as soon as an equation is assigned to it, so no second
    /// equation can be assigned to the same variable.
    fn propagate(&mut self, a: &mut Arena, st: &mut TearState, c: usize) {
        if st.known[c] {
            return;
        }
        st.known[c] = true;
        st.n_known += 1;
        let mut newly_known = vec![c];
        while let Some(c) = newly_known.pop() {
            for k in 0..self.var_eqs[c].len() {
                let e = self.var_eqs[c][k];
                st.count[e] -= 1;
                if st.count[e] != 1 || st.used[e] {
                    continue;
                }
                let Some(&u) = self.eq_vars[e].iter().find(|&&u| !st.known[u]) else {
                    continue;
                };
                if let Some(x) = self.solution(a, e, u) {
                    st.used[e] = true;
                    st.order.push((e, u, x));
                    st.known[u] = true;
                    st.n_known += 1;
                    newly_known.push(u);
                }
            }
        }
    }
}

/// Loops up to this size choose each tearing variable by trying every candidate.
const LOOKAHEAD_LIMIT: usize = 60;

/// What [`tear`] may divide by and iterate on.
struct TearSetup<'s> {
    /// When set, only solutions whose coefficient is free of time-varying variables count.
    safe_divisors: Option<&'s dyn Fn(VarIx) -> bool>,
    /// Parameters that are zero at their values.
    zero_parameter: &'s dyn Fn(VarIx) -> bool,
    /// Integer and Boolean unknowns: tearing variables only when nothing else is left.
    discrete: &'s dyn Fn(VarIx) -> bool,
    /// Variables whose start value is a good guess: preferred as tearing variables.
    good_guess: Option<&'s dyn Fn(VarIx) -> bool>,
}

fn tear(
    a: &mut Arena,
    pairs: &[(ExprId, ExprId, VarIx)],
    vars: &[VarIx],
    col: &HashMap<VarIx, u32>,
    setup: &TearSetup,
) -> WBlock {
    let TearSetup {
        safe_divisors,
        zero_parameter,
        discrete,
        good_guess,
    } = *setup;
    let n = pairs.len();
    let mut eq_vars: Vec<Vec<usize>> = Vec::with_capacity(n);
    let mut var_eqs: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, &(l, r, _)) in pairs.iter().enumerate() {
        let mut vs = Vec::new();
        a.vars_of(l, true, &mut vs);
        a.vars_of(r, true, &mut vs);
        vs.sort_unstable();
        vs.dedup();
        let local: Vec<usize> = vs
            .iter()
            .filter_map(|v| col.get(v))
            .map(|&c| c as usize)
            .collect();
        for &c in &local {
            var_eqs[c].push(i);
        }
        eq_vars.push(local);
    }
    let mut st = TearState {
        count: eq_vars.iter().map(|v| v.len()).collect(),
        known: vec![false; n],
        used: vec![false; n],
        n_known: 0,
        order: Vec::new(),
    };
    let mut tp = TearProblem {
        pairs,
        vars,
        safe_divisors,
        zero_parameter,
        eq_vars,
        var_eqs,
        solutions: HashMap::default(),
    };
    // equations that are already causal (a single unknown) are assigned first
    for e in 0..n {
        if st.count[e] == 1 && !st.used[e] {
            let u = tp.eq_vars[e].iter().copied().find(|&u| !st.known[u]);
            if let Some(u) = u {
                if let Some(x) = tp.solution(a, e, u) {
                    st.used[e] = true;
                    st.order.push((e, u, x));
                    tp.propagate(a, &mut st, u);
                }
            }
        }
    }
    let mut tears: Vec<usize> = Vec::new();
    while st.n_known < n {
        let mut candidates: Vec<usize> = (0..n)
            .filter(|&c| !st.known[c] && !discrete(vars[c]))
            .collect();
        if candidates.is_empty() {
            // only discrete unknowns left: the caller reports the loop
            candidates = (0..n).filter(|&c| !st.known[c]).collect();
        }
        // Newton starts from the start values of the tearing variables: iterate on those
        // the model gives a start value for (pressures, enthalpies, flows of a fluid
        // model) rather than on quantities computed from them (a density whose only start
        // value is its type's `start = 1`)
        if let Some(good) = good_guess {
            if candidates.iter().any(|&c| good(vars[c])) {
                candidates.retain(|&c| good(vars[c]));
            }
        }
        let occurrences = |tp: &TearProblem, c: usize, st: &TearState| {
            tp.var_eqs[c].iter().filter(|&&e| !st.used[e]).count()
        };
        let best = if candidates.len() <= LOOKAHEAD_LIMIT {
            // Cellier-style: the tearing variable that makes the most variables causal,
            // ties broken by occurrence count
            let mut best = (0usize, 0usize, candidates[0]);
            for &c in &candidates {
                let mut trial = st.clone();
                tp.propagate(a, &mut trial, c);
                let score = (trial.n_known - st.n_known, occurrences(&tp, c, &st), c);
                if (score.0, score.1) > (best.0, best.1) {
                    best = score;
                }
            }
            best.2
        } else {
            let mut best = candidates[0];
            let mut best_s = 0;
            for &c in &candidates {
                let s = occurrences(&tp, c, &st);
                if s > best_s {
                    best_s = s;
                    best = c;
                }
            }
            best
        };
        tears.push(best);
        tp.propagate(a, &mut st, best);
    }
    let iteration_vars: Vec<VarIx> = tears.iter().map(|&c| vars[c]).collect();
    let residuals: Vec<ExprId> = (0..n)
        .filter(|&e| !st.used[e])
        .map(|e| a.sub(pairs[e].0, pairs[e].1))
        .collect();
    let inner_pairs: Vec<(VarIx, ExprId)> =
        st.order.iter().map(|&(_, c, x)| (vars[c], x)).collect();
    let inner: Vec<WBlock> = inner_pairs
        .iter()
        .map(|&(var, expr)| WBlock::Assign { var, expr })
        .collect();
    // a discrete variable is piecewise constant in the iteration variables: no tangent
    let continuous_inner: Vec<(VarIx, ExprId)> = inner_pairs
        .iter()
        .copied()
        .filter(|&(v, _)| !discrete(v))
        .collect();
    let jacobian =
        if tears.len() <= MAX_SYMBOLIC_JACOBIAN && inner.len() <= 10 * MAX_SYMBOLIC_JACOBIAN {
            torn_jacobian(a, &iteration_vars, &continuous_inner, &residuals)
        } else {
            None
        };
    WBlock::Nonlinear {
        iteration_vars,
        inner,
        residuals,
        jacobian,
        linear: false,
        fallback: None,
    }
}

/// d residual_r / d tear_c through the inner assignments (forward mode, one pass per tear).
fn torn_jacobian(
    a: &mut Arena,
    tears: &[VarIx],
    inner: &[(VarIx, ExprId)],
    residuals: &[ExprId],
) -> Option<Vec<(u32, u32, ExprId)>> {
    let fder = a.fder.clone();
    let mut out = Vec::new();
    for (c, &t) in tears.iter().enumerate() {
        let mut d: HashMap<VarIx, ExprId> = HashMap::default();
        d.insert(t, a.one());
        for &(v, x) in inner {
            let dx = {
                let mut leaf = |_: &mut Arena, u: VarIx| d.get(&u).copied();
                a.diff(x, &mut leaf, &fder, &mut HashMap::default()).ok()?
            };
            d.insert(v, dx);
        }
        for (r, &res) in residuals.iter().enumerate() {
            let mut leaf = |_: &mut Arena, u: VarIx| d.get(&u).copied();
            let dr = a
                .diff(res, &mut leaf, &fder, &mut HashMap::default())
                .ok()?;
            if a.as_const(dr) != Some(0.0) {
                out.push((r as u32, c as u32, dr));
            }
        }
    }
    // chain-rule expressions share subterms; written out as trees they can grow quickly,
    // and then numerical differences are cheaper than the symbolic Jacobian
    let mut memo = HashMap::default();
    let size: usize = out
        .iter()
        .map(|&(_, _, e)| a.tree_size(e, MAX_JACOBIAN_TREE, &mut memo))
        .fold(0usize, |acc, s| acc.saturating_add(s));
    if size >= MAX_JACOBIAN_TREE {
        return None;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Rel;

    #[test]
    fn conditional_coefficients_with_a_zero_branch_are_recognized() {
        let mut a = Arena::new();
        let (x, c) = (a.var(0), a.var(1));
        let zero = a.zero();
        let one = a.one();
        let cond = a.rel(Rel::Gt, c, zero, false);
        // d/dx (if c > 0 then x else 0) = if c > 0 then 1 else 0
        let locked = a.if_(cond, one, zero);
        assert!(may_be_zero_by_branch(&a, locked));
        let scaled = a.mul(x, locked);
        assert!(may_be_zero_by_branch(&a, scaled));
        let two = a.num(2.0);
        let nonzero = a.if_(cond, one, two);
        assert!(!may_be_zero_by_branch(&a, nonzero));
        // a variable may be zero too, but only at some values: that is the safe-divisor rule
        assert!(!may_be_zero_by_branch(&a, x));
    }
}
