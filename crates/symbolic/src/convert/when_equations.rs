//! The bodies of `when` equations: each equation inside becomes a branch item (assignment,
//! call outputs, `reinit`, assert, `terminate`).

use super::Conv;
use crate::ir::{ExprId, Node};
use crate::model::{EqBody, WhenItem};
use moss_frontend::flat::{self, Equation, Origin};

impl<'a> Conv<'a> {
    pub(super) fn when_item(&mut self, e: &Equation, items: &mut Vec<WhenItem>) {
        use flat::Expr as E;
        match e {
            Equation::Equal { lhs, rhs, origin } => match lhs {
                E::Var { name, .. } => {
                    let Some(var) = self.lookup(name, origin) else {
                        return;
                    };
                    let expr = self.expr(rhs, origin, false);
                    items.push(WhenItem::Assign { var, expr });
                }
                E::Tuple(_) | E::Array(_) => {
                    let mut tmp = Vec::new();
                    self.equal(lhs, rhs, origin, &mut tmp);
                    for eq in tmp {
                        match eq.body {
                            EqBody::Call {
                                outputs,
                                func,
                                args,
                            } => items.push(WhenItem::CallOutputs {
                                outputs,
                                func,
                                args,
                            }),
                            EqBody::Eq { lhs, rhs } => self.when_assign(lhs, rhs, origin, items),
                            _ => {}
                        }
                    }
                }
                _ => self.err(
                    origin,
                    "the left side of an equation inside `when` must be a variable".into(),
                    "write `v = expression;` inside when-equations",
                ),
            },
            Equation::If {
                branches,
                else_,
                origin,
            } => {
                let mut tmp = Vec::new();
                self.if_equation(branches, else_, origin, &mut tmp);
                for eq in tmp {
                    if let EqBody::Eq { lhs, rhs } = eq.body {
                        self.when_assign(lhs, rhs, origin, items);
                    }
                }
            }
            Equation::Reinit { var, value, origin } => {
                let Some(v) = self.lookup(var, origin) else {
                    return;
                };
                let expr = self.expr(value, origin, false);
                items.push(WhenItem::Reinit { var: v, expr });
            }
            Equation::Assert {
                condition,
                message,
                level,
                origin,
            } => {
                let cond = self.expr(condition, origin, true);
                let msg = self.expr(message, origin, true);
                items.push(WhenItem::Assert {
                    cond,
                    msg,
                    level: *level,
                });
            }
            Equation::Terminate { message, origin } => {
                let msg = self.expr(message, origin, true);
                items.push(WhenItem::Terminate { msg });
            }
            Equation::Call { func, args, origin } => {
                let args = args.iter().map(|a| self.expr(a, origin, true)).collect();
                items.push(WhenItem::CallOutputs {
                    outputs: Vec::new(),
                    func: func.clone(),
                    args,
                });
            }
            Equation::When { origin, .. } => self.err(
                origin,
                "when-equations cannot be nested".into(),
                "use `elsewhen` or combine the conditions",
            ),
        }
    }

    fn when_assign(&mut self, lhs: ExprId, rhs: ExprId, o: &Origin, items: &mut Vec<WhenItem>) {
        match *self.m.arena.node(lhs) {
            Node::Var(var) => items.push(WhenItem::Assign { var, expr: rhs }),
            _ => self.err(
                o,
                "the left side of an equation inside `when` must be a variable".into(),
                "write `v = expression;` inside when-equations",
            ),
        }
    }
}
