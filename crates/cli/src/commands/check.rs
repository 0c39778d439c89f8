//! `moss check` (not yet implemented).

/// Arguments of `moss check`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Inputs.
    pub inputs: Vec<String>,
}

pub fn run(_args: Args) -> u8 {
    eprintln!("error: `moss check` is not implemented yet");
    super::EXIT_USAGE
}
