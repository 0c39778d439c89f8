//! Size limits on what the frontend builds from constant expressions. Arrays are expanded
//! element by element, so an array constructor or a range with 10^9 elements would run out
//! of time and memory instead of failing; the limit of declared arrays
//! ([`crate::ctx::MAX_ELEMENTS`]) applies to the values of `fill`, `zeros`, `ones`,
//! `identity`, `linspace` and ranges as well, with a diagnostic at the expression.

use crate::ctx::MAX_ELEMENTS;
use crate::inst::Res;
use moss_syntax::Span;

/// Error unless an array of dimensions `dims` stays within [`MAX_ELEMENTS`]. Every prefix of
/// the dimensions counts: an array is built from the outside in, so `fill(0, 10^9, 0)` makes
/// 10^9 empty rows although it has no element.
pub fn check_dims(dims: &[usize], span: Span, what: &str) -> Res<()> {
    let mut count: usize = 1;
    for d in dims {
        count = count.saturating_mul(*d);
        if count > MAX_ELEMENTS {
            return too_many(span, what);
        }
    }
    Ok(())
}

/// Error unless a range of `count` elements (from a floating-point computation, so
/// possibly NaN or infinite) stays within [`MAX_ELEMENTS`].
pub fn check_range_count(count: f64, span: Span) -> Res<()> {
    if count.is_finite() && count <= MAX_ELEMENTS as f64 {
        Ok(())
    } else {
        too_many(span, "this range")
    }
}

fn too_many<T>(span: Span, what: &str) -> Res<T> {
    Err(Box::new(
        moss_syntax::Diagnostic::error(
            span,
            format!(
                "{what} has more than {MAX_ELEMENTS} elements; moss expands arrays element by element"
            ),
        )
        .with_help("use smaller dimensions or a larger step"),
    ))
}
