//! Dependencies of the `ModelStructure` unknowns.
//!
//! Not computed yet: every unknown is written without a `dependencies` attribute, which
//! FMI 2.0 defines as "may depend on all knowns".

use std::collections::HashMap;

/// Per value reference of an unknown: the value references of the knowns it depends on.
#[derive(Clone, Debug, Default)]
pub struct Dependencies {
    /// Outputs and derivatives on states and inputs (continuous-time mode).
    pub continuous: HashMap<u32, Vec<u32>>,
    /// Initial unknowns on inputs and exact parameters (initialization mode).
    pub initial: HashMap<u32, Vec<u32>>,
}
