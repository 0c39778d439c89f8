//! Overconstrained connectors (spec 9.4): the virtual connection graph decides which
//! `connect` equations of overdetermined variables are plain equalities (spanning tree) and
//! which become `equalityConstraint` residues (they close loops).

use crate::common;
use common::*;

/// Three lines in a loop fed by a source with a definite root; the record `Phase` is
/// overdetermined and its `equalityConstraint` returns one residue.
const RING: &str = r#"model Ring "three lines in a loop: one connect closes the loop"
  record Phase
    Real theta;
    function equalityConstraint
      input Phase a;
      input Phase b;
      output Real residue[1];
    algorithm
      residue := {a.theta - b.theta};
    end equalityConstraint;
  end Phase;
  connector Pin
    Phase ph;
    flow Real f;
  end Pin;
  model Line
    Pin p, n;
    parameter Real k = 1;
  equation
    Connections.branch(p.ph, n.ph);
    n.ph.theta = p.ph.theta - k*p.f;
    p.f + n.f = 0;
  end Line;
  model Source
    Pin p;
  equation
    Connections.root(p.ph);
    p.ph.theta = 0;
  end Source;
  Line l1, l2, l3;
  Source s;
equation
  connect(s.p, l1.p);
  connect(l1.n, l2.p);
  connect(l2.n, l3.p);
  connect(l3.n, l1.p);
end Ring;
"#;

/// A ground and three bodies in a chain; every body is a potential root and the one with
/// the lowest priority number (`b2`) is selected.
const CHAIN: &str = r#"model Chain "ground, then three bodies; the body with the lowest priority number is the root"
  type Angle
    extends Real;
    function equalityConstraint
      input Angle a;
      input Angle b;
      output Real residue[1];
    algorithm
      residue := {a - b};
    end equalityConstraint;
  end Angle;
  connector Port
    Angle theta;
    flow Real tau;
  end Port;
  model Ground
    Port p;
  equation
    Connections.potentialRoot(p.theta, 5);
    p.theta = 0;
  end Ground;
  model Body
    Port a, b;
    parameter Integer prio = 3;
    Integer isRoot;
    Integer rooted;
  equation
    Connections.branch(a.theta, b.theta);
    Connections.potentialRoot(a.theta, prio);
    b.theta = a.theta;
    a.tau + b.tau = 0;
    if Connections.isRoot(a.theta) then
      isRoot = 1;
    else
      isRoot = 0;
    end if;
    rooted = if Connections.rooted(a.theta) then 1 else 0;
  end Body;
  Ground g;
  Body b1, b2(prio = 1), b3;
equation
  connect(g.p, b1.a);
  connect(b1.b, b2.a);
  connect(b2.b, b3.a);
end Chain;
"#;

/// The rendered diagnostics of a variant of the ring that must fail.
fn error_of(text: &str, why: &str) -> String {
    match flat_text("Ring", text) {
        Ok(_) => panic!("{why}"),
        Err(e) => e,
    }
}

/// A loop of two rods on a ground whose overdetermined type is a matrix type.
const LOOP: &str = r#"model Loop "two rods closing a loop on a ground; the orientation is a 2x2 matrix type"
  type Matrix2 = Real[2, 2];
  type Orientation
    extends Matrix2;
    function equalityConstraint
      input Orientation R1;
      input Orientation R2;
      output Real residue[1];
    algorithm
      residue := {R1[1, 2] - R2[1, 2]};
    end equalityConstraint;
  end Orientation;
  connector Frame
    Orientation R;
    flow Real t;
  end Frame;
  model Ground
    Frame p;
  equation
    Connections.root(p.R);
    p.R = {{1, 0}, {0, 1}};
  end Ground;
  model Rod
    Frame a, b;
  equation
    Connections.branch(a.R, b.R);
    b.R = a.R;
    a.t + b.t = 0;
  end Rod;
  Ground g;
  Rod r1, r2;
equation
  connect(g.p, r1.a);
  connect(r1.b, r2.a);
  connect(r2.b, g.p);
end Loop;
"#;

fn balanced(m: &moss_frontend::FlatModel) -> (usize, usize) {
    let s = moss_frontend::stats::stats(m);
    (s.equations, s.variables)
}

#[test]
fn ring_closes_its_loop_with_the_equality_constraint() {
    let m = flat_text("Ring", RING).unwrap_or_else(|e| panic!("{e}"));
    let eqs = equations(&m);
    // The connect that closes the loop (processed last) gives the residue equation
    // `zeros(1) = equalityConstraint(a, b)`, implicit in the phases ...
    let e = "{0.0} = 'Ring.Phase.equalityConstraint'('l3.n.ph.theta', 'l1.p.ph.theta');";
    assert!(eqs.contains(&e.to_string()), "{e} missing in {eqs:#?}");
    assert!(!eqs.iter().any(|e| e.contains("$array")), "{eqs:#?}");
    assert!(m.functions.contains_key("Ring.Phase.equalityConstraint"));
    // ... and no equality of its phases, while the tree connects equate theirs.
    assert!(
        !eqs.iter()
            .any(|e| e.contains("'l3.n.ph.theta' = 'l1.p.ph.theta'")),
        "{eqs:#?}"
    );
    for e in [
        "'s.p.ph.theta' = 'l1.p.ph.theta';",
        "'l1.n.ph.theta' = 'l2.p.ph.theta';",
        "'l2.n.ph.theta' = 'l3.p.ph.theta';",
    ] {
        assert!(eqs.contains(&e.to_string()), "{e} missing in {eqs:#?}");
    }
    // Flows are connected as usual, and the Connections statements are gone.
    assert!(
        eqs.contains(&"'s.p.f' + 'l1.p.f' + 'l3.n.f' = 0;".to_string()),
        "{eqs:#?}"
    );
    assert!(!eqs.iter().any(|e| e.contains("Connections")), "{eqs:#?}");
    // The residue counts as one equation and adds no variable.
    assert_eq!(balanced(&m), (14, 14));
}

