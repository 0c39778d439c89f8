//! CSV results: the format of the MSL reference results.
//!
//! Layout: a header line of quoted names, first `"time"`, then one column per variable by its
//! full Modelica name; then one line per output point. Events are two lines with the same time.
//! The reader also accepts what the Modelica Association's reference results contain besides
//! that: a first column named `"Time"` (any case), unquoted names, a byte-order mark, CRLF
//! line ends and spaces around fields.
//! The writer expands aliases and constants into full columns (CSV has no way to share them)
//! and prints numbers with Rust's shortest round-trip representation, so reading a written file
//! gives back exactly the same `f64` values. The reader makes every column a stored column.

use crate::{ResultError, ResultVar, SimResult};
use std::io::Write;
use std::path::Path;

/// Write `result` to `path` as CSV.
pub fn write_csv(result: &SimResult, path: &Path) -> Result<(), ResultError> {
    let file = std::fs::File::create(path).map_err(|e| ResultError::io(path, e))?;
    let mut out = std::io::BufWriter::new(file);
    write_csv_to(result, &mut out)
        .and_then(|_| out.flush())
        .map_err(|e| ResultError::io(path, e))
}

/// Write `result` as CSV to any writer.
pub fn write_csv_to(result: &SimResult, out: &mut impl Write) -> std::io::Result<()> {
    let mut rows = CsvRows::new(result.vars());
    rows.write_header(out)?;
    for (t, row) in result.rows() {
        rows.write_row(out, t, row)?;
    }
    Ok(())
}

/// Where a CSV column takes its values from, decided once for the whole file.
#[derive(Clone)]
enum Source {
    Column(usize),
    Negated(usize),
    /// A time-invariant value, already formatted.
    Text(Box<str>),
}

/// Formats CSV lines for one variable table: the header, then one line per row of stored
/// columns. Aliases are expanded from their column and constants formatted only once, so a
/// row costs one float formatting per *stored* value it repeats, not a table lookup each.
#[derive(Clone)]
pub struct CsvRows {
    names: Vec<String>,
    sources: Vec<Source>,
    line: Vec<u8>,
    /// The text of every stored column of the row being formatted, one after the other,
    /// and where each one is (`spans[c]` = start and length in `texts`).
    texts: Vec<u8>,
    spans: Vec<(usize, usize)>,
}

impl CsvRows {
    pub fn new(vars: &[ResultVar]) -> Self {
        let sources = vars
            .iter()
            .map(|v| match v.storage {
                crate::Storage::Column(c) => Source::Column(c),
                crate::Storage::Alias { of, negated: false } => Source::Column(of),
                crate::Storage::Alias { of, negated: true } => Source::Negated(of),
                crate::Storage::Constant(x) => Source::Text(format_number(x).into()),
            })
            .collect();
        CsvRows {
            names: vars.iter().map(|v| v.name.clone()).collect(),
            sources,
            line: Vec::new(),
            texts: Vec::new(),
            spans: Vec::new(),
        }
    }

    /// A copy for formatting rows only (without the names of the header).
    pub fn for_rows(&self) -> CsvRows {
        CsvRows {
            names: Vec::new(),
            sources: self.sources.clone(),
            line: Vec::new(),
            texts: Vec::new(),
            spans: Vec::new(),
        }
    }

    pub fn write_header(&mut self, out: &mut impl Write) -> std::io::Result<()> {
        self.line.clear();
        self.line.extend_from_slice(b"\"time\"");
        for name in &self.names {
            self.line.push(b',');
            self.line.extend_from_slice(quote(name).as_bytes());
        }
        self.line.push(b'\n');
        out.write_all(&self.line)
    }

    /// One line: time, then every variable, from the stored values `row`.
    pub fn write_row(&mut self, out: &mut impl Write, t: f64, row: &[f64]) -> std::io::Result<()> {
        self.format_line(t, row);
        out.write_all(&self.line)
    }

    /// The line of [`CsvRows::write_row`] into `out` (its previous contents are dropped; its
    /// buffer is kept for the next line).
    pub fn format_into(&mut self, t: f64, row: &[f64], out: &mut Vec<u8>) {
        self.format_line(t, row);
        std::mem::swap(&mut self.line, out);
    }

