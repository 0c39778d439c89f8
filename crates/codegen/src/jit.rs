//! Native code for scalar functions (Cranelift).
//!
//! The compiled scalar form of `scalar_fn.rs` is still a tree walk: every node returns a
//! `Result`, every local is a load from the frame. Device equations (Spice3's
//! `bjtNoBypassCode`, a hundred inputs and a page of branches, called thousands of times
//! per right-hand side) and media property functions (IF97's polynomial loops) spend most
//! of a simulation there. This module translates the scalar form once more, into machine
//! code: scalar locals become SSA variables (registers), constant tables are addressed in
//! place, `abs`, `sqrt`, `floor`, `ceil` are single instructions, other math calls the same
//! Rust functions the interpreter calls, so results are bit for bit those of the
//! interpreter.
//!
//! The native function has the signature `fn(frame: *mut f64, env: *mut Env) -> u32` and
//! runs the initialization of locals and the body on a frame whose inputs are set. It
//! returns 0 when it finished; anything unusual — a failed assertion (error or warning), an
//! index out of bounds, a `for` loop with step 0, an endless `while`, a failing callee —
//! returns 1 and the caller runs the function again in the scalar interpreter from its
//! inputs (which the body never writes), which reports the error or warning with its
//! message exactly as before. Calls of other functions go through [`native_call`], which
//! enters them like any scalar call (memo, depth limit, their own native code); an error
//! there is kept in the machine and returned as it is, so that a failure deep in a chain
//! of calls (runaway recursion) is not run again at every level. A callee that cannot
//! recurse and keeps no memo is called directly, its frame on the caller's stack.
//!
//! A function is left to the interpreter when its body passes a non-scalar argument, calls
//! a function without a scalar form, or assigns an input. `MOSS_JIT=0` turns native code
//! off (to compare both paths); on a host Cranelift does not support there is none.

use crate::builtins::{Math1, Math2};
use crate::func::{CFunction, Env, Ty};
use crate::scalar_fn::{SArg, SExpr, SStmt, ScalarFn, TupleTarget};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{
    types, AbiParam, BlockArg, InstBuilder, MemFlagsData, SigRef, Signature, StackSlotData,
    StackSlotKind, Type, Value,
};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};
use moss_frontend::flat::BinaryOp;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

/// Entry point of a function's native code.
type Entry = unsafe extern "C" fn(*mut f64, *mut c_void) -> u32;

/// The code memory of a native function; freed with the last [`NativeFn`] that points
/// into it (callers keep their direct callees alive).
pub(crate) struct Code(Option<JITModule>);

impl Code {
    /// Keep `module` (finalized) alive until the last user of its code is gone.
    pub(crate) fn new(module: JITModule) -> Code {
        Code(Some(module))
    }
}

impl Drop for Code {
    fn drop(&mut self) {
        if let Some(module) = self.0.take() {
            // SAFETY: the last `NativeFn` holding this code is being dropped, so no
            // pointer into it is called again (a caller holds its direct callees).
            unsafe { module.free_memory() };
        }
    }
}

// SAFETY: after `finalize_definitions` the module is only kept alive, never touched: the
// code it owns is immutable and may run on any thread.
unsafe impl Send for Code {}
unsafe impl Sync for Code {}

/// A function's native code.
#[derive(Clone)]
pub struct NativeFn {
    entry: Entry,
    /// The constant tables the code addresses (kept alive with it).
    _tables: Arc<Vec<Arc<[f64]>>>,
    _code: Arc<Code>,
    /// The callees it calls directly (their code must outlive this one's).
    _callees: Arc<Vec<NativeFn>>,
}

impl std::fmt::Debug for NativeFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NativeFn")
    }
}

impl NativeFn {
    /// Run the function on `frame` (inputs set, everything else zero). `false` when the
    /// interpreter must run it again (see the module documentation).
    pub(crate) fn run(&self, frame: &mut [f64], env: &mut Env<'_>) -> bool {
        // SAFETY: the code was generated for this function's frame layout (`frame` has its
        // `frame_size`), and `env` outlives the call.
        let status = unsafe { (self.entry)(frame.as_mut_ptr(), env as *mut Env as *mut c_void) };
        status == 0
    }
}

/// Whether native code is generated (`MOSS_JIT=0` turns it off).
pub fn enabled() -> bool {
    std::env::var_os("MOSS_JIT").is_none_or(|v| v != "0")
}

/// Calls a function runs interpreted before it is translated: compiling costs about what a
/// few hundred interpreted calls of a long function do, and many functions (those of
/// initialization, of parameters) are called only a handful of times.
const CALLS_BEFORE_COMPILING: u32 = 100;

/// A function's native code, compiled on its [`CALLS_BEFORE_COMPILING`]-th call (shared
/// by the copies of a program: the code is the same).
#[derive(Clone, Debug, Default)]
pub struct NativeSlot {
    /// Off by default, and with `MOSS_JIT=0`.
    enabled: bool,
    calls: Arc<AtomicU32>,
    code: Arc<OnceLock<Option<NativeFn>>>,
}

impl NativeSlot {
    /// A slot that compiles (when [`enabled`]).
    pub fn new() -> NativeSlot {
        NativeSlot {
            enabled: enabled(),
            ..NativeSlot::default()
        }
    }

    /// The native code of function `f`, compiling it once it has been called often enough;
    /// `None` while it runs interpreted (or has no translation).
    pub(crate) fn get(&self, f: u32, funcs: &[CFunction]) -> Option<&NativeFn> {
        if let Some(code) = self.code.get() {
            return code.as_ref();
        }
        if !self.enabled {
            return None;
        }
        if self.calls.fetch_add(1, Ordering::Relaxed) + 1 < CALLS_BEFORE_COMPILING {
            return None;
        }
        self.code
            .get_or_init(|| compile_one(f as usize, funcs))
            .as_ref()
    }

    /// The code if it has been compiled already (for direct calls from other functions).
    fn compiled(&self) -> Option<&NativeFn> {
        self.code.get().and_then(|c| c.as_ref())
    }
}

/// Whether function `f` would get native code (its scalar form has a translation).
pub fn translatable(f: usize, funcs: &[CFunction]) -> bool {
    enabled()
        && funcs[f]
            .scalar
            .as_deref()
            .is_some_and(|sf| covered(sf, funcs))
}

