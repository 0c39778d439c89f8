//! Elements (imports, extends, components, nested classes), modifications, descriptions
//! and annotations.

use super::*;

impl<'a> Parser<'a> {
    pub(super) fn element(&mut self) -> PResult<Element> {
        match self.peek() {
            Tok::Import => return self.import_clause().map(Element::Import),
            Tok::Extends => return self.extends_clause().map(Element::Extends),
            _ => {}
        }
        let start = self.pos;
        let mut prefixes = ElementPrefixes {
            redeclare: self.eat(Tok::Redeclare),
            final_: self.eat(Tok::Final),
            inner: self.eat(Tok::Inner),
            outer: self.eat(Tok::Outer),
            replaceable: false,
        };
        prefixes.replaceable = self.eat(Tok::Replaceable);
        if self.at_class_prefix() {
            let class = self.class_definition()?;
            let constraining = self.constraining_if(prefixes.replaceable, true)?;
            return Ok(Element::Class {
                prefixes,
                class: Box::new(class),
                constraining,
                span: self.span_from(start),
            });
        }
        if !self.at_component_start() {
            return Err(self
                .error_expected("element (component declaration, class, `extends` or `import`)"));
        }
        let clause = self.component_clause(false)?;
        let constraining = self.constraining_if(prefixes.replaceable, true)?;
        Ok(Element::Component {
            prefixes,
            clause,
            constraining,
            span: self.span_from(start),
        })
    }

    pub(super) fn at_component_start(&self) -> bool {
        matches!(
            self.peek(),
            Tok::Ident
                | Tok::Dot
                | Tok::Flow
                | Tok::Stream
                | Tok::Discrete
                | Tok::Parameter
                | Tok::Constant
                | Tok::Input
                | Tok::Output
        )
    }

    /// `[constrainedby T(mods) [description]]`, allowed only after `replaceable`.
    pub(super) fn constraining_if(
        &mut self,
        replaceable: bool,
        with_description: bool,
    ) -> PResult<Option<ConstrainingClause>> {
        if !self.at(Tok::Constrainedby) {
            return Ok(None);
        }
        if !replaceable {
            let d = Diagnostic::error(self.cur_span(), "`constrainedby` without `replaceable`")
                .with_label("only replaceable elements have a constraining clause")
                .with_help("add `replaceable` before the declaration or remove the clause");
            self.report(d);
            return Err(Fail);
        }
        let start = self.pos;
        self.bump();
        let base = self.type_specifier()?;
        let modification = if self.at(Tok::LParen) {
            Some(self.class_modification()?)
        } else {
            None
        };
        let description = if with_description {
            self.description()?
        } else {
            Description::default()
        };
        Ok(Some(ConstrainingClause {
            base,
            modification,
            description,
            span: self.span_from(start),
        }))
    }

    pub(super) fn import_clause(&mut self) -> PResult<ImportClause> {
        let start = self.pos;
        self.expect(Tok::Import)?;
        let kind = if self.at(Tok::Ident) && self.peek_at(1) == Tok::Eq {
            let alias = self.ident()?;
            self.bump();
            let name = self.name()?;
            ImportKind::Renaming { alias, name }
        } else {
            let name = self.name()?;
            if self.eat(Tok::DotStar) {
                ImportKind::Unqualified(name)
            } else if self.at(Tok::Dot) {
                self.bump();
                if self.eat(Tok::Star) {
                    ImportKind::Unqualified(name)
                } else if self.eat(Tok::LBrace) {
                    let mut names = vec![self.ident()?];
                    while self.eat(Tok::Comma) {
                        names.push(self.ident()?);
                    }
                    self.expect(Tok::RBrace)?;
                    ImportKind::Multiple {
                        prefix: name,
                        names,
                    }
                } else {
                    return Err(self.error_expected("identifier, `*` or `{` after `.` in import"));
                }
            } else {
                ImportKind::Qualified(name)
            }
        };
        let description = self.description()?;
        Ok(ImportClause {
            kind,
            description,
            span: self.span_from(start),
        })
    }

    pub(super) fn extends_clause(&mut self) -> PResult<ExtendsClause> {
        let start = self.pos;
        self.expect(Tok::Extends)?;
        let base = self.type_specifier()?;
        let modification = if self.at(Tok::LParen) {
            Some(self.class_modification_with(true)?)
        } else {
            None
        };
        let annotation = if self.at(Tok::Annotation) {
            Some(self.annotation()?)
        } else {
            None
        };
        Ok(ExtendsClause {
            base,
            modification,
            annotation,
            span: self.span_from(start),
        })
    }

