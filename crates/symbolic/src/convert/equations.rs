//! Equations: the dispatch of one flat equation into working equations (plain, tuple and
//! array equations, `when` units, asserts, `terminate`, calls) and the element-wise
//! equations of array results.

use super::variables::is_connect_origin;
use super::Conv;
use crate::ir::{ExprId, Node};
use crate::model::{Effect, EqBody, SEq, WhenBranch, WhenItem};
use moss_frontend::flat::{self, Equation, Origin};

/// Is `func` the `equalityConstraint` function of an overdetermined type or record (the
/// name the specification reserves for it)? With a `connect` as origin, the equation is the
/// residue of a loop of the connection graph.
fn is_equality_constraint(func: &str) -> bool {
    func.rsplit('.').next() == Some("equalityConstraint")
}

/// The elements of a nested array literal, row by row.
fn array_leaves<'e>(items: &'e [flat::Expr], out: &mut Vec<&'e flat::Expr>) {
    for i in items {
        match i {
            flat::Expr::Array(inner) => array_leaves(inner, out),
            other => out.push(other),
        }
    }
}

impl<'a> Conv<'a> {
    /// Convert one equation into zero or more working equations.
    pub(super) fn equation(&mut self, eq: &Equation, out: &mut Vec<SEq>) {
        match eq {
            Equation::Equal { lhs, rhs, origin } => self.equal(lhs, rhs, origin, out),
            Equation::If {
                branches,
                else_,
                origin,
            } => self.if_equation(branches, else_, origin, out),
            Equation::When { branches, origin } => {
                let mut bs = Vec::new();
                for (c, body) in branches {
                    let cond = self.expr(c, origin, false);
                    let conds = match self.m.arena.node(cond) {
                        Node::Array(items) => items.to_vec(),
                        _ => vec![cond],
                    };
                    let initial = c.enables_at_initialization();
                    let mut items = Vec::new();
                    for e in body {
                        self.when_item(e, &mut items);
                    }
                    bs.push(WhenBranch {
                        conds,
                        slots: Vec::new(),
                        initial,
                        items,
                    });
                }
                for b in &bs {
                    for it in &b.items {
                        if let WhenItem::Assign { var, .. } | WhenItem::Reinit { var, .. } = it {
                            self.m.vars[*var as usize].protected_from_alias = true;
                        }
                    }
                }
                out.push(SEq::new(EqBody::When(bs), origin.clone()));
            }
            Equation::Reinit { origin, .. } => self.err(
                origin,
                "`reinit` is only allowed inside a `when` equation".into(),
                "put the reinit into `when condition then ... end when`",
            ),
            Equation::Assert {
                condition,
                message,
                level,
                origin,
            } => {
                let cond = self.expr(condition, origin, true);
                let msg = self.expr(message, origin, true);
                out.push(SEq::new(
                    EqBody::Effect(Effect::Assert {
                        cond,
                        msg,
                        level: *level,
                    }),
                    origin.clone(),
                ));
            }
            Equation::Terminate { message, origin } => {
                let msg = self.expr(message, origin, true);
                out.push(SEq::new(
                    EqBody::Effect(Effect::Terminate { msg }),
                    origin.clone(),
                ));
            }
            Equation::Call { func, args, origin } => {
                let args = args.iter().map(|a| self.expr(a, origin, true)).collect();
                out.push(SEq::new(
                    EqBody::Effect(Effect::Call {
                        func: func.clone(),
                        args,
                    }),
                    origin.clone(),
                ));
            }
        }
    }

