//! Generic traversals of flat expressions and equations.

use crate::flat::{Equation, Expr, FlatModel, Statement, Subscript, Variable};

/// The direct sub-expressions of an expression, in one order for both the shared and the
/// mutable traversal (written once; `$iter` is `iter` or `iter_mut`).
macro_rules! each_child {
    ($e:expr, $f:expr, $iter:ident) => {
        match $e {
            Expr::Var { subscripts, .. } => {
                for s in subscripts {
                    if let Subscript::Index(x) = s {
                        $f(x);
                    }
                }
            }
            Expr::Unary { arg, .. } => $f(arg),
            Expr::Binary { lhs, rhs, .. } => {
                $f(lhs);
                $f(rhs);
            }
            Expr::Call { args, .. } => args.$iter().for_each(|x| $f(x)),
            Expr::If { branches, else_ } => {
                for (c, v) in branches {
                    $f(c);
                    $f(v);
                }
                $f(else_);
            }
            Expr::Array(items) => items.$iter().for_each(|x| $f(x)),
            Expr::Range { start, step, stop } => {
                $f(start);
                if let Some(s) = step {
                    $f(s);
                }
                $f(stop);
            }
            Expr::Tuple(items) => items.$iter().flatten().for_each(|x| $f(x)),
            Expr::CallOutput { call, .. } => $f(call),
            _ => {}
        }
    };
}

/// Apply `f` to each direct sub-expression of `e`.
pub fn exprs_mut(e: &mut Expr, f: &mut dyn FnMut(&mut Expr)) {
    each_child!(e, f, iter_mut)
}

/// Apply `f` to each direct sub-expression of `e`, read-only (the same order as
/// [`exprs_mut`]).
pub fn exprs(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    each_child!(e, f, iter)
}

/// Visit every expression of `e` (pre-order). Linear in the size of `e`: nothing is copied,
/// so deep trees (the flow sum of a connection set with thousands of members) stay cheap.
pub fn visit(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    exprs(e, &mut |x| visit(x, f));
}

/// The top-level expressions of an equation (recursively through branches), for the shared
/// and the mutable traversal (written once; `$iter` is `iter` or `iter_mut`, `$rec` the
/// traversal itself).
macro_rules! each_equation_expr {
    ($eq:expr, $f:expr, $iter:ident, $rec:ident) => {
        match $eq {
            Equation::Equal { lhs, rhs, .. } => {
                $f(lhs);
                $f(rhs);
            }
            Equation::If {
                branches, else_, ..
            } => {
                for (c, b) in branches {
                    $f(c);
                    b.$iter().for_each(|e| $rec(e, $f));
                }
                else_.$iter().for_each(|e| $rec(e, $f));
            }
            Equation::When { branches, .. } => {
                for (c, b) in branches {
                    $f(c);
                    b.$iter().for_each(|e| $rec(e, $f));
                }
            }
            Equation::Reinit { value, .. } => $f(value),
            Equation::Assert {
                condition, message, ..
            } => {
                $f(condition);
                $f(message);
            }
            Equation::Terminate { message, .. } => $f(message),
            Equation::Call { args, .. } => args.$iter().for_each(|x| $f(x)),
        }
    };
}

/// Apply `f` to every top-level expression of an equation (recursively through branches).
pub fn equation_exprs_mut(eq: &mut Equation, f: &mut dyn FnMut(&mut Expr)) {
    each_equation_expr!(eq, f, iter_mut, equation_exprs_mut)
}

/// [`equation_exprs_mut`] read-only.
pub fn equation_exprs(eq: &Equation, f: &mut dyn FnMut(&Expr)) {
    each_equation_expr!(eq, f, iter, equation_exprs)
}

/// Apply `f` to the top-level expressions of every equation and algorithm statement of the
/// model, initial ones included (not to variable bindings and attributes).
pub fn model_equation_exprs_mut(model: &mut FlatModel, f: &mut dyn FnMut(&mut Expr)) {
    for eq in model
        .equations
        .iter_mut()
        .chain(model.initial_equations.iter_mut())
    {
        equation_exprs_mut(eq, f);
    }
    for a in model
        .algorithms
        .iter_mut()
        .chain(model.initial_algorithms.iter_mut())
    {
        for s in &mut a.statements {
            statement_exprs_mut(s, f);
        }
    }
}

/// The top-level expressions of a statement (recursively through its bodies); see
/// [`each_equation_expr`].
macro_rules! each_statement_expr {
    ($s:expr, $f:expr, $iter:ident, $rec:ident) => {
        match $s {
            Statement::Assign { target, value, .. } => {
                $f(target);
                $f(value);
            }
            Statement::TupleAssign { targets, value, .. } => {
                targets.$iter().flatten().for_each(|x| $f(x));
                $f(value);
            }
            Statement::If {
                branches, else_, ..
            } => {
                for (c, b) in branches {
                    $f(c);
                    b.$iter().for_each(|s| $rec(s, $f));
                }
                else_.$iter().for_each(|s| $rec(s, $f));
            }
            Statement::For { range, body, .. } => {
                $f(range);
                body.$iter().for_each(|s| $rec(s, $f));
            }
            Statement::While {
                condition, body, ..
            } => {
                $f(condition);
                body.$iter().for_each(|s| $rec(s, $f));
            }
            Statement::When { branches, .. } => {
                for (c, b) in branches {
                    $f(c);
                    b.$iter().for_each(|s| $rec(s, $f));
                }
            }
            Statement::Reinit { value, .. } => $f(value),
            Statement::Assert {
                condition, message, ..
            } => {
                $f(condition);
                $f(message);
            }
            Statement::Terminate { message, .. } => $f(message),
            Statement::Call { args, .. } => args.$iter().for_each(|x| $f(x)),
            Statement::Return { .. } | Statement::Break { .. } => {}
        }
    };
}

pub fn statement_exprs_mut(s: &mut Statement, f: &mut dyn FnMut(&mut Expr)) {
    each_statement_expr!(s, f, iter_mut, statement_exprs_mut)
}

/// [`statement_exprs_mut`] read-only.
pub fn statement_exprs(s: &Statement, f: &mut dyn FnMut(&Expr)) {
    each_statement_expr!(s, f, iter, statement_exprs)
}

/// Apply `f` to the expressions of a variable: its binding and the attributes that are
/// expressions (`start`, `nominal`, `min`, `max`).
pub fn variable_exprs_mut(v: &mut Variable, f: &mut dyn FnMut(&mut Expr)) {
    let a = &mut v.attrs;
    for e in [
        &mut v.binding,
        &mut a.start,
        &mut a.nominal,
        &mut a.min,
        &mut a.max,
    ]
    .into_iter()
    .flatten()
    {
        f(e);
    }
}

/// [`variable_exprs_mut`] read-only.
pub fn variable_exprs(v: &Variable, f: &mut dyn FnMut(&Expr)) {
    let a = &v.attrs;
    for e in [&v.binding, &a.start, &a.nominal, &a.min, &a.max]
        .into_iter()
        .flatten()
    {
        f(e);
    }
}
