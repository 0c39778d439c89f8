//! Parser tests: tree shapes for precedence and every construct, and exact diagnostics.

use moss_syntax::ast::*;
use moss_syntax::{parse_expr, parse_source, FileId, SourceMap};

/// Parse a whole file held in a string; panics (test failure) on syntax errors.
fn parse_ok(text: &str) -> StoredDefinition {
    let sources = SourceMap::new();
    let (_, def, diags) = parse_source(&sources, "test.mo", text);
    assert!(
        diags.is_empty(),
        "unexpected diagnostics:\n{}",
        moss_syntax::diag::render_all(&diags, &sources)
    );
    def
}

/// Parse and render all diagnostics (the file is called `err.mo`).
fn errors_of(text: &str) -> String {
    let sources = SourceMap::new();
    let (_, _, diags) = parse_source(&sources, "err.mo", text);
    moss_syntax::diag::render_all(&diags, &sources)
}

/// A compact prefix form of an expression, to check tree shapes.
fn sexpr(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Integer(v) => v.to_string(),
        ExprKind::Real { text, .. } => text.to_string(),
        ExprKind::String(s) => format!("{s:?}"),
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::Ref(c) => c.to_string(),
        ExprKind::End => "end".into(),
        ExprKind::Unary { op, operand } => format!("({} {})", op.symbol(), sexpr(operand)),
        ExprKind::Binary { op, lhs, rhs } => {
            format!("({} {} {})", op.symbol(), sexpr(lhs), sexpr(rhs))
        }
        ExprKind::Range { start, step, stop } => match step {
            Some(s) => format!("(: {} {} {})", sexpr(start), sexpr(s), sexpr(stop)),
            None => format!("(: {} {})", sexpr(start), sexpr(stop)),
        },
        ExprKind::If {
            branches,
            else_branch,
        } => {
            let mut s = "(if".to_string();
            for (c, v) in branches {
                s += &format!(" {} {}", sexpr(c), sexpr(v));
            }
            s + &format!(" {})", sexpr(else_branch))
        }
        other => format!("{other:?}"),
    }
}

fn expr_shape(text: &str) -> String {
    let (e, diags) = parse_expr(FileId(0), text);
    assert!(diags.is_empty(), "{text}: {:?}", diags);
    sexpr(&e.expect("expression parsed"))
}

fn expr_error(text: &str) -> String {
    let (e, diags) = parse_expr(FileId(0), text);
    assert!(e.is_none(), "{text} should not parse");
    diags
        .iter()
        .map(|d| d.message.clone())
        .collect::<Vec<_>>()
        .join("; ")
}

#[test]
fn precedence_and_associativity() {
    assert_eq!(expr_shape("a + b * c ^ d"), "(+ a (* b (^ c d)))");
    assert_eq!(expr_shape("-2^2"), "(- (^ 2 2))");
    assert_eq!(expr_shape("-a * b"), "(- (* a b))");
    assert_eq!(expr_shape("-a + b"), "(+ (- a) b)");
    assert_eq!(expr_shape("a - b - c"), "(- (- a b) c)");
    assert_eq!(expr_shape("a / b * c"), "(* (/ a b) c)");
    assert_eq!(expr_shape("a .* b .+ c ./ d"), "(.+ (.* a b) (./ c d))");
    assert_eq!(expr_shape("a .^ 2"), "(.^ a 2)");
    assert_eq!(expr_shape("(a ^ b) ^ c"), "(^ (^ a b) c)");
    assert_eq!(expr_shape("a or b and c"), "(or a (and b c))");
    assert_eq!(expr_shape("not a and b"), "(and (not a) b)");
    assert_eq!(expr_shape("not a < b"), "(not (< a b))");
    assert_eq!(expr_shape("a + 1 < b * 2"), "(< (+ a 1) (* b 2))");
    assert_eq!(expr_shape("a == b or c <> d"), "(or (== a b) (<> c d))");
    assert_eq!(expr_shape("1:n"), "(: 1 n)");
    assert_eq!(expr_shape("1:2:n+1"), "(: 1 2 (+ n 1))");
    assert_eq!(
        expr_shape("if a then b elseif c then d else e + 1"),
        "(if a b c d (+ e 1))"
    );
    assert_eq!(expr_shape("12.^2"), "(^ 12. 2)");
    assert_eq!(expr_shape("12 .^2"), "(.^ 12 2)");
}

