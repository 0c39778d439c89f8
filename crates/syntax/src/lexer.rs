//! Byte-based lexer: turns a whole file into a vector of compact tokens up front.
//!
//! Tokens store only their kind and byte range; the parser slices the source for identifier,
//! number and string text. Lexical errors (unterminated strings or comments, stray characters,
//! bad escapes) become diagnostics and the lexer always continues, so it never fails and never
//! panics. All multi-byte UTF-8 sequences can only occur inside strings, quoted identifiers and
//! comments; elsewhere they are reported as unexpected characters.

use crate::diag::Diagnostic;
use crate::source::{FileId, Span};

/// Token kinds. Keywords have their own kinds so the parser can match on them cheaply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Tok {
    Ident,
    UInt,
    UReal,
    String,
    // punctuation
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Semi,
    Dot,
    Colon,
    Eq,
    Assign,
    Plus,
    Minus,
    Star,
    Slash,
    Caret,
    DotPlus,
    DotMinus,
    DotStar,
    DotSlash,
    DotCaret,
    Lt,
    Le,
    Gt,
    Ge,
    EqEq,
    Ne,
    // keywords
    Algorithm,
    And,
    Annotation,
    Block,
    Break,
    Class,
    Connect,
    Connector,
    Constant,
    Constrainedby,
    Der,
    Discrete,
    Each,
    Else,
    Elseif,
    Elsewhen,
    Encapsulated,
    End,
    Enumeration,
    Equation,
    Expandable,
    Extends,
    External,
    False,
    Final,
    Flow,
    For,
    Function,
    If,
    Import,
    Impure,
    In,
    Initial,
    Inner,
    Input,
    Loop,
    Model,
    Not,
    Operator,
    Or,
    Outer,
    Output,
    Package,
    Parameter,
    Partial,
    Protected,
    Public,
    Pure,
    Record,
    Redeclare,
    Replaceable,
    Return,
    Stream,
    Then,
    True,
    Type,
    When,
    While,
    Within,
    /// A character that starts no token (already reported).
    Unknown,
    Eof,
}

/// One token: kind plus byte range in the file.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Token {
    pub kind: Tok,
    pub start: u32,
    pub end: u32,
}

fn keyword(word: &[u8]) -> Option<Tok> {
    use Tok::*;
    Some(match word {
        b"algorithm" => Algorithm,
        b"and" => And,
        b"annotation" => Annotation,
        b"block" => Block,
        b"break" => Break,
        b"class" => Class,
        b"connect" => Connect,
        b"connector" => Connector,
        b"constant" => Constant,
        b"constrainedby" => Constrainedby,
        b"der" => Der,
        b"discrete" => Discrete,
        b"each" => Each,
        b"else" => Else,
        b"elseif" => Elseif,
        b"elsewhen" => Elsewhen,
        b"encapsulated" => Encapsulated,
        b"end" => End,
        b"enumeration" => Enumeration,
        b"equation" => Equation,
        b"expandable" => Expandable,
        b"extends" => Extends,
        b"external" => External,
        b"false" => False,
        b"final" => Final,
        b"flow" => Flow,
        b"for" => For,
        b"function" => Function,
        b"if" => If,
        b"import" => Import,
        b"impure" => Impure,
        b"in" => In,
        b"initial" => Initial,
        b"inner" => Inner,
        b"input" => Input,
        b"loop" => Loop,
        b"model" => Model,
        b"not" => Not,
        b"operator" => Operator,
        b"or" => Or,
        b"outer" => Outer,
        b"output" => Output,
        b"package" => Package,
        b"parameter" => Parameter,
        b"partial" => Partial,
        b"protected" => Protected,
        b"public" => Public,
        b"pure" => Pure,
        b"record" => Record,
        b"redeclare" => Redeclare,
        b"replaceable" => Replaceable,
        b"return" => Return,
        b"stream" => Stream,
        b"then" => Then,
        b"true" => True,
        b"type" => Type,
        b"when" => When,
        b"while" => While,
        b"within" => Within,
        _ => return None,
    })
}

