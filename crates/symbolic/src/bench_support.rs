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
/// Translational model: per mass `der(s) = v`, `m*der(v) = fl - fr`; per spring
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
            bin(BinaryOp::Sub, var(&mass(i, "fl")), var(&mass(i, "fr"))),
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
