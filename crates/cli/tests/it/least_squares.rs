//! What the table-based media (`Modelica.Media.Incompressible.TableBased`) need: LAPACK's
//! `dgelsy` (minimum-norm least squares, `external "FORTRAN 77"`) run natively both when a
//! constant is evaluated at translation time (a polynomial fit of a property table bound to
//! `constant Real poly[:]`) and at run time; function bindings that use variables declared
//! after them; and a class redeclared in an extends modifier of a package
//! (`extends Base(redeclare record State = Common.Props)`) seen through the package.

use crate::library_support;

use library_support::{assert_close, simulate_source};

/// The MSL's wrappers, declared the way `Modelica.Math.Matrices.LAPACK` and
/// `Modelica.Math.Polynomials` declare them: `x`'s binding uses `nrow` and `ncol`, which are
/// declared after it.
const FUNCTIONS: &str = r#"
  function dgelsy_vec
    input Real A[:, :];
    input Real b[size(A, 1)];
    input Real rcond = 0.0;
    output Real x[max(size(A, 1), size(A, 2))] = cat(1, b, zeros(max(nrow, ncol) - nrow));
    output Integer info;
    output Integer rank;
  protected
    Integer nrow = size(A, 1);
    Integer ncol = size(A, 2);
    Integer nrhs = 1;
    Integer nx = max(nrow, ncol);
    Integer lwork = max(min(nrow, ncol) + 3*ncol + 1, 2*min(nrow, ncol) + 1);
    Real work[max(min(size(A, 1), size(A, 2)) + 3*size(A, 2) + 1, 2*min(size(A, 1), size(A, 2)) + 1)];
    Real Awork[size(A, 1), size(A, 2)] = A;
    Integer jpvt[size(A, 2)] = zeros(ncol);
  external "FORTRAN 77" dgelsy(nrow, ncol, nrhs, Awork, nrow, x, nx, jpvt, rcond, rank, work, lwork, info);
  end dgelsy_vec;
  function leastSquares
    input Real A[:, :];
    input Real b[size(A, 1)];
    input Real rcond = 1e-13;
    output Real x[size(A, 2)];
    output Integer rank;
  protected
    Integer info;
    Real xx[max(size(A, 1), size(A, 2))];
  algorithm
    (xx, info, rank) := dgelsy_vec(A, b, rcond);
    x := xx[1:size(A, 2)];
  end leastSquares;
  function fitting "polynomial of degree n through (u, y) in the least-squares sense"
    input Real u[:];
    input Real y[size(u, 1)];
    input Integer n;
    output Real p[n + 1];
  protected
    Real V[size(u, 1), n + 1] "Vandermonde matrix";
  algorithm
    V[:, n + 1] := ones(size(u, 1));
    for j in n:-1:1 loop
      V[:, j] := {u[i]*V[i, j + 1] for i in 1:size(u, 1)};
    end for;
    p := leastSquares(V, y);
  end fitting;
"#;

/// `poly` is a constant whose size comes from the function's output: it must be evaluated
/// at translation time. The table lies on `2 u^2 + 1`, plus symmetric noise on the middle
/// points that a least-squares fit of degree 1 has to average.
fn translation_time_model() -> String {
    format!(
        r#"
model FitTable
{FUNCTIONS}
  constant Real table[:, 2] = [0, 1; 1, 3; 2, 9; 3, 19];
  constant Boolean has = size(table, 1) > 0;
  final constant Real poly[:] = if has then fitting(table[:, 1], table[:, 2], 2) else zeros(3);
  final constant Real line[:] = fitting({{0, 1, 2, 3}}, {{0, 1.5, 1.5, 3}}, 1);
  Real c2 = poly[1];
  Real c1 = poly[2];
  Real c0 = poly[3];
  Real slope = line[1];
  Real offset = line[2];
  Real y = poly[1]*time^2 + poly[2]*time + poly[3];
end FitTable;
"#
    )
}