impl Tok {
    /// How the token kind is shown in "expected ..." messages.
    pub(crate) fn describe(self) -> &'static str {
        use Tok::*;
        match self {
            Ident => "identifier",
            UInt => "integer literal",
            UReal => "real literal",
            String => "string literal",
            LParen => "`(`",
            RParen => "`)`",
            LBracket => "`[`",
            RBracket => "`]`",
            LBrace => "`{`",
            RBrace => "`}`",
            Comma => "`,`",
            Semi => "`;`",
            Dot => "`.`",
            Colon => "`:`",
            Eq => "`=`",
            Assign => "`:=`",
            Plus => "`+`",
            Minus => "`-`",
            Star => "`*`",
            Slash => "`/`",
            Caret => "`^`",
            DotPlus => "`.+`",
            DotMinus => "`.-`",
            DotStar => "`.*`",
            DotSlash => "`./`",
            DotCaret => "`.^`",
            Lt => "`<`",
            Le => "`<=`",
            Gt => "`>`",
            Ge => "`>=`",
            EqEq => "`==`",
            Ne => "`<>`",
            Algorithm => "`algorithm`",
            And => "`and`",
            Annotation => "`annotation`",
            Block => "`block`",
            Break => "`break`",
            Class => "`class`",
            Connect => "`connect`",
            Connector => "`connector`",
            Constant => "`constant`",
            Constrainedby => "`constrainedby`",
            Der => "`der`",
            Discrete => "`discrete`",
            Each => "`each`",
            Else => "`else`",
            Elseif => "`elseif`",
            Elsewhen => "`elsewhen`",
            Encapsulated => "`encapsulated`",
            End => "`end`",
            Enumeration => "`enumeration`",
            Equation => "`equation`",
            Expandable => "`expandable`",
            Extends => "`extends`",
            External => "`external`",
            False => "`false`",
            Final => "`final`",
            Flow => "`flow`",
            For => "`for`",
            Function => "`function`",
            If => "`if`",
            Import => "`import`",
            Impure => "`impure`",
            In => "`in`",
            Initial => "`initial`",
            Inner => "`inner`",
            Input => "`input`",
            Loop => "`loop`",
            Model => "`model`",
            Not => "`not`",
            Operator => "`operator`",
            Or => "`or`",
            Outer => "`outer`",
            Output => "`output`",
            Package => "`package`",
            Parameter => "`parameter`",
            Partial => "`partial`",
            Protected => "`protected`",
            Public => "`public`",
            Pure => "`pure`",
            Record => "`record`",
            Redeclare => "`redeclare`",
            Replaceable => "`replaceable`",
            Return => "`return`",
            Stream => "`stream`",
            Then => "`then`",
            True => "`true`",
            Type => "`type`",
            When => "`when`",
            While => "`while`",
            Within => "`within`",
            Unknown => "unexpected character",
            Eof => "end of file",
        }
    }

    /// Whether the token is a keyword (for "keyword cannot be used as a name" hints).
    pub(crate) fn is_keyword(self) -> bool {
        (self as u8) >= (Tok::Algorithm as u8) && (self as u8) <= (Tok::Within as u8)
    }
}

/// Lex `text` completely. The last token is always [`Tok::Eof`].
#[cfg(test)]
pub(crate) fn lex(file: FileId, text: &str) -> (Vec<Token>, Vec<Diagnostic>) {
    lex_into(file, text, Vec::new())
}

/// Lex into a reused buffer (cleared first): parsing many files on one thread then needs no
/// fresh large allocation per file.
pub(crate) fn lex_into(
    file: FileId,
    text: &str,
    mut tokens: Vec<Token>,
) -> (Vec<Token>, Vec<Diagnostic>) {
    tokens.clear();
    tokens.reserve(text.len() / 8 + 16);
    let mut lx = Lexer {
        file,
        bytes: text.as_bytes(),
        text,
        pos: 0,
        tokens,
        diags: Vec::new(),
    };
    lx.run();
    (lx.tokens, lx.diags)
}

struct Lexer<'a> {
    file: FileId,
    bytes: &'a [u8],
    text: &'a str,
    pos: usize,
    tokens: Vec<Token>,
    diags: Vec<Diagnostic>,
}

