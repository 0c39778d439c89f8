//! Expression tapes: `PExpr` trees compiled into flat register-machine code.
//!
//! Every operand is an index into `Machine::mem` (slot values, `pre` values, time, constants,
//! registers; see `machine.rs`), so a variable read costs nothing and an `Assign` block writes
//! its result straight into the variable's slot. Consecutive assignments share one tape.
//! Scratch registers are reused by all expressions; they are numbered from [`TEMP_BASE`]
//! during compilation and moved behind the permanent registers by [`Instr::remap`] once the
//! whole program is compiled.
//!
//! Calls the tape cannot express with scalar operations (user functions, array built-ins,
//! strings) become [`Instr::Generic`]: the scalar arguments are computed into registers by
//! the tape, then the call runs in the function interpreter.

use crate::builtins::{Math1, Math2};
use crate::func::{FExpr, Ty};
use crate::machine::Machine;
use crate::value::Value;
use moss_symbolic::program::{ArithOp, PExpr, RelOp};
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeSet;

/// A tape: its instructions, and its native code once it has run often enough
/// (`tape_jit.rs`). Reads and grows like the vector of its instructions.
#[derive(Debug)]
pub struct Tape {
    code: Vec<Instr>,
    native: crate::tape_jit::TapeSlot,
}

impl Tape {
    /// The native code, when the tape has run often enough to be translated.
    pub fn native(&self) -> Option<&crate::tape_jit::NativeTape> {
        self.native.get(&self.code)
    }
}

impl Default for Tape {
    fn default() -> Tape {
        Tape::from(Vec::new())
    }
}

impl From<Vec<Instr>> for Tape {
    fn from(code: Vec<Instr>) -> Tape {
        Tape {
            code,
            native: crate::tape_jit::TapeSlot::new(),
        }
    }
}

impl std::ops::Deref for Tape {
    type Target = Vec<Instr>;
    fn deref(&self) -> &Vec<Instr> {
        &self.code
    }
}

impl std::ops::DerefMut for Tape {
    fn deref_mut(&mut self) -> &mut Vec<Instr> {
        &mut self.code
    }
}

/// Pseudo-function of the causal program selecting output `i` of a multi-output call.
pub const OUTPUT_SELECT: &str = "$output";

/// Operands at or above this index are scratch registers until remapped.
pub const TEMP_BASE: u32 = 1 << 30;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Instr {
    Mov {
        d: u32,
        a: u32,
    },
    Add {
        d: u32,
        a: u32,
        b: u32,
    },
    Sub {
        d: u32,
        a: u32,
        b: u32,
    },
    Mul {
        d: u32,
        a: u32,
        b: u32,
    },
    Div {
        d: u32,
        a: u32,
        b: u32,
    },
    Sq {
        d: u32,
        a: u32,
    },
    Neg {
        d: u32,
        a: u32,
    },
    Not {
        d: u32,
        a: u32,
    },
    And {
        d: u32,
        a: u32,
        b: u32,
    },
    Or {
        d: u32,
        a: u32,
        b: u32,
    },
    /// Relation evaluated live (`noEvent`).
    Rel {
        op: RelOp,
        d: u32,
        a: u32,
        b: u32,
    },
    /// Event-generating relation: live in event mode (updates the frozen value), frozen in
    /// continuous mode.
    RelZc {
        op: RelOp,
        d: u32,
        a: u32,
        b: u32,
        zc: u32,
    },
    M1 {
        f: Math1,
        d: u32,
        a: u32,
    },
    M2 {
        f: Math2,
        d: u32,
        a: u32,
        b: u32,
    },
    /// Jump to `target` when `mem[c]` is zero (false).
    Jz {
        c: u32,
        target: u32,
    },
    Jmp {
        target: u32,
    },
    Initial {
        d: u32,
    },
    Terminal {
        d: u32,
    },
    Sample {
        d: u32,
        id: u32,
    },
    /// `mem[d] := delay(mem[a], mem[b])` through the history buffer `delays[id]`.
    Delay {
        d: u32,
        a: u32,
        b: u32,
        id: u32,
    },
    /// `mem[d] := homotopy(actual = mem[a], simplified = mem[b])` at the machine's
    /// homotopy parameter (`mem[a]` exactly, outside homotopy-based initialization).
    Homotopy {
        d: u32,
        a: u32,
        b: u32,
    },
    /// `mem[d] := generic[call]` evaluated by the function interpreter.
    Generic {
        d: u32,
        call: u32,
    },
}

