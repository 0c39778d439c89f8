//! Functions of the Modelica Standard Library's C support library (`ModelicaExternalC`) that
//! moss executes natively, so that library functions declared `external "C"` with these
//! names run without a C compiler. Each follows the contract documented in the MSL's
//! function declarations; the code is written here.

use crate::native_random;
use crate::native_strings::{self, skip_white_space};
use crate::value::ArrayVal;
use crate::value::{VResult, Value};
use moss_matio::MatFormat;
use std::io::Write;

/// A natively implemented external function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Native {
    /// `info = ModelicaFFT_kiss_fftr(u, nu, work, nwork, amplitudes, phases)`: discrete
    /// Fourier transform of a real signal of even length `nu`; `amplitudes[k] = |X_k|/nf` and
    /// `phases[k] = arg(X_k)` for `k = 0 .. nf-1`, `nf = nu/2 + 1`.
    RealFft,
    /// `success = ModelicaIO_writeRealMatrix(fileName, matrixName, matrix, nrow, ncol, append,
    /// format)`: store a matrix in a MATLAB MAT file: format "4" (MAT v4), "6" or "7" (MAT
    /// level 5; "7" is written without compression); "7.3" (HDF5) is an error. See
    /// `moss_matio`.
    WriteRealMatrix,
    /// `ModelicaIO_readMatrixSizes(fileName, matrixName, dim)`: rows and columns of a
    /// matrix in a MAT file (v4, "6", "7") or a text table file.
    ReadMatrixSizes,
    /// `ModelicaIO_readRealMatrix(fileName, matrixName, matrix, nrow, ncol, verboseRead)`:
    /// the matrix, which must have `nrow` x `ncol` elements.
    ReadRealMatrix,
    /// `ModelicaInternal_print(string, fileName)`: a line to standard output (empty file
    /// name) or appended to a file.
    Print,
    /// `ModelicaStreams_closeFile(fileName)`: nothing to do, moss keeps no file open.
    CloseFile,
    /// `fileType = ModelicaInternal_stat(name)`: `Modelica.Utilities.Types.FileType` as its
    /// ordinal (1 NoFile, 2 RegularFile, 3 Directory, 4 SpecialFile).
    Stat,
    /// `ModelicaInternal_removeFile(name)`: delete a regular file.
    RemoveFile,
    /// `fullName = ModelicaInternal_fullPathName(name)`: the absolute path of `name`.
    FullPathName,
    /// `string = ModelicaInternal_readLine(fileName, lineNumber, endOfFile)`: line
    /// `lineNumber` (1-based, without its LF or CR-LF); past the last line "" and
    /// `endOfFile = true`.
    ReadLine,
    /// `n = ModelicaInternal_countLines(fileName)`: the number of lines.
    CountLines,
    /// `n = ModelicaStrings_length(string)`: the length in bytes (the MSL's strings are
    /// indexed by byte).
    Length,
    /// `result = ModelicaStrings_substring(string, startIndex, endIndex)`: bytes
    /// `startIndex ..= endIndex` (1-based), with the index corrections the MSL documents.
    Substring,
    /// `ModelicaStrings_scanInteger(string, startIndex, unsigned, nextIndex, number)`: after
    /// white space, an optionally signed run of digits not continued as a Real number;
    /// `nextIndex` is the index after it, or `startIndex` (and `number = 0`) if there is none.
    ScanInteger,
    /// `ModelicaStrings_scanReal`, `_scanString`, `_scanIdentifier`: the other scanners of
    /// `Strings.Advanced` (see `native_strings`).
    ScanReal,
    ScanString,
    ScanIdentifier,
    /// `result = ModelicaStrings_compare(string1, string2, caseSensitive)`.
    Compare,
    /// `nextIndex = ModelicaStrings_skipWhiteSpace(string, startIndex)`: the index of the
    /// first character at or after `startIndex` that is not white space.
    SkipWhiteSpace,
    /// `ModelicaRandom_xorshift64star(stateIn, stateOut, y)` and the other generators of
    /// `ModelicaRandom` (see `native_random`).
    Xorshift64star,
    Xorshift128plus,
    Xorshift1024star,
    /// `ModelicaRandom_setInternalState_xorshift1024star(state, nState, id)`.
    SetInternalState,
    /// `y = ModelicaRandom_impureRandom_xorshift1024star(id)`.
    ImpureRandom,
    /// `seed = ModelicaRandom_automaticGlobalSeed(dummy)`.
    AutomaticGlobalSeed,
    /// `ModelicaRandom_convertRealToIntegers(d, i)`.
    ConvertRealToIntegers,
    /// `hash = ModelicaStrings_hashString(string)`.
    HashString,
    /// A LAPACK routine called through `external "FORTRAN 77"` that moss implements
    /// (`moss_frontend::lapack`): `dgesv` (`Matrices.solve`), `dgelsy` (minimum-norm least
    /// squares: `Matrices.leastSquares`, `Polynomials.fitting`), `dgetrf`, `dgetri` and
    /// `dgetrs` (`Matrices.LU`, `inv`, `det`, `LU_solve`).
    Lapack(&'static str),
}

