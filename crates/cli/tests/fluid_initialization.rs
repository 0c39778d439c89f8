//! Initialization of lumped volumes (Modelica.Fluid's tanks), on small self-written models:
//! a preferred variable with a start value is what an under-determined initialization fixes
//! (not the mass, which has none), and a closed discrete valve (`m_flow = opening_min*k*dp`
//! with `opening_min = 0`) is never divided by.

mod library_support;

use library_support::{assert_close, simulate_source};

/// No initial equation: the states `m` and `U` are free, and so is the preferred `T` with a
/// start value. The mass is tied to the level nonlinearly (a conical tank); initialization fixes the preferred `level` and `T` at their start values instead
/// of `m = 0` and `U = 0`.
const FREE_START: &str = r#"model FreeStart
  parameter Real d = 1000;
  parameter Real c = 4184;
  Real level(stateSelect = StateSelect.prefer, start = 0.5);
  Real T(stateSelect = StateSelect.prefer, start = 300);
  Real V;
  Real m;
  Real U;
equation
  V = level + 0.5*level^2;
  m = d*V;
  U = m*c*T;
  der(m) = 1;
  der(U) = c*350;
end FreeStart;
"#;

#[test]
fn under_determined_initialization_fixes_preferred_variables_with_start_values() {
    let run = simulate_source("FreeStart", FREE_START, &["--stop-time", "1"]);
    assert_close("level(0)", run.first("level"), 0.5, 1e-12);
    assert_close("T(0)", run.first("T"), 300.0, 1e-12);
    let m0 = 1000.0 * (0.5 + 0.5 * 0.25);
    assert_close("m(0)", run.first("m"), m0, 1e-9);
    assert_close("m(1)", run.last("m"), m0 + 1.0, 1e-6);
    // U = m c T grows by 350 c per second: T(1) = (m0 c 300 + 350 c)/((m0 + 1) c)
    assert_close(
        "T(1)",
        run.last("T"),
        (m0 * 300.0 + 350.0) / (m0 + 1.0),
        1e-6,
    );
}

/// A closed valve in a loop with a tank's outlet pressure: `m_flow = (if open then k else
/// opening_min*k)*dp` with `opening_min = 0` does not determine `dp`, so tearing must not
/// solve it for `dp` (a division by zero at the start); it determines `m_flow = 0`.
const CLOSED_VALVE: &str = r#"model ClosedValve
  parameter Boolean open = false;
  parameter Real k = 100;
  parameter Real opening_min = 0;
  parameter Real p_tank = 2e5;
  parameter Real p_ambient = 1e5;
  parameter Real zeta = 50;
  Real m_flow;
  Real dp;
  Real p_b;
equation
  p_b = p_tank - zeta*m_flow*abs(m_flow);
  m_flow = (if open then k else opening_min*k)*dp;
  dp = p_b - p_ambient;
end ClosedValve;
"#;

#[test]
fn closed_valve_with_zero_opening_is_not_divided_by() {
    let run = simulate_source("ClosedValve", CLOSED_VALVE, &["--stop-time", "1"]);
    assert_close("m_flow", run.first("m_flow"), 0.0, 1e-12);
    assert_close("p_b", run.first("p_b"), 2e5, 1e-6);
    assert_close("dp", run.last("dp"), 1e5, 1e-6);
}
