//! Generated test and benchmark models (public so that `benches/` can use them).

use moss_frontend::flat::{
    Attributes, BinaryOp, Causality, Equation, Expr, FlatModel, Origin, ScalarType, Variability,
    Variable,
};

fn var(name: &str) -> Expr {
    Expr::Var {
        name: name.into(),
        subscripts: Vec::new(),
    }
}

fn bin(op: BinaryOp, l: Expr, r: Expr) -> Expr {
    Expr::Binary {
        op,
        lhs: Box::new(l),
        rhs: Box::new(r),
    }
}

fn der(e: Expr) -> Expr {
    Expr::Call {
        func: "der".into(),
        args: vec![e],
    }
}

fn decl(
    name: String,
    variability: Variability,
    binding: Option<Expr>,
    start: Option<f64>,
) -> Variable {
    Variable {
        name,
        ty: ScalarType::Real,
        variability,
        causality: Causality::Internal,
        binding,
        attrs: Attributes {
            start: start.map(Expr::Real),
            fixed: start.map(|_| true),
            ..Attributes::default()
        },
        is_flow: false,
        is_stream: false,
        is_protected: false,
        evaluate: false,
        description: String::new(),
        origin: Origin::default(),
    }
}

fn eq(lhs: Expr, rhs: Expr) -> Equation {
    Equation::Equal {
        lhs,
        rhs,
        origin: Origin::default(),
    }
}

/// A chain of `n` masses connected by `n-1` springs, written like a flattened
/// Translational model: per mass `der(s) = v`, `m*der(v) = fr - fl` (the right spring pulls
/// forward, the left one back); per spring
/// `srel = s[i+1] - s[i]`, `f = c*srel`, plus the connection aliases `fr[i] = f[i]`,
/// `fl[i+1] = f[i]`; free ends `fl[1] = 0`, `fr[n] = 0`. About `6n` equations.
pub fn chain(n: usize) -> FlatModel {
    let mut f = FlatModel {
        name: format!("Chain{n}"),
        ..FlatModel::default()
    };
    f.variables.push(decl(
        "m".into(),
        Variability::Parameter,
        Some(Expr::Real(1.0)),
        None,
    ));
    f.variables.push(decl(
        "c".into(),
        Variability::Parameter,
        Some(Expr::Real(100.0)),
        None,
    ));
    let mass = |i: usize, x: &str| format!("mass[{i}].{x}");
    let spring = |i: usize, x: &str| format!("spring[{i}].{x}");
    for i in 1..=n {
        let s0 = if i == 1 { 0.1 } else { 0.0 };
        f.variables
            .push(decl(mass(i, "s"), Variability::Continuous, None, Some(s0)));
        f.variables
            .push(decl(mass(i, "v"), Variability::Continuous, None, Some(0.0)));
        f.variables
            .push(decl(mass(i, "fl"), Variability::Continuous, None, None));
        f.variables
            .push(decl(mass(i, "fr"), Variability::Continuous, None, None));
        f.equations
            .push(eq(der(var(&mass(i, "s"))), var(&mass(i, "v"))));
        f.equations.push(eq(
            bin(BinaryOp::Mul, var("m"), der(var(&mass(i, "v")))),
            bin(BinaryOp::Sub, var(&mass(i, "fr")), var(&mass(i, "fl"))),
        ));
    }
    for i in 1..n {
        f.variables
            .push(decl(spring(i, "f"), Variability::Continuous, None, None));
        f.variables
            .push(decl(spring(i, "srel"), Variability::Continuous, None, None));
        f.equations
            .push(eq(var(&mass(i, "fr")), var(&spring(i, "f"))));
        f.equations
            .push(eq(var(&mass(i + 1, "fl")), var(&spring(i, "f"))));
        f.equations.push(eq(
            var(&spring(i, "srel")),
            bin(BinaryOp::Sub, var(&mass(i + 1, "s")), var(&mass(i, "s"))),
        ));
        f.equations.push(eq(
            var(&spring(i, "f")),
            bin(BinaryOp::Mul, var("c"), var(&spring(i, "srel"))),
        ));
    }
    f.equations.push(eq(var(&mass(1, "fl")), Expr::Real(0.0)));
    f.equations.push(eq(var(&mass(n, "fr")), Expr::Real(0.0)));
    f
}

/// `n` inertias coupled by `n-1` ideal gears (`phi[i] = ratio*phi[i+1]`, torques
/// `ratio*tl[i] = tr[i]`), driven by a torque on the first: an index-3 system whose
/// reduction leaves 2 states and one linear algebraic loop over the whole chain.
pub fn gear_chain(n: usize) -> FlatModel {
    let mut f = FlatModel {
        name: format!("GearChain{n}"),
        ..FlatModel::default()
    };
    f.variables.push(decl(
        "J".into(),
        Variability::Parameter,
        Some(Expr::Real(1.0)),
        None,
    ));
    f.variables.push(decl(
        "ratio".into(),
        Variability::Parameter,
        Some(Expr::Real(1.1)),
        None,
    ));
    let v = |i: usize, x: &str| format!("inertia[{i}].{x}");
    let g = |i: usize, x: &str| format!("gear[{i}].{x}");
    for i in 1..=n {
        let start = if i == 1 { Some(0.0) } else { None };
        f.variables
            .push(decl(v(i, "phi"), Variability::Continuous, None, start));
        f.variables
            .push(decl(v(i, "w"), Variability::Continuous, None, start));
        for x in ["a", "tl", "tr"] {
            f.variables
                .push(decl(v(i, x), Variability::Continuous, None, None));
        }
        f.equations
            .push(eq(der(var(&v(i, "phi"))), var(&v(i, "w"))));
        f.equations.push(eq(der(var(&v(i, "w"))), var(&v(i, "a"))));
        f.equations.push(eq(
            bin(BinaryOp::Mul, var("J"), var(&v(i, "a"))),
            bin(BinaryOp::Add, var(&v(i, "tl")), var(&v(i, "tr"))),
        ));
    }
    for i in 1..n {
        f.variables
            .push(decl(g(i, "t"), Variability::Continuous, None, None));
        // phi[i] = ratio*phi[i+1]
        f.equations.push(eq(
            var(&v(i, "phi")),
            bin(BinaryOp::Mul, var("ratio"), var(&v(i + 1, "phi"))),
        ));
        // torque through the gear: tr[i] = -t, tl[i+1] = ratio*t
        f.equations.push(eq(
            var(&v(i, "tr")),
            Expr::Unary {
                op: moss_frontend::flat::UnaryOp::Neg,
                arg: Box::new(var(&g(i, "t"))),
            },
        ));
        f.equations.push(eq(
            var(&v(i + 1, "tl")),
            bin(BinaryOp::Mul, var("ratio"), var(&g(i, "t"))),
        ));
    }
    f.equations.push(eq(var(&v(1, "tl")), Expr::Real(1.0)));
    f.equations.push(eq(var(&v(n, "tr")), Expr::Real(0.0)));
    f
}
