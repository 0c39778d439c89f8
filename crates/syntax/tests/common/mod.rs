//! Helpers shared by the integration tests.
#![allow(dead_code)]

use moss_syntax::{parse_source, print_stored_definition, SourceMap};
use std::path::{Path, PathBuf};

/// All `*.mo` files under `dir` (recursively, sorted); empty if `dir` does not exist.
pub fn mo_files_under(dir: &Path) -> Vec<PathBuf> {
    if !dir.exists() {
        return Vec::new();
    }
    moss_syntax::collect_mo_files(&[dir.to_path_buf()]).unwrap_or_default()
}

/// Parse, print, reparse, print again; both printed forms must be equal and the file must
/// parse without errors (unless `allow_errors`, used for files owned by others, where a
/// syntax error is skipped rather than failed).
pub fn roundtrip_check(path: &Path, allow_errors: bool) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let sources = SourceMap::new();
    let (_, def, diags) = parse_source(&sources, path, text);
    if diags.iter().any(|d| d.is_error()) {
        if allow_errors {
            return Ok(());
        }
        return Err(moss_syntax::diag::render_all(&diags, &sources));
    }
    let printed = print_stored_definition(&def);
    let (_, def2, diags2) = parse_source(&sources, "<printed>", printed.clone());
    if diags2.iter().any(|d| d.is_error()) {
        return Err(format!(
            "{}: printed form does not parse:\n{}\n--- printed ---\n{}",
            path.display(),
            moss_syntax::diag::render_all(&diags2, &sources),
            printed
        ));
    }
    let printed2 = print_stored_definition(&def2);
    if printed != printed2 {
        let line = printed
            .lines()
            .zip(printed2.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        return Err(format!(
            "{}: print(parse(print(x))) differs at printed line {}:\n  first:  {}\n  second: {}",
            path.display(),
            line + 1,
            printed.lines().nth(line).unwrap_or(""),
            printed2.lines().nth(line).unwrap_or("")
        ));
    }
    if !moss_syntax::eq_ignoring_spans(&def, &def2) {
        return Err(format!(
            "{}: reparsed tree differs (modulo spans)",
            path.display()
        ));
    }
    Ok(())
}
