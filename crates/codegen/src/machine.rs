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
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Machine {
    pub mem: Vec<f64>,
    /// Number of slots (`program.vars.len()`).
    pub n: usize,
    /// Frozen value of every event-generating relation.
    pub rel: Vec<bool>,
    /// Relations evaluated live during the current event pass.
    pub rel_touched: Vec<bool>,
    /// Hysteresis of every event-generating relation (see `tape::hysteresis_shift`); not
    /// applied during initialization, where relations have no previous value.
    pub hysteresis: Vec<f64>,
    /// Parameter of `homotopy(actual, simplified)`: 1 (the actual expression) except while
    /// homotopy-based initialization follows the path from the simplified problem (0).
    pub homotopy_lambda: f64,
    /// Event mode: relations live, `when` branches may fire.
    pub event_mode: bool,
    /// The steps that run in event mode only (`event_only.rs`) have run once in continuous
    /// mode since the last event: the `when` statements of an algorithm record there that
    /// their conditions (a `sample`) are false again, which the next edge is measured from.
    #[cfg_attr(feature = "serde", serde(default))]
    pub event_only_settled: bool,
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
    /// History of the argument of every `delay` operator.
    pub delays: Vec<DelayLine>,
    /// The iteration variables (`Code::guess_slots`) where the last accepted integration
    /// step started and where it ended, and the time it ended (see
    /// `Interpreter::start_from_guesses`); empty after an event until the next step.
    #[cfg_attr(feature = "serde", serde(default))]
    pub step_start_guess: Vec<f64>,
    #[cfg_attr(feature = "serde", serde(default))]
    pub step_end_guess: Vec<f64>,
    #[cfg_attr(feature = "serde", serde(default))]
    pub step_start_time: Option<f64>,
    #[cfg_attr(feature = "serde", serde(default))]
    pub step_end_time: Option<f64>,
    /// The iteration variables as the last output point left them, and its time: output
    /// points inside one step follow one another (the trajectory of a loop with hysteresis
    /// and nothing else to remember its branch is the sequence of its points).
    #[cfg_attr(feature = "serde", serde(default))]
    pub output_guess: Vec<f64>,
    #[cfg_attr(feature = "serde", serde(default))]
    pub output_time: Option<f64>,
    /// Time of the last continuous evaluation of the integration (see
    /// `Interpreter::start_from_guesses`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub last_evaluation: Option<f64>,
    /// Texts of the String variables, whose slots hold handles (`string_pool.rs`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub strings: crate::string_pool::StringPool,
    /// Outputs of recent calls of expensive pure functions (a cache: never part of the
    /// state, so not saved).
    #[cfg_attr(feature = "serde", serde(skip))]
    pub memo: crate::memo::CallMemo,
    /// Frames of calls of compiled scalar functions, reused (a scratch, never saved).
    #[cfg_attr(feature = "serde", serde(skip))]
    pub frames: crate::scalar_fn::FramePool,
    /// The error of a call made by native code (`jit.rs`), handed to the interpreter that
    /// entered the native caller: an error deep in a call chain is reported once, not
    /// rediscovered by running every caller again.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub native_error: Option<String>,
    /// LU factors of the large sparse linear systems, refactored along their pivots
    /// (`sparse.rs`; a scratch, never saved).
    #[cfg_attr(feature = "serde", serde(skip))]
    pub sparse_factors: crate::sparse::SparseFactors,
    /// Factors of linear systems whose matrices depend on a few inputs only, with the
    /// inputs' values they were computed for (`kept_factors.rs`; a scratch).
    #[cfg_attr(feature = "serde", serde(skip))]
    pub kept_matrices: Vec<Option<crate::kept_factors::KeptMatrix>>,
    /// Linear solves that used kept factors.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub kept_matrix_solves: u64,
}

/// The recorded history `(time, value)` of a delayed expression.
///
/// Every evaluation records its point; an evaluation at an earlier time than the newest
/// record (a rejected step retried with a smaller size, or an integrator stage behind a
/// later one) first discards the records after it, so the buffer always describes one
/// monotone trajectory up to the current time. At an event the expression may jump: the
/// record made before the event (the left limit) is kept and the values of the event passes
/// go into a second record at the same time (the right limit), so the delayed value jumps
/// too, `tau` later, instead of ramping from the previous record. Before the start time the
/// expression is taken as constant at its value at the start (the Modelica definition of
/// `delay`), after the event iteration there.
#[derive(Clone, Debug, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DelayLine {
    times: Vec<f64>,
    values: Vec<f64>,
    /// Index of a left-limit record followed by the right-limit record at the same time.
    split: Option<usize>,
}

