//! Discretized continuous-time partitions (spec 16.8.2): a clocked partition containing
//! `der(x)` is integrated from tick to tick with its solver method. With `h = interval()`,
//! `x_{i-1} = previous(x)` and `d = der(x)` (a plain variable here, computed by the
//! partition's own equations at the current tick):
//!
//! | method | `x_i` |
//! |---|---|
//! | `ExplicitEuler` | `x_{i-1} + h * previous(d)` |
//! | `ImplicitEuler` | `x_{i-1} + h * d` (an equation system with `d`) |
//! | `ImplicitTrapezoid` | `x_{i-1} + h/2 * (d + previous(d))` |
//!
//! At the first tick `x` is its start value (the initial conditions are used at the first
//! tick, the first step goes from the first to the second tick). The explicit multi-stage
//! methods (`ExplicitMidPoint2`, `ExplicitRungeKutta4`) need the right-hand side at
//! intermediate points: [`Lowering`](super::lower::Lowering) copies the partition's
//! equations once per stage ([`SolverMethod::stages`], [`weights`]). `External` (integrate
//! with the simulator's own solver) is refused with a clear message.

use super::util::bin;
use moss_frontend::flat::{BinaryOp, Expr};

/// Solver methods of discretized partitions that moss implements.
pub const SUPPORTED: &[&str] = &[
    "ExplicitEuler",
    "ExplicitMidPoint2",
    "ExplicitRungeKutta4",
    "ImplicitEuler",
    "ImplicitTrapezoid",
    "SemiImplicitEuler",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SolverMethod {
    ExplicitEuler,
    ExplicitMidPoint2,
    ExplicitRungeKutta4,
    ImplicitEuler,
    ImplicitTrapezoid,
    /// Not in the specification's table; accepted as OpenModelica defines it: the
    /// partition's equations see the states of the previous tick and the inputs of this
    /// one, `x_i = x_{i-1} + h f(x_{i-1}, u_i)`.
    SemiImplicitEuler,
}

impl SolverMethod {
    /// The method of a `solverMethod` string; `Err` with the reason otherwise. No method
    /// given means `ExplicitEuler`, the method every tool supports (spec 16.8.2).
    pub fn parse(name: Option<&str>) -> Result<SolverMethod, String> {
        match name {
            None | Some("ExplicitEuler") => Ok(SolverMethod::ExplicitEuler),
            Some("ImplicitEuler") => Ok(SolverMethod::ImplicitEuler),
            Some("ImplicitTrapezoid") => Ok(SolverMethod::ImplicitTrapezoid),
            Some("SemiImplicitEuler") => Ok(SolverMethod::SemiImplicitEuler),
            Some("ExplicitMidPoint2") => Ok(SolverMethod::ExplicitMidPoint2),
            Some("ExplicitRungeKutta4") => Ok(SolverMethod::ExplicitRungeKutta4),
            Some(other @ "External") => Err(format!(
                "the solver method \"{other}\" is not supported yet for discretized clocked partitions (supported: {})",
                SUPPORTED.join(", ")
            )),
            Some(other) => Err(format!(
                "unknown solver method \"{other}\" (supported: {})",
                SUPPORTED.join(", ")
            )),
        }
    }

    pub fn uses_previous_derivative(self) -> bool {
        !matches!(
            self,
            SolverMethod::ImplicitEuler | SolverMethod::SemiImplicitEuler
        )
    }

    /// The partition keeps `der()` for index reduction and is discretized after it
    /// ([`super::states`]). The explicit multi-stage methods copy the partition's equations
    /// per stage and `SemiImplicitEuler` rewrites them with the previous states, both before
    /// index reduction.
    pub fn discretized_after_index_reduction(self) -> bool {
        matches!(
            self,
            SolverMethod::ExplicitEuler
                | SolverMethod::ImplicitEuler
                | SolverMethod::ImplicitTrapezoid
        )
    }

    /// The stages after the first of an explicit multi-stage method: `(c, _)` with the stage
    /// state `x_{i-1} + c k_{s-1}` (spec 16.8.2); `None` for the one-stage methods.
    pub fn stages(self) -> Option<&'static [(f64, f64)]> {
        match self {
            SolverMethod::ExplicitMidPoint2 => Some(&[(0.5, 1.0)]),
            SolverMethod::ExplicitRungeKutta4 => Some(&[(0.5, 2.0), (0.5, 2.0), (1.0, 1.0)]),
            _ => None,
        }
    }
}

/// `x_i` from `x_{i-1}` for one step of length `h`.
pub fn step(
    method: SolverMethod,
    h: &Expr,
    x_prev: &Expr,
    d: &Expr,
    d_prev: Option<&Expr>,
) -> Expr {
    let slope = match (method, d_prev) {
        (SolverMethod::ExplicitEuler, Some(dp)) => dp.clone(),
        (SolverMethod::ImplicitTrapezoid, Some(dp)) => bin(
            BinaryOp::Mul,
            Expr::Real(0.5),
            bin(BinaryOp::Add, d.clone(), dp.clone()),
        ),
        _ => d.clone(),
    };
    bin(
        BinaryOp::Add,
        x_prev.clone(),
        bin(BinaryOp::Mul, h.clone(), slope),
    )
}

/// The weights `b_s` of `k_1, k_2, ...` in `x_i = x_{i-1} + sum b_s k_s`: the explicit
/// mid-point rule uses `k_2` only, the classical Runge–Kutta method `(1, 2, 2, 1)/6`.
pub fn weights(stages: &[(f64, f64)]) -> Vec<f64> {
    match stages.len() {
        1 => vec![0.0, 1.0],
        _ => {
            let mut w = vec![1.0];
            w.extend(stages.iter().map(|&(_, b)| b));
            let total: f64 = w.iter().sum();
            w.iter().map(|b| b / total).collect()
        }
    }
}
