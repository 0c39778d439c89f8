//! State selection on small models with a known exact solution: choices that are invisible
//! to a purely structural analysis must still give the right answer.

use crate::library_support;

use library_support::{assert_close, simulate_source};

/// The same relative angle declared twice with `stateSelect = prefer` (as a gearbox does
/// around its elastic element): the two definitions are one variable. Kept as two states,
/// the absolute angle `phi1` lost its equation and stayed at 0. With the momentum conserved
/// (both inertias start at rest), `J1 phi1 + J2 phi2` is constant, so
/// `phi1 = J2 (rel0 - rel) / (J1 + J2)`, and `rel = rel0 cos(sqrt(c (1/J1 + 1/J2)) t)`.
#[test]
fn one_quantity_declared_twice_is_one_state() {
    let run = simulate_source(
        "TwoRel",
        r#"
model TwoRel
  parameter Real c = 100, J1 = 1, J2 = 2;
  Real phi1(start = 0, fixed = true), phi2, w1(start = 0, fixed = true), w2;
  Real rel(start = 0.1, fixed = true, stateSelect = StateSelect.prefer) = phi2 - phi1;
  Real wrel(start = 0, fixed = true, stateSelect = StateSelect.prefer) = der(rel);
  Real inner_rel(stateSelect = StateSelect.prefer) = phi2 - phi1;
  Real inner_w(stateSelect = StateSelect.prefer) = der(inner_rel);
  Real tau = c*inner_rel;
equation
  der(phi1) = w1;
  der(phi2) = w2;
  J1*der(w1) = tau;
  J2*der(w2) = -tau;
end TwoRel;
"#,
        &["--stop-time", "1", "--tolerance", "1e-9"],
    );
    let omega = (100.0f64 * (1.0 + 0.5)).sqrt();
    for t in [0.25, 0.5, 1.0] {
        let rel = 0.1 * (omega * t).cos();
        assert_close(&format!("rel({t})"), run.at("rel", t), rel, 1e-6);
        let phi1 = 2.0 * (0.1 - rel) / 3.0;
        assert_close(&format!("phi1({t})"), run.at("phi1", t), phi1, 1e-6);
        assert_close(
            &format!("inner_rel({t})"),
            run.at("inner_rel", t),
            rel,
            1e-6,
        );
    }
}