#[test]
fn a_polynomial_fit_through_lapack_is_evaluated_at_translation_time() {
    let run = simulate_source("FitTable", &translation_time_model(), &[]);
    assert_close("c2", run.last("c2"), 2.0, 1e-12);
    assert_close("c1", run.last("c1"), 0.0, 1e-12);
    assert_close("c0", run.last("c0"), 1.0, 1e-12);
    // least squares through (0,0), (1,1.5), (2,1.5), (3,3): slope 0.9, offset 0.15
    assert_close("slope", run.last("slope"), 0.9, 1e-12);
    assert_close("offset", run.last("offset"), 0.15, 1e-12);
    assert_close("y(1)", run.last("y"), 3.0, 1e-12);
}

/// The same routine at run time, on right-hand sides that change with time: an
/// overdetermined full-rank system, a rank-deficient one (the minimum-norm solution among
/// infinitely many) and an underdetermined one (`x` longer than `b`: its binding needs
/// `ncol`, declared after it).
fn run_time_model() -> String {
    format!(
        r#"
model SolveLeastSquares
{FUNCTIONS}
  Real x[2];
  Integer rank;
  Real xd[2];
  Integer rankDeficient;
  Real xu[2];
  Integer rankUnder;
equation
  (x, rank) = leastSquares([1, 0; 0, 1; 1, 1], {{1, 2, 3}}*(1 + time));
  (xd, rankDeficient) = leastSquares([1, 2; 2, 4; 3, 6], {{1, 2, 3}}*(1 + time));
  (xu, rankUnder) = leastSquares([1, 1], {{2}}*(1 + time));
  annotation(experiment(StopTime = 1, Interval = 0.5));
end SolveLeastSquares;
"#
    )
}

#[test]
fn lapack_dgelsy_gives_the_minimum_norm_least_squares_solution_at_run_time() {
    let run = simulate_source("SolveLeastSquares", &run_time_model(), &[]);
    // at t = 1, b = {2, 4, 6}: AᵀA x = Aᵀb gives x = {2, 4}
    assert_close("x[1]", run.last("x[1]"), 2.0, 1e-12);
    assert_close("x[2]", run.last("x[2]"), 4.0, 1e-12);
    assert_eq!(run.last("rank"), 2.0);
    // every x with x1 + 2 x2 = 2 fits exactly; the shortest is (2, 4)/5
    assert_close("xd[1]", run.last("xd[1]"), 0.4, 1e-12);
    assert_close("xd[2]", run.last("xd[2]"), 0.8, 1e-12);
    assert_eq!(run.last("rankDeficient"), 1.0);
    // x1 + x2 = 4: the shortest is (2, 2)
    assert_close("xu[1]", run.last("xu[1]"), 2.0, 1e-12);
    assert_close("xu[2]", run.last("xu[2]"), 2.0, 1e-12);
    assert_eq!(run.last("rankUnder"), 1.0);
}

/// `Leaf` inherits `State` from `Base` through `Mid`, whose extends clause redeclares it:
/// `Medium.State` and the record constructor `State(T = x, p = 2*x)` inside the inherited
/// function are the redeclared record (fields `T`, `p`), not `Base`'s (no fields; a
/// replacing record must have every field of the one it replaces, spec 7.3.2).
const REDECLARED_IN_EXTENDS: &str = r#"
package Lib
  package Base
    replaceable record State
    end State;
    function make
      input Real x;
      output State s;
    algorithm
      s := State(T = x, p = 2*x);
    end make;
  end Base;
  package Common
    record Props
      Real T;
      Real p;
    end Props;
  end Common;
  package Mid
    extends Base(redeclare record State = Common.Props);
  end Mid;
  package Leaf
    extends Mid;
  end Leaf;
end Lib;
model UsesLeaf
  package Medium = Lib.Leaf;
  Medium.State st = Medium.make(1 + time);
  annotation(experiment(StopTime = 1, Interval = 0.5));
end UsesLeaf;
"#;

#[test]
fn a_class_redeclared_in_an_extends_modifier_is_seen_through_the_package() {
    let run = simulate_source("UsesLeaf", REDECLARED_IN_EXTENDS, &[]);
    assert_close("st.T", run.last("st.T"), 2.0, 1e-12);
    assert_close("st.p", run.last("st.p"), 4.0, 1e-12);
}
