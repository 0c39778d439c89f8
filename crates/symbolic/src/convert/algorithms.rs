//! Algorithms: the `Algorithm` unit of an algorithm section (the variables it assigns and
//! reads), the event sources its relations and step functions need (`$algEventN`), the
//! hidden variables for `sample` in its when-conditions (`$algSampleN`), and the name
//! collection over statements.

use super::Conv;
use crate::ir::{ExprId, Node, VarIx};
use crate::model::{EqBody, SEq, SVar, VKind};
use crate::program::ValueType;
use moss_frontend::flat::{self, Origin, Statement};

/// The event-generating relations of algorithm statements, as flat expressions: those of
/// `when` conditions, and outside `when` bodies those of `if` and `while` conditions and of
/// assigned values, at any depth of `if`, `for` and `while`.
fn statement_event_relations<'a>(stmts: &'a [Statement], out: &mut Vec<&'a flat::Expr>) {
    for s in stmts {
        match s {
            Statement::When { branches, .. } => {
                for (c, _) in branches {
                    flat_relations(c, out);
                }
            }
            Statement::Assign { value, .. } | Statement::TupleAssign { value, .. } => {
                flat_relations(value, out)
            }
            Statement::If {
                branches, else_, ..
            } => {
                for (c, body) in branches {
                    flat_relations(c, out);
                    statement_event_relations(body, out);
                }
                statement_event_relations(else_, out);
            }
            Statement::While {
                condition, body, ..
            } => {
                flat_relations(condition, out);
                statement_event_relations(body, out);
            }
            Statement::For { body, .. } => statement_event_relations(body, out),
            _ => {}
        }
    }
}

/// The relations inside `e`, nested ones too, and the calls of step functions (`floor`,
/// `integer`, `div`, ...: converting one with a continuous argument creates its event
/// helper), except below `noEvent` and `smooth` (which suppress events). Only these are
/// converted later, so that the calls around them are not instantiated a second time (an
/// impure function must be called once).
fn flat_relations<'a>(e: &'a flat::Expr, out: &mut Vec<&'a flat::Expr>) {
    use flat::{BinaryOp as B, Expr as E};
    match e {
        E::Call { func, args } if crate::ir::STEP_FUNCTIONS.contains(&func.as_str()) => {
            out.push(e);
            args.iter().for_each(|a| flat_relations(a, out));
        }
        E::Binary { op, lhs, rhs } => {
            if matches!(op, B::Lt | B::Le | B::Gt | B::Ge | B::Eq | B::Ne) {
                out.push(e);
            }
            flat_relations(lhs, out);
            flat_relations(rhs, out);
        }
        E::Unary { arg, .. } => flat_relations(arg, out),
        E::Call { func, .. } if func == "noEvent" || func == "smooth" => {}
        E::Call { args, .. } => args.iter().for_each(|a| flat_relations(a, out)),
        E::If { branches, else_ } => {
            for (c, v) in branches {
                flat_relations(c, out);
                flat_relations(v, out);
            }
            flat_relations(else_, out);
        }
        E::Array(items) => items.iter().for_each(|a| flat_relations(a, out)),
        E::CallOutput { call, .. } => flat_relations(call, out),
        _ => {}
    }
}

/// Event-generating relations inside `e` (not below other relations).
fn collect_event_relations(a: &crate::ir::Arena, e: ExprId, out: &mut Vec<ExprId>) {
    match a.node(e) {
        Node::Rel { event: true, .. } => out.push(e),
        Node::Not(x) => collect_event_relations(a, *x, out),
        Node::And(x, y) | Node::Or(x, y) => {
            collect_event_relations(a, *x, out);
            collect_event_relations(a, *y, out);
        }
        Node::If(c, x, y) => {
            for z in [*c, *x, *y] {
                collect_event_relations(a, z, out);
            }
        }
        Node::Array(items) => items
            .iter()
            .for_each(|&x| collect_event_relations(a, x, out)),
        _ => {}
    }
}

/// Variables an algorithm assigns only inside its `when` statements: they change only at
/// events, i.e. they are discrete (their `fixed` start values then initialize `pre`).
/// When-statements appear only at the top level of an algorithm.
fn assigned_only_in_when(stmts: &[Statement]) -> Vec<String> {
    let (mut inside, mut outside, mut read) = (Vec::new(), Vec::new(), Vec::new());
    for s in stmts {
        match s {
            Statement::When { .. } => {
                collect_statement_names(std::slice::from_ref(s), &mut inside, &mut read)
            }
            _ => collect_statement_names(std::slice::from_ref(s), &mut outside, &mut read),
        }
    }
    let outside: std::collections::HashSet<String> = outside.into_iter().collect();
    inside.retain(|n| !outside.contains(n));
    inside.sort_unstable();
    inside.dedup();
    inside
}

