//! `moss_modelica.Result`: trajectories of one run (or read from a result file) as NumPy
//! arrays, plus the variable table, run statistics and events.

use crate::errors;
use moss_results::{ResultVar, SimResult, VarKind};
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::path::Path;

/// One variable of a result or a model: name, unit, description and kind.
#[pyclass(
    module = "moss_modelica._moss",
    name = "Variable",
    frozen,
    get_all,
    skip_from_py_object
)]
#[derive(Clone)]
pub struct PyVariable {
    /// Full Modelica name, e.g. ``J1.w`` or ``der(J1.phi)``.
    pub name: String,
    /// Unit string, e.g. ``rad/s`` (empty when unknown).
    pub unit: String,
    /// The description string of the declaration.
    pub description: String,
    /// ``parameter``, ``constant``, ``continuous``, ``discrete`` (results); models also
    /// tell ``state``, ``derivative``, ``algebraic``, ``input``, ``dependent parameter``.
    pub kind: String,
}

#[pymethods]
impl PyVariable {
    fn __repr__(&self) -> String {
        let unit = if self.unit.is_empty() {
            String::new()
        } else {
            format!(" [{}]", self.unit)
        };
        format!("Variable({}{}, {})", self.name, unit, self.kind)
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, VariableArgs)> {
        let class = py.get_type::<PyVariable>().into_any();
        Ok((
            class,
            (
                self.name.clone(),
                self.unit.clone(),
                self.description.clone(),
                self.kind.clone(),
            ),
        ))
    }

    #[new]
    fn py_new(name: String, unit: String, description: String, kind: String) -> Self {
        PyVariable {
            name,
            unit,
            description,
            kind,
        }
    }
}

/// The constructor arguments of a `Variable` (name, unit, description, kind).
type VariableArgs = (String, String, String, String);

fn kind_name(kind: VarKind) -> &'static str {
    match kind {
        VarKind::Parameter => "parameter",
        VarKind::Constant => "constant",
        VarKind::Continuous => "continuous",
        VarKind::Discrete => "discrete",
        VarKind::Time => "time",
    }
}

impl From<&ResultVar> for PyVariable {
    fn from(v: &ResultVar) -> Self {
        PyVariable {
            name: v.name.clone(),
            unit: v.unit.clone(),
            description: v.description.clone(),
            kind: kind_name(v.kind).to_string(),
        }
    }
}

/// The trajectories of one simulation (or of a result file).
///
/// ``result["J1.w"]`` is a NumPy array with one value per output point (the same length as
/// ``result.time``); an event gives two points at the same time, the values before and after
/// it. Parameters give a constant array.
#[pyclass(module = "moss_modelica._moss", name = "Result", frozen)]
pub struct PyRunResult {
    result: SimResult,
    terminated: Option<String>,
    warnings: Vec<String>,
    /// A run that failed: the rows before the failure.
    partial: bool,
}

impl PyRunResult {
    pub fn new(result: SimResult, terminated: Option<String>, warnings: Vec<String>) -> Self {
        PyRunResult {
            result,
            terminated,
            warnings,
            partial: false,
        }
    }

    pub fn from_partial(result: SimResult) -> Self {
        PyRunResult {
            partial: true,
            ..Self::new(result, None, vec![])
        }
    }

    fn series(&self, name: &str) -> Option<Vec<f64>> {
        self.result.series(name)
    }
}

/// Parse a statistics value as an integer or a float where it is one.
fn stat_value<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    if let Ok(i) = text.parse::<i64>() {
        return Ok(i.into_pyobject(py)?.into_any());
    }
    if let Ok(x) = text.parse::<f64>() {
        return Ok(x.into_pyobject(py)?.into_any());
    }
    Ok(text.into_pyobject(py)?.into_any())
}

/// Times at which the result has an event: two consecutive points with the same time.
pub fn event_times(time: &[f64]) -> Vec<f64> {
    let mut events: Vec<f64> = time
        .windows(2)
        .filter(|w| w[0] == w[1])
        .map(|w| w[0])
        .collect();
    events.dedup();
    events
}

