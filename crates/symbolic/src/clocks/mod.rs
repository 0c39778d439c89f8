//! The synchronous language of spec chapter 16: clocks, clocked partitions and their
//! lowering to the event-driven form the rest of `moss-symbolic` translates.
//!
//! Runs first in [`translate`](crate::api::translate), on the flat model:
//! 1. [`clock`]: clock variables and the equations that define them are resolved to base
//!    clocks with exact rational factors and shifts, then dropped;
//! 2. [`partition`]: the remaining equations are partitioned, cut at the sampling operators;
//! 3. [`infer`]: each clocked partition gets its clock, conflicts are located errors;
//! 4. [`lower`] (with [`discretize`]): each clocked partition becomes ordinary equations fed
//!    by discrete inputs that change only at its ticks, and one `when` clause per partition.
//!
//! A model without clocks passes through untouched (`Ok(None)`).

// The pass stops at its first error, once per translation: returning the diagnostic by
// value keeps the code plain, and its size does not matter on that path.
#![allow(clippy::result_large_err)]

pub mod clock;
pub mod discretize;
pub mod infer;
pub mod lower;
pub mod partition;
pub mod rational;
pub mod state_machines;
pub mod states;
pub mod util;

use clock::{BaseClock, ClockEnv};
use discretize::SolverMethod;
use infer::{Edge, Node};
pub use lower::DiscretizedPartition;
use lower::{BaseInfo, Lowering, Part};
use moss_frontend::flat::{Equation, Expr, FlatModel, ScalarType, Variability};
use moss_frontend::walk;
use moss_syntax::Diagnostic;
use partition::{Boundary, Item, ItemScan, Partitions};
use rational::{lcm, Rational};
use rustc_hash::FxHashMap as HashMap;
use util::{bin, call, var, VarTable};

/// A model after the clock pass.
pub struct Lowered {
    pub flat: FlatModel,
    /// The partitions whose states the symbolic stage discretizes after index reduction.
    pub discretized: Vec<DiscretizedPartition>,
}

/// Lowers the clocked partitions of `flat`; `Ok(None)` when the model has none.
pub fn lower_clocks(flat: &FlatModel) -> Result<Option<Lowered>, Vec<Diagnostic>> {
    let machines = state_machines::lower_state_machines(flat).map_err(|d| vec![d])?;
    let flat = machines.as_ref().unwrap_or(flat);
    if !uses_clocks(flat) {
        return Ok(machines.map(|flat| Lowered {
            flat,
            discretized: Vec::new(),
        }));
    }
    lower_synchronous(flat).map(Some).map_err(|d| vec![d])
}

fn uses_clocks(flat: &FlatModel) -> bool {
    if flat.variables.iter().any(|v| v.ty == ScalarType::Clock) {
        return true;
    }
    let mut found = false;
    let mut look = |e: &Expr| {
        walk::visit(e, &mut |x| {
            if let Expr::Call { func, args } = x {
                if moss_frontend::flat::CLOCK_OPERATORS.contains(&func.as_str())
                    || (func == "sample" && args.len() == 1)
                {
                    found = true;
                }
            }
        })
    };
    for eq in &flat.equations {
        for_each_equation_expr(eq, &mut look);
    }
    for a in &flat.algorithms {
        for s in &a.statements {
            let mut s = s.clone();
            walk::statement_exprs_mut(&mut s, &mut |e| look(e));
        }
    }
    found
}

/// Read-only visit of an equation's top-level expressions (the walk module only has the
/// mutable form for equations, so the equation is copied; this runs once per equation).
fn for_each_equation_expr(eq: &Equation, f: &mut dyn FnMut(&Expr)) {
    match eq {
        Equation::Equal { lhs, rhs, .. } => {
            f(lhs);
            f(rhs);
        }
        other => {
            let mut e = other.clone();
            walk::equation_exprs_mut(&mut e, &mut |x| f(x));
        }
    }
}

