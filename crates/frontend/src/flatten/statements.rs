//! Algorithm sections of the model: statements on scalar variables, if/while/when
//! statements, assignments with subscripts known only during simulation, and for-loops
//! unrolled (with `break` kept working). Separate from equations: statements are ordered
//! and assign, so they have their own checks and their own loop handling.

use super::equations::{called_function, is_index_call, strip_index_call};
use super::origin;
use crate::ctx::Flattener;
use crate::expand::{Cx, Val};
use crate::flat::{self, Equation, Expr, Statement};
use crate::fold;
use crate::inst::*;
use moss_syntax::ast::{self, ExprKind, StatementKind};
use std::sync::Arc;

impl<'a> Flattener<'a> {
    // -----------------------------------------------------------------------------------
    // Algorithms of the model (statements on scalar variables; loops unrolled)
    // -----------------------------------------------------------------------------------

    pub fn statement(
        &self,
        s: &ast::Statement,
        env: &Env,
        cx: &mut Cx,
        out: &mut Vec<Statement>,
    ) -> Res<()> {
        if matches!(
            s.kind,
            StatementKind::If { .. } | StatementKind::When { .. }
        ) && !cx.guarded
        {
            cx.guarded = true;
            let r = self.statement(s, env, cx, out);
            cx.guarded = false;
            return r;
        }
        let o = origin(s.span, &env.node);
        match &s.kind {
            StatementKind::Assign { target, value } => {
                if let Some(stmt) = self.dynamic_assignment(s, target, value, env, cx)? {
                    out.push(stmt);
                    return Ok(());
                }
                let t = self.expand_cref(target, env, cx)?;
                let v = self.expand(value, env, cx)?;
                let (ts, vs) = (t.scalars(), v.scalars());
                let whole_call = !vs.is_empty() && vs.iter().all(is_index_call);
                if ts.len() != vs.len() || whole_call {
                    if vs.iter().any(is_index_call) {
                        out.push(Statement::Assign {
                            target: t.to_expr(),
                            value: strip_index_call(v.to_expr()),
                            origin: o,
                        });
                        return Ok(());
                    }
                    return err(
                        s.span,
                        "the two sides of the assignment have different sizes",
                    );
                }
                for (a, b) in ts.into_iter().zip(vs) {
                    out.push(Statement::Assign {
                        target: a,
                        value: b,
                        origin: o.clone(),
                    });
                }
            }
            StatementKind::TupleAssign { targets, value } => {
                self.check_tuple_call(targets.len(), value, env, cx)?;
                // A call with literal arguments would fold to its first output; the tuple
                // needs all of them, so the call is kept as the equation form does.
                let keep = self.keep_calls.replace(true);
                let v = self.expand(value, env, cx);
                self.keep_calls.set(keep);
                let v = called_function(strip_index_call(v?.to_expr()));
                let mut ts = Vec::new();
                for t in targets {
                    ts.push(match t {
                        Some(e) => Some(self.expand(e, env, cx)?.to_expr()),
                        None => None,
                    });
                }
                out.push(Statement::TupleAssign {
                    targets: ts,
                    value: v,
                    origin: o,
                });
            }
            StatementKind::Call { function, args } => {
                match self.call_eq(function, args, env, cx, o)? {
                    Equation::Assert {
                        condition,
                        message,
                        level,
                        origin,
                    } => out.push(Statement::Assert {
                        condition,
                        message,
                        level,
                        origin,
                    }),
                    Equation::Terminate { message, origin } => {
                        out.push(Statement::Terminate { message, origin })
                    }
                    Equation::Reinit { var, value, origin } => {
                        out.push(Statement::Reinit { var, value, origin })
                    }
                    Equation::Call { func, args, origin } => {
                        out.push(Statement::Call { func, args, origin })
                    }
                    _ => {}
                }
            }
            StatementKind::If {
                branches,
                else_branch,
            } => {
                let mut bs = Vec::new();
                let mut else_: Option<Vec<Statement>> = None;
                for (c, body) in branches {
                    let cv = self.condition(c, env, cx, "if")?;
                    if cv == Expr::Boolean(false) {
                        continue;
                    }
                    let mut v = Vec::new();
                    for st in body {
                        self.statement(st, env, cx, &mut v)?;
                    }
                    if cv == Expr::Boolean(true) {
                        else_ = Some(v);
                        break;
                    }
                    bs.push((cv, v));
                }
                let else_ = match else_ {
                    Some(v) => v,
                    None => {
                        let mut v = Vec::new();
                        for st in else_branch {
                            self.statement(st, env, cx, &mut v)?;
                        }
                        v
                    }
                };
                if bs.is_empty() {
                    out.extend(else_);
                } else {
                    out.push(Statement::If {
                        branches: bs,
                        else_,
                        origin: o,
                    });
                }
            }
            StatementKind::For { indices, body } => {
                self.for_statement(indices, body, env, cx, out)?;
            }
            StatementKind::While { condition, body } => {
                let c = self.condition(condition, env, cx, "while")?;
                let mut v = Vec::new();
                let was = cx.in_loop;
                cx.in_loop = true;
                let r = body
                    .iter()
                    .try_for_each(|st| self.statement(st, env, cx, &mut v));
                cx.in_loop = was;
                r?;
                out.push(Statement::While {
                    condition: c,
                    body: v,
                    origin: o,
                });
            }
            StatementKind::When { branches } => {
                let mut bs = Vec::new();
                for (c, body) in branches {
                    if cx.in_when {
                        return err(s.span, "when-statements cannot be nested");
                    }
                    let cv = self.expand(c, env, cx)?.to_expr();
                    let mut v = Vec::new();
                    cx.in_when = true;
                    let r = body
                        .iter()
                        .try_for_each(|st| self.statement(st, env, cx, &mut v));
                    cx.in_when = false;
                    r?;
                    bs.push((cv, v));
                }
                out.push(Statement::When {
                    branches: bs,
                    origin: o,
                });
            }
            StatementKind::Return => {
                return err(s.span, "`return` is only allowed in functions");
            }
            StatementKind::Break if !cx.in_loop => {
                return err(s.span, "`break` is only allowed inside a for or while loop");
            }
            StatementKind::Break => out.push(Statement::Break { origin: o }),
        }
        Ok(())
    }

