//! The in-memory result data model shared by the simulator, the writers and the comparison.
//!
//! A [`SimResult`] is a table: one row per output point, one *stored column* per independent
//! trajectory. Variables ([`ResultVar`]) do not own columns one-to-one: several variables may
//! share a column (aliases, possibly negated), and parameters/constants are stored once as a
//! single value. This is the same economy that Dymola's `.mat` layout has (`dataInfo`), so the
//! MAT writer maps it directly and the CSV writer expands it.
//!
//! Time is not a variable of `vars`; it is the separate `time` vector. `series("time")` returns it.
//! Events are two consecutive rows with the same time (left limit, then right limit).

use crate::ResultError;

/// What kind of quantity a result variable is (kept for writers and readers that care).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarKind {
    /// A parameter: fixed during a simulation run.
    Parameter,
    /// A constant.
    Constant,
    /// A continuous-time variable (states, derivatives, algebraic variables).
    Continuous,
    /// A discrete-time variable (changes only at events).
    Discrete,
    /// The independent variable. Normally not in `vars`; accepted for completeness.
    Time,
}

impl VarKind {
    /// Whether variables of this kind are time-invariant by nature.
    pub fn is_time_invariant(self) -> bool {
        matches!(self, VarKind::Parameter | VarKind::Constant)
    }
}

/// Where a variable's values are.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Storage {
    /// Stored column `0..ncols` of the rows.
    Column(usize),
    /// Same values as stored column `of`, negated if `negated` (`a = -b`).
    Alias { of: usize, negated: bool },
    /// One value for the whole run (parameters, constants, variables that never change).
    Constant(f64),
}

/// One variable of a result.
#[derive(Clone, Debug, PartialEq)]
pub struct ResultVar {
    /// Full Modelica name, e.g. `inertia1.phi`, `x[2]`, `der(x)`.
    pub name: String,
    /// Unit string (`"rad"`, `"N.m"`), empty if unknown.
    pub unit: String,
    /// Description string, empty if none.
    pub description: String,
    /// Kind of variable.
    pub kind: VarKind,
    /// Where its values are.
    pub storage: Storage,
}

impl ResultVar {
    /// A continuous variable stored in column `col`.
    pub fn column(name: impl Into<String>, col: usize) -> Self {
        Self::new(name, VarKind::Continuous, Storage::Column(col))
    }

    /// A continuous variable equal to (or the negation of) stored column `of`.
    pub fn alias(name: impl Into<String>, of: usize, negated: bool) -> Self {
        Self::new(name, VarKind::Continuous, Storage::Alias { of, negated })
    }

    /// A parameter with a single value.
    pub fn parameter(name: impl Into<String>, value: f64) -> Self {
        Self::new(name, VarKind::Parameter, Storage::Constant(value))
    }

    /// A variable of any kind and storage.
    pub fn new(name: impl Into<String>, kind: VarKind, storage: Storage) -> Self {
        ResultVar {
            name: name.into(),
            unit: String::new(),
            description: String::new(),
            kind,
            storage,
        }
    }

    /// Builder: set the unit.
    pub fn with_unit(mut self, unit: impl Into<String>) -> Self {
        self.unit = unit.into();
        self
    }

    /// Builder: set the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// Builder: set the kind.
    pub fn with_kind(mut self, kind: VarKind) -> Self {
        self.kind = kind;
        self
    }
}

/// A simulation result: variables, time points and stored columns.
///
/// Build it with [`SimResult::new`] (validates the variable table) and fill it with
/// [`SimResult::push_row`]. Fields are read-only through accessors so that the invariants
/// (every row has `ncols` values, storage indices in range) always hold.
#[derive(Clone, Debug, PartialEq)]
pub struct SimResult {
    vars: Vec<ResultVar>,
    ncols: usize,
    time: Vec<f64>,
    /// Row-major, `time.len() * ncols` values.
    data: Vec<f64>,
    /// Free-form run statistics (`("steps", "1234")`, `("solver", "dopri5")`, ...).
    pub stats: Vec<(String, String)>,
}

impl SimResult {
    /// A result with the given variables and `ncols` stored columns, no rows yet.
    ///
    /// Errors if two variables have the same name (or are named `time`) or a storage index is
    /// `>= ncols`.
    pub fn new(vars: Vec<ResultVar>, ncols: usize) -> Result<Self, ResultError> {
        validate_vars(&vars, ncols)?;
        Ok(SimResult {
            vars,
            ncols,
            time: Vec::new(),
            data: Vec::new(),
            stats: Vec::new(),
        })
    }

    /// Like [`SimResult::new`], with `ncols` = one more than the largest column referenced.
    pub fn with_vars(vars: Vec<ResultVar>) -> Result<Self, ResultError> {
        let ncols = vars
            .iter()
            .filter_map(|v| match v.storage {
                Storage::Column(c) | Storage::Alias { of: c, .. } => Some(c + 1),
                Storage::Constant(_) => None,
            })
            .max()
            .unwrap_or(0);
        Self::new(vars, ncols)
    }

    /// Append one output point. `values` are the stored columns (length `ncols`).
    /// An event is two pushes with the same `t`. Times must not decrease.
    pub fn push_row(&mut self, t: f64, values: &[f64]) -> Result<(), ResultError> {
        if values.len() != self.ncols {
            return Err(ResultError::invalid(format!(
                "push_row: got {} values, the result has {} stored columns",
                values.len(),
                self.ncols
            )));
        }
        if let Some(&last) = self.time.last() {
            if t < last {
                return Err(ResultError::invalid(format!(
                    "push_row: time {t} is before the previous output time {last}"
                )));
            }
        }
        self.time.push(t);
        self.data.extend_from_slice(values);
        Ok(())
    }

