//! Expressions, from if-expressions down to primaries, and function-call arguments.

use super::*;

impl<'a> Parser<'a> {
    /// `expression`: an if-expression or a simple expression.
    pub(super) fn expression(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.expression_inner();
        self.leave();
        r
    }

    pub(super) fn expression_inner(&mut self) -> PResult<Expr> {
        if !self.at(Tok::If) {
            return self.simple_expression();
        }
        let start = self.pos;
        self.bump();
        let mut branches = Vec::new();
        let cond = self.expression()?;
        self.expect(Tok::Then)?;
        let value = self.expression()?;
        branches.push((cond, value));
        while self.eat(Tok::Elseif) {
            let cond = self.expression()?;
            self.expect(Tok::Then)?;
            let value = self.expression()?;
            branches.push((cond, value));
        }
        if !self.at(Tok::Else) {
            return Err(self.error_expected("`else` or `elseif` in if-expression"));
        }
        self.bump();
        let else_branch = Box::new(self.expression()?);
        Ok(Expr::new(
            ExprKind::If {
                branches,
                else_branch,
            },
            self.span_from(start),
        ))
    }

    /// `logical-expression [: logical-expression [: logical-expression]]`
    pub(super) fn simple_expression(&mut self) -> PResult<Expr> {
        let start = self.pos;
        let first = self.logical_expression()?;
        if !self.eat(Tok::Colon) {
            return Ok(first);
        }
        let second = self.logical_expression()?;
        let (step, stop) = if self.eat(Tok::Colon) {
            (Some(Box::new(second)), self.logical_expression()?)
        } else {
            (None, second)
        };
        Ok(Expr::new(
            ExprKind::Range {
                start: Box::new(first),
                step,
                stop: Box::new(stop),
            },
            self.span_from(start),
        ))
    }

    pub(super) fn binary(&mut self, op: BinaryOp, lhs: Expr, rhs: Expr) -> PResult<Expr> {
        if self.ops_left == 0 {
            let d = Diagnostic::error(self.cur_span(), "expression too long")
                .with_label("operator limit reached here")
                .with_note(format!(
                    "one declaration, equation or statement may contain at most \
                     {MAX_BINARY_OPS} binary operators"
                ))
                .with_help("split the expression using intermediate variables");
            self.report(d);
            return Err(Fail);
        }
        self.ops_left -= 1;
        let span = lhs.span.to(rhs.span);
        Ok(Expr::new(
            ExprKind::Binary {
                op,
                lhs: Box::new(lhs),
                rhs: Box::new(rhs),
            },
            span,
        ))
    }

    pub(super) fn logical_expression(&mut self) -> PResult<Expr> {
        let mut lhs = self.logical_term()?;
        while self.eat(Tok::Or) {
            let rhs = self.logical_term()?;
            lhs = self.binary(BinaryOp::Or, lhs, rhs)?;
        }
        Ok(lhs)
    }

    pub(super) fn logical_term(&mut self) -> PResult<Expr> {
        let mut lhs = self.logical_factor()?;
        while self.eat(Tok::And) {
            let rhs = self.logical_factor()?;
            lhs = self.binary(BinaryOp::And, lhs, rhs)?;
        }
        Ok(lhs)
    }

    /// `[not] relation`
    pub(super) fn logical_factor(&mut self) -> PResult<Expr> {
        if !self.at(Tok::Not) {
            return self.relation();
        }
        let start = self.pos;
        self.bump();
        let operand = self.relation()?;
        Ok(Expr::new(
            ExprKind::Unary {
                op: UnaryOp::Not,
                operand: Box::new(operand),
            },
            self.span_from(start),
        ))
    }

    /// `arithmetic [relop arithmetic]` (non-associative).
    pub(super) fn relation(&mut self) -> PResult<Expr> {
        let lhs = self.arithmetic_expression()?;
        let Some(op) = self.relational_op() else {
            return Ok(lhs);
        };
        self.bump();
        let rhs = self.arithmetic_expression()?;
        if self.relational_op().is_some() {
            let d = Diagnostic::error(self.cur_span(), "comparison operators cannot be chained")
                .with_label("second comparison here")
                .with_help("use `a < b and b < c`, or add parentheses");
            self.report(d);
            return Err(Fail);
        }
        self.binary(op, lhs, rhs)
    }

    pub(super) fn relational_op(&self) -> Option<BinaryOp> {
        Some(match self.peek() {
            Tok::Lt => BinaryOp::Lt,
            Tok::Le => BinaryOp::Le,
            Tok::Gt => BinaryOp::Gt,
            Tok::Ge => BinaryOp::Ge,
            Tok::EqEq => BinaryOp::Eq,
            Tok::Ne => BinaryOp::Ne,
            _ => return None,
        })
    }

    pub(super) fn add_op(&self) -> Option<BinaryOp> {
        Some(match self.peek() {
            Tok::Plus => BinaryOp::Add,
            Tok::Minus => BinaryOp::Sub,
            Tok::DotPlus => BinaryOp::ElemAdd,
            Tok::DotMinus => BinaryOp::ElemSub,
            _ => return None,
        })
    }

