//! Lexer (work in progress).