#[test]
fn non_associative_operators_are_rejected() {
    assert_eq!(expr_error("a ^ b ^ c"), "`^` is not associative");
    assert_eq!(expr_error("a .^ b ^ c"), "`^` is not associative");
    assert_eq!(
        expr_error("a < b < c"),
        "comparison operators cannot be chained"
    );
    assert_eq!(expr_error("a + -b"), "expected expression, found `-`");
    assert_eq!(expr_error("not not a"), "expected expression, found `not`");
}

#[test]
fn literals() {
    let (e, _) = parse_expr(FileId(0), "\"a\\tb\\\"c\\n\\\\\"");
    assert_eq!(e.unwrap().kind, ExprKind::String("a\tb\"c\n\\".into()));
    let (e, _) = parse_expr(FileId(0), "1.5e-3");
    match e.unwrap().kind {
        ExprKind::Real { value, text } => {
            assert_eq!(value, 1.5e-3);
            assert_eq!(&*text, "1.5e-3");
        }
        k => panic!("{k:?}"),
    }
    let (e, _) = parse_expr(FileId(0), "99999999999999999999");
    assert!(matches!(e.unwrap().kind, ExprKind::Real { value, .. } if value == 1e20));
    let (e, _) = parse_expr(FileId(0), "'a b'.'c'[end]");
    let ExprKind::Ref(c) = e.unwrap().kind else {
        panic!("not a reference")
    };
    assert_eq!(&*c.parts[0].name.name, "'a b'");
    assert_eq!(c.parts[1].subscripts.len(), 1);
}

#[test]
fn calls_comprehensions_and_partial_application() {
    let (e, _) = parse_expr(FileId(0), "f(1, x, a = 2, g = function h(k = 3))");
    let ExprKind::Call { function, args } = e.unwrap().kind else {
        panic!("not a call")
    };
    assert_eq!(function.to_string(), "f");
    let FunctionArgs::List { positional, named } = args else {
        panic!("not a list")
    };
    assert_eq!(positional.len(), 2);
    assert_eq!(named.len(), 2);
    assert!(matches!(
        named[1].value.kind,
        ExprKind::PartialApplication { .. }
    ));

    let (e, _) = parse_expr(FileId(0), "sum(a[i, j] for i in 1:2, j in 1:3)");
    let ExprKind::Call { args, .. } = e.unwrap().kind else {
        panic!("not a call")
    };
    let FunctionArgs::Comprehension { indices, .. } = args else {
        panic!("not a reduction")
    };
    assert_eq!(indices.len(), 2);

    let (e, _) = parse_expr(FileId(0), "{i for i in 1:3, j}");
    let ExprKind::ArrayComprehension { indices, .. } = e.unwrap().kind else {
        panic!("not a comprehension")
    };
    assert!(indices[1].range.is_none());

    let (e, _) = parse_expr(FileId(0), "[1, 2; 3, 4]");
    let ExprKind::Matrix(rows) = e.unwrap().kind else {
        panic!("not a matrix")
    };
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1].len(), 2);

    let (e, _) = parse_expr(FileId(0), "der(x) + initial()");
    let ExprKind::Binary { lhs, rhs, .. } = e.unwrap().kind else {
        panic!("not a sum")
    };
    for (call, name, nargs) in [(lhs, "der", 1), (rhs, "initial", 0)] {
        let ExprKind::Call { function, args } = call.kind else {
            panic!("not a call")
        };
        assert_eq!(function.as_simple_name(), Some(name));
        assert!(matches!(args, FunctionArgs::List { positional, .. } if positional.len() == nargs));
    }
}

