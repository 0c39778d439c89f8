//! Restrictions of connections (spec 9.3): causal variables connect only to causal ones,
//! a connected signal has at most one source, connected constants agree. Each rule has a
//! legal model that must flatten and an illegal one with its located message.

use crate::common;
use common::*;

fn rejected(name: &str, text: &str) -> String {
    match flat_text(name, text) {
        Ok(_) => panic!("`{name}` was expected to fail"),
        Err(e) => e,
    }
}

/// A signal passed down through a subsystem: one source per set (the gain's output, and
/// the subsystem's input inside it), even though the input appears at two levels.
#[test]
fn one_source_through_the_hierarchy_is_legal() {
    let m = flat_text(
        "Chain",
        "model Chain
  connector In = input Real;
  connector Out = output Real;
  block Gain
    In u;
    Out y;
  equation
    y = 2 * u;
  end Gain;
  block Sub
    In u;
    Out y;
    Gain g;
  equation
    connect(u, g.u);
    connect(g.y, y);
  end Sub;
  block Source
    Out y = 1.5;
  end Source;
  Source s;
  Sub a, b;
equation
  connect(s.y, a.u);
  connect(s.y, b.u);
  connect(a.y, b.y);
end Chain;
",
    );
    // `connect(a.y, b.y)` joins two outputs of components: rejected.
    let e = m.expect_err("two inside outputs");
    assert!(
        e.starts_with("error: the connected signal has two sources, `a.y` (an output of a component) and `b.y` (an output of a component)\n")
            || e.starts_with("error: the connected signal has two sources, `b.y` (an output of a component) and `a.y` (an output of a component)\n"),
        "{e}"
    );
    assert!(e.contains("Chain.mo:26:3"), "{e}");
    assert!(
        e.contains("help: a connection set may contain at most one"),
        "{e}"
    );
    let ok = flat_text(
        "Chain2",
        "model Chain2
  connector In = input Real;
  connector Out = output Real;
  block Gain
    In u;
    Out y;
  equation
    y = 2 * u;
  end Gain;
  block Sub
    In u;
    Out y;
    Gain g;
  equation
    connect(u, g.u);
    connect(g.y, y);
  end Sub;
  block Source
    Out y = 1.5;
  end Source;
  Source s;
  Sub a, b;
equation
  connect(s.y, a.u);
  connect(a.y, b.u);
end Chain2;
",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ok.variables.len(), 9);
}

#[test]
fn input_of_the_class_and_output_of_a_component_are_two_sources() {
    let e = rejected(
        "TwoSources",
        "model TwoSources
  connector In = input Real;
  connector Out = output Real;
  model A
    model B
      Out y;
      In u;
    equation
      y = u;
    end B;
    B b;
    In u = 1.0;
  equation
    connect(u, b.u);
    connect(b.u, b.y);
  end A;
  A a;
end TwoSources;
",
    );
    assert!(
        e.starts_with("error: the connected signal has two sources, `a.u` (an input of the enclosing class) and `a.b.y` (an output of a component)\n"),
        "{e}"
    );
    assert!(e.contains("TwoSources.mo:15:5"), "{e}");
}

#[test]
fn causal_variables_connect_only_to_causal_ones() {
    let e = rejected(
        "Mixed",
        "model Mixed
  connector C1
    input Real x;
    Real e;
    flow Real f;
  end C1;
  connector C2
    output Real x;
    Real e;
    flow Real f;
  end C2;
  connector C3
    Real x;
    output Real e;
    flow Real f;
  end C3;
  C1 a;
  C2 b;
  C3 c;
equation
  connect(a, b);
  connect(a, c);
end Mixed;
",
    );
    assert!(
        e.starts_with("error: cannot connect `a` and `c`: `a.x` is an input but `c.x` is neither input nor output\n"),
        "{e}"
    );
    assert!(e.contains("Mixed.mo:22:3"), "{e}");
    assert!(
        e.contains("help: input and output variables may only be connected"),
        "{e}"
    );
}

#[test]
fn connected_constants_must_be_equal() {
    let text = |v: &str| {
        format!(
            "model Consts
  connector C
    Real e;
    flow Real f;
    constant Real c;
  end C;
  C c1(c = 1.0), c2(c = {v});
equation
  connect(c1, c2);
  c1.e = 1.0;
  c1.f = 3.0;
end Consts;
"
        )
    };
    flat_text("Consts", &text("1.0")).unwrap_or_else(|e| panic!("{e}"));
    let e = rejected("Consts", &text("2.0"));
    assert!(
        e.starts_with("error: connected constants `c1.c` = 1 and `c2.c` = 2 differ\n"),
        "{e}"
    );
    assert!(e.contains("Consts.mo:9:3"), "{e}");
}

/// Records and nested connectors count with their scalar variables; a `flow` record is
/// all flows; causal and simple connectors are not subject to the rule.
#[test]
fn connector_balance_counts_through_records_and_nested_connectors() {
    let legal = "model Balanced
  record Cx
    Real re;
    Real im;
  end Cx;
  connector Pin
    Cx v;
    flow Cx i;
  end Pin;
  connector Plug
    parameter Integer m = 2;
    Pin p[m];
  end Plug;
  connector Signal
    output Real y;
  end Signal;
  Plug a(p(each v(re = 1, im = 2)));
  Signal s(y = 3);
end Balanced;
";
    let m = flat_text("Balanced", legal).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.variables.len(), 10);
    let e = rejected(
        "Unbalanced",
        "model Unbalanced
  record Cx
    Real re;
    Real im;
  end Cx;
  connector Pin
    Cx v;
    flow Real i;
  end Pin;
  Pin p(v(re = 1, im = 2));
end Unbalanced;
",
    );
    assert!(
        e.starts_with(
            "error: connector `Unbalanced.Pin` is not balanced: 1 flow and 2 potential variables\n"
        ),
        "{e}"
    );
    assert!(e.contains("Unbalanced.mo:10:3"), "{e}");
}

