//! MATLAB v4 `.mat` results in the Dymola/OpenModelica trajectory layout ("Atrajectory 1.1").
//!
//! A v4 file is a sequence of matrices, each a 20-byte header of five little-endian `i32`
//! (type code `MOPT`, rows, columns, imaginary flag, name length incl. NUL), the NUL-terminated
//! name and the elements in column-major order. Type codes used here: `0` = `f64`,
//! `20` = `i32`, `51` = `u8` text (what Dymola writes for character matrices).
//!
//! The trajectory layout ("binTrans": the name-like matrices are stored transposed, one entry
//! per column) has these matrices, in this order:
//!
//! | matrix        | type | size (rows x cols)   | content                                          |
//! |---------------|------|----------------------|--------------------------------------------------|
//! | `Aclass`      | text | 4 x 11               | `Atrajectory`, `1.1`, empty, `binTrans`          |
//! | `name`        | text | maxlen x nvars       | variable names, space padded, `time` first       |
//! | `description` | text | maxlen x nvars       | descriptions, `text [unit]` when a unit is known |
//! | `dataInfo`    | i32  | 4 x nvars            | per variable: matrix, signed column, 0, -1/0     |
//! | `data_1`      | f64  | n1 x 2               | time-invariant values at start and stop time     |
//! | `data_2`      | f64  | n2 x npoints         | trajectories, one output point per column        |
//!
//! `dataInfo` column j: row 1 is the data matrix (0 = the abscissa `time`, 1 = `data_1`,
//! 2 = `data_2`); row 2 the 1-based row of that matrix, negative for a negated alias (row 1 of
//! both data matrices is time, so `time` has `[0, 1, 0, -1]`); row 3 is 0 (linear
//! interpolation); row 4 is -1 (not defined outside the time range) for trajectories and 0 for
//! time-invariant values. This is what DyMat and scipy read (checked by `tests/python`).
//!
//! The reader accepts the files written here and Dymola/OpenModelica files in either
//! `binTrans` or `binNormal` orientation, with `f64` or `f32` data.

use crate::{ResultError, ResultVar, SimResult, Storage, VarKind};
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

pub(crate) const TYPE_F64: i32 = 0;
const TYPE_F32: i32 = 10;
const TYPE_I32: i32 = 20;
const TYPE_I16: i32 = 30;
const TYPE_U16: i32 = 40;
const TYPE_U8: i32 = 50;
const TEXT_FLAG: i32 = 1;

/// Write `result` to `path` as a Dymola-style v4 `.mat` file.
pub fn write_mat(result: &SimResult, path: &Path) -> Result<(), ResultError> {
    let file = std::fs::File::create(path).map_err(|e| ResultError::io(path, e))?;
    let mut out = std::io::BufWriter::new(file);
    write_mat_to(result, &mut out)
        .and_then(|_| out.flush())
        .map_err(|e| ResultError::io(path, e))
}

/// Write `result` in the `.mat` layout to any writer.
pub fn write_mat_to(result: &SimResult, out: &mut impl Write) -> std::io::Result<()> {
    let layout = MatLayout::of(result.vars());
    write_variable_table(out, &layout)?;
    let start = result.time().first().copied().unwrap_or(0.0);
    let stop = result.time().last().copied().unwrap_or(start);
    write_data_1(out, start, stop, &layout.constants)?;
    write_data_2(out, result)
}

/// `Aclass`, `name`, `description` and `dataInfo`: everything before the data matrices.
pub(crate) fn write_variable_table(
    out: &mut impl Write,
    layout: &MatLayout,
) -> std::io::Result<()> {
    write_text_rows(out, "Aclass", &["Atrajectory", "1.1", "", "binTrans"])?;
    write_text_columns(out, "name", &layout.names)?;
    write_text_columns(out, "description", &layout.descriptions)?;
    write_header(out, TYPE_I32, 4, layout.data_info.len(), "dataInfo")?;
    let mut bytes = Vec::with_capacity(16 * layout.data_info.len());
    for x in layout.data_info.iter().flatten() {
        bytes.extend_from_slice(&x.to_le_bytes());
    }
    out.write_all(&bytes)
}

