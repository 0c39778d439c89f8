//! `moss-symbolic`: from the flat model to the causal program.
//!
//! Passes: expression IR, simplification, differentiation, alias elimination, matching,
//! index reduction (Pantelides + dummy derivatives), BLT sorting, tearing, event analysis,
//! initialization system. Output: a [`program::CausalProgram`].

pub mod api;
pub mod program;

pub use api::translate;
pub use program::CausalProgram;
