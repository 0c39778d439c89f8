//! Translation time of a generated chain of masses and springs (about 6 equations per mass),
//! and of a chain of inertias coupled by ideal gears (index 3: Pantelides, dummy derivatives
//! and one linear loop over the whole chain).
//! Run: `cargo bench -p moss-symbolic --bench chain` (optionally followed by `-- N1 N2 ...`).

use std::time::Instant;

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![1_000, 10_000, 100_000]
    } else {
        sizes
    };
    for &n in &sizes {
        run(
            "masses and springs",
            n,
            moss_symbolic::bench_support::chain(n),
        );
    }
    for &n in &sizes {
        run(
            "inertias and gears",
            n,
            moss_symbolic::bench_support::gear_chain(n),
        );
    }
}

fn run(what: &str, n: usize, flat: moss_frontend::FlatModel) {
    let equations = flat.equations.len();
    let t = Instant::now();
    match moss_symbolic::translate(&flat) {
        Ok(p) => {
            let total = t.elapsed().as_secs_f64();
            println!(
                    "{what}: N = {n} ({equations} equations, {} states, {} dummy derivatives, loops {:?}): total {total:.3} s",
                    p.states.len(),
                    p.report.dummy_derivatives.len(),
                    p.report.loops_before_tearing
                );
            for (pass, secs) in &p.report.pass_times {
                println!("    {pass:<30} {secs:.3} s");
            }
        }
        Err(d) => {
            eprintln!("N = {n}: translation failed: {d:?}");
            std::process::exit(1);
        }
    }
}
