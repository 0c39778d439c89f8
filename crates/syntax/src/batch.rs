//! Parsing many files at once: collect `.mo` files under directories and parse them in
//! parallel (rayon). Used by `moss parse` and by library loading in the frontend.

use crate::ast::StoredDefinition;
use crate::diag::Diagnostic;
use crate::source::{SourceMap, Span};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// The result of parsing one file.
#[derive(Debug)]
pub struct ParsedFile {
    pub path: PathBuf,
    pub definition: StoredDefinition,
    pub diagnostics: Vec<Diagnostic>,
    /// Size of the file in bytes (0 if it could not be read).
    pub bytes: usize,
}

impl ParsedFile {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Expand `inputs` into a sorted list of files: files are taken as given, directories are
/// searched recursively for `*.mo`. A missing input is an error diagnostic.
pub fn collect_mo_files(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, Box<Diagnostic>> {
    let mut out = Vec::new();
    for input in inputs {
        if input.is_dir() {
            walk_dir(input, &mut out)?;
        } else if input.is_file() {
            out.push(input.clone());
        } else {
            return Err(Box::new(
                Diagnostic::error(
                    Span::DUMMY,
                    format!("no such file or directory: `{}`", input.display()),
                )
                .with_help("pass `.mo` files or directories containing them"),
            ));
        }
    }
    Ok(out)
}

fn walk_dir(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), Box<Diagnostic>> {
    let read = std::fs::read_dir(dir).map_err(|e| {
        Box::new(Diagnostic::error(
            Span::DUMMY,
            format!("cannot read directory `{}`: {e}", dir.display()),
        ))
    })?;
    // The entry's file type comes from the directory listing (no extra `stat`), except for
    // symbolic links, which are resolved.
    let mut entries: Vec<(PathBuf, bool)> = read
        .filter_map(|e| e.ok())
        .map(|e| {
            let is_dir = match e.file_type() {
                Ok(t) if t.is_symlink() => e.path().is_dir(),
                Ok(t) => t.is_dir(),
                Err(_) => false,
            };
            (e.path(), is_dir)
        })
        .collect();
    entries.sort();
    for (p, is_dir) in entries {
        if is_dir {
            walk_dir(&p, out)?;
        } else if p.extension().is_some_and(|e| e == "mo") {
            out.push(p);
        }
    }
    Ok(())
}

/// Parse all `paths` in parallel, registering each in `sources`. The result keeps the order of
/// `paths`.
pub fn parse_files(sources: &SourceMap, paths: &[PathBuf]) -> Vec<ParsedFile> {
    parse_files_with(sources, paths, |f| f)
}

/// Like [`parse_files`], but hands each result to `f` on the worker thread and keeps only what
/// `f` returns. Callers that only need diagnostics (e.g. `moss parse`) drop the trees in
/// parallel this way instead of holding every tree in memory.
pub fn parse_files_with<R: Send>(
    sources: &SourceMap,
    paths: &[PathBuf],
    f: impl Fn(ParsedFile) -> R + Sync,
) -> Vec<R> {
    paths
        .par_iter()
        .map(|path| {
            let (definition, diagnostics) = crate::parse_file(sources, path);
            // The whole file is the definition's span (dummy if it could not be read).
            let bytes = if definition.span.is_dummy() {
                0
            } else {
                definition.span.end as usize
            };
            f(ParsedFile {
                path: path.clone(),
                definition,
                diagnostics,
                bytes,
            })
        })
        .collect()
}
