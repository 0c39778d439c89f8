//! State machines (spec chapter 17), lowered to clocked equations before clock partitioning.
//!
//! The frontend leaves `initialState("a")` and `transition("a", "b", c, immediate, reset,
//! synchronize, priority)` as equations naming states by instance path. Here:
//! 1. states joined by transitions form state machines, each with exactly one initial
//!    state; a machine whose states all lie inside another machine's state is nested in it;
//! 2. each machine gets the data-flow model of spec 17.3.5 (`selectedState`, `immediate`,
//!    `delayed`, `fired`, `activeState`, `nextState`, the reset vectors), as clocked
//!    equations with `previous`, transitions sorted so that the highest priority has the
//!    highest index;
//! 3. every state gets `$active(S)`, `$reset(S)` and its tick count and entry time
//!    (`ticksInState()`, `timeInState()`); conditions read the counts as they are before the
//!    transition (the from-state staying active);
//! 4. the equations of a state are active only while it is active: `v = e` in state S
//!    becomes part of `v = if $active(S1) then e1 elseif ... else previous(v)` (the merging
//!    of `outer output` definitions, spec 17.3.7), with `previous(x)` reading `x.start` when
//!    the state is entered with a reset; definitions of one variable in states that can be
//!    active together (parallel machines) are an error naming both.
//!
//! Equations inside states must have the form `v = expression`.

use super::util::{bin, call, default_value, var, VarTable};
use moss_frontend::flat::{
    Attributes, BinaryOp, Causality, Equation, Expr, FlatModel, Origin, ScalarType, UnaryOp,
    Variability, Variable,
};
use moss_frontend::walk;
use moss_syntax::Diagnostic;
use rustc_hash::FxHashMap as HashMap;

struct Transition {
    from: String,
    to: String,
    condition: Expr,
    immediate: bool,
    reset: bool,
    synchronize: bool,
    priority: i64,
    origin: Origin,
}

struct Machine {
    /// State paths; the initial state first.
    states: Vec<String>,
    /// Transitions sorted by descending priority number (highest priority last).
    transitions: Vec<Transition>,
    /// The state this machine is nested in.
    parent: Option<String>,
    prefix: String,
}

/// Where each state is: its machine and 1-based index.
type StateIndex = HashMap<String, (usize, usize)>;

/// Lowers the state machines of `flat`; `Ok(None)` when it has none.
pub fn lower_state_machines(flat: &FlatModel) -> Result<Option<FlatModel>, Diagnostic> {
    let has_machines = flat
        .equations
        .iter()
        .any(|e| matches!(e, Equation::Call { func, .. } if func == "transition" || func == "initialState"));
    if !has_machines {
        return Ok(None);
    }
    let vars = VarTable::new(&flat.variables);
    let (transitions, initials, rest) = collect(flat, &vars)?;
    let mut machines = group_machines(transitions, initials)?;
    nest(&mut machines);
    let index: StateIndex = machines
        .iter()
        .enumerate()
        .flat_map(|(m, mach)| {
            mach.states
                .iter()
                .enumerate()
                .map(move |(i, s)| (s.clone(), (m, i + 1)))
        })
        .collect();
    check_active_state_arguments(&rest, &machines, &index)?;
    let mut b = Builder {
        new_vars: Vec::new(),
        eqs: Vec::new(),
    };
    for m in 0..machines.len() {
        b.machine(&machines, m, &index)?;
    }
    let (rest, forwarded) = forward_inner_outer(rest, flat, &index);
    let mut guarded = guard_state_equations(rest, &machines, &index, &vars)?;
    guarded.extend(forwarded);
    let mut out = flat.clone();
    out.equations = guarded;
    out.equations.append(&mut b.eqs);
    out.variables.append(&mut b.new_vars);
    Ok(Some(out))
}

fn eval_bool(e: &Expr, vars: &VarTable) -> Option<bool> {
    match e {
        Expr::Boolean(b) => Some(*b),
        Expr::Var { name, .. } if vars.is_parameter(name) => {
            eval_bool(vars.get(name)?.binding.as_ref()?, vars)
        }
        _ => None,
    }
}

type Collected = (Vec<Transition>, Vec<(String, Origin)>, Vec<Equation>);