    /// `x[k] := v` with `k` known only during simulation: an if-statement choosing the
    /// element (`if k == 1 then x[1] := v; elseif k == 2 then ...`).
    fn dynamic_assignment(
        &self,
        s: &ast::Statement,
        target: &ast::ComponentRef,
        value: &ast::Expr,
        env: &Env,
        cx: &mut Cx,
    ) -> Res<Option<Statement>> {
        let mut found = None;
        'outer: for (pi, p) in target.parts.iter().enumerate() {
            for (si, sub) in p.subscripts.iter().enumerate() {
                if let ast::Subscript::Expr(e) = sub {
                    let mut probe = cx.clone();
                    probe.end = Some(usize::MAX / 2);
                    if self.eval_expr(e, env, &mut probe).is_err()
                        && !matches!(e.kind, ExprKind::End)
                    {
                        found = Some((pi, si, e.clone()));
                        break 'outer;
                    }
                }
            }
        }
        let Some((pi, si, index)) = found else {
            return Ok(None);
        };
        let k = match self.expand(&index, env, cx)? {
            Val::S(k) => k,
            _ => return err(index.span, "a subscript must be a scalar Integer"),
        };
        let mut branches = Vec::new();
        for i in 1..=100_000i64 {
            let mut t = target.clone();
            t.parts[pi].subscripts[si] =
                ast::Subscript::Expr(ast::Expr::new(ExprKind::Integer(i), index.span));
            if self.expand_cref(&t, env, cx).is_err() {
                break;
            }
            let stmt = ast::Statement {
                kind: StatementKind::Assign {
                    target: t,
                    value: value.clone(),
                },
                description: ast::Description::default(),
                span: s.span,
            };
            let mut body = Vec::new();
            self.statement(&stmt, env, cx, &mut body)?;
            branches.push((
                fold::binary(flat::BinaryOp::Eq, k.clone(), Expr::Integer(i)),
                body,
            ));
        }
        if branches.is_empty() {
            return Ok(None);
        }
        Ok(Some(Statement::If {
            branches,
            else_: Vec::new(),
            origin: origin(s.span, &env.node),
        }))
    }

    /// A scalar Boolean condition of an `if` or `while` statement.
    fn condition(&self, c: &ast::Expr, env: &Env, cx: &mut Cx, what: &str) -> Res<Expr> {
        match self.expand(c, env, cx)? {
            Val::S(e) if fold::is_literal(&e) && !matches!(e, Expr::Boolean(_)) => err(
                c.span,
                format!("the condition of a {what}-statement must be a Boolean expression"),
            ),
            Val::S(e) => Ok(e),
            _ => err(
                c.span,
                format!("the condition of a {what}-statement must be a scalar Boolean"),
            ),
        }
    }

    fn for_statement(
        &self,
        indices: &[ast::ForIndex],
        body: &[ast::Statement],
        env: &Env,
        cx: &mut Cx,
        out: &mut Vec<Statement>,
    ) -> Res<()> {
        let Some((first, rest)) = indices.split_first() else {
            let was = cx.in_loop;
            cx.in_loop = true;
            let r = body
                .iter()
                .try_for_each(|s| self.statement(s, env, cx, out));
            cx.in_loop = was;
            return r;
        };
        let mut exprs = Vec::new();
        if first.range.is_none() {
            crate::expand::statement_exprs(body, &mut exprs);
        }
        let values = match self.iterator_values_in(first, &exprs, env, cx) {
            Ok(v) => v,
            Err(e) => self.varying_range_values(first, env, cx).ok_or(e)?,
        };
        let range_span = first.range.as_ref().map_or(first.span, |r| r.span);
        crate::typecheck::structure::for_range_is_vector(&values, range_span)?;
        let mut unrolled = Vec::new();
        for v in values {
            cx.locals.push((first.name.name.clone(), Arc::new(v)));
            let r = self.for_statement(rest, body, env, cx, &mut unrolled);
            cx.locals.pop();
            r?;
        }
        if rest.is_empty() && breaks_enclosing_loop(&unrolled) {
            // The iterations are laid out one after the other, so a `break` of this loop has
            // to skip the remaining ones: they go into a loop that runs once, which the
            // `break` leaves (for several indices, the innermost loop is the one broken).
            let o = unrolled
                .first()
                .map(Statement::origin)
                .cloned()
                .unwrap_or_default();
            out.push(Statement::For {
                var: "$unrolled".into(),
                range: Expr::Range {
                    start: Box::new(Expr::Integer(1)),
                    step: None,
                    stop: Box::new(Expr::Integer(1)),
                },
                body: unrolled,
                origin: o,
            });
        } else {
            out.extend(unrolled);
        }
        Ok(())
    }
}

