//! Array expressions of constant size inside compiled scalar functions
//! (`codegen/src/scalar_fn/arrays.rs`) and calls specialized inside function bodies
//! (`codegen/src/specialize.rs`).
//!
//! The functions below are built like the MSL's moist air (`Media.Air.MoistAir`): an
//! open-size mass-fraction input `X[:]` with a default, a record result whose vector field
//! is `cat(1, X, {1 - sum(X)})`, an enthalpy that is the dot product of two array literals,
//! and a function without open sizes that passes a constant coefficient table to one with
//! open sizes. Every one must run compiled (none through the tree interpreter), give the
//! tree interpreter's numbers bit for bit, and the values computed by hand.

use crate::scalar_functions::{compiled_calls, native_calls, run_source, tree_calls};

const MIX: &str = r#"
package Mix
  constant Real reference_X[2] = {0.25, 0.75};

  record State
    Real p;
    Real T;
    Real X[2];
  end State;

  function setState_pTX "the full composition from the independent one, as MoistAir"
    input Real p;
    input Real T;
    input Real X[:] = reference_X;
    output State state;
  algorithm
    state := if size(X, 1) == 2 then State(p = p, T = T, X = X)
      else State(p = p, T = T, X = cat(1, X, {1 - sum(X)}));
  end setState_pTX;

  function h_pTX "a dot product of two array literals"
    input Real p;
    input Real T;
    input Real X[:];
    output Real h;
  protected
    Real cp[2] = {1000.0, 2000.0};
  algorithm
    h := {cp[1]*T, cp[2]*T}*{X[1], 1 - X[1]} + 1e-3*p;
  end h_pTX;

  function enthalpy "through the state record: a tuple call with an array target"
    input Real p;
    input Real T;
    input Real X[:];
    output Real h;
  protected
    State s;
  algorithm
    s := setState_pTX(p, T, X);
    h := h_pTX(s.p, s.T, s.X);
  end enthalpy;

  function stats "whole-array arithmetic: scaled copies, sums, a matrix product, slices"
    input Real x[3];
    output Real y;
  protected
    Real a[3];
    Real m[2, 3] = {{1, 2, 3}, {4, 5, 6}};
    Real b[2];
  algorithm
    a := 2*x + {1, 1, 1};
    b := m*a;
    y := sum(a) + product(x[2:3]) + b*{1, -1} + scalar({x[1]});
  end stats;

  function poly "Horner over an open-size coefficient vector"
    input Real c[:];
    input Real u;
    output Real y;
  algorithm
    y := 0;
    for i in 1:size(c, 1) loop
      y := y*u + c[i];
    end for;
  end poly;

  function fixedPoly "no open sizes itself: passes a constant table on"
    input Real u;
    output Real y;
  protected
    constant Real c[3] = {1.0, -3.0, 2.0};
  algorithm
    y := poly(c, u);
  end fixedPoly;

  function dgesv_vec "LAPACK's dgesv for one right-hand side, as Matrices.LAPACK declares it"
    input Real A[:, size(A, 1)];
    input Real b[size(A, 1)];
    output Real x[size(A, 1)] = b;
    output Integer info;
  protected
    Real Awork[size(A, 1), size(A, 1)] = A;
    Integer lda = max(1, size(A, 1));
    Integer ldb = max(1, size(b, 1));
    Integer ipiv[size(A, 1)];
  external "FORTRAN 77" dgesv(size(A, 1), 1, Awork, lda, ipiv, x, ldb, info);
  end dgesv_vec;

  function solve "as Matrices.solve: an array result of an external routine"
    input Real A[:, size(A, 1)];
    input Real b[size(A, 1)];
    output Real x[size(b, 1)];
  protected
    Integer info;
  algorithm
    (x, info) := dgesv_vec(A, b);
    assert(info == 0, "singular");
  end solve;

  function quadraticFlow "as Fluid's pump characteristic: local arrays with bindings"
    input Real V;
    input Real V_nominal[3];
    input Real head_nominal[3];
    output Real head;
  protected
    Real V2[3] = {V_nominal[1]^2, V_nominal[2]^2, V_nominal[3]^2};
    Real c[3] = solve([ones(3), V_nominal, V2], head_nominal);
  algorithm
    head := c[1] + V*c[2] + V^2*c[3];
  end quadraticFlow;

  function same "a table against a constant one, as Matrices.isEqual"
    input Real a[:, :];
    input Real b[:, :];
    output Boolean result;
  algorithm
    result := size(a, 1) == size(b, 1) and size(a, 2) == size(b, 2);
    for i in 1:size(a, 1) loop
      for j in 1:size(a, 2) loop
        result := result and abs(a[i, j] - b[i, j]) <= 0;
      end for;
    end for;
  end same;
end Mix;
"#;

const MODEL: &str = r#"
model ArrayExpressions
  Real x = 0.1 + time;
  Real p = 1e5*(1 + x);
  Real T = 300 + 10*x;
  Real h1 = Mix.enthalpy(p, T, {x/10});
  Real h2 = Mix.h_pTX(p, T, {x/10, 1 - x/10});
  Mix.State s1 = Mix.setState_pTX(p, T, {x/10});
  Mix.State s2 = Mix.setState_pTX(p, T);
  Real X2 = s1.X[2];
  Real Xd = s2.X[1];
  Real y = Mix.stats({x, 2*x, 3*x});
  Real q = Mix.fixedPoly(x);
  parameter Real tab[1, 3] = {{0, 1, 1}};
  Real z1 = if Mix.same(tab, {{0, 1, 1}}) then x else -x;
  Real z2 = if Mix.same(tab, {{0, 1, 2}}) then x else -x;
  annotation(experiment(StopTime = 1, Interval = 0.125));