fn collect(flat: &FlatModel, vars: &VarTable) -> Result<Collected, Diagnostic> {
    let mut transitions = Vec::new();
    let mut initials = Vec::new();
    let mut rest = Vec::new();
    for eq in &flat.equations {
        match eq {
            Equation::Call { func, args, origin } if func == "initialState" => {
                match args.as_slice() {
                    [Expr::String(s)] => initials.push((s.clone(), origin.clone())),
                    _ => {
                        return Err(Diagnostic::error(
                            origin.span,
                            "`initialState` takes one block instance",
                        ))
                    }
                }
            }
            Equation::Call { func, args, origin } if func == "transition" => {
                let [Expr::String(from), Expr::String(to), condition, imm, reset, sync, prio] =
                    args.as_slice()
                else {
                    return Err(Diagnostic::error(
                        origin.span,
                        "`transition(from, to, condition, immediate, reset, synchronize, priority)`: from and to must be block instances",
                    ));
                };
                let flag = |e: &Expr, what: &str| {
                    eval_bool(e, vars).ok_or_else(|| {
                        Diagnostic::error(
                            origin.span,
                            format!("the `{what}` argument of `transition` must be a Boolean parameter expression"),
                        )
                    })
                };
                let priority = super::util::eval_integer(prio, vars).ok_or_else(|| {
                    Diagnostic::error(
                        origin.span,
                        "the `priority` argument of `transition` must be an Integer parameter expression",
                    )
                })?;
                if priority < 1 {
                    return Err(Diagnostic::error(
                        origin.span,
                        format!("transition priorities start at 1, this one is {priority}"),
                    ));
                }
                transitions.push(Transition {
                    from: from.clone(),
                    to: to.clone(),
                    condition: condition.clone(),
                    immediate: flag(imm, "immediate")?,
                    reset: flag(reset, "reset")?,
                    synchronize: flag(sync, "synchronize")?,
                    priority,
                    origin: origin.clone(),
                });
            }
            other => rest.push(other.clone()),
        }
    }
    Ok((transitions, initials, rest))
}

/// Connected components of states joined by transitions, one initial state each.
fn group_machines(
    transitions: Vec<Transition>,
    initials: Vec<(String, Origin)>,
) -> Result<Vec<Machine>, Diagnostic> {
    let mut states: Vec<String> = Vec::new();
    let mut id: HashMap<String, usize> = HashMap::default();
    let mut intern = |s: &str, states: &mut Vec<String>| -> usize {
        *id.entry(s.to_string()).or_insert_with(|| {
            states.push(s.to_string());
            states.len() - 1
        })
    };
    for (s, _) in &initials {
        intern(s, &mut states);
    }
    let ends: Vec<(usize, usize)> = transitions
        .iter()
        .map(|t| (intern(&t.from, &mut states), intern(&t.to, &mut states)))
        .collect();
    let mut uf = super::partition::Partitions::new(states.len());
    for &(a, b) in &ends {
        uf.join_all(&[a, b]);
    }
    let mut by_root: HashMap<usize, usize> = HashMap::default();
    let mut machines: Vec<Machine> = Vec::new();
    let mut initial_of: Vec<Option<(String, Origin)>> = Vec::new();
    for (s, origin) in &initials {
        let r = uf.find(id_of(&states, s));
        let m = *by_root.entry(r).or_insert_with(|| {
            machines.push(Machine {
                states: vec![s.clone()],
                transitions: Vec::new(),
                parent: None,
                prefix: String::new(),
            });
            initial_of.push(None);
            machines.len() - 1
        });
        if let Some((other, o)) = &initial_of[m] {
            return Err(Diagnostic::error(
                origin.span,
                format!("the state machine of `{s}` has two initial states, `{other}` and `{s}`"),
            )
            .with_secondary(o.span, "the other initialState"));
        }
        initial_of[m] = Some((s.clone(), origin.clone()));
    }
    for (s, _) in states.iter().enumerate().map(|(i, s)| (s, i)) {
        let r = uf.find(id_of(&states, s));
        match by_root.get(&r) {
            Some(&m) => {
                if !machines[m].states.contains(s) {
                    machines[m].states.push(s.clone());
                }
            }
            None => {
                let t = transitions
                    .iter()
                    .find(|t| t.from == *s || t.to == *s)
                    .expect("a state without initialState comes from a transition");
                return Err(Diagnostic::error(
                    t.origin.span,
                    format!("the state machine containing `{s}` has no initial state"),
                )
                .with_help(format!(
                    "add `initialState({s});` (or for another state of this machine)"
                )));
            }
        }
    }
    for (t, (a, _)) in transitions.into_iter().zip(ends) {
        let m = by_root[&uf.find(a)];
        machines[m].transitions.push(t);
    }
    for (k, m) in machines.iter_mut().enumerate() {
        m.transitions.sort_by_key(|t| std::cmp::Reverse(t.priority));
        for w in m.transitions.windows(2) {
            if w[0].from == w[1].from && w[0].priority == w[1].priority {
                return Err(Diagnostic::error(
                    w[1].origin.span,
                    format!(
                        "two transitions from `{}` have the same priority {}",
                        w[1].from, w[1].priority
                    ),
                )
                .with_secondary(w[0].origin.span, "the other transition")
                .with_help("transitions leaving one state need different priorities"));
            }
        }
        m.prefix = format!("$stateMachine{}", k + 1);
    }
    Ok(machines)
}

