//! Tests of the derivative generator.

use super::*;
use moss_frontend::flat::Origin;

fn v(name: &str) -> Expr {
    Expr::Var {
        name: name.into(),
        subscripts: Vec::new(),
    }
}

fn f1(func: &str, a: Expr) -> Expr {
    call(func, vec![a])
}

fn scalar(name: &str, ty: ScalarType) -> FunctionVar {
    FunctionVar {
        name: name.into(),
        ty,
        dims: Vec::new(),
        default: None,
    }
}

fn assign(name: &str, value: Expr) -> Statement {
    Statement::Assign {
        target: v(name),
        value,
        origin: Origin::default(),
    }
}

fn function(
    name: &str,
    inputs: Vec<FunctionVar>,
    outputs: Vec<FunctionVar>,
    body: Vec<Statement>,
) -> Function {
    Function {
        name: name.into(),
        inputs,
        outputs,
        locals: Vec::new(),
        body: FunctionBody::Algorithm(body),
        derivatives: Vec::new(),
        inline: false,
        smooth_order: None,
        inverses: Vec::new(),
        is_impure: false,
        origin: Origin::default(),
    }
}

/// Scalar evaluation of the expressions these tests differentiate.
fn eval(e: &Expr, env: &HashMap<String, f64>) -> f64 {
    use BinaryOp::*;
    let b = |x: bool| if x { 1.0 } else { 0.0 };
    match e {
        Expr::Real(x) => *x,
        Expr::Integer(i) => *i as f64,
        Expr::Var { name, .. } => env[name],
        Expr::Unary { op, arg } => match op {
            UnaryOp::Neg => -eval(arg, env),
            UnaryOp::Not => b(eval(arg, env) == 0.0),
        },
        Expr::Binary { op, lhs, rhs } => {
            let (x, y) = (eval(lhs, env), eval(rhs, env));
            match op {
                Add | ElemAdd => x + y,
                Sub | ElemSub => x - y,
                Mul | ElemMul => x * y,
                Div | ElemDiv => x / y,
                Pow | ElemPow => x.powf(y),
                Lt => b(x < y),
                Le => b(x <= y),
                Gt => b(x > y),
                Ge => b(x >= y),
                Eq => b(x == y),
                Ne => b(x != y),
                And => b(x != 0.0 && y != 0.0),
                Or => b(x != 0.0 || y != 0.0),
            }
        }
        Expr::If { branches, else_ } => {
            for (c, x) in branches {
                if eval(c, env) != 0.0 {
                    return eval(x, env);
                }
            }
            eval(else_, env)
        }
        Expr::Call { func, args } => {
            let a: Vec<f64> = args.iter().map(|x| eval(x, env)).collect();
            match func.as_str() {
                "sin" => a[0].sin(),
                "cos" => a[0].cos(),
                "tan" => a[0].tan(),
                "exp" => a[0].exp(),
                "log" => a[0].ln(),
                "log10" => a[0].log10(),
                "sqrt" => a[0].sqrt(),
                "asin" => a[0].asin(),
                "acos" => a[0].acos(),
                "atan" => a[0].atan(),
                "atan2" => a[0].atan2(a[1]),
                "sinh" => a[0].sinh(),
                "cosh" => a[0].cosh(),
                "tanh" => a[0].tanh(),
                "abs" => a[0].abs(),
                "sign" => a[0].signum(),
                "min" => a[0].min(a[1]),
                "max" => a[0].max(a[1]),
                "floor" => a[0].floor(),
                "div" => (a[0] / a[1]).trunc(),
                "mod" => a[0] - (a[0] / a[1]).floor() * a[1],
                "rem" => a[0] - (a[0] / a[1]).trunc() * a[1],
                "noEvent" | "Real" => a[0],
                "smooth" => a[1],
                other => panic!("no evaluation of `{other}` in this test"),
            }
        }
        other => panic!("no evaluation of {other:?} in this test"),
    }
}

/// Differentiate `e` over Real `x`, `y` and Integer `i` with no user functions.
fn diff_expr(e: &Expr) -> Result<Option<Expr>, String> {
    let functions = BTreeMap::new();
    let mut g = Generator {
        base: &functions,
        fder: DerivativeMap::default(),
        out: BTreeMap::new(),
        tried: HashSet::default(),
        zero_required: HashMap::default(),
        failures: HashMap::default(),
    };
    let mut d = Differ {
        vars: [
            scalar("x", ScalarType::Real),
            scalar("y", ScalarType::Real),
            scalar("i", ScalarType::Integer),
        ]
        .into_iter()
        .map(|v| (v.name.clone(), v))
        .collect(),
        constants: HashSet::default(),
        inactive: HashSet::default(),
        failed_targets: Vec::new(),
        loop_vars: Vec::new(),
        order: 1,
        temporaries: Vec::new(),
        g: &mut g,
    };
    d.diff(e)
}