/// Stop reporting lexical errors after this many (the parser adds its own).
const MAX_LEX_ERRORS: usize = 50;

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> u8 {
        self.bytes.get(self.pos + ahead).copied().unwrap_or(0)
    }

    fn span(&self, start: usize, end: usize) -> Span {
        Span::new(self.file, start as u32, end as u32)
    }

    fn error(&mut self, d: Diagnostic) {
        if self.diags.len() < MAX_LEX_ERRORS {
            self.diags.push(d);
        }
    }

    fn push(&mut self, kind: Tok, start: usize) {
        self.tokens.push(Token {
            kind,
            start: start as u32,
            end: self.pos as u32,
        });
    }

    fn run(&mut self) {
        // A UTF-8 byte order mark at the start of a file is ignored.
        if self.bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
            self.pos = 3;
        }
        loop {
            self.skip_trivia();
            let start = self.pos;
            let Some(&b) = self.bytes.get(self.pos) else {
                self.push(Tok::Eof, start);
                return;
            };
            match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'_' => self.ident_or_keyword(),
                b'0'..=b'9' => self.number(),
                b'"' => self.string(),
                b'\'' => self.quoted_ident(),
                _ => self.punct(b),
            }
        }
    }

    /// Skip whitespace and comments.
    fn skip_trivia(&mut self) {
        loop {
            match self.peek(0) {
                b' ' | b'\t' | b'\n' | b'\r' | 0x0C | 0x0B => self.pos += 1,
                b'/' if self.peek(1) == b'/' => {
                    while self.pos < self.bytes.len() && self.bytes[self.pos] != b'\n' {
                        self.pos += 1;
                    }
                }
                b'/' if self.peek(1) == b'*' => self.block_comment(),
                _ => return,
            }
        }
    }

    fn block_comment(&mut self) {
        let start = self.pos;
        self.pos += 2;
        loop {
            match self.bytes.get(self.pos) {
                None => {
                    let d = Diagnostic::error(self.span(start, start + 2), "unterminated comment")
                        .with_label("this `/*` comment is never closed")
                        .with_help("close the comment with `*/`");
                    self.error(d);
                    return;
                }
                Some(b'*') if self.peek(1) == b'/' => {
                    self.pos += 2;
                    return;
                }
                Some(_) => self.pos += 1,
            }
        }
    }

    fn ident_or_keyword(&mut self) {
        let start = self.pos;
        while matches!(self.peek(0), b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_') {
            self.pos += 1;
        }
        let kind = keyword(&self.bytes[start..self.pos]).unwrap_or(Tok::Ident);
        self.push(kind, start);
    }

    fn digits(&mut self) -> usize {
        let s = self.pos;
        while self.peek(0).is_ascii_digit() {
            self.pos += 1;
        }
        self.pos - s
    }

    /// `UNSIGNED-INTEGER` or `UNSIGNED-REAL`: `1`, `1.`, `1.5`, `1e3`, `1.5E-3`.
    fn number(&mut self) {
        let start = self.pos;
        self.digits();
        let mut real = false;
        if self.peek(0) == b'.' {
            // Longest match, as the specification requires: `12.^a` is `12. ^ a`, not
            // `12 .^ a` (a space after the literal selects the element-wise operator).
            real = true;
            self.pos += 1;
            self.digits();
        }
        if matches!(self.peek(0), b'e' | b'E') {
            let save = self.pos;
            self.pos += 1;
            if matches!(self.peek(0), b'+' | b'-') {
                self.pos += 1;
            }
            if self.digits() == 0 {
                let d = Diagnostic::error(self.span(start, self.pos), "malformed exponent")
                    .with_label("exponent has no digits")
                    .with_help("write the exponent as e.g. `1e-3` or `2.5E4`");
                self.error(d);
                // Keep the consumed letters out of the number so the token stays parseable.
                self.pos = save;
            } else {
                real = true;
            }
        }
        self.push(if real { Tok::UReal } else { Tok::UInt }, start);
    }

    fn string(&mut self) {
        let start = self.pos;
        self.pos += 1;
        loop {
            match self.bytes.get(self.pos) {
                None => {
                    let d = Diagnostic::error(self.span(start, start + 1), "unterminated string")
                        .with_label("this string is never closed")
                        .with_help("add the closing `\"`");
                    self.error(d);
                    // Strings may span lines, but one that never ends most likely lacks its
                    // quote on this line: end it there so the rest of the file is still lexed.
                    self.pos = self.bytes[start..]
                        .iter()
                        .position(|&b| b == b'\n')
                        .map_or(self.bytes.len(), |i| start + i);
                    break;
                }
                Some(b'"') => {
                    self.pos += 1;
                    break;
                }
                Some(b'\\') => self.escape(),
                Some(_) => self.pos += 1,
            }
        }
        self.push(Tok::String, start);
    }

    /// Validate one escape sequence starting at a backslash.
    fn escape(&mut self) {
        let at = self.pos;
        self.pos += 1;
        match self.peek(0) {
            b'\'' | b'"' | b'?' | b'\\' | b'a' | b'b' | b'f' | b'n' | b'r' | b't' | b'v' => {
                self.pos += 1
            }
            0 if self.pos >= self.bytes.len() => {}
            _ => {
                let end = next_char_boundary(self.text, self.pos + 1);
                let d = Diagnostic::error(self.span(at, end), "unknown escape sequence")
                    .with_label("not a Modelica escape")
                    .with_help(
                        "valid escapes are \\' \\\" \\? \\\\ \\a \\b \\f \\n \\r \\t \\v; \
                         write `\\\\` for a backslash",
                    );
                self.error(d);
            }
        }
    }

    fn quoted_ident(&mut self) {
        let start = self.pos;
        self.pos += 1;
        loop {
            match self.bytes.get(self.pos) {
                None | Some(b'\n') => {
                    let d = Diagnostic::error(
                        self.span(start, start + 1),
                        "unterminated quoted identifier",
                    )
                    .with_label("this `'` is never closed")
                    .with_help("close the quoted identifier with `'` on the same line");
                    self.error(d);
                    break;
                }
                Some(b'\'') => {
                    self.pos += 1;
                    break;
                }
                Some(b'\\') => self.escape(),
                Some(_) => self.pos += 1,
            }
        }
        self.push(Tok::Ident, start);
    }

    fn punct(&mut self, b: u8) {
        use Tok::*;
        let start = self.pos;
        let next = self.peek(1);
        let (kind, len) = match b {
            b'(' => (LParen, 1),
            b')' => (RParen, 1),
            b'[' => (LBracket, 1),
            b']' => (RBracket, 1),
            b'{' => (LBrace, 1),
            b'}' => (RBrace, 1),
            b',' => (Comma, 1),
            b';' => (Semi, 1),
            b':' if next == b'=' => (Assign, 2),
            b':' => (Colon, 1),
            b'=' if next == b'=' => (EqEq, 2),
            b'=' => (Eq, 1),
            b'+' => (Plus, 1),
            b'-' => (Minus, 1),
            b'*' => (Star, 1),
            b'/' => (Slash, 1),
            b'^' => (Caret, 1),
            b'<' if next == b'=' => (Le, 2),
            b'<' if next == b'>' => (Ne, 2),
            b'<' => (Lt, 1),
            b'>' if next == b'=' => (Ge, 2),
            b'>' => (Gt, 1),
            b'.' => match next {
                b'+' => (DotPlus, 2),
                b'-' => (DotMinus, 2),
                b'*' => (DotStar, 2),
                b'/' => (DotSlash, 2),
                b'^' => (DotCaret, 2),
                b'0'..=b'9' => return self.leading_dot_number(),
                _ => (Dot, 1),
            },
            _ => return self.unknown_char(),
        };
        self.pos += len;
        self.push(kind, start);
    }

    /// `.5`, `.5e-3`: a real literal without integer part (allowed by the UNSIGNED-REAL rule
    /// of the Modelica 3.6 grammar).
    fn leading_dot_number(&mut self) {
        let start = self.pos;
        self.pos += 1;
        self.digits();
        if matches!(self.peek(0), b'e' | b'E')
            && (self.peek(1).is_ascii_digit()
                || (matches!(self.peek(1), b'+' | b'-') && self.peek(2).is_ascii_digit()))
        {
            self.pos += 2;
            self.digits();
        }
        self.push(Tok::UReal, start);
    }

    fn unknown_char(&mut self) {
        let start = self.pos;
        let end = next_char_boundary(self.text, start + 1);
        self.pos = end;
        let ch = &self.text[start..end];
        let d = Diagnostic::error(
            self.span(start, end),
            format!("unexpected character `{}`", ch.escape_debug()),
        )
        .with_label("not part of any Modelica token")
        .with_help(
            "non-ASCII characters are only allowed in strings, quoted identifiers and comments",
        );
        self.error(d);
        self.push(Tok::Unknown, start);
    }
}

