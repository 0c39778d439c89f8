//! Stored definitions, class definitions and compositions.

use super::*;

impl<'a> Parser<'a> {
    pub(super) fn stored_definition(&mut self) -> StoredDefinition {
        let mut within = None;
        if self.eat(Tok::Within) {
            if self.at(Tok::Ident) {
                match self.name() {
                    Ok(n) => within = Some(n),
                    Err(_) => self.synchronize(),
                }
            }
            if self.expect_semi("`within` clause").is_err() {
                self.synchronize();
            }
        }
        let mut classes = Vec::new();
        while !self.at(Tok::Eof) && !self.fatal {
            let start = self.pos;
            self.ops_left = MAX_BINARY_OPS;
            match self.stored_class() {
                Ok(c) => {
                    classes.push(c);
                    if self.expect_semi("class definition").is_err() {
                        self.synchronize();
                    }
                }
                Err(Fail) => self.synchronize_top_level(),
            }
            if self.pos == start {
                self.bump();
            }
        }
        StoredDefinition {
            within,
            classes,
            span: Span::new(self.file, 0, self.text.len() as u32),
        }
    }

    pub(super) fn stored_class(&mut self) -> PResult<StoredClass> {
        let final_ = self.eat(Tok::Final);
        if !self.at_class_prefix() {
            let msg = if self.at(Tok::End) {
                "class definition (this `end` has no matching class)"
            } else {
                "class definition (`model`, `package`, `function`, ...)"
            };
            return Err(self.error_expected(msg));
        }
        let class = self.class_definition()?;
        Ok(StoredClass { final_, class })
    }

    /// Does the current token start a class definition?
    pub(super) fn at_class_prefix(&self) -> bool {
        matches!(
            self.peek(),
            Tok::Encapsulated
                | Tok::Partial
                | Tok::Class
                | Tok::Model
                | Tok::Record
                | Tok::Block
                | Tok::Expandable
                | Tok::Connector
                | Tok::Type
                | Tok::Package
                | Tok::Function
                | Tok::Operator
        ) || (matches!(self.peek(), Tok::Pure | Tok::Impure)
            && matches!(self.peek_at(1), Tok::Function | Tok::Operator))
    }

    /// `[encapsulated] [partial] kind`
    pub(super) fn class_prefixes(&mut self) -> PResult<ClassPrefixes> {
        let encapsulated = self.eat(Tok::Encapsulated);
        let partial = self.eat(Tok::Partial);
        let kind = match self.peek() {
            Tok::Class => ClassKind::Class,
            Tok::Model => ClassKind::Model,
            Tok::Record => ClassKind::Record,
            Tok::Block => ClassKind::Block,
            Tok::Connector => ClassKind::Connector,
            Tok::Type => ClassKind::Type,
            Tok::Package => ClassKind::Package,
            Tok::Expandable => {
                self.bump();
                if !self.at(Tok::Connector) {
                    return Err(self.error_expected("`connector` after `expandable`"));
                }
                ClassKind::ExpandableConnector
            }
            Tok::Operator => match self.peek_at(1) {
                Tok::Record => {
                    self.bump();
                    ClassKind::OperatorRecord
                }
                Tok::Function => {
                    self.bump();
                    ClassKind::Function {
                        purity: Purity::Unspecified,
                        operator: true,
                    }
                }
                _ => ClassKind::Operator,
            },
            Tok::Pure | Tok::Impure | Tok::Function => {
                let purity = match self.peek() {
                    Tok::Pure => Purity::Pure,
                    Tok::Impure => Purity::Impure,
                    _ => Purity::Unspecified,
                };
                if purity != Purity::Unspecified {
                    self.bump();
                }
                let operator = self.eat(Tok::Operator);
                if !self.at(Tok::Function) {
                    return Err(self.error_expected("`function`"));
                }
                ClassKind::Function { purity, operator }
            }
            _ => {
                return Err(self.error_expected(
                    "class kind (`class`, `model`, `record`, `block`, `connector`, `type`, \
                     `package`, `function` or `operator`)",
                ))
            }
        };
        self.bump();
        Ok(ClassPrefixes {
            encapsulated,
            partial,
            kind,
        })
    }

