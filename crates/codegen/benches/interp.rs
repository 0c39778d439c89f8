//! Tape throughput: a chain of N masses connected by spring-dampers, built directly as a
//! causal program; times derivative evaluations, interpreted in the first batches and as
//! native code (`tape_jit.rs`) once the tape has run often enough.
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

/// A table-interpolation function (linear search in a `while` loop, as Modelica code written
/// without external C does it) called once per derivative evaluation.
fn interpolation_program(rows: usize) -> CausalProgram {
    use moss_frontend::flat::{
        BinaryOp::*, Expr, Function, FunctionBody, FunctionVar, Origin, ScalarType, Statement,
        Subscript,
    };
    let v = |n: &str| Expr::Var {
        name: n.into(),
        subscripts: vec![],
    };
    let b = |op, l, r| Expr::Binary {
        op,
        lhs: Box::new(l),
        rhs: Box::new(r),
    };
    let t = |i: Expr, j: i64| Expr::Var {
        name: "table".into(),
        subscripts: vec![Subscript::Index(i), Subscript::Index(Expr::Integer(j))],
    };
    let ip1 = || b(Add, v("i"), Expr::Integer(1));
    let set = |n: &str, e: Expr| Statement::Assign {
        target: v(n),
        value: e,
        origin: Origin::default(),
    };
    let fv = |n: &str, ty: ScalarType, dims: Vec<Option<Expr>>| FunctionVar {
        name: n.into(),
        ty,
        dims,
        default: None,
    };
    let f = Function {
        name: "T.interp".into(),
        inputs: vec![
            fv(
                "table",
                ScalarType::Real,
                vec![None, Some(Expr::Integer(2))],
            ),
            fv("u", ScalarType::Real, vec![]),
        ],
        outputs: vec![fv("y", ScalarType::Real, vec![])],
        locals: vec![
            fv("i", ScalarType::Integer, vec![]),
            fv("n", ScalarType::Integer, vec![]),
        ],
        body: FunctionBody::Algorithm(vec![
            set(
                "n",
                Expr::Call {
                    func: "size".into(),
                    args: vec![v("table"), Expr::Integer(1)],
                },
            ),
            set("i", Expr::Integer(1)),
            Statement::While {
                condition: b(
                    And,
                    b(Lt, v("i"), b(Sub, v("n"), Expr::Integer(1))),
                    b(Gt, v("u"), t(ip1(), 1)),
                ),
                body: vec![set("i", ip1())],
                origin: Origin::default(),
            },
            set(
                "y",
                b(
                    Add,
                    t(v("i"), 2),
                    b(
                        Div,
                        b(
                            Mul,
                            b(Sub, t(ip1(), 2), t(v("i"), 2)),
                            b(Sub, v("u"), t(v("i"), 1)),
                        ),
                        b(Sub, t(ip1(), 1), t(v("i"), 1)),
                    ),
                ),
            ),
        ]),
        derivatives: vec![],
        inline: false,
        smooth_order: None,
        inverses: Vec::new(),
        is_impure: false,
        origin: Origin::default(),
    };
    let mut p = CausalProgram {
        name: "Interp".into(),
        ..CausalProgram::default()
    };
    p.functions.insert(f.name.clone(), f);
    let x = var(&mut p, "x".into(), VarKind::State, 0.0);
    let dx = var(&mut p, "der(x)".into(), VarKind::Derivative, 0.0);
    p.states.push(x);
    p.derivatives.push(dx);
    let table = PExpr::Array(
        (0..rows)
            .map(|i| {
                PExpr::Array(vec![
                    PExpr::Const(i as f64),
                    PExpr::Const((i as f64).sqrt()),
                ])
            })
            .collect(),
    );
    p.blocks.push(Block::Assign {
        var: dx,
        expr: PExpr::Call {
            func: "T.interp".into(),
            args: vec![table, PExpr::Var(x)],
        },
    });
    p
}

fn bench_function_calls(rows: usize, calls: usize) {
    let mut model = match Interpreter::new(interpolation_program(rows)) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("compile failed: {e}");
            std::process::exit(1);
        }
    };
    if let Err(e) = model.initialize(0.0) {
        eprintln!("initialize failed: {e}");
        std::process::exit(1);
    }
    let mut dx = [0.0];
    let mut iterations = 0.0;
    let t = Instant::now();
    for k in 0..calls {
        // u sweeps the table: the search loop runs u times
        let u = (k % (rows - 1)) as f64 + 0.5;
        iterations += u.floor() + 1.0;
        if let Err(e) = model.derivatives(0.0, &[u], &mut dx) {
            eprintln!("evaluation failed: {e}");
            std::process::exit(1);
        }
    }
    let el = t.elapsed().as_secs_f64();
    println!(
        "function interpreter: table of {rows} rows, {calls} calls: {:.1} us per call, {:.0} ns per loop iteration",
        el / calls as f64 * 1e6,
        el / iterations * 1e9
    );
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let n: usize = args.first().and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let evals: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(5_000);
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
    // the tape runs interpreted until it has run about 2,000 times (`tape_jit.rs`), then as
    // native code: the first batches show the interpreter, the last ones native code
    let best_of = |ts: &[f64]| ts.iter().copied().fold(f64::INFINITY, f64::min);
    let (first, last) = (best_of(&times[..3]), best_of(&times[batches - 3..]));
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
    for (what, t) in [
        ("best batch", best),
        ("median batch", median),
        ("first batches (interpreted)", first),
        ("last batches (native code; MOSS_JIT=0: interpreted)", last),
    ] {
        println!(
            "{what}: {:.1} us per evaluation, {:.2} ns per instruction",
            t * 1e6,
            t * 1e9 / instrs as f64
        );
    }
    println!("checksum: {}", dx.iter().sum::<f64>());
    bench_function_calls(1000, 2000);
}
