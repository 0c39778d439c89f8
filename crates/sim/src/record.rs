//! Turning the model's slot vector into result rows.
//!
//! The variable table is built once, at the first row (after initialization, when parameters
//! and `fixed = false` parameters have their values): every non-hidden program variable and
//! alias whose name matches the filter. Time-varying variables get a stored column; aliases
//! `a = ±b` of a stored variable share its column; parameters and constants, and aliases of
//! them, are stored once as a constant.

use moss_results::{ResultStream, ResultVar, SimResult, Storage, VarKind as ResultKind};
use moss_symbolic::program::{ValueType, VarKind};
use moss_symbolic::CausalProgram;
use regex::Regex;
use rustc_hash::FxHashSet;

/// Receives output rows (the full slot vector at each output time).
pub trait Recorder {
    type Output;
    fn record(&mut self, t: f64, values: &[f64]);
    fn finish(self) -> Self::Output;
    /// Rows recorded so far.
    fn rows(&self) -> usize {
        0
    }
    /// Forget the rows after the first `rows`; false when the recorder cannot (then the
    /// simulator does not go back in time).
    fn truncate(&mut self, _rows: usize) -> bool {
        false
    }
    /// The first `rows` rows are final: the simulator will never truncate before them (a
    /// streaming recorder writes them out and drops them).
    fn commit(&mut self, _rows: usize) {}
}

/// Compile a `--vars` pattern for whole-name matching.
pub fn compile_filter(pattern: &str) -> Result<Regex, String> {
    Regex::new(&format!("^(?:{pattern})$"))
        .map_err(|e| format!("invalid variable filter `{pattern}`: {e}"))
}

fn result_kind(kind: VarKind) -> ResultKind {
    match kind {
        VarKind::Constant => ResultKind::Constant,
        VarKind::Parameter | VarKind::DependentParameter => ResultKind::Parameter,
        VarKind::Discrete => ResultKind::Discrete,
        VarKind::State
        | VarKind::Derivative
        | VarKind::Algebraic
        | VarKind::Input
        | VarKind::Tangent => ResultKind::Continuous,
    }
}

fn is_time_invariant(kind: VarKind) -> bool {
    matches!(
        kind,
        VarKind::Constant | VarKind::Parameter | VarKind::DependentParameter
    )
}

/// A stored column: `scale * values[slot] + offset`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Column {
    slot: usize,
    scale: f64,
    offset: f64,
}

/// Records rows into a [`SimResult`].
pub struct ResultRecorder<'a> {
    program: &'a CausalProgram,
    filter: Option<Regex>,
    columns: Vec<Column>,
    result: Option<SimResult>,
    row: Vec<f64>,
    protected: bool,
    /// First error of the results layer (should not happen: the table is validated).
    pub error: Option<String>,
}