/// Native code for function `f`, or `None` (no translation, or a host without a Cranelift
/// backend).
fn compile_one(f: usize, funcs: &[CFunction]) -> Option<NativeFn> {
    let sf = funcs[f].scalar.as_deref()?;
    if !covered(sf, funcs) {
        return None;
    }
    let mut module = new_module()?;
    let mut ctx = module.make_context();
    let mut fctx = FunctionBuilderContext::new();
    let mut tables: Vec<Arc<[f64]>> = Vec::new();
    let mut callees: Vec<NativeFn> = Vec::new();
    ctx.func.signature = entry_signature(&module);
    // named after the Modelica function (each has a module of its own, so names cannot
    // clash): cranelift-jit writes the names to the map that `perf record` reads
    let id = module
        .declare_function(&funcs[f].name, Linkage::Local, &ctx.func.signature)
        .ok()?;
    {
        let b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        Lower::new(b, &module, sf, f as u32, funcs, &mut tables, &mut callees).build()?;
    }
    module.define_function(id, &mut ctx).ok()?;
    module.clear_context(&mut ctx);
    module.finalize_definitions().ok()?;
    let p = module.get_finalized_function(id);
    // SAFETY: `p` is the finalized code of a function with the entry signature.
    let entry = unsafe { std::mem::transmute::<*const u8, Entry>(p) };
    Some(NativeFn {
        entry,
        _tables: Arc::new(tables),
        _code: Arc::new(Code(Some(module))),
        _callees: Arc::new(callees),
    })
}

pub(crate) fn new_module() -> Option<JITModule> {
    module_with(&[])
}

/// A JIT module at optimization level `none` with the extra Cranelift `settings`.
pub(crate) fn module_with(settings: &[(&str, &str)]) -> Option<JITModule> {
    let mut flags = settings::builder();
    flags.set("opt_level", "none").ok()?;
    for (name, value) in settings {
        flags.set(name, value).ok()?;
    }
    flags.set("use_colocated_libcalls", "false").ok()?;
    flags.set("is_pic", "false").ok()?;
    let isa = cranelift_native::builder()
        .ok()?
        .finish(settings::Flags::new(flags))
        .ok()?;
    Some(JITModule::new(JITBuilder::with_isa(
        isa,
        default_libcall_names(),
    )))
}

fn entry_signature(module: &JITModule) -> Signature {
    let ptr = module.target_config().pointer_type();
    let mut sig = module.make_signature();
    sig.params.push(AbiParam::new(ptr));
    sig.params.push(AbiParam::new(ptr));
    sig.returns.push(AbiParam::new(types::I32));
    sig
}

/// Whether the call memo still pays for function `f` once it runs as native code: building
/// and hashing the key costs about as much per input as native code spends on a few
/// operations, so the memo stays where the function iterates (a `while` loop in it or its
/// callees: inverting a property function) or does much work per input (IF97's region
/// functions: two inputs, hundreds of operations), and goes where a function has many
/// inputs for its work (a Spice3 device function: a hundred record fields).
pub fn memo_pays(f: usize, funcs: &[CFunction]) -> bool {
    let Some(sf) = funcs[f].scalar.as_deref() else {
        return true;
    };
    let inputs: usize = sf.inputs.iter().map(|i| i.len()).sum();
    iterates(f, funcs) || function_size(sf) >= WORK_PER_MEMO_INPUT * inputs
}

/// Operations per input above which a native function keeps its memo.
const WORK_PER_MEMO_INPUT: usize = 50;

/// Whether function `f`, or a function it calls, has a `while` loop (an iteration whose
/// cost the call memo is worth).
fn iterates(f: usize, funcs: &[CFunction]) -> bool {
    let mut seen = vec![false; funcs.len()];
    let mut stack = vec![f];
    while let Some(g) = stack.pop() {
        if std::mem::replace(&mut seen[g], true) {
            continue;
        }
        match funcs[g].scalar.as_deref() {
            Some(sf) if !has_while(&sf.body) => {}
            // a while loop, or a function outside the scalar form: keep the memo
            _ => return true,
        }
        stack.extend(funcs[g].callees.iter().map(|&c| c as usize));
    }
    false
}

fn has_while(stmts: &[SStmt]) -> bool {
    stmts.iter().any(|s| match s {
        SStmt::While(..) => true,
        SStmt::If(branches, else_) => {
            branches.iter().any(|(_, b)| has_while(b)) || has_while(else_)
        }
        SStmt::For(_, _, _, _, body) => has_while(body),
        _ => false,
    })
}

/// Largest function translated (statements and expression nodes): beyond it, compile time
/// would outgrow what native code saves.
const MAX_NODES: usize = 40_000;

/// Largest function whose scalar locals become SSA variables (locals times nodes): a long
/// function with hundreds of locals (region 3 of IF97) makes the register allocator's work
/// explode, so its locals stay in the frame, read and written in memory.
const MAX_REGISTER_WORK: usize = 200_000;

fn in_registers(sf: &ScalarFn) -> bool {
    sf.local_types.len() * function_size(sf) <= MAX_REGISTER_WORK
}

/// Statements and expression nodes of `sf`.
fn function_size(sf: &ScalarFn) -> usize {
    stmts_size(&sf.init) + stmts_size(&sf.body)
}

fn stmts_size(stmts: &[SStmt]) -> usize {
    stmts
        .iter()
        .map(|s| {
            1 + match s {
                SStmt::Assign(_, _, e) => expr_size(e),
                SStmt::AssignElem(_, _, idx, _, e) => {
                    idx.iter().map(expr_size).sum::<usize>() + expr_size(e)
                }
                SStmt::Tuple(_, _, args)
                | SStmt::TupleArrays(_, _, args)
                | SStmt::Call(_, args) => args_size(args),
                SStmt::If(branches, else_) => {
                    branches
                        .iter()
                        .map(|(c, b)| expr_size(c) + stmts_size(b))
                        .sum::<usize>()
                        + stmts_size(else_)
                }
                SStmt::For(_, a, step, b, body) => {
                    expr_size(a)
                        + step.as_ref().map_or(0, expr_size)
                        + expr_size(b)
                        + stmts_size(body)
                }
                SStmt::While(c, body) => expr_size(c) + stmts_size(body),
                SStmt::Assert(c, _, _) => expr_size(c),
                SStmt::Return | SStmt::Break => 0,
            }
        })
        .sum()
}

fn args_size(args: &[SArg]) -> usize {
    args.iter()
        .map(|a| match a {
            SArg::Scalar(e) => expr_size(e),
            SArg::Array(_, dims, _) => dims.iter().product(),
            SArg::Elements(_, items) => items.iter().map(expr_size).sum(),
            SArg::Value(_) => 1,
        })
        .sum()
}

