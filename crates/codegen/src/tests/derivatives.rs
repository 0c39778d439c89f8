//! Derivative functions generated from algorithms (`moss_symbolic::autodiff`), run by the
//! function interpreter and compared with central differences of the original functions.

use super::*;
use moss_symbolic::autodiff::generate_derivatives;
use std::collections::BTreeMap;

fn int_var(name: &str) -> FunctionVar {
    fvar(name, ScalarType::Integer, vec![], None)
}

fn real_array(name: &str, dims: Vec<Option<Expr>>) -> FunctionVar {
    fvar(name, ScalarType::Real, dims, None)
}

fn for_(var: &str, stop: Expr, body: Vec<Statement>) -> Statement {
    Statement::For {
        var: var.into(),
        range: Expr::Range {
            start: Box::new(fi(1)),
            step: None,
            stop: Box::new(stop),
        },
        body,
        origin: Origin::default(),
    }
}

/// `poly(c, x) = Σ c[i] x^(i-1)` by Horner's scheme in a while loop.
fn poly() -> Function {
    use BinaryOp::*;
    function(
        "T.poly",
        vec![real_array("c", vec![None]), real_in("x")],
        vec![real_in("y")],
        vec![int_var("i")],
        vec![
            set(fv("i"), fcall("size", vec![fv("c"), fi(1)])),
            set(fv("y"), fidx("c", vec![fv("i")])),
            set(fv("i"), fb(Sub, fv("i"), fi(1))),
            Statement::While {
                condition: fb(Ge, fv("i"), fi(1)),
                body: vec![
                    set(
                        fv("y"),
                        fb(Add, fb(Mul, fv("y"), fv("x")), fidx("c", vec![fv("i")])),
                    ),
                    set(fv("i"), fb(Sub, fv("i"), fi(1))),
                ],
                origin: Origin::default(),
            },
        ],
    )
}

/// Mean, sample standard deviation and count of three values (two Real outputs around an
/// Integer one).
fn stats() -> Function {
    use BinaryOp::*;
    function(
        "T.stats",
        vec![real_array("u", vec![Some(fi(3))])],
        vec![real_in("m"), int_var("n"), real_in("s")],
        vec![],
        vec![
            set(fv("n"), fcall("size", vec![fv("u"), fi(1)])),
            set(fv("m"), fb(Div, fcall("sum", vec![fv("u")]), fv("n"))),
            set(fv("s"), fi(0)),
            for_(
                "i",
                fv("n"),
                vec![set(
                    fv("s"),
                    fb(
                        Add,
                        fv("s"),
                        fb(Pow, fb(Sub, fidx("u", vec![fv("i")]), fv("m")), fi(2)),
                    ),
                )],
            ),
            set(
                fv("s"),
                fcall("sqrt", vec![fb(Div, fv("s"), fb(Sub, fv("n"), fi(1)))]),
            ),
        ],
    )
}

/// Tuple assignment, an array local sized by its assignment, an if and calls of the others.
fn mix() -> Function {
    use BinaryOp::*;
    let u = Expr::Array(vec![
        fv("x"),
        fb(Mul, fi(2), fv("x")),
        fb(Pow, fv("x"), fi(2)),
    ]);
    function(
        "T.mix",
        vec![real_in("x"), real_array("c", vec![Some(fi(3))])],
        vec![real_in("y")],
        vec![
            real_in("a"),
            real_in("b"),
            int_var("k"),
            real_array("w", vec![None]),
        ],
        vec![
            Statement::TupleAssign {
                targets: vec![Some(fv("a")), Some(fv("k")), Some(fv("b"))],
                value: fcall("T.stats", vec![u]),
                origin: Origin::default(),
            },
            set(
                fv("w"),
                Expr::Array(vec![
                    fcall("sin", vec![fv("x")]),
                    fcall("exp", vec![fv("a")]),
                ]),
            ),
            Statement::If {
                branches: vec![(
                    fb(Gt, fv("x"), fr(1.0)),
                    vec![set(fidx("w", vec![fi(2)]), fr(3.0))],
                )],
                else_: vec![],
                origin: Origin::default(),
            },
            set(
                fv("y"),
                fb(
                    Add,
                    fb(Mul, fb(Mul, fv("a"), fv("b")), fidx("w", vec![fi(1)])),
                    fb(
                        Mul,
                        fidx("w", vec![fi(2)]),
                        fcall("T.poly", vec![fv("c"), fv("x")]),
                    ),
                ),
            ),
        ],
    )
}

