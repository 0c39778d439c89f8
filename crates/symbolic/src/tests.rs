//! End-to-end tests of the symbolic stage on small hand-built flat models.

use crate::api::translate_here;
use crate::dump;
use crate::program::{Block, CausalProgram, PExpr, VarKind};
use crate::testutil::ModelBuilder;
use moss_frontend::flat::{ScalarType, StateSelect};

fn ok(b: &ModelBuilder) -> CausalProgram {
    match translate_here(&b.flat) {
        Ok(p) => p,
        Err(d) => panic!("translation failed: {d:#?}"),
    }
}

fn err(b: &ModelBuilder) -> String {
    match translate_here(&b.flat) {
        Ok(p) => panic!(
            "expected an error, got a program:\n{}",
            dump::program_text(&p)
        ),
        Err(d) => d
            .iter()
            .map(|d| d.render(&moss_syntax::SourceMap::new()))
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

fn state_names(p: &CausalProgram) -> Vec<&str> {
    p.states
        .iter()
        .map(|&s| p.vars[s as usize].name.as_str())
        .collect()
}

fn bouncing_ball() -> ModelBuilder {
    let mut b = ModelBuilder::new();
    b.vars("h v", "")
        .start("h", 1.0)
        .fixed("h")
        .start("v", 0.0)
        .fixed("v");
    b.params("e", 0.8).params("g", 9.81);
    b.eq("der(h) = v").eq("der(v) = -g");
    b.when("h < 0", &["reinit(v, -e*pre(v))"]);
    b
}

#[test]
fn bouncing_ball_has_zero_crossing_and_reinit() {
    let p = ok(&bouncing_ball());
    assert_eq!(state_names(&p), vec!["h", "v"]);
    assert_eq!(p.zero_crossings.len(), 1);
    assert_eq!(p.zero_crossings[0].description, "h < 0");
    assert!(p.zero_crossings[0].time_event.is_none());
    let text = dump::program_text(&p);
    // the condition slot is computed before the when block that reads it
    let slot = text.find("$whenCond1 := (h < 0)@zc0").expect(&text);
    let when = text.find("when $whenCond1:").expect(&text);
    assert!(slot < when, "{text}");
    assert!(
        text.contains("reinit(v, -((e*pre(v))))") || text.contains("reinit(v, "),
        "{text}"
    );
    let Some(Block::When { branches }) = p.blocks.iter().find(|b| matches!(b, Block::When { .. }))
    else {
        panic!("no when block")
    };
    assert!(matches!(branches[0].body[0], Block::Reinit { .. }));
    assert!(!branches[0].fires_at_initial);
    // initialization fixes both states from their start values
    assert!(p.report.warnings.is_empty(), "{:?}", p.report.warnings);
    let all = dump::program_text(&p);
    let init = &all[..all.find("simulation blocks").unwrap_or(all.len())];
    assert!(init.contains("h := 1") && init.contains("v := 0"), "{init}");
    // relations are live during initialization: their operands are computed first
    let h = init.find("h := 1").unwrap_or(usize::MAX);
    let c = init.find("$whenCond1 :=").unwrap_or(0);
    assert!(h < c, "{init}");
}

#[test]
fn time_relations_become_time_events() {
    let mut b = ModelBuilder::new();
    b.vars("y", "").params("t0", 0.5);
    b.discrete("n", ScalarType::Integer);
    b.eq("y = if time < t0 then 0 else 1");
    b.when("time >= 2*t0", &["n = pre(n) + 1"]);
    let p = ok(&b);
    assert_eq!(p.zero_crossings.len(), 2);
    for z in &p.zero_crossings {
        assert!(z.time_event.is_some(), "{}", z.description);
    }
    let n = p.var_by_name("n").unwrap();
    assert_eq!(p.vars[n as usize].kind, VarKind::Discrete);
}

#[test]
fn discrete_only_relations_do_not_create_zero_crossings() {
    let mut b = ModelBuilder::new();
    b.vars("x", "").start("x", 0.0).fixed("x");
    b.discrete("k", ScalarType::Integer);
    b.eq("der(x) = if k > 2 then 1 else 0");
    b.when("sample(0, 0.1)", &["k = pre(k) + 1"]);
    let p = ok(&b);
    assert!(p.zero_crossings.is_empty());
    assert_eq!(p.samples.len(), 1);
}

fn gear() -> ModelBuilder {
    let mut b = ModelBuilder::new();
    b.vars("phi1 w1 a1 tau1 phi2 w2 a2 tau2", "");
    b.params("J1", 1.0).params("J2", 2.0).params("ratio", 3.0);
    b.eq("der(phi1) = w1")
        .eq("der(w1) = a1")
        .eq("J1*a1 = 1 - tau1");
    b.eq("der(phi2) = w2").eq("der(w2) = a2").eq("J2*a2 = tau2");
    b.eq("phi1 = ratio*phi2").eq("0 = ratio*tau1 - tau2");
    b
}

#[test]
fn gear_between_inertias_is_reduced_with_dummy_derivatives() {
    let mut b = gear();
    b.start("phi1", 0.0)
        .fixed("phi1")
        .start("w1", 0.0)
        .fixed("w1");
    let p = ok(&b);
    assert_eq!(p.states.len(), 2, "{:?}", state_names(&p));
    assert_eq!(p.report.index_before_reduction, 3);
    assert_eq!(
        p.report.dummy_derivatives.len(),
        4,
        "{:?}",
        p.report.dummy_derivatives
    );
    // the constraint is linear with constant coefficients: a linear block, no tearing
    assert!(p.report.warnings.is_empty(), "{:?}", p.report.warnings);
    assert_eq!(p.derivatives.len(), 2);
}

#[test]
fn gear_with_both_sides_fixed_drops_a_start_equation() {
    let mut b = gear();
    for v in ["phi1", "w1", "phi2", "w2"] {
        b.start(v, 0.0).fixed(v);
    }
    let p = ok(&b);
    let w = p.report.warnings.join("\n");
    assert!(w.contains("over-determined"), "{w}");
    assert!(w.contains("phi") && w.contains("w"), "{w}");
    // the dropped equations are checked after initialization
    let checks = p
        .init_blocks
        .iter()
        .filter(|b| matches!(b, Block::Assert { .. }))
        .count();
    assert_eq!(checks, 2, "{}", dump::program_text(&p));
}

#[test]
fn state_select_prefer_picks_the_states() {
    let mut b = gear();
    b.state_select("phi2", StateSelect::Prefer);
    b.state_select("w2", StateSelect::Prefer);
    let p = ok(&b);
    let s = state_names(&p);
    assert!(s.contains(&"phi2") && s.contains(&"w2"), "{s:?}");
}

/// A flux density the model differentiates (`der(B)`, about 1 T) tied to a flux that it
/// never differentiates (`Phi = A*B`, 1e-4 Wb) and to a flux linkage: index reduction
/// introduces `der(Phi)`, which must become the dummy, so that the state is a variable the
/// modeller differentiated (here `B`, declared before `Psi`) rather than `Phi`, whose
/// absolute tolerance of its nominal 1 would be 1 % of its size.
#[test]
fn states_are_variables_the_model_differentiates() {
    let mut b = ModelBuilder::new();
    b.vars("Phi B H Psi", "");
    b.params("N", 10.0).params("A", 1e-4);
    b.eq("der(Psi) = sin(time) - Psi")
        .eq("Psi = N*Phi")
        .eq("Phi = A*B")
        .eq("der(B) = H");
    let p = ok(&b);
    assert_eq!(state_names(&p), ["B"], "{}", dump::program_text(&p));
}

#[test]
fn two_masses_joined_by_a_rod() {
    let mut b = ModelBuilder::new();
    b.vars("x1 v1 acc1 x2 v2 acc2 f", "");
    b.params("m1", 1.0).params("m2", 2.0).params("L", 1.0);
    b.eq("der(x1) = v1").eq("der(v1) = acc1").eq("m1*acc1 = f");
    b.eq("der(x2) = v2")
        .eq("der(v2) = acc2")
        .eq("m2*acc2 = 1 - f");
    b.eq("x2 - x1 = L");
    let p = ok(&b);
    assert_eq!(p.states.len(), 2, "{:?}", state_names(&p));
    assert_eq!(p.report.index_before_reduction, 3);
    let w = p.report.warnings.join("\n");
    assert!(w.contains("under-determined"), "{w}");
}

#[test]
fn cartesian_pendulum_gets_dynamic_state_sets() {
    let mut b = ModelBuilder::new();
    b.vars("x y vx vy F", "");
    b.params("m", 1.0).params("g", 9.81).params("L", 1.0);
    b.eq("der(x) = vx").eq("der(y) = vy");
    b.eq("m*der(vx) = -F*x").eq("m*der(vy) = -F*y - m*g");
    b.eq("x^2 + y^2 = L^2");
    let p = ok(&b);
    // one set for the positions (x, y) and one for the velocities (der(x), der(y)), each
    // with one state chosen at run time
    let sets = &p.report.state_sets;
    assert_eq!(sets.len(), 2, "{sets:?}");
    let mut candidates: Vec<Vec<String>> = sets.iter().map(|s| s.candidates.clone()).collect();
    candidates.sort();
    assert_eq!(
        candidates,
        vec![
            vec!["der(x)".to_string(), "der(y)".to_string()],
            vec!["x".to_string(), "y".to_string()]
        ]
    );
    assert!(sets.iter().all(|s| s.states.len() == 1));
    assert!(sets
        .iter()
        .any(|s| s.constraints.iter().any(|c| c.contains("x^2 + y^2"))));
    // the states are the sets' own variables; x and y are computed from them
    let s = state_names(&p);
    assert_eq!(s.len(), 2, "{s:?}");
    assert!(s.iter().all(|n| n.starts_with("$stateSet")), "{s:?}");
    assert_eq!(p.report.index_before_reduction, 3);
}

#[test]
fn a_rotation_matrix_constraint_needs_no_choice() {
    // two constraints through a rotation matrix over exactly two candidates: the
    // coefficients depend on time, but there is nothing to choose (both derivatives are
    // dummies, the matrix is regular), so no state set and no error
    let mut b = ModelBuilder::new();
    b.vars("b1 b2 u1 u2", "");
    b.params("w", 3.0);
    b.eq("der(b1) = u1 - b1").eq("der(b2) = u2 - b2");
    b.eq("cos(w*time)*b1 - sin(w*time)*b2 = sin(time)");
    b.eq("sin(w*time)*b1 + cos(w*time)*b2 = 0");
    let p = ok(&b);
    assert!(p.report.state_sets.is_empty(), "{:?}", p.report.state_sets);
    assert!(state_names(&p).is_empty(), "{:?}", state_names(&p));
    assert_eq!(p.report.index_before_reduction, 2);
}

#[test]
fn structurally_singular_model_is_diagnosed() {
    let mut b = ModelBuilder::new();
    b.vars("a b c", "");
    b.eq("a = time").eq("a = 2").eq("b + c = time");
    let e = err(&b);
    assert!(e.contains("structurally singular"), "{e}");
    assert!(
        e.contains("equation: a = time") && e.contains("equation: a = 2"),
        "{e}"
    );
    assert!(e.contains("not determined: b, c"), "{e}");
    assert!(e.contains("help:"), "{e}");
}

#[test]
fn unbalanced_model_gives_counts() {
    let mut b = ModelBuilder::new();
    b.vars("a b", "");
    b.eq("a = time");
    let e = err(&b);
    assert!(e.contains("1 equations, 2 unknowns"), "{e}");
    assert!(e.contains("not determined: b"), "{e}");
}

/// A linear loop that tears into fewer unknowns (dividing only by constants) is solved in torn
/// form with its exact constant Jacobian; the values satisfy the equations.
#[test]
fn linear_loop_is_torn_into_fewer_unknowns() {
    let mut b = ModelBuilder::new();
    b.vars("x y", "");
    b.eq("x + 2*y = time").eq("3*x - y = cos(time)");
    let p = ok(&b);
    let text = dump::program_text(&p);
    assert_eq!(p.report.loops_before_tearing, vec![2], "{text}");
    assert_eq!(p.report.loops_after_tearing, vec![1], "{text}");
    let Some(Block::Nonlinear {
        iteration_vars,
        jacobian: Some(jacobian),
        linear: true,
        ..
    }) = p.blocks.first()
    else {
        panic!("{text}");
    };
    assert_eq!(iteration_vars.len(), 1, "{text}");
    assert!(
        jacobian
            .iter()
            .all(|(_, _, e)| matches!(e, crate::program::PExpr::Const(_))),
        "the Jacobian of a linear loop with constant coefficients is constant: {text}"
    );
    let mut ev = crate::testeval::Eval::new(&p);
    ev.time = 0.7;
    ev.set("x", 123.0);
    ev.run(&p.blocks);
    let (x, y) = (ev.get("x"), ev.get("y"));
    assert!((x + 2.0 * y - 0.7).abs() < 1e-9, "{text}");
    assert!((3.0 * x - y - 0.7f64.cos()).abs() < 1e-9, "{text}");
}

/// A linear loop whose coefficients all vary (no safe division for tearing) stays one linear
/// system in all its unknowns.
#[test]
fn linear_loop_with_varying_coefficients_becomes_one_linear_block() {
    let mut b = ModelBuilder::new();
    b.vars("x y", "");
    b.eq("(2 + sin(time))*x + (1 + time)*y = 1")
        .eq("(1 + time^2)*x + (3 + cos(time))*y = 2");
    let p = ok(&b);
    let Some(Block::Linear { vars, matrix, rhs }) = p.blocks.first() else {
        panic!("{}", dump::program_text(&p));
    };
    assert_eq!(vars.len(), 2);
    assert_eq!(matrix.len(), 4);
    assert_eq!(rhs.len(), 2);
}

#[test]
fn nonlinear_loop_is_torn_to_one_iteration_variable() {
    let mut b = ModelBuilder::new();
    b.vars("x y z", "");
    b.eq("x = y^3 + time")
        .eq("y = exp(-x) + z")
        .eq("z = sin(x*y)");
    let p = ok(&b);
    assert_eq!(p.report.loops_before_tearing, vec![3]);
    assert_eq!(p.report.loops_after_tearing, vec![1]);
    let Some(Block::Nonlinear {
        iteration_vars,
        inner,
        residuals,
        jacobian,
        linear: false,
        ..
    }) = p.blocks.first()
    else {
        panic!("{}", dump::program_text(&p));
    };
    assert_eq!(
        (iteration_vars.len(), inner.len(), residuals.len()),
        (1, 2, 1)
    );
    assert_eq!(jacobian.as_ref().map(|j| j.len()), Some(1));
}

#[test]
fn implicit_scalar_equation_uses_newton_with_derivative() {
    let mut b = ModelBuilder::new();
    b.vars("x", "");
    b.eq("x + exp(x) = time");
    let p = ok(&b);
    assert!(matches!(
        p.blocks[0],
        Block::SolveScalar {
            derivative: Some(_),
            ..
        }
    ));
}

#[test]
fn friction_like_mixed_loop_sorts_without_algebraic_loop() {
    let mut b = ModelBuilder::new();
    b.vars("v a f", "").start("v", 0.0).fixed("v");
    b.params("m", 1.0).params("fc", 0.5).params("u", 1.0);
    b.discrete("locked startFwd", ScalarType::Boolean);
    b.eq("der(v) = a");
    b.eq("a = if locked then 0 else (u - f)/m");
    b.eq("f = if locked then u else fc");
    b.eq("startFwd = pre(locked) and f > fc");
    b.eq("locked = pre(locked) and not startFwd and v == 0");
    let p = ok(&b);
    assert!(
        p.report.loops_before_tearing.is_empty(),
        "{}",
        dump::program_text(&p)
    );
    assert_eq!(p.zero_crossings.len(), 2);
}

#[test]
fn under_determined_initialization_fixes_states_with_warning() {
    let mut b = ModelBuilder::new();
    b.vars("h v", "").start("h", 1.0);
    b.eq("der(h) = v").eq("der(v) = -9.81");
    let p = ok(&b);
    let w = p.report.warnings.join("\n");
    assert!(
        w.contains("under-determined") && w.contains("h = 1") && w.contains("v = 0"),
        "{w}"
    );
}

#[test]
fn steady_state_initial_equation_works() {
    let mut b = ModelBuilder::new();
    b.vars("x", "").params("k", 2.0);
    b.eq("der(x) = k - x");
    b.init_eq("der(x) = 0");
    let p = ok(&b);
    assert!(p.report.warnings.is_empty(), "{:?}", p.report.warnings);
    let text = dump::program_text(&p);
    assert!(
        text.contains("x := (k - der(x))") || text.contains("x :="),
        "{text}"
    );
}

#[test]
fn if_equation_with_unequal_branches_is_an_error() {
    let mut b = ModelBuilder::new();
    b.vars("y z", "");
    b.if_eq("time > 1", &["y = 1", "z = 2"], &["y = 2"]);
    let e = err(&b);
    assert!(e.contains("different numbers of equations (2, 1)"), "{e}");
}

#[test]
fn if_equation_becomes_if_expression() {
    let mut b = ModelBuilder::new();
    b.vars("y", "");
    b.if_eq("time > 1", &["y = 1"], &["y = 2"]);
    let p = ok(&b);
    let Block::Assign {
        expr: PExpr::If(..),
        ..
    } = &p.blocks[0]
    else {
        panic!("{}", dump::program_text(&p));
    };
    assert_eq!(p.zero_crossings.len(), 1);
}

#[test]
fn dependent_parameters_are_sorted() {
    let mut b = ModelBuilder::new();
    b.vars("x", "");
    b.param_expr("r", "2*q")
        .param_expr("q", "p + 1")
        .params("p", 1.0);
    b.eq("x = r*time");
    let p = ok(&b);
    let text = dump::program_text(&p);
    let q = text.find("q := (p + 1)").expect(&text);
    let r = text.find("r := (2*q)").expect(&text);
    assert!(q < r, "{text}");
    let pi = p.var_by_name("p").unwrap();
    assert_eq!(
        (p.vars[pi as usize].kind, p.vars[pi as usize].start),
        (VarKind::Parameter, 1.0)
    );
}

#[test]
fn aliases_are_reported_in_program() {
    let mut b = ModelBuilder::new();
    b.vars("x y", "").start("x", 1.0).fixed("x");
    b.eq("der(x) = -x").eq("y = -x");
    let p = ok(&b);
    assert_eq!(p.aliases.len(), 1);
    assert_eq!(p.aliases[0].name, "y");
    assert_eq!(p.aliases[0].scale, -1.0);
}

#[test]
fn missing_derivative_annotation_is_named() {
    let mut b = ModelBuilder::new();
    b.vars("x y", "");
    b.eq("y = myFun(time)").eq("x = der(y)");
    // make the function known so conversion does not complain about it
    let e = match translate_here(&b.flat) {
        Ok(_) => String::new(),
        Err(d) => format!("{d:?}"),
    };
    assert!(e.contains("myFun"), "{e}");
}

/// Chain of masses and springs (the benchmark model) at a small size.
#[test]
fn mass_spring_chain_translates() {
    let flat = crate::bench_support::chain(2000);
    let p = translate_here(&flat).unwrap_or_else(|d| panic!("{d:#?}"));
    assert_eq!(p.states.len(), 4000);
    assert!(p.report.loops_before_tearing.is_empty());
    // der(s[i]) depends on v[i]; der(v[i]) on s[i-1], s[i], s[i+1] (two at the ends)
    assert_eq!(p.jacobian_pattern.len(), 2000 + (3 * 2000 - 2));
}

#[test]
fn reinit_target_wins_alias_representative() {
    let mut b = ModelBuilder::new();
    b.vars("x y", "");
    b.eq("der(x) = 1").eq("y = x");
    b.when("y > 1", &["reinit(y, 0)"]);
    let p = ok(&b);
    assert_eq!(state_names(&p), vec!["y"]);
    assert_eq!(p.aliases[0].name, "x");
}

#[test]
fn reinit_of_a_non_state_is_an_error() {
    let mut b = ModelBuilder::new();
    b.vars("x y", "");
    b.eq("der(x) = 1").eq("y = x*x");
    b.when("x > 1", &["reinit(y, 0)"]);
    let e = err(&b);
    assert!(
        e.contains("reinit(y, ...)") && e.contains("not a state"),
        "{e}"
    );
}

#[test]
fn outputs_of_one_call_are_grouped_into_one_unit() {
    use moss_frontend::flat::{Equation, Expr, Origin};
    let mut b = ModelBuilder::new();
    b.vars("a c", "");
    let call = Expr::Call {
        func: "pkg.f".into(),
        args: vec![Expr::Time],
    };
    for (i, v) in ["a", "c"].iter().enumerate() {
        b.flat.equations.push(Equation::Equal {
            lhs: crate::testutil::parse(v),
            rhs: Expr::CallOutput {
                call: Box::new(call.clone()),
                index: i,
            },
            origin: Origin::default(),
        });
    }
    let p = ok(&b);
    assert_eq!(p.blocks.len(), 1, "{}", dump::program_text(&p));
    let Block::CallOutputs { outputs, func, .. } = &p.blocks[0] else {
        panic!("{}", dump::program_text(&p));
    };
    assert_eq!(func, "pkg.f");
    assert_eq!(outputs.len(), 2);
}

#[test]
fn when_with_elsewhen_and_initial_fires_at_initialization() {
    let mut b = ModelBuilder::new();
    b.vars("x", "").start("x", 0.0).fixed("x");
    b.discrete("m", ScalarType::Integer);
    b.eq("der(x) = 1");
    b.flat.equations.push(moss_frontend::flat::Equation::When {
        branches: vec![
            (
                crate::testutil::parse("initial()"),
                vec![crate::testutil::parse_equation("m = 5")],
            ),
            (
                crate::testutil::parse("x > 2"),
                vec![crate::testutil::parse_equation("m = pre(m) + 1")],
            ),
        ],
        origin: Default::default(),
    });
    let p = ok(&b);
    let Some(Block::When { branches }) = p.blocks.iter().find(|b| matches!(b, Block::When { .. }))
    else {
        panic!("{}", dump::program_text(&p));
    };
    assert_eq!(branches.len(), 2);
    assert!(branches[0].fires_at_initial && !branches[1].fires_at_initial);
    let init = dump::program_text(&p);
    assert!(init.contains("m := 5"), "{init}");
}

#[test]
fn alias_between_differentiated_variables_keeps_derivative_slots() {
    let mut b = ModelBuilder::new();
    b.vars("x y z", "").start("x", 1.0).fixed("x");
    b.eq("der(x) = -x").eq("y = 2*x").eq("z = der(y)");
    let p = ok(&b);
    assert_eq!(p.states.len(), 1);
    assert_eq!(p.derivatives.len(), 1);
    assert_eq!(p.vars[p.derivatives[0] as usize].kind, VarKind::Derivative);
}

#[test]
fn step_functions_of_continuous_arguments_change_only_at_events() {
    let mut b = ModelBuilder::new();
    b.vars("x y z", "").start("x", 0.0).fixed("x");
    b.eq("der(x) = 1").eq("y = floor(x)").eq("z = mod(x, 2)");
    let p = ok(&b);
    let text = dump::program_text(&p);
    // two helpers (floor(x), floor(x/2)), each guarded by two zero crossings
    assert_eq!(p.zero_crossings.len(), 4, "{text}");
    assert!(text.contains("y := $floor1"), "{text}");
    let h = p.var_by_name("$floor1").unwrap();
    assert_eq!(p.vars[h as usize].kind, VarKind::Discrete);
    // initialization computes the helpers directly
    let init = &text[..text.find("simulation blocks").unwrap_or(text.len())];
    assert!(init.contains("$floor1 := floor(x)"), "{init}");
}

/// A bearing friction between an inertia and a torque source, written like the flattened
/// MSL `PartialFriction` equations (mode logic with `pre`, start conditions on relations).
#[test]
fn msl_like_bearing_friction_gives_a_linear_loop_with_frozen_relations() {
    let mut b = ModelBuilder::new();
    b.vars("phi w a sa tau w_relfric a_relfric", "")
        .start("phi", 0.0)
        .fixed("phi")
        .start("w", 0.0)
        .fixed("w");
    b.params("J", 1.0)
        .params("tau0", 0.5)
        .params("tau0max", 0.6)
        .params("wsmall", 1e-3);
    b.discrete("mode", ScalarType::Integer);
    b.discrete(
        "locked startForward startBackward free",
        ScalarType::Boolean,
    );
    b.eq("w = der(phi)").eq("a = der(w)");
    b.eq("w_relfric = w").eq("a_relfric = a");
    b.eq("J*a = sin(time) - tau");
    b.eq("tau = if locked then sa else if startForward then tau0max else if startBackward then -tau0max else if pre(mode) == 1 then tau0 else -tau0");
    b.eq("a_relfric = if locked then 0 else if free then sa else if startForward then sa - tau0max else if startBackward then sa + tau0max else if pre(mode) == 1 then sa - tau0max else sa + tau0max");
    b.eq("startForward = pre(mode) == 0 and (sa > tau0max or pre(startForward) and sa > tau0) or pre(mode) == -1 and w_relfric > wsmall or initial() and w_relfric > 0");
    b.eq("startBackward = pre(mode) == 0 and (sa < -tau0max or pre(startBackward) and sa < -tau0) or pre(mode) == 1 and w_relfric < -wsmall or initial() and w_relfric < 0");
    b.eq("locked = not free and not (pre(mode) == 1 or startForward or pre(mode) == -1 or startBackward)");
    b.eq("mode = if free then 2 else if (pre(mode) == 1 or pre(mode) == 2 or startForward) and w_relfric > 0 then 1 else if (pre(mode) == -1 or pre(mode) == 2 or startBackward) and w_relfric < 0 then -1 else 0");
    b.eq("free = false");
    let p = ok(&b);
    let text = dump::program_text(&p);
    assert_eq!(state_names(&p), vec!["phi", "w"], "{text}");
    assert_eq!(p.report.loops_before_tearing, vec![3], "{text}");
    // linear in the loop unknowns: torn, with the exact constant Jacobian
    assert!(
        p.blocks.iter().any(|b| matches!(
            b,
            Block::Linear { .. }
                | Block::Nonlinear {
                    jacobian: Some(_),
                    ..
                }
        )),
        "{text}"
    );
    // the mixed loop is broken at the switching conditions: `locked` uses the previous
    // values of startForward/startBackward, the loop is solved for that mode, then the
    // conditions are re-evaluated with the fresh `sa` (as mixed systems are solved elsewhere)
    let sim = &text[text.find("simulation blocks").unwrap_or(0)..];
    let pos = |what: &str| {
        sim.find(what)
            .unwrap_or_else(|| panic!("{what} missing in {text}"))
    };
    assert!(pos("locked :=") < pos("linear system"), "{text}");
    assert!(pos("linear system") < pos("startForward :="), "{text}");
    assert!(pos("linear system") < pos("startBackward :="), "{text}");
    // relations on sa and w become zero crossings; relations on pre(mode) do not
    assert!(
        p.zero_crossings
            .iter()
            .all(|z| !z.description.contains("mode")),
        "{text}"
    );
    assert!(
        p.zero_crossings
            .iter()
            .any(|z| z.description.contains("sa > tau0max")),
        "{text}"
    );
    if std::env::var("MOSS_PRINT").is_ok() {
        println!("{text}");
    }
}

#[test]
fn single_expression_functions_are_inlined_and_differentiable() {
    use moss_frontend::flat::{Function, FunctionBody, FunctionVar, Statement};
    let mut b = ModelBuilder::new();
    let fv = |n: &str| FunctionVar {
        name: n.into(),
        ty: ScalarType::Real,
        dims: vec![],
        default: None,
    };
    b.flat.functions.insert(
        "pkg.sq".into(),
        Function {
            name: "pkg.sq".into(),
            inputs: vec![fv("u")],
            outputs: vec![fv("y")],
            locals: vec![],
            body: FunctionBody::Algorithm(vec![Statement::Assign {
                target: crate::testutil::parse("y"),
                value: crate::testutil::parse("u*u"),
                origin: Default::default(),
            }]),
            derivatives: vec![],
            inline: true,
            smooth_order: None,
            inverses: Vec::new(),
            is_impure: false,
            origin: Default::default(),
        },
    );
    b.vars("x y", "");
    // der of an inlined call needs its symbolic derivative
    b.eq("y = pkg.sq(time)").eq("x = der(y)");
    let p = ok(&b);
    let text = dump::program_text(&p);
    assert!(!text.contains("pkg.sq"), "{text}");
    // index reduction differentiated `y = time*time` through the inlined body
    assert!(text.contains("der(y) := (time + time)"), "{text}");
    assert_eq!(p.report.index_before_reduction, 2);
}

#[test]
fn outputs_of_known_functions_inside_expressions_use_one_call_unit() {
    use moss_frontend::flat::{Equation, Expr, Function, FunctionBody, FunctionVar, Origin};
    let mut b = ModelBuilder::new();
    let fv = |n: &str| FunctionVar {
        name: n.into(),
        ty: ScalarType::Real,
        dims: vec![],
        default: None,
    };
    b.flat.functions.insert(
        "pkg.g".into(),
        Function {
            name: "pkg.g".into(),
            inputs: vec![fv("u")],
            outputs: vec![fv("y1"), fv("y2")],
            locals: vec![],
            body: FunctionBody::Algorithm(vec![]),
            derivatives: vec![],
            inline: false,
            smooth_order: None,
            inverses: Vec::new(),
            is_impure: false,
            origin: Default::default(),
        },
    );
    b.vars("a c", "");
    let call = Expr::Call {
        func: "pkg.g".into(),
        args: vec![Expr::Time],
    };
    let sel = |i: usize| Expr::CallOutput {
        call: Box::new(call.clone()),
        index: i,
    };
    let two_times = |e: Expr| Expr::Binary {
        op: moss_frontend::flat::BinaryOp::Mul,
        lhs: Box::new(Expr::Real(2.0)),
        rhs: Box::new(e),
    };
    b.flat.equations.push(Equation::Equal {
        lhs: crate::testutil::parse("a"),
        rhs: two_times(sel(0)),
        origin: Origin::default(),
    });
    b.flat.equations.push(Equation::Equal {
        lhs: crate::testutil::parse("c"),
        rhs: two_times(sel(1)),
        origin: Origin::default(),
    });
    let p = ok(&b);
    let text = dump::program_text(&p);
    let calls = p
        .blocks
        .iter()
        .filter(|b| matches!(b, Block::CallOutputs { .. }))
        .count();
    assert_eq!(calls, 1, "{text}");
    assert!(
        text.contains("($call1.y1, $call1.y2) := pkg.g(time)"),
        "{text}"
    );
    // `c = 2*g(time)[2]` is an alias of the hidden output
    let c = p
        .aliases
        .iter()
        .find(|a| a.name == "c")
        .expect("c is an alias");
    assert_eq!(p.vars[c.target as usize].name, "$call1.y2");
    assert_eq!(c.scale, 2.0);
}

#[test]
fn state_select_another_choice_could_honour_is_a_warning() {
    // `y = x^3 + x` ties x to y and both ask to be states, of which there can be one;
    // `w = z^3 + 1` ties z to w, both never, of which one must be a state
    let mut b = ModelBuilder::new();
    b.vars("x y z w", "").start("x", 0.0).fixed("x");
    b.state_select("x", StateSelect::Always)
        .state_select("y", StateSelect::Always)
        .state_select("z", StateSelect::Never)
        .state_select("w", StateSelect::Never);
    b.eq("der(x) = -y")
        .eq("y = x^3 + x")
        .eq("der(z) = w - z")
        .eq("w = z^3 + 1");
    let p = ok(&b);
    let w = p.report.warnings.join("\n");
    assert!(
        w.contains("stateSelect=never cannot be honoured by this tool's choice of states: z"),
        "{w}"
    );
    assert!(
        w.contains("stateSelect=always cannot be honoured by this tool's choice of states: y"),
        "{w}"
    );
}

#[test]
fn state_select_no_choice_could_honour_is_an_error() {
    let mut b = ModelBuilder::new();
    b.vars("x y", "").start("x", 0.0).fixed("x");
    b.state_select("x", StateSelect::Never)
        .state_select("y", StateSelect::Always);
    b.eq("der(x) = 1").eq("y = 2*time");
    let e = err(&b);
    assert!(
        e.contains("`x` has stateSelect=StateSelect.never, but it must be a state"),
        "{e}"
    );
    assert!(
        e.contains("`y` has stateSelect=StateSelect.always, but it cannot be a state"),
        "{e}"
    );
}

#[test]
fn singular_diagnosis_points_at_the_source() {
    use moss_frontend::flat::Equation;
    use std::sync::Arc;
    let text = "model M\n  Real a;\n  Real b;\nequation\n  a = time;\n  a = 2;\nend M;\n";
    let sources = moss_syntax::SourceMap::new();
    let file = sources.add("M.mo", text);
    let span_of = |needle: &str| {
        let start = text.find(needle).unwrap_or(0) as u32;
        moss_syntax::Span::new(file, start, start + needle.len() as u32)
    };
    let mut b = ModelBuilder::new();
    b.vars("a b", "");
    b.flat.variables[0].origin.span = span_of("Real a;");
    b.flat.variables[1].origin.span = span_of("Real b;");
    for (eq, src) in [("a = time", "a = time;"), ("a = 2", "a = 2;")] {
        let mut e = crate::testutil::parse_equation(eq);
        if let Equation::Equal { origin, .. } = &mut e {
            origin.span = span_of(src);
        }
        b.flat.equations.push(e);
    }
    b.flat.sources = Arc::new(sources);
    let diags = translate_here(&b.flat).expect_err("singular");
    let out = moss_syntax::diag::render_all(&diags, &b.flat.sources);
    assert!(out.contains("M.mo:5:3"), "{out}");
    assert!(out.contains("M.mo:6:3"), "{out}");
    assert!(out.contains("equation: a = 2"), "{out}");
    assert!(
        out.contains("M.mo:3:3") && out.contains("`b` declared here"),
        "{out}"
    );
    if std::env::var("MOSS_PRINT").is_ok() {
        println!("{out}");
    }
}

mod numeric {
    //! The generated blocks solve the equations: checked with a small evaluator.
    use super::*;
    use crate::testeval::Eval;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * (1.0 + b.abs())
    }

    #[test]
    fn gear_accelerations_match_the_reduced_inertia() {
        let mut b = gear();
        b.start("phi1", 0.0)
            .fixed("phi1")
            .start("w1", 0.0)
            .fixed("w1");
        let p = ok(&b);
        let mut ev = Eval::new(&p);
        ev.run(&p.parameter_blocks);
        ev.set("phi1", 0.3);
        ev.set("w1", 2.0);
        ev.run(&p.blocks);
        // a1 = 1/(J1 + J2/ratio^2) with J1 = 1, J2 = 2, ratio = 3
        let a1 = 1.0 / (1.0 + 2.0 / 9.0);
        assert!(close(ev.get("der(w1)"), a1), "{}", ev.get("der(w1)"));
        assert!(close(ev.get("a2"), a1 / 3.0));
        assert!(close(ev.get("phi2"), 0.1));
        assert!(close(ev.get("w2"), 2.0 / 3.0));
        assert!(close(ev.get("tau2"), 3.0 * ev.get("tau1")));
    }

    #[test]
    fn gear_with_preferred_driven_side_states() {
        let mut b = gear();
        b.state_select("phi2", StateSelect::Prefer);
        b.state_select("w2", StateSelect::Prefer);
        let p = ok(&b);
        assert_eq!(state_names(&p), vec!["phi2", "w2"]);
        let mut ev = Eval::new(&p);
        ev.set("phi2", 0.1);
        ev.set("w2", 0.5);
        ev.run(&p.blocks);
        let a1 = 1.0 / (1.0 + 2.0 / 9.0);
        assert!(
            close(ev.get("der(w2)"), a1 / 3.0),
            "{}",
            dump::program_text(&p)
        );
        assert!(close(ev.get("phi1"), 0.3) && close(ev.get("w1"), 1.5));
        assert!(close(ev.get("der(phi2)"), 0.5));
    }

    #[test]
    fn clutch_like_relative_states_are_preferred() {
        let mut b = ModelBuilder::new();
        b.vars("phi1 w1 a1 phi2 w2 a2 phi_rel w_rel a_rel tau", "");
        b.params("J1", 1.0).params("J2", 2.0).params("c", 10.0);
        b.state_select("phi_rel", StateSelect::Prefer);
        b.state_select("w_rel", StateSelect::Prefer);
        b.eq("der(phi1) = w1")
            .eq("der(w1) = a1")
            .eq("der(phi2) = w2")
            .eq("der(w2) = a2");
        b.eq("J1*a1 = tau")
            .eq("J2*a2 = -tau")
            .eq("phi_rel = phi2 - phi1");
        b.eq("w_rel = der(phi_rel)")
            .eq("a_rel = der(w_rel)")
            .eq("tau = c*phi_rel");
        let p = ok(&b);
        let mut s = state_names(&p);
        s.sort();
        assert_eq!(s, vec!["phi1", "phi_rel", "w1", "w_rel"]);
        let mut ev = Eval::new(&p);
        ev.set("phi1", 0.0);
        ev.set("w1", 0.0);
        ev.set("phi_rel", 0.1);
        ev.set("w_rel", 0.2);
        ev.run(&p.blocks);
        assert!(close(ev.get("a1"), 1.0) && close(ev.get("a2"), -0.5));
        assert!(close(ev.get("a_rel"), -1.5) && close(ev.get("der(w_rel)"), -1.5));
        assert!(close(ev.get("w2"), 0.2) && close(ev.get("phi2"), 0.1));
    }

    #[test]
    fn rod_between_masses_moves_both_with_the_same_acceleration() {
        let mut b = ModelBuilder::new();
        b.vars("x1 v1 acc1 x2 v2 acc2 f", "");
        b.params("m1", 1.0).params("m2", 2.0).params("L", 1.0);
        b.eq("der(x1) = v1").eq("der(v1) = acc1").eq("m1*acc1 = f");
        b.eq("der(x2) = v2")
            .eq("der(v2) = acc2")
            .eq("m2*acc2 = 1 - f");
        b.eq("x2 - x1 = L");
        let p = ok(&b);
        let mut ev = Eval::new(&p);
        for s in state_names(&p) {
            ev.set(s, 0.5);
        }
        ev.run(&p.blocks);
        assert!(close(ev.get("acc1"), 1.0 / 3.0) && close(ev.get("acc2"), 1.0 / 3.0));
        assert!(close(ev.get("f"), 1.0 / 3.0));
        assert!(close(ev.get("x2") - ev.get("x1"), 1.0));
    }

    #[test]
    fn torn_nonlinear_loop_solves_all_equations() {
        let mut b = ModelBuilder::new();
        b.vars("x y z", "");
        b.eq("x = y^3 + time")
            .eq("y = exp(-x) + z")
            .eq("z = sin(x*y)");
        let p = ok(&b);
        let mut ev = Eval::new(&p);
        ev.time = 0.2;
        ev.run(&p.blocks);
        let (x, y, z) = (ev.get("x"), ev.get("y"), ev.get("z"));
        assert!((x - (y.powi(3) + 0.2)).abs() < 1e-9);
        assert!((y - ((-x).exp() + z)).abs() < 1e-9);
        assert!((z - (x * y).sin()).abs() < 1e-9);
    }

    #[test]
    fn linear_loop_solution() {
        let mut b = ModelBuilder::new();
        b.vars("x y", "");
        b.eq("x + 2*y = time").eq("3*x - y = 1");
        let p = ok(&b);
        let mut ev = Eval::new(&p);
        ev.time = 7.0;
        ev.run(&p.blocks);
        assert!(close(ev.get("x"), 9.0 / 7.0) && close(ev.get("y"), 20.0 / 7.0));
    }

    #[test]
    fn initialization_with_steady_state_and_fixed_start() {
        let mut b = ModelBuilder::new();
        b.vars("x v", "").params("k", 2.0);
        b.start("v", 3.0).fixed("v");
        b.eq("der(x) = k - x").eq("der(v) = -v");
        b.init_eq("der(x) = 0");
        let p = ok(&b);
        let mut ev = Eval::new(&p);
        ev.initial = true;
        ev.run(&p.parameter_blocks);
        ev.run(&p.init_blocks);
        assert!(close(ev.get("x"), 2.0) && close(ev.get("v"), 3.0));
        assert!(close(ev.get("der(v)"), -3.0));
    }

    #[test]
    fn friction_loop_values_when_sliding_and_locked() {
        // the same mixed system as the MSL-like test, evaluated in both modes
        let mut b = ModelBuilder::new();
        b.vars("w a sa tau", "").start("w", 1.0).fixed("w");
        b.params("J", 2.0).params("tau0", 0.5);
        b.discrete("locked", ScalarType::Boolean);
        b.eq("der(w) = a");
        b.eq("J*a = 3 - tau");
        b.eq("tau = if locked then sa else tau0");
        b.eq("a = if locked then 0 else sa - tau0");
        b.eq("locked = pre(locked) and w == 0");
        let p = ok(&b);
        let mut ev = Eval::new(&p);
        ev.set("w", 1.0);
        ev.run(&p.blocks);
        assert!(close(ev.get("tau"), 0.5) && close(ev.get("a"), 1.25));
        // locked: a = 0, tau = 3
        let l = p.var_by_name("locked").unwrap() as usize;
        let mut locked_blocks = p.blocks.clone();
        locked_blocks.retain(|b| !matches!(b, Block::Assign { var, .. } if *var as usize == l));
        ev.x[l] = 1.0;
        ev.run(&locked_blocks);
        assert!(
            close(ev.get("a"), 0.0) && close(ev.get("tau"), 3.0),
            "{}",
            dump::program_text(&p)
        );
    }
}

/// Random small models (balanced or not, singular or not, with loops and high index): the
/// translation must return a program or diagnostics, never panic.
#[test]
fn random_models_never_panic() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let names = ["a", "b", "c", "d", "e"];
    let templates = [
        "{0} = {1} + {2}",
        "{0}*{1} = time",
        "der({0}) = {1}",
        "{0} = sin({1})",
        "{0}^2 + {1}^2 = 1",
        "{0} = if {1} > 0 then {2} else -{2}",
        "der({0}) = -{0} + {1}",
        "{0} = 2*{1}",
        "{0} = {1}",
        "{0} + {1} + {2} = 3",
        "{0} = exp({1}*{2})",
    ];
    let mut ok_count = 0;
    for case in 0..400 {
        let nv = 1 + next(names.len());
        // mostly balanced: as many equations as variables, sometimes one more or less
        let ne = match next(4) {
            0 => nv + 1,
            1 => nv.saturating_sub(1).max(1),
            _ => nv,
        };
        let mut b = ModelBuilder::new();
        b.vars(&names[..nv].join(" "), "");
        for _ in 0..ne {
            let t = templates[next(templates.len())];
            let eq = t
                .replace("{0}", names[next(nv)])
                .replace("{1}", names[next(nv)])
                .replace("{2}", names[next(nv)]);
            b.eq(&eq);
        }
        if next(3) == 0 {
            b.when(&format!("{} > 1", names[next(nv)]), &["reinit(a, 0)"]);
        }
        let flat = b.flat.clone();
        let r = std::panic::catch_unwind(move || translate_here(&flat).map(|_| ()));
        match r {
            Ok(Ok(())) => ok_count += 1,
            Ok(Err(_)) => {}
            Err(_) => panic!("case {case} panicked: {:#?}", b.flat.equations),
        }
    }
    // the generator must also produce translatable models, or the test checks little
    assert!(
        ok_count >= 20,
        "only {ok_count} of 400 random models translated"
    );
}

