//! The MSL's text table format: a first line `#1`, then per matrix a header line
//! `double name(rows, cols)` (or `float`) followed by its values, row by row. `#` starts a
//! comment; values are separated by blanks, tabs, commas or semicolons.

use crate::Matrix;

pub fn is_text_table(bytes: &[u8]) -> bool {
    let start = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    start.starts_with(b"#1")
}

/// A matrix header: (name, rows, columns), or `None` when `line` is no header.
fn header(line: &str) -> Option<Result<(String, usize, usize), String>> {
    let code = line.split('#').next().unwrap_or("").trim();
    let rest = code
        .strip_prefix("double")
        .or_else(|| code.strip_prefix("float"))?;
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    let rest = rest.trim();
    let parsed = (|| {
        let open = rest.find('(')?;
        let close = rest.rfind(')')?;
        let name = rest[..open].trim().to_string();
        let mut dims = rest[open + 1..close]
            .split(',')
            .map(|d| d.trim().parse::<usize>());
        let (rows, cols) = (dims.next()?.ok()?, dims.next()?.ok()?);
        dims.next().is_none().then_some((name, rows, cols))
    })();
    Some(parsed.ok_or_else(|| {
        format!("malformed matrix header `{code}` (expected `double name(rows, cols)`)")
    }))
}

pub fn names(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .filter_map(header)
        .filter_map(Result::ok)
        .map(|(n, _, _)| n)
        .collect()
}

pub fn find(bytes: &[u8], name: &str) -> Result<Option<Matrix>, String> {
    let text = String::from_utf8_lossy(bytes);
    let mut lines = text.lines().enumerate().skip(1);
    while let Some((_, line)) = lines.next() {
        let Some(h) = header(line) else { continue };
        let (found, rows, cols) = h?;
        if found != name {
            continue;
        }
        let mut data = Vec::with_capacity(rows * cols);
        for (k, line) in lines.by_ref() {
            if data.len() == rows * cols {
                break;
            }
            let code = line.split('#').next().unwrap_or("");
            for item in code.split([' ', '\t', ',', ';']).filter(|s| !s.is_empty()) {
                let v: f64 = item.parse().map_err(|_| {
                    format!("line {}: `{item}` is not a number (matrix `{name}`)", k + 1)
                })?;
                data.push(v);
            }
        }
        if data.len() != rows * cols {
            return Err(format!(
                "matrix `{name}` is declared {rows} x {cols} but has {} values",
                data.len()
            ));
        }
        return Ok(Some(Matrix { rows, cols, data }));
    }
    Ok(None)
}

/// A CSV file as one matrix: after `header_lines` lines, one row per non-empty line, its
/// values separated by `delimiter` (blanks around values are ignored).
pub fn read_csv(file: &str, delimiter: &str, header_lines: usize) -> Result<Matrix, String> {
    let bytes = std::fs::read(file).map_err(|e| format!("cannot read `{file}`: {e}"))?;
    let text = String::from_utf8_lossy(&bytes);
    let delimiter = if delimiter.is_empty() { "," } else { delimiter };
    let mut data = Vec::new();
    let mut cols = None;
    let mut rows = 0;
    for (k, line) in text.lines().enumerate().skip(header_lines) {
        if line.trim().is_empty() {
            continue;
        }
        let row: Vec<f64> = line
            .split(delimiter)
            .map(|item| {
                let item = item.trim();
                item.parse()
                    .map_err(|_| format!("`{file}` line {}: `{item}` is not a number", k + 1))
            })
            .collect::<Result<_, _>>()?;
        match cols {
            None => cols = Some(row.len()),
            Some(n) if n != row.len() => {
                return Err(format!(
                    "`{file}` line {}: {} values, but the lines before have {n}",
                    k + 1,
                    row.len()
                ))
            }
            Some(_) => {}
        }
        data.extend(row);
        rows += 1;
    }
    Ok(Matrix {
        rows,
        cols: cols.unwrap_or(0),
        data,
    })
}
