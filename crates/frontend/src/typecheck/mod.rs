//! The type checker: one walk over the flat model after instantiation, checking the rules of
//! spec chapters 3, 4, 8, 10 and 11 that instantiation itself does not enforce — the type of
//! every expression ([`types`]), variability ([`variability`]) and the arguments of the
//! built-in operators ([`builtins`]).
//!
//! Like OpenModelica's NFTyping after NFInst, it runs as its own pass on the instantiated
//! model: every name already denotes one variable with its declared type and variability,
//! so typing an expression needs no lookup beyond one table of the variables, and the walk
//! is linear in the size of the model. A few rules need the syntax that flattening removes
//! (how many outputs a call has, the shape of a `for` range, the exponent of a matrix
//! power); [`structure`] has them, called where flattening sees that syntax.
//!
//! Flat expressions carry no source positions, so an error points at the equation or
//! declaration and names the offending sub-expression.

mod builtins;
pub mod structure;
pub mod types;
mod variability;

use crate::flat::{Equation, Expr, FlatModel, Function, FunctionBody, Origin, Statement, Variable};
use crate::inst::Res;
use moss_syntax::Diagnostic;
use std::collections::{BTreeMap, HashMap};
use types::{type_err, Ty, TyRes, TypeError};

/// Check the flat model; the first error found is returned.
pub fn check(model: &FlatModel) -> Res<()> {
    let cx = Checker::new(model);
    cx.check_model(model)
}

pub(crate) struct Checker<'m> {
    vars: HashMap<&'m str, &'m Variable>,
    functions: &'m BTreeMap<String, Function>,
}

impl<'m> Checker<'m> {
    fn new(model: &'m FlatModel) -> Checker<'m> {
        Checker {
            vars: model
                .variables
                .iter()
                .map(|v| (v.name.as_str(), v))
                .collect(),
            functions: &model.functions,
        }
    }

    fn check_model(&self, model: &FlatModel) -> Res<()> {
        for v in &model.variables {
            self.check_binding(v)?;
        }
        for eq in &model.equations {
            self.equation(eq, false, true)?;
        }
        // Initial equations may give discrete-time variables their first values (the
        // rules of `discrete_equation` do not apply), as a `when` body does.
        for eq in &model.initial_equations {
            self.equation(eq, true, false)?;
        }
        for alg in &model.algorithms {
            for s in &alg.statements {
                self.statement(s, false)?;
            }
        }
        for alg in &model.initial_algorithms {
            for s in &alg.statements {
                self.statement(s, true)?;
            }
        }
        for f in model.functions.values() {
            check_function(f)?;
        }
        Ok(())
    }

    pub(crate) fn var(&self, name: &str) -> Option<&'m Variable> {
        self.vars.get(name).copied()
    }

    /// The declaration binding of a parameter or constant has the variable's type.
    fn check_binding(&self, v: &Variable) -> Res<()> {
        let Some(b) = &v.binding else { return Ok(()) };
        let target = Ty::of_scalar(&v.ty);
        let t = self.type_of(b).map_err(|e| located(*e, &v.origin))?;
        if !types::assignable(&target, &t) {
            return Err(Box::new(
                Diagnostic::error(
                    v.origin.span,
                    format!(
                        "`{}` is of type {} but its binding `{}` is of type {}",
                        v.name,
                        target.name(),
                        crate::print::print_expr(b),
                        t.name()
                    ),
                )
                .with_help(types::conversion_help(&target, &t)),
            ));
        }
        Ok(())
    }

    /// `in_when`: inside a `when` branch or an initial equation; `count_ifs`: check the equation counts of
    /// if-equations (not in initial equations, where moss may add its own).
    fn equation(&self, eq: &Equation, in_when: bool, count_ifs: bool) -> Res<()> {
        let at = |e: Box<TypeError>| located(*e, eq.origin());
        match eq {
            Equation::Equal { lhs, rhs, origin } => {
                if matches!(lhs, Expr::Tuple(_)) {
                    return self.call_targets(rhs).map_err(at);
                }
                let a = self.type_of(lhs).map_err(at)?;
                let b = self.type_of(rhs).map_err(at)?;
                if !types::equatable(&a, &b) {
                    let (target, value) = if matches!(lhs, Expr::Var { .. }) {
                        (&a, &b)
                    } else {
                        (&b, &a)
                    };
                    return Err(Box::new(
                        Diagnostic::error(
                            origin.span,
                            format!(
                                "the two sides of the equation `{} = {}` have types {} and {}",
                                crate::print::print_expr(lhs),
                                crate::print::print_expr(rhs),
                                a.name(),
                                b.name()
                            ),
                        )
                        .with_help(types::conversion_help(target, value)),
                    ));
                }
                if !in_when {
                    self.discrete_equation(lhs, rhs).map_err(at)?;
                }
                Ok(())
            }
            Equation::If {
                branches,
                else_,
                origin,
            } => {
                for (c, body) in branches {
                    self.condition(c, "if-equation").map_err(at)?;
                    for e in body {
                        self.equation(e, in_when, count_ifs)?;
                    }
                }
                for e in else_ {
                    self.equation(e, in_when, count_ifs)?;
                }
                if count_ifs && !in_when {
                    self.if_equation_counts(branches, else_, origin)?;
                }
                Ok(())
            }
            Equation::When { branches, .. } => {
                for (c, body) in branches {
                    self.when_condition(c).map_err(at)?;
                    for e in body {
                        self.equation(e, true, count_ifs)?;
                    }
                }
                Ok(())
            }
            Equation::Reinit { value, .. } => self.type_of(value).map(|_| ()).map_err(at),
            Equation::Assert {
                condition, message, ..
            } => {
                self.condition(condition, "assert").map_err(at)?;
                self.type_of(message).map(|_| ()).map_err(at)
            }
            Equation::Terminate { message, .. } => self.type_of(message).map(|_| ()).map_err(at),
            Equation::Call { args, .. } => {
                for a in args {
                    self.type_of(a).map_err(at)?;
                }
                Ok(())
            }
        }
    }