fn id_of(states: &[String], s: &str) -> usize {
    states
        .iter()
        .position(|x| x == s)
        .expect("every state name was collected into `states` before ids are asked for")
}

/// The state each machine is nested in: the deepest state of another machine whose path
/// prefixes all of its states.
fn nest(machines: &mut [Machine]) {
    let all: Vec<String> = machines.iter().flat_map(|m| m.states.clone()).collect();
    for m in machines.iter_mut() {
        let parent = all
            .iter()
            .filter(|p| !m.states.contains(p))
            .filter(|p| m.states.iter().all(|s| s.starts_with(&format!("{p}."))))
            .max_by_key(|p| p.len());
        m.parent = parent.cloned();
    }
}

fn active_name(state: &str) -> String {
    format!("$active({state})")
}

fn reset_name(state: &str) -> String {
    format!("$reset({state})")
}

fn ticks_name(state: &str) -> String {
    format!("$ticksInState({state})")
}

fn entry_name(state: &str) -> String {
    format!("$entryTime({state})")
}

fn not(e: Expr) -> Expr {
    Expr::Unary {
        op: UnaryOp::Not,
        arg: Box::new(e),
    }
}

fn previous(e: Expr) -> Expr {
    call("previous", vec![e])
}

fn int(i: usize) -> Expr {
    Expr::Integer(i as i64)
}

fn if_(c: Expr, a: Expr, b: Expr) -> Expr {
    Expr::If {
        branches: vec![(c, a)],
        else_: Box::new(b),
    }
}

struct Builder {
    new_vars: Vec<Variable>,
    eqs: Vec<Equation>,
}

impl Builder {
    fn add(&mut self, name: &str, ty: ScalarType, start: Expr, rhs: Expr, origin: &Origin) {
        self.new_vars.push(Variable {
            name: name.to_string(),
            ty,
            variability: Variability::Discrete,
            causality: Causality::Internal,
            binding: None,
            attrs: Attributes {
                start: Some(start),
                ..Attributes::default()
            },
            is_flow: false,
            is_stream: false,
            is_protected: true,
            evaluate: false,
            description: "state machine semantics (spec 17.3)".into(),
            origin: origin.clone(),
        });
        self.eqs.push(Equation::Equal {
            lhs: var(name),
            rhs,
            origin: origin.clone(),
        });
    }

