//! Lowering of clocked partitions to the hybrid-DAE form the rest of the pipeline runs
//! (events, `when` clauses, `pre`), per spec 16.9's semantics:
//!
//! - each base clock becomes one tick source: `sample(start time, interval/L)` for periodic
//!   clocks (L the least common multiple of the denominators of its sub-clocks' rational
//!   factors and shifts, so that coinciding ticks are one event) or its condition for event
//!   clocks, and a tick counter;
//! - each clocked partition ticks on a Boolean `$clockB.P.tick` derived from the base ticks by
//!   counting (every `a`-th base tick from the `b`-th), and keeps its equations as they are:
//!   between ticks every input of the partition is constant, so its variables are too;
//! - the inputs that change only at ticks are discrete variables assigned in one `when` per
//!   partition: `previous(x)` (the value of `x` before this tick; its start value at the first
//!   tick), `sample(u)` (the left limit of `u`), the sub/super/shift/back-sampled values and
//!   `noClock(u)` (the current value of `u`), the tick time, and the interval of event clocks;
//! - `hold(y)` is `y` itself; `firstTick()` is "this is tick 1"; `interval()` of a periodic
//!   clock is a parameter expression;
//! - `der(x)` in a clocked partition is discretized with the partition's solver method
//!   (see [`discretize`](super::discretize)).

use super::clock::{BaseClock, NClock};
use super::discretize::{self, SolverMethod};
use super::util::{bin, call, default_value, expr_type, var, VarTable};
use moss_frontend::flat::{
    Attributes, BinaryOp, Causality, Equation, Expr, Origin, ScalarType, Statement, Variability,
    Variable,
};
use moss_frontend::walk;
use moss_syntax::Diagnostic;
use rustc_hash::FxHashMap as HashMap;

/// A base clock after inference: how its sub-partitions' ticks are counted.
pub struct BaseInfo {
    pub clock: BaseClock,
    /// Base ticks per unit of the clock's interval.
    pub l: i64,
    pub tick: String,
    pub count: String,
}

/// A clocked partition during lowering.
pub struct Part {
    /// Index into [`Lowering::bases`].
    pub base: usize,
    pub clock: NClock,
    /// Every `a`-th base tick, from base tick `b` on.
    pub a: i64,
    pub b: i64,
    pub tick: String,
    pub ticks: String,
    pub time: Option<String>,
    pub interval: Expr,
    /// `when tick then ... end when` body: the discrete inputs of the partition.
    pub updates: Vec<Equation>,
    pub origin: Origin,
    pub solver: SolverMethod,
    /// `x` → `der(x)` stand-in, for the discretization equations.
    pub states: Vec<(String, String)>,
    /// The partition's states are discretized after index reduction
    /// ([`super::states`]): `der(x)` stays a derivative here, so that constraints between
    /// the partition's differentiated variables are reduced like those of the continuous
    /// model. The explicit multi-stage methods copy the partition's equations per stage and
    /// are discretized here instead (index-1 partitions only).
    pub symbolic: bool,
    /// The partition starts ticking after the simulation starts (shifted, or an event
    /// clock): until its first tick its variables keep their start values.
    pub starts_late: bool,
    /// Indices of the partition's equations in the lowered model (for the stage copies of
    /// the explicit multi-stage solver methods).
    pub equations: Vec<usize>,
    /// Its tick inputs: (variable, sampled from a continuous-time signal).
    pub inputs: Vec<(String, bool)>,
}

pub struct Lowering<'a> {
    pub vars: &'a VarTable<'a>,
    pub new_vars: Vec<Variable>,
    pub bases: Vec<BaseInfo>,
    pub parts: Vec<Part>,
    prev_of: HashMap<(usize, String), String>,
    counter: usize,
    /// The clocked partition of each variable of the flat model (by index).
    pub var_part: Vec<Option<usize>>,
}

impl<'a> Lowering<'a> {
    pub fn new(
        vars: &'a VarTable<'a>,
        bases: Vec<BaseInfo>,
        parts: Vec<Part>,
        var_part: Vec<Option<usize>>,
    ) -> Self {
        Lowering {
            var_part,
            vars,
            new_vars: Vec::new(),
            bases,
            parts,
            prev_of: HashMap::default(),
            counter: 0,
        }
    }

    /// Adds a hidden variable of the clock pass.
    pub fn add_var(
        &mut self,
        name: &str,
        ty: ScalarType,
        variability: Variability,
        start: Option<Expr>,
        origin: &Origin,
        description: &str,
    ) {
        self.new_vars.push(Variable {
            name: name.to_string(),
            ty,
            variability,
            causality: Causality::Internal,
            binding: None,
            attrs: Attributes {
                fixed: start.as_ref().map(|_| true),
                start,
                ..Attributes::default()
            },
            is_flow: false,
            is_stream: false,
            is_protected: true,
            evaluate: false,
            description: description.to_string(),
            origin: origin.clone(),
        });
    }

