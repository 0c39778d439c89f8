//! `moss parse PATH...`: parse Modelica files (directories are searched for `*.mo`) in
//! parallel and report syntax errors. Exit status 0 if every file parses, 1 if any file has a
//! syntax error, 2 on a usage error (no or missing path).

use moss_syntax::{collect_mo_files, parse_files_with, Diagnostic, SourceMap};
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `moss parse`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Modelica files or directories (searched recursively for `*.mo`).
    pub inputs: Vec<String>,
    /// Print the number of files, bytes, elapsed seconds and throughput.
    #[arg(long)]
    pub stats: bool,
}

pub fn run(args: Args) -> u8 {
    if args.inputs.is_empty() {
        eprintln!("error: `moss parse` needs at least one file or directory");
        eprintln!("   = help: usage: moss parse [--stats] PATH...");
        return super::EXIT_USAGE;
    }
    let inputs: Vec<PathBuf> = args.inputs.iter().map(PathBuf::from).collect();
    let sources = SourceMap::new();
    let files = match collect_mo_files(&inputs) {
        Ok(f) => f,
        Err(d) => {
            eprint!("{}", d.render(&sources));
            return super::EXIT_USAGE;
        }
    };
    let started = Instant::now();
    // Only diagnostics and sizes are needed: trees are dropped on the worker threads.
    let parsed: Vec<(Vec<Diagnostic>, usize)> =
        parse_files_with(&sources, &files, |f| (f.diagnostics, f.bytes));
    let seconds = started.elapsed().as_secs_f64();

    let failed = report_diagnostics(&parsed, &sources);
    if args.stats {
        print_stats(&parsed, seconds, failed);
    }
    if failed > 0 {
        super::EXIT_MODEL_ERROR
    } else {
        super::EXIT_OK
    }
}

/// Print every diagnostic to stderr, then a summary line if there were errors. Returns the
/// number of files with errors.
fn report_diagnostics(parsed: &[(Vec<Diagnostic>, usize)], sources: &SourceMap) -> usize {
    let stderr = std::io::stderr();
    let mut err = stderr.lock();
    let mut failed = 0usize;
    let mut errors = 0usize;
    for (diagnostics, _) in parsed {
        for d in diagnostics {
            let _ = writeln!(err, "{}", d.render(sources));
        }
        let n = diagnostics.iter().filter(|d| d.is_error()).count();
        if n > 0 {
            failed += 1;
            errors += n;
        }
    }
    if failed > 0 {
        let _ = writeln!(
            err,
            "error: {errors} syntax error(s) in {failed} of {} file(s)",
            parsed.len()
        );
    }
    failed
}

/// `--stats`: files, bytes, parse time (reading included) and throughput, on stdout.
fn print_stats(parsed: &[(Vec<Diagnostic>, usize)], seconds: f64, failed: usize) {
    let bytes: usize = parsed.iter().map(|(_, b)| b).sum();
    let mb = bytes as f64 / 1e6;
    println!(
        "files: {}\nbytes: {}\nseconds: {:.3}\nMB/s: {:.1}\nfiles with errors: {}",
        parsed.len(),
        bytes,
        seconds,
        if seconds > 0.0 { mb / seconds } else { 0.0 },
        failed
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory under the system temp dir, unique per test.
    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("moss-parse-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sub")).expect("create temp dir");
        dir
    }

    fn args(inputs: &[&std::path::Path]) -> Args {
        Args {
            inputs: inputs.iter().map(|p| p.display().to_string()).collect(),
            stats: true,
        }
    }

    #[test]
    fn exit_codes() {
        let dir = temp_dir("codes");
        std::fs::write(dir.join("a.mo"), "model A Real x; equation x = 1; end A;").unwrap();
        std::fs::write(
            dir.join("sub/b.mo"),
            "package B constant Integer n = 2; end B;",
        )
        .unwrap();
        std::fs::write(dir.join("sub/notes.txt"), "not modelica {").unwrap();
        // Directories are searched recursively for *.mo only.
        assert_eq!(run(args(&[&dir])), super::super::EXIT_OK);

        std::fs::write(dir.join("sub/bad.mo"), "model C Real x end C;").unwrap();
        assert_eq!(run(args(&[&dir])), super::super::EXIT_MODEL_ERROR);
        // A single good file still passes.
        assert_eq!(run(args(&[&dir.join("a.mo")])), super::super::EXIT_OK);

        assert_eq!(
            run(Args {
                inputs: vec![],
                stats: false
            }),
            super::super::EXIT_USAGE
        );
        assert_eq!(
            run(args(&[&dir.join("missing.mo")])),
            super::super::EXIT_USAGE
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
