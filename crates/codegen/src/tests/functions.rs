//! The function interpreter, exercised through model blocks that call user functions.

use super::*;
use moss_frontend::flat::{FunctionBody, Subscript};

fn int_var(name: &str) -> FunctionVar {
    fvar(name, ScalarType::Integer, vec![], None)
}

fn while_(cond: Expr, body: Vec<Statement>) -> Statement {
    Statement::While {
        condition: cond,
        body,
        origin: Origin::default(),
    }
}

fn if_(cond: Expr, then: Vec<Statement>, else_: Vec<Statement>) -> Statement {
    Statement::If {
        branches: vec![(cond, then)],
        else_,
        origin: Origin::default(),
    }
}

fn for_(var: &str, start: Expr, stop: Expr, body: Vec<Statement>) -> Statement {
    Statement::For {
        var: var.into(),
        range: Expr::Range {
            start: Box::new(start),
            step: None,
            stop: Box::new(stop),
        },
        body,
        origin: Origin::default(),
    }
}

/// Evaluate `func(args)` as the binding of one model variable.
fn eval_call(funcs: Vec<Function>, func: &str, args: Vec<PExpr>) -> Result<f64, String> {
    let mut b = B::new();
    for f in funcs {
        b.p.functions.insert(f.name.clone(), f);
    }
    let y = b.real("y", 0.0);
    b.assign(y, call(func, args));
    let mut m = Interpreter::new(b.p).map_err(|e| e.to_string())?;
    m.initialize(0.0).map_err(|e| e.to_string())?;
    Ok(value(&m, y))
}

/// Linear interpolation in a table with rows (u, y), as a Modelica function would do it.
fn interpolate() -> Function {
    use BinaryOp::*;
    let t = |i: Expr, j: i64| fidx("table", vec![i, fi(j)]);
    let ip1 = || fb(Add, fv("i"), fi(1));
    function(
        "Tables.interpolate",
        vec![
            fvar("table", ScalarType::Real, vec![None, Some(fi(2))], None),
            real_in("u"),
        ],
        vec![real_in("y")],
        vec![int_var("i"), int_var("n")],
        vec![
            set(fv("n"), fcall("size", vec![fv("table"), fi(1)])),
            set(fv("i"), fi(1)),
            while_(
                fb(
                    And,
                    fb(Lt, fv("i"), fb(Sub, fv("n"), fi(1))),
                    fb(Gt, fv("u"), t(ip1(), 1)),
                ),
                vec![set(fv("i"), ip1())],
            ),
            set(
                fv("y"),
                fb(
                    Add,
                    t(fv("i"), 2),
                    fb(
                        Div,
                        fb(
                            Mul,
                            fb(Sub, t(ip1(), 2), t(fv("i"), 2)),
                            fb(Sub, fv("u"), t(fv("i"), 1)),
                        ),
                        fb(Sub, t(ip1(), 1), t(fv("i"), 1)),
                    ),
                ),
            ),
        ],
    )
}

fn table_arg() -> PExpr {
    let row = |a: f64, b: f64| PExpr::Array(vec![c(a), c(b)]);
    PExpr::Array(vec![
        row(0.0, 0.0),
        row(1.0, 10.0),
        row(3.0, 30.0),
        row(4.0, 0.0),
    ])
}

#[test]
fn interpolation_over_a_table() {
    for (u, want) in [(0.5, 5.0), (2.0, 20.0), (3.5, 15.0), (5.0, -30.0)] {
        let y = eval_call(
            vec![interpolate()],
            "Tables.interpolate",
            vec![table_arg(), c(u)],
        )
        .expect("runs");
        assert!(close(y, want, 1e-12), "u={u}: {y} != {want}");
    }
}

#[test]
fn recursion_integer_arithmetic_and_return() {
    use BinaryOp::*;
    // fact(n) = if n <= 1 then 1 else n * fact(n - 1), with an early return
    let fact = function(
        "M.fact",
        vec![int_var("n")],
        vec![int_var("r")],
        vec![],
        vec![
            set(fv("r"), fi(1)),
            if_(
                fb(Le, fv("n"), fi(1)),
                vec![Statement::Return {
                    origin: Origin::default(),
                }],
                vec![],
            ),
            set(
                fv("r"),
                fb(Mul, fv("n"), fcall("M.fact", vec![fb(Sub, fv("n"), fi(1))])),
            ),
        ],
    );
    assert_eq!(
        eval_call(vec![fact], "M.fact", vec![c(10.0)]),
        Ok(3628800.0)
    );
}

