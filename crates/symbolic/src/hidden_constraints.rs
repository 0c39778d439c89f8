//! Constraints hidden in linear dependencies between equations.
//!
//! Pantelides' algorithm finds the constraints a model imposes on its states from the
//! structure alone. A set of linear equations whose unknowns cancel when they are added up
//! holds a constraint the structure does not show. The circuit case is the cutset of
//! inductors: three grid chokes feeding a diode bridge whose DC side (capacitor, inverter,
//! machine) has no connection to ground. Each node's current balance has unknowns of its
//! own, so a matching exists, but the sum of the balances of all nodes of the ungrounded part
//! is `i_L1 + i_L2 + i_L3 = 0`: the three choke currents cannot all be states. Left alone,
//! the currents drift apart, the common-mode voltage of the DC side is undetermined, and the
//! loop that computes the bridge's currents is singular at run time.
//!
//! This pass looks for such combinations among the equations that are linear with constant
//! coefficients (current balances, `p.i + n.i = 0`, sums of voltages): Gaussian elimination
//! over their unknowns, keeping track of which equations each reduced row combines. A row
//! that reduces to zero in the unknowns but not in the known variables (state candidates,
//! parameters, and unknowns an equation computes from known variables alone) is a hidden
//! constraint: the equation it started from is replaced by the combination, which is
//! equivalent (the set of equations spans the same space) and shows the constraint to index
//! reduction. Dependencies with nothing left (a redundant balance of a floating network) are
//! left alone: they are the model's own singularity and reported as such later.
//!
//! Only constant coefficients are used, so the new equation holds whatever values the
//! parameters are given before a run. The elimination works per connected block and stops
//! after [`MAX_WORK`] row operations in total (a model that large keeps its equations as
//! written; this pass then only misses constraints, it never changes an answer).

use crate::ir::{ExprId, Node, VarIx};
use crate::model::{EqBody, Model, VKind};
use crate::zero_params::parameter_value;
use rustc_hash::FxHashMap as HashMap;

/// Terms of the longest equation considered (a node joining this many branches).
const MAX_TERMS: usize = 64;

/// Entry updates of the elimination, over all blocks.
const MAX_WORK: usize = 4_000_000;

/// Relative size below which an eliminated coefficient is zero.
const ZERO: f64 = 1e-12;

/// A constraint found and the equation it replaced.
#[derive(Clone, Debug)]
pub struct HiddenConstraint {
    pub equation: usize,
    pub text: String,
}

/// What the pass found.
#[derive(Default)]
pub struct Revealed {
    /// Constraints that replaced an equation.
    pub constraints: Vec<HiddenConstraint>,
    /// Parameters in the coefficients of dependencies not replaced yet: with them evaluated
    /// (constants), the translation finds those dependencies with constant coefficients.
    pub parameters: Vec<VarIx>,
}

/// Replaces equations by the constraints hidden in linear dependencies (see the module
/// documentation).
pub fn reveal_hidden_constraints(m: &mut Model) -> Revealed {
    let mut out = Revealed::default();
    let (known, defining) = known_variables(m);
    let rows = linear_rows(m, &known, &defining);
    if rows.is_empty() {
        return out;
    }
    let dependencies = eliminate(&rows, &known);
    // a single row without unknowns is a constraint the structure already shows
    for combo in dependencies.into_iter().filter(|c| c.len() > 1) {
        let mut parameters: Vec<VarIx> = combo
            .keys()
            .flat_map(|&r| rows[r].parameters.iter().copied())
            .collect();
        if !parameters.is_empty() {
            parameters.sort_unstable();
            parameters.dedup();
            out.parameters.extend(parameters);
            continue;
        }
        if let Some(c) = replace_with_combination(m, &rows, &combo) {
            out.constraints.push(c);
        }
    }
    out.parameters.sort_unstable();
    out.parameters.dedup();
    out
}

/// One equation linear in its unknowns: `sum(k * v) + sum(k * e) + c = 0`, with `e` the
/// subexpressions that hold no unknown (sources, functions of states and parameters).
struct LinearRow {
    equation: usize,
    terms: Vec<(VarIx, f64)>,
    known_exprs: Vec<(ExprId, f64)>,
    constant: f64,
    /// Parameters in the coefficients of variables (their values are in `terms`).
    parameters: Vec<VarIx>,
}

