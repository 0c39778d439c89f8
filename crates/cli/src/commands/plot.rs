//! `moss plot` (not yet implemented).

/// Arguments of `moss plot`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Inputs.
    pub inputs: Vec<String>,
}

pub fn run(_args: Args) -> u8 {
    eprintln!("error: `moss plot` is not implemented yet");
    super::EXIT_USAGE
}
