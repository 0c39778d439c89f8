//! BDF with the symbolic ODE Jacobian (the tangent program of `moss-symbolic`) against BDF
//! with finite differences over the same sparsity pattern, side by side on models written in
//! Modelica and run through the whole pipeline (flatten, translate, interpret, simulate).
//!
//! Run: `cargo bench -p moss-sim --bench jacobian` (figures in docs/bench-sim.md).

use moss_codegen::Interpreter;
use moss_frontend::api::{flatten_model, LoadOptions};
use moss_sim::jacobian::JacobianMode;
use moss_sim::{simulate_with_stats, SimOptions, Solver};
use std::time::Instant;

const ROBERTSON: &str = "
model Robertson
  Real y1(start = 1, fixed = true);
  Real y2(start = 0, fixed = true);
  Real y3(start = 0, fixed = true);
equation
  der(y1) = -0.04*y1 + 1e4*y2*y3;
  der(y2) = 0.04*y1 - 1e4*y2*y3 - 3e7*y2^2;
  der(y3) = 3e7*y2^2;
end Robertson;
";

/// n masses joined by hardening springs and stiff dampers, the first one pulled.
fn stiff_chain(n: usize) -> String {
    format!(
        "
model StiffChain
  parameter Integer n = {n};
  parameter Real k = 1e3, k3 = 1e5, d = 1e4, m = 1;
  Real x[n](each start = 0, each fixed = true);
  Real v[n](each start = 0, each fixed = true);
  Real f[n + 1] \"spring and damper forces\";
equation
  f[1] = k*(sin(time) - x[1]) + k3*(sin(time) - x[1])^3 - d*v[1];
  for i in 2:n loop
    f[i] = k*(x[i - 1] - x[i]) + k3*(x[i - 1] - x[i])^3 + d*(v[i - 1] - v[i]);
  end for;
  f[n + 1] = 0;
  for i in 1:n loop
    der(x[i]) = v[i];
    m*der(v[i]) = f[i] - f[i + 1];
  end for;
end StiffChain;
"
    )
}

/// An RC ladder whose n stages each hold a diode (exponential law) in series with a resistor:
/// every stage is a torn nonlinear loop.
fn diode_ladder(n: usize) -> String {
    format!(
        "
model DiodeLadder
  parameter Integer n = {n};
  parameter Real C = 1e-6, R = 100, Rd = 10, Is = 1e-12, Vt = 0.025;
  Real v[n](each start = 0, each fixed = true) \"capacitor voltages\";
  Real vd[n] \"diode voltages\";
  Real id[n + 1] \"diode currents (none out of the last stage)\";
equation
  5*sin(1000*time) - v[1] = vd[1] + Rd*id[1];
  for i in 2:n loop
    v[i - 1] - v[i] = vd[i] + Rd*id[i];
  end for;
  id[n + 1] = 0;
  for i in 1:n loop
    id[i] = Is*(exp(vd[i]/Vt) - 1);
    C*der(v[i]) = id[i] - id[i + 1] - v[i]/(R*n);
  end for;
end DiodeLadder;
"
    )
}

fn program_of(name: &str, source: &str) -> moss_symbolic::CausalProgram {
    let dir = std::env::temp_dir().join(format!("moss-bench-jacobian-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch folder");
    let file = dir.join(format!("{name}.mo"));
    std::fs::write(&file, source).expect("writes the model");
    let opts = LoadOptions {
        libs: vec![],
        use_modelicapath: false,
        use_bundled: true,
    };
    let flat = match flatten_model(&opts, &file.to_string_lossy()) {
        Ok(f) => f.model,
        Err(_) => panic!("{name} does not flatten"),
    };
    moss_symbolic::translate(&flat).unwrap_or_else(|_| panic!("{name} does not translate"))
}

fn main() {
    println!("| model | states | stop | tol | Jacobian | steps | rejected | rhs evals | jac evals | tangent runs | LU | wall [ms] |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    let cases: Vec<(&str, String, f64, f64)> = vec![
        ("Robertson", ROBERTSON.to_string(), 1e11, 1e-8),
        ("StiffChain n=100", stiff_chain(100), 10.0, 1e-6),
        ("StiffChain n=1000", stiff_chain(1000), 10.0, 1e-6),
        ("DiodeLadder n=50", diode_ladder(50), 0.02, 1e-6),
    ];
    for (label, source, stop, tol) in cases {
        let name = label.split_whitespace().next().unwrap_or(label);
        let program = program_of(name, &source);
        for mode in [JacobianMode::Auto, JacobianMode::Numeric] {
            let mut best = f64::INFINITY;
            let mut last = None;
            for _ in 0..5 {
                let mut model = Interpreter::new(program.clone()).expect("compiles");
                let opts = SimOptions {
                    stop_time: Some(stop),
                    tolerance: Some(tol),
                    intervals: Some(500),
                    solver: Solver::Bdf,
                    jacobian: mode,
                    ..Default::default()
                };
                let started = Instant::now();
                let outcome = simulate_with_stats(&mut model, &program, &opts);
                best = best.min(started.elapsed().as_secs_f64());
                last = Some(outcome);
            }
            let mode_name = match mode {
                JacobianMode::Auto => "symbolic",
                JacobianMode::Numeric => "differences",
            };
            match last {
                Some(Ok(sim)) => {
                    let s = &sim.stats.integrator;
                    println!(
                        "| {label} | {} | {stop:e} | {tol:e} | {mode_name} | {} | {} | {} | {} | {} | {} | {:.2} |",
                        program.states.len(),
                        s.steps,
                        s.rejected_steps,
                        s.rhs_evaluations,
                        s.jacobian_evaluations,
                        s.tangent_runs,
                        s.lu_factorizations,
                        best * 1e3
                    );
                }
                Some(Err(e)) => println!("| {label} | {mode_name} | failed: {e} |"),
                None => {}
            }
        }
    }
}
