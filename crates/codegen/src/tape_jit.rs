//! Native code for expression tapes (Cranelift).
//!
//! The tapes of `tape.rs` are the model's equations: every block of the right-hand side,
//! the matrices and residuals of its linear and nonlinear systems, the zero crossings. Run
//! by [`crate::tape::run_until_call`] each instruction costs a dispatch on its kind and
//! two or three loads from the machine memory; in mechanisms, drives and circuits that is
//! the largest single item of a simulation's profile. A tape run often enough (see
//! [`runs_before_compiling`]) is translated here into one native function with the same
//! contract as `run_until_call`: it starts at a program counter (the beginning, or right
//! after a generic call), runs until the end or the next [`Instr::Generic`], and returns
//! the counter of that call (or [`DONE`]), so generic calls keep running in the function
//! interpreter exactly as before.
//!
//! Arithmetic is the same IEEE operation as the interpreter's; `abs`, `sqrt`, `floor` and
//! `ceil` are single instructions, other math calls the same Rust functions (`jit.rs`);
//! relations compare as Rust's operators do (false when an operand is NaN, `<>` true), so
//! results are bit for bit the interpreter's. What touches the machine beyond its memory
//! (event relations, `sample`, `delay`, `homotopy`, `initial()`, `terminal()`) calls the
//! helpers below, which share their code with the interpreter (`tape.rs`). Within a basic
//! block a value stored to memory is reused instead of loaded again: every operand is a
//! constant offset, so nothing else can have changed it. `MOSS_JIT=0` turns this off too.

use crate::builtins::Math1;
use crate::jit::{math1_pointer, math2_pointer, module_with, Code};
use crate::machine::Machine;
use crate::tape::{self, Instr, Stop};
use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::{types, AbiParam, Block, InstBuilder, MemFlagsData, SigRef, Value};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Switch};
use cranelift_module::{Linkage, Module};
use moss_symbolic::program::RelOp;
use rustc_hash::FxHashMap as HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

/// What a native tape returns when it ran to the end.
const DONE: u32 = u32::MAX;

/// Runs of a tape of `len` instructions in the interpreter before it is translated: about
/// the runs its translation costs. Translating takes about 70 µs plus 2.6 µs per
/// instruction (Cranelift, single-pass register allocation, measured here) and saves about
/// 1.2 ns per instruction and run (1.9 ns interpreted, 0.7 ns native on the 90,000
/// instructions of `cargo bench -p moss-codegen --bench interp`), so a tape that has run
/// this often is likely to run as often again and repay it; the tapes of parameters, start
/// values and initialization never get there.
/// `MOSS_TAPE_RUNS=N` sets the number (tests use it to reach native code in short runs).
fn runs_before_compiling(len: usize) -> u32 {
    static FIXED: OnceLock<Option<u32>> = OnceLock::new();
    let fixed = FIXED.get_or_init(|| std::env::var("MOSS_TAPE_RUNS").ok()?.parse().ok());
    fixed.unwrap_or(2_000 + (60_000 / len.max(1)) as u32)
}

/// Longest tape translated (its translation takes about half a second).
const MAX_INSTRUCTIONS: usize = 200_000;

/// `fn(mem, machine, start_pc) -> pc of the next generic call, or DONE`.
type Entry = unsafe extern "C" fn(*mut f64, *mut Machine, u32) -> u32;

/// A tape's native code.
pub struct NativeTape {
    entry: Entry,
    _code: Arc<Code>,
}

impl std::fmt::Debug for NativeTape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NativeTape")
    }
}

impl NativeTape {
    /// Run the tape from `pc` on `m`, as [`tape::run_until_call`] does.
    ///
    /// # Safety
    /// The contract of [`tape::run_until_call`]: the tape's operands lie inside `m.mem`.
    pub unsafe fn run(&self, pc: usize, m: &mut Machine) -> Stop {
        let mem = m.mem.as_mut_ptr();
        // SAFETY: the code addresses `mem` only at the tape's operands (in bounds by the
        // caller's contract) and reaches the rest of the machine through the helpers.
        let r = unsafe { (self.entry)(mem, m as *mut Machine, pc as u32) };
        if r == DONE {
            Stop::Done
        } else {
            Stop::Call(r as usize)
        }
    }
}