#[test]
fn runaway_recursion_is_reported() {
    let f = function(
        "M.loop",
        vec![real_in("x")],
        vec![real_in("y")],
        vec![],
        vec![set(fv("y"), fcall("M.loop", vec![fv("x")]))],
    );
    let e = eval_call(vec![f], "M.loop", vec![c(1.0)]).expect_err("depth");
    assert!(e.contains("M.loop") && e.contains("recursion"), "{e}");
}

#[test]
fn dynamic_arrays_loops_break_and_builtins() {
    use BinaryOp::*;
    // v[n] filled with squares; w := cat(1, v, {100}); sum over w until an element > 50
    let f = function(
        "M.f",
        vec![int_var("n")],
        vec![real_in("s")],
        vec![
            fvar("v", ScalarType::Real, vec![Some(fv("n"))], None),
            fvar("w", ScalarType::Real, vec![None], None),
        ],
        vec![
            for_(
                "i",
                fi(1),
                fv("n"),
                vec![set(fidx("v", vec![fv("i")]), fb(Pow, fv("i"), fi(2)))],
            ),
            set(
                fv("w"),
                fcall("cat", vec![fi(1), fv("v"), Expr::Array(vec![fr(100.0)])]),
            ),
            set(fv("s"), fr(0.0)),
            for_(
                "k",
                fi(1),
                fcall("size", vec![fv("w"), fi(1)]),
                vec![
                    if_(
                        fb(Gt, fidx("w", vec![fv("k")]), fr(50.0)),
                        vec![Statement::Break {
                            origin: Origin::default(),
                        }],
                        vec![],
                    ),
                    set(fv("s"), fb(Add, fv("s"), fidx("w", vec![fv("k")]))),
                ],
            ),
            // plus sum(v) + max(v) + v * v (dot product)
            set(
                fv("s"),
                fb(
                    Add,
                    fv("s"),
                    fb(
                        Add,
                        fcall("sum", vec![fv("v")]),
                        fb(Add, fcall("max", vec![fv("v")]), fb(Mul, fv("v"), fv("v"))),
                    ),
                ),
            ),
        ],
    );
    // n = 8: squares 1..64; before 64 > 50 stops at 49: 1+4+9+16+25+36+49 = 140
    // sum = 204, max = 64, dot = sum i^4 = 8772
    assert_eq!(
        eval_call(vec![f], "M.f", vec![c(8.0)]),
        Ok(140.0 + 204.0 + 64.0 + 8772.0)
    );
}

#[test]
fn matrices_slices_and_array_builtins() {
    use BinaryOp::*;
    // A = identity(3)*2 + outerProduct({1,2,3},{1,1,1}); y = transpose(A)[3,1] + sum(A[:, 2]) + size(fill(0, 2, 5), 2)
    let f = function(
        "M.g",
        vec![real_in("x")],
        vec![real_in("y")],
        vec![fvar(
            "A",
            ScalarType::Real,
            vec![Some(fi(3)), Some(fi(3))],
            None,
        )],
        vec![
            set(
                fv("A"),
                fb(
                    Add,
                    fb(Mul, fcall("identity", vec![fi(3)]), fv("x")),
                    fcall(
                        "outerProduct",
                        vec![
                            Expr::Array(vec![fi(1), fi(2), fi(3)]),
                            Expr::Array(vec![fi(1), fi(1), fi(1)]),
                        ],
                    ),
                ),
            ),
            set(
                fv("y"),
                fb(
                    Add,
                    fb(
                        Add,
                        Expr::Var {
                            name: "A".into(),
                            subscripts: vec![Subscript::Index(fi(1)), Subscript::Index(fi(3))],
                        },
                        fcall(
                            "sum",
                            vec![Expr::Var {
                                name: "A".into(),
                                subscripts: vec![Subscript::All, Subscript::Index(fi(2))],
                            }],
                        ),
                    ),
                    fcall(
                        "size",
                        vec![fcall("fill", vec![fi(0), fi(2), fi(5)]), fi(2)],
                    ),
                ),
            ),
        ],
    );
    // A[1,3] = 1; column 2 = (1, 2+2, 3) -> 8; size = 5
    assert_eq!(eval_call(vec![f], "M.g", vec![c(2.0)]), Ok(1.0 + 8.0 + 5.0));
}