#[test]
fn class_structure() {
    let def = parse_ok(
        "within A.B;\n\
         final partial model M \"doc\"\n\
           extends Base(k = 2);\n\
           import SI = Modelica.Units.SI;\n\
           replaceable model R = N constrainedby N;\n\
           inner outer parameter Real[2] x[3](each start = 1) = y if c \"d\";\n\
         protected\n\
           Real z;\n\
         initial equation\n\
           z = 0;\n\
         equation\n\
           connect(a, b);\n\
         algorithm\n\
           z := 1;\n\
           annotation(experiment(StopTime = 2));\n\
         end M;\n",
    );
    assert_eq!(def.within.as_ref().unwrap().to_string(), "A.B");
    let sc = &def.classes[0];
    assert!(sc.final_);
    assert!(sc.class.prefixes.partial);
    assert_eq!(sc.class.prefixes.kind, ClassKind::Model);
    let ClassSpecifier::Long {
        description,
        composition,
        ..
    } = &sc.class.specifier
    else {
        panic!("not long")
    };
    assert_eq!(description.text(), "doc");
    let elems: Vec<_> = composition.elements().collect();
    assert_eq!(elems.len(), 5);
    assert!(matches!(elems[0].1, Element::Extends(_)));
    assert!(matches!(
        &elems[1].1,
        Element::Import(ImportClause {
            kind: ImportKind::Renaming { .. },
            ..
        })
    ));
    let Element::Class { constraining, .. } = elems[2].1 else {
        panic!("not a class")
    };
    assert!(constraining.is_some());
    let Element::Component {
        prefixes, clause, ..
    } = elems[3].1
    else {
        panic!("not a component")
    };
    assert!(prefixes.inner && prefixes.outer);
    assert_eq!(clause.prefixes.variability, Some(Variability::Parameter));
    assert_eq!(clause.subscripts.len(), 1);
    let decl = &clause.components[0];
    assert_eq!(decl.subscripts.len(), 1);
    assert!(decl.condition.is_some());
    assert!(decl.modification.as_ref().unwrap().binding.is_some());
    assert_eq!(elems[4].0, Visibility::Protected);
    assert_eq!(composition.equations(true).count(), 1);
    assert_eq!(composition.equations(false).count(), 1);
    assert_eq!(composition.algorithms(false).count(), 1);
    let ann = composition.annotation.as_ref().unwrap();
    assert!(ann.modification.find("experiment").is_some());
}

#[test]
fn short_enumeration_and_der_classes() {
    let def = parse_ok(
        "package P\n\
           type T = input Real[3](unit = \"m\") \"len\";\n\
           type E = enumeration(a \"first\", b);\n\
           type O = enumeration(:);\n\
           function df = der(f, x, y);\n\
           model extends Inner(k = 1) \"ext\" Real q; end Inner;\n\
         end P;\n",
    );
    let comp = def.classes[0].class.specifier.composition().unwrap();
    let classes: Vec<&ClassDef> = comp
        .elements()
        .filter_map(|(_, e)| match e {
            Element::Class { class, .. } => Some(&**class),
            _ => None,
        })
        .collect();
    assert!(matches!(
        &classes[0].specifier,
        ClassSpecifier::Short { base_prefix: Some(Causality::Input), subscripts, modification: Some(_), .. } if subscripts.len() == 1
    ));
    assert!(matches!(
        &classes[1].specifier,
        ClassSpecifier::Enumeration { literals: EnumLiterals::List(l), .. } if l.len() == 2 && l[0].description.text() == "first"
    ));
    assert!(matches!(
        &classes[2].specifier,
        ClassSpecifier::Enumeration {
            literals: EnumLiterals::Colon,
            ..
        }
    ));
    assert!(matches!(
        &classes[3].specifier,
        ClassSpecifier::Der { wrt, .. } if wrt.len() == 2
    ));
    assert!(matches!(
        &classes[4].specifier,
        ClassSpecifier::Extends {
            modification: Some(_),
            ..
        }
    ));
}

