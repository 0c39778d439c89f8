//! `moss-frontend`: library loading, name lookup, instantiation, modifications, connections,
//! typing and constant evaluation. Output: a [`flat::FlatModel`].
//!
//! Pipeline: [`loader`] finds and parses class files lazily (library roots: `--lib`
//! directories, MODELICAPATH, then the bundled library embedded at build time); [`inst`]
//! holds modifiers and class lookup; [`ctx`] creates instances and collects their elements
//! (extends, modifiers, redeclarations); [`expand`] turns expressions into scalarized flat
//! expressions and evaluates structural parameters ([`fold`] folds constants, [`interp`]
//! runs functions at translation time); [`flatten`] walks the instance tree (variables,
//! bindings, equations, algorithms); [`connect`] and [`expandable`] build connection sets
//! (potentials, flows, streams, expandable connectors); [`funcs`] translates the called
//! functions; [`tables`] replaces the MSL's external table objects by Modelica
//! interpolation; [`restrict`] checks the restrictions of specialized classes; [`mod@print`]
//! writes the flat model as Modelica that moss reads back; [`stats`] counts equations and
//! variables for `moss check`.
//!
//! Records in functions and operator records are scalarized here ([`records`],
//! `fnrecords`, [`operators`]): later stages see only scalar and array variables.

pub mod api;
pub mod connect;
pub mod connect_rules;
pub mod ctx;
pub mod expand;
pub mod expandable;
pub mod external_code;
pub mod external_objects;
pub mod flat;
pub mod flatten;
mod fnrecords;
pub mod fold;
mod funargs;
pub mod funcs;
pub mod inst;
pub mod interp;
pub mod lapack;
pub mod lift;
pub mod limits;
pub mod loader;
pub mod operators;
pub mod overconstrained;
mod partial_derivative;
pub mod print;
pub mod records;
pub mod restrict;
pub mod shared_elements;
pub mod starts;
pub mod state_machines;
pub mod stats;
pub mod tables;
pub mod typecheck;
pub mod walk;

pub use api::{flatten_model, Failure, Flattened, LoadOptions};
pub use flat::FlatModel;
