//! Entry point: flat model in, causal program out. Runs the passes in order, times them and
//! assembles the [`CausalProgram`].

use crate::alias::{self, AliasOf};
use crate::emit::Emitter;
use crate::ir::{ExprId, Node, VarIx};
use crate::jacobian::{self, TangentProgram};
use crate::model::{Model, VKind};
use crate::program::{
    Alias, Block, CausalProgram, JacobianSource, OdeJacobian, ProgVar, SampleDef,
    TranslationReport, VarId, VarKind,
};
use crate::solve::{LoopStats, WBlock};
use crate::{
    call_constants, convert, events, index, init, inline, params, solve, strings, toplevel,
    zero_params,
};
use moss_frontend::flat::{Function, StateSelect};
use moss_frontend::FlatModel;
use moss_syntax::Diagnostic;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::rc::Rc;
use std::time::Instant;

/// Stack for the translation thread: expression traversals recurse over nesting depth.
const STACK_BYTES: usize = 512 * 1024 * 1024;

/// Translate a flat model into a causal program. Warnings are in `program.report.warnings`;
/// errors (structurally singular, unbalanced, unsupported constructs) come back as
/// diagnostics pointing into `flat.sources`.
pub fn translate(flat: &FlatModel) -> Result<CausalProgram, Vec<Diagnostic>> {
    std::thread::scope(|s| {
        let h = std::thread::Builder::new()
            .stack_size(STACK_BYTES)
            .spawn_scoped(s, || translate_here(flat));
        match h {
            Ok(h) => h.join().unwrap_or_else(|payload| {
                let what = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                Err(vec![Diagnostic::error(
                    moss_syntax::Span::DUMMY,
                    format!("internal error in the symbolic stage: {what}"),
                )
                .with_help("please report this model")])
            }),
            Err(_) => translate_here(flat),
        }
    })
}

struct Timer {
    t: Instant,
}

impl Timer {
    fn lap(&mut self, m: &mut Model, name: &str) {
        let now = Instant::now();
        m.pass_times
            .push((name.to_string(), (now - self.t).as_secs_f64()));
        self.t = now;
    }
}

/// Translate on the current thread.
///
/// When an equation ends up solved by dividing by a parameter that is zero, the translation
/// is done again with those parameters evaluated (see [`zero_params`]); if that second
/// translation fails, the first program is kept.
pub fn translate_here(flat: &FlatModel) -> Result<CausalProgram, Vec<Diagnostic>> {
    let lowered = crate::clocks::lower_clocks(flat)?;
    let (flat, discretized) = match &lowered {
        Some(l) => (&l.flat, l.discretized.as_slice()),
        None => (flat, &[][..]),
    };
    let (program, evaluate) = translate_evaluating(flat, discretized, &[])?;
    let mut program = if evaluate.is_empty() {
        program
    } else {
        match translate_evaluating(flat, discretized, &evaluate) {
            Ok((evaluated, _)) => evaluated,
            Err(_) => program,
        }
    };
    report_structural_parameters(flat, &mut program.report);
    Ok(program)
}

/// The parameters the frontend built the structure from are evaluated parameters too: the
/// program keeps them as parameters (results show them), but setting one before a run
/// would leave the structure built for the old value, so it is refused like the others.
fn report_structural_parameters(flat: &FlatModel, report: &mut crate::program::TranslationReport) {
    if flat.structural_parameters.is_empty() {
        return;
    }
    // Hashed on both sides: a model of N component instances has O(N) variables and O(N)
    // structural parameters (`R[i].useHeatPort`), so a scan of one list per element of the
    // other was quadratic (7 s of 23 for an RC ladder of 10,000 sections).
    let structural: std::collections::HashSet<&str> = flat
        .structural_parameters
        .iter()
        .map(String::as_str)
        .collect();
    // `name` is structural when it, or an array it is an element of (`name` = `s[...]`),
    // was evaluated into the structure.
    let is_structural = |name: &str| {
        structural.contains(name)
            || name
                .match_indices('[')
                .any(|(at, _)| structural.contains(&name[..at]))
    };
    let mut already: std::collections::HashSet<String> = report
        .evaluated_parameters
        .iter()
        .map(|p| p.name.clone())
        .collect();
    for v in &flat.variables {
        if !is_structural(&v.name) || already.contains(&v.name) {
            continue;
        }
        already.insert(v.name.clone());
        let value = v.binding.as_ref().and_then(|b| {
            moss_frontend::fold::as_f64(b).or(match b {
                moss_frontend::flat::Expr::Boolean(x) => Some(f64::from(u8::from(*x))),
                _ => None,
            })
        });
        report
            .evaluated_parameters
            .push(crate::program::EvaluatedParam {
                name: v.name.clone(),
                value: value.unwrap_or(f64::NAN),
                ty: crate::convert::value_type(&v.ty),
                why: "it sets the model structure (an array size, a for range or an if condition)"
                    .into(),
            });
    }
}