#[test]
fn relations_only_in_initial_equations_are_not_zero_crossings() {
    let mut b = ModelBuilder::new();
    b.vars("x", "").params("p", 1.0);
    b.eq("der(x) = -x");
    b.init_eq("x = if time < p then 1 else 2");
    let p = ok(&b);
    assert!(p.zero_crossings.is_empty(), "{}", dump::program_text(&p));
}

#[test]
fn constants_propagate_out_of_constraints() {
    // a grounded support: the constraint phi_a = ratio*phi_b goes through phi_support = 0
    let mut b = ModelBuilder::new();
    b.vars("phi1 w1 phi2 w2 phi_support phi_a tau1 tau2 a1 a2", "");
    b.params("ratio", 2.0);
    b.eq("der(phi1) = w1")
        .eq("der(w1) = a1")
        .eq("a1 = 1 - tau1");
    b.eq("der(phi2) = w2").eq("der(w2) = a2").eq("a2 = tau2");
    b.eq("phi_support = 0").eq("phi_a = phi1 - phi_support");
    b.eq("phi_a = ratio*phi2").eq("0 = ratio*tau1 - tau2");
    let p = ok(&b);
    assert_eq!(p.states.len(), 2);
    // phi_a became an alias of phi1 once phi_support was known to be 0
    assert!(
        p.aliases
            .iter()
            .any(|a| a.name == "phi_a" || a.name == "phi1"),
        "{:?}",
        p.aliases
    );
    let text = dump::program_text(&p);
    assert!(text.contains("phi_support := 0"), "{text}");
    assert!(
        !p.report
            .dummy_derivatives
            .iter()
            .any(|d| d.contains("phi_support")),
        "{:?}",
        p.report.dummy_derivatives
    );
}