fn expr_size(e: &SExpr) -> usize {
    1 + match e {
        SExpr::Const(_) | SExpr::Local(_) => 0,
        SExpr::Neg(a) | SExpr::Not(a) | SExpr::M1(_, a) | SExpr::Floor(a) | SExpr::ToBool(a) => {
            expr_size(a)
        }
        SExpr::Bin(_, a, b) | SExpr::M2(_, a, b) => expr_size(a) + expr_size(b),
        SExpr::Elem(_, _, idx) | SExpr::LocalElem(_, _, idx) => idx.iter().map(expr_size).sum(),
        SExpr::Elem1(_, i) => expr_size(i),
        SExpr::SemiLinear(args) => args.iter().map(expr_size).sum(),
        SExpr::Call(_, args, _) => args_size(args),
        SExpr::If(branches, else_) => {
            branches
                .iter()
                .map(|(c, v)| expr_size(c) + expr_size(v))
                .sum::<usize>()
                + expr_size(else_)
        }
    }
}

/// Whether every statement and expression of `sf` has a translation.
fn covered(sf: &ScalarFn, funcs: &[CFunction]) -> bool {
    if function_size(sf) > MAX_NODES {
        return false;
    }
    let inputs: Vec<u32> = sf.inputs.iter().map(|i| i.slot).collect();
    let assigns_input = |slot: &u32| inputs.contains(slot);
    stmts_covered(&sf.init, funcs, &assigns_input) && stmts_covered(&sf.body, funcs, &assigns_input)
}

fn stmts_covered(stmts: &[SStmt], funcs: &[CFunction], input: &dyn Fn(&u32) -> bool) -> bool {
    stmts.iter().all(|s| match s {
        SStmt::Assign(slot, _, e) => !input(slot) && expr_covered(e, funcs),
        SStmt::AssignElem(_, _, idx, _, e) => {
            idx.iter().all(|i| expr_covered(i, funcs)) && expr_covered(e, funcs)
        }
        SStmt::Tuple(targets, f, args) => {
            targets.iter().flatten().all(|(slot, _)| !input(slot))
                && call_covered(*f, args, targets.len().saturating_sub(1), funcs)
        }
        SStmt::Call(f, args) => call_covered(*f, args, 0, funcs),
        SStmt::TupleArrays(targets, f, args) => {
            targets.iter().flatten().all(|t| match t {
                TupleTarget::Scalar(slot, _) | TupleTarget::Array(slot, _, _) => !input(slot),
            }) && call_covered(*f, args, targets.len().saturating_sub(1), funcs)
        }
        SStmt::If(branches, else_) => {
            branches
                .iter()
                .all(|(c, b)| expr_covered(c, funcs) && stmts_covered(b, funcs, input))
                && stmts_covered(else_, funcs, input)
        }
        SStmt::For(slot, a, step, b, body) => {
            !input(slot)
                && expr_covered(a, funcs)
                && step.as_ref().is_none_or(|s| expr_covered(s, funcs))
                && expr_covered(b, funcs)
                && stmts_covered(body, funcs, input)
        }
        SStmt::While(c, body) => expr_covered(c, funcs) && stmts_covered(body, funcs, input),
        SStmt::Assert(c, _, _) => expr_covered(c, funcs),
        SStmt::Return | SStmt::Break => true,
    })
}

/// A call the native code can make: the callee has a scalar form, takes every argument
/// as a scalar, and has output `index`.
fn call_covered(f: u32, args: &[SArg], index: usize, funcs: &[CFunction]) -> bool {
    let Some(csf) = funcs.get(f as usize).and_then(|c| c.scalar.as_deref()) else {
        return false;
    };
    csf.takes(args.len())
        && (csf.outputs.len() > index || (index == 0 && csf.outputs.is_empty()))
        && args.iter().zip(&csf.inputs).all(|(a, input)| match a {
            SArg::Scalar(e) => input.dims.is_none() && expr_covered(e, funcs),
            SArg::Value(_) => input.ignored(),
            SArg::Array(_, dims, _) => input.dims.as_ref() == Some(dims),
            SArg::Elements(dims, items) => {
                input.dims.as_ref() == Some(dims) && items.iter().all(|e| expr_covered(e, funcs))
            }
        })
}

fn expr_covered(e: &SExpr, funcs: &[CFunction]) -> bool {
    let cov = |x: &SExpr| expr_covered(x, funcs);
    match e {
        SExpr::Const(_) | SExpr::Local(_) => true,
        SExpr::Neg(a) | SExpr::Not(a) | SExpr::M1(_, a) | SExpr::Floor(a) | SExpr::ToBool(a) => {
            cov(a)
        }
        SExpr::Bin(_, a, b) | SExpr::M2(_, a, b) => cov(a) && cov(b),
        SExpr::Elem(_, _, idx) | SExpr::LocalElem(_, _, idx) => idx.iter().all(cov),
        SExpr::Elem1(_, i) => cov(i),
        SExpr::SemiLinear(args) => args.iter().all(cov),
        SExpr::Call(f, args, index) => {
            call_covered(*f, args, *index, funcs)
                && funcs[*f as usize]
                    .scalar
                    .as_deref()
                    .is_some_and(|c| c.outputs.len() > *index)
        }
        SExpr::If(branches, else_) => branches.iter().all(|(c, v)| cov(c) && cov(v)) && cov(else_),
    }
}

/// The native code of `callee` when `caller` may call it directly: the callee is compiled
/// already, keeps no memo (a costly pure function keeps its memo through [`native_call`]),
/// takes all its inputs as arguments (defaults are the interpreter's), keeps no arrays in
/// its frame, and cannot call back into the caller (no recursion without the depth limit).
fn direct_callee(caller: u32, callee: u32, nargs: usize, funcs: &[CFunction]) -> Option<&NativeFn> {
    let c = funcs.get(callee as usize)?;
    let sf = c.scalar.as_deref()?;
    if c.memo || sf.inputs.len() != nargs || sf.frame_size != sf.local_types.len() {
        return None;
    }
    let native = c.native.compiled()?;
    let mut seen = std::collections::BTreeSet::new();
    let mut stack = vec![callee];
    while let Some(g) = stack.pop() {
        if g == caller || (g == callee && !seen.is_empty()) {
            return None;
        }
        if seen.insert(g) {
            if let Some(d) = funcs.get(g as usize) {
                stack.extend(d.callees.iter().copied());
            }
        }
    }
    Some(native)
}

/// Signatures of the helpers the code calls.
struct Sigs {
    unary: SigRef,
    binary: SigRef,
    index: SigRef,
    call: SigRef,
    entry: SigRef,
}

/// Where a call left its outputs: consecutive in a stack slot, or at the given byte
/// offsets of the callee's frame (a direct call).
struct Outputs {
    slot: cranelift_codegen::ir::StackSlot,
    /// Byte offsets of the outputs in the callee's frame (a direct call).
    offsets: Option<Vec<usize>>,
    /// Byte offsets of the outputs among flattened ones, when an array output comes
    /// before (a call through [`native_call`] with array outputs).
    flat: Option<Vec<usize>>,
}

