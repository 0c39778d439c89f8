//! Compilation of a [`CausalProgram`] into executable [`Step`]s.
//!
//! Runs of `Assign` blocks become one tape; every other block becomes one step holding its
//! own tapes. Function bodies and algorithm sections are compiled by `func.rs`. All names are
//! resolved here, once: nothing at run time looks anything up by name.

use crate::builtins::Builtin;
use crate::func::{compile_function, CBody, CFunction, FExpr, FStmt, ModelNames, Scope, Ty};
use crate::kept_factors::{cache_pays, drop_impure_matrix_caches, matrix_inputs, MatrixCache};
use crate::pretty::expr_to_string;
use crate::sparse::{SparseSystem, SPARSE_MIN_SIZE};
use crate::tangent_slices::{seed_dependence_keys, TangentSteps};
use crate::tape::{code_operands_in_bounds, remap_temps, Instr, Tape, TapeCompiler};
use moss_frontend::flat::AssertLevel;
use moss_symbolic::program::{ArithOp, Block, PExpr, RelOp, ValueType, VarId, VarKind};
use moss_symbolic::CausalProgram;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::collections::BTreeSet;

/// The iteration variables of the nonlinear solves among `steps` (see [`Code::guess_slots`]).
fn guess_slots(steps: &[Step]) -> Vec<u32> {
    let mut out = Vec::new();
    for s in steps {
        match s {
            Step::Scalar(sc) => out.push(sc.var),
            Step::Nonlinear(nl) if !nl.linear => {
                out.extend(&nl.vars);
                out.extend(guess_slots(&nl.inner));
                if let Some(fb) = &nl.fallback {
                    out.extend(guess_slots(&fb.steps));
                }
            }
            _ => {}
        }
    }
    out
}

pub struct ScalarStep {
    pub var: u32,
    pub code: Tape,
    pub out: u32,
    pub der: Option<(Tape, u32)>,
    /// The residual as text, for error messages.
    pub text: String,
}

pub struct LinearStep {
    pub vars: Vec<u32>,
    /// Computes every matrix entry into its register.
    pub matrix_code: Tape,
    /// Computes every right-hand side into its register.
    pub code: Tape,
    pub entries: Vec<(u32, u32, u32)>,
    /// The matrix is a pure function of a few variables: its factors are kept and reused
    /// while those hold the same values (see [`MatrixCache`]).
    pub cache: Option<MatrixCache>,
    pub rhs: Vec<u32>,
    /// Large sparse systems: the pattern (duplicates merged) and, per entry, its position.
    pub sparse: Option<(SparseSystem, Vec<usize>)>,
    /// Some coefficient is zero in some branch of an if-expression (`if locked then 0 else
    /// 1`, friction modes): a singular matrix may come from the mode, not from the model.
    pub mode_dependent: bool,
}

/// Code computing Jacobian entries, and the entries `(row, col, register)`.
pub type JacobianCode = (Tape, Vec<(u32, u32, u32)>);

pub struct NonlinearStep {
    pub vars: Vec<u32>,
    pub nominal: Vec<f64>,
    /// `(min, max)` attributes of the iteration variables (infinite when absent): trial points
    /// are projected into these bounds.
    pub bounds: Vec<(f64, f64)>,
    pub inner: Vec<Step>,
    /// Computes every residual into its register.
    pub res_code: Tape,
    pub res: Vec<u32>,
    pub res_text: Vec<String>,
    /// Symbolic Jacobian: code computing entries `(row, col, register)`.
    pub jac: Option<JacobianCode>,
    /// Without a symbolic Jacobian: columns perturbed together by finite differences.
    pub fd_groups: Option<crate::fd_columns::ColumnGroups>,
    /// Affine residuals (a torn linear loop): one exact step solves it.
    pub linear: bool,
    /// A torn linear loop whose symbolic Jacobian reads a few variables only: its values
    /// and factors are kept while those do not change (between the events of a switched
    /// circuit, whose loop matrices depend on the switches' states and parameters).
    pub jac_cache: Option<MatrixCache>,
    /// Torn linear loops only: the Real unknowns the inner steps compute, with their nominal
    /// values. A singular loop takes the solution of least norm over all its unknowns, these
    /// and the iteration variables, as the untorn system has them (`solve::min_norm_step`).
    pub inner_vars: Vec<(u32, f64)>,
    /// The same loop torn by safe divisors only (see `Block::Nonlinear`), run when this
    /// solve fails, from the values the loop's variables had before it.
    pub fallback: Option<Box<Fallback>>,
}

/// The alternative tearing of a loop and the slots to restore before it runs.
pub struct Fallback {
    pub steps: Vec<Step>,
    /// The loop's Real variables (iteration variables and those the inner steps compute).
    pub slots: Vec<u32>,
}

/// Torn systems from this many iteration variables on group their finite-difference
/// columns (smaller ones gain little).
const MIN_GROUPED_COLUMNS: usize = 6;

/// The Real variables assigned by the inner blocks of a torn loop, with their nominal values.
fn inner_unknowns(p: &CausalProgram, inner: &[Block]) -> Vec<(u32, f64)> {
    inner
        .iter()
        .filter_map(|b| match b {
            Block::Assign { var, .. } | Block::SolveScalar { var, .. } => Some(*var),
            _ => None,
        })
        .filter(|&v| {
            p.vars
                .get(v as usize)
                .is_some_and(|pv| pv.ty == ValueType::Real)
        })
        .map(|v| (v, nominal_or_one(p.vars[v as usize].nominal)))
        .collect()
}

/// A variable's nominal magnitude, 1 when absent or unusable.
fn nominal_or_one(nominal: f64) -> f64 {
    let nom = nominal.abs();
    if nom.is_finite() && nom > 0.0 {
        nom
    } else {
        1.0
    }
}

pub enum CallTarget {
    User(u32),
    Builtin(Builtin),
}

pub struct WhenStep {
    pub conditions: Vec<u32>,
    pub fires_at_initial: bool,
    pub body: Vec<Step>,
}

pub enum Step {
    Tape(Tape),
    Scalar(Box<ScalarStep>),
    Linear(Box<LinearStep>),
    Nonlinear(Box<NonlinearStep>),
    CallOutputs {
        code: Tape,
        target: CallTarget,
        args: Vec<FExpr>,
        outputs: Vec<Option<u32>>,
        /// How the arguments reach a compiled callee's frame, made at the first call (the
        /// registers of `args` are final only then).
        plan: std::sync::OnceLock<Option<crate::scalar_fn::CallPlan>>,
        /// For a generated derivative function (`f.$der`): the positions of its direction
        /// arguments. When all of them are zero, so is every output, and the call is
        /// skipped (see [`direction_arguments`]).
        directions: Vec<usize>,
        /// The memory cells of those arguments, gathered at the first call (registers are
        /// final only then); `None` when one of them is not a plain cell or a zero
        /// constant, so the call always runs.
        direction_cells: std::sync::OnceLock<Option<Box<[u32]>>>,
    },
    Algorithm {
        stmts: Vec<FStmt>,
        frame_size: u32,
        /// Discrete outputs start from their `pre` value (Modelica algorithm semantics).
        discrete_outputs: Vec<u32>,
        /// Other outputs start from their start value.
        continuous_outputs: Vec<(u32, f64)>,
    },
    When(Vec<WhenStep>),
    Reinit {
        code: Tape,
        out: u32,
        var: u32,
    },
    Assert {
        code: Tape,
        out: u32,
        /// A condition that compares Strings, run by the function interpreter instead of
        /// `code` (`strings_involved`).
        value_cond: Option<FExpr>,
        message: FExpr,
        level: AssertLevel,
    },
    /// `out := expr` through the function interpreter: an assignment that computes or
    /// compares Strings (`strings_involved`); a String result is stored as its handle.
    Value {
        expr: FExpr,
        out: u32,
    },
    Terminate {
        message: FExpr,
    },
}

