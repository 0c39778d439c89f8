//! Initialization of lumped volumes (Modelica.Fluid's tanks), on small self-written models:
//! a preferred variable with a start value is what an under-determined initialization fixes
//! (not the mass, which has none), and a closed discrete valve (`m_flow = opening_min*k*dp`
//! with `opening_min = 0`) is never divided by.

use crate::library_support;

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

/// A nonlinear system of 50 unknowns, each residual reading only its neighbours (as the
/// segments of a discretized pipe at a steady-state initialization do), too large for a
/// symbolic Jacobian: its finite-difference Jacobian perturbs columns that share no row
/// together. The solution satisfies every equation.
#[test]
fn a_large_banded_system_is_solved_with_grouped_difference_columns() {
    let run = simulate_source(
        "BandedSystem",
        r#"
model BandedSystem
  parameter Integer n = 50;
  Real x[n](each start = 1);
equation
  for i in 1:n loop
    x[i]^3 + 0.1*((if i > 1 then x[i-1]^3 else 0) + (if i < n then x[i+1]^3 else 0)) = i*(1 + time);
  end for;
  annotation(experiment(StopTime = 1, Interval = 0.5));
end BandedSystem;
"#,
        &["--stats"],
    );
    for k in 0..run.time().len() {
        let t = run.time()[k];
        let cube = |i: usize| run.get(&format!("x[{i}]"))[k].powi(3);
        for i in 1..=50 {
            let left = if i > 1 { cube(i - 1) } else { 0.0 };
            let right = if i < 50 { cube(i + 1) } else { 0.0 };
            let residual = cube(i) + 0.1 * (left + right) - i as f64 * (1.0 + t);
            assert!(
                residual.abs() < 1e-6,
                "equation {i} at t = {t}: residual {residual}"
            );
        }
    }
}
