//! If-equations: a branch with a constant (or, with derivatives, parameter) condition is
//! taken directly; otherwise the branches are combined equation by equation into
//! if-expressions, with their asserts guarded by the branch conditions.

use super::expressions::expr_contains_der;
use super::Conv;
use crate::ir::{ExprId, Node};
use crate::model::{Effect, EqBody, Model, SEq};
use moss_frontend::flat::{self, Equation, Origin};

/// Does a (flat) equation contain `der(...)`?
fn contains_der(eq: &Equation) -> bool {
    let mut found = false;
    let mut e = eq.clone();
    moss_frontend::walk::equation_exprs_mut(&mut e, &mut |x| found |= expr_contains_der(x));
    found
}

impl<'a> Conv<'a> {
    /// if-equation: a branch with a constant condition is taken directly; otherwise every
    /// branch must have the same number of scalar equations, and equation k becomes
    /// `0 = if c1 then r1k elseif ... else rek` (or `v = if ...` when all branches assign the
    /// same variable `v`).
    pub(super) fn if_equation(
        &mut self,
        branches: &[(flat::Expr, Vec<Equation>)],
        else_: &[Equation],
        o: &Origin,
        out: &mut Vec<SEq>,
    ) {
        let mut conds = Vec::new();
        let mut bodies: Vec<Vec<SEq>> = Vec::new();
        let structural = branches.iter().any(|(_, b)| b.iter().any(contains_der))
            || else_.iter().any(contains_der);
        for (c, body) in branches {
            let mut c = self.expr(c, o, false);
            if structural {
                c = self.structural_condition(c);
            }
            match self.m.arena.as_const(c) {
                Some(0.0) => continue,
                Some(_) => {
                    let mut eqs = Vec::new();
                    for e in body {
                        self.equation(e, &mut eqs);
                    }
                    if conds.is_empty() {
                        out.extend(eqs);
                        return;
                    }
                    // constant-true condition after variable ones acts as the else branch
                    bodies.push(eqs);
                    return self.combine_if(conds, bodies, o, out);
                }
                None => {}
            }
            let mut eqs = Vec::new();
            for e in body {
                self.equation(e, &mut eqs);
            }
            conds.push(c);
            bodies.push(eqs);
        }
        let mut eqs = Vec::new();
        for e in else_ {
            self.equation(e, &mut eqs);
        }
        if conds.is_empty() {
            out.extend(eqs);
            return;
        }
        bodies.push(eqs);
        self.combine_if(conds, bodies, o, out)
    }

    /// When every branch assigns the same variables (`v = ...`), each in its own order, the
    /// equations are put in the first branch's order, so that equation k of the combined
    /// if-equation determines one variable instead of coupling several (a clocked counter
    /// written `if c then n = ...; b = ...; else b = ...; n = ...; end if`).
    fn align_branches_by_lhs(&self, bodies: Vec<Vec<SEq>>) -> Vec<Vec<SEq>> {
        let lhs_of = |e: &SEq| match &e.body {
            EqBody::Eq { lhs, .. } if matches!(self.m.arena.node(*lhs), Node::Var(_)) => Some(*lhs),
            _ => None,
        };
        let order: Option<Vec<ExprId>> = bodies[0].iter().map(lhs_of).collect();
        let Some(order) = order else { return bodies };
        let distinct: std::collections::HashSet<ExprId> = order.iter().copied().collect();
        if distinct.len() != order.len() {
            return bodies;
        }
        // position in the first branch's order of each equation of every branch
        let mut perms: Vec<Vec<usize>> = Vec::with_capacity(bodies.len());
        for body in &bodies {
            let mut perm = Vec::with_capacity(body.len());
            let mut seen = vec![false; order.len()];
            for e in body {
                let k = lhs_of(e).and_then(|l| order.iter().position(|o| *o == l));
                match k {
                    Some(k) if !seen[k] => {
                        seen[k] = true;
                        perm.push(k);
                    }
                    // a branch that does not assign the same variables: keep the written order
                    _ => return bodies,
                }
            }
            perms.push(perm);
        }
        bodies
            .into_iter()
            .zip(perms)
            .map(|(body, perm)| {
                let mut slots: Vec<Option<SEq>> = vec![None; perm.len()];
                for (e, k) in body.into_iter().zip(perm) {
                    slots[k] = Some(e);
                }
                slots.into_iter().flatten().collect()
            })
            .collect()
    }