/// Translates one scalar function.
struct Lower<'a> {
    b: FunctionBuilder<'a>,
    /// Index of the function being translated.
    this: u32,
    /// The callees called directly.
    callees: &'a mut Vec<NativeFn>,
    config: cranelift_codegen::isa::TargetFrontendConfig,
    ptr: Type,
    sf: &'a ScalarFn,
    funcs: &'a [CFunction],
    tables: &'a mut Vec<Arc<[f64]>>,
    sigs: Sigs,
    frame: Value,
    env: Value,
    /// One variable per scalar slot of the frame.
    vars: Vec<Variable>,
    /// Returns 1: the interpreter runs the function again.
    fail: cranelift_codegen::ir::Block,
    /// Stores the outputs and returns 0.
    done: cranelift_codegen::ir::Block,
    /// Exit blocks of the enclosing loops (for `break`).
    loop_exits: Vec<cranelift_codegen::ir::Block>,
}

impl<'a> Lower<'a> {
    fn new(
        mut b: FunctionBuilder<'a>,
        module: &JITModule,
        sf: &'a ScalarFn,
        this: u32,
        funcs: &'a [CFunction],
        tables: &'a mut Vec<Arc<[f64]>>,
        callees: &'a mut Vec<NativeFn>,
    ) -> Lower<'a> {
        let ptr = module.target_config().pointer_type();
        let mut sig = |params: &[Type], ret: Type| {
            let mut s = module.make_signature();
            s.params.extend(params.iter().map(|t| AbiParam::new(*t)));
            s.returns.push(AbiParam::new(ret));
            b.import_signature(s)
        };
        let sigs = Sigs {
            unary: sig(&[types::F64], types::F64),
            binary: sig(&[types::F64, types::F64], types::F64),
            index: sig(&[types::F64, types::I64], types::I64),
            call: sig(&[ptr, types::I32, ptr, types::I32, ptr], types::I32),
            entry: sig(&[ptr, ptr], types::I32),
        };
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let frame = b.block_params(entry)[0];
        let env = b.block_params(entry)[1];
        let fail = b.create_block();
        let done = b.create_block();
        Lower {
            b,
            config: module.isa().frontend_config(),
            this,
            callees,
            ptr,
            sf,
            funcs,
            tables,
            sigs,
            frame,
            env,
            vars: Vec::new(),
            fail,
            done,
            loop_exits: Vec::new(),
        }
    }

    /// Emit the whole function; `None` if something has no translation after all.
    fn build(mut self) -> Option<()> {
        let sf = self.sf;
        if in_registers(sf) {
            // scalar slots live in variables: inputs loaded, everything else starts at zero
            let zero = self.b.ins().f64const(0.0);
            for _ in 0..sf.local_types.len() {
                let v = self.b.declare_var(types::F64);
                self.b.def_var(v, zero);
                self.vars.push(v);
            }
            for input in sf.inputs.iter().filter(|i| i.dims.is_none()) {
                let x = self.load_frame(input.slot as usize);
                self.b
                    .def_var(self.vars.get(input.slot as usize).copied()?, x);
            }
        }
        self.stmts(&sf.init)?;
        self.stmts(&sf.body)?;
        self.b.ins().jump(self.done, &[]);

        self.b.switch_to_block(self.fail);
        let one = self.b.ins().iconst(types::I32, 1);
        self.b.ins().return_(&[one]);

        self.b.switch_to_block(self.done);
        if !self.vars.is_empty() {
            // array outputs live in the frame already
            for (k, (slot, _)) in sf.outputs.iter().enumerate() {
                if sf.output_is_array(k) {
                    continue;
                }
                let v = self.b.use_var(*self.vars.get(*slot as usize)?);
                self.store_frame(*slot as usize, v);
            }
        }
        let ok = self.b.ins().iconst(types::I32, 0);
        self.b.ins().return_(&[ok]);
        self.b.seal_all_blocks();
        self.b.finalize(self.config);
        Some(())
    }

    fn load_frame(&mut self, slot: usize) -> Value {
        let off = i32::try_from(slot * 8).expect("frame offsets fit in 32 bits");
        self.b
            .ins()
            .load(types::F64, MemFlagsData::trusted(), self.frame, off)
    }

    fn store_frame(&mut self, slot: usize, v: Value) {
        let off = i32::try_from(slot * 8).expect("frame offsets fit in 32 bits");
        self.b
            .ins()
            .store(MemFlagsData::trusted(), v, self.frame, off);
    }

    /// Continue in a fresh block after a terminator (code after `return`/`break` is dead
    /// but must still be placed somewhere).
    fn continue_dead(&mut self) {
        let dead = self.b.create_block();
        self.b.switch_to_block(dead);
    }

    /// Branch to `fail` when `status` (I32 or I64) is nonzero.
    fn fail_if(&mut self, cond: Value) {
        let cont = self.b.create_block();
        self.b.ins().brif(cond, self.fail, &[], cont, &[]);
        self.b.switch_to_block(cont);
    }

    /// Store `x` into scalar slot `slot` with the conversion of an assignment.
    fn assign(&mut self, slot: u32, ty: Ty, x: Value) -> Option<()> {
        let v = self.coerce(ty, x);
        self.set_local(slot, v)
    }

    /// Write scalar slot `slot`: its variable, or the frame for a function kept in memory.
    fn set_local(&mut self, slot: u32, v: Value) -> Option<()> {
        if self.vars.is_empty() {
            if slot as usize >= self.sf.local_types.len() {
                return None;
            }
            self.store_frame(slot as usize, v);
        } else {
            let var = *self.vars.get(slot as usize)?;
            self.b.def_var(var, v);
        }
        Some(())
    }

    /// Read scalar slot `slot`.
    fn get_local(&mut self, slot: u32) -> Option<Value> {
        if self.vars.is_empty() {
            if slot as usize >= self.sf.local_types.len() {
                return None;
            }
            return Some(self.load_frame(slot as usize));
        }
        let var = *self.vars.get(slot as usize)?;
        Some(self.b.use_var(var))
    }

    /// Integer assignments round (`x` is almost always integral already), Booleans test.
    fn coerce(&mut self, ty: Ty, x: Value) -> Value {
        match ty {
            Ty::Real | Ty::Str => x,
            Ty::Bool => {
                let c = self.against_zero(FloatCC::NotEqual, x);
                self.truth(c)
            }
            Ty::Int => {
                let t = self.b.ins().trunc(x);
                let integral = self.b.ins().fcmp(FloatCC::Equal, t, x);
                let slow = self.b.create_block();
                let join = self.b.create_block();
                let r = self.b.append_block_param(join, types::F64);
                self.b
                    .ins()
                    .brif(integral, join, &[BlockArg::Value(x)], slow, &[]);
                self.b.switch_to_block(slow);
                let rounded = self.helper1(round as extern "C" fn(f64) -> f64 as usize, x);
                self.b.ins().jump(join, &[BlockArg::Value(rounded)]);
                self.b.switch_to_block(join);
                r
            }
        }
    }

    fn truth(&mut self, c: Value) -> Value {
        let one = self.b.ins().f64const(1.0);
        let zero = self.b.ins().f64const(0.0);
        self.b.ins().select(c, one, zero)
    }

    fn helper1(&mut self, f: usize, x: Value) -> Value {
        let p = self.b.ins().iconst(self.ptr, f as i64);
        let call = self.b.ins().call_indirect(self.sigs.unary, p, &[x]);
        self.b.inst_results(call)[0]
    }

    fn helper2(&mut self, f: usize, x: Value, y: Value) -> Value {
        let p = self.b.ins().iconst(self.ptr, f as i64);
        let call = self.b.ins().call_indirect(self.sigs.binary, p, &[x, y]);
        self.b.inst_results(call)[0]
    }

    fn stmts(&mut self, stmts: &[SStmt]) -> Option<()> {
        for s in stmts {
            self.stmt(s)?;
        }
        Some(())
    }

    fn stmt(&mut self, s: &SStmt) -> Option<()> {
        match s {
            SStmt::Assign(slot, ty, e) => {
                let x = self.expr(e)?;
                self.assign(*slot, *ty, x)?;
            }
            SStmt::AssignElem(base, dims, idx, ty, e) => {
                let x = self.expr(e)?;
                let x = self.coerce(*ty, x);
                let addr = self.local_address(*base, dims, idx)?;
                self.b.ins().store(MemFlagsData::trusted(), x, addr, 0);
            }
            SStmt::Tuple(targets, f, args) => {
                let outs = self.call(*f, args)?;
                for (k, t) in targets.iter().enumerate() {
                    if let Some((slot, ty)) = t {
                        let x = self.output(&outs, k)?;
                        self.assign(*slot, *ty, x)?;
                    }
                }
            }
            SStmt::Call(f, args) => {
                self.call(*f, args)?;
            }
            SStmt::TupleArrays(targets, f, args) => self.tuple_arrays(targets, *f, args)?,
            SStmt::If(branches, else_) => {
                let join = self.b.create_block();
                for (c, body) in branches {
                    let x = self.expr(c)?;
                    let taken = self.against_zero(FloatCC::NotEqual, x);
                    let then = self.b.create_block();
                    let next = self.b.create_block();
                    self.b.ins().brif(taken, then, &[], next, &[]);
                    self.b.switch_to_block(then);
                    self.stmts(body)?;
                    self.b.ins().jump(join, &[]);
                    self.b.switch_to_block(next);
                }
                self.stmts(else_)?;
                self.b.ins().jump(join, &[]);
                self.b.switch_to_block(join);
            }
            SStmt::For(slot, a, step, b, body) => {
                self.for_loop(*slot, a, step.as_ref(), b, body)?
            }
            SStmt::While(c, body) => self.while_loop(c, body)?,
            SStmt::Assert(c, _, _) => {
                // a failed assertion (error or warning) is reported by the interpreter
                let x = self.expr(c)?;
                let failed = self.against_zero(FloatCC::Equal, x);
                self.fail_if(failed);
            }
            SStmt::Return => {
                self.b.ins().jump(self.done, &[]);
                self.continue_dead();
            }
            SStmt::Break => {
                let exit = *self.loop_exits.last()?;
                self.b.ins().jump(exit, &[]);
                self.continue_dead();
            }
        }
        Some(())
    }

    /// `for i in a:step:b` with the iteration count of the interpreter (`scalar_fn::sfor`).
    fn for_loop(
        &mut self,
        slot: u32,
        a: &SExpr,
        step: Option<&SExpr>,
        b: &SExpr,
        body: &[SStmt],
    ) -> Option<()> {
        let a = self.expr(a)?;
        let s = match step {
            Some(s) => self.expr(s)?,
            None => self.b.ins().f64const(1.0),
        };
        let b = self.expr(b)?;
        let zero = self.b.ins().f64const(0.0);
        let step_zero = self.b.ins().fcmp(FloatCC::Equal, s, zero);
        self.fail_if(step_zero);
        let n = self.helper_count(a, s, b);
        let k_var = self.b.declare_var(types::F64);
        self.b.def_var(k_var, zero);
        let head = self.b.create_block();
        let body_block = self.b.create_block();
        let exit = self.b.create_block();
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(head);
        let k = self.b.use_var(k_var);
        let more = self.b.ins().fcmp(FloatCC::LessThan, k, n);
        self.b.ins().brif(more, body_block, &[], exit, &[]);
        self.b.switch_to_block(body_block);
        let ks = self.b.ins().fmul(k, s);
        let i = self.b.ins().fadd(a, ks);
        self.set_local(slot, i)?;
        self.loop_exits.push(exit);
        self.stmts(body)?;
        self.loop_exits.pop();
        let k = self.b.use_var(k_var);
        let one = self.b.ins().f64const(1.0);
        let k1 = self.b.ins().fadd(k, one);
        self.b.def_var(k_var, k1);
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(exit);
        Some(())
    }

    /// The number of values of `a:s:b` (as a Real, 0 for an empty range).
    fn helper_count(&mut self, a: Value, s: Value, b: Value) -> Value {
        let p = self
            .b
            .ins()
            .iconst(self.ptr, range_count as *const () as usize as i64);
        let mut sig = Signature::new(self.b.func.signature.call_conv);
        sig.params.extend([AbiParam::new(types::F64); 3]);
        sig.returns.push(AbiParam::new(types::F64));
        let sr = self.b.import_signature(sig);
        let call = self.b.ins().call_indirect(sr, p, &[a, s, b]);
        self.b.inst_results(call)[0]
    }

    fn while_loop(&mut self, c: &SExpr, body: &[SStmt]) -> Option<()> {
        let count = self.b.declare_var(types::I64);
        let zero = self.b.ins().iconst(types::I64, 0);
        self.b.def_var(count, zero);
        let head = self.b.create_block();
        let body_block = self.b.create_block();
        let exit = self.b.create_block();
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(head);
        let x = self.expr(c)?;
        let more = self.against_zero(FloatCC::NotEqual, x);
        self.b.ins().brif(more, body_block, &[], exit, &[]);
        self.b.switch_to_block(body_block);
        let n = self.b.use_var(count);
        let n1 = self.b.ins().iadd_imm_s(n, 1);
        self.b.def_var(count, n1);
        let endless = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedGreaterThan, n1, MAX_WHILE_ITERATIONS);
        self.fail_if(endless);
        self.loop_exits.push(exit);
        self.stmts(body)?;
        self.loop_exits.pop();
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(exit);
        Some(())
    }

    /// Call `f`, straight into its native code where [`DirectCalls`] allows, else through
    /// [`native_call`]; returns the output `index`, or the callee's frame or output slot
    /// (`Outputs`) for a tuple.
    fn call(&mut self, f: u32, args: &[SArg]) -> Option<Outputs> {
        if let Some(native) = direct_callee(self.this, f, args.len(), self.funcs) {
            let native = native.clone();
            return self.call_direct(f, native, args);
        }
        let csf = self.funcs.get(f as usize)?.scalar.as_deref()?;
        // outputs arrive flattened: a scalar after an array output is further on
        let flat = csf.has_array_outputs().then(|| {
            (0..csf.outputs.len())
                .map(|k| csf.flat_start(k) * 8)
                .collect::<Vec<_>>()
        });
        self.call_through_env(f, args).map(|slot| Outputs {
            slot,
            offsets: None,
            flat,
        })
    }

    /// A tuple call with whole arrays among its targets: the callee (which has array
    /// outputs, so it is never called directly) hands its outputs over flattened; array
    /// elements are stored into the caller's frame.
    fn tuple_arrays(
        &mut self,
        targets: &[Option<TupleTarget>],
        f: u32,
        args: &[SArg],
    ) -> Option<()> {
        let csf = self.funcs.get(f as usize)?.scalar.as_deref()?;
        let starts: Vec<usize> = (0..targets.len()).map(|k| csf.flat_start(k)).collect();
        let outs = self.call(f, args)?;
        for (k, t) in targets.iter().enumerate() {
            match t {
                None => {}
                Some(TupleTarget::Scalar(slot, ty)) => {
                    let x = self.output(&outs, k)?;
                    self.assign(*slot, *ty, x)?;
                }
                Some(TupleTarget::Array(base, len, ty)) => {
                    if outs.offsets.is_some() {
                        return None;
                    }
                    for j in 0..*len {
                        let off = i32::try_from((starts[k] + j) * 8).ok()?;
                        let x = self
                            .b
                            .ins()
                            .stack_load(self.ptr, types::F64, outs.slot, off);
                        let x = self.coerce(*ty, x);
                        self.store_frame(*base as usize + j, x);
                    }
                }
            }
        }
        Some(())
    }

    /// A direct call: the callee's frame is a stack slot of the caller.
    fn call_direct(&mut self, f: u32, native: NativeFn, args: &[SArg]) -> Option<Outputs> {
        let csf = self.funcs.get(f as usize)?.scalar.as_deref()?;
        let frame = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            u32::try_from(csf.frame_size.max(1) * 8).ok()?,
            3,
        ));
        for (a, input) in args.iter().zip(&csf.inputs) {
            if input.ignored() {
                continue;
            }
            let SArg::Scalar(e) = a else { return None };
            let x = self.expr(e)?;
            let x = self.coerce(input.ty, x);
            self.b
                .ins()
                .stack_store(self.ptr, x, frame, (input.slot as usize * 8) as i32);
        }
        let entry = self
            .b
            .ins()
            .iconst(self.ptr, native.entry as *const () as usize as i64);
        self.callees.push(native);
        let fp = self.b.ins().stack_addr(self.ptr, frame, 0);
        let call = self
            .b
            .ins()
            .call_indirect(self.sigs.entry, entry, &[fp, self.env]);
        let status = self.b.inst_results(call)[0];
        self.fail_if(status);
        Some(Outputs {
            slot: frame,
            offsets: Some(csf.outputs.iter().map(|(s, _)| *s as usize * 8).collect()),
            flat: None,
        })
    }

    /// Call `f` through [`native_call`]; returns the stack slot holding its outputs.
    fn call_through_env(
        &mut self,
        f: u32,
        args: &[SArg],
    ) -> Option<cranelift_codegen::ir::StackSlot> {
        let csf = self.funcs.get(f as usize)?.scalar.as_deref()?;
        let nouts = csf.flat_output_count().max(1);
        // the passed inputs' elements one after the other (a scalar is one)
        let nvalues: usize = csf.inputs.iter().take(args.len()).map(|i| i.len()).sum();
        let arg_slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            u32::try_from(nvalues.max(1) * 8).ok()?,
            3,
        ));
        let out_slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            u32::try_from(nouts * 8).ok()?,
            3,
        ));
        let mut at = 0usize;
        for (a, input) in args.iter().zip(&csf.inputs) {
            let values: Vec<Value> = match a {
                _ if input.ignored() => vec![self.b.ins().f64const(0.0)],
                SArg::Scalar(e) => vec![self.expr(e)?],
                SArg::Elements(_, items) => {
                    items.iter().map(|e| self.expr(e)).collect::<Option<_>>()?
                }
                SArg::Array(base, dims, _) => (0..dims.iter().product::<usize>())
                    .map(|j| self.load_frame(*base as usize + j))
                    .collect(),
                SArg::Value(_) => return None,
            };
            if values.len() != input.len() {
                return None;
            }
            for x in values {
                let off = i32::try_from(at * 8).ok()?;
                self.b.ins().stack_store(self.ptr, x, arg_slot, off);
                at += 1;
            }
        }
        let p = self.b.ins().iconst(
            self.ptr,
            native_call as unsafe extern "C" fn(_, _, _, _, _) -> _ as usize as i64,
        );
        let fi = self.b.ins().iconst(types::I32, i64::from(f));
        let ap = self.b.ins().stack_addr(self.ptr, arg_slot, 0);
        let na = self.b.ins().iconst(types::I32, args.len() as i64);
        let op = self.b.ins().stack_addr(self.ptr, out_slot, 0);
        let call = self
            .b
            .ins()
            .call_indirect(self.sigs.call, p, &[self.env, fi, ap, na, op]);
        let status = self.b.inst_results(call)[0];
        self.fail_if(status);
        Some(out_slot)
    }

    /// Output `k` of a call.
    fn output(&mut self, outs: &Outputs, k: usize) -> Option<Value> {
        let off = match (&outs.offsets, &outs.flat) {
            (Some(offsets), _) | (None, Some(offsets)) => *offsets.get(k)?,
            (None, None) => k * 8,
        };
        Some(
            self.b
                .ins()
                .stack_load(self.ptr, types::F64, outs.slot, i32::try_from(off).ok()?),
        )
    }

    /// Address of an element of a frame array (indices checked; out of bounds fails).
    fn local_address(&mut self, base: u32, dims: &[usize], idx: &[SExpr]) -> Option<Value> {
        let flat = self.flat_index(dims, idx)?;
        let bytes = self.b.ins().imul_imm_s(flat, 8);
        let start = self.b.ins().iadd_imm_s(bytes, i64::from(base) * 8);
        Some(self.b.ins().iadd(self.frame, start))
    }

    /// Row-major zero-based position from one index per dimension.
    fn flat_index(&mut self, dims: &[usize], idx: &[SExpr]) -> Option<Value> {
        if dims.len() != idx.len() {
            return None;
        }
        let mut flat = self.b.ins().iconst(types::I64, 0);
        for (e, &n) in idx.iter().zip(dims) {
            let x = self.expr(e)?;
            let i = self.checked_index(x, n);
            let scaled = self.b.ins().imul_imm_s(flat, n as i64);
            flat = self.b.ins().iadd(scaled, i);
        }
        Some(flat)
    }

    /// Zero-based index of the Modelica index `x` into a dimension of size `n`.
    fn checked_index(&mut self, x: Value, n: usize) -> Value {
        // an integral index (a loop variable: nearly always) converts exactly; anything
        // else (a fraction, NaN, an infinity) goes through `table_index`
        let t = self.b.ins().fcvt_to_sint_sat(types::I64, x);
        let back = self.b.ins().fcvt_from_sint(types::F64, t);
        let exact = self.b.ins().fcmp(FloatCC::Equal, back, x);
        let fast_block = self.b.create_block();
        let slow_block = self.b.create_block();
        let join = self.b.create_block();
        let one_based = self.b.append_block_param(join, types::I64);
        self.b.ins().brif(exact, fast_block, &[], slow_block, &[]);
        self.b.switch_to_block(fast_block);
        self.b.ins().jump(join, &[BlockArg::Value(t)]);
        self.b.switch_to_block(slow_block);
        let p = self
            .b
            .ins()
            .iconst(self.ptr, table_index as *const () as usize as i64);
        let nv = self.b.ins().iconst(types::I64, n as i64);
        let call = self.b.ins().call_indirect(self.sigs.index, p, &[x, nv]);
        let zero_based = self.b.inst_results(call)[0];
        // back to one-based: -1 (out of range) becomes 0, which the check below rejects
        let r = self.b.ins().iadd_imm_s(zero_based, 1);
        self.b.ins().jump(join, &[BlockArg::Value(r)]);
        self.b.switch_to_block(join);
        // 1 <= i <= n as one unsigned comparison of i - 1 < n
        let i = self.b.ins().iadd_imm_s(one_based, -1);
        let bad = self
            .b
            .ins()
            .icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, i, n as i64);
        self.fail_if(bad);
        i
    }

    /// `x <cc> 0.0` as a flag.
    fn against_zero(&mut self, cc: FloatCC, x: Value) -> Value {
        let z = self.b.ins().f64const(0.0);
        self.b.ins().fcmp(cc, x, z)
    }

    /// The `f64` at zero-based position `index` (an I64) from address `base`.
    fn load_element(&mut self, base: Value, index: Value) -> Value {
        let bytes = self.b.ins().imul_imm_s(index, 8);
        let addr = self.b.ins().iadd(base, bytes);
        self.b
            .ins()
            .load(types::F64, MemFlagsData::trusted(), addr, 0)
    }

    fn table_address(&mut self, data: &Arc<[f64]>) -> Value {
        self.tables.push(data.clone());
        self.b.ins().iconst(self.ptr, data.as_ptr() as i64)
    }

    fn expr(&mut self, e: &SExpr) -> Option<Value> {
        Some(match e {
            SExpr::Const(x) => self.b.ins().f64const(*x),
            SExpr::Local(s) => self.get_local(*s)?,
            SExpr::Neg(a) => {
                let x = self.expr(a)?;
                self.b.ins().fneg(x)
            }
            SExpr::Not(a) => {
                let x = self.expr(a)?;
                let c = self.against_zero(FloatCC::Equal, x);
                self.truth(c)
            }
            SExpr::Bin(op, a, b) => self.binary(*op, a, b)?,
            SExpr::Elem(data, dims, idx) => {
                let flat = self.flat_index(dims, idx)?;
                let base = self.table_address(data);
                self.load_element(base, flat)
            }
            SExpr::Elem1(data, i) => {
                let x = self.expr(i)?;
                let i = self.checked_index(x, data.len());
                let base = self.table_address(data);
                self.load_element(base, i)
            }
            SExpr::LocalElem(base, dims, idx) => {
                let addr = self.local_address(*base, dims, idx)?;
                self.b
                    .ins()
                    .load(types::F64, MemFlagsData::trusted(), addr, 0)
            }
            SExpr::M1(m, a) => {
                let x = self.expr(a)?;
                match m {
                    Math1::Abs => self.b.ins().fabs(x),
                    Math1::Sqrt => self.b.ins().sqrt(x),
                    Math1::Floor => self.b.ins().floor(x),
                    Math1::Ceil => self.b.ins().ceil(x),
                    _ => self.helper1(math1_pointer(*m), x),
                }
            }
            SExpr::M2(m, a, b) => {
                let x = self.expr(a)?;
                let y = self.expr(b)?;
                self.helper2(math2_pointer(*m), x, y)
            }
            SExpr::Floor(a) => {
                let x = self.expr(a)?;
                self.b.ins().floor(x)
            }
            SExpr::ToBool(a) => {
                let x = self.expr(a)?;
                let c = self.against_zero(FloatCC::NotEqual, x);
                self.truth(c)
            }
            SExpr::SemiLinear(args) => {
                let x = self.expr(&args[0])?;
                let kp = self.expr(&args[1])?;
                let kn = self.expr(&args[2])?;
                let pos = self.against_zero(FloatCC::GreaterThanOrEqual, x);
                let p = self.b.ins().fmul(kp, x);
                let n = self.b.ins().fmul(kn, x);
                self.b.ins().select(pos, p, n)
            }
            SExpr::Call(f, args, index) => {
                let outs = self.call(*f, args)?;
                self.output(&outs, *index)?
            }
            SExpr::If(branches, else_) => {
                let join = self.b.create_block();
                let r = self.b.append_block_param(join, types::F64);
                for (c, v) in branches {
                    let x = self.expr(c)?;
                    let taken = self.against_zero(FloatCC::NotEqual, x);
                    let then = self.b.create_block();
                    let next = self.b.create_block();
                    self.b.ins().brif(taken, then, &[], next, &[]);
                    self.b.switch_to_block(then);
                    let y = self.expr(v)?;
                    self.b.ins().jump(join, &[BlockArg::Value(y)]);
                    self.b.switch_to_block(next);
                }
                let y = self.expr(else_)?;
                self.b.ins().jump(join, &[BlockArg::Value(y)]);
                self.b.switch_to_block(join);
                r
            }
        })
    }

    fn binary(&mut self, op: BinaryOp, a: &SExpr, b: &SExpr) -> Option<Value> {
        use BinaryOp::*;
        if matches!(op, And | Or) {
            // short-circuit as the interpreter does: the right operand may call functions
            let x = self.expr(a)?;
            let lhs = self.against_zero(FloatCC::NotEqual, x);
            let rhs_block = self.b.create_block();
            let join = self.b.create_block();
            let r = self.b.append_block_param(join, types::F64);
            let decided = self.b.ins().f64const(if op == And { 0.0 } else { 1.0 });
            if op == And {
                self.b
                    .ins()
                    .brif(lhs, rhs_block, &[], join, &[BlockArg::Value(decided)]);
            } else {
                self.b
                    .ins()
                    .brif(lhs, join, &[BlockArg::Value(decided)], rhs_block, &[]);
            }
            self.b.switch_to_block(rhs_block);
            let y = self.expr(b)?;
            let c = self.against_zero(FloatCC::NotEqual, y);
            let t = self.truth(c);
            self.b.ins().jump(join, &[BlockArg::Value(t)]);
            self.b.switch_to_block(join);
            return Some(r);
        }
        let x = self.expr(a)?;
        let y = self.expr(b)?;
        let cmp = |cc: FloatCC, s: &mut Self| {
            let c = s.b.ins().fcmp(cc, x, y);
            s.truth(c)
        };
        Some(match op {
            Add | ElemAdd => self.b.ins().fadd(x, y),
            Sub | ElemSub => self.b.ins().fsub(x, y),
            Mul | ElemMul => self.b.ins().fmul(x, y),
            Div | ElemDiv => self.b.ins().fdiv(x, y),
            Pow | ElemPow => self.helper2(pow as extern "C" fn(f64, f64) -> f64 as usize, x, y),
            Lt => cmp(FloatCC::LessThan, self),
            Le => cmp(FloatCC::LessThanOrEqual, self),
            Gt => cmp(FloatCC::GreaterThan, self),
            Ge => cmp(FloatCC::GreaterThanOrEqual, self),
            Eq => cmp(FloatCC::Equal, self),
            Ne => cmp(FloatCC::NotEqual, self),
            And | Or => unreachable!("handled above"),
        })
    }
}

