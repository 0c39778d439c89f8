//! Equations of equation sections: simple equations, parameter-selected if-equations,
//! for-equations unrolled, when-equations (with the checks on what they assign), and
//! call equations (`assert`, `terminate`, `reinit`, functions called for their effects).
//! Also the helpers that recognise elements of array-valued calls produced by the
//! expander (`[](f(x), i)`) and put them back together into one call; variables and
//! statements use them too.

use super::origin;
use crate::connect::Connections;
use crate::ctx::Flattener;
use crate::expand::{cref_text, Cx, Val};
use crate::flat::{AssertLevel, Equation, Expr, Origin};
use crate::fold;
use crate::inst::*;
use moss_syntax::ast::{self, ClassKind, EquationKind, ExprKind, FunctionArgs};
use std::sync::Arc;

impl<'a> Flattener<'a> {
    /// Flatten one equation (appending to `out`); `connect` goes to `conns` (None in initial
    /// equations, where connect is not allowed).
    pub fn equation(
        &self,
        eq: &ast::Equation,
        env: &Env,
        cx: &mut Cx,
        out: &mut Vec<Equation>,
        mut conns: Option<&mut Connections>,
    ) -> Res<()> {
        let o = origin(eq.span, &env.node);
        match &eq.kind {
            EquationKind::Simple { lhs, rhs } => {
                if let Some(e) = self.call_equation(lhs, rhs, env, cx, &o)? {
                    out.push(e);
                    return Ok(());
                }
                let l = self.expand(lhs, env, cx)?;
                let r = self.expand(rhs, env, cx)?;
                if l.shape() != r.shape() {
                    return err(
                        eq.span,
                        format!(
                            "the two sides of the equation have different sizes: {:?} and {:?}",
                            l.shape(),
                            r.shape()
                        ),
                    );
                }
                if let Some((targets, call)) = record_fields_of_one_call(&l, &r) {
                    // `R = f(x)` with a record result that has array fields
                    out.push(Equation::Equal {
                        lhs: Expr::Tuple(targets),
                        rhs: call,
                        origin: o,
                    });
                    return Ok(());
                }
                let (ls, rs) = (l.scalars(), r.scalars());
                if ls.len() != rs.len() {
                    return err(eq.span, "the two sides of the equation do not match");
                }
                if let Some(call) = whole_call(&rs) {
                    // `r = f(x)` with a record result: one equation for all outputs.
                    out.push(Equation::Equal {
                        lhs: Expr::Tuple(ls.into_iter().map(Some).collect()),
                        rhs: call,
                        origin: o,
                    });
                    return Ok(());
                }
                for (a, b) in ls.into_iter().zip(rs) {
                    out.push(Equation::Equal {
                        lhs: a,
                        rhs: b,
                        origin: o.clone(),
                    });
                }
            }
            EquationKind::For { indices, body } => {
                self.for_equation(indices, body, env, cx, out, conns)?;
            }
            EquationKind::If {
                branches,
                else_branch,
            } => {
                let mut kept: Vec<(Expr, Vec<Equation>)> = Vec::new();
                let mut else_eqs: Option<Vec<Equation>> = None;
                for (c, body) in branches {
                    let structural = kept
                        .is_empty()
                        .then(|| self.eval_expr(c, env, &mut cx.clone()).ok())
                        .flatten();
                    match structural {
                        Some(Val::S(Expr::Boolean(false))) => continue,
                        Some(Val::S(Expr::Boolean(true))) => {
                            let mut v = Vec::new();
                            for e in body {
                                self.equation(e, env, cx, &mut v, conns.as_deref_mut())?;
                            }
                            else_eqs = Some(v);
                            break;
                        }
                        _ => {
                            let cv = self.expand(c, env, cx)?;
                            let Val::S(ce) = cv else {
                                return err(
                                    c.span,
                                    "the condition of an if-equation must be a scalar Boolean",
                                );
                            };
                            if fold::is_literal(&ce) && !matches!(ce, Expr::Boolean(_)) {
                                return err(
                                    c.span,
                                    "the condition of an if-equation must be a Boolean expression",
                                );
                            }
                            let connects = body
                                .iter()
                                .chain(else_branch.iter())
                                .find(|e| matches!(e.kind, EquationKind::Connect { .. }));
                            if let (Some(e), false) = (connects, matches!(ce, Expr::Boolean(_))) {
                                return err(
                                    e.span,
                                    "`connect` inside an if-equation whose condition is not a parameter expression",
                                )
                                .map_err(|d| {
                                    Box::new(d.with_secondary(c.span, "this condition varies during the simulation").with_help(
                                        "connections are fixed at translation time: use a parameter condition, or a conditional component",
                                    ))
                                });
                            }
                            let mut v = Vec::new();
                            let was = cx.guarded;
                            cx.guarded = !matches!(ce, Expr::Boolean(true));
                            for e in body {
                                let r = self.equation(e, env, cx, &mut v, conns.as_deref_mut());
                                if r.is_err() {
                                    cx.guarded = was;
                                }
                                r?;
                            }
                            cx.guarded = was;
                            if let Expr::Boolean(true) = ce {
                                else_eqs = Some(v);
                                break;
                            }
                            if let Expr::Boolean(false) = ce {
                                continue;
                            }
                            kept.push((ce, v));
                        }
                    }
                }
                let else_eqs = match else_eqs {
                    Some(v) => v,
                    None => {
                        let mut v = Vec::new();
                        for e in else_branch {
                            self.equation(e, env, cx, &mut v, conns.as_deref_mut())?;
                        }
                        v
                    }
                };
                if kept.is_empty() {
                    out.extend(else_eqs);
                } else {
                    out.push(Equation::If {
                        branches: kept,
                        else_: else_eqs,
                        origin: o,
                    });
                }
            }
            EquationKind::Connect { lhs, rhs } => {
                let Some(conns) = conns else {
                    return err(eq.span, "`connect` is not allowed here");
                };
                self.connect(lhs, rhs, env, cx, conns, o)?;
            }
            EquationKind::When { branches } => {
                let was = cx.guarded;
                cx.guarded = true;
                let r = self.when_equation(branches, env, cx, o);
                cx.guarded = was;
                out.push(r?);
            }
            EquationKind::Call { function, args }
                if crate::overconstrained::connections_operator(function).is_some() =>
            {
                let op = crate::overconstrained::connections_operator(function).unwrap_or("");
                self.graph_statement(op, args, env, cx, conns, o)?;
            }
            EquationKind::Call { function, args } => {
                out.push(self.call_eq(function, args, env, cx, o)?);
            }
        }
        Ok(())
    }