#[test]
fn default_inputs_and_multiple_outputs_in_expressions() {
    use BinaryOp::*;
    let f = function(
        "M.h",
        vec![
            real_in("x"),
            fvar("k", ScalarType::Real, vec![], Some(fr(3.0))),
        ],
        vec![real_in("a"), real_in("b")],
        vec![],
        vec![
            set(fv("a"), fb(Mul, fv("x"), fv("k"))),
            set(fv("b"), fb(Sub, fv("a"), fi(1))),
        ],
    );
    // tuple assignment inside another function, using the default k
    let g = function(
        "M.useH",
        vec![real_in("x")],
        vec![real_in("y")],
        vec![real_in("p"), real_in("q")],
        vec![
            Statement::TupleAssign {
                targets: vec![Some(fv("p")), Some(fv("q"))],
                value: fcall("M.h", vec![fv("x")]),
                origin: Origin::default(),
            },
            set(fv("y"), fb(Add, fb(Mul, fv("p"), fi(100)), fv("q"))),
        ],
    );
    assert_eq!(
        eval_call(vec![f, g], "M.useH", vec![c(2.0)]),
        Ok(600.0 + 5.0)
    );
}

#[test]
fn string_functions_and_assert_in_function() {
    use BinaryOp::*;
    let f = function(
        "M.check",
        vec![real_in("x")],
        vec![real_in("y")],
        vec![],
        vec![
            Statement::Assert {
                condition: fb(Ge, fv("x"), fr(0.0)),
                message: fb(
                    Add,
                    Expr::String("negative input x = ".into()),
                    fcall("String", vec![fv("x")]),
                ),
                level: AssertLevel::Error,
                origin: Origin::default(),
            },
            set(fv("y"), fcall("sqrt", vec![fv("x")])),
        ],
    );
    assert_eq!(eval_call(vec![f.clone()], "M.check", vec![c(9.0)]), Ok(3.0));
    let e = eval_call(vec![f], "M.check", vec![c(-0.25)]).expect_err("assert");
    assert!(
        e.contains("M.check") && e.contains("negative input x = -0.25"),
        "{e}"
    );
}

#[test]
fn external_c_math_functions() {
    let ext = |name: &str, cname: &str| Function {
        body: FunctionBody::External {
            language: "C".into(),
            name: cname.into(),
            output: Some("y".into()),
            args: vec![fv("u")],
            code: Default::default(),
        },
        ..function(name, vec![real_in("u")], vec![real_in("y")], vec![], vec![])
    };
    let y = eval_call(vec![ext("M.mysin", "sin")], "M.mysin", vec![c(0.5)]).expect("libm");
    assert_eq!(y, 0.5f64.sin());
    let builtin = Function {
        body: FunctionBody::External {
            language: "builtin".into(),
            name: "exp".into(),
            output: Some("y".into()),
            args: vec![fv("u")],
            code: Default::default(),
        },
        ..function(
            "Modelica.Math.exp",
            vec![real_in("u")],
            vec![real_in("y")],
            vec![],
            vec![],
        )
    };
    let y = eval_call(vec![builtin], "Modelica.Math.exp", vec![c(1.0)]).expect("builtin");
    assert_eq!(y, 1f64.exp());
    let e = eval_call(vec![ext("M.custom", "my_solver")], "M.custom", vec![c(0.5)])
        .expect_err("unsupported");
    assert!(e.contains("M.custom") && e.contains("my_solver"), "{e}");
    // an unsupported function that is never called is not an error
    let mut b = B::new();
    b.p.functions
        .insert("M.custom".into(), ext("M.custom", "my_solver"));
    assert!(Interpreter::new(b.p).is_ok());
}

#[test]
fn value_level_string_formatting() {
    use crate::value::{format_real, to_modelica_string, Value};
    assert_eq!(format_real(1.25, 6), "1.25");
    assert_eq!(format_real(1.0 / 3.0, 6), "0.333333");
    assert_eq!(format_real(1.5e-7, 6), "1.5e-07");
    assert_eq!(format_real(123456789.0, 6), "1.23457e+08");
    assert_eq!(to_modelica_string(&Value::Int(-3), 6), "-3");
    assert_eq!(to_modelica_string(&Value::Bool(true), 6), "true");
}

#[test]
fn output_selection_of_a_multi_output_call() {
    use BinaryOp::*;
    let f = function(
        "M.two",
        vec![real_in("x")],
        vec![real_in("a"), real_in("b")],
        vec![],
        vec![
            set(fv("a"), fb(Add, fv("x"), fi(1))),
            set(fv("b"), fb(Mul, fv("x"), fi(3))),
        ],
    );
    let second = call("$output", vec![c(1.0), call("M.two", vec![c(2.0)])]);
    let first = call("M.two", vec![c(2.0)]);
    assert_eq!(eval_call(vec![f.clone()], "M.two", vec![c(2.0)]), Ok(3.0));
    let mut b = B::new();
    b.p.functions.insert(f.name.clone(), f);
    let y = b.real("y", 0.0);
    b.assign(y, add(mul(second, c(10.0)), first));
    let m = b.init(0.0);
    assert_eq!(value(&m, y), 63.0);
}

