//! Name lookup through imports (spec 13.2.1), calls through short class definitions
//! (spec 4.6) and source files starting with a byte-order mark.

use crate::common;
use common::*;

fn rejected(name: &str, text: &str) -> String {
    match flat_text(name, text) {
        Ok(_) => panic!("`{name}` was expected to fail"),
        Err(e) => e,
    }
}

fn imports(second: &str, use_name: &str) -> String {
    format!(
        "model Imp
  encapsulated package P
    constant Real x = 1.0;
    constant Real w = 5.0;
  protected
    constant Real hidden = 3.0;
  end P;
  encapsulated package P2
    constant Real x = 2.0;
    constant Real v = 4.0;
  end P2;
  model A
    import Imp.P.*;
    {second}
    parameter Real y = {use_name};
  end A;
  A a;
end Imp;
"
    )
}

/// Names found in exactly one unqualified import resolve; a qualified import wins over
/// unqualified ones.
#[test]
fn unqualified_imports_find_public_elements() {
    let m =
        flat_text("Imp", &imports("import Imp.P2.*;", "w + v")).unwrap_or_else(|e| panic!("{e}"));
    let y = m.variables.iter().find(|v| v.name == "a.y").expect("a.y");
    assert_eq!(format!("{:?}", y.binding), "Some(Real(9.0))");
    let m = flat_text("Imp", &imports("import Imp.P2.x; import Imp.P2.*;", "x"))
        .unwrap_or_else(|e| panic!("{e}"));
    let y = m.variables.iter().find(|v| v.name == "a.y").expect("a.y");
    assert_eq!(format!("{:?}", y.binding), "Some(Real(2.0))");
}

/// A name in two unqualified imports is ambiguous and a protected element is not
/// imported: both are not found.
#[test]
fn ambiguous_or_protected_unqualified_imports_are_not_found() {
    let e = rejected("Imp", &imports("import Imp.P2.*;", "x"));
    assert!(
        e.starts_with("error: `x` is ambiguous: it is found through the unqualified imports of both `Imp.P` and `Imp.P2`\n"),
        "{e}"
    );
    assert!(e.contains("Imp.mo:15:24"), "{e}");
    assert!(
        e.contains("help: import it by name (`import Imp.P.x;`)"),
        "{e}"
    );
    let e = rejected("Imp", &imports("", "hidden"));
    assert!(e.starts_with("error: unknown name `hidden`\n"), "{e}");
    assert!(e.contains("Imp.mo:15:24"), "{e}");
}

#[test]
fn short_class_of_a_function_must_be_a_function() {
    let text = |kw: &str| {
        format!(
            "model Alias
  function f
    input Real x;
    output Real y;
  algorithm
    y := 2 * x;
  end f;
  {kw} f2 = f;
  {kw} f3 = f2;
  Real z = f3(time);
end Alias;
"
        )
    };
    flat_text("Alias", &text("function")).unwrap_or_else(|e| panic!("{e}"));
    let e = rejected("Alias", &text("class"));
    assert!(
        e.starts_with("error: `Alias.f3` is declared as a class (a short definition of the function `Alias.f`), so it cannot be called\n"),
        "{e}"
    );
    assert!(e.contains("Alias.mo:10:12"), "{e}");
}

/// A file that starts with a UTF-8 byte-order mark loads like any other.
#[test]
fn file_with_byte_order_mark_loads() {
    let m = flat_text("Bom", "\u{feff}model Bom\n  Real x = 1.5;\nend Bom;\n")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.variables.len(), 1);
}

/// `a.f(x)` may reach a function through a component, but not an operator or an operator
/// function (spec 5.3.2).
#[test]
fn operator_cannot_be_called_through_a_component() {
    let text = |call: &str| {
        format!(
            "model Via
  operator record R
    Real x;
    operator '+'
      function add
        input R a;
        input R b;
        output R c;
      algorithm
        c := R(a.x + b.x);
      end add;
    end '+';
    function twice
      input R a;
      output Real y;
    algorithm
      y := 2 * a.x;
    end twice;
  end R;
  R r1(x = 1.0);
  R r2(x = 2.0);
  {call};
end Via;
"
        )
    };
    flat_text("Via", &text("Real z = r1.twice(r2)")).unwrap_or_else(|e| panic!("{e}"));
    let e = rejected("Via", &text("R z = r1.'+'.add(r1, r2)"));
    assert!(
        e.starts_with("error: `'+'` is an operator of `Via.R`: a call through a component must find a non-operator function (spec 5.3.2)\n"),
        "{e}"
    );
    assert!(e.contains("Via.mo:22:12"), "{e}");
}