#[test]
fn constraint_on_a_state_is_reported_with_the_original_equation() {
    let mut b = ModelBuilder::new();
    b.vars("x y z", "");
    b.eq("der(x) = 1").eq("x = sin(time)").eq("y + z = 1");
    let e = err(&b);
    // checked before differentiating: both equations determine x (and its derivative)
    assert!(
        e.contains("2 equations determine only 1 variable (x)"),
        "{e}"
    );
    assert!(e.contains("equation: x = sin(time)"), "{e}");
    assert!(e.contains("equation: der(x) = 1"), "{e}");
}

#[test]
fn chain_of_gears_reduces_to_two_states() {
    let flat = crate::bench_support::gear_chain(50);
    let p = translate_here(&flat).unwrap_or_else(|d| panic!("{d:#?}"));
    assert_eq!(p.states.len(), 2, "{:?}", p.report.state_choices);
    assert_eq!(p.report.index_before_reduction, 3);
    // per gear: two levels of the constraint; per inertia: der(der(phi))
    assert_eq!(p.report.dummy_derivatives.len(), 3 * 50 - 2);
}

#[test]
fn free_parameter_is_computed_by_initialization() {
    let mut b = ModelBuilder::new();
    b.vars("x", "").start("x", 2.0).fixed("x");
    // the binding only serves as a guess for a fixed=false parameter
    b.params("p", 0.1).unfixed("p");
    b.param_expr("q", "2*p");
    b.eq("der(x) = -p*x");
    b.init_eq("der(x) = -1");
    let p = ok(&b);
    let pi = p.var_by_name("p").unwrap() as usize;
    assert_eq!(p.vars[pi].kind, VarKind::DependentParameter);
    // q depends on the free parameter: computed by initialization, not by parameter blocks
    assert!(p.parameter_blocks.is_empty(), "{}", dump::program_text(&p));
    let qi = p.var_by_name("q").unwrap() as usize;
    assert_eq!(p.vars[qi].kind, VarKind::DependentParameter);
    let mut ev = crate::testeval::Eval::new(&p);
    ev.initial = true;
    ev.run(&p.init_blocks);
    assert!(
        (ev.get("p") - 0.5).abs() < 1e-12,
        "{}",
        dump::program_text(&p)
    );
    assert!(p.report.warnings.is_empty(), "{:?}", p.report.warnings);
}