    /// The equations of spec 17.3.5 for machine `k`, and the per-state flags.
    fn machine(
        &mut self,
        machines: &[Machine],
        k: usize,
        index: &StateIndex,
    ) -> Result<(), Diagnostic> {
        let m = &machines[k];
        let origin = m
            .transitions
            .first()
            .map(|t| t.origin.clone())
            .unwrap_or_default();
        let p = &m.prefix;
        let n = m.states.len();
        let name = |x: &str| format!("{p}.{x}");
        let (active, reset) = match &m.parent {
            None => {
                // top level: always active, reset at the first tick
                self.add(
                    &name("first"),
                    ScalarType::Boolean,
                    Expr::Boolean(true),
                    Expr::Boolean(false),
                    &origin,
                );
                (Expr::Boolean(true), previous(var(&name("first"))))
            }
            Some(parent) => (var(&active_name(parent)), var(&reset_name(parent))),
        };
        let t_of = |i: usize| &m.transitions[i];
        let idx = |s: &str| index[s].1;
        // transition conditions, with the from-state's counts as they are before firing
        let mut conditions = Vec::with_capacity(m.transitions.len());
        for t in &m.transitions {
            let mut c = t.condition.clone();
            rewrite_state_queries(&mut c, Some(&t.from), true);
            if t.synchronize {
                let finals: Vec<Expr> = machines
                    .iter()
                    .filter(|sub| sub.parent.as_deref() == Some(t.from.as_str()))
                    .map(|sub| var(&format!("{}.inFinalState", sub.prefix)))
                    .collect();
                for f in finals {
                    c = bin(BinaryOp::And, c, f);
                }
            }
            conditions.push(c);
        }
        self.add(
            &name("selectedState"),
            ScalarType::Integer,
            int(0),
            if_(reset.clone(), int(1), previous(var(&name("nextState")))),
            &origin,
        );
        self.add(
            &name("selectedReset"),
            ScalarType::Boolean,
            Expr::Boolean(false),
            bin(
                BinaryOp::Or,
                reset.clone(),
                previous(var(&name("nextReset"))),
            ),
            &origin,
        );
        let pick = |which: &dyn Fn(usize) -> Option<Expr>| -> Expr {
            let mut acc = int(0);
            for i in 0..m.transitions.len() {
                if let Some(cond) = which(i) {
                    acc = call("max", vec![acc, if_(cond, int(i + 1), int(0))]);
                }
            }
            acc
        };
        let immediate = pick(&|i| {
            let t = t_of(i);
            t.immediate.then(|| {
                bin(
                    BinaryOp::And,
                    bin(BinaryOp::Eq, var(&name("selectedState")), int(idx(&t.from))),
                    conditions[i].clone(),
                )
            })
        });
        let delayed = pick(&|i| {
            let t = t_of(i);
            (!t.immediate).then(|| {
                bin(
                    BinaryOp::And,
                    bin(BinaryOp::Eq, var(&name("nextState")), int(idx(&t.from))),
                    conditions[i].clone(),
                )
            })
        });
        self.add(
            &name("immediate"),
            ScalarType::Integer,
            int(0),
            immediate,
            &origin,
        );
        self.add(
            &name("delayed"),
            ScalarType::Integer,
            int(0),
            delayed,
            &origin,
        );
        self.add(
            &name("fired"),
            ScalarType::Integer,
            int(0),
            call(
                "max",
                vec![previous(var(&name("delayed"))), var(&name("immediate"))],
            ),
            &origin,
        );
        let by_fired = |f: &dyn Fn(&Transition) -> Expr, otherwise: Expr| -> Expr {
            let mut acc = otherwise;
            for (i, t) in m.transitions.iter().enumerate().rev() {
                acc = if_(
                    bin(BinaryOp::Eq, var(&name("fired")), int(i + 1)),
                    f(t),
                    acc,
                );
            }
            acc
        };
        let to_state = by_fired(&|t| int(idx(&t.to)), var(&name("selectedState")));
        self.add(
            &name("activeState"),
            ScalarType::Integer,
            int(0),
            if_(reset.clone(), int(1), to_state),
            &origin,
        );
        let fired_reset = by_fired(&|t| Expr::Boolean(t.reset), var(&name("selectedReset")));
        self.add(
            &name("activeReset"),
            ScalarType::Boolean,
            Expr::Boolean(false),
            bin(BinaryOp::Or, reset.clone(), fired_reset),
            &origin,
        );
        self.add(
            &name("nextState"),
            ScalarType::Integer,
            int(0),
            if_(
                active.clone(),
                var(&name("activeState")),
                previous(var(&name("nextState"))),
            ),
            &origin,
        );
        self.add(
            &name("nextReset"),
            ScalarType::Boolean,
            Expr::Boolean(false),
            bin(
                BinaryOp::And,
                not(active.clone()),
                previous(var(&name("nextReset"))),
            ),
            &origin,
        );
        let finals: Vec<usize> = (1..=n)
            .filter(|&i| !m.transitions.iter().any(|t| idx(&t.from) == i))
            .collect();
        let in_final = finals.iter().fold(Expr::Boolean(false), |acc, &i| {
            bin(
                BinaryOp::Or,
                acc,
                bin(BinaryOp::Eq, var(&name("activeState")), int(i)),
            )
        });
        self.add(
            &name("inFinalState"),
            ScalarType::Boolean,
            Expr::Boolean(false),
            in_final,
            &origin,
        );
        for (i0, s) in m.states.iter().enumerate() {
            let i = i0 + 1;
            let ars = name(&format!("activeResetStates[{i}]"));
            let nrs = name(&format!("nextResetStates[{i}]"));
            self.add(
                &ars,
                ScalarType::Boolean,
                Expr::Boolean(false),
                bin(BinaryOp::Or, reset.clone(), previous(var(&nrs))),
                &origin,
            );
            self.add(
                &nrs,
                ScalarType::Boolean,
                Expr::Boolean(false),
                if_(
                    active.clone(),
                    bin(
                        BinaryOp::And,
                        bin(BinaryOp::Ne, var(&name("activeState")), int(i)),
                        var(&ars),
                    ),
                    previous(var(&nrs)),
                ),
                &origin,
            );
            let is_active = bin(
                BinaryOp::And,
                active.clone(),
                bin(BinaryOp::Eq, var(&name("activeState")), int(i)),
            );
            self.add(
                &active_name(s),
                ScalarType::Boolean,
                Expr::Boolean(false),
                is_active,
                &origin,
            );
            self.add(
                &reset_name(s),
                ScalarType::Boolean,
                Expr::Boolean(false),
                bin(
                    BinaryOp::And,
                    var(&active_name(s)),
                    bin(BinaryOp::Or, var(&name("activeReset")), var(&ars)),
                ),
                &origin,
            );
            // entered at this tick: not active before, or a transition into it fired, or reset
            let stayed = bin(
                BinaryOp::And,
                previous(var(&active_name(s))),
                bin(
                    BinaryOp::And,
                    bin(BinaryOp::Eq, var(&name("fired")), int(0)),
                    not(reset.clone()),
                ),
            );
            self.add(
                &ticks_name(s),
                ScalarType::Integer,
                int(0),
                if_(
                    var(&active_name(s)),
                    if_(
                        stayed.clone(),
                        bin(BinaryOp::Add, previous(var(&ticks_name(s))), int(1)),
                        int(1),
                    ),
                    int(0),
                ),
                &origin,
            );
            self.add(
                &entry_name(s),
                ScalarType::Real,
                Expr::Real(0.0),
                if_(
                    bin(BinaryOp::And, var(&active_name(s)), not(stayed)),
                    Expr::Time,
                    previous(var(&entry_name(s))),
                ),
                &origin,
            );
        }
        Ok(())
    }
}

