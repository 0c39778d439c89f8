//! Expression types (spec chapter 3.4–3.5, 6.7, 10.6): the scalar type of every flat
//! expression, the operands each operator accepts, and which types a binding or an
//! equation may join.
//!
//! The checker is deliberately lenient: an expression whose type it cannot tell (a call it
//! does not know, a name that is not a model variable) is [`Ty::Unknown`], which is
//! compatible with everything. Only a type that is certainly wrong is reported.

use crate::flat::{BinaryOp, Expr, ScalarType, UnaryOp};
use std::sync::Arc;

/// The scalar type of an expression (arrays have the type of their elements).
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    Real,
    Integer,
    Boolean,
    String,
    Enum(Arc<str>),
    Clock,
    Unknown,
}

impl Ty {
    pub fn of_scalar(t: &ScalarType) -> Ty {
        match t {
            ScalarType::Real => Ty::Real,
            ScalarType::Integer => Ty::Integer,
            ScalarType::Boolean => Ty::Boolean,
            ScalarType::String => Ty::String,
            ScalarType::Clock => Ty::Clock,
            ScalarType::Enumeration { name, .. } => Ty::Enum(name.clone()),
        }
    }

    pub fn is_numeric(&self) -> bool {
        matches!(self, Ty::Real | Ty::Integer)
    }

    /// How the type is named in messages.
    pub fn name(&self) -> String {
        match self {
            Ty::Real => "Real".into(),
            Ty::Integer => "Integer".into(),
            Ty::Boolean => "Boolean".into(),
            Ty::String => "String".into(),
            Ty::Enum(n) => format!("enumeration `{n}`"),
            Ty::Clock => "Clock".into(),
            Ty::Unknown => "unknown".into(),
        }
    }
}

/// A type error: what is wrong, how to fix it, and the sub-expression it is about.
pub struct TypeError {
    pub message: String,
    pub help: String,
    pub at: Expr,
}

pub type TyRes = Result<Ty, Box<TypeError>>;

pub fn type_err(at: &Expr, message: String, help: &str) -> Box<TypeError> {
    Box::new(TypeError {
        message,
        help: help.to_string(),
        at: at.clone(),
    })
}

/// The common type of two branches or array elements; `None` when they cannot be joined.
pub fn unify(a: &Ty, b: &Ty) -> Option<Ty> {
    Some(match (a, b) {
        (Ty::Unknown, _) | (_, Ty::Unknown) => Ty::Unknown,
        (x, y) if x == y => x.clone(),
        (x, y) if x.is_numeric() && y.is_numeric() => Ty::Real,
        _ => return None,
    })
}

fn is_relation(op: BinaryOp) -> bool {
    matches!(
        op,
        BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge | BinaryOp::Eq | BinaryOp::Ne
    )
}

/// The type of `lhs op rhs` given the operand types (`e` is the whole expression).
pub fn binary(op: BinaryOp, e: &Expr, lhs: &Expr, a: &Ty, rhs: &Expr, b: &Ty) -> TyRes {
    if matches!(op, BinaryOp::And | BinaryOp::Or) {
        for t in [a, b] {
            if !matches!(t, Ty::Boolean | Ty::Unknown) {
                return Err(type_err(
                    e,
                    format!("`{}` needs Boolean operands, not {}", op.symbol(), t.name()),
                    "compare the value with something (`x > 0`) to get a Boolean",
                ));
            }
        }
        return Ok(Ty::Boolean);
    }
    if is_relation(op) {
        return relation(op, e, lhs, a, rhs, b).map(|()| Ty::Boolean);
    }
    arithmetic(op, e, a, b)
}

/// Both sides of a relation have the same kind of type (spec 3.5): numbers, Booleans,
/// Strings or the same enumeration.
fn relation(
    op: BinaryOp,
    e: &Expr,
    lhs: &Expr,
    a: &Ty,
    rhs: &Expr,
    b: &Ty,
) -> Result<(), Box<TypeError>> {
    let ok = match (a, b) {
        (Ty::Unknown, _) | (_, Ty::Unknown) => true,
        (x, y) if x.is_numeric() && y.is_numeric() => true,
        (Ty::Enum(x), Ty::Enum(y)) => x == y,
        // moss's own selection of an array element by a subscript known only during the
        // simulation compares the subscript variable with the 1-based index, also for an
        // enumeration: only a written enumeration literal, or a Real, is certainly wrong.
        (Ty::Enum(_), Ty::Integer) => !matches!(lhs, Expr::Enum { .. }),
        (Ty::Integer, Ty::Enum(_)) => !matches!(rhs, Expr::Enum { .. }),
        (x, y) => x == y,
    };
    if ok {
        return Ok(());
    }
    let help = if matches!(a, Ty::Enum(_)) || matches!(b, Ty::Enum(_)) {
        "compare an enumeration only with literals of the same enumeration, or convert it with `Integer(e)`"
    } else {
        "compare values of the same type"
    };
    Err(type_err(
        e,
        format!("`{}` compares {} with {}", op.symbol(), a.name(), b.name()),
        help,
    ))
}

