//! Elements of a component array with one modifier for all are flattened once and copied
//! under their own paths (`moss_frontend::shared_elements`). The copies must be exactly what
//! walking each element gives: the same model written with per-element modifiers (which are
//! walked one by one) must flatten to the same text.

use crate::common;

use common::flat_text;

/// A cell with everything a copy has to rename: internal connections and `cardinality`, a
/// conditional connector, an `outer` reference, start values, `when` with `reinit`, an
/// algorithm and a structural parameter.
const CELL: &str = r#"
  connector Pin
    Real v;
    flow Real i;
  end Pin;
  model Part
    parameter Real R = 1;
    Pin p, n;
  equation
    p.v - n.v = R * p.i;
    p.i + n.i = 0;
  end Part;
  model Cell
    parameter Boolean useX = true;
    parameter Real R = 1;
    parameter Integer n = 2;
    outer Real g;
    Pin p, n2;
    Part a(R = R), b(R = 2 * R);
    Pin x if useX;
    Real y[n](each start = R, each fixed = true);
    Integer k(start = 0, fixed = true);
    Integer m(start = 0, fixed = true);
    Real card;
  equation
    connect(p, a.p);
    connect(a.n, b.p);
    connect(b.n, n2);
    connect(x, n2);
    card = cardinality(p);
    der(y) = -y * g;
    assert(R > 0, "R must be positive");
    when y[1] < 0.5 then
      k = pre(k) + 1;
      reinit(y[2], 1);
    end when;
  algorithm
    when time > 0.3 then
      m := pre(m) + 10;
    end when;
  end Cell;
"#;

fn top(cells: &str) -> String {
    format!(
        r#"{CELL}
  model Top
    inner Real g = 2;
    {cells}
    Pin gnd;
  equation
    gnd.v = 0;
    for i in 1:3 loop
      connect(c[i].n2, c[i + 1].p);
    end for;
    connect(c[4].n2, gnd);
    connect(c[1].p, gnd);
  end Top;
"#
    )
}

fn printed(name: &str, cells: &str) -> String {
    let m = flat_text(name, &top(cells)).unwrap_or_else(|e| panic!("{e}"));
    moss_frontend::print::print_model(&m)
}

#[test]
fn copied_elements_equal_walked_elements() {
    let shared = printed(
        "shared",
        "Cell c[4](each R = 3, each useX = true, each n = 2);",
    );
    let walked = printed(
        "walked",
        "Cell c[4](R = {3, 3, 3, 3}, useX = {true, true, true, true}, n = {2, 2, 2, 2});",
    );
    assert_eq!(shared, walked);
    // The copies really are renamed: every element has its own variables and equations.
    for i in 1..=4 {
        assert!(
            shared.contains(&format!("'c[{i}].b.p.i' = 0")),
            "c[{i}]:\n{shared}"
        );
        assert!(
            shared.contains(&format!("'c[{i}].n2.v' = 'c[{i}].x.v'")),
            "c[{i}]"
        );
    }
    assert!(shared.contains("reinit('c[3].y[2]'"), "{shared}");
}

#[test]
fn copies_follow_a_conditional_component_switched_off() {
    let shared = printed("off-shared", "Cell c[4](each useX = false);");
    let walked = printed(
        "off-walked",
        "Cell c[4](useX = {false, false, false, false});",
    );
    assert_eq!(shared, walked);
    assert!(!shared.contains("c[2].x.v"), "{shared}");
    assert!(shared.contains("'c[2].card' = 2"), "{shared}");
}

#[test]
fn copies_of_a_two_dimensional_array() {
    let grid = |cells: &str| {
        format!(
            r#"{CELL}
  model Top
    inner Real g = 1;
    {cells}
  equation
    for i in 1:2 loop
      for j in 1:3 loop
        c[i, j].n2.v = 0;
        c[i, j].p.i = 0;
      end for;
    end for;
  end Top;
"#
        )
    };
    let text = |name: &str, cells: &str| {
        let m = flat_text(name, &grid(cells)).unwrap_or_else(|e| panic!("{e}"));
        moss_frontend::print::print_model(&m)
    };
    let shared = text("grid-shared", "Cell c[2, 3](each R = 5);");
    let walked = text("grid-walked", "Cell c[2, 3](R = fill(5, 2, 3));");
    assert_eq!(shared, walked);
    assert!(shared.contains("c[2,3].a.p.v"), "{shared}");
}

