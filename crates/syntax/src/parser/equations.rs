//! Equations and algorithm statements.

use super::*;

/// Guarded branches (`if`/`elseif` or `when`/`elsewhen`) of equations or statements.
type Branches<T> = Vec<(Expr, Vec<T>)>;

/// A parser for the equation or statement list of one branch, given its stop tokens.
type ListParser<'a, T> = fn(&mut Parser<'a>, &[Tok]) -> Vec<T>;

impl<'a> Parser<'a> {
    /// `{ some-equation ; }` until a section keyword, `end`, or one of `stops`.
    pub(super) fn equation_list(&mut self, stops: &[Tok]) -> Vec<Equation> {
        let mut eqs = Vec::new();
        loop {
            if self.skip_stray_block_end() {
                continue;
            }
            if self.fatal || self.at_section_end() || stops.contains(&self.peek()) {
                break;
            }
            let start = self.pos;
            self.ops_left = MAX_BINARY_OPS;
            match self.equation() {
                Ok(e) => {
                    eqs.push(e);
                    if self.expect_semi("equation").is_err() {
                        self.synchronize();
                    }
                }
                Err(Fail) => self.synchronize(),
            }
            if self.pos == start {
                self.bump();
            }
        }
        eqs
    }

    /// Tokens that end an equation or statement list.
    pub(super) fn at_section_end(&self) -> bool {
        match self.peek() {
            Tok::End
            | Tok::Eof
            | Tok::Equation
            | Tok::Algorithm
            | Tok::Public
            | Tok::Protected
            | Tok::External
            | Tok::Annotation => true,
            Tok::Initial => matches!(self.peek_at(1), Tok::Equation | Tok::Algorithm),
            _ => false,
        }
    }

    pub(super) fn equation(&mut self) -> PResult<Equation> {
        self.enter()?;
        let block = self.open_block();
        let r = self.equation_inner();
        self.close_block(block);
        self.leave();
        r
    }

    /// Record that a block (`if`, `for`, `when`, `while`) starts at the current token.
    pub(super) fn open_block(&mut self) -> bool {
        let k = self.peek();
        let block = matches!(k, Tok::If | Tok::For | Tok::When | Tok::While);
        if block {
            self.open_blocks.push(k);
        }
        block
    }

    pub(super) fn close_block(&mut self, block: bool) {
        if block {
            self.open_blocks.pop();
        }
    }

    pub(super) fn equation_inner(&mut self) -> PResult<Equation> {
        let start = self.pos;
        let kind = match self.peek() {
            Tok::If => {
                let (branches, else_branch) = self.if_block(Self::equation_list)?;
                EquationKind::If {
                    branches,
                    else_branch,
                }
            }
            Tok::For => {
                let (indices, body) = self.for_block(Self::equation_list)?;
                EquationKind::For { indices, body }
            }
            Tok::When => EquationKind::When {
                branches: self.when_block(Self::equation_list)?,
            },
            Tok::Connect => self.connect_equation()?,
            _ => self.simple_or_call_equation()?,
        };
        let description = self.description()?;
        Ok(Equation {
            kind,
            description,
            span: self.span_from(start),
        })
    }

    /// `if c then ... { elseif c then ... } [else ...] end if`, with `list` parsing the
    /// equations or statements of each branch.
    fn if_block<T>(&mut self, list: ListParser<'a, T>) -> PResult<(Branches<T>, Vec<T>)> {
        self.expect(Tok::If)?;
        let mut branches = Vec::new();
        let mut else_branch = Vec::new();
        loop {
            let cond = self.expression()?;
            self.expect(Tok::Then)?;
            branches.push((cond, list(self, &[Tok::Elseif, Tok::Else])));
            if self.eat(Tok::Elseif) {
                continue;
            }
            if self.eat(Tok::Else) {
                else_branch = list(self, &[]);
            }
            break;
        }
        self.end_of(Tok::If)?;
        Ok((branches, else_branch))
    }

    /// `for indices loop ... end for`
    fn for_block<T>(&mut self, list: ListParser<'a, T>) -> PResult<(Vec<ForIndex>, Vec<T>)> {
        self.expect(Tok::For)?;
        let indices = self.for_indices()?;
        self.expect(Tok::Loop)?;
        let body = list(self, &[]);
        self.end_of(Tok::For)?;
        Ok((indices, body))
    }

    /// `when c then ... { elsewhen c then ... } end when`
    fn when_block<T>(&mut self, list: ListParser<'a, T>) -> PResult<Branches<T>> {
        self.expect(Tok::When)?;
        let mut branches = Vec::new();
        loop {
            let cond = self.expression()?;
            self.expect(Tok::Then)?;
            branches.push((cond, list(self, &[Tok::Elsewhen])));
            if !self.eat(Tok::Elsewhen) {
                break;
            }
        }
        self.end_of(Tok::When)?;
        Ok(branches)
    }

    /// `connect(a, b)`
    fn connect_equation(&mut self) -> PResult<EquationKind> {
        self.expect(Tok::Connect)?;
        self.expect(Tok::LParen)?;
        let lhs = self.component_ref()?;
        self.expect(Tok::Comma)?;
        let rhs = self.component_ref()?;
        self.expect(Tok::RParen)?;
        Ok(EquationKind::Connect { lhs, rhs })
    }