fn all_functions() -> BTreeMap<String, Function> {
    let mut fs: BTreeMap<String, Function> = [poly(), stats(), mix()]
        .into_iter()
        .map(|f| (f.name.clone(), f))
        .collect();
    let gen = generate_derivatives(&fs, &Default::default());
    fs.extend(gen.functions);
    fs
}

/// Output `output` of `func(args)`, computed by the interpreter.
fn eval_output(
    fs: &BTreeMap<String, Function>,
    func: &str,
    args: Vec<PExpr>,
    output: usize,
) -> f64 {
    let mut b = B::new();
    b.p.functions = fs.clone();
    let y = b.real("y", 0.0);
    let c0 = call(func, args);
    let e = match output {
        0 => c0,
        i => call("$output", vec![c(i as f64), c0]),
    };
    b.assign(y, e);
    let m = b.init(0.0);
    value(&m, y)
}

fn array(xs: &[f64]) -> PExpr {
    PExpr::Array(xs.iter().map(|&x| c(x)).collect())
}

/// The generated derivative along a direction against a central difference.
fn check(
    fs: &BTreeMap<String, Function>,
    func: &str,
    primal: &dyn Fn(f64) -> Vec<PExpr>,
    tangent: Vec<PExpr>,
    output: usize,
    derivative_output: usize,
) {
    let h = 1e-6;
    let fd = (eval_output(fs, func, primal(h), output) - eval_output(fs, func, primal(-h), output))
        / (2.0 * h);
    let mut args = primal(0.0);
    args.extend(tangent);
    let exact = eval_output(fs, &format!("{func}.$der"), args, derivative_output);
    assert!(
        close(exact, fd, 1e-6),
        "{func} output {output}: generated derivative {exact}, finite difference {fd}"
    );
}

#[test]
fn horner_loop_derivative_in_x_and_in_the_coefficients() {
    let fs = all_functions();
    for x0 in [-1.5, 0.3, 2.0] {
        // along x only, then along x and the coefficients together
        let along_x = |h: f64| vec![array(&[1.0, -2.0, 0.5, 0.25]), c(x0 + h)];
        check(
            &fs,
            "T.poly",
            &along_x,
            vec![array(&[0.0; 4]), c(1.0)],
            0,
            0,
        );
        let dc = [0.1, 0.2, -0.3, 0.4];
        let along_both = |h: f64| {
            let cs: Vec<f64> = [1.0, -2.0, 0.5, 0.25]
                .iter()
                .zip(dc)
                .map(|(a, d)| a + h * d)
                .collect();
            vec![array(&cs), c(x0 + 0.5 * h)]
        };
        check(&fs, "T.poly", &along_both, vec![array(&dc), c(0.5)], 0, 0);
    }
}

#[test]
fn both_real_outputs_of_a_multi_output_function() {
    let fs = all_functions();
    let du = [0.3, -1.0, 0.7];
    let primal = |h: f64| vec![array(&[1.0 + h * du[0], 2.5 + h * du[1], -0.5 + h * du[2]])];
    // mean (output 0 -> derivative output 0), deviation (output 2 -> derivative output 1)
    check(&fs, "T.stats", &primal, vec![array(&du)], 0, 0);
    check(&fs, "T.stats", &primal, vec![array(&du)], 2, 1);
}

#[test]
fn tuple_assignment_array_local_and_nested_calls() {
    let fs = all_functions();
    let cs = [0.5, -1.0, 2.0];
    for x0 in [0.4, 0.9, 1.7] {
        let primal = |h: f64| vec![c(x0 + h), array(&cs)];
        check(&fs, "T.mix", &primal, vec![c(1.0), array(&[0.0; 3])], 0, 0);
    }
}