impl Step {
    /// Apply `f` to this step and every step nested in it.
    pub(crate) fn for_each_step(&mut self, f: &mut impl FnMut(&mut Step)) {
        f(self);
        match self {
            Step::Nonlinear(nl) => {
                for s in &mut nl.inner {
                    s.for_each_step(f);
                }
                if let Some(fb) = &mut nl.fallback {
                    for s in &mut fb.steps {
                        s.for_each_step(f);
                    }
                }
            }
            Step::When(bs) => {
                for b in bs {
                    for s in &mut b.body {
                        s.for_each_step(f);
                    }
                }
            }
            _ => {}
        }
    }

    fn for_each_code(&mut self, f: &mut impl FnMut(&mut Vec<Instr>)) {
        match self {
            Step::Tape(c) | Step::CallOutputs { code: c, .. } => f(c),
            Step::Reinit { code, .. } | Step::Assert { code, .. } => f(code),
            Step::Scalar(s) => {
                f(&mut s.code);
                if let Some((c, _)) = &mut s.der {
                    f(c);
                }
            }
            Step::Linear(l) => {
                f(&mut l.matrix_code);
                f(&mut l.code);
            }
            Step::Nonlinear(nl) => {
                f(&mut nl.res_code);
                if let Some((c, _)) = &mut nl.jac {
                    f(c);
                }
                for s in &mut nl.inner {
                    s.for_each_code(f);
                }
                if let Some(fb) = &mut nl.fallback {
                    for s in &mut fb.steps {
                        s.for_each_code(f);
                    }
                }
            }
            Step::When(bs) => {
                for b in bs {
                    for s in &mut b.body {
                        s.for_each_code(f);
                    }
                }
            }
            Step::Algorithm { .. } | Step::Terminate { .. } | Step::Value { .. } => {}
        }
    }
}

pub struct ZcCode {
    pub code: Tape,
    pub out: u32,
    pub op: RelOp,
    /// Register holding the event time of a `time <op> e` relation.
    pub time_event: Option<(Tape, u32)>,
    /// Hysteresis of the relation (0 for time events, which must switch exactly at their
    /// time, and for `==`/`<>`).
    pub hysteresis: f64,
}

/// The history of one delayed expression is recorded by its own tape, run after every
/// evaluation of the blocks (continuous mode, each event pass, initialization), not only
/// where a `delay` reads it: an occurrence inside a `when` body or an untaken branch would
/// otherwise see a history with gaps, interpolated across them.
pub struct DelayRecorder {
    pub code: Tape,
    pub out: u32,
}

/// Relative size of the hysteresis of event-generating relations: far above the rounding
/// noise of the relation's operands, far below anything an integrator resolves.
pub const RELATION_HYSTERESIS: f64 = 1e-10;

/// Hysteresis of a zero crossing: `RELATION_HYSTERESIS` times the largest nominal value of
/// the continuous unknowns it reads. Relations of time, parameters and discrete variables
/// only get none: they carry no solver noise, and their switching times must stay exact.
fn zero_crossing_hysteresis(p: &CausalProgram, z: &moss_symbolic::program::ZeroCrossing) -> f64 {
    if z.time_event.is_some() || matches!(z.op, RelOp::Eq | RelOp::Ne) {
        return 0.0;
    }
    let mut scale = 0.0f64;
    max_nominal(p, &z.expr, &mut scale);
    RELATION_HYSTERESIS * scale
}

/// Zero crossings that `when`-conditions depend on (directly or through Boolean variables).
/// They switch without hysteresis: a `when` must see every crossing, however small (a ball
/// bouncing ever lower must keep firing its impact until the chattering guard stops the run,
/// not drift through the floor with the relation held inside the band).
fn when_condition_crossings(p: &CausalProgram) -> HashSet<u32> {
    let mut pending: Vec<VarId> = Vec::new();
    for block in &p.blocks {
        if let Block::When { branches } = block {
            pending.extend(branches.iter().flat_map(|b| b.conditions.iter().copied()));
        }
    }
    if pending.is_empty() {
        // No `when`: no map of every assignment (1.5 million in a large circuit).
        return HashSet::default();
    }
    let definitions: HashMap<VarId, &PExpr> = p
        .blocks
        .iter()
        .filter_map(|block| match block {
            Block::Assign { var, expr } => Some((*var, expr)),
            _ => None,
        })
        .collect();
    let mut seen: HashSet<VarId> = pending.iter().copied().collect();
    let mut crossings = HashSet::default();
    while let Some(v) = pending.pop() {
        let Some(expr) = definitions.get(&v) else {
            continue;
        };
        let mut reads = Vec::new();
        collect_reads_and_crossings(expr, &mut reads, &mut crossings);
        for r in reads {
            if seen.insert(r) {
                pending.push(r);
            }
        }
    }
    crossings
}

fn collect_reads_and_crossings(e: &PExpr, reads: &mut Vec<VarId>, crossings: &mut HashSet<u32>) {
    match e {
        PExpr::Var(v) => reads.push(*v),
        PExpr::Rel { lhs, rhs, zc, .. } => {
            if let Some(i) = zc {
                crossings.insert(*i);
            }
            collect_reads_and_crossings(lhs, reads, crossings);
            collect_reads_and_crossings(rhs, reads, crossings);
        }
        PExpr::Neg(a) | PExpr::Not(a) => collect_reads_and_crossings(a, reads, crossings),
        PExpr::Arith(_, a, b) | PExpr::And(a, b) | PExpr::Or(a, b) => {
            collect_reads_and_crossings(a, reads, crossings);
            collect_reads_and_crossings(b, reads, crossings);
        }
        PExpr::If(c, a, b) => {
            for x in [c, a, b] {
                collect_reads_and_crossings(x, reads, crossings);
            }
        }
        PExpr::Call { args, .. } | PExpr::Array(args) => {
            args.iter()
                .for_each(|x| collect_reads_and_crossings(x, reads, crossings));
        }
        PExpr::Const(_)
        | PExpr::Str(_)
        | PExpr::Pre(_)
        | PExpr::Time
        | PExpr::Initial
        | PExpr::Terminal
        | PExpr::Sample(_) => {}
    }
}

