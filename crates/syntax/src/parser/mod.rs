//! Recursive-descent parser for the Modelica 3.6 grammar (specification Appendix A).
//!
//! The whole file is lexed first; the parser walks the token vector with one token of
//! lookahead (two in a few places, e.g. named arguments `IDENT =`).
//!
//! Error handling: a rule that cannot continue records a diagnostic and returns `Err(Fail)`.
//! The list loops (elements, equations, statements, top-level classes) catch the failure and
//! resynchronise at the next `;` (outside brackets) or at a section keyword / `end`, so one file
//! can report several independent errors. A `;` missing at the end of a line is reported and
//! then assumed, a stray `end for` is reported and skipped, and errors about a missing closing
//! bracket also point at the opening one. Nesting depth and the size of one expression are
//! capped so that hostile input cannot overflow the stack, and so is the number of
//! diagnostics per file.
//!
//! Deliberate leniencies (not in the grammar, used by real code, nothing is lost): `{}` is an
//! empty array; a class annotation may also stand between two sections of a composition
//! (several are merged into one). Everything else follows Appendix A of Modelica 3.6, including
//! `:=` in modifications, `break` in extends modifications and real literals like `.5`.

use crate::ast::*;
use crate::diag::Diagnostic;
use crate::lexer::{decode_escapes, lex_into, Tok, Token};
use crate::source::{FileId, Span};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

mod classes;
mod elements;
mod equations;
mod expressions;
mod names;

thread_local! {
    /// The token vector of the previous parse on this thread, reused by the next one.
    static TOKEN_BUFFER: RefCell<Vec<Token>> = const { RefCell::new(Vec::new()) };
}

/// Marker for "an error was reported; unwind to the nearest recovery point".
#[derive(Debug)]
pub(crate) struct Fail;

type PResult<T> = Result<T, Fail>;

/// Maximum nesting of expressions, classes and structured equations/statements.
const MAX_DEPTH: u32 = 100;
/// Maximum number of binary operators in one element, equation or statement. Left-nested
/// operator chains build deep trees without deep parser recursion; the cap bounds the depth
/// of every expression tree so that dropping, printing or walking it cannot overflow the stack.
const MAX_BINARY_OPS: u32 = 1000;
/// Stop parsing a file after this many syntax errors.
const MAX_ERRORS: usize = 30;

pub(crate) fn parse_stored_definition(
    file: FileId,
    text: &str,
) -> (StoredDefinition, Vec<Diagnostic>) {
    let mut p = Parser::new(file, text);
    let def = p.stored_definition();
    (def, p.finish())
}

pub(crate) fn parse_expression(file: FileId, text: &str) -> (Option<Expr>, Vec<Diagnostic>) {
    parse_whole(file, text, "end of expression", Parser::expression)
}

pub(crate) fn parse_type_name(file: FileId, text: &str) -> (Option<Name>, Vec<Diagnostic>) {
    parse_whole(file, text, "end of name", Parser::type_specifier)
}

pub(crate) fn parse_cref(file: FileId, text: &str) -> (Option<ComponentRef>, Vec<Diagnostic>) {
    parse_whole(
        file,
        text,
        "end of component reference",
        Parser::component_ref,
    )
}

/// Parse `text` with one rule, which must consume all of it; `None` on any error.
fn parse_whole<'a, T>(
    file: FileId,
    text: &'a str,
    end: &str,
    rule: impl FnOnce(&mut Parser<'a>) -> PResult<T>,
) -> (Option<T>, Vec<Diagnostic>) {
    let mut p = Parser::new(file, text);
    let r = rule(&mut p).ok();
    if r.is_some() && p.peek() != Tok::Eof {
        p.error_expected(end);
    }
    let diags = p.finish();
    let ok = !diags.iter().any(|d| d.is_error());
    (r.filter(|_| ok), diags)
}