    pub(super) fn type_prefixes(&mut self) -> TypePrefixes {
        let connector = match self.peek() {
            Tok::Flow => Some(ConnectorPrefix::Flow),
            Tok::Stream => Some(ConnectorPrefix::Stream),
            _ => None,
        };
        if connector.is_some() {
            self.bump();
        }
        let variability = match self.peek() {
            Tok::Discrete => Some(Variability::Discrete),
            Tok::Parameter => Some(Variability::Parameter),
            Tok::Constant => Some(Variability::Constant),
            _ => None,
        };
        if variability.is_some() {
            self.bump();
        }
        let causality = self.causality();
        TypePrefixes {
            connector,
            variability,
            causality,
        }
    }

    /// `type-prefix type-specifier [subs] component-list`; with `single`, the
    /// component-clause1 form used in redeclarations (one declaration, no type subscripts and
    /// no condition).
    pub(super) fn component_clause(&mut self, single: bool) -> PResult<ComponentClause> {
        let start = self.pos;
        let prefixes = self.type_prefixes();
        let type_name = self.type_specifier()?;
        let subscripts = if !single && self.at(Tok::LBracket) {
            self.array_subscripts()?
        } else {
            Vec::new()
        };
        let mut components = vec![self.component_declaration(single)?];
        if !single {
            while self.eat(Tok::Comma) {
                components.push(self.component_declaration(false)?);
            }
        }
        Ok(ComponentClause {
            prefixes,
            type_name,
            subscripts,
            components,
            span: self.span_from(start),
        })
    }

    pub(super) fn component_declaration(&mut self, single: bool) -> PResult<ComponentDecl> {
        let start = self.pos;
        let name = self.ident()?;
        let subscripts = if self.at(Tok::LBracket) {
            self.array_subscripts()?
        } else {
            Vec::new()
        };
        let modification = self.modification_opt()?;
        let condition = if !single && self.eat(Tok::If) {
            Some(self.expression()?)
        } else {
            None
        };
        let description = self.description()?;
        Ok(ComponentDecl {
            name,
            subscripts,
            modification,
            condition,
            description,
            span: self.span_from(start),
        })
    }

    /// `[class-modification] [= expr]` or `:= expr`; `None` if neither is present.
    pub(super) fn modification_opt(&mut self) -> PResult<Option<Modification>> {
        let start = self.pos;
        let class_modification = if self.at(Tok::LParen) {
            Some(self.class_modification()?)
        } else {
            None
        };
        let binding = match self.peek() {
            Tok::Eq | Tok::Assign => {
                let assign = self.bump().kind == Tok::Assign;
                let expr = if self.at(Tok::Break) {
                    let t = self.bump();
                    Expr::new(ExprKind::Break, self.span_of(t))
                } else {
                    self.expression()?
                };
                Some(Binding { expr, assign })
            }
            _ => None,
        };
        if class_modification.is_none() && binding.is_none() {
            return Ok(None);
        }
        Ok(Some(Modification {
            class_modification,
            binding,
            span: self.span_from(start),
        }))
    }

    /// `( [argument { , argument }] )`
    pub(super) fn class_modification(&mut self) -> PResult<ClassModification> {
        self.class_modification_with(false)
    }

    /// A class modification; with `inheritance`, the class-or-inheritance-modification of an
    /// extends clause, which may also hold `break connect(a, b)` and `break name`.
    pub(super) fn class_modification_with(
        &mut self,
        inheritance: bool,
    ) -> PResult<ClassModification> {
        self.enter()?;
        let r = self.class_modification_inner(inheritance);
        self.leave();
        r
    }

    pub(super) fn class_modification_inner(
        &mut self,
        inheritance: bool,
    ) -> PResult<ClassModification> {
        let start = self.pos;
        self.expect(Tok::LParen)?;
        let mut args = Vec::new();
        if !self.at(Tok::RParen) {
            loop {
                if self.at(Tok::Break) {
                    args.push(self.inheritance_break(inheritance)?);
                } else {
                    args.push(self.argument()?);
                }
                if !self.eat(Tok::Comma) {
                    break;
                }
            }
        }
        if !self.at(Tok::RParen) {
            return Err(self.error_unclosed(Tok::RParen, "`,` or `)` in modification"));
        }
        self.bump();
        Ok(ClassModification {
            args,
            span: self.span_from(start),
        })
    }