#[test]
fn modifiers_and_redeclarations() {
    let def = parse_ok(
        "model M\n\
           B b(redeclare each final Real x = 1, replaceable model R = S constrainedby T, \
               each final a.b(start = 2) = 3 \"d\" + \"e\", c := 4);\n\
         end M;\n",
    );
    let comp = def.classes[0].class.specifier.composition().unwrap();
    let (_, Element::Component { clause, .. }) = comp.elements().next().unwrap() else {
        panic!("not a component")
    };
    let m = clause.components[0].modification.as_ref().unwrap();
    let args = &m.class_modification.as_ref().unwrap().args;
    assert!(matches!(
        &args[0],
        Argument::Redeclare(ElementRedeclaration {
            each: true,
            final_: true,
            redeclare: true,
            replaceable: false,
            element: RedeclaredElement::Component(_),
            ..
        })
    ));
    assert!(matches!(
        &args[1],
        Argument::Redeclare(ElementRedeclaration {
            redeclare: false,
            replaceable: true,
            element: RedeclaredElement::Class(_),
            constraining: Some(_),
            ..
        })
    ));
    let Argument::Modification(em) = &args[2] else {
        panic!("not a modification")
    };
    assert!(em.each && em.final_);
    assert_eq!(em.name.to_string(), "a.b");
    assert_eq!(em.description, vec!["d".to_string(), "e".to_string()]);
    let Argument::Modification(em) = &args[3] else {
        panic!("not a modification")
    };
    assert!(
        em.modification
            .as_ref()
            .unwrap()
            .binding
            .as_ref()
            .unwrap()
            .assign
    );
}

#[test]
fn equations_and_statements() {
    let def = parse_ok(
        "model M\n\
         equation\n\
           if a then x = 1; elseif b then x = 2; else x = 3; end if;\n\
           for i in 1:2, j loop y[i] = j; end for;\n\
           when c then reinit(x, 0); elsewhen d then e = 1; end when;\n\
           assert(x > 0, \"msg\");\n\
         algorithm\n\
           (a, , b) := f(x);\n\
           while x < 1 loop x := x + 1; if x > 3 then break; end if; end while;\n\
           return;\n\
         end M;\n",
    );
    let comp = def.classes[0].class.specifier.composition().unwrap();
    let eqs: Vec<_> = comp.equations(false).collect();
    assert!(
        matches!(&eqs[0].kind, EquationKind::If { branches, else_branch } if branches.len() == 2 && else_branch.len() == 1)
    );
    assert!(matches!(&eqs[1].kind, EquationKind::For { indices, .. } if indices.len() == 2));
    assert!(matches!(&eqs[2].kind, EquationKind::When { branches } if branches.len() == 2));
    assert!(
        matches!(&eqs[3].kind, EquationKind::Call { function, .. } if function.to_string() == "assert")
    );
    let stmts = comp.algorithms(false).next().unwrap();
    assert!(
        matches!(&stmts[0].kind, StatementKind::TupleAssign { targets, .. } if targets.len() == 3 && targets[1].is_none())
    );
    assert!(matches!(&stmts[1].kind, StatementKind::While { body, .. } if body.len() == 2));
    assert!(matches!(stmts[2].kind, StatementKind::Return));
}

#[test]
fn external_clauses() {
    let def = parse_ok(
        "function f input Real x; output Real y;\n\
         external \"C\" y = c_f(x, 2) annotation(Library = \"m\");\n\
         annotation(Inline = true);\n\
         end f;\n",
    );
    let comp = def.classes[0].class.specifier.composition().unwrap();
    let ext = comp.external.as_ref().unwrap();
    assert_eq!(ext.language.as_deref(), Some("C"));
    let call = ext.call.as_ref().unwrap();
    assert_eq!(call.output.as_ref().unwrap().to_string(), "y");
    assert_eq!(call.function.as_str(), "c_f");
    assert_eq!(call.args.len(), 2);
    assert!(ext.annotation.is_some());
    assert!(comp.annotation.is_some());
}