/// Iterations after which a `while` loop is taken to be endless (as in `scalar_fn.rs`).
const MAX_WHILE_ITERATIONS: i64 = 100_000_000;

extern "C" fn round(x: f64) -> f64 {
    x.round()
}

extern "C" fn pow(x: f64, y: f64) -> f64 {
    crate::builtins::pow(x, y)
}

/// Zero-based index of Modelica index `x` in `1..=n`, or -1 (as `scalar_fn::table_index`).
extern "C" fn table_index(x: f64, n: i64) -> i64 {
    if !x.is_finite() {
        return -1;
    }
    let i = x.round() as i64;
    if i >= 1 && i <= n {
        i - 1
    } else {
        -1
    }
}

/// The number of values of `a:s:b` (`s != 0`), as `scalar_fn::sfor` counts them.
extern "C" fn range_count(a: f64, s: f64, b: f64) -> f64 {
    let integral = a.fract() == 0.0 && s.fract() == 0.0 && b.fract() == 0.0;
    let n = if integral {
        ((b - a) / s).floor() + 1.0
    } else {
        ((b - a) / s + 1e-10).floor() + 1.0
    };
    if n.is_finite() && n > 0.0 {
        (n as u64) as f64
    } else {
        0.0
    }
}

/// The address of a function applying `Math1::$v` (so the code calls exactly what the
/// interpreter runs).
macro_rules! math1_pointers {
    ($($v:ident),+ $(,)?) => {
        pub(crate) fn math1_pointer(m: Math1) -> usize {
            match m {
                $(Math1::$v => {
                    extern "C" fn f(x: f64) -> f64 {
                        Math1::$v.apply(x)
                    }
                    f as extern "C" fn(f64) -> f64 as usize
                })+
            }
        }
    };
}