/// The directional derivative along (dx, dy) against a central difference.
fn check_against_difference(e: &Expr, x: f64, y: f64) {
    let (dx, dy) = (0.3, -0.7);
    let d = diff_expr(e)
        .unwrap_or_else(|why| panic!("{e:?} not differentiable: {why}"))
        .unwrap_or(Expr::Real(0.0));
    let env = |x: f64, y: f64| -> HashMap<String, f64> {
        [("x", x), ("y", y), ("i", 3.0), ("$d1_x", dx), ("$d1_y", dy)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect()
    };
    let h = 1e-6;
    let fd =
        (eval(e, &env(x + h * dx, y + h * dy)) - eval(e, &env(x - h * dx, y - h * dy))) / (2.0 * h);
    let exact = eval(&d, &env(x, y));
    assert!(
        (exact - fd).abs() <= 1e-6 * (1.0 + fd.abs()),
        "{e:?} at ({x}, {y}): derivative {exact}, finite difference {fd}"
    );
}

#[test]
fn scalar_rules_agree_with_finite_differences() {
    use BinaryOp::*;
    let (x, y, i) = (v("x"), v("y"), v("i"));
    let cases = vec![
        bin(
            Add,
            bin(Mul, f1("sin", x.clone()), y.clone()),
            bin(Div, x.clone(), y.clone()),
        ),
        bin(
            Sub,
            f1("cos", bin(Mul, x.clone(), y.clone())),
            f1("tan", x.clone()),
        ),
        bin(Mul, f1("exp", x.clone()), f1("log", y.clone())),
        bin(Add, f1("log10", y.clone()), f1("sqrt", y.clone())),
        bin(
            Add,
            f1("asin", bin(Div, x.clone(), Expr::Integer(4))),
            f1("acos", bin(Div, y.clone(), Expr::Integer(5))),
        ),
        bin(
            Add,
            f1("atan", x.clone()),
            call("atan2", vec![y.clone(), x.clone()]),
        ),
        bin(
            Add,
            f1("sinh", x.clone()),
            bin(Mul, f1("cosh", y.clone()), f1("tanh", x.clone())),
        ),
        bin(Pow, x.clone(), Expr::Integer(3)),
        bin(Pow, y.clone(), x.clone()),
        bin(Pow, Expr::Real(2.0), bin(Mul, x.clone(), i.clone())),
        bin(Mul, f1("abs", x.clone()), f1("sign", y.clone())),
        call("min", vec![x.clone(), y.clone()]),
        call("max", vec![bin(Mul, x.clone(), x.clone()), y.clone()]),
        neg(call(
            "smooth",
            vec![Expr::Integer(1), f1("noEvent", x.clone())],
        )),
        call(
            "mod",
            vec![bin(Mul, Expr::Integer(7), x.clone()), y.clone()],
        ),
        call(
            "rem",
            vec![bin(Mul, Expr::Integer(7), x.clone()), y.clone()],
        ),
        bin(Add, x.clone(), f1("floor", bin(Mul, x.clone(), y.clone()))),
        Expr::If {
            branches: vec![(
                bin(Gt, x.clone(), y.clone()),
                bin(Mul, x.clone(), y.clone()),
            )],
            else_: Box::new(Expr::Real(1.0)),
        },
    ];
    for e in &cases {
        for (x0, y0) in [(0.7, 1.9), (-0.4, 2.3), (1.3, 0.6)] {
            check_against_difference(e, x0, y0);
        }
    }
}

#[test]
fn integer_boolean_and_step_expressions_have_no_derivative() {
    use BinaryOp::*;
    let (x, y, i) = (v("x"), v("y"), v("i"));
    for e in [
        bin(Mul, i.clone(), Expr::Integer(2)),
        bin(Lt, x.clone(), y.clone()),
        f1("floor", x.clone()),
        call("div", vec![x.clone(), y.clone()]),
        f1("integer", y.clone()),
        call("size", vec![x.clone(), Expr::Integer(1)]),
        Expr::Real(3.5),
    ] {
        assert_eq!(diff_expr(&e), Ok(None), "{e:?}");
    }
    // a Real variable has the derivative variable as its derivative
    assert_eq!(diff_expr(&x), Ok(Some(v("$d1_x"))));
    assert!(diff_expr(&f1("der", x)).is_err());
}

/// `f(x, n)`: a loop and an if; `g` calls `f`; `h` calls itself; `e` is external.
fn sample_functions() -> BTreeMap<String, Function> {
    use BinaryOp::*;
    let f = function(
        "P.f",
        vec![
            scalar("x", ScalarType::Real),
            scalar("n", ScalarType::Integer),
        ],
        vec![
            scalar("y", ScalarType::Real),
            scalar("k", ScalarType::Integer),
        ],
        vec![
            assign("y", Expr::Integer(1)),
            assign("k", Expr::Integer(0)),
            Statement::For {
                var: "j".into(),
                range: Expr::Range {
                    start: Box::new(Expr::Integer(1)),
                    step: None,
                    stop: Box::new(v("n")),
                },
                body: vec![assign("y", bin(Mul, v("y"), v("x")))],
                origin: Origin::default(),
            },
            Statement::If {
                branches: vec![(
                    bin(Lt, v("y"), Expr::Integer(0)),
                    vec![assign("k", Expr::Integer(1))],
                )],
                else_: Vec::new(),
                origin: Origin::default(),
            },
        ],
    );
    let g = function(
        "P.g",
        vec![scalar("u", ScalarType::Real)],
        vec![scalar("z", ScalarType::Real)],
        vec![assign(
            "z",
            f1("sin", call("P.f", vec![v("u"), Expr::Integer(2)])),
        )],
    );
    let h = function(
        "P.h",
        vec![scalar("u", ScalarType::Real)],
        vec![scalar("z", ScalarType::Real)],
        vec![assign("z", f1("P.h", v("u")))],
    );
    let mut e = function(
        "P.e",
        vec![scalar("u", ScalarType::Real)],
        vec![scalar("z", ScalarType::Real)],
        Vec::new(),
    );
    e.body = FunctionBody::External {
        language: "C".into(),
        name: "e".into(),
        output: Some("z".into()),
        args: vec![v("u")],
        code: Default::default(),
    };
    let calls_e = function(
        "P.callsE",
        vec![scalar("u", ScalarType::Real)],
        vec![scalar("z", ScalarType::Real)],
        vec![assign("z", f1("P.e", v("u")))],
    );
    [f, g, h, e, calls_e]
        .into_iter()
        .map(|f| (f.name.clone(), f))
        .collect()
}

#[test]
fn literal_tables_stay_constant_bindings_in_derivative_functions() {
    // y := c[1]*x + c[2]*x^2 with the table c = {3, 5}; w = {1, 2} is assigned later
    let table = |name: &str| FunctionVar {
        name: name.into(),
        ty: ScalarType::Real,
        dims: vec![Some(Expr::Integer(2))],
        default: Some(Expr::Array(vec![Expr::Real(3.0), Expr::Real(5.0)])),
    };
    let elem = |name: &str, i: i64| Expr::Var {
        name: name.into(),
        subscripts: vec![Subscript::Index(Expr::Integer(i))],
    };
    let mut f = function(
        "P.poly",
        vec![scalar("x", ScalarType::Real)],
        vec![scalar("y", ScalarType::Real)],
        vec![
            Statement::Assign {
                target: elem("w", 1),
                value: v("x"),
                origin: Origin::default(),
            },
            assign(
                "y",
                bin(
                    BinaryOp::Add,
                    bin(BinaryOp::Mul, elem("c", 1), v("x")),
                    bin(
                        BinaryOp::Mul,
                        bin(BinaryOp::Mul, elem("c", 2), v("x")),
                        elem("w", 1),
                    ),
                ),
            ),
        ],
    );
    f.locals = vec![table("c"), table("w")];
    let functions: BTreeMap<String, Function> = [(f.name.clone(), f)].into_iter().collect();
    let gen = generate_derivatives(&functions, &DerivativeMap::default());
    let d = &gen.functions["P.poly.$der"];
    let names: Vec<&str> = d.locals.iter().map(|v| v.name.as_str()).collect();
    // `c` keeps its binding and gets no derivative; `w` (assigned) is a variable
    assert_eq!(names, ["y", "c", "w", "$d1_w"]);
    assert!(d.locals[1].default.is_some() && d.locals[2].default.is_none());
}

#[test]
fn generated_function_has_derivative_inputs_outputs_and_statements() {
    let functions = sample_functions();
    let gen = generate_derivatives(&functions, &DerivativeMap::default());
    let (name, mask) = &gen.fder["P.f"];
    assert_eq!(name, "P.f.$der");
    assert_eq!(mask, &vec![true, false]);
    let d = &gen.functions["P.f.$der"];
    let names = |vs: &[FunctionVar]| vs.iter().map(|v| v.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&d.inputs), ["x", "n", "$d1_x"]);
    // only the Real output has a derivative; the outputs of f are locals
    assert_eq!(names(&d.outputs), ["$d1_y"]);
    assert_eq!(names(&d.locals), ["y", "k"]);
    let FunctionBody::Algorithm(body) = &d.body else {
        panic!("algorithm body expected");
    };
    // y := 1 gets a zero derivative after it; the loop body differentiates y := y*x
    // before the assignment; the Integer k gets nothing, and as no derivative reads it, its
    // assignments (and the `if` around one) are gone
    // (after the guard that returns zero along the zero direction)
    let Statement::If { branches, .. } = &body[0] else {
        panic!("the zero-direction guard first, got {:?}", body[0]);
    };
    assert_eq!(
        branches[0].1,
        vec![
            assign("$d1_y", Expr::Real(0.0)),
            Statement::Return {
                origin: Origin::default()
            }
        ]
    );
    assert_eq!(body[1], assign("y", Expr::Integer(1)));
    assert_eq!(body[2], assign("$d1_y", Expr::Real(0.0)));
    let Statement::For {
        body: loop_body, ..
    } = &body[3]
    else {
        panic!("for loop expected, got {:?}", body[3]);
    };
    assert_eq!(loop_body.len(), 2);
    assert!(matches!(&loop_body[0], Statement::Assign { target, .. } if *target == v("$d1_y")));
    assert_eq!(body.len(), 4, "{body:#?}");
    // g calls the derivative of f; second derivatives exist too
    assert!(gen.functions.contains_key("P.g.$der"));
    assert!(gen.functions.contains_key("P.f.$der.$der"));
    assert_eq!(gen.fder["P.f.$der"].1, vec![true, false, true]);
    // the names of the second derivative do not collide with those of the first
    let dd = &gen.functions["P.f.$der.$der"];
    let mut all = names(&dd.inputs);
    all.extend(names(&dd.outputs));
    all.extend(names(&dd.locals));
    assert_eq!(names(&dd.inputs), ["x", "n", "$d1_x", "$d2_x", "$d2_$d1_x"]);
    let distinct: HashSet<&String> = all.iter().collect();
    assert_eq!(distinct.len(), all.len(), "{all:?}");
    // recursion and an external function without annotation: no derivative
    assert!(!gen.fder.contains_key("P.h"));
    assert!(!gen.fder.contains_key("P.e"));
    assert!(!gen.fder.contains_key("P.callsE"));
}