    pub(super) fn class_definition(&mut self) -> PResult<ClassDef> {
        self.enter()?;
        let r = self.class_definition_inner();
        self.leave();
        r
    }

    pub(super) fn class_definition_inner(&mut self) -> PResult<ClassDef> {
        let start = self.pos;
        let prefixes = self.class_prefixes()?;
        if self.eat(Tok::Extends) {
            let base = self.ident()?;
            let modification = if self.at(Tok::LParen) {
                Some(self.class_modification()?)
            } else {
                None
            };
            let description = self.description_strings_only()?;
            let composition = self.composition()?;
            let end_name = self.end_name(&base)?;
            return Ok(ClassDef {
                name: base.clone(),
                prefixes,
                specifier: ClassSpecifier::Extends {
                    base,
                    modification,
                    description,
                    composition,
                    end_name,
                },
                span: self.span_from(start),
            });
        }
        let name = self.ident()?;
        let specifier = if self.eat(Tok::Eq) {
            self.short_class_specifier()?
        } else {
            let description = self.description_strings_only()?;
            let composition = self.composition()?;
            let end_name = self.end_name(&name)?;
            ClassSpecifier::Long {
                description,
                composition,
                end_name,
            }
        };
        Ok(ClassDef {
            name,
            prefixes,
            specifier,
            span: self.span_from(start),
        })
    }

    /// `end IDENT` closing a long class; the name must match.
    pub(super) fn end_name(&mut self, name: &Ident) -> PResult<Ident> {
        if !self.at(Tok::End) {
            return Err(self.error_expected(&format!("`end {}`", name.name)));
        }
        self.bump();
        if !self.at(Tok::Ident) {
            // `end;`: report, and accept it as the end of this class.
            let found = self.found();
            let d = Diagnostic::error(
                self.cur_span(),
                format!("expected the class name after `end`, found {found}"),
            )
            .with_label(format!("expected `{}` here", name.name))
            .with_secondary(name.span, "class opened here")
            .with_help(format!("write `end {};`", name.name));
            self.report(d);
            return Ok(name.clone());
        }
        let end = self.ident()?;
        if end.name != name.name {
            let d = Diagnostic::error(
                end.span,
                format!("class `{}` is closed with `end {}`", name.name, end.name),
            )
            .with_label(format!("expected `end {}`", name.name))
            .with_secondary(name.span, "class opened here")
            .with_help(format!("write `end {};`", name.name));
            self.report(d);
        }
        Ok(end)
    }

    /// After `IDENT =`: enumeration, der-class or short class specifier.
    pub(super) fn short_class_specifier(&mut self) -> PResult<ClassSpecifier> {
        match self.peek() {
            Tok::Enumeration => self.enumeration_specifier(),
            Tok::Der => self.der_class_specifier(),
            _ => {
                let base_prefix = self.causality();
                let base = self.type_specifier()?;
                let subscripts = if self.at(Tok::LBracket) {
                    self.array_subscripts()?
                } else {
                    Vec::new()
                };
                let modification = if self.at(Tok::LParen) {
                    Some(self.class_modification()?)
                } else {
                    None
                };
                let description = self.description()?;
                Ok(ClassSpecifier::Short {
                    base_prefix,
                    base,
                    subscripts,
                    modification,
                    description,
                })
            }
        }
    }

