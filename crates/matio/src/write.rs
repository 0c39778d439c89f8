//! MATLAB MAT files written by `ModelicaIO_writeRealMatrix`: format "4" (MAT v4) and formats
//! "6" and "7" (MAT level 5, little-endian). Format "7" is written as an uncompressed level-5
//! file (the layout of format "6"), which every MAT reader accepts; "7.3" (HDF5) is not
//! supported. The layouts follow the public MAT-file format description; the code is written
//! here.

use std::io::{Read, Write};

/// The layout a `format` string of `writeRealMatrix` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatFormat {
    /// MATLAB v4: one header of five integers per matrix, no file header.
    V4,
    /// MAT level 5 ("6", and "7" written without compression): a 128-byte file header, then
    /// one `miMATRIX` data element per matrix.
    Level5,
}

impl MatFormat {
    /// The layout for a `format` argument, or a message naming what moss supports.
    pub fn parse(format: &str) -> Result<MatFormat, String> {
        match format.trim() {
            "4" => Ok(MatFormat::V4),
            "6" | "7" => Ok(MatFormat::Level5),
            "7.3" => Err(
                "MAT format \"7.3\" (HDF5) is not supported by moss; use format=\"4\", \"6\" \
                 or \"7\""
                    .to_string(),
            ),
            other => Err(format!(
                "unknown MAT format \"{other}\"; moss writes format=\"4\", \"6\" or \"7\""
            )),
        }
    }

    fn describe(self) -> &'static str {
        match self {
            MatFormat::V4 => "a MAT v4 file",
            MatFormat::Level5 => "a MAT level 5 file (format \"6\" or \"7\")",
        }
    }
}

/// Writes the matrix `name` (`rows` x `cols`, `data` row-major) to `file` in `format`. With
/// `append`, a non-empty existing file must already have that layout, and the matrix is
/// added after its contents; a missing or empty file is created (with a level-5 file header
/// where the layout needs one).
pub fn write_matrix(
    file: &str,
    name: &str,
    rows: usize,
    cols: usize,
    data: &[f64],
    append: bool,
    format: MatFormat,
) -> Result<(), String> {
    if data.len() != rows * cols {
        return Err(format!(
            "matrix `{name}` has {} values, not {rows} x {cols}",
            data.len()
        ));
    }
    let existing = if append { existing_layout(file)? } else { None };
    if let Some(found) = existing {
        if found != format {
            return Err(format!(
                "cannot append matrix `{name}` to `{file}`: it is {}, not {}",
                found.describe(),
                format.describe()
            ));
        }
    }
    let mut bytes = Vec::new();
    match format {
        MatFormat::V4 => bytes.extend(v4_matrix(name, rows, cols, data)?),
        MatFormat::Level5 => {
            if existing.is_none() {
                bytes.extend(level5_header());
            }
            bytes.extend(level5_matrix(name, rows, cols, data)?);
        }
    }
    let mut options = std::fs::OpenOptions::new();
    options.create(true);
    if existing.is_some() {
        options.append(true);
    } else {
        options.write(true).truncate(true);
    }
    options
        .open(file)
        .and_then(|mut f| f.write_all(&bytes))
        .map_err(|e| format!("cannot write `{file}`: {e}"))
}

/// The layout of an existing file to append to: `None` if it is missing or empty.
fn existing_layout(file: &str) -> Result<Option<MatFormat>, String> {
    let mut f = match std::fs::File::open(file) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read `{file}` to append to it: {e}")),
    };
    let mut head = Vec::with_capacity(HEADER_LEN);
    Read::by_ref(&mut f)
        .take(HEADER_LEN as u64)
        .read_to_end(&mut head)
        .map_err(|e| format!("cannot read `{file}` to append to it: {e}"))?;
    if head.is_empty() {
        return Ok(None);
    }
    if head.len() == HEADER_LEN && head[124..126] == [0x01, 0x00] && &head[126..128] == b"MI" {
        return Err(format!(
            "cannot append to `{file}`: it is a big-endian MAT level 5 file; moss writes \
             little-endian ones"
        ));
    }
    if is_level5_header(&head) {
        return Ok(Some(MatFormat::Level5));
    }
    // A little-endian v4 file starts with the type of its first matrix, below 1000 (0 for a
    // full double matrix); a level-5 file starts with header text.
    if head.len() >= 4
        && (0..1000).contains(&i32::from_le_bytes([head[0], head[1], head[2], head[3]]))
    {
        return Ok(Some(MatFormat::V4));
    }
    Err(format!(
        "cannot append to `{file}`: it is not a MAT file moss can append to (little-endian v4 \
         or level 5)"
    ))
}

