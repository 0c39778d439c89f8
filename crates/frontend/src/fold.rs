//! Constant folding of flat expressions. Builders here fold as they build, so both structural
//! evaluation (which needs literals) and flat equations (which benefit from simpler terms)
//! use the same code.

use crate::flat::{BinaryOp, Expr, UnaryOp};

pub fn as_f64(e: &Expr) -> Option<f64> {
    match e {
        Expr::Real(v) => Some(*v),
        Expr::Integer(v) => Some(*v as f64),
        _ => None,
    }
}

pub fn as_i64(e: &Expr) -> Option<i64> {
    match e {
        Expr::Integer(v) => Some(*v),
        Expr::Real(v) if v.fract() == 0.0 && v.abs() < 9.0e15 => Some(*v as i64),
        Expr::Enum { index, .. } => Some(*index as i64),
        Expr::Boolean(b) => Some(*b as i64),
        _ => None,
    }
}

pub fn is_literal(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Real(_) | Expr::Integer(_) | Expr::Boolean(_) | Expr::String(_) | Expr::Enum { .. }
    )
}

pub fn unary(op: UnaryOp, a: Expr) -> Expr {
    match (op, &a) {
        (UnaryOp::Neg, Expr::Real(v)) => Expr::Real(-v),
        (UnaryOp::Neg, Expr::Integer(v)) => Expr::Integer(v.wrapping_neg()),
        (UnaryOp::Not, Expr::Boolean(b)) => Expr::Boolean(!b),
        (
            UnaryOp::Neg,
            Expr::Unary {
                op: UnaryOp::Neg,
                arg,
            },
        ) => (**arg).clone(),
        _ => Expr::Unary {
            op,
            arg: Box::new(a),
        },
    }
}

fn cmp<T: PartialOrd + PartialEq>(op: BinaryOp, a: T, b: T) -> Option<bool> {
    Some(match op {
        BinaryOp::Lt => a < b,
        BinaryOp::Le => a <= b,
        BinaryOp::Gt => a > b,
        BinaryOp::Ge => a >= b,
        BinaryOp::Eq => a == b,
        BinaryOp::Ne => a != b,
        _ => return None,
    })
}

/// Fold a binary operation on two literals, if possible.
fn fold_binary(op: BinaryOp, a: &Expr, b: &Expr) -> Option<Expr> {
    use BinaryOp::*;
    let op = match op {
        ElemAdd => Add,
        ElemSub => Sub,
        ElemMul => Mul,
        ElemDiv => Div,
        ElemPow => Pow,
        o => o,
    };
    match (a, b) {
        (Expr::Integer(x), Expr::Integer(y)) => {
            let (x, y) = (*x, *y);
            Some(match op {
                Add => Expr::Integer(x.checked_add(y)?),
                Sub => Expr::Integer(x.checked_sub(y)?),
                Mul => Expr::Integer(x.checked_mul(y)?),
                Div => Expr::Real(x as f64 / y as f64),
                Pow => Expr::Real((x as f64).powf(y as f64)),
                _ => Expr::Boolean(cmp(op, x, y)?),
            })
        }
        (Expr::Boolean(x), Expr::Boolean(y)) => Some(Expr::Boolean(match op {
            And => *x && *y,
            Or => *x || *y,
            _ => cmp(op, *x, *y)?,
        })),
        (Expr::String(x), Expr::String(y)) => Some(match op {
            Add => Expr::String(format!("{x}{y}")),
            _ => Expr::Boolean(cmp(op, x, y)?),
        }),
        (Expr::Enum { index: x, .. }, Expr::Enum { index: y, .. }) => {
            Some(Expr::Boolean(cmp(op, x, y)?))
        }
        _ => {
            let (x, y) = (as_f64(a)?, as_f64(b)?);
            Some(match op {
                Add => Expr::Real(x + y),
                Sub => Expr::Real(x - y),
                Mul => Expr::Real(x * y),
                Div => Expr::Real(x / y),
                Pow => Expr::Real(x.powf(y)),
                _ => Expr::Boolean(cmp(op, x, y)?),
            })
        }
    }
}

pub fn binary(op: BinaryOp, a: Expr, b: Expr) -> Expr {
    if let Some(v) = fold_binary(op, &a, &b) {
        // Integer division by zero stays symbolic (reported at run time).
        if !matches!(v, Expr::Real(x) if !x.is_finite()) {
            return v;
        }
    }
    match (op, &a, &b) {
        (BinaryOp::And, Expr::Boolean(false), _) | (BinaryOp::And, _, Expr::Boolean(false)) => {
            return Expr::Boolean(false)
        }
        (BinaryOp::Or, Expr::Boolean(true), _) | (BinaryOp::Or, _, Expr::Boolean(true)) => {
            return Expr::Boolean(true)
        }
        (BinaryOp::And, Expr::Boolean(true), _) | (BinaryOp::Or, Expr::Boolean(false), _) => {
            return b
        }
        (BinaryOp::And, _, Expr::Boolean(true)) | (BinaryOp::Or, _, Expr::Boolean(false)) => {
            return a
        }
        _ => {}
    }
    Expr::Binary {
        op,
        lhs: Box::new(a),
        rhs: Box::new(b),
    }
}

