//! Parser throughput benchmark (no external harness).
//!
//! `MOSS_BENCH_DIR=/work/msl cargo bench -p moss-syntax --bench parse`
//!
//! Without `MOSS_BENCH_DIR` it parses the test fixtures and the bundled library. Reports the
//! best of several runs for: lex+parse of in-memory texts on one thread, the same in parallel
//! (rayon), and `parse_files` (reading files + parsing, parallel, as `moss parse` does).

use moss_syntax::{collect_mo_files, parse_files, parse_files_with, parse_str, FileId, SourceMap};
use rayon::prelude::*;
use std::path::PathBuf;
use std::time::{Duration, Instant};

const RUNS: usize = 5;

fn best_of(mut f: impl FnMut()) -> Duration {
    (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn report(what: &str, bytes: usize, d: Duration) {
    let s = d.as_secs_f64();
    println!(
        "{what:<34} {:>8.3} s  {:>8.1} MB/s",
        s,
        bytes as f64 / 1e6 / s.max(1e-9)
    );
}

fn main() {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let inputs: Vec<PathBuf> = match std::env::var("MOSS_BENCH_DIR") {
        Ok(d) => vec![PathBuf::from(d)],
        Err(_) => vec![
            manifest.join("tests/fixtures"),
            manifest.join("../../library"),
        ]
        .into_iter()
        .filter(|p| p.exists())
        .collect(),
    };
    let files = match collect_mo_files(&inputs) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("{}", e.message);
            std::process::exit(2);
        }
    };
    let texts: Vec<String> = files
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect();
    let bytes: usize = texts.iter().map(String::len).sum();
    println!(
        "inputs: {:?}\nfiles: {}  bytes: {}  threads: {}",
        inputs,
        texts.len(),
        bytes,
        rayon::current_num_threads()
    );

    let mut errors = 0;
    let seq = best_of(|| {
        errors = texts
            .iter()
            .map(|t| parse_str(FileId(0), t).1.len())
            .sum::<usize>();
    });
    report("parse in memory, 1 thread", bytes, seq);
    let par = best_of(|| {
        let n: usize = texts
            .par_iter()
            .map(|t| parse_str(FileId(0), t).1.len())
            .sum();
        std::hint::black_box(n);
    });
    report("parse in memory, parallel", bytes, par);
    let full = best_of(|| {
        let sources = SourceMap::new();
        std::hint::black_box(parse_files(&sources, &files));
    });
    report("read + parse files, keep trees", bytes, full);
    let check = best_of(|| {
        let sources = SourceMap::new();
        let n: usize = parse_files_with(&sources, &files, |f| f.diagnostics.len())
            .iter()
            .sum();
        std::hint::black_box(n);
    });
    report("read + parse files, drop trees", bytes, check);
    println!("diagnostics: {errors}");
}