impl Instr {
    /// Apply `f` to every memory operand (not to jump targets or table indices).
    pub fn remap(&mut self, f: &impl Fn(u32) -> u32) {
        use Instr::*;
        match self {
            Mov { d, a } | Sq { d, a } | Neg { d, a } | Not { d, a } | M1 { d, a, .. } => {
                *d = f(*d);
                *a = f(*a);
            }
            Add { d, a, b }
            | Sub { d, a, b }
            | Mul { d, a, b }
            | Div { d, a, b }
            | And { d, a, b }
            | Or { d, a, b }
            | Rel { d, a, b, .. }
            | RelZc { d, a, b, .. }
            | M2 { d, a, b, .. }
            | Homotopy { d, a, b }
            | Delay { d, a, b, .. } => {
                *d = f(*d);
                *a = f(*a);
                *b = f(*b);
            }
            Jz { c, .. } => *c = f(*c),
            Jmp { .. } => {}
            Initial { d } | Terminal { d } | Sample { d, .. } | Generic { d, .. } => *d = f(*d),
        }
    }
}

#[inline(always)]
pub fn compare(op: RelOp, a: f64, b: f64) -> bool {
    match op {
        RelOp::Lt => a < b,
        RelOp::Le => a <= b,
        RelOp::Gt => a > b,
        RelOp::Ge => a >= b,
        RelOp::Eq => a == b,
        RelOp::Ne => a != b,
    }
}

/// Shift added to `g = lhs - rhs` of an event-generating relation so that it keeps its
/// previous value `prev` until `g` has moved `eps` past zero to the other side.
///
/// Why: at a mode switch the relation's operands often end up equal up to rounding (a
/// friction element at its breakaway torque, a supply at the corner of its cv/cc curves, a
/// lag whose output approaches its input asymptotically); without hysteresis the sign of
/// that rounding noise decides the mode, and the event iteration or the integrator flips it
/// back and forth forever.
#[inline(always)]
pub fn hysteresis_shift(op: RelOp, prev: bool, eps: f64) -> f64 {
    let true_side_positive = matches!(op, RelOp::Gt | RelOp::Ge);
    if true_side_positive == prev {
        eps
    } else {
        -eps
    }
}

/// `g <op> 0` for an event-generating relation whose previous value is `prev`, with the
/// hysteresis `eps` (0: plain comparison).
#[inline(always)]
pub fn compare_with_hysteresis(op: RelOp, g: f64, prev: bool, eps: f64) -> bool {
    if eps == 0.0 {
        compare(op, g, 0.0)
    } else {
        compare(op, g + hysteresis_shift(op, prev, eps), 0.0)
    }
}

/// `homotopy(actual, simplified)` at `lambda`: the simplified expression at 0, the actual one
/// (exactly, even when the simplified one is not finite) at 1, the convex blend in between.
#[inline(always)]
pub fn homotopy(lambda: f64, actual: f64, simplified: f64) -> f64 {
    if lambda == 1.0 {
        actual
    } else if lambda == 0.0 {
        simplified
    } else {
        lambda * actual + (1.0 - lambda) * simplified
    }
}

/// An event-generating relation evaluated live (event mode): `rel` (its frozen value)
/// becomes `a <op> b`, with the relation's hysteresis `eps` around its previous value
/// unless `no_hysteresis` (initialization, or right after a reinit: a state put on a
/// boundary on purpose, a mass placed at its stop, is exactly there, not noise around it).
#[inline(always)]
pub fn live_event_relation(
    op: RelOp,
    a: f64,
    b: f64,
    rel: &mut bool,
    eps: f64,
    no_hysteresis: bool,
) {
    let eps = if no_hysteresis { 0.0 } else { eps };
    *rel = if eps == 0.0 {
        compare(op, a, b)
    } else {
        compare_with_hysteresis(op, a - b, *rel, eps)
    };
}