    fn statement(&self, s: &Statement, in_when: bool) -> Res<()> {
        let origin = s.origin();
        let at = |e: Box<TypeError>| located(*e, origin);
        match s {
            Statement::Assign { target, value, .. } => {
                let a = self.type_of(target).map_err(at)?;
                let b = self.type_of(value).map_err(at)?;
                // Statements use the equation rule (Integer and Real mix): an Integer target
                // given a Real value is illegal too (spec 11.2.1.1), but not reported until
                // library code has been checked against the stricter rule.
                if !types::equatable(&a, &b) {
                    return Err(Box::new(
                        Diagnostic::error(
                            origin.span,
                            format!(
                                "`{}` of type {} is assigned `{}` of type {}",
                                crate::print::print_expr(target),
                                a.name(),
                                crate::print::print_expr(value),
                                b.name()
                            ),
                        )
                        .with_help(types::conversion_help(&a, &b)),
                    ));
                }
                if !in_when {
                    self.discrete_equation(target, value).map_err(at)?;
                }
                Ok(())
            }
            Statement::TupleAssign { value, .. } => self.call_targets(value).map_err(at),
            Statement::If {
                branches, else_, ..
            } => {
                for (c, body) in branches {
                    self.condition(c, "if-statement").map_err(at)?;
                    for b in body {
                        self.statement(b, in_when)?;
                    }
                }
                for b in else_ {
                    self.statement(b, in_when)?;
                }
                Ok(())
            }
            Statement::For { body, .. } => {
                for b in body {
                    self.statement(b, in_when)?;
                }
                Ok(())
            }
            Statement::While {
                condition, body, ..
            } => {
                self.condition(condition, "while-statement").map_err(at)?;
                for b in body {
                    self.statement(b, in_when)?;
                }
                Ok(())
            }
            Statement::When { branches, .. } => {
                for (c, body) in branches {
                    self.when_condition(c).map_err(at)?;
                    for b in body {
                        self.statement(b, true)?;
                    }
                }
                Ok(())
            }
            Statement::Reinit { value, .. } => self.type_of(value).map(|_| ()).map_err(at),
            Statement::Assert { condition, .. } => self.condition(condition, "assert").map_err(at),
            Statement::Terminate { .. } | Statement::Return { .. } | Statement::Break { .. } => {
                Ok(())
            }
            Statement::Call { args, .. } => {
                for a in args {
                    self.type_of(a).map_err(at)?;
                }
                Ok(())
            }
        }
    }

    /// The condition of `if`, `while` and `assert` is a Boolean (spec 8.3.4, 11.2.3).
    fn condition(&self, c: &Expr, what: &str) -> Result<(), Box<TypeError>> {
        let t = self.type_of(c)?;
        if matches!(t, Ty::Boolean | Ty::Unknown) {
            return Ok(());
        }
        Err(type_err(
            c,
            format!(
                "the condition of an {what} must be a Boolean, but `{}` is of type {}",
                crate::print::print_expr(c),
                t.name()
            ),
            "compare the value with something, e.g. `i <> 0`",
        ))
    }

    /// A `when` condition is a Boolean or an array of Booleans (spec 8.3.5); a Clock in
    /// clocked `when`s.
    fn when_condition(&self, c: &Expr) -> Result<(), Box<TypeError>> {
        let t = self.type_of(c)?;
        if matches!(t, Ty::Boolean | Ty::Unknown | Ty::Clock) {
            return Ok(());
        }
        Err(type_err(
            c,
            format!(
                "the condition of a when-clause must be a Boolean, but `{}` is of type {}",
                crate::print::print_expr(c),
                t.name()
            ),
            "use a Boolean condition such as `x > 0` or `sample(0, 0.1)`",
        ))
    }