/// The first char boundary at or after `i` (clamped to the text length).
fn next_char_boundary(text: &str, mut i: usize) -> usize {
    while i < text.len() && !text.is_char_boundary(i) {
        i += 1;
    }
    i.min(text.len())
}

/// Decode the escapes of a string or quoted-identifier body (without the quotes).
pub(crate) fn decode_escapes(body: &str) -> String {
    if !body.contains('\\') {
        return body.to_string();
    }
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('a') => out.push('\u{07}'),
            Some('b') => out.push('\u{08}'),
            Some('f') => out.push('\u{0C}'),
            Some('v') => out.push('\u{0B}'),
            Some(other) => out.push(other), // \' \" \? \\ and (reported) unknown escapes
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<Tok> {
        lex(FileId(0), s).0.iter().map(|t| t.kind).collect()
    }

    #[test]
    fn numbers() {
        use Tok::*;
        assert_eq!(
            kinds("1 1. 1.5 1e3 1.5E-3 2e+4"),
            vec![UInt, UReal, UReal, UReal, UReal, UReal, Eof]
        );
        assert_eq!(kinds("1.*x"), vec![UReal, Star, Ident, Eof]);
        assert_eq!(kinds("1 .*x"), vec![UInt, DotStar, Ident, Eof]);
        assert_eq!(kinds("\u{feff}x"), vec![Ident, Eof]);
        let (toks, diags) = lex(FileId(0), ".5 .5e-3 a.b");
        assert_eq!(
            toks.iter().map(|t| t.kind).collect::<Vec<_>>(),
            vec![UReal, UReal, Ident, Dot, Ident, Eof]
        );
        assert!(diags.is_empty());
    }

    #[test]
    fn comments_and_strings() {
        use Tok::*;
        assert_eq!(
            kinds("a // x\n /* y \n */ b \"s\\\"t\" 'q r'"),
            vec![Ident, Ident, String, Ident, Eof]
        );
        // Block comments do not nest: the first `*/` ends the comment.
        assert_eq!(kinds("/* a /* b */ c */"), vec![Ident, Star, Slash, Eof]);
        assert_eq!(kinds("// ü ✓ /* \n x"), vec![Ident, Eof]);
        let (_, d) = lex(FileId(0), "/* open");
        assert_eq!(d[0].message, "unterminated comment");
        let (_, d) = lex(FileId(0), "\"open");
        assert_eq!(d[0].message, "unterminated string");
        let (_, d) = lex(FileId(0), "\"bad \\q\"");
        assert_eq!(d[0].message, "unknown escape sequence");
    }

    #[test]
    fn operators() {
        use Tok::*;
        assert_eq!(
            kinds(":= : == = <> <= >= < > .+ .- .* ./ .^ ."),
            vec![
                Assign, Colon, EqEq, Eq, Ne, Le, Ge, Lt, Gt, DotPlus, DotMinus, DotStar, DotSlash,
                DotCaret, Dot, Eof
            ]
        );
    }

    #[test]
    fn escapes_decode() {
        assert_eq!(
            decode_escapes(r#"a\n\t\"\'\?\\\a\b\f\v\r"#),
            "a\n\t\"'?\\\u{7}\u{8}\u{c}\u{b}\r"
        );
    }

    #[test]
    fn unicode_outside_strings_is_reported() {
        let (toks, d) = lex(FileId(0), "a ä b");
        assert_eq!(
            toks.iter().map(|t| t.kind).collect::<Vec<_>>(),
            vec![Tok::Ident, Tok::Unknown, Tok::Ident, Tok::Eof]
        );
        assert!(d[0].message.contains("unexpected character"));
    }
}
