//! A chain of n masses coupled by springs and dampers (fixed ends), simulated with both
//! integrators through the full `simulate` path (events off, 500 output intervals).
//!
//! Run: `cargo bench -p moss-sim --bench oscillators` (figures in docs/bench-sim.md).

#[path = "../tests/it/common/mod.rs"]
mod common;

use common::TestModel;
use moss_sim::{simulate_with_stats, SimOptions, Solver};
use std::time::Instant;

/// States: positions x_0..x_{n-1}, then velocities v_0..v_{n-1}.
fn chain(n: usize, k: f64, d: f64) -> TestModel {
    let mut x0 = vec![0.0; 2 * n];
    x0[0] = 1.0; // displace the first mass
    let mut pattern = Vec::new();
    for i in 0..n as u32 {
        let n = n as u32;
        pattern.push((i, n + i));
        for j in [i.wrapping_sub(1), i, i + 1] {
            if j < n {
                pattern.push((n + i, j));
                pattern.push((n + i, n + j));
            }
        }
    }
    let names: Vec<String> = (0..n)
        .map(|i| format!("x[{}]", i + 1))
        .chain((0..n).map(|i| format!("v[{}]", i + 1)))
        .collect();
    let names: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
    TestModel::new(&names, &x0, move |_t, s, ds| {
        let (x, v) = s.split_at(n);
        let (dx, dv) = ds.split_at_mut(n);
        dx.copy_from_slice(v);
        for i in 0..n {
            let xl = if i > 0 { x[i - 1] } else { 0.0 };
            let xr = if i + 1 < n { x[i + 1] } else { 0.0 };
            let vl = if i > 0 { v[i - 1] } else { 0.0 };
            let vr = if i + 1 < n { v[i + 1] } else { 0.0 };
            dv[i] = k * (xl - 2.0 * x[i] + xr) + d * (vl - 2.0 * v[i] + vr);
        }
    })
    .pattern(pattern)
}

fn main() {
    // `cargo bench ... -- bdf` runs only the cases of that solver.
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    println!(
        "| n (masses) | states | k | d | events | solver | steps | rejected | rhs evals | jac evals | LU | wall [ms] |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    // Non-stiff (light damping) and stiff (heavy damping: eigenvalues down to -4d).
    // (n, k, d, sample period): the last case adds a time event every millisecond (1000
    // integrator restarts), as a sampled controller would.
    let cases = [
        (10, 100.0, 0.1, None),
        (10, 1e4, 1e4, None),
        (1000, 100.0, 0.1, None),
        (1000, 1e4, 1e4, None),
        (100, 1e4, 1e4, Some(1e-3)),
    ];
    for (n, k, d, sample) in cases {
        for solver in [Solver::Dopri5, Solver::Bdf, Solver::Auto] {
            if filter.as_deref().is_some_and(|f| f != solver.name()) {
                continue;
            }
            // Best of five runs: the machine is shared.
            let mut best = f64::INFINITY;
            let mut last = None;
            for _ in 0..5 {
                let mut model = chain(n, k, d);
                if let Some(period) = sample {
                    model = model.time_event(0.0, period);
                }
                let program = model.program();
                let opts = SimOptions {
                    stop_time: Some(1.0),
                    solver,
                    ..Default::default()
                };
                let started = Instant::now();
                let outcome = simulate_with_stats(&mut model, &program, &opts);
                best = best.min(started.elapsed().as_secs_f64());
                last = Some(outcome);
            }
            let sim = match last {
                Some(Ok(sim)) => sim,
                Some(Err(e)) => {
                    println!(
                        "| {n} | {} | {k:e} | {d:e} | {} | failed: {e} |",
                        2 * n,
                        solver.name()
                    );
                    continue;
                }
                None => continue,
            };
            let wall = best;
            let s = &sim.stats.integrator;
            println!(
                "| {n} | {} | {k:e} | {d:e} | {} | {} | {} | {} | {} | {} | {} | {:.2} |",
                2 * n,
                sim.stats.time_events + sim.stats.state_events,
                solver.name(),
                s.steps,
                s.rejected_steps,
                s.rhs_evaluations,
                s.jacobian_evaluations,
                s.lu_factorizations,
                wall * 1e3
            );
        }
    }
}