/// The equations linear in their unknowns with constant or parameter coefficients, but
/// those that compute an unknown from known variables (they are that unknown's definition,
/// not a relation between unknowns).
fn linear_rows(m: &mut Model, known: &[bool], defining: &[bool]) -> Vec<LinearRow> {
    let mut rows = Vec::new();
    for e in (0..m.eqs.len()).filter(|&e| !defining[e]) {
        let EqBody::Eq { lhs, rhs } = m.eqs[e].body else {
            continue;
        };
        let mut row = LinearRow {
            equation: e,
            terms: Vec::new(),
            known_exprs: Vec::new(),
            constant: 0.0,
            parameters: Vec::new(),
        };
        let ok = collect(m, known, lhs, 1.0, 0, &mut row).is_some()
            && collect(m, known, rhs, -1.0, 0, &mut row).is_some();
        let unknowns = row.terms.iter().filter(|t| !known[t.0 as usize]).count();
        if ok && unknowns >= 1 && row.terms.len() + row.known_exprs.len() >= 2 {
            rows.push(row);
        }
    }
    rows
}

/// Adds `k * e` to `row`; `None` when `e` is not linear in the unknowns.
fn collect(
    m: &mut Model,
    known: &[bool],
    e: ExprId,
    k: f64,
    depth: u32,
    row: &mut LinearRow,
) -> Option<()> {
    if depth > 2 * MAX_TERMS as u32 || row.terms.len() > MAX_TERMS {
        return None;
    }
    if let Some(c) = m.arena.as_const(e) {
        row.constant += k * c;
        return Some(());
    }
    match m.arena.node(e).clone() {
        Node::Var(v) => {
            match row.terms.iter_mut().find(|t| t.0 == v) {
                Some(t) => t.1 += k,
                None => row.terms.push((v, k)),
            }
            return Some(());
        }
        Node::Neg(x) => return collect(m, known, x, -k, depth + 1, row),
        Node::Add(x, y) => {
            collect(m, known, x, k, depth + 1, row)?;
            return collect(m, known, y, k, depth + 1, row);
        }
        Node::Sub(x, y) => {
            collect(m, known, x, k, depth + 1, row)?;
            return collect(m, known, y, -k, depth + 1, row);
        }
        _ => {}
    }
    if !mentions_unknown(m, known, e) {
        row.known_exprs.push((e, k));
        return Some(());
    }
    match m.arena.node(e).clone() {
        Node::Mul(x, y) => {
            let (factor, rest) = if m.is_parameter_expr(x) {
                (x, y)
            } else if m.is_parameter_expr(y) {
                (y, x)
            } else {
                return None;
            };
            let value = parameter_value(m, factor)?;
            note_parameters(m, factor, row);
            collect(m, known, rest, k * value, depth + 1, row)
        }
        Node::Div(x, y) if m.is_parameter_expr(y) => {
            let value = parameter_value(m, y)?;
            if value == 0.0 {
                return None;
            }
            note_parameters(m, y, row);
            collect(m, known, x, k / value, depth + 1, row)
        }
        _ => None,
    }
}

fn mentions_unknown(m: &mut Model, known: &[bool], e: ExprId) -> bool {
    m.arena.any_node(e, &mut |n| match n {
        Node::Var(v) => !known[*v as usize],
        _ => false,
    })
}

fn note_parameters(m: &mut Model, factor: ExprId, row: &mut LinearRow) {
    if m.arena.as_const(factor).is_some() {
        return;
    }
    let mut vs = Vec::new();
    m.arena.vars_of(factor, false, &mut vs);
    for v in vs {
        if m.vars[v as usize].kind == VKind::Parameter && !row.parameters.contains(&v) {
            row.parameters.push(v);
        }
    }
}

/// Variables whose values do not come from the equation system at this stage: parameters,
/// constants, inputs, discrete variables, state candidates (variables that appear
/// differentiated), and unknowns that an equation computes from such variables alone; with
/// the equations that compute them.
fn known_variables(m: &mut Model) -> (Vec<bool>, Vec<bool>) {
    let mut known: Vec<bool> = m
        .vars
        .iter()
        .map(|sv| sv.eliminated || !matches!(sv.kind, VKind::Continuous) || sv.der.is_some())
        .collect();
    // unknowns computed from known variables alone (sources: `i = I*sin(w*time)`)
    let mut defining = vec![false; m.eqs.len()];
    let mut changed = true;
    let mut rounds = 0;
    while changed && rounds < 4 {
        changed = false;
        rounds += 1;
        let open: Vec<usize> = (0..m.eqs.len()).filter(|&e| !defining[e]).collect();
        for e in open {
            if !matches!(m.eqs[e].body, EqBody::Eq { .. }) {
                continue;
            }
            let eq = m.eqs[e].clone();
            let vars = m.incidence(&eq);
            let mut unknown = vars.iter().filter(|&&v| !known[v as usize]);
            if let (Some(&v), None) = (unknown.next(), unknown.next()) {
                known[v as usize] = true;
                defining[e] = true;
                changed = true;
            }
        }
    }
    (known, defining)
}

