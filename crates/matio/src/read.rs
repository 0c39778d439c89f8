//! Reading one named matrix from a MAT file (v4 or level 5) or a text table file.

use crate::Matrix;
use std::io::Read;
use std::path::Path;

/// Reads the matrix `name` from `file`: a MAT file of version 4 or level 5 (formats "6"
/// and "7"), or a text file in the MSL's table format (first line `#1`). The error names
/// the file and says what is wrong (no such matrix: which ones the file has).
pub fn read_matrix(file: &str, name: &str) -> Result<Matrix, String> {
    let bytes = std::fs::read(Path::new(file)).map_err(|e| format!("cannot read `{file}`: {e}"))?;
    let found = if crate::text::is_text_table(&bytes) {
        crate::text::find(&bytes, name)
    } else if bytes.starts_with(b"MATLAB 7.3") {
        Err(
            "MAT format 7.3 (HDF5) is not supported by moss; save the file with \
             format \"4\", \"6\" or \"7\""
                .to_string(),
        )
    } else if is_level5(&bytes) {
        find(walk_level5, &bytes, name)
    } else {
        find(walk_v4, &bytes, name)
    };
    match found {
        Ok(Some(m)) => Ok(m),
        Ok(None) => Err(format!(
            "`{file}` has no matrix named `{name}`{}",
            match names(&bytes) {
                Ok(all) if !all.is_empty() => format!(" (it has: {})", all.join(", ")),
                _ => String::new(),
            }
        )),
        Err(why) => Err(format!("cannot read matrix `{name}` from `{file}`: {why}")),
    }
}

/// The number of rows and columns of matrix `name` in `file` (see [`read_matrix`]).
pub fn read_matrix_size(file: &str, name: &str) -> Result<(usize, usize), String> {
    read_matrix(file, name).map(|m| (m.rows, m.cols))
}