#[test]
fn when_assigned_discrete_starts_at_its_start_value() {
    let mut b = ModelBuilder::new();
    b.vars("x", "").start("x", 0.0).fixed("x");
    b.discrete("n", ScalarType::Integer).start("n", 3.0);
    b.eq("der(x) = 1");
    b.when("x > 1", &["n = pre(n) + 1"]);
    let p = ok(&b);
    let text = dump::program_text(&p);
    let init = &text[..text.find("simulation blocks").unwrap_or(text.len())];
    assert!(init.contains("n := 3"), "{init}");
    assert!(p.report.warnings.is_empty(), "{:?}", p.report.warnings);
}

#[test]
fn algorithm_section_is_one_block_with_its_outputs() {
    use moss_frontend::flat::{Algorithm, Statement};
    let mut b = ModelBuilder::new();
    b.vars("x y z", "").start("x", 0.0).fixed("x");
    b.eq("der(x) = z");
    b.flat.algorithms.push(Algorithm {
        statements: vec![
            Statement::Assign {
                target: crate::testutil::parse("y"),
                value: crate::testutil::parse("2*x"),
                origin: Default::default(),
            },
            Statement::Assign {
                target: crate::testutil::parse("z"),
                value: crate::testutil::parse("y + 1"),
                origin: Default::default(),
            },
        ],
        origin: Default::default(),
    });
    let p = ok(&b);
    let pos_alg = p
        .blocks
        .iter()
        .position(|b| matches!(b, Block::Algorithm { .. }))
        .expect("algorithm block");
    let Block::Algorithm {
        outputs, inputs, ..
    } = &p.blocks[pos_alg]
    else {
        unreachable!()
    };
    let names: Vec<&str> = outputs
        .iter()
        .map(|&v| p.vars[v as usize].name.as_str())
        .collect();
    assert_eq!(names, vec!["y", "z"]);
    assert!(inputs.iter().any(|&v| p.vars[v as usize].name == "x"));
    // der(x) := z comes after the algorithm
    let pos_der = p
        .blocks
        .iter()
        .position(
            |b| matches!(b, Block::Assign { var, .. } if p.vars[*var as usize].name == "der(x)"),
        )
        .expect("der(x) block");
    assert!(pos_alg < pos_der);
}

