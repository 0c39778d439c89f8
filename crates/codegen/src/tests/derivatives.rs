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