impl DelayLine {
    /// Record `x` at time `now` (`event`: during an event iteration) and return the value
    /// recorded at `now - tau`, linearly interpolated between records.
    pub fn value(&mut self, now: f64, x: f64, tau: f64, event: bool) -> f64 {
        self.record(now, x, event);
        if tau.is_nan() || tau <= 0.0 {
            return x;
        }
        self.at(now - tau)
    }

    pub fn record(&mut self, now: f64, x: f64, event: bool) {
        let keep = self.times.partition_point(|&t| t < now);
        let at_now = self.times.get(keep) == Some(&now);
        if at_now && (event || self.split == Some(keep)) {
            // an event pass after the evaluation that reached the event, or a later value
            // at that instant: the right limit
            self.truncate(keep + 1);
            self.split = Some(keep);
        } else {
            self.truncate(keep);
        }
        self.times.push(now);
        self.values.push(x);
    }

    fn truncate(&mut self, len: usize) {
        self.times.truncate(len);
        self.values.truncate(len);
        if self.split.is_some_and(|s| s + 1 >= len) {
            self.split = None;
        }
    }

    pub fn clear(&mut self) {
        self.truncate(0);
    }

    fn at(&self, t: f64) -> f64 {
        // records are nonempty (the caller recorded just before)
        let i = self.times.partition_point(|&ti| ti <= t);
        if i == 0 {
            // before the start: the last value recorded at the start time
            let first = self.times.first().copied().unwrap_or(0.0);
            let j = self.times.partition_point(|&ti| ti <= first);
            return self.values.get(j.wrapping_sub(1)).copied().unwrap_or(0.0);
        }
        if i == self.times.len() {
            return self.values[i - 1];
        }
        let (t0, t1) = (self.times[i - 1], self.times[i]);
        let (v0, v1) = (self.values[i - 1], self.values[i]);
        if t1 > t0 {
            v0 + (v1 - v0) * (t - t0) / (t1 - t0)
        } else {
            v1
        }
    }
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

#[cfg(test)]
mod tests {
    use super::DelayLine;

    #[test]
    fn delay_line_interpolates_and_rolls_back_rejected_records() {
        let mut line = DelayLine::default();
        // constant at the first value before the start
        assert_eq!(line.value(0.0, 2.0, 1.0, false), 2.0);
        assert_eq!(line.value(1.0, 4.0, 0.5, false), 3.0);
        // a trial point far ahead, then a retry behind it: the trial is discarded
        assert_eq!(line.value(3.0, 100.0, 1.0, false), 52.0);
        assert_eq!(line.value(2.0, 6.0, 0.5, false), 5.0);
        assert_eq!(line.value(2.5, 7.0, 1.0, false), 5.0);
        // zero delay is the current value
        assert_eq!(line.value(2.6, 8.0, 0.0, false), 8.0);
    }

    #[test]
    fn delay_line_keeps_both_sides_of_an_event() {
        let mut line = DelayLine::default();
        // initialization and the event iteration at the start: the value before the start
        // is the one after that iteration
        line.record(0.0, 1.0, true);
        line.record(0.0, 3.0, true);
        assert_eq!(line.value(0.5, 3.0, 1.0, false), 3.0);
        line.record(1.0, 3.0, false);
        // an event at t = 2: the left limit reached by integration, then two event passes
        line.record(2.0, 3.0, false);
        line.record(2.0, 5.0, true);
        line.record(2.0, 4.0, true);
        // a continuous evaluation at the event instant after the event: still the right limit
        line.record(2.0, 4.0, false);
        // the delayed signal steps exactly `tau` later instead of ramping from t = 1
        assert_eq!(line.value(2.9, 4.0, 1.0, false), 3.0);
        assert_eq!(line.value(3.0, 4.0, 1.0, false), 4.0);
        assert_eq!(line.value(3.5, 4.0, 1.0, false), 4.0);
        // a rejected step behind the event removes later records but keeps the event
        line.record(2.5, 4.0, false);
        assert_eq!(line.value(2.95, 4.0, 1.0, false), 3.0);
        assert_eq!(line.value(3.05, 4.0, 1.0, false), 4.0);
    }
}
