//! `moss check MODEL_OR_FILE`: instantiate and flatten a model, then report the counts of
//! equations and variables (and states, parameters, discrete variables), or the errors.

use super::common::{load_model, LibArgs};
use moss_frontend::stats::stats;

/// Arguments of `moss check`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Model: a full class name found on the library path, or a `.mo` file (its last class).
    pub model: String,
    #[command(flatten)]
    pub lib: LibArgs,
}

pub fn run(args: Args) -> u8 {
    let flat = match load_model(&args.lib, &args.model) {
        Ok(f) => f,
        Err(code) => return code,
    };
    let m = &flat.model;
    let s = stats(m);
    println!("Check of {} completed successfully.", m.name);
    println!(
        "  {} equations, {} variables ({} states, {} discrete), {} parameters and constants, {} inputs",
        s.equations, s.variables, s.states, s.discrete, s.parameters, s.inputs
    );
    if s.equations != s.variables {
        println!(
            "  warning: the model is not balanced: {} equations for {} unknowns",
            s.equations, s.variables
        );
    }
    super::EXIT_OK
}
