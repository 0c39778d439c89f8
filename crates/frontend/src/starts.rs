//! Start values that can be changed after translation.
//!
//! The translation folds a literal start value into the initialization blocks (`x := 10`), so
//! a program built from the model as written can only start from that value. Callers that run
//! one translated model many times from different initial conditions (the Python package's
//! `start_values=`) call [`expose_start_values`] on the flat model first: each literal start
//! value that initialization uses becomes a hidden parameter bound to the same literal, and
//! the variable's start refers to that parameter. The program is then the same as before
//! (parameter-dependent start values are computed by its start blocks), except that the
//! initial condition is an independent parameter that can be overridden before a run.

use crate::flat::{Causality, Expr, FlatModel, ScalarType, Variability, Variable};
use crate::walk;
use std::collections::HashSet;

/// A start value made settable: the variable and the hidden parameter holding its start.
#[derive(Clone, Debug, PartialEq)]
pub struct StartParameter {
    pub variable: String,
    pub parameter: String,
}

/// The name of the hidden parameter holding the start value of `variable`.
pub fn start_parameter_name(variable: &str) -> String {
    format!("$start({variable})")
}

/// Turn the literal start values that initialization uses into hidden parameters (see the
/// module documentation). Those are the start values of variables declared `fixed = true`
/// and of differentiated variables (candidates for states, which initialization fixes at
/// their start when nothing else determines them) not declared `fixed = false`. Returns the
/// variables changed, in declaration order.
pub fn expose_start_values(model: &mut FlatModel) -> Vec<StartParameter> {
    let differentiated = differentiated_names(model);
    let mut added = Vec::new();
    let mut exposed = Vec::new();
    for v in &mut model.variables {
        if !uses_start(v, &differentiated) {
            continue;
        }
        let Some(literal) = v.attrs.start.clone().filter(is_literal) else {
            continue;
        };
        let parameter = start_parameter_name(&v.name);
        added.push(hidden_parameter(v, &parameter, literal));
        v.attrs.start = Some(Expr::Var {
            name: parameter.clone(),
            subscripts: vec![],
        });
        exposed.push(StartParameter {
            variable: v.name.clone(),
            parameter,
        });
    }
    model.variables.extend(added);
    exposed
}

/// Whether initialization reads the start value of `v` as an initial condition.
fn uses_start(v: &Variable, differentiated: &HashSet<String>) -> bool {
    let time_varying = matches!(
        v.variability,
        Variability::Continuous | Variability::Discrete
    );
    let numeric = matches!(
        v.ty,
        ScalarType::Real | ScalarType::Integer | ScalarType::Boolean
    );
    let fixed = match v.attrs.fixed {
        Some(f) => f,
        None => differentiated.contains(&v.name),
    };
    time_varying && numeric && fixed
}

fn is_literal(e: &Expr) -> bool {
    matches!(e, Expr::Real(_) | Expr::Integer(_) | Expr::Boolean(_))
}

/// A protected parameter of `v`'s type bound to `literal`, placed where `v` was declared.
fn hidden_parameter(v: &Variable, name: &str, literal: Expr) -> Variable {
    Variable {
        name: name.to_string(),
        ty: v.ty.clone(),
        variability: Variability::Parameter,
        causality: Causality::Internal,
        binding: Some(literal),
        attrs: Default::default(),
        is_flow: false,
        is_stream: false,
        is_protected: true,
        evaluate: false,
        description: format!("start value of {}", v.name),
        origin: v.origin.clone(),
    }
}

/// Names `x` of every `der(x)` in the equations and algorithms.
fn differentiated_names(model: &mut FlatModel) -> HashSet<String> {
    let mut names = HashSet::new();
    walk::model_equation_exprs_mut(model, &mut |e| {
        walk::visit(e, &mut |x| {
            if let Expr::Call { func, args } = x {
                if let (true, [Expr::Var { name, .. }]) = (func == "der", args.as_slice()) {
                    names.insert(name.clone());
                }
            }
        })
    });
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(name: &str, start: Option<Expr>, fixed: Option<bool>) -> Variable {
        Variable {
            name: name.into(),
            ty: ScalarType::Real,
            variability: Variability::Continuous,
            causality: Causality::Internal,
            binding: None,
            attrs: crate::flat::Attributes {
                start,
                fixed,
                ..Default::default()
            },
            is_flow: false,
            is_stream: false,
            is_protected: false,
            evaluate: false,
            description: String::new(),
            origin: Default::default(),
        }
    }

    fn der_of(name: &str) -> Expr {
        Expr::Call {
            func: "der".into(),
            args: vec![Expr::Var {
                name: name.into(),
                subscripts: vec![],
            }],
        }
    }

    #[test]
    fn fixed_and_differentiated_literal_starts_become_parameters() {
        let mut m = FlatModel {
            variables: vec![
                var("a", Some(Expr::Real(1.0)), Some(true)),
                var("x", Some(Expr::Real(2.0)), None),
                var("guess", Some(Expr::Real(3.0)), None),
                var("free", Some(Expr::Real(4.0)), Some(false)),
                var(
                    "computed",
                    Some(Expr::Var {
                        name: "p".into(),
                        subscripts: vec![],
                    }),
                    Some(true),
                ),
            ],
            equations: vec![crate::flat::Equation::Equal {
                lhs: der_of("x"),
                rhs: der_of("free"),
                origin: Default::default(),
            }],
            ..FlatModel::default()
        };
        let exposed = expose_start_values(&mut m);
        let names: Vec<&str> = exposed.iter().map(|s| s.variable.as_str()).collect();
        assert_eq!(names, ["a", "x"]);
        let p = m.variables.iter().find(|v| v.name == "$start(x)").unwrap();
        assert_eq!(p.binding, Some(Expr::Real(2.0)));
        assert_eq!(p.variability, Variability::Parameter);
        assert!(p.is_protected);
        assert_eq!(
            m.variables[1].attrs.start,
            Some(Expr::Var {
                name: "$start(x)".into(),
                subscripts: vec![]
            })
        );
        // a guess and an explicitly free start stay literal
        assert_eq!(m.variables[2].attrs.start, Some(Expr::Real(3.0)));
        assert_eq!(m.variables[3].attrs.start, Some(Expr::Real(4.0)));
    }
}
