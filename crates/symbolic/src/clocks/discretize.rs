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
//! intermediate points, which this lowering does not build: they are refused with a clear
//! message. `External` (integrate with the simulator's own solver) is not offered either.

use super::util::bin;
use moss_frontend::flat::{BinaryOp, Expr};

/// Solver methods of discretized partitions that moss implements.
pub const SUPPORTED: &[&str] = &["ExplicitEuler", "ImplicitEuler", "ImplicitTrapezoid"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SolverMethod {
    ExplicitEuler,
    ImplicitEuler,
    ImplicitTrapezoid,
}

impl SolverMethod {
    /// The method of a `solverMethod` string; `Err` with the reason otherwise. No method
    /// given means `ExplicitEuler`, the method every tool supports (spec 16.8.2).
    pub fn parse(name: Option<&str>) -> Result<SolverMethod, String> {
        match name {
            None | Some("ExplicitEuler") => Ok(SolverMethod::ExplicitEuler),
            Some("ImplicitEuler") => Ok(SolverMethod::ImplicitEuler),
            Some("ImplicitTrapezoid") => Ok(SolverMethod::ImplicitTrapezoid),
            Some(other @ ("ExplicitMidPoint2" | "ExplicitRungeKutta4" | "External")) => Err(format!(
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
        matches!(
            self,
            SolverMethod::ExplicitEuler | SolverMethod::ImplicitTrapezoid
        )
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
