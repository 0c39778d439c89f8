//! One module per subcommand. Each exposes `Args` (clap) and `run(Args) -> u8` (the exit code).

pub mod check;
pub mod common;
pub mod compare;
pub mod flatten;
pub mod fmu;
pub mod parse;
pub mod plot;
pub mod simulate;
pub mod translate;

/// Exit status for success.
pub const EXIT_OK: u8 = 0;
/// Exit status when the model (or a result file) has an error.
pub const EXIT_MODEL_ERROR: u8 = 1;
/// Exit status for a usage error (bad arguments, missing files).
pub const EXIT_USAGE: u8 = 2;