/// `sample(...)` number `id` is due at the current instant.
#[inline(always)]
pub fn sample_due(sample_active: &[bool], id: u32) -> bool {
    sample_active.get(id as usize).copied().unwrap_or(false)
}

/// `delay(x, tau)` through history `id` at time `now`.
#[inline(always)]
pub fn delayed(
    delays: &mut [crate::machine::DelayLine],
    id: u32,
    now: f64,
    x: f64,
    tau: f64,
    event_mode: bool,
) -> f64 {
    match delays.get_mut(id as usize) {
        Some(line) => line.value(now, x, tau, event_mode),
        None => x,
    }
}

#[inline(always)]
pub fn b2f(b: bool) -> f64 {
    if b {
        1.0
    } else {
        0.0
    }
}

/// Why [`run_until_call`] stopped.
pub enum Stop {
    Done,
    /// A [`Instr::Generic`] at this pc must be executed by the caller.
    Call(usize),
}

/// Execute `code` from `pc` until the end or the next generic call. This is the hot loop:
/// no allocation, no hashing, one `match` per instruction, no bounds checks on operands.
///
/// # Safety
/// Every memory operand of `code` must be below `m.mem.len()` and every jump target at most
/// `code.len()`: true for tapes produced by `compile_program` (it checks this with
/// [`code_operands_in_bounds`]) run on a machine whose memory has the compiled size.
pub unsafe fn run_until_call(code: &[Instr], mut pc: usize, m: &mut Machine) -> Stop {
    let Machine {
        mem,
        rel,
        rel_touched,
        hysteresis,
        homotopy_lambda,
        event_mode,
        initial,
        states_changed,
        terminal,
        sample_active,
        delays,
        n,
        ..
    } = m;
    let time_index = 2 * *n;
    let mem: &mut [f64] = mem;
    debug_assert!(code_operands_in_bounds(code, mem.len()));
    let base = mem.as_mut_ptr();
    // SAFETY: operands are in bounds (the caller's contract, see above).
    macro_rules! m {
        ($i:expr) => {
            unsafe { &mut *base.add($i as usize) }
        };
    }
    let event_mode = *event_mode;
    while let Some(ins) = code.get(pc) {
        pc += 1;
        match *ins {
            Instr::Mov { d, a } => *m!(d) = *m!(a),
            Instr::Add { d, a, b } => *m!(d) = *m!(a) + *m!(b),
            Instr::Sub { d, a, b } => *m!(d) = *m!(a) - *m!(b),
            Instr::Mul { d, a, b } => *m!(d) = *m!(a) * *m!(b),
            Instr::Div { d, a, b } => *m!(d) = *m!(a) / *m!(b),
            Instr::Sq { d, a } => {
                let x = *m!(a);
                *m!(d) = x * x
            }
            Instr::Neg { d, a } => *m!(d) = -*m!(a),
            Instr::Not { d, a } => *m!(d) = b2f(*m!(a) == 0.0),
            Instr::And { d, a, b } => *m!(d) = b2f(*m!(a) != 0.0 && *m!(b) != 0.0),
            Instr::Or { d, a, b } => *m!(d) = b2f(*m!(a) != 0.0 || *m!(b) != 0.0),
            Instr::Rel { op, d, a, b } => *m!(d) = b2f(compare(op, *m!(a), *m!(b))),
            Instr::RelZc { op, d, a, b, zc } => {
                let v = if event_mode {
                    let no_hysteresis = *initial || *states_changed;
                    let z = zc as usize;
                    let eps = hysteresis[z];
                    live_event_relation(op, *m!(a), *m!(b), &mut rel[z], eps, no_hysteresis);
                    rel_touched[z] = true;
                    rel[z]
                } else {
                    rel[zc as usize]
                };
                *m!(d) = b2f(v)
            }
            Instr::M1 { f, d, a } => *m!(d) = f.apply(*m!(a)),
            Instr::M2 { f, d, a, b } => *m!(d) = f.apply(*m!(a), *m!(b)),
            Instr::Jz { c, target } => {
                if *m!(c) == 0.0 {
                    pc = target as usize
                }
            }
            Instr::Jmp { target } => pc = target as usize,
            Instr::Homotopy { d, a, b } => *m!(d) = homotopy(*homotopy_lambda, *m!(a), *m!(b)),
            Instr::Initial { d } => *m!(d) = b2f(*initial),
            Instr::Terminal { d } => *m!(d) = b2f(*terminal),
            Instr::Sample { d, id } => *m!(d) = b2f(sample_due(sample_active, id)),
            Instr::Delay { d, a, b, id } => {
                let now = *m!(time_index);
                *m!(d) = delayed(delays, id, now, *m!(a), *m!(b), event_mode)
            }
            Instr::Generic { .. } => return Stop::Call(pc - 1),
        }
    }
    Stop::Done
}