impl<'a> ResultRecorder<'a> {
    pub fn new(program: &'a CausalProgram, filter: Option<Regex>) -> ResultRecorder<'a> {
        ResultRecorder {
            program,
            filter,
            columns: Vec::new(),
            result: None,
            row: Vec::new(),
            protected: false,
            error: None,
        }
    }

    /// Also store protected variables (see [`crate::SimOptions::protected`]).
    pub fn with_protected(mut self, protected: bool) -> Self {
        self.protected = protected;
        self
    }

    /// Public variables by default, protected ones too when asked; with a `--vars` filter,
    /// every variable whose name it matches, protected ones included (a user who names them
    /// asks for them). Generated slots (`$...`) never reach the results.
    fn wanted(&self, name: &str, hidden: bool) -> bool {
        if name == "time" || name.starts_with('$') {
            return false;
        }
        match &self.filter {
            Some(re) => re.is_match(name),
            None => !hidden || self.protected,
        }
    }

    /// Build the variable table from the values after initialization.
    fn build_table(&mut self, values: &[f64]) -> Result<SimResult, String> {
        let p = self.program;
        let value = |slot: usize| values.get(slot).copied().unwrap_or(f64::NAN);
        // Every wanted name once (the first definition wins: a variable before an alias
        // of the same name), then sorted by name, as result files list them. A hash set and
        // one sort instead of an ordered map: a 100,000-section ladder has 2.2 million names.
        let mut vars: Vec<ResultVar> = Vec::new();
        let mut named: FxHashSet<&str> = FxHashSet::default();
        // Column of each stored slot (for aliases).
        let mut column_of_slot: Vec<Option<usize>> = vec![None; p.vars.len()];
        for (slot, v) in p.vars.iter().enumerate() {
            if v.ty == ValueType::String
                || v.kind == VarKind::Tangent
                || !self.wanted(&v.name, v.hidden)
            {
                continue;
            }
            let storage = if is_time_invariant(v.kind) {
                Storage::Constant(value(slot))
            } else {
                column_of_slot[slot] = Some(self.columns.len());
                self.columns.push(Column {
                    slot,
                    scale: 1.0,
                    offset: 0.0,
                });
                Storage::Column(self.columns.len() - 1)
            };
            if named.insert(&v.name) {
                vars.push(
                    ResultVar::new(&v.name, result_kind(v.kind), storage)
                        .with_unit(&v.unit)
                        .with_description(&v.description),
                );
            }
        }
        for a in &p.aliases {
            if !self.wanted(&a.name, a.hidden) || named.contains(a.name.as_str()) {
                continue;
            }
            let slot = a.target as usize;
            let Some(target) = p.vars.get(slot) else {
                continue;
            };
            if target.ty == ValueType::String {
                continue;
            }
            let storage = if is_time_invariant(target.kind) {
                Storage::Constant(a.scale * value(slot) + a.offset)
            } else {
                match column_of_slot[slot] {
                    Some(of) if a.offset == 0.0 && (a.scale == 1.0 || a.scale == -1.0) => {
                        Storage::Alias {
                            of,
                            negated: a.scale < 0.0,
                        }
                    }
                    _ => {
                        self.columns.push(Column {
                            slot,
                            scale: a.scale,
                            offset: a.offset,
                        });
                        Storage::Column(self.columns.len() - 1)
                    }
                }
            };
            let kind = if is_time_invariant(target.kind) {
                result_kind(target.kind)
            } else {
                result_kind(a.kind)
            };
            named.insert(&a.name);
            vars.push(
                ResultVar::new(&a.name, kind, storage)
                    .with_unit(&a.unit)
                    .with_description(&a.description),
            );
        }
        drop(named);
        vars.sort_unstable_by(|a, b| a.name.cmp(&b.name));
        SimResult::new(vars, self.columns.len()).map_err(|e| e.to_string())
    }
}

impl ResultRecorder<'_> {
    /// The stored columns of one row, into `row` (cleared first); the variable table is
    /// built from the first row seen. False after an error of the table (kept in `error`).
    fn gather_row(&mut self, values: &[f64], row: &mut Vec<f64>) -> bool {
        if self.result.is_none() {
            match self.build_table(values) {
                Ok(r) => self.result = Some(r),
                Err(e) => {
                    self.error.get_or_insert(e);
                    return false;
                }
            }
        }
        row.clear();
        row.extend(
            self.columns
                .iter()
                .map(|c| c.scale * values.get(c.slot).copied().unwrap_or(f64::NAN) + c.offset),
        );
        true
    }
}