    /// `simple-expression = expression`, or a function call used as an equation.
    fn simple_or_call_equation(&mut self) -> PResult<EquationKind> {
        let lhs = self.simple_expression()?;
        if self.eat(Tok::Eq) {
            let rhs = self.expression()?;
            return Ok(EquationKind::Simple { lhs, rhs });
        }
        if let ExprKind::Call { function, args } = lhs.kind {
            return Ok(EquationKind::Call { function, args });
        }
        let help = if self.at(Tok::Assign) {
            "equations use `=`; `:=` is for algorithm sections"
        } else if matches!(
            lhs.kind,
            ExprKind::Binary {
                op: BinaryOp::Eq,
                ..
            }
        ) {
            "`==` compares two values; an equation uses a single `=`"
        } else {
            "an equation has the form `lhs = rhs;`"
        };
        let found = self.found();
        let d = Diagnostic::error(self.cur_span(), format!("expected `=`, found {found}"))
            .with_label("expected `=` in equation")
            .with_help(help);
        self.report(d);
        Err(Fail)
    }

    /// `end if`, `end for`, `end when`, `end while`.
    pub(super) fn end_of(&mut self, k: Tok) -> PResult<()> {
        let what = format!("`end {}`", k.describe().trim_matches('`'));
        if self.at(Tok::End) && self.peek_at(1) == Tok::Semi {
            // `end;` closing an if/for/when/while: report and accept it as the block end.
            let d = Diagnostic::error(self.cur_span(), format!("expected {what}, found `end;`"))
                .with_label(format!("expected {what}"))
                .with_help(format!("write `end {};`", k.describe().trim_matches('`')));
            self.report(d);
            self.bump();
            return Ok(());
        }
        if !self.at(Tok::End) || self.peek_at(1) != k {
            return Err(self.error_expected(&what));
        }
        self.bump();
        self.bump();
        Ok(())
    }

    pub(super) fn for_indices(&mut self) -> PResult<Vec<ForIndex>> {
        let mut v = Vec::new();
        loop {
            let start = self.pos;
            let name = self.ident()?;
            let range = if self.eat(Tok::In) {
                Some(self.expression()?)
            } else {
                None
            };
            v.push(ForIndex {
                name,
                range,
                span: self.span_from(start),
            });
            if !self.eat(Tok::Comma) {
                return Ok(v);
            }
        }
    }

    pub(super) fn statement_list(&mut self, stops: &[Tok]) -> Vec<Statement> {
        let mut stmts = Vec::new();
        loop {
            if self.skip_stray_block_end() {
                continue;
            }
            if self.fatal || self.at_section_end() || stops.contains(&self.peek()) {
                break;
            }
            let start = self.pos;
            self.ops_left = MAX_BINARY_OPS;
            match self.statement() {
                Ok(s) => {
                    stmts.push(s);
                    if self.expect_semi("statement").is_err() {
                        self.synchronize();
                    }
                }
                Err(Fail) => self.synchronize(),
            }
            if self.pos == start {
                self.bump();
            }
        }
        stmts
    }

    pub(super) fn statement(&mut self) -> PResult<Statement> {
        self.enter()?;
        let block = self.open_block();
        let r = self.statement_inner();
        self.close_block(block);
        self.leave();
        r
    }

    pub(super) fn statement_inner(&mut self) -> PResult<Statement> {
        let start = self.pos;
        let kind = match self.peek() {
            Tok::Break => {
                self.bump();
                StatementKind::Break
            }
            Tok::Return => {
                self.bump();
                StatementKind::Return
            }
            Tok::If => {
                let (branches, else_branch) = self.if_block(Self::statement_list)?;
                StatementKind::If {
                    branches,
                    else_branch,
                }
            }
            Tok::For => {
                let (indices, body) = self.for_block(Self::statement_list)?;
                StatementKind::For { indices, body }
            }
            Tok::While => {
                self.bump();
                let condition = self.expression()?;
                self.expect(Tok::Loop)?;
                let body = self.statement_list(&[]);
                self.end_of(Tok::While)?;
                StatementKind::While { condition, body }
            }
            Tok::When => StatementKind::When {
                branches: self.when_block(Self::statement_list)?,
            },
            Tok::LParen => self.tuple_assignment()?,
            Tok::Ident | Tok::Dot | Tok::Der | Tok::Initial | Tok::Pure => {
                self.assignment_or_call()?
            }
            _ => return Err(self.error_expected("statement")),
        };
        let description = self.description()?;
        Ok(Statement {
            kind,
            description,
            span: self.span_from(start),
        })
    }

    /// `(a, , b) := f(x)`
    fn tuple_assignment(&mut self) -> PResult<StatementKind> {
        let targets = self.output_expression_list()?;
        self.expect(Tok::Assign)?;
        let value = self.primary()?;
        if !matches!(value.kind, ExprKind::Call { .. }) {
            let d = Diagnostic::error(value.span, "expected a function call")
                .with_label("the right-hand side of a tuple assignment must be a call")
                .with_help("write `(a, b) := f(x);`");
            self.report(d);
            return Err(Fail);
        }
        Ok(StatementKind::TupleAssign { targets, value })
    }

    /// `a.b[i] := expr` or a procedure call `f(x)`.
    fn assignment_or_call(&mut self) -> PResult<StatementKind> {
        let target = if matches!(self.peek(), Tok::Ident | Tok::Dot) {
            self.component_ref()?
        } else {
            self.keyword_ref()
        };
        if self.at(Tok::LParen) {
            let args = self.function_call_args()?;
            return Ok(StatementKind::Call {
                function: target,
                args,
            });
        }
        if self.eat(Tok::Assign) {
            let value = self.expression()?;
            return Ok(StatementKind::Assign { target, value });
        }
        let found = self.found();
        let mut d = Diagnostic::error(
            self.cur_span(),
            format!("expected `:=` or `(`, found {found}"),
        )
        .with_label("expected an assignment or a call");
        if self.at(Tok::Eq) {
            d = d.with_help("assignments in algorithms use `:=`, not `=`");
        }
        self.report(d);
        Err(Fail)
    }
}
