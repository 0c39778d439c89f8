//! The working model shared by all passes: variables with their derivative links, equations
//! over arena expressions, and the bookkeeping (warnings, pass times) that ends up in the
//! report.

use crate::ir::{self, Arena, ExprId, VarIx};
use crate::program::ValueType;
use moss_frontend::flat::{AssertLevel, Origin, StateSelect, Statement};
use rustc_hash::FxHashMap as HashMap;

/// Variability class of a working variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VKind {
    Constant,
    Parameter,
    /// Top-level input: known, held at its start value.
    Input,
    Continuous,
    /// Discrete-time (Integer/Boolean/enumeration variables, `discrete Real`, generated
    /// condition slots): changes only at events.
    Discrete,
}

#[derive(Clone, Debug)]
pub struct SVar {
    pub name: String,
    pub kind: VKind,
    pub ty: ValueType,
    pub start: Option<ExprId>,
    /// The start value is given by the model, not only by the variable's type.
    pub start_given: bool,
    pub fixed: Option<bool>,
    pub nominal: Option<ExprId>,
    pub min: Option<ExprId>,
    pub max: Option<ExprId>,
    pub unit: String,
    pub description: String,
    pub hidden: bool,
    pub state_select: StateSelect,
    pub origin: Origin,
    /// Binding of parameters and constants.
    pub binding: Option<ExprId>,
    /// The variable holding `der(self)` (Pantelides' A(j)).
    pub der: Option<VarIx>,
    /// Inverse of `der`.
    pub der_of: Option<VarIx>,
    /// Removed by alias elimination.
    pub eliminated: bool,
    /// Chosen as a dummy derivative: `der_of` is then not a state.
    pub dummy: bool,
    /// Must not be eliminated (assigned in algorithms/when, reinit target, read by
    /// algorithms by name).
    pub protected_from_alias: bool,
}

impl SVar {
    pub fn new(name: String, kind: VKind, ty: ValueType) -> SVar {
        SVar {
            name,
            kind,
            ty,
            start: None,
            start_given: false,
            fixed: None,
            nominal: None,
            min: None,
            max: None,
            unit: String::new(),
            description: String::new(),
            hidden: false,
            state_select: StateSelect::Default,
            origin: Origin::default(),
            binding: None,
            der: None,
            der_of: None,
            eliminated: false,
            dummy: false,
            protected_from_alias: false,
        }
    }

    /// An unknown of the equation system (before deciding which of them are states).
    /// Includes `fixed=false` parameters (unknowns of the initialization problem only).
    pub fn is_unknown(&self) -> bool {
        !self.eliminated
            && (matches!(self.kind, VKind::Continuous | VKind::Discrete)
                || self.is_free_parameter())
    }

    /// A parameter with `fixed=false`: computed by the initialization problem.
    pub fn is_free_parameter(&self) -> bool {
        self.kind == VKind::Parameter && self.fixed == Some(false)
    }
}

#[derive(Clone, Debug)]
pub enum WhenItem {
    Assign {
        var: VarIx,
        expr: ExprId,
    },
    Reinit {
        var: VarIx,
        expr: ExprId,
    },
    Assert {
        cond: ExprId,
        msg: ExprId,
        level: AssertLevel,
    },
    Terminate {
        msg: ExprId,
    },
    CallOutputs {
        outputs: Vec<Option<VarIx>>,
        func: String,
        args: Vec<ExprId>,
    },
}

#[derive(Clone, Debug)]
pub struct WhenBranch {
    /// The condition expressions (several for `when {c1, c2}`).
    pub conds: Vec<ExprId>,
    /// Generated Boolean slots holding the conditions (filled by the events pass).
    pub slots: Vec<VarIx>,
    pub initial: bool,
    pub items: Vec<WhenItem>,
}

#[derive(Clone, Debug)]
pub enum EqBody {
    /// `lhs = rhs`, a scalar equation.
    Eq {
        lhs: ExprId,
        rhs: ExprId,
    },
    /// `(o1, o2, ...) = f(args)`.
    Call {
        outputs: Vec<Option<VarIx>>,
        func: String,
        args: Vec<ExprId>,
    },
    /// Algorithm section `index` of `Model::algorithms`.
    Algorithm {
        index: usize,
        outputs: Vec<VarIx>,
        inputs: Vec<VarIx>,
    },
    When(Vec<WhenBranch>),
    /// assert/terminate/side-effect call outside `when`: no outputs, runs after the rest.
    Effect(Effect),
}

