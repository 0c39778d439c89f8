//! Pretty-printer: turns an AST back into valid Modelica.
//!
//! The output is normalised (two-space indentation, one element per line, modifications and
//! expressions on one line) and parses back to the same tree modulo spans. Parentheses are
//! inserted from operator precedence and associativity, so `(a + b) * c`, `a - (b - c)` and
//! `(a ^ b) ^ c` survive, while redundant source parentheses disappear.

use crate::ast::*;
use std::fmt::{self, Write};

/// Print a whole file.
pub fn print_stored_definition(def: &StoredDefinition) -> String {
    let mut p = Printer::default();
    if let Some(w) = &def.within {
        p.put("within ");
        p.name(w);
        p.put(";\n");
    }
    for c in &def.classes {
        if c.final_ {
            p.put("final ");
        }
        p.class_def(&c.class);
        p.put(";\n");
    }
    p.out
}

/// Print one class definition (without the trailing `;`).
pub fn print_class(class: &ClassDef) -> String {
    let mut p = Printer::default();
    p.class_def(class);
    p.out
}

/// Print one expression.
pub fn print_expr(e: &Expr) -> String {
    let mut p = Printer::default();
    p.expr(e, 0);
    p.out
}

/// Print a modification (`(a = 1) = 2`) as it would follow a component name.
pub fn print_modification(m: &Modification) -> String {
    let mut p = Printer::default();
    p.modification(m);
    p.out
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&print_expr(self))
    }
}

impl fmt::Display for ComponentRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut p = Printer::default();
        p.cref(self);
        f.write_str(&p.out)
    }
}

impl fmt::Display for StoredDefinition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&print_stored_definition(self))
    }
}

