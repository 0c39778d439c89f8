//! Model loading shared by the subcommands that start from a model (`check`, `flatten`,
//! `translate`, `simulate`): the `--lib` option and one function that flattens the model and
//! renders its diagnostics.

use moss_frontend::{flatten_model, Flattened, LoadOptions};
use moss_syntax::diag::render_all;
use std::path::PathBuf;

/// Library roots given on the command line; flatten this into a command's `Args` with
/// `#[command(flatten)]`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct LibArgs {
    /// Library directory to search before MODELICAPATH and the bundled library (repeatable).
    #[arg(long = "lib", value_name = "DIR")]
    pub libs: Vec<PathBuf>,
}

impl LibArgs {
    /// The load options: `--lib` roots, then MODELICAPATH, then the bundled library.
    pub fn load_options(&self) -> LoadOptions {
        LoadOptions {
            libs: self.libs.clone(),
            use_modelicapath: true,
            use_bundled: true,
        }
    }

    /// A usage error message if a `--lib` is not a directory.
    pub fn check_dirs(&self) -> Result<(), String> {
        for dir in &self.libs {
            if !dir.is_dir() {
                return Err(format!(
                    "--lib {}: not a directory (give the folder that contains the library, e.g. the one holding Modelica/)",
                    dir.display()
                ));
            }
        }
        Ok(())
    }
}

/// Flatten `model` (a class name or a `.mo` file). Warnings and errors are printed to stderr;
/// on failure the exit code to return is given back.
pub fn load_model(libs: &LibArgs, model: &str) -> Result<Flattened, u8> {
    if let Err(msg) = libs.check_dirs() {
        eprintln!("error: {msg}");
        return Err(super::EXIT_USAGE);
    }
    if model.ends_with(".mo") && !std::path::Path::new(model).is_file() {
        eprintln!("error: no such file: `{model}`");
        eprintln!("   = help: give an existing .mo file or a class name such as Modelica.Blocks.Examples.PID_Controller");
        return Err(super::EXIT_USAGE);
    }
    match flatten_model(&libs.load_options(), model) {
        Ok(flat) => {
            if !flat.warnings.is_empty() {
                eprint!("{}", render_all(&flat.warnings, &flat.model.sources));
            }
            Ok(flat)
        }
        Err(failure) => {
            eprint!("{}", render_all(&failure.diagnostics, &failure.sources));
            Err(super::EXIT_MODEL_ERROR)
        }
    }
}