#[test]
fn spans_point_at_source() {
    let text = "model M\n  Real x = 1 + 2;\nend M;\n";
    let def = parse_ok(text);
    let comp = def.classes[0].class.specifier.composition().unwrap();
    let (_, Element::Component { clause, .. }) = comp.elements().next().unwrap() else {
        panic!("not a component")
    };
    let e = &clause.components[0]
        .modification
        .as_ref()
        .unwrap()
        .binding
        .as_ref()
        .unwrap()
        .expr;
    assert_eq!(&text[e.span.start as usize..e.span.end as usize], "1 + 2");
    assert_eq!(
        &text[clause.span.start as usize..clause.span.end as usize],
        "Real x = 1 + 2"
    );
}

// -- diagnostics ----------------------------------------------------------------------------

#[test]
fn missing_semicolon_message() {
    let got = errors_of("model M\n  Real x\nequation\n  x = 1;\nend M;\n");
    let expected = "\
error: expected `;`, found `equation`
  --> err.mo:2:9
  |
2 |   Real x
  |         ^ expected `;` here
  --> err.mo:3:1
  |
3 | equation
  | ^^^^^^^^ found `equation`
   = help: terminate the element with `;`
";
    assert_eq!(got, expected);
    let got = errors_of("model M\n  Real x = 1 2;\nend M;\n");
    let expected = "\
error: expected `;`, found `2`
  --> err.mo:2:14
  |
2 |   Real x = 1 2;
  |              ^ expected `;` before this
   = help: terminate the element with `;`
";
    assert_eq!(got, expected);
}

#[test]
fn wrong_end_name_message() {
    let got = errors_of("model M\nend N;\n");
    let expected = "\
error: class `M` is closed with `end N`
  --> err.mo:2:5
  |
2 | end N;
  |     ^ expected `end M`
  --> err.mo:1:7
  |
1 | model M
  |       ^ class opened here
   = help: write `end M;`
";
    assert_eq!(got, expected);
}

#[test]
fn assignment_in_equation_message() {
    let got = errors_of("model M\n  Real x;\nequation\n  x := 1;\nend M;\n");
    let expected = "\
error: expected `=`, found `:=`
  --> err.mo:4:5
  |
4 |   x := 1;
  |     ^^ expected `=` in equation
   = help: equations use `=`; `:=` is for algorithm sections
";
    assert_eq!(got, expected);
}

#[test]
fn keyword_as_name_message() {
    let got = errors_of("model M\n  Real end;\nend M;\n");
    assert!(
        got.starts_with("error: expected identifier, found `end`\n  --> err.mo:2:8\n"),
        "{got}"
    );
    assert!(got.contains("is a reserved keyword"), "{got}");
}

#[test]
fn lexical_error_messages() {
    let got = errors_of("model M\n  Real x = 1e;\n  String s = \"a\\qb\";\nend M;\n");
    let expected = "\
error: malformed exponent
  --> err.mo:2:12
  |
2 |   Real x = 1e;
  |            ^^ exponent has no digits
   = help: write the exponent as e.g. `1e-3` or `2.5E4`

error: expected `;`, found `e`
  --> err.mo:2:13
  |
2 |   Real x = 1e;
  |             ^ expected `;` before this
   = help: terminate the element with `;`

error: unknown escape sequence
  --> err.mo:3:16
  |
3 |   String s = \"a\\qb\";
  |                ^^ not a Modelica escape
   = help: valid escapes are \\' \\\" \\? \\\\ \\a \\b \\f \\n \\r \\t \\v; write `\\\\` for a backslash
";
    assert_eq!(got, expected);
}

#[test]
fn leading_dot_reals_are_valid() {
    // UNSIGNED-REAL in the Modelica 3.6 grammar allows `.5` and `.5e-3`.
    assert_eq!(expr_shape(".5 + .5e-3"), "(+ .5 .5e-3)");
}