#[test]
fn annotated_functions_are_used_not_regenerated() {
    let functions = sample_functions();
    let mut annotated = DerivativeMap::default();
    annotated.insert("P.f".to_string(), ("P.fDer".to_string(), vec![true, false]));
    let gen = generate_derivatives(&functions, &annotated);
    assert!(!gen.fder.contains_key("P.f"));
    assert!(!gen.functions.contains_key("P.f.$der"));
    let FunctionBody::Algorithm(body) = &gen.functions["P.g.$der"].body else {
        panic!("algorithm body expected");
    };
    let mut called = Vec::new();
    for s in body {
        statement_calls(s, &mut called);
    }
    assert!(called.iter().any(|c| c == "P.fDer"), "{called:?}");
    // only what the program calls reaches it, with what that calls in turn
    let used = referenced_generated_functions(&gen.functions, ["P.g.$der".to_string()]);
    assert_eq!(used.keys().collect::<Vec<_>>(), ["P.g.$der"]);
}

#[test]
fn output_indices_skip_outputs_that_are_not_real() {
    let functions = sample_functions();
    let gen = generate_derivatives(&functions, &DerivativeMap::default());
    let mut fder = gen.fder.clone();
    fder.retain(|f, _| f == "P.f");
    let ix = derivative_output_indices(&functions, &gen.functions, &fder);
    assert_eq!(ix["P.f"], vec![Some(0), None]);
}