    /// Asserts are no equations (spec 8.3.4 counts equations, 8.3.7 makes `assert` a
    /// check): each one leaves its branch as an assert of its own whose condition holds
    /// trivially while another branch is active, `if c1 then true elseif c2 then cond
    /// else true` for one in the second branch. The remaining bodies are returned.
    fn guard_branch_asserts(
        &mut self,
        conds: &[ExprId],
        bodies: Vec<Vec<SEq>>,
        out: &mut Vec<SEq>,
    ) -> Vec<Vec<SEq>> {
        let mut kept = Vec::with_capacity(bodies.len());
        for (i, body) in bodies.into_iter().enumerate() {
            let mut eqs = Vec::with_capacity(body.len());
            for mut e in body {
                let EqBody::Effect(Effect::Assert { cond, .. }) = &mut e.body else {
                    eqs.push(e);
                    continue;
                };
                let one = self.m.arena.one();
                // the else branch (index conds.len()) is active when no condition holds
                let mut acc = if i == conds.len() { *cond } else { one };
                for (j, &c) in conds.iter().enumerate().rev() {
                    let then = if j == i { *cond } else { one };
                    acc = self.m.arena.if_(c, then, acc);
                }
                *cond = acc;
                out.push(e);
            }
            kept.push(eqs);
        }
        kept
    }

    fn combine_if(
        &mut self,
        conds: Vec<ExprId>,
        bodies: Vec<Vec<SEq>>,
        o: &Origin,
        out: &mut Vec<SEq>,
    ) {
        let bodies = self.guard_branch_asserts(&conds, bodies, out);
        let counts: Vec<usize> = bodies.iter().map(|b| b.len()).collect();
        if counts.iter().any(|&c| c != counts[0]) {
            let list = counts
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(", ");
            self.err(
                o,
                format!("the branches of this if-equation have different numbers of equations ({list})"),
                "every branch (including `else`) must contain the same number of equations unless the condition is a parameter expression",
            );
            return;
        }
        let bodies = self.align_branches_by_lhs(bodies);
        for k in 0..counts[0] {
            let mut lhs_var: Option<ExprId> = None;
            let mut same_lhs = true;
            let mut parts = Vec::new();
            for b in &bodies {
                match &b[k].body {
                    EqBody::Eq { lhs, rhs } => {
                        if matches!(self.m.arena.node(*lhs), Node::Var(_))
                            && lhs_var.is_none_or(|l| l == *lhs)
                        {
                            lhs_var = Some(*lhs);
                        } else {
                            same_lhs = false;
                        }
                        parts.push((*lhs, *rhs));
                    }
                    _ => {
                        self.err(
                            o,
                            "only plain equations are supported inside if-equations with non-parameter conditions".into(),
                            "move when-equations, asserts and function calls with several outputs out of the if-equation",
                        );
                        return;
                    }
                }
            }
            let (lhs, rhs) = match (same_lhs, lhs_var) {
                (true, Some(l)) => {
                    let mut acc = parts[parts.len() - 1].1;
                    for (i, &c) in conds.iter().enumerate().rev() {
                        acc = self.m.arena.if_(c, parts[i].1, acc);
                    }
                    (l, acc)
                }
                _ => {
                    let residual = |m: &mut Model, (l, r): (ExprId, ExprId)| m.arena.sub(l, r);
                    let mut acc = residual(&mut self.m, parts[parts.len() - 1]);
                    for (i, &c) in conds.iter().enumerate().rev() {
                        let r = residual(&mut self.m, parts[i]);
                        acc = self.m.arena.if_(c, r, acc);
                    }
                    (self.m.arena.zero(), acc)
                }
            };
            out.push(SEq::new(EqBody::Eq { lhs, rhs }, o.clone()));
        }
    }
}
