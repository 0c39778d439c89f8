//! Restrictions of specialized classes (spec 4.6/4.7) and of inheritance between them
//! (spec 7.1.3), checked on the classes that are actually instantiated.

use crate::ctx::Flattener;
use crate::loader::ClassId;
use moss_syntax::ast::{
    Argument, Causality, ClassDef, ClassKind, ClassModification, ClassSpecifier, Composition,
    ConnectorPrefix, Element, Section, Visibility,
};
use moss_syntax::{Diagnostic, Span};

/// The keyword of a class kind, for messages.
pub fn kind_name(k: ClassKind) -> &'static str {
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

    /// A base class of `id` (named in one of its extends clauses) from which `id` is
    /// inherited again, directly or further down: a cycle of extends clauses (spec 7.1), which
    /// the collection of elements would otherwise cut silently.
    fn inherits_from_itself(&self, id: ClassId) -> Option<ClassId> {
        let direct = self.lk.bases(id);
        for &(first, _) in direct.iter() {
            let mut seen = std::collections::HashSet::new();
            let mut stack = vec![first];
            while let Some(c) = stack.pop() {
                if c == id {
                    return Some(first);
                }
                if seen.insert(c) {
                    stack.extend(self.lk.bases(c).iter().map(|(b, _)| *b));
                }
            }
        }
        None
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
        if is_predefined_type_name(entry.def.name.as_str()) {
            self.restriction_error(
                entry.def.name.span,
                format!(
                    "`{}` is the name of a predefined type and cannot be used for a class",
                    entry.def.name.as_str()
                ),
                "choose another name",
            );
            return;
        }
        if self.lk.bases(id).iter().any(|(b, _)| *b == id) {
            self.restriction_error(
                entry.def.name.span,
                format!("class `{name}` extends itself"),
                "remove the cyclic extends clause",
            );
            return;
        }
        if let Some(via) = self.inherits_from_itself(id) {
            let via = self.lib().get(via).full_name.clone();
            self.restriction_error(
                entry.def.name.span,
                format!("class `{name}` extends itself through `{via}`"),
                "the extends clauses form a cycle; remove one of them",
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
        if self.check_combined_base(id, comp) || self.check_duplicate_modifications(comp) {
            return;
        }
        if self.check_element_names(id, comp)
            || self.check_imports(comp)
            || (kind == ClassKind::OperatorRecord && self.check_operators(comp))
        {
            return;
        }
        for (i, (vis, e)) in comp.elements().enumerate() {
            let reserved = is_predefined_type_name;
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
                    let bad = if !connector && p.connector == Some(ConnectorPrefix::Stream) {
                        Some("stream")
                    } else if record_like && (p.causality.is_some() || p.connector.is_some()) {
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
                Element::Class {
                    prefixes, class, ..
                } if (prefixes.redeclare
                    || matches!(class.specifier, ClassSpecifier::Extends { .. }))
                    && self.check_class_redeclaration(id, class, vis) =>
                {
                    return;
                }
                Element::Extends(ext) => {
                    let bases = self.lk.bases(id);
                    let base = bases.iter().find(|(_, idx)| *idx == i);
                    if self.check_extends_name(ext, base)
                        || self.check_operator_record_base(ext, base)
                    {
                        return;
                    }
                    for (b, _) in bases.iter().filter(|(_, idx)| *idx == i) {
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

/// `Real`, `Integer`, `Boolean`, `String`: reserved for the predefined types.
fn is_predefined_type_name(name: &str) -> bool {
    matches!(name, "Real" | "Integer" | "Boolean" | "String")
}

/// What makes a base class impossible to combine with other elements (spec 4.5.2).
#[derive(Clone, Copy, Debug, PartialEq)]
enum SpecialBase {
    Array,
    Prefixed,
    Simple,
}

impl SpecialBase {
    fn describe(self) -> &'static str {
        match self {
            SpecialBase::Array => "an array class",
            SpecialBase::Prefixed => "a class with an input/output prefix",
            SpecialBase::Simple => "a simple type",
        }
    }
}

/// Every element modification of `cm` that gives a value, by its full dotted path
/// (`a(b = 1)` and `a.b = 1` both give `a.b`).
fn modified_values(cm: &ClassModification, prefix: &str, out: &mut Vec<(String, Span)>) {
    for a in &cm.args {
        let Argument::Modification(em) = a else {
            continue;
        };
        let path = format!("{prefix}{}", em.name);
        let Some(m) = &em.modification else { continue };
        if m.binding.is_some() {
            out.push((path.clone(), em.span));
        }
        if let Some(c) = &m.class_modification {
            modified_values(c, &format!("{path}."), out);
        }
    }
}

/// The first element given a value twice in one modification: its path and both spans.
fn duplicate_modification(cm: &ClassModification) -> Option<(String, Span, Span)> {
    let mut values = Vec::new();
    modified_values(cm, "", &mut values);
    for (i, (path, span)) in values.iter().enumerate() {
        if let Some((_, first)) = values[..i].iter().find(|(p, _)| p == path) {
            return Some((path.clone(), *first, *span));
        }
    }
    None
}

/// The class modifications written in the elements of a composition (declarations,
/// extends clauses, short class definitions, constraining clauses).
fn element_modifications(comp: &Composition) -> Vec<&ClassModification> {
    let mut out = Vec::new();
    for (_, e) in comp.elements() {
        let constraining = match e {
            Element::Component {
                clause,
                constraining,
                ..
            } => {
                for d in &clause.components {
                    if let Some(cm) = d
                        .modification
                        .as_ref()
                        .and_then(|m| m.class_modification.as_ref())
                    {
                        out.push(cm);
                    }
                }
                constraining
            }
            Element::Extends(ext) => {
                out.extend(ext.modification.as_ref());
                continue;
            }
            Element::Class {
                class,
                constraining,
                ..
            } => {
                if let ClassSpecifier::Short {
                    modification: Some(cm),
                    ..
                } = &class.specifier
                {
                    out.push(cm);
                }
                constraining
            }
            Element::Import(_) => continue,
        };
        if let Some(cm) = constraining.as_ref().and_then(|c| c.modification.as_ref()) {
            out.push(cm);
        }
    }
    out
}

/// Sections of a composition that hold equations or statements.
fn nonempty_behaviour(comp: &Composition) -> Option<Span> {
    comp.sections.iter().find_map(|s| match s {
        Section::Equations {
            equations, span, ..
        } if !equations.is_empty() => Some(*span),
        Section::Algorithm {
            statements, span, ..
        } if !statements.is_empty() => Some(*span),
        _ => None,
    })
}

impl<'a> Flattener<'a> {
    /// Is class `id` an array class, a class with a base prefix or a simple type, or does
    /// it extend one (transitively)?
    fn special_base(&self, id: ClassId, depth: u32) -> Option<SpecialBase> {
        if depth > 40 {
            return None;
        }
        let entry = self.lib().get(id);
        match &entry.def.specifier {
            ClassSpecifier::Short {
                base_prefix,
                base,
                subscripts,
                ..
            } => {
                if !subscripts.is_empty() {
                    return Some(SpecialBase::Array);
                }
                if base_prefix.is_some() {
                    return Some(SpecialBase::Prefixed);
                }
                match self.lk.resolve_class_name(entry.parent, base, false) {
                    Some(b) => self.special_base(b, depth + 1),
                    None if is_predefined_type_name(&base.to_string()) => Some(SpecialBase::Simple),
                    None => None,
                }
            }
            ClassSpecifier::Enumeration { .. } => Some(SpecialBase::Simple),
            ClassSpecifier::Der { .. } => None,
            ClassSpecifier::Long { composition, .. }
            | ClassSpecifier::Extends { composition, .. } => {
                if self.extends_predefined(id, composition) {
                    return Some(SpecialBase::Simple);
                }
                let bases = self.lk.bases(id);
                bases
                    .iter()
                    .filter(|(b, _)| *b != id)
                    .find_map(|(b, _)| self.special_base(*b, depth + 1))
            }
        }
    }

    /// Does the class have an `extends Real` (or another predefined type) clause?
    fn extends_predefined(&self, id: ClassId, comp: &Composition) -> bool {
        let bases = self.lk.bases(id);
        comp.elements().enumerate().any(|(i, (_, e))| {
            matches!(e, Element::Extends(ext)
                if is_predefined_type_name(&ext.base.to_string())
                    && !bases.iter().any(|(_, idx)| *idx == i))
        })
    }

    /// An empty class: no components, equations or algorithms, and only empty base classes
    /// (spec 4.5.2); such classes (icons) may be combined with anything.
    fn is_empty_class(&self, id: ClassId, depth: u32) -> bool {
        if depth > 40 {
            return false;
        }
        let entry = self.lib().get(id);
        match &entry.def.specifier {
            ClassSpecifier::Short {
                base_prefix,
                base,
                subscripts,
                ..
            } => {
                base_prefix.is_none()
                    && subscripts.is_empty()
                    && self
                        .lk
                        .resolve_class_name(entry.parent, base, false)
                        .is_some_and(|b| self.is_empty_class(b, depth + 1))
            }
            ClassSpecifier::Enumeration { .. } | ClassSpecifier::Der { .. } => false,
            ClassSpecifier::Long { composition, .. }
            | ClassSpecifier::Extends { composition, .. } => {
                let has_components = composition
                    .elements()
                    .any(|(_, e)| matches!(e, Element::Component { .. }));
                !has_components
                    && nonempty_behaviour(composition).is_none()
                    && !self.extends_predefined(id, composition)
                    && self
                        .lk
                        .bases(id)
                        .iter()
                        .all(|(b, _)| *b != id && self.is_empty_class(*b, depth + 1))
            }
        }
    }

    /// A class extending an array class, a class with a base prefix or a simple type can
    /// add nothing but nested classes (spec 4.5.2). Returns whether an error was reported.
    fn check_combined_base(&self, id: ClassId, comp: &Composition) -> bool {
        let bases = self.lk.bases(id);
        let mut special = None;
        for (i, (_, e)) in comp.elements().enumerate() {
            let Element::Extends(ext) = e else { continue };
            let kind = match bases.iter().find(|(_, idx)| *idx == i) {
                Some((b, _)) if *b != id => self.special_base(*b, 0),
                Some(_) => None,
                None if is_predefined_type_name(&ext.base.to_string()) => Some(SpecialBase::Simple),
                None => None,
            };
            if let Some(k) = kind {
                special = Some((i, ext, k));
                break;
            }
        }
        let Some((special_index, ext, kind)) = special else {
            return false;
        };
        let offending = self.element_beside_special_base(id, comp, special_index);
        let Some((span, what)) = offending else {
            return false;
        };
        let entry = self.lib().get(id);
        self.errors.borrow_mut().push(
            Diagnostic::error(
                span,
                format!(
                    "`{}` extends `{}`, which is {}, so it cannot also have {what}",
                    entry.full_name,
                    ext.base,
                    kind.describe()
                ),
            )
            .with_secondary(ext.span, "extended here")
            .with_help(
                "a class extending an array class, a class with an input/output prefix or a simple type may only add nested classes (specification 4.5.2); declare a component of that type instead",
            ),
        );
        true
    }

    /// The first element that may not accompany the special base class of `extends` clause
    /// number `special_index`.
    fn element_beside_special_base(
        &self,
        id: ClassId,
        comp: &Composition,
        special_index: usize,
    ) -> Option<(Span, &'static str)> {
        let bases = self.lk.bases(id);
        for (i, (vis, e)) in comp.elements().enumerate() {
            match e {
                Element::Component { span, .. } => return Some((*span, "components")),
                Element::Extends(ext) if i != special_index => {
                    let empty = bases
                        .iter()
                        .find(|(_, idx)| *idx == i)
                        .is_some_and(|(b, _)| *b != id && self.is_empty_class(*b, 0));
                    if !empty {
                        return Some((ext.span, "other non-empty base classes"));
                    }
                }
                Element::Class { span, .. } if vis == Visibility::Protected => {
                    return Some((*span, "protected elements"))
                }
                _ => {}
            }
        }
        nonempty_behaviour(comp).map(|s| (s, "equations or algorithms"))
    }

    /// `redeclare model M ...` and `model extends M` in class `id`: the inherited `M` must
    /// be replaceable and not final (spec 7.3, 7.3.1). Returns whether an error was
    /// reported.
    fn check_class_redeclaration(
        &self,
        id: ClassId,
        class: &moss_syntax::ast::ClassDef,
        vis: Visibility,
    ) -> bool {
        let name = class.name.as_str();
        let kind = kind_name(class.prefixes.kind);
        let what = match class.specifier {
            ClassSpecifier::Extends { .. } => format!("`{kind} extends {name}`"),
            _ => format!("`redeclare {kind} {name}`"),
        };
        let problem = match self.lk.inherited_class_prefixes(id, name) {
            Some((_, base_vis)) if base_vis != vis => Some((
                format!(
                    "{what}: the inherited `{name}` is {}, and a redeclaration cannot change that",
                    if base_vis == Visibility::Protected {
                        "protected"
                    } else {
                        "public"
                    }
                ),
                "declare the redeclaration under the same public/protected heading as the original",
            )),
            Some((p, _)) if p.final_ => Some((
                format!("{what}: the inherited `{name}` is final and cannot be redeclared"),
                "remove the redeclaration, or the `final` prefix in the base class",
            )),
            Some((p, _)) if !p.replaceable => Some((
                format!(
                    "{what}: the inherited `{name}` is not replaceable, so it cannot be redeclared"
                ),
                "declare it `replaceable` in the base class",
            )),
            _ => None,
        };
        let Some((msg, help)) = problem else {
            return false;
        };
        self.restriction_error(class.name.span, msg, help);
        true
    }

    /// The class named by an `extends` clause must exist (looked up without the elements
    /// the class inherits, spec 7.1) and must not be replaceable (spec 7.1.4). Returns
    /// whether an error was reported.
    fn check_extends_name(
        &self,
        ext: &moss_syntax::ast::ExtendsClause,
        base: Option<&(ClassId, usize)>,
    ) -> bool {
        let Some((b, _)) = base else {
            let name = ext.base.to_string();
            if is_predefined_type_name(&name) || name == "ExternalObject" {
                return false;
            }
            self.restriction_error(
                ext.base.span,
                format!("base class `{}` not found", ext.base),
                "check the name; the name of a base class is looked up without the elements inherited by the class itself",
            );
            return true;
        };
        let entry = self.lib().get(*b);
        // Only a class named directly is checked: through a package (`P2.A`) the class may
        // have been redeclared non-replaceable.
        let replaceable = ext.base.parts.len() == 1
            && entry.parent.is_some_and(|p| {
            self.lib()
                .get(p)
                .def
                .specifier
                .composition()
                .is_some_and(|c| {
                    c.elements().any(|(_, e)| {
                        matches!(e, Element::Class { prefixes, class, .. }
                            if prefixes.replaceable && class.name.as_str() == entry.def.name.as_str())
                    })
                })
        });
        if replaceable {
            self.restriction_error(
                ext.base.span,
                format!(
                    "`{}` is replaceable and cannot be used as a base class",
                    ext.base
                ),
                "extend a non-replaceable class (for instance the constraining class)",
            );
            return true;
        }
        false
    }

    /// An operator record cannot be extended by a long class definition, nor can a class
    /// that encloses one (spec 4.7, 14.1). Returns whether an error was reported.
    fn check_operator_record_base(
        &self,
        ext: &moss_syntax::ast::ExtendsClause,
        base: Option<&(ClassId, usize)>,
    ) -> bool {
        let Some((b, _)) = base else { return false };
        let b = self.lk.follow_short_class(*b);
        let entry = self.lib().get(b);
        let enclosed = if entry.def.prefixes.kind == ClassKind::OperatorRecord {
            None
        } else {
            let Some(comp) = entry.def.specifier.composition() else {
                return false;
            };
            let found = comp.elements().find_map(|(_, e)| match e {
                Element::Class { class, .. }
                    if class.prefixes.kind == ClassKind::OperatorRecord =>
                {
                    Some(class.name.as_str().to_string())
                }
                _ => None,
            });
            match found {
                Some(n) => Some(n),
                None => return false,
            }
        };
        let msg = match enclosed {
            None => format!(
                "`{}` is an operator record and cannot be extended",
                ext.base
            ),
            Some(n) => format!(
                "`{}` encloses the operator record `{n}` and cannot be extended",
                ext.base
            ),
        };
        self.restriction_error(
            ext.span,
            msg,
            "use a short class definition (`operator record R = Base(...)`) or a component instead",
        );
        true
    }

    /// The operators of an operator record contain only functions (spec 4.7).
    fn check_operators(&self, comp: &Composition) -> bool {
        self.check_operator_containers(comp) || self.check_operator_signatures(comp)
    }

    /// The functions of the overloaded operators: one output each, a String one for
    /// `'String'`, and no two functions of one operator with the same inputs (spec 14.1–14.3:
    /// a call matching both would be ambiguous).
    fn check_operator_signatures(&self, comp: &Composition) -> bool {
        let defs = operator_function_defs(comp);
        for (k, (op, f)) in defs.iter().enumerate() {
            let sig = signature(f);
            if sig.outputs.len() != 1 {
                self.restriction_error(
                    f.name.span,
                    format!(
                        "function `{}` of operator {op} has {} outputs, but an operator function returns exactly one",
                        f.name.as_str(),
                        sig.outputs.len()
                    ),
                    "declare exactly one output (specification 14.1)",
                );
                return true;
            }
            let (out_ty, out_span) = &sig.outputs[0];
            if op.trim_matches('\'') == "String" && out_ty != "String" {
                self.restriction_error(
                    *out_span,
                    format!(
                        "the output of function `{}` of operator 'String' is of type `{out_ty}`, but it must be a String",
                        f.name.as_str()
                    ),
                    "declare the output as `output String s` (specification 14.3)",
                );
                return true;
            }
            let same = defs[..k]
                .iter()
                .find(|(o, g)| o == op && signature(g).inputs == sig.inputs);
            if let Some((_, g)) = same {
                self.restriction_error(
                    f.name.span,
                    format!(
                        "functions `{}` and `{}` of operator {op} take the same inputs, so a call of the operator is ambiguous",
                        g.name.as_str(),
                        f.name.as_str()
                    ),
                    "remove one of them or give them different input types (specification 14.1)",
                );
                return true;
            }
        }
        false
    }

    fn check_operator_containers(&self, comp: &Composition) -> bool {
        for (_, e) in comp.elements() {
            let Element::Class { class, .. } = e else {
                continue;
            };
            if class.prefixes.kind != ClassKind::Operator {
                continue;
            }
            let Some(ops) = class.specifier.composition() else {
                continue;
            };
            for (_, oe) in ops.elements() {
                let ok = match oe {
                    Element::Class { class: f, .. } => {
                        matches!(f.prefixes.kind, ClassKind::Function { .. })
                    }
                    Element::Import(_) => true,
                    _ => false,
                };
                if !ok {
                    self.restriction_error(
                        oe.span(),
                        format!(
                            "operator `{}` may only contain functions",
                            class.name.as_str()
                        ),
                        "move this element out of the operator",
                    );
                    return true;
                }
            }
        }
        false
    }

    /// A class and a component of one class cannot share a name, and a local class
    /// cannot differ from an inherited class of the same name unless it redeclares it
    /// (spec 5.6.1, 7.1). Returns whether an error was reported.
    fn check_element_names(&self, id: ClassId, comp: &Composition) -> bool {
        let mut components: Vec<&moss_syntax::ast::Ident> = Vec::new();
        for (_, e) in comp.elements() {
            if let Element::Component { clause, .. } = e {
                components.extend(clause.components.iter().map(|d| &d.name));
            }
        }
        for (_, e) in comp.elements() {
            let Element::Class {
                prefixes, class, ..
            } = e
            else {
                continue;
            };
            let name = class.name.as_str();
            if let Some(c) = components.iter().find(|c| c.as_str() == name) {
                self.errors.borrow_mut().push(
                    Diagnostic::error(
                        class.name.span,
                        format!("`{name}` is declared both as a class and as a component"),
                    )
                    .with_secondary(c.span, "component declared here")
                    .with_help("rename one of them"),
                );
                return true;
            }
            let redeclares =
                prefixes.redeclare || matches!(class.specifier, ClassSpecifier::Extends { .. });
            if redeclares {
                continue;
            }
            for (b, _) in self.lk.bases(id).iter().filter(|(b, _)| *b != id) {
                let Some(crate::inst::Found::Class(inherited)) = self.lk.member(*b, name) else {
                    continue;
                };
                let other = self.lib().get(inherited);
                let same = moss_syntax::eq_ignoring_spans(
                    &without_description(&other.def),
                    &without_description(class),
                );
                if !same {
                    self.errors.borrow_mut().push(
                        Diagnostic::error(
                            class.name.span,
                            format!(
                                "class `{name}` is also inherited from `{}` with a different definition",
                                self.lk.name_of(*b)
                            ),
                        )
                        .with_secondary(other.def.name.span, "inherited definition")
                        .with_help("rename the local class, or redeclare the inherited one (it must be replaceable)"),
                    );
                    return true;
                }
            }
        }
        false
    }

    /// Import clauses name packages or elements of packages, and only public ones
    /// (spec 13.2.1). Returns whether an error was reported.
    fn check_imports(&self, comp: &Composition) -> bool {
        use moss_syntax::ast::ImportKind;
        let mut aliases: Vec<(&str, Span)> = Vec::new();
        for (_, e) in comp.elements() {
            let Element::Import(imp) = e else { continue };
            let (package, element, alias) = match &imp.kind {
                ImportKind::Qualified(n) => {
                    let Some(last) = n.last() else { continue };
                    (&n.parts[..n.parts.len() - 1], Some(last), last.as_str())
                }
                ImportKind::Renaming { alias, name } => {
                    let Some(last) = name.last() else { continue };
                    (
                        &name.parts[..name.parts.len() - 1],
                        Some(last),
                        alias.as_str(),
                    )
                }
                ImportKind::Unqualified(n) => (&n.parts[..], None, ""),
                ImportKind::Multiple { prefix, .. } => (&prefix.parts[..], None, ""),
            };
            if !alias.is_empty() {
                if let Some((_, first)) = aliases.iter().find(|(a, _)| *a == alias) {
                    self.errors.borrow_mut().push(
                        Diagnostic::error(imp.span, format!("`{alias}` is imported twice"))
                            .with_secondary(*first, "first imported here")
                            .with_help("give one of the imports another name (`import B = ...;`)"),
                    );
                    return true;
                }
                aliases.push((alias, imp.span));
            }
            let parts: Vec<&str> = package.iter().map(|p| p.as_str()).collect();
            if parts.is_empty() {
                continue;
            }
            let Some(pkg) = self.lib().lookup_qualified(&parts) else {
                continue;
            };
            let pkg_kind = self.lk.kind(self.lk.follow_short_class(pkg));
            let problem = if pkg_kind != ClassKind::Package {
                Some(format!(
                    "`{}` is a {}, but imports can only name packages and their elements",
                    self.lk.name_of(pkg),
                    kind_name(pkg_kind)
                ))
            } else {
                element
                    .filter(|el| self.lk.is_protected_member(pkg, el.as_str()))
                    .map(|el| {
                        format!(
                            "`{}` is protected in `{}` and cannot be imported",
                            el.as_str(),
                            self.lk.name_of(pkg)
                        )
                    })
            };
            if let Some(msg) = problem {
                self.restriction_error(
                    imp.span,
                    msg,
                    "import from a package, or use the class by its full name",
                );
                return true;
            }
        }
        false
    }

    /// An element given two values in one modification (`C(x = 1, x = 2)`, spec 7.2.4).
    /// Returns whether an error was reported.
    fn check_duplicate_modifications(&self, comp: &Composition) -> bool {
        for cm in element_modifications(comp) {
            if let Some((path, first, second)) = duplicate_modification(cm) {
                self.errors.borrow_mut().push(
                    Diagnostic::error(second, format!("`{path}` is modified twice"))
                        .with_secondary(first, "first modified here")
                        .with_help("keep only one modification of each element"),
                );
                return true;
            }
        }
        false
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
        // Clock has no attributes (spec 16.3).
        Base::Clock => false,
        Base::Class(_) => true,
    }
}

/// A class definition without its description string and annotation: an inherited class
/// and a local one of the same name are the same element if they differ only there (the
/// MSL declares `replaceable package Medium` again with another `Dialog` annotation).
fn without_description(def: &moss_syntax::ast::ClassDef) -> moss_syntax::ast::ClassDef {
    let mut d = def.clone();
    match &mut d.specifier {
        ClassSpecifier::Long { description, .. }
        | ClassSpecifier::Extends { description, .. }
        | ClassSpecifier::Short { description, .. }
        | ClassSpecifier::Enumeration { description, .. }
        | ClassSpecifier::Der { description, .. } => {
            *description = moss_syntax::ast::Description::default()
        }
    }
    d
}

/// The functions of the overloaded operators of an operator record, with the operator's
/// name: `operator function 'String'` itself, or each function inside `operator
/// 'constructor'`.
fn operator_function_defs(comp: &Composition) -> Vec<(&str, &ClassDef)> {
    let mut out = Vec::new();
    for (_, e) in comp.elements() {
        let Element::Class { class, .. } = e else {
            continue;
        };
        match class.prefixes.kind {
            ClassKind::Function { operator: true, .. } => {
                out.push((class.name.as_str(), &**class));
            }
            ClassKind::Operator => {
                let Some(ops) = class.specifier.composition() else {
                    continue;
                };
                for (_, oe) in ops.elements() {
                    if let Element::Class { class: f, .. } = oe {
                        if matches!(f.prefixes.kind, ClassKind::Function { .. }) {
                            out.push((class.name.as_str(), &**f));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// A function's inputs (type name as written, number of dimensions) and outputs (type
/// name, where declared), from its own declarations.
struct Signature {
    inputs: Vec<(String, usize)>,
    outputs: Vec<(String, Span)>,
}

fn signature(f: &ClassDef) -> Signature {
    let mut sig = Signature {
        inputs: Vec::new(),
        outputs: Vec::new(),
    };
    let Some(comp) = f.specifier.composition() else {
        return sig;
    };
    for (_, e) in comp.elements() {
        let Element::Component { clause, .. } = e else {
            continue;
        };
        for d in &clause.components {
            let ty = clause.type_name.to_string();
            match clause.prefixes.causality {
                Some(Causality::Input) => sig
                    .inputs
                    .push((ty, clause.subscripts.len() + d.subscripts.len())),
                Some(Causality::Output) => sig.outputs.push((ty, d.name.span)),
                None => {}
            }
        }
    }
    sig
}
