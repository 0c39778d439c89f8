//! Helpers shared by the frontend integration tests: flatten a fixture model without any
//! library path except the fixtures directory, and render failures.

#![allow(dead_code)]

use moss_frontend::{flatten_model, FlatModel, LoadOptions};
use std::path::PathBuf;

pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn opts() -> LoadOptions {
    LoadOptions {
        libs: vec![fixtures()],
        use_modelicapath: false,
        use_bundled: true,
    }
}

/// Flatten `model` (a class name under the fixtures), panicking with the rendered errors.
pub fn flat(model: &str) -> FlatModel {
    match flatten_model(&opts(), model) {
        Ok(f) => f.model,
        Err(e) => panic!(
            "{}",
            moss_syntax::diag::render_all(&e.diagnostics, &e.sources)
        ),
    }
}

/// Flatten Modelica text written to a temporary file; `Err` is the rendered diagnostics.
pub fn flat_text(name: &str, text: &str) -> Result<FlatModel, String> {
    // Tests run in parallel threads of one process: each call gets its own directory.
    static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "moss-frontend-test-{}-{n}-{name}",
        std::process::id()
    ));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("{name}.mo"));
    std::fs::write(&path, text).expect("write temp file");
    let r = flatten_model(&opts(), path.to_str().expect("utf-8 path"));
    let _ = std::fs::remove_dir_all(&dir);
    match r {
        Ok(f) => Ok(f.model),
        Err(e) => Err(moss_syntax::diag::render_all(&e.diagnostics, &e.sources)),
    }
}

/// The model's equations printed one per line (for readable assertions).
pub fn equations(m: &FlatModel) -> Vec<String> {
    let text = moss_frontend::print::print_model(m);
    let mut in_eq = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line == "equation" {
            in_eq = true;
            continue;
        }
        if line.starts_with("end ") || line == "algorithm" || line.starts_with("  annotation") {
            in_eq = false;
        }
        if in_eq {
            out.push(line.trim().to_string());
        }
    }
    out
}

pub fn var_names(m: &FlatModel) -> Vec<String> {
    m.variables.iter().map(|v| v.name.clone()).collect()
}

/// Flatten a fixture model that must fail; returns the rendered diagnostics with file paths
/// reduced to the file name (stable snapshots).
pub fn flat_error(model: &str) -> String {
    match flatten_model(&opts(), model) {
        Ok(_) => panic!("`{model}` was expected to fail"),
        Err(e) => {
            let text = moss_syntax::diag::render_all(&e.diagnostics, &e.sources);
            let dir = format!("{}/", fixtures().display());
            text.replace(&dir, "")
        }
    }
}

/// The printed declaration line of variable `name` (without indentation).
pub fn declaration(m: &FlatModel, name: &str) -> String {
    let text = moss_frontend::print::print_model(m);
    let quoted = moss_frontend::print::quote_name(name);
    text.lines()
        .map(str::trim)
        .find(|l| l.split(['(', ' ', ';', '=']).any(|w| w == quoted))
        .unwrap_or_else(|| panic!("no declaration of {name} in\n{text}"))
        .to_string()
}

/// Flatten `text`, which must fail; the rendered diagnostics with file paths shortened to
/// the file name (the scratch folder differs from run to run).
pub fn rejection_of(name: &str, text: &str) -> String {
    let e = match flat_text(name, text) {
        Ok(_) => panic!("`{name}` was accepted"),
        Err(e) => e,
    };
    e.lines()
        .map(|l| match (l.find("--> "), l.rfind('/')) {
            (Some(a), Some(b)) if b > a => format!("{}{}", &l[..a + 4], &l[b + 1..]),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}
