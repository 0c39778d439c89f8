//! Clock expressions (spec 16.3): clock variables and their defining equations, the clock
//! constructors, and their normal form — a base clock with an exact rational factor and shift
//! ([`NClock`]). Clock variables never reach the later stages: [`ClockEnv`] resolves every
//! clock-typed expression to its normal form and the equations that define clocks are dropped.

use super::rational::Rational;
use super::util::{eval_integer, eval_string, expr_type, is_clock_expr, VarTable};
use moss_frontend::flat::{Equation, Expr, Origin, ScalarType};
use moss_syntax::{Diagnostic, Span};
use rustc_hash::FxHashMap as HashMap;

/// A base clock: the source of ticks of one base partition.
#[derive(Clone, Debug, PartialEq)]
pub enum BaseClock {
    /// `Clock(intervalCounter, resolution)` or `Clock(interval)`: ticks at the start time and
    /// then every `interval` seconds (an expression of parameters).
    Periodic { interval: Expr },
    /// `Clock(intervalCounter, resolution)` with both known at translation time: exact
    /// rational periods in seconds. All such clocks share this one base, their factors being
    /// their periods, so that the clocks of one base partition combine exactly (spec 16.7.3);
    /// the lowering gives each connected base partition its own tick source.
    Exact,
    /// `Clock(interval)` with an interval that is not a parameter expression: the first tick
    /// at the start time, each next one `interval` (evaluated at the tick) later.
    Variable { interval: Expr },
    /// `Clock(condition, startInterval)`: ticks when `condition` becomes true.
    Event {
        condition: Expr,
        start_interval: Expr,
    },
}

/// A clock in normal form: ticks of `base` with period `factor` (in units of the base
/// interval) starting `shift` base intervals after the base clock's first tick.
#[derive(Clone, Debug, PartialEq)]
pub struct NClock {
    pub base: usize,
    pub factor: Rational,
    pub shift: Rational,
    pub solver: Option<String>,
}

impl NClock {
    /// The same ticks, described relative to a clock whose ticks are `rel` of this one's.
    pub fn then(&self, rel: &Relation) -> NClock {
        let mut c = self.clone();
        match *rel {
            Relation::Sub(n) => c.factor = c.factor * n,
            Relation::Super(n) => c.factor = c.factor / n,
            Relation::Shift(k) => c.shift = c.shift + c.factor * k,
        }
        c
    }
}

/// How the clock of an operator's result relates to the clock of its argument.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Relation {
    /// `subSample(u, n)`: every n-th tick.
    Sub(Rational),
    /// `superSample(u, n)`: n ticks per tick.
    Super(Rational),
    /// `shiftSample(u, k, r)` (+k/r ticks) and `backSample(u, k, r)` (-k/r ticks).
    Shift(Rational),
}

impl Relation {
    /// The relation seen from the other side.
    pub fn inverse(self) -> Relation {
        match self {
            Relation::Sub(n) => Relation::Super(n),
            Relation::Super(n) => Relation::Sub(n),
            Relation::Shift(k) => Relation::Shift(-k),
        }
    }
}

/// Clock variables, their definitions and the base clocks found so far.
pub struct ClockEnv<'a> {
    vars: &'a VarTable<'a>,
    /// Union-find over clock variables joined by `c1 = c2` (connections of clock connectors).
    parent: HashMap<usize, usize>,
    /// The defining clock expression of each class root, with where it was written.
    defs: HashMap<usize, (Expr, Origin)>,
    pub bases: Vec<BaseClock>,
    /// Where each base clock was written (for messages naming both sides of a conflict).
    pub base_origins: Vec<Span>,
}