impl Recorder for ResultRecorder<'_> {
    type Output = SimResult;

    fn record(&mut self, t: f64, values: &[f64]) {
        let mut row = std::mem::take(&mut self.row);
        if self.gather_row(values, &mut row) {
            if let Some(result) = &mut self.result {
                if let Err(e) = result.push_row(t, &row) {
                    self.error.get_or_insert(e.to_string());
                }
            }
        }
        self.row = row;
    }

    fn rows(&self) -> usize {
        self.result.as_ref().map_or(0, SimResult::len)
    }

    fn truncate(&mut self, rows: usize) -> bool {
        if let Some(r) = &mut self.result {
            r.truncate_rows(rows);
        }
        true
    }

    fn finish(self) -> SimResult {
        match self.result {
            Some(r) => r,
            // Nothing was recorded (the run failed before the first row).
            None => SimResult::new(Vec::new(), 0).expect("an empty variable table is valid"),
        }
    }
}

/// What a [`StreamingRecorder`] leaves: the file is written, the table is known.
#[derive(Debug, Default)]
pub struct Streamed {
    /// Rows written to the file.
    pub rows: usize,
    /// Variables in the file (aliases and parameters included).
    pub vars: usize,
    /// The first error of writing the file, if any (later rows were not written).
    pub error: Option<String>,
    /// Seconds the writer thread spent formatting and writing rows (beside the run).
    pub write_seconds: f64,
    /// Seconds the end of the run waited for the writer to catch up and complete the file.
    pub finish_seconds: f64,
}

/// Records rows straight into a result file. Rows stay in memory only until the simulator
/// commits them (it may still go back to its last restart while `--solver auto` runs
/// DOPRI5), so memory holds the variable table and a few hundred rows, whatever the run's
/// length. Committed rows are formatted and written on a thread of their own
/// ([`BackgroundWriter`]), beside the integration.
pub struct StreamingRecorder<'a> {
    /// The variable table and the gathering of stored columns (it holds no rows).
    table: ResultRecorder<'a>,
    path: std::path::PathBuf,
    writer: Option<BackgroundWriter>,
    /// Rows recorded but not final yet, oldest first; each buffer goes to the writer as it
    /// is (no copy) and comes back from it for reuse.
    pending: std::collections::VecDeque<(f64, Vec<f64>)>,
    /// Rows handed to the writer (and removed from `pending`).
    written: usize,
    /// Time of the last row handed to the writer.
    last_written: Option<f64>,
    error: Option<String>,
}

impl<'a> StreamingRecorder<'a> {
    /// Write to `path` (`.csv` or `.mat`); the file is created when the first row is
    /// final, and not at all when no row is recorded.
    pub fn new(
        program: &'a CausalProgram,
        filter: Option<Regex>,
        path: &std::path::Path,
    ) -> StreamingRecorder<'a> {
        Self::with_table(ResultRecorder::new(program, filter), path)
    }

    /// Rows as `table` chooses them (filter, protected variables), written to `path`.
    pub fn with_table(table: ResultRecorder<'a>, path: &std::path::Path) -> StreamingRecorder<'a> {
        StreamingRecorder {
            table,
            path: path.to_path_buf(),
            writer: None,
            pending: std::collections::VecDeque::new(),
            written: 0,
            last_written: None,
            error: None,
        }
    }

    /// A row buffer: one the writer is done with when there is one.
    fn spare_row(&mut self) -> Vec<f64> {
        self.writer
            .as_mut()
            .and_then(BackgroundWriter::spare_row)
            .unwrap_or_default()
    }

    /// Hand the pending rows before absolute row `upto` to the writer.
    fn write_out(&mut self, upto: usize) {
        let n = upto.saturating_sub(self.written).min(self.pending.len());
        if n == 0 || self.error.is_some() {
            return;
        }
        let Some(result) = &self.table.result else {
            return;
        };
        if self.writer.is_none() {
            match ResultStream::create(&self.path, result.vars(), result.ncols()) {
                Ok(s) => self.writer = Some(BackgroundWriter::start(s)),
                Err(e) => {
                    self.error = Some(e.to_string());
                    return;
                }
            }
        }
        let writer = self
            .writer
            .as_mut()
            .expect("the writer was created just above or the function returned");
        for (t, row) in self.pending.drain(..n) {
            self.last_written = Some(t);
            if !writer.send(t, row) {
                // The writer stopped at an error; `finish` reports it.
                break;
            }
        }
        self.written += n;
    }
}

