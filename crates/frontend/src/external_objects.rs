//! External objects of user code (spec 12.9.7): a class extending `ExternalObject` whose
//! `constructor` and the functions taking it are external C functions. Until a call needs
//! it, an object is the record of its constructor's arguments (`tables.rs`, which lowers the
//! MSL's table objects to Modelica functions). Passed to any other function, it becomes the
//! call of its constructor, and a function component of an external-object class is an
//! Integer variable: moss-codegen passes that value as the C `void*` handle and constructs
//! one object per distinct argument list (`extc_args.rs`), so the object is built once.

use crate::ctx::Flattener;
use crate::expand::Val;
use crate::flat::Expr;
use crate::inst::{err, Found, Res};
use crate::loader::ClassId;
use moss_syntax::Span;

/// Is `v` an external object (the record of its constructor's arguments)?
pub fn is_object(v: &Val) -> bool {
    matches!(v, Val::R(fields) if fields.first().is_some_and(|(n, _)| &**n == crate::tables::EXTOBJ))
}

/// The class name an object value records.
fn object_class(v: &Val) -> Option<&str> {
    match v {
        Val::R(fields) => match fields.first() {
            Some((_, Val::S(Expr::String(s)))) => Some(s),
            _ => None,
        },
        _ => None,
    }
}

/// Is `v` one of the MSL's table objects, which `tables.rs` lowers to Modelica functions?
pub fn is_msl_table(v: &Val) -> bool {
    object_class(v).is_some_and(|c| c.starts_with("Modelica.Blocks.Types.External"))
}

impl Flattener<'_> {
    /// The `constructor` function of external-object class `id`.
    pub(crate) fn object_constructor(&self, id: ClassId, span: Span) -> Res<ClassId> {
        match self.lk.member(id, "constructor") {
            Some(Found::Class(c)) => Ok(c),
            _ => err(
                span,
                format!(
                    "external object `{}` has no constructor",
                    self.lk.name_of(id)
                ),
            ),
        }
    }

    /// An object value passed to a function: the call of its constructor with the recorded
    /// arguments. Other values are returned unchanged.
    pub(crate) fn object_as_call(&self, v: Val, span: Span) -> Res<Val> {
        if !is_object(&v) {
            return Ok(v);
        }
        let Some(class) = object_class(&v) else {
            return Ok(v);
        };
        let parts: Vec<&str> = class.split('.').collect();
        let Some(id) = self.lib().lookup_qualified(&parts) else {
            return err(
                span,
                format!("cannot find the external object class `{class}`"),
            );
        };
        let ctor = self.object_constructor(id, span)?;
        let full = self.lk.name_of(ctor);
        self.functions.borrow_mut().insert(full.clone(), ctor);
        let Val::R(fields) = v else { return Ok(v) };
        let args = fields
            .into_iter()
            .skip(1)
            .map(|(_, a)| a.to_expr())
            .collect();
        Ok(Val::S(Expr::Call { func: full, args }))
    }
}