    fn format_line(&mut self, t: f64, row: &[f64]) {
        let mut buf = zmij::Buffer::new();
        // Every stored column is formatted once, then copied into each field that shows it:
        // aliases repeat columns (the MSL ladder has 22 fields per section and 5 stored
        // values), and a copy costs a fraction of a formatting.
        let texts = &mut self.texts;
        texts.clear();
        texts.reserve(FIELD * row.len());
        self.spans.clear();
        for &x in row {
            let start = texts.len();
            if x.is_finite() {
                append(texts, b"", buf.format_finite(x).as_bytes());
            } else {
                push_number(texts, &mut buf, x);
            }
            self.spans.push((start, texts.len() - start));
        }
        let line = &mut self.line;
        line.clear();
        // Every field is at most `FIELD` bytes with its comma (24 for the text, negated or
        // not), so one reservation per row lets the fields be appended without growing.
        line.reserve(FIELD * (self.sources.len() + 1) + 1);
        push_number(line, &mut buf, t);
        for src in &self.sources {
            match src {
                Source::Column(c) => {
                    let (at, n) = self.spans[*c];
                    push_field(line, b"", &texts[at..at + n]);
                }
                Source::Negated(c) => {
                    let (at, n) = self.spans[*c];
                    let text = &texts[at..at + n];
                    // The text of -x from that of x: the sign toggled; NaN has none.
                    match text {
                        b"NaN" => push_field(line, b"", text),
                        [b'-', rest @ ..] => push_field(line, b"", rest),
                        _ => push_field(line, b"-", text),
                    }
                }
                Source::Text(s) => push_field(line, b"", s.as_bytes()),
            }
        }
        line.push(b'\n');
    }
}

/// Room for one field: a comma and the longest shortest round-trip text of an f64 (24).
const FIELD: usize = 25;

/// Append `,`, then `sign` (empty or `-`), then `text`.
#[inline]
fn push_field(line: &mut Vec<u8>, sign: &[u8], text: &[u8]) {
    append(line, if sign.is_empty() { b"," } else { b",-" }, text);
}

/// Append `prefix` (at most 2 bytes) and `text`.
#[inline]
fn append(line: &mut Vec<u8>, prefix: &[u8], text: &[u8]) {
    let n = prefix.len() + text.len();
    if n > FIELD || text.len() > 24 || prefix.len() > 2 || line.capacity() - line.len() < FIELD {
        line.extend_from_slice(prefix);
        line.extend_from_slice(text);
        return;
    }
    // SAFETY: the line has at least FIELD >= n bytes of spare capacity (checked above);
    // every read below lies within `text` (overlapping word copies of its first and last
    // bytes, chosen by its length) and every write within those n spare bytes, which are
    // all written before `set_len` makes them part of the line. A general `extend_from_slice`
    // calls `memcpy` for each of the 10^8 fields of a large result file, a good part of the
    // time of writing it.
    unsafe {
        let mut dst = line.as_mut_ptr().add(line.len());
        for &p in prefix {
            dst.write(p);
            dst = dst.add(1);
        }
        let src = text.as_ptr();
        let m = text.len();
        if m >= 16 {
            let a = src.cast::<u128>().read_unaligned();
            let b = src.add(m - 8).cast::<u64>().read_unaligned();
            dst.cast::<u128>().write_unaligned(a);
            dst.add(m - 8).cast::<u64>().write_unaligned(b);
        } else if m >= 8 {
            let a = src.cast::<u64>().read_unaligned();
            let b = src.add(m - 8).cast::<u64>().read_unaligned();
            dst.cast::<u64>().write_unaligned(a);
            dst.add(m - 8).cast::<u64>().write_unaligned(b);
        } else if m >= 4 {
            let a = src.cast::<u32>().read_unaligned();
            let b = src.add(m - 4).cast::<u32>().read_unaligned();
            dst.cast::<u32>().write_unaligned(a);
            dst.add(m - 4).cast::<u32>().write_unaligned(b);
        } else {
            for i in 0..m {
                dst.add(i).write(src.add(i).read());
            }
        }
        line.set_len(line.len() + n);
    }
}

/// Append the shortest round-trip text of `x` (see [`format_number`]).
fn push_number(line: &mut Vec<u8>, buf: &mut zmij::Buffer, x: f64) {
    if x.is_finite() {
        line.extend_from_slice(buf.format_finite(x).as_bytes());
    } else {
        line.extend_from_slice(format_number(x).as_bytes());
    }
}

/// Shortest text that parses back to exactly `x`: `NaN`, `Inf` and `-Inf` for the special
/// values (what the MSL reference files use), otherwise the Schubfach/yy shortest
/// representation of the `zmij` crate (`0.001`, `1.0`, `2.5e-122`).
pub fn format_number(x: f64) -> String {
    if x.is_nan() {
        "NaN".to_string()
    } else if x.is_infinite() {
        if x > 0.0 { "Inf" } else { "-Inf" }.to_string()
    } else {
        zmij::Buffer::new().format_finite(x).to_string()
    }
}

