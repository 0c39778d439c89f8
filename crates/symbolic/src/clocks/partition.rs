//! Clock partitioning (spec 16.7.1): the model's equations and algorithms are split into
//! partitions — sets of variables connected by equations — cut at the sampling operators.
//! `sample(u)`, `hold(y)`, `subSample(u)`, `superSample(u)`, `shiftSample(u)`,
//! `backSample(u)` and `noClock(u)` separate the partition of their argument from the
//! partition of the expression they appear in; every other reference joins them.

use super::clock::Relation;
use super::rational::Rational;
use super::util::{eval_integer, is_clock_expr, VarTable};
use moss_frontend::flat::{Equation, Expr, Origin, Statement};
use moss_frontend::walk;

/// An equation (index into the model's equations) or an algorithm section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Item {
    Equation(usize),
    Algorithm(usize),
}

/// What an operator at a partition boundary does.
#[derive(Clone, Debug, PartialEq)]
pub enum Boundary {
    /// `sample(u, c)` / `sample(u)`: the left limit of `u` at the ticks of this partition.
    Sample { clock: Option<Expr> },
    /// `subSample`, `superSample`, `shiftSample`, `backSample` with the relation of the
    /// result's clock to the argument's (`None`: inferred factor).
    Resample(Option<Relation>),
    /// `noClock(u)`: the latest value of `u`, whatever its clock within the base partition.
    NoClock,
    /// `hold(u)`: the clocked `u` seen from the continuous-time partition.
    Hold,
}

/// What the clock pass learned about one item.
#[derive(Clone, Debug, Default)]
pub struct ItemScan {
    /// Variables referenced directly (joined into the item's partition).
    pub vars: Vec<usize>,
    /// Boundary operators: the variables of the argument (joined among themselves) and the
    /// kind of boundary.
    pub boundaries: Vec<(Vec<usize>, Boundary)>,
    /// The item is clocked for sure: it uses `previous`, `interval`, `firstTick`, a clocked
    /// `when`, or is the result side of a sampling operator.
    pub clocked: bool,
    /// Clocks the item's partition must have (`sample(u, c)`, `when c then`).
    pub clocks: Vec<Expr>,
    /// The item differentiates (`der`): in a clocked partition it is discretized.
    pub has_der: bool,
    /// A `when` clause with a Boolean condition: only allowed in continuous-time partitions.
    pub has_event_when: bool,
}

/// Scans one equation.
pub fn scan_equation(eq: &Equation, vars: &VarTable) -> ItemScan {
    let mut s = ItemScan::default();
    scan_eq(eq, vars, &mut s);
    s
}

fn scan_eq(eq: &Equation, vars: &VarTable, s: &mut ItemScan) {
    match eq {
        Equation::When { branches, .. } => {
            for (cond, body) in branches {
                if is_clock_expr(cond, vars) {
                    s.clocked = true;
                    s.clocks.push(cond.clone());
                } else {
                    s.has_event_when = true;
                    scan_expr(cond, vars, s);
                }
                for e in body {
                    scan_eq(e, vars, s);
                }
            }
        }
        Equation::If {
            branches, else_, ..
        } => {
            for (c, body) in branches {
                scan_expr(c, vars, s);
                body.iter().for_each(|e| scan_eq(e, vars, s));
            }
            else_.iter().for_each(|e| scan_eq(e, vars, s));
        }
        other => {
            let mut other = other.clone();
            walk::equation_exprs_mut(&mut other, &mut |e| scan_expr(e, vars, s));
        }
    }
}

/// Scans one algorithm section.
pub fn scan_statements(stmts: &[Statement], vars: &VarTable) -> ItemScan {
    let mut s = ItemScan::default();
    for st in stmts {
        let mut st = st.clone();
        if let Statement::When { branches, .. } = &st {
            if branches.iter().any(|(c, _)| !is_clock_expr(c, vars)) {
                s.has_event_when = true;
            }
        }
        walk::statement_exprs_mut(&mut st, &mut |e| scan_expr(e, vars, &mut s));
    }
    s
}

/// Variables of an expression, without looking through boundary operators.
fn scan_expr(e: &Expr, vars: &VarTable, s: &mut ItemScan) {
    match e {
        Expr::Var { name, subscripts } => {
            if let Some(i) = vars.index(name) {
                if !vars.is_clock(name) && !vars.is_parameter(name) {
                    s.vars.push(i);
                }
            }
            for sub in subscripts {
                if let moss_frontend::flat::Subscript::Index(x) = sub {
                    scan_expr(x, vars, s);
                }
            }
        }
        Expr::Call { func, args } => scan_call(func, args, vars, s),
        _ => walk::exprs(e, &mut |x| scan_expr(x, vars, s)),
    }
}