impl<'a> ClockEnv<'a> {
    pub fn new(vars: &'a VarTable<'a>) -> ClockEnv<'a> {
        ClockEnv {
            vars,
            parent: HashMap::default(),
            defs: HashMap::default(),
            bases: Vec::new(),
            base_origins: Vec::new(),
        }
    }

    fn find(&mut self, v: usize) -> usize {
        let p = *self.parent.get(&v).unwrap_or(&v);
        if p == v {
            return v;
        }
        let r = self.find(p);
        self.parent.insert(v, r);
        r
    }

    /// Takes in a clock equation (`lhs` or `rhs` clock-typed): joins clock variables or
    /// records a definition.
    pub fn add_equation(
        &mut self,
        lhs: &Expr,
        rhs: &Expr,
        origin: &Origin,
    ) -> Result<(), Diagnostic> {
        let var_of = |e: &Expr| match e {
            Expr::Var { name, subscripts } if subscripts.is_empty() => self.vars.index(name),
            _ => None,
        };
        match (var_of(lhs), var_of(rhs)) {
            (Some(a), Some(b)) => {
                let (ra, rb) = (self.find(a), self.find(b));
                if ra != rb {
                    self.parent.insert(ra, rb);
                    if let Some(d) = self.defs.remove(&ra) {
                        self.define(rb, d.0, d.1)?;
                    }
                }
                Ok(())
            }
            (Some(a), None) => {
                let r = self.find(a);
                self.define(r, rhs.clone(), origin.clone())
            }
            (None, Some(b)) => {
                let r = self.find(b);
                self.define(r, lhs.clone(), origin.clone())
            }
            (None, None) => Err(Diagnostic::error(
                origin.span,
                "an equation between two clock expressions must have a clock variable on one side",
            )
            .with_help("write `Clock c = ...;` and use `c`")),
        }
    }

    fn define(&mut self, root: usize, e: Expr, origin: Origin) -> Result<(), Diagnostic> {
        if let Some((old, old_origin)) = self.defs.get(&root) {
            if *old != e {
                return Err(Diagnostic::error(
                    origin.span,
                    format!("the clock `{}` is defined twice", self.vars.name(root)),
                )
                .with_secondary(old_origin.span, "first defined here")
                .with_help("a clock variable has exactly one defining equation"));
            }
            return Ok(());
        }
        self.defs.insert(root, (e, origin));
        Ok(())
    }

    /// The normal form of a clock expression; `None` for an inferred clock (`Clock()` or a
    /// clock variable without definition).
    pub fn resolve(&mut self, e: &Expr, span: Span) -> Result<Option<NClock>, Diagnostic> {
        self.resolve_depth(e, span, 0)
    }

    fn resolve_depth(
        &mut self,
        e: &Expr,
        span: Span,
        depth: usize,
    ) -> Result<Option<NClock>, Diagnostic> {
        if depth > 64 {
            return Err(Diagnostic::error(
                span,
                "the clock definitions form a cycle",
            ));
        }
        match e {
            Expr::Var { name, .. } => {
                let Some(v) = self.vars.index(name) else {
                    return Err(Diagnostic::error(span, format!("unknown clock `{name}`")));
                };
                let r = self.find(v);
                match self.defs.get(&r).cloned() {
                    Some((d, o)) => self.resolve_depth(&d, o.span, depth + 1),
                    None => Ok(None),
                }
            }
            Expr::Call { func, args } => self.resolve_call(func, args, span, depth),
            _ => Err(Diagnostic::error(
                span,
                "this clock expression is not supported: a clock is a clock variable, a `Clock(...)` constructor or a sub-, super-, shift- or backSample of a clock",
            )),
        }
    }

    fn resolve_call(
        &mut self,
        func: &str,
        args: &[Expr],
        span: Span,
        depth: usize,
    ) -> Result<Option<NClock>, Diagnostic> {
        let factor = |k: usize, what: &str| -> Result<Rational, Diagnostic> {
            match args.get(k) {
                None => Ok(Rational::ONE),
                Some(a) => match eval_integer(a, self.vars) {
                    Some(n) if n > 0 => Ok(Rational::int(n)),
                    _ => Err(Diagnostic::error(
                        span,
                        format!("the {what} of `{func}` must be a positive Integer known at translation time"),
                    )),
                },
            }
        };
        match func {
            "Clock" => self.constructor(args, span, depth),
            "subSample" | "superSample" => {
                let n = factor(1, "factor")?;
                let inner = self.resolve_inner(args, span, depth, func)?;
                let rel = if func == "subSample" {
                    Relation::Sub(n)
                } else {
                    Relation::Super(n)
                };
                Ok(Some(inner.then(&rel)))
            }
            "shiftSample" | "backSample" => {
                let k = match args.get(1) {
                    Some(a) => eval_integer(a, self.vars).filter(|k| *k >= 0),
                    None => Some(0),
                };
                let Some(k) = k else {
                    return Err(Diagnostic::error(
                        span,
                        format!("the shift counter of `{func}` must be a non-negative Integer known at translation time"),
                    ));
                };
                let r = factor(2, "resolution")?;
                let inner = self.resolve_inner(args, span, depth, func)?;
                let shift = Rational::int(k) / r;
                let rel = Relation::Shift(if func == "shiftSample" { shift } else { -shift });
                Ok(Some(inner.then(&rel)))
            }
            _ => Err(Diagnostic::error(
                span,
                format!("`{func}` does not give a clock"),
            )),
        }
    }

    fn resolve_inner(
        &mut self,
        args: &[Expr],
        span: Span,
        depth: usize,
        func: &str,
    ) -> Result<NClock, Diagnostic> {
        let Some(c) = args.first() else {
            return Err(Diagnostic::error(
                span,
                format!("`{func}` needs a clock argument"),
            ));
        };
        self.resolve_depth(c, span, depth + 1)?.ok_or_else(|| {
            Diagnostic::error(
                span,
                format!("`{func}` of an inferred clock: the clock cannot be determined here"),
            )
            .with_help("give the clock explicitly, e.g. `subSample(Clock(0.1), 2)`")
        })
    }

    /// `Clock()`, `Clock(intervalCounter)`, `Clock(intervalCounter, resolution)`,
    /// `Clock(interval)`, `Clock(condition, startInterval)`, `Clock(c, solverMethod)`.
    fn constructor(
        &mut self,
        args: &[Expr],
        span: Span,
        depth: usize,
    ) -> Result<Option<NClock>, Diagnostic> {
        let new_base = |env: &mut Self, b: BaseClock| -> Result<Option<NClock>, Diagnostic> {
            let id = match env.bases.iter().position(|x| *x == b) {
                Some(i) => i,
                None => {
                    env.bases.push(b);
                    env.base_origins.push(span);
                    env.bases.len() - 1
                }
            };
            Ok(Some(NClock {
                base: id,
                factor: Rational::ONE,
                shift: Rational::ZERO,
                solver: None,
            }))
        };
        match args {
            [] => Ok(None),
            [c, method] if is_clock_expr(c, self.vars) => {
                let Some(m) = eval_string(method, self.vars) else {
                    return Err(Diagnostic::error(
                        span,
                        "the solver method of `Clock(c, solverMethod)` must be a String known at translation time",
                    ));
                };
                let inner = self.resolve_depth(c, span, depth + 1)?;
                let mut inner = inner.ok_or_else(|| {
                    Diagnostic::error(span, "`Clock(c, solverMethod)` needs a clock `c` that is not inferred")
                })?;
                inner.solver = Some(m.clone());
                Ok(Some(inner))
            }
            [a, rest @ ..] => match expr_type(a, self.vars) {
                ScalarType::Boolean => {
                    let start_interval = rest.first().cloned().unwrap_or(Expr::Real(0.0));
                    new_base(
                        self,
                        BaseClock::Event {
                            condition: a.clone(),
                            start_interval,
                        },
                    )
                }
                ScalarType::Integer => {
                    let resolution = rest.first().cloned().unwrap_or(Expr::Integer(1));
                    let exact = (eval_integer(a, self.vars), eval_integer(&resolution, self.vars));
                    if let (Some(n), Some(r)) = exact {
                        if n <= 0 || r <= 0 {
                            return Err(Diagnostic::error(
                                span,
                                format!("`Clock({n}, {r})`: the interval counter and the resolution must be positive"),
                            ));
                        }
                        let mut c = new_base(self, BaseClock::Exact)?.expect("a base clock");
                        c.factor = Rational::new(n, r);
                        return Ok(Some(c));
                    }
                    if let Some(r) = eval_integer(&resolution, self.vars) {
                        if r <= 0 {
                            return Err(Diagnostic::error(
                                span,
                                "the resolution of `Clock(intervalCounter, resolution)` must be positive",
                            ));
                        }
                    }
                    let interval = Expr::Binary {
                        op: moss_frontend::flat::BinaryOp::Div,
                        lhs: Box::new(a.clone()),
                        rhs: Box::new(resolution),
                    };
                    new_base(self, BaseClock::Periodic { interval })
                }
                ScalarType::Real => {
                    if !rest.is_empty() {
                        return Err(Diagnostic::error(
                            span,
                            "`Clock(interval)` with a Real interval takes one argument",
                        ));
                    }
                    let base = match super::util::first_non_parameter(a, self.vars) {
                        Some(_) => BaseClock::Variable { interval: a.clone() },
                        None => BaseClock::Periodic { interval: a.clone() },
                    };
                    new_base(self, base)
                }
                _ => Err(Diagnostic::error(
                    span,
                    "`Clock(x)`: x must be an Integer interval counter, a Real interval or a Boolean condition",
                )),
            },
        }
    }
}

/// Splits the model's equations into clock equations (a clock-typed side) and the rest.
pub fn is_clock_equation(eq: &Equation, vars: &VarTable) -> bool {
    match eq {
        Equation::Equal { lhs, rhs, .. } => is_clock_expr(lhs, vars) || is_clock_expr(rhs, vars),
        _ => false,
    }
}