macro_rules! math2_pointers {
    ($($v:ident),+ $(,)?) => {
        pub(crate) fn math2_pointer(m: Math2) -> usize {
            match m {
                $(Math2::$v => {
                    extern "C" fn f(x: f64, y: f64) -> f64 {
                        Math2::$v.apply(x, y)
                    }
                    f as extern "C" fn(f64, f64) -> f64 as usize
                })+
            }
        }
    };
}

math1_pointers!(
    Abs, Sign, Sqrt, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Tanh, Exp, Log, Log10, Ceil,
    Floor
);
math2_pointers!(Atan2, Min, Max, Div, Mod, Rem, Pow);

/// A call made by native code: enter function `f` with its first `nargs` inputs (their
/// elements one after the other in `args`) like any scalar call and write its outputs,
/// flattened, to `outs`. Returns 0, or 1 on any failure (the
/// caller's interpreter run reports it).
///
/// # Safety
/// `env` is the [`Env`] the native caller was given; `args` holds the elements of `nargs`
/// inputs and
/// `outs` room for the callee's outputs (both stack slots of the caller).
unsafe extern "C" fn native_call(
    env: *mut c_void,
    f: u32,
    args: *const f64,
    nargs: u32,
    outs: *mut f64,
) -> u32 {
    let run = std::panic::AssertUnwindSafe(|| {
        // SAFETY: see the function's contract.
        let env = unsafe { &mut *(env as *mut Env) };
        let sf = env.funcs[f as usize].scalar.as_deref();
        let nvalues = sf.map_or(0, |sf| {
            sf.inputs.iter().take(nargs as usize).map(|i| i.len()).sum()
        });
        let nouts = sf.map_or(0, |sf| sf.flat_output_count());
        let args = unsafe { std::slice::from_raw_parts(args, nvalues) };
        let outs = unsafe { std::slice::from_raw_parts_mut(outs, nouts) };
        env.call_from_native(f, nargs as usize, args, outs)
    });
    match std::panic::catch_unwind(run) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => {
            // SAFETY: as above; the closure's borrow has ended.
            let env = unsafe { &mut *(env as *mut Env) };
            env.m.native_error = Some(e);
            1
        }
        Err(_) => 1,
    }
}
