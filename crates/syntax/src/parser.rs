//! Parser (work in progress: the real parser replaces this stub).
use crate::ast::{Expr, StoredDefinition};
use crate::{Diagnostic, FileId, Span};

pub(crate) fn parse_stored_definition(
    file: FileId,
    text: &str,
) -> (StoredDefinition, Vec<Diagnostic>) {
    let span = Span::new(file, 0, text.len() as u32);
    let def = StoredDefinition {
        within: None,
        classes: Vec::new(),
        span,
    };
    (
        def,
        vec![Diagnostic::error(span, "the parser is not implemented yet")],
    )
}

pub(crate) fn parse_expression(file: FileId, text: &str) -> (Option<Expr>, Vec<Diagnostic>) {
    let span = Span::new(file, 0, text.len() as u32);
    (
        None,
        vec![Diagnostic::error(span, "the parser is not implemented yet")],
    )
}
