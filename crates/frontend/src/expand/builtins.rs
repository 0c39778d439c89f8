//! Built-in functions and operators: scalar math, array constructors and reductions,
//! matrix functions, and the synchronous built-ins of chapters 16 and 17 with their named
//! arguments.

use super::*;

impl<'a> Flattener<'a> {
    /// `external "builtin"` functions map to the built-in of the external call's name.
    pub fn builtin_external(&self, id: ClassId) -> Option<String> {
        let entry = self.lib().get(self.lk.follow_short_class(id));
        let comp = entry.def.specifier.composition()?;
        let ext = comp.external.as_ref()?;
        if ext.language.as_deref() != Some("builtin") {
            return None;
        }
        let name = match &ext.call {
            Some(c) => c.function.name.to_string(),
            None => entry.def.name.name.to_string(),
        };
        BUILTINS.contains(&name.as_str()).then_some(name)
    }

    /// Built-in operators and functions on expanded values.
    pub fn builtin(&self, name: &str, args: Vec<Val>, span: Span) -> Res<Val> {
        let n = args.len();
        let arity = |k: usize| -> Res<()> {
            if n == k {
                Ok(())
            } else {
                err(span, format!("`{name}` takes {k} argument(s), {n} given"))
            }
        };
        match name {
            "size" => {
                let shape = args.first().map(Val::shape).unwrap_or_default();
                if n == 2 {
                    let k = args[1].scalar().and_then(fold::as_i64).unwrap_or(0);
                    match shape.get((k - 1).max(0) as usize) {
                        Some(d) if k >= 1 => Ok(Val::S(Expr::Integer(*d as i64))),
                        // An empty array does not keep its inner dimensions: they are 0 here.
                        _ if k >= 1 && shape.contains(&0) => Ok(Val::S(Expr::Integer(0))),
                        _ => err(span, format!("size: dimension {k} out of range")),
                    }
                } else {
                    arity(1)?;
                    Ok(Val::A(
                        shape
                            .iter()
                            .map(|d| Val::S(Expr::Integer(*d as i64)))
                            .collect(),
                    ))
                }
            }
            "ndims" => {
                arity(1)?;
                Ok(Val::S(Expr::Integer(args[0].shape().len() as i64)))
            }
            "sum" | "product" => {
                arity(1)?;
                let xs = args[0].scalars();
                let (op, unit) = if name == "sum" {
                    (FB::Add, Expr::Integer(0))
                } else {
                    (FB::Mul, Expr::Integer(1))
                };
                let mut it = xs.into_iter();
                let Some(first) = it.next() else {
                    return Ok(Val::S(unit));
                };
                Ok(Val::S(it.fold(first, |a, b| fold::binary(op, a, b))))
            }
            "min" | "max" if n == 1 => {
                let xs = args[0].scalars();
                let mut it = xs.into_iter();
                let Some(first) = it.next() else {
                    return err(span, format!("`{name}` of an empty array"));
                };
                Ok(Val::S(it.fold(first, |a, b| fold::call(name, vec![a, b]))))
            }
            "fill" | "zeros" | "ones" | "identity" | "diagonal" | "linspace" => {
                self.builtin_constructor(name, args, span)
            }
            // `array(a, b)` is the array constructor `{a, b}` (spec 10.4).
            "array" => Ok(Val::A(args)),
            "transpose" | "vector" | "scalar" | "matrix" | "cat" | "cross" | "skew"
            | "symmetric" | "outerProduct" => self.builtin_matrix(name, args, span),
            "inStream" | "actualStream" => {
                arity(1)?;
                Ok(args[0].map(&mut |x| Expr::Call {
                    func: name.to_string(),
                    args: vec![x],
                }))
            }
            "initial" | "terminal" => {
                arity(0)?;
                Ok(Val::S(Expr::Call {
                    func: name.into(),
                    args: vec![],
                }))
            }
            "Integer" if n == 1 => Ok(args[0].map(&mut |x| match &x {
                Expr::Enum { index, .. } => Expr::Integer(*index as i64),
                _ => fold::call("Integer", vec![x]),
            })),
            _ => self.builtin_scalar(name, args, span),
        }
    }