/// `fit(x, a)`: `c := e(a)` (an external function, no derivative), `y := c*x + x^2`; and
/// functions calling it with a literal and with a varying second argument.
fn functions_with_a_frozen_input() -> BTreeMap<String, Function> {
    use BinaryOp::*;
    let mut functions = sample_functions();
    let mut fit = function(
        "P.fit",
        vec![scalar("x", ScalarType::Real), scalar("a", ScalarType::Real)],
        vec![scalar("y", ScalarType::Real)],
        vec![
            assign("c", f1("P.e", v("a"))),
            assign(
                "y",
                bin(Add, bin(Mul, v("c"), v("x")), bin(Mul, v("x"), v("x"))),
            ),
        ],
    );
    fit.locals = vec![scalar("c", ScalarType::Real)];
    let literal = function(
        "P.fitOfLiteral",
        vec![scalar("x", ScalarType::Real)],
        vec![scalar("y", ScalarType::Real)],
        vec![assign("y", call("P.fit", vec![v("x"), Expr::Real(2.0)]))],
    );
    let varying = function(
        "P.fitOfVarying",
        vec![scalar("x", ScalarType::Real)],
        vec![scalar("y", ScalarType::Real)],
        vec![assign("y", call("P.fit", vec![v("x"), v("x")]))],
    );
    // a function without derivative (`P.h` is recursive) of a constant argument
    let constant_factor = function(
        "P.scaledByRecursion",
        vec![scalar("x", ScalarType::Real)],
        vec![scalar("y", ScalarType::Real)],
        vec![assign(
            "y",
            bin(Mul, v("x"), call("P.h", vec![Expr::Real(3.0)])),
        )],
    );
    // an output of a call without derivative on a local constant: zero derivative
    let mut partly_constant = function(
        "P.partlyConstant",
        vec![scalar("x", ScalarType::Real)],
        vec![scalar("z", ScalarType::Real), scalar("y", ScalarType::Real)],
        vec![
            assign("k", Expr::Real(2.0)),
            assign("y", f1("P.e", v("k"))),
            assign("z", bin(Mul, v("x"), v("x"))),
        ],
    );
    partly_constant.locals = vec![scalar("k", ScalarType::Real)];
    for f in [fit, literal, varying, constant_factor, partly_constant] {
        functions.insert(f.name.clone(), f);
    }
    functions
}