#[test]
fn tuple_equation_becomes_call_outputs() {
    use moss_frontend::flat::{Equation, Expr, Origin};
    let mut b = ModelBuilder::new();
    b.vars("a c", "");
    b.flat.equations.push(Equation::Equal {
        lhs: Expr::Tuple(vec![
            Some(crate::testutil::parse("a")),
            None,
            Some(crate::testutil::parse("c")),
        ]),
        rhs: Expr::Call {
            func: "pkg.h".into(),
            args: vec![Expr::Time],
        },
        origin: Origin::default(),
    });
    let p = ok(&b);
    let Block::CallOutputs { outputs, .. } = &p.blocks[0] else {
        panic!("{}", dump::program_text(&p));
    };
    assert_eq!(outputs.len(), 3);
    assert!(outputs[1].is_none());
}

#[test]
fn top_level_inputs_are_known_unless_bound() {
    use moss_frontend::flat::Causality;
    let mut b = ModelBuilder::new();
    b.vars("u v x y", "").start("x", 0.0).fixed("x");
    for v in b
        .flat
        .variables
        .iter_mut()
        .filter(|v| v.name == "u" || v.name == "v")
    {
        v.causality = Causality::Input;
    }
    b.eq("v = sin(time)")
        .eq("der(x) = u + v")
        .eq("y = if u > 0 then 1 else 0");
    let p = ok(&b);
    let kind = |n: &str| p.vars[p.var_by_name(n).unwrap() as usize].kind;
    assert_eq!(kind("u"), VarKind::Input);
    assert_eq!(kind("v"), VarKind::Algebraic);
    // relations on inputs generate events (inputs may change continuously)
    assert_eq!(p.zero_crossings.len(), 1);
}