#[pymethods]
impl PyRunResult {
    /// The output times (seconds), as a NumPy array.
    #[getter]
    fn time<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_vec(py, self.result.time().to_vec())
    }

    /// The values of variable ``name`` at the output times (``"time"`` gives the time).
    fn __getitem__<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyArray1<f64>>> {
        match self.series(name) {
            Some(v) => Ok(PyArray1::from_vec(py, v)),
            None => Err(pyo3::exceptions::PyKeyError::new_err(format!(
                "the result has no variable `{name}` (see Result.names; protected variables \
                 need simulate(..., protected=True))"
            ))),
        }
    }

    fn __contains__(&self, name: &str) -> bool {
        name == "time" || self.result.var(name).is_some()
    }

    fn __len__(&self) -> usize {
        self.result.len()
    }

    /// Names of the stored variables (``time`` not included).
    #[getter]
    fn names(&self) -> Vec<String> {
        self.result.names().map(str::to_string).collect()
    }

    /// The stored variables with units, descriptions and kinds.
    #[getter]
    fn variables(&self) -> Vec<PyVariable> {
        self.result.vars().iter().map(PyVariable::from).collect()
    }

    /// Run statistics (solver, steps, events, evaluations, seconds), as a dict.
    #[getter]
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in &self.result.stats {
            d.set_item(k, stat_value(py, v)?)?;
        }
        Ok(d)
    }

    /// Times of the events in the result (state and time events), as a NumPy array.
    #[getter]
    fn events<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_vec(py, event_times(self.result.time()))
    }

    /// The message of ``terminate()`` when the model ended the run before the stop time.
    #[getter]
    fn terminated(&self) -> Option<String> {
        self.terminated.clone()
    }

    /// Warnings of the run (``assert`` with level warning).
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    /// True for the rows of a failed run (``SimulationError.partial``).
    #[getter]
    fn partial(&self) -> bool {
        self.partial
    }

    /// Value of every variable (or of ``names``) at the last output point.
    #[pyo3(signature = (names=None))]
    fn final_values<'py>(
        &self,
        py: Python<'py>,
        names: Option<Vec<String>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let last = self.result.len().checked_sub(1);
        let names = names.unwrap_or_else(|| self.names());
        for name in names {
            let var = self.result.var(&name).ok_or_else(|| {
                pyo3::exceptions::PyKeyError::new_err(format!("no variable `{name}`"))
            })?;
            let value = last.map_or(f64::NAN, |i| self.result.value(var, i));
            d.set_item(name, value)?;
        }
        Ok(d)
    }

    /// A dict of NumPy arrays: ``time`` and every variable (or ``names``).
    #[pyo3(signature = (names=None))]
    fn to_dict<'py>(
        &self,
        py: Python<'py>,
        names: Option<Vec<String>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("time", self.time(py))?;
        for name in names.unwrap_or_else(|| self.names()) {
            d.set_item(&name, self.__getitem__(py, &name)?)?;
        }
        Ok(d)
    }

    /// A pandas DataFrame indexed by time, one column per variable (or per name of
    /// ``names``). Needs pandas (``pip install moss-modelica[pandas]``).
    #[pyo3(signature = (names=None))]
    fn to_pandas<'py>(
        &self,
        py: Python<'py>,
        names: Option<Vec<String>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pandas = py.import("pandas").map_err(|_| {
            pyo3::exceptions::PyImportError::new_err(
                "Result.to_pandas needs pandas: pip install pandas (or moss-modelica[pandas])",
            )
        })?;
        let columns = self.to_dict(py, names)?;
        let time = columns.get_item("time")?;
        columns.del_item("time")?;
        let index = pandas.call_method1("Index", (time,))?;
        index.setattr("name", "time")?;
        let kw = PyDict::new(py);
        kw.set_item("index", index)?;
        pandas.call_method("DataFrame", (columns,), Some(&kw))
    }

    /// Write the result to ``path`` (``.mat`` or ``.csv``), as ``moss simulate -o`` does.
    fn save(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        let result = &self.result;
        py.detach(|| moss_results::write_result(result, &path))
            .map_err(|e| errors::result_file_error(py, e.to_string()))
    }

    fn __repr__(&self) -> String {
        let (t0, t1) = match (self.result.time().first(), self.result.time().last()) {
            (Some(a), Some(b)) => (*a, *b),
            _ => (f64::NAN, f64::NAN),
        };
        format!(
            "<moss_modelica.Result: {} variables, {} points, t = {} .. {}{}>",
            self.result.vars().len(),
            self.result.len(),
            t0,
            t1,
            if self.partial { ", partial" } else { "" }
        )
    }

    /// Pickled as its MATLAB v4 bytes (the `.mat` layout moss writes) plus what that layout
    /// does not hold.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let mut bytes = Vec::new();
        moss_results::mat::write_mat_to(&self.result, &mut bytes)
            .map_err(|e| errors::moss_error(py, format!("cannot pickle the result: {e}")))?;
        let rebuild = py
            .import("moss_modelica._moss")?
            .getattr("_result_from_parts")?;
        let args = (
            PyBytes::new(py, &bytes),
            self.result.stats.clone(),
            self.terminated.clone(),
            self.warnings.clone(),
            self.partial,
        )
            .into_pyobject(py)?
            .into_any();
        Ok((rebuild, args))
    }
}

/// Rebuild a pickled result (see `Result.__reduce__`).
#[pyfunction]
pub fn _result_from_parts(
    py: Python<'_>,
    mat: &[u8],
    stats: Vec<(String, String)>,
    terminated: Option<String>,
    warnings: Vec<String>,
    partial: bool,
) -> PyResult<PyRunResult> {
    let mut result = moss_results::mat::parse_mat(mat, Path::new("<pickle>"))
        .map_err(|e| errors::result_file_error(py, e.to_string()))?;
    result.stats = stats;
    Ok(PyRunResult {
        result,
        terminated,
        warnings,
        partial,
    })
}

/// Read a result file written by moss (or by another tool in the same layouts): ``.mat``
/// (Dymola/OpenModelica MATLAB v4) or ``.csv``.
#[pyfunction]
pub fn read_result(py: Python<'_>, path: std::path::PathBuf) -> PyResult<PyRunResult> {
    let read = py.detach(|| moss_results::read_result(&path));
    match read {
        Ok(result) => Ok(PyRunResult::new(result, None, vec![])),
        Err(e) => Err(errors::result_file_error(py, e.to_string())),
    }
}

/// A list of `Variable`s as a Python list (for the model's tables).
pub fn variable_list<'py>(py: Python<'py>, vars: Vec<PyVariable>) -> PyResult<Bound<'py, PyList>> {
    PyList::new(py, vars)
}