/// The native code of one tape, compiled once it has run [`runs_before_compiling`] times.
#[derive(Debug, Default)]
pub struct TapeSlot {
    enabled: bool,
    runs: AtomicU32,
    code: OnceLock<Option<NativeTape>>,
}

impl TapeSlot {
    pub fn new() -> TapeSlot {
        TapeSlot {
            enabled: crate::jit::enabled(),
            ..TapeSlot::default()
        }
    }

    /// The native code of `code`, compiling it once it has run often enough; `None` while
    /// it runs interpreted (or has no translation).
    pub fn get(&self, code: &[Instr]) -> Option<&NativeTape> {
        if let Some(native) = self.code.get() {
            return native.as_ref();
        }
        if !self.enabled
            || self.runs.fetch_add(1, Ordering::Relaxed) + 1 < runs_before_compiling(code.len())
        {
            return None;
        }
        self.code.get_or_init(|| compile(code)).as_ref()
    }
}

/// Translate a tape; `None` when it is too long or the host has no Cranelift backend.
pub fn compile(code: &[Instr]) -> Option<NativeTape> {
    if code.is_empty() || code.len() > MAX_INSTRUCTIONS || !offsets_fit(code) {
        return None;
    }
    let mut module = module_with(&[("regalloc_algorithm", "single_pass")])?;
    let ptr = module.target_config().pointer_type();
    let mut ctx = module.make_context();
    ctx.func.signature.params.push(AbiParam::new(ptr));
    ctx.func.signature.params.push(AbiParam::new(ptr));
    ctx.func.signature.params.push(AbiParam::new(types::I32));
    ctx.func.signature.returns.push(AbiParam::new(types::I32));
    let id = module
        .declare_function("tape", Linkage::Local, &ctx.func.signature)
        .ok()?;
    let mut fctx = FunctionBuilderContext::new();
    {
        let b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        Lower::new(b, &module, code).build()?;
    }
    module.define_function(id, &mut ctx).ok()?;
    module.clear_context(&mut ctx);
    module.finalize_definitions().ok()?;
    let p = module.get_finalized_function(id);
    // SAFETY: `p` is the finalized code of a function with the `Entry` signature.
    let entry = unsafe { std::mem::transmute::<*const u8, Entry>(p) };
    Some(NativeTape {
        entry,
        _code: Arc::new(Code::new(module)),
    })
}

/// Whether every memory operand's byte offset fits the 32-bit displacement of a load.
fn offsets_fit(code: &[Instr]) -> bool {
    let fits = std::cell::Cell::new(true);
    for ins in code {
        let mut i = *ins;
        i.remap(&|op| {
            if u64::from(op) * 8 > i32::MAX as u64 {
                fits.set(false);
            }
            op
        });
    }
    fits.get()
}

/// Signatures of the helpers the code calls.
struct Sigs {
    unary: SigRef,
    binary: SigRef,
    /// `(machine, op, zc, a, b) -> f64`
    relation: SigRef,
    /// `(machine, which, id) -> f64`
    flag: SigRef,
    /// `(machine, id, x, tau) -> f64`
    delay: SigRef,
    /// `(machine, actual, simplified) -> f64`
    homotopy: SigRef,
}

/// Translates one tape.
struct Lower<'a> {
    b: FunctionBuilder<'a>,
    code: &'a [Instr],
    config: cranelift_codegen::isa::TargetFrontendConfig,
    ptr: types::Type,
    sigs: Sigs,
    mem: Value,
    machine: Value,
    /// The program counter to start at.
    start: Value,
    /// The block starting at each leader (jump target, instruction after a jump or a
    /// generic call, the start and the end).
    blocks: Vec<Option<Block>>,
    /// Values of memory slots known in the current block (stored or loaded there).
    known: HashMap<u32, Value>,
}

