//! `moss-syntax`: lexer, parser, AST with spans, pretty-printer and diagnostics.
//!
//! Input: Modelica source text. Output: [`ast::StoredDefinition`] plus diagnostics. Nothing in
//! this crate knows about name lookup or semantics.
//!
//! Entry points: [`parse_str`] (text already in a [`SourceMap`]), [`parse_source`] (adds the
//! text to the map first), [`parse_file`] (reads a file), [`parse_files`] (many files in
//! parallel) and [`parse_expr`]. [`print_stored_definition`] turns a tree back into Modelica.
//!
//! ```
//! use moss_syntax::ast::{ClassSpecifier, Element};
//! use moss_syntax::{parse_source, SourceMap};
//!
//! let sources = SourceMap::new();
//! let (_file, def, diags) = parse_source(
//!     &sources,
//!     "Decay.mo",
//!     "model Decay\n  parameter Real k = 2;\n  Real x(start = 1);\nequation\n  der(x) = -k*x;\nend Decay;\n",
//! );
//! assert!(diags.is_empty());
//! let class = &def.classes[0].class;
//! assert_eq!(class.name.as_str(), "Decay");
//! let composition = class.specifier.composition().expect("a long class");
//! let names: Vec<String> = composition
//!     .elements()
//!     .filter_map(|(_, e)| match e {
//!         Element::Component { clause, .. } => Some(clause.components[0].name.to_string()),
//!         _ => None,
//!     })
//!     .collect();
//! assert_eq!(names, ["k", "x"]);
//! assert_eq!(composition.equations(false).count(), 1);
//!
//! // Syntax errors come back as diagnostics rendered with file:line:col and an excerpt.
//! let (_, _, diags) = parse_source(&sources, "Bad.mo", "model Bad\n  Real x\nend Bad;\n");
//! let text = moss_syntax::diag::render_all(&diags, &sources);
//! assert!(text.starts_with("error: expected `;`, found `end`\n  --> Bad.mo:2:9\n"));
//! ```

pub mod ast;
pub mod batch;
mod compare;
pub mod diag;
mod lexer;
mod parser;
pub mod print;
pub mod source;

pub use batch::{collect_mo_files, parse_files, parse_files_with, ParsedFile};
pub use compare::{debug_without_spans, eq_ignoring_spans};
pub use diag::{Diagnostic, Severity};
pub use print::{print_class, print_expr, print_stored_definition};
pub use source::{FileId, SourceFile, SourceMap, Span};

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Parse the text of file `file` (already registered in a [`SourceMap`] so that diagnostics
/// can be rendered). Always returns a tree: on syntax errors it holds what could be recovered.
pub fn parse_str(file: FileId, text: &str) -> (ast::StoredDefinition, Vec<Diagnostic>) {
    parser::parse_stored_definition(file, text)
}

/// Add `text` under `path` to `sources` and parse it.
pub fn parse_source(
    sources: &SourceMap,
    path: impl Into<PathBuf>,
    text: impl Into<Arc<str>>,
) -> (FileId, ast::StoredDefinition, Vec<Diagnostic>) {
    let text: Arc<str> = text.into();
    let file = sources.add(path, text.clone());
    let (def, diags) = parse_str(file, &text);
    (file, def, diags)
}

/// Read `path`, add it to `sources` and parse it. A read error becomes a diagnostic (and an
/// empty stored definition).
pub fn parse_file(sources: &SourceMap, path: &Path) -> (ast::StoredDefinition, Vec<Diagnostic>) {
    match std::fs::read(path) {
        Ok(bytes) => {
            // Invalid UTF-8 is replaced (and then reported by the lexer as unexpected
            // characters wherever it matters); valid files are not copied.
            let text = String::from_utf8(bytes)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
            let (_, def, diags) = parse_source(sources, path, text);
            (def, diags)
        }
        Err(e) => {
            let diag = Diagnostic::error(
                Span::DUMMY,
                format!("cannot read `{}`: {e}", path.display()),
            )
            .with_help("check that the path exists and is readable");
            let def = ast::StoredDefinition {
                within: None,
                classes: Vec::new(),
                span: Span::DUMMY,
            };
            (def, vec![diag])
        }
    }
}

/// Parse a single expression (e.g. a command-line parameter value) from file `file`.
pub fn parse_expr(file: FileId, text: &str) -> (Option<ast::Expr>, Vec<Diagnostic>) {
    parser::parse_expression(file, text)
}

/// Parse a class name such as `Modelica.Blocks.Sources.Step` or `.A.'b c'` (e.g. a model name
/// given on the command line).
pub fn parse_name(file: FileId, text: &str) -> (Option<ast::Name>, Vec<Diagnostic>) {
    parser::parse_type_name(file, text)
}

/// Parse a component reference such as `a.b[2].c` (e.g. a variable given on the command line).
pub fn parse_component_ref(
    file: FileId,
    text: &str,
) -> (Option<ast::ComponentRef>, Vec<Diagnostic>) {
    parser::parse_cref(file, text)
}