/// Fold a call of a scalar built-in function with literal arguments.
pub fn call(func: &str, args: Vec<Expr>) -> Expr {
    if let Some(v) = fold_call(func, &args) {
        return v;
    }
    Expr::Call {
        func: func.to_string(),
        args,
    }
}

fn fold_call(func: &str, args: &[Expr]) -> Option<Expr> {
    if !args.iter().all(is_literal) {
        return None;
    }
    let ints = args.iter().all(|a| matches!(a, Expr::Integer(_)));
    let f1 = |f: fn(f64) -> f64| Some(Expr::Real(f(as_f64(args.first()?)?)));
    match (func, args.len()) {
        ("abs", 1) if ints => Some(Expr::Integer(as_i64(&args[0])?.abs())),
        ("abs", 1) => f1(f64::abs),
        ("sign", 1) => Some(Expr::Integer(match as_f64(&args[0])? {
            x if x > 0.0 => 1,
            x if x < 0.0 => -1,
            _ => 0,
        })),
        ("sqrt", 1) if as_f64(&args[0])? >= 0.0 => f1(f64::sqrt),
        ("sin", 1) => f1(f64::sin),
        ("cos", 1) => f1(f64::cos),
        ("tan", 1) => f1(f64::tan),
        ("asin", 1) => f1(f64::asin),
        ("acos", 1) => f1(f64::acos),
        ("atan", 1) => f1(f64::atan),
        ("sinh", 1) => f1(f64::sinh),
        ("cosh", 1) => f1(f64::cosh),
        ("tanh", 1) => f1(f64::tanh),
        ("exp", 1) => f1(f64::exp),
        ("log", 1) if as_f64(&args[0])? > 0.0 => f1(f64::ln),
        ("log10", 1) if as_f64(&args[0])? > 0.0 => f1(f64::log10),
        ("atan2", 2) => Some(Expr::Real(as_f64(&args[0])?.atan2(as_f64(&args[1])?))),
        ("min", 2) if ints => Some(Expr::Integer(as_i64(&args[0])?.min(as_i64(&args[1])?))),
        ("max", 2) if ints => Some(Expr::Integer(as_i64(&args[0])?.max(as_i64(&args[1])?))),
        ("min", 2) => Some(Expr::Real(as_f64(&args[0])?.min(as_f64(&args[1])?))),
        ("max", 2) => Some(Expr::Real(as_f64(&args[0])?.max(as_f64(&args[1])?))),
        ("div", 2) if ints && as_i64(&args[1])? != 0 => {
            Some(Expr::Integer(as_i64(&args[0])? / as_i64(&args[1])?))
        }
        ("mod", 2) if ints && as_i64(&args[1])? != 0 => Some(Expr::Integer(
            as_i64(&args[0])?.rem_euclid(as_i64(&args[1])?),
        )),
        ("rem", 2) if ints && as_i64(&args[1])? != 0 => {
            Some(Expr::Integer(as_i64(&args[0])? % as_i64(&args[1])?))
        }
        ("floor", 1) => f1(f64::floor),
        ("ceil", 1) => f1(f64::ceil),
        ("integer", 1) | ("Integer", 1) => Some(Expr::Integer(as_f64(&args[0])?.floor() as i64)),
        ("Real", 1) => Some(Expr::Real(as_f64(&args[0])?)),
        ("noEvent", 1) => Some(args[0].clone()),
        ("smooth", 2) => Some(args[1].clone()),
        // Only the plain form folds (a Real with 6 significant digits); options (widths,
        // significant digits, formats) are formatted at run time by `moss_codegen`'s
        // `String` built-in.
        ("String", 1) => match &args[0] {
            Expr::Integer(i) => Some(Expr::String(i.to_string())),
            Expr::Boolean(b) => Some(Expr::String(b.to_string())),
            Expr::Enum { literal, .. } => Some(Expr::String(literal.to_string())),
            Expr::Real(r) => Some(Expr::String(format_real(*r, 6))),
            _ => None,
        },
        _ => None,
    }
}

/// `if` expression, dropping branches whose condition is a literal.
pub fn if_expr(branches: Vec<(Expr, Expr)>, else_: Expr) -> Expr {
    let mut kept = Vec::new();
    for (c, v) in branches {
        match c {
            Expr::Boolean(true) if kept.is_empty() => return v,
            Expr::Boolean(true) => {
                return Expr::If {
                    branches: kept,
                    else_: Box::new(v),
                }
            }
            Expr::Boolean(false) => {}
            c => kept.push((c, v)),
        }
    }
    if kept.is_empty() {
        return else_;
    }
    Expr::If {
        branches: kept,
        else_: Box::new(else_),
    }
}

/// Format a Real as Modelica's `String(x)` does by default (6 significant digits, `%g`).
pub fn format_real(x: f64, significant: usize) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if x == 0.0 {
        return "0".into();
    }
    let p = significant.max(1);
    let exp = x.abs().log10().floor() as i32;
    if exp < -5 || exp >= p as i32 {
        let s = format!("{:.*e}", p - 1, x);
        // trim trailing zeros in the mantissa: 1.50000e3 -> 1.5e+03
        let (mant, e) = s.split_once('e').unwrap_or((&s, "0"));
        let mant = trim_zeros(mant);
        let e: i32 = e.parse().unwrap_or(0);
        format!("{mant}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        trim_zeros(&format!("{:.*}", decimals, x)).to_string()
    }
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}