    /// Drop every row after the first `rows` (a simulator going back to an earlier point).
    pub fn truncate_rows(&mut self, rows: usize) {
        self.time.truncate(rows);
        self.data.truncate(rows * self.ncols);
    }

    /// Remove the first `rows` rows (written out by a streaming writer) and keep the rest.
    pub fn drain_front(&mut self, rows: usize) {
        let rows = rows.min(self.len());
        self.time.drain(..rows);
        self.data.drain(..rows * self.ncols);
    }

    /// The variables, in output order.
    pub fn vars(&self) -> &[ResultVar] {
        &self.vars
    }

    /// Number of stored columns.
    pub fn ncols(&self) -> usize {
        self.ncols
    }

    /// Output times (non-decreasing; equal consecutive times mark events).
    pub fn time(&self) -> &[f64] {
        &self.time
    }

    /// Number of output points.
    pub fn len(&self) -> usize {
        self.time.len()
    }

    /// Whether there are no output points.
    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }

    /// Stored values of row `i` (length `ncols`).
    pub fn row(&self, i: usize) -> &[f64] {
        &self.data[i * self.ncols..(i + 1) * self.ncols]
    }

    /// Iterator over `(time, stored values)` rows.
    pub fn rows(&self) -> impl Iterator<Item = (f64, &[f64])> + '_ {
        (0..self.len()).map(move |i| (self.time[i], self.row(i)))
    }

    /// The variable named `name`, if any.
    pub fn var(&self, name: &str) -> Option<&ResultVar> {
        self.vars.iter().find(|v| v.name == name)
    }

    /// Names of all variables (without `time`).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.vars.iter().map(|v| v.name.as_str())
    }

    /// Value of `var` at row `i` (aliases and constants resolved).
    pub fn value(&self, var: &ResultVar, i: usize) -> f64 {
        match var.storage {
            Storage::Column(c) => self.data[i * self.ncols + c],
            Storage::Alias { of, negated } => {
                let x = self.data[i * self.ncols + of];
                if negated {
                    -x
                } else {
                    x
                }
            }
            Storage::Constant(x) => x,
        }
    }

    /// Trajectory of a variable by name (one value per output point); `"time"` gives the time.
    pub fn series(&self, name: &str) -> Option<Vec<f64>> {
        if name == "time" && self.var("time").is_none() {
            return Some(self.time.clone());
        }
        let var = self.var(name)?;
        Some((0..self.len()).map(|i| self.value(var, i)).collect())
    }

    /// Unit of a variable (empty if unknown or no such variable).
    pub fn unit(&self, name: &str) -> &str {
        if name == "time" {
            return "s";
        }
        self.var(name).map(|v| v.unit.as_str()).unwrap_or("")
    }
}

fn validate_vars(vars: &[ResultVar], ncols: usize) -> Result<(), ResultError> {
    let mut seen = rustc_hash::FxHashSet::default();
    seen.reserve(vars.len());
    for v in vars {
        if v.name.is_empty() {
            return Err(ResultError::invalid("a result variable has an empty name"));
        }
        if v.name == "time" {
            return Err(ResultError::invalid(
                "`time` must not be a result variable; it is the separate time vector",
            ));
        }
        if !seen.insert(v.name.as_str()) {
            return Err(ResultError::invalid(format!(
                "result variable `{}` appears twice",
                v.name
            )));
        }
        match v.storage {
            Storage::Column(c) | Storage::Alias { of: c, .. } if c >= ncols => {
                return Err(ResultError::invalid(format!(
                    "result variable `{}` refers to column {c}, but there are only {ncols}",
                    v.name
                )));
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> SimResult {
        let vars = vec![
            ResultVar::column("x", 0).with_unit("m"),
            ResultVar::alias("y", 0, true),
            ResultVar::column("v", 1),
            ResultVar::parameter("k", 2.5),
        ];
        let mut r = SimResult::with_vars(vars).unwrap();
        r.push_row(0.0, &[1.0, 2.0]).unwrap();
        r.push_row(0.5, &[3.0, 4.0]).unwrap();
        r.push_row(0.5, &[5.0, 6.0]).unwrap();
        r
    }

    #[test]
    fn series_resolves_aliases_and_constants() {
        let r = sample();
        assert_eq!(r.ncols(), 2);
        assert_eq!(r.series("x").unwrap(), vec![1.0, 3.0, 5.0]);
        assert_eq!(r.series("y").unwrap(), vec![-1.0, -3.0, -5.0]);
        assert_eq!(r.series("k").unwrap(), vec![2.5, 2.5, 2.5]);
        assert_eq!(r.series("time").unwrap(), vec![0.0, 0.5, 0.5]);
        assert!(r.series("nope").is_none());
        assert_eq!(r.unit("x"), "m");
        assert_eq!(r.rows().count(), 3);
        assert_eq!(r.row(2), &[5.0, 6.0]);
    }

    #[test]
    fn push_row_rejects_bad_rows() {
        let mut r = sample();
        assert!(r.push_row(1.0, &[1.0]).is_err());
        assert!(r.push_row(0.1, &[1.0, 2.0]).is_err());
    }

    #[test]
    fn new_rejects_bad_tables() {
        assert!(SimResult::new(vec![ResultVar::column("a", 3)], 2).is_err());
        assert!(SimResult::new(
            vec![ResultVar::column("a", 0), ResultVar::column("a", 0)],
            1
        )
        .is_err());
        assert!(SimResult::new(vec![ResultVar::column("time", 0)], 1).is_err());
    }
}