    /// `break connect(a, b)` or `break name` (selective model extension).
    pub(super) fn inheritance_break(&mut self, allowed: bool) -> PResult<Argument> {
        let start = self.pos;
        if !allowed {
            let d = Diagnostic::error(self.cur_span(), "`break` is not allowed here")
                .with_label("only in the modification of an `extends` clause")
                .with_help(
                    "`break name` and `break connect(a, b)` remove inherited elements and \
                     connections in `extends Base(...)`",
                );
            self.report(d);
            return Err(Fail);
        }
        self.bump();
        let removed = if self.eat(Tok::Connect) {
            self.expect(Tok::LParen)?;
            let lhs = self.component_ref()?;
            self.expect(Tok::Comma)?;
            let rhs = self.component_ref()?;
            self.expect(Tok::RParen)?;
            BreakTarget::Connect { lhs, rhs }
        } else {
            BreakTarget::Element(self.ident()?)
        };
        Ok(Argument::Break(InheritanceBreak {
            target: removed,
            span: self.span_from(start),
        }))
    }

    pub(super) fn argument(&mut self) -> PResult<Argument> {
        let start = self.pos;
        let redeclare = self.eat(Tok::Redeclare);
        let each = self.eat(Tok::Each);
        let final_ = self.eat(Tok::Final);
        let replaceable = self.eat(Tok::Replaceable);
        if redeclare || replaceable {
            let element = if self.at_class_prefix() {
                let c = self.class_definition()?;
                if c.specifier.composition().is_some() {
                    let d = Diagnostic::error(
                        c.name.span,
                        "a redeclaration in a modification must be a short class definition",
                    )
                    .with_label("long class definition here")
                    .with_help("write e.g. `redeclare model M = N(...)`");
                    self.report(d);
                }
                RedeclaredElement::Class(Box::new(c))
            } else {
                RedeclaredElement::Component(Box::new(self.component_clause(true)?))
            };
            let constraining = self.constraining_if(replaceable, false)?;
            return Ok(Argument::Redeclare(ElementRedeclaration {
                each,
                final_,
                redeclare,
                replaceable,
                element,
                constraining,
                span: self.span_from(start),
            }));
        }
        let name = self.name()?;
        let modification = self.modification_opt()?;
        let description = self.string_concat()?;
        Ok(Argument::Modification(ElementModification {
            each,
            final_,
            name,
            modification,
            description,
            span: self.span_from(start),
        }))
    }

    pub(super) fn string_lit(&mut self) -> String {
        let t = self.bump();
        let raw = self.text_of(t);
        let body = raw
            .strip_prefix('"')
            .map(|s| s.strip_suffix('"').unwrap_or(s))
            .unwrap_or(raw);
        decode_escapes(body)
    }

    /// `[STRING { + STRING }]`
    pub(super) fn string_concat(&mut self) -> PResult<Vec<String>> {
        let mut parts = Vec::new();
        if self.at(Tok::String) {
            parts.push(self.string_lit());
            while self.eat(Tok::Plus) {
                if !self.at(Tok::String) {
                    return Err(self.error_expected("string after `+` in description"));
                }
                parts.push(self.string_lit());
            }
        }
        Ok(parts)
    }

    /// `description-string [annotation-clause]`
    pub(super) fn description(&mut self) -> PResult<Description> {
        let strings = self.string_concat()?;
        let annotation = if self.at(Tok::Annotation) {
            Some(self.annotation()?)
        } else {
            None
        };
        Ok(Description {
            strings,
            annotation,
        })
    }

    /// The description of a long class: strings only (the annotation comes at the end).
    pub(super) fn description_strings_only(&mut self) -> PResult<Description> {
        Ok(Description {
            strings: self.string_concat()?,
            annotation: None,
        })
    }

    pub(super) fn annotation(&mut self) -> PResult<Annotation> {
        let start = self.pos;
        self.expect(Tok::Annotation)?;
        let modification = self.class_modification()?;
        Ok(Annotation {
            modification,
            span: self.span_from(start),
        })
    }
}