/// The LAPACK routines of [`Native::Lapack`].
const LAPACK_ROUTINES: &[&str] = &["dgesv", "dgelsy", "dgetrf", "dgetri", "dgetrs"];

/// The native implementation of the external function `name` in `language`, if moss has one.
pub fn native_function(name: &str, language: &str) -> Option<Native> {
    match language {
        "C" => native_c_function(name),
        "FORTRAN 77" => LAPACK_ROUTINES
            .iter()
            .find(|r| **r == name)
            .map(|r| Native::Lapack(r)),
        _ => None,
    }
}

fn native_c_function(name: &str) -> Option<Native> {
    match name {
        "ModelicaFFT_kiss_fftr" => Some(Native::RealFft),
        "ModelicaIO_writeRealMatrix" => Some(Native::WriteRealMatrix),
        "ModelicaIO_readMatrixSizes" => Some(Native::ReadMatrixSizes),
        "ModelicaIO_readRealMatrix" => Some(Native::ReadRealMatrix),
        "ModelicaInternal_print" => Some(Native::Print),
        "ModelicaStreams_closeFile" => Some(Native::CloseFile),
        "ModelicaInternal_stat" => Some(Native::Stat),
        "ModelicaInternal_removeFile" => Some(Native::RemoveFile),
        "ModelicaInternal_fullPathName" => Some(Native::FullPathName),
        "ModelicaInternal_readLine" => Some(Native::ReadLine),
        "ModelicaInternal_countLines" => Some(Native::CountLines),
        "ModelicaStrings_length" => Some(Native::Length),
        "ModelicaStrings_substring" => Some(Native::Substring),
        "ModelicaStrings_scanInteger" => Some(Native::ScanInteger),
        "ModelicaStrings_scanReal" => Some(Native::ScanReal),
        "ModelicaStrings_scanString" => Some(Native::ScanString),
        "ModelicaStrings_scanIdentifier" => Some(Native::ScanIdentifier),
        "ModelicaStrings_compare" => Some(Native::Compare),
        "ModelicaStrings_skipWhiteSpace" => Some(Native::SkipWhiteSpace),
        "ModelicaRandom_xorshift64star" => Some(Native::Xorshift64star),
        "ModelicaRandom_xorshift128plus" => Some(Native::Xorshift128plus),
        "ModelicaRandom_xorshift1024star" => Some(Native::Xorshift1024star),
        "ModelicaRandom_setInternalState_xorshift1024star" => Some(Native::SetInternalState),
        "ModelicaRandom_impureRandom_xorshift1024star" => Some(Native::ImpureRandom),
        "ModelicaRandom_automaticGlobalSeed" => Some(Native::AutomaticGlobalSeed),
        "ModelicaRandom_convertRealToIntegers" => Some(Native::ConvertRealToIntegers),
        "ModelicaStrings_hashString" => Some(Native::HashString),
        _ => None,
    }
}

/// What a native call produced: its return value and the values of arguments it writes.
pub struct NativeResult {
    pub returned: Option<Value>,
    /// (argument position, value) for output arguments.
    pub written: Vec<(usize, Value)>,
}