/// `x*(c_1 + x*(c_2 + ... x*(c_n + exp(x/(1 + x*x)))))`: Horner nesting `depth` deep, as
/// in the IF97 Gibbs functions, over a quotient and a call.
fn nested_horner(depth: usize) -> Function {
    use BinaryOp::*;
    let x = || fv("x");
    let mut e = fcall(
        "exp",
        vec![fb(Div, x(), fb(Add, fr(1.0), fb(Mul, x(), x())))],
    );
    for k in (1..=depth).rev() {
        e = fb(Mul, x(), fb(Add, fr(1.0 / k as f64), e));
    }
    function(
        "T.nested",
        vec![real_in("x")],
        vec![real_in("y")],
        vec![],
        vec![set(fv("y"), e)],
    )
}

/// Nodes of a function body written out as trees.
fn body_nodes(f: &Function) -> usize {
    fn expr(e: &Expr) -> usize {
        1 + match e {
            Expr::Unary { arg, .. } => expr(arg),
            Expr::Binary { lhs, rhs, .. } => expr(lhs) + expr(rhs),
            Expr::Call { args, .. } => args.iter().map(expr).sum(),
            Expr::If { branches, else_ } => {
                branches
                    .iter()
                    .map(|(c, v)| expr(c) + expr(v))
                    .sum::<usize>()
                    + expr(else_)
            }
            Expr::CallOutput { call, .. } => expr(call),
            Expr::Array(items) => items.iter().map(expr).sum(),
            _ => 0,
        }
    }
    fn stmts(ss: &[Statement]) -> usize {
        ss.iter()
            .map(|s| {
                1 + match s {
                    Statement::Assign { value, .. } | Statement::TupleAssign { value, .. } => {
                        expr(value)
                    }
                    Statement::If {
                        branches, else_, ..
                    } => {
                        branches
                            .iter()
                            .map(|(c, b)| expr(c) + stmts(b))
                            .sum::<usize>()
                            + stmts(else_)
                    }
                    Statement::For { body, .. } | Statement::While { body, .. } => stmts(body),
                    _ => 0,
                }
            })
            .sum()
    }
    match &f.body {
        FunctionBody::Algorithm(ss) => stmts(ss),
        _ => 0,
    }
}

fn generated(
    f: Function,
    annotated: &moss_symbolic::autodiff::DerivativeMap,
) -> BTreeMap<String, Function> {
    let mut fs: BTreeMap<String, Function> = [(f.name.clone(), f)].into_iter().collect();
    fs.extend(generate_derivatives(&fs, annotated).functions);
    fs
}

#[test]
fn derivatives_of_nested_expressions_grow_linearly_with_the_nesting() {
    // the product rule repeats the inner polynomial once per level unless it is kept in a
    // temporary: quadratic growth, squared again at the second order
    let second_order_nodes = |depth: usize| {
        let fs = generated(nested_horner(depth), &Default::default());
        body_nodes(&fs["T.nested.$der.$der"])
    };
    let (small, large) = (second_order_nodes(20), second_order_nodes(40));
    assert!(
        (large as f64) < 2.3 * small as f64,
        "second derivative of depth 20: {small} nodes, of depth 40: {large}"
    );
    let fs = generated(nested_horner(40), &Default::default());
    let ratio = body_nodes(&fs["T.nested.$der.$der"]) as f64 / body_nodes(&fs["T.nested"]) as f64;
    assert!(ratio < 30.0, "second derivative {ratio} times the function");
    // and the values are right: first derivative against a central difference, second
    // derivative against a central difference of the first
    for x0 in [-0.7, 0.2, 0.9] {
        let primal = |h: f64| vec![c(x0 + h)];
        check(&fs, "T.nested", &primal, vec![c(1.0)], 0, 0);
        let h = 1e-6;
        let first = |x: f64| eval_output(&fs, "T.nested.$der", vec![c(x), c(1.0)], 0);
        let fd = (first(x0 + h) - first(x0 - h)) / (2.0 * h);
        // f.$der.$der(x, dx, d2x, d2dx): along x with dx = 1, the derivative of f'(x)*dx
        let exact = eval_output(
            &fs,
            "T.nested.$der.$der",
            vec![c(x0), c(1.0), c(1.0), c(0.0)],
            0,
        );
        assert!(close(exact, fd, 1e-5), "x = {x0}: {exact} against {fd}");
    }
}