    /// Array constructors: `fill`, `zeros`, `ones`, `identity`, `diagonal`, `linspace`.
    pub(super) fn builtin_constructor(
        &self,
        name: &str,
        mut args: Vec<Val>,
        span: Span,
    ) -> Res<Val> {
        let n = args.len();
        let arity = |k: usize| -> Res<()> {
            if n == k {
                Ok(())
            } else {
                err(span, format!("`{name}` takes {k} argument(s), {n} given"))
            }
        };
        match name {
            "fill" => {
                if n < 1 {
                    return err(span, "fill needs a value and dimensions");
                }
                let v = args.remove(0);
                let dims = int_args(&args, span)?;
                crate::limits::check_dims(&dims, span, "this `fill`")?;
                Ok(fill(&v, &dims))
            }
            "zeros" | "ones" => {
                let dims = int_args(&args, span)?;
                crate::limits::check_dims(&dims, span, &format!("this `{name}`"))?;
                let v = Val::S(Expr::Integer(if name == "zeros" { 0 } else { 1 }));
                Ok(fill(&v, &dims))
            }
            "identity" => {
                arity(1)?;
                let k = int_args(&args, span)?[0];
                crate::limits::check_dims(&[k, k], span, "this `identity`")?;
                Ok(Val::A(
                    (0..k)
                        .map(|i| {
                            Val::A(
                                (0..k)
                                    .map(|j| Val::S(Expr::Integer((i == j) as i64)))
                                    .collect(),
                            )
                        })
                        .collect(),
                ))
            }
            "diagonal" => {
                arity(1)?;
                let xs = args[0].scalars();
                let k = xs.len();
                Ok(Val::A(
                    (0..k)
                        .map(|i| {
                            Val::A(
                                (0..k)
                                    .map(|j| {
                                        Val::S(if i == j {
                                            xs[i].clone()
                                        } else {
                                            Expr::Integer(0)
                                        })
                                    })
                                    .collect(),
                            )
                        })
                        .collect(),
                ))
            }
            "linspace" => {
                arity(3)?;
                let k = args[2].scalar().and_then(fold::as_i64).unwrap_or(0);
                if k < 2 {
                    return err(span, "linspace needs at least 2 points");
                }
                crate::limits::check_dims(&[k as usize], span, "this `linspace`")?;
                let (a, b) = (args[0].to_expr(), args[1].to_expr());
                Ok(Val::A(
                    (0..k)
                        .map(|i| {
                            let t = Expr::Real(i as f64 / (k - 1) as f64);
                            let d = fold::binary(FB::Sub, b.clone(), a.clone());
                            Val::S(fold::binary(
                                FB::Add,
                                a.clone(),
                                fold::binary(FB::Mul, d, t),
                            ))
                        })
                        .collect(),
                ))
            }
            _ => err(span, format!("`{name}` is not an array constructor")),
        }
    }

    /// Matrix and vector functions: `transpose`, `vector`, `scalar`, `matrix`, `cat`,
    /// `cross`, `skew`, `symmetric`, `outerProduct`.
    pub(super) fn builtin_matrix(&self, name: &str, mut args: Vec<Val>, span: Span) -> Res<Val> {
        let n = args.len();
        let arity = |k: usize| -> Res<()> {
            if n == k {
                Ok(())
            } else {
                err(span, format!("`{name}` takes {k} argument(s), {n} given"))
            }
        };
        match name {
            "transpose" => {
                arity(1)?;
                let cols = transpose(&args[0], span)?;
                Ok(Val::A(
                    cols.into_iter()
                        .map(|c| Val::A(c.into_iter().map(Val::S).collect()))
                        .collect(),
                ))
            }
            "vector" => {
                arity(1)?;
                Ok(Val::A(args[0].scalars().into_iter().map(Val::S).collect()))
            }
            "scalar" => {
                arity(1)?;
                let xs = args[0].scalars();
                match xs.as_slice() {
                    [x] => Ok(Val::S(x.clone())),
                    _ => err(span, "scalar() needs an array with exactly one element"),
                }
            }
            "matrix" => {
                arity(1)?;
                match args[0].shape().len() {
                    0 => Ok(Val::A(vec![Val::A(vec![args[0].clone()])])),
                    1 => {
                        let Val::A(items) = &args[0] else {
                            unreachable_val(span)?
                        };
                        Ok(Val::A(
                            items.iter().map(|i| Val::A(vec![i.clone()])).collect(),
                        ))
                    }
                    2 => Ok(args.swap_remove(0)),
                    _ => matrix_of_higher(args.swap_remove(0), span),
                }
            }
            "cat" => {
                if n < 2 {
                    return err(span, "cat needs a dimension and arrays");
                }
                let k = args[0].scalar().and_then(fold::as_i64).unwrap_or(0);
                let parts = args.split_off(1);
                cat(k as usize, parts, span)
            }
            "cross" => {
                arity(2)?;
                let (x, y) = (args[0].scalars(), args[1].scalars());
                if x.len() != 3 || y.len() != 3 {
                    return shape_err(span, "cross");
                }
                let c = |i: usize, j: usize| {
                    fold::binary(
                        FB::Sub,
                        fold::binary(FB::Mul, x[i].clone(), y[j].clone()),
                        fold::binary(FB::Mul, x[j].clone(), y[i].clone()),
                    )
                };
                Ok(Val::A(vec![
                    Val::S(c(1, 2)),
                    Val::S(c(2, 0)),
                    Val::S(c(0, 1)),
                ]))
            }
            "skew" => {
                arity(1)?;
                let x = args[0].scalars();
                if x.len() != 3 {
                    return shape_err(span, "skew");
                }
                let z = || Val::S(Expr::Integer(0));
                let neg = |e: &Expr| Val::S(fold::unary(FU::Neg, e.clone()));
                Ok(Val::A(vec![
                    Val::A(vec![z(), neg(&x[2]), Val::S(x[1].clone())]),
                    Val::A(vec![Val::S(x[2].clone()), z(), neg(&x[0])]),
                    Val::A(vec![neg(&x[1]), Val::S(x[0].clone()), z()]),
                ]))
            }
            "symmetric" => {
                arity(1)?;
                let Val::A(rows) = &args[0] else {
                    return err(span, "symmetric needs a square matrix");
                };
                let n = rows.len();
                let at = |i: usize, j: usize| args[0].index_path(&[i, j]);
                Ok(Val::A(
                    (0..n)
                        .map(|i| {
                            Val::A(
                                (0..n)
                                    .map(|j| if i <= j { at(i, j) } else { at(j, i) })
                                    .collect(),
                            )
                        })
                        .collect(),
                ))
            }
            "outerProduct" => {
                arity(2)?;
                let (x, y) = (args[0].scalars(), args[1].scalars());
                Ok(Val::A(
                    x.iter()
                        .map(|a| {
                            Val::A(
                                y.iter()
                                    .map(|b| Val::S(fold::binary(FB::Mul, a.clone(), b.clone())))
                                    .collect(),
                            )
                        })
                        .collect(),
                ))
            }
            _ => err(span, format!("`{name}` is not a matrix function")),
        }
    }