/// `activeState("S")`, `ticksInState()` and `timeInState()` in an expression of state
/// `state` (`in_condition`: a transition condition, evaluated before the transition fires,
/// as if `state` stays active).
fn rewrite_state_queries(e: &mut Expr, state: Option<&str>, in_condition: bool) {
    if let Expr::Call { func, args } = e {
        match (func.as_str(), args.as_slice(), state) {
            ("activeState", [Expr::String(s)], _) => {
                *e = var(&active_name(s));
                return;
            }
            ("ticksInState", [], Some(s)) => {
                *e = if in_condition {
                    // the from-state is selected: its count after this tick if it stays
                    if_(
                        previous(var(&active_name(s))),
                        bin(BinaryOp::Add, previous(var(&ticks_name(s))), int(1)),
                        int(1),
                    )
                } else {
                    var(&ticks_name(s))
                };
                return;
            }
            ("timeInState", [], Some(s)) => {
                let entry = if in_condition {
                    if_(
                        previous(var(&active_name(s))),
                        previous(var(&entry_name(s))),
                        Expr::Time,
                    )
                } else {
                    var(&entry_name(s))
                };
                *e = bin(BinaryOp::Sub, Expr::Time, entry);
                return;
            }
            _ => {}
        }
    }
    walk::exprs_mut(e, &mut |x| rewrite_state_queries(x, state, in_condition));
}

