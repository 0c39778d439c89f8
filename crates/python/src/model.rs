//! `moss_modelica.Model`: a translated model, simulated any number of times.

use crate::engine::{RunInput, Source, Translated};
use crate::errors;
use crate::options::{values_of, Options};
use crate::result::{variable_list, PyRunResult, PyVariable};
use crate::sweep;
use moss_symbolic::program::VarKind;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::path::PathBuf;
use std::sync::Arc;

/// A translated Modelica model. Make one with :func:`moss_modelica.load`.
///
/// Simulating it again with other parameter values or start values reuses the translation
/// (the program is compiled once, and each run starts from a fresh copy of it), so a model
/// can be run many times, also from several threads at once: the GIL is released while it
/// runs. It pickles as its translated program (no source files needed where it is
/// unpickled), which is how :func:`moss_modelica.sweep` ships it to Dask workers.
#[pyclass(module = "moss_modelica._moss", name = "Model", frozen)]
pub struct PyModel {
    pub inner: Arc<Translated>,
}

fn kind_name(kind: VarKind) -> &'static str {
    match kind {
        VarKind::Constant => "constant",
        VarKind::Parameter => "parameter",
        VarKind::DependentParameter => "dependent parameter",
        VarKind::State => "state",
        VarKind::Derivative => "derivative",
        VarKind::Algebraic => "algebraic",
        VarKind::Discrete => "discrete",
        VarKind::Input => "input",
        VarKind::Tangent => "tangent",
    }
}

/// Load `model` (a class name or a `.mo` file) and translate it, with the GIL released.
pub fn load(
    py: Python<'_>,
    model: String,
    libs: Vec<PathBuf>,
    modelicapath: bool,
) -> PyResult<PyModel> {
    if model.ends_with(".mo") && !std::path::Path::new(&model).is_file() {
        return Err(pyo3::exceptions::PyFileNotFoundError::new_err(format!(
            "no such file: {model}"
        )));
    }
    if let Some(dir) = libs.iter().find(|d| !d.is_dir()) {
        return Err(pyo3::exceptions::PyNotADirectoryError::new_err(format!(
            "library directory {} does not exist (give the directory that contains the \
             library, e.g. the folder holding Modelica/)",
            dir.display()
        )));
    }
    let source = Source {
        model,
        libs,
        use_modelicapath: modelicapath,
        modifiers: vec![],
    };
    translate(py, source)
}

fn translate(py: Python<'_>, source: Source) -> PyResult<PyModel> {
    let translated = py.detach(|| Translated::translate(source));
    match translated {
        Ok(t) => Ok(PyModel { inner: Arc::new(t) }),
        Err(e) => Err(errors::translate_error(py, &e)),
    }
}

#[pymethods]
impl PyModel {
    /// Full name of the model class.
    #[getter]
    fn name(&self) -> String {
        self.inner.program().name.clone()
    }