#[test]
fn loop_through_a_boolean_without_events_is_reported() {
    let mut b = ModelBuilder::new();
    b.vars("x", "");
    b.discrete("on", ScalarType::Boolean);
    b.eq("on = noEvent(x > 0)")
        .eq("x = if on then time else -1");
    let e = err(&b);
    assert!(e.contains("discrete variable `on`"), "{e}");
    // with an event-generating relation the same model sorts
    let mut b = ModelBuilder::new();
    b.vars("x", "");
    b.discrete("on", ScalarType::Boolean);
    b.eq("on = x > 0").eq("x = if on then time else -1");
    let p = ok(&b);
    assert!(p.report.loops_before_tearing.is_empty());
}

#[test]
fn fixed_parameter_start_survives_scaled_alias() {
    let mut b = ModelBuilder::new();
    b.vars("x y", "");
    b.params("p", 3.0);
    b.flat.variables[0].attrs.start = Some(crate::testutil::parse("p"));
    b.fixed("x");
    b.state_select("y", StateSelect::Prefer);
    b.eq("der(y) = -y").eq("y = 2*x");
    let p = ok(&b);
    assert_eq!(state_names(&p), vec!["y"]);
    let mut ev = crate::testeval::Eval::new(&p);
    ev.initial = true;
    ev.run(&p.init_blocks);
    assert!(
        (ev.get("y") - 6.0).abs() < 1e-12,
        "{}",
        dump::program_text(&p)
    );
    assert!((ev.get("x") - 3.0).abs() < 1e-12);
}

