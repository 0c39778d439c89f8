//! `moss_modelica._moss`: the Python extension of moss (PyO3, abi3 for CPython >= 3.10).
//!
//! The Python package `moss_modelica` (in `python/`) re-exports what is defined here and adds
//! the parts written in Python: the exception classes (`_errors.py`) and the sweep over a
//! thread pool or a Dask cluster (`_sweep.py`).
//!
//! - [`engine`]: translate once, run many times; no Python types.
//! - [`model`]: `Model` (load, simulate, parameters, pickling).
//! - [`result`]: `Result` (NumPy arrays, variables, statistics, events, pandas, files).
//! - [`sweep`]: many runs on Rust threads with the GIL released.
//! - [`options`], [`errors`]: Python arguments in, Python exceptions out.

pub mod engine;
pub mod errors;
pub mod model;
pub mod options;
pub mod result;
pub mod sweep;

use pyo3::prelude::*;
use std::path::PathBuf;

/// Load a model and translate it.
///
/// ``model`` is a class name (``Modelica.Mechanics.Rotational.Examples.CoupledClutches``),
/// looked up in ``libs`` (directories, in order), then in the directories of the
/// ``MODELICAPATH`` environment variable (unless ``modelicapath=False``), then in the library
/// bundled with moss; or a ``.mo`` file, meaning the last class it defines. The GIL is
/// released while it translates.
#[pyfunction]
#[pyo3(signature = (model, libs=None, modelicapath=true))]
fn load(
    py: Python<'_>,
    model: String,
    libs: Option<Vec<PathBuf>>,
    modelicapath: bool,
) -> PyResult<model::PyModel> {
    model::load(py, model, libs.unwrap_or_default(), modelicapath)
}

/// How many models this process has translated (each :func:`load` and
/// :meth:`Model.retranslate` is one; simulations and unpickling are none).
#[pyfunction]
fn translation_count() -> u64 {
    engine::translation_count()
}

#[pymodule]
fn _moss(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<model::PyModel>()?;
    m.add_class::<result::PyRunResult>()?;
    m.add_class::<result::PyVariable>()?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(translation_count, m)?)?;
    m.add_function(wrap_pyfunction!(result::read_result, m)?)?;
    m.add_function(wrap_pyfunction!(model::_model_from_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(result::_result_from_parts, m)?)?;
    Ok(())
}