/// Quote and escape a string literal.
pub fn quote_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{07}' => out.push_str("\\a"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0C}' => out.push_str("\\f"),
            '\u{0B}' => out.push_str("\\v"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Precedence levels (higher binds tighter), following the grammar's expression rules.
mod prec {
    pub const IF: u8 = 0;
    pub const RANGE: u8 = 1;
    pub const OR: u8 = 2;
    pub const AND: u8 = 3;
    pub const NOT: u8 = 4;
    pub const REL: u8 = 5;
    pub const ADD: u8 = 6;
    pub const MUL: u8 = 7;
    pub const POW: u8 = 8;
    pub const PRIMARY: u8 = 9;
}

fn binary_prec(op: BinaryOp) -> u8 {
    use BinaryOp::*;
    match op {
        Or => prec::OR,
        And => prec::AND,
        Lt | Le | Gt | Ge | Eq | Ne => prec::REL,
        Add | Sub | ElemAdd | ElemSub => prec::ADD,
        Mul | Div | ElemMul | ElemDiv => prec::MUL,
        Pow | ElemPow => prec::POW,
    }
}

fn expr_prec(e: &Expr) -> u8 {
    match &e.kind {
        ExprKind::If { .. } => prec::IF,
        ExprKind::Range { .. } => prec::RANGE,
        ExprKind::Binary { op, .. } => binary_prec(*op),
        ExprKind::Unary {
            op: UnaryOp::Not, ..
        } => prec::NOT,
        ExprKind::Unary { .. } => prec::ADD,
        // Negative literals only occur in synthesized trees; print them like a unary minus.
        ExprKind::Integer(v) if *v < 0 => prec::ADD,
        ExprKind::Real { value, text }
            if text.starts_with('-') || (text.is_empty() && *value < 0.0) =>
        {
            prec::ADD
        }
        // A partial application is only valid as an argument; never wrap it.
        _ => prec::PRIMARY,
    }
}

#[derive(Default)]
struct Printer {
    out: String,
    indent: usize,
}

impl Printer {
    fn put(&mut self, s: &str) {
        self.out.push_str(s);
    }

    fn newline(&mut self) {
        self.out.push('\n');
        for _ in 0..self.indent {
            self.out.push_str("  ");
        }
    }

    fn ident(&mut self, i: &Ident) {
        self.out.push_str(&i.name);
    }

    fn name(&mut self, n: &Name) {
        let _ = write!(self.out, "{n}");
    }

    fn comma_sep<T>(&mut self, items: &[T], mut f: impl FnMut(&mut Self, &T)) {
        for (i, it) in items.iter().enumerate() {
            if i > 0 {
                self.put(", ");
            }
            f(self, it);
        }
    }

    // -- classes --------------------------------------------------------------------------

    fn class_prefixes(&mut self, p: &ClassPrefixes) {
        if p.encapsulated {
            self.put("encapsulated ");
        }
        if p.partial {
            self.put("partial ");
        }
        let kind = match p.kind {
            ClassKind::Class => "class",
            ClassKind::Model => "model",
            ClassKind::Record => "record",
            ClassKind::OperatorRecord => "operator record",
            ClassKind::Block => "block",
            ClassKind::Connector => "connector",
            ClassKind::ExpandableConnector => "expandable connector",
            ClassKind::Type => "type",
            ClassKind::Package => "package",
            ClassKind::Operator => "operator",
            ClassKind::Function { purity, operator } => {
                match purity {
                    Purity::Pure => self.put("pure "),
                    Purity::Impure => self.put("impure "),
                    Purity::Unspecified => {}
                }
                if operator {
                    self.put("operator ");
                }
                "function"
            }
        };
        self.put(kind);
        self.put(" ");
    }

    fn class_def(&mut self, c: &ClassDef) {
        self.class_prefixes(&c.prefixes);
        match &c.specifier {
            ClassSpecifier::Long {
                description,
                composition,
                end_name,
            } => {
                self.ident(&c.name);
                self.long_class_body(description, composition, end_name);
            }
            ClassSpecifier::Extends {
                base,
                modification,
                description,
                composition,
                end_name,
            } => {
                self.put("extends ");
                self.ident(base);
                if let Some(m) = modification {
                    self.class_modification(m);
                }
                self.long_class_body(description, composition, end_name);
            }
            ClassSpecifier::Short {
                base_prefix,
                base,
                subscripts,
                modification,
                description,
            } => {
                self.ident(&c.name);
                self.put(" = ");
                match base_prefix {
                    Some(Causality::Input) => self.put("input "),
                    Some(Causality::Output) => self.put("output "),
                    None => {}
                }
                self.name(base);
                self.subscripts(subscripts);
                if let Some(m) = modification {
                    self.class_modification(m);
                }
                self.description(description);
            }
            ClassSpecifier::Enumeration {
                literals,
                description,
            } => {
                self.ident(&c.name);
                self.put(" = enumeration(");
                match literals {
                    EnumLiterals::Colon => self.put(":"),
                    EnumLiterals::List(lits) => self.comma_sep(lits, |p, l| {
                        p.ident(&l.name);
                        p.description(&l.description);
                    }),
                }
                self.put(")");
                self.description(description);
            }
            ClassSpecifier::Der {
                function,
                wrt,
                description,
            } => {
                self.ident(&c.name);
                self.put(" = der(");
                self.name(function);
                for w in wrt {
                    self.put(", ");
                    self.ident(w);
                }
                self.put(")");
                self.description(description);
            }
        }
    }

    /// `"description" composition end Name` of a long class (either form).
    fn long_class_body(
        &mut self,
        description: &Description,
        composition: &Composition,
        end_name: &Ident,
    ) {
        self.description(description);
        self.composition(composition);
        self.newline();
        self.put("end ");
        self.ident(end_name);
    }

    fn composition(&mut self, c: &Composition) {
        for (i, s) in c.sections.iter().enumerate() {
            self.section(s, i == 0);
        }
        if let Some(ext) = &c.external {
            self.external(ext);
        }
        if let Some(a) = &c.annotation {
            self.indent += 1;
            self.newline();
            self.annotation(a);
            self.put(";");
            self.indent -= 1;
        }
    }

    fn section(&mut self, s: &Section, first: bool) {
        match s {
            Section::Elements {
                visibility,
                elements,
                ..
            } => {
                // The leading public list needs no keyword unless it is empty (then the
                // keyword is what makes the section exist).
                let implicit = first && *visibility == Visibility::Public && !elements.is_empty();
                if !implicit {
                    self.newline();
                    self.put(match visibility {
                        Visibility::Public => "public",
                        Visibility::Protected => "protected",
                    });
                }
                self.indent += 1;
                for e in elements {
                    self.newline();
                    self.element(e);
                    self.put(";");
                }
                self.indent -= 1;
            }
            Section::Equations {
                initial, equations, ..
            } => {
                self.newline();
                self.put(if *initial {
                    "initial equation"
                } else {
                    "equation"
                });
                self.block(equations, Self::equations);
            }
            Section::Algorithm {
                initial,
                statements,
                ..
            } => {
                self.newline();
                self.put(if *initial {
                    "initial algorithm"
                } else {
                    "algorithm"
                });
                self.block(statements, Self::statements);
            }
        }
    }

    fn external(&mut self, ext: &External) {
        self.newline();
        self.put("external");
        if let Some(l) = &ext.language {
            self.put(" ");
            self.put(&quote_string(l));
        }
        if let Some(call) = &ext.call {
            self.put(" ");
            if let Some(o) = &call.output {
                self.cref(o);
                self.put(" = ");
            }
            self.ident(&call.function);
            self.put("(");
            self.comma_sep(&call.args, |p, a| p.expr(a, 0));
            self.put(")");
        }
        if let Some(a) = &ext.annotation {
            self.put(" ");
            self.annotation(a);
        }
        self.put(";");
    }

    // -- elements -------------------------------------------------------------------------

    fn element_prefixes(&mut self, p: &ElementPrefixes) {
        if p.redeclare {
            self.put("redeclare ");
        }
        if p.final_ {
            self.put("final ");
        }
        if p.inner {
            self.put("inner ");
        }
        if p.outer {
            self.put("outer ");
        }
        if p.replaceable {
            self.put("replaceable ");
        }
    }

    fn element(&mut self, e: &Element) {
        match e {
            Element::Import(i) => {
                self.put("import ");
                match &i.kind {
                    ImportKind::Qualified(n) => self.name(n),
                    ImportKind::Renaming { alias, name } => {
                        self.ident(alias);
                        self.put(" = ");
                        self.name(name);
                    }
                    ImportKind::Unqualified(n) => {
                        self.name(n);
                        self.put(".*");
                    }
                    ImportKind::Multiple { prefix, names } => {
                        self.name(prefix);
                        self.put(".{");
                        self.comma_sep(names, |p, n| p.ident(n));
                        self.put("}");
                    }
                }
                self.description(&i.description);
            }
            Element::Extends(x) => {
                self.put("extends ");
                self.name(&x.base);
                if let Some(m) = &x.modification {
                    self.class_modification(m);
                }
                if let Some(a) = &x.annotation {
                    self.put(" ");
                    self.annotation(a);
                }
            }
            Element::Class {
                prefixes,
                class,
                constraining,
                ..
            } => {
                self.element_prefixes(prefixes);
                self.class_def(class);
                self.constraining(constraining.as_ref());
            }
            Element::Component {
                prefixes,
                clause,
                constraining,
                ..
            } => {
                self.element_prefixes(prefixes);
                self.component_clause(clause);
                self.constraining(constraining.as_ref());
            }
        }
    }

    fn constraining(&mut self, c: Option<&ConstrainingClause>) {
        if let Some(c) = c {
            self.put(" constrainedby ");
            self.name(&c.base);
            if let Some(m) = &c.modification {
                self.class_modification(m);
            }
            self.description(&c.description);
        }
    }

    fn component_clause(&mut self, c: &ComponentClause) {
        let tp = &c.prefixes;
        match tp.connector {
            Some(ConnectorPrefix::Flow) => self.put("flow "),
            Some(ConnectorPrefix::Stream) => self.put("stream "),
            None => {}
        }
        match tp.variability {
            Some(Variability::Discrete) => self.put("discrete "),
            Some(Variability::Parameter) => self.put("parameter "),
            Some(Variability::Constant) => self.put("constant "),
            None => {}
        }
        match tp.causality {
            Some(Causality::Input) => self.put("input "),
            Some(Causality::Output) => self.put("output "),
            None => {}
        }
        self.name(&c.type_name);
        self.subscripts(&c.subscripts);
        self.put(" ");
        self.comma_sep(&c.components, |p, d| {
            p.ident(&d.name);
            p.subscripts(&d.subscripts);
            if let Some(m) = &d.modification {
                p.modification(m);
            }
            if let Some(cond) = &d.condition {
                p.put(" if ");
                p.expr(cond, 0);
            }
            p.description(&d.description);
        });
    }

    fn subscripts(&mut self, subs: &[Subscript]) {
        if subs.is_empty() {
            return;
        }
        self.put("[");
        self.comma_sep(subs, |p, s| match s {
            Subscript::Colon(_) => p.put(":"),
            Subscript::Expr(e) => p.expr(e, 0),
        });
        self.put("]");
    }

    // -- modifications --------------------------------------------------------------------

    fn modification(&mut self, m: &Modification) {
        if let Some(cm) = &m.class_modification {
            self.class_modification(cm);
        }
        if let Some(b) = &m.binding {
            self.put(if b.assign { " := " } else { " = " });
            self.expr(&b.expr, 0);
        }
    }

    fn class_modification(&mut self, m: &ClassModification) {
        self.put("(");
        self.comma_sep(&m.args, |p, a| p.argument(a));
        self.put(")");
    }

    fn argument(&mut self, a: &Argument) {
        match a {
            Argument::Modification(m) => {
                if m.each {
                    self.put("each ");
                }
                if m.final_ {
                    self.put("final ");
                }
                self.name(&m.name);
                if let Some(md) = &m.modification {
                    self.modification(md);
                }
                self.strings(&m.description);
            }
            Argument::Redeclare(r) => {
                if r.redeclare {
                    self.put("redeclare ");
                }
                if r.each {
                    self.put("each ");
                }
                if r.final_ {
                    self.put("final ");
                }
                if r.replaceable {
                    self.put("replaceable ");
                }
                match &r.element {
                    RedeclaredElement::Class(c) => self.class_def(c),
                    RedeclaredElement::Component(c) => self.component_clause(c),
                }
                self.constraining(r.constraining.as_ref());
            }
            Argument::Break(b) => {
                self.put("break ");
                match &b.target {
                    BreakTarget::Element(name) => self.ident(name),
                    BreakTarget::Connect { lhs, rhs } => {
                        self.put("connect(");
                        self.cref(lhs);
                        self.put(", ");
                        self.cref(rhs);
                        self.put(")");
                    }
                }
            }
        }
    }

    fn strings(&mut self, parts: &[String]) {
        for (i, s) in parts.iter().enumerate() {
            self.put(if i == 0 { " " } else { " + " });
            self.put(&quote_string(s));
        }
    }

    fn description(&mut self, d: &Description) {
        self.strings(&d.strings);
        if let Some(a) = &d.annotation {
            self.put(" ");
            self.annotation(a);
        }
    }

    fn annotation(&mut self, a: &Annotation) {
        self.put("annotation");
        self.class_modification(&a.modification);
    }

    // -- equations and statements ---------------------------------------------------------

    fn equations(&mut self, eqs: &[Equation]) {
        for e in eqs {
            self.newline();
            self.equation(e);
            self.put(";");
        }
    }

    fn block<T>(&mut self, items: &[T], f: impl Fn(&mut Self, &[T])) {
        self.indent += 1;
        f(self, items);
        self.indent -= 1;
    }

    fn equation(&mut self, e: &Equation) {
        match &e.kind {
            EquationKind::Simple { lhs, rhs } => {
                self.expr(lhs, prec::RANGE);
                self.put(" = ");
                self.expr(rhs, 0);
            }
            EquationKind::If {
                branches,
                else_branch,
            } => self.if_block(branches, else_branch, Self::equations),
            EquationKind::For { indices, body } => self.for_block(indices, body, Self::equations),
            EquationKind::Connect { lhs, rhs } => {
                self.put("connect(");
                self.cref(lhs);
                self.put(", ");
                self.cref(rhs);
                self.put(")");
            }
            EquationKind::When { branches } => self.when_block(branches, Self::equations),
            EquationKind::Call { function, args } => {
                self.cref(function);
                self.function_args(args);
            }
        }
        self.description(&e.description);
    }

    fn statements(&mut self, stmts: &[Statement]) {
        for s in stmts {
            self.newline();
            self.statement(s);
            self.put(";");
        }
    }

    fn statement(&mut self, s: &Statement) {
        match &s.kind {
            StatementKind::Assign { target, value } => {
                self.cref(target);
                self.put(" := ");
                self.expr(value, 0);
            }
            StatementKind::TupleAssign { targets, value } => {
                self.tuple(targets);
                self.put(" := ");
                self.expr(value, 0);
            }
            StatementKind::Call { function, args } => {
                self.cref(function);
                self.function_args(args);
            }
            StatementKind::If {
                branches,
                else_branch,
            } => self.if_block(branches, else_branch, Self::statements),
            StatementKind::For { indices, body } => self.for_block(indices, body, Self::statements),
            StatementKind::While { condition, body } => {
                self.put("while ");
                self.expr(condition, 0);
                self.put(" loop");
                self.block(body, Self::statements);
                self.newline();
                self.put("end while");
            }
            StatementKind::When { branches } => self.when_block(branches, Self::statements),
            StatementKind::Return => self.put("return"),
            StatementKind::Break => self.put("break"),
        }
        self.description(&s.description);
    }

    /// `if ... then ... elseif ... else ... end if` around equations or statements.
    fn if_block<T>(
        &mut self,
        branches: &[(Expr, Vec<T>)],
        else_branch: &[T],
        list: fn(&mut Self, &[T]),
    ) {
        self.guarded_branches("if", "elseif", branches, list);
        if !else_branch.is_empty() {
            self.newline();
            self.put("else");
            self.block(else_branch, list);
        }
        self.newline();
        self.put("end if");
    }

    fn when_block<T>(&mut self, branches: &[(Expr, Vec<T>)], list: fn(&mut Self, &[T])) {
        self.guarded_branches("when", "elsewhen", branches, list);
        self.newline();
        self.put("end when");
    }

    /// `first c1 then ... next c2 then ...`
    fn guarded_branches<T>(
        &mut self,
        first: &str,
        next: &str,
        branches: &[(Expr, Vec<T>)],
        list: fn(&mut Self, &[T]),
    ) {
        for (i, (c, body)) in branches.iter().enumerate() {
            if i > 0 {
                self.newline();
            }
            self.put(if i == 0 { first } else { next });
            self.put(" ");
            self.expr(c, 0);
            self.put(" then");
            self.block(body, list);
        }
    }

    fn for_block<T>(&mut self, indices: &[ForIndex], body: &[T], list: fn(&mut Self, &[T])) {
        self.put("for ");
        self.for_indices(indices);
        self.put(" loop");
        self.block(body, list);
        self.newline();
        self.put("end for");
    }

    fn for_indices(&mut self, indices: &[ForIndex]) {
        self.comma_sep(indices, |p, i| {
            p.ident(&i.name);
            if let Some(r) = &i.range {
                p.put(" in ");
                p.expr(r, 0);
            }
        });
    }

    // -- expressions ----------------------------------------------------------------------

    fn cref(&mut self, c: &ComponentRef) {
        if c.global {
            self.put(".");
        }
        for (i, part) in c.parts.iter().enumerate() {
            if i > 0 {
                self.put(".");
            }
            self.ident(&part.name);
            self.subscripts(&part.subscripts);
        }
    }

    fn tuple(&mut self, items: &[Option<Expr>]) {
        self.put("(");
        for (i, it) in items.iter().enumerate() {
            if i > 0 {
                self.put(",");
                if it.is_some() {
                    self.put(" ");
                }
            }
            if let Some(e) = it {
                self.expr(e, 0);
            }
        }
        self.put(")");
    }

    fn function_args(&mut self, args: &FunctionArgs) {
        self.put("(");
        match args {
            FunctionArgs::List { positional, named } => {
                self.comma_sep(positional, |p, e| p.expr(e, 0));
                if !positional.is_empty() && !named.is_empty() {
                    self.put(", ");
                }
                self.named_args(named);
            }
            FunctionArgs::Comprehension { body, indices } => {
                self.expr(body, 0);
                self.put(" for ");
                self.for_indices(indices);
            }
        }
        self.put(")");
    }

    fn named_args(&mut self, named: &[NamedArg]) {
        self.comma_sep(named, |p, a| {
            p.ident(&a.name);
            p.put(" = ");
            p.expr(&a.value, 0);
        });
    }

    /// Print `e`, parenthesized if it binds less tightly than `min`.
    fn expr(&mut self, e: &Expr, min: u8) {
        let paren = expr_prec(e) < min;
        if paren {
            self.put("(");
        }
        self.expr_inner(e);
        if paren {
            self.put(")");
        }
    }

    fn expr_inner(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Integer(v) => {
                let _ = write!(self.out, "{v}");
            }
            ExprKind::Real { text, .. } if !text.is_empty() => self.put(text),
            ExprKind::Real { value, .. } => {
                // A synthesized literal without source text: `{:?}` always keeps a `.` or an
                // exponent, so it reads back as a Real (`1.0`, `1e-7`).
                let _ = write!(self.out, "{value:?}");
            }
            ExprKind::String(s) => self.put(&quote_string(s)),
            ExprKind::Bool(b) => self.put(if *b { "true" } else { "false" }),
            ExprKind::Ref(c) => self.cref(c),
            ExprKind::End => self.put("end"),
            ExprKind::Break => self.put("break"),
            ExprKind::Call { function, args } => {
                self.cref(function);
                self.function_args(args);
            }
            ExprKind::PartialApplication { function, args } => {
                self.put("function ");
                self.name(function);
                self.put("(");
                self.named_args(args);
                self.put(")");
            }
            ExprKind::Unary { op, operand } => {
                let min = if *op == UnaryOp::Not {
                    self.put("not ");
                    prec::REL
                } else {
                    self.put(op.symbol());
                    prec::MUL
                };
                self.expr(operand, min);
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let p = binary_prec(*op);
                let (lmin, rmin) = match p {
                    prec::REL => (prec::ADD, prec::ADD),
                    prec::POW => (prec::PRIMARY, prec::PRIMARY),
                    _ => (p, p + 1),
                };
                self.expr(lhs, lmin);
                self.put(" ");
                self.put(op.symbol());
                self.put(" ");
                self.expr(rhs, rmin);
            }
            ExprKind::If {
                branches,
                else_branch,
            } => {
                for (i, (c, v)) in branches.iter().enumerate() {
                    self.put(if i == 0 { "if " } else { " elseif " });
                    self.expr(c, 0);
                    self.put(" then ");
                    self.expr(v, 0);
                }
                self.put(" else ");
                self.expr(else_branch, 0);
            }
            ExprKind::Range { start, step, stop } => {
                self.expr(start, prec::OR);
                if let Some(s) = step {
                    self.put(":");
                    self.expr(s, prec::OR);
                }
                self.put(":");
                self.expr(stop, prec::OR);
            }
            ExprKind::Array(items) => {
                self.put("{");
                self.comma_sep(items, |p, e| p.expr(e, 0));
                self.put("}");
            }
            ExprKind::ArrayComprehension { body, indices } => {
                self.put("{");
                self.expr(body, 0);
                self.put(" for ");
                self.for_indices(indices);
                self.put("}");
            }
            ExprKind::Matrix(rows) => {
                self.put("[");
                for (i, row) in rows.iter().enumerate() {
                    if i > 0 {
                        self.put("; ");
                    }
                    self.comma_sep(row, |p, e| p.expr(e, 0));
                }
                self.put("]");
            }
            ExprKind::Tuple(items) => self.tuple(items),
        }
    }
}