#[derive(Clone, Debug)]
pub enum Effect {
    Assert {
        cond: ExprId,
        msg: ExprId,
        level: AssertLevel,
    },
    Terminate {
        msg: ExprId,
    },
    Call {
        func: String,
        args: Vec<ExprId>,
    },
}

#[derive(Clone, Debug)]
pub struct SEq {
    pub body: EqBody,
    pub origin: Origin,
    /// This equation is the time derivative of `diff_of` (Pantelides' B^-1).
    pub diff_of: Option<u32>,
    /// The time derivative of this equation, once created (Pantelides' B).
    pub diffed: Option<u32>,
    /// Generated from a `fixed=true` start value (initialization only; dropped first).
    pub from_start: bool,
    /// The equation as written (before alias and constant substitution), for diagnostics.
    pub shown: Option<(ExprId, ExprId)>,
    /// A residue `0 = equalityConstraint(a, b)[i]` of a connection loop (spec 9.4): it
    /// vanishes where `a` and `b` agree, and the function is made to be regular there.
    pub loop_residue: bool,
    /// A call whose outputs are the `pre` values of its output variables: the initial
    /// equation `pre(state) = initialState(seed)` (initialization only).
    pub pre_outputs: bool,
}

impl SEq {
    pub fn new(body: EqBody, origin: Origin) -> SEq {
        let shown = match body {
            EqBody::Eq { lhs, rhs } => Some((lhs, rhs)),
            _ => None,
        };
        SEq {
            body,
            origin,
            diff_of: None,
            diffed: None,
            from_start: false,
            shown,
            loop_residue: false,
            pre_outputs: false,
        }
    }

    /// Variables this equation computes when it is a unit with fixed causality.
    pub fn fixed_outputs(&self) -> Option<Vec<VarIx>> {
        match &self.body {
            EqBody::Eq { .. } => None,
            EqBody::Call { outputs, .. } => Some(outputs.iter().flatten().copied().collect()),
            EqBody::Algorithm { outputs, .. } => Some(outputs.clone()),
            EqBody::When(branches) => {
                let mut out: Vec<VarIx> = branches
                    .iter()
                    .flat_map(|b| b.items.iter())
                    .flat_map(|it| match it {
                        WhenItem::Assign { var, .. } => vec![*var],
                        WhenItem::CallOutputs { outputs, .. } => {
                            outputs.iter().flatten().copied().collect()
                        }
                        _ => vec![],
                    })
                    .collect();
                out.sort_unstable();
                out.dedup();
                Some(out)
            }
            EqBody::Effect(_) => Some(Vec::new()),
        }
    }
}

/// The working model.
#[derive(Default, Clone)]
pub struct Model {
    pub name: String,
    pub arena: Arena,
    pub vars: Vec<SVar>,
    pub by_name: ir::FxMap<String, VarIx>,
    pub eqs: Vec<SEq>,
    pub init_eqs: Vec<SEq>,
    pub algorithms: Vec<Vec<Statement>>,
    /// `sample(start, interval)` definitions.
    pub samples: Vec<(ExprId, ExprId)>,
    pub warnings: Vec<String>,
    pub pass_times: Vec<(String, f64)>,
    /// Equations solved for a variable whose coefficient is zero at the parameter values
    /// (see [`crate::zero_params`]).
    pub zero_pivots: Vec<crate::zero_params::ZeroPivot>,
    /// Parameters made constants at translation time (see [`crate::zero_params`]).
    pub evaluated: Vec<crate::program::EvaluatedParam>,
    /// Candidates of dynamic state sets that the first choice computes from the constraints
    /// (see [`crate::state_sets`]).
    pub start_last: Vec<VarIx>,
    /// Constraints found in linear dependencies ([`crate::hidden_constraints`]), as text.
    pub hidden_constraints: Vec<String>,
}

impl Model {
    pub fn add_var(&mut self, v: SVar) -> VarIx {
        let ix = self.vars.len() as VarIx;
        self.by_name.insert(v.name.clone(), ix);
        self.vars.push(v);
        ix
    }

    /// The variable holding `der(v)`, created on first use.
    pub fn der_var(&mut self, v: VarIx) -> VarIx {
        der_var_in(&mut self.vars, &mut self.by_name, v)
    }

