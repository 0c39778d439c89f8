//! Variability (spec 3.8): constant ≤ parameter ≤ discrete-time ≤ continuous-time. An
//! expression is as variable as its most variable part, except that relations and the
//! event-generating functions are discrete-time, and `der`/`delay` continuous-time.

use super::types::{type_err, Ty, TypeError};
use super::Checker;
use crate::flat::{BinaryOp, Equation, Expr, Origin, ScalarType, Variability};
use crate::inst::Res;
use moss_syntax::Diagnostic;

fn word(v: Variability) -> &'static str {
    match v {
        Variability::Constant => "constant",
        Variability::Parameter => "parameter",
        Variability::Discrete => "discrete-time",
        Variability::Continuous => "continuous-time",
    }
}

impl Checker<'_> {
    /// The variability of a flat expression. Names that are not model variables (loop
    /// iterators) count as constants: the check never rejects what it cannot see.
    pub(crate) fn variability_of(&self, e: &Expr) -> Variability {
        match e {
            Expr::Var { name, subscripts } => {
                let mut v = self
                    .var(name)
                    .map_or(Variability::Constant, |v| v.variability);
                for s in subscripts {
                    if let crate::flat::Subscript::Index(x) = s {
                        v = v.max(self.variability_of(x));
                    }
                }
                v
            }
            Expr::Time => Variability::Continuous,
            Expr::Binary { op, lhs, rhs } => {
                let v = self.variability_of(lhs).max(self.variability_of(rhs));
                if matches!(
                    op,
                    BinaryOp::Lt
                        | BinaryOp::Le
                        | BinaryOp::Gt
                        | BinaryOp::Ge
                        | BinaryOp::Eq
                        | BinaryOp::Ne
                ) {
                    v.min(Variability::Discrete)
                } else {
                    v
                }
            }
            Expr::Call { func, args } => match func.as_str() {
                "der" | "delay" => Variability::Continuous,
                "pre" | "edge" | "change" | "initial" | "terminal" | "sample" => {
                    Variability::Discrete
                }
                "integer" | "floor" | "ceil" | "div" | "mod" | "rem" | "sign" | "Integer" => {
                    self.max_of(args).min(Variability::Discrete)
                }
                _ => self.max_of(args),
            },
            _ => {
                let mut v = Variability::Constant;
                crate::walk::exprs(e, &mut |x| v = v.max(self.variability_of(x)));
                v
            }
        }
    }

    fn max_of(&self, args: &[Expr]) -> Variability {
        args.iter()
            .map(|a| self.variability_of(a))
            .max()
            .unwrap_or(Variability::Constant)
    }

    /// Outside `when`, a discrete-time variable (Integer, Boolean, String, enumeration, or a
    /// Real declared `discrete`) is not given a continuous-time value (spec 3.8.4), and a
    /// Real declared `discrete` is not given a value at all (it must be assigned in a
    /// when-clause, spec 4.5).
    pub(crate) fn discrete_equation(&self, lhs: &Expr, rhs: &Expr) -> Result<(), Box<TypeError>> {
        // Only an equation written as `v = expr` is taken to give `v` its value: in
        // `x = i` or `2*x = i` the continuous `x` may well be the unknown.
        let Some(var) = self.discrete_var(lhs) else {
            return Ok(());
        };
        if matches!(rhs, Expr::Var { .. }) {
            return Ok(());
        }
        let ov = self.variability_of(rhs);
        // A Real declared `discrete` must be assigned in a when-clause (spec 4.5). Library
        // code also computes one from discrete-time values outside `when` (a function of
        // other discrete variables), which is accepted; a value that never changes
        // (a parameter expression) is certainly not what `discrete` means.
        if var.ty == ScalarType::Real && ov <= Variability::Parameter {
            return Err(type_err(
                rhs,
                format!(
                    "`{}` is declared `discrete` but is given the {} value `{}` outside a when-clause",
                    var.name,
                    word(ov),
                    crate::print::print_expr(rhs)
                ),
                "assign a discrete Real inside `when`, or declare it as a parameter",
            ));
        }
        if ov == Variability::Continuous {
            return Err(type_err(
                rhs,
                format!(
                    "{} variable `{}` is discrete-time, but `{}` is a {} expression",
                    discrete_kind(&var.ty),
                    var.name,
                    crate::print::print_expr(rhs),
                    word(ov)
                ),
                "a discrete-time variable only changes at events: compute it inside `when`, or from discrete-time values (relations, `integer(x)`, `pre(...)`)",
            ));
        }
        Ok(())
    }

    /// The discrete-time variable (not a parameter) that `e` names, if it does.
    fn discrete_var(&self, e: &Expr) -> Option<&crate::flat::Variable> {
        let Expr::Var { name, .. } = e else {
            return None;
        };
        let v = self.var(name)?;
        (v.variability == Variability::Discrete && v.ty != ScalarType::Clock).then_some(v)
    }

    /// An if-equation whose conditions are not all parameter expressions has the same
    /// number of equations in every branch, a missing `else` counting as none (spec 8.3.4):
    /// otherwise the number of equations would change during the simulation.
    pub(crate) fn if_equation_counts(
        &self,
        branches: &[(Expr, Vec<Equation>)],
        else_: &[Equation],
        origin: &Origin,
    ) -> Res<()> {
        let varying = branches
            .iter()
            .map(|(c, _)| self.variability_of(c))
            .max()
            .unwrap_or(Variability::Constant);
        if varying <= Variability::Parameter {
            return Ok(());
        }
        let else_count = count_equations(else_);
        for (k, (_, body)) in branches.iter().enumerate() {
            let n = count_equations(body);
            if n != else_count {
                let else_text = if else_.is_empty() {
                    "the missing else branch has none".to_string()
                } else {
                    format!("the else branch has {else_count}")
                };
                return Err(Box::new(
                    Diagnostic::error(
                        origin.span,
                        format!(
                            "branch {} of this if-equation has {n} equation(s), but {else_text}",
                            k + 1
                        ),
                    )
                    .with_note(format!(
                        "its condition is a {} expression, so every branch must have the same number of equations",
                        word(varying)
                    ))
                    .with_help("give every branch (including `else`) the same number of equations"),
                ));
            }
        }
        Ok(())
    }
}

/// The number of scalar equations, as the balance count sees them.
fn count_equations(eqs: &[Equation]) -> usize {
    eqs.iter()
        .map(|e| match e {
            Equation::Equal { lhs, .. } => scalar_count(lhs),
            Equation::If {
                branches, else_, ..
            } => branches
                .first()
                .map_or_else(|| count_equations(else_), |(_, b)| count_equations(b)),
            _ => 0,
        })
        .sum()
}

fn scalar_count(e: &Expr) -> usize {
    match e {
        Expr::Array(items) => items.iter().map(scalar_count).sum(),
        Expr::Tuple(items) => items.iter().flatten().map(scalar_count).sum(),
        _ => 1,
    }
}

/// How a discrete-time variable of this type is named in messages.
fn discrete_kind(t: &ScalarType) -> String {
    match t {
        ScalarType::Real => "discrete Real".into(),
        t => Ty::of_scalar(t).name(),
    }
}