    /// The type and start value of a clocked input copied from `e`.
    fn copy_type(&self, e: &Expr) -> (ScalarType, Expr) {
        if let Expr::Var { name, .. } = e {
            if let Some(v) = self.vars.get(name) {
                let start = v
                    .attrs
                    .start
                    .clone()
                    .unwrap_or_else(|| default_value(&v.ty));
                return (v.ty.clone(), start);
            }
        }
        let ty = match expr_type(e, self.vars) {
            ScalarType::Enumeration { .. } => ScalarType::Integer,
            t => t,
        };
        let start = default_value(&ty);
        (ty, start)
    }

    /// The discrete variable holding `previous(x)` in partition `p`.
    pub fn previous_of(&mut self, p: usize, x: &str, origin: &Origin) -> String {
        if let Some(n) = self.prev_of.get(&(p, x.to_string())) {
            return n.clone();
        }
        let name = format!("$previous({x})");
        let name = if self.prev_of.values().any(|n| *n == name) {
            format!("$previous{}({x})", p)
        } else {
            name
        };
        let (ty, start) = match self.vars.get(x) {
            Some(v) => (
                v.ty.clone(),
                v.attrs
                    .start
                    .clone()
                    .unwrap_or_else(|| default_value(&v.ty)),
            ),
            // a stand-in created by this pass (`der(x)`): Real, start 0
            None => (ScalarType::Real, Expr::Real(0.0)),
        };
        self.add_var(
            &name,
            ty,
            Variability::Discrete,
            Some(start),
            origin,
            "previous value of a clocked variable",
        );
        let ticks = var(&self.parts[p].ticks);
        let first = bin(BinaryOp::Eq, call("pre", vec![ticks]), Expr::Integer(0));
        self.parts[p].updates.push(Equation::Equal {
            lhs: var(&name),
            rhs: Expr::If {
                branches: vec![(first, call("pre", vec![var(&name)]))],
                else_: Box::new(call("pre", vec![var(x)])),
            },
            origin: origin.clone(),
        });
        self.prev_of.insert((p, x.to_string()), name.clone());
        name
    }

    /// A discrete input of partition `p` assigned `value` at each tick.
    fn tick_input(
        &mut self,
        p: usize,
        like: &Expr,
        value: Expr,
        origin: &Origin,
        what: &str,
    ) -> Expr {
        self.counter += 1;
        let name = format!("$clock.sample{}", self.counter);
        let (ty, start) = self.copy_type(like);
        self.add_var(&name, ty, Variability::Discrete, Some(start), origin, what);
        self.parts[p].updates.push(Equation::Equal {
            lhs: var(&name),
            rhs: value,
            origin: origin.clone(),
        });
        var(&name)
    }

    /// The tick time of partition `p` (what `time` means inside it).
    fn tick_time(&mut self, p: usize, origin: &Origin) -> Expr {
        if let Some(t) = &self.parts[p].time {
            return var(t);
        }
        let name = format!("{}.time", self.parts[p].tick.trim_end_matches(".tick"));
        self.add_var(
            &name,
            ScalarType::Real,
            Variability::Discrete,
            Some(Expr::Real(0.0)),
            origin,
            "time of the latest tick of a clocked partition",
        );
        self.parts[p].updates.push(Equation::Equal {
            lhs: var(&name),
            rhs: Expr::Time,
            origin: origin.clone(),
        });
        self.parts[p].time = Some(name.clone());
        var(&name)
    }

    /// Rewrites an expression of clocked partition `p` (`None`: continuous-time).
    pub fn rewrite(
        &mut self,
        e: &mut Expr,
        p: Option<usize>,
        origin: &Origin,
    ) -> Result<(), Diagnostic> {
        match e {
            Expr::Time => {
                if let Some(p) = p {
                    *e = self.tick_time(p, origin);
                }
                return Ok(());
            }
            Expr::Call { func, args } => {
                if let Some(new) = self.rewrite_call(func, args, p, origin)? {
                    *e = new;
                    return Ok(());
                }
            }
            _ => {}
        }
        let mut result = Ok(());
        walk::exprs_mut(e, &mut |x| {
            if result.is_ok() {
                result = self.rewrite(x, p, origin);
            }
        });
        result
    }

