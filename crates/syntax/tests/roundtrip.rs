//! Round-trip property: print(parse(print(parse(x)))) == print(parse(x)), and the reparsed
//! tree equals the first tree modulo spans.

mod common;

use common::{mo_files_under, roundtrip_check};
use std::path::PathBuf;

fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

#[test]
fn fixtures_roundtrip() {
    let files = mo_files_under(&fixtures_dir());
    assert!(!files.is_empty(), "no fixtures found");
    let mut failures = Vec::new();
    for f in &files {
        if let Err(e) = roundtrip_check(f, false) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The bundled library and the examples (written elsewhere in this repository), if present.
#[test]
fn bundled_library_roundtrip() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = mo_files_under(&root.join("library"));
    files.extend(mo_files_under(&root.join("examples")));
    let mut failures = Vec::new();
    for f in &files {
        if let Err(e) = roundtrip_check(f, true) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Local check over a large external library (e.g. the MSL):
/// `MOSS_MSL=/path/to/msl cargo test -p moss-syntax --release -- --ignored`.
#[test]
#[ignore]
fn external_library_roundtrip() {
    let Ok(dir) = std::env::var("MOSS_MSL") else {
        eprintln!("MOSS_MSL not set; nothing to check");
        return;
    };
    let files = mo_files_under(&PathBuf::from(dir));
    assert!(!files.is_empty(), "no .mo files under MOSS_MSL");
    let failures: Vec<String> = files
        .iter()
        .filter_map(|f| roundtrip_check(f, false).err())
        .collect();
    eprintln!(
        "round-trip checked {} files, {} failures",
        files.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{}",
        failures
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n\n")
    );
}
