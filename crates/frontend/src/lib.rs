//! `moss-frontend`: library loading, name lookup, instantiation, modifications, connections,
//! typing and constant evaluation. Output: a [`flat::FlatModel`].

pub mod api;
pub mod flat;

pub use api::{flatten_model, Failure, Flattened, LoadOptions};
pub use flat::FlatModel;