fn lower_synchronous(flat: &FlatModel) -> Result<Lowered, Diagnostic> {
    let vars = VarTable::new(&flat.variables);
    let mut env = ClockEnv::new(&vars);
    // 1. clock equations out, everything else scanned
    let mut items: Vec<(Item, ItemScan)> = Vec::new();
    for (i, eq) in flat.equations.iter().enumerate() {
        if clock::is_clock_equation(eq, &vars) {
            if let Equation::Equal { lhs, rhs, origin } = eq {
                env.add_equation(lhs, rhs, origin)?;
            }
        } else {
            items.push((Item::Equation(i), partition::scan_equation(eq, &vars)));
        }
    }
    for (i, a) in flat.algorithms.iter().enumerate() {
        items.push((
            Item::Algorithm(i),
            partition::scan_statements(&a.statements, &vars),
        ));
    }
    // 2. partitions
    let mut parts = Partitions::new(flat.variables.len());
    for (_, s) in &items {
        parts.join_all(&s.vars);
        for (inner, _) in &s.boundaries {
            parts.join_all(inner);
        }
    }
    let origin_of = |item: Item| partition::item_origin(item, &flat.equations, &flat.algorithms);
    let mut clocked_class: HashMap<usize, bool> = HashMap::default();
    for (_, s) in &items {
        if let Some(&v) = s.vars.first() {
            let c = parts.find(v);
            *clocked_class.entry(c).or_default() |= s.clocked;
        }
        for (inner, b) in &s.boundaries {
            if let (Some(&v), false) = (inner.first(), matches!(b, Boundary::Sample { .. })) {
                clocked_class.insert(parts.find(v), true);
            }
        }
    }
    // 3. nodes of inference: the clocked classes
    let mut node_of: HashMap<usize, usize> = HashMap::default();
    let mut nodes: Vec<Node> = Vec::new();
    let mut item_node: Vec<Option<usize>> = Vec::with_capacity(items.len());
    for (item, s) in &items {
        let class = s.vars.first().map(|&v| parts.find(v));
        let node = match class {
            Some(c) if clocked_class.get(&c).copied().unwrap_or(false) => {
                let n = *node_of.entry(c).or_insert_with(|| {
                    nodes.push(Node {
                        given: Vec::new(),
                        span: origin_of(*item).span,
                        example: vars.name(s.vars[0]).to_string(),
                    });
                    nodes.len() - 1
                });
                Some(n)
            }
            _ => None,
        };
        item_node.push(node);
    }
    let mut edges: Vec<Edge> = Vec::new();
    for ((item, s), node) in items.iter().zip(&item_node) {
        let span = origin_of(*item).span;
        if let Some(n) = node {
            for c in &s.clocks {
                if let Some(nc) = env.resolve(c, span)? {
                    nodes[*n].given.push((nc, span));
                }
            }
        } else if s.clocked {
            return Err(Diagnostic::error(
                span,
                "this clocked equation has no variable of its own, so its partition is unknown",
            ));
        }
        for (inner, b) in &s.boundaries {
            let inner_node = inner
                .first()
                .map(|&v| parts.find(v))
                .and_then(|c| node_of.get(&c).copied());
            match b {
                Boundary::Hold if !inner.is_empty() && inner_node.is_none() => {
                    return Err(Diagnostic::error(
                        span,
                        "`hold` of a signal that is not clocked",
                    )
                    .with_help("`hold(u)` turns a clocked `u` into a continuous-time signal; sample `u` first"));
                }
                Boundary::Resample(rel) => {
                    if let (Some(q), Some(p)) = (inner_node, node) {
                        edges.push(Edge {
                            from: q,
                            to: *p,
                            relation: *rel,
                            span,
                        });
                    }
                }
                Boundary::NoClock => {
                    if let (Some(q), Some(p)) = (inner_node, node) {
                        edges.push(Edge {
                            from: q,
                            to: *p,
                            relation: None,
                            span,
                        });
                    }
                }
                _ => {}
            }
        }
    }
    let clocks = infer::infer_clocks(&nodes, &edges)?;
    // 4. base clocks: counting resolution
    // Exact clocks share one base in inference; each base partition (nodes connected by
    // sampling operators) gets its own tick source, so unrelated exact clocks do not force
    // a common fine resolution on each other.
    let mut components = Partitions::new(nodes.len());
    for e in &edges {
        components.join_all(&[e.from, e.to]);
    }
    let mut bases: Vec<BaseInfo> = Vec::new();
    let mut base_of_key: HashMap<(usize, usize), usize> = HashMap::default();
    let mut node_base: Vec<usize> = Vec::with_capacity(nodes.len());
    for (k, c) in clocks.iter().enumerate() {
        let l = lcm(c.factor.den(), c.shift.den());
        let key = match env.bases[c.base] {
            BaseClock::Exact => (c.base, components.find(k)),
            _ => (c.base, usize::MAX),
        };
        let idx = *base_of_key.entry(key).or_insert_with(|| {
            let clock = match &env.bases[c.base] {
                BaseClock::Exact => BaseClock::Periodic {
                    interval: Expr::Real(1.0),
                },
                other => other.clone(),
            };
            bases.push(BaseInfo {
                clock,
                l: 1,
                tick: format!("$clock{}.tick", bases.len() + 1),
                count: format!("$clock{}.count", bases.len() + 1),
            });
            bases.len() - 1
        });
        bases[idx].l = lcm(bases[idx].l, l);
        node_base.push(idx);
    }
    let mut lparts: Vec<Part> = Vec::with_capacity(nodes.len());
    for (k, (c, n)) in clocks.iter().zip(&nodes).enumerate() {
        let bi = node_base[k];
        let base = &bases[bi];
        let l = Rational::int(base.l);
        let (a, b) = (c.factor * l, c.shift * l);
        if let BaseClock::Event { .. } | BaseClock::Variable { .. } = base.clock {
            if base.l != 1 {
                return Err(Diagnostic::error(
                    n.span,
                    "an event clock or a clock with a varying interval cannot be super-sampled or shifted by a fraction of its interval",
                )
                .with_secondary(env.base_origins[c.base], "the event clock")
                .with_help("an event clock has no interval to divide; use subSample or shiftSample by whole ticks"));
            }
        }
        if let BaseClock::Periodic { interval } = &base.clock {
            if let Some(name) = util::first_non_parameter(interval, &vars) {
                return Err(Diagnostic::error(
                    env.base_origins[c.base],
                    format!("the interval of this clock depends on `{name}`, which is not a parameter"),
                )
                .with_help("periodic clocks need a parameter interval; clocks with a time-varying interval are not supported yet"));
            }
        }
        let prefix = format!("$clock{}.p{}", bi + 1, k + 1);
        let interval = match &base.clock {
            BaseClock::Periodic { interval } => bin(
                moss_frontend::flat::BinaryOp::Div,
                bin(
                    moss_frontend::flat::BinaryOp::Mul,
                    interval.clone(),
                    Expr::Integer(a.num()),
                ),
                Expr::Integer(base.l),
            ),
            BaseClock::Event { .. } | BaseClock::Variable { .. } => {
                var(&format!("{prefix}.interval"))
            }
            BaseClock::Exact => unreachable!("exact clocks are periodic after inference"),
        };
        let solver = SolverMethod::parse(c.solver.as_deref());
        let needs_solver = items
            .iter()
            .zip(&item_node)
            .any(|((_, s), node)| *node == Some(k) && s.has_der);
        let solver = match (solver, needs_solver) {
            (Ok(m), _) => m,
            (Err(_), false) => SolverMethod::ExplicitEuler,
            (Err(msg), true) => {
                return Err(Diagnostic::error(n.span, msg)
                    .with_secondary(env.base_origins[c.base], "the clock of this partition"));
            }
        };
        lparts.push(Part {
            base: bi,
            clock: c.clone(),
            a: a.num(),
            b: b.num(),
            tick: format!("{prefix}.tick"),
            ticks: format!("{prefix}.ticks"),
            time: None,
            interval,
            updates: Vec::new(),
            origin: moss_frontend::flat::Origin {
                span: n.span,
                instance: Default::default(),
            },
            solver,
            states: Vec::new(),
            symbolic: solver.discretized_after_index_reduction(),
            starts_late: b.num() > 0,
            equations: Vec::new(),
            inputs: Vec::new(),
        });
    }
    // 5. rewrite
    let var_part: Vec<Option<usize>> = (0..flat.variables.len())
        .map(|v| node_of.get(&parts.find(v)).copied())
        .collect();
    let mut low = Lowering::new(&vars, bases, lparts, var_part);
    for (k, &bi) in node_base.iter().enumerate() {
        match low.bases[bi].clock.clone() {
            BaseClock::Event { start_interval, .. } => {
                add_event_interval(&mut low, k, start_interval)
            }
            // the first tick's interval, as the clock was defined before that tick
            BaseClock::Variable { interval } => {
                add_event_interval(&mut low, k, lower::left_limit(&interval, &vars))
            }
            _ => {}
        }
    }
    let mut equations = Vec::with_capacity(flat.equations.len());
    let mut algorithms = Vec::with_capacity(flat.algorithms.len());
    for ((item, _), node) in items.iter().zip(&item_node) {
        match *item {
            Item::Equation(i) => {
                let first = equations.len();
                low.rewrite_equation(flat.equations[i].clone(), *node, &mut equations)?;
                if let Some(p) = *node {
                    low.parts[p].equations.extend(first..equations.len());
                }
            }
            Item::Algorithm(i) => {
                let a = &flat.algorithms[i];
                let statements = low.rewrite_statements(a.statements.clone(), *node, &a.origin)?;
                algorithms.push(moss_frontend::flat::Algorithm {
                    statements,
                    origin: a.origin.clone(),
                });
            }
        }
    }
    let initial_equations = low.clocked_pre_in_initial_equations(&flat.initial_equations);
    low.read_previous_states(&mut equations);
    let ticking = low.tick_equations(&equations)?;
    equations.extend(ticking);
    // clocked variables are algebraic between ticks: their `fixed` start values belong to
    // `previous`, not to the initialization problem; in partitions discretized after index
    // reduction they are kept until then (alias elimination moves a `fixed` start to the
    // variable it keeps, and the states are chosen with them)
    let names: Vec<&str> = flat.variables.iter().map(|v| v.name.as_str()).collect();
    let discretized = low.discretized_after_index_reduction(&names);
    let clocked_vars: Vec<bool> = (0..flat.variables.len())
        .map(|v| node_of.contains_key(&parts.find(v)))
        .collect();
    let fixed_kept: Vec<bool> = low
        .var_part
        .iter()
        .map(|p| p.is_some_and(|p| low.parts[p].symbolic && !low.parts[p].states.is_empty()))
        .collect();
    let mut out = FlatModel {
        name: flat.name.clone(),
        variables: Vec::with_capacity(flat.variables.len() + low.new_vars.len()),
        equations,
        initial_equations,
        algorithms,
        initial_algorithms: flat.initial_algorithms.clone(),
        functions: flat.functions.clone(),
        experiment: flat.experiment.clone(),
        sources: flat.sources.clone(),
        inner_outer: flat.inner_outer.clone(),
        structural_parameters: flat.structural_parameters.clone(),
    };
    for ((v, clocked), keep_fixed) in flat.variables.iter().zip(clocked_vars).zip(fixed_kept) {
        if v.ty == ScalarType::Clock {
            continue;
        }
        let mut v = v.clone();
        if clocked {
            if !keep_fixed {
                v.attrs.fixed = None;
            }
            if v.variability == Variability::Discrete {
                v.variability = Variability::Continuous;
            }
        }
        out.variables.push(v);
    }
    out.variables.append(&mut low.new_vars);
    Ok(Lowered {
        flat: out,
        discretized,
    })
}

