//! `moss-frontend`: library loading, name lookup, instantiation, modifications, connections,
//! typing and constant evaluation. Output: a [`flat::FlatModel`].

pub mod flat;

pub use flat::FlatModel;