impl<'a> Lower<'a> {
    fn new(
        mut b: FunctionBuilder<'a>,
        module: &cranelift_jit::JITModule,
        code: &'a [Instr],
    ) -> Self {
        let ptr = module.target_config().pointer_type();
        let mut sig = |params: &[types::Type]| {
            let mut s = module.make_signature();
            s.params.extend(params.iter().map(|t| AbiParam::new(*t)));
            s.returns.push(AbiParam::new(types::F64));
            b.import_signature(s)
        };
        let (f, i) = (types::F64, types::I32);
        let sigs = Sigs {
            unary: sig(&[f]),
            binary: sig(&[f, f]),
            relation: sig(&[ptr, i, i, f, f]),
            flag: sig(&[ptr, i, i]),
            delay: sig(&[ptr, i, f, f]),
            homotopy: sig(&[ptr, f, f]),
        };
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let mem = b.block_params(entry)[0];
        let machine = b.block_params(entry)[1];
        let start = b.block_params(entry)[2];
        Lower {
            b,
            code,
            config: module.isa().frontend_config(),
            ptr,
            sigs,
            mem,
            machine,
            start,
            blocks: Vec::new(),
            known: HashMap::default(),
        }
    }

    fn build(mut self) -> Option<()> {
        let n = self.code.len();
        let mut leader = vec![false; n + 1];
        leader[0] = true;
        leader[n] = true;
        let mut entries = vec![0usize];
        for (p, ins) in self.code.iter().enumerate() {
            match *ins {
                Instr::Jz { target, .. } | Instr::Jmp { target } => {
                    *leader.get_mut(target as usize)? = true;
                    leader[p + 1] = true;
                }
                Instr::Generic { .. } => {
                    leader[p + 1] = true;
                    entries.push(p + 1);
                }
                _ => {}
            }
        }
        self.blocks = leader
            .iter()
            .map(|&l| l.then(|| self.b.create_block()))
            .collect();
        // dispatch on the start: the beginning, or the instruction after a generic call
        let start = self.start;
        let mut switch = Switch::new();
        for &e in &entries {
            switch.set_entry(e as u128, self.blocks[e]?);
        }
        let first = self.blocks[0]?;
        switch.emit(&mut self.b, start, first);
        let mut open = false;
        for p in 0..n {
            if let Some(block) = self.blocks[p] {
                self.enter(block, open);
            }
            open = self.instr(p)?;
        }
        self.enter(self.blocks[n]?, open);
        let done = self.b.ins().iconst(types::I32, i64::from(DONE as i32));
        self.b.ins().return_(&[done]);
        self.b.seal_all_blocks();
        self.b.finalize(self.config);
        Some(())
    }

