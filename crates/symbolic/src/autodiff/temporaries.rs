//! Temporaries for the operands that the derivative rules repeat.
//!
//! The product rule `d(a*b) = da*b + a*db` writes `a` and `b` out again, and so do the
//! rules of quotients, powers and calls. On a nested expression this is quadratic: the
//! Horner forms of the IF97 Gibbs functions (`pi1*(c1 + pi1*(c2 + pi1*(...)))`) copy each
//! inner polynomial once per level, and `g1.$der.$der` grew to 50 times the size of `g1`,
//! too large for native code. Before an assignment is differentiated, every large scalar
//! Real operand of a product, quotient, power or call is therefore assigned to a
//! temporary local (`$h1_3 := ...`), which then gets a derivative statement of its own;
//! the rules repeat only variables, and the derivative function stays a constant multiple
//! of the function at every order.
//!
//! Only operands that are evaluated whenever the assignment is: nothing inside an
//! `if`-expression (a branch may be guarded: `if x > 0 then sqrt(x)*y else 0`), no
//! subscripts, no conditions. The values are the same numbers in the same order, so the
//! function's own outputs do not change by a rounding.

use super::Differ;
use moss_frontend::flat::{BinaryOp, Expr, FunctionVar, Origin, ScalarType, Statement};

/// Operands with fewer nodes than this are repeated: a temporary and its derivative
/// statement cost more than copying `-x` or `x*y`.
const MIN_HOISTED_NODES: usize = 4;

/// Built-in functions of one scalar Real argument (or two, for `atan2`, `min`, `max`)
/// whose derivative rules repeat their arguments.
const REPEATING_BUILTINS: &[&str] = &[
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "exp", "log",
    "log10", "sqrt", "abs", "min", "max",
];

/// Built-in functions whose arguments are evaluated unconditionally and may hold operands
/// worth a temporary.
const TRANSPARENT_BUILTINS: &[&str] = &["noEvent", "smooth", "homotopy", "Real"];

impl Differ<'_, '_> {
    /// `value` with its large operands replaced by temporaries; their assignments are
    /// appended to `temps` in evaluation order (inner operands first).
    pub(super) fn with_temporaries(
        &mut self,
        value: &Expr,
        origin: &Origin,
        temps: &mut Vec<Statement>,
    ) -> Expr {
        match value {
            Expr::Binary { op, lhs, rhs } => {
                let mut l = self.with_temporaries(lhs, origin, temps);
                let mut r = self.with_temporaries(rhs, origin, temps);
                if repeats_operands(*op) {
                    l = self.temporary_for(l, origin, temps);
                    r = self.temporary_for(r, origin, temps);
                }
                Expr::Binary {
                    op: *op,
                    lhs: Box::new(l),
                    rhs: Box::new(r),
                }
            }
            Expr::Unary { op, arg } => Expr::Unary {
                op: *op,
                arg: Box::new(self.with_temporaries(arg, origin, temps)),
            },
            Expr::Call { func, args } => {
                let repeating = REPEATING_BUILTINS.contains(&func.as_str())
                    || !moss_frontend::flat::BUILTINS.contains(&func.as_str());
                if !repeating && !TRANSPARENT_BUILTINS.contains(&func.as_str()) {
                    return value.clone();
                }
                let args = args
                    .iter()
                    .map(|a| {
                        let a = self.with_temporaries(a, origin, temps);
                        if repeating {
                            self.temporary_for(a, origin, temps)
                        } else {
                            a
                        }
                    })
                    .collect();
                Expr::Call {
                    func: func.clone(),
                    args,
                }
            }
            _ => value.clone(),
        }
    }

    /// A new temporary holding `e` when `e` is a large scalar Real expression, else `e`.
    fn temporary_for(&mut self, e: Expr, origin: &Origin, temps: &mut Vec<Statement>) -> Expr {
        if node_count(&e, MIN_HOISTED_NODES) < MIN_HOISTED_NODES
            || self.ndims(&e) != Some(0)
            || !self.real_valued(&e)
        {
            return e;
        }
        let name = format!("$h{}_{}", self.order, self.temporaries.len());
        let var = FunctionVar {
            name: name.clone(),
            ty: ScalarType::Real,
            dims: Vec::new(),
            default: None,
        };
        self.vars.insert(name.clone(), var.clone());
        self.temporaries.push(var);
        let target = Expr::Var {
            name,
            subscripts: Vec::new(),
        };
        temps.push(Statement::Assign {
            target: target.clone(),
            value: e,
            origin: origin.clone(),
        });
        target
    }

    /// Whether `e` has a Real value that may have a derivative (a Real variable, literal or
    /// call in it; Integer arithmetic and relations do not count).
    fn real_valued(&self, e: &Expr) -> bool {
        match e {
            Expr::Real(_) => true,
            Expr::Var { name, .. } => self.is_real_var(name),
            Expr::Unary { arg, .. } => self.real_valued(arg),
            Expr::Binary { op, lhs, rhs } => {
                is_arithmetic(*op) && (self.real_valued(lhs) || self.real_valued(rhs))
            }
            Expr::Call { func, .. } => {
                if moss_frontend::flat::BUILTINS.contains(&func.as_str()) {
                    REPEATING_BUILTINS.contains(&func.as_str())
                } else {
                    self.g
                        .lookup(func)
                        .and_then(|f| f.outputs.first())
                        .is_some_and(|o| o.ty == ScalarType::Real)
                }
            }
            Expr::If { branches, else_ } => {
                branches.iter().any(|(_, v)| self.real_valued(v)) || self.real_valued(else_)
            }
            _ => false,
        }
    }
}

/// Operators whose derivative rule repeats an operand.
fn repeats_operands(op: BinaryOp) -> bool {
    use BinaryOp::*;
    matches!(op, Mul | ElemMul | Div | ElemDiv | Pow | ElemPow)
}

fn is_arithmetic(op: BinaryOp) -> bool {
    use BinaryOp::*;
    matches!(
        op,
        Add | Sub | Mul | Div | Pow | ElemAdd | ElemSub | ElemMul | ElemDiv | ElemPow
    )
}

/// Nodes of `e` as a tree (a variable with its subscripts is one), counted up to `cap`.
fn node_count(e: &Expr, cap: usize) -> usize {
    fn count(e: &Expr, left: &mut usize) {
        if *left == 0 {
            return;
        }
        *left -= 1;
        // a subscripted variable is copied as cheaply as a plain one
        if !matches!(e, Expr::Var { .. }) {
            moss_frontend::walk::exprs(e, &mut |x| count(x, left));
        }
    }
    let mut left = cap;
    count(e, &mut left);
    cap - left
}