    /// `enumeration ( [literal "d", ...] | : ) description`
    fn enumeration_specifier(&mut self) -> PResult<ClassSpecifier> {
        self.expect(Tok::Enumeration)?;
        self.expect(Tok::LParen)?;
        let literals = if self.eat(Tok::Colon) {
            EnumLiterals::Colon
        } else {
            let mut lits = Vec::new();
            // `enumeration()` is empty; otherwise every `,` must be followed by a literal.
            if self.at(Tok::Ident) {
                loop {
                    let start = self.pos;
                    let name = self.ident()?;
                    let description = self.description()?;
                    lits.push(EnumLiteral {
                        name,
                        description,
                        span: self.span_from(start),
                    });
                    if !self.eat(Tok::Comma) {
                        break;
                    }
                }
            }
            EnumLiterals::List(lits)
        };
        if !self.at(Tok::RParen) {
            return Err(self.error_unclosed(Tok::RParen, "`,` or `)` in enumeration"));
        }
        self.bump();
        let description = self.description()?;
        Ok(ClassSpecifier::Enumeration {
            literals,
            description,
        })
    }

    /// `der ( function , x { , y } ) description`
    fn der_class_specifier(&mut self) -> PResult<ClassSpecifier> {
        self.expect(Tok::Der)?;
        self.expect(Tok::LParen)?;
        let function = self.type_specifier()?;
        self.expect(Tok::Comma)?;
        let mut wrt = vec![self.ident()?];
        while self.eat(Tok::Comma) {
            wrt.push(self.ident()?);
        }
        self.expect(Tok::RParen)?;
        let description = self.description()?;
        Ok(ClassSpecifier::Der {
            function,
            wrt,
            description,
        })
    }

    pub(super) fn causality(&mut self) -> Option<Causality> {
        match self.peek() {
            Tok::Input => {
                self.bump();
                Some(Causality::Input)
            }
            Tok::Output => {
                self.bump();
                Some(Causality::Output)
            }
            _ => None,
        }
    }

    pub(super) fn composition(&mut self) -> PResult<Composition> {
        let mut comp = Composition::default();
        let first = self.element_list();
        if !first.is_empty() {
            let span = first.first().map(Element::span).unwrap_or(Span::DUMMY);
            let span = span.to(first.last().map(Element::span).unwrap_or(span));
            comp.sections.push(Section::Elements {
                visibility: Visibility::Public,
                elements: first,
                span,
            });
        }
        loop {
            if self.fatal {
                return Err(Fail);
            }
            let start = self.pos;
            self.ops_left = MAX_BINARY_OPS;
            match self.peek() {
                Tok::Public | Tok::Protected | Tok::Equation | Tok::Algorithm => {
                    let section = self.section();
                    comp.sections.push(section);
                }
                Tok::Initial if matches!(self.peek_at(1), Tok::Equation | Tok::Algorithm) => {
                    let section = self.section();
                    comp.sections.push(section);
                }
                Tok::External => match self.external_clause() {
                    Ok(ext) => comp.external = Some(ext),
                    Err(Fail) => self.synchronize(),
                },
                Tok::Annotation => match self.annotation().and_then(|a| {
                    self.expect_semi("annotation")?;
                    Ok(a)
                }) {
                    Ok(a) => self.add_class_annotation(&mut comp, a),
                    Err(Fail) => self.synchronize(),
                },
                Tok::End if self.skip_stray_block_end() => {}
                Tok::End | Tok::Eof => return Ok(comp),
                _ => {
                    let section = self.misplaced_elements();
                    comp.sections.push(section);
                }
            }
            if self.pos == start {
                self.bump();
            }
        }
    }

    /// A section starting with `public`, `protected`, `[initial] equation` or
    /// `[initial] algorithm` (the caller checked the keyword).
    fn section(&mut self) -> Section {
        let start = self.pos;
        let initial = self.eat(Tok::Initial);
        match self.bump().kind {
            Tok::Equation => Section::Equations {
                initial,
                equations: self.equation_list(&[]),
                span: self.span_from(start),
            },
            Tok::Algorithm => Section::Algorithm {
                initial,
                statements: self.statement_list(&[]),
                span: self.span_from(start),
            },
            kind => {
                let visibility = if kind == Tok::Protected {
                    Visibility::Protected
                } else {
                    Visibility::Public
                };
                Section::Elements {
                    visibility,
                    elements: self.element_list(),
                    span: self.span_from(start),
                }
            }
        }
    }