#[test]
fn inputs_read_only_by_calls_without_derivative_are_frozen() {
    let functions = functions_with_a_frozen_input();
    let gen = generate_derivatives(&functions, &DerivativeMap::default());
    // `a` reaches the output only through `e(a)`: frozen, its derivative must be zero
    assert_eq!(gen.fder["P.fit"].1, vec![true, true]);
    assert_eq!(gen.zero_required["P.fit"], vec![false, true]);
    let d = &gen.functions["P.fit.$der"];
    let names = |vs: &[FunctionVar]| vs.iter().map(|v| v.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&d.inputs), ["x", "a", "$d1_x", "$d1_a"]);
    // `c` depends on the frozen input only: no derivative variable
    assert_eq!(names(&d.locals), ["y", "c"]);
    let FunctionBody::Algorithm(body) = &d.body else {
        panic!("algorithm body expected");
    };
    // the derivative asserts the frozen direction is zero, first
    let Statement::Assert { condition, .. } = &body[0] else {
        panic!("an assertion first, got {:#?}", body[0]);
    };
    let frozen_direction = |da: f64| {
        let env: HashMap<String, f64> = [("$d1_a".to_string(), da)].into_iter().collect();
        eval(condition, &env)
    };
    assert_eq!((frozen_direction(0.0), frozen_direction(0.5)), (1.0, 0.0));
    // d(c*x + x^2) = c dx + 2 x dx: no term in $d1_a
    let derivative = body
        .iter()
        .find_map(|s| match s {
            Statement::Assign { target, value, .. } if *target == v("$d1_y") => Some(value),
            _ => None,
        })
        .expect("an assignment of $d1_y");
    let env: HashMap<String, f64> = [("x", 3.0), ("c", 0.5), ("$d1_x", 1.0)]
        .into_iter()
        .map(|(k, x)| (k.to_string(), x))
        .collect();
    assert_eq!(eval(derivative, &env), 0.5 + 6.0);
    // a caller passing a literal gets a derivative; one varying the frozen input does not,
    // and neither does `e(a)*x` read along every input (`callsE`)
    assert!(gen.fder.contains_key("P.fitOfLiteral"));
    assert!(!gen.zero_required.contains_key("P.fitOfLiteral"));
    assert!(!gen.fder.contains_key("P.fitOfVarying"));
    assert!(!gen.fder.contains_key("P.callsE"));
    // `x * h(3)` needs no derivative of `h`, and freezes nothing
    assert!(gen.fder.contains_key("P.scaledByRecursion"));
    assert!(!gen.zero_required.contains_key("P.scaledByRecursion"));
    // `y := e(k)` with `k := 2`: `y` is constant, its derivative output is set to zero
    let FunctionBody::Algorithm(body) = &gen.functions["P.partlyConstant.$der"].body else {
        panic!("algorithm body expected");
    };
    assert!(
        body.contains(&assign("$d1_y", Expr::Real(0.0))),
        "{body:#?}"
    );
    assert!(!gen.zero_required.contains_key("P.partlyConstant"));
}