    pub fn var_name(&self, v: VarIx) -> String {
        if v == ir::TIME {
            return "time".into();
        }
        self.vars
            .get(v as usize)
            .map(|x| x.name.clone())
            .unwrap_or_else(|| format!("$v{v}"))
    }

    pub fn text(&self, e: ExprId) -> String {
        ir::to_text(&self.arena, e, &|v| self.var_name(v))
    }

    /// Modelica text of an equation, for diagnostics.
    pub fn eq_text(&self, eq: &SEq) -> String {
        if let Some((lhs, rhs)) = eq.shown {
            return format!("{} = {}", self.text(lhs), self.text(rhs));
        }
        match &eq.body {
            EqBody::Eq { lhs, rhs } => format!("{} = {}", self.text(*lhs), self.text(*rhs)),
            EqBody::Call {
                outputs,
                func,
                args,
            } => {
                let outs: Vec<String> = outputs
                    .iter()
                    .map(|o| o.map(|v| self.var_name(v)).unwrap_or_default())
                    .collect();
                let args: Vec<String> = args.iter().map(|&a| self.text(a)).collect();
                format!("({}) = {}({})", outs.join(", "), func, args.join(", "))
            }
            EqBody::Algorithm { outputs, .. } => {
                let outs: Vec<String> = outputs.iter().map(|&v| self.var_name(v)).collect();
                format!("algorithm assigning {}", outs.join(", "))
            }
            EqBody::When(b) => {
                let c: Vec<String> = b
                    .iter()
                    .flat_map(|b| b.conds.iter())
                    .map(|&c| self.text(c))
                    .collect();
                format!("when {} then ... end when", c.join(" / "))
            }
            EqBody::Effect(_) => "assert/terminate".into(),
        }
    }

    /// Time derivative of `e`; derivative variables are created on demand. `Err` names a
    /// function that has no `derivative` annotation.
    pub fn diff_time(&mut self, e: ExprId) -> Result<ExprId, crate::ir::DiffError> {
        let Model {
            arena,
            vars,
            by_name,
            ..
        } = self;
        let fder = arena.fder.clone();
        let mut leaf = |a: &mut Arena, x: VarIx| -> Option<ExprId> {
            if x == ir::TIME {
                return Some(a.one());
            }
            match vars[x as usize].kind {
                VKind::Continuous => {
                    let d = der_var_in(vars, by_name, x);
                    Some(a.var(d))
                }
                _ => None,
            }
        };
        arena.diff(e, &mut leaf, &fder, &mut HashMap::default())
    }

    /// Is the value of `e` fixed after parameter evaluation (no time, no continuous or discrete
    /// variables)?
    pub fn is_parameter_expr(&mut self, e: ExprId) -> bool {
        let vars = &self.vars;
        !self.arena.any_node(e, &mut |n| match n {
            ir::Node::Var(v) | ir::Node::Pre(v) => {
                !matches!(vars[*v as usize].kind, VKind::Constant | VKind::Parameter)
            }
            ir::Node::Time | ir::Node::Initial | ir::Node::Terminal | ir::Node::Sample(_) => true,
            _ => false,
        })
    }
}

fn der_var_in(vars: &mut Vec<SVar>, by_name: &mut ir::FxMap<String, VarIx>, v: VarIx) -> VarIx {
    if let Some(d) = vars[v as usize].der {
        return d;
    }
    let base = &vars[v as usize];
    let mut dv = SVar::new(
        format!("der({})", base.name),
        VKind::Continuous,
        ValueType::Real,
    );
    dv.hidden = base.hidden;
    dv.origin = base.origin.clone();
    dv.unit = if base.unit.is_empty() {
        String::new()
    } else {
        format!("{}/s", base.unit)
    };
    dv.der_of = Some(v);
    let ix = vars.len() as VarIx;
    by_name.insert(dv.name.clone(), ix);
    vars.push(dv);
    vars[v as usize].der = Some(ix);
    ix
}