    fn when_equation(
        &self,
        branches: &[(ast::Expr, Vec<ast::Equation>)],
        env: &Env,
        cx: &mut Cx,
        o: Origin,
    ) -> Res<Equation> {
        let mut bs = Vec::new();
        for (c, body) in branches {
            self.check_when_targets(body, env)?;
            let cv = self.expand(c, env, cx)?.to_expr();
            let mut v = Vec::new();
            for e in body {
                if let EquationKind::When { .. } = e.kind {
                    return err(e.span, "when-equations cannot be nested");
                }
                self.equation(e, env, cx, &mut v, None)?;
            }
            let v = lower_ifs_in_when(v);
            for e in &v {
                if let Equation::Equal { lhs, origin, .. } = e {
                    // `(r, state) = f(pre(state))`: outputs are variables or arrays of them
                    fn assignable(e: &Expr) -> bool {
                        match e {
                            Expr::Var { .. } => true,
                            Expr::Array(items) => items.iter().all(assignable),
                            _ => false,
                        }
                    }
                    let ok = match lhs {
                        Expr::Tuple(items) => items.iter().flatten().all(assignable),
                        other => assignable(other),
                    };
                    if !ok {
                        return err(
                            origin.span,
                            "the left side of an equation inside `when` must be a variable",
                        )
                        .map_err(|d| Box::new(d.with_help("write `x = expression;` so that the equation assigns `x` when the event occurs")));
                    }
                }
            }
            bs.push((cv, v));
        }
        Ok(Equation::When {
            branches: bs,
            origin: o,
        })
    }

    /// The variables a `when`-equation assigns are not defined inside a sub-component of
    /// model or block class (spec 4.5.3, "Discrete-Time Variables": it would break the
    /// balance of that component).
    fn check_when_targets(&self, eqs: &[ast::Equation], env: &Env) -> Res<()> {
        for e in eqs {
            match &e.kind {
                EquationKind::Simple { lhs, .. } => self.when_target_not_in_submodel(lhs, env)?,
                EquationKind::If {
                    branches,
                    else_branch,
                } => {
                    for (_, b) in branches {
                        self.check_when_targets(b, env)?;
                    }
                    self.check_when_targets(else_branch, env)?;
                }
                EquationKind::For { body, .. } => self.check_when_targets(body, env)?,
                _ => {}
            }
        }
        Ok(())
    }

