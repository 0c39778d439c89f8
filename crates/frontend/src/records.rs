//! Records as function inputs and locals (spec 12.6): a record component of a function is
//! scalarized into one function variable per field (`p.R`, `p.sub.x`), and record arguments
//! are passed field by field, matched by name.

use crate::ctx::Flattener;
use crate::expand::Val;
use crate::flat::{Expr, ScalarType};
use crate::inst::*;
use crate::loader::ClassId;
use moss_syntax::ast::ClassKind;
use moss_syntax::Span;
use std::rc::Rc;
use std::sync::Arc;

/// One scalarized field of a record type: path below the record, type, dimensions.
#[derive(Clone, Debug)]
pub struct RecordField {
    pub path: String,
    pub ty: ScalarType,
    pub dims: Vec<usize>,
}

impl<'a> Flattener<'a> {
    pub fn is_record_class(&self, c: ClassId) -> bool {
        matches!(
            self.lk.kind(self.lk.follow_short_class(c)),
            ClassKind::Record | ClassKind::OperatorRecord
        )
    }

    /// The primitive fields of record class `rc`, nested records flattened with dots.
    pub fn record_field_list(&self, rc: ClassId, span: Span) -> Res<Vec<RecordField>> {
        let mut out = Vec::new();
        self.collect_record_fields(rc, "", &mut out, span, 0)?;
        Ok(out)
    }

    fn collect_record_fields(
        &self,
        rc: ClassId,
        prefix: &str,
        out: &mut Vec<RecordField>,
        span: Span,
        depth: u32,
    ) -> Res<()> {
        if depth > 20 {
            return err(span, "records nest too deeply");
        }
        let node = self.package_node(rc);
        let elems = self.elems(&node);
        for c in &elems.comps {
            let ty = self.comp_type(&node, c)?;
            let dims = self.comp_dims(&node, c)?;
            let path = format!("{prefix}{}", c.name);
            let scalar = match &ty.base {
                Base::Real => ScalarType::Real,
                Base::Integer => ScalarType::Integer,
                Base::Boolean => ScalarType::Boolean,
                Base::String => ScalarType::String,
                Base::Clock => ScalarType::Clock,
                Base::Enum(e, lits) => ScalarType::Enumeration {
                    name: Arc::from(self.lk.name_of(*e).as_str()),
                    literals: lits.clone(),
                },
                Base::Class(inner) if self.is_record_class(*inner) && dims.is_empty() => {
                    self.collect_record_fields(*inner, &format!("{path}."), out, span, depth + 1)?;
                    continue;
                }
                Base::Class(inner) => {
                    return err(
                        span,
                        format!(
                            "record field `{path}` of class `{}` is not supported in functions",
                            self.lk.name_of(*inner)
                        ),
                    )
                }
            };
            out.push(RecordField {
                path,
                ty: scalar,
                dims,
            });
        }
        Ok(())
    }

    /// The value field `path` (`x`, `sub.x`) of record class `rc` starts with in a
    /// variable of that class declared without modifiers (a function's local or output
    /// record, spec 12.4.4: its components are initialized by their bindings): the
    /// field's binding in the class (with the modifiers of its `extends` clauses
    /// applied), a modifier on it in an enclosing field's declaration (`Inner i(x = 3)`),
    /// or the nested record class's own binding. Only constant bindings count; `None`
    /// when the field has none.
    pub(crate) fn record_field_default(&self, rc: ClassId, path: &str, depth: u32) -> Option<Expr> {
        if depth > 20 {
            return None;
        }
        let node = self.package_node(rc);
        let elems = self.elems(&node);
        let (first, rest) = match path.split_once('.') {
            Some((a, b)) => (a, Some(b)),
            None => (path, None),
        };
        let c = elems.comps.iter().find(|c| &*c.name == first)?;
        // A binding that names a sibling field (`Real y = 2*x`) depends on how the
        // variable's own modifiers set that field: not a class-wide constant.
        let names_sibling = |b: &BindingMod| {
            let mut found = false;
            b.expr.walk(&mut |e| {
                if let moss_syntax::ast::ExprKind::Ref(r) = &e.kind {
                    let head = r.parts.first().map(|p| &*p.name.name);
                    found |= !r.global && elems.comps.iter().any(|c| Some(&*c.name) == head);
                }
            });
            found
        };
        let constant = |b: &BindingMod| {
            if names_sibling(b) {
                return None;
            }
            self.eval_expr(&b.expr, &b.env, &mut crate::expand::Cx::eval())
                .ok()
        };
        if let Some(b) = &c.mods.binding {
            let v = constant(b)?;
            return match rest {
                None => Some(v.to_expr()),
                Some(r) => field_value(&v, r).map(|x| x.to_expr()),
            };
        }
        let rest = rest?;
        let mut m = Some(&c.mods);
        for p in rest.split('.') {
            m = m.and_then(|x| x.sub(p));
        }
        if let Some(b) = m.and_then(|x| x.binding.as_ref()) {
            return constant(b).map(|v| v.to_expr());
        }
        match self.comp_type(&node, c).ok()?.base {
            Base::Class(inner) if self.is_record_class(inner) => {
                self.record_field_default(inner, rest, depth + 1)
            }
            _ => None,
        }
    }

    /// Scalar arguments for a call: record arguments are expanded field by field (matched
    /// by name against the callee's record type), other arguments are kept.
    pub fn expand_record_args(
        &self,
        fnode: &NodeRef,
        inputs: &[Rc<Comp>],
        args: Vec<Val>,
        span: Span,
    ) -> Res<Vec<Val>> {
        let mut out = Vec::new();
        for (c, v) in inputs.iter().zip(args) {
            let ty = self.comp_type(fnode, c)?;
            match ty.base {
                Base::Class(rc) if self.is_record_class(rc) => {
                    let fields = self.record_field_list(rc, span)?;
                    for f in fields {
                        match field_value(&v, &f.path) {
                            Some(x) => out.push(x),
                            None => {
                                return err(
                                    span,
                                    format!(
                                        "argument `{}`: no value for record field `{}`",
                                        c.name, f.path
                                    ),
                                )
                            }
                        }
                    }
                }
                _ => out.push(v),
            }
        }
        Ok(out)
    }
}

/// For an array of records, the array of the field's values (`v[:].re`).
pub(crate) fn field_value(v: &Val, path: &str) -> Option<Val> {
    match v {
        Val::A(items) => Some(Val::A(
            items
                .iter()
                .map(|x| field_value(x, path))
                .collect::<Option<Vec<_>>>()?,
        )),
        Val::R(fields) => {
            let (first, rest) = match path.split_once('.') {
                Some((a, b)) => (a, Some(b)),
                None => (path, None),
            };
            let x = &fields.iter().find(|(n, _)| &**n == first)?.1;
            match rest {
                Some(rest) => field_value(x, rest),
                None => Some(x.clone()),
            }
        }
        Val::S(_) => None,
    }
}

/// Expressions of the fields of a record-typed function local `name`.
pub fn local_field_vars(name: &str, fields: &[RecordField]) -> Vec<Expr> {
    fields
        .iter()
        .map(|f| Expr::Var {
            name: format!("{name}.{}", f.path),
            subscripts: Vec::new(),
        })
        .collect()
}