impl Model {
    /// Replace the variables in `values` by their expressions in every equation and in every
    /// variable attribute (bindings, starts, bounds).
    pub fn substitute_vars(&mut self, values: &HashMap<VarIx, ExprId>) {
        if values.is_empty() {
            return;
        }
        let Model {
            arena,
            vars,
            eqs,
            init_eqs,
            ..
        } = self;
        let mut memo = HashMap::default();
        let mut subst = |e: ExprId| {
            arena.substitute(
                e,
                &mut |_, n| match n {
                    ir::Node::Var(x) => values.get(x).copied(),
                    _ => None,
                },
                false,
                &mut memo,
            )
        };
        for eq in eqs.iter_mut().chain(init_eqs.iter_mut()) {
            map_exprs(&mut eq.body, &mut subst);
        }
        for sv in vars.iter_mut() {
            for e in [
                &mut sv.binding,
                &mut sv.start,
                &mut sv.nominal,
                &mut sv.min,
                &mut sv.max,
            ]
            .into_iter()
            .flatten()
            {
                *e = subst(*e);
            }
        }
    }
}

/// Apply `f` to every expression of an equation body (in place).
pub fn map_exprs(body: &mut EqBody, f: &mut dyn FnMut(ExprId) -> ExprId) {
    match body {
        EqBody::Eq { lhs, rhs } => {
            *lhs = f(*lhs);
            *rhs = f(*rhs);
        }
        EqBody::Call { args, .. } => args.iter_mut().for_each(|a| *a = f(*a)),
        EqBody::Algorithm { .. } => {}
        EqBody::When(branches) => {
            for b in branches {
                b.conds.iter_mut().for_each(|c| *c = f(*c));
                for it in &mut b.items {
                    match it {
                        WhenItem::Assign { expr, .. } | WhenItem::Reinit { expr, .. } => {
                            *expr = f(*expr)
                        }
                        WhenItem::Assert { cond, msg, .. } => {
                            *cond = f(*cond);
                            *msg = f(*msg);
                        }
                        WhenItem::Terminate { msg } => *msg = f(*msg),
                        WhenItem::CallOutputs { args, .. } => {
                            args.iter_mut().for_each(|a| *a = f(*a))
                        }
                    }
                }
            }
        }
        EqBody::Effect(e) => match e {
            Effect::Assert { cond, msg, .. } => {
                *cond = f(*cond);
                *msg = f(*msg);
            }
            Effect::Terminate { msg } => *msg = f(*msg),
            Effect::Call { args, .. } => args.iter_mut().for_each(|a| *a = f(*a)),
        },
    }
}

impl Model {
    /// Unknowns of an equation for matching: the variables of `lhs = rhs` (operands of event
    /// relations excluded: they are frozen inputs), or the outputs of a fixed-causality unit.
    pub fn incidence(&mut self, eq: &SEq) -> Vec<VarIx> {
        let mut out = Vec::new();
        match &eq.body {
            EqBody::Eq { lhs, rhs } => {
                self.arena.vars_of(*lhs, true, &mut out);
                let mut r = Vec::new();
                self.arena.vars_of(*rhs, true, &mut r);
                out.extend(r);
                out.sort_unstable();
                out.dedup();
            }
            _ => out = eq.fixed_outputs().unwrap_or_default(),
        }
        out.retain(|&v| self.vars[v as usize].is_unknown());
        out
    }

    /// Variables an equation reads (for sorting): incidence of plain equations, everything
    /// referenced by units (except `pre`, event-relation operands and its own outputs).
    pub fn reads(&mut self, eq: &SEq) -> Vec<VarIx> {
        self.reads_with(eq, true)
    }

    /// [`Model::reads`], optionally including operands of event relations (used where
    /// relations are evaluated live, i.e. during initialization).
    pub fn reads_with(&mut self, eq: &SEq, skip_event_rel: bool) -> Vec<VarIx> {
        let mut out = Vec::new();
        let mut body = eq.body.clone();
        if let EqBody::When(branches) = &mut body {
            // conditions are read through their generated slots
            for b in branches.iter_mut().filter(|b| !b.slots.is_empty()) {
                b.conds.clear();
            }
        }
        let mut exprs = Vec::new();
        map_exprs(&mut body, &mut |e| {
            exprs.push(e);
            e
        });
        for e in exprs {
            self.arena.vars_of(e, skip_event_rel, &mut out);
        }
        if let EqBody::Algorithm { inputs, .. } = &eq.body {
            out.extend(inputs.iter().copied());
        }
        if let EqBody::When(branches) = &eq.body {
            for b in branches {
                out.extend(b.slots.iter().copied());
            }
        }
        out.sort_unstable();
        out.dedup();
        if let Some(outs) = eq.fixed_outputs() {
            out.retain(|v| !outs.contains(v));
        }
        out.retain(|&v| self.vars[v as usize].is_unknown());
        out
    }
}