    /// Emit instruction `p`; false when it ends its block (a jump or a generic call).
    fn instr(&mut self, p: usize) -> Option<bool> {
        use Instr::*;
        match self.code[p] {
            Mov { d, a } => {
                let x = self.load(a);
                self.store(d, x);
            }
            Add { d, a, b } => self.binary(d, a, b, |bx, x, y| bx.ins().fadd(x, y)),
            Sub { d, a, b } => self.binary(d, a, b, |bx, x, y| bx.ins().fsub(x, y)),
            Mul { d, a, b } => self.binary(d, a, b, |bx, x, y| bx.ins().fmul(x, y)),
            Div { d, a, b } => self.binary(d, a, b, |bx, x, y| bx.ins().fdiv(x, y)),
            Sq { d, a } => {
                let x = self.load(a);
                let r = self.b.ins().fmul(x, x);
                self.store(d, r);
            }
            Neg { d, a } => {
                let x = self.load(a);
                let r = self.b.ins().fneg(x);
                self.store(d, r);
            }
            Not { d, a } => {
                let x = self.load(a);
                let c = self.against_zero(FloatCC::Equal, x);
                let r = self.truth(c);
                self.store(d, r);
            }
            And { d, a, b } | Or { d, a, b } => {
                let x = self.load(a);
                let y = self.load(b);
                let cx = self.against_zero(FloatCC::NotEqual, x);
                let cy = self.against_zero(FloatCC::NotEqual, y);
                let c = if matches!(self.code[p], And { .. }) {
                    self.b.ins().band(cx, cy)
                } else {
                    self.b.ins().bor(cx, cy)
                };
                let r = self.truth(c);
                self.store(d, r);
            }
            Rel { op, d, a, b } => {
                let x = self.load(a);
                let y = self.load(b);
                let c = self.b.ins().fcmp(float_cc(op), x, y);
                let r = self.truth(c);
                self.store(d, r);
            }
            RelZc { op, d, a, b, zc } => {
                let x = self.load(a);
                let y = self.load(b);
                let op = self.b.ins().iconst(types::I32, rel_code(op));
                let zc = self.b.ins().iconst(types::I32, i64::from(zc));
                let r = self.helper(
                    relation as unsafe extern "C" fn(_, _, _, _, _) -> _ as usize,
                    self.sigs.relation,
                    &[self.machine, op, zc, x, y],
                );
                self.store(d, r);
            }
            M1 { f, d, a } => {
                let x = self.load(a);
                let r = match f {
                    Math1::Abs => self.b.ins().fabs(x),
                    Math1::Sqrt => self.b.ins().sqrt(x),
                    Math1::Floor => self.b.ins().floor(x),
                    Math1::Ceil => self.b.ins().ceil(x),
                    _ => self.helper(math1_pointer(f), self.sigs.unary, &[x]),
                };
                self.store(d, r);
            }
            M2 { f, d, a, b } => {
                let x = self.load(a);
                let y = self.load(b);
                let r = self.helper(math2_pointer(f), self.sigs.binary, &[x, y]);
                self.store(d, r);
            }
            Jz { c, target } => {
                let x = self.load(c);
                let zero = self.against_zero(FloatCC::Equal, x);
                let (to, next) = (self.block(target as usize)?, self.block(p + 1)?);
                self.b.ins().brif(zero, to, &[], next, &[]);
                return Some(false);
            }
            Jmp { target } => {
                let to = self.block(target as usize)?;
                self.b.ins().jump(to, &[]);
                return Some(false);
            }
            Initial { d } => self.flag(d, FLAG_INITIAL, 0),
            Terminal { d } => self.flag(d, FLAG_TERMINAL, 0),
            Sample { d, id } => self.flag(d, FLAG_SAMPLE, id),
            Delay { d, a, b, id } => {
                let x = self.load(a);
                let tau = self.load(b);
                let id = self.b.ins().iconst(types::I32, i64::from(id));
                let r = self.helper(
                    delay as unsafe extern "C" fn(_, _, _, _) -> _ as usize,
                    self.sigs.delay,
                    &[self.machine, id, x, tau],
                );
                self.store(d, r);
            }
            Homotopy { d, a, b } => {
                let x = self.load(a);
                let y = self.load(b);
                let r = self.helper(
                    homotopy as unsafe extern "C" fn(_, _, _) -> _ as usize,
                    self.sigs.homotopy,
                    &[self.machine, x, y],
                );
                self.store(d, r);
            }
            Generic { .. } => {
                let pc = self.b.ins().iconst(types::I32, i64::try_from(p).ok()?);
                self.b.ins().return_(&[pc]);
                return Some(false);
            }
        }
        Some(true)
    }

    /// Continue in `block` (falling through into it when the current block is `open`);
    /// nothing is known there about the memory.
    fn enter(&mut self, block: Block, open: bool) {
        if open {
            self.b.ins().jump(block, &[]);
        }
        self.b.switch_to_block(block);
        self.known.clear();
    }

    fn block(&self, pc: usize) -> Option<Block> {
        self.blocks.get(pc).copied().flatten()
    }