/// Whether `stmts` contain a `break` of the loop around them (not one of a loop inside).
fn breaks_enclosing_loop(stmts: &[Statement]) -> bool {
    stmts.iter().any(|s| match s {
        Statement::Break { .. } => true,
        Statement::If {
            branches, else_, ..
        } => branches.iter().any(|(_, b)| breaks_enclosing_loop(b)) || breaks_enclosing_loop(else_),
        Statement::When { branches, .. } => branches.iter().any(|(_, b)| breaks_enclosing_loop(b)),
        _ => false,
    })
}

impl<'a> Flattener<'a> {
    /// A for-statement may iterate over an array whose elements vary during the simulation
    /// (`for i in y loop` with a variable `y`, spec 11.2.2): its size is known, so the loop
    /// is unrolled with the iterator standing for each element's expression.
    fn varying_range_values(
        &self,
        idx: &ast::ForIndex,
        env: &Env,
        cx: &mut Cx,
    ) -> Option<Vec<Val>> {
        let r = idx.range.as_ref()?;
        if matches!(r.kind, ExprKind::Range { .. }) {
            return None;
        }
        let mut fcx = cx.clone();
        fcx.eval = false;
        match self.expand(r, env, &mut fcx).ok()? {
            Val::A(items) => Some(items),
            _ => None,
        }
    }
}
