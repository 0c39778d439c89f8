//! `moss-frontend`: library loading, name lookup, instantiation, modifications, connections,
//! typing and constant evaluation. Output: a [`flat::FlatModel`].
//!
//! Pipeline: [`loader`] finds and parses class files lazily; [`inst`] holds modifiers and
//! class lookup; [`ctx`] creates instances and collects their elements; [`expand`] turns
//! expressions into scalarized flat expressions (and evaluates structural parameters);
//! [`flatten`] walks the instance tree; [`connect`] builds connection sets; [`funcs`]
//! translates called functions; [`print`] writes the flat model as Modelica;
//! [`stats`] counts equations and variables for `moss check`.

pub mod api;
pub mod connect;
pub mod ctx;
pub mod expand;
pub mod expandable;
pub mod flat;
pub mod flatten;
pub mod fold;
pub mod funcs;
pub mod inst;
pub mod interp;
pub mod loader;
pub mod print;
pub mod restrict;
pub mod stats;
pub mod tables;
pub mod walk;

pub use api::{flatten_model, Failure, Flattened, LoadOptions};
pub use flat::FlatModel;