    /// Scalar built-ins: literal domain checks, element-wise application to arrays, calls.
    pub(super) fn builtin_scalar(&self, name: &str, args: Vec<Val>, span: Span) -> Res<Val> {
        let n = args.len();
        // Literal arguments outside the function's domain are errors now.
        if let Some(Val::S(a)) = args.first() {
            let bad = match (name, a) {
                ("abs" | "sign" | "sqrt" | "log" | "log10" | "asin" | "acos", Expr::Boolean(_)) => {
                    Some("a number is expected, not a Boolean")
                }
                ("sqrt", x) if fold::as_f64(x).is_some_and(|v| v < 0.0) => {
                    Some("the argument of sqrt must not be negative")
                }
                ("log" | "log10", x) if fold::as_f64(x).is_some_and(|v| v <= 0.0) => {
                    Some("the argument of log must be positive")
                }
                ("asin" | "acos", x) if fold::as_f64(x).is_some_and(|v| v.abs() > 1.0) => {
                    Some("the argument of asin/acos must be in [-1, 1]")
                }
                _ => None,
            };
            if let Some(msg) = bad {
                return err(span, format!("`{name}`: {msg}"));
            }
        }
        // Element-wise application of scalar functions; other built-ins as calls.
        if n == 1 && ELEMENTWISE.contains(&name) {
            return Ok(args[0].map(&mut |x| fold::call(name, vec![x])));
        }
        if n >= 1 && clocked_elementwise(name) && matches!(args[0], Val::A(_)) {
            // `sample(u, c)`, `previous(u)`, `subSample(u, 2)`, ... on an array `u` apply to
            // each element with the other arguments shared.
            let rest: Vec<Expr> = args[1..].iter().map(Val::to_expr).collect();
            return Ok(args[0].map(&mut |x| {
                let mut a = vec![x];
                a.extend(rest.iter().cloned());
                fold::call(name, a)
            }));
        }
        if n == 2 && matches!(name, "smooth" | "delay" | "pre" | "der") {
            let a0 = args[0].to_expr();
            return Ok(args[1].map(&mut |x| fold::call(name, vec![a0.clone(), x])));
        }
        if args.iter().all(|a| matches!(a, Val::S(_))) {
            return Ok(Val::S(fold::call(
                name,
                args.into_iter().map(|a| a.to_expr()).collect(),
            )));
        }
        if n == 2 && matches!(name, "min" | "max" | "div" | "mod" | "rem" | "atan2") {
            return zip_vals(&args[0], &args[1], span, &mut |x, y| {
                fold::call(name, vec![x, y])
            });
        }
        if n == 3 && name == "semiLinear" {
            return vectorize(&args, span, &mut |xs| fold::call(name, xs));
        }
        Ok(Val::S(Expr::Call {
            func: name.to_string(),
            args: args.into_iter().map(|a| a.to_expr()).collect(),
        }))
    }
}

