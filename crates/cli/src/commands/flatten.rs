//! `moss flatten MODEL_OR_FILE`: print the flat model as Modelica (readable back by moss).

use super::common::{load_model, LibArgs};

/// Arguments of `moss flatten`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Model: a full class name found on the library path, or a `.mo` file (its last class).
    pub model: String,
    #[command(flatten)]
    pub lib: LibArgs,
}

pub fn run(args: Args) -> u8 {
    match load_model(&args.lib, &args.model) {
        Ok(flat) => {
            let text = moss_frontend::print::print_model(&flat.model);
            // A closed pipe (`moss flatten M | head`) is not an error.
            let _ = std::io::Write::write_all(&mut std::io::stdout().lock(), text.as_bytes());
            super::EXIT_OK
        }
        Err(code) => code,
    }
}