/// Largest nominal value (at least `f64::MIN_POSITIVE`) of the continuous unknowns `e`
/// reads, folded into `acc`.
fn max_nominal(p: &CausalProgram, e: &PExpr, acc: &mut f64) {
    match e {
        PExpr::Var(v) | PExpr::Pre(v) => {
            if let Some(var) = p.vars.get(*v as usize) {
                let continuous = var.ty == ValueType::Real
                    && matches!(
                        var.kind,
                        VarKind::State | VarKind::Derivative | VarKind::Algebraic
                    );
                let nominal = var.nominal.abs();
                if continuous && nominal.is_finite() {
                    *acc = acc.max(nominal).max(f64::MIN_POSITIVE);
                }
            }
        }
        PExpr::Neg(a) | PExpr::Not(a) => max_nominal(p, a, acc),
        PExpr::Arith(_, a, b)
        | PExpr::And(a, b)
        | PExpr::Or(a, b)
        | PExpr::Rel { lhs: a, rhs: b, .. } => {
            max_nominal(p, a, acc);
            max_nominal(p, b, acc);
        }
        PExpr::If(c, a, b) => {
            max_nominal(p, c, acc);
            max_nominal(p, a, acc);
            max_nominal(p, b, acc);
        }
        PExpr::Call { args: xs, .. } | PExpr::Array(xs) => {
            xs.iter().for_each(|x| max_nominal(p, x, acc));
        }
        PExpr::Const(_)
        | PExpr::Str(_)
        | PExpr::Time
        | PExpr::Initial
        | PExpr::Terminal
        | PExpr::Sample(_) => {}
    }
}

pub struct SampleCode {
    pub code: Tape,
    pub start: u32,
    pub interval: u32,
}

/// The blocks to run for the zero crossings alone, when that is worth a second copy: at
/// most half of the blocks, and no algorithm section among them (its `when` statements
/// would be numbered twice).
fn zero_crossing_slice(p: &CausalProgram) -> Option<Vec<usize>> {
    let slice = p.zero_crossing_blocks.as_ref()?;
    if p.zero_crossings.is_empty() || 2 * slice.len() > p.blocks.len() {
        return None;
    }
    let slice: Vec<usize> = slice.iter().map(|&k| k as usize).collect();
    let valid = slice.iter().all(|&k| k < p.blocks.len());
    let algorithm = slice
        .iter()
        .any(|&k| matches!(p.blocks.get(k), Some(Block::Algorithm { .. })));
    (valid && !algorithm).then_some(slice)
}

/// The whole compiled program.
pub struct Code {
    pub param_steps: Vec<Step>,
    /// [`CausalProgram::start_blocks`]
    pub start_steps: Vec<Step>,
    pub init_steps: Vec<Step>,
    pub steps: Vec<Step>,
    /// Steps of [`Code::steps`] that need not run between events (`event_only`).
    pub steps_event_only: Vec<bool>,
    /// Iteration variables of the nonlinear solves of [`Code::steps`] (scalar equations
    /// solved numerically and torn nonlinear loops): their values are the guesses the next
    /// evaluation starts from.
    pub guess_slots: Vec<u32>,
    /// The blocks the zero crossings need ([`CausalProgram::zero_crossing_blocks`]) with
    /// their `event_only` flags, when they are clearly fewer than all: evaluating the
    /// crossings at a point the blocks were not run at runs these only.
    pub zc_steps: Option<(Vec<Step>, Vec<bool>)>,
    /// The tangent program of the ODE Jacobian (see `moss_symbolic::program::OdeJacobian`).
    pub jacobian_steps: Option<Vec<Step>>,
    /// What each step of [`Code::jacobian_steps`] reads and writes, to run per seed the
    /// steps that depend on it (`tangent_slices`).
    pub tangent_steps: Option<TangentSteps>,
    pub zc: Vec<ZcCode>,
    pub samples: Vec<SampleCode>,
    pub generic: Vec<FExpr>,
    /// Plans of the generic expressions that are calls of compiled functions, made at
    /// their first evaluation (see [`crate::scalar_fn::CallPlan`]).
    pub generic_plans: Vec<std::sync::OnceLock<Option<crate::scalar_fn::CallPlan>>>,
    pub funcs: Vec<CFunction>,
    pub mem_size: usize,
    pub static_init: Vec<(u32, f64)>,
    pub when_count: u32,
    /// One per `delay` history buffer, in buffer order.
    pub delay_recorders: Vec<DelayRecorder>,
    /// The program calls `homotopy`: initialization can fall back to continuation.
    pub has_homotopy: bool,
    /// Slots whose change keeps the event iteration going.
    pub discrete: Vec<u32>,
    pub n_instructions: usize,
}

pub fn slot_type(t: ValueType) -> Ty {
    match t {
        ValueType::Real => Ty::Real,
        ValueType::Integer | ValueType::Enumeration => Ty::Int,
        ValueType::Boolean => Ty::Bool,
        ValueType::String => Ty::Str,
    }
}

struct Compiler<'a> {
    p: &'a CausalProgram,
    tc: TapeCompiler<'a>,
    fn_index: &'a HashMap<String, u32>,
    /// Names of the model's variables and aliases for algorithm sections, built at the
    /// first one (a large circuit has none, and 2 million names).
    names: std::cell::OnceCell<ModelNames>,
    /// Type of every slot, built once (messages are converted one by one, and rebuilding it
    /// for each made compiling quadratic in the model size: one assert per component).
    var_ty: &'a [Ty],
    when_count: u32,
    called: BTreeSet<u32>,
    /// Sparse linear systems compiled so far (each gets its own factor in the machine).
    sparse_systems: usize,
    /// Linear systems with a [`MatrixCache`] so far.
    matrix_caches: usize,
    /// Per step of the last [`Compiler::blocks_marked`], the index of its first block.
    step_starts: Vec<usize>,
}

/// Set [`CFunction::memo`] on the pure functions worth memoizing (see `memo.rs`).
/// The positions of the direction arguments of a derivative function generated by
/// `moss_symbolic::autodiff` (`f.$der`, `f.$der.$der`: the inputs `$d1_x`, `$d2_x` of its own
/// order; scalars or arrays), when all its outputs are scalar derivatives: a call along the
/// zero direction then returns zeros. Empty for every other function.
///
/// The tangent program of the ODE Jacobian runs once per colour of Jacobian columns, and
/// most of its derivative calls see no seed of that colour: a Spice3 four-bit adder calls a
/// hundred transistors' derivative functions 80 times per Jacobian, each with about a
/// hundred arguments to pass.
fn direction_arguments(f: &moss_frontend::flat::Function) -> Vec<usize> {
    let order = f.name.matches(".$der").count();
    if order == 0 || !f.name.ends_with(".$der") {
        return Vec::new();
    }
    let prefix = format!("$d{order}_");
    let scalar_real = |v: &moss_frontend::flat::FunctionVar| {
        v.dims.is_empty() && v.ty == moss_frontend::flat::ScalarType::Real
    };
    if !f.outputs.iter().all(scalar_real) {
        return Vec::new();
    }
    f.inputs
        .iter()
        .enumerate()
        .filter(|(_, v)| v.name.starts_with(&prefix))
        .map(|(i, _)| i)
        .collect()
}

