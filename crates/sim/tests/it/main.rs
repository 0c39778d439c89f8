//! The integration tests of `sim`, one binary (one link of the whole
//! pipeline instead of one per file). Each module is one former test file.

mod common;
mod events;
mod integrators;
mod interpreter;
mod modes;
mod pipeline;
mod stiff;
