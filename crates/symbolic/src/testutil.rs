//! Test support: build flat models tersely from variable lists and `lhs = rhs` strings
//! parsed by a tiny expression parser (tests only; the real parser lives in moss-syntax).

use crate::model::Model;
use moss_frontend::flat::{
    self, Attributes, BinaryOp, Causality, Equation, Expr, FlatModel, Origin, ScalarType,
    StateSelect, UnaryOp, Variability, Variable,
};

pub struct ModelBuilder {
    pub flat: FlatModel,
}

fn origin(text: &str) -> Origin {
    Origin {
        span: moss_syntax::Span::DUMMY,
        instance: text.into(),
    }
}

impl Default for ModelBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl ModelBuilder {
    pub fn new() -> ModelBuilder {
        ModelBuilder {
            flat: FlatModel {
                name: "Test".into(),
                ..FlatModel::default()
            },
        }
    }

    fn add(&mut self, name: &str, ty: ScalarType, var: Variability, binding: Option<Expr>) {
        self.flat.variables.push(Variable {
            name: name.into(),
            ty,
            variability: var,
            causality: Causality::Internal,
            binding,
            attrs: Attributes::default(),
            is_flow: false,
            is_stream: false,
            is_protected: false,
            evaluate: false,
            description: String::new(),
            origin: origin(name),
        });
    }

    /// Continuous Real variables (space separated). `_unit` is ignored (readability only).
    pub fn vars(&mut self, names: &str, _unit: &str) -> &mut Self {
        for n in names.split_whitespace() {
            self.add(n, ScalarType::Real, Variability::Continuous, None);
        }
        self
    }

    pub fn discrete(&mut self, names: &str, ty: ScalarType) -> &mut Self {
        for n in names.split_whitespace() {
            self.add(n, ty.clone(), Variability::Discrete, None);
        }
        self
    }

    pub fn params(&mut self, names: &str, value: f64) -> &mut Self {
        for n in names.split_whitespace() {
            self.add(
                n,
                ScalarType::Real,
                Variability::Parameter,
                Some(Expr::Real(value)),
            );
        }
        self
    }

    pub fn param_expr(&mut self, name: &str, binding: &str) -> &mut Self {
        let b = parse(binding);
        self.add(name, ScalarType::Real, Variability::Parameter, Some(b));
        self
    }

    fn var_mut(&mut self, name: &str) -> &mut Variable {
        let Some(v) = self.flat.variables.iter_mut().find(|v| v.name == name) else {
            panic!("test builder: unknown variable {name}");
        };
        v
    }

    pub fn start(&mut self, name: &str, v: f64) -> &mut Self {
        self.var_mut(name).attrs.start = Some(Expr::Real(v));
        self
    }

    pub fn fixed(&mut self, name: &str) -> &mut Self {
        self.var_mut(name).attrs.fixed = Some(true);
        self
    }

    pub fn unfixed(&mut self, name: &str) -> &mut Self {
        self.var_mut(name).attrs.fixed = Some(false);
        self
    }

    pub fn state_select(&mut self, name: &str, s: StateSelect) -> &mut Self {
        self.var_mut(name).attrs.state_select = Some(s);
        self
    }

    pub fn eq(&mut self, text: &str) -> &mut Self {
        let e = parse_equation(text);
        self.flat.equations.push(e);
        self
    }

    pub fn init_eq(&mut self, text: &str) -> &mut Self {
        let e = parse_equation(text);
        self.flat.initial_equations.push(e);
        self
    }

    /// `when cond then body... end when` with body items `v = e` or `reinit(v, e)`.
    pub fn when(&mut self, cond: &str, body: &[&str]) -> &mut Self {
        let eqs = body.iter().map(|b| parse_equation(b)).collect();
        self.flat.equations.push(Equation::When {
            branches: vec![(parse(cond), eqs)],
            origin: origin(cond),
        });
        self
    }

    pub fn if_eq(&mut self, cond: &str, then: &[&str], else_: &[&str]) -> &mut Self {
        self.flat.equations.push(Equation::If {
            branches: vec![(
                parse(cond),
                then.iter().map(|t| parse_equation(t)).collect(),
            )],
            else_: else_.iter().map(|t| parse_equation(t)).collect(),
            origin: origin(cond),
        });
        self
    }