    fn rewrite_call(
        &mut self,
        func: &str,
        args: &mut [Expr],
        p: Option<usize>,
        origin: &Origin,
    ) -> Result<Option<Expr>, Diagnostic> {
        let clocked_input = |f: &str, args: &[Expr]| match f {
            "sample" => {
                args.len() == 1
                    || args
                        .get(1)
                        .is_some_and(|c| super::util::is_clock_expr(c, self.vars))
            }
            "subSample" | "superSample" | "shiftSample" | "backSample" => !args
                .first()
                .is_some_and(|a| super::util::is_clock_expr(a, self.vars)),
            "noClock" => true,
            _ => false,
        };
        if func == "hold" {
            let a = args.first().cloned().unwrap_or(Expr::Real(0.0));
            return self.hold(a, origin).map(Some);
        }
        // `interval(u)` and `firstTick(u)` are about the clock of `u`.
        let p = match (func, args.first()) {
            ("interval" | "firstTick", Some(u)) => self.partition_of(u).or(p),
            _ => p,
        };
        let Some(p) = p else {
            if matches!(func, "previous" | "firstTick" | "interval") || clocked_input(func, args) {
                return Err(Diagnostic::error(
                    origin.span,
                    format!("`{func}` is used outside a clocked partition"),
                ));
            }
            return Ok(None);
        };
        if clocked_input(func, args) {
            let Some(u) = args.first() else {
                return Err(Diagnostic::error(
                    origin.span,
                    format!("`{func}` needs an argument"),
                ));
            };
            let u = u.clone();
            // The argument belongs to another partition, continuous-time for `sample` (its
            // left limit), clocked for the others (its latest value, or its start value
            // before that partition's first tick, like `hold`).
            let value = if func == "sample" {
                let mut v = u.clone();
                self.rewrite(&mut v, None, origin)?;
                left_limit(&v, self.vars)
            } else {
                self.hold(u.clone(), origin)?
            };
            let what = format!("`{func}` input of a clocked partition");
            let input = self.tick_input(p, &u, value, origin, &what);
            if let Expr::Var { name, .. } = &input {
                self.parts[p].inputs.push((name.clone(), func == "sample"));
            }
            return Ok(Some(input));
        }
        match func {
            "previous" => match args.first() {
                Some(Expr::Var { name, subscripts }) if subscripts.is_empty() => {
                    let n = self.previous_of(p, &name.clone(), origin);
                    Ok(Some(var(&n)))
                }
                _ => Err(Diagnostic::error(
                    origin.span,
                    "the argument of `previous` must be a variable (a component reference)",
                )
                .with_help("introduce a variable for the expression and take `previous` of it")),
            },
            "firstTick" => Ok(Some(bin(
                BinaryOp::Eq,
                var(&self.parts[p].ticks),
                Expr::Integer(1),
            ))),
            "interval" => Ok(Some(self.parts[p].interval.clone())),
            "der" => match args.first() {
                Some(Expr::Var { name, subscripts }) if subscripts.is_empty() => {
                    let name = name.clone();
                    Ok(Some(self.derivative_of(p, &name, origin)))
                }
                _ => Err(Diagnostic::error(
                    origin.span,
                    "in a clocked partition, `der` must be applied to a variable",
                )),
            },
            _ => Ok(None),
        }
    }

    /// The clocked partition of the first variable of `u`.
    fn partition_of(&self, u: &Expr) -> Option<usize> {
        let mut part = None;
        walk::visit(u, &mut |x| {
            if let Expr::Var { name, .. } = x {
                if part.is_none() {
                    part = self.vars.index(name).and_then(|i| self.var_part[i]);
                }
            }
        });
        part
    }

    /// `hold(u)`: `u` itself once its partition has ticked, the start value of `u` before
    /// (spec 16.5.1).
    fn hold(&mut self, u: Expr, origin: &Origin) -> Result<Expr, Diagnostic> {
        // `u` is an expression of its own partition (`shiftSample(previous(x))`)
        let part = self.partition_of(&u);
        let mut held = u;
        self.rewrite(&mut held, part, origin)?;
        let Some(q) = part else { return Ok(held) };
        let before_first_tick = bin(BinaryOp::Eq, var(&self.parts[q].ticks), Expr::Integer(0));
        Ok(Expr::If {
            branches: vec![(before_first_tick, start_values(&held, self.vars))],
            else_: Box::new(held),
        })
    }

    /// `pre(x)` of a clocked `x` in an initial equation (a start value given by a function,
    /// `pre(state) = initialState(seed)`) is the value `previous(x)` has at the first tick.
    pub fn clocked_pre_in_initial_equations(&mut self, eqs: &[Equation]) -> Vec<Equation> {
        let mut out = eqs.to_vec();
        for eq in &mut out {
            let origin = eq.origin().clone();
            walk::equation_exprs_mut(eq, &mut |e| self.redirect_pre(e, &origin));
        }
        out
    }