fn mark_memoized(funcs: &mut [CFunction]) {
    let own_pure: Vec<bool> = funcs.iter().map(|f| f.own_pure).collect();
    let costly: Vec<bool> = funcs.iter().map(|f| f.costly).collect();
    let callees: Vec<Vec<u32>> = funcs
        .iter()
        .map(|f| f.callees.iter().copied().collect())
        .collect();
    let memo = crate::memo::worth_memoizing(&own_pure, &costly, &callees);
    for (f, m) in funcs.iter_mut().zip(memo) {
        f.memo = m;
    }
}

/// Memo flags, scalar forms and native-code slots of the functions, once every
/// specialized copy exists.
fn prepare_compiled_forms(funcs: &mut [CFunction]) {
    mark_memoized(funcs);
    if crate::scalar_fn::enabled() {
        let callees = crate::scalar_fn::callee_outputs(funcs);
        let ignored = crate::scalar_fn::ignored_string_inputs(funcs);
        for (f, ignored) in funcs.iter_mut().zip(&ignored) {
            f.scalar = crate::scalar_fn::compile(f, &callees, ignored).map(std::sync::Arc::new);
        }
        // native code may recompute a function faster than the memo finds it
        let fast: Vec<bool> = (0..funcs.len())
            .map(|i| crate::jit::translatable(i, funcs) && !crate::jit::memo_pays(i, funcs))
            .collect();
        for (f, fast) in funcs.iter_mut().zip(fast) {
            if fast {
                f.memo = false;
            }
            f.native = crate::jit::NativeSlot::new();
        }
    }
}

/// Calls whose array arguments fix the open sizes of the callee's inputs call a copy of it
/// with those sizes (`specialize.rs`); returns the copies made.
fn specialize_calls(
    funcs: &mut Vec<CFunction>,
    generic: &mut [FExpr],
    steps: &mut [&mut Step],
) -> Vec<u32> {
    let mut sp = crate::specialize::Specializer::default();
    let originals = funcs.len();
    sp.refine_bodies(funcs, originals);
    let none = HashMap::default();
    for e in generic {
        crate::specialize::walk_expr_mut(e, &mut |x| {
            if let FExpr::Call(g, args, _) = x {
                *g = sp.target(funcs, *g, args, &none);
            }
        });
    }
    for s in steps {
        s.for_each_step(&mut |s| {
            if let Step::CallOutputs {
                target: CallTarget::User(g),
                args,
                ..
            } = s
            {
                *g = sp.target(funcs, *g, args, &none);
            }
        });
    }
    sp.copies()
}

pub fn compile_program(p: &CausalProgram) -> Result<Code, String> {
    check_structure(p)?;
    let n = p.vars.len();
    let var_ty: Vec<Ty> = p.vars.iter().map(|v| slot_type(v.ty)).collect();
    let fn_index: HashMap<String, u32> = p
        .functions
        .keys()
        .enumerate()
        .map(|(i, k)| (k.clone(), i as u32))
        .collect();
    let mut funcs = p
        .functions
        .values()
        .map(|f| compile_function(f, &fn_index))
        .collect::<Result<Vec<_>, _>>()?;
    let mut c = Compiler {
        p,
        tc: TapeCompiler::new(n, p.zero_crossings.len(), &var_ty, &fn_index),
        fn_index: &fn_index,
        names: std::cell::OnceCell::new(),
        var_ty: &var_ty,
        when_count: 0,
        called: BTreeSet::new(),
        sparse_systems: 0,
        matrix_caches: 0,
        step_starts: Vec::new(),
    };
    let mut param_steps = c
        .blocks(&p.parameter_blocks)
        .map_err(|e| format!("parameter blocks: {e}"))?;
    let mut start_steps = c
        .blocks(&p.start_blocks)
        .map_err(|e| format!("start value blocks: {e}"))?;
    let mut init_steps = c
        .blocks(&p.init_blocks)
        .map_err(|e| format!("initialization blocks: {e}"))?;
    let event_only = crate::event_only::event_only_blocks(p);
    let (mut steps, steps_event_only) = c.blocks_marked(&p.blocks, &event_only)?;
    let mut zc_steps = match zero_crossing_slice(p) {
        Some(slice) => {
            let blocks: Vec<Block> = slice.iter().map(|&k| p.blocks[k].clone()).collect();
            let flags: Vec<bool> = slice
                .iter()
                .map(|&k| event_only.get(k).copied().unwrap_or(false))
                .collect();
            Some(c.blocks_marked(&blocks, &flags)?)
        }
        None => None,
    };
    let mut jacobian_steps = match &p.ode_jacobian {
        Some(j) => Some(
            c.blocks_grouped(&j.blocks, &[], &seed_dependence_keys(p, j))
                .map_err(|e| format!("ODE Jacobian blocks: {e}"))?
                .0,
        ),
        None => None,
    };
    let tangent_steps = match (&p.ode_jacobian, &jacobian_steps) {
        (Some(j), Some(steps)) => TangentSteps::new(p, j, steps, &c.step_starts),
        _ => None,
    };
    let mut zc = Vec::with_capacity(p.zero_crossings.len());
    let exact_crossings = when_condition_crossings(p);
    for (i, z) in p.zero_crossings.iter().enumerate() {
        let mut code = vec![];
        let ctx = |e: String| format!("zero crossing {i} ({}): {e}", z.description);
        let out = c.tc.compile_to_static(&z.expr, &mut code).map_err(ctx)?;
        let time_event = match &z.time_event {
            Some(e) => {
                let mut tcode = vec![];
                let r = c.tc.compile_to_static(e, &mut tcode).map_err(ctx)?;
                Some((tcode, r))
            }
            None => None,
        };
        zc.push(ZcCode {
            code: code.into(),
            out,
            op: z.op,
            time_event: time_event.map(|(c, r)| (c.into(), r)),
            hysteresis: if exact_crossings.contains(&(i as u32)) {
                0.0
            } else {
                zero_crossing_hysteresis(p, z)
            },
        });
    }
    // compiling a delayed expression may meet further `delay`s (nested): they are added to
    // the list being walked
    let mut delay_recorders = Vec::new();
    while delay_recorders.len() < c.tc.delay_args.len() {
        let arg = c.tc.delay_args[delay_recorders.len()].clone();
        let mut code = vec![];
        let out =
            c.tc.compile_to_static(&arg, &mut code)
                .map_err(|e| format!("delayed expression: {e}"))?;
        delay_recorders.push(DelayRecorder {
            code: code.into(),
            out,
        });
    }
    let mut samples = Vec::with_capacity(p.samples.len());
    for (i, s) in p.samples.iter().enumerate() {
        let mut code = vec![];
        let ctx = |e: String| format!("sample {i}: {e}");
        let start = c.tc.compile_to_static(&s.start, &mut code).map_err(ctx)?;
        let interval =
            c.tc.compile_to_static(&s.interval, &mut code)
                .map_err(ctx)?;
        samples.push(SampleCode {
            code: code.into(),
            start,
            interval,
        });
    }
    c.called.extend(c.tc.called.iter().copied());
    {
        let mut all_steps: Vec<&mut Step> = param_steps
            .iter_mut()
            .chain(&mut start_steps)
            .chain(&mut init_steps)
            .chain(&mut steps)
            .chain(zc_steps.iter_mut().flat_map(|(s, _)| s))
            .chain(jacobian_steps.iter_mut().flatten())
            .collect();
        let copies = specialize_calls(&mut funcs, &mut c.tc.generic, &mut all_steps);
        c.called.extend(copies);
        drop_impure_matrix_caches(&funcs, &mut all_steps);
    }
    prepare_compiled_forms(&mut funcs);
    let reachable = reachable_functions(&funcs, &c.called);
    link_external_c(&mut funcs, &reachable);
    check_reachable_functions(&funcs, &reachable)?;

    // scratch registers go behind everything permanent
    let temp_start = c.tc.static_end();
    let mem_size = (temp_start + c.tc.max_temp) as usize;
    let mut n_instructions = 0;
    let mut all_in_bounds = true;
    let mut remap = |code: &mut Vec<Instr>| {
        n_instructions += code.len();
        remap_temps(code, temp_start);
        all_in_bounds &= code_operands_in_bounds(code, mem_size);
    };
    for s in param_steps
        .iter_mut()
        .chain(&mut start_steps)
        .chain(&mut init_steps)
        .chain(&mut steps)
        .chain(zc_steps.iter_mut().flat_map(|(s, _)| s))
        .chain(jacobian_steps.iter_mut().flatten())
    {
        s.for_each_code(&mut remap);
    }
    for z in &mut zc {
        remap(&mut z.code);
        if let Some((c, _)) = &mut z.time_event {
            remap(c);
        }
    }
    for s in &mut samples {
        remap(&mut s.code);
    }
    for r in &mut delay_recorders {
        remap(&mut r.code);
    }
    if !all_in_bounds {
        return Err("internal error: a compiled operand lies outside the machine memory".into());
    }
    let discrete = p
        .vars
        .iter()
        .enumerate()
        .filter(|(_, v)| {
            v.kind == VarKind::Discrete
                || (v.ty != ValueType::Real && matches!(v.kind, VarKind::Algebraic))
        })
        .map(|(i, _)| i as u32)
        .collect();
    Ok(Code {
        param_steps,
        start_steps,
        init_steps,
        guess_slots: guess_slots(&steps),
        steps,
        steps_event_only,
        zc_steps,
        jacobian_steps,
        tangent_steps,
        zc,
        samples,
        generic_plans: (0..c.tc.generic.len())
            .map(|_| std::sync::OnceLock::new())
            .collect(),
        generic: std::mem::take(&mut c.tc.generic),
        static_init: std::mem::take(&mut c.tc.static_init),
        funcs,
        mem_size,
        when_count: c.when_count,
        delay_recorders,
        has_homotopy: c.tc.has_homotopy,
        discrete,
        n_instructions,
    })
}

