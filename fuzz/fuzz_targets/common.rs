//! Shared by the `check`, `translate` and `simulate` targets: run the frontend on the fuzzer's
//! bytes the way `moss check FILE.mo` does (the file's last top-level class is the model), and
//! turn "internal error" diagnostics (a panic caught inside a stage) into a crash.

use moss_frontend::{flatten_model, Flattened, LoadOptions};
use moss_syntax::Diagnostic;
use std::path::PathBuf;

/// Inputs larger than this are skipped: the stages are meant to be fuzzed on small models,
/// and a slow run on a huge one is not a finding.
const MAX_INPUT: usize = 16 * 1024;

/// The file the input is written to: one directory per process (libFuzzer's `-fork`/`-jobs`
/// run several), named so that no class can have the file's name (`input` is a keyword), so
/// the directory, which becomes a library root, never resolves a class to this file.
fn input_path() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("moss-fuzz-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    dir.join("input.mo")
}

/// Flatten the input with only the bundled library on the path; `None` when it is too big,
/// cannot be written, or the frontend rejects it (with diagnostics, which is fine).
pub fn flatten(data: &[u8]) -> Option<Flattened> {
    if data.len() > MAX_INPUT {
        return None;
    }
    let text = String::from_utf8_lossy(data);
    let path = input_path();
    std::fs::write(&path, text.as_bytes()).ok()?;
    let opts = LoadOptions {
        libs: Vec::new(),
        use_modelicapath: false,
        use_bundled: true,
    };
    match flatten_model(&opts, path.to_str()?) {
        Ok(flat) => Some(flat),
        Err(failure) => {
            assert_no_internal_error(&failure.diagnostics);
            None
        }
    }
}

/// A stage that catches its own panics reports them as "internal error ..."; for the fuzzer
/// that is a crash like any other.
pub fn assert_no_internal_error(diags: &[Diagnostic]) {
    for d in diags {
        assert!(
            !d.message.contains("internal error"),
            "a stage reported an internal error: {}",
            d.message
        );
    }
}