/// True when every memory operand of `code` is below `mem_len` and every jump stays inside.
pub fn code_operands_in_bounds(code: &[Instr], mem_len: usize) -> bool {
    let ok = std::cell::Cell::new(true);
    for ins in code {
        let mut i = *ins;
        i.remap(&|op| {
            if op as usize >= mem_len {
                ok.set(false);
            }
            op
        });
        if let Instr::Jz { target, .. } | Instr::Jmp { target } = i {
            if target as usize > code.len() {
                ok.set(false);
            }
        }
    }
    ok.get()
}

/// Compiles `PExpr`s of one program into tapes; owns the constant pool, the permanent
/// registers and the table of generic calls.
pub struct TapeCompiler<'a> {
    n: u32,
    n_zc: u32,
    consts: HashMap<u64, u32>,
    /// Initial contents of constant registers.
    pub static_init: Vec<(u32, f64)>,
    next_static: u32,
    next_temp: u32,
    pub max_temp: u32,
    pub generic: Vec<FExpr>,
    /// The delayed expressions, one history buffer each (occurrences of `delay` with the
    /// same expression share it): see [`crate::compile::DelayRecorder`].
    pub delay_args: Vec<PExpr>,
    delay_ids: HashMap<String, u32>,
    fn_index: &'a HashMap<String, u32>,
    pub called: BTreeSet<u32>,
    var_ty: &'a [Ty],
    /// A `homotopy` call was compiled (initialization may follow its path).
    pub has_homotopy: bool,
}

pub type CResult<T> = Result<T, String>;