/// An `inner outer` variable of a state (`state1.v`, what the states inside `state1` assign)
/// is the outer variable itself (`v`, assigned by `state1`'s siblings too): references are
/// redirected to the outer one, whose definitions are then merged across all levels, and
/// the inner outer variable gets `state1.v = v` for the results.
fn forward_inner_outer<'f>(
    equations: Vec<Equation>,
    flat: &'f FlatModel,
    index: &StateIndex,
) -> (Vec<Equation>, Vec<Equation>) {
    let direct: HashMap<&'f str, &'f str> = flat
        .inner_outer
        .iter()
        .filter(|(iv, _)| state_of(iv, index).is_some())
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    if direct.is_empty() {
        return (equations, Vec::new());
    }
    let resolve = |mut v: &'f str| -> String {
        for _ in 0..64 {
            match direct.get(v) {
                Some(o) => v = o,
                None => break,
            }
        }
        v.to_string()
    };
    let map: HashMap<String, String> = direct
        .keys()
        .map(|iv| (iv.to_string(), resolve(iv)))
        .collect();
    fn redirect(e: &mut Expr, map: &HashMap<String, String>) {
        if let Expr::Var { name, .. } = e {
            if let Some(o) = map.get(name.as_str()) {
                *name = o.clone();
            }
        }
        walk::exprs_mut(e, &mut |x| redirect(x, map));
    }
    let mut out = equations;
    for eq in &mut out {
        walk::equation_exprs_mut(eq, &mut |x| redirect(x, &map));
    }
    let mut forwarded: Vec<Equation> = map
        .iter()
        .map(|(iv, o)| Equation::Equal {
            lhs: var(iv),
            rhs: var(o),
            origin: flat
                .variables
                .iter()
                .find(|v| v.name == *iv)
                .map(|v| v.origin.clone())
                .unwrap_or_default(),
        })
        .collect();
    forwarded.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    (out, forwarded)
}

/// `activeState(x)` needs `x` to be a state of a state machine (spec 17.1).
fn check_active_state_arguments(
    equations: &[Equation],
    machines: &[Machine],
    index: &StateIndex,
) -> Result<(), Diagnostic> {
    let conditions = machines
        .iter()
        .flat_map(|m| m.transitions.iter().map(|t| (&t.condition, &t.origin)));
    let mut exprs: Vec<(Expr, Origin)> = conditions.map(|(c, o)| (c.clone(), o.clone())).collect();
    for eq in equations {
        let mut e = eq.clone();
        let origin = eq.origin().clone();
        walk::equation_exprs_mut(&mut e, &mut |x| exprs.push((x.clone(), origin.clone())));
    }
    for (e, origin) in &exprs {
        let mut bad = None;
        walk::visit(e, &mut |x| {
            if let Expr::Call { func, args } = x {
                if let (Some(Expr::String(s)), true) = (args.first(), func == "activeState") {
                    if !index.contains_key(s) && bad.is_none() {
                        bad = Some(s.clone());
                    }
                }
            }
        });
        if let Some(s) = bad {
            return Err(Diagnostic::error(
                origin.span,
                format!("`activeState({s})`: `{s}` is not a state of any state machine"),
            )
            .with_help("a state is a block instance named by `initialState` or `transition`"));
        }
    }
    Ok(())
}

/// The innermost state whose instance contains `instance`.
fn state_of<'s>(instance: &str, index: &'s StateIndex) -> Option<&'s str> {
    index
        .keys()
        .filter(|s| instance == s.as_str() || instance.starts_with(&format!("{s}.")))
        .max_by_key(|s| s.len())
        .map(|s| s.as_str())
}

/// The states enclosing `s` (itself first).
fn chain(s: &str, machines: &[Machine], index: &StateIndex) -> Vec<String> {
    let mut out = vec![s.to_string()];
    let mut cur = s.to_string();
    while let Some(p) = machines[index[&cur].0].parent.clone() {
        out.push(p.clone());
        cur = p;
    }
    out
}

/// Can states `a` and `b` be active at the same tick? Not if two of their enclosing
/// states are different states of one machine.
fn exclusive(a: &str, b: &str, machines: &[Machine], index: &StateIndex) -> bool {
    let (ca, cb) = (chain(a, machines, index), chain(b, machines, index));
    ca.iter()
        .any(|x| cb.iter().any(|y| x != y && index[x].0 == index[y].0))
}

/// One definition of a variable in a state: (state, right-hand side, where).
type Definition = (String, Expr, Origin);