/// Slot references outside the blocks (states, aliases) must be valid.
fn check_structure(p: &CausalProgram) -> Result<(), String> {
    let n = p.vars.len();
    if p.states.len() != p.derivatives.len() {
        return Err(format!(
            "{} states but {} derivatives",
            p.states.len(),
            p.derivatives.len()
        ));
    }
    if let Some(v) = p
        .states
        .iter()
        .chain(&p.derivatives)
        .find(|&&v| v as usize >= n)
    {
        return Err(format!(
            "state or derivative slot {v} out of range ({n} variables)"
        ));
    }
    if let Some(a) = p.aliases.iter().find(|a| a.target as usize >= n) {
        return Err(format!(
            "alias `{}` refers to slot {} out of range",
            a.name, a.target
        ));
    }
    if let Some(&(i, j)) = p
        .jacobian_pattern
        .iter()
        .find(|&&(i, j)| i as usize >= p.states.len() || j as usize >= p.states.len())
    {
        return Err(format!("Jacobian pattern entry ({i}, {j}) out of range"));
    }
    if let Some(j) = &p.ode_jacobian {
        let ns = p.states.len();
        if j.seeds.len() != ns || j.outputs.len() != ns {
            return Err(format!(
                "ODE Jacobian has {} seeds and {} outputs for {ns} states",
                j.seeds.len(),
                j.outputs.len()
            ));
        }
        if let Some(v) = j
            .seeds
            .iter()
            .chain(j.outputs.iter().flatten())
            .find(|&&v| v as usize >= n)
        {
            return Err(format!(
                "ODE Jacobian slot {v} out of range ({n} variables)"
            ));
        }
    }
    Ok(())
}

fn model_names(p: &CausalProgram, var_ty: &[Ty]) -> ModelNames {
    let mut names = ModelNames::default();
    for (i, v) in p.vars.iter().enumerate() {
        names.vars.insert(v.name.clone(), (i as u32, var_ty[i]));
    }
    for a in &p.aliases {
        names
            .aliases
            .insert(a.name.clone(), (a.target, a.scale, a.offset));
    }
    names
}

/// Use the sparse LU for large systems with few entries; `count` numbers the systems.
fn sparse_layout(
    n: usize,
    entries: &[(u32, u32, u32)],
    count: &mut usize,
) -> Option<(SparseSystem, Vec<usize>)> {
    if n < SPARSE_MIN_SIZE || entries.len() * 4 > n * n {
        return None;
    }
    let mut index: HashMap<(usize, usize), usize> = HashMap::default();
    let mut pattern = vec![];
    let unique: Vec<usize> = entries
        .iter()
        .map(|&(r, c, _)| {
            let key = (r as usize, c as usize);
            *index.entry(key).or_insert_with(|| {
                pattern.push(key);
                pattern.len() - 1
            })
        })
        .collect();
    let (sys, place) = SparseSystem::new(n, *count, &pattern);
    *count += 1;
    let positions = unique.iter().map(|&k| place[k]).collect();
    Some((sys, positions))
}

/// The functions the program calls, directly or through other functions.
fn reachable_functions(funcs: &[CFunction], roots: &BTreeSet<u32>) -> BTreeSet<u32> {
    let mut seen = BTreeSet::new();
    let mut stack: Vec<u32> = roots.iter().copied().collect();
    while let Some(f) = stack.pop() {
        if seen.insert(f) {
            stack.extend(funcs[f as usize].callees.iter().copied());
        }
    }
    seen
}