/// Length of the level-5 file header.
const HEADER_LEN: usize = 128;
/// Data types and the array class of level 5.
const MI_INT8: u32 = 1;
const MI_INT32: u32 = 5;
const MI_UINT32: u32 = 6;
const MI_DOUBLE: u32 = 9;
const MI_MATRIX: u32 = 14;
const MX_DOUBLE_CLASS: u32 = 6;

/// Whether `head` is a little-endian level-5 file header (version 0x0100, "IM").
fn is_level5_header(head: &[u8]) -> bool {
    head.len() == HEADER_LEN && head[124..126] == [0x00, 0x01] && &head[126..128] == b"IM"
}

/// The 128-byte level-5 file header: descriptive text padded with spaces to 116 bytes, a
/// zero subsystem data offset, version 0x0100 and the endian indicator "IM" (little-endian).
pub(crate) fn level5_header() -> Vec<u8> {
    let mut out = b"MATLAB 5.0 MAT-file, Platform: moss, written by Modelica.Utilities.Streams.writeRealMatrix".to_vec();
    out.truncate(116);
    out.resize(116, b' ');
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&0x0100u16.to_le_bytes());
    out.extend_from_slice(b"IM");
    out
}

/// One data element: tag (type, byte count) and the data padded with zeros to 8 bytes.
fn element(out: &mut Vec<u8>, data_type: u32, data: &[u8]) -> Result<(), String> {
    out.extend_from_slice(&data_type.to_le_bytes());
    out.extend_from_slice(&u32_len(data.len())?.to_le_bytes());
    out.extend_from_slice(data);
    out.resize(out.len() + padding(data.len()), 0);
    Ok(())
}

fn padding(len: usize) -> usize {
    (8 - len % 8) % 8
}

fn u32_len(len: usize) -> Result<u32, String> {
    u32::try_from(len).map_err(|_| "the matrix is too large for a MAT level 5 file".to_string())
}

fn i32_dim(n: usize, what: &str) -> Result<i32, String> {
    i32::try_from(n).map_err(|_| format!("{what} {n} is too large for a MAT file"))
}

/// One double matrix as a level-5 `miMATRIX` element: array flags (class `mxDOUBLE_CLASS`, no
/// flag bits), dimensions, name and the real part column by column. `data` is row-major.
pub(crate) fn level5_matrix(
    name: &str,
    rows: usize,
    cols: usize,
    data: &[f64],
) -> Result<Vec<u8>, String> {
    let (r, c) = (i32_dim(rows, "row count")?, i32_dim(cols, "column count")?);
    let mut body = Vec::with_capacity(56 + name.len() + 8 * data.len());
    let mut flags = MX_DOUBLE_CLASS.to_le_bytes().to_vec();
    flags.extend_from_slice(&0u32.to_le_bytes());
    element(&mut body, MI_UINT32, &flags)?;
    let mut dims = r.to_le_bytes().to_vec();
    dims.extend_from_slice(&c.to_le_bytes());
    element(&mut body, MI_INT32, &dims)?;
    element(&mut body, MI_INT8, name.as_bytes())?;
    element(&mut body, MI_DOUBLE, &column_major(rows, cols, data))?;
    let mut out = Vec::with_capacity(8 + body.len());
    element(&mut out, MI_MATRIX, &body)?;
    Ok(out)
}

/// One full double matrix in MATLAB v4 layout (little-endian header `0, rows, cols, 0,
/// name length + 1`, the name with its NUL, the values column by column). `data` is row-major.
pub(crate) fn v4_matrix(
    name: &str,
    rows: usize,
    cols: usize,
    data: &[f64],
) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(20 + name.len() + 1 + 8 * data.len());
    for (h, what) in [
        (0, "type"),
        (rows, "row count"),
        (cols, "column count"),
        (0, "imaginary flag"),
        (name.len() + 1, "name length"),
    ] {
        out.extend_from_slice(&i32_dim(h, what)?.to_le_bytes());
    }
    out.extend_from_slice(name.as_bytes());
    out.push(0);
    out.extend(column_major(rows, cols, data));
    Ok(out)
}