/// `interval()` of an event clock: the time since the partition's previous tick
/// (`startInterval` at the first tick).
fn add_event_interval(low: &mut Lowering, k: usize, start_interval: Expr) {
    let prefix = low.parts[k].tick.trim_end_matches(".tick").to_string();
    let (interval, last) = (format!("{prefix}.interval"), format!("{prefix}.last"));
    let origin = low.parts[k].origin.clone();
    low.add_var(
        &interval,
        ScalarType::Real,
        Variability::Discrete,
        Some(start_interval.clone()),
        &origin,
        "interval of an event clock",
    );
    low.add_var(
        &last,
        ScalarType::Real,
        Variability::Discrete,
        Some(Expr::Real(0.0)),
        &origin,
        "time of the previous tick of an event clock",
    );
    let first = bin(
        moss_frontend::flat::BinaryOp::Eq,
        call("pre", vec![var(&low.parts[k].ticks)]),
        Expr::Integer(0),
    );
    let since = bin(
        moss_frontend::flat::BinaryOp::Sub,
        Expr::Time,
        call("pre", vec![var(&last)]),
    );
    low.parts[k].updates.push(Equation::Equal {
        lhs: var(&interval),
        rhs: Expr::If {
            branches: vec![(first, start_interval)],
            else_: Box::new(since),
        },
        origin: origin.clone(),
    });
    low.parts[k].updates.push(Equation::Equal {
        lhs: var(&last),
        rhs: Expr::Time,
        origin,
    });
}