/// Compile and load the user C code of the reachable external C functions (`extc.rs`);
/// functions nothing calls are never compiled.
fn link_external_c(funcs: &mut [CFunction], reachable: &BTreeSet<u32>) {
    let mut calls: Vec<&mut crate::extc::CCall> = funcs
        .iter_mut()
        .enumerate()
        .filter(|(i, _)| reachable.contains(&(*i as u32)))
        .filter_map(|(_, f)| match &mut f.body {
            CBody::ExternC(c) => Some(&mut **c),
            _ => None,
        })
        .collect();
    crate::extc::link(&mut calls);
}

/// Functions that cannot run (unknown external code, C code that did not compile) are an
/// error only when reachable.
fn check_reachable_functions(funcs: &[CFunction], reachable: &BTreeSet<u32>) -> Result<(), String> {
    for &f in reachable {
        let func = &funcs[f as usize];
        match &func.body {
            CBody::Unsupported(msg) => return Err(msg.clone()),
            CBody::ExternC(c) => {
                if let Err(msg) = &c.entry {
                    return Err(format!(
                        "function `{}` calls external C function `{}`: {msg}",
                        func.name, c.c_name
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

impl Compiler<'_> {
    /// The next [`MatrixCache`] (each has its own place in the machine).
    fn matrix_cache(&mut self, inputs: Vec<u32>, calls: Vec<u32>) -> MatrixCache {
        self.matrix_caches += 1;
        MatrixCache {
            id: self.matrix_caches - 1,
            inputs,
            calls,
        }
    }

    fn blocks(&mut self, blocks: &[Block]) -> Result<Vec<Step>, String> {
        Ok(self.blocks_marked(blocks, &[])?.0)
    }

    /// Compiles `blocks`, consecutive assignments into one tape; `event_only[i]` (missing:
    /// false) marks blocks that need not run between events, and the returned flags mark the
    /// steps made of such blocks only.
    fn blocks_marked(
        &mut self,
        blocks: &[Block],
        event_only: &[bool],
    ) -> Result<(Vec<Step>, Vec<bool>), String> {
        self.blocks_grouped(blocks, event_only, &[])
    }

    /// [`Compiler::blocks_marked`], with a tape also ended where `groups[i]` (missing: 0)
    /// changes: the tangent program keeps blocks that depend on different seeds in steps of
    /// their own, so that a colour's slice runs only its own (`tangent_slices`).
    fn blocks_grouped(
        &mut self,
        blocks: &[Block],
        event_only: &[bool],
        groups: &[u64],
    ) -> Result<(Vec<Step>, Vec<bool>), String> {
        let mut steps = Vec::new();
        let mut flags = Vec::new();
        let mut tape: Vec<Instr> = Vec::new();
        let mut tape_flag = false;
        self.step_starts.clear();
        let mut tape_start = 0;
        let group = |i: usize| groups.get(i).copied().unwrap_or(0);
        for (i, b) in blocks.iter().enumerate() {
            let flag = event_only.get(i).copied().unwrap_or(false);
            let numeric = match b {
                Block::Assign { var, expr } => !self.strings_involved(*var, expr),
                _ => false,
            };
            let regroup = group(i) != group(tape_start);
            if !tape.is_empty() && (flag != tape_flag || !numeric || regroup) {
                steps.push(Step::Tape(std::mem::take(&mut tape).into()));
                flags.push(tape_flag);
                self.step_starts.push(tape_start);
            }
            if let (true, Block::Assign { var, expr }) = (numeric, b) {
                if tape.is_empty() {
                    tape_start = i;
                }
                self.tc.compile_into(expr, *var, &mut tape).map_err(|e| {
                    format!("block {i} (assignment to `{}`): {e}", self.var_name(*var))
                })?;
                tape_flag = flag;
                continue;
            }
            steps.push(self.block(b).map_err(|e| format!("block {i}: {e}"))?);
            flags.push(flag);
            self.step_starts.push(i);
        }
        if !tape.is_empty() {
            steps.push(Step::Tape(tape.into()));
            flags.push(tape_flag);
            self.step_starts.push(tape_start);
        }
        Ok((steps, flags))
    }

    /// `(min, max)` of a variable; ignored when inconsistent.
    fn bounds_of(&self, v: u32) -> (f64, f64) {
        let var = &self.p.vars[v as usize];
        let lo = var.min.filter(|x| !x.is_nan()).unwrap_or(f64::NEG_INFINITY);
        let hi = var.max.filter(|x| !x.is_nan()).unwrap_or(f64::INFINITY);
        if lo <= hi {
            (lo, hi)
        } else {
            (f64::NEG_INFINITY, f64::INFINITY)
        }
    }

    fn var_name(&self, v: u32) -> String {
        self.p
            .vars
            .get(v as usize)
            .map(|x| x.name.clone())
            .unwrap_or_else(|| format!("$slot{v}"))
    }

    fn check_var(&self, v: u32) -> Result<u32, String> {
        if (v as usize) < self.p.vars.len() {
            Ok(v)
        } else {
            Err(format!("variable index {v} out of range"))
        }
    }

    fn block(&mut self, b: &Block) -> Result<Step, String> {
        Ok(match b {
            Block::Assign { var, expr } if self.strings_involved(*var, expr) => Step::Value {
                out: self.check_var(*var)?,
                expr: self.message(expr)?,
            },
            Block::Assign { .. } => {
                let mut code = vec![];
                if let Block::Assign { var, expr } = b {
                    self.tc
                        .compile_into(expr, self.check_var(*var)?, &mut code)?;
                }
                Step::Tape(code.into())
            }
            Block::SolveScalar {
                var,
                residual,
                derivative,
            } => {
                let mut code = vec![];
                let out = self.tc.compile_to_static(residual, &mut code)?;
                let der = match derivative {
                    Some(d) => {
                        let mut dc = vec![];
                        let r = self.tc.compile_to_static(d, &mut dc)?;
                        Some((dc, r))
                    }
                    None => None,
                };
                Step::Scalar(Box::new(ScalarStep {
                    var: self.check_var(*var)?,
                    code: code.into(),
                    out,
                    der: der.map(|(c, r)| (c.into(), r)),
                    text: expr_to_string(residual, &self.p.vars),
                }))
            }
            Block::Linear { vars, matrix, rhs } => {
                let n = vars.len();
                if rhs.len() != n {
                    return Err(format!(
                        "linear system with {n} unknowns and {} right-hand sides",
                        rhs.len()
                    ));
                }
                let mut matrix_code = vec![];
                let mut entries = Vec::with_capacity(matrix.len());
                for (r, c, e) in matrix {
                    if *r as usize >= n || *c as usize >= n {
                        return Err(format!("linear system entry ({r}, {c}) outside {n}x{n}"));
                    }
                    entries.push((*r, *c, self.tc.compile_to_static(e, &mut matrix_code)?));
                }
                let cache = matrix_inputs(matrix, self.fn_index)
                    .filter(|(inputs, _)| cache_pays(inputs.len(), matrix_code.len(), n))
                    .map(|(inputs, calls)| self.matrix_cache(inputs, calls));
                let mut code = vec![];
                let rhs = rhs
                    .iter()
                    .map(|e| self.tc.compile_to_static(e, &mut code))
                    .collect::<Result<_, _>>()?;
                let vars = vars
                    .iter()
                    .map(|v| self.check_var(*v))
                    .collect::<Result<_, _>>()?;
                let sparse = sparse_layout(n, &entries, &mut self.sparse_systems);
                let mode_dependent = matrix.iter().any(|(_, _, e)| zero_in_some_branch(e));
                Step::Linear(Box::new(LinearStep {
                    vars,
                    matrix_code: matrix_code.into(),
                    code: code.into(),
                    entries,
                    cache,
                    rhs,
                    sparse,
                    mode_dependent,
                }))
            }
            Block::Nonlinear {
                iteration_vars,
                inner,
                residuals,
                jacobian,
                linear,
                fallback,
            } => {
                let fallback = match fallback {
                    Some(f) => {
                        let mut slots: Vec<u32> = iteration_vars.clone();
                        slots.extend(inner_unknowns(self.p, inner).into_iter().map(|(v, _)| v));
                        let steps = self.blocks(std::slice::from_ref(f.as_ref()))?;
                        Some(Box::new(Fallback { steps, slots }))
                    }
                    None => None,
                };
                let inner_vars = if *linear {
                    inner_unknowns(self.p, inner)
                } else {
                    vec![]
                };
                // from the program's blocks, before they are compiled
                let fd_groups = match jacobian {
                    None if iteration_vars.len() >= MIN_GROUPED_COLUMNS => {
                        crate::fd_columns::column_groups(iteration_vars, inner, residuals)
                    }
                    _ => None,
                };
                let inner = self.blocks(inner)?;
                let mut res_code = vec![];
                let res = residuals
                    .iter()
                    .map(|e| self.tc.compile_to_static(e, &mut res_code))
                    .collect::<Result<Vec<_>, _>>()?;
                if res.len() != iteration_vars.len() {
                    return Err(format!(
                        "nonlinear system with {} iteration variables and {} residuals",
                        iteration_vars.len(),
                        res.len()
                    ));
                }
                let jac = match jacobian {
                    Some(entries) => {
                        let mut jc = vec![];
                        let mut regs = vec![];
                        for (r, c, e) in entries {
                            if *r as usize >= res.len() || *c as usize >= res.len() {
                                return Err(format!("Jacobian entry ({r}, {c}) out of range"));
                            }
                            regs.push((*r, *c, self.tc.compile_to_static(e, &mut jc)?));
                        }
                        Some((jc, regs))
                    }
                    None => None,
                };
                let jac_cache = match (jacobian, &jac) {
                    (Some(entries), Some((code, _))) if *linear => {
                        matrix_inputs(entries, self.fn_index)
                            .filter(|(inputs, _)| cache_pays(inputs.len(), code.len(), res.len()))
                            .map(|(inputs, calls)| self.matrix_cache(inputs, calls))
                    }
                    _ => None,
                };
                let vars: Vec<u32> = iteration_vars
                    .iter()
                    .map(|v| self.check_var(*v))
                    .collect::<Result<_, _>>()?;
                let bounds = vars.iter().map(|&v| self.bounds_of(v)).collect();
                let nominal = vars
                    .iter()
                    .map(|&v| nominal_or_one(self.p.vars[v as usize].nominal))
                    .collect();
                Step::Nonlinear(Box::new(NonlinearStep {
                    linear: *linear,
                    jac_cache,
                    vars,
                    nominal,
                    bounds,
                    inner,
                    res_code: res_code.into(),
                    res,
                    res_text: residuals
                        .iter()
                        .map(|e| expr_to_string(e, &self.p.vars))
                        .collect(),
                    jac: jac.map(|(c, e)| (c.into(), e)),
                    fd_groups,
                    inner_vars,
                    fallback,
                }))
            }
            Block::CallOutputs {
                outputs,
                func,
                args,
            } => {
                let mut code = vec![];
                let call = self.tc.generic_call(func, args, &mut code)?;
                let (target, args) = match call {
                    FExpr::Call(f, args, _) => (CallTarget::User(f), args),
                    FExpr::Builtin(b, args) => (CallTarget::Builtin(b), args),
                    _ => return Err(format!("`{func}` is not callable")),
                };
                let outputs = outputs
                    .iter()
                    .map(|o| o.map(|v| self.check_var(v)).transpose())
                    .collect::<Result<_, _>>()?;
                let directions = self
                    .p
                    .functions
                    .get(func)
                    .map_or_else(Vec::new, direction_arguments);
                Step::CallOutputs {
                    code: code.into(),
                    target,
                    args,
                    outputs,
                    plan: std::sync::OnceLock::new(),
                    directions,
                    direction_cells: std::sync::OnceLock::new(),
                }
            }
            Block::Algorithm {
                statements,
                outputs,
                ..
            } => {
                let (p, var_ty) = (self.p, self.var_ty);
                let names = self.names.get_or_init(|| model_names(p, var_ty));
                let mut scope = Scope::new(
                    self.fn_index,
                    Some(names),
                    &mut self.when_count,
                    "algorithm".into(),
                );
                let stmts = scope.compile_stmts(statements)?;
                let frame_size = scope.frame_size;
                let callees = std::mem::take(&mut scope.callees);
                self.called.extend(callees);
                let mut discrete_outputs = vec![];
                let mut continuous_outputs = vec![];
                for &o in outputs {
                    let var = &self.p.vars[self.check_var(o)? as usize];
                    if var.kind == VarKind::Discrete || var.ty != ValueType::Real {
                        discrete_outputs.push(o);
                    } else {
                        continuous_outputs.push((o, var.start));
                    }
                }
                Step::Algorithm {
                    stmts,
                    frame_size,
                    discrete_outputs,
                    continuous_outputs,
                }
            }
            Block::When { branches } => {
                let mut out = Vec::with_capacity(branches.len());
                for br in branches {
                    out.push(WhenStep {
                        conditions: br
                            .conditions
                            .iter()
                            .map(|v| self.check_var(*v))
                            .collect::<Result<_, _>>()?,
                        fires_at_initial: br.fires_at_initial,
                        body: self.blocks(&br.body)?,
                    });
                }
                Step::When(out)
            }
            Block::Reinit { var, value } => {
                let mut code = vec![];
                let out = self.tc.compile_to_static(value, &mut code)?;
                Step::Reinit {
                    code: code.into(),
                    out,
                    var: self.check_var(*var)?,
                }
            }
            Block::Assert {
                condition,
                message,
                level,
            } => {
                let mut code = vec![];
                let mut value_cond = None;
                let out = if self.mentions_strings(condition) {
                    value_cond = Some(self.message(condition)?);
                    self.tc.compile_to_static(&PExpr::Const(1.0), &mut code)?
                } else {
                    self.tc.compile_to_static(condition, &mut code)?
                };
                Step::Assert {
                    code: code.into(),
                    out,
                    value_cond,
                    message: self.message(message)?,
                    level: *level,
                }
            }
            Block::Terminate { message } => Step::Terminate {
                message: self.message(message)?,
            },
        })
    }

    /// Does assigning `expr` to `var` need the function interpreter? The tapes compute
    /// numbers only; a String variable, or a value computed from Strings (`s == "a"`),
    /// takes the slower path, which the numeric blocks never do.
    fn strings_involved(&self, var: u32, expr: &PExpr) -> bool {
        self.var_ty.get(var as usize) == Some(&Ty::Str) || self.mentions_strings(expr)
    }

    /// Does `e` contain a String: a literal, a String variable, or a call returning one
    /// (`String(x)`, a user function with a String output)?
    fn mentions_strings(&self, e: &PExpr) -> bool {
        let returns_string = |func: &str| {
            func == "String"
                || self.p.functions.get(func).is_some_and(|f| {
                    f.outputs
                        .first()
                        .is_some_and(|o| matches!(o.ty, moss_frontend::flat::ScalarType::String))
                })
        };
        let is_str_var = |v: &u32| self.var_ty.get(*v as usize) == Some(&Ty::Str);
        match e {
            PExpr::Str(_) => true,
            PExpr::Var(v) | PExpr::Pre(v) => is_str_var(v),
            PExpr::Const(_) | PExpr::Time | PExpr::Initial | PExpr::Terminal | PExpr::Sample(_) => {
                false
            }
            PExpr::Neg(a) | PExpr::Not(a) => self.mentions_strings(a),
            PExpr::Arith(_, a, b) | PExpr::And(a, b) | PExpr::Or(a, b) => {
                self.mentions_strings(a) || self.mentions_strings(b)
            }
            PExpr::Rel { lhs, rhs, .. } => self.mentions_strings(lhs) || self.mentions_strings(rhs),
            PExpr::If(c, a, b) => {
                self.mentions_strings(c) || self.mentions_strings(a) || self.mentions_strings(b)
            }
            PExpr::Call { func, args } => {
                returns_string(func) || args.iter().any(|a| self.mentions_strings(a))
            }
            PExpr::Array(items) => items.iter().any(|a| self.mentions_strings(a)),
        }
    }

    /// Messages are evaluated rarely and may use strings: they run in the interpreter.
    fn message(&mut self, e: &PExpr) -> Result<FExpr, String> {
        pexpr_to_fexpr(e, self.var_ty, self.fn_index, &mut self.called)
    }
}

/// Convert a program expression into an interpreter expression (relations evaluated live).
pub fn pexpr_to_fexpr(
    e: &PExpr,
    var_ty: &[Ty],
    fn_index: &HashMap<String, u32>,
    called: &mut BTreeSet<u32>,
) -> Result<FExpr, String> {
    use moss_frontend::flat::BinaryOp as B;
    let mut go = |x: &PExpr| pexpr_to_fexpr(x, var_ty, fn_index, called);
    let ty = |v: u32| {
        var_ty
            .get(v as usize)
            .copied()
            .ok_or(format!("variable index {v} out of range"))
    };
    Ok(match e {
        PExpr::Const(x) => FExpr::Const(crate::value::Value::Real(*x)),
        PExpr::Str(s) => FExpr::Const(crate::value::Value::Str(s.clone())),
        PExpr::Var(v) => FExpr::Slot(*v, ty(*v)?),
        PExpr::Pre(v) => FExpr::Pre(*v, ty(*v)?),
        PExpr::Time => FExpr::Time,
        PExpr::Neg(a) => FExpr::Neg(Box::new(go(a)?)),
        PExpr::Not(a) => FExpr::Not(Box::new(go(a)?)),
        PExpr::Arith(op, a, b) => {
            let op = match op {
                moss_symbolic::program::ArithOp::Add => B::Add,
                moss_symbolic::program::ArithOp::Sub => B::Sub,
                moss_symbolic::program::ArithOp::Mul => B::Mul,
                moss_symbolic::program::ArithOp::Div => B::Div,
                moss_symbolic::program::ArithOp::Pow => B::Pow,
            };
            FExpr::Bin(op, Box::new(go(a)?), Box::new(go(b)?))
        }
        PExpr::And(a, b) => FExpr::Bin(B::And, Box::new(go(a)?), Box::new(go(b)?)),
        PExpr::Or(a, b) => FExpr::Bin(B::Or, Box::new(go(a)?), Box::new(go(b)?)),
        PExpr::Rel { op, lhs, rhs, .. } => {
            let op = match op {
                RelOp::Lt => B::Lt,
                RelOp::Le => B::Le,
                RelOp::Gt => B::Gt,
                RelOp::Ge => B::Ge,
                RelOp::Eq => B::Eq,
                RelOp::Ne => B::Ne,
            };
            FExpr::Bin(op, Box::new(go(lhs)?), Box::new(go(rhs)?))
        }
        PExpr::If(c, a, b) => FExpr::If(vec![(go(c)?, go(a)?)], Box::new(go(b)?)),
        PExpr::Call { func, args } if func == crate::tape::OUTPUT_SELECT => match args.as_slice() {
            [PExpr::Const(i), call @ PExpr::Call { .. }] if *i >= 0.0 && i.fract() == 0.0 => {
                match go(call)? {
                    FExpr::Call(f, fargs, _) => FExpr::Call(f, fargs, *i as usize),
                    _ => return Err(format!("`{func}` of something that is not a user function")),
                }
            }
            _ => return Err(format!("malformed `{func}` call")),
        },
        PExpr::Call { func, args } => {
            let fargs = args.iter().map(&mut go).collect::<Result<Vec<_>, _>>()?;
            if let Some(&f) = fn_index.get(func.as_str()) {
                called.insert(f);
                FExpr::Call(f, fargs, 0)
            } else if let Some(b) = Builtin::from_name(func) {
                FExpr::Builtin(b, fargs)
            } else {
                return Err(format!("cannot call `{func}` in a message"));
            }
        }
        PExpr::Array(elems) => FExpr::Array(elems.iter().map(go).collect::<Result<_, _>>()?),
        PExpr::Initial => FExpr::Initial,
        PExpr::Terminal => FExpr::Terminal,
        PExpr::Sample(id) => FExpr::Sample(*id),
    })
}

/// Is `e` zero for some choice of the branches of its if-expressions (a zero branch, under
/// negations, products and quotients)? A constant zero is not: it is zero in every mode.
fn zero_in_some_branch(e: &PExpr) -> bool {
    fn zero_in(e: &PExpr, in_branch: bool) -> bool {
        match e {
            PExpr::Const(x) => in_branch && *x == 0.0,
            PExpr::If(_, a, b) => zero_in(a, true) || zero_in(b, true),
            PExpr::Neg(a) | PExpr::Arith(ArithOp::Div, a, _) => zero_in(a, in_branch),
            PExpr::Arith(ArithOp::Mul, a, b) => zero_in(a, in_branch) || zero_in(b, in_branch),
            _ => false,
        }
    }
    zero_in(e, false)
}
