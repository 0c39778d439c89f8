//! Names, type specifiers, component references and array subscripts.

use super::*;

impl<'a> Parser<'a> {
    pub(super) fn intern(&mut self, s: &'a str) -> Arc<str> {
        if let Some(a) = self.idents.get(s) {
            return a.clone();
        }
        let a: Arc<str> = Arc::from(s);
        self.idents.insert(s, a.clone());
        a
    }

    pub(super) fn ident(&mut self) -> PResult<Ident> {
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
    pub(super) fn name(&mut self) -> PResult<Name> {
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
    pub(super) fn type_specifier(&mut self) -> PResult<Name> {
        let start = self.pos;
        let global = self.eat(Tok::Dot);
        let mut n = self.name()?;
        n.global = global;
        n.span = self.span_from(start);
        Ok(n)
    }

    /// `[.] IDENT [subs] { . IDENT [subs] }`
    pub(super) fn component_ref(&mut self) -> PResult<ComponentRef> {
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
    pub(super) fn keyword_ref(&mut self) -> ComponentRef {
        let t = self.bump();
        let name = self.intern(self.text_of(t));
        ComponentRef::simple(Ident {
            name,
            span: self.span_of(t),
        })
    }

    /// `[ subscript { , subscript } ]`
    pub(super) fn array_subscripts(&mut self) -> PResult<Vec<Subscript>> {
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
}
