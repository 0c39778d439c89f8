//! `moss-symbolic`: from the flat model to the causal program.
//!
//! Passes (one module each, run in this order by [`api::translate`]):
//! [`convert`] (flat model -> expression IR [`ir`], event operators, if-equations),
//! [`alias`] (alias elimination), [`matching`] (structural checks and diagnosis),
//! [`index`] (Pantelides + dummy derivatives), [`sort`] (BLT via Tarjan), [`solve`]
//! (symbolic solving, linear blocks, tearing), [`events`] (zero crossings, when-blocks),
//! [`init`] (initialization system), [`params`] (parameter blocks). Output: a
//! [`program::CausalProgram`]; [`dump`] prints one readably.

pub mod alias;
pub mod api;
#[doc(hidden)]
pub mod bench_support;
pub mod convert;
pub mod dump;
pub mod emit;
pub mod events;
pub mod index;
pub mod init;
pub mod ir;
pub mod matching;
pub mod model;
pub mod params;
pub mod program;
pub mod solve;
pub mod sort;
#[cfg(test)]
mod testeval;
#[cfg(test)]
mod tests;
#[cfg(test)]
pub mod testutil;

pub use api::translate;
pub use program::CausalProgram;