/// `outer(x) = use(x, a, b)` with `(a, b) = props(x)`, where `use` has a `derivative`
/// annotation declaring `a` and `b` `noDerivative` (a property record passed along).
fn record_passing() -> (
    BTreeMap<String, Function>,
    moss_symbolic::autodiff::DerivativeMap,
) {
    use BinaryOp::*;
    let props = function(
        "T.props",
        vec![real_in("x")],
        vec![real_in("a"), real_in("b")],
        vec![],
        vec![
            set(fv("a"), fcall("exp", vec![fb(Mul, fr(0.5), fv("x"))])),
            set(fv("b"), fb(Mul, fv("a"), fcall("sin", vec![fv("x")]))),
        ],
    );
    let use_ = function(
        "T.use",
        vec![real_in("x"), real_in("a"), real_in("b")],
        vec![real_in("y")],
        vec![],
        vec![set(fv("y"), fb(Add, fb(Mul, fv("a"), fv("x")), fv("b")))],
    );
    // d/dx of x*a(x) + b(x) with a, b given: what `use_der` computes from the record
    let use_der = function(
        "T.use_der",
        vec![real_in("x"), real_in("a"), real_in("b"), real_in("dx")],
        vec![real_in("dy")],
        vec![],
        vec![set(
            fv("dy"),
            fb(
                Mul,
                fb(
                    Add,
                    fb(Add, fv("a"), fb(Mul, fb(Mul, fr(0.5), fv("a")), fv("x"))),
                    fb(
                        Add,
                        fb(Mul, fb(Mul, fr(0.5), fv("a")), fcall("sin", vec![fv("x")])),
                        fb(Mul, fv("a"), fcall("cos", vec![fv("x")])),
                    ),
                ),
                fv("dx"),
            ),
        )],
    );
    let mut outer = function(
        "T.outer",
        vec![real_in("x")],
        vec![real_in("y")],
        vec![],
        vec![
            Statement::TupleAssign {
                targets: vec![Some(fv("a")), Some(fv("b"))],
                value: fcall("T.props", vec![fv("x")]),
                origin: Origin::default(),
            },
            set(fv("y"), fcall("T.use", vec![fv("x"), fv("a"), fv("b")])),
        ],
    );
    outer.locals = vec![real_in("a"), real_in("b")];
    let fs: BTreeMap<String, Function> = [props, use_, use_der, outer]
        .into_iter()
        .map(|f| (f.name.clone(), f))
        .collect();
    let annotated = [(
        "T.use".to_string(),
        ("T.use_der".to_string(), vec![true, false, false]),
    )]
    .into_iter()
    .collect();
    (fs, annotated)
}

fn calls_in(f: &Function) -> Vec<String> {
    let FunctionBody::Algorithm(body) = &f.body else {
        return Vec::new();
    };
    format!("{body:?}")
        .split("func: \"")
        .skip(1)
        .filter_map(|s| s.split('"').next().map(str::to_string))
        .collect()
}

#[test]
fn derivatives_nothing_reads_are_not_computed() {
    let (mut fs, annotated) = record_passing();
    fs.extend(generate_derivatives(&fs, &annotated).functions);
    let d = &fs["T.outer.$der"];
    let calls = calls_in(d);
    // the record's derivative is dead (`use_der` takes the record as it is), and so is
    // the function's own value (`$der` returns the derivative only)
    assert!(
        !calls.iter().any(|c| c == "T.props.$der" || c == "T.use"),
        "calls of T.outer.$der: {calls:?}"
    );
    assert!(calls.iter().any(|c| c == "T.use_der"), "{calls:?}");
    for x0 in [-0.4, 0.3, 1.2] {
        let primal = |h: f64| vec![c(x0 + h)];
        check(&fs, "T.outer", &primal, vec![c(1.0)], 0, 0);
    }
}