/// One translation with the parameters `evaluate` turned into constants. Also returns the
/// parameters that should be evaluated because an equation is solved by dividing by them
/// while they are zero.
fn translate_evaluating(
    flat: &FlatModel,
    discretized: &[crate::clocks::DiscretizedPartition],
    evaluate: &[zero_params::EvaluatedParameter],
) -> Result<(CausalProgram, Vec<zero_params::EvaluatedParameter>), Vec<Diagnostic>> {
    let mut timer = Timer { t: Instant::now() };
    let mut m = convert::convert(flat)?;
    strings::fold_string_parameters(&mut m);
    let requested = zero_params::requested_parameters(&mut m, flat);
    zero_params::evaluate_parameters(&mut m, &requested);
    zero_params::evaluate_parameters(&mut m, evaluate);
    call_constants::fold_zero_call_outputs(&mut m, &flat.functions);
    toplevel::ground_floating_connectors(&mut m, flat);
    events::add_when_condition_slots(&mut m);
    timer.lap(&mut m, "convert");
    alias::propagate_constants(&mut m);
    zero_params::forget_vanished_derivatives(&mut m);
    let originally_differentiated: Vec<bool> = m.vars.iter().map(|v| v.der.is_some()).collect();
    let aliases = alias::eliminate_aliases(&mut m);
    timer.lap(&mut m, "alias elimination");
    inline::expand_late_calls(&mut m);
    let revealed = crate::hidden_constraints::reveal_hidden_constraints(&mut m);
    timer.lap(&mut m, "hidden constraints");
    let newly: Vec<zero_params::EvaluatedParameter> = revealed
        .parameters
        .iter()
        .map(|&p| m.vars[p as usize].name.clone())
        .filter(|name| !evaluate.iter().any(|e| e.name == *name))
        .map(|name| zero_params::EvaluatedParameter {
            why: "it is a coefficient of linear equations that together constrain the states: with its value fixed the combination is exact".into(),
            requested: false,
            name,
        })
        .collect();
    if !newly.is_empty() {
        // translate again with those coefficients constant, so that the combination is exact
        // whatever the parameters are set to before a run (they can no longer be)
        let mut with = evaluate.to_vec();
        with.extend(newly);
        return translate_evaluating(flat, discretized, &with);
    }
    m.hidden_constraints = revealed.constraints.into_iter().map(|c| c.text).collect();
    let info = index::reduce_index(&mut m)?;
    inline::inline_after_index_reduction(&mut m);
    let clocked_states = crate::clocks::states::discretize_states(&mut m, discretized)?;
    timer.lap(&mut m, "matching and index reduction");
    let is_state: Vec<bool> = (0..m.vars.len())
        .map(|v| {
            let sv = &m.vars[v];
            sv.kind == VKind::Continuous
                && !sv.eliminated
                && sv.der.is_some_and(|d| !m.vars[d as usize].dummy)
        })
        .collect();
    check_reinit_targets(&m, &is_state)?;
    // the states of discretized clocked partitions are states of their partition
    let mut selected = is_state.clone();
    for v in clocked_states {
        selected[v as usize] = true;
    }
    check_state_select(&mut m, &selected)?;
    let sim_unknown: Vec<bool> = (0..m.vars.len())
        .map(|v| {
            let sv = &m.vars[v];
            sv.is_unknown() && sv.kind != VKind::Parameter && !is_state[v]
        })
        .collect();
    let mut sim_stats = LoopStats::default();
    let mut sim_eqs = m.eqs.clone();
    let zero_pivots = m.zero_pivots.len();
    let sim_blocks = match solve::causalize(
        &mut m,
        &sim_eqs,
        &sim_unknown,
        "the model ",
        false,
        &mut sim_stats,
    ) {
        Ok(blocks) => blocks,
        // a `when` clause sorted as one unit may close a loop its equations do not: sort
        // again with the clauses split per variable (`when_split.rs`)
        Err(errors) => {
            if !crate::when_split::split_when_equations(&mut m) {
                return Err(errors);
            }
            m.zero_pivots.truncate(zero_pivots);
            sim_stats = LoopStats::default();
            sim_eqs = m.eqs.clone();
            solve::causalize(
                &mut m,
                &sim_eqs,
                &sim_unknown,
                "the model ",
                false,
                &mut sim_stats,
            )?
        }
    };
    timer.lap(&mut m, "sorting and tearing");
    params::move_free_dependents_to_init(&mut m);
    let mut init_stats = LoopStats {
        strict_tearing: true,
        prefer_given_starts: true,
        ..LoopStats::default()
    };
    let (init_blocks, init_eqs) = init::initialization(&mut m, &is_state, &mut init_stats)?;
    timer.lap(&mut m, "initialization");
    let param_blocks = params::parameter_blocks(&mut m)?;
    timer.lap(&mut m, "parameters");
    let to_evaluate = zero_params::parameters_to_evaluate(&mut m);
    let program = assemble(
        &mut m,
        flat,
        Assembly {
            aliases,
            is_state,
            originally_differentiated,
            info,
            sim_blocks,
            sim_eqs,
            init_blocks,
            init_eqs,
            param_blocks,
            sim_stats,
        },
        &mut timer,
    );
    Ok((program, to_evaluate))
}