/// The variable table as the `.mat` file lists it (time first).
pub(crate) struct MatLayout {
    names: Vec<String>,
    descriptions: Vec<String>,
    data_info: Vec<[i32; 4]>,
    /// Values of `data_1` rows 2.. (time-invariant variables in output order).
    pub(crate) constants: Vec<f64>,
}

impl MatLayout {
    pub(crate) fn of(vars: &[ResultVar]) -> Self {
        let mut layout = MatLayout {
            names: vec!["time".to_string()],
            descriptions: vec!["Time in [s]".to_string()],
            data_info: vec![[0, 1, 0, -1]],
            constants: Vec::new(),
        };
        for var in vars {
            layout.names.push(var.name.clone());
            layout.descriptions.push(description_with_unit(var));
            let info = match var.storage {
                Storage::Constant(x) => {
                    layout.constants.push(x);
                    [1, layout.constants.len() as i32 + 1, 0, 0]
                }
                Storage::Column(c) => [2, c as i32 + 2, 0, -1],
                Storage::Alias { of, negated } => {
                    let row = of as i32 + 2;
                    [2, if negated { -row } else { row }, 0, -1]
                }
            };
            layout.data_info.push(info);
        }
        layout
    }
}

/// Dymola's convention: the unit goes in brackets at the end of the description.
fn description_with_unit(var: &ResultVar) -> String {
    match (var.description.is_empty(), var.unit.is_empty()) {
        (_, true) => var.description.clone(),
        (true, false) => format!("[{}]", var.unit),
        (false, false) => format!("{} [{}]", var.description, var.unit),
    }
}

/// Split `text [unit|displayUnit]` into description and unit.
fn split_description(text: &str) -> (String, String) {
    let trimmed = text.trim_end();
    if let Some(stripped) = trimmed.strip_suffix(']') {
        if let Some(open) = stripped.rfind('[') {
            let unit = stripped[open + 1..].split('|').next().unwrap_or("");
            let description = stripped[..open].trim_end();
            return (description.to_string(), unit.to_string());
        }
    }
    (trimmed.to_string(), String::new())
}

pub(crate) fn write_header(
    out: &mut impl Write,
    type_code: i32,
    rows: usize,
    cols: usize,
    name: &str,
) -> std::io::Result<()> {
    let dims = [
        type_code,
        to_i32(rows)?,
        to_i32(cols)?,
        0,
        to_i32(name.len() + 1)?,
    ];
    for x in dims {
        out.write_all(&x.to_le_bytes())?;
    }
    out.write_all(name.as_bytes())?;
    out.write_all(&[0])
}

fn to_i32(n: usize) -> std::io::Result<i32> {
    i32::try_from(n).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("matrix dimension {n} is too large for a v4 .mat file"),
        )
    })
}

/// A text matrix with one string per row (used for `Aclass`), space padded.
fn write_text_rows(out: &mut impl Write, name: &str, rows: &[&str]) -> std::io::Result<()> {
    let width = rows.iter().map(|r| r.len()).max().unwrap_or(0);
    write_header(out, TYPE_U8 + TEXT_FLAG, rows.len(), width, name)?;
    for col in 0..width {
        for row in rows {
            out.write_all(&[*row.as_bytes().get(col).unwrap_or(&b' ')])?;
        }
    }
    Ok(())
}

/// A text matrix with one string per column ("binTrans"), space padded.
fn write_text_columns(out: &mut impl Write, name: &str, cols: &[String]) -> std::io::Result<()> {
    let height = cols.iter().map(|c| c.len()).max().unwrap_or(0).max(1);
    write_header(out, TYPE_U8 + TEXT_FLAG, height, cols.len(), name)?;
    for col in cols {
        let bytes = col.as_bytes();
        out.write_all(bytes)?;
        out.write_all(&vec![b' '; height - bytes.len()])?;
    }
    Ok(())
}