    fn redirect_pre(&mut self, e: &mut Expr, origin: &Origin) {
        if let Expr::Call { func, args } = e {
            if func == "pre" {
                if let [Expr::Var { name, subscripts }] = args.as_slice() {
                    let part = self.vars.index(name).and_then(|i| self.var_part[i]);
                    if let (Some(p), true) = (part, subscripts.is_empty()) {
                        let prev = self.previous_of(p, &name.clone(), origin);
                        args[0] = var(&prev);
                    }
                    return;
                }
            }
        }
        walk::exprs_mut(e, &mut |x| self.redirect_pre(x, origin));
    }

    /// The stand-in for `der(x)` in a discretized partition (`der(x)` itself when the
    /// partition is discretized after index reduction).
    fn derivative_of(&mut self, p: usize, x: &str, origin: &Origin) -> Expr {
        if self.parts[p].symbolic {
            if !self.parts[p].states.iter().any(|(s, _)| s == x) {
                self.parts[p]
                    .states
                    .push((x.to_string(), format!("der({x})")));
            }
            return call("der", vec![var(x)]);
        }
        if let Some((_, d)) = self.parts[p].states.iter().find(|(s, _)| s == x) {
            return var(d);
        }
        let d = format!("$der({x})");
        self.add_var(
            &d,
            ScalarType::Real,
            Variability::Continuous,
            None,
            origin,
            "derivative in a discretized clocked partition",
        );
        self.parts[p].states.push((x.to_string(), d.clone()));
        var(&d)
    }

    /// Rewrites an equation of partition `p`; a clocked `when` gives its body.
    pub fn rewrite_equation(
        &mut self,
        eq: Equation,
        p: Option<usize>,
        out: &mut Vec<Equation>,
    ) -> Result<(), Diagnostic> {
        if let (Some(_), Equation::When { branches, origin }) = (p, &eq) {
            if branches.len() == 1 && super::util::is_clock_expr(&branches[0].0, self.vars) {
                for b in branches[0].1.clone() {
                    self.rewrite_equation(b, p, out)?;
                }
                return Ok(());
            }
            return Err(Diagnostic::error(
                origin.span,
                "a `when` clause with a Boolean condition is not allowed in a clocked partition",
            )
            .with_help("use `when Clock() then` (or the partition's clock) in clocked equations"));
        }
        let mut eq = eq;
        let origin = super::partition::equation_origin(&eq).clone();
        let mut result = Ok(());
        walk::equation_exprs_mut(&mut eq, &mut |x| {
            if result.is_ok() {
                result = self.rewrite(x, p, &origin);
            }
        });
        result?;
        if let (Some(p), Equation::Equal { lhs, rhs, .. }) = (p, &mut eq) {
            if self.parts[p].starts_late {
                self.hold_start_until_first_tick(p, lhs, rhs);
            }
        }
        out.push(eq);
        Ok(())
    }

    /// `x = e` becomes `x = if ticks == 0 then x.start else e`: a clocked variable has its
    /// start value before the first tick of its clock (spec 16.9).
    fn hold_start_until_first_tick(&self, p: usize, lhs: &Expr, rhs: &mut Expr) {
        let Expr::Var { name, subscripts } = lhs else {
            return;
        };
        let Some(v) = self.vars.get(name).filter(|_| subscripts.is_empty()) else {
            return;
        };
        let start = v
            .attrs
            .start
            .clone()
            .unwrap_or_else(|| default_value(&v.ty));
        let before = bin(BinaryOp::Eq, var(&self.parts[p].ticks), Expr::Integer(0));
        let e = std::mem::replace(rhs, Expr::Real(0.0));
        *rhs = Expr::If {
            branches: vec![(before, start)],
            else_: Box::new(e),
        };
    }

    /// Rewrites an algorithm section of partition `p` (clocked `when` statements give their
    /// bodies).
    pub fn rewrite_statements(
        &mut self,
        stmts: Vec<Statement>,
        p: Option<usize>,
        origin: &Origin,
    ) -> Result<Vec<Statement>, Diagnostic> {
        let mut out = Vec::with_capacity(stmts.len());
        for s in stmts {
            if let (Some(_), Statement::When { branches, .. }) = (p, &s) {
                if branches.len() == 1 && super::util::is_clock_expr(&branches[0].0, self.vars) {
                    let body = self.rewrite_statements(branches[0].1.clone(), p, origin)?;
                    out.extend(body);
                    continue;
                }
            }
            let mut s = s;
            let mut result = Ok(());
            walk::statement_exprs_mut(&mut s, &mut |x| {
                if result.is_ok() {
                    result = self.rewrite(x, p, origin);
                }
            });
            result?;
            out.push(s);
        }
        Ok(out)
    }