#[test]
fn local_bindings_and_enumeration_defaults() {
    use moss_frontend::flat::Subscript;
    use std::sync::Arc;
    let mode_ty = ScalarType::Enumeration {
        name: Arc::from("T.Mode"),
        literals: vec![Arc::from("First"), Arc::from("Last")],
    };
    let last = Expr::Enum {
        ty: Arc::from("T.Mode"),
        literal: Arc::from("Last"),
        index: 2,
    };
    let elem = |row: Expr| Expr::Var {
        name: "table".into(),
        subscripts: vec![Subscript::Index(row), Subscript::Index(fi(2))],
    };
    let f = function(
        "T.pick",
        vec![
            fvar("table", ScalarType::Real, vec![None, None], None),
            fvar("mode", mode_ty, vec![], Some(last.clone())),
        ],
        vec![real_in("y")],
        vec![fvar(
            "n",
            ScalarType::Integer,
            vec![],
            Some(fcall("size", vec![fv("table"), fi(1)])),
        )],
        vec![Statement::If {
            branches: vec![(
                fb(BinaryOp::Eq, fv("mode"), last),
                vec![set(fv("y"), elem(fv("n")))],
            )],
            else_: vec![set(fv("y"), elem(fi(1)))],
            origin: Origin::default(),
        }],
    );
    let row = |a: f64, b: f64| PExpr::Array(vec![c(a), c(b)]);
    let table = || PExpr::Array(vec![row(0.0, 5.0), row(1.0, 7.0), row(2.0, 9.0)]);
    // default mode = Last
    assert_eq!(eval_call(vec![f.clone()], "T.pick", vec![table()]), Ok(9.0));
    assert_eq!(
        eval_call(vec![f.clone()], "T.pick", vec![table(), c(2.0)]),
        Ok(9.0)
    );
    assert_eq!(eval_call(vec![f], "T.pick", vec![table(), c(1.0)]), Ok(5.0));
}

#[test]
fn table_of_parameters_as_argument() {
    // the same table as `table_arg`, but every entry is a parameter slot (as after
    // scalarization of `parameter Real table[:, :]`)
    let mut b = B::new();
    b.p.functions
        .insert("Tables.interpolate".into(), interpolate());
    let data = [(0.0, 0.0), (1.0, 10.0), (3.0, 30.0), (4.0, 0.0)];
    let rows: Vec<PExpr> = data
        .iter()
        .enumerate()
        .map(|(i, &(u, y))| {
            let pu = b.param(&format!("table[{},1]", i + 1), u);
            let py = b.param(&format!("table[{},2]", i + 1), y);
            PExpr::Array(vec![v(pu), v(py)])
        })
        .collect();
    let (x, dx) = b.state("x", 0.0);
    b.assign(
        dx,
        call("Tables.interpolate", vec![PExpr::Array(rows), v(x)]),
    );
    let mut m = b.build();
    m.set_parameter("table[4,2]", 60.0).expect("parameter");
    m.initialize(0.0).expect("init");
    let mut d = [0.0];
    m.derivatives(0.0, &[3.5], &mut d).expect("eval");
    assert!(close(d[0], 45.0, 1e-12), "{d:?}");
}

/// A function without outputs (a check made only of asserts) called as a statement:
/// the call runs for its asserts and returns nothing.
#[test]
fn output_less_function_called_as_a_statement() {
    use BinaryOp::*;
    let check = function(
        "M.check",
        vec![real_in("x")],
        vec![],
        vec![],
        vec![Statement::Assert {
            condition: fb(Gt, fv("x"), fr(0.0)),
            message: Expr::String("x must be positive".into()),
            level: AssertLevel::Error,
            origin: Origin::default(),
        }],
    );
    let wrap = function(
        "M.wrap",
        vec![real_in("x")],
        vec![real_in("y")],
        vec![],
        vec![
            Statement::Call {
                func: "M.check".into(),
                args: vec![fv("x")],
                origin: Origin::default(),
            },
            set(fv("y"), fb(Mul, fr(2.0), fv("x"))),
        ],
    );
    let funcs = vec![check, wrap];
    assert_eq!(eval_call(funcs.clone(), "M.wrap", vec![c(1.5)]), Ok(3.0));
    let e = eval_call(funcs, "M.wrap", vec![c(-1.0)]).expect_err("assert fires");
    assert!(e.contains("x must be positive"), "{e}");
}
