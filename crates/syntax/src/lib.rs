//! `moss-syntax`: lexer, parser, AST with spans, pretty-printer and diagnostics.
//!
//! Input: Modelica source text. Output: [`ast::StoredDefinition`] plus diagnostics. Nothing in
//! this crate knows about name lookup or semantics.

pub mod diag;
pub mod source;

pub use diag::{Diagnostic, Severity};
pub use source::{FileId, SourceFile, SourceMap, Span};