impl<'a> TapeCompiler<'a> {
    pub fn new(
        n: usize,
        n_zero_crossings: usize,
        var_ty: &'a [Ty],
        fn_index: &'a HashMap<String, u32>,
    ) -> TapeCompiler<'a> {
        TapeCompiler {
            n: n as u32,
            n_zc: n_zero_crossings as u32,
            consts: HashMap::default(),
            static_init: vec![],
            next_static: 2 * n as u32 + 1,
            next_temp: 0,
            max_temp: 0,
            generic: vec![],
            delay_args: vec![],
            delay_ids: HashMap::default(),
            has_homotopy: false,
            fn_index,
            called: BTreeSet::new(),
            var_ty,
        }
    }

    /// First index after the permanent registers: where scratch registers start.
    pub fn static_end(&self) -> u32 {
        self.next_static
    }

    pub fn time_operand(&self) -> u32 {
        2 * self.n
    }

    pub fn constant(&mut self, x: f64) -> u32 {
        if let Some(&r) = self.consts.get(&x.to_bits()) {
            return r;
        }
        let r = self.alloc_static();
        self.static_init.push((r, x));
        self.consts.insert(x.to_bits(), r);
        r
    }

    /// A register owned by one block (matrix entries, residuals): never reused.
    pub fn alloc_static(&mut self) -> u32 {
        let r = self.next_static;
        self.next_static += 1;
        r
    }

    fn alloc_temp(&mut self) -> u32 {
        let r = TEMP_BASE + self.next_temp;
        self.next_temp += 1;
        self.max_temp = self.max_temp.max(self.next_temp);
        r
    }

    /// Compile `e` so that its value ends up in `dst`.
    pub fn compile_into(&mut self, e: &PExpr, dst: u32, code: &mut Vec<Instr>) -> CResult<()> {
        let mark = self.next_temp;
        let r = self.expr(e, Some(dst), code)?;
        if r != dst {
            code.push(Instr::Mov { d: dst, a: r });
        }
        self.next_temp = mark;
        Ok(())
    }

    /// Compile `e` into a fresh permanent register and return it.
    pub fn compile_to_static(&mut self, e: &PExpr, code: &mut Vec<Instr>) -> CResult<u32> {
        let r = self.alloc_static();
        self.compile_into(e, r, code)?;
        Ok(r)
    }

    fn target(&mut self, dst: Option<u32>) -> u32 {
        dst.unwrap_or_else(|| self.alloc_temp())
    }

    /// Returns the operand holding the value of `e`. With `dst`, compound expressions write
    /// into `dst` (leaves may still return their own operand).
    fn expr(&mut self, e: &PExpr, dst: Option<u32>, code: &mut Vec<Instr>) -> CResult<u32> {
        let mark = self.next_temp;
        Ok(match e {
            PExpr::Const(x) => self.constant(*x),
            PExpr::Var(v) => self.slot(*v)?,
            PExpr::Pre(v) => self.slot(*v)? + self.n,
            PExpr::Time => self.time_operand(),
            PExpr::Str(s) => {
                return Err(format!(
                    "the string \"{s}\" is used where a number is expected"
                ))
            }
            PExpr::Neg(a) => self.unary(a, dst, code, |d, a| Instr::Neg { d, a })?,
            PExpr::Not(a) => self.unary(a, dst, code, |d, a| Instr::Not { d, a })?,
            PExpr::Arith(ArithOp::Pow, a, b) if matches!(**b, PExpr::Const(c) if c == 2.0) => {
                self.unary(a, dst, code, |d, a| Instr::Sq { d, a })?
            }
            PExpr::Arith(op, a, b) => {
                let op = *op;
                self.binary(a, b, dst, code, move |d, a, b| match op {
                    ArithOp::Add => Instr::Add { d, a, b },
                    ArithOp::Sub => Instr::Sub { d, a, b },
                    ArithOp::Mul => Instr::Mul { d, a, b },
                    ArithOp::Div => Instr::Div { d, a, b },
                    ArithOp::Pow => Instr::M2 {
                        f: Math2::Pow,
                        d,
                        a,
                        b,
                    },
                })?
            }
            PExpr::And(a, b) => self.binary(a, b, dst, code, |d, a, b| Instr::And { d, a, b })?,
            PExpr::Or(a, b) => self.binary(a, b, dst, code, |d, a, b| Instr::Or { d, a, b })?,
            PExpr::Rel { op, lhs, rhs, zc } => {
                let (op, zc) = (*op, *zc);
                if let Some(i) = zc.filter(|&i| i >= self.n_zc) {
                    return Err(format!(
                        "relation refers to zero crossing {i}, but the program has {}",
                        self.n_zc
                    ));
                }
                self.binary(lhs, rhs, dst, code, move |d, a, b| match zc {
                    Some(zc) => Instr::RelZc { op, d, a, b, zc },
                    None => Instr::Rel { op, d, a, b },
                })?
            }
            PExpr::If(c, a, b) => {
                let d = self.target(dst);
                let rc = self.expr(c, None, code)?;
                let jz = code.len();
                code.push(Instr::Jz { c: rc, target: 0 });
                self.expr_into(a, d, code)?;
                let jmp = code.len();
                code.push(Instr::Jmp { target: 0 });
                let else_pc = code.len() as u32;
                self.expr_into(b, d, code)?;
                let end_pc = code.len() as u32;
                code[jz] = Instr::Jz {
                    c: rc,
                    target: else_pc,
                };
                code[jmp] = Instr::Jmp { target: end_pc };
                // keep `d` alive for the caller if it is a scratch register
                self.next_temp = if dst.is_none() { mark + 1 } else { mark };
                return Ok(d);
            }
            PExpr::Call { func, args } => return self.call(func, args, dst, code),
            PExpr::Array(_) => {
                return Err("an array is used where a scalar is expected".into());
            }
            PExpr::Initial => {
                let d = self.target(dst);
                code.push(Instr::Initial { d });
                d
            }
            PExpr::Terminal => {
                let d = self.target(dst);
                code.push(Instr::Terminal { d });
                d
            }
            PExpr::Sample(id) => {
                let d = self.target(dst);
                code.push(Instr::Sample { d, id: *id });
                d
            }
        })
    }

    fn slot(&self, v: u32) -> CResult<u32> {
        if v < self.n {
            Ok(v)
        } else {
            Err(format!(
                "variable index {v} out of range (the program has {} variables)",
                self.n
            ))
        }
    }

    fn expr_into(&mut self, e: &PExpr, d: u32, code: &mut Vec<Instr>) -> CResult<()> {
        let mark = self.next_temp;
        let r = self.expr(e, Some(d), code)?;
        if r != d {
            code.push(Instr::Mov { d, a: r });
        }
        self.next_temp = mark;
        Ok(())
    }

    fn unary(
        &mut self,
        a: &PExpr,
        dst: Option<u32>,
        code: &mut Vec<Instr>,
        mk: impl Fn(u32, u32) -> Instr,
    ) -> CResult<u32> {
        let mark = self.next_temp;
        let ra = self.expr(a, None, code)?;
        self.next_temp = mark;
        let d = self.target(dst);
        code.push(mk(d, ra));
        Ok(d)
    }

    fn binary(
        &mut self,
        a: &PExpr,
        b: &PExpr,
        dst: Option<u32>,
        code: &mut Vec<Instr>,
        mk: impl Fn(u32, u32, u32) -> Instr,
    ) -> CResult<u32> {
        let mark = self.next_temp;
        let ra = self.expr(a, None, code)?;
        let rb = self.expr(b, None, code)?;
        self.next_temp = mark;
        let d = self.target(dst);
        code.push(mk(d, ra, rb));
        Ok(d)
    }

    fn scalar_args(&self, args: &[PExpr]) -> bool {
        !args
            .iter()
            .any(|a| matches!(a, PExpr::Array(_) | PExpr::Str(_)))
    }

    fn call(
        &mut self,
        func: &str,
        args: &[PExpr],
        dst: Option<u32>,
        code: &mut Vec<Instr>,
    ) -> CResult<u32> {
        if func == OUTPUT_SELECT {
            let call = self.output_select(args, code)?;
            let d = self.target(dst);
            let idx = self.generic.len() as u32;
            self.generic.push(call);
            code.push(Instr::Generic { d, call: idx });
            return Ok(d);
        }
        let scalar = self.scalar_args(args);
        let user = self.fn_index.contains_key(func);
        if !user {
            match (func, args) {
                ("homotopy", [a, b]) if scalar => {
                    self.has_homotopy = true;
                    return self.binary(a, b, dst, code, |d, a, b| Instr::Homotopy { d, a, b });
                }
                ("noEvent" | "homotopy" | "Real" | "Boolean", [a, ..]) if scalar => {
                    return self.expr(a, dst, code)
                }
                // `Integer(e)` of an enumeration is its index; floor keeps whole numbers
                // unchanged and truncates Reals like the value-level conversion
                ("Integer", [a]) if scalar => {
                    let f = Math1::Floor;
                    return self.unary(a, dst, code, move |d, a| Instr::M1 { f, d, a });
                }
                ("smooth", [.., a]) if scalar => return self.expr(a, dst, code),
                // `delay(e, tau)` and `delay(e, tau, tauMax)`: the history of `e` is one
                // buffer, whichever occurrence reads it
                ("delay", [a, tau] | [a, tau, _]) if scalar => {
                    let key = format!("{a:?}");
                    let id = match self.delay_ids.get(&key) {
                        Some(&id) => id,
                        None => {
                            let id = self.delay_args.len() as u32;
                            self.delay_args.push(a.clone());
                            self.delay_ids.insert(key, id);
                            id
                        }
                    };
                    return self.binary(a, tau, dst, code, move |d, a, b| Instr::Delay {
                        d,
                        a,
                        b,
                        id,
                    });
                }
                ("initial", []) => return self.expr(&PExpr::Initial, dst, code),
                ("terminal", []) => return self.expr(&PExpr::Terminal, dst, code),
                ("pre", [PExpr::Var(v)]) => return self.expr(&PExpr::Pre(*v), dst, code),
                ("edge", [PExpr::Var(v)]) => {
                    let e = PExpr::And(
                        Box::new(PExpr::Var(*v)),
                        Box::new(PExpr::Not(Box::new(PExpr::Pre(*v)))),
                    );
                    return self.expr(&e, dst, code);
                }
                ("change", [PExpr::Var(v)]) => {
                    let e = PExpr::Rel {
                        op: RelOp::Ne,
                        lhs: Box::new(PExpr::Var(*v)),
                        rhs: Box::new(PExpr::Pre(*v)),
                        zc: None,
                    };
                    return self.expr(&e, dst, code);
                }
                (
                    "der" | "sample" | "delay" | "cardinality" | "reinit" | "assert" | "terminate"
                    | "pre" | "edge" | "change",
                    _,
                ) => {
                    return Err(format!(
                        "`{func}` cannot be executed here: it should have been removed by the \
                         symbolic stage"
                    ))
                }
                _ => {}
            }
            if scalar {
                if let (Some(f), [a]) = (Math1::from_name(func), args) {
                    return self.unary(a, dst, code, move |d, a| Instr::M1 { f, d, a });
                }
                // div, mod and rem report a zero divisor (spec 3.7.1), which the
                // floating-point instruction cannot: they run as generic calls
                let checked = matches!(func, "div" | "mod" | "rem");
                if let (Some(f), [a, b], false) = (Math2::from_name(func), args, checked) {
                    return self.binary(a, b, dst, code, move |d, a, b| Instr::M2 { f, d, a, b });
                }
            }
            // reductions over an array literal unroll into scalar operations
            if let ("sum" | "product" | "min" | "max", [PExpr::Array(elems)]) = (func, args) {
                if !elems.is_empty() && self.scalar_args(elems) {
                    return self.reduce(func, elems, dst, code);
                }
            }
            if crate::builtins::Builtin::from_name(func).is_none() {
                return Err(format!(
                    "cannot call `{func}`: neither a supported built-in nor a function of the model"
                ));
            }
        }
        let call = self.generic_call(func, args, code)?;
        let d = self.target(dst);
        let idx = self.generic.len() as u32;
        self.generic.push(call);
        code.push(Instr::Generic { d, call: idx });
        Ok(d)
    }

    /// `$output(i, f(args))`: output `i` (0-based) of a user function call.
    fn output_select(&mut self, args: &[PExpr], code: &mut Vec<Instr>) -> CResult<FExpr> {
        if let [PExpr::Const(i), PExpr::Call { func, args }] = args {
            if let FExpr::Call(f, fargs, _) = self.generic_call(func, args, code)? {
                if *i >= 0.0 && i.fract() == 0.0 {
                    return Ok(FExpr::Call(f, fargs, *i as usize));
                }
            }
        }
        Err(format!(
            "`{OUTPUT_SELECT}` needs an output index and a call of a user function"
        ))
    }

    fn reduce(
        &mut self,
        func: &str,
        elems: &[PExpr],
        dst: Option<u32>,
        code: &mut Vec<Instr>,
    ) -> CResult<u32> {
        let mut acc = elems[0].clone();
        for e in &elems[1..] {
            acc = match func {
                "sum" => PExpr::Arith(ArithOp::Add, Box::new(acc), Box::new(e.clone())),
                "product" => PExpr::Arith(ArithOp::Mul, Box::new(acc), Box::new(e.clone())),
                _ => PExpr::Call {
                    func: func.to_string(),
                    args: vec![acc, e.clone()],
                },
            };
        }
        self.expr(&acc, dst, code)
    }

    /// Build the interpreter-side expression of a call; scalar arguments are computed by the
    /// tape into permanent registers.
    pub fn generic_call(
        &mut self,
        func: &str,
        args: &[PExpr],
        code: &mut Vec<Instr>,
    ) -> CResult<FExpr> {
        let fargs = args
            .iter()
            .map(|a| self.generic_arg(a, code))
            .collect::<CResult<Vec<_>>>()?;
        if let Some(&f) = self.fn_index.get(func) {
            self.called.insert(f);
            return Ok(FExpr::Call(f, fargs, 0));
        }
        match crate::builtins::Builtin::from_name(func) {
            Some(b) => Ok(FExpr::Builtin(b, fargs)),
            None => Err(format!(
                "cannot call `{func}`: neither a supported built-in nor a function of the model"
            )),
        }
    }

    fn generic_arg(&mut self, a: &PExpr, code: &mut Vec<Instr>) -> CResult<FExpr> {
        Ok(match a {
            PExpr::Const(x) => FExpr::Const(Value::Real(*x)),
            PExpr::Str(s) => FExpr::Const(Value::Str(s.clone())),
            PExpr::Var(v) => {
                let v = self.slot(*v)?;
                FExpr::Slot(v, self.var_ty[v as usize])
            }
            PExpr::Array(elems) => {
                let items = elems
                    .iter()
                    .map(|e| self.generic_arg(e, code))
                    .collect::<CResult<Vec<_>>>()?;
                // constant arrays (tables) are built once here, not at every call
                if items.iter().all(|i| matches!(i, FExpr::Const(_))) {
                    let values = items
                        .into_iter()
                        .filter_map(|i| match i {
                            FExpr::Const(v) => Some(v),
                            _ => None,
                        })
                        .collect();
                    FExpr::Const(crate::value::array_literal(values)?)
                } else {
                    flat_array(items)
                }
            }
            // an output of a call may be an array (a record's array field)
            PExpr::Call { func, args } if func == OUTPUT_SELECT => {
                self.output_select(args, code)?
            }
            // string concatenation (`"x = " + String(x)`) runs in the interpreter
            PExpr::Arith(ArithOp::Add, a, b) if is_string(a) || is_string(b) => FExpr::Bin(
                moss_frontend::flat::BinaryOp::Add,
                Box::new(self.generic_arg(a, code)?),
                Box::new(self.generic_arg(b, code)?),
            ),
            PExpr::Call { func, args } if !self.scalar_args(args) || func == "String" => {
                // nested calls on arrays/strings stay in the interpreter
                self.generic_call(func, args, code)?
            }
            scalar => FExpr::Mem(self.compile_to_static(scalar, code)?),
        })
    }
}

