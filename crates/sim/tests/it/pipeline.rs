//! Flat model → `moss_symbolic::translate` → `moss_codegen::Interpreter` → `simulate`: the
//! event semantics of the whole back end, on flat models written by hand (the frontend is
//! tested separately).

use moss_codegen::Interpreter;
use moss_frontend::flat::{
    Attributes, BinaryOp, Causality, Equation, Expr, FlatModel, Origin, ScalarType, UnaryOp,
    Variability, Variable,
};
use moss_sim::{simulate_with_stats, SimOptions, Solver};

fn var(name: &str, variability: Variability, start: Option<f64>, binding: Option<f64>) -> Variable {
    Variable {
        name: name.into(),
        ty: ScalarType::Real,
        variability,
        causality: Causality::Internal,
        binding: binding.map(Expr::Real),
        attrs: Attributes {
            start: start.map(Expr::Real),
            fixed: start.map(|_| true),
            ..Default::default()
        },
        is_flow: false,
        is_stream: false,
        is_protected: false,
        evaluate: false,
        description: String::new(),
        origin: Origin::default(),
    }
}

fn x(name: &str) -> Expr {
    Expr::Var {
        name: name.into(),
        subscripts: vec![],
    }
}
fn call(func: &str, arg: Expr) -> Expr {
    Expr::Call {
        func: func.into(),
        args: vec![arg],
    }
}
fn bin(op: BinaryOp, a: Expr, b: Expr) -> Expr {
    Expr::Binary {
        op,
        lhs: Box::new(a),
        rhs: Box::new(b),
    }
}
fn eq(lhs: Expr, rhs: Expr) -> Equation {
    Equation::Equal {
        lhs,
        rhs,
        origin: Origin::default(),
    }
}

/// ```modelica
/// model BouncingBall
///   parameter Real e = 0.8; parameter Real g = 9.81;
///   Real h(start = 1, fixed = true); Real v(start = 0, fixed = true);
/// equation
///   der(h) = v; der(v) = -g;
///   when h < 0 then reinit(v, -e*pre(v)); end when;
/// end BouncingBall;
/// ```
fn bouncing_ball() -> FlatModel {
    FlatModel {
        name: "BouncingBall".into(),
        variables: vec![
            var("e", Variability::Parameter, None, Some(0.8)),
            var("g", Variability::Parameter, None, Some(9.81)),
            var("h", Variability::Continuous, Some(1.0), None),
            var("v", Variability::Continuous, Some(0.0), None),
        ],
        equations: vec![
            eq(call("der", x("h")), x("v")),
            eq(
                call("der", x("v")),
                Expr::Unary {
                    op: UnaryOp::Neg,
                    arg: Box::new(x("g")),
                },
            ),
            Equation::When {
                branches: vec![(
                    bin(BinaryOp::Lt, x("h"), Expr::Real(0.0)),
                    vec![Equation::Reinit {
                        var: "v".into(),
                        value: bin(
                            BinaryOp::Mul,
                            Expr::Unary {
                                op: UnaryOp::Neg,
                                arg: Box::new(x("e")),
                            },
                            call("pre", x("v")),
                        ),
                        origin: Origin::default(),
                    }],
                )],
                origin: Origin::default(),
            },
        ],
        ..Default::default()
    }
}

#[test]
fn translated_bouncing_ball_impacts_match_closed_form() {
    let flat = bouncing_ball();
    let program = match moss_symbolic::translate(&flat) {
        Ok(p) => p,
        Err(diags) => panic!(
            "translation failed: {}",
            moss_syntax::diag::render_all(&diags, &flat.sources)
        ),
    };
    let t1 = (2.0f64 / 9.81).sqrt();
    let expected: Vec<f64> = (0..6)
        .scan(0.0, |t, k| {
            *t += if k == 0 {
                t1
            } else {
                2.0 * 0.8f64.powi(k) * t1
            };
            Some(*t)
        })
        .collect();
    for solver in [Solver::Dopri5, Solver::Bdf] {
        let mut model = Interpreter::new(program.clone()).unwrap_or_else(|e| panic!("{e}"));
        let opts = SimOptions {
            stop_time: Some(3.0),
            tolerance: Some(1e-8),
            solver,
            ..Default::default()
        };
        let sim = simulate_with_stats(&mut model, &program, &opts)
            .unwrap_or_else(|e| panic!("{solver:?}: {e}"));
        let r = &sim.result;
        let (t, v) = (r.time(), r.series("v").expect("v stored"));
        let impacts: Vec<f64> = (1..t.len())
            .filter(|&i| t[i] == t[i - 1] && v[i - 1] < 0.0 && v[i] > 0.0)
            .map(|i| t[i])
            .collect();
        assert_eq!(impacts.len(), expected.len(), "{solver:?}: {impacts:?}");
        for (a, b) in impacts.iter().zip(&expected) {
            assert!(
                (a - b).abs() < 1e-6,
                "{solver:?}: impact at {a}, expected {b}"
            );
        }
        // Parameters are stored once.
        assert!(matches!(
            r.var("g").map(|v| v.storage),
            Some(moss_results::Storage::Constant(g)) if g == 9.81
        ));
    }
}