/// `getInstanceName()` folded into a longer string names the element inside other text: such
/// elements are walked one by one, and each still gets its own name.
#[test]
fn instance_names_inside_strings() {
    let text = |name: &str, decl: &str| {
        let src = format!(
            r#"
  model Noisy
    parameter Real R = 1;
    Real x(start = 1, fixed = true);
  equation
    der(x) = -R * x;
    assert(x > -1, "x of " + getInstanceName() + " below -1");
  end Noisy;
  model Top
    {decl}
  end Top;
"#
        );
        let m = flat_text(name, &src).unwrap_or_else(|e| panic!("{e}"));
        moss_frontend::print::print_model(&m)
    };
    let shared = text("names-shared", "Noisy n[3](each R = 2);");
    assert_eq!(shared, text("names-walked", "Noisy n[3](R = {2, 2, 2});"));
    for i in 1..=3 {
        assert!(
            shared.contains(&format!("x of Top.n[{i}] below")),
            "{shared}"
        );
    }
}

/// Elements that add to the overconstrained connection graph (`Connections.branch`) are
/// walked one by one; the graph must still see every element's branch.
#[test]
fn elements_with_connection_graph_branches() {
    let ring = |name: &str, decl: &str| {
        let src = format!(
            r#"model Ring
  record Phase
    Real theta;
    function equalityConstraint
      input Phase a;
      input Phase b;
      output Real residue[1];
    algorithm
      residue := {{a.theta - b.theta}};
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
  {decl}
  Source s;
equation
  connect(s.p, l[1].p);
  connect(l[1].n, l[2].p);
  connect(l[2].n, l[3].p);
  connect(l[3].n, l[1].p);
end Ring;
"#
        );
        let m = flat_text(name, &src).unwrap_or_else(|e| panic!("{e}"));
        moss_frontend::print::print_model(&m)
    };
    let shared = ring("ring-shared", "Line l[3](each k = 2);");
    assert_eq!(shared, ring("ring-walked", "Line l[3](k = {2, 2, 2});"));
    // One connect closes the loop: its potentials are not equated, a residue stands instead.
    assert_eq!(
        shared.matches("= 'Ring.Phase.equalityConstraint'(").count(),
        1,
        "{shared}"
    );
}

/// `connect`s written outside the array reach into its elements through the first element's
/// instance (`Flattener::lookup_element`) but must name each element's own connectors:
/// conditional connectors, and expandable connectors whose members the
/// connections create (looked up again through the element itself).
#[test]
fn connects_from_outside_name_each_element() {
    let src = |decl: &str| {
        format!(
            r#"
  connector Pin
    Real v;
    flow Real i;
  end Pin;
  connector RealOutput = output Real;
  expandable connector Bus
  end Bus;
  model Part
    Pin p, n;
  equation
    p.v - n.v = p.i;
    p.i + n.i = 0;
  end Part;
  model Cell
    parameter Boolean useX = true;
    Pin p, n;
    Part a;
    Pin x if useX;
    Bus bus;
  equation
    connect(p, a.p);
    connect(a.n, n);
  end Cell;
  model Source
    RealOutput y = time;
  end Source;
  model Top
    {decl}
    Source s[3];
    Pin gnd;
  equation
    gnd.v = 0;
    for i in 1:3 loop
      connect(c[i].n, gnd);
      connect(c[i].x, c[i].p);
      connect(s[i].y, c[i].bus.sig);
    end for;
  end Top;
"#
        )
    };
    let text = |name: &str, decl: &str| {
        let m = flat_text(name, &src(decl)).unwrap_or_else(|e| panic!("{e}"));
        moss_frontend::print::print_model(&m)
    };
    let shared = text("outside-shared", "Cell c[3](each useX = true);");
    let walked = text("outside-walked", "Cell c[3](useX = {true, true, true});");
    assert_eq!(shared, walked);
    for i in 1..=3 {
        assert!(
            shared.contains(&format!("'c[{i}].x.v' = 'c[{i}].p.v'"))
                || shared.contains(&format!("'c[{i}].p.v' = 'c[{i}].x.v'")),
            "c[{i}]:\n{shared}"
        );
        assert!(
            shared.contains(&format!("c[{i}].bus.sig")),
            "c[{i}]:\n{shared}"
        );
    }
}
