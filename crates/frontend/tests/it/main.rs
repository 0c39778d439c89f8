//! The integration tests of `frontend`, one binary (one link of the whole
//! pipeline instead of one per file). Each module is one former test file.

mod arrays;
mod buses;
mod cardinality;
mod common;
mod connection_rules;
mod errors;
mod functions;
mod instantiation;
mod lookup;
mod media;
mod modifiers;
mod more;
mod operators;
mod overconstrained;
mod redeclare_rules;
mod restrictions;
mod robustness;
mod roundtrip;
mod scoping_rules;
mod session12_rules;
mod shared_elements;
mod streams;
mod structure;
mod typecheck;