/// `data_1`: time-invariant values, one column at `start`, one at `stop` (the same values).
pub(crate) fn write_data_1(
    out: &mut impl Write,
    start: f64,
    stop: f64,
    constants: &[f64],
) -> std::io::Result<()> {
    write_header(out, TYPE_F64, constants.len() + 1, 2, "data_1")?;
    let mut bytes = Vec::with_capacity(8 * (constants.len() + 1));
    for t in [start, stop] {
        bytes.clear();
        bytes.extend_from_slice(&t.to_le_bytes());
        for x in constants {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
        out.write_all(&bytes)?;
    }
    Ok(())
}

/// Bytes of a matrix header named `name` (before its first element).
pub(crate) fn header_len(name: &str) -> u64 {
    20 + name.len() as u64 + 1
}

fn write_data_2(out: &mut impl Write, result: &SimResult) -> std::io::Result<()> {
    write_header(out, TYPE_F64, result.ncols() + 1, result.len(), "data_2")?;
    for (t, row) in result.rows() {
        out.write_all(&t.to_le_bytes())?;
        for x in row {
            out.write_all(&x.to_le_bytes())?;
        }
    }
    Ok(())
}

/// One matrix of a v4 file, elements converted to `f64`, column-major.
#[derive(Debug)]
struct Matrix {
    rows: usize,
    cols: usize,
    values: Vec<f64>,
}

impl Matrix {
    fn at(&self, row: usize, col: usize) -> f64 {
        self.values[col * self.rows + row]
    }

    /// Rows of a text matrix as strings (trailing spaces and NULs removed).
    fn text_rows(&self) -> Vec<String> {
        (0..self.rows)
            .map(|r| text_of((0..self.cols).map(|c| self.at(r, c))))
            .collect()
    }

    /// Columns of a text matrix as strings.
    fn text_columns(&self) -> Vec<String> {
        (0..self.cols)
            .map(|c| text_of((0..self.rows).map(|r| self.at(r, c))))
            .collect()
    }
}

fn text_of(codes: impl Iterator<Item = f64>) -> String {
    let bytes: Vec<u8> = codes.map(|x| x as u8).collect();
    let s = String::from_utf8_lossy(&bytes);
    s.trim_end_matches([' ', '\0']).to_string()
}

/// Read a `.mat` result file.
pub fn read_mat(path: &Path) -> Result<SimResult, ResultError> {
    let bytes = std::fs::read(path).map_err(|e| ResultError::io(path, e))?;
    parse_mat(&bytes, path)
}

/// Parse the bytes of a `.mat` result; `path` is only used in error messages.
pub fn parse_mat(bytes: &[u8], path: &Path) -> Result<SimResult, ResultError> {
    if bytes.starts_with(b"MATLAB") {
        return Err(ResultError::format(
            path,
            0,
            "this is a MATLAB v5/v7 file; only v4 trajectory files (Dymola/OpenModelica \
             result layout) are supported",
        ));
    }
    let matrices = parse_matrices(bytes).map_err(|m| ResultError::format(path, 0, m))?;
    Trajectory::from_matrices(&matrices)
        .and_then(|t| t.into_result())
        .map_err(|m| ResultError::format(path, 0, m))
}

/// All matrices of a v4 file by name.
fn parse_matrices(bytes: &[u8]) -> Result<HashMap<String, Matrix>, String> {
    let mut matrices = HashMap::new();
    let mut pos = 0;
    while pos < bytes.len() {
        let (name, matrix, next) = parse_matrix(bytes, pos)?;
        matrices.insert(name, matrix);
        pos = next;
    }
    Ok(matrices)
}

fn read_i32(bytes: &[u8], pos: usize) -> Result<i32, String> {
    bytes
        .get(pos..pos + 4)
        .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or_else(|| format!("file truncated at byte {pos}: not a complete MATLAB v4 file"))
}

fn parse_matrix(bytes: &[u8], pos: usize) -> Result<(String, Matrix, usize), String> {
    let type_code = read_i32(bytes, pos)?;
    let dims: Vec<i32> = (1..5)
        .map(|k| read_i32(bytes, pos + 4 * k))
        .collect::<Result<_, _>>()?;
    let (rows, cols, imag, name_len) = (dims[0], dims[1], dims[2], dims[3]);
    if !(0..=TYPE_U8 + TEXT_FLAG).contains(&type_code) || rows < 0 || cols < 0 || name_len < 1 {
        return Err(format!(
            "byte {pos}: not a MATLAB v4 matrix header (type {type_code}, {rows} x {cols}); \
             only little-endian v4 files are supported (save with -v4)"
        ));
    }
    if imag != 0 {
        return Err(format!("byte {pos}: complex matrices are not supported"));
    }
    let precision = type_code % 100 / 10 * 10;
    if type_code % 10 > TEXT_FLAG || type_code / 100 != 0 {
        return Err(format!(
            "byte {pos}: matrix type {type_code} is not supported (only full matrices)"
        ));
    }
    let name_start = pos + 20;
    let name_end = name_start + name_len as usize;
    let name_bytes = bytes
        .get(name_start..name_end)
        .ok_or_else(|| format!("byte {name_start}: file truncated in a matrix name"))?;
    let name = String::from_utf8_lossy(name_bytes)
        .trim_end_matches('\0')
        .to_string();
    let count = rows as usize * cols as usize;
    let width = match precision {
        TYPE_F64 => 8,
        TYPE_F32 | TYPE_I32 => 4,
        TYPE_I16 | TYPE_U16 => 2,
        _ => 1,
    };
    let data_end = name_end + count * width;
    let data = bytes.get(name_end..data_end).ok_or_else(|| {
        format!("matrix `{name}`: file truncated ({rows} x {cols} elements expected)")
    })?;
    let values = data
        .chunks_exact(width)
        .map(|b| match precision {
            TYPE_F64 => f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
            TYPE_F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
            TYPE_I32 => i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
            TYPE_I16 => i16::from_le_bytes([b[0], b[1]]) as f64,
            TYPE_U16 => u16::from_le_bytes([b[0], b[1]]) as f64,
            _ => b[0] as f64,
        })
        .collect();
    let matrix = Matrix {
        rows: rows as usize,
        cols: cols as usize,
        values,
    };
    Ok((name, matrix, data_end))
}

/// The trajectory matrices of a file with their orientation resolved.
struct Trajectory<'a> {
    names: Vec<String>,
    descriptions: Vec<String>,
    /// `[matrix, signed row, interpolation, extrapolation]` per variable.
    info: Vec<[i64; 4]>,
    data_1: Option<&'a Matrix>,
    data_2: Option<&'a Matrix>,
    /// `binTrans`: data matrices have one variable per row; else one per column.
    transposed: bool,
}

