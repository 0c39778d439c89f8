//! Abstract syntax tree for Modelica 3.6 (Appendix A of the specification).
//!
//! The tree is a plain owned data structure (`Box`/`Vec`, no arenas or lifetimes) so that the
//! frontend can walk, clone and pattern-match it freely. Every node carries a [`Span`] pointing at
//! the source text it was parsed from; nodes synthesized later use [`Span::DUMMY`].
//!
//! Design notes for the frontend (lookup, instantiation, modification merging):
//! - Element prefixes that only make sense on elements of a class (`redeclare`, `final`, `inner`,
//!   `outer`, `replaceable`, the constraining clause) live on [`Element`], not on [`ClassDef`] or
//!   [`ComponentClause`], so the same class/component types are reused inside modifications.
//! - Modifications keep the source structure: `x(start = 1, fixed = true) = 2` is a
//!   [`Modification`] with a [`ClassModification`] and a binding; merging is the frontend's job.
//! - Annotations are stored as [`ClassModification`]s, exactly as written, so the frontend can
//!   read `experiment(StopTime = 1)`, `derivative = f_der`, `Inline = true`, etc.
//! - `der(x)`, `initial()` and `pure(f(x))` are ordinary [`ExprKind::Call`]s whose function name
//!   is a one-part [`ComponentRef`] named `der`, `initial` or `pure`.
//! - Quoted identifiers keep their quotes (`'x y'`): in Modelica `'x'` and `x` are different names.

use crate::source::Span;
use std::fmt;
use std::sync::Arc;

/// An identifier with its location. Cheap to clone (the text is shared).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ident {
    /// The identifier text; quoted identifiers include their single quotes.
    pub name: Arc<str>,
    pub span: Span,
}

impl Ident {
    pub fn new(name: impl Into<Arc<str>>, span: Span) -> Ident {
        Ident {
            name: name.into(),
            span,
        }
    }

    pub fn as_str(&self) -> &str {
        &self.name
    }
}

/// Compare the identifier text only: `ident == "der"`.
impl PartialEq<str> for Ident {
    fn eq(&self, other: &str) -> bool {
        &*self.name == other
    }
}

impl PartialEq<&str> for Ident {
    fn eq(&self, other: &&str) -> bool {
        &*self.name == *other
    }
}

impl fmt::Display for Ident {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// A dotted name `A.B.C`, optionally global (`.A.B`, looked up from the top-level scope).
/// Used for type specifiers, `extends`, `import`, `within` and modifier names.
#[derive(Clone, Debug, PartialEq)]
pub struct Name {
    /// Written with a leading dot: lookup starts at the unnamed top-level class.
    pub global: bool,
    /// At least one part.
    pub parts: Vec<Ident>,
    pub span: Span,
}

impl Name {
    /// The first part (the one looked up lexically).
    pub fn first(&self) -> Option<&Ident> {
        self.parts.first()
    }

    /// The last part (the simple name of the referenced class).
    pub fn last(&self) -> Option<&Ident> {
        self.parts.last()
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.global {
            f.write_str(".")?;
        }
        for (i, p) in self.parts.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            f.write_str(&p.name)?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Stored definition and classes
// ---------------------------------------------------------------------------------------------

/// One file: `[within [name];] { [final] class-definition ; }`.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredDefinition {
    /// The enclosing package from the `within` clause. Both a missing clause and `within;`
    /// (top level) are `None`.
    pub within: Option<Name>,
    pub classes: Vec<StoredClass>,
    /// The whole file.
    pub span: Span,
}

/// A top-level class of a file, with its optional `final` prefix.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredClass {
    pub final_: bool,
    pub class: ClassDef,
}

/// A class definition (any restricted class kind, any specifier form).
#[derive(Clone, Debug, PartialEq)]
pub struct ClassDef {
    pub name: Ident,
    pub prefixes: ClassPrefixes,
    pub specifier: ClassSpecifier,
    pub span: Span,
}

/// `[encapsulated] [partial] kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClassPrefixes {
    pub encapsulated: bool,
    pub partial: bool,
    pub kind: ClassKind,
}