/// Run `f` on the evaluated arguments of the external call.
pub fn call_native(f: Native, args: &[Value]) -> VResult<NativeResult> {
    match f {
        Native::RealFft => real_fft(args),
        Native::Lapack(routine) => crate::native_lapack::call(routine, args),
        Native::WriteRealMatrix => write_real_matrix(args),
        Native::ReadMatrixSizes => read_matrix_sizes(args),
        Native::ReadRealMatrix => read_real_matrix(args),
        Native::Print => print(args),
        Native::CloseFile => Ok(NativeResult {
            returned: None,
            written: vec![],
        }),
        Native::Stat => stat(args),
        Native::RemoveFile => remove_file(args),
        Native::FullPathName => full_path_name(args),
        Native::ReadLine => read_line(args),
        Native::CountLines => count_lines(args),
        Native::Length => {
            let text = string_arg(args, 0, "string")?;
            Ok(returns(Value::Int(moss_mslc::length(&text))))
        }
        Native::Substring => substring(args),
        Native::ScanInteger => native_strings::scan_integer(args),
        Native::ScanReal => native_strings::scan_real(args),
        Native::ScanString => native_strings::scan_string(args),
        Native::ScanIdentifier => native_strings::scan_identifier(args),
        Native::Compare => native_strings::compare(args),
        Native::SkipWhiteSpace => {
            let text = string_arg(args, 0, "string")?;
            let start = int_arg(args, 1, "startIndex")?;
            Ok(returns(Value::Int(skip_white_space(
                text.as_bytes(),
                start,
            ))))
        }
        Native::Xorshift64star => native_random::xorshift64star(args),
        Native::Xorshift128plus => native_random::xorshift128plus(args),
        Native::Xorshift1024star => native_random::xorshift1024star(args),
        Native::SetInternalState => native_random::set_internal_state(args),
        Native::ImpureRandom => native_random::impure_random(args),
        Native::AutomaticGlobalSeed => native_random::automatic_global_seed(),
        Native::ConvertRealToIntegers => native_random::convert_real_to_integers(args),
        Native::HashString => {
            let text = string_arg(args, 0, "string")?;
            Ok(returns(Value::Int(native_random::hash_string(&text))))
        }
    }
}

fn returns(v: Value) -> NativeResult {
    NativeResult {
        returned: Some(v),
        written: vec![],
    }
}

pub(crate) fn int_arg(args: &[Value], i: usize, what: &str) -> VResult<i64> {
    arg(args, i, what)?.as_i64()
}

/// The lines of a text file, split at LF with a CR before it dropped.
fn file_lines(name: &str) -> VResult<Vec<String>> {
    let text = std::fs::read(name).map_err(|e| format!("cannot read `{name}`: {e}"))?;
    let text = String::from_utf8_lossy(&text);
    let mut lines: Vec<String> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l).to_string())
        .collect();
    // a final line separator ends the last line rather than starting an empty one
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    Ok(lines)
}

fn read_line(args: &[Value]) -> VResult<NativeResult> {
    let name = string_arg(args, 0, "file name")?;
    let number = int_arg(args, 1, "lineNumber")?;
    let lines = file_lines(&name)?;
    let line = usize::try_from(number)
        .ok()
        .and_then(|k| k.checked_sub(1))
        .and_then(|k| lines.get(k));
    Ok(NativeResult {
        returned: Some(Value::Str(line.cloned().unwrap_or_default())),
        written: vec![(2, Value::Bool(line.is_none()))],
    })
}

fn count_lines(args: &[Value]) -> VResult<NativeResult> {
    let name = string_arg(args, 0, "file name")?;
    Ok(returns(Value::Int(file_lines(&name)?.len() as i64)))
}

fn substring(args: &[Value]) -> VResult<NativeResult> {
    let text = string_arg(args, 0, "string")?;
    let start = int_arg(args, 1, "startIndex")?;
    let end = int_arg(args, 2, "endIndex")?;
    Ok(returns(Value::Str(moss_mslc::substring(&text, start, end))))
}

pub(crate) fn arg(args: &[Value], i: usize, what: &str) -> VResult<Value> {
    args.get(i)
        .cloned()
        .ok_or_else(|| format!("external call lacks argument {} ({what})", i + 1))
}

pub(crate) fn string_arg(args: &[Value], i: usize, what: &str) -> VResult<String> {
    match arg(args, i, what)? {
        Value::Str(s) => Ok(s),
        other => Err(format!(
            "{what} must be a String, got {}",
            other.type_name()
        )),
    }
}

fn reals(v: &Value) -> VResult<Vec<f64>> {
    v.flatten().iter().map(Value::as_f64).collect()
}

fn real_fft(args: &[Value]) -> VResult<NativeResult> {
    let u = reals(&arg(args, 0, "signal u")?)?;
    let nu = u.len();
    let nf = nu / 2 + 1;
    let info = if nu % 2 != 0 { 1 } else { 0 };
    let (amplitudes, phases) = if info == 0 {
        dft_amplitudes_and_phases(&u, nf)
    } else {
        (vec![0.0; nf], vec![0.0; nf])
    };
    Ok(NativeResult {
        returned: Some(Value::Int(info)),
        written: vec![
            (4, Value::real_vector(&amplitudes)),
            (5, Value::real_vector(&phases)),
        ],
    })
}

