//! moss-results: simulation results in memory and on disk, comparison against references, plots.
//!
//! - [`model`]: the data model ([`SimResult`], [`ResultVar`], [`Storage`], [`VarKind`]) the
//!   simulator fills with [`SimResult::push_row`].
//! - [`csv`]: CSV writer/reader (first column `time`, one column per variable, quoted names).
//! - [`mat`]: MATLAB v4 `.mat` writer/reader in the Dymola/OpenModelica trajectory layout
//!   (`Aclass`, `name`, `description`, `dataInfo`, `data_1`, `data_2`).
//! - [`compare`]: the tube comparison of csv-compare (per-signal pass/fail, points outside,
//!   largest distance, first failure time), near-linear in the number of points.
//! - [`stream`]: a result file written row by row while the simulation runs.
//! - [`plot`]: SVG/PNG line plots (plotters with an embedded font, no system fonts needed).
//!
//! [`read_result`] and [`write_result`] pick the format from the file extension.

pub mod compare;
pub mod csv;
pub mod mat;
pub mod model;
pub mod plot;
mod sink;
pub mod stream;

pub use model::{ResultVar, SimResult, Storage, VarKind};
pub use stream::{ResultStream, RowFormat};

use std::fmt;
use std::path::{Path, PathBuf};

/// Errors of reading, writing or building results.
#[derive(Debug)]
pub enum ResultError {
    /// The file could not be read or written.
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file content is malformed. `line` is 1-based where it makes sense (CSV), else 0.
    Format {
        path: PathBuf,
        line: usize,
        message: String,
    },
    /// An invalid operation on a result (wrong row length, bad variable table, ...).
    Invalid(String),
}

impl ResultError {
    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        ResultError::Invalid(message.into())
    }

    pub(crate) fn format(path: &Path, line: usize, message: impl Into<String>) -> Self {
        ResultError::Format {
            path: path.to_path_buf(),
            line,
            message: message.into(),
        }
    }

    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        ResultError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

impl fmt::Display for ResultError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResultError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            ResultError::Format {
                path,
                line: 0,
                message,
            } => write!(f, "{}: {message}", path.display()),
            ResultError::Format {
                path,
                line,
                message,
            } => write!(f, "{}:{line}: {message}", path.display()),
            ResultError::Invalid(message) => write!(f, "{message}"),
        }
    }
}

impl std::error::Error for ResultError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ResultError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// File formats known by extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Csv,
    Mat,
}

impl Format {
    /// The format of a path by its extension (`.csv`, `.mat`, case-insensitive).
    pub fn from_path(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "csv" => Some(Format::Csv),
            "mat" => Some(Format::Mat),
            _ => None,
        }
    }
}

fn format_of(path: &Path) -> Result<Format, ResultError> {
    Format::from_path(path).ok_or_else(|| {
        ResultError::format(
            path,
            0,
            "unknown result format; use a file ending in .csv or .mat",
        )
    })
}

/// Read a `.csv` or `.mat` result file.
pub fn read_result(path: &Path) -> Result<SimResult, ResultError> {
    match format_of(path)? {
        Format::Csv => csv::read_csv(path),
        Format::Mat => mat::read_mat(path),
    }
}

/// Write a result as `.csv` or `.mat`, by the extension of `path`.
pub fn write_result(result: &SimResult, path: &Path) -> Result<(), ResultError> {
    match format_of(path)? {
        Format::Csv => csv::write_csv(result, path),
        Format::Mat => mat::write_mat(result, path),
    }
}
