//! Interpreter throughput: a chain of N masses connected by spring-dampers, built directly as
//! a causal program; times derivative evaluations.
//!
//! Run with `cargo bench -p moss-codegen --bench interp` (optionally `-- N EVALS`).

use moss_codegen::{ExecutableModel, Interpreter};
use moss_symbolic::program::{ArithOp, Block, PExpr, ProgVar, ValueType, VarId, VarKind};
use moss_symbolic::CausalProgram;
use std::time::Instant;

fn var(p: &mut CausalProgram, name: String, kind: VarKind, start: f64) -> VarId {
    p.vars.push(ProgVar {
        name,
        kind,
        ty: ValueType::Real,
        start,
        nominal: 1.0,
        min: None,
        max: None,
        unit: String::new(),
        description: String::new(),
        hidden: false,
    });
    (p.vars.len() - 1) as VarId
}

fn op(o: ArithOp, a: PExpr, b: PExpr) -> PExpr {
    PExpr::Arith(o, Box::new(a), Box::new(b))
}

/// m der(v_i) = f_i - f_{i-1};  f_i = k (x_{i+1} - x_i - L) + d (v_{i+1} - v_i); the first
/// mass hangs on a wall at 0, the last one is free.
fn chain(n: usize) -> CausalProgram {
    let mut p = CausalProgram {
        name: format!("Chain{n}"),
        ..CausalProgram::default()
    };
    let k = var(&mut p, "k".into(), VarKind::Parameter, 1000.0);
    let d = var(&mut p, "d".into(), VarKind::Parameter, 0.5);
    let m = var(&mut p, "m".into(), VarKind::Parameter, 0.1);
    let len = var(&mut p, "L".into(), VarKind::Parameter, 1.0);
    let mut x = vec![];
    let mut v = vec![];
    let mut dx = vec![];
    let mut dv = vec![];
    for i in 0..n {
        x.push(var(
            &mut p,
            format!("x[{i}]"),
            VarKind::State,
            (i + 1) as f64 * 1.01,
        ));
        v.push(var(&mut p, format!("v[{i}]"), VarKind::State, 0.0));
        dx.push(var(
            &mut p,
            format!("der(x[{i}])"),
            VarKind::Derivative,
            0.0,
        ));
        dv.push(var(
            &mut p,
            format!("der(v[{i}])"),
            VarKind::Derivative,
            0.0,
        ));
    }
    for i in 0..n {
        p.states.extend([x[i], v[i]]);
        p.derivatives.extend([dx[i], dv[i]]);
    }
    // f[i]: force of the spring left of mass i (i = 0: wall)
    let f: Vec<VarId> = (0..n)
        .map(|i| var(&mut p, format!("f[{i}]"), VarKind::Algebraic, 0.0))
        .collect();
    use ArithOp::*;
    for i in 0..n {
        let (xl, vl) = if i == 0 {
            (PExpr::Const(0.0), PExpr::Const(0.0))
        } else {
            (PExpr::Var(x[i - 1]), PExpr::Var(v[i - 1]))
        };
        let stretch = op(Sub, op(Sub, PExpr::Var(x[i]), xl), PExpr::Var(len));
        let expr = op(
            Add,
            op(Mul, PExpr::Var(k), stretch),
            op(Mul, PExpr::Var(d), op(Sub, PExpr::Var(v[i]), vl)),
        );
        p.blocks.push(Block::Assign { var: f[i], expr });
    }
    for i in 0..n {
        p.blocks.push(Block::Assign {
            var: dx[i],
            expr: PExpr::Var(v[i]),
        });
        let right = if i + 1 < n {
            PExpr::Var(f[i + 1])
        } else {
            PExpr::Const(0.0)
        };
        let expr = op(Div, op(Sub, right, PExpr::Var(f[i])), PExpr::Var(m));
        p.blocks.push(Block::Assign { var: dv[i], expr });
    }
    p
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let n: usize = args.first().and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let evals: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1_000);
    let t0 = Instant::now();
    let mut model = match Interpreter::new(chain(n)) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("compile failed: {e}");
            std::process::exit(1);
        }
    };
    let compile = t0.elapsed();
    if let Err(e) = model.initialize(0.0) {
        eprintln!("initialize failed: {e}");
        std::process::exit(1);
    }
    let ns = model.n_states();
    let mut x = vec![0.0; ns];
    model.states(&mut x);
    let mut dx = vec![0.0; ns];
    // warm up
    for _ in 0..10 {
        let _ = model.derivatives(0.0, &x, &mut dx);
    }
    // batches of evaluations; the machine is shared, so report the fastest batch and the median
    let batches = 10;
    let per_batch = (evals / batches).max(1);
    let mut times = vec![];
    let total = Instant::now();
    for b in 0..batches {
        let t = Instant::now();
        for i in 0..per_batch {
            x[0] += 1e-9 * (b * per_batch + i) as f64;
            if let Err(e) = model.derivatives(0.0, &x, &mut dx) {
                eprintln!("evaluation failed: {e}");
                std::process::exit(1);
            }
        }
        times.push(t.elapsed().as_secs_f64() / per_batch as f64);
    }
    let total = total.elapsed();
    times.sort_by(|a, b| a.total_cmp(b));
    let (best, median) = (times[0], times[times.len() / 2]);
    let instrs = model.instruction_count();
    println!("chain of {n} masses: {ns} states, {instrs} tape instructions");
    println!("compile: {:.1} ms", compile.as_secs_f64() * 1e3);
    println!(
        "{} derivative evaluations: {:.1} ms total",
        batches * per_batch,
        total.as_secs_f64() * 1e3
    );
    for (what, t) in [("best batch", best), ("median batch", median)] {
        println!(
            "{what}: {:.1} us per evaluation, {:.2} ns per instruction",
            t * 1e6,
            t * 1e9 / instrs as f64
        );
    }
    println!("checksum: {}", dx.iter().sum::<f64>());
}
