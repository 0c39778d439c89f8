//! No input may make the parser panic: every fixture is mutated deterministically (bytes
//! deleted, inserted, swapped, duplicated) and truncated at many offsets, and each variant is
//! parsed and, if it parses cleanly, printed again.

mod common;

use moss_syntax::{parse_str, print_stored_definition, FileId};
use std::path::PathBuf;

/// Bytes worth inserting: delimiters, operators, quotes, keyword starts, non-ASCII.
const INSERTS: &[&[u8]] = &[
    b";",
    b"(",
    b")",
    b"[",
    b"]",
    b"{",
    b"}",
    b"\"",
    b"'",
    b"/*",
    b"//",
    b"\\",
    b".",
    b",",
    b"=",
    b":=",
    b"^",
    b"end ",
    b"if ",
    b"model ",
    b"\xc3\xa4",
    b"\xff",
    b"\0",
    b"e",
    b"1.",
];

fn parse_bytes(bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    let (def, diags) = parse_str(FileId(0), &text);
    if diags.is_empty() {
        // A clean parse must also print without trouble.
        let _ = print_stored_definition(&def);
    }
    // The other entry points see the same bytes.
    let _ = moss_syntax::parse_expr(FileId(0), &text);
    let _ = moss_syntax::parse_name(FileId(0), &text);
    let _ = moss_syntax::parse_component_ref(FileId(0), &text);
}

/// Simple deterministic generator (xorshift), so failures are reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn fixtures() -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    common::mo_files_under(&dir)
        .into_iter()
        .filter_map(|p| std::fs::read(&p).ok().map(|b| (p, b)))
        .collect()
}

#[test]
fn truncations_do_not_panic() {
    let files = fixtures();
    assert!(!files.is_empty());
    for (_, bytes) in &files {
        let step = (bytes.len() / 150).max(1);
        for cut in (0..bytes.len()).step_by(step) {
            parse_bytes(&bytes[..cut]);
        }
    }
}

#[test]
fn mutations_do_not_panic() {
    let files = fixtures();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for (_, bytes) in &files {
        for _ in 0..600 {
            let mut m = bytes.clone();
            // Apply one to three edits.
            for _ in 0..=rng.below(3) {
                let at = rng.below(m.len());
                match rng.below(4) {
                    0 if !m.is_empty() => {
                        let end = (at + 1 + rng.below(8)).min(m.len());
                        m.drain(at..end);
                    }
                    1 => {
                        let ins = INSERTS[rng.below(INSERTS.len())];
                        m.splice(at..at, ins.iter().copied());
                    }
                    2 if m.len() > 1 => {
                        let other = rng.below(m.len());
                        m.swap(at, other);
                    }
                    _ => {
                        // Duplicate a chunk (creates repeated structures).
                        let end = (at + rng.below(40)).min(m.len());
                        let chunk: Vec<u8> = m[at.min(end)..end].to_vec();
                        m.splice(end..end, chunk);
                    }
                }
            }
            parse_bytes(&m);
        }
    }
}

#[test]
fn arbitrary_garbage_does_not_panic() {
    let mut rng = Rng(42);
    for len in [0usize, 1, 2, 3, 10, 100, 1000] {
        for _ in 0..50 {
            let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            parse_bytes(&bytes);
            // Token soup from the insert table.
            let soup: Vec<u8> = (0..len)
                .flat_map(|_| INSERTS[rng.below(INSERTS.len())].iter().copied())
                .collect();
            parse_bytes(&soup);
        }
    }
}

/// Pathological but cheap inputs must also be handled quickly (no quadratic recovery).
#[test]
fn pathological_inputs_are_fast() {
    let cases: Vec<String> = vec![
        ";".repeat(200_000),
        "model A ".repeat(20_000),
        "end ".repeat(50_000),
        "a.".repeat(50_000),
        "model M equation ".to_string() + &"end for; ".repeat(20_000) + "end M;",
        "model M Real x = ".to_string() + &"f(".repeat(20_000),
        "\"".repeat(10_001),
        "/*".repeat(10_000),
        "'".repeat(10_001),
    ];
    for c in &cases {
        let t = std::time::Instant::now();
        parse_bytes(c.as_bytes());
        assert!(
            t.elapsed().as_secs_f64() < 2.0,
            "slow input starting {:?}",
            &c[..20.min(c.len())]
        );
    }
}