    /// The scalar type of a flat expression.
    pub(crate) fn type_of(&self, e: &Expr) -> TyRes {
        Ok(match e {
            Expr::Real(_) => Ty::Real,
            Expr::Integer(_) => Ty::Integer,
            Expr::Boolean(_) => Ty::Boolean,
            Expr::String(_) => Ty::String,
            Expr::Enum { ty, .. } => Ty::Enum(ty.clone()),
            Expr::Var { name, .. } => match self.var(name) {
                Some(v) => Ty::of_scalar(&v.ty),
                None => Ty::Unknown,
            },
            Expr::Time => Ty::Real,
            Expr::Unary { op, arg } => {
                let t = self.type_of(arg)?;
                types::unary(*op, e, &t)?
            }
            Expr::Binary { op, lhs, rhs } => {
                let a = self.type_of(lhs)?;
                let b = self.type_of(rhs)?;
                types::binary(*op, e, lhs, &a, rhs, &b)?
            }
            Expr::Call { func, args } => self.call(e, func, args)?,
            Expr::If { branches, else_ } => {
                let mut t = self.type_of(else_)?;
                for (c, v) in branches {
                    self.condition(c, "if-expression")?;
                    let b = self.type_of(v)?;
                    t = types::unify(&t, &b).ok_or_else(|| {
                        type_err(
                            e,
                            format!(
                                "the branches of the if-expression have types {} and {}",
                                b.name(),
                                t.name()
                            ),
                            "give every branch a value of the same type",
                        )
                    })?;
                }
                t
            }
            Expr::Array(items) => {
                let mut t: Option<Ty> = None;
                for i in items {
                    let it = self.type_of(i)?;
                    t = Some(match t {
                        None => it,
                        Some(prev) => types::unify(&prev, &it).ok_or_else(|| {
                            type_err(
                                e,
                                format!(
                                    "the elements of the array have types {} and {}",
                                    prev.name(),
                                    it.name()
                                ),
                                "give every element a value of the same type",
                            )
                        })?,
                    });
                }
                t.unwrap_or(Ty::Unknown)
            }
            Expr::Range { .. } | Expr::Tuple(_) => Ty::Unknown,
            Expr::CallOutput { call, index } => {
                if let Expr::Call { args, .. } = &**call {
                    for a in args {
                        self.type_of(a)?;
                    }
                }
                match &**call {
                    Expr::Call { func, .. } => self.output_type(func, *index),
                    _ => Ty::Unknown,
                }
            }
        })
    }

    fn call(&self, e: &Expr, func: &str, args: &[Expr]) -> TyRes {
        let mut tys = Vec::with_capacity(args.len());
        for a in args {
            tys.push(self.type_of(a)?);
        }
        if let Some(t) = builtins::check(self, e, func, args, &tys)? {
            return Ok(t);
        }
        // A function without outputs is only called as an equation or a statement of its
        // own (spec 12.4.3); in an expression its call has no value.
        if self
            .functions
            .get(func)
            .is_some_and(|f| f.outputs.is_empty())
        {
            return Err(type_err(
                e,
                format!("`{func}` has no outputs, so its call has no value"),
                "declare an output in the function, or call it on its own as `f(x);`",
            ));
        }
        Ok(self.output_type(func, 0))
    }

    /// The right side of `(a, b) = f(x)`: only its arguments are typed (moss checks the
    /// number of targets where it sees the call, `structure::check_tuple_call`).
    fn call_targets(&self, rhs: &Expr) -> Result<(), Box<TypeError>> {
        match rhs {
            Expr::Call { args, .. } => {
                for a in args {
                    self.type_of(a)?;
                }
                Ok(())
            }
            other => self.type_of(other).map(|_| ()),
        }
    }

    /// The type of output `index` of a user function (unknown for anything else).
    fn output_type(&self, func: &str, index: usize) -> Ty {
        self.functions
            .get(func)
            .and_then(|f| f.outputs.get(index))
            .map_or(Ty::Unknown, |o| Ty::of_scalar(&o.ty))
    }
}

/// A type error as a diagnostic at the equation, statement or declaration it was found in,
/// naming the sub-expression.
fn located(e: TypeError, origin: &Origin) -> Box<Diagnostic> {
    let mut d = Diagnostic::error(origin.span, e.message);
    let shown = crate::print::print_expr(&e.at);
    if shown.len() <= 200 {
        d = d.with_label(format!("in `{shown}`"));
    }
    if !origin.instance.is_empty() {
        d = d.with_note(format!("in instance `{}`", origin.instance));
    }
    Box::new(d.with_help(e.help))
}

/// `time` is not accessible inside a function (spec 12.2: a function has no access to
/// the variables of the model, and `time` is one of them).
fn check_function(f: &Function) -> Res<()> {
    let FunctionBody::Algorithm(stmts) = &f.body else {
        return Ok(());
    };
    let mut found = false;
    for s in stmts {
        crate::walk::statement_exprs(s, &mut |top| {
            crate::walk::visit(top, &mut |x| found |= matches!(x, Expr::Time))
        });
    }
    if found {
        return Err(Box::new(
            Diagnostic::error(f.origin.span, format!("function `{}` uses `time`", f.name))
                .with_help("a function only sees its inputs: pass `time` as an input argument"),
        ));
    }
    Ok(())
}
