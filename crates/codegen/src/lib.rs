//! `moss-codegen`: executes the causal program. [`model::ExecutableModel`] is the interface
//! the simulator uses; the interpreter implements it (a JIT can later implement it too).

pub mod interp;
pub mod model;

pub use interp::Interpreter;
pub use model::{EventOutcome, ExecutableModel, ModelStats, RuntimeError};