/// Is `e` String-valued (a literal, `String(...)`, or a concatenation of such)?
fn is_string(e: &PExpr) -> bool {
    match e {
        PExpr::Str(_) => true,
        PExpr::Call { func, .. } => func == "String",
        PExpr::Arith(ArithOp::Add, a, b) => is_string(a) || is_string(b),
        PExpr::If(_, a, b) => is_string(a) || is_string(b),
        _ => false,
    }
}

/// An array literal whose leaves are scalars becomes one [`FExpr::FlatArray`] (built with a
/// single allocation per call instead of one per row).
fn flat_array(items: Vec<FExpr>) -> FExpr {
    let scalar_leaf = |e: &FExpr| match e {
        FExpr::Const(v) => !v.is_array(),
        FExpr::Slot(..) | FExpr::Mem(_) => true,
        _ => false,
    };
    if items.iter().all(scalar_leaf) {
        return FExpr::FlatArray(vec![items.len()], items);
    }
    let inner = match items.first() {
        Some(FExpr::FlatArray(d, _)) => d.clone(),
        _ => return FExpr::Array(items),
    };
    if !items
        .iter()
        .all(|i| matches!(i, FExpr::FlatArray(d, _) if *d == inner))
    {
        return FExpr::Array(items);
    }
    let mut dims = vec![items.len()];
    dims.extend(inner);
    let mut leaves = Vec::new();
    for i in items {
        if let FExpr::FlatArray(_, l) = i {
            leaves.extend(l);
        }
    }
    FExpr::FlatArray(dims, leaves)
}

/// Move scratch registers behind the permanent ones.
pub fn remap_temps(code: &mut [Instr], temp_start: u32) {
    let f = |op: u32| {
        if op >= TEMP_BASE {
            op - TEMP_BASE + temp_start
        } else {
            op
        }
    };
    for ins in code {
        ins.remap(&f);
    }
}