/// The little-endian bytes of a row-major matrix's values, column by column.
fn column_major(rows: usize, cols: usize, data: &[f64]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 * data.len());
    for c in 0..cols {
        for r in 0..rows {
            out.extend_from_slice(&data[r * cols + c].to_le_bytes());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh scratch directory for one test.
    fn scratch(test: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("moss-mat-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch directory");
        dir
    }

    fn u32_at(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
    }

    fn i32_at(b: &[u8], at: usize) -> i32 {
        i32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
    }

    fn f64_at(b: &[u8], at: usize) -> f64 {
        f64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
    }

    /// The 3 x 2 matrix [11, 12; 21, 22; 31, 32], row-major.
    const A: [f64; 6] = [11.0, 12.0, 21.0, 22.0, 31.0, 32.0];

    /// Parses one `miMATRIX` element at `at` by hand, checking every tag and padding byte;
    /// returns its name, dimensions, values (as stored) and the offset after it.
    fn parse_matrix(b: &[u8], at: usize) -> (String, (i32, i32), Vec<f64>, usize) {
        assert_eq!(u32_at(b, at), MI_MATRIX, "miMATRIX tag");
        let size = u32_at(b, at + 4) as usize;
        assert_eq!(size % 8, 0, "miMATRIX size is a multiple of 8");
        let end = at + 8 + size;
        assert!(end <= b.len(), "miMATRIX inside the file");
        let mut p = at + 8;
        // array flags
        assert_eq!((u32_at(b, p), u32_at(b, p + 4)), (MI_UINT32, 8));
        assert_eq!(u32_at(b, p + 8) & 0xff, MX_DOUBLE_CLASS, "double class");
        assert_eq!(
            u32_at(b, p + 8) >> 8 & 0xff,
            0,
            "not complex, global or logical"
        );
        assert_eq!(u32_at(b, p + 12), 0);
        p += 16;
        // dimensions
        assert_eq!((u32_at(b, p), u32_at(b, p + 4)), (MI_INT32, 8));
        let dims = (i32_at(b, p + 8), i32_at(b, p + 12));
        p += 16;
        // name, padded with zeros
        assert_eq!(u32_at(b, p), MI_INT8);
        let n = u32_at(b, p + 4) as usize;
        let name = String::from_utf8(b[p + 8..p + 8 + n].to_vec()).expect("name text");
        let padded = n.div_ceil(8) * 8;
        assert!(b[p + 8 + n..p + 8 + padded].iter().all(|&x| x == 0));
        p += 8 + padded;
        // real part
        assert_eq!(u32_at(b, p), MI_DOUBLE);
        let count = (dims.0 * dims.1) as usize;
        assert_eq!(u32_at(b, p + 4) as usize, 8 * count);
        let values = (0..count).map(|k| f64_at(b, p + 8 + 8 * k)).collect();
        p += 8 + 8 * count;
        assert_eq!(p, end, "the miMATRIX size covers exactly its subelements");
        (name, dims, values, end)
    }

    fn check_header(b: &[u8]) {
        assert!(b.len() >= HEADER_LEN);
        let text = std::str::from_utf8(&b[..116]).expect("header text");
        assert!(text.starts_with("MATLAB 5.0 MAT-file"), "{text}");
        assert!(b[..4].iter().all(|&x| x != 0), "first four bytes are text");
        assert!(b[..116]
            .iter()
            .all(|x| x.is_ascii() && !x.is_ascii_control()));
        assert!(b[116..124].iter().all(|&x| x == 0), "subsystem offset");
        assert_eq!(u16::from_le_bytes([b[124], b[125]]), 0x0100, "version");
        assert_eq!(&b[126..128], b"IM", "little-endian indicator");
    }

    #[test]
    fn level5_file_holds_a_3x2_matrix_column_by_column() {
        let dir = scratch("one");
        let file = dir.join("a.mat");
        let f = file.to_str().expect("utf-8 path");
        write_matrix(f, "Matrix_A", 3, 2, &A, false, MatFormat::Level5).expect("written");
        let b = std::fs::read(&file).expect("read back");
        check_header(&b);
        let (name, dims, values, end) = parse_matrix(&b, HEADER_LEN);
        assert_eq!(name, "Matrix_A");
        assert_eq!(dims, (3, 2));
        assert_eq!(values, [11.0, 21.0, 31.0, 12.0, 22.0, 32.0]);
        assert_eq!(end, b.len());
        // flags 16 + dims 16 + name 8 + 8 + values 8 + 48
        assert_eq!(u32_at(&b, HEADER_LEN + 4), 104);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn level5_name_is_padded_to_eight_bytes() {
        let b = level5_matrix("Mat", 1, 1, &[2.5]).expect("encoded");
        assert_eq!(b.len() % 8, 0);
        let (name, dims, values, end) = parse_matrix(&b, 0);
        assert_eq!(
            (name.as_str(), dims, values, end),
            ("Mat", (1, 1), vec![2.5], b.len())
        );
        assert_eq!(u32_at(&b, 8 + 32 + 4), 3, "name length without padding");
        assert_eq!(&b[8 + 32 + 8..8 + 32 + 16], b"Mat\0\0\0\0\0");
    }

    #[test]
    fn level5_append_adds_a_second_matrix_after_the_first() {
        let dir = scratch("append");
        let file = dir.join("a.mat");
        let f = file.to_str().expect("utf-8 path");
        // append on a missing file creates it, with the header
        write_matrix(f, "Matrix_A", 3, 2, &A, true, MatFormat::Level5).expect("created");
        let b: Vec<f64> = A.iter().map(|x| -x).collect();
        write_matrix(f, "B", 3, 2, &b, true, MatFormat::Level5).expect("appended");
        let bytes = std::fs::read(&file).expect("read back");
        check_header(&bytes);
        assert!(
            !bytes[HEADER_LEN..].windows(8).any(|w| w == b"MATLAB 5"),
            "one header only"
        );
        let (name, _, _, next) = parse_matrix(&bytes, HEADER_LEN);
        assert_eq!(name, "Matrix_A");
        let (name, dims, values, end) = parse_matrix(&bytes, next);
        assert_eq!((name.as_str(), dims), ("B", (3, 2)));
        assert_eq!(values, [-11.0, -21.0, -31.0, -12.0, -22.0, -32.0]);
        assert_eq!(end, bytes.len());
        // without append, the file is replaced
        write_matrix(f, "C", 3, 2, &A, false, MatFormat::Level5).expect("replaced");
        let bytes = std::fs::read(&file).expect("read back");
        let (name, _, _, end) = parse_matrix(&bytes, HEADER_LEN);
        assert_eq!((name.as_str(), end), ("C", bytes.len()));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn appending_across_layouts_is_an_error() {
        let dir = scratch("mixed");
        let v4 = dir.join("v4.mat");
        let v4 = v4.to_str().expect("utf-8 path");
        let v5 = dir.join("v5.mat");
        let v5 = v5.to_str().expect("utf-8 path");
        write_matrix(v4, "A", 3, 2, &A, false, MatFormat::V4).expect("v4");
        write_matrix(v5, "A", 3, 2, &A, false, MatFormat::Level5).expect("v5");
        let v4_len = std::fs::metadata(v4).expect("v4").len();
        let v5_len = std::fs::metadata(v5).expect("v5").len();
        let e = write_matrix(v4, "B", 3, 2, &A, true, MatFormat::Level5).unwrap_err();
        assert!(e.contains("MAT v4 file") && e.contains("level 5"), "{e}");
        let e = write_matrix(v5, "B", 3, 2, &A, true, MatFormat::V4).unwrap_err();
        assert!(e.contains("level 5") && e.contains("not a MAT v4"), "{e}");
        assert_eq!(
            std::fs::metadata(v4).expect("v4").len(),
            v4_len,
            "unchanged"
        );
        assert_eq!(
            std::fs::metadata(v5).expect("v5").len(),
            v5_len,
            "unchanged"
        );
        // v4 append still works
        write_matrix(v4, "B", 3, 2, &A, true, MatFormat::V4).expect("v4 append");
        let b = std::fs::read(v4).expect("v4");
        assert_eq!(b.len(), 2 * (20 + 2 + 48));
        assert_eq!(&b[70 + 20..70 + 22], b"B\0");
        // not a MAT file at all
        let text = dir.join("text.mat");
        std::fs::write(&text, "hello world").expect("text");
        let e = write_matrix(
            text.to_str().expect("utf-8"),
            "A",
            1,
            1,
            &[1.0],
            true,
            MatFormat::Level5,
        )
        .unwrap_err();
        assert!(e.contains("not a MAT file moss can append to"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn mat_v4_matrix_is_column_major_with_header() {
        let bytes = v4_matrix("m", 2, 3, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).expect("encoded");
        let int = |i: usize| i32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().expect("bytes"));
        assert_eq!([int(0), int(1), int(2), int(3), int(4)], [0, 2, 3, 0, 2]);
        assert_eq!(&bytes[20..22], b"m\0");
        let value =
            |k: usize| f64::from_le_bytes(bytes[22 + 8 * k..30 + 8 * k].try_into().expect("bytes"));
        assert_eq!(
            (0..6).map(value).collect::<Vec<_>>(),
            [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]
        );
    }

    #[test]
    fn formats_parse_with_clear_errors() {
        assert_eq!(MatFormat::parse("4"), Ok(MatFormat::V4));
        assert_eq!(MatFormat::parse("6"), Ok(MatFormat::Level5));
        assert_eq!(MatFormat::parse("7"), Ok(MatFormat::Level5));
        let e = MatFormat::parse("7.3").unwrap_err();
        assert!(e.contains("HDF5") && e.contains("not supported"), "{e}");
        let e = MatFormat::parse("5").unwrap_err();
        assert!(e.contains("unknown MAT format \"5\""), "{e}");
    }

    #[test]
    fn mismatched_data_is_an_error_not_a_panic() {
        let e = write_matrix(
            "/nonexistent/x.mat",
            "A",
            2,
            2,
            &[1.0],
            false,
            MatFormat::V4,
        )
        .unwrap_err();
        assert!(e.contains("1 values"), "{e}");
        let e = write_matrix(
            "/nonexistent/dir/x.mat",
            "A",
            1,
            1,
            &[1.0],
            false,
            MatFormat::V4,
        )
        .unwrap_err();
        assert!(e.contains("cannot write"), "{e}");
    }
}
