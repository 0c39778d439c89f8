//! Python arguments to simulation options, checked before any run so that bad input is a
//! Python exception raised at the call, not a failure in the middle of a sweep.

use crate::errors;
use moss_sim::jacobian::JacobianMode;
use moss_sim::{SimOptions, Solver};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyString};

/// The keyword arguments of `simulate` that become [`SimOptions`].
pub struct Options {
    pub start: Option<f64>,
    pub stop: Option<f64>,
    pub interval: Option<f64>,
    pub intervals: Option<usize>,
    pub tolerance: Option<f64>,
    pub solver: String,
    /// Whole-name regular expression of the stored variables.
    pub outputs: Option<String>,
    pub protected: bool,
    pub max_step: Option<f64>,
    pub jacobian: String,
}

impl Options {
    pub fn resolve(self, py: Python<'_>) -> PyResult<SimOptions> {
        let solver = Solver::parse(&self.solver).ok_or_else(|| {
            errors::options_error(
                py,
                format!(
                    "unknown solver `{}`; use auto, bdf, dopri5, euler or rk4",
                    self.solver
                ),
            )
        })?;
        let jacobian = JacobianMode::parse(&self.jacobian).ok_or_else(|| {
            errors::options_error(
                py,
                format!(
                    "unknown Jacobian mode `{}`; use auto or numeric",
                    self.jacobian
                ),
            )
        })?;
        if self.interval.is_some() && self.intervals.is_some() {
            return Err(errors::options_error(
                py,
                "give interval or intervals, not both".into(),
            ));
        }
        if let Some(re) = &self.outputs {
            moss_sim::record::compile_filter(re).map_err(|e| errors::options_error(py, e))?;
        }
        Ok(SimOptions {
            start_time: self.start,
            stop_time: self.stop,
            interval: self.interval,
            intervals: self.intervals,
            tolerance: self.tolerance,
            solver,
            jacobian,
            vars: self.outputs,
            protected: self.protected,
            max_step: self.max_step,
            ..Default::default()
        })
    }
}

/// `outputs=`: a regular expression (str) or a list of exact names.
pub fn outputs_filter(outputs: Option<&Bound<'_, PyAny>>) -> PyResult<Option<String>> {
    let Some(outputs) = outputs.filter(|o| !o.is_none()) else {
        return Ok(None);
    };
    if let Ok(s) = outputs.cast::<PyString>() {
        return Ok(Some(s.to_str()?.to_string()));
    }
    match outputs.extract::<Vec<String>>() {
        Ok(names) => Ok(Some(exact_names(&names))),
        Err(_) => Err(PyTypeError::new_err(
            "outputs must be a list of variable names or a regular expression (str)",
        )),
    }
}

/// A whole-name regular expression matching exactly `names`.
pub fn exact_names(names: &[String]) -> String {
    let alternatives: Vec<String> = names.iter().map(|n| escape(n)).collect();
    alternatives.join("|")
}

/// `name` with the regular-expression metacharacters escaped (names hold `.`, `[`, `(`).
fn escape(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 8);
    for c in name.chars() {
        if "\\.+*?()|[]{}^$#&-~ ".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A number (or bool) given for `what[name]`.
pub fn number(value: &Bound<'_, PyAny>, what: &str, name: &str) -> PyResult<f64> {
    if let Ok(b) = value.cast::<PyBool>() {
        return Ok(if b.is_true() { 1.0 } else { 0.0 });
    }
    value.extract::<f64>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{what}[{name:?}] must be a number or a bool, not {}",
            value
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })
}

/// `params=` / `start_values=`: a dict from names to numbers.
pub fn values_of(dict: Option<&Bound<'_, PyDict>>, what: &str) -> PyResult<Vec<(String, f64)>> {
    let Some(dict) = dict else {
        return Ok(vec![]);
    };
    let mut out = Vec::with_capacity(dict.len());
    for (k, v) in dict.iter() {
        let name: String = k
            .extract()
            .map_err(|_| PyTypeError::new_err(format!("the keys of {what} must be strings")))?;
        let value = number(&v, what, &name)?;
        out.push((name, value));
    }
    Ok(out)
}

/// `retranslate(params=...)`: each value as Modelica text for a modifier.
pub fn modifiers_of(dict: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<(String, String)>> {
    let Some(dict) = dict else {
        return Ok(vec![]);
    };
    let mut out = Vec::with_capacity(dict.len());
    for (k, v) in dict.iter() {
        let name: String = k
            .extract()
            .map_err(|_| PyTypeError::new_err("the keys of params must be strings"))?;
        if name.is_empty() || !name.split('.').all(is_identifier_part) {
            return Err(PyTypeError::new_err(format!(
                "`{name}` is not a component name such as `n` or `sub.n`"
            )));
        }
        out.push((name.clone(), modelica_text(&v, &name)?));
    }
    Ok(out)
}

/// A plain identifier, optionally with constant subscripts (`x[2]`) — what a modifier name
/// may be, so that the text cannot change the wrapper class beyond one modification.
fn is_identifier_part(part: &str) -> bool {
    let ident_end = part.find('[').unwrap_or(part.len());
    let (ident, subs) = part.split_at(ident_end);
    let ident_ok = ident
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && ident.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let subs_ok = subs.is_empty()
        || (subs.starts_with('[')
            && subs.ends_with(']')
            && subs[1..subs.len() - 1]
                .chars()
                .all(|c| c.is_ascii_digit() || c == ','));
    ident_ok && subs_ok
}

fn modelica_text(value: &Bound<'_, PyAny>, name: &str) -> PyResult<String> {
    if let Ok(b) = value.cast::<PyBool>() {
        return Ok(b.is_true().to_string());
    }
    if let Ok(i) = value.extract::<i64>() {
        return Ok(i.to_string());
    }
    if let Ok(x) = value.extract::<f64>() {
        if !x.is_finite() {
            return Err(PyTypeError::new_err(format!(
                "params[{name:?}] must be finite, not {x}"
            )));
        }
        return Ok(format!("{x:?}"));
    }
    if let Ok(s) = value.cast::<PyString>() {
        let text = s.to_str()?;
        // A Modelica expression; `;` or a quote could end the modification early.
        if text.contains([';', '"']) || text.trim().is_empty() {
            return Err(PyTypeError::new_err(format!(
                "params[{name:?}] = {text:?} is not a Modelica expression"
            )));
        }
        return Ok(text.to_string());
    }
    Err(PyTypeError::new_err(format!(
        "params[{name:?}] must be a number, a bool or a Modelica expression (str)"
    )))
}