impl Recorder for StreamingRecorder<'_> {
    type Output = Streamed;

    fn record(&mut self, t: f64, values: &[f64]) {
        let last = self.pending.back().map(|(t, _)| *t).or(self.last_written);
        if last.is_some_and(|last| t < last) {
            self.error.get_or_insert(format!(
                "result row at time {t} is before the previous row's time {}",
                last.unwrap_or(t)
            ));
            return;
        }
        let mut row = self.spare_row();
        if self.table.gather_row(values, &mut row) {
            self.pending.push_back((t, row));
        }
    }

    fn rows(&self) -> usize {
        self.written + self.pending.len()
    }

    fn truncate(&mut self, rows: usize) -> bool {
        if rows < self.written {
            return false;
        }
        self.pending.truncate(rows - self.written);
        true
    }

    fn commit(&mut self, rows: usize) {
        self.write_out(rows);
    }

    fn finish(mut self) -> Streamed {
        let started = std::time::Instant::now();
        self.write_out(usize::MAX);
        let vars = self.table.result.as_ref().map_or(0, |r| r.vars().len());
        let mut error = self.error.or(self.table.error);
        let (rows, busy) = match self.writer {
            Some(w) => w.finish().unwrap_or_else(|e| {
                error.get_or_insert(e);
                (0, std::time::Duration::ZERO)
            }),
            None => (0, std::time::Duration::ZERO),
        };
        Streamed {
            rows,
            vars,
            error,
            write_seconds: busy.as_secs_f64(),
            finish_seconds: started.elapsed().as_secs_f64(),
        }
    }
}

/// Batches the simulation may run ahead of the writer: enough to smooth out bursts (the two
/// rows of an event, a step that covers many output points), few enough that memory stays
/// small for wide rows.
const WRITER_BACKLOG: usize = 8;

/// Rows go to the formatters in batches of at most this many rows, or of about
/// [`BATCH_VALUES`] values, or of what [`BATCH_AGE`] collected: every hand-over between
/// threads may wake one with a system call, which for a row of a dozen values cost more
/// than formatting it (`HBridge_DC_Drive`'s 400,000 rows at 157,000 events).
const BATCH_ROWS: usize = 256;

/// See [`BATCH_ROWS`].
const BATCH_VALUES: usize = 1 << 16;

/// A batch is handed over with the first row that comes this long after the batch's first
/// one, so that the file follows a slow simulation row by row (there is no timer: rows
/// stay in the batch while the simulation computes the next one).
const BATCH_AGE: std::time::Duration = std::time::Duration::from_millis(200);

/// Threads formatting rows, at most: with two, the CSV text of a large model is made about
/// as fast as the kernel takes it (a 10,000-section ladder writes 1.5 GB).
const MAX_FORMATTERS: usize = 2;

type Busy = std::time::Duration;

/// Rows at their times.
type Batch = Vec<(f64, Vec<f64>)>;

/// A [`ResultStream`] on threads of its own: formatting a row of a large model as CSV costs
/// more than integrating up to it, so rows are formatted by up to [`MAX_FORMATTERS`]
/// threads (batch `i` by formatter `i % k`, each in order) and appended to the file in
/// order by one more, beside the integration.
struct BackgroundWriter {
    /// One queue per formatter; batch `next % k` goes to queue `next % k`.
    batches: Vec<std::sync::mpsc::SyncSender<Batch>>,
    next: usize,
    /// The batch being filled, its number of values, and when its first row came.
    batch: Batch,
    batch_values: usize,
    batch_started: Option<std::time::Instant>,
    /// Row buffers the formatters are done with, for reuse: a wide row is large enough that
    /// allocating a fresh one per row goes to the system each time (page faults and zeroing).
    spare: std::sync::mpsc::Receiver<Vec<Vec<f64>>>,
    spare_rows: Vec<Vec<f64>>,
    formatters: Vec<std::thread::JoinHandle<Busy>>,
    thread: std::thread::JoinHandle<Result<(usize, Busy), String>>,
}