    /// Byte offset of a memory cell (checked to fit by [`offsets_fit`]).
    fn offset(slot: u32) -> i32 {
        (u64::from(slot) * 8) as i32
    }

    fn load(&mut self, slot: u32) -> Value {
        if let Some(&v) = self.known.get(&slot) {
            return v;
        }
        let v = self.b.ins().load(
            types::F64,
            MemFlagsData::trusted(),
            self.mem,
            Self::offset(slot),
        );
        self.known.insert(slot, v);
        v
    }

    fn store(&mut self, slot: u32, v: Value) {
        self.b
            .ins()
            .store(MemFlagsData::trusted(), v, self.mem, Self::offset(slot));
        self.known.insert(slot, v);
    }

    fn binary(
        &mut self,
        d: u32,
        a: u32,
        b: u32,
        op: impl FnOnce(&mut FunctionBuilder<'a>, Value, Value) -> Value,
    ) {
        let x = self.load(a);
        let y = self.load(b);
        let r = op(&mut self.b, x, y);
        self.store(d, r);
    }

    fn against_zero(&mut self, cc: FloatCC, x: Value) -> Value {
        let z = self.b.ins().f64const(0.0);
        self.b.ins().fcmp(cc, x, z)
    }

    fn truth(&mut self, c: Value) -> Value {
        let one = self.b.ins().f64const(1.0);
        let zero = self.b.ins().f64const(0.0);
        self.b.ins().select(c, one, zero)
    }

    fn helper(&mut self, f: usize, sig: SigRef, args: &[Value]) -> Value {
        let p = self.b.ins().iconst(self.ptr, f as i64);
        let call = self.b.ins().call_indirect(sig, p, args);
        self.b.inst_results(call)[0]
    }

    fn flag(&mut self, d: u32, which: i64, id: u32) {
        let which = self.b.ins().iconst(types::I32, which);
        let id = self.b.ins().iconst(types::I32, i64::from(id));
        let r = self.helper(
            flag as unsafe extern "C" fn(_, _, _) -> _ as usize,
            self.sigs.flag,
            &[self.machine, which, id],
        );
        self.store(d, r);
    }
}

/// The comparison of a relation, as Rust's operators on `f64` compare.
fn float_cc(op: RelOp) -> FloatCC {
    match op {
        RelOp::Lt => FloatCC::LessThan,
        RelOp::Le => FloatCC::LessThanOrEqual,
        RelOp::Gt => FloatCC::GreaterThan,
        RelOp::Ge => FloatCC::GreaterThanOrEqual,
        RelOp::Eq => FloatCC::Equal,
        RelOp::Ne => FloatCC::NotEqual,
    }
}

const RELATIONS: [RelOp; 6] = [
    RelOp::Lt,
    RelOp::Le,
    RelOp::Gt,
    RelOp::Ge,
    RelOp::Eq,
    RelOp::Ne,
];

fn rel_code(op: RelOp) -> i64 {
    RELATIONS.iter().position(|&r| r == op).unwrap_or(0) as i64
}

const FLAG_INITIAL: i64 = 0;
const FLAG_TERMINAL: i64 = 1;
const FLAG_SAMPLE: i64 = 2;

/// `RelZc`: the frozen value in continuous mode, evaluated live in event mode.
///
/// # Safety
/// `m` is the machine the native tape was started on; the tape holds no reference into it.
unsafe extern "C" fn relation(m: *mut Machine, op: u32, zc: u32, a: f64, b: f64) -> f64 {
    // SAFETY: see the function's contract.
    let m = unsafe { &mut *m };
    let z = zc as usize;
    if m.event_mode {
        let op = RELATIONS[op as usize];
        let no_hysteresis = m.initial || m.states_changed;
        tape::live_event_relation(op, a, b, &mut m.rel[z], m.hysteresis[z], no_hysteresis);
        m.rel_touched[z] = true;
    }
    tape::b2f(m.rel[z])
}

/// `initial()`, `terminal()`, `sample(...)` number `id`.
///
/// # Safety
/// As [`relation`].
unsafe extern "C" fn flag(m: *mut Machine, which: u32, id: u32) -> f64 {
    // SAFETY: see the function's contract.
    let m = unsafe { &*m };
    tape::b2f(match i64::from(which) {
        FLAG_INITIAL => m.initial,
        FLAG_TERMINAL => m.terminal,
        _ => tape::sample_due(&m.sample_active, id),
    })
}

/// `delay(x, tau)` through history `id`.
///
/// # Safety
/// As [`relation`].
unsafe extern "C" fn delay(m: *mut Machine, id: u32, x: f64, tau: f64) -> f64 {
    // SAFETY: see the function's contract.
    let m = unsafe { &mut *m };
    let now = m.time();
    tape::delayed(&mut m.delays, id, now, x, tau, m.event_mode)
}

/// `homotopy(actual, simplified)` at the machine's homotopy parameter.
///
/// # Safety
/// As [`relation`].
unsafe extern "C" fn homotopy(m: *mut Machine, actual: f64, simplified: f64) -> f64 {
    // SAFETY: see the function's contract.
    let m = unsafe { &*m };
    tape::homotopy(m.homotopy_lambda, actual, simplified)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins::Math2;
    use crate::machine::DelayLine;

    /// A small deterministic generator (xorshift), so failures reproduce.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u32 {
            (self.next() % n) as u32
        }
    }

    const MEM: u32 = 48;
    const N_SLOTS: usize = 8;

    /// A machine whose memory holds awkward values: zeros of both signs, NaN, infinities,
    /// integers, tiny and large numbers.
    fn machine(rng: &mut Rng) -> Machine {
        let special = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            2.5,
            f64::NAN,
            f64::INFINITY,
            -f64::INFINITY,
            1e-300,
            3e300,
        ];
        let mem = (0..MEM)
            .map(|k| {
                if k % 3 == 0 {
                    special[rng.below(special.len() as u64) as usize]
                } else {
                    (rng.next() % 2000) as f64 / 100.0 - 10.0
                }
            })
            .collect();
        Machine {
            mem,
            n: N_SLOTS,
            rel: (0..4).map(|_| rng.below(2) == 1).collect(),
            rel_touched: vec![false; 4],
            hysteresis: vec![0.0, 1e-3, 0.0, 0.5],
            homotopy_lambda: 0.25,
            sample_active: vec![true, false],
            delays: vec![DelayLine::default(); 2],
            ..Machine::default()
        }
    }

    /// A random tape of every kind of instruction, with forward jumps and generic calls.
    fn tape(rng: &mut Rng, len: usize) -> Vec<Instr> {
        let ops1 = [
            Math1::Abs,
            Math1::Sign,
            Math1::Sqrt,
            Math1::Sin,
            Math1::Cos,
            Math1::Tan,
            Math1::Asin,
            Math1::Acos,
            Math1::Atan,
            Math1::Sinh,
            Math1::Cosh,
            Math1::Tanh,
            Math1::Exp,
            Math1::Log,
            Math1::Log10,
            Math1::Ceil,
            Math1::Floor,
        ];
        let ops2 = [
            Math2::Atan2,
            Math2::Min,
            Math2::Max,
            Math2::Div,
            Math2::Mod,
            Math2::Rem,
            Math2::Pow,
        ];
        let time = 2 * N_SLOTS as u32;
        let mut code = Vec::with_capacity(len);
        for p in 0..len {
            let mut slot = || {
                let s = rng.below(u64::from(MEM));
                if s == time {
                    s + 1
                } else {
                    s
                }
            };
            let (d, a, b) = (slot(), slot(), slot());
            let op = RELATIONS[rng.below(6) as usize];
            let ahead = |rng: &mut Rng| (p + 1 + rng.below((len - p) as u64) as usize) as u32;
            code.push(match rng.below(22) {
                0 => Instr::Mov { d, a },
                1 => Instr::Add { d, a, b },
                2 => Instr::Sub { d, a, b },
                3 => Instr::Mul { d, a, b },
                4 => Instr::Div { d, a, b },
                5 => Instr::Sq { d, a },
                6 => Instr::Neg { d, a },
                7 => Instr::Not { d, a },
                8 => Instr::And { d, a, b },
                9 => Instr::Or { d, a, b },
                10 => Instr::Rel { op, d, a, b },
                11 => Instr::RelZc {
                    op,
                    d,
                    a,
                    b,
                    zc: rng.below(4),
                },
                12 => Instr::M1 {
                    f: ops1[rng.below(ops1.len() as u64) as usize],
                    d,
                    a,
                },
                13 => Instr::M2 {
                    f: ops2[rng.below(ops2.len() as u64) as usize],
                    d,
                    a,
                    b,
                },
                14 | 15 => Instr::Jz {
                    c: a,
                    target: ahead(rng),
                },
                16 => Instr::Jmp { target: ahead(rng) },
                17 => Instr::Initial { d },
                18 => Instr::Sample {
                    d,
                    id: rng.below(2),
                },
                19 => Instr::Delay {
                    d,
                    a,
                    b,
                    id: rng.below(2),
                },
                20 => Instr::Homotopy { d, a, b },
                _ => Instr::Generic { d, call: 0 },
            });
        }
        code
    }

    /// Run a tape to its end, standing in for the function interpreter at generic calls
    /// (the call's result is its program counter).
    fn run(code: &[Instr], m: &mut Machine, native: Option<&NativeTape>) {
        let mut pc = 0;
        loop {
            // SAFETY: every operand is below `MEM`, the memory's size.
            let stop = match native {
                Some(n) => unsafe { n.run(pc, m) },
                None => unsafe { tape::run_until_call(code, pc, m) },
            };
            match stop {
                Stop::Done => return,
                Stop::Call(p) => {
                    if let Instr::Generic { d, .. } = code[p] {
                        m.mem[d as usize] = p as f64;
                    }
                    pc = p + 1;
                }
            }
        }
    }

    fn same_bits(a: &[f64], b: &[f64]) -> bool {
        a.iter()
            .zip(b)
            .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
    }

    /// Native tapes compute what the interpreter computes, bit for bit, in continuous and
    /// event mode, through jumps, re-entries after generic calls and machine helpers.
    #[test]
    fn native_tapes_match_the_interpreter_bit_for_bit() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for case in 0..300 {
            let len = 1 + rng.below(60) as usize;
            let code = tape(&mut rng, len);
            let Some(native) = compile(&code) else {
                return; // no Cranelift backend on this host
            };
            let mut start = machine(&mut rng);
            start.event_mode = case % 2 == 0;
            start.initial = case % 5 == 0;
            start.mem[2 * N_SLOTS] = case as f64 * 0.01;
            let mut interpreted = start.clone();
            let mut compiled = start;
            run(&code, &mut interpreted, None);
            run(&code, &mut compiled, Some(&native));
            assert!(
                same_bits(&interpreted.mem, &compiled.mem),
                "case {case}: {code:?}\ninterpreted {:?}\nnative      {:?}",
                interpreted.mem,
                compiled.mem
            );
            assert_eq!(interpreted.rel, compiled.rel, "case {case}");
            assert_eq!(interpreted.rel_touched, compiled.rel_touched, "case {case}");
        }
    }

    /// A tape is translated once it has run about as often as its translation costs.
    #[test]
    fn tapes_are_translated_once_they_run_often() {
        let code = vec![Instr::Add { d: 0, a: 1, b: 2 }];
        let slot = TapeSlot {
            enabled: true,
            ..TapeSlot::default()
        };
        assert!(runs_before_compiling(1) > runs_before_compiling(1000));
        for _ in 1..runs_before_compiling(code.len()) {
            assert!(slot.get(&code).is_none());
        }
        let compiled = slot.get(&code).is_some();
        // hosts without a Cranelift backend never get native code
        assert_eq!(compiled, crate::jit::new_module().is_some());
    }
}
