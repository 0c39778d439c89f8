//! Many runs of one translated model on a pool of Rust threads, with no Python in the loop.
//!
//! The inputs are converted from Python once, up front; then the GIL is released and worker
//! threads take the next point from a shared counter (runs differ in cost, so a static split
//! would leave threads idle). Each run clones the compiled model, so the threads share
//! nothing mutable. A failed run gives NaN outputs and its message; it does not stop the
//! others.

use crate::engine::{RunInput, Translated};
use crate::errors;
use crate::options::number;
use moss_sim::SimOptions;
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Threads of a local sweep when the caller does not say: one per core.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Each point (a dict) as run inputs: keys that name a settable start value go to
/// `start_values`, all others to `params` (checked against the model before any run).
pub fn inputs_of(
    py: Python<'_>,
    model: &Translated,
    points: &Bound<'_, PyList>,
) -> PyResult<Vec<RunInput>> {
    let mut inputs = Vec::with_capacity(points.len());
    for point in points.iter() {
        let dict = point.cast::<PyDict>().map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err("each point of a sweep must be a dict")
        })?;
        let mut input = RunInput::default();
        for (k, v) in dict.iter() {
            let name: String = k.extract()?;
            let value = number(&v, "point", &name)?;
            if model.starts.contains_key(&name) {
                input.start_values.push((name, value));
            } else {
                input.params.push((name, value));
            }
        }
        inputs.push(input);
    }
    // The same names in every point, usually: check each distinct set of names once.
    let mut checked: Vec<Vec<String>> = Vec::new();
    for input in &inputs {
        let names: Vec<String> = input
            .params
            .iter()
            .chain(&input.start_values)
            .map(|p| p.0.clone())
            .collect();
        if !checked.contains(&names) {
            model
                .check_input(input)
                .map_err(|e| errors::run_error(py, e))?;
            checked.push(names);
        }
    }
    Ok(inputs)
}

/// Every output must be a variable of the model (else no run could report it).
pub fn check_outputs(py: Python<'_>, model: &Translated, outputs: &[String]) -> PyResult<()> {
    let program = model.program();
    for name in outputs {
        let known =
            program.var_by_name(name).is_some() || program.aliases.iter().any(|a| &a.name == name);
        if !known {
            return Err(errors::options_error(
                py,
                format!("the model has no variable `{name}` to report"),
            ));
        }
    }
    Ok(())
}

/// The final values of one run's outputs, or why it failed.
type Row = Result<Vec<f64>, String>;

/// Final values per output (column-major) and the error of each point.
pub struct Table {
    columns: Vec<Vec<f64>>,
    errors: Vec<Option<String>>,
}

/// Run every input on `threads` threads.
pub fn run_all(
    model: &Translated,
    inputs: &[RunInput],
    outputs: &[String],
    opts: &SimOptions,
    threads: usize,
) -> Table {
    let rows: Vec<Mutex<Option<Row>>> = inputs.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..threads.min(inputs.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(input) = inputs.get(i) else { break };
                let row = run_one(model, input, outputs, opts);
                if let Ok(mut slot) = rows[i].lock() {
                    *slot = Some(row);
                }
            });
        }
    });
    let mut table = Table {
        columns: vec![Vec::with_capacity(inputs.len()); outputs.len()],
        errors: Vec::with_capacity(inputs.len()),
    };
    for row in rows {
        let row = row
            .into_inner()
            .ok()
            .flatten()
            .unwrap_or_else(|| Err("the run did not finish (a worker thread panicked)".into()));
        table.push(row, outputs.len());
    }
    table
}

fn run_one(model: &Translated, input: &RunInput, outputs: &[String], opts: &SimOptions) -> Row {
    let run = model.run(input, opts).map_err(|e| e.to_string())?;
    let result = &run.result;
    let last = result
        .len()
        .checked_sub(1)
        .ok_or("the run produced no output point")?;
    outputs
        .iter()
        .map(|name| {
            result
                .var(name)
                .map(|v| result.value(v, last))
                .ok_or_else(|| format!("the result has no variable `{name}`"))
        })
        .collect()
}

impl Table {
    fn push(&mut self, row: Row, width: usize) {
        match row {
            Ok(values) => {
                for (col, v) in self.columns.iter_mut().zip(values) {
                    col.push(v);
                }
                self.errors.push(None);
            }
            Err(message) => {
                for col in self.columns.iter_mut().take(width) {
                    col.push(f64::NAN);
                }
                self.errors.push(Some(message));
            }
        }
    }

    pub fn into_python<'py>(
        self,
        py: Python<'py>,
        outputs: &[String],
    ) -> PyResult<(Bound<'py, PyDict>, Vec<Option<String>>)> {
        let d = PyDict::new(py);
        for (name, col) in outputs.iter().zip(self.columns) {
            d.set_item(name, PyArray1::from_vec(py, col))?;
        }
        Ok((d, self.errors))
    }
}