/// `stateSelect` that could not be honoured: `never` on a state, `always` on a variable
/// that is not one. Where no choice of states could honour it, the model is rejected (spec
/// 4.8.7.1: `never` is "do not use as state at all", `always` "do use it as a state"): the
/// variable is tied to no other unknown outside derivatives, so nothing can take its place
/// as a state (`der(x) = time` with `x` never), or nothing can make it one (`v = if time <
/// 1 then 1 else 5` with `v` always). Otherwise another selection might have honoured it,
/// which this tool's static selection did not find: a warning names the variables.
fn check_state_select(m: &mut Model, is_state: &[bool]) -> Result<(), Vec<Diagnostic>> {
    let mut never = Vec::new();
    let mut always = Vec::new();
    for (v, sv) in m.vars.iter().enumerate() {
        if sv.eliminated || sv.kind != VKind::Continuous {
            continue;
        }
        match sv.state_select {
            StateSelect::Never if is_state[v] => never.push(v as VarIx),
            StateSelect::Always if !is_state[v] => always.push(v as VarIx),
            _ => {}
        }
    }
    if never.is_empty() && always.is_empty() {
        return Ok(());
    }
    let tied = variables_tied_to_others(m);
    let mut errors = Vec::new();
    let mut warn = |m: &mut Model, vars: &[VarIx], what: &str, why: &str| {
        let (fixed, other): (Vec<VarIx>, Vec<VarIx>) =
            vars.iter().partition(|&&v| !tied[v as usize]);
        for v in fixed {
            let sv = &m.vars[v as usize];
            errors.push(
                Diagnostic::error(
                    sv.origin.span,
                    format!("`{}` has stateSelect=StateSelect.{what}, but {why}", sv.name),
                )
                .with_help("change the stateSelect attribute, or the equations that determine the variable"),
            );
        }
        if !other.is_empty() {
            let names: Vec<&str> = other
                .iter()
                .map(|&v| m.vars[v as usize].name.as_str())
                .collect();
            let text = names.join(", ");
            m.warnings.push(format!(
                "stateSelect={what} cannot be honoured by this tool's choice of states: {text}"
            ));
        }
    };
    warn(
        m,
        &never,
        "never",
        "it must be a state: it appears differentiated and no equation relates it to another variable that could be a state in its place",
    );
    warn(
        m,
        &always,
        "always",
        "it cannot be a state: it is not differentiated, and its equations relate it to no other unknown",
    );
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Continuous unknowns that some equation relates to another continuous unknown, outside
/// derivatives (`der(x)` is a variable of its own: in `der(x) = -x` nothing else is).
fn variables_tied_to_others(m: &mut Model) -> Vec<bool> {
    let n = m.vars.len();
    let mut is_derivative = vec![false; n];
    for sv in &m.vars {
        if let Some(d) = sv.der {
            is_derivative[d as usize] = true;
        }
    }
    let mut tied = vec![false; n];
    let eqs = m.eqs.clone();
    for eq in &eqs {
        let inc: Vec<VarIx> = m
            .incidence(eq)
            .into_iter()
            .filter(|&v| {
                let sv = &m.vars[v as usize];
                sv.kind == VKind::Continuous && !is_derivative[v as usize]
            })
            .collect();
        if inc.len() > 1 {
            for v in inc {
                tied[v as usize] = true;
            }
        }
    }
    tied
}

/// `reinit` may only change states (after index reduction: not a dummy-derivative variable).
fn check_reinit_targets(m: &Model, is_state: &[bool]) -> Result<(), Vec<Diagnostic>> {
    let mut errors = Vec::new();
    for eq in &m.eqs {
        let crate::model::EqBody::When(branches) = &eq.body else {
            continue;
        };
        for b in branches {
            for it in &b.items {
                if let crate::model::WhenItem::Reinit { var, .. } = it {
                    if !is_state[*var as usize] {
                        errors.push(
                            Diagnostic::error(
                                eq.origin.span,
                                format!(
                                    "`reinit({}, ...)` needs a state, but `{}` is not a state of this model",
                                    m.var_name(*var),
                                    m.var_name(*var)
                                ),
                            )
                            .with_help("reinit only variables that appear differentiated (der(x)); with index reduction, set stateSelect=StateSelect.always on the variable"),
                        );
                    }
                }
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

struct Assembly {
    aliases: Vec<AliasOf>,
    is_state: Vec<bool>,
    originally_differentiated: Vec<bool>,
    info: index::IndexInfo,
    sim_blocks: Vec<WBlock>,
    sim_eqs: Vec<crate::model::SEq>,
    init_blocks: Vec<WBlock>,
    init_eqs: Vec<crate::model::SEq>,
    param_blocks: Vec<WBlock>,
    sim_stats: LoopStats,
}

fn literal(m: &Model, e: Option<u32>) -> Option<f64> {
    e.and_then(|e| m.arena.as_const(e))
}

fn var_kind(m: &Model, v: usize, is_state: &[bool]) -> VarKind {
    let sv = &m.vars[v];
    match sv.kind {
        VKind::Constant if params::is_dependent(m, v as VarIx) => VarKind::DependentParameter,
        VKind::Constant => VarKind::Constant,
        VKind::Parameter if sv.fixed == Some(false) => VarKind::DependentParameter,
        VKind::Parameter if params::is_dependent(m, v as VarIx) => VarKind::DependentParameter,
        VKind::Parameter => VarKind::Parameter,
        VKind::Input => VarKind::Input,
        VKind::Discrete => VarKind::Discrete,
        VKind::Continuous if is_state[v] => VarKind::State,
        VKind::Continuous if sv.der_of.is_some_and(|b| is_state[b as usize]) => VarKind::Derivative,
        VKind::Continuous => VarKind::Algebraic,
    }
}

fn program_vars(m: &mut Model, is_state: &[bool]) -> (Vec<ProgVar>, Vec<Option<VarId>>) {
    let live = m.vars.iter().filter(|v| !v.eliminated).count();
    let mut vars = Vec::with_capacity(live);
    let mut slot = vec![None; m.vars.len()];
    for (v, slot_v) in slot.iter_mut().enumerate() {
        if m.vars[v].eliminated {
            continue;
        }
        let kind = var_kind(m, v, is_state);
        let sv = &m.vars[v];
        let start = match sv.kind {
            VKind::Parameter | VKind::Constant => literal(m, sv.binding).or(literal(m, sv.start)),
            _ => literal(m, sv.start),
        };
        if start.is_none()
            && sv.kind == VKind::Parameter
            && sv.binding.is_none()
            && sv.start.is_none()
            && sv.fixed != Some(false)
        {
            let w = format!("parameter `{}` has no value; using 0", sv.name);
            m.warnings.push(w);
        }
        let sv = &m.vars[v];
        *slot_v = Some(vars.len() as VarId);
        vars.push(ProgVar {
            name: sv.name.clone(),
            kind,
            ty: sv.ty,
            start: start.unwrap_or(0.0),
            nominal: literal(m, sv.nominal).unwrap_or(1.0),
            min: literal(m, sv.min),
            max: literal(m, sv.max),
            unit: sv.unit.clone(),
            description: sv.description.clone(),
            hidden: sv.hidden || sv.name.starts_with('$'),
        });
    }
    (vars, slot)
}

fn assemble(m: &mut Model, flat: &FlatModel, a: Assembly, timer: &mut Timer) -> CausalProgram {
    let tangent = build_tangent_program(m, &a);
    timer.lap(m, "ODE Jacobian");
    let mut is_state = a.is_state.clone();
    is_state.resize(m.vars.len(), false);
    let (mut vars, slot) = program_vars(m, &is_state);
    let mut em = Emitter::new(slot.clone());
    let mut blocks = Vec::new();
    for b in &a.sim_blocks {
        blocks.extend(em.block(m, &a.sim_eqs, b));
    }
    em.new_zero_crossings = false;
    let (ode_jacobian, jacobian_source) = match tangent {
        Ok(t) => {
            for &v in &t.created {
                if let Some(s) = slot[v as usize] {
                    vars[s as usize].kind = VarKind::Tangent;
                }
            }
            // the tangent program's units number its own equations after the simulation's
            let mut eqs = a.sim_eqs.clone();
            eqs.extend(t.eqs.iter().cloned());
            let mut jblocks = Vec::new();
            for b in &t.blocks {
                jblocks.extend(em.block(m, &eqs, b));
            }
            let jac = OdeJacobian {
                seeds: t.seeds.iter().map(|&v| em.slot_of(v)).collect(),
                outputs: t.outputs.iter().map(|o| o.map(|v| em.slot_of(v))).collect(),
                blocks: jblocks,
            };
            (Some(jac), JacobianSource::Symbolic)
        }
        Err(why) => (None, JacobianSource::FiniteDifferences(why)),
    };
    let start_blocks = start_guesses(m, &mut em);
    let mut init_blocks = Vec::new();
    for b in &a.init_blocks {
        init_blocks.extend(em.block(m, &a.init_eqs, b));
    }
    em.events = false;
    let mut parameter_blocks = Vec::new();
    for b in &a.param_blocks {
        parameter_blocks.extend(em.block(m, &[], b));
    }
    let mut samples = Vec::new();
    for i in 0..m.samples.len() {
        let (s, iv) = m.samples[i];
        samples.push(SampleDef {
            start: em.expr(m, s),
            interval: em.expr(m, iv),
        });
    }
    let states: Vec<VarId> = (0..m.vars.len())
        .filter(|&v| is_state[v])
        .filter_map(|v| slot[v])
        .collect();
    let derivatives: Vec<VarId> = (0..m.vars.len())
        .filter(|&v| is_state[v])
        .filter_map(|v| m.vars[v].der.and_then(|d| slot[d as usize]))
        .collect();
    let io: Vec<BlockIo> = blocks.iter().map(block_io).collect();
    let jacobian_pattern = jacobian_pattern(&io, &vars, &states, &derivatives);
    let aliases = a
        .aliases
        .iter()
        .filter_map(|al| {
            let t = slot[al.target as usize]?;
            let sv = &m.vars[al.var as usize];
            Some(Alias {
                name: sv.name.clone(),
                target: t,
                scale: al.scale,
                offset: al.offset,
                unit: sv.unit.clone(),
                description: sv.description.clone(),
                kind: vars[t as usize].kind,
                hidden: sv.hidden,
            })
        })
        .collect();
    timer.lap(m, "emit");
    let report = TranslationReport {
        pass_times: m.pass_times.clone(),
        index_before_reduction: a.info.index,
        hidden_constraints: m.hidden_constraints.clone(),
        dummy_derivatives: a.info.dummies.iter().map(|&d| m.var_name(d)).collect(),
        loops_before_tearing: a.sim_stats.before.clone(),
        loops_after_tearing: a.sim_stats.after.clone(),
        state_choices: state_choices(m, &a),
        evaluated_parameters: m.evaluated.clone(),
        jacobian: jacobian_source,
        warnings: m.warnings.clone(),
        state_sets: a
            .info
            .state_sets
            .iter()
            .map(|set| crate::program::StateSetReport {
                candidates: set.candidates.iter().map(|&v| m.var_name(v)).collect(),
                states: set.set_states.iter().map(|&v| m.var_name(v)).collect(),
                mask: m.var_name(set.mask),
                // as written: the differentiated forms are shown by `--dump`
                constraints: set
                    .constraints
                    .iter()
                    .map(|&e| {
                        let mut root = e as usize;
                        while let Some(p) = m.eqs[root].diff_of {
                            root = p as usize;
                        }
                        m.eq_text(&m.eqs[root])
                    })
                    .collect(),
            })
            .collect(),
    };
    let zero_crossing_blocks = Some(zero_crossing_blocks(&io, vars.len(), &em.zero_crossings));
    CausalProgram {
        name: m.name.clone(),
        vars,
        aliases,
        states,
        derivatives,
        parameter_blocks,
        start_blocks,
        init_blocks,
        blocks,
        zero_crossings: em.zero_crossings,
        zero_crossing_blocks,
        samples,
        jacobian_pattern,
        ode_jacobian,
        functions: program_functions(m, flat),
        experiment: flat.experiment.clone(),
        report,
    }
}

/// The functions of the flat model and the generated derivative functions that the program
/// calls (see [`crate::autodiff`]).
fn program_functions(m: &Model, flat: &FlatModel) -> std::collections::BTreeMap<String, Function> {
    let mut functions = flat.functions.clone();
    if m.arena.generated.is_empty() {
        return functions;
    }
    let mut called: Vec<String> = (0..m.arena.len())
        .filter_map(|e| match m.arena.node(e as ExprId) {
            Node::Call(f, _) if m.arena.generated.contains_key(f.as_ref()) => Some(f.to_string()),
            _ => None,
        })
        .collect();
    // Partial derivatives (`der(f, x)`) call generated functions from their bodies.
    called.extend(crate::autodiff::generated_functions_called_by(
        &flat.functions,
        &m.arena.generated,
    ));
    functions.extend(crate::autodiff::referenced_generated_functions(
        &m.arena.generated,
        called,
    ));
    functions
}

/// The symbolic ODE Jacobian (see [`crate::jacobian`]), or why there is none.
fn build_tangent_program(m: &mut Model, a: &Assembly) -> Result<TangentProgram, String> {
    let states: Vec<VarIx> = (0..a.is_state.len())
        .filter(|&v| a.is_state[v])
        .map(|v| v as VarIx)
        .collect();
    let mut derivatives = Vec::with_capacity(states.len());
    for &s in &states {
        match m.vars[s as usize].der {
            Some(d) => derivatives.push(d),
            None => return Err(format!("state `{}` has no derivative", m.var_name(s))),
        }
    }
    // without states the Jacobian is empty whatever the blocks are (a clocked model of
    // Integer loops has blocks no tangent exists for)
    let blocks: &[_] = if states.is_empty() {
        &[]
    } else {
        &a.sim_blocks
    };
    jacobian::tangent_program(m, blocks, &a.sim_eqs, &states, &derivatives)
}

/// Non-literal start values (depending on parameters) are computed first during
/// initialization so that they serve as guesses, as values of `fixed=true` starts and, like
/// literal start values, as the `pre` values at the start time.
fn start_guesses(m: &mut Model, em: &mut Emitter) -> Vec<Block> {
    let mut out = Vec::new();
    for v in 0..m.vars.len() {
        let sv = &m.vars[v];
        if sv.eliminated || !sv.is_unknown() {
            continue;
        }
        let Some(s) = sv.start else { continue };
        if m.arena.as_const(s).is_some() || !m.is_parameter_expr(s) {
            continue;
        }
        let expr = em.expr(m, s);
        out.push(Block::Assign {
            var: em.slot_of(v as VarIx),
            expr,
        });
    }
    out
}

fn state_choices(m: &Model, a: &Assembly) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for v in 0..a.is_state.len() {
        if !a.is_state[v] {
            continue;
        }
        let sv = &m.vars[v];
        let set = a
            .info
            .state_sets
            .iter()
            .find(|s| s.set_states.contains(&(v as u32)));
        if let Some(set) = set {
            let names: Vec<String> = set.candidates.iter().map(|&c| m.var_name(c)).collect();
            out.push((
                sv.name.clone(),
                format!(
                    "dynamic state selection: one of {} chosen at run time",
                    names.join(", ")
                ),
            ));
            continue;
        }
        let why = match sv.state_select {
            StateSelect::Always => "stateSelect=always".to_string(),
            StateSelect::Prefer => "stateSelect=prefer".to_string(),
            _ if a.originally_differentiated.get(v).copied().unwrap_or(false)
                && a.info.dummies.is_empty() =>
            {
                "appears differentiated".to_string()
            }
            _ if a.originally_differentiated.get(v).copied().unwrap_or(false) => {
                "appears differentiated; kept by dummy derivative selection".to_string()
            }
            _ => "introduced by index reduction".to_string(),
        };
        out.push((sv.name.clone(), why));
    }
    out
}

/// Structural dependencies of each derivative on the states, propagated through the blocks.
/// What a block reads and what it computes (see [`block_io`]).
type BlockIo = (Vec<VarId>, Vec<VarId>);

/// Which blocks compute, transitively, what the variables `roots` need.
fn blocks_needed_for(io: &[BlockIo], n_vars: usize, roots: &[VarId]) -> Vec<bool> {
    let mut needed = vec![false; n_vars];
    for &v in roots {
        needed[v as usize] = true;
    }
    let mut used = vec![false; io.len()];
    for (k, (reads, outputs)) in io.iter().enumerate().rev() {
        if outputs.iter().any(|&o| needed[o as usize]) {
            used[k] = true;
            for &r in reads {
                needed[r as usize] = true;
            }
        }
    }
    used
}

fn jacobian_pattern(
    io: &[BlockIo],
    vars: &[ProgVar],
    states: &[VarId],
    derivatives: &[VarId],
) -> Vec<(u32, u32)> {
    let mut state_index = vec![u32::MAX; vars.len()];
    for (i, &s) in states.iter().enumerate() {
        state_index[s as usize] = i as u32;
    }
    // Only blocks that the derivatives depend on: other variables may depend on many states
    // (the absolute angle of the last inertia of a chain whose states are relative angles
    // depends on all of them), and propagating their sets made this pass quadratic.
    let used = blocks_needed_for(io, vars.len(), derivatives);
    let none: StateSet = Rc::from(Vec::new());
    let mut deps: Vec<StateSet> = vec![none; vars.len()];
    let mut sets = StateSets::default();
    for ((reads, outputs), _) in io.iter().zip(&used).filter(|(_, &u)| u) {
        propagate(reads, outputs, &state_index, &mut deps, &mut sets);
    }
    let mut out = Vec::new();
    for (i, &d) in derivatives.iter().enumerate() {
        // the derivative may be a state itself (index reduction's `der(r_0[1])` of a
        // constrained position): no block computes it, it depends on itself
        let own = state_index[d as usize];
        if own != u32::MAX {
            out.push((i as u32, own));
        }
        for &j in deps[d as usize].iter() {
            if j != own {
                out.push((i as u32, j));
            }
        }
    }
    out
}

/// The blocks that compute what the zero crossings read, transitively, in order.
fn zero_crossing_blocks(
    io: &[BlockIo],
    n_vars: usize,
    crossings: &[crate::program::ZeroCrossing],
) -> Vec<u32> {
    let mut reads = Vec::new();
    for z in crossings {
        collect_reads(&z.expr, &mut reads);
    }
    let used = blocks_needed_for(io, n_vars, &reads);
    (0..io.len() as u32).filter(|&k| used[k as usize]).collect()
}

fn collect_reads(e: &crate::program::PExpr, out: &mut Vec<VarId>) {
    use crate::program::PExpr as P;
    match e {
        P::Var(v) => out.push(*v),
        P::Neg(a) | P::Not(a) => collect_reads(a, out),
        P::Arith(_, a, b) | P::And(a, b) | P::Or(a, b) => {
            collect_reads(a, out);
            collect_reads(b, out);
        }
        P::Rel { lhs, rhs, zc, .. }
            // frozen relations do not make the derivative depend on their operands
            if zc.is_none() => {
                collect_reads(lhs, out);
                collect_reads(rhs, out);
            }
        P::If(c, a, b) => {
            collect_reads(c, out);
            collect_reads(a, out);
            collect_reads(b, out);
        }
        P::Call { args, .. } | P::Array(args) => args.iter().for_each(|a| collect_reads(a, out)),
        _ => {}
    }
}

/// The sorted states a variable depends on. Shared: all unknowns of one block (the 65,000
/// accelerations of a MultiBody chain's linear system) depend on the same set, and a copy
/// per unknown made this pass quadratic in time and memory.
type StateSet = Rc<[u32]>;

/// Equal sets made one (interned by content) and merges remembered by what they merged: the
/// nine entries of a MultiBody frame's rotation matrix each read the previous frame's nine
/// (one interned set) and the joint angle, so eight of the nine merges are a lookup.
#[derive(Default)]
struct StateSets {
    interned: HashSet<StateSet>,
    merged: HashMap<(Vec<usize>, Vec<u32>), StateSet>,
}

impl StateSets {
    fn intern(&mut self, set: Vec<u32>) -> StateSet {
        if let Some(known) = self.interned.get(&set[..]) {
            return Rc::clone(known);
        }
        let set: StateSet = Rc::from(set);
        self.interned.insert(Rc::clone(&set));
        set
    }
}

fn merge_deps(
    reads: &[VarId],
    state_index: &[u32],
    deps: &[StateSet],
    memo: &mut StateSets,
) -> StateSet {
    let mut direct = Vec::new();
    let mut sets: Vec<&StateSet> = Vec::new();
    for &r in reads {
        let si = state_index[r as usize];
        if si != u32::MAX {
            direct.push(si);
        } else if !deps[r as usize].is_empty() {
            sets.push(&deps[r as usize]);
        }
    }
    sets.sort_unstable_by_key(|s| s.as_ptr());
    sets.dedup_by(|a, b| Rc::ptr_eq(a, b));
    // One set that already holds every state read directly: shared, not copied.
    if let [only] = sets[..] {
        if direct.iter().all(|x| only.binary_search(x).is_ok()) {
            return Rc::clone(only);
        }
    }
    direct.sort_unstable();
    direct.dedup();
    let key = (sets.iter().map(|s| s.as_ptr() as usize).collect(), direct);
    if let Some(known) = memo.merged.get(&key) {
        return Rc::clone(known);
    }
    let mut out = key.1.clone();
    for set in sets {
        out.extend_from_slice(set);
    }
    out.sort_unstable();
    out.dedup();
    let out = memo.intern(out);
    memo.merged.insert(key, Rc::clone(&out));
    out
}

/// The variables a block reads and those it computes (for the dependency pattern, and for
/// the slices of the tangent program that `moss-codegen` runs per colour of Jacobian
/// columns). Blocks that compute no variable (asserts, `when`) have no outputs.
pub fn block_io(b: &Block) -> (Vec<VarId>, Vec<VarId>) {
    let mut reads = Vec::new();
    let outputs: Vec<VarId> = match b {
        Block::Assign { var, expr } => {
            collect_reads(expr, &mut reads);
            vec![*var]
        }
        Block::SolveScalar { var, residual, .. } => {
            collect_reads(residual, &mut reads);
            vec![*var]
        }
        Block::Linear { vars, matrix, rhs } => {
            matrix
                .iter()
                .for_each(|(_, _, e)| collect_reads(e, &mut reads));
            rhs.iter().for_each(|e| collect_reads(e, &mut reads));
            vars.clone()
        }
        Block::Nonlinear {
            iteration_vars,
            inner,
            residuals,
            ..
        } => {
            // every kind of inner block: a device's multi-output call inside a loop (a
            // Spice3 MOSFET's currents of its gate voltage) left out made the chained
            // inverters' Jacobian diagonal, and the colouring mixed the columns
            let mut outs = iteration_vars.clone();
            for ib in inner {
                let (inner_reads, inner_outputs) = block_io(ib);
                reads.extend(inner_reads);
                outs.extend(inner_outputs);
            }
            residuals.iter().for_each(|e| collect_reads(e, &mut reads));
            outs
        }
        Block::CallOutputs { outputs, args, .. } => {
            args.iter().for_each(|e| collect_reads(e, &mut reads));
            outputs.iter().flatten().copied().collect()
        }
        Block::Algorithm {
            inputs, outputs, ..
        } => {
            reads.extend_from_slice(inputs);
            outputs.clone()
        }
        _ => Vec::new(),
    };
    (reads, outputs)
}

/// The states each output of a block depends on: those of everything it reads.
fn propagate(
    reads: &[VarId],
    outputs: &[VarId],
    state_index: &[u32],
    deps: &mut [StateSet],
    sets: &mut StateSets,
) {
    if outputs.is_empty() {
        return;
    }
    let d = merge_deps(reads, state_index, deps, sets);
    for &o in outputs {
        if state_index[o as usize] == u32::MAX {
            deps[o as usize] = Rc::clone(&d);
        }
    }
}

#[cfg(test)]
mod pattern_tests {
    use super::*;

    /// Variables 0..3 are states 0..3; the others are computed by the blocks below.
    fn setup(n: usize) -> (Vec<u32>, Vec<StateSet>, StateSets) {
        let state_index = (0..n as u32)
            .map(|v| if v < 4 { v } else { u32::MAX })
            .collect();
        let none: StateSet = Rc::from(Vec::new());
        (state_index, vec![none; n], StateSets::default())
    }

    #[test]
    fn a_loop_reads_and_writes_what_its_inner_calls_do() {
        use crate::program::{ArithOp, PExpr as P};
        // v4 torn; (v5, v6) = device(v4, state 1) inside; residual v4 + v5 + v6 - state 2
        let var = |v: u32| Box::new(P::Var(v));
        let sum = P::Arith(ArithOp::Add, var(4), var(5));
        let residual = P::Arith(
            ArithOp::Sub,
            Box::new(P::Arith(ArithOp::Add, Box::new(sum), var(6))),
            var(2),
        );
        let block = Block::Nonlinear {
            iteration_vars: vec![4],
            inner: vec![Block::CallOutputs {
                outputs: vec![Some(5), None, Some(6)],
                func: "device".into(),
                args: vec![P::Var(4), P::Var(1)],
            }],
            residuals: vec![residual],
            jacobian: None,
            linear: false,
            fallback: None,
        };
        let (mut reads, outputs) = block_io(&block);
        reads.sort_unstable();
        reads.dedup();
        assert_eq!(outputs, vec![4, 5, 6]);
        assert_eq!(reads, vec![1, 2, 4, 5, 6]);
        let (si, mut deps, mut sets) = setup(8);
        propagate(&reads, &outputs, &si, &mut deps, &mut sets);
        assert_eq!(
            &deps[5][..],
            &[1, 2],
            "the call's state argument reaches its outputs"
        );
    }

    #[test]
    fn outputs_of_one_block_share_their_state_set() {
        let (si, mut deps, mut sets) = setup(10);
        // A linear block: 4, 5, 6 from states 2, 0 and variable 7 (which is still empty).
        propagate(&[2, 0, 7], &[4, 5, 6], &si, &mut deps, &mut sets);
        assert_eq!(&deps[4][..], &[0, 2]);
        assert!(Rc::ptr_eq(&deps[4], &deps[5]) && Rc::ptr_eq(&deps[5], &deps[6]));
        // Reading one shared set and a state it holds: the set itself, not a copy.
        propagate(&[4, 5, 0], &[8], &si, &mut deps, &mut sets);
        assert!(Rc::ptr_eq(&deps[8], &deps[4]));
        // A state it lacks: a merged set, sorted, without duplicates.
        propagate(&[5, 3, 3], &[9], &si, &mut deps, &mut sets);
        assert_eq!(&deps[9][..], &[0, 2, 3]);
    }

    #[test]
    fn equal_merges_give_one_set() {
        let (si, mut deps, mut sets) = setup(12);
        propagate(&[1], &[4], &si, &mut deps, &mut sets);
        propagate(&[1], &[5], &si, &mut deps, &mut sets);
        // Two blocks with the same inputs (as the entries of a rotation matrix have)...
        propagate(&[4, 5, 2], &[6], &si, &mut deps, &mut sets);
        propagate(&[5, 2, 4], &[7], &si, &mut deps, &mut sets);
        assert!(Rc::ptr_eq(&deps[6], &deps[7]));
        // ...and a different route to the same content: interned to the same set.
        propagate(&[1, 2], &[8], &si, &mut deps, &mut sets);
        assert!(Rc::ptr_eq(&deps[6], &deps[8]));
        assert_eq!(&deps[8][..], &[1, 2]);
        // States never get a set of their own.
        propagate(&[8], &[0], &si, &mut deps, &mut sets);
        assert!(deps[0].is_empty());
    }
}