    fn when_target_not_in_submodel(&self, lhs: &ast::Expr, env: &Env) -> Res<()> {
        let refs: Vec<&ast::ComponentRef> = match &lhs.kind {
            ExprKind::Ref(c) => vec![c],
            ExprKind::Tuple(items) => items
                .iter()
                .flatten()
                .filter_map(|i| match &i.kind {
                    ExprKind::Ref(c) => Some(c),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        for c in refs {
            if c.global || c.parts.len() < 2 {
                continue;
            }
            let Some(comp) = self.find_comp(&env.node, c.parts[0].name.as_str()) else {
                continue;
            };
            let Some(class) = self.comp_type(&env.node, &comp).ok().and_then(|t| t.class) else {
                continue;
            };
            let kind = self.lk.kind(self.lk.follow_short_class(class));
            if matches!(kind, ClassKind::Model | ClassKind::Block) {
                return err(
                    c.span,
                    format!(
                        "`{}` is assigned in a when-clause but is defined in `{}`, a component of {} class `{}`",
                        cref_text(c),
                        comp.name,
                        crate::restrict::kind_name(kind),
                        self.lk.name_of(class)
                    ),
                )
                .map_err(|d| Box::new(d.with_help("assign it in a when-clause of that class itself, or connect it to a variable assigned here (specification 4.5.3)")));
            }
        }
        Ok(())
    }

    fn for_equation(
        &self,
        indices: &[ast::ForIndex],
        body: &[ast::Equation],
        env: &Env,
        cx: &mut Cx,
        out: &mut Vec<Equation>,
        mut conns: Option<&mut Connections>,
    ) -> Res<()> {
        let Some((first, rest)) = indices.split_first() else {
            for e in body {
                self.equation(e, env, cx, out, conns.as_deref_mut())?;
            }
            return Ok(());
        };
        let mut exprs = Vec::new();
        if first.range.is_none() {
            crate::expand::equation_exprs(body, &mut exprs);
        }
        for v in self.iterator_values_in(first, &exprs, env, cx)? {
            cx.locals.push((first.name.name.clone(), Arc::new(v)));
            let r = self.for_equation(rest, body, env, cx, out, conns.as_deref_mut());
            cx.locals.pop();
            r?;
        }
        Ok(())
    }

    /// `(a, b) = f(x)` and `x = f(y)` with an array-valued `f`: kept as one equation.
    fn call_equation(
        &self,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
        env: &Env,
        cx: &mut Cx,
        o: &Origin,
    ) -> Res<Option<Equation>> {
        let ExprKind::Call { .. } = &rhs.kind else {
            return Ok(None);
        };
        if let ExprKind::Tuple(items) = &lhs.kind {
            self.check_tuple_call(items.len(), rhs, env, cx)?;
            let keep = self.keep_calls.replace(true);
            let call = self.expand(rhs, env, cx);
            self.keep_calls.set(keep);
            let call = call?;
            let call = called_function(strip_index_call(call.to_expr()));
            let mut targets = Vec::new();
            for i in items {
                match i {
                    Some(e) => record_fields_as_targets(self.expand(e, env, cx)?, &mut targets),
                    None => targets.push(None),
                }
            }
            return Ok(Some(Equation::Equal {
                lhs: Expr::Tuple(targets),
                rhs: call,
                origin: o.clone(),
            }));
        }
        let r = self.expand(rhs, env, cx)?;
        if r.scalars().iter().any(is_index_call) {
            let l = self.expand(lhs, env, cx)?;
            if l.shape() != r.shape() {
                return err(o.span, "the two sides of the equation have different sizes");
            }
            return Ok(Some(Equation::Equal {
                lhs: l.to_expr(),
                rhs: strip_index_call(r.to_expr()),
                origin: o.clone(),
            }));
        }
        Ok(None)
    }

    pub(super) fn call_eq(
        &self,
        function: &ast::ComponentRef,
        args: &FunctionArgs,
        env: &Env,
        cx: &mut Cx,
        o: Origin,
    ) -> Res<Equation> {
        let name = function.as_simple_name().unwrap_or("");
        let FunctionArgs::List { positional, named } = args else {
            return err(o.span, "unexpected iterator arguments");
        };
        let arg = |k: usize, n: &str| -> Option<&ast::Expr> {
            positional
                .get(k)
                .or_else(|| named.iter().find(|a| a.name == n).map(|a| &a.value))
        };
        match name {
            "assert" => {
                let (Some(c), Some(m)) = (arg(0, "condition"), arg(1, "message")) else {
                    return err(o.span, "assert needs a condition and a message");
                };
                let cond_ast = c;
                let c = self.expand(c, env, cx)?.to_expr();
                let m = self.expand(m, env, cx)?.to_expr();
                if !matches!(c, Expr::Boolean(_)) && fold::is_literal(&c) {
                    return err(
                        cond_ast.span,
                        "the condition of assert must be a Boolean expression",
                    );
                }
                if !matches!(m, Expr::String(_)) && fold::is_literal(&m) {
                    return err(o.span, "the message of assert must be a String expression");
                }
                let level = match arg(2, "level") {
                    Some(l) => match self.eval_expr(l, env, &mut cx.clone())? {
                        Val::S(Expr::Enum { literal, .. }) if &*literal == "warning" => {
                            AssertLevel::Warning
                        }
                        _ => AssertLevel::Error,
                    },
                    None => AssertLevel::Error,
                };
                // Conditions on parameters and constants are checked now.
                let known = if cx.guarded {
                    None
                } else if fold::is_literal(&c) {
                    Some(c.clone())
                } else {
                    self.eval_expr(cond_ast, env, &mut cx.clone())
                        .ok()
                        .and_then(|v| v.scalar().cloned())
                };
                if known == Some(Expr::Boolean(false)) && level == AssertLevel::Error {
                    let text = match &m {
                        Expr::String(s) => s.clone(),
                        other => crate::print::print_expr(other),
                    };
                    return err(
                        o.span,
                        format!("assertion fails for the given parameter values: {text}"),
                    );
                }
                Ok(Equation::Assert {
                    condition: c,
                    message: m,
                    level,
                    origin: o,
                })
            }
            "terminate" => {
                let Some(m) = arg(0, "message") else {
                    return err(o.span, "terminate needs a message");
                };
                Ok(Equation::Terminate {
                    message: self.expand(m, env, cx)?.to_expr(),
                    origin: o,
                })
            }
            "reinit" => {
                let (Some(x), Some(v)) = (positional.first(), positional.get(1)) else {
                    return err(o.span, "reinit needs a variable and a value");
                };
                let Val::S(Expr::Var { name, .. }) = self.expand(x, env, cx)? else {
                    return err(
                        x.span,
                        "the first argument of reinit must be a scalar variable",
                    );
                };
                let value = self.expand(v, env, cx)?.to_expr();
                Ok(Equation::Reinit {
                    var: name,
                    value,
                    origin: o,
                })
            }
            _ => {
                let e = ast::Expr::new(
                    ExprKind::Call {
                        function: function.clone(),
                        args: args.clone(),
                    },
                    o.span,
                );
                match self.expand(&e, env, cx)? {
                    Val::S(Expr::Call { func, args }) => Ok(Equation::Call {
                        func,
                        args,
                        origin: o,
                    }),
                    _ => err(
                        o.span,
                        format!("`{}` cannot be used as an equation", cref_text(function)),
                    ),
                }
            }
        }
    }
}

/// Inside `when`, an if-equation whose branches assign the same variables becomes one
/// equation per variable with an if-expression (the flat model keeps only assignments-like
/// equations in `when` branches).
fn lower_ifs_in_when(eqs: Vec<Equation>) -> Vec<Equation> {
    let mut out = Vec::new();
    for e in eqs {
        let Equation::If {
            branches,
            else_,
            origin,
        } = e
        else {
            out.push(e);
            continue;
        };
        let branches: Vec<(Expr, Vec<Equation>)> = branches
            .into_iter()
            .map(|(c, b)| (c, lower_ifs_in_when(b)))
            .collect();
        let else_ = lower_ifs_in_when(else_);
        let assigned = |b: &[Equation]| -> Option<Vec<(String, Expr)>> {
            let mut v: Vec<(String, Expr)> = b
                .iter()
                .map(|e| match e {
                    Equation::Equal {
                        lhs: Expr::Var { name, .. },
                        rhs,
                        ..
                    } => Some((name.clone(), rhs.clone())),
                    _ => None,
                })
                .collect::<Option<_>>()?;
            v.sort_by(|a, b| a.0.cmp(&b.0));
            Some(v)
        };
        let else_set = assigned(&else_);
        let sets: Option<Vec<Vec<(String, Expr)>>> =
            branches.iter().map(|(_, b)| assigned(b)).collect();
        let same_vars = |a: &[(String, Expr)], b: &[(String, Expr)]| {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.0 == y.0)
        };
        match (sets, else_set) {
            (Some(sets), Some(else_set)) if sets.iter().all(|s| same_vars(s, &else_set)) => {
                for (k, (name, else_value)) in else_set.iter().enumerate() {
                    let value = fold::if_expr(
                        branches
                            .iter()
                            .zip(&sets)
                            .map(|((c, _), s)| (c.clone(), s[k].1.clone()))
                            .collect(),
                        else_value.clone(),
                    );
                    out.push(Equation::Equal {
                        lhs: Expr::Var {
                            name: name.clone(),
                            subscripts: Vec::new(),
                        },
                        rhs: value,
                        origin: origin.clone(),
                    });
                }
            }
            _ => out.push(Equation::If {
                branches,
                else_,
                origin,
            }),
        }
    }
    out
}

/// Element `[i]` of an array-valued call, as produced by the expander.
pub fn is_index_call(e: &Expr) -> bool {
    matches!(e, Expr::Call { func, .. } if func == "[]")
}

/// A record bound to a call of a function returning it (`R = nullRotation()`), whose
/// fields are outputs of that one call, some of them arrays: the output list (one target
/// per output, arrays as array literals of the fields' variables) and the call.
pub(super) fn record_fields_of_one_call(lhs: &Val, v: &Val) -> Option<(Vec<Option<Expr>>, Expr)> {
    let (Val::R(lf), Val::R(rf)) = (lhs, v) else {
        return None;
    };
    let mut call: Option<&Expr> = None;
    let mut targets: Vec<Option<Expr>> = Vec::new();
    let mut any_array = false;
    for (n, lv) in lf {
        let (_, rv) = rf.iter().find(|(m, _)| m == n)?;
        let Val::S(Expr::CallOutput { call: c, index }) = rv else {
            return None;
        };
        if call.is_some_and(|first| first != &**c) {
            return None;
        }
        call = Some(c);
        any_array |= matches!(lv, Val::A(_));
        if targets.len() <= *index {
            targets.resize(*index + 1, None);
        }
        targets[*index] = Some(lv.to_expr());
    }
    // all-scalar fields are handled by [`whole_call`]
    Some((targets, call?.clone())).filter(|_| any_array)
}

/// If `rs` are the outputs `0..n` of one call, in order, that call.
pub fn whole_call(rs: &[Expr]) -> Option<Expr> {
    let first = match rs.first()? {
        Expr::CallOutput { call, index: 0 } => call,
        _ => return None,
    };
    let all = rs.iter().enumerate().all(
        |(i, e)| matches!(e, Expr::CallOutput { call, index } if *index == i && call == first),
    );
    (all && rs.len() > 1).then(|| (**first).clone())
}

/// The call itself when a call with a record-valued first output was expanded to the
/// selections of its fields (`{output 1 of f(x)}` for `(rec, y) = f(x)`).
pub(super) fn called_function(e: Expr) -> Expr {
    fn first_call(e: &Expr) -> Option<&Expr> {
        match e {
            Expr::CallOutput { call, .. } if matches!(**call, Expr::Call { .. }) => Some(call),
            Expr::Array(items) => items.first().and_then(first_call),
            _ => None,
        }
    }
    match &e {
        Expr::Call { .. } => e,
        _ => first_call(&e).cloned().unwrap_or(e),
    }
}

/// The targets of a tuple equation as the function's outputs are laid out: a record output
/// is one output per field (records never reach later stages), an array one output.
fn record_fields_as_targets(v: Val, out: &mut Vec<Option<Expr>>) {
    match v {
        Val::R(fields) => {
            for (_, f) in fields {
                record_fields_as_targets(f, out);
            }
        }
        other => out.push(Some(other.to_expr())),
    }
}

/// `{[](f(x),1), [](f(x),2)}` → `f(x)`.
pub(super) fn strip_index_call(e: Expr) -> Expr {
    match e {
        Expr::Call { func, mut args } if func == "[]" && !args.is_empty() => args.swap_remove(0),
        Expr::Array(items) => {
            let stripped: Vec<Expr> = items.into_iter().map(strip_index_call).collect();
            match stripped.first() {
                Some(f) if stripped.iter().all(|x| x == f) && matches!(f, Expr::Call { .. }) => {
                    f.clone()
                }
                _ => Expr::Array(stripped),
            }
        }
        other => other,
    }
}
