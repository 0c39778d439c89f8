//! The simulator driving the real interpreter (`moss_codegen::Interpreter`) on hand-built
//! causal programs: the same event semantics the compiler pipeline produces.

use moss_codegen::Interpreter;
use moss_sim::{simulate_with_stats, SimOptions, Solver};
use moss_symbolic::program::{
    ArithOp, Block, PExpr, ProgVar, RelOp, SampleDef, ValueType, VarId, VarKind, WhenBranch,
    ZeroCrossing,
};
use moss_symbolic::CausalProgram;

struct Builder {
    p: CausalProgram,
}

fn c(x: f64) -> PExpr {
    PExpr::Const(x)
}
fn v(id: VarId) -> PExpr {
    PExpr::Var(id)
}
fn arith(op: ArithOp, a: PExpr, b: PExpr) -> PExpr {
    PExpr::Arith(op, Box::new(a), Box::new(b))
}

impl Builder {
    fn new(name: &str) -> Builder {
        Builder {
            p: CausalProgram {
                name: name.into(),
                ..Default::default()
            },
        }
    }

    fn var(&mut self, name: &str, kind: VarKind, ty: ValueType, start: f64) -> VarId {
        self.p.vars.push(ProgVar {
            name: name.into(),
            kind,
            ty,
            start,
            nominal: 1.0,
            min: None,
            max: None,
            unit: String::new(),
            description: String::new(),
            hidden: false,
        });
        (self.p.vars.len() - 1) as VarId
    }

    fn state(&mut self, name: &str, start: f64) -> (VarId, VarId) {
        let x = self.var(name, VarKind::State, ValueType::Real, start);
        let dx = self.var(
            &format!("der({name})"),
            VarKind::Derivative,
            ValueType::Real,
            0.0,
        );
        self.p.states.push(x);
        self.p.derivatives.push(dx);
        (x, dx)
    }

    fn assign(&mut self, var: VarId, expr: PExpr) {
        self.p.blocks.push(Block::Assign { var, expr });
    }

    /// Event-generating relation `lhs op rhs`.
    fn rel(&mut self, op: RelOp, lhs: PExpr, rhs: PExpr, description: &str) -> PExpr {
        let time_event = match (&lhs, &rhs) {
            (PExpr::Time, PExpr::Const(_)) => Some(rhs.clone()),
            _ => None,
        };
        self.p.zero_crossings.push(ZeroCrossing {
            expr: arith(ArithOp::Sub, lhs.clone(), rhs.clone()),
            op,
            time_event,
            description: description.into(),
        });
        PExpr::Rel {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
            zc: Some((self.p.zero_crossings.len() - 1) as u32),
        }
    }

    fn when(&mut self, condition: VarId, body: Vec<Block>) {
        self.p.blocks.push(Block::When {
            branches: vec![WhenBranch {
                conditions: vec![condition],
                fires_at_initial: false,
                body,
            }],
        });
    }
}

/// `der(h) = v; der(v) = -g; when h < 0 then reinit(v, -e*pre(v)); end when;`
fn bouncing_ball() -> CausalProgram {
    let mut b = Builder::new("BouncingBall");
    let e = b.var("e", VarKind::Parameter, ValueType::Real, 0.8);
    let (h, dh) = b.state("h", 1.0);
    let (vv, dv) = b.state("v", 0.0);
    let hit = b.var(
        "$whenCondition1",
        VarKind::Discrete,
        ValueType::Boolean,
        0.0,
    );
    b.p.vars[hit as usize].hidden = true;
    let r = b.rel(RelOp::Lt, v(h), c(0.0), "h < 0 (BouncingBall.mo:8:8)");
    b.assign(hit, r);
    b.assign(dh, v(vv));
    b.assign(dv, c(-9.81));
    let bounce = arith(ArithOp::Mul, PExpr::Neg(Box::new(v(e))), PExpr::Pre(vv));
    b.when(
        hit,
        vec![Block::Reinit {
            var: vv,
            value: bounce,
        }],
    );
    b.p.jacobian_pattern = vec![(0, 1)];
    b.p.experiment.stop_time = Some(3.0);
    b.p
}