    /// `[add-op] term { add-op term }`; a leading sign applies to the first term.
    pub(super) fn arithmetic_expression(&mut self) -> PResult<Expr> {
        let start = self.pos;
        let unary = match self.peek() {
            Tok::Plus => Some(UnaryOp::Plus),
            Tok::Minus => Some(UnaryOp::Neg),
            Tok::DotPlus => Some(UnaryOp::ElemPlus),
            Tok::DotMinus => Some(UnaryOp::ElemNeg),
            _ => None,
        };
        if unary.is_some() {
            self.bump();
        }
        let mut lhs = self.term()?;
        if let Some(op) = unary {
            lhs = Expr::new(
                ExprKind::Unary {
                    op,
                    operand: Box::new(lhs),
                },
                self.span_from(start),
            );
        }
        while let Some(op) = self.add_op() {
            self.bump();
            let rhs = self.term()?;
            lhs = self.binary(op, lhs, rhs)?;
        }
        Ok(lhs)
    }

    pub(super) fn term(&mut self) -> PResult<Expr> {
        let mut lhs = self.factor()?;
        loop {
            let op = match self.peek() {
                Tok::Star => BinaryOp::Mul,
                Tok::Slash => BinaryOp::Div,
                Tok::DotStar => BinaryOp::ElemMul,
                Tok::DotSlash => BinaryOp::ElemDiv,
                _ => return Ok(lhs),
            };
            self.bump();
            let rhs = self.factor()?;
            lhs = self.binary(op, lhs, rhs)?;
        }
    }

    /// `primary [(^ | .^) primary]` (non-associative).
    pub(super) fn factor(&mut self) -> PResult<Expr> {
        let lhs = self.primary()?;
        let op = match self.peek() {
            Tok::Caret => BinaryOp::Pow,
            Tok::DotCaret => BinaryOp::ElemPow,
            _ => return Ok(lhs),
        };
        self.bump();
        let rhs = self.primary()?;
        if matches!(self.peek(), Tok::Caret | Tok::DotCaret) {
            let d = Diagnostic::error(self.cur_span(), "`^` is not associative")
                .with_label("second power operator here")
                .with_help("add parentheses: `(a^b)^c` or `a^(b^c)`");
            self.report(d);
            return Err(Fail);
        }
        self.binary(op, lhs, rhs)
    }

    pub(super) fn primary(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.primary_inner();
        self.leave();
        r
    }

    pub(super) fn primary_inner(&mut self) -> PResult<Expr> {
        let start = self.pos;
        let t = self.tok(self.pos);
        let kind = match t.kind {
            Tok::UInt | Tok::UReal => self.number(),
            Tok::String => ExprKind::String(self.string_lit()),
            Tok::True | Tok::False => {
                self.bump();
                ExprKind::Bool(t.kind == Tok::True)
            }
            Tok::End => {
                self.bump();
                ExprKind::End
            }
            Tok::Der | Tok::Initial | Tok::Pure => {
                let function = self.keyword_ref();
                if !self.at(Tok::LParen) {
                    return Err(self.error_expected(&format!("`(` after {}", t.kind.describe())));
                }
                let args = self.function_call_args()?;
                ExprKind::Call { function, args }
            }
            Tok::Ident | Tok::Dot => {
                let cref = self.component_ref()?;
                if self.at(Tok::LParen) {
                    let args = self.function_call_args()?;
                    ExprKind::Call {
                        function: cref,
                        args,
                    }
                } else {
                    ExprKind::Ref(cref)
                }
            }
            Tok::LParen => {
                let mut items = self.output_expression_list()?;
                if let [Some(_)] = items.as_slice() {
                    // A parenthesized expression is the expression itself.
                    if let Some(Some(mut e)) = items.pop() {
                        e.span = self.span_from(start);
                        return Ok(e);
                    }
                }
                ExprKind::Tuple(items)
            }
            Tok::LBracket => self.matrix()?,
            Tok::LBrace => self.array_constructor()?,
            _ => return Err(self.error_expected("expression")),
        };
        Ok(Expr::new(kind, self.span_from(start)))
    }

    /// An unsigned integer or real literal. Integers too large for `i64` become reals.
    fn number(&mut self) -> ExprKind {
        let t = self.bump();
        let text = self.text_of(t);
        if t.kind == Tok::UInt {
            if let Ok(v) = text.parse::<i64>() {
                return ExprKind::Integer(v);
            }
        }
        ExprKind::Real {
            value: parse_real(text),
            text: Arc::from(text),
        }
    }