fn scan_call(func: &str, args: &[Expr], vars: &VarTable, s: &mut ItemScan) {
    let first_clock = args.first().is_some_and(|a| is_clock_expr(a, vars));
    let boundary = match func {
        "sample" if args.len() == 1 => Some(Boundary::Sample { clock: None }),
        "sample" if args.len() == 2 && is_clock_expr(&args[1], vars) => {
            s.clocks.push(args[1].clone());
            Some(Boundary::Sample {
                clock: Some(args[1].clone()),
            })
        }
        "subSample" | "superSample" | "shiftSample" | "backSample" if !first_clock => {
            Some(Boundary::Resample(relation(func, args, vars)))
        }
        "noClock" => Some(Boundary::NoClock),
        "hold" => Some(Boundary::Hold),
        _ => None,
    };
    if let Some(b) = boundary {
        if b != Boundary::Hold {
            s.clocked = true;
        }
        let mut inner = ItemScan::default();
        if let Some(a) = args.first() {
            scan_expr(a, vars, &mut inner);
        }
        // Sampling operators do not nest partitions inside their argument: what the
        // argument's own boundaries separate is recorded too.
        s.boundaries.extend(inner.boundaries);
        s.boundaries.push((inner.vars, b));
        return;
    }
    match func {
        "previous" | "firstTick" | "interval" => s.clocked = true,
        "der" => s.has_der = true,
        _ => {}
    }
    if matches!(func, "firstTick" | "interval") {
        // `interval(u)` and `firstTick(u)` are about the clock of `u`: the expression is
        // evaluated on that clock (`Real Ts = interval(y)` ticks with `y`).
        for a in args.iter().filter(|a| !is_clock_expr(a, vars)) {
            scan_expr(a, vars, s);
        }
        return;
    }
    if is_clock_expr(
        &Expr::Call {
            func: func.to_string(),
            args: args.to_vec(),
        },
        vars,
    ) {
        return;
    }
    for a in args {
        scan_expr(a, vars, s);
    }
}

/// The relation of `subSample(u, n)` etc. when its factor is known at translation time.
fn relation(func: &str, args: &[Expr], vars: &VarTable) -> Option<Relation> {
    let int = |k: usize| args.get(k).and_then(|a| eval_integer(a, vars));
    match func {
        "subSample" => int(1)
            .filter(|n| *n > 0)
            .map(|n| Relation::Sub(Rational::int(n))),
        "superSample" => int(1)
            .filter(|n| *n > 0)
            .map(|n| Relation::Super(Rational::int(n))),
        "shiftSample" | "backSample" => {
            let k = int(1)?;
            let r = args.get(2).map_or(Some(1), |a| eval_integer(a, vars))?;
            if r <= 0 {
                return None;
            }
            let shift = Rational::new(k, r);
            Some(Relation::Shift(if func == "shiftSample" {
                shift
            } else {
                -shift
            }))
        }
        _ => None,
    }
}

/// Union-find over variable indices.
pub struct Partitions {
    parent: Vec<usize>,
}

impl Partitions {
    pub fn new(n: usize) -> Partitions {
        Partitions {
            parent: (0..n).collect(),
        }
    }

    pub fn find(&mut self, v: usize) -> usize {
        let mut r = v;
        while self.parent[r] != r {
            r = self.parent[r];
        }
        let mut c = v;
        while self.parent[c] != r {
            let next = self.parent[c];
            self.parent[c] = r;
            c = next;
        }
        r
    }

    pub fn join_all(&mut self, vs: &[usize]) {
        if let Some((&first, rest)) = vs.split_first() {
            let a = self.find(first);
            for &v in rest {
                let b = self.find(v);
                if a != b {
                    self.parent[b] = a;
                }
            }
        }
    }
}

/// Where an item is, for messages.
pub fn item_origin<'m>(
    item: Item,
    equations: &'m [Equation],
    algorithms: &'m [moss_frontend::flat::Algorithm],
) -> &'m Origin {
    match item {
        Item::Equation(i) => equation_origin(&equations[i]),
        Item::Algorithm(i) => &algorithms[i].origin,
    }
}

pub fn equation_origin(eq: &Equation) -> &Origin {
    eq.origin()
}