    /// The equations that make the partitions tick: base tick sources and counters, each
    /// partition's tick condition, tick count and `when` clause, and the discretization of
    /// clocked `der`.
    pub fn tick_equations(&mut self, model: &[Equation]) -> Result<Vec<Equation>, Diagnostic> {
        let mut eqs = Vec::new();
        for b in 0..self.bases.len() {
            let origin = self
                .parts
                .iter()
                .find(|p| p.base == b)
                .map(|p| p.origin.clone())
                .unwrap_or_default();
            let (tick, count) = (self.bases[b].tick.clone(), self.bases[b].count.clone());
            let clock = self.bases[b].clock.clone();
            let source = match &clock {
                BaseClock::Periodic { interval } => call(
                    "sample",
                    vec![
                        Expr::Time,
                        bin(
                            BinaryOp::Div,
                            interval.clone(),
                            Expr::Integer(self.bases[b].l),
                        ),
                    ],
                ),
                // spec 16.3: an event clock ticks when `edge(pre(condition))` becomes true,
                // one event iteration after its condition (so that `sample` of the signals
                // that made the condition true sees them, and a clocked partition feeding
                // back into its own condition is not an algebraic loop)
                BaseClock::Event { condition, .. } => {
                    let delayed = format!("{tick}.condition");
                    eqs.push(self.event_condition(&delayed, condition.clone(), &origin));
                    call("pre", vec![var(&delayed)])
                }
                // the next tick's time, set at each tick (read as `pre`: the tick's own update
                // must not feed back into it); `not initial()` so that the first tick, due at
                // the start, is an edge of the condition after initialization
                BaseClock::Variable { .. } => bin(
                    BinaryOp::And,
                    bin(
                        BinaryOp::Ge,
                        Expr::Time,
                        call("pre", vec![var(&format!("{tick}.next"))]),
                    ),
                    Expr::Unary {
                        op: moss_frontend::flat::UnaryOp::Not,
                        arg: Box::new(call("initial", vec![])),
                    },
                ),
                BaseClock::Exact => unreachable!("exact clocks are periodic after inference"),
            };
            let next_update = match &clock {
                BaseClock::Variable { interval } => Some(interval.clone()),
                _ => None,
            };
            let when = self.tick_and_counter(&tick, source, &count, "the base clock", &origin);
            eqs.push(when.0);
            let mut body = vec![when.1];
            if let Some(interval) = next_update {
                let next = format!("{tick}.next");
                let text = "time of the next tick of a clock with a varying interval";
                let far_past = Some(Expr::Real(-1e300));
                self.add_var(
                    &next,
                    ScalarType::Real,
                    Variability::Discrete,
                    far_past,
                    &origin,
                    text,
                );
                body.push(Equation::Equal {
                    lhs: var(&next),
                    rhs: bin(BinaryOp::Add, Expr::Time, interval),
                    origin: origin.clone(),
                });
            }
            eqs.push(Equation::When {
                branches: vec![(var(&tick), body)],
                origin,
            });
        }
        for p in 0..self.parts.len() {
            self.discretize_partition(p, &mut eqs, model)?;
            let part = &self.parts[p];
            let base = &self.bases[part.base];
            let origin = part.origin.clone();
            let condition = if part.a == 1 && part.b == 0 {
                var(&base.tick)
            } else {
                // base tick index k = count - 1; tick when k >= b and (k - b) mod a == 0
                let k_minus_b = bin(BinaryOp::Sub, var(&base.count), Expr::Integer(1 + part.b));
                let started = bin(BinaryOp::Ge, k_minus_b.clone(), Expr::Integer(0));
                let on_tick = bin(
                    BinaryOp::Eq,
                    call("mod", vec![k_minus_b, Expr::Integer(part.a)]),
                    Expr::Integer(0),
                );
                bin(
                    BinaryOp::And,
                    var(&base.tick),
                    call("noEvent", vec![bin(BinaryOp::And, started, on_tick)]),
                )
            };
            let (tick, ticks) = (part.tick.clone(), part.ticks.clone());
            let (tick_eq, count_eq) =
                self.tick_and_counter(&tick, condition, &ticks, "a clocked partition", &origin);
            eqs.push(tick_eq);
            let mut body = vec![count_eq];
            body.append(&mut self.parts[p].updates);
            eqs.push(Equation::When {
                branches: vec![(var(&tick), body)],
                origin,
            });
        }
        Ok(eqs)
    }