/// The (restricted) class kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClassKind {
    Class,
    Model,
    Record,
    /// `operator record`
    OperatorRecord,
    Block,
    Connector,
    /// `expandable connector`
    ExpandableConnector,
    Type,
    Package,
    /// `[pure | impure] [operator] function`
    Function {
        purity: Purity,
        operator: bool,
    },
    /// `operator` (a package-like class holding operator functions)
    Operator,
}

/// Explicit purity prefix of a function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Purity {
    /// No prefix (pure unless it calls impure functions or is external without `pure`).
    #[default]
    Unspecified,
    Pure,
    Impure,
}

/// The body of a class definition.
#[derive(Clone, Debug, PartialEq)]
pub enum ClassSpecifier {
    /// `IDENT description composition end IDENT`
    Long {
        description: Description,
        composition: Composition,
        /// The name after `end` (checked against the class name by the parser).
        end_name: Ident,
    },
    /// `extends IDENT [class-modification] description composition end IDENT`
    /// (class extends, modifying an inherited replaceable class).
    Extends {
        base: Ident,
        modification: Option<ClassModification>,
        description: Description,
        composition: Composition,
        end_name: Ident,
    },
    /// `IDENT = [input|output] type-specifier [subscripts] [class-modification] description`
    Short {
        base_prefix: Option<Causality>,
        base: Name,
        subscripts: Vec<Subscript>,
        modification: Option<ClassModification>,
        description: Description,
    },
    /// `IDENT = enumeration(lit1 "d", lit2)` or `enumeration(:)`
    Enumeration {
        literals: EnumLiterals,
        description: Description,
    },
    /// `IDENT = der(f, x, y) description`
    Der {
        function: Name,
        wrt: Vec<Ident>,
        description: Description,
    },
}

impl ClassSpecifier {
    /// The description (string + annotation) of the class, whatever its form.
    pub fn description(&self) -> &Description {
        match self {
            ClassSpecifier::Long { description, .. }
            | ClassSpecifier::Extends { description, .. }
            | ClassSpecifier::Short { description, .. }
            | ClassSpecifier::Enumeration { description, .. }
            | ClassSpecifier::Der { description, .. } => description,
        }
    }

    /// The composition of a long class (also `class extends`), `None` for short forms.
    pub fn composition(&self) -> Option<&Composition> {
        match self {
            ClassSpecifier::Long { composition, .. }
            | ClassSpecifier::Extends { composition, .. } => Some(composition),
            _ => None,
        }
    }
}

/// Literals of an enumeration type.
#[derive(Clone, Debug, PartialEq)]
pub enum EnumLiterals {
    /// `enumeration(a "desc", b)` (may be empty: `enumeration()`).
    List(Vec<EnumLiteral>),
    /// `enumeration(:)`: literals are given by a later redeclaration.
    Colon,
}

#[derive(Clone, Debug, PartialEq)]
pub struct EnumLiteral {
    pub name: Ident,
    pub description: Description,
    pub span: Span,
}

/// The contents of a long class: element lists, equation and algorithm sections in source
/// order, an optional external clause and an optional class annotation.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Composition {
    pub sections: Vec<Section>,
    pub external: Option<External>,
    /// The class annotation `annotation(...);` at the end of the composition.
    pub annotation: Option<Annotation>,
}

impl Composition {
    /// All elements with their visibility, in source order.
    pub fn elements(&self) -> impl Iterator<Item = (Visibility, &Element)> {
        self.sections.iter().flat_map(|s| {
            let (visibility, elements) = match s {
                Section::Elements {
                    visibility,
                    elements,
                    ..
                } => (*visibility, elements.as_slice()),
                _ => (Visibility::Public, &[][..]),
            };
            elements.iter().map(move |e| (visibility, e))
        })
    }