/// A reduced row: its unknown part and the combination of original rows it is.
struct Reduced {
    unknowns: HashMap<VarIx, f64>,
    combo: HashMap<usize, f64>,
}

/// The combinations (row index → factor) of rows whose unknowns cancel.
fn eliminate(rows: &[LinearRow], known: &[bool]) -> Vec<HashMap<usize, f64>> {
    let mut pivots: HashMap<VarIx, Reduced> = HashMap::default();
    let mut dependencies = Vec::new();
    let mut work = 0usize;
    for (r, row) in rows.iter().enumerate() {
        let mut unknowns: HashMap<VarIx, f64> = HashMap::default();
        let mut scale = 0.0f64;
        for &(v, k) in &row.terms {
            if !known[v as usize] {
                *unknowns.entry(v).or_default() += k;
                scale = scale.max(k.abs());
            }
        }
        let mut combo: HashMap<usize, f64> = HashMap::default();
        combo.insert(r, 1.0);
        while let Some((v, k)) = unknowns
            .iter()
            .find(|(v, _)| pivots.contains_key(v))
            .map(|(&v, &k)| (v, k))
        {
            let p = &pivots[&v];
            let f = k / p.unknowns[&v];
            for (&u, &c) in &p.unknowns {
                *unknowns.entry(u).or_default() -= f * c;
            }
            for (&q, &c) in &p.combo {
                *combo.entry(q).or_default() -= f * c;
            }
            work += p.unknowns.len() + p.combo.len();
            if work > MAX_WORK {
                return Vec::new();
            }
            unknowns.retain(|_, c| c.abs() > ZERO * scale.max(1.0));
            unknowns.remove(&v);
        }
        combo.retain(|_, c| c.abs() > ZERO);
        // pivot on the unknown with the largest coefficient (ties: lowest index, for a
        // reproducible choice)
        let pivot = unknowns
            .iter()
            .max_by(|a, b| {
                a.1.abs()
                    .partial_cmp(&b.1.abs())
                    .unwrap_or(std::cmp::Ordering::Equal)
                    .then(b.0.cmp(a.0))
            })
            .map(|(&v, _)| v);
        match pivot {
            Some(v) => {
                pivots.insert(v, Reduced { unknowns, combo });
            }
            None => dependencies.push(combo),
        }
    }
    dependencies
}

/// Replaces the last equation of `combo` by the combination's known part, when that part
/// is not identically zero.
fn replace_with_combination(
    m: &mut Model,
    rows: &[LinearRow],
    combo: &HashMap<usize, f64>,
) -> Option<HiddenConstraint> {
    let mut coefficients: HashMap<VarIx, f64> = HashMap::default();
    let mut constant = 0.0;
    let mut scale = 0.0f64;
    for (&r, &y) in combo {
        for &(v, k) in &rows[r].terms {
            *coefficients.entry(v).or_default() += y * k;
            scale = scale.max((y * k).abs());
        }
        constant += y * rows[r].constant;
    }
    let known_exprs: Vec<(ExprId, f64)> = combo
        .iter()
        .flat_map(|(&r, &y)| rows[r].known_exprs.iter().map(move |&(e, k)| (e, y * k)))
        .filter(|t| t.1.abs() > ZERO)
        .collect();
    let mut terms: Vec<(VarIx, f64)> = coefficients
        .into_iter()
        .filter(|(_, k)| k.abs() > ZERO * scale.max(1.0))
        .collect();
    if terms.is_empty() && known_exprs.is_empty() {
        return None;
    }
    terms.sort_unstable_by_key(|t| t.0);
    let replaced = rows[*combo.keys().max()?].equation;
    let a = &mut m.arena;
    let mut sum: ExprId = a.num(constant);
    for &(v, k) in &terms {
        let x = a.var(v);
        let c = a.num(k);
        let term = a.mul(c, x);
        sum = a.add(sum, term);
    }
    for &(e, k) in &known_exprs {
        let c = a.num(k);
        let term = a.mul(c, e);
        sum = a.add(sum, term);
    }
    let zero = a.zero();
    m.eqs[replaced].body = EqBody::Eq {
        lhs: zero,
        rhs: sum,
    };
    m.eqs[replaced].shown = None;
    let text = m.text(sum);
    Some(HiddenConstraint {
        equation: replaced,
        text: format!("0 = {text}"),
    })
}