/// A flow of an operator record type needs '+', '-' and '0' in the record.
#[test]
fn flow_operator_record_needs_addition_negation_and_zero() {
    let text = |zero: &str| {
        format!(
            "model Ops
  operator record Cx
    Real re;
    Real im;
    encapsulated operator function '+'
      input Ops.Cx a;
      input Ops.Cx b;
      output Ops.Cx c;
    algorithm
      c := Ops.Cx(a.re + b.re, a.im + b.im);
    end '+';
    encapsulated operator function '-'
      input Ops.Cx a;
      output Ops.Cx c;
    algorithm
      c := Ops.Cx(-a.re, -a.im);
    end '-';
    {zero}
  end Cx;
  connector C
    Cx e;
    flow Cx f;
  end C;
  C c(e(re = 1, im = 2), f(re = 3, im = 4));
end Ops;
"
        )
    };
    let zero = "encapsulated operator function '0'
      output Ops.Cx c;
    algorithm
      c := Ops.Cx(0, 0);
    end '0';";
    flat_text("Ops", &text(zero)).unwrap_or_else(|e| panic!("{e}"));
    let e = rejected("Ops", &text(""));
    assert!(
        e.starts_with("error: the flow variable `f` is of the operator record `Ops.Cx`, which defines no zero operator '0'\n"),
        "{e}"
    );
    assert!(e.contains("Ops.mo:22:5"), "{e}");
}

/// Declared variables of expandable connectors take their causality from the
/// connections, so connecting an input to one is legal (the MSL battery stacks read cell
/// voltages from an array of cell buses this way).
#[test]
fn bus_variables_take_the_causality_of_their_connections() {
    let m = flat_text(
        "BusArrays",
        "model BusArrays
  connector In = input Real;
  connector Out = output Real;
  expandable connector Cell
    Real v;
  end Cell;
  expandable connector Stack
    Cell cell[2];
  end Stack;
  block Gain
    In u;
    Out y;
  equation
    y = 2 * u;
  end Gain;
  model Reader
    Stack bus;
    Gain g[2];
  equation
    connect(g.u, bus.cell.v);
  end Reader;
  model Writer
    Stack bus;
    Out y[2];
    Cell cb[2];
  equation
    y = {1, 2};
    connect(y[1], cb[1].v);
    connect(y[2], cb[2].v);
    connect(cb[1], bus.cell[1]);
    connect(cb[2], bus.cell[2]);
  end Writer;
  Reader r;
  Writer w;
equation
  connect(w.bus, r.bus);
end BusArrays;
",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.variables.len(), 12);
    assert!(m.variables.iter().any(|v| v.name == "r.g[2].u"));
}
