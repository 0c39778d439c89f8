//! Structural equality of syntax trees ignoring source locations.
//!
//! Used by the round-trip tests (parse → print → parse must give the same tree) and handy for
//! the frontend's tests. It compares the `Debug` renderings with every `Span { .. }` removed:
//! every node's location is a `Span`, so what remains is exactly the tree structure and the
//! literal values. This avoids a hand-written traversal of every node type that would have to
//! be kept in sync with the AST.

use std::fmt::Debug;

/// `true` if `a` and `b` are equal when all spans are ignored.
pub fn eq_ignoring_spans<T: Debug>(a: &T, b: &T) -> bool {
    strip_spans(&format!("{a:?}")) == strip_spans(&format!("{b:?}"))
}

/// The `Debug` text of a tree without any span (for diffs in test failures).
pub fn debug_without_spans<T: Debug>(t: &T) -> String {
    strip_spans(&format!("{t:?}"))
}

/// Remove every `Span { file: .., start: .., end: .. }` (and a preceding `span: `) from a
/// `Debug` rendering.
fn strip_spans(s: &str) -> String {
    const MARK: &str = "Span { ";
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(MARK) {
        let mut head = &rest[..i];
        if let Some(h) = head.strip_suffix("span: ") {
            head = h;
        }
        out.push_str(head);
        // Spans contain no nested braces: skip to the closing one.
        let after = &rest[i + MARK.len()..];
        match after.find('}') {
            Some(j) => rest = &after[j + 1..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{FileId, Span};

    #[test]
    fn spans_are_ignored_but_values_are_not() {
        let a = crate::ast::Ident::new("x", Span::new(FileId(0), 1, 2));
        let b = crate::ast::Ident::new("x", Span::new(FileId(3), 7, 9));
        let c = crate::ast::Ident::new("y", Span::new(FileId(0), 1, 2));
        assert!(eq_ignoring_spans(&a, &b));
        assert!(!eq_ignoring_spans(&a, &c));
    }
}
