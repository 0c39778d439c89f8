//! Entry points used by the CLI and by tests of later stages.

use crate::flat::FlatModel;
use moss_syntax::{Diagnostic, SourceMap};
use std::path::PathBuf;
use std::sync::Arc;

/// Where to find classes. Priority: `libs` in order, then `MODELICAPATH` entries (when
/// `use_modelicapath`), then the bundled library (when `use_bundled`).
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    pub libs: Vec<PathBuf>,
    pub use_modelicapath: bool,
    pub use_bundled: bool,
}

/// A successful flattening: the model plus warnings.
#[derive(Debug)]
pub struct Flattened {
    pub model: FlatModel,
    pub warnings: Vec<Diagnostic>,
}

/// A failed one: the diagnostics and the sources they point into.
#[derive(Debug)]
pub struct Failure {
    pub diagnostics: Vec<Diagnostic>,
    pub sources: Arc<SourceMap>,
}

/// Load libraries and instantiate `model`: a class name found on the library roots, or a
/// path to a `.mo` file (meaning the last top-level class it defines, with the file's
/// directory added as a library root).
pub fn flatten_model(opts: &LoadOptions, model: &str) -> Result<Flattened, Failure> {
    let _ = opts;
    let sources = Arc::new(SourceMap::new());
    Err(Failure {
        diagnostics: vec![Diagnostic::error(
            moss_syntax::Span::DUMMY,
            format!("cannot flatten `{model}`: the frontend is not implemented yet"),
        )],
        sources,
    })
}