/// Names read under `pre(...)` by statements.
fn names_under_pre(stmts: &[Statement]) -> Vec<String> {
    let mut out = Vec::new();
    for s in stmts {
        let mut s = s.clone();
        moss_frontend::walk::statement_exprs_mut(&mut s, &mut |e| {
            moss_frontend::walk::visit(e, &mut |x| {
                if let flat::Expr::Call { func, args } = x {
                    if func == "pre" {
                        args.iter().for_each(|a| {
                            moss_frontend::walk::visit(a, &mut |y| {
                                if let flat::Expr::Var { name, .. } = y {
                                    out.push(name.clone());
                                }
                            })
                        });
                    }
                }
            })
        });
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Variables an assignment target assigns (a variable, or an array literal of them for an
/// array-valued target) and the names its subscripts read.
fn assigned_names(target: &flat::Expr, assigned: &mut Vec<String>, read: &mut Vec<String>) {
    match target {
        flat::Expr::Var { name, subscripts } => {
            assigned.push(name.clone());
            for sub in subscripts {
                if let flat::Subscript::Index(e) = sub {
                    expr_names(e, read);
                }
            }
        }
        flat::Expr::Array(items) => {
            for t in items {
                assigned_names(t, assigned, read);
            }
        }
        _ => {}
    }
}

/// Names assigned and read by statements (recursively).
fn collect_statement_names(
    stmts: &[Statement],
    assigned: &mut Vec<String>,
    read: &mut Vec<String>,
) {
    for s in stmts {
        match s {
            Statement::Assign { target, value, .. } => {
                assigned_names(target, assigned, read);
                expr_names(value, read);
            }
            Statement::TupleAssign { targets, value, .. } => {
                // a target is a variable or, for an array output, the array of its elements
                for t in targets.iter().flatten() {
                    assigned_names(t, assigned, read);
                }
                expr_names(value, read);
            }
            Statement::If {
                branches, else_, ..
            } => {
                for (c, b) in branches {
                    expr_names(c, read);
                    collect_statement_names(b, assigned, read);
                }
                collect_statement_names(else_, assigned, read);
            }
            Statement::When { branches, .. } => {
                for (c, b) in branches {
                    expr_names(c, read);
                    collect_statement_names(b, assigned, read);
                }
            }
            Statement::For { range, body, .. } => {
                expr_names(range, read);
                collect_statement_names(body, assigned, read);
            }
            Statement::While {
                condition, body, ..
            } => {
                expr_names(condition, read);
                collect_statement_names(body, assigned, read);
            }
            Statement::Reinit { var, value, .. } => {
                read.push(var.clone());
                expr_names(value, read);
            }
            Statement::Assert {
                condition, message, ..
            } => {
                expr_names(condition, read);
                expr_names(message, read);
            }
            Statement::Terminate { message, .. } => expr_names(message, read),
            Statement::Call { args, .. } => args.iter().for_each(|a| expr_names(a, read)),
            Statement::Return { .. } | Statement::Break { .. } => {}
        }
    }
}

pub(super) fn expr_names(e: &flat::Expr, out: &mut Vec<String>) {
    use flat::Expr as E;
    match e {
        E::Var { name, subscripts } => {
            out.push(name.clone());
            for s in subscripts {
                if let flat::Subscript::Index(i) = s {
                    expr_names(i, out);
                }
            }
        }
        E::Unary { arg, .. } => expr_names(arg, out),
        E::Binary { lhs, rhs, .. } => {
            expr_names(lhs, out);
            expr_names(rhs, out);
        }
        // `pre(v)` is the value before the event, known when the algorithm runs: not a
        // dependency on `v` (a loop through it is no algebraic loop)
        E::Call { func, .. } if func == "pre" => {}
        E::Call { args, .. } => args.iter().for_each(|a| expr_names(a, out)),
        E::If { branches, else_ } => {
            for (c, v) in branches {
                expr_names(c, out);
                expr_names(v, out);
            }
            expr_names(else_, out);
        }
        E::Array(items) => items.iter().for_each(|a| expr_names(a, out)),
        E::Range { start, step, stop } => {
            expr_names(start, out);
            if let Some(s) = step {
                expr_names(s, out);
            }
            expr_names(stop, out);
        }
        E::Tuple(items) => items.iter().flatten().for_each(|a| expr_names(a, out)),
        E::CallOutput { call, .. } => expr_names(call, out),
        _ => {}
    }
}

impl<'a> Conv<'a> {
    /// Relations in an algorithm are evaluated by the algorithm itself, but they generate
    /// events like relations in equations (spec 8.5): the conditions of `when` statements,
    /// and every relation outside `when` bodies (if- and while-conditions, assigned
    /// expressions), whose change switches what the algorithm computes (a table source's
    /// `if time >= t[i] then y := x[i]`). For the simulator to stop at the instant one of
    /// them changes, each gets a hidden Boolean variable computed by an equation,
    /// `$algEventN = relation`, whose emission creates the zero crossing (or time event).
    /// The variables are not read by anything. Step functions of continuous arguments get
    /// their event helpers (`$floorN`) the same way. Relations inside `when` bodies are only
    /// evaluated at events and need no source.
    pub(super) fn algorithm_event_sources(&mut self, stmts: &[Statement], origin: &Origin) {
        let errors_before = self.errors.len();
        let mut flat_rels = Vec::new();
        statement_event_relations(stmts, &mut flat_rels);
        let mut relations = Vec::new();
        for e in flat_rels {
            let c = self.expr(e, origin, false);
            collect_event_relations(&self.m.arena, c, &mut relations);
        }
        // a relation this conversion cannot handle (one reading a `for` iterator) is still
        // evaluated by the algorithm; it just gets no event source
        self.errors.truncate(errors_before);
        relations.sort_unstable();
        relations.dedup();
        for rel in relations {
            let k = self.m.vars.len();
            let mut sv = SVar::new(format!("$algEvent{k}"), VKind::Discrete, ValueType::Boolean);
            sv.hidden = true;
            sv.protected_from_alias = true;
            sv.origin = origin.clone();
            sv.description = format!("event source of an algorithm: {}", self.m.text(rel));
            let v = self.m.add_var(sv);
            let lhs = self.m.arena.var(v);
            self.helper_eqs
                .push(SEq::new(EqBody::Eq { lhs, rhs: rel }, origin.clone()));
        }
    }

    /// `when sample(start, interval) then ... end when;` in an algorithm: the sample becomes a
    /// hidden Boolean variable defined by an equation, `$algSampleN = sample(start,
    /// interval)`, which the scheduler of samples drives, and the condition reads that
    /// variable (true at the sample instants, false between them). Returns the statements
    /// with their top-level `when` conditions rewritten.
    pub(super) fn sample_sources(
        &mut self,
        stmts: &[Statement],
        origin: &Origin,
    ) -> Vec<Statement> {
        let mut out = stmts.to_vec();
        for s in &mut out {
            let Statement::When { branches, .. } = s else {
                continue;
            };
            for (cond, _) in branches.iter_mut() {
                self.replace_sample_calls(cond, origin);
            }
        }
        out
    }

    fn replace_sample_calls(&mut self, e: &mut flat::Expr, origin: &Origin) {
        match e {
            flat::Expr::Call { func, args } if func == "sample" && args.len() == 2 => {
                let k = self.m.vars.len();
                let name = format!("$algSample{k}");
                let mut sv = SVar::new(name.clone(), VKind::Discrete, ValueType::Boolean);
                sv.hidden = true;
                sv.protected_from_alias = true;
                sv.origin = origin.clone();
                sv.description = "sample of an algorithm's when-condition".to_string();
                let rhs = self.expr(e, origin, false);
                let v = self.m.add_var(sv);
                let lhs = self.m.arena.var(v);
                self.helper_eqs
                    .push(SEq::new(EqBody::Eq { lhs, rhs }, origin.clone()));
                *e = flat::Expr::Var {
                    name,
                    subscripts: Vec::new(),
                };
            }
            flat::Expr::Array(items) => items
                .iter_mut()
                .for_each(|x| self.replace_sample_calls(x, origin)),
            flat::Expr::Unary { arg, .. } => self.replace_sample_calls(arg, origin),
            flat::Expr::Binary { lhs, rhs, .. } => {
                self.replace_sample_calls(lhs, origin);
                self.replace_sample_calls(rhs, origin);
            }
            _ => {}
        }
    }

    pub(super) fn algorithm(&mut self, stmts: &[Statement], origin: Origin) -> SEq {
        let mut assigned = Vec::new();
        let mut read = Vec::new();
        collect_statement_names(stmts, &mut assigned, &mut read);
        let mut outputs: Vec<VarIx> = assigned
            .iter()
            .filter_map(|n| self.m.by_name.get(n).copied())
            .collect();
        outputs.sort_unstable();
        outputs.dedup();
        let mut inputs: Vec<VarIx> = read
            .iter()
            .filter_map(|n| self.m.by_name.get(n).copied())
            .filter(|v| outputs.binary_search(v).is_err())
            .collect();
        inputs.sort_unstable();
        inputs.dedup();
        let under_pre: Vec<VarIx> = names_under_pre(stmts)
            .iter()
            .filter_map(|n| self.m.by_name.get(n).copied())
            .collect();
        // the statements name these variables: alias elimination must keep them
        for &v in outputs.iter().chain(&inputs).chain(&under_pre) {
            self.m.vars[v as usize].protected_from_alias = true;
        }
        for name in assigned_only_in_when(stmts) {
            if let Some(&v) = self.m.by_name.get(&name) {
                if self.m.vars[v as usize].kind == VKind::Continuous {
                    self.m.vars[v as usize].kind = VKind::Discrete;
                }
            }
        }
        let index = self.m.algorithms.len();
        self.m.algorithms.push(stmts.to_vec());
        SEq::new(
            EqBody::Algorithm {
                index,
                outputs,
                inputs,
            },
            origin,
        )
    }
}