    /// Warnings of the translation, as ``moss`` prints them.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.inner.warnings.clone()
    }

    /// The ``experiment`` annotation: ``{"start": ..., "stop": ..., "interval": ...,
    /// "tolerance": ...}`` (``None`` where the model says nothing).
    #[getter]
    fn experiment<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let e = &self.inner.program().experiment;
        let d = PyDict::new(py);
        d.set_item("start", e.start_time)?;
        d.set_item("stop", e.stop_time)?;
        d.set_item("interval", e.interval)?;
        d.set_item("tolerance", e.tolerance)?;
        Ok(d)
    }

    /// Parameters that ``params=`` can set, with their values in the model.
    #[getter]
    fn parameters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let program = self.inner.program();
        let settable = program
            .vars
            .iter()
            .filter(|v| v.kind == VarKind::Parameter && !v.hidden);
        for v in settable {
            d.set_item(&v.name, v.start)?;
        }
        Ok(d)
    }

    /// Variables whose start value ``start_values=`` can set, with their values in the
    /// model (initial conditions: ``fixed = true`` starts and starts of states).
    #[getter]
    fn start_values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let program = self.inner.program();
        let mut pairs: Vec<(&String, f64)> = self
            .inner
            .starts
            .iter()
            .filter_map(|(var, p)| {
                let slot = program.var_by_name(p)?;
                Some((var, program.vars[slot as usize].start))
            })
            .collect();
        pairs.sort_by(|a, b| a.0.cmp(b.0));
        let d = PyDict::new(py);
        for (var, value) in pairs {
            d.set_item(var, value)?;
        }
        Ok(d)
    }

    /// Every variable of the model (protected ones with ``protected=True``), with its unit,
    /// description and kind (``state``, ``parameter``, ...).
    #[pyo3(signature = (protected=false))]
    fn variables<'py>(&self, py: Python<'py>, protected: bool) -> PyResult<Bound<'py, PyList>> {
        let program = self.inner.program();
        let vars = program.vars.iter().filter(|v| v.kind != VarKind::Tangent);
        let mut out: Vec<PyVariable> = vars
            .filter(|v| protected || !v.hidden)
            .map(|v| PyVariable {
                name: v.name.clone(),
                unit: v.unit.clone(),
                description: v.description.clone(),
                kind: kind_name(v.kind).to_string(),
            })
            .collect();
        out.extend(
            program
                .aliases
                .iter()
                .filter(|a| protected || !a.hidden)
                .map(|a| PyVariable {
                    name: a.name.clone(),
                    unit: a.unit.clone(),
                    description: a.description.clone(),
                    kind: kind_name(a.kind).to_string(),
                }),
        );
        variable_list(py, out)
    }

    /// Simulate the model and return a :class:`Result`.
    ///
    /// ``start``, ``stop``, ``interval`` (or ``intervals``, the number of output intervals)
    /// and ``tolerance`` default to the model's ``experiment`` annotation, else 0, 1, 500
    /// intervals and 1e-6. ``solver`` is ``auto``, ``bdf``, ``dopri5``, ``euler`` or
    /// ``rk4``. ``params`` overrides parameters and ``start_values`` initial conditions,
    /// both without translating again. ``outputs`` selects the stored variables: a list of
    /// names, or a regular expression matched against whole names.
    #[pyo3(signature = (start=None, stop=None, interval=None, intervals=None, tolerance=None,
        solver="auto", params=None, start_values=None, outputs=None, protected=false,
        max_step=None, jacobian="auto"))]
    #[allow(clippy::too_many_arguments)]
    fn simulate(
        &self,
        py: Python<'_>,
        start: Option<f64>,
        stop: Option<f64>,
        interval: Option<f64>,
        intervals: Option<usize>,
        tolerance: Option<f64>,
        solver: &str,
        params: Option<&Bound<'_, PyDict>>,
        start_values: Option<&Bound<'_, PyDict>>,
        outputs: Option<&Bound<'_, PyAny>>,
        protected: bool,
        max_step: Option<f64>,
        jacobian: &str,
    ) -> PyResult<PyRunResult> {
        let options = Options {
            start,
            stop,
            interval,
            intervals,
            tolerance,
            solver: solver.to_string(),
            outputs: crate::options::outputs_filter(outputs)?,
            protected,
            max_step,
            jacobian: jacobian.to_string(),
        };
        let opts = options.resolve(py)?;
        let input = RunInput {
            params: values_of(params, "params")?,
            start_values: values_of(start_values, "start_values")?,
        };
        let model = Arc::clone(&self.inner);
        let run = py.detach(|| model.run(&input, &opts));
        match run {
            Ok(r) => {
                let mut warnings = r.warnings;
                if let Some(t) = &r.terminated {
                    warnings.push(format!("the model called terminate(): {t}"));
                }
                Ok(PyRunResult::new(r.result, r.terminated, warnings))
            }
            Err(e) => Err(errors::run_error(py, e)),
        }
    }

    /// Check ``params`` and ``start_values`` without simulating: raises the
    /// :class:`ParameterError` (or :class:`StructuralParameterError`) a run would raise.
    #[pyo3(signature = (params=None, start_values=None))]
    fn check(
        &self,
        py: Python<'_>,
        params: Option<&Bound<'_, PyDict>>,
        start_values: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<()> {
        let input = RunInput {
            params: values_of(params, "params")?,
            start_values: values_of(start_values, "start_values")?,
        };
        self.inner
            .check_input(&input)
            .map_err(|e| errors::run_error(py, e))
    }

    /// Translate the model again from its source (same class, libraries and
    /// ``MODELICAPATH``), with ``params`` as modifiers of the model: how to give structural
    /// parameters (array sizes, ``Evaluate=true``, ...) other values, which ``simulate``
    /// refuses with :class:`StructuralParameterError`. Values are numbers, bools, or
    /// strings holding Modelica expressions (``"StateSelect.prefer"``). Also picks up edits
    /// of the source files. Returns a new model; this one is unchanged.
    #[pyo3(signature = (params=None))]
    fn retranslate(&self, py: Python<'_>, params: Option<&Bound<'_, PyDict>>) -> PyResult<PyModel> {
        let mut source = self.inner.source.clone();
        for (name, text) in crate::options::modifiers_of(params)? {
            source.modifiers.retain(|(n, _)| *n != name);
            source.modifiers.push((name, text));
        }
        translate(py, source)
    }

    /// Run many parameter sets on a pool of Rust threads (the engine of
    /// :func:`moss_modelica.sweep`): ``points`` is a list of dicts whose keys are
    /// parameters or start values. Returns ``(columns, errors)``: a dict from each name of
    /// ``outputs`` to a NumPy array of final values (NaN where a run failed), and a list
    /// with the error message of each failed run (``None`` where it succeeded).
    #[pyo3(signature = (points, outputs, start=None, stop=None, interval=None,
        intervals=None, tolerance=None, solver="auto", max_step=None, jacobian="auto",
        threads=None))]
    #[allow(clippy::too_many_arguments)]
    fn _sweep<'py>(
        &self,
        py: Python<'py>,
        points: &Bound<'py, PyList>,
        outputs: Vec<String>,
        start: Option<f64>,
        stop: Option<f64>,
        interval: Option<f64>,
        intervals: Option<usize>,
        tolerance: Option<f64>,
        solver: &str,
        max_step: Option<f64>,
        jacobian: &str,
        threads: Option<usize>,
    ) -> PyResult<(Bound<'py, PyDict>, Vec<Option<String>>)> {
        let options = Options {
            start,
            stop,
            interval,
            intervals,
            tolerance,
            solver: solver.to_string(),
            outputs: Some(crate::options::exact_names(&outputs)),
            protected: false,
            max_step,
            jacobian: jacobian.to_string(),
        };
        let opts = options.resolve(py)?;
        let inputs = sweep::inputs_of(py, &self.inner, points)?;
        sweep::check_outputs(py, &self.inner, &outputs)?;
        let model = Arc::clone(&self.inner);
        let threads = threads.unwrap_or_else(sweep::default_threads).max(1);
        let table = py.detach(|| sweep::run_all(&model, &inputs, &outputs, &opts, threads));
        table.into_python(py, &outputs)
    }

    fn __repr__(&self) -> String {
        let p = self.inner.program();
        format!(
            "<moss_modelica.Model {}: {} states, {} variables>",
            p.name,
            p.states.len(),
            p.vars.len()
        )
    }

    /// Pickled as the translated program (see :meth:`Model` notes).
    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let model = Arc::clone(&self.inner);
        let bytes = py
            .detach(|| model.to_bytes())
            .map_err(|e| errors::moss_error(py, e))?;
        let rebuild = py
            .import("moss_modelica._moss")?
            .getattr("_model_from_bytes")?;
        Ok((rebuild, (PyBytes::new(py, &bytes),)))
    }
}

/// Rebuild a pickled model (see `Model.__reduce__`): compiled, not translated.
#[pyfunction]
pub fn _model_from_bytes(py: Python<'_>, data: Vec<u8>) -> PyResult<PyModel> {
    let model = py.detach(|| Translated::from_bytes(&data));
    match model {
        Ok(t) => Ok(PyModel { inner: Arc::new(t) }),
        Err(e) => Err(errors::moss_error(py, e)),
    }
}