/// `|X_k|/nf` and `arg(X_k)` of `X_k = sum_n u_n exp(-2 pi i k n / N)`, k < nf. Direct
/// summation with the twiddle factors taken from one table (exact index arithmetic mod N),
/// O(N nf): these transforms are computed a few times per run, on a few thousand points.
fn dft_amplitudes_and_phases(u: &[f64], nf: usize) -> (Vec<f64>, Vec<f64>) {
    let n = u.len();
    let table: Vec<(f64, f64)> = (0..n)
        .map(|j| {
            let angle = -2.0 * std::f64::consts::PI * j as f64 / n as f64;
            (angle.cos(), angle.sin())
        })
        .collect();
    let mut amplitudes = Vec::with_capacity(nf);
    let mut phases = Vec::with_capacity(nf);
    for k in 0..nf {
        let (mut re, mut im) = (0.0, 0.0);
        for (j, &x) in u.iter().enumerate() {
            let (c, s) = table[(k * j) % n];
            re += x * c;
            im += x * s;
        }
        amplitudes.push(re.hypot(im) / nf as f64);
        phases.push(im.atan2(re));
    }
    (amplitudes, phases)
}

fn write_real_matrix(args: &[Value]) -> VResult<NativeResult> {
    let file = string_arg(args, 0, "file name")?;
    let name = string_arg(args, 1, "matrix name")?;
    let matrix = arg(args, 2, "matrix")?;
    let dims = matrix.dims();
    let (rows, cols) = match dims.as_slice() {
        [r, c] => (*r, *c),
        [r] => (*r, 1),
        _ => return Err(format!("writeRealMatrix: `{name}` is not a matrix")),
    };
    let append = args
        .get(5)
        .map(Value::as_bool)
        .transpose()?
        .unwrap_or(false);
    let format = args
        .get(6)
        .map(|v| match v {
            Value::Str(s) => s.clone(),
            _ => "4".to_string(),
        })
        .unwrap_or_else(|| "4".to_string());
    let format = MatFormat::parse(&format).map_err(|e| format!("writeRealMatrix: {e}"))?;
    let data = reals(&matrix)?;
    moss_matio::write_matrix(&file, &name, rows, cols, &data, append, format)
        .map_err(|e| format!("writeRealMatrix: {e}"))?;
    Ok(NativeResult {
        returned: Some(Value::Bool(true)),
        written: vec![],
    })
}

fn read_matrix_sizes(args: &[Value]) -> VResult<NativeResult> {
    let file = string_arg(args, 0, "file name")?;
    let name = string_arg(args, 1, "matrix name")?;
    let (rows, cols) =
        moss_matio::read_matrix_size(&file, &name).map_err(|e| format!("readMatrixSize: {e}"))?;
    let dims = Value::Array(ArrayVal {
        dims: vec![2],
        data: vec![Value::Int(rows as i64), Value::Int(cols as i64)],
    });
    Ok(NativeResult {
        returned: None,
        written: vec![(2, dims)],
    })
}

fn read_real_matrix(args: &[Value]) -> VResult<NativeResult> {
    let file = string_arg(args, 0, "file name")?;
    let name = string_arg(args, 1, "matrix name")?;
    let rows = int_arg(args, 3, "nrow")?;
    let cols = int_arg(args, 4, "ncol")?;
    let m = moss_matio::read_matrix(&file, &name).map_err(|e| format!("readRealMatrix: {e}"))?;
    if m.rows as i64 != rows || m.cols as i64 != cols {
        return Err(format!(
            "readRealMatrix: matrix `{name}` in `{file}` is {} x {}, not {rows} x {cols}",
            m.rows, m.cols
        ));
    }
    let matrix = Value::Array(ArrayVal {
        dims: vec![m.rows, m.cols],
        data: m.data.into_iter().map(Value::Real).collect(),
    });
    Ok(NativeResult {
        returned: None,
        written: vec![(2, matrix)],
    })
}