#[test]
fn lowest_priority_number_selects_the_root_of_a_chain() {
    let m = flat_text("Chain", CHAIN).unwrap_or_else(|e| panic!("{e}"));
    let eqs = equations(&m);
    // isRoot (in an if-equation, of which the selected branch is kept): only b2, with
    // priority 1 (the ground has 5, the other bodies 3).
    for (body, root) in [("b1", false), ("b2", true), ("b3", false)] {
        let e = format!("'{body}.isRoot' = {};", i32::from(root));
        assert!(eqs.contains(&e), "{e} missing in {eqs:#?}");
    }
    // rooted(a): a is closer to the root than b along the branch a -> b; b1 hangs on
    // the other side of the root.
    for (body, rooted) in [("b1", false), ("b2", true), ("b3", true)] {
        let e = format!("'{body}.rooted' = {};", i32::from(rooted));
        assert!(eqs.contains(&e), "{e} missing in {eqs:#?}");
    }
    // No loop: every connect is in the tree and equates its angles.
    assert!(
        !eqs.iter().any(|e| e.contains("equalityConstraint")),
        "{eqs:#?}"
    );
    for e in [
        "'g.p.theta' = 'b1.a.theta';",
        "'b1.b.theta' = 'b2.a.theta';",
        "'b2.b.theta' = 'b3.a.theta';",
    ] {
        assert!(eqs.contains(&e.to_string()), "{e} missing in {eqs:#?}");
    }
    assert_eq!(balanced(&m), (20, 20));
}

#[test]
fn two_definite_roots_split_their_part_at_a_connect() {
    // spec 9.4.2: a part with n definite roots is divided into n spanning trees; the
    // connect between the trees of `s` and `s2` is a breaking edge and gives the residue
    let text = RING.replace("Source s;", "Source s, s2;").replace(
        "connect(s.p, l1.p);",
        "connect(s.p, l1.p);\n  connect(s2.p, l2.p);",
    );
    let m = flat_text("Ring", &text).unwrap_or_else(|e| panic!("{e}"));
    let eqs = equations(&m);
    // one residue closes the ring, one separates the trees of the two roots (which connect
    // is broken depends on the order of the edges)
    let residues: Vec<&String> = eqs
        .iter()
        .filter(|e| e.starts_with("{0.0} = 'Ring.Phase.equalityConstraint'"))
        .collect();
    assert_eq!(residues.len(), 2, "{eqs:#?}");
    // the second source and its residue add as many equations as variables
    assert_eq!(balanced(&m), (16, 16));
}

#[test]
fn definite_roots_joined_by_a_branch_are_an_error() {
    // a source with two pins, each a definite root, and a branch between them: no connect
    // can separate the roots
    let text = RING
        .replace(
            "  model Source\n    Pin p;",
            "  model Source\n    Pin p, q;",
        )
        .replace(
            "    Connections.root(p.ph);",
            "    Connections.root(p.ph);\n    Connections.root(q.ph);\n    Connections.branch(p.ph, q.ph);",
        );
    let e = error_of(&text, "roots joined by a branch must fail");
    assert!(e.contains("joins the definite roots"), "{e}");
    assert!(e.contains("s.p.ph") && e.contains("s.q.ph"), "{e}");
}

#[test]
fn a_part_without_root_is_an_error() {
    let text = RING.replace("Connections.root(p.ph);", "");
    let e = error_of(&text, "no root must fail");
    assert!(e.contains("has no root"), "{e}");
    // Reported at the first statement that mentions the part (the branch in Line).
    assert!(e.contains("Ring.mo:20:"), "{e}");
    assert!(e.contains("l1.p.ph"), "{e}");
}

#[test]
fn graph_statements_inside_when_are_rejected() {
    let text = RING.replace(
        "Connections.root(p.ph);",
        "when time > 1 then\n      Connections.root(p.ph);\n    end when;",
    );
    let e = error_of(&text, "root in when must fail");
    assert!(
        e.contains("Connections.root is not allowed inside a when-equation"),
        "{e}"
    );
}

#[test]
fn matrix_typed_orientation_is_passed_whole_to_its_equality_constraint() {
    let m = flat_text("Loop", LOOP).unwrap_or_else(|e| panic!("{e}"));
    let eqs = equations(&m);
    let call = "{0.0} = 'Loop.Orientation.equalityConstraint'(\
        {{'r2.b.R[1,1]', 'r2.b.R[1,2]'}, {'r2.b.R[2,1]', 'r2.b.R[2,2]'}}, \
        {{'g.p.R[1,1]', 'g.p.R[1,2]'}, {'g.p.R[2,1]', 'g.p.R[2,2]'}});";
    assert!(
        eqs.contains(&call.to_string()),
        "{call} missing in {eqs:#?}"
    );
    // The tree connects equate all four elements; the loop-closing one none.
    assert!(
        eqs.contains(&"'g.p.R[2,1]' = 'r1.a.R[2,1]';".to_string()),
        "{eqs:#?}"
    );
    assert!(
        !eqs.iter()
            .any(|e| e.starts_with("'r2.b.R[1,1]' = 'g.p.R[1,1]'")
                || e.starts_with("'g.p.R[1,1]' = 'r2.b.R[1,1]'")),
        "{eqs:#?}"
    );
    // 25 model variables, the residue counts as one equation.
    assert_eq!(balanced(&m), (25, 25));
}
