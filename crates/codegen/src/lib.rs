//! `moss-codegen`: executes the causal program. [`model::ExecutableModel`] is the interface
//! the simulator uses; the interpreter implements it (a JIT can later implement it too).
//!
//! Pipeline inside this crate: `compile.rs` turns the program's blocks into steps, with the
//! expressions compiled to register-machine tapes (`tape.rs`) and function bodies /
//! algorithm sections to resolved trees (`func.rs`); `interp.rs` runs them on a `Machine`
//! and implements the event logic; `solve.rs` (Newton, Levenberg–Marquardt, bracketing),
//! `linalg.rs` (dense LU) and `sparse.rs` (faer sparse LU) hold the equation solvers.
//!
//! Additions to [`ExecutableModel`] (default methods, existing signatures unchanged):
//! [`ExecutableModel::warnings`] and [`ExecutableModel::take_initial_terminate`].

mod builtins;
mod compile;
mod event_only;
mod extc;
mod extc_args;
mod fd_columns;
mod func;
pub mod interp;
mod jit;
mod kept_factors;
mod linalg;
mod machine;
mod memo;
pub mod model;
mod native;
mod native_lapack;
mod native_random;
mod native_strings;
mod pretty;
mod scalar_fn;
mod solve;
mod sparse;
mod specialize;
mod string_pool;
mod tangent_slices;
mod tape;
mod tape_jit;
mod value;

#[cfg(test)]
mod tests;

pub use interp::Interpreter;
pub use model::{EventOutcome, ExecutableModel, ModelStats, RuntimeError};
pub use sparse::{SparseLu, SparseSystem};