    /// Elements after the class annotation or external clause: report once, then parse them
    /// as elements so that one misplaced annotation gives one error, not one per element.
    fn misplaced_elements(&mut self) -> Section {
        let start = self.pos;
        let d = Diagnostic::error(
            self.cur_span(),
            format!(
                "expected an element, section or `end`, found {}",
                self.found()
            ),
        )
        .with_label("unexpected here")
        .with_help(
            "the class annotation and the external clause must come last, just before `end`",
        );
        self.report(d);
        Section::Elements {
            visibility: Visibility::Public,
            elements: self.element_list(),
            span: self.span_from(start),
        }
    }

    /// The grammar allows one class annotation at the end; several (seen in old libraries) are
    /// merged into one so no information is lost.
    pub(super) fn add_class_annotation(&mut self, comp: &mut Composition, a: Annotation) {
        match &mut comp.annotation {
            Some(existing) => {
                existing.modification.args.extend(a.modification.args);
                existing.span = existing.span.to(a.span);
            }
            None => comp.annotation = Some(a),
        }
    }

    /// `{ element ; }` until a section keyword, `end`, `annotation` or `external`.
    pub(super) fn element_list(&mut self) -> Vec<Element> {
        let mut elements = Vec::new();
        loop {
            if self.fatal {
                break;
            }
            match self.peek() {
                Tok::Public
                | Tok::Protected
                | Tok::Equation
                | Tok::Algorithm
                | Tok::External
                | Tok::Annotation
                | Tok::End
                | Tok::Eof => break,
                Tok::Initial if matches!(self.peek_at(1), Tok::Equation | Tok::Algorithm) => break,
                _ => {}
            }
            let start = self.pos;
            self.ops_left = MAX_BINARY_OPS;
            match self.element() {
                Ok(e) => {
                    elements.push(e);
                    if self.expect_semi("element").is_err() {
                        self.synchronize();
                    }
                }
                Err(Fail) => self.synchronize(),
            }
            if self.pos == start {
                self.bump();
            }
        }
        elements
    }

    pub(super) fn external_clause(&mut self) -> PResult<External> {
        let start = self.pos;
        self.expect(Tok::External)?;
        let language = if self.at(Tok::String) {
            Some(self.string_lit())
        } else {
            None
        };
        let call = if matches!(self.peek(), Tok::Ident | Tok::Dot) {
            Some(self.external_call()?)
        } else {
            None
        };
        let annotation = if self.at(Tok::Annotation) {
            Some(self.annotation()?)
        } else {
            None
        };
        self.expect_semi("external clause")?;
        Ok(External {
            language,
            call,
            annotation,
            span: self.span_from(start),
        })
    }

    /// `[component-reference =] IDENT ( [expression-list] )`
    pub(super) fn external_call(&mut self) -> PResult<ExternalCall> {
        let start = self.pos;
        let first = self.component_ref()?;
        let (output, function) = if self.eat(Tok::Eq) {
            (Some(first), self.ident()?)
        } else {
            match first.parts.as_slice() {
                [p] if !first.global && p.subscripts.is_empty() => (None, p.name.clone()),
                _ => return Err(self.error_expected("`=` or `(` in external function call")),
            }
        };
        self.expect(Tok::LParen)?;
        let mut args = Vec::new();
        if !self.at(Tok::RParen) {
            loop {
                args.push(self.expression()?);
                if !self.eat(Tok::Comma) {
                    break;
                }
            }
        }
        if !self.at(Tok::RParen) {
            return Err(self.error_unclosed(Tok::RParen, "`,` or `)`"));
        }
        self.bump();
        Ok(ExternalCall {
            output,
            function,
            args,
            span: self.span_from(start),
        })
    }
}