/// Equations of states become guarded, merged definitions.
fn guard_state_equations(
    equations: Vec<Equation>,
    machines: &[Machine],
    index: &StateIndex,
    vars: &VarTable,
) -> Result<Vec<Equation>, Diagnostic> {
    let mut out = Vec::with_capacity(equations.len());
    // variable -> [(state, rhs, origin)]
    let mut defs: Vec<(String, Vec<Definition>)> = Vec::new();
    let mut def_index: HashMap<String, usize> = HashMap::default();
    let mut plain_defs: HashMap<String, Origin> = HashMap::default();
    for eq in equations {
        let origin = super::partition::equation_origin(&eq).clone();
        let Some(state) = state_of(&origin.instance, index).map(str::to_string) else {
            let mut eq = eq;
            walk::equation_exprs_mut(&mut eq, &mut |x| rewrite_state_queries(x, None, false));
            if let Equation::Equal {
                lhs: Expr::Var { name, .. },
                ..
            } = &eq
            {
                plain_defs.insert(name.clone(), origin.clone());
            }
            out.push(eq);
            continue;
        };
        let Equation::Equal {
            lhs: Expr::Var { name, subscripts },
            mut rhs,
            ..
        } = eq
        else {
            return Err(Diagnostic::error(
                origin.span,
                format!("equations of the state `{state}` must have the form `v = expression`"),
            )
            .with_help("moss activates the equations of a state by the variable each one defines; solve the equation for one variable"));
        };
        if !subscripts.is_empty() {
            return Err(Diagnostic::error(
                origin.span,
                "unexpected subscripted variable",
            ));
        }
        rewrite_state_queries(&mut rhs, Some(&state), false);
        reset_previous(&mut rhs, index, vars);
        let k = *def_index.entry(name.clone()).or_insert_with(|| {
            defs.push((name.clone(), Vec::new()));
            defs.len() - 1
        });
        defs[k].1.push((state, rhs, origin));
    }
    for (v, list) in defs {
        if let Some(o) = plain_defs.get(&v) {
            return Err(Diagnostic::error(
                list[0].2.span,
                format!(
                    "`{v}` is defined in the state `{}` and outside every state",
                    list[0].0
                ),
            )
            .with_secondary(o.span, "the definition outside the states"));
        }
        for (i, (s1, _, o1)) in list.iter().enumerate() {
            for (s2, _, o2) in &list[i + 1..] {
                if s1 == s2 || !exclusive(s1, s2, machines, index) {
                    return Err(Diagnostic::error(
                        o2.span,
                        format!("`{v}` is assigned in `{s2}` and in `{s1}`, which can be active at the same tick"),
                    )
                    .with_secondary(o1.span, "the other assignment")
                    .with_help("a variable has one assignment per tick: assign it in mutually exclusive states only (states of one state machine)"));
                }
            }
        }
        // not assigned at this tick: kept, or the start value when its state is reset
        let mut rhs = previous(var(&v));
        reset_previous(&mut rhs, index, vars);
        let origin = list[0].2.clone();
        for (s, e, _) in list.into_iter().rev() {
            rhs = if_(var(&active_name(&s)), e, rhs);
        }
        out.push(Equation::Equal {
            lhs: var(&v),
            rhs,
            origin,
        });
    }
    Ok(out)
}

/// `previous(x)` reads `x.start` when the state `x` belongs to (the innermost state whose
/// instance declares it) is entered with a reset: reset transitions re-initialize the
/// variables of the target state, not those of enclosing levels (spec 17.1).
fn reset_previous(e: &mut Expr, index: &StateIndex, vars: &VarTable) {
    if let Expr::Call { func, args } = e {
        if func == "previous" {
            if let [Expr::Var { name, .. }] = args.as_slice() {
                let owner = index
                    .keys()
                    .filter(|s| name.starts_with(&format!("{s}.")))
                    .max_by_key(|s| s.len());
                let Some(state) = owner else { return };
                let start = vars
                    .get(name)
                    .map(|v| {
                        v.attrs
                            .start
                            .clone()
                            .unwrap_or_else(|| default_value(&v.ty))
                    })
                    .unwrap_or(Expr::Real(0.0));
                let p = e.clone();
                *e = if_(var(&reset_name(state)), start, p);
                return;
            }
        }
    }
    walk::exprs_mut(e, &mut |x| reset_previous(x, index, vars));
}
