//! Writing a result file while the simulation runs.
//!
//! A [`ResultStream`] is opened once the variable table is known (after initialization) and
//! takes rows of stored columns as the simulator produces them, so a run never holds more
//! than the rows it may still take back. CSV lines are formatted and written row by row. The
//! `.mat` layout ([`crate::mat`]) puts the variable table and `data_1` before the
//! trajectories, and `data_2` stores one output point per column, so its rows can be appended
//! too; the two numbers unknown until the end (the stop time in `data_1` and the number of
//! points in the `data_2` header) are patched in place by [`ResultStream::finish`].

use crate::csv::CsvRows;
use crate::mat::{self, MatLayout};
use crate::sink::FileSink;
use crate::{Format, ResultError, ResultVar};
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The bytes of one row of a result file, made independently of the file: formatting the
/// rows of a large model is most of the cost of writing them, and several threads can do it
/// at once (the rows are then appended in order by one).
#[derive(Clone)]
pub enum RowFormat {
    Csv(Box<CsvRows>),
    Mat,
}

impl RowFormat {
    /// The bytes of the row at time `t` with the stored columns `row`, into `out` (cleared).
    pub fn format(&mut self, t: f64, row: &[f64], out: &mut Vec<u8>) {
        match self {
            RowFormat::Csv(rows) => rows.format_into(t, row, out),
            RowFormat::Mat => mat_row(out, t, row),
        }
    }
}

/// A `.mat` row: time, then the columns, as little-endian f64.
fn mat_row(bytes: &mut Vec<u8>, t: f64, row: &[f64]) {
    bytes.clear();
    bytes.reserve(8 * (row.len() + 1));
    bytes.extend_from_slice(&t.to_le_bytes());
    for x in row {
        bytes.extend_from_slice(&x.to_le_bytes());
    }
}

/// A result file being written row by row.
pub struct ResultStream {
    path: PathBuf,
    out: FileSink,
    kind: Kind,
    rows: usize,
    first_time: Option<f64>,
    last_time: f64,
}

enum Kind {
    Csv(CsvRows),
    Mat(MatPatch),
}

/// Where the `.mat` numbers known only at the end are.
struct MatPatch {
    ncols: usize,
    /// Offset of `data_1`'s first element (the start time; the stop time follows the first
    /// column).
    data_1_values: u64,
    constants: usize,
    /// Offset of the `data_2` header.
    data_2_header: u64,
    bytes: Vec<u8>,
}

impl ResultStream {
    /// Create `path` (format by its extension) for variables `vars` stored in `ncols`
    /// columns, and write everything that precedes the rows.
    pub fn create(path: &Path, vars: &[ResultVar], ncols: usize) -> Result<Self, ResultError> {
        let format = Format::from_path(path).ok_or_else(|| {
            ResultError::format(
                path,
                0,
                "unknown result format; use a file ending in .csv or .mat",
            )
        })?;
        let file = File::create(path).map_err(|e| ResultError::io(path, e))?;
        let mut out = FileSink::new(file);
        let io = |e| ResultError::io(path, e);
        let kind = match format {
            Format::Csv => {
                let mut rows = CsvRows::new(vars);
                rows.write_header(&mut out).map_err(io)?;
                Kind::Csv(rows)
            }
            Format::Mat => {
                let layout = MatLayout::of(vars);
                mat::write_variable_table(&mut out, &layout).map_err(io)?;
                let data_1 = out.stream_position().map_err(io)? + mat::header_len("data_1");
                mat::write_data_1(&mut out, 0.0, 0.0, &layout.constants).map_err(io)?;
                let data_2_header = out.stream_position().map_err(io)?;
                mat::write_header(&mut out, mat::TYPE_F64, ncols + 1, 0, "data_2").map_err(io)?;
                Kind::Mat(MatPatch {
                    ncols,
                    data_1_values: data_1,
                    constants: layout.constants.len(),
                    data_2_header,
                    bytes: Vec::with_capacity(8 * (ncols + 1)),
                })
            }
        };
        Ok(ResultStream {
            path: path.to_path_buf(),
            out,
            kind,
            rows: 0,
            first_time: None,
            last_time: 0.0,
        })
    }

    /// Append one output point: time `t` and the stored columns `row`.
    pub fn write_row(&mut self, t: f64, row: &[f64]) -> Result<(), ResultError> {
        let written = match &mut self.kind {
            Kind::Csv(rows) => rows.write_row(&mut self.out, t, row),
            Kind::Mat(m) => {
                debug_assert_eq!(row.len(), m.ncols);
                mat_row(&mut m.bytes, t, row);
                self.out.write_all(&m.bytes)
            }
        };
        written.map_err(|e| ResultError::io(&self.path, e))?;
        self.count_row(t);
        Ok(())
    }

    /// A formatter of this file's rows, to format them elsewhere (on other threads) and
    /// append them with [`ResultStream::write_formatted`].
    pub fn row_format(&self) -> RowFormat {
        match &self.kind {
            Kind::Csv(rows) => RowFormat::Csv(Box::new(rows.for_rows())),
            Kind::Mat(_) => RowFormat::Mat,
        }
    }