#[test]
fn invertible_functions_are_solved_explicitly() {
    let mut b = ModelBuilder::new();
    b.vars("x y z w", "");
    b.eq("exp(2*x + 1) = time + 3")
        .eq("y^3 = time - 5")
        .eq("sqrt(z) - 1 = time")
        .eq("log(w/2) = time");
    let p = ok(&b);
    assert!(
        p.blocks.iter().all(|b| matches!(b, Block::Assign { .. })),
        "{}",
        dump::program_text(&p)
    );
    let mut ev = crate::testeval::Eval::new(&p);
    ev.time = 0.5;
    ev.run(&p.blocks);
    assert!(((2.0 * ev.get("x") + 1.0).exp() - 3.5).abs() < 1e-12);
    assert!((ev.get("y").powi(3) - (-4.5)).abs() < 1e-12);
    assert!((ev.get("z").sqrt() - 1.5).abs() < 1e-12);
    assert!(((ev.get("w") / 2.0).ln() - 0.5).abs() < 1e-12);
}

#[test]
fn empty_and_parameter_only_models_translate() {
    let b = ModelBuilder::new();
    let p = ok(&b);
    assert!(p.blocks.is_empty() && p.states.is_empty());
    let mut b = ModelBuilder::new();
    b.params("p", 1.0).param_expr("q", "p*2");
    b.flat
        .equations
        .push(moss_frontend::flat::Equation::Assert {
            condition: crate::testutil::parse("q > 0"),
            message: moss_frontend::flat::Expr::String("q must be positive".into()),
            level: moss_frontend::flat::AssertLevel::Error,
            origin: Default::default(),
        });
    let p = ok(&b);
    assert!(matches!(p.blocks.last(), Some(Block::Assert { .. })));
    assert_eq!(p.parameter_blocks.len(), 1);
}

#[test]
fn derivative_annotation_is_used_for_index_reduction_and_solving() {
    use moss_frontend::flat::{DerivativeAnnotation, Function, FunctionBody, FunctionVar};
    let fv = |n: &str| FunctionVar {
        name: n.into(),
        ty: ScalarType::Real,
        dims: vec![],
        default: None,
    };
    let func = |name: &str, inputs: Vec<FunctionVar>, ders: Vec<DerivativeAnnotation>| Function {
        name: name.into(),
        inputs,
        outputs: vec![fv("y")],
        locals: vec![],
        body: FunctionBody::External {
            language: "C".into(),
            name: name.into(),
            output: None,
            args: vec![],
            code: Default::default(),
        },
        derivatives: ders,
        inline: false,
        smooth_order: None,
        inverses: Vec::new(),
        is_impure: false,
        origin: Default::default(),
    };
    let mut b = ModelBuilder::new();
    b.flat.functions.insert(
        "pkg.f".into(),
        func(
            "pkg.f",
            vec![fv("u")],
            vec![DerivativeAnnotation {
                function: "pkg.f_der".into(),
                order: 1,
                no_derivative: vec![],
                zero_derivative: vec![],
            }],
        ),
    );
    b.flat.functions.insert(
        "pkg.f_der".into(),
        func("pkg.f_der", vec![fv("u"), fv("du")], vec![]),
    );
    // a constraint through f: index reduction differentiates it with f_der
    b.vars("x v y", "").start("x", 0.0).fixed("x");
    b.eq("der(x) = v").eq("y = pkg.f(x)").eq("der(y) = 1");
    let p = ok(&b);
    let text = dump::program_text(&p);
    assert!(text.contains("pkg.f_der(x, "), "{text}");
    // implicit equation through f: Newton gets the annotated derivative
    let mut b2 = ModelBuilder::new();
    b2.flat.functions = b.flat.functions.clone();
    b2.vars("z", "");
    b2.eq("pkg.f(z) = time");
    let p = ok(&b2);
    assert!(
        matches!(&p.blocks[0], Block::SolveScalar { derivative: Some(d), .. } if dump::expr_text(&p, d).contains("pkg.f_der(z, 1)")),
        "{}",
        dump::program_text(&p)
    );
}

#[test]
fn second_order_derivative_annotation_differentiates_the_first_derivative() {
    use moss_frontend::flat::{DerivativeAnnotation, Function, FunctionBody, FunctionVar};
    let fv = |n: &str| FunctionVar {
        name: n.into(),
        ty: ScalarType::Real,
        dims: vec![],
        default: None,
    };
    let ann = |f: &str, order: u32| DerivativeAnnotation {
        function: f.into(),
        order,
        no_derivative: vec![],
        zero_derivative: vec![],
    };
    let mut b = ModelBuilder::new();
    b.flat.functions.insert(
        "pkg.f".into(),
        Function {
            name: "pkg.f".into(),
            inputs: vec![fv("u")],
            outputs: vec![fv("y")],
            locals: vec![],
            body: FunctionBody::Algorithm(vec![]),
            derivatives: vec![ann("pkg.f_der", 1), ann("pkg.f_der2", 2)],
            inline: false,
            smooth_order: None,
            inverses: Vec::new(),
            is_impure: false,
            origin: Default::default(),
        },
    );
    let m = b.model();
    assert_eq!(m.arena.fder["pkg.f"], ("pkg.f_der".to_string(), vec![true]));
    assert_eq!(
        m.arena.fder["pkg.f_der"],
        ("pkg.f_der2".to_string(), vec![false, true])
    );
}

#[test]
fn flow_sums_of_two_are_negated_aliases() {
    let mut b = ModelBuilder::new();
    b.vars("x fa fb", "").start("x", 0.0).fixed("x");
    b.eq("der(x) = fa").eq("fa + fb = 0").eq("fb = -sin(time)");
    let p = ok(&b);
    let a = p
        .aliases
        .iter()
        .find(|a| a.name == "fa" || a.name == "fb")
        .expect("alias");
    assert_eq!(a.scale, -1.0);
    assert_eq!(p.blocks.len(), 2, "{}", dump::program_text(&p));
}