/// A CSV field in double quotes, inner quotes doubled.
fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Read a CSV result file.
pub fn read_csv(path: &Path) -> Result<SimResult, ResultError> {
    let text = std::fs::read_to_string(path).map_err(|e| ResultError::io(path, e))?;
    parse_csv(&text, path)
}

/// Whether a header field names the time column: `time` in any case (the references write
/// both `"time"` and `"Time"`).
fn is_time_column(name: &str) -> bool {
    name.trim().eq_ignore_ascii_case("time")
}

/// Parse CSV text; `path` is only used in error messages.
pub fn parse_csv(text: &str, path: &Path) -> Result<SimResult, ResultError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim_end_matches('\r')))
        .filter(|(_, l)| !l.trim().is_empty());
    let (header_line, header) = lines
        .next()
        .ok_or_else(|| ResultError::format(path, 1, "empty CSV file: expected a header line"))?;
    let names = split_fields(header).map_err(|m| ResultError::format(path, header_line, m))?;
    if names.is_empty() || !is_time_column(&names[0]) {
        return Err(ResultError::format(
            path,
            header_line,
            format!(
                "the first column of a result CSV must be named `time`, found `{}`",
                names.first().map_or("", |n| n.trim())
            ),
        ));
    }
    let vars = names[1..]
        .iter()
        .enumerate()
        .map(|(c, n)| ResultVar::column(n.trim(), c))
        .collect();
    let mut result = SimResult::new(vars, names.len() - 1)
        .map_err(|e| ResultError::format(path, header_line, e.to_string()))?;
    let mut values = Vec::with_capacity(names.len());
    for (line_no, line) in lines {
        values.clear();
        for field in split_fields(line).map_err(|m| ResultError::format(path, line_no, m))? {
            values.push(parse_number(&field).ok_or_else(|| {
                ResultError::format(path, line_no, format!("`{field}` is not a number"))
            })?);
        }
        if values.len() != names.len() {
            return Err(ResultError::format(
                path,
                line_no,
                format!(
                    "{} values on this line, but the header names {} columns",
                    values.len(),
                    names.len()
                ),
            ));
        }
        result
            .push_row(values[0], &values[1..])
            .map_err(|e| ResultError::format(path, line_no, e.to_string()))?;
    }
    Ok(result)
}

fn parse_number(field: &str) -> Option<f64> {
    let f = field.trim();
    match f {
        "Inf" | "+Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        _ => f.parse().ok(),
    }
}