fn print(args: &[Value]) -> VResult<NativeResult> {
    let text = string_arg(args, 0, "string")?;
    let file = args
        .get(1)
        .map(|v| match v {
            Value::Str(s) => s.clone(),
            _ => String::new(),
        })
        .unwrap_or_default();
    if file.is_empty() {
        println!("{text}");
    } else {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&file)
            .and_then(|mut f| writeln!(f, "{text}"))
            .map_err(|e| format!("print: cannot write `{file}`: {e}"))?;
    }
    Ok(NativeResult {
        returned: None,
        written: vec![],
    })
}

fn stat(args: &[Value]) -> VResult<NativeResult> {
    let name = string_arg(args, 0, "file name")?;
    let kind = match std::fs::metadata(&name) {
        Err(_) => 1,
        Ok(m) if m.is_file() => 2,
        Ok(m) if m.is_dir() => 3,
        Ok(_) => 4,
    };
    Ok(NativeResult {
        returned: Some(Value::Int(kind)),
        written: vec![],
    })
}

fn full_path_name(args: &[Value]) -> VResult<NativeResult> {
    let name = string_arg(args, 0, "file name")?;
    let full = std::path::absolute(&name).map_err(|e| format!("no full path for `{name}`: {e}"))?;
    Ok(NativeResult {
        returned: Some(Value::Str(full.to_string_lossy().into_owned())),
        written: vec![],
    })
}

fn remove_file(args: &[Value]) -> VResult<NativeResult> {
    let name = string_arg(args, 0, "file name")?;
    std::fs::remove_file(&name).map_err(|e| format!("cannot remove `{name}`: {e}"))?;
    Ok(NativeResult {
        returned: None,
        written: vec![],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dft_of_a_cosine_has_one_line_at_its_frequency() {
        // u_n = 3 + 2 cos(2 pi 5 n / 64 + 0.3): X_0 = 3N, |X_5| = N, arg X_5 = 0.3
        let n = 64;
        let u: Vec<f64> = (0..n)
            .map(|j| {
                3.0 + 2.0 * (2.0 * std::f64::consts::PI * 5.0 * j as f64 / n as f64 + 0.3).cos()
            })
            .collect();
        let nf = n / 2 + 1;
        let (a, p) = dft_amplitudes_and_phases(&u, nf);
        assert!((a[0] - 3.0 * n as f64 / nf as f64).abs() < 1e-9);
        assert!((a[5] - n as f64 / nf as f64).abs() < 1e-9);
        assert!((p[5] - 0.3).abs() < 1e-9);
        for (k, x) in a.iter().enumerate() {
            if k != 0 && k != 5 {
                assert!(x.abs() < 1e-9, "line at {k}: {x}");
            }
        }
    }

    #[test]
    fn odd_length_is_reported_by_info() {
        let r = real_fft(&[Value::real_vector(&[1.0, 2.0, 3.0])]).expect("runs");
        assert_eq!(r.returned, Some(Value::Int(1)));
    }

    fn text(v: &str) -> Value {
        Value::Str(v.to_string())
    }

    #[test]
    fn substring_applies_the_documented_index_corrections() {
        let sub = |a: i64, b: i64| {
            substring(&[text("This is line 111"), Value::Int(a), Value::Int(b)])
                .expect("runs")
                .returned
        };
        assert_eq!(sub(9, 12), Some(text("line")));
        assert_eq!(sub(9, 0), Some(text("")));
        assert_eq!(sub(0, 4), Some(text("This")));
        assert_eq!(sub(14, 100), Some(text("111")));
        assert_eq!(sub(1, -1), Some(text("T")));
        assert_eq!(sub(20, 30), Some(text("")));
    }

    #[test]
    fn read_line_numbers_lines_from_one_and_reports_the_end() {
        let dir = std::env::temp_dir().join(format!("moss-native-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temporary folder");
        let file = dir.join("lines.txt");
        std::fs::write(&file, "first\r\nsecond\nthird\n").expect("writes");
        let name = text(&file.to_string_lossy());
        let line = |k: i64| {
            let r = read_line(&[name.clone(), Value::Int(k), Value::Bool(false)]).expect("runs");
            (r.returned.expect("a string"), r.written[0].1.clone())
        };
        assert_eq!(line(1), (text("first"), Value::Bool(false)));
        assert_eq!(line(3), (text("third"), Value::Bool(false)));
        assert_eq!(line(4), (text(""), Value::Bool(true)));
        let n = count_lines(&[name]).expect("runs").returned;
        assert_eq!(n, Some(Value::Int(3)));
        std::fs::remove_dir_all(&dir).ok();
    }
}