    /// `name = condition` for a new discrete Boolean, read through `pre` by its event clock.
    fn event_condition(&mut self, name: &str, condition: Expr, origin: &Origin) -> Equation {
        let text = "condition of an event clock (the clock ticks one event iteration later)";
        self.add_var(
            name,
            ScalarType::Boolean,
            Variability::Discrete,
            Some(Expr::Boolean(false)),
            origin,
            text,
        );
        Equation::Equal {
            lhs: var(name),
            rhs: condition,
            origin: origin.clone(),
        }
    }

    /// The Boolean `tick = condition` and its counter: the tick equation, and the counting
    /// `count = pre(count) + 1` for the `when tick` clause.
    fn tick_and_counter(
        &mut self,
        tick: &str,
        condition: Expr,
        count: &str,
        of_what: &str,
        origin: &Origin,
    ) -> (Equation, Equation) {
        let tick_text = format!("tick of {of_what}");
        self.add_var(
            tick,
            ScalarType::Boolean,
            Variability::Discrete,
            None,
            origin,
            &tick_text,
        );
        let count_text = format!("number of ticks of {of_what}");
        let zero = Some(Expr::Integer(0));
        self.add_var(
            count,
            ScalarType::Integer,
            Variability::Discrete,
            zero,
            origin,
            &count_text,
        );
        let tick_eq = Equation::Equal {
            lhs: var(tick),
            rhs: condition,
            origin: origin.clone(),
        };
        let count_eq = Equation::Equal {
            lhs: var(count),
            rhs: bin(
                BinaryOp::Add,
                call("pre", vec![var(count)]),
                Expr::Integer(1),
            ),
            origin: origin.clone(),
        };
        (tick_eq, count_eq)
    }

    fn discretize_partition(
        &mut self,
        p: usize,
        eqs: &mut Vec<Equation>,
        model: &[Equation],
    ) -> Result<(), Diagnostic> {
        let states = self.parts[p].states.clone();
        if states.is_empty() {
            return Ok(());
        }
        if self.parts[p].symbolic {
            self.interval_variable(p);
            return Ok(());
        }
        if let Some(stages) = self.parts[p].solver.stages() {
            return self.discretize_with_stages(p, stages, eqs, model);
        }
        let origin = self.parts[p].origin.clone();
        for (x, d) in states {
            let x_prev = var(&self.previous_of(p, &x, &origin));
            let needs_prev_der = self.parts[p].solver.uses_previous_derivative();
            let d_prev = if needs_prev_der {
                Some(var(&self.previous_of(p, &d, &origin)))
            } else {
                None
            };
            let part = &self.parts[p];
            let first = bin(BinaryOp::Le, var(&part.ticks), Expr::Integer(1));
            let step = discretize::step(
                part.solver,
                &part.interval,
                &x_prev,
                &var(&d),
                d_prev.as_ref(),
            );
            eqs.push(Equation::Equal {
                lhs: var(&x),
                rhs: Expr::If {
                    branches: vec![(first, x_prev)],
                    else_: Box::new(step),
                },
                origin: origin.clone(),
            });
        }
        Ok(())
    }
}

impl Lowering<'_> {
    /// `SemiImplicitEuler`: the equations of the partition read the states of the previous
    /// tick (`x` becomes `previous(x)`), the discretization `x = previous(x) + h der(x)`
    /// then makes `der(x)` the slope at the old states and the new inputs.
    pub fn read_previous_states(&mut self, equations: &mut [Equation]) {
        for p in 0..self.parts.len() {
            if self.parts[p].solver != SolverMethod::SemiImplicitEuler {
                continue;
            }
            let origin = self.parts[p].origin.clone();
            let mut map: HashMap<String, Expr> = HashMap::default();
            for (x, _) in self.parts[p].states.clone() {
                map.insert(x.clone(), var(&self.previous_of(p, &x, &origin)));
            }
            if map.is_empty() {
                continue;
            }
            for &e in &self.parts[p].equations {
                walk::equation_exprs_mut(&mut equations[e], &mut |x| rename_vars(x, &map));
            }
        }
    }

    /// The step `h` of partition `p` as a discrete variable set at each tick, for the
    /// discretization after index reduction (a variable the `when` clause assigns keeps its
    /// name through alias elimination and parameter evaluation).
    fn interval_variable(&mut self, p: usize) -> String {
        let name = format!("{}.h", self.parts[p].tick.trim_end_matches(".tick"));
        let origin = self.parts[p].origin.clone();
        let text = "step of a discretized clocked partition";
        let start = Some(Expr::Real(0.0));
        self.add_var(
            &name,
            ScalarType::Real,
            Variability::Discrete,
            start,
            &origin,
            text,
        );
        let interval = self.parts[p].interval.clone();
        self.parts[p].updates.push(Equation::Equal {
            lhs: var(&name),
            rhs: interval,
            origin,
        });
        name
    }

    /// The partitions whose states [`super::states`] discretizes after index reduction.
    pub fn discretized_after_index_reduction(&self, names: &[&str]) -> Vec<DiscretizedPartition> {
        let mut out = Vec::new();
        for (p, part) in self.parts.iter().enumerate() {
            if !part.symbolic || part.states.is_empty() {
                continue;
            }
            let members = self
                .var_part
                .iter()
                .zip(names)
                .filter(|(vp, _)| **vp == Some(p))
                .map(|(_, n)| n.to_string())
                .collect();
            let prefix = part.tick.trim_end_matches(".tick");
            out.push(DiscretizedPartition {
                tick: part.tick.clone(),
                ticks: part.ticks.clone(),
                step: format!("{prefix}.h"),
                solver: part.solver,
                members,
            });
        }
        out
    }
}