impl<'a> Trajectory<'a> {
    fn from_matrices(m: &'a HashMap<String, Matrix>) -> Result<Self, String> {
        let get = |n: &str| {
            m.get(n)
                .ok_or_else(|| format!("not a trajectory result file: matrix `{n}` is missing"))
        };
        let class = get("Aclass")?.text_rows();
        let version = class.get(1).map(String::as_str);
        if class.first().map(String::as_str) != Some("Atrajectory")
            || !matches!(version, Some("1.0" | "1.1"))
        {
            return Err(format!(
                "unsupported result file: Aclass is {class:?}, expected Atrajectory version 1.1"
            ));
        }
        if version == Some("1.0") {
            return Self::version_1_0(get("names")?, get("data")?);
        }
        let transposed = match class.get(3).map(String::as_str) {
            Some("binTrans") => true,
            Some("binNormal") | None => false,
            Some(other) => return Err(format!("unknown Aclass orientation `{other}`")),
        };
        let (name, description, data_info) = (get("name")?, get("description")?, get("dataInfo")?);
        let (names, descriptions) = if transposed {
            (name.text_columns(), description.text_columns())
        } else {
            (name.text_rows(), description.text_rows())
        };
        let info: Vec<[i64; 4]> = (0..names.len())
            .map(|j| {
                let at = |k: usize| {
                    if transposed {
                        data_info.at(k, j)
                    } else {
                        data_info.at(j, k)
                    }
                };
                [at(0) as i64, at(1) as i64, at(2) as i64, at(3) as i64]
            })
            .collect();
        let expected = if transposed {
            (4, names.len())
        } else {
            (names.len(), 4)
        };
        if (data_info.rows, data_info.cols) != expected || descriptions.len() != names.len() {
            return Err(format!(
                "inconsistent file: {} names, {} descriptions, dataInfo is {} x {}",
                names.len(),
                descriptions.len(),
                data_info.rows,
                data_info.cols
            ));
        }
        Ok(Trajectory {
            names,
            descriptions,
            info,
            data_1: m.get("data_1"),
            data_2: m.get("data_2"),
            transposed,
        })
    }