#[test]
fn inheritance_breaks() {
    let def =
        parse_ok("model M\n  extends B(break x, break connect(a.p, b[1].n), k = break);\nend M;\n");
    let comp = def.classes[0].class.specifier.composition().unwrap();
    let (_, Element::Extends(ext)) = comp.elements().next().unwrap() else {
        panic!("not extends")
    };
    let args = &ext.modification.as_ref().unwrap().args;
    assert!(
        matches!(&args[0], Argument::Break(InheritanceBreak { target: BreakTarget::Element(n), .. }) if n == "x")
    );
    assert!(matches!(
        &args[1],
        Argument::Break(InheritanceBreak {
            target: BreakTarget::Connect { .. },
            ..
        })
    ));
    let Argument::Modification(m) = &args[2] else {
        panic!("not a modification")
    };
    let binding = m.modification.as_ref().unwrap().binding.as_ref().unwrap();
    assert_eq!(binding.expr.kind, ExprKind::Break);

    let got = errors_of("model M\n  B b(break x);\nend M;\n");
    assert!(
        got.starts_with("error: `break` is not allowed here\n  --> err.mo:2:7\n"),
        "{got}"
    );
}

#[test]
fn several_errors_are_reported_with_recovery() {
    let text = "model M\n\
                  Real a\n\
                  Real b;\n\
                  Real c = ;\n\
                  Real d;\n\
                equation\n\
                  a = 1\n\
                  b = 2;\n\
                  c := 3;\n\
                  d = 4;\n\
                end M;\n\
                model N\n\
                  Real e = (1 + ;\n\
                end N;\n";
    let sources = SourceMap::new();
    let (_, def, diags) = parse_source(&sources, "err.mo", text);
    let locations: Vec<String> = diags.iter().map(|d| sources.location(d.span)).collect();
    assert_eq!(
        locations,
        vec![
            // (the `\` line continuations strip the indentation)
            "err.mo:2:7",   // missing `;` after `Real a`
            "err.mo:4:10",  // missing binding expression
            "err.mo:7:6",   // missing `;` after `a = 1`
            "err.mo:9:3",   // `:=` in an equation
            "err.mo:13:15", // missing operand
        ]
    );
    // Both classes were still recovered.
    assert_eq!(def.classes.len(), 2);
    let comp = def.classes[0].class.specifier.composition().unwrap();
    assert!(comp.elements().count() >= 2);
    assert!(comp.equations(false).count() >= 1);
}

#[test]
fn unterminated_constructs() {
    let got = errors_of("model M\n  String s = \"abc;\nend M;\n");
    assert!(
        got.starts_with("error: unterminated string\n  --> err.mo:2:14\n"),
        "{got}"
    );
    let got = errors_of("model M /* never closed\n");
    assert!(
        got.contains("error: unterminated comment\n  --> err.mo:1:9\n"),
        "{got}"
    );
    let got = errors_of("model M\n  Real x;\n");
    assert!(got.contains("expected `end M`, found end of file"), "{got}");
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    // Run with a 1 MiB stack (half the default for spawned threads) to keep a safety margin.
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(deep_nesting_cases)
        .expect("spawn test thread")
        .join()
        .expect("deep nesting test thread");
}

fn deep_nesting_cases() {
    let n = 100_000;
    let deep = format!("{}1{}", "(".repeat(n), ")".repeat(n));
    let (e, diags) = parse_expr(FileId(0), &deep);
    assert!(e.is_none());
    assert!(diags.iter().any(|d| d.message == "nesting too deep"));

    let braces = format!("{}1{}", "{".repeat(n), "}".repeat(n));
    let (_, diags) = parse_expr(FileId(0), &braces);
    assert!(diags.iter().any(|d| d.message == "nesting too deep"));

    let classes = format!("{}{}", "model A ".repeat(n / 10), "end A; ".repeat(n / 10));
    let sources = SourceMap::new();
    let (_, _, diags) = parse_source(&sources, "deep.mo", classes);
    assert!(diags.iter().any(|d| d.message == "nesting too deep"));

    let ifs = format!(
        "model M equation {} x = 1; {} end M;",
        "if c then ".repeat(n / 10),
        "end if; ".repeat(n / 10)
    );
    let (_, _, diags) = parse_source(&sources, "deep2.mo", ifs);
    assert!(diags.iter().any(|d| d.message == "nesting too deep"));
}

