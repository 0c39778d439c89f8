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
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

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
    idents: HashMap<&'a str, Arc<str>, BuildHasherDefault<FxHasher>>,
}

/// A small fast non-cryptographic hasher for the identifier interner (keys are short
/// identifiers from a trusted source file; SipHash's DoS resistance is not needed here).
#[derive(Default)]
struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
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
        if self.last_error_at == Some(self.pos) || self.fatal {
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

    // -- names --------------------------------------------------------------------------------

    fn intern(&mut self, s: &'a str) -> Arc<str> {
        if let Some(a) = self.idents.get(s) {
            return a.clone();
        }
        let a: Arc<str> = Arc::from(s);
        self.idents.insert(s, a.clone());
        a
    }

    fn ident(&mut self) -> PResult<Ident> {
        if !self.at(Tok::Ident) {
            return Err(self.error_expected("identifier"));
        }
        let t = self.bump();
        let name = self.intern(self.text_of(t));
        Ok(Ident {
            name,
            span: self.span_of(t),
        })
    }

    /// `IDENT { . IDENT }`
    fn name(&mut self) -> PResult<Name> {
        let start = self.pos;
        let mut parts = vec![self.ident()?];
        while self.at(Tok::Dot) && self.peek_at(1) == Tok::Ident {
            self.bump();
            parts.push(self.ident()?);
        }
        Ok(Name {
            global: false,
            parts,
            span: self.span_from(start),
        })
    }

    /// `[.] name`
    fn type_specifier(&mut self) -> PResult<Name> {
        let start = self.pos;
        let global = self.eat(Tok::Dot);
        let mut n = self.name()?;
        n.global = global;
        n.span = self.span_from(start);
        Ok(n)
    }

    /// `[.] IDENT [subs] { . IDENT [subs] }`
    fn component_ref(&mut self) -> PResult<ComponentRef> {
        let start = self.pos;
        let global = self.eat(Tok::Dot);
        let mut parts = Vec::new();
        loop {
            let name = self.ident()?;
            let subscripts = if self.at(Tok::LBracket) {
                self.array_subscripts()?
            } else {
                Vec::new()
            };
            parts.push(RefPart { name, subscripts });
            if self.at(Tok::Dot) && self.peek_at(1) == Tok::Ident {
                self.bump();
            } else {
                break;
            }
        }
        Ok(ComponentRef {
            global,
            parts,
            span: self.span_from(start),
        })
    }

    /// A one-part reference for the keywords `der`, `initial`, `pure` used as functions.
    fn keyword_ref(&mut self) -> ComponentRef {
        let t = self.bump();
        let name = self.intern(self.text_of(t));
        ComponentRef::simple(Ident {
            name,
            span: self.span_of(t),
        })
    }

    /// `[ subscript { , subscript } ]`
    fn array_subscripts(&mut self) -> PResult<Vec<Subscript>> {
        self.expect(Tok::LBracket)?;
        let mut subs = Vec::new();
        loop {
            if self.at(Tok::Colon) {
                let t = self.bump();
                subs.push(Subscript::Colon(self.span_of(t)));
            } else {
                subs.push(Subscript::Expr(self.expression()?));
            }
            if !self.eat(Tok::Comma) {
                break;
            }
        }
        if !self.at(Tok::RBracket) {
            return Err(self.error_unclosed(Tok::RBracket, "`,` or `]`"));
        }
        self.bump();
        Ok(subs)
    }

    // -- stored definition and classes ---------------------------------------------------------

    fn stored_definition(&mut self) -> StoredDefinition {
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

    fn stored_class(&mut self) -> PResult<StoredClass> {
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
    fn at_class_prefix(&self) -> bool {
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
    fn class_prefixes(&mut self) -> PResult<ClassPrefixes> {
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

    fn class_definition(&mut self) -> PResult<ClassDef> {
        self.enter()?;
        let r = self.class_definition_inner();
        self.leave();
        r
    }

    fn class_definition_inner(&mut self) -> PResult<ClassDef> {
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
    fn end_name(&mut self, name: &Ident) -> PResult<Ident> {
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
    fn short_class_specifier(&mut self) -> PResult<ClassSpecifier> {
        if self.eat(Tok::Enumeration) {
            self.expect(Tok::LParen)?;
            let literals = if self.eat(Tok::Colon) {
                EnumLiterals::Colon
            } else {
                let mut lits = Vec::new();
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
            return Ok(ClassSpecifier::Enumeration {
                literals,
                description,
            });
        }
        if self.eat(Tok::Der) {
            self.expect(Tok::LParen)?;
            let function = self.type_specifier()?;
            self.expect(Tok::Comma)?;
            let mut wrt = vec![self.ident()?];
            while self.eat(Tok::Comma) {
                wrt.push(self.ident()?);
            }
            self.expect(Tok::RParen)?;
            let description = self.description()?;
            return Ok(ClassSpecifier::Der {
                function,
                wrt,
                description,
            });
        }
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

    fn causality(&mut self) -> Option<Causality> {
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

    // -- composition ------------------------------------------------------------------------

    fn composition(&mut self) -> PResult<Composition> {
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
                Tok::Public | Tok::Protected => {
                    let visibility = if self.bump().kind == Tok::Public {
                        Visibility::Public
                    } else {
                        Visibility::Protected
                    };
                    let elements = self.element_list();
                    comp.sections.push(Section::Elements {
                        visibility,
                        elements,
                        span: self.span_from(start),
                    });
                }
                Tok::Initial if self.peek_at(1) == Tok::Equation => {
                    self.bump();
                    self.bump();
                    let equations = self.equation_list(&[]);
                    comp.sections.push(Section::Equations {
                        initial: true,
                        equations,
                        span: self.span_from(start),
                    });
                }
                Tok::Equation => {
                    self.bump();
                    let equations = self.equation_list(&[]);
                    comp.sections.push(Section::Equations {
                        initial: false,
                        equations,
                        span: self.span_from(start),
                    });
                }
                Tok::Initial if self.peek_at(1) == Tok::Algorithm => {
                    self.bump();
                    self.bump();
                    let statements = self.statement_list(&[]);
                    comp.sections.push(Section::Algorithm {
                        initial: true,
                        statements,
                        span: self.span_from(start),
                    });
                }
                Tok::Algorithm => {
                    self.bump();
                    let statements = self.statement_list(&[]);
                    comp.sections.push(Section::Algorithm {
                        initial: false,
                        statements,
                        span: self.span_from(start),
                    });
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
                    let d = Diagnostic::error(
                        self.cur_span(),
                        format!(
                            "expected an element, section or `end`, found {}",
                            self.found()
                        ),
                    )
                    .with_label("unexpected here")
                    .with_help(
                        "the class annotation and the external clause must come last, just \
                         before `end`",
                    );
                    self.report(d);
                    // Parse what follows as elements so that one misplaced annotation gives
                    // one error rather than one per following element.
                    let elements = self.element_list();
                    comp.sections.push(Section::Elements {
                        visibility: Visibility::Public,
                        elements,
                        span: self.span_from(start),
                    });
                }
            }
            if self.pos == start {
                self.bump();
            }
        }
    }

    /// The grammar allows one class annotation at the end; several (seen in old libraries) are
    /// merged into one so no information is lost.
    fn add_class_annotation(&mut self, comp: &mut Composition, a: Annotation) {
        match &mut comp.annotation {
            Some(existing) => {
                existing.modification.args.extend(a.modification.args);
                existing.span = existing.span.to(a.span);
            }
            None => comp.annotation = Some(a),
        }
    }

    /// `{ element ; }` until a section keyword, `end`, `annotation` or `external`.
    fn element_list(&mut self) -> Vec<Element> {
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

    fn external_clause(&mut self) -> PResult<External> {
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
    fn external_call(&mut self) -> PResult<ExternalCall> {
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

    // -- elements ---------------------------------------------------------------------------

    fn element(&mut self) -> PResult<Element> {
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

    fn at_component_start(&self) -> bool {
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
    fn constraining_if(
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

    fn import_clause(&mut self) -> PResult<ImportClause> {
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

    fn extends_clause(&mut self) -> PResult<ExtendsClause> {
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

    fn type_prefixes(&mut self) -> TypePrefixes {
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
    fn component_clause(&mut self, single: bool) -> PResult<ComponentClause> {
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

    fn component_declaration(&mut self, single: bool) -> PResult<ComponentDecl> {
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

    // -- modifications ------------------------------------------------------------------------

    /// `[class-modification] [= expr]` or `:= expr`; `None` if neither is present.
    fn modification_opt(&mut self) -> PResult<Option<Modification>> {
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
    fn class_modification(&mut self) -> PResult<ClassModification> {
        self.class_modification_with(false)
    }

    /// A class modification; with `inheritance`, the class-or-inheritance-modification of an
    /// extends clause, which may also hold `break connect(a, b)` and `break name`.
    fn class_modification_with(&mut self, inheritance: bool) -> PResult<ClassModification> {
        self.enter()?;
        let r = self.class_modification_inner(inheritance);
        self.leave();
        r
    }

    fn class_modification_inner(&mut self, inheritance: bool) -> PResult<ClassModification> {
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
    fn inheritance_break(&mut self, allowed: bool) -> PResult<Argument> {
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

    fn argument(&mut self) -> PResult<Argument> {
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

    // -- descriptions and annotations ---------------------------------------------------------

    fn string_lit(&mut self) -> String {
        let t = self.bump();
        let raw = self.text_of(t);
        let body = raw
            .strip_prefix('"')
            .map(|s| s.strip_suffix('"').unwrap_or(s))
            .unwrap_or(raw);
        decode_escapes(body)
    }

    /// `[STRING { + STRING }]`
    fn string_concat(&mut self) -> PResult<Vec<String>> {
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
    fn description(&mut self) -> PResult<Description> {
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
    fn description_strings_only(&mut self) -> PResult<Description> {
        Ok(Description {
            strings: self.string_concat()?,
            annotation: None,
        })
    }

    fn annotation(&mut self) -> PResult<Annotation> {
        let start = self.pos;
        self.expect(Tok::Annotation)?;
        let modification = self.class_modification()?;
        Ok(Annotation {
            modification,
            span: self.span_from(start),
        })
    }

    // -- equations ----------------------------------------------------------------------------

    /// `{ some-equation ; }` until a section keyword, `end`, or one of `stops`.
    fn equation_list(&mut self, stops: &[Tok]) -> Vec<Equation> {
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
    fn at_section_end(&self) -> bool {
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

    fn equation(&mut self) -> PResult<Equation> {
        self.enter()?;
        let block = self.open_block();
        let r = self.equation_inner();
        self.close_block(block);
        self.leave();
        r
    }

    /// Record that a block (`if`, `for`, `when`, `while`) starts at the current token.
    fn open_block(&mut self) -> bool {
        let k = self.peek();
        let block = matches!(k, Tok::If | Tok::For | Tok::When | Tok::While);
        if block {
            self.open_blocks.push(k);
        }
        block
    }

    fn close_block(&mut self, block: bool) {
        if block {
            self.open_blocks.pop();
        }
    }

    fn equation_inner(&mut self) -> PResult<Equation> {
        let start = self.pos;
        let kind = match self.peek() {
            Tok::If => {
                self.bump();
                let mut branches = Vec::new();
                let cond = self.expression()?;
                self.expect(Tok::Then)?;
                let body = self.equation_list(&[Tok::Elseif, Tok::Else]);
                branches.push((cond, body));
                let mut else_branch = Vec::new();
                loop {
                    if self.eat(Tok::Elseif) {
                        let cond = self.expression()?;
                        self.expect(Tok::Then)?;
                        let body = self.equation_list(&[Tok::Elseif, Tok::Else]);
                        branches.push((cond, body));
                    } else if self.eat(Tok::Else) {
                        else_branch = self.equation_list(&[]);
                        break;
                    } else {
                        break;
                    }
                }
                self.end_of(Tok::If)?;
                EquationKind::If {
                    branches,
                    else_branch,
                }
            }
            Tok::For => {
                self.bump();
                let indices = self.for_indices()?;
                self.expect(Tok::Loop)?;
                let body = self.equation_list(&[]);
                self.end_of(Tok::For)?;
                EquationKind::For { indices, body }
            }
            Tok::When => {
                self.bump();
                let mut branches = Vec::new();
                let cond = self.expression()?;
                self.expect(Tok::Then)?;
                branches.push((cond, self.equation_list(&[Tok::Elsewhen])));
                while self.eat(Tok::Elsewhen) {
                    let cond = self.expression()?;
                    self.expect(Tok::Then)?;
                    branches.push((cond, self.equation_list(&[Tok::Elsewhen])));
                }
                self.end_of(Tok::When)?;
                EquationKind::When { branches }
            }
            Tok::Connect => {
                self.bump();
                self.expect(Tok::LParen)?;
                let lhs = self.component_ref()?;
                self.expect(Tok::Comma)?;
                let rhs = self.component_ref()?;
                self.expect(Tok::RParen)?;
                EquationKind::Connect { lhs, rhs }
            }
            _ => {
                let lhs = self.simple_expression()?;
                if self.eat(Tok::Eq) {
                    let rhs = self.expression()?;
                    EquationKind::Simple { lhs, rhs }
                } else {
                    match lhs.kind {
                        ExprKind::Call { function, args } => EquationKind::Call { function, args },
                        _ => {
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
                            let d = Diagnostic::error(
                                self.cur_span(),
                                format!("expected `=`, found {found}"),
                            )
                            .with_label("expected `=` in equation")
                            .with_help(help);
                            self.report(d);
                            return Err(Fail);
                        }
                    }
                }
            }
        };
        let description = self.description()?;
        Ok(Equation {
            kind,
            description,
            span: self.span_from(start),
        })
    }

    /// `end if`, `end for`, `end when`, `end while`.
    fn end_of(&mut self, k: Tok) -> PResult<()> {
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

    fn for_indices(&mut self) -> PResult<Vec<ForIndex>> {
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

    // -- statements ---------------------------------------------------------------------------

    fn statement_list(&mut self, stops: &[Tok]) -> Vec<Statement> {
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

    fn statement(&mut self) -> PResult<Statement> {
        self.enter()?;
        let block = self.open_block();
        let r = self.statement_inner();
        self.close_block(block);
        self.leave();
        r
    }

    fn statement_inner(&mut self) -> PResult<Statement> {
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
                self.bump();
                let mut branches = Vec::new();
                let cond = self.expression()?;
                self.expect(Tok::Then)?;
                branches.push((cond, self.statement_list(&[Tok::Elseif, Tok::Else])));
                let mut else_branch = Vec::new();
                loop {
                    if self.eat(Tok::Elseif) {
                        let cond = self.expression()?;
                        self.expect(Tok::Then)?;
                        branches.push((cond, self.statement_list(&[Tok::Elseif, Tok::Else])));
                    } else if self.eat(Tok::Else) {
                        else_branch = self.statement_list(&[]);
                        break;
                    } else {
                        break;
                    }
                }
                self.end_of(Tok::If)?;
                StatementKind::If {
                    branches,
                    else_branch,
                }
            }
            Tok::For => {
                self.bump();
                let indices = self.for_indices()?;
                self.expect(Tok::Loop)?;
                let body = self.statement_list(&[]);
                self.end_of(Tok::For)?;
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
            Tok::When => {
                self.bump();
                let mut branches = Vec::new();
                let cond = self.expression()?;
                self.expect(Tok::Then)?;
                branches.push((cond, self.statement_list(&[Tok::Elsewhen])));
                while self.eat(Tok::Elsewhen) {
                    let cond = self.expression()?;
                    self.expect(Tok::Then)?;
                    branches.push((cond, self.statement_list(&[Tok::Elsewhen])));
                }
                self.end_of(Tok::When)?;
                StatementKind::When { branches }
            }
            Tok::LParen => {
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
                StatementKind::TupleAssign { targets, value }
            }
            Tok::Ident | Tok::Dot | Tok::Der | Tok::Initial | Tok::Pure => {
                let function = if matches!(self.peek(), Tok::Ident | Tok::Dot) {
                    self.component_ref()?
                } else {
                    self.keyword_ref()
                };
                if self.at(Tok::LParen) {
                    let args = self.function_call_args()?;
                    StatementKind::Call { function, args }
                } else if self.eat(Tok::Assign) {
                    let value = self.expression()?;
                    StatementKind::Assign {
                        target: function,
                        value,
                    }
                } else {
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
                    return Err(Fail);
                }
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

    // -- expressions --------------------------------------------------------------------------

    /// `expression`: an if-expression or a simple expression.
    fn expression(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.expression_inner();
        self.leave();
        r
    }

    fn expression_inner(&mut self) -> PResult<Expr> {
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
    fn simple_expression(&mut self) -> PResult<Expr> {
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

    fn binary(&mut self, op: BinaryOp, lhs: Expr, rhs: Expr) -> PResult<Expr> {
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

    fn logical_expression(&mut self) -> PResult<Expr> {
        let mut lhs = self.logical_term()?;
        while self.eat(Tok::Or) {
            let rhs = self.logical_term()?;
            lhs = self.binary(BinaryOp::Or, lhs, rhs)?;
        }
        Ok(lhs)
    }

    fn logical_term(&mut self) -> PResult<Expr> {
        let mut lhs = self.logical_factor()?;
        while self.eat(Tok::And) {
            let rhs = self.logical_factor()?;
            lhs = self.binary(BinaryOp::And, lhs, rhs)?;
        }
        Ok(lhs)
    }

    /// `[not] relation`
    fn logical_factor(&mut self) -> PResult<Expr> {
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
    fn relation(&mut self) -> PResult<Expr> {
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

    fn relational_op(&self) -> Option<BinaryOp> {
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

    fn add_op(&self) -> Option<BinaryOp> {
        Some(match self.peek() {
            Tok::Plus => BinaryOp::Add,
            Tok::Minus => BinaryOp::Sub,
            Tok::DotPlus => BinaryOp::ElemAdd,
            Tok::DotMinus => BinaryOp::ElemSub,
            _ => return None,
        })
    }

    /// `[add-op] term { add-op term }`; a leading sign applies to the first term.
    fn arithmetic_expression(&mut self) -> PResult<Expr> {
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

    fn term(&mut self) -> PResult<Expr> {
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
    fn factor(&mut self) -> PResult<Expr> {
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

    fn primary(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.primary_inner();
        self.leave();
        r
    }

    fn primary_inner(&mut self) -> PResult<Expr> {
        let start = self.pos;
        let t = self.tok(self.pos);
        let kind = match t.kind {
            Tok::UInt => {
                self.bump();
                let text = self.text_of(t);
                match text.parse::<i64>() {
                    Ok(v) => ExprKind::Integer(v),
                    Err(_) => ExprKind::Real {
                        value: text.parse::<f64>().unwrap_or(f64::INFINITY),
                        text: Arc::from(text),
                    },
                }
            }
            Tok::UReal => {
                self.bump();
                let text = self.text_of(t);
                ExprKind::Real {
                    value: parse_real(text),
                    text: Arc::from(text),
                }
            }
            Tok::String => ExprKind::String(self.string_lit()),
            Tok::True => {
                self.bump();
                ExprKind::Bool(true)
            }
            Tok::False => {
                self.bump();
                ExprKind::Bool(false)
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
                if items.len() == 1 && items[0].is_some() {
                    if let Some(Some(mut e)) = items.pop() {
                        e.span = self.span_from(start);
                        return Ok(e);
                    }
                }
                ExprKind::Tuple(items)
            }
            Tok::LBracket => {
                self.bump();
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
                ExprKind::Matrix(rows)
            }
            Tok::LBrace => {
                self.bump();
                if self.eat(Tok::RBrace) {
                    ExprKind::Array(Vec::new())
                } else {
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
                    kind
                }
            }
            _ => return Err(self.error_expected("expression")),
        };
        Ok(Expr::new(kind, self.span_from(start)))
    }

    /// `( [expr] { , [expr] } )` — used for parenthesized expressions and tuples.
    fn output_expression_list(&mut self) -> PResult<Vec<Option<Expr>>> {
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
    fn function_call_args(&mut self) -> PResult<FunctionArgs> {
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
    fn function_argument(&mut self) -> PResult<Expr> {
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

/// Parse an unsigned real literal; Rust's float syntax covers Modelica's (`1.`, `1.e3`, `2E-4`).
fn parse_real(text: &str) -> f64 {
    if let Ok(v) = text.parse::<f64>() {
        return v;
    }
    // Defensive: the lexer only produces digit/dot/exponent spellings Rust accepts.
    format!("0{text}").parse::<f64>().unwrap_or(0.0)
}
