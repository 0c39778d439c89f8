//! `moss-fmi`: Functional Mock-up Units from moss models.
//!
//! One crate, two uses:
//! - as a **cdylib** it is the FMU runtime: the library `moss fmu` copies into every FMU
//!   (`binaries/linux64/<modelIdentifier>.so`). It exports the FMI 2.0 C API ([`fmi2`]),
//!   reads the model's translated program from the FMU's `resources/` ([`payload`]), runs it
//!   with moss's interpreter and, for Co-Simulation, moss's integrators and event loop
//!   ([`instance`]). One prebuilt library serves every model.
//! - as an **rlib** it gives the `moss` binary what must agree with that runtime: the
//!   payload format, the variable table with its value references ([`variables`]) and the
//!   `modelDescription.xml` written from it ([`description`]).

pub mod deps;
pub mod description;
pub mod fmi2;
pub mod fmi3;
pub mod fmu_state;
pub mod instance;
pub mod payload;
pub mod units;
pub mod variables;

/// File name of the runtime library as cargo builds it (beside the `moss` binary).
pub const RUNTIME_LIBRARY: &str = "libmoss_fmi.so";