    /// `[ a, b ; c, d ]`
    fn matrix(&mut self) -> PResult<ExprKind> {
        self.expect(Tok::LBracket)?;
        let mut rows = Vec::new();
        loop {
            let mut row = vec![self.expression()?];
            while self.eat(Tok::Comma) {
                row.push(self.expression()?);
            }
            rows.push(row);
            if !self.eat(Tok::Semi) {
                break;
            }
        }
        if !self.at(Tok::RBracket) {
            return Err(self.error_unclosed(Tok::RBracket, "`,`, `;` or `]` in matrix"));
        }
        self.bump();
        Ok(ExprKind::Matrix(rows))
    }

    /// `{ a, b }`, `{ e for i in r }` or (leniently) `{}`.
    fn array_constructor(&mut self) -> PResult<ExprKind> {
        self.expect(Tok::LBrace)?;
        if self.eat(Tok::RBrace) {
            return Ok(ExprKind::Array(Vec::new()));
        }
        let first = self.expression()?;
        let kind = if self.eat(Tok::For) {
            let indices = self.for_indices()?;
            ExprKind::ArrayComprehension {
                body: Box::new(first),
                indices,
            }
        } else {
            let mut items = vec![first];
            while self.eat(Tok::Comma) {
                items.push(self.expression()?);
            }
            ExprKind::Array(items)
        };
        if !self.at(Tok::RBrace) {
            return Err(self.error_unclosed(Tok::RBrace, "`,` or `}` in array"));
        }
        self.bump();
        Ok(kind)
    }

    /// `( [expr] { , [expr] } )` — used for parenthesized expressions and tuples.
    pub(super) fn output_expression_list(&mut self) -> PResult<Vec<Option<Expr>>> {
        self.expect(Tok::LParen)?;
        let mut items = Vec::new();
        loop {
            if matches!(self.peek(), Tok::Comma | Tok::RParen) {
                items.push(None);
            } else {
                items.push(Some(self.expression()?));
            }
            if !self.eat(Tok::Comma) {
                break;
            }
        }
        if !self.at(Tok::RParen) {
            return Err(self.error_unclosed(Tok::RParen, "`,` or `)`"));
        }
        self.bump();
        // `()` is an empty list, not one empty slot.
        if items.len() == 1 && items[0].is_none() {
            items.clear();
        }
        Ok(items)
    }

    /// `( [function-arguments] )`
    pub(super) fn function_call_args(&mut self) -> PResult<FunctionArgs> {
        self.expect(Tok::LParen)?;
        let mut positional = Vec::new();
        let mut named = Vec::new();
        if self.eat(Tok::RParen) {
            return Ok(FunctionArgs::List { positional, named });
        }
        loop {
            if self.at(Tok::Ident) && self.peek_at(1) == Tok::Eq {
                let start = self.pos;
                let name = self.ident()?;
                self.bump();
                let value = self.function_argument()?;
                named.push(NamedArg {
                    name,
                    value,
                    span: self.span_from(start),
                });
            } else {
                if !named.is_empty() {
                    let d = Diagnostic::error(
                        self.cur_span(),
                        "positional argument after named arguments",
                    )
                    .with_label("positional argument here")
                    .with_help("put all positional arguments before the named ones");
                    self.report(d);
                    return Err(Fail);
                }
                let e = self.function_argument()?;
                if positional.is_empty() && self.eat(Tok::For) {
                    let indices = self.for_indices()?;
                    self.expect(Tok::RParen)?;
                    return Ok(FunctionArgs::Comprehension {
                        body: Box::new(e),
                        indices,
                    });
                }
                positional.push(e);
            }
            if !self.eat(Tok::Comma) {
                break;
            }
        }
        if !self.at(Tok::RParen) {
            return Err(self.error_unclosed(Tok::RParen, "`,` or `)` in function call"));
        }
        self.bump();
        Ok(FunctionArgs::List { positional, named })
    }

    /// `function-partial-application | expression`
    pub(super) fn function_argument(&mut self) -> PResult<Expr> {
        if !self.at(Tok::Function) {
            return self.expression();
        }
        let start = self.pos;
        self.bump();
        let function = self.type_specifier()?;
        self.expect(Tok::LParen)?;
        let mut args = Vec::new();
        if !self.at(Tok::RParen) {
            loop {
                let s = self.pos;
                let name = self.ident()?;
                self.expect(Tok::Eq)?;
                let value = self.function_argument()?;
                args.push(NamedArg {
                    name,
                    value,
                    span: self.span_from(s),
                });
                if !self.eat(Tok::Comma) {
                    break;
                }
            }
        }
        self.expect(Tok::RParen)?;
        Ok(Expr::new(
            ExprKind::PartialApplication { function, args },
            self.span_from(start),
        ))
    }
}

/// Parse an unsigned real literal; Rust's float syntax covers Modelica's (`1.`, `1.e3`, `2E-4`,
/// `.5`). Integer literals beyond `i64` also come here.
fn parse_real(text: &str) -> f64 {
    if let Ok(v) = text.parse::<f64>() {
        return v;
    }
    // Defensive: the lexer only produces digit/dot/exponent spellings Rust accepts.
    format!("0{text}").parse::<f64>().unwrap_or(0.0)
}
