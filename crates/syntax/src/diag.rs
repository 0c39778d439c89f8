//! Diagnostics shared by every stage: a message, a primary location, secondary labels, notes
//! and an optional fix hint, rendered as
//!
//! ```text
//! error: expected `;`, found `end`
//!   --> Model.mo:12:5
//!    |
//! 12 |     end Model;
//!    |     ^^^ expected `;` here
//!    = help: terminate the declaration with `;`
//! ```

use crate::source::{SourceMap, Span};
use std::fmt::Write;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Note,
    Warning,
    Error,
}

#[derive(Clone, Debug)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    /// Primary location (may be [`Span::DUMMY`]).
    pub span: Span,
    /// Text written under the primary caret.
    pub label: String,
    /// Secondary locations, e.g. the modifier or `extends` clause that led here.
    pub secondary: Vec<Label>,
    pub notes: Vec<String>,
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn error(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            span,
            label: String::new(),
            secondary: Vec::new(),
            notes: Vec::new(),
            help: None,
        }
    }

    pub fn warning(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(span, message)
        }
    }

    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    pub fn with_secondary(mut self, span: Span, message: impl Into<String>) -> Self {
        self.secondary.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// Render for a terminal (no colours, stable for snapshot tests).
    pub fn render(&self, sources: &SourceMap) -> String {
        let mut out = String::new();
        let kind = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        };
        let _ = writeln!(out, "{kind}: {}", self.message);
        render_excerpt(&mut out, sources, self.span, &self.label);
        for l in &self.secondary {
            render_excerpt(&mut out, sources, l.span, &l.message);
        }
        for n in &self.notes {
            let _ = writeln!(out, "   = note: {n}");
        }
        if let Some(h) = &self.help {
            let _ = writeln!(out, "   = help: {h}");
        }
        out
    }
}

fn render_excerpt(out: &mut String, sources: &SourceMap, span: Span, label: &str) {
    let Some(file) = sources.get(span.file) else {
        if !label.is_empty() {
            let _ = writeln!(out, "   = {label}");
        }
        return;
    };
    let (line, col) = file.line_col(span.start);
    let (end_line, end_col) = file.line_col(span.end.max(span.start));
    let _ = writeln!(out, "  --> {}:{}:{}", file.path.display(), line, col);
    let text = file.line_text(line);
    let num = line.to_string();
    let pad = " ".repeat(num.len());
    let _ = writeln!(out, "{pad} |");
    let _ = writeln!(out, "{num} | {}", text.replace('\t', " "));
    let width = if end_line == line && end_col > col {
        (end_col - col) as usize
    } else {
        1
    };
    let _ = writeln!(
        out,
        "{pad} | {}{} {}",
        " ".repeat(col as usize - 1),
        "^".repeat(width),
        label
    );
}

/// Render a list of diagnostics, errors and warnings alike, separated by blank lines.
pub fn render_all(diags: &[Diagnostic], sources: &SourceMap) -> String {
    diags
        .iter()
        .map(|d| d.render(sources))
        .collect::<Vec<_>>()
        .join("\n")
}