/// Value of a flat expression, with variables (and `der(v)`) looked up by name.
fn eval_flat(e: &moss_frontend::flat::Expr, get: &dyn Fn(&str) -> f64, time: f64) -> f64 {
    use moss_frontend::flat::{BinaryOp as B, Expr as E, UnaryOp as U};
    let b = |v: bool| if v { 1.0 } else { 0.0 };
    match e {
        E::Real(v) => *v,
        E::Integer(v) => *v as f64,
        E::Boolean(v) => b(*v),
        E::Time => time,
        E::Var { name, .. } => get(name),
        E::Unary { op, arg } => {
            let a = eval_flat(arg, get, time);
            match op {
                U::Neg => -a,
                U::Not => b(a == 0.0),
            }
        }
        E::Binary { op, lhs, rhs } => {
            let (l, r) = (eval_flat(lhs, get, time), eval_flat(rhs, get, time));
            match op {
                B::Add => l + r,
                B::Sub => l - r,
                B::Mul => l * r,
                B::Div => l / r,
                B::Pow => l.powf(r),
                B::Gt => b(l > r),
                B::Lt => b(l < r),
                B::Ge => b(l >= r),
                B::Le => b(l <= r),
                _ => f64::NAN,
            }
        }
        E::Call { func, args } => match (func.as_str(), args.as_slice()) {
            ("der", [E::Var { name, .. }]) => get(&format!("der({name})")),
            ("sin", [a]) => eval_flat(a, get, time).sin(),
            ("exp", [a]) => eval_flat(a, get, time).exp(),
            _ => f64::NAN,
        },
        E::If { branches, else_ } => {
            for (c, v) in branches {
                if eval_flat(c, get, time) != 0.0 {
                    return eval_flat(v, get, time);
                }
            }
            eval_flat(else_, get, time)
        }
        _ => f64::NAN,
    }
}

/// Random models that translate must produce blocks that satisfy every original equation
/// for arbitrary state values (states are independent after index reduction).
#[test]
fn random_models_satisfy_their_equations() {
    use moss_frontend::flat::Equation;
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let names = ["a", "b", "c", "d"];
    let templates = [
        "{0} = {1} + {2}",
        "{0} + 2*{1} = time",
        "der({0}) = {1}",
        "{0} = sin({1})",
        "der({0}) = -{0} + {1}",
        "{0} = 2*{1}",
        "{0} = {1} - 1",
        "{0} + {1} + {2} = 3",
        "{0} = exp({1}) + time",
        "3*{0} - {1} = {2}",
        "{0} = {1}*{2} + 1",
        "{0} = if {1} > 0 then {2} else -{2}",
        "{0}*{0} + {1} = 2",
        "der({0}) + der({1}) = {2}",
    ];
    let mut checked = 0;
    let mut init_checked = 0;
    for case in 0..3000 {
        let nv = 2 + next(names.len() - 1);
        let mut b = ModelBuilder::new();
        b.vars(&names[..nv].join(" "), "");
        for _ in 0..nv {
            let t = templates[next(templates.len())];
            let eq = t
                .replace("{0}", names[next(nv)])
                .replace("{1}", names[next(nv)])
                .replace("{2}", names[next(nv)]);
            b.eq(&eq);
        }
        let Ok(p) = translate_here(&b.flat) else {
            continue;
        };
        let mut ev = crate::testeval::Eval::new(&p);
        ev.time = 0.4;
        for (i, &s) in p.states.iter().enumerate() {
            ev.x[s as usize] = 0.3 + 0.17 * i as f64;
        }
        let settled = ev.run_to_fixed_point(&p.blocks);
        if !settled || !ev.converged || ev.x.iter().any(|v| !v.is_finite()) {
            continue;
        }
        let get = |n: &str| ev.get(n);
        for eq in &b.flat.equations {
            let Equation::Equal { lhs, rhs, .. } = eq else {
                continue;
            };
            let (l, r) = (eval_flat(lhs, &get, 0.4), eval_flat(rhs, &get, 0.4));
            let tol = 1e-7 * (1.0 + l.abs() + r.abs());
            assert!(
                (l - r).abs() <= tol,
                "case {case}: {eq:?} gives {l} vs {r}\n{}",
                dump::program_text(&p)
            );
        }
        checked += 1;
        // the initialization blocks give a consistent point at time 0 too
        let mut init = crate::testeval::Eval::new(&p);
        init.initial = true;
        let settled = init.run_to_fixed_point(&p.init_blocks);
        if !settled || !init.converged || init.x.iter().any(|v| !v.is_finite()) {
            continue;
        }
        let get = |n: &str| init.get(n);
        for eq in &b.flat.equations {
            let Equation::Equal { lhs, rhs, .. } = eq else {
                continue;
            };
            let (l, r) = (eval_flat(lhs, &get, 0.0), eval_flat(rhs, &get, 0.0));
            let tol = 1e-7 * (1.0 + l.abs() + r.abs());
            assert!(
                (l - r).abs() <= tol,
                "case {case} (initialization): {eq:?} gives {l} vs {r}\n{}",
                dump::program_text(&p)
            );
        }
        init_checked += 1;
    }
    assert!(checked >= 100, "only {checked} random models checked");
    assert!(
        init_checked >= 100,
        "only {init_checked} initializations checked"
    );
}

/// The library's friction variant: `locked` reads intermediate `sliding*` Booleans and a
/// relation on parameters; only the conditions on `sa` are switching equations.
#[test]
fn mixed_loop_tears_only_at_conditions_on_loop_values() {
    let mut b = ModelBuilder::new();
    b.vars("w a sa tau", "").start("w", 0.0).fixed("w");
    b.params("J", 1.0).params("fn", 1.0).params("tau0max", 0.6);
    b.discrete("mode", ScalarType::Integer);
    b.discrete("locked startForward slidingForward", ScalarType::Boolean);
    b.eq("der(w) = a").eq("J*a = sin(time) - tau");
    b.eq("tau = if locked then sa else tau0max");
    b.eq("a = if locked then 0 else sa - tau0max");
    b.eq("startForward = pre(mode) == 0 and sa > tau0max");
    b.eq("slidingForward = pre(mode) == 1 or startForward");
    b.eq("locked = not (fn <= 0) and not slidingForward");
    b.eq("mode = if slidingForward and w > 0 then 1 else 0");
    let p = ok(&b);
    let text = dump::program_text(&p);
    let sim = &text[text.find("simulation blocks").unwrap_or(0)..];
    let pos = |what: &str| {
        sim.find(what)
            .unwrap_or_else(|| panic!("{what} missing in {text}"))
    };
    assert!(pos("slidingForward :=") < pos("locked :="), "{text}");
    assert!(pos("locked :=") < pos("linear system"), "{text}");
    assert!(pos("linear system") < pos("startForward :="), "{text}");
    // the relation between parameters is not an event source
    assert!(
        p.zero_crossings
            .iter()
            .all(|z| !z.description.contains("fn")),
        "{text}"
    );
}

#[test]
fn constraint_fixing_a_state_is_diagnosed_without_differentiating() {
    let mut b = ModelBuilder::new();
    b.vars("x y z", "").start("x", 1.0).fixed("x");
    b.eq("der(x) = -x").eq("y = 2*x").eq("y = x + 1");
    let e = err(&b);
    assert!(
        e.contains("2 equations determine only 1 variable (x)"),
        "{e}"
    );
    assert!(e.contains("not determined: z"), "{e}");
    assert!(!e.contains("gave up"), "{e}");
}

#[test]
fn tearing_avoids_dividing_by_a_time_varying_coefficient() {
    // a heating diode: the power balance `q + v*i = 0` must not be solved for `i` (division
    // by the voltage, zero at the start); the diode equation gives `i` without division
    let mut b = ModelBuilder::new();
    b.vars("v i q t a1 a2 a3", "");
    b.params("g", 2.0).params("t0", 300.0).params("r", 10.0);
    b.eq("v = time")
        .eq("a1 = exp(t/100)")
        .eq("a2 = a1*a1 + t")
        .eq("a3 = sin(a2) + t")
        .eq("q = g*(t - t0) + (t - t0)^3")
        .eq("q + v*i = 0")
        .eq("i = v/r*a3 + 0.001*t");
    let p = ok(&b);
    let mut ev = crate::testeval::Eval::new(&p);
    ev.run(&p.parameter_blocks);
    ev.run(&p.blocks);
    let text = dump::program_text(&p);
    assert!(ev.converged, "{text}");
    assert!((ev.get("t") - 300.0).abs() < 1e-6, "{text}");
    assert!((ev.get("i") - 0.3).abs() < 1e-9, "{text}");
}