/// A clocked partition with `der()` whose states are chosen by index reduction and then
/// discretized ([`super::states::discretize_states`]).
#[derive(Clone, Debug)]
pub struct DiscretizedPartition {
    /// Its tick (Boolean) and tick count (Integer) variables.
    pub tick: String,
    pub ticks: String,
    /// The discrete variable holding the step `interval()`.
    pub step: String,
    pub solver: SolverMethod,
    /// The flat model's variables of the partition.
    pub members: Vec<String>,
}

impl Lowering<'_> {
    /// Explicit multi-stage methods (spec 16.8.2): the right-hand side at intermediate points
    /// is a copy of the partition's equations with its variables renamed (`x$stage2`), the
    /// states set to `x_{i-1} + c k`, continuous-time inputs averaged over the step
    /// (`(u_{i-1} + u_i)/2`), discrete ones at `i-1`, and the tick time moved back by
    /// `(1 - c) h`; `k_1 = h der(x)_{i-1}`, `k_s = h der(x)` of stage `s`.
    fn discretize_with_stages(
        &mut self,
        p: usize,
        stages: &'static [(f64, f64)],
        eqs: &mut Vec<Equation>,
        model: &[Equation],
    ) -> Result<(), Diagnostic> {
        let origin = self.parts[p].origin.clone();
        let h = self.parts[p].interval.clone();
        let states = self.parts[p].states.clone();
        // k_1 per state
        let mut k: Vec<Vec<Expr>> = Vec::new();
        let mut x_prev = Vec::new();
        let mut first_k = Vec::new();
        for (x, d) in &states {
            x_prev.push(var(&self.previous_of(p, x, &origin)));
            let d_prev = var(&self.previous_of(p, d, &origin));
            first_k.push(bin(BinaryOp::Mul, h.clone(), d_prev));
        }
        k.push(first_k);
        let inputs = self.parts[p].inputs.clone();
        let input_prev: Vec<Expr> = inputs
            .iter()
            .map(|(u, _)| var(&self.previous_of(p, u, &origin)))
            .collect();
        let members: Vec<usize> = (0..self.vars.vars.len())
            .filter(|&i| self.var_part[i] == Some(p))
            .collect();
        for (s, &(c, _)) in stages.iter().enumerate() {
            let suffix = format!("$stage{}", s + 2);
            let mut map: HashMap<String, Expr> = HashMap::default();
            for &i in &members {
                let v = &self.vars.vars[i];
                let name = format!("{}{suffix}", v.name);
                let mut copy = v.clone();
                copy.name = name.clone();
                copy.variability = Variability::Continuous;
                copy.attrs.fixed = None;
                copy.is_protected = true;
                self.new_vars.push(copy);
                map.insert(v.name.clone(), var(&name));
            }
            for (x, d) in &states {
                let name = format!("{d}{suffix}");
                self.add_var(
                    &name,
                    ScalarType::Real,
                    Variability::Continuous,
                    None,
                    &origin,
                    "stage derivative",
                );
                map.insert(d.clone(), var(&name));
                map.entry(x.clone())
                    .or_insert_with(|| var(&format!("{x}{suffix}")));
            }
            let full_step = c == 1.0;
            for ((u, continuous), u_prev) in inputs.iter().zip(&input_prev) {
                let value = match (full_step, continuous) {
                    (true, _) => var(u),
                    (false, true) => bin(
                        BinaryOp::Mul,
                        Expr::Real(0.5),
                        bin(BinaryOp::Add, u_prev.clone(), var(u)),
                    ),
                    (false, false) => u_prev.clone(),
                };
                map.insert(u.clone(), value);
            }
            if let (Some(t), false) = (&self.parts[p].time, full_step) {
                let back = bin(BinaryOp::Mul, Expr::Real(1.0 - c), h.clone());
                map.insert(t.clone(), bin(BinaryOp::Sub, var(t), back));
            }
            for &e in &self.parts[p].equations {
                let mut copy = model[e].clone();
                walk::equation_exprs_mut(&mut copy, &mut |x| rename_vars(x, &map));
                eqs.push(copy);
            }
            let last_k = k
                .last()
                .expect("k holds k_1 from before the loop over the stages")
                .clone();
            let mut next_k = Vec::new();
            for (j, (x, d)) in states.iter().enumerate() {
                let x_stage = match map.get(x) {
                    Some(Expr::Var { name, .. }) => name.clone(),
                    _ => format!("{x}{suffix}"),
                };
                if self.vars.get(&x_stage).is_none()
                    && !members.iter().any(|&i| self.vars.vars[i].name == *x)
                {
                    self.add_var(
                        &x_stage,
                        ScalarType::Real,
                        Variability::Continuous,
                        None,
                        &origin,
                        "stage state",
                    );
                }
                eqs.push(Equation::Equal {
                    lhs: var(&x_stage),
                    rhs: bin(
                        BinaryOp::Add,
                        x_prev[j].clone(),
                        bin(BinaryOp::Mul, Expr::Real(c), last_k[j].clone()),
                    ),
                    origin: origin.clone(),
                });
                next_k.push(bin(BinaryOp::Mul, h.clone(), var(&format!("{d}{suffix}"))));
            }
            k.push(next_k);
        }
        // x_i = x_{i-1} + sum_s b_s k_s, with the weights of the method
        let ticks = self.parts[p].ticks.clone();
        for (j, (x, _)) in states.iter().enumerate() {
            let mut sum = Expr::Real(0.0);
            let weights = discretize::weights(stages);
            for (s, w) in weights.iter().enumerate() {
                if *w != 0.0 {
                    sum = bin(
                        BinaryOp::Add,
                        sum,
                        bin(BinaryOp::Mul, Expr::Real(*w), k[s][j].clone()),
                    );
                }
            }
            let first = bin(BinaryOp::Le, var(&ticks), Expr::Integer(1));
            eqs.push(Equation::Equal {
                lhs: var(x),
                rhs: Expr::If {
                    branches: vec![(first, x_prev[j].clone())],
                    else_: Box::new(bin(BinaryOp::Add, x_prev[j].clone(), sum)),
                },
                origin: origin.clone(),
            });
        }
        Ok(())
    }
}

