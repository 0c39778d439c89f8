//! The mutable runtime state shared by the expression tapes and the function interpreter.
//!
//! Memory layout of [`Machine::mem`] (one flat `f64` vector, so compiled operands are plain
//! indices and an instruction never has to ask "where does this operand live"):
//!
//! | range              | contents                                       |
//! |--------------------|------------------------------------------------|
//! | `0 .. n`           | slot values, indexed by `VarId`                |
//! | `n .. 2n`          | `pre` values                                   |
//! | `2n`               | time                                           |
//! | `2n+1 .. temps`    | constants and per-block registers (permanent)  |
//! | `temps ..`         | scratch registers, reused by every expression  |

/// Runtime state of one model instance.
#[derive(Clone, Debug, Default)]
pub struct Machine {
    pub mem: Vec<f64>,
    /// Number of slots (`program.vars.len()`).
    pub n: usize,
    /// Frozen value of every event-generating relation.
    pub rel: Vec<bool>,
    /// Relations evaluated live during the current event pass.
    pub rel_touched: Vec<bool>,
    /// Event mode: relations live, `when` branches may fire.
    pub event_mode: bool,
    pub initial: bool,
    pub terminal: bool,
    /// `Sample(id)` is true while its instant is being processed.
    pub sample_active: Vec<bool>,
    /// Current and previous condition values of `when` statements inside algorithms.
    pub when_cur: Vec<bool>,
    pub when_pre: Vec<bool>,
    /// Set by `reinit`.
    pub states_changed: bool,
    /// Set by `terminate(message)`.
    pub terminate: Option<String>,
    /// Warnings of `assert(..., level = warning)`, each reported once.
    pub warnings: Vec<String>,
}

impl Machine {
    #[inline(always)]
    pub fn pre_index(&self, v: u32) -> usize {
        self.n + v as usize
    }

    #[inline(always)]
    pub fn time_index(&self) -> usize {
        2 * self.n
    }

    pub fn time(&self) -> f64 {
        self.mem[2 * self.n]
    }

    pub fn set_time(&mut self, t: f64) {
        let i = self.time_index();
        self.mem[i] = t;
    }

    /// `pre := values` for every slot (between event passes, and after initialization).
    pub fn copy_values_to_pre(&mut self) {
        let n = self.n;
        let (vals, rest) = self.mem.split_at_mut(n);
        rest[..n].copy_from_slice(vals);
        self.when_pre.copy_from_slice(&self.when_cur);
    }
}