/// ```modelica
/// model Sampled
///   Real x(start = 1, fixed = true);
///   discrete Real u(start = 0, fixed = true);
/// equation
///   der(x) = u;
///   when sample(0, 0.1) then u = -2*x; end when;
/// end Sampled;
/// ```
/// Zero-order hold: x((k+1)/10) = x(k/10) (1 - 0.2), so x(k/10) = 0.8^k.
#[test]
fn translated_sampled_controller_matches_zero_order_hold() {
    let mut u = var("u", Variability::Discrete, Some(0.0), None);
    u.attrs.fixed = Some(true);
    let flat = FlatModel {
        name: "Sampled".into(),
        variables: vec![var("x", Variability::Continuous, Some(1.0), None), u],
        equations: vec![
            eq(call("der", x("x")), x("u")),
            Equation::When {
                branches: vec![(
                    Expr::Call {
                        func: "sample".into(),
                        args: vec![Expr::Real(0.0), Expr::Real(0.1)],
                    },
                    vec![eq(x("u"), bin(BinaryOp::Mul, Expr::Real(-2.0), x("x")))],
                )],
                origin: Origin::default(),
            },
        ],
        ..Default::default()
    };
    let program = match moss_symbolic::translate(&flat) {
        Ok(p) => p,
        Err(diags) => panic!(
            "translation failed: {}",
            moss_syntax::diag::render_all(&diags, &flat.sources)
        ),
    };
    for solver in [Solver::Dopri5, Solver::Bdf] {
        let mut model = Interpreter::new(program.clone()).unwrap_or_else(|e| panic!("{e}"));
        let opts = SimOptions {
            stop_time: Some(1.0),
            intervals: Some(10),
            solver,
            ..Default::default()
        };
        let sim = simulate_with_stats(&mut model, &program, &opts)
            .unwrap_or_else(|e| panic!("{solver:?}: {e}"));
        let r = &sim.result;
        let (t, xs) = (r.time(), r.series("x").expect("x stored"));
        for k in 1..=10 {
            let tk = k as f64 / 10.0;
            let i = t
                .iter()
                .position(|&ti| (ti - tk).abs() < 1e-12)
                .expect("row at sample");
            let expected = 0.8f64.powi(k);
            assert!(
                (xs[i] - expected).abs() < 1e-6,
                "{solver:?}: x({tk}) = {}, expected {expected}",
                xs[i]
            );
        }
        assert_eq!(sim.stats.time_events, 10, "{solver:?}");
    }
}

/// ```modelica
/// model Delayed
///   Real x(start = 0, fixed = true); Real y;
/// equation
///   der(x) = 1; y = delay(x*x, 0.5);
/// end Delayed;
/// ```
/// y(t) = (t - 0.5)^2 after the delay time and x(0)^2 = 0 before it.
#[test]
fn translated_delay_follows_the_recorded_history() {
    let flat = FlatModel {
        name: "Delayed".into(),
        variables: vec![
            var("x", Variability::Continuous, Some(0.0), None),
            var("y", Variability::Continuous, None, None),
        ],
        equations: vec![
            eq(call("der", x("x")), Expr::Real(1.0)),
            eq(
                x("y"),
                Expr::Call {
                    func: "delay".into(),
                    args: vec![bin(BinaryOp::Mul, x("x"), x("x")), Expr::Real(0.5)],
                },
            ),
        ],
        ..Default::default()
    };
    let program = match moss_symbolic::translate(&flat) {
        Ok(p) => p,
        Err(diags) => panic!(
            "translation failed: {}",
            moss_syntax::diag::render_all(&diags, &flat.sources)
        ),
    };
    for solver in [Solver::Dopri5, Solver::Bdf] {
        let mut model = Interpreter::new(program.clone()).unwrap_or_else(|e| panic!("{e}"));
        let opts = SimOptions {
            stop_time: Some(2.0),
            solver,
            ..Default::default()
        };
        let sim = simulate_with_stats(&mut model, &program, &opts)
            .unwrap_or_else(|e| panic!("{solver:?}: {e}"));
        let r = &sim.result;
        let (t, y) = (r.time(), r.series("y").expect("y stored"));
        assert!(t.len() > 10);
        for (&ti, &yi) in t.iter().zip(&y) {
            let want = if ti <= 0.5 { 0.0 } else { (ti - 0.5).powi(2) };
            assert!(
                (yi - want).abs() < 1e-3,
                "{solver:?}: y({ti}) = {yi}, want {want}"
            );
        }
    }
}
