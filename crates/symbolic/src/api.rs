//! Entry point: flat model in, causal program out.

use crate::program::CausalProgram;
use moss_frontend::FlatModel;
use moss_syntax::Diagnostic;

/// Translate a flat model into a causal program. Warnings are in `program.report.warnings`;
/// errors (structurally singular, unbalanced, unsupported constructs) come back as
/// diagnostics pointing into `flat.sources`.
pub fn translate(flat: &FlatModel) -> Result<CausalProgram, Vec<Diagnostic>> {
    Err(vec![Diagnostic::error(
        moss_syntax::Span::DUMMY,
        format!(
            "cannot translate `{}`: the symbolic stage is not implemented yet",
            flat.name
        ),
    )])
}
