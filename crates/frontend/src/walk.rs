//! Generic traversals of flat expressions and equations.

use crate::flat::{Equation, Expr, FlatModel, Statement, Subscript};

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

/// Apply `f` to every top-level expression of an equation (recursively through branches).
pub fn equation_exprs_mut(eq: &mut Equation, f: &mut dyn FnMut(&mut Expr)) {
    match eq {
        Equation::Equal { lhs, rhs, .. } => {
            f(lhs);
            f(rhs);
        }
        Equation::If {
            branches, else_, ..
        } => {
            for (c, b) in branches {
                f(c);
                b.iter_mut().for_each(|e| equation_exprs_mut(e, f));
            }
            else_.iter_mut().for_each(|e| equation_exprs_mut(e, f));
        }
        Equation::When { branches, .. } => {
            for (c, b) in branches {
                f(c);
                b.iter_mut().for_each(|e| equation_exprs_mut(e, f));
            }
        }
        Equation::Reinit { value, .. } => f(value),
        Equation::Assert {
            condition, message, ..
        } => {
            f(condition);
            f(message);
        }
        Equation::Terminate { message, .. } => f(message),
        Equation::Call { args, .. } => args.iter_mut().for_each(f),
    }
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

pub fn statement_exprs_mut(s: &mut Statement, f: &mut dyn FnMut(&mut Expr)) {
    match s {
        Statement::Assign { target, value, .. } => {
            f(target);
            f(value);
        }
        Statement::TupleAssign { targets, value, .. } => {
            targets.iter_mut().flatten().for_each(&mut *f);
            f(value);
        }
        Statement::If {
            branches, else_, ..
        } => {
            for (c, b) in branches {
                f(c);
                b.iter_mut().for_each(|s| statement_exprs_mut(s, f));
            }
            else_.iter_mut().for_each(|s| statement_exprs_mut(s, f));
        }
        Statement::For { range, body, .. } => {
            f(range);
            body.iter_mut().for_each(|s| statement_exprs_mut(s, f));
        }
        Statement::While {
            condition, body, ..
        } => {
            f(condition);
            body.iter_mut().for_each(|s| statement_exprs_mut(s, f));
        }
        Statement::When { branches, .. } => {
            for (c, b) in branches {
                f(c);
                b.iter_mut().for_each(|s| statement_exprs_mut(s, f));
            }
        }
        Statement::Reinit { value, .. } => f(value),
        Statement::Assert {
            condition, message, ..
        } => {
            f(condition);
            f(message);
        }
        Statement::Terminate { message, .. } => f(message),
        Statement::Call { args, .. } => args.iter_mut().for_each(f),
        Statement::Return { .. } | Statement::Break { .. } => {}
    }
}
