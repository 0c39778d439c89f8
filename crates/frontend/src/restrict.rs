//! Restrictions of specialized classes (spec 4.6/4.7) and of inheritance between them
//! (spec 7.1.3), checked on the classes that are actually instantiated.

use crate::ctx::Flattener;
use crate::loader::ClassId;
use moss_syntax::ast::{ClassKind, Element, Section, Visibility};
use moss_syntax::{Diagnostic, Span};

fn kind_name(k: ClassKind) -> &'static str {
    match k {
        ClassKind::Class => "class",
        ClassKind::Model => "model",
        ClassKind::Record => "record",
        ClassKind::OperatorRecord => "operator record",
        ClassKind::Block => "block",
        ClassKind::Connector => "connector",
        ClassKind::ExpandableConnector => "expandable connector",
        ClassKind::Type => "type",
        ClassKind::Package => "package",
        ClassKind::Function { operator: true, .. } => "operator function",
        ClassKind::Function { .. } => "function",
        ClassKind::Operator => "operator",
    }
}

/// May a class of kind `derived` extend one of kind `base`? (table of spec 7.1.3)
pub fn extends_allowed(derived: ClassKind, base: ClassKind) -> bool {
    use ClassKind::*;
    if base == Class {
        return true;
    }
    match derived {
        Package => base == Package,
        Operator => base == Operator,
        Function {
            operator: false, ..
        } => matches!(
            base,
            Function {
                operator: false,
                ..
            }
        ),
        Function { operator: true, .. } => matches!(base, Function { .. }),
        Type => base == Type,
        Record => base == Record,
        OperatorRecord => base == OperatorRecord,
        ExpandableConnector => base == ExpandableConnector,
        Connector => matches!(base, Type | Record | OperatorRecord | Connector),
        Block => matches!(base, Record | Block),
        Model => matches!(base, Record | Block | Model),
        // The table only allows `class`, but tools (and the compliance suite) accept a
        // plain class extending any non-package class.
        Class => !matches!(base, Package | Function { .. } | Operator),
    }
}

impl<'a> Flattener<'a> {
    pub fn restriction_error(&self, span: Span, msg: String, help: &str) {
        self.errors
            .borrow_mut()
            .push(Diagnostic::error(span, msg).with_help(help.to_string()));
    }

    /// Enumeration literals must be distinct and not named like the type's attributes.
    pub fn check_enumeration(&self, id: ClassId, literals: &moss_syntax::ast::EnumLiterals) {
        let moss_syntax::ast::EnumLiterals::List(list) = literals else {
            return;
        };
        if !self.checked.borrow_mut().insert(id) {
            return;
        }
        for (i, l) in list.iter().enumerate() {
            let name = l.name.as_str();
            if list[..i].iter().any(|p| p.name.as_str() == name) {
                self.restriction_error(
                    l.name.span,
                    format!("enumeration literal `{name}` is defined twice"),
                    "give each literal a different name",
                );
                return;
            }
            if matches!(name, "quantity" | "min" | "max" | "start" | "fixed") {
                self.restriction_error(
                    l.name.span,
                    format!(
                        "`{name}` is an attribute of enumeration types and cannot be a literal"
                    ),
                    "rename the literal",
                );
                return;
            }
        }
    }

    /// Check the sections and element prefixes allowed in class `id` given its kind.
    pub fn check_class_restrictions(&self, id: ClassId) {
        if !self.checked.borrow_mut().insert(id) {
            return;
        }
        let entry = self.lib().get(id);
        let kind = entry.def.prefixes.kind;
        let Some(comp) = entry.def.specifier.composition() else {
            return;
        };
        let name = &entry.full_name;
        if self.lk.bases(id).iter().any(|(b, _)| *b == id) {
            self.restriction_error(
                entry.def.name.span,
                format!("class `{name}` extends itself"),
                "remove the cyclic extends clause",
            );
            return;
        }
        let record_like = matches!(kind, ClassKind::Record | ClassKind::OperatorRecord);
        let connector = matches!(kind, ClassKind::Connector | ClassKind::ExpandableConnector);
        if record_like || connector {
            for s in &comp.sections {
                let (bad, span) = match s {
                    Section::Equations { span, .. } => ("equations", *span),
                    Section::Algorithm { span, .. } => ("algorithms", *span),
                    Section::Elements {
                        visibility: Visibility::Protected,
                        span,
                        ..
                    } => ("protected elements", *span),
                    _ => continue,
                };
                self.restriction_error(
                    span,
                    format!("{} `{name}` cannot have {bad}", kind_name(kind)),
                    "only public component declarations are allowed in records and connectors",
                );
                return;
            }
        }
        for (_, e) in comp.elements() {
            let reserved = |n: &str| matches!(n, "Real" | "Integer" | "Boolean" | "String");
            let declared: Vec<(&str, Span)> = match e {
                Element::Component { clause, .. } => clause
                    .components
                    .iter()
                    .map(|d| (d.name.as_str(), d.name.span))
                    .collect(),
                Element::Class { class, .. } => vec![(class.name.as_str(), class.name.span)],
                _ => Vec::new(),
            };
            if let Some((n, span)) = declared.into_iter().find(|(n, _)| reserved(n)) {
                self.restriction_error(
                    span,
                    format!("`{n}` is the name of a predefined type and cannot be declared"),
                    "choose another name",
                );
                return;
            }
            match e {
                Element::Component {
                    prefixes,
                    clause,
                    span,
                    ..
                } => {
                    let p = clause.prefixes;
                    let bad = if record_like && (p.causality.is_some() || p.connector.is_some()) {
                        Some("input/output/flow/stream")
                    } else if (record_like || connector) && (prefixes.inner || prefixes.outer) {
                        Some("inner/outer")
                    } else if kind == ClassKind::Package
                        && p.variability != Some(moss_syntax::ast::Variability::Constant)
                    {
                        Some("non-constant")
                    } else {
                        None
                    };
                    if let Some(b) = bad {
                        self.restriction_error(
                            *span,
                            format!("{} `{name}` cannot have {b} components", kind_name(kind)),
                            "remove the prefix or change the kind of class",
                        );
                        return;
                    }
                }
                Element::Extends(ext) => {
                    let bases = self.lk.bases(id);
                    for (b, _) in bases.iter() {
                        let base_kind = self.lk.kind(*b);
                        if !extends_allowed(kind, base_kind) {
                            self.restriction_error(
                                ext.span,
                                format!(
                                    "a {} cannot extend the {} `{}`",
                                    kind_name(kind),
                                    kind_name(base_kind),
                                    self.lk.name_of(*b)
                                ),
                                "see the table of allowed base classes (specification 7.1.3)",
                            );
                            return;
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

/// Attributes each predefined type has (spec 4.8).
pub fn attribute_allowed(base: &crate::inst::Base, attr: &str) -> bool {
    use crate::inst::Base;
    match base {
        Base::Real => matches!(
            attr,
            "quantity"
                | "unit"
                | "displayUnit"
                | "min"
                | "max"
                | "start"
                | "fixed"
                | "nominal"
                | "unbounded"
                | "stateSelect"
        ),
        Base::Integer | Base::Enum(..) => {
            matches!(attr, "quantity" | "min" | "max" | "start" | "fixed")
        }
        Base::Boolean | Base::String => matches!(attr, "quantity" | "start" | "fixed"),
        Base::Class(_) => true,
    }
}