fn arithmetic(op: BinaryOp, e: &Expr, a: &Ty, b: &Ty) -> TyRes {
    let string_add = matches!(op, BinaryOp::Add | BinaryOp::ElemAdd)
        && matches!(a, Ty::String | Ty::Unknown)
        && matches!(b, Ty::String | Ty::Unknown)
        && (*a == Ty::String || *b == Ty::String);
    if string_add {
        return Ok(Ty::String);
    }
    for t in [a, b] {
        if !(t.is_numeric() || *t == Ty::Unknown) {
            let help = match t {
                Ty::Enum(_) => "convert the enumeration value with `Integer(e)` first",
                Ty::Boolean => "use `if b then 1 else 0` to turn a Boolean into a number",
                _ => "arithmetic operators need Real or Integer operands",
            };
            return Err(type_err(
                e,
                format!("`{}` is not defined for {} operands", op.symbol(), t.name()),
                help,
            ));
        }
    }
    Ok(match op {
        // `/` and `^` give a Real result even for Integer operands (spec 3.4).
        BinaryOp::Div | BinaryOp::ElemDiv | BinaryOp::Pow | BinaryOp::ElemPow => Ty::Real,
        _ => match (a, b) {
            (Ty::Integer, Ty::Integer) => Ty::Integer,
            (Ty::Unknown, _) | (_, Ty::Unknown) => Ty::Unknown,
            _ => Ty::Real,
        },
    })
}

pub fn unary(op: UnaryOp, e: &Expr, t: &Ty) -> TyRes {
    match op {
        UnaryOp::Not if matches!(t, Ty::Boolean | Ty::Unknown) => Ok(Ty::Boolean),
        UnaryOp::Not => Err(type_err(
            e,
            format!("`not` needs a Boolean operand, not {}", t.name()),
            "compare the value with something (`x > 0`) to get a Boolean",
        )),
        UnaryOp::Neg if t.is_numeric() || *t == Ty::Unknown => Ok(t.clone()),
        UnaryOp::Neg => Err(type_err(
            e,
            format!("unary `-` is not defined for {} operands", t.name()),
            "arithmetic operators need Real or Integer operands",
        )),
    }
}

/// Whether a value of type `value` may be bound to (assigned to) a variable of type
/// `target` (spec 6.7: only Integer → Real is converted implicitly).
pub fn assignable(target: &Ty, value: &Ty) -> bool {
    match (target, value) {
        (_, Ty::Unknown) | (Ty::Unknown, _) | (Ty::Clock, _) | (_, Ty::Clock) => true,
        (Ty::Real, v) => v.is_numeric(),
        (t, v) => t == v,
    }
}

/// Whether the two sides of an equation may be equal (spec 8.3.1: Integer and Real mix).
pub fn equatable(a: &Ty, b: &Ty) -> bool {
    match (a, b) {
        (x, y) if x.is_numeric() && y.is_numeric() => true,
        _ => assignable(a, b),
    }
}

/// The advice for a value of type `value` where `target` is expected.
pub fn conversion_help(target: &Ty, value: &Ty) -> String {
    match (target, value) {
        (Ty::Integer, Ty::Real) => {
            "a Real value is not converted to Integer implicitly: use `integer(x)` (or `div(a, b)` for Integer division)".into()
        }
        (Ty::Integer | Ty::Real, Ty::Enum(_)) => {
            "convert the enumeration value with `Integer(e)`".into()
        }
        (Ty::Enum(n), Ty::Integer) => {
            format!("use a literal of `{n}`, or convert the number with `{n}(i)`")
        }
        (Ty::Enum(n), Ty::Enum(_)) => format!("use a literal of `{n}`"),
        _ => format!("give a value of type {}", target.name()),
    }
}
