//! Operator overloading of operator records (spec 14), e.g. `Complex`: `a + b`, `-a`,
//! `a * 2` and `Complex(1)` on record values call the operator functions of the record's
//! class, chosen by the kinds of the arguments (record, scalar, array); scalars are
//! converted with the `'constructor'` operator when no function takes them directly.

use crate::ctx::Flattener;
use crate::expand::{Cx, Val};
use crate::inst::*;
use crate::loader::ClassId;
use moss_syntax::ast::{self, BinaryOp, ClassKind, Element};
use moss_syntax::Span;
use std::rc::Rc;
use std::sync::Arc;

/// The Modelica name of the operator function for a binary operator.
pub fn operator_name(op: BinaryOp) -> Option<&'static str> {
    Some(match op {
        BinaryOp::Add | BinaryOp::ElemAdd => "'+'",
        BinaryOp::Sub | BinaryOp::ElemSub => "'-'",
        BinaryOp::Mul | BinaryOp::ElemMul => "'*'",
        BinaryOp::Div | BinaryOp::ElemDiv => "'/'",
        BinaryOp::Pow | BinaryOp::ElemPow => "'^'",
        BinaryOp::Eq => "'=='",
        BinaryOp::Ne => "'<>'",
        BinaryOp::Lt => "'<'",
        BinaryOp::Le => "'<='",
        BinaryOp::Gt => "'>'",
        BinaryOp::Ge => "'>='",
        BinaryOp::And => "'and'",
        BinaryOp::Or => "'or'",
    })
}

fn field_names(v: &Val) -> Option<Vec<Arc<str>>> {
    match v {
        Val::R(fields) => Some(fields.iter().map(|(n, _)| n.clone()).collect()),
        Val::A(items) => items.first().and_then(field_names),
        Val::S(_) => None,
    }
}

impl<'a> Flattener<'a> {
    /// Remember which record class a record value with these field names comes from.
    pub fn note_record_class(&self, class: ClassId, v: &Val) {
        if let Some(names) = field_names(v) {
            self.record_shapes.borrow_mut().insert(names, class);
        }
    }

    pub(crate) fn record_class_of(&self, v: &Val) -> Option<ClassId> {
        let names = field_names(v)?;
        self.record_shapes.borrow().get(&names).copied()
    }

    /// The functions implementing operator `op` of record class `class`.
    pub(crate) fn operator_functions(&self, class: ClassId, op: &str) -> Vec<ClassId> {
        let Some(Found::Class(o)) = self.lk.member(class, op) else {
            return Vec::new();
        };
        let entry = self.lib().get(o);
        if matches!(entry.def.prefixes.kind, ClassKind::Function { .. }) {
            return vec![o];
        }
        let Some(comp) = entry.def.specifier.composition() else {
            return Vec::new();
        };
        comp.elements()
            .filter_map(|(_, e)| match e {
                Element::Class { class, .. }
                    if matches!(class.prefixes.kind, ClassKind::Function { .. }) =>
                {
                    self.lib().child(o, class.name.as_str())
                }
                _ => None,
            })
            .collect()
    }

    /// Does function `f` accept these arguments (by count and kind)?
    fn accepts(&self, f: ClassId, args: &[Val]) -> bool {
        let fnode = self.package_node(f);
        let elems = self.elems(&fnode);
        let inputs: Vec<&Rc<Comp>> = elems
            .comps
            .iter()
            .filter(|c| self.comp_causality(&fnode, c) == Some(ast::Causality::Input))
            .collect();
        if args.len() > inputs.len() {
            return false;
        }
        if inputs[args.len()..]
            .iter()
            .any(|c| c.mods.binding.is_none())
        {
            return false;
        }
        inputs.iter().zip(args).all(|(c, a)| {
            let Ok(ty) = self.comp_type(&fnode, c) else {
                return false;
            };
            let dims = c.decl.subscripts.len() + c.type_subs.len() + ty.dims.len();
            let record = matches!(ty.base, Base::Class(rc) if self.is_record_class(rc));
            match a {
                Val::R(_) => record && dims == 0,
                Val::S(_) => !record && dims == 0 && ty.base.is_primitive(),
                Val::A(_) => dims == a.shape().len(),
            }
        })
    }

    /// Call operator `op` of the record class of one of `args`.
    pub fn call_operator(
        &self,
        op: &str,
        args: Vec<Val>,
        env: &Env,
        cx: &mut Cx,
        span: Span,
    ) -> Res<Val> {
        let Some(class) = args.iter().find_map(|a| self.record_class_of(a)) else {
            return err(
                span,
                format!("operator {op} is not defined for these records"),
            );
        };
        self.call_operator_of(class, op, args, env, cx, span)
    }

    pub fn call_operator_of(
        &self,
        class: ClassId,
        op: &str,
        args: Vec<Val>,
        env: &Env,
        cx: &mut Cx,
        span: Span,
    ) -> Res<Val> {
        let candidates = self.operator_functions(class, op);
        if let Some(f) = candidates.iter().find(|f| self.accepts(**f, &args)) {
            return self.apply_values(*f, args, env, cx, span);
        }
        // Convert scalar arguments to records with the constructor, then retry.
        if op != "'constructor'" && args.iter().any(|a| matches!(a, Val::S(_))) {
            let mut converted = Vec::new();
            for a in args {
                converted.push(match a {
                    Val::S(_) => {
                        self.call_operator_of(class, "'constructor'", vec![a], env, cx, span)?
                    }
                    other => other,
                });
            }
            if let Some(f) = candidates.iter().find(|f| self.accepts(**f, &converted)) {
                return self.apply_values(*f, converted, env, cx, span);
            }
        }
        err(
            span,
            format!(
                "no operator {op} of `{}` accepts these arguments",
                self.lk.name_of(class)
            ),
        )
    }
}