#[test]
fn interpreted_bouncing_ball_matches_closed_form_impacts() {
    let program = bouncing_ball();
    let t1 = (2.0f64 / 9.81).sqrt();
    for solver in [Solver::Dopri5, Solver::Bdf] {
        // Restitutions whose Zeno time lies beyond the stop time (3 s).
        for e in [0.8, 0.85] {
            let mut model = Interpreter::new(program.clone()).expect("compiles");
            let opts = SimOptions {
                tolerance: Some(1e-8),
                solver,
                parameters: vec![("e".into(), e)],
                ..Default::default()
            };
            let sim = simulate_with_stats(&mut model, &program, &opts)
                .unwrap_or_else(|err| panic!("{solver:?} e={e}: {err}"));
            let r = &sim.result;
            let (t, vel) = (r.time(), r.series("v").expect("v"));
            let impacts: Vec<f64> = (1..t.len())
                .filter(|&i| t[i] == t[i - 1] && vel[i - 1] < 0.0 && vel[i] > 0.0)
                .map(|i| t[i])
                .collect();
            let mut expected = vec![t1];
            let mut k = 1;
            while let Some(&last) = expected.last() {
                let next = last + 2.0 * e.powi(k) * t1;
                if next > 3.0 {
                    break;
                }
                expected.push(next);
                k += 1;
            }
            assert_eq!(
                impacts.len(),
                expected.len(),
                "{solver:?} e={e}: {impacts:?}"
            );
            for (a, b) in impacts.iter().zip(&expected) {
                assert!(
                    (a - b).abs() < 1e-6,
                    "{solver:?} e={e}: impact {a}, expected {b}"
                );
            }
            assert_eq!(
                r.var("e").map(|v| v.storage),
                Some(moss_results::Storage::Constant(e))
            );
            assert!(
                r.var("$whenCondition1").is_none(),
                "hidden variables are not stored"
            );
        }
    }
}

#[test]
fn interpreted_time_relation_and_samples_hit_exactly() {
    // y = if time >= 0.5 then 1 else 0; der(x) = y; n counts sample(0, 0.25) instants.
    let mut b = Builder::new("Steps");
    let (x, dx) = b.state("x", 0.0);
    let y = b.var("y", VarKind::Algebraic, ValueType::Real, 0.0);
    let r = b.rel(RelOp::Ge, PExpr::Time, c(0.5), "time >= 0.5");
    b.assign(
        y,
        PExpr::If(Box::new(r), Box::new(c(1.0)), Box::new(c(0.0))),
    );
    b.assign(dx, v(y));
    b.p.samples.push(SampleDef {
        start: c(0.0),
        interval: c(0.25),
    });
    let s = b.var("s", VarKind::Discrete, ValueType::Boolean, 0.0);
    let n = b.var("n", VarKind::Discrete, ValueType::Integer, 0.0);
    b.assign(s, PExpr::Sample(0));
    b.when(
        s,
        vec![Block::Assign {
            var: n,
            expr: arith(ArithOp::Add, PExpr::Pre(n), c(1.0)),
        }],
    );
    b.p.jacobian_pattern = vec![];
    let program = b.p;
    let _ = x;
    for solver in [Solver::Dopri5, Solver::Bdf] {
        let mut model = Interpreter::new(program.clone()).expect("compiles");
        let opts = SimOptions {
            stop_time: Some(1.0),
            intervals: Some(10),
            solver,
            ..Default::default()
        };
        let sim = simulate_with_stats(&mut model, &program, &opts)
            .unwrap_or_else(|e| panic!("{solver:?}: {e}"));
        let r = &sim.result;
        let t = r.time();
        let (xs, ys, ns) = (
            r.series("x").expect("x"),
            r.series("y").expect("y"),
            r.series("n").expect("n"),
        );
        let events: Vec<f64> = (1..t.len())
            .filter(|&i| t[i] == t[i - 1])
            .map(|i| t[i])
            .collect();
        assert_eq!(events, vec![0.25, 0.5, 0.75, 1.0], "{solver:?}");
        // y switches exactly at 0.5: left 0, right 1.
        let i = (1..t.len())
            .find(|&i| t[i] == 0.5 && t[i - 1] == 0.5)
            .expect("event at 0.5");
        assert_eq!((ys[i - 1], ys[i]), (0.0, 1.0));
        // n: 1 at the start (sample at t0), +1 at each later instant.
        assert_eq!(ns[0], 1.0);
        assert_eq!(*ns.last().expect("rows"), 5.0);
        let x_end = *xs.last().expect("rows");
        assert!((x_end - 0.5).abs() < 1e-9, "{solver:?}: x(1) = {x_end}");
        assert_eq!(sim.stats.time_events, 4, "{solver:?}: {:?}", sim.stats);
    }
}