impl BackgroundWriter {
    fn start(mut stream: ResultStream) -> BackgroundWriter {
        use std::sync::mpsc::{channel, sync_channel};
        let k = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .clamp(1, MAX_FORMATTERS);
        let (give_back, spare) = channel::<Vec<Vec<f64>>>();
        let mut batches = Vec::with_capacity(k);
        let mut formatted = Vec::with_capacity(k);
        let mut bytes_back = Vec::with_capacity(k);
        let mut formatters = Vec::with_capacity(k);
        for _ in 0..k {
            let (batch_tx, batch_rx) = sync_channel::<Batch>(WRITER_BACKLOG.div_ceil(k));
            let (text_tx, text_rx) = sync_channel::<(Vec<f64>, Vec<u8>)>(2);
            let (back_tx, back_rx) = channel::<Vec<u8>>();
            let mut format = stream.row_format();
            let give_back = give_back.clone();
            formatters.push(std::thread::spawn(move || {
                let mut busy = Busy::ZERO;
                let mut line = Vec::new();
                for batch in batch_rx {
                    let started = std::time::Instant::now();
                    let mut bytes = back_rx.try_recv().unwrap_or_default();
                    bytes.clear();
                    let mut times = Vec::with_capacity(batch.len());
                    let mut rows = Vec::with_capacity(batch.len());
                    for (t, row) in batch {
                        format.format(t, &row, &mut line);
                        bytes.extend_from_slice(&line);
                        times.push(t);
                        rows.push(row);
                    }
                    busy += started.elapsed();
                    // The recorder may be gone already (end of the run).
                    let _ = give_back.send(rows);
                    if text_tx.send((times, bytes)).is_err() {
                        break; // the writer stopped at an error
                    }
                }
                busy
            }));
            batches.push(batch_tx);
            formatted.push(text_rx);
            bytes_back.push(back_tx);
        }
        let thread = std::thread::spawn(move || {
            let mut busy = Busy::ZERO;
            // Batches in order: batch i from formatter i % k; a formatter whose queue is
            // closed and drained has no more batches, and neither have the ones after it.
            'batches: for i in 0.. {
                let Ok((times, bytes)) = formatted[i % k].recv() else {
                    break 'batches;
                };
                let started = std::time::Instant::now();
                stream
                    .write_formatted_rows(&times, &bytes)
                    .map_err(|e| e.to_string())?;
                busy += started.elapsed();
                let _ = bytes_back[i % k].send(bytes);
            }
            let started = std::time::Instant::now();
            let n = stream.finish().map_err(|e| e.to_string())?;
            Ok((n, busy + started.elapsed()))
        });
        BackgroundWriter {
            batches,
            next: 0,
            batch: Vec::new(),
            batch_values: 0,
            batch_started: None,
            spare,
            spare_rows: Vec::new(),
            formatters,
            thread,
        }
    }

    /// A row buffer a formatter is done with, if one is waiting.
    fn spare_row(&mut self) -> Option<Vec<f64>> {
        if self.spare_rows.is_empty() {
            self.spare_rows = self.spare.try_recv().ok()?;
        }
        self.spare_rows.pop()
    }

    /// Queue one row; false when the writer has stopped (at an error).
    fn send(&mut self, t: f64, row: Vec<f64>) -> bool {
        let now = std::time::Instant::now();
        let started = *self.batch_started.get_or_insert(now);
        self.batch_values += row.len() + 1;
        self.batch.push((t, row));
        let full = self.batch.len() >= BATCH_ROWS || self.batch_values >= BATCH_VALUES;
        if full || now.duration_since(started) >= BATCH_AGE {
            return self.hand_over();
        }
        true
    }

    /// Hand the batch being filled to its formatter; false when the writer has stopped.
    fn hand_over(&mut self) -> bool {
        if self.batch.is_empty() {
            return true;
        }
        let batch = std::mem::take(&mut self.batch);
        self.batch_values = 0;
        self.batch_started = None;
        let queue = &self.batches[self.next % self.batches.len()];
        self.next += 1;
        queue.send(batch).is_ok()
    }

    /// Wait for every queued row to be written and the file completed: the rows written and
    /// the time the formatters and the writer were busy.
    fn finish(mut self) -> Result<(usize, Busy), String> {
        self.hand_over();
        drop(self.batches);
        let formatting: Busy = self
            .formatters
            .into_iter()
            .map(|f| f.join().unwrap_or_default())
            .sum();
        let (n, writing) = self
            .thread
            .join()
            .unwrap_or_else(|_| Err("the result writer stopped unexpectedly".to_string()))?;
        Ok((n, formatting + writing))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use moss_symbolic::program::{Alias, ProgVar};

    fn var(name: &str, kind: VarKind, ty: ValueType, hidden: bool) -> ProgVar {
        ProgVar {
            name: name.into(),
            kind,
            ty,
            start: 0.0,
            nominal: 1.0,
            min: None,
            max: None,
            unit: "m".into(),
            description: String::new(),
            hidden,
        }
    }

    fn alias(name: &str, target: u32, scale: f64, offset: f64) -> Alias {
        Alias {
            name: name.into(),
            target,
            scale,
            offset,
            unit: String::new(),
            description: String::new(),
            kind: VarKind::Algebraic,
            hidden: false,
        }
    }

    #[test]
    fn table_covers_hidden_targets_strings_and_parameters() {
        let p = CausalProgram {
            vars: vec![
                var("x", VarKind::State, ValueType::Real, false),
                var("$tmp", VarKind::Algebraic, ValueType::Real, true),
                var("label", VarKind::Discrete, ValueType::String, false),
                var("k", VarKind::Parameter, ValueType::Real, false),
                var("on", VarKind::Discrete, ValueType::Boolean, false),
            ],
            aliases: vec![
                // Visible alias of a hidden variable: gets its own column.
                alias("y", 1, 2.0, 0.0),
                // Alias of a parameter: a constant.
                alias("k2", 3, -1.0, 1.0),
                // Negated alias of a stored variable: shares the column.
                alias("minus_x", 0, -1.0, 0.0),
            ],
            ..Default::default()
        };
        let mut rec = ResultRecorder::new(&p, None);
        rec.record(0.0, &[1.0, 5.0, 0.0, 3.0, 1.0]);
        rec.record(0.5, &[2.0, 6.0, 0.0, 3.0, 0.0]);
        assert!(rec.error.is_none(), "{:?}", rec.error);
        let r = rec.finish();
        let names: Vec<&str> = r.names().collect();
        assert_eq!(names, vec!["k", "k2", "minus_x", "on", "x", "y"]);
        assert_eq!(r.series("y"), Some(vec![10.0, 12.0]));
        assert_eq!(
            r.var("k2").map(|v| v.storage),
            Some(Storage::Constant(-2.0))
        );
        assert!(matches!(
            r.var("minus_x").map(|v| v.storage),
            Some(Storage::Alias { negated: true, .. })
        ));
        assert_eq!(r.var("on").map(|v| v.kind), Some(ResultKind::Discrete));
        assert_eq!(r.unit("x"), "m");
    }

    #[test]
    fn filter_matches_whole_names() {
        let re = compile_filter("x").expect("valid");
        assert!(re.is_match("x") && !re.is_match("xx") && !re.is_match("body.x"));
        let re = compile_filter("body\\..*").expect("valid");
        assert!(re.is_match("body.x") && !re.is_match("nobody.x"));
        assert!(compile_filter("(").is_err());
    }
}
