//! `moss-symbolic`: from the flat model to the causal program.
//!
//! Passes (one module each, run in this order by [`api::translate`], each timed in the
//! report):
//! 1. [`convert`]: flat model -> working [`model::Model`] over the hash-consed expression
//!    IR [`ir`] (constant folding, simplification, differentiation); event operators
//!    (`edge`, `change`, `sample`, `noEvent`, step functions), if-equations, when-equations,
//!    algorithms, multi-output calls; inlining of simple functions ([`inline`]);
//!    derivative functions generated from the algorithms of functions without a
//!    `derivative` annotation ([`autodiff`]). String
//!    parameters are folded into their uses and leave the numeric program ([`strings`]).
//!    [`events`] adds the hidden when-condition slots; [`toplevel`] grounds top-level
//!    connectors whose potential the model leaves undetermined.
//! 2. [`alias`]: constant propagation and alias elimination.
//! 3. [`hidden_constraints`]: constraints on states hidden in linear dependencies (an
//!    ungrounded cutset of inductors). [`index`] with [`matching`]: count check, Pantelides, dummy derivatives (stateSelect),
//!    Dulmage–Mendelsohn diagnosis of singular systems; [`dummy_pivots`] checks a static
//!    choice of dummies numerically at the parameter values; [`state_sets`] for constraints whose
//!    states must be chosen at run time (dynamic state selection). Then [`inline`] inlines
//!    the simple functions that kept their calls for their `derivative` annotations.
//! 4. [`solve`] with [`sort`]: matching of the index-1 system, BLT (Tarjan), symbolic solving,
//!    linear blocks, tearing of nonlinear loops. An equation solved by dividing by a
//!    parameter that is zero makes the translation start over with that parameter evaluated
//!    ([`zero_params`]).
//! 5. [`init`]: the initialization system, balanced with warnings.
//! 6. [`params`]: dependent parameters.
//! 7. [`emit`]: program blocks, zero crossings and time events, Jacobian pattern.
//!
//! Output: a [`program::CausalProgram`]; [`dump`] prints one readably.

pub mod algorithm_functions;
pub mod alias;
pub mod api;
pub mod array_ops;
pub mod autodiff;
#[doc(hidden)]
pub mod bench_support;
pub mod call_constants;
pub mod clocks;
pub mod convert;
pub mod dummy_pivots;
pub mod dump;
pub mod emit;
pub mod events;
pub mod hidden_constraints;
pub mod index;
pub mod init;
pub mod inline;
pub mod ir;
pub mod jacobian;
pub mod matching;
pub mod model;
pub mod params;
pub mod preferred_states;
pub mod program;
pub mod shared_sums;
pub mod solve;
pub mod sort;
pub mod state_sets;
pub mod strings;
#[cfg(test)]
mod testeval;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_source;
#[cfg(test)]
mod tests_values;
#[cfg(test)]
pub mod testutil;
pub mod toplevel;
pub mod when_split;
pub mod zero_params;

pub use api::translate;
pub use program::CausalProgram;