/// Built-ins applied element by element to a single array argument.
pub(super) const ELEMENTWISE: &[&str] = &[
    "der", "pre", "edge", "change", "noEvent", "abs", "sign", "sqrt", "sin", "cos", "tan", "asin",
    "acos", "atan", "sinh", "cosh", "tanh", "exp", "log", "log10", "ceil", "floor", "integer",
    "Integer", "Real", "Boolean",
];

/// Clock operators applied element by element to an array first argument (spec 16.5):
/// `sample` and the operators of [`crate::flat::CLOCK_OPERATORS`] that take a signal.
pub(super) fn clocked_elementwise(name: &str) -> bool {
    name == "sample"
        || (crate::flat::CLOCK_OPERATORS.contains(&name)
            && !matches!(name, "Clock" | "firstTick" | "interval"))
}

/// An argument of a synchronous built-in after named arguments are placed.
pub(super) enum SyncArg<'a> {
    Given(&'a ast::Expr),
    Default(Expr),
}

/// Formal parameters (name, default) of the built-ins of chapters 16 and 17 that take named
/// arguments; `None` as default means "no default" (trailing ones may be omitted where the
/// operator has an inferred form, e.g. `Clock()` or `subSample(u)`).
pub(super) fn synchronous_formals(
    name: &str,
) -> Option<&'static [(&'static str, Option<SyncDefault>)]> {
    use SyncDefault::*;
    Some(match name {
        "Clock" => &[("c", None), ("solverMethod", None)],
        "transition" => &[
            ("from", None),
            ("to", None),
            ("condition", None),
            ("immediate", Some(Bool(true))),
            ("reset", Some(Bool(true))),
            ("synchronize", Some(Bool(false))),
            ("priority", Some(Int(1))),
        ],
        "initialState" | "activeState" => &[("state", None)],
        _ => return None,
    })
}

#[derive(Clone, Copy)]
pub(super) enum SyncDefault {
    Bool(bool),
    Int(i64),
}

/// Places positional and named arguments of a synchronous built-in in formal order, filling
/// defaults; stops at the first missing argument without a default (the inferred forms).
pub(super) fn place_synchronous_args<'a>(
    fname: &str,
    formals: &[(&'static str, Option<SyncDefault>)],
    positional: &'a [ast::Expr],
    named: &'a [ast::NamedArg],
    span: Span,
) -> Res<Vec<SyncArg<'a>>> {
    if positional.len() > formals.len() {
        return err(
            span,
            format!("`{fname}` takes at most {} arguments", formals.len()),
        );
    }
    for n in named {
        let known = formals.iter().position(|(f, _)| *f == n.name.as_str());
        match known {
            None => {
                let names: Vec<&str> = formals.iter().map(|(f, _)| *f).collect();
                return err(
                    n.value.span,
                    format!(
                        "`{fname}` has no argument `{}` (its arguments: {})",
                        n.name.as_str(),
                        names.join(", ")
                    ),
                );
            }
            Some(k) if k < positional.len() => {
                return err(
                    n.value.span,
                    format!("argument `{}` of `{fname}` is given twice", n.name.as_str()),
                );
            }
            _ => {}
        }
    }
    // `Clock(c, solverMethod=...)`: the named form is the only way to give a solver method to
    // an existing clock; `Clock(interval)` etc. keep their positional meaning.
    let mut out = Vec::new();
    for (k, (formal, default)) in formals.iter().enumerate() {
        if let Some(a) = positional.get(k) {
            out.push(SyncArg::Given(a));
        } else if let Some(n) = named.iter().find(|n| n.name.as_str() == *formal) {
            out.push(SyncArg::Given(&n.value));
        } else if let Some(d) = default {
            out.push(SyncArg::Default(match d {
                SyncDefault::Bool(b) => Expr::Boolean(*b),
                SyncDefault::Int(i) => Expr::Integer(*i),
            }));
        } else {
            break;
        }
    }
    Ok(out)
}

/// Operators handled here that are not plain flat built-ins (they are rewritten away).
pub const EXTRA_BUILTINS: &[&str] = &[
    "inStream",
    "actualStream",
    "array",
    "String",
    "getInstanceName",
];

/// Known Modelica features moss does not implement, for a clearer message than
/// "unknown function".
pub(super) fn unsupported_feature(name: &str) -> Option<&'static str> {
    if name.starts_with("Connections.") {
        return Some("Connections.branch, root and potentialRoot are equations of their own (not allowed in algorithms or expressions); Connections.isRoot and rooted are the only ones used in expressions");
    }
    match name {
        "Clock" | "interval" | "hold" | "previous" | "subSample" | "superSample"
        | "shiftSample" | "backSample" | "noClock" | "firstTick" | "sample_clocked" => {
            Some("synchronous (clocked) language elements are not supported by moss")
        }
        _ => None,
    }
}