#[test]
fn long_operator_chains_are_bounded() {
    let chain = vec!["a"; 200_000].join(" + ");
    let text = format!("model M Real x = {chain}; end M;");
    let sources = SourceMap::new();
    let (_, _, diags) = parse_source(&sources, "chain.mo", text);
    assert!(diags.iter().any(|d| d.message == "expression too long"));
    // Long but reasonable chains are fine, and print back.
    let chain = vec!["a"; 500].join(" - ");
    let def = parse_ok(&format!("model M Real x = {chain}; end M;"));
    let printed = moss_syntax::print_stored_definition(&def);
    assert!(printed.contains(&chain));
}

#[test]
fn recovery_reports_each_real_error_once() {
    let text = r#"model M
  parameter Real k = 2
  Real x(start = 1;
  Real y "desc;
equation
  der(x) = -k*x
  y = if x > 0 then 1;
  connect(a b);
  for i in 1:3
    z[i] = 1;
  end for;
end M;

model N
  Real v = 1 +;
algorithm
  v = 2;
end N
"#;
    let sources = SourceMap::new();
    let (_, def, diags) = parse_source(&sources, "rec.mo", text);
    let got: Vec<String> = diags
        .iter()
        .map(|d| format!("{} {}", sources.location(d.span), d.message))
        .collect();
    let expected = [
        "rec.mo:2:23 expected `;`, found `Real`",
        "rec.mo:3:19 expected `,` or `)` in modification, found `;`",
        "rec.mo:4:10 unterminated string",
        "rec.mo:4:16 expected `;`, found `equation`",
        "rec.mo:6:16 expected `;`, found `y`",
        "rec.mo:7:22 expected `else` or `elseif` in if-expression, found `;`",
        "rec.mo:8:13 expected `,`, found `b`",
        "rec.mo:9:15 expected `loop`, found `z`",
        "rec.mo:11:3 `end for` without a matching `for`",
        "rec.mo:15:15 expected expression, found `;`",
        "rec.mo:17:5 expected `:=` or `(`, found `=`",
        "rec.mo:18:6 expected `;`, found end of file",
    ];
    assert_eq!(got, expected);
    assert_eq!(def.classes.len(), 2);
    assert_eq!(def.classes[1].class.name.as_str(), "N");
}

#[test]
fn stray_class_end_at_top_level_recovers() {
    let sources = SourceMap::new();
    let text = "model A\nend A;\nend B;\nmodel C\n  Real x;\nend C;\n";
    let (_, def, diags) = parse_source(&sources, "s.mo", text);
    assert_eq!(
        diags.len(),
        1,
        "{}",
        moss_syntax::diag::render_all(&diags, &sources)
    );
    assert_eq!(sources.location(diags[0].span), "s.mo:3:1");
    let names: Vec<&str> = def.classes.iter().map(|c| c.class.name.as_str()).collect();
    assert_eq!(names, ["A", "C"]);
}

#[test]
fn walk_visits_every_subexpression() {
    let (e, _) = parse_expr(
        FileId(0),
        "f(a[i + 1], n = {b for k in 1:m}) + (if c then d else [e; g]) * h.p[j]",
    );
    let mut names = Vec::new();
    e.unwrap().walk(&mut |x| {
        if let ExprKind::Ref(r) = &x.kind {
            names.push(r.to_string());
        }
    });
    assert_eq!(
        names,
        ["a[i + 1]", "i", "b", "m", "c", "d", "e", "g", "h.p[j]", "j"]
    );
}

#[test]
fn common_mistakes_get_specific_help() {
    let got = errors_of("model M\nend;\n");
    assert!(
        got.starts_with(
            "error: expected the class name after `end`, found `;`\n  --> err.mo:2:4\n"
        ),
        "{got}"
    );
    assert!(got.contains("= help: write `end M;`"), "{got}");

    let got = errors_of("model M\nequation\n  if x then y = 1; end;\nend M;\n");
    assert_eq!(got.matches("error:").count(), 1, "{got}");
    assert!(got.contains("= help: write `end if;`"), "{got}");

    let got = errors_of("model M\nequation\n  x == 1;\nend M;\n");
    assert!(got.contains("`==` compares two values"), "{got}");

    let got = errors_of("model M\n  Real x = (1 + 2;\nend M;\n");
    let expected = "\
error: expected `,` or `)`, found `;`
  --> err.mo:2:18
  |
2 |   Real x = (1 + 2;
  |                  ^ expected `,` or `)`
  --> err.mo:2:12
  |
2 |   Real x = (1 + 2;
  |            ^ unclosed `(` opened here
";
    assert_eq!(got, expected);
}

#[test]
fn synthesized_literals_print_as_valid_modelica() {
    use moss_syntax::print_expr;
    let span = moss_syntax::Span::DUMMY;
    let lit = |k: ExprKind| Box::new(Expr::new(k, span));
    let sub = |rhs: Box<Expr>| {
        Expr::new(
            ExprKind::Binary {
                op: BinaryOp::Sub,
                lhs: lit(ExprKind::Ref(ComponentRef::simple(Ident::new("a", span)))),
                rhs,
            },
            span,
        )
    };
    assert_eq!(print_expr(&sub(lit(ExprKind::Integer(-2)))), "a - (-2)");
    let real = |value: f64| ExprKind::Real {
        value,
        text: "".into(),
    };
    assert_eq!(print_expr(&sub(lit(real(-0.5)))), "a - (-0.5)");
    assert_eq!(print_expr(&sub(lit(real(1.0)))), "a - 1.0");
    assert_eq!(print_expr(&sub(lit(real(1e-7)))), "a - 1e-7");
    // And they parse back to the same values.
    let (e, diags) = parse_expr(FileId(0), &print_expr(&sub(lit(real(1e-7)))));
    assert!(diags.is_empty());
    let ExprKind::Binary { rhs, .. } = e.unwrap().kind else {
        panic!("not binary")
    };
    assert!(matches!(rhs.kind, ExprKind::Real { value, .. } if value == 1e-7));
}

#[test]
fn names_and_references_from_strings() {
    let (n, d) = moss_syntax::parse_name(FileId(0), "Modelica.Blocks.'Odd.Name'");
    assert!(d.is_empty());
    let n = n.unwrap();
    assert_eq!(n.parts.len(), 3);
    assert_eq!(n.parts[2], "'Odd.Name'");
    assert!(
        moss_syntax::parse_name(FileId(0), ".Top.A")
            .0
            .unwrap()
            .global
    );
    assert!(moss_syntax::parse_name(FileId(0), "A.B extra").0.is_none());
    assert!(moss_syntax::parse_name(FileId(0), "").0.is_none());

    let (c, d) = moss_syntax::parse_component_ref(FileId(0), "a.b[2, end].c");
    assert!(d.is_empty());
    assert_eq!(c.unwrap().to_string(), "a.b[2, end].c");
    assert!(moss_syntax::parse_component_ref(FileId(0), "a +")
        .0
        .is_none());
}

#[test]
fn trailing_commas_are_errors() {
    for text in [
        "type E = enumeration(a, );",
        "model M Real x = f(1, ); end M;",
        "model M Real x = {1, }; end M;",
        "model M Real x(start = 1, ); end M;",
        "model M import A.{b, }; end M;",
    ] {
        let got = errors_of(text);
        assert!(got.starts_with("error: expected"), "{text}: {got}");
    }
}

#[test]
fn stray_character_is_reported_once() {
    let got = errors_of("model M\n  Real x = 1 § 2;\nend M;\n");
    assert_eq!(got.matches("error:").count(), 1, "{got}");
    assert!(
        got.starts_with("error: unexpected character `§`\n  --> err.mo:2:14\n"),
        "{got}"
    );
}