    pub fn model(&self) -> Model {
        match crate::convert::convert(&self.flat) {
            Ok(m) => m,
            Err(d) => panic!("test model does not convert: {d:?}"),
        }
    }
}

pub fn parse_equation(text: &str) -> Equation {
    let o = origin(text);
    let t = text.trim();
    if let Some(rest) = t.strip_prefix("reinit(") {
        let inner = &rest[..rest.len() - 1];
        let (v, e) = inner.split_once(',').expect("reinit(v, e)");
        return Equation::Reinit {
            var: v.trim().into(),
            value: parse(e),
            origin: o,
        };
    }
    let (l, r) = split_top_level_eq(t);
    Equation::Equal {
        lhs: parse(l),
        rhs: parse(r),
        origin: o,
    }
}

/// Split at the `=` that is not part of `==`, `<=`, `>=`.
fn split_top_level_eq(t: &str) -> (&str, &str) {
    let b = t.as_bytes();
    for i in 0..b.len() {
        if b[i] == b'='
            && (i + 1 >= b.len() || b[i + 1] != b'=')
            && (i == 0 || !matches!(b[i - 1], b'=' | b'<' | b'>'))
        {
            return (&t[..i], &t[i + 1..]);
        }
    }
    panic!("test equation without `=`: {t}");
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(f64, bool),
    Id(String),
    Op(String),
}

fn lex(s: &str) -> Vec<Tok> {
    let c: Vec<char> = s.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    while i < c.len() {
        let ch = c[i];
        if ch.is_whitespace() {
            i += 1;
        } else if ch.is_ascii_digit() || (ch == '.' && i + 1 < c.len() && c[i + 1].is_ascii_digit())
        {
            let st = i;
            while i < c.len()
                && (c[i].is_ascii_digit()
                    || c[i] == '.'
                    || c[i] == 'e'
                    || ((c[i] == '-' || c[i] == '+') && c[i - 1] == 'e'))
            {
                i += 1;
            }
            let t: String = c[st..i].iter().collect();
            let is_int = !t.contains(['.', 'e']);
            out.push(Tok::Num(t.parse().expect("number"), is_int));
        } else if ch.is_alphabetic() || ch == '_' || ch == '$' {
            let st = i;
            let mut depth = 0;
            while i < c.len()
                && (c[i].is_alphanumeric()
                    || c[i] == '_'
                    || c[i] == '.'
                    || c[i] == '$'
                    || c[i] == '['
                    || (depth > 0 && c[i] != ']')
                    || (c[i] == ']' && depth > 0))
            {
                if c[i] == '[' {
                    depth += 1;
                } else if c[i] == ']' {
                    depth -= 1;
                }
                i += 1;
            }
            out.push(Tok::Id(c[st..i].iter().collect()));
        } else {
            let two: String = c[i..(i + 2).min(c.len())].iter().collect();
            if ["<=", ">=", "==", "<>"].contains(&two.as_str()) {
                out.push(Tok::Op(two));
                i += 2;
            } else {
                out.push(Tok::Op(ch.to_string()));
                i += 1;
            }
        }
    }
    out
}

struct P {
    t: Vec<Tok>,
    i: usize,
}