/// Split one CSV line into fields; double-quoted fields may contain commas and `""`. Spaces
/// around a field are dropped.
fn split_fields(line: &str) -> Result<Vec<String>, String> {
    let mut fields = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        let mut field = String::new();
        // Spaces before a field (`1, 2` or `"a", "b"`) are not part of it.
        while chars.peek().is_some_and(|&c| c == ' ' || c == '\t') {
            chars.next();
        }
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        field.push('"');
                    }
                    Some('"') => break,
                    Some(c) => field.push(c),
                    None => return Err("unterminated quoted field".to_string()),
                }
            }
            // Allow spaces between the closing quote and the comma.
            while chars.peek().is_some_and(|c| c.is_whitespace()) {
                chars.next();
            }
            match chars.peek() {
                None | Some(',') => {}
                Some(c) => return Err(format!("unexpected `{c}` after a quoted field")),
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == ',' {
                    break;
                }
                field.push(c);
                chars.next();
            }
        }
        fields.push(field);
        match chars.next() {
            Some(',') => continue,
            _ => break,
        }
    }
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn rows_have_the_text_of_format_number_for_every_length() {
        // Lengths 1 to 24 and the non-finite values, negated aliases and constants.
        let mut values = vec![
            0.0,
            1.0,
            -1.0,
            0.5,
            12.25,
            1e-7,
            -1e300,
            1.0 / 3.0,
            f64::MIN,
        ];
        values.extend([
            f64::MIN_POSITIVE,
            -2.2250738585072014e-308,
            123456.789,
            9e15,
        ]);
        values.extend([f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 5e-324, -0.0]);
        for k in 0..40 {
            values.push((k as f64 * 0.7).exp() * if k % 2 == 0 { 1.0 } else { -1e-9 });
        }
        let mut vars: Vec<ResultVar> = (0..values.len())
            .map(|i| ResultVar::column(format!("x{i}"), i))
            .collect();
        let n = values.len();
        vars.extend((0..n).map(|i| ResultVar::alias(format!("m{i}"), i, true)));
        vars.push(ResultVar::parameter("k", 2.5));
        vars.push(ResultVar::parameter("big", -2.2250738585072014e-308));
        let mut rows = CsvRows::new(&vars);
        let mut out = Vec::new();
        rows.write_row(&mut out, 0.125, &values).unwrap();
        let mut expected = vec![format_number(0.125)];
        expected.extend(values.iter().map(|&x| format_number(x)));
        expected.extend(values.iter().map(|&x| format_number(-x)));
        expected.push("2.5".to_string());
        expected.push(format_number(-2.2250738585072014e-308));
        assert_eq!(String::from_utf8(out).unwrap(), expected.join(",") + "\n");
    }

    #[test]
    fn split_fields_handles_quotes() {
        assert_eq!(
            split_fields(r#""a,b","c""d",3"#).unwrap(),
            vec!["a,b", "c\"d", "3"]
        );
        assert!(split_fields("\"open").is_err());
    }

    #[test]
    fn parses_reference_style_csv() {
        let text = "\"time\",\"x\",\"y[2]\"\n0,1,2\n0.5,1e-3,-2.5\n0.5,3,4\n";
        let r = parse_csv(text, &PathBuf::from("t.csv")).unwrap();
        assert_eq!(r.time(), &[0.0, 0.5, 0.5]);
        assert_eq!(r.series("y[2]").unwrap(), vec![2.0, -2.5, 4.0]);
    }

    /// The header variants of the Modelica Association reference results, each read into the
    /// same signals.
    #[test]
    fn reads_every_reference_header_variant() {
        let variants = [
            // The common form.
            "\"time\",\"a.x\",\"b[2].y\"\n0,1,2\n1,3,4\n",
            // A capital `Time` (EddyCurrentBrake, HBridge_R and others).
            "\"Time\",\"a.x\",\"b[2].y\"\n0,1,2\n1,3,4\n",
            // Unquoted names.
            "time,a.x,b[2].y\n0,1,2\n1,3,4\n",
            // Windows line ends and a byte-order mark.
            "\u{feff}\"TIME\",\"a.x\",\"b[2].y\"\r\n0,1,2\r\n1,3,4\r\n",
            // Spaces around fields, quoted and unquoted, and no final newline.
            " \"time\" , \"a.x\",\"b[2].y\" \n0, 1 ,2\n 1,3,4",
        ];
        for text in variants {
            let r = parse_csv(text, &PathBuf::from("t.csv"))
                .unwrap_or_else(|e| panic!("{text:?}: {e}"));
            assert_eq!(r.time(), &[0.0, 1.0], "{text:?}");
            assert_eq!(r.series("a.x").unwrap(), vec![1.0, 3.0], "{text:?}");
            assert_eq!(r.series("b[2].y").unwrap(), vec![2.0, 4.0], "{text:?}");
            assert_eq!(r.names().count(), 2, "{text:?}");
        }
    }

    #[test]
    fn names_the_wrong_first_column() {
        let err = parse_csv("\"t\",\"x\"\n0,1\n", &PathBuf::from("t.csv")).unwrap_err();
        assert!(err.to_string().contains("found `t`"), "{err}");
        // A column merely containing `time` is not the time column.
        assert!(parse_csv("\"timer\",\"x\"\n0,1\n", &PathBuf::from("t.csv")).is_err());
    }

    #[test]
    fn reports_bad_lines() {
        let err = parse_csv("\"time\",\"x\"\n0,1\n1,zz\n", &PathBuf::from("t.csv")).unwrap_err();
        assert_eq!(err.to_string(), "t.csv:3: `zz` is not a number");
        let err = parse_csv("\"time\",\"x\"\n0\n", &PathBuf::from("t.csv")).unwrap_err();
        assert!(err.to_string().contains("t.csv:2:"));
        assert!(parse_csv("\"a\",\"x\"\n", &PathBuf::from("t.csv")).is_err());
    }

    #[test]
    fn number_format_round_trips() {
        for x in [0.1, 1.0 / 3.0, -1e-300, 6.02e23, 0.0, f64::MAX, 5e-324] {
            assert_eq!(parse_number(&format_number(x)), Some(x));
        }
        assert_eq!(
            parse_number(&format_number(f64::NEG_INFINITY)),
            Some(f64::NEG_INFINITY)
        );
        assert!(parse_number(&format_number(f64::NAN)).unwrap().is_nan());
    }
}