    /// Version 1.0 ("export as plotted"): `names` one per row, `data` one variable per
    /// column, time first; no descriptions, no aliases.
    fn version_1_0(names: &Matrix, data: &'a Matrix) -> Result<Self, String> {
        let names = names.text_rows();
        if names.len() != data.cols {
            return Err(format!(
                "inconsistent file: {} names for {} data columns",
                names.len(),
                data.cols
            ));
        }
        let info = (0..names.len())
            .map(|j| {
                if j == 0 {
                    [0, 1, 0, -1]
                } else {
                    [2, j as i64 + 1, 0, -1]
                }
            })
            .collect();
        Ok(Trajectory {
            descriptions: vec![String::new(); names.len()],
            names,
            info,
            data_1: None,
            data_2: Some(data),
            transposed: false,
        })
    }

    /// Number of output points and variables stored in a data matrix.
    fn shape(&self, matrix: &Matrix) -> (usize, usize) {
        if self.transposed {
            (matrix.cols, matrix.rows)
        } else {
            (matrix.rows, matrix.cols)
        }
    }

    /// Value of 0-based variable row `var` at output point `point`.
    fn value(&self, matrix: &Matrix, var: usize, point: usize) -> f64 {
        if self.transposed {
            matrix.at(var, point)
        } else {
            matrix.at(point, var)
        }
    }