    pub(super) fn equal(
        &mut self,
        lhs: &flat::Expr,
        rhs: &flat::Expr,
        o: &Origin,
        out: &mut Vec<SEq>,
    ) {
        /// The variables `v` of targets that are all `pre(v)`.
        fn pre_targets(items: &[flat::Expr]) -> Option<Vec<String>> {
            items
                .iter()
                .map(|i| match i {
                    flat::Expr::Call { func, args } if func == "pre" => match args.as_slice() {
                        [flat::Expr::Var { name, subscripts }] if subscripts.is_empty() => {
                            Some(name.clone())
                        }
                        _ => None,
                    },
                    _ => None,
                })
                .collect()
        }
        use flat::Expr as E;
        match (lhs, rhs) {
            (E::Tuple(targets), E::Call { func, args }) => {
                let args: Vec<ExprId> = args.iter().map(|a| self.expr(a, o, false)).collect();
                if self.inlined_tuple(targets, func, &args, o, out) {
                    return;
                }
                let Some(outputs) = self.tuple_outputs(func, targets, o) else {
                    return;
                };
                out.push(SEq::new(
                    EqBody::Call {
                        outputs,
                        func: func.clone(),
                        args,
                    },
                    o.clone(),
                ));
            }
            (E::Array(items), E::Call { func, args }) if self.flat.functions.contains_key(func) => {
                let args: Vec<ExprId> = args.iter().map(|a| self.expr(a, o, false)).collect();
                if let Some(value) = self.inline_array_value(func, &args, o, out) {
                    let first = out.len();
                    self.equal_elements(items, value, o, out);
                    if is_equality_constraint(func) && is_connect_origin(&self.flat.sources, o.span)
                    {
                        for eq in &mut out[first..] {
                            eq.loop_residue = true;
                        }
                    }
                    return;
                }
                if let Some(vars) = pre_targets(items) {
                    // `pre(state) = f(...)` in an initial equation: the call determines the
                    // pre values (unknowns of the initialization problem of their own)
                    let outputs = vars.iter().map(|n| self.lookup(n, o)).collect();
                    let mut eq = SEq::new(
                        EqBody::Call {
                            outputs,
                            func: func.clone(),
                            args,
                        },
                        o.clone(),
                    );
                    eq.pre_outputs = true;
                    out.push(eq);
                    return;
                }
                // a matrix result (`{{a, b}, {c, d}} = f(...)`) fills its elements row by row
                let mut leaves = Vec::new();
                array_leaves(items, &mut leaves);
                let items = leaves;
                if !items.iter().all(|i| matches!(i, E::Var { .. })) {
                    return self.err(
                        o,
                        format!("cannot solve this equation for the arguments of `{func}`: its array result is equated to expressions that are not variables, which needs the function inlined, but the body of `{func}` cannot be inlined"),
                        "write the function body with assignments, if-statements, for loops over constant ranges and asserts (no while loops or external calls), or write the equations element by element without the function",
                    );
                }
                let outputs = items
                    .iter()
                    .map(|t| match t {
                        E::Var { name, .. } => self.lookup(name, o),
                        _ => None,
                    })
                    .collect();
                out.push(SEq::new(
                    EqBody::Call {
                        outputs,
                        func: func.clone(),
                        args,
                    },
                    o.clone(),
                ));
            }
            (E::Array(a), E::Array(b)) if a.len() == b.len() => {
                for (x, y) in a.iter().zip(b) {
                    self.equal(x, y, o, out);
                }
            }
            _ => {
                let l = self.expr(lhs, o, false);
                let r = self.expr(rhs, o, false);
                out.push(SEq::new(EqBody::Eq { lhs: l, rhs: r }, o.clone()));
            }
        }
    }

    /// `{x1, x2, ...} = value` for an array literal `value` of the same shape: one scalar
    /// equation per element. Residues such as `{0, 0} = f(a, b)` so become implicit equations
    /// in the variables of `a` and `b`.
    pub(super) fn equal_elements(
        &mut self,
        items: &[flat::Expr],
        value: ExprId,
        o: &Origin,
        out: &mut Vec<SEq>,
    ) {
        let values = crate::array_ops::items(&self.m.arena, value).unwrap_or_default();
        if values.len() != items.len() {
            return self.err(
                o,
                format!(
                    "the two sides of this equation have different sizes ({} and {})",
                    items.len(),
                    values.len()
                ),
                "make the array on the left as large as the function's output",
            );
        }
        for (x, v) in items.iter().zip(values) {
            match (x, crate::array_ops::is_array(&self.m.arena, v)) {
                (flat::Expr::Array(inner), true) => self.equal_elements(inner, v, o, out),
                (flat::Expr::Array(_), false) | (_, true) => {
                    return self.err(
                        o,
                        "the two sides of this equation have different numbers of dimensions"
                            .into(),
                        "make the array on the left match the shape of the function's output",
                    )
                }
                (x, false) => {
                    let l = self.expr(x, o, false);
                    out.push(SEq::new(EqBody::Eq { lhs: l, rhs: v }, o.clone()));
                }
            }
        }
    }
}
