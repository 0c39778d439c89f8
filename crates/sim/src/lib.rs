//! `moss-sim`: numerical integration of an [`moss_codegen::ExecutableModel`] with events.
//!
//! - [`dopri5`]: explicit Dormand–Prince 5(4) with dense output (non-stiff problems).
//! - [`bdf`]: variable-order BDF 1–5 with a sparse finite-difference Jacobian (stiff problems;
//!   the default).
//! - [`driver`]: the event loop — zero crossings located on the dense output, time events hit
//!   exactly, event iteration, restarts, chattering guard — and result output.

pub mod bdf;
pub mod dopri5;
pub mod integrator;
pub mod jacobian;
pub mod linalg;
pub mod system;

pub use integrator::{Integrator, IntegratorStats, StepError};
pub use system::{OdeSystem, Tolerances};
