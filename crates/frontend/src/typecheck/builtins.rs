//! The arguments of the built-in operators (spec 3.7): their types and the variability
//! some of them require, and the type of the result.

use super::types::{type_err, Ty, TypeError};
use super::Checker;
use crate::flat::{Expr, Variability};

type Checked = Result<Option<Ty>, Box<TypeError>>;

/// Mathematical functions of one numeric argument with a Real result (spec 3.7.1–3.7.3).
const REAL_MATH: &[&str] = &[
    "sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "exp", "log",
    "log10", "floor", "ceil",
];

/// Check a call of a built-in operator and give its result type; `None` for a call that is
/// not a built-in this checker knows (a user function).
pub(super) fn check(cx: &Checker, e: &Expr, func: &str, args: &[Expr], tys: &[Ty]) -> Checked {
    let numeric_arg = |what: &str| -> Result<(), Box<TypeError>> {
        match tys.first() {
            Some(t) if !(t.is_numeric() || *t == Ty::Unknown) => Err(type_err(
                e,
                format!(
                    "`{func}` needs a Real or Integer argument, but {what} is of type {}",
                    t.name()
                ),
                "pass a numeric value (for a Boolean, `if b then 1 else 0`)",
            )),
            _ => Ok(()),
        }
    };
    let first = tys.first().cloned().unwrap_or(Ty::Unknown);
    Ok(Some(match func {
        "abs" => {
            numeric_arg("the argument")?;
            first
        }
        "sign" | "integer" => {
            numeric_arg("the argument")?;
            Ty::Integer
        }
        f if REAL_MATH.contains(&f) => {
            numeric_arg("the argument")?;
            Ty::Real
        }
        "der" => {
            der(cx, e, args, &first)?;
            Ty::Real
        }
        "delay" => {
            delay(cx, e, args)?;
            Ty::Real
        }
        "sample" => return sample(cx, e, args, tys),
        "pre" | "noEvent" | "homotopy" => first,
        "smooth" => tys.get(1).cloned().unwrap_or(Ty::Unknown),
        "edge" | "change" | "initial" | "terminal" => Ty::Boolean,
        "String" => Ty::String,
        "div" | "mod" | "rem" if is_literal_zero(args.get(1)) => {
            return Err(type_err(
                e,
                format!("division by zero: the divisor of `{func}` is 0"),
                "`div`, `mod` and `rem` are undefined for a zero divisor (spec 3.7.1); \
                 guard the call with an if-expression",
            ))
        }
        "div" | "mod" | "rem" | "max" | "min" if tys.len() == 2 => {
            match super::types::unify(&tys[0], &tys[1]) {
                Some(t) if t.is_numeric() || t == Ty::Unknown => t,
                _ => Ty::Unknown,
            }
        }
        _ => return Ok(None),
    }))
}

/// A literal 0 or 0.0 (also negated): a divisor known to be zero at translation time.
fn is_literal_zero(e: Option<&Expr>) -> bool {
    match e {
        Some(Expr::Integer(0)) => true,
        Some(Expr::Real(x)) => *x == 0.0,
        Some(Expr::Unary { arg, .. }) => is_literal_zero(Some(arg)),
        _ => false,
    }
}

/// `der(x)`: `x` is a Real expression (spec 3.7.4), and not a discrete-time variable
/// (spec 4.5).
fn der(cx: &Checker, e: &Expr, args: &[Expr], t: &Ty) -> Result<(), Box<TypeError>> {
    if !matches!(t, Ty::Real | Ty::Unknown) {
        return Err(type_err(
            e,
            format!("`der` needs a Real argument, not {}", t.name()),
            "only Real expressions have a time derivative; declare the variable Real",
        ));
    }
    if let Some(Expr::Var { name, .. }) = args.first() {
        if let Some(v) = cx.var(name) {
            if v.variability == Variability::Discrete {
                return Err(type_err(
                    e,
                    format!("`der` is applied to `{name}`, a discrete-time variable"),
                    "a discrete-time variable changes only at events and has no derivative; remove `discrete` or the `der`",
                ));
            }
        }
    }
    Ok(())
}

/// `delay(expr, delayTime, delayMax)`: `delayMax` is a parameter expression, and so is
/// `delayTime` in the two-argument form; `0 <= delayTime <= delayMax` (spec 3.7.4.1).
fn delay(cx: &Checker, e: &Expr, args: &[Expr]) -> Result<(), Box<TypeError>> {
    let (Some(dt), max) = (args.get(1), args.get(2).filter(|m| Some(*m) != args.get(1))) else {
        return Ok(());
    };
    let (bound, what) = match max {
        Some(m) => (m, "delayMax"),
        None => (dt, "delayTime (without delayMax)"),
    };
    let v = cx.variability_of(bound);
    if v > Variability::Parameter {
        return Err(type_err(
            e,
            format!(
                "the {what} argument of `delay`, `{}`, must be a parameter expression",
                crate::print::print_expr(bound)
            ),
            "use a parameter or constant for the largest delay (`delay(x, d, dMax)` with a parameter `dMax`)",
        ));
    }
    if let (Some(m), Some(a), Some(b)) = (
        max,
        crate::fold::as_f64(dt),
        max.and_then(crate::fold::as_f64),
    ) {
        if a > b || a < 0.0 {
            return Err(type_err(
                e,
                format!(
                    "`delay` needs 0 <= delayTime <= delayMax, but delayTime is {a} and delayMax is `{}`",
                    crate::print::print_expr(m)
                ),
                "make delayMax at least as large as the delay time",
            ));
        }
    }
    Ok(())
}

/// `sample(start, interval)` (the event-generating form, spec 3.7.5): both arguments are
/// parameter expressions. The clocked forms (one argument, or a Clock) are left alone.
fn sample(cx: &Checker, e: &Expr, args: &[Expr], tys: &[Ty]) -> Checked {
    if args.len() != 2 || !tys[1].is_numeric() {
        return Ok(None);
    }
    for (a, what) in args.iter().zip(["start", "interval"]) {
        if cx.variability_of(a) > Variability::Parameter {
            return Err(type_err(
                e,
                format!(
                    "the {what} of `sample`, `{}`, must be a parameter expression",
                    crate::print::print_expr(a)
                ),
                "`sample(start, interval)` fixes its event times before the simulation: use parameters or constants",
            ));
        }
    }
    Ok(Some(Ty::Boolean))
}
