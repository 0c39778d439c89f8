//! Rust errors to the Python exceptions of `moss_modelica._errors`.
//!
//! The exception classes are written in Python (several bases, attributes, pickling for
//! Dask); this module builds instances of them from the engine's errors.

use crate::engine::{Located, RunError, TranslateError};
use moss_frontend::api::FailureKind;
use pyo3::prelude::*;
use pyo3::types::PyDict;

const ERRORS_MODULE: &str = "moss_modelica._errors";

/// An instance of `moss_modelica._errors.<class>` built with `args` and `kwargs`, as a `PyErr`.
fn raise<'py>(
    py: Python<'py>,
    class: &str,
    args: impl pyo3::call::PyCallArgs<'py>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyErr {
    let built = py
        .import(ERRORS_MODULE)
        .and_then(|m| m.getattr(class))
        .and_then(|c| c.call(args, kwargs));
    match built {
        Ok(value) => PyErr::from_value(value),
        Err(e) => e,
    }
}

fn diagnostic<'py>(py: Python<'py>, d: &Located) -> PyResult<Bound<'py, PyAny>> {
    let kw = PyDict::new(py);
    kw.set_item("severity", d.severity)?;
    kw.set_item("message", &d.message)?;
    kw.set_item("file", &d.file)?;
    kw.set_item("line", d.line)?;
    kw.set_item("column", d.column)?;
    kw.set_item("help", &d.help)?;
    kw.set_item("rendered", &d.rendered)?;
    py.import(ERRORS_MODULE)?
        .getattr("Diagnostic")?
        .call((), Some(&kw))
}

/// `TranslationError` or the subclass for `e.kind`; the message is every diagnostic as
/// `moss` prints it.
pub fn translate_error(py: Python<'_>, e: &TranslateError) -> PyErr {
    let class = match e.kind {
        FailureKind::Syntax => "ModelicaSyntaxError",
        FailureKind::ClassNotFound => "ClassNotFoundError",
        FailureKind::Model => "TranslationError",
    };
    let diagnostics: PyResult<Vec<Bound<'_, PyAny>>> =
        e.diagnostics.iter().map(|d| diagnostic(py, d)).collect();
    let diagnostics = match diagnostics {
        Ok(d) => d,
        Err(err) => return err,
    };
    let message: Vec<&str> = e
        .diagnostics
        .iter()
        .map(|d| d.rendered.trim_end())
        .collect();
    raise(py, class, (message.join("\n"), diagnostics), None)
}

/// The exception of a failed run; `partial` becomes the `partial` attribute of a
/// `SimulationError`.
pub fn run_error(py: Python<'_>, e: RunError) -> PyErr {
    match e {
        RunError::Parameter {
            name,
            message,
            structural,
        } => {
            let class = if structural {
                "StructuralParameterError"
            } else {
                "ParameterError"
            };
            raise(py, class, (message, name), None)
        }
        RunError::Options(message) => options_error(py, message),
        RunError::Simulation {
            message,
            time,
            partial,
        } => {
            let partial = partial
                .and_then(|r| Py::new(py, crate::result::PyRunResult::from_partial(*r)).ok());
            raise(
                py,
                "SimulationError",
                (format!("simulation failed {message}"), time, partial),
                None,
            )
        }
    }
}

pub fn options_error(py: Python<'_>, message: String) -> PyErr {
    raise(py, "OptionsError", (message,), None)
}

pub fn parameter_error(py: Python<'_>, message: String, name: &str) -> PyErr {
    raise(py, "ParameterError", (message, name), None)
}

pub fn result_file_error(py: Python<'_>, message: String) -> PyErr {
    raise(py, "ResultFileError", (message,), None)
}

/// A `MossError` that is none of the above (a model that cannot be deserialized, ...).
pub fn moss_error(py: Python<'_>, message: String) -> PyErr {
    raise(py, "MossError", (message,), None)
}