    /// All equations of normal (`initial == false`) or initial equation sections.
    pub fn equations(&self, initial: bool) -> impl Iterator<Item = &Equation> {
        self.sections.iter().flat_map(move |s| match s {
            Section::Equations {
                initial: i,
                equations,
                ..
            } if *i == initial => equations.as_slice(),
            _ => &[][..],
        })
    }

    /// The statement lists of normal or initial algorithm sections (each section is one unit).
    pub fn algorithms(&self, initial: bool) -> impl Iterator<Item = &[Statement]> {
        self.sections.iter().filter_map(move |s| match s {
            Section::Algorithm {
                initial: i,
                statements,
                ..
            } if *i == initial => Some(statements.as_slice()),
            _ => None,
        })
    }
}

/// One section of a composition.
#[derive(Clone, Debug, PartialEq)]
pub enum Section {
    /// The leading (public) element list, or one after `public` / `protected`.
    Elements {
        visibility: Visibility,
        elements: Vec<Element>,
        span: Span,
    },
    /// `[initial] equation ...`
    Equations {
        initial: bool,
        equations: Vec<Equation>,
        span: Span,
    },
    /// `[initial] algorithm ...`
    Algorithm {
        initial: bool,
        statements: Vec<Statement>,
        span: Span,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Visibility {
    Public,
    Protected,
}

/// `external ["C"] [out = f(args)] [annotation(...)] ;`
#[derive(Clone, Debug, PartialEq)]
pub struct External {
    /// The language string, e.g. `"C"`, `"FORTRAN 77"`, `"builtin"`.
    pub language: Option<String>,
    pub call: Option<ExternalCall>,
    pub annotation: Option<Annotation>,
    pub span: Span,
}

/// `[component-reference =] IDENT ( [expression-list] )` in an external clause.
#[derive(Clone, Debug, PartialEq)]
pub struct ExternalCall {
    pub output: Option<ComponentRef>,
    pub function: Ident,
    pub args: Vec<Expr>,
    pub span: Span,
}

// ---------------------------------------------------------------------------------------------
// Elements
// ---------------------------------------------------------------------------------------------

/// An element of a class.
#[derive(Clone, Debug, PartialEq)]
pub enum Element {
    Import(ImportClause),
    Extends(ExtendsClause),
    /// A nested class definition with its element prefixes.
    Class {
        prefixes: ElementPrefixes,
        class: Box<ClassDef>,
        /// Only with `replaceable`: `constrainedby T(mods) "description"`.
        constraining: Option<ConstrainingClause>,
        span: Span,
    },
    /// A component clause (one or more declarations sharing a type) with its element prefixes.
    Component {
        prefixes: ElementPrefixes,
        clause: ComponentClause,
        /// Only with `replaceable`.
        constraining: Option<ConstrainingClause>,
        span: Span,
    },
}

impl Element {
    pub fn span(&self) -> Span {
        match self {
            Element::Import(i) => i.span,
            Element::Extends(e) => e.span,
            Element::Class { span, .. } | Element::Component { span, .. } => *span,
        }
    }
}

/// `[redeclare] [final] [inner] [outer] [replaceable]` on an element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ElementPrefixes {
    pub redeclare: bool,
    pub final_: bool,
    pub inner: bool,
    pub outer: bool,
    pub replaceable: bool,
}

/// `import ... description`
#[derive(Clone, Debug, PartialEq)]
pub struct ImportClause {
    pub kind: ImportKind,
    pub description: Description,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ImportKind {
    /// `import A.B.C;` (makes `C` visible)
    Qualified(Name),
    /// `import D = A.B.C;`
    Renaming { alias: Ident, name: Name },
    /// `import A.B.*;` (`name` is `A.B`)
    Unqualified(Name),
    /// `import A.B.{C, D};` (`prefix` is `A.B`)
    Multiple { prefix: Name, names: Vec<Ident> },
}

/// `extends T(mods) annotation(...)`
#[derive(Clone, Debug, PartialEq)]
pub struct ExtendsClause {
    pub base: Name,
    pub modification: Option<ClassModification>,
    pub annotation: Option<Annotation>,
    pub span: Span,
}

/// `constrainedby T(mods) description`
#[derive(Clone, Debug, PartialEq)]
pub struct ConstrainingClause {
    pub base: Name,
    pub modification: Option<ClassModification>,
    /// Description written after the constraining clause (element form only).
    pub description: Description,
    pub span: Span,
}

/// `type-prefix type-specifier [subscripts] decl1, decl2, ...`
#[derive(Clone, Debug, PartialEq)]
pub struct ComponentClause {
    pub prefixes: TypePrefixes,
    pub type_name: Name,
    /// Subscripts on the type: `Real[3] x, y;` gives both `x` and `y` dimension 3.
    pub subscripts: Vec<Subscript>,
    /// At least one declaration (exactly one inside a redeclaration).
    pub components: Vec<ComponentDecl>,
    pub span: Span,
}

/// `[flow|stream] [discrete|parameter|constant] [input|output]`
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TypePrefixes {
    pub connector: Option<ConnectorPrefix>,
    pub variability: Option<Variability>,
    pub causality: Option<Causality>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConnectorPrefix {
    Flow,
    Stream,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variability {
    Constant,
    Parameter,
    Discrete,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Causality {
    Input,
    Output,
}

/// `IDENT [subscripts] [modification] [if condition] description`
#[derive(Clone, Debug, PartialEq)]
pub struct ComponentDecl {
    pub name: Ident,
    /// Subscripts after the name (`Real x[2, 3]`); the type's subscripts come first.
    pub subscripts: Vec<Subscript>,
    pub modification: Option<Modification>,
    /// Conditional component: `if expr`.
    pub condition: Option<Expr>,
    pub description: Description,
    pub span: Span,
}

// ---------------------------------------------------------------------------------------------
// Modifications and descriptions
// ---------------------------------------------------------------------------------------------

/// `class-modification [= expr]` or `= expr` (or `:= expr`).
#[derive(Clone, Debug, PartialEq)]
pub struct Modification {
    pub class_modification: Option<ClassModification>,
    pub binding: Option<Binding>,
    pub span: Span,
}

/// The binding part of a modification.
#[derive(Clone, Debug, PartialEq)]
pub struct Binding {
    pub expr: Expr,
    /// Written with `:=` (accepted for compatibility) instead of `=`.
    pub assign: bool,
}

/// `( argument, ... )`
#[derive(Clone, Debug, PartialEq)]
pub struct ClassModification {
    pub args: Vec<Argument>,
    pub span: Span,
}

impl ClassModification {
    /// The first plain element modification whose dotted name is exactly `name`
    /// (handy for annotations: `find("experiment")`).
    pub fn find(&self, name: &str) -> Option<&ElementModification> {
        self.args.iter().find_map(|a| match a {
            Argument::Modification(m)
                if m.name.parts.len() == 1 && &*m.name.parts[0].name == name =>
            {
                Some(m)
            }
            _ => None,
        })
    }
}

/// One argument of a class modification.
#[derive(Clone, Debug, PartialEq)]
pub enum Argument {
    /// `[each] [final] a.b.c [modification] "description"`
    Modification(ElementModification),
    /// `redeclare [each] [final] [replaceable] ...` or `[each] [final] replaceable ...`
    Redeclare(ElementRedeclaration),
    /// `break name` or `break connect(a, b)`: selective model extension, only in the
    /// modification of an extends clause.
    Break(InheritanceBreak),
}

/// An inheritance modification removing an inherited element or connection.
#[derive(Clone, Debug, PartialEq)]
pub struct InheritanceBreak {
    pub target: BreakTarget,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum BreakTarget {
    /// `break name`: the inherited element `name` is not inherited.
    Element(Ident),
    /// `break connect(a, b)`: the inherited connect equation is not inherited.
    Connect {
        lhs: ComponentRef,
        rhs: ComponentRef,
    },
}

impl Argument {
    pub fn span(&self) -> Span {
        match self {
            Argument::Modification(m) => m.span,
            Argument::Redeclare(r) => r.span,
            Argument::Break(b) => b.span,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ElementModification {
    pub each: bool,
    pub final_: bool,
    /// Dotted path `a.b.c` (never global).
    pub name: Name,
    pub modification: Option<Modification>,
    /// Description string parts (`"a" + "b"`), usually empty.
    pub description: Vec<String>,
    pub span: Span,
}

/// A redeclaration or replaceable declaration inside a modification.
#[derive(Clone, Debug, PartialEq)]
pub struct ElementRedeclaration {
    pub each: bool,
    pub final_: bool,
    /// Written with `redeclare` (false for a bare `replaceable` element modification).
    pub redeclare: bool,
    pub replaceable: bool,
    pub element: RedeclaredElement,
    /// Only with `replaceable`.
    pub constraining: Option<ConstrainingClause>,
    pub span: Span,
}

/// What a redeclaration in a modification declares.
#[derive(Clone, Debug, PartialEq)]
pub enum RedeclaredElement {
    /// A short class definition (`model M = N(...)`, `type E = enumeration(...)`, ...).
    Class(Box<ClassDef>),
    /// A component clause with exactly one declaration, no type subscripts and no condition.
    Component(Box<ComponentClause>),
}

/// `"string" + "string" annotation(...)` (both parts optional).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Description {
    /// Decoded string parts; the description text is their concatenation.
    pub strings: Vec<String>,
    pub annotation: Option<Annotation>,
}

impl Description {
    /// The description text (parts concatenated); empty if none.
    pub fn text(&self) -> String {
        self.strings.concat()
    }

    pub fn is_empty(&self) -> bool {
        self.strings.is_empty() && self.annotation.is_none()
    }
}

/// `annotation ( ... )`, kept as a class modification.
#[derive(Clone, Debug, PartialEq)]
pub struct Annotation {
    pub modification: ClassModification,
    pub span: Span,
}

// ---------------------------------------------------------------------------------------------
// Equations and statements
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
pub struct Equation {
    pub kind: EquationKind,
    pub description: Description,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum EquationKind {
    /// `lhs = rhs`
    Simple { lhs: Expr, rhs: Expr },
    /// `if c1 then ... elseif c2 then ... else ... end if`
    If {
        branches: Vec<(Expr, Vec<Equation>)>,
        else_branch: Vec<Equation>,
    },
    /// `for i in r, j loop ... end for`
    For {
        indices: Vec<ForIndex>,
        body: Vec<Equation>,
    },
    /// `connect(a, b)`
    Connect {
        lhs: ComponentRef,
        rhs: ComponentRef,
    },
    /// `when c1 then ... elsewhen c2 then ... end when`
    When {
        branches: Vec<(Expr, Vec<Equation>)>,
    },
    /// A function call used as an equation: `assert(...)`, `terminate(...)`, `reinit(x, 0)`.
    Call {
        function: ComponentRef,
        args: FunctionArgs,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Statement {
    pub kind: StatementKind,
    pub description: Description,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StatementKind {
    /// `target := value`
    Assign {
        target: ComponentRef,
        value: Expr,
    },
    /// `(a, , b) := f(x)` (empty slots are `None`); `value` is a call expression.
    TupleAssign {
        targets: Vec<Option<Expr>>,
        value: Expr,
    },
    /// A procedure call `f(x);`
    Call {
        function: ComponentRef,
        args: FunctionArgs,
    },
    If {
        branches: Vec<(Expr, Vec<Statement>)>,
        else_branch: Vec<Statement>,
    },
    For {
        indices: Vec<ForIndex>,
        body: Vec<Statement>,
    },
    While {
        condition: Expr,
        body: Vec<Statement>,
    },
    When {
        branches: Vec<(Expr, Vec<Statement>)>,
    },
    Return,
    Break,
}

/// `IDENT [in expr]` in a for loop, reduction or comprehension (no range: deduced from use).
#[derive(Clone, Debug, PartialEq)]
pub struct ForIndex {
    pub name: Ident,
    pub range: Option<Expr>,
    pub span: Span,
}

// ---------------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

impl Expr {
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        Expr { kind, span }
    }

    /// Call `f` on this expression and then on every sub-expression, depth first: operands,
    /// branches, array elements, call arguments, iterator ranges and the subscripts inside
    /// component references (e.g. to collect every referenced name).
    pub fn walk(&self, f: &mut dyn FnMut(&Expr)) {
        f(self);
        match &self.kind {
            ExprKind::Integer(_)
            | ExprKind::Real { .. }
            | ExprKind::String(_)
            | ExprKind::Bool(_)
            | ExprKind::End
            | ExprKind::Break => {}
            ExprKind::Ref(c) => c.walk_subscripts(f),
            ExprKind::Call { function, args } => {
                function.walk_subscripts(f);
                args.walk(f);
            }
            ExprKind::PartialApplication { args, .. } => {
                args.iter().for_each(|a| a.value.walk(f));
            }
            ExprKind::Unary { operand, .. } => operand.walk(f),
            ExprKind::Binary { lhs, rhs, .. } => {
                lhs.walk(f);
                rhs.walk(f);
            }
            ExprKind::If {
                branches,
                else_branch,
            } => {
                for (c, v) in branches {
                    c.walk(f);
                    v.walk(f);
                }
                else_branch.walk(f);
            }
            ExprKind::Range { start, step, stop } => {
                start.walk(f);
                if let Some(s) = step {
                    s.walk(f);
                }
                stop.walk(f);
            }
            ExprKind::Array(items) => items.iter().for_each(|e| e.walk(f)),
            ExprKind::ArrayComprehension { body, indices } => {
                body.walk(f);
                walk_indices(indices, f);
            }
            ExprKind::Matrix(rows) => rows.iter().flatten().for_each(|e| e.walk(f)),
            ExprKind::Tuple(items) => items.iter().flatten().for_each(|e| e.walk(f)),
        }
    }
}

fn walk_indices(indices: &[ForIndex], f: &mut dyn FnMut(&Expr)) {
    for i in indices {
        if let Some(r) = &i.range {
            r.walk(f);
        }
    }
}

impl FunctionArgs {
    /// Walk every argument expression (see [`Expr::walk`]).
    pub fn walk(&self, f: &mut dyn FnMut(&Expr)) {
        match self {
            FunctionArgs::List { positional, named } => {
                positional.iter().for_each(|e| e.walk(f));
                named.iter().for_each(|a| a.value.walk(f));
            }
            FunctionArgs::Comprehension { body, indices } => {
                body.walk(f);
                walk_indices(indices, f);
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// Unsigned integer literal (a leading minus is a [`UnaryOp::Neg`]).
    Integer(i64),
    /// Unsigned real literal, or an integer literal too large for `i64`. `text` is the source
    /// spelling (kept for exact printing); synthesized literals may leave it empty, and the
    /// printer then formats `value`.
    Real {
        value: f64,
        text: Arc<str>,
    },
    /// String literal with escapes decoded.
    String(String),
    Bool(bool),
    /// `a.b[1].c`, `.a.b`
    Ref(ComponentRef),
    /// `end` inside subscripts.
    End,
    /// `break` as a modification binding (`x = break`), which removes the inherited binding
    /// (selective model extension). Never produced elsewhere.
    Break,
    /// `f(args)`, including `der(x)`, `initial()`, `pure(f(x))`.
    Call {
        function: ComponentRef,
        args: FunctionArgs,
    },
    /// `function f(a = 1)`: partial application, only allowed as a function argument.
    PartialApplication {
        function: Name,
        args: Vec<NamedArg>,
    },
    Unary {
        op: UnaryOp,
        operand: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `if c1 then e1 elseif c2 then e2 else e3`
    If {
        branches: Vec<(Expr, Expr)>,
        else_branch: Box<Expr>,
    },
    /// `start : stop` or `start : step : stop`
    Range {
        start: Box<Expr>,
        step: Option<Box<Expr>>,
        stop: Box<Expr>,
    },
    /// `{a, b, c}`
    Array(Vec<Expr>),
    /// `{e for i in r, j in s}`
    ArrayComprehension {
        body: Box<Expr>,
        indices: Vec<ForIndex>,
    },
    /// `[a, b; c, d]`: rows of columns.
    Matrix(Vec<Vec<Expr>>),
    /// `(a, , b)`: output expression list with at least two slots or an empty slot; a plain
    /// parenthesized expression `(e)` is just `e`.
    Tuple(Vec<Option<Expr>>),
}

/// Arguments of a function call.
#[derive(Clone, Debug, PartialEq)]
pub enum FunctionArgs {
    /// `f(a, b, name = c)`: positional arguments first, then named ones.
    List {
        positional: Vec<Expr>,
        named: Vec<NamedArg>,
    },
    /// `f(e for i in r, j in s)`: a reduction such as `sum(...)`, or an array constructor
    /// `array(...)`.
    Comprehension {
        body: Box<Expr>,
        indices: Vec<ForIndex>,
    },
}

impl FunctionArgs {
    /// An empty argument list `()`.
    pub fn empty() -> FunctionArgs {
        FunctionArgs::List {
            positional: Vec::new(),
            named: Vec::new(),
        }
    }
}

/// `name = value` in a call.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedArg {
    pub name: Ident,
    pub value: Expr,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-`
    Neg,
    /// `+`
    Plus,
    /// `.-`
    ElemNeg,
    /// `.+`
    ElemPlus,
    /// `not`
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
    ElemAdd,
    ElemSub,
    ElemMul,
    ElemDiv,
    ElemPow,
    And,
    Or,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl BinaryOp {
    /// The operator as written in Modelica.
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Pow => "^",
            BinaryOp::ElemAdd => ".+",
            BinaryOp::ElemSub => ".-",
            BinaryOp::ElemMul => ".*",
            BinaryOp::ElemDiv => "./",
            BinaryOp::ElemPow => ".^",
            BinaryOp::And => "and",
            BinaryOp::Or => "or",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "<>",
        }
    }
}

impl UnaryOp {
    /// The operator as written in Modelica (`not` without the following space).
    pub fn symbol(self) -> &'static str {
        match self {
            UnaryOp::Neg => "-",
            UnaryOp::Plus => "+",
            UnaryOp::ElemNeg => ".-",
            UnaryOp::ElemPlus => ".+",
            UnaryOp::Not => "not",
        }
    }
}

/// `[.] a [subs] . b [subs] ...`
#[derive(Clone, Debug, PartialEq)]
pub struct ComponentRef {
    pub global: bool,
    /// At least one part.
    pub parts: Vec<RefPart>,
    pub span: Span,
}

impl ComponentRef {
    /// A simple one-part reference without subscripts (used for `der`, `initial`, ...).
    pub fn simple(name: Ident) -> ComponentRef {
        let span = name.span;
        ComponentRef {
            global: false,
            parts: vec![RefPart {
                name,
                subscripts: Vec::new(),
            }],
            span,
        }
    }

    /// Walk the expressions in all subscripts of all parts (see [`Expr::walk`]).
    pub fn walk_subscripts(&self, f: &mut dyn FnMut(&Expr)) {
        for p in &self.parts {
            for s in &p.subscripts {
                if let Subscript::Expr(e) = s {
                    e.walk(f);
                }
            }
        }
    }

    /// `Some("der")` etc. if this is a one-part, unsubscripted, non-global reference.
    pub fn as_simple_name(&self) -> Option<&str> {
        match self.parts.as_slice() {
            [p] if !self.global && p.subscripts.is_empty() => Some(&p.name.name),
            _ => None,
        }
    }
}

/// One `IDENT [subscripts]` part of a component reference.
#[derive(Clone, Debug, PartialEq)]
pub struct RefPart {
    pub name: Ident,
    pub subscripts: Vec<Subscript>,
}

/// An array subscript: `:` or an expression (which may contain `end`).
#[derive(Clone, Debug, PartialEq)]
pub enum Subscript {
    Colon(Span),
    Expr(Expr),
}
