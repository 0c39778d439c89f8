//! Restrictions on redeclarations (spec 7.3.5): constants are not redeclared, a
//! redeclaration that replaces an earlier one needs it to be `replaceable`, and satisfies
//! its `constrainedby` class.

use crate::common;
use common::*;

fn rejected(name: &str, text: &str) -> String {
    match flat_text(name, text) {
        Ok(_) => panic!("`{name}` was expected to fail"),
        Err(e) => e,
    }
}

#[test]
fn constant_cannot_be_redeclared() {
    let text = |m: &str| {
        format!(
            "model Konst
  model A
    replaceable constant Real x = 1.0;
  end A;
  A a{m};
end Konst;
"
        )
    };
    flat_text("Konst", &text("(x = 2.0)")).unwrap_or_else(|e| panic!("{e}"));
    let e = rejected("Konst", &text("(redeclare Real x = 2.0)"));
    assert!(
        e.starts_with("error: `x` is a constant and cannot be redeclared\n"),
        "{e}"
    );
    assert!(e.contains("Konst.mo:5:17"), "{e}");
}

fn chain(first: &str, last: &str) -> String {
    format!(
        "model Chain
  model M1
    Real x = 1.0;
  end M1;
  model M2
    Real x = 2.0;
    Real y = 3.0;
  end M2;
  model A
    replaceable M1 m;
  end A;
  model B
    extends A({first});
  end B;
  model C
    extends B({last});
  end C;
  C c;
end Chain;
"
    )
}

#[test]
fn redeclaring_again_needs_replaceable() {
    let m = flat_text(
        "Chain",
        &chain("redeclare replaceable M1 m", "redeclare M2 m"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(m.variables.iter().any(|v| v.name == "c.m.y"));
    let e = rejected("Chain", &chain("redeclare M1 m", "redeclare M2 m"));
    assert!(
        e.starts_with(
            "error: `m` cannot be redeclared again: its earlier redeclaration is not replaceable\n"
        ),
        "{e}"
    );
    assert!(e.contains("Chain.mo:16:25"), "{e}");
    assert!(e.contains("redeclared without `replaceable` here"), "{e}");
}

#[test]
fn redeclaration_satisfies_the_constraint_of_the_one_it_replaces() {
    let e = rejected(
        "Chain",
        &chain(
            "redeclare replaceable M2 m constrainedby M2",
            "redeclare M1 m",
        ),
    );
    assert!(
        e.starts_with("error: `Chain.M1` is not a subtype of `Chain.M2`: it has no element `y`\n"),
        "{e}"
    );
    assert!(e.contains("Chain.mo:16:25"), "{e}");
}

/// The `constrainedby` of a redeclaration must itself satisfy the original constraint.
#[test]
fn new_constraint_is_a_subtype_of_the_original_one() {
    let text = |c: &str| {
        format!(
            "model Narrow
  model M1
    Real x = 1.0;
  end M1;
  model M2
    Real x = 2.0;
    Real y = 3.0;
  end M2;
  model A
    replaceable M2 m constrainedby M2;
  end A;
  model B
    extends A(replaceable M2 m constrainedby {c});
  end B;
  B b;
end Narrow;
"
        )
    };
    flat_text("Narrow", &text("M2")).unwrap_or_else(|e| panic!("{e}"));
    let e = rejected("Narrow", &text("M1"));
    assert!(
        e.starts_with(
            "error: `Narrow.M1` is not a subtype of `Narrow.M2`: it has no element `y`\n"
        ),
        "{e}"
    );
    assert!(e.contains("Narrow.mo:13:46"), "{e}");
}

fn binding(m: &moss_frontend::FlatModel, name: &str) -> String {
    let v = m.variables.iter().find(|v| v.name == name).expect(name);
    let eq = equations(m)
        .into_iter()
        .find(|e| e.starts_with(&format!("'{name}' = ")));
    format!("{:?} {:?}", v.binding, eq)
}

/// The modifiers of a `constrainedby` clause apply to the declaration itself, and a
/// redeclaration takes those of the nearest constraining clause (its own, else that of the
/// redeclaration it replaces, else the original one).
#[test]
fn constraining_clause_modifiers_apply() {
    let m = flat_text(
        "Cmods",
        "model Cmods
  model A
    Real x = 1.0;
  end A;
  model B
    Real x = 1.0;
    Real y = 1.0;
  end B;
  model C
    Real x = 1.0;
    Real y = 1.0;
  end C;
  model D
    replaceable B b constrainedby A(x = 4.0);
  end D;
  model E
    extends D(replaceable B b constrainedby B(x = 2.0, y = 3.0));
  end E;
  model F
    extends E(redeclare C b);
  end F;
  D d;
  F f;
end Cmods;
",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let all = [
        binding(&m, "d.b.x"),
        binding(&m, "f.b.x"),
        binding(&m, "f.b.y"),
    ]
    .join("\n");
    assert!(all.lines().next().unwrap_or("").contains("4.0"), "{all}");
    assert!(all.lines().nth(1).unwrap_or("").contains("2.0"), "{all}");
    assert!(all.lines().nth(2).unwrap_or("").contains("3.0"), "{all}");
}
