//! LAPACK's LU routines (`dgetrf`, `dgetri`, `dgetrs`, `external "FORTRAN 77"`), run
//! natively for the MSL's `Modelica.Math.Matrices.LU`, `inv`, `det` and `LU_solve`: at run
//! time on a time-varying matrix, at translation time for a constant, and an inverse inside
//! an equation (`C = inv(A) * B`, the compliance suite's `Functions.External.FortranLapack`).

use crate::library_support;

use library_support::{assert_close, simulate_source};

/// The wrappers declared as `Modelica.Math.Matrices.LAPACK` and `Matrices` declare them.
const FUNCTIONS: &str = r#"
  function dgetrf
    input Real A[:, :];
    output Real LU[size(A, 1), size(A, 2)] = A;
    output Integer pivots[min(size(A, 1), size(A, 2))];
    output Integer info;
  protected
    Integer m = size(A, 1);
    Integer n = size(A, 2);
    Integer lda = max(1, size(A, 1));
  external "FORTRAN 77" dgetrf(m, n, LU, lda, pivots, info);
  end dgetrf;
  function dgetri
    input Real LU[:, size(LU, 1)];
    input Integer pivots[size(LU, 1)];
    output Real inv[size(LU, 1), size(LU, 2)] = LU;
    output Integer info;
  protected
    Integer n = size(LU, 1);
    Integer lda = max(1, size(LU, 1));
    Integer lwork = max(1, min(10, size(LU, 1))*size(LU, 1));
    Real work[max(1, min(10, size(LU, 1))*size(LU, 1))];
  external "FORTRAN 77" dgetri(n, inv, lda, pivots, work, lwork, info);
  end dgetri;
  function dgetrs
    input Real LU[:, size(LU, 1)];
    input Integer pivots[size(LU, 1)];
    input Real B[size(LU, 1), :];
    output Real X[size(B, 1), size(B, 2)] = B;
    output Integer info;
  protected
    Integer n = size(LU, 1);
    Integer nrhs = size(B, 2);
    Real work[size(LU, 1), size(LU, 1)] = LU;
    Integer lda = max(1, size(LU, 1));
    Integer ldb = max(1, size(B, 1));
  external "FORTRAN 77" dgetrs("N", n, nrhs, work, lda, pivots, X, ldb, info);
  end dgetrs;
  function inv
    input Real A[:, size(A, 1)];
    output Real invA[size(A, 1), size(A, 2)];
  protected
    Integer info;
    Integer pivots[size(A, 1)];
    Real LU[size(A, 1), size(A, 2)];
  algorithm
    (LU, pivots, info) := dgetrf(A);
    assert(info == 0, "singular");
    invA := dgetri(LU, pivots);
  end inv;
  function det
    input Real A[:, size(A, 1)];
    output Real result;
  protected
    Real LU[size(A, 1), size(A, 1)];
    Integer pivots[size(A, 1)];
  algorithm
    (LU, pivots) := dgetrf(A);
    result := product(LU[i, i]*(if pivots[i] == i then 1 else -1) for i in 1:size(A, 1));
  end det;
  function solveLU
    input Real A[:, size(A, 1)];
    input Real B[size(A, 1), :];
    output Real X[size(B, 1), size(B, 2)];
  protected
    Real LU[size(A, 1), size(A, 1)];
    Integer pivots[size(A, 1)];
  algorithm
    (LU, pivots) := dgetrf(A);
    X := dgetrs(LU, pivots, B);
  end solveLU;
"#;

#[test]
fn lu_inverse_determinant_and_solve_run_natively() {
    // A(t) needs row interchanges (its first pivot is the 4 of the second row)
    let source = format!(
        "model LuRoutines
{FUNCTIONS}
  Real A[3, 3] = [1, 2, 3; 4, 5 + time, 6; 7, 8, 10];
  Real B[3, 3] = [1, 0, 2; 0, 1, 1; 1, 1, 0];
  Real C[3, 3] = inv(A) * B;
  Real AC[3, 3] = A * C;
  Real d = det(A);
  Real X[3, 2] = solveLU(A, [1, 2; 3, 4; 5, 6]);
  Real R[3, 2] = A * X;
  constant Real dConst = det([2, 1; 1, 3]);
  constant Real invConst[2, 2] = inv([2, 1; 1, 3]);
end LuRoutines;"
    );
    let run = simulate_source("LuRoutines", &source, &["--stop-time", "1"]);
    for t in [0.0, 0.5, 1.0] {
        // A * inv(A) * B = B and A * X = the right-hand side
        let b = [[1.0, 0.0, 2.0], [0.0, 1.0, 1.0], [1.0, 1.0, 0.0]];
        for (i, row) in b.iter().enumerate() {
            for (j, &v) in row.iter().enumerate() {
                let got = run.at(&format!("AC[{},{}]", i + 1, j + 1), t);
                assert_close(&format!("(A*C)[{},{}] at {t}", i + 1, j + 1), got, v, 1e-9);
            }
        }
        let rhs = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]];
        for (i, row) in rhs.iter().enumerate() {
            for (j, &v) in row.iter().enumerate() {
                let got = run.at(&format!("R[{},{}]", i + 1, j + 1), t);
                assert_close(&format!("(A*X)[{},{}] at {t}", i + 1, j + 1), got, v, 1e-9);
            }
        }
        // det by cofactors: 1*((5+t)*10 - 48) - 2*(40 - 42) + 3*(32 - 7*(5+t)) = -3 - 11 t
        assert_close(
            &format!("det at {t}"),
            run.at("d", t),
            -3.0 - 11.0 * t,
            1e-9,
        );
    }
    // evaluated at translation time
    assert_close("det of a constant", run.first("dConst"), 5.0, 1e-12);
    let inv = [[0.6, -0.2], [-0.2, 0.4]];
    for (i, row) in inv.iter().enumerate() {
        for (j, &v) in row.iter().enumerate() {
            let name = format!("invConst[{},{}]", i + 1, j + 1);
            assert_close(&name, run.first(&name), v, 1e-12);
        }
    }
}
