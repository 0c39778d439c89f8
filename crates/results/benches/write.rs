//! Result writing speed: a table shaped like a large circuit's (stored columns, aliases and
//! parameters) written row by row as CSV and as `.mat`, in MB/s of file written.
//!
//! Run: `cargo bench -p moss-results --bench write` (a plain program, no harness). The
//! values are a smooth signal per column, so the formatted numbers have typical lengths.

use moss_results::{ResultStream, ResultVar, Storage, VarKind};
use std::time::Instant;

fn table(columns: usize) -> Vec<ResultVar> {
    let mut vars = Vec::new();
    for c in 0..columns {
        vars.push(ResultVar::column(format!("x[{c}]"), c));
        vars.push(ResultVar::alias(format!("a[{c}].v"), c, false));
        vars.push(ResultVar::alias(format!("a[{c}].n.i"), c, true));
        vars.push(ResultVar::new(
            format!("p[{c}]"),
            VarKind::Parameter,
            Storage::Constant(1e-3 * c as f64),
        ));
    }
    vars
}

fn main() {
    let dir = std::env::temp_dir().join(format!("moss-bench-write-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch folder");
    println!("| format | stored columns | variables | rows | MB | seconds | MB/s |");
    println!("|---|---|---|---|---|---|---|");
    for (columns, rows) in [(1_000, 1_001), (20_000, 1_001)] {
        let vars = table(columns);
        let mut row = vec![0.0; columns];
        for ext in ["csv", "mat"] {
            let path = dir.join(format!("bench.{ext}"));
            let started = Instant::now();
            let mut out = ResultStream::create(&path, &vars, columns).expect("creates the file");
            for k in 0..rows {
                let t = k as f64 * 1e-3;
                for (c, x) in row.iter_mut().enumerate() {
                    *x = (t * (1.0 + c as f64 * 1e-3)).sin() * (-t).exp();
                }
                out.write_row(t, &row).expect("writes a row");
            }
            out.finish().expect("completes the file");
            let seconds = started.elapsed().as_secs_f64();
            let mb = std::fs::metadata(&path).expect("written").len() as f64 / 1e6;
            println!(
                "| {ext} | {columns} | {} | {rows} | {mb:.0} | {seconds:.2} | {:.0} |",
                vars.len(),
                mb / seconds
            );
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}