struct Parser<'a> {
    file: FileId,
    text: &'a str,
    tokens: Vec<Token>,
    pos: usize,
    diags: Vec<Diagnostic>,
    /// Token index of the last reported error (to avoid duplicate reports at one place).
    last_error_at: Option<usize>,
    errors: usize,
    /// Set when parsing must stop (too many errors or nesting too deep at top level).
    fatal: bool,
    depth: u32,
    /// Binary operators still allowed in the current list item (see [`MAX_BINARY_OPS`]).
    ops_left: u32,
    /// Kinds (`if`, `for`, `when`, `while`) of the equation/statement blocks being parsed, to
    /// tell a stray `end for` from the end of an enclosing block.
    open_blocks: Vec<Tok>,
    /// Identifier interner: one `Arc<str>` per distinct spelling in the file.
    /// (Fx hashing: short identifiers from a trusted file, no need for SipHash's DoS
    /// resistance.)
    idents: rustc_hash::FxHashMap<&'a str, Arc<str>>,
}

impl<'a> Parser<'a> {
    fn new(file: FileId, text: &'a str) -> Parser<'a> {
        let buffer = TOKEN_BUFFER.with(|b| std::mem::take(&mut *b.borrow_mut()));
        let (tokens, diags) = lex_into(file, text, buffer);
        let errors = diags.len();
        Parser {
            file,
            text,
            tokens,
            pos: 0,
            diags,
            last_error_at: None,
            errors,
            fatal: false,
            depth: 0,
            ops_left: MAX_BINARY_OPS,
            open_blocks: Vec::new(),
            idents: HashMap::default(),
        }
    }

    fn finish(mut self) -> Vec<Diagnostic> {
        // Lexer diagnostics come first; keep the output in source order.
        self.diags.sort_by_key(|d| d.span.start);
        let tokens = std::mem::take(&mut self.tokens);
        TOKEN_BUFFER.with(|b| *b.borrow_mut() = tokens);
        self.diags
    }

    // -- token access ---------------------------------------------------------------------

    fn tok(&self, i: usize) -> Token {
        let last = self.tokens.len().saturating_sub(1);
        self.tokens.get(i.min(last)).copied().unwrap_or(Token {
            kind: Tok::Eof,
            start: self.text.len() as u32,
            end: self.text.len() as u32,
        })
    }

    fn peek(&self) -> Tok {
        self.tok(self.pos).kind
    }

    fn peek_at(&self, ahead: usize) -> Tok {
        self.tok(self.pos + ahead).kind
    }

    fn at(&self, k: Tok) -> bool {
        self.peek() == k
    }

    fn span_of(&self, t: Token) -> Span {
        Span::new(self.file, t.start, t.end)
    }

    fn cur_span(&self) -> Span {
        self.span_of(self.tok(self.pos))
    }

    /// Span from token `start_tok` to the last consumed token.
    fn span_from(&self, start_tok: usize) -> Span {
        let s = self.tok(start_tok).start;
        let e = if self.pos > start_tok {
            self.tok(self.pos - 1).end
        } else {
            s
        };
        Span::new(self.file, s, e.max(s))
    }

    fn bump(&mut self) -> Token {
        let t = self.tok(self.pos);
        if t.kind != Tok::Eof {
            self.pos += 1;
        }
        t
    }

    fn eat(&mut self, k: Tok) -> bool {
        if self.at(k) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn text_of(&self, t: Token) -> &'a str {
        self.text
            .get(t.start as usize..t.end as usize)
            .unwrap_or("")
    }

    // -- errors -----------------------------------------------------------------------------

    /// How the current token is shown in "found ..." messages.
    fn found(&self) -> String {
        let t = self.tok(self.pos);
        match t.kind {
            Tok::Eof => "end of file".to_string(),
            Tok::Ident | Tok::UInt | Tok::UReal => format!("`{}`", self.text_of(t)),
            Tok::String => "a string".to_string(),
            Tok::Unknown => format!("`{}`", self.text_of(t)),
            k => k.describe().to_string(),
        }
    }

    fn report(&mut self, d: Diagnostic) {
        // A stray character was already reported by the lexer; one error per place is enough.
        if self.last_error_at == Some(self.pos) || self.fatal || self.at(Tok::Unknown) {
            return;
        }
        self.last_error_at = Some(self.pos);
        self.errors += 1;
        self.diags.push(d);
        if self.errors >= MAX_ERRORS {
            self.fatal = true;
            let span = self.cur_span();
            self.diags.push(
                Diagnostic::error(span, "too many syntax errors; stopping")
                    .with_note(format!("parsing stops after {MAX_ERRORS} errors")),
            );
        }
    }

    /// Report "expected X, found Y" at the current token.
    fn error_expected(&mut self, what: &str) -> Fail {
        let found = self.found();
        let mut d = Diagnostic::error(self.cur_span(), format!("expected {what}, found {found}"))
            .with_label(format!("expected {what}"));
        let k = self.peek();
        if k.is_keyword() && what.contains("identifier") {
            d = d.with_help(format!(
                "{} is a reserved keyword; use another name or quote it as '{}'",
                k.describe(),
                self.text_of(self.tok(self.pos))
            ));
        }
        self.report(d);
        Fail
    }

    /// "expected X, found Y" where X includes a closing bracket: also point at the bracket
    /// that is still open.
    fn error_unclosed(&mut self, close: Tok, what: &str) -> Fail {
        let found = self.found();
        let mut d = Diagnostic::error(self.cur_span(), format!("expected {what}, found {found}"))
            .with_label(format!("expected {what}"));
        if let Some(open) = self.unclosed_opener(close) {
            d = d.with_secondary(
                self.span_of(open),
                format!("unclosed {} opened here", open.kind.describe()),
            );
        }
        self.report(d);
        Fail
    }

    /// The innermost opening bracket before the current token that is not closed yet, if it
    /// is the opener for `close` (scans back a bounded number of tokens).
    fn unclosed_opener(&self, close: Tok) -> Option<Token> {
        let open = match close {
            Tok::RParen => Tok::LParen,
            Tok::RBracket => Tok::LBracket,
            Tok::RBrace => Tok::LBrace,
            _ => return None,
        };
        let mut depth = 0u32;
        for i in (self.pos.saturating_sub(10_000)..self.pos).rev() {
            let t = self.tok(i);
            match t.kind {
                Tok::RParen | Tok::RBracket | Tok::RBrace => depth += 1,
                Tok::LParen | Tok::LBracket | Tok::LBrace if depth > 0 => depth -= 1,
                Tok::LParen | Tok::LBracket | Tok::LBrace => {
                    return (t.kind == open).then_some(t);
                }
                _ => {}
            }
        }
        None
    }

    fn expect(&mut self, k: Tok) -> PResult<Token> {
        if self.at(k) {
            return Ok(self.bump());
        }
        if self.pos > 0 && self.at_line_start() && !self.at(Tok::Eof) {
            // e.g. a missing `loop` or `then` at the end of a line: point at the line end.
            let what = k.describe();
            let found = self.found();
            let prev = self.tok(self.pos - 1);
            let d = Diagnostic::error(
                Span::new(self.file, prev.end, prev.end),
                format!("expected {what}, found {found}"),
            )
            .with_label(format!("expected {what} here"))
            .with_secondary(self.cur_span(), format!("found {found}"));
            self.report(d);
            return Err(Fail);
        }
        Err(self.error_expected(k.describe()))
    }

    /// Expect a terminating `;` with a hint pointing after the previous token.
    fn expect_semi(&mut self, after: &str) -> PResult<()> {
        if self.eat(Tok::Semi) {
            return Ok(());
        }
        let found = self.found();
        let cur = self.tok(self.pos);
        let prev = self.tok(self.pos.saturating_sub(1));
        let gap = self
            .text
            .get(prev.end as usize..cur.start as usize)
            .unwrap_or("");
        let mut d = Diagnostic::error(self.cur_span(), format!("expected `;`, found {found}"))
            .with_help(format!("terminate the {after} with `;`"));
        if self.pos > 0 && gap.contains('\n') {
            // The `;` is missing at the end of a line: point there, not at the next line, and
            // carry on as if it were present (the next line is most likely fine).
            d.span = Span::new(self.file, prev.end, prev.end);
            d = d
                .with_label("expected `;` here")
                .with_secondary(self.cur_span(), format!("found {found}"));
            self.report(d);
            return Ok(());
        }
        d = d.with_label("expected `;` before this");
        self.report(d);
        Err(Fail)
    }

    /// At `end if` / `end for` / `end when` / `end while`?
    fn at_block_end(&self) -> bool {
        self.at(Tok::End) && matches!(self.peek_at(1), Tok::If | Tok::For | Tok::When | Tok::While)
    }

    /// At an `end for` (etc.) that closes no open block: report it and skip `end for ;`.
    /// Returns whether it did so.
    fn skip_stray_block_end(&mut self) -> bool {
        if !self.at_block_end() || self.open_blocks.contains(&self.peek_at(1)) {
            return false;
        }
        let kw = self.peek_at(1).describe().trim_matches('`');
        let start = self.pos;
        let d = Diagnostic::error(
            self.span_of(self.tok(start))
                .to(self.span_of(self.tok(start + 1))),
            format!("`end {kw}` without a matching `{kw}`"),
        )
        .with_label("nothing to close here")
        .with_help(format!(
            "check the opening `{kw}` line above (a missing `then` or `loop` makes the parser \
             skip it), or remove this line"
        ));
        self.report(d);
        self.bump();
        self.bump();
        self.eat(Tok::Semi);
        true
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            let d = Diagnostic::error(self.cur_span(), "nesting too deep")
                .with_label("nesting limit reached here")
                .with_note(format!(
                    "the parser accepts at most {MAX_DEPTH} nested levels"
                ))
                .with_help("split the expression or class into smaller parts");
            self.report(d);
            self.depth -= 1;
            return Err(Fail);
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Skip to a recovery point: just after a `;` outside brackets, or before a token that
    /// starts a new section or ends the enclosing construct.
    ///
    /// Only `[ ]` nesting is tracked: `;` separates matrix rows there, but cannot occur inside
    /// `( )` or `{ }`, so an unclosed parenthesis must not swallow the rest of the file.
    fn synchronize(&mut self) {
        let mut depth = 0i32;
        loop {
            match self.peek() {
                Tok::Eof => return,
                Tok::LBracket => depth += 1,
                Tok::RBracket => depth = (depth - 1).max(0),
                Tok::Semi if depth == 0 => {
                    self.bump();
                    return;
                }
                Tok::End
                | Tok::Equation
                | Tok::Algorithm
                | Tok::Public
                | Tok::Protected
                | Tok::External
                    if depth == 0 =>
                {
                    return
                }
                Tok::Initial
                    if depth == 0 && matches!(self.peek_at(1), Tok::Equation | Tok::Algorithm) =>
                {
                    return
                }
                _ => {}
            }
            self.bump();
        }
    }

    /// Recovery between top-level classes: skip to just after the next `;`, or to a class
    /// keyword that starts a line (the next class definition).
    fn synchronize_top_level(&mut self) {
        let mut first = true;
        loop {
            match self.peek() {
                Tok::Eof => return,
                Tok::Semi => {
                    self.bump();
                    return;
                }
                _ if !first
                    && self.at_line_start()
                    && (self.at_class_prefix() || self.at(Tok::Final)) =>
                {
                    return
                }
                _ => {}
            }
            first = false;
            self.bump();
        }
    }

    /// Is the current token the first on its line?
    fn at_line_start(&self) -> bool {
        if self.pos == 0 {
            return true;
        }
        let prev = self.tok(self.pos - 1);
        let cur = self.tok(self.pos);
        self.text
            .get(prev.end as usize..cur.start as usize)
            .is_some_and(|g| g.contains('\n'))
    }
}