/// Renames variables of `e` by `map` (to expressions).
fn rename_vars(e: &mut Expr, map: &HashMap<String, Expr>) {
    if let Expr::Var { name, subscripts } = e {
        if subscripts.is_empty() {
            if let Some(to) = map.get(name.as_str()) {
                *e = to.clone();
            }
        }
        return;
    }
    walk::exprs_mut(e, &mut |x| rename_vars(x, map));
}

/// `u` with every variable replaced by its start value.
fn start_values(u: &Expr, vars: &VarTable) -> Expr {
    match u {
        Expr::Var { name, subscripts } if subscripts.is_empty() => match vars.get(name) {
            Some(v) if !vars.is_parameter(name) => v
                .attrs
                .start
                .clone()
                .unwrap_or_else(|| default_value(&v.ty)),
            _ => u.clone(),
        },
        _ => {
            let mut e = u.clone();
            walk::exprs_mut(&mut e, &mut |x| *x = start_values(x, vars));
            e
        }
    }
}

/// `sample(u)` is the left limit of `u` at the tick: every variable read as `pre(v)`.
pub fn left_limit(u: &Expr, vars: &VarTable) -> Expr {
    match u {
        Expr::Var { name, subscripts } if subscripts.is_empty() => {
            // names made by this lowering (`$clockN.pM.ticks` of a `hold` read before the
            // partition's first tick) are variables too: their left limit is `pre`
            let lowered = name.starts_with('$');
            if vars.is_parameter(name) || (vars.get(name).is_none() && !lowered) {
                u.clone()
            } else {
                call("pre", vec![u.clone()])
            }
        }
        _ => {
            let mut e = u.clone();
            walk::exprs_mut(&mut e, &mut |x| *x = left_limit(x, vars));
            e
        }
    }
}