impl P {
    fn peek_op(&self, op: &str) -> bool {
        matches!(self.t.get(self.i), Some(Tok::Op(o)) if o == op)
    }
    fn peek_id(&self, id: &str) -> bool {
        matches!(self.t.get(self.i), Some(Tok::Id(o)) if o == id)
    }
    fn bin(op: BinaryOp, l: Expr, r: Expr) -> Expr {
        Expr::Binary {
            op,
            lhs: Box::new(l),
            rhs: Box::new(r),
        }
    }
    fn expr(&mut self) -> Expr {
        if self.peek_id("if") {
            self.i += 1;
            let mut branches = Vec::new();
            let c = self.expr();
            assert!(self.peek_id("then"));
            self.i += 1;
            let v = self.expr();
            branches.push((c, v));
            while self.peek_id("elseif") {
                self.i += 1;
                let c = self.expr();
                self.i += 1;
                let v = self.expr();
                branches.push((c, v));
            }
            assert!(self.peek_id("else"));
            self.i += 1;
            let e = self.expr();
            return Expr::If {
                branches,
                else_: Box::new(e),
            };
        }
        let mut l = self.and();
        while self.peek_id("or") {
            self.i += 1;
            let r = self.and();
            l = Self::bin(BinaryOp::Or, l, r);
        }
        l
    }
    fn and(&mut self) -> Expr {
        let mut l = self.not();
        while self.peek_id("and") {
            self.i += 1;
            let r = self.not();
            l = Self::bin(BinaryOp::And, l, r);
        }
        l
    }
    fn not(&mut self) -> Expr {
        if self.peek_id("not") {
            self.i += 1;
            let a = self.not();
            return Expr::Unary {
                op: UnaryOp::Not,
                arg: Box::new(a),
            };
        }
        self.rel()
    }
    fn rel(&mut self) -> Expr {
        let l = self.add();
        let ops = [
            ("<", BinaryOp::Lt),
            ("<=", BinaryOp::Le),
            (">", BinaryOp::Gt),
            (">=", BinaryOp::Ge),
            ("==", BinaryOp::Eq),
            ("<>", BinaryOp::Ne),
        ];
        for (s, op) in ops {
            if self.peek_op(s) {
                self.i += 1;
                let r = self.add();
                return Self::bin(op, l, r);
            }
        }
        l
    }
    fn add(&mut self) -> Expr {
        let mut l = if self.peek_op("-") {
            self.i += 1;
            let a = self.mul();
            Expr::Unary {
                op: UnaryOp::Neg,
                arg: Box::new(a),
            }
        } else {
            self.mul()
        };
        loop {
            if self.peek_op("+") {
                self.i += 1;
                let r = self.mul();
                l = Self::bin(BinaryOp::Add, l, r);
            } else if self.peek_op("-") {
                self.i += 1;
                let r = self.mul();
                l = Self::bin(BinaryOp::Sub, l, r);
            } else {
                return l;
            }
        }
    }
    fn mul(&mut self) -> Expr {
        let mut l = self.pow();
        loop {
            if self.peek_op("*") {
                self.i += 1;
                let r = self.pow();
                l = Self::bin(BinaryOp::Mul, l, r);
            } else if self.peek_op("/") {
                self.i += 1;
                let r = self.pow();
                l = Self::bin(BinaryOp::Div, l, r);
            } else {
                return l;
            }
        }
    }
    fn pow(&mut self) -> Expr {
        let b = self.primary();
        if self.peek_op("^") {
            self.i += 1;
            let e = self.primary();
            return Self::bin(BinaryOp::Pow, b, e);
        }
        b
    }
    fn primary(&mut self) -> Expr {
        let t = self
            .t
            .get(self.i)
            .cloned()
            .expect("unexpected end of test expression");
        self.i += 1;
        match t {
            Tok::Num(v, true) => Expr::Integer(v as i64),
            Tok::Num(v, false) => Expr::Real(v),
            Tok::Op(o) if o == "(" => {
                let e = self.expr();
                self.i += 1;
                e
            }
            Tok::Op(o) if o == "-" => {
                let a = self.primary();
                Expr::Unary {
                    op: UnaryOp::Neg,
                    arg: Box::new(a),
                }
            }
            Tok::Op(o) if o == "{" => {
                let mut items = vec![self.expr()];
                while self.peek_op(",") {
                    self.i += 1;
                    items.push(self.expr());
                }
                self.i += 1;
                Expr::Array(items)
            }
            Tok::Id(id) => match id.as_str() {
                "time" => Expr::Time,
                "true" => Expr::Boolean(true),
                "false" => Expr::Boolean(false),
                _ if self.peek_op("(") => {
                    self.i += 1;
                    let mut args = Vec::new();
                    if !self.peek_op(")") {
                        args.push(self.expr());
                        while self.peek_op(",") {
                            self.i += 1;
                            args.push(self.expr());
                        }
                    }
                    self.i += 1;
                    Expr::Call { func: id, args }
                }
                _ => Expr::Var {
                    name: id,
                    subscripts: Vec::new(),
                },
            },
            other => panic!("unexpected token {other:?}"),
        }
    }
}

/// Parse a test expression.
pub fn parse(s: &str) -> Expr {
    let mut p = P { t: lex(s), i: 0 };
    let e = p.expr();
    assert!(p.i >= p.t.len(), "trailing tokens in test expression {s}");
    e
}

/// Unused-import guard for `flat` in some cfgs.
#[allow(dead_code)]
fn _touch(_: flat::AssertLevel) {}