    fn matrix(&self, which: i64) -> Result<&'a Matrix, String> {
        match which {
            1 => self.data_1,
            2 => self.data_2,
            _ => None,
        }
        .ok_or_else(|| format!("matrix data_{which} is referenced by dataInfo but missing"))
    }

    fn into_result(self) -> Result<SimResult, String> {
        let data_2 = self.matrix(2)?;
        let (npoints, nrows2) = self.shape(data_2);
        // data_2 row -> stored column, in order of first reference.
        let mut column_of_row: HashMap<usize, usize> = HashMap::new();
        let mut stored_rows: Vec<usize> = Vec::new();
        let mut owned = Vec::new();
        let mut vars = Vec::new();
        for (j, name) in self.names.iter().enumerate() {
            let [which, signed, _, _] = self.info[j];
            let row = signed.unsigned_abs() as usize;
            if which == 0 || (j == 0 && name == "time") {
                continue;
            }
            let matrix = self.matrix(which)?;
            let (points, nrows) = self.shape(matrix);
            // A trajectory matrix may have no points (a run that wrote none); constants
            // need their value.
            if row == 0 || row > nrows || (points == 0 && which == 1) {
                return Err(format!(
                    "variable `{name}`: dataInfo refers to row {signed} of data_{which}, \
                     which has {nrows} rows and {points} points"
                ));
            }
            let sign = if signed < 0 { -1.0 } else { 1.0 };
            let (description, unit) = split_description(&self.descriptions[j]);
            let storage = if which == 1 {
                Storage::Constant(sign * self.value(matrix, row - 1, 0))
            } else {
                let col = *column_of_row.entry(row - 1).or_insert_with(|| {
                    stored_rows.push(row - 1);
                    owned.push(false);
                    stored_rows.len() - 1
                });
                if signed > 0 && !owned[col] {
                    owned[col] = true;
                    Storage::Column(col)
                } else {
                    Storage::Alias {
                        of: col,
                        negated: signed < 0,
                    }
                }
            };
            let kind = if which == 1 {
                VarKind::Parameter
            } else {
                VarKind::Continuous
            };
            vars.push(ResultVar {
                name: name.clone(),
                unit,
                description,
                kind,
                storage,
            });
        }
        let mut result = SimResult::new(vars, stored_rows.len()).map_err(|e| e.to_string())?;
        if nrows2 == 0 {
            return Ok(result);
        }
        let mut values = vec![0.0; stored_rows.len()];
        for p in 0..npoints {
            for (v, &r) in values.iter_mut().zip(&stored_rows) {
                *v = self.value(data_2, r, p);
            }
            result
                .push_row(self.value(data_2, 0, p), &values)
                .map_err(|e| e.to_string())?;
        }
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn sample() -> SimResult {
        let vars = vec![
            ResultVar::column("x", 0)
                .with_unit("m")
                .with_description("Position"),
            ResultVar::alias("y", 0, true),
            ResultVar::column("v", 1),
            ResultVar::parameter("k", 2.5).with_unit("N/m"),
        ];
        let mut r = SimResult::with_vars(vars).unwrap();
        r.push_row(0.0, &[1.0, 2.0]).unwrap();
        r.push_row(0.5, &[3.0, 4.0]).unwrap();
        r.push_row(0.5, &[5.0, 6.0]).unwrap();
        r
    }

    #[test]
    fn writes_the_dymola_matrix_sequence() {
        let mut bytes = Vec::new();
        write_mat_to(&sample(), &mut bytes).unwrap();
        let m = parse_matrices(&bytes).unwrap();
        assert_eq!(
            m["Aclass"].text_rows(),
            ["Atrajectory", "1.1", "", "binTrans"]
        );
        assert_eq!(m["name"].text_columns(), ["time", "x", "y", "v", "k"]);
        assert_eq!(m["description"].text_columns()[1], "Position [m]");
        let info = &m["dataInfo"];
        assert_eq!((info.rows, info.cols), (4, 5));
        let column = |j: usize| (0..4).map(|k| info.at(k, j) as i32).collect::<Vec<_>>();
        assert_eq!(column(0), [0, 1, 0, -1]);
        assert_eq!(column(2), [2, -2, 0, -1]);
        assert_eq!(column(4), [1, 2, 0, 0]);
        assert_eq!((m["data_1"].rows, m["data_1"].cols), (2, 2));
        assert_eq!(m["data_1"].values, [0.0, 2.5, 0.5, 2.5]);
        assert_eq!((m["data_2"].rows, m["data_2"].cols), (3, 3));
        assert_eq!(m["data_2"].values[3..6], [0.5, 3.0, 4.0]);
        // Header of the first matrix: text type 51, 4 rows, 11 columns.
        assert_eq!(read_i32(&bytes, 0).unwrap(), 51);
        assert_eq!(read_i32(&bytes, 4).unwrap(), 4);
        assert_eq!(read_i32(&bytes, 8).unwrap(), 11);
    }

    #[test]
    fn round_trips_values_units_and_aliases() {
        let original = sample();
        let mut bytes = Vec::new();
        write_mat_to(&original, &mut bytes).unwrap();
        let back = parse_mat(&bytes, &PathBuf::from("t.mat")).unwrap();
        assert_eq!(back.time(), original.time());
        for name in ["x", "y", "v", "k"] {
            assert_eq!(back.series(name), original.series(name), "{name}");
        }
        assert_eq!(back.var("x").unwrap().unit, "m");
        assert_eq!(back.var("x").unwrap().description, "Position");
        assert_eq!(
            back.var("y").unwrap().storage,
            Storage::Alias {
                of: 0,
                negated: true
            }
        );
        assert_eq!(back.var("k").unwrap().unit, "N/m");
    }

    #[test]
    fn rejects_truncated_and_foreign_files() {
        let mut bytes = Vec::new();
        write_mat_to(&sample(), &mut bytes).unwrap();
        let path = PathBuf::from("t.mat");
        assert!(parse_mat(&bytes[..bytes.len() - 3], &path).is_err());
        assert!(parse_mat(b"MATLAB 5.0 MAT-file, written by ...", &path).is_err());
        assert!(parse_mat(&[], &path).is_err());
    }

    /// A file in the `binNormal` orientation (as Dymola's "Save As" writes), built by hand:
    /// names one per row, dataInfo nvars x 4, data matrices one variable per column.
    fn bin_normal_file() -> Vec<u8> {
        let mut out = Vec::new();
        write_text_rows(&mut out, "Aclass", &["Atrajectory", "1.1", "", "binNormal"]).unwrap();
        write_text_rows(&mut out, "name", &["time", "a", "b", "p"]).unwrap();
        write_text_rows(&mut out, "description", &["Time [s]", "A [m]", "", "P"]).unwrap();
        let info: [[i32; 4]; 4] = [[0, 1, 0, -1], [2, 2, 0, -1], [2, -2, 0, -1], [1, 2, 0, 0]];
        write_header(&mut out, TYPE_I32, 4, 4, "dataInfo").unwrap();
        for k in 0..4 {
            for row in &info {
                out.extend_from_slice(&row[k].to_le_bytes());
            }
        }
        let f64_matrix = |out: &mut Vec<u8>, name: &str, rows: usize, cols: &[&[f64]]| {
            write_header(out, TYPE_F64, rows, cols.len(), name).unwrap();
            for x in cols.iter().flat_map(|c| c.iter()) {
                out.extend_from_slice(&x.to_le_bytes());
            }
        };
        f64_matrix(&mut out, "data_1", 2, &[&[0.0, 1.0], &[7.0, 7.0]]);
        f64_matrix(&mut out, "data_2", 3, &[&[0.0, 0.5, 1.0], &[1.0, 2.0, 3.0]]);
        out
    }

    #[test]
    fn reads_bin_normal_files() {
        let r = parse_mat(&bin_normal_file(), &PathBuf::from("n.mat")).unwrap();
        assert_eq!(r.time(), &[0.0, 0.5, 1.0]);
        assert_eq!(r.series("a").unwrap(), vec![1.0, 2.0, 3.0]);
        assert_eq!(r.series("b").unwrap(), vec![-1.0, -2.0, -3.0]);
        assert_eq!(r.series("p").unwrap(), vec![7.0; 3]);
        assert_eq!(r.var("a").unwrap().unit, "m");
    }

    #[test]
    fn reads_version_1_0_files() {
        let mut out = Vec::new();
        write_text_rows(&mut out, "Aclass", &["Atrajectory", "1.0", "", "binNormal"]).unwrap();
        write_text_rows(&mut out, "names", &["time", "x"]).unwrap();
        write_header(&mut out, TYPE_F64, 2, 2, "data").unwrap();
        for x in [0.0f64, 1.0, 5.0, 6.0] {
            out.extend_from_slice(&x.to_le_bytes());
        }
        let r = parse_mat(&out, &PathBuf::from("v10.mat")).unwrap();
        assert_eq!(r.time(), &[0.0, 1.0]);
        assert_eq!(r.series("x").unwrap(), vec![5.0, 6.0]);
    }

    #[test]
    fn splits_units_from_descriptions() {
        assert_eq!(
            split_description("Angle [rad|deg]"),
            ("Angle".to_string(), "rad".to_string())
        );
        assert_eq!(
            split_description("plain"),
            ("plain".to_string(), String::new())
        );
    }
}
