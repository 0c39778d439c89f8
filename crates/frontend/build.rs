//! Embed the bundled Modelica library (`/library` at the workspace root) into the crate, so
//! that `moss` finds `Modelica` from any working directory. Generates a table of
//! `(relative path, contents)` with `include_str!` of each file.

use std::fmt::Write;
use std::path::{Path, PathBuf};

fn collect(dir: &Path, root: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = read.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect(&p, root, out);
        } else if p.extension().is_some_and(|e| e == "mo" || e == "order") {
            if let Ok(rel) = p.strip_prefix(root) {
                let rel = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/");
                out.push((rel, p.clone()));
            }
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let root = manifest.join("../../library");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    collect(&root, &root, &mut files);
    let mut code = String::from("/// Files of the bundled library: (path relative to the library root, text).\npub static FILES: &[(&str, &str)] = &[\n");
    for (rel, abs) in &files {
        let abs = abs.canonicalize().unwrap_or_else(|_| abs.clone());
        let _ = writeln!(
            code,
            "    ({rel:?}, include_str!({:?})),",
            abs.display().to_string()
        );
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default()).join("bundled.rs");
    if let Err(e) = std::fs::write(&out, code) {
        println!("cargo:warning=cannot write {}: {e}", out.display());
    }
}