#[test]
fn calls_along_zero_derivatives_are_skipped() {
    use BinaryOp::*;
    // y = props(x).a * z: along z alone the derivative of props is zero and not called
    let (mut fs, _) = record_passing();
    let mut f = function(
        "T.scaled",
        vec![real_in("x"), real_in("z")],
        vec![real_in("y")],
        vec![],
        vec![
            Statement::TupleAssign {
                targets: vec![Some(fv("a")), None],
                value: fcall("T.props", vec![fv("x")]),
                origin: Origin::default(),
            },
            set(fv("y"), fb(Mul, fv("a"), fv("z"))),
        ],
    );
    f.locals = vec![real_in("a")];
    fs.insert(f.name.clone(), f);
    fs.extend(generate_derivatives(&fs, &Default::default()).functions);
    let FunctionBody::Algorithm(body) = &fs["T.scaled.$der"].body else {
        panic!("algorithm expected");
    };
    let guarded = body.iter().any(|s| {
        matches!(s, Statement::If { branches, else_, .. }
            if format!("{:?}", branches[0].0).contains("$d1_x")
                && format!("{else_:?}").contains("T.props.$der"))
    });
    assert!(guarded, "{body:#?}");
    for (x0, z0) in [(0.3, 2.0), (-1.0, 0.5)] {
        let along_z = |h: f64| vec![c(x0), c(z0 + h)];
        check(&fs, "T.scaled", &along_z, vec![c(0.0), c(1.0)], 0, 0);
        let along_both = |h: f64| vec![c(x0 + h), c(z0 - h)];
        check(&fs, "T.scaled", &along_both, vec![c(1.0), c(-1.0)], 0, 0);
    }
}

/// The two-output `T.props` and its generated derivative called as a unit, with the
/// direction given by parameter `dx`: the values of `(da, db)` and how many functions ran.
fn props_derivative_unit(x: f64, dx: f64) -> ((f64, f64), u64) {
    use crate::model::ExecutableModel;
    let (mut fs, _) = record_passing();
    fs.extend(generate_derivatives(&fs, &Default::default()).functions);
    let mut b = B::new();
    b.p.functions = fs;
    let x = b.param("x", x);
    let dx = b.param("dx", dx);
    let da = b.real("da", 7.0);
    let db = b.real("db", 7.0);
    b.p.blocks.push(Block::CallOutputs {
        outputs: vec![Some(da), Some(db)],
        func: "T.props.$der".into(),
        args: vec![v(x), v(dx)],
    });
    let m = b.init(0.0);
    ((value(&m, da), value(&m, db)), m.stats().function_calls)
}

#[test]
fn a_derivative_unit_along_the_zero_direction_is_not_called() {
    // along dx = 1: a = exp(x/2), b = a*sin(x), so da = a/2, db = a/2*sin(x) + a*cos(x)
    let x = 0.7f64;
    let a = (0.5 * x).exp();
    let ((da, db), calls) = props_derivative_unit(x, 1.0);
    assert!(close(da, 0.5 * a, 1e-12) && close(db, 0.5 * a * x.sin() + a * x.cos(), 1e-12));
    assert!(calls > 0);
    // along zero: zeros, without a call (the tangent program of a circuit runs every
    // device's derivative once per Jacobian colour, most of them along zero)
    let ((da, db), calls) = props_derivative_unit(x, 0.0);
    assert_eq!((da, db, calls), (0.0, 0.0, 0));
}

#[test]
fn generated_derivatives_return_zero_along_the_zero_direction_at_once() {
    let (mut fs, _) = record_passing();
    fs.extend(generate_derivatives(&fs, &Default::default()).functions);
    let FunctionBody::Algorithm(body) = &fs["T.props.$der"].body else {
        panic!("algorithm expected");
    };
    // the first statement returns zeros when the direction is zero
    let Statement::If { branches, .. } = &body[0] else {
        panic!("a guard first: {body:#?}");
    };
    assert!(format!("{:?}", branches[0].0).contains("$d1_x"));
    assert!(matches!(
        branches[0].1.last(),
        Some(Statement::Return { .. })
    ));
    // called in an expression (not as a unit): zero along zero, the derivative otherwise
    let x0 = 0.3f64;
    let along_zero = eval_output(&fs, "T.props.$der", vec![c(x0), c(0.0)], 1);
    assert_eq!(along_zero, 0.0);
    let primal = |h: f64| vec![c(x0 + h)];
    check(&fs, "T.props", &primal, vec![c(1.0)], 1, 1);
}