    /// Append one output point at time `t` formatted by [`RowFormat::format`].
    pub fn write_formatted(&mut self, t: f64, bytes: &[u8]) -> Result<(), ResultError> {
        self.out
            .write_all(bytes)
            .map_err(|e| ResultError::io(&self.path, e))?;
        self.count_row(t);
        Ok(())
    }

    /// The bytes of several rows formatted by [`RowFormat::format`] one after the other,
    /// at the times `times`.
    pub fn write_formatted_rows(&mut self, times: &[f64], bytes: &[u8]) -> Result<(), ResultError> {
        self.out
            .write_all(bytes)
            .map_err(|e| ResultError::io(&self.path, e))?;
        for &t in times {
            self.count_row(t);
        }
        Ok(())
    }

    fn count_row(&mut self, t: f64) {
        self.first_time.get_or_insert(t);
        self.last_time = t;
        self.rows += 1;
    }

    /// Rows written so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Complete the file (patch the `.mat` sizes) and close it; returns the number of rows.
    pub fn finish(mut self) -> Result<usize, ResultError> {
        let path = self.path.clone();
        let io = |e| ResultError::io(&path, e);
        if let Kind::Mat(m) = &self.kind {
            let start = self.first_time.unwrap_or(0.0);
            let stop = if self.rows == 0 {
                start
            } else {
                self.last_time
            };
            let points = i32::try_from(self.rows).map_err(|_| {
                ResultError::invalid(format!(
                    "{} output points are too many for a v4 .mat file",
                    self.rows
                ))
            })?;
            let out = &mut self.out;
            out.seek(SeekFrom::Start(m.data_1_values)).map_err(io)?;
            out.write_all(&start.to_le_bytes()).map_err(io)?;
            let stop_at = m.data_1_values + 8 * (m.constants as u64 + 1);
            out.seek(SeekFrom::Start(stop_at)).map_err(io)?;
            out.write_all(&stop.to_le_bytes()).map_err(io)?;
            // The header's third number is the column count: one column per output point.
            out.seek(SeekFrom::Start(m.data_2_header + 8)).map_err(io)?;
            out.write_all(&points.to_le_bytes()).map_err(io)?;
            out.seek(SeekFrom::End(0)).map_err(io)?;
        }
        self.out.flush().map_err(io)?;
        Ok(self.rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{read_result, write_result, SimResult, Storage, VarKind};

    fn sample() -> SimResult {
        let vars = vec![
            ResultVar::column("x", 0),
            ResultVar::alias("y", 0, true),
            ResultVar::column("z", 1),
            ResultVar::parameter("k", 2.5),
            ResultVar::new("n", VarKind::Discrete, Storage::Column(2)),
        ];
        let mut r = SimResult::new(vars, 3).unwrap();
        r.push_row(0.0, &[1.0, 0.1, 3.0]).unwrap();
        r.push_row(0.5, &[2.0, 1e-300, 3.0]).unwrap();
        r.push_row(0.5, &[-2.0, f64::NAN, 4.0]).unwrap();
        r.push_row(1.0, &[1.0 / 3.0, f64::INFINITY, 4.0]).unwrap();
        r
    }

    fn streamed(path: &Path, r: &SimResult) {
        let mut s = ResultStream::create(path, r.vars(), r.ncols()).unwrap();
        for (t, row) in r.rows() {
            s.write_row(t, row).unwrap();
        }
        assert_eq!(s.finish().unwrap(), r.len());
    }

    #[test]
    fn streamed_files_equal_the_files_written_at_once() {
        let dir = std::env::temp_dir().join(format!("moss-stream-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let r = sample();
        for ext in ["csv", "mat"] {
            let whole = dir.join(format!("whole.{ext}"));
            let rows = dir.join(format!("rows.{ext}"));
            write_result(&r, &whole).unwrap();
            streamed(&rows, &r);
            assert_eq!(
                std::fs::read(&whole).unwrap(),
                std::fs::read(&rows).unwrap(),
                "{ext}: streamed bytes differ from the whole-result writer"
            );
            let back = read_result(&rows).unwrap();
            assert_eq!(back.len(), 4);
            assert_eq!(back.series("y").unwrap()[1], -2.0);
            assert_eq!(back.series("k").unwrap()[3], 2.5);
            assert_eq!(back.series("z").unwrap()[1], 1e-300);
            assert_eq!(back.series("x").unwrap()[3], 1.0 / 3.0);
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn an_empty_stream_is_a_valid_file() {
        let dir = std::env::temp_dir().join(format!("moss-stream-empty-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let r = sample();
        let path = dir.join("empty.mat");
        let s = ResultStream::create(&path, r.vars(), r.ncols()).unwrap();
        assert_eq!(s.finish().unwrap(), 0);
        let back = read_result(&path).unwrap();
        assert_eq!(back.len(), 0);
        assert!(back.var("x").is_some());
        std::fs::remove_dir_all(&dir).ok();
    }
}