end ArrayExpressions;
"#;

const SIGNALS: [&str; 8] = ["h1", "h2", "X2", "Xd", "y", "q", "z1", "z2"];

/// A pump curve through three points, from local arrays with bindings: one element by
/// element, one from a function whose array result comes from LAPACK's `dgesv`.
const PUMP: &str = r#"
model PumpCurve
  parameter Real Vn[3] = {0, 1, 2};
  parameter Real Hn[3] = {10, 8, 2};
  Real x = time;
  Real head = Mix.quadraticFlow(x, Vn, Hn);
  annotation(experiment(StopTime = 1, Interval = 0.125));
end PumpCurve;
"#;

fn source() -> String {
    format!("{MIX}{MODEL}")
}

#[test]
fn array_expressions_of_constant_size_run_compiled_with_the_tree_results() {
    let name = "ArrayExpressions";
    let (compiled, stats) = run_source(name, &source(), "0");
    let (tree, tree_stats) = run_source(name, &source(), "1");
    assert!(compiled_calls(&stats) > 0, "{stats}");
    assert_eq!(
        tree_calls(&stats),
        0,
        "a call still ran in the tree interpreter: {stats}"
    );
    assert_eq!(compiled_calls(&tree_stats), 0, "{tree_stats}");
    for s in SIGNALS {
        assert_eq!(compiled.series(s), tree.series(s), "{s} differs");
    }
    let col = |s: &str| compiled.series(s).unwrap();
    let (xs, h1, h2, x2, xd, y, q) = (
        col("x"),
        col("h1"),
        col("h2"),
        col("X2"),
        col("Xd"),
        col("y"),
        col("q"),
    );
    let (z1, z2) = (col("z1"), col("z2"));
    for k in 0..xs.len() {
        let x = xs[k];
        let (p, t, w) = (1e5 * (1.0 + x), 300.0 + 10.0 * x, x / 10.0);
        let h = 1000.0 * t * w + 2000.0 * t * (1.0 - w) + 1e-3 * p;
        assert!(
            (h1[k] - h).abs() <= 1e-9 * h,
            "h1({x}) = {}, want {h}",
            h1[k]
        );
        assert!(
            (h2[k] - h).abs() <= 1e-9 * h,
            "h2({x}) = {}, want {h}",
            h2[k]
        );
        assert!((x2[k] - (1.0 - w)).abs() <= 1e-15, "X2({x}) = {}", x2[k]);
        assert_eq!(xd[k], 0.25, "the default composition");
        // a = 2x + 1 for x = (x, 2x, 3x); b = m*a; b*{1,-1} = -3*sum(a)
        let a = [2.0 * x + 1.0, 4.0 * x + 1.0, 6.0 * x + 1.0];
        let sa: f64 = a.iter().sum();
        let want = sa + (2.0 * x) * (3.0 * x) - 3.0 * sa + x;
        assert!(
            (y[k] - want).abs() <= 1e-12,
            "y({x}) = {}, want {want}",
            y[k]
        );
        let want = (x - 3.0) * x + 2.0;
        assert!(
            (q[k] - want).abs() <= 1e-12,
            "q({x}) = {}, want {want}",
            q[k]
        );
        // a constant table argument is part of the call's frame template
        assert_eq!(z1[k], x, "z1: the tables are equal");
        assert_eq!(z2[k], -x, "z2: the tables differ");
    }
}

/// The same functions as native code (array outputs stored in the frame, array arguments
/// and tuple targets passed element by element), with the scalar interpreter's numbers
/// bit for bit.
#[test]
fn native_code_of_array_expressions_matches_the_interpreter() {
    let name = "ArrayExpressions";
    let (native, stats) = crate::scalar_functions::run_with(name, &source(), &[]);
    let (interpreted, plain) =
        crate::scalar_functions::run_with(name, &source(), &[("MOSS_JIT", "0")]);
    assert!(native_calls(&stats) > 0, "{stats}");
    assert_eq!(native_calls(&plain), 0, "{plain}");
    for s in SIGNALS {
        assert_eq!(native.series(s), interpreted.series(s), "{s} differs");
    }
}

/// Local arrays with bindings run compiled: `V2` element by element, `c` from `solve`,
/// whose result is the array LAPACK's `dgesv` returns (its size known only then). The
/// external routine is the one call left outside the compiled form; the numbers are the
/// tree interpreter's and the parabola through the three points.
#[test]
fn local_arrays_bound_to_elements_or_to_an_array_result_run_compiled() {
    let name = "PumpCurve";
    let source = format!("{MIX}{PUMP}");
    let (compiled, stats) = run_source(name, &source, "0");
    let (tree, _) = run_source(name, &source, "1");
    assert_eq!(compiled.series("head"), tree.series("head"));
    // per evaluation: quadraticFlow and solve compiled, dgesv not
    assert!(
        compiled_calls(&stats) >= 2 * tree_calls(&stats),
        "quadraticFlow or solve ran in the tree interpreter: {stats}"
    );
    let xs = compiled.series("x").unwrap();
    let head = compiled.series("head").unwrap();
    for (x, h) in xs.iter().zip(&head) {
        // through (0, 10), (1, 8), (2, 2): 10 + 0*V - 2*V^2
        let want = 10.0 - 2.0 * x * x;
        assert!((h - want).abs() <= 1e-12, "head({x}) = {h}, want {want}");
    }
}
