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
    let mut text = format!("Check of {} completed successfully.\n", m.name);
    text.push_str(&format!(
        "  {} equations, {} variables ({} states, {} discrete), {} parameters and constants, {} inputs\n",
        s.equations, s.variables, s.states, s.discrete, s.parameters, s.inputs
    ));
    if s.equations != s.variables {
        // An unbalanced model cannot be simulated: report it as an error.
        let more = if s.equations > s.variables {
            "equations than unknowns: some are redundant or conflicting"
        } else {
            "unknowns than equations: some variables are not determined"
        };
        eprintln!(
            "error: `{}` is not balanced: {} equations for {} unknowns (more {more})",
            m.name, s.equations, s.variables
        );
        eprintln!(
            "   = help: `moss flatten {}` shows every equation and variable",
            args.model
        );
        return super::EXIT_MODEL_ERROR;
    }
    // A closed pipe (`moss check M | head -1`) is not an error of the model.
    let _ = std::io::Write::write_all(&mut std::io::stdout().lock(), text.as_bytes());
    super::EXIT_OK
}