/// The names of all matrices of a file (for error messages).
fn names(bytes: &[u8]) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut collect = |n: &str| {
        out.push(n.to_string());
        false
    };
    if crate::text::is_text_table(bytes) {
        return Ok(crate::text::names(bytes));
    }
    if is_level5(bytes) {
        walk_level5(bytes, &mut |n, _| Ok(collect(n)))?;
    } else {
        walk_v4(bytes, &mut |n, _| Ok(collect(n)))?;
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------
// MATLAB v4: per matrix a header of five 32-bit integers (type MOPT, rows, columns,
// imaginary flag, name length with NUL), the name, then the values column by column.

type Lazy<'a> = &'a dyn Fn() -> Result<Matrix, String>;
type Walk = fn(&[u8], &mut dyn FnMut(&str, Lazy) -> Result<bool, String>) -> Result<(), String>;

/// The matrix `name` of a file walked by `walk` (only that one is decoded).
fn find(walk: Walk, bytes: &[u8], name: &str) -> Result<Option<Matrix>, String> {
    let mut found = None;
    walk(bytes, &mut |n, m| {
        if n == name {
            found = Some(m()?);
            return Ok(true);
        }
        Ok(false)
    })?;
    Ok(found)
}

/// Calls `visit(name, matrix)` for each matrix until it returns `true`.
fn walk_v4(
    bytes: &[u8],
    visit: &mut dyn FnMut(&str, Lazy) -> Result<bool, String>,
) -> Result<(), String> {
    let mut pos = 0;
    while pos < bytes.len() {
        let head = bytes
            .get(pos..pos + 20)
            .ok_or_else(|| format!("byte {pos}: truncated v4 matrix header"))?;
        // the type is below 5000 in either byte order: its order tells the file's
        let le = i32::from_le_bytes([head[0], head[1], head[2], head[3]]);
        let big = !(0..5000).contains(&le);
        let int = |k: usize| {
            let b = [
                head[4 * k],
                head[4 * k + 1],
                head[4 * k + 2],
                head[4 * k + 3],
            ];
            if big {
                i32::from_be_bytes(b)
            } else {
                i32::from_le_bytes(b)
            }
        };
        let (mopt, rows, cols, imag, name_len) = (int(0), int(1), int(2), int(3), int(4));
        if !(0..5000).contains(&mopt) || rows < 0 || cols < 0 || name_len < 1 {
            return Err(format!(
                "byte {pos}: not a MAT file (neither a v4 matrix header nor a level 5 file header)"
            ));
        }
        let (p, t) = (mopt / 10 % 10, mopt % 10);
        let width = match p {
            0 => 8,
            1 | 2 => 4,
            3 | 4 => 2,
            5 => 1,
            _ => return Err(format!("byte {pos}: unknown v4 precision {p}")),
        };
        let name_start = pos + 20;
        let name_end = name_start + name_len as usize;
        let name_bytes = bytes
            .get(name_start..name_end)
            .ok_or_else(|| format!("byte {name_start}: truncated matrix name"))?;
        let name = String::from_utf8_lossy(name_bytes)
            .trim_end_matches('\0')
            .to_string();
        let (rows, cols) = (rows as usize, cols as usize);
        let parts = if imag != 0 { 2 } else { 1 };
        let truncated = || format!("matrix `{name}`: file truncated");
        let real_len = rows
            .checked_mul(cols)
            .and_then(|n| n.checked_mul(width))
            .ok_or_else(truncated)?;
        let data_end = real_len
            .checked_mul(parts)
            .and_then(|n| n.checked_add(name_end))
            .ok_or_else(truncated)?;
        let data = bytes
            .get(name_end..name_end + real_len)
            .ok_or_else(truncated)?;
        let make = || {
            if t == 2 {
                return Err(format!(
                    "matrix `{name}` is sparse; moss reads full matrices"
                ));
            }
            let values: Vec<f64> = data
                .chunks_exact(width)
                .map(|b| v4_value(b, p, big))
                .collect();
            Ok(from_column_major(rows, cols, &values))
        };
        if visit(&name, &make)? {
            return Ok(());
        }
        pos = data_end;
    }
    Ok(())
}

fn v4_value(b: &[u8], precision: i32, big: bool) -> f64 {
    macro_rules! num {
        ($t:ty, $n:expr) => {{
            let mut a = [0u8; $n];
            a.copy_from_slice(b);
            if big {
                <$t>::from_be_bytes(a) as f64
            } else {
                <$t>::from_le_bytes(a) as f64
            }
        }};
    }
    match precision {
        0 => num!(f64, 8),
        1 => num!(f32, 4),
        2 => num!(i32, 4),
        3 => num!(i16, 2),
        4 => num!(u16, 2),
        _ => b[0] as f64,
    }
}

fn from_column_major(rows: usize, cols: usize, values: &[f64]) -> Matrix {
    let mut data = vec![0.0; rows * cols];
    for c in 0..cols {
        for r in 0..rows {
            data[r * cols + c] = values[c * rows + r];
        }
    }
    Matrix { rows, cols, data }
}

// ---------------------------------------------------------------------------------------
// MAT level 5: a 128-byte header (text, subsystem offset, version, endian indicator "IM"
// or "MI"), then data elements: an 8-byte tag (type, byte count) or, for at most 4 bytes
// of data, a 4-byte tag with the count in its upper half; elements are padded to 8 bytes.
// `miCOMPRESSED` holds a zlib stream of further elements; `miMATRIX` holds array flags,
// dimensions, name and the real part (column by column).

const HEADER_LEN: usize = 128;
const MI_INT8: u32 = 1;
const MI_UINT8: u32 = 2;
const MI_INT16: u32 = 3;
const MI_UINT16: u32 = 4;
const MI_INT32: u32 = 5;
const MI_UINT32: u32 = 6;
const MI_SINGLE: u32 = 7;
const MI_DOUBLE: u32 = 9;
const MI_INT64: u32 = 12;
const MI_UINT64: u32 = 13;
const MI_MATRIX: u32 = 14;
const MI_COMPRESSED: u32 = 15;
const MI_UTF8: u32 = 16;

fn is_level5(bytes: &[u8]) -> bool {
    bytes.len() >= HEADER_LEN && matches!(&bytes[126..128], b"IM" | b"MI")
}

/// Reads one number of a data type from its bytes (`true`: big-endian).
type Converter = fn(&[u8], bool) -> f64;

#[derive(Clone, Copy)]
struct Order {
    big: bool,
}

impl Order {
    fn u32(self, b: &[u8], at: usize) -> Result<u32, String> {
        let s = b
            .get(at..at + 4)
            .ok_or_else(|| format!("byte {at}: truncated data element"))?;
        let a = [s[0], s[1], s[2], s[3]];
        Ok(if self.big {
            u32::from_be_bytes(a)
        } else {
            u32::from_le_bytes(a)
        })
    }

    /// The data element at `at`: (type, data, position after it).
    fn element(self, b: &[u8], at: usize) -> Result<(u32, &[u8], usize), String> {
        let first = self.u32(b, at)?;
        if first >> 16 != 0 {
            // small data element: count in the upper half, data in the next 4 bytes
            let (ty, n) = (first & 0xffff, (first >> 16) as usize);
            let data = b
                .get(at + 4..at + 4 + n.min(4))
                .ok_or_else(|| format!("byte {at}: truncated data element"))?;
            return Ok((ty, data, at + 8));
        }
        let n = self.u32(b, at + 4)? as usize;
        let data = b
            .get(at + 8..at + 8 + n)
            .ok_or_else(|| format!("byte {at}: truncated data element ({n} bytes announced)"))?;
        Ok((first, data, at + 8 + n + (8 - n % 8) % 8))
    }

    fn values(self, ty: u32, data: &[u8]) -> Result<Vec<f64>, String> {
        // each data type: its width and how its bytes become a number in either order
        macro_rules! conv {
            ($t:ty, $n:expr) => {
                ($n, |b: &[u8], big: bool| {
                    let a: [u8; $n] = b.try_into().unwrap_or([0; $n]);
                    (if big {
                        <$t>::from_be_bytes(a)
                    } else {
                        <$t>::from_le_bytes(a)
                    }) as f64
                })
            };
        }
        let (width, f): (usize, Converter) = match ty {
            MI_DOUBLE => conv!(f64, 8),
            MI_SINGLE => conv!(f32, 4),
            MI_INT8 => conv!(i8, 1),
            MI_UINT8 | MI_UTF8 => conv!(u8, 1),
            MI_INT16 => conv!(i16, 2),
            MI_UINT16 => conv!(u16, 2),
            MI_INT32 => conv!(i32, 4),
            MI_UINT32 => conv!(u32, 4),
            MI_INT64 => conv!(i64, 8),
            MI_UINT64 => conv!(u64, 8),
            other => return Err(format!("numeric data of unknown type {other}")),
        };
        Ok(data.chunks_exact(width).map(|c| f(c, self.big)).collect())
    }
}

fn walk_level5(
    bytes: &[u8],
    visit: &mut dyn FnMut(&str, Lazy) -> Result<bool, String>,
) -> Result<(), String> {
    let order = Order {
        big: &bytes[126..128] == b"MI",
    };
    let mut pos = HEADER_LEN;
    while pos + 8 <= bytes.len() {
        let (ty, data, next) = order.element(bytes, pos)?;
        let stop = match ty {
            MI_MATRIX => visit_matrix(order, data, visit)?,
            MI_COMPRESSED => {
                let mut inflated = Vec::new();
                flate2::read::ZlibDecoder::new(data)
                    .read_to_end(&mut inflated)
                    .map_err(|e| format!("byte {pos}: corrupt compressed element: {e}"))?;
                let (inner, body, _) = order.element(&inflated, 0)?;
                inner == MI_MATRIX && visit_matrix(order, body, visit)?
            }
            _ => false,
        };
        if stop {
            return Ok(());
        }
        pos = next;
    }
    Ok(())
}

/// Array classes of level 5 that hold numbers.
fn is_numeric_class(class: u32) -> bool {
    (6..=15).contains(&class)
}

fn visit_matrix(
    order: Order,
    body: &[u8],
    visit: &mut dyn FnMut(&str, Lazy) -> Result<bool, String>,
) -> Result<bool, String> {
    let (_, flags, at) = order.element(body, 0)?;
    let class = order.u32(flags, 0)? & 0xff;
    let (_, dims, at) = order.element(body, at)?;
    let dims: Vec<usize> = order
        .values(MI_INT32, dims)?
        .into_iter()
        .map(|d| if d >= 0.0 { d as usize } else { usize::MAX })
        .collect();
    let (_, name, at) = order.element(body, at)?;
    let name = String::from_utf8_lossy(name).to_string();
    let make = || {
        if !is_numeric_class(class) {
            return Err(format!(
                "`{name}` is not a numeric matrix (array class {class})"
            ));
        }
        let [rows, cols] = dims[..] else {
            return Err(format!("`{name}` has {} dimensions, not 2", dims.len()));
        };
        let (ty, real, _) = order.element(body, at)?;
        let values = order.values(ty, real)?;
        if Some(values.len()) != rows.checked_mul(cols) {
            return Err(format!(
                "`{name}`: {} values for a {rows} x {cols} matrix",
                values.len()
            ));
        }
        Ok(from_column_major(rows, cols, &values))
    };
    visit(&name, &make)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::write::{level5_header, level5_matrix, write_matrix, MatFormat};
    use std::io::Write;

    fn scratch(test: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("moss-matio-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch directory");
        dir
    }

    const A: [f64; 6] = [11.0, 12.0, 21.0, 22.0, 31.0, 32.5];

    fn written(dir: &Path, file: &str, format: MatFormat) -> String {
        let path = dir.join(file).to_string_lossy().into_owned();
        write_matrix(&path, "B", 1, 2, &[1.0, 2.0], false, format).expect("write B");
        write_matrix(&path, "A", 3, 2, &A, true, format).expect("write A");
        path
    }

    #[test]
    fn matrices_written_in_v4_and_level_5_read_back() {
        let dir = scratch("roundtrip");
        for (file, format) in [("a4.mat", MatFormat::V4), ("a6.mat", MatFormat::Level5)] {
            let path = written(&dir, file, format);
            let m = read_matrix(&path, "A").expect("read A");
            assert_eq!((m.rows, m.cols), (3, 2));
            assert_eq!(m.data, A);
            assert_eq!(m.at(2, 1), 32.5);
            assert_eq!(read_matrix_size(&path, "B"), Ok((1, 2)));
        }
    }

    /// Format "7" files hold each matrix zlib-compressed in an `miCOMPRESSED` element.
    #[test]
    fn compressed_level_5_elements_are_inflated() {
        let dir = scratch("compressed");
        let mut bytes = level5_header();
        let element = level5_matrix("A", 3, 2, &A).expect("element");
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&element).expect("compress");
        let packed = z.finish().expect("compress");
        bytes.extend_from_slice(&MI_COMPRESSED.to_le_bytes());
        bytes.extend_from_slice(&(packed.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&packed);
        let path = dir.join("a7.mat");
        std::fs::write(&path, bytes).expect("write");
        let m = read_matrix(&path.to_string_lossy(), "A").expect("read A");
        assert_eq!(m.data, A);
    }

    #[test]
    fn text_tables_with_comments_are_read_by_name() {
        let dir = scratch("text");
        let path = dir.join("t.txt");
        std::fs::write(
            &path,
            "#1\n# a comment\ndouble first(2,2)  # time, value\n  0  1\n  1, 2\n\
             float second(1,3)\n 4; 5\t6 # end\n",
        )
        .expect("write");
        let path = path.to_string_lossy().into_owned();
        let m = read_matrix(&path, "second").expect("read second");
        assert_eq!(
            (m.rows, m.cols, m.data.clone()),
            (1, 3, vec![4.0, 5.0, 6.0])
        );
        assert_eq!(
            read_matrix(&path, "first").expect("first").data,
            [0.0, 1.0, 1.0, 2.0]
        );
    }

    #[test]
    fn a_missing_matrix_is_reported_with_the_names_the_file_has() {
        let dir = scratch("missing");
        let path = written(&dir, "a.mat", MatFormat::Level5);
        let e = read_matrix(&path, "C").expect_err("no C");
        assert!(
            e.contains("no matrix named `C`") && e.contains("B, A"),
            "{e}"
        );
        let e = read_matrix(&dir.join("none.mat").to_string_lossy(), "A").expect_err("no file");
        assert!(e.starts_with("cannot read"), "{e}");
        let junk = dir.join("junk.mat");
        std::fs::write(&junk, b"\xff\xff\xff\xffnot a mat file at all").expect("write");
        let e = read_matrix(&junk.to_string_lossy(), "A").expect_err("junk");
        assert!(e.contains("not a MAT file"), "{e}");
    }

    #[test]
    fn csv_files_skip_header_lines_and_use_the_delimiter() {
        let dir = scratch("csv");
        let path = dir.join("t.csv");
        std::fs::write(&path, "time;y\n0; 1\n1 ;3\n\n").expect("write");
        let m = crate::read_csv(&path.to_string_lossy(), ";", 1).expect("csv");
        assert_eq!((m.rows, m.cols, m.data), (2, 2, vec![0.0, 1.0, 1.0, 3.0]));
        let e = crate::read_csv(&path.to_string_lossy(), ";", 0).expect_err("header");
        assert!(e.contains("`time` is not a number"), "{e}");
    }
}
