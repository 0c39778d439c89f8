//! Parameters whose value makes a solved equation singular.
//!
//! Structural analysis treats every parameter as a generic, nonzero number. When the value a
//! parameter actually has (its binding, or its start value when it has none) makes the
//! coefficient by which an equation is solved for its variable zero — `f_c + d*v_rel = 0`
//! solved for `v_rel` with `d = 0` — the program would divide by zero at every step. Such
//! parameters are evaluated: the translation is redone with them as constants, so matching,
//! index reduction and state selection see the structure their values give (with `d = 0`
//! the spring force alone must vanish, a constraint on the position). A warning names them,
//! since they can then no longer be changed before a run.

use crate::ir::{ExprId, Node, VarIx};
use crate::model::{Model, VKind};
use std::collections::HashMap;

/// An equation solved for `var` by dividing by `coefficient`, a parameter expression whose
/// value is zero.
#[derive(Clone, Debug)]
pub struct ZeroPivot {
    pub var: VarIx,
    pub coefficient: ExprId,
    pub equation: String,
}

/// A parameter to evaluate at translation time, with the reason shown in the warning.
#[derive(Clone, Debug, PartialEq)]
pub struct EvaluatedParameter {
    pub name: String,
    pub why: String,
}

/// The value of a parameter expression from bindings and start values, when it is made of
/// arithmetic only.
pub fn parameter_value(m: &Model, e: ExprId) -> Option<f64> {
    value_at_depth(m, e, 0)
}

fn value_at_depth(m: &Model, e: ExprId, depth: u32) -> Option<f64> {
    // bindings may refer to each other in a (faulty) cycle
    if depth > 64 {
        return None;
    }
    let a = &m.arena;
    if let Some(x) = a.as_const(e) {
        return Some(x);
    }
    let val = |x: ExprId| value_at_depth(m, x, depth + 1);
    Some(match a.node(e) {
        Node::Var(v) => {
            let sv = &m.vars[*v as usize];
            if !matches!(sv.kind, VKind::Parameter | VKind::Constant) || sv.fixed == Some(false) {
                return None;
            }
            val(sv.binding.or(sv.start)?)?
        }
        Node::Neg(x) => -val(*x)?,
        Node::Add(x, y) => val(*x)? + val(*y)?,
        Node::Sub(x, y) => val(*x)? - val(*y)?,
        Node::Mul(x, y) => val(*x)? * val(*y)?,
        Node::Div(x, y) => val(*x)? / val(*y)?,
        Node::Pow(x, y) => val(*x)?.powf(val(*y)?),
        Node::If(c, x, y) => {
            if val(*c)? != 0.0 {
                val(*x)?
            } else {
                val(*y)?
            }
        }
        _ => return None,
    })
}

/// Solving `lhs = rhs` for `v`: its coefficient in `v` when that is a parameter expression
/// that is zero at the parameter values.
pub fn zero_pivot(m: &mut Model, lhs: ExprId, rhs: ExprId, v: VarIx) -> Option<ExprId> {
    let a = &mut m.arena;
    if *a.node(lhs) == Node::Var(v) || *a.node(rhs) == Node::Var(v) {
        return None;
    }
    let r = a.sub(lhs, rhs);
    let d = a.diff_var(r, v, &mut HashMap::new()).ok()?;
    // literal coefficients are the structure itself (a literal zero is not an incidence)
    if a.as_const(d).is_some() || !m.is_parameter_expr(d) {
        return None;
    }
    (parameter_value(m, d) == Some(0.0)).then_some(d)
}

/// The parameters to evaluate so that the recorded zero pivots become structural zeros: those
/// of each coefficient that are zero, or all of its parameters when only their combination
/// vanishes.
pub fn parameters_to_evaluate(m: &mut Model) -> Vec<EvaluatedParameter> {
    let mut out: Vec<EvaluatedParameter> = Vec::new();
    for p in m.zero_pivots.clone() {
        let mut vs = Vec::new();
        m.arena.vars_of(p.coefficient, false, &mut vs);
        vs.retain(|&x| matches!(m.vars[x as usize].kind, VKind::Parameter | VKind::Constant));
        let zeros: Vec<VarIx> = vs
            .iter()
            .copied()
            .filter(|&x| {
                let e = m.arena.var(x);
                parameter_value(m, e) == Some(0.0)
            })
            .collect();
        let chosen = if zeros.is_empty() { vs } else { zeros };
        for x in chosen {
            let name = m.vars[x as usize].name.clone();
            if out.iter().any(|e| e.name == name) {
                continue;
            }
            out.push(EvaluatedParameter {
                name,
                why: format!(
                    "`{}` is solved for `{}` by dividing by `{}`, which is zero",
                    p.equation,
                    m.var_name(p.var),
                    m.text(p.coefficient)
                ),
            });
        }
    }
    out
}

/// Turn the named parameters into constants with their current values, in every equation
/// and attribute, and say so.
pub fn evaluate_parameters(m: &mut Model, which: &[EvaluatedParameter]) {
    let mut values = HashMap::new();
    for p in which {
        let Some(&v) = m.by_name.get(&p.name) else {
            continue;
        };
        let e = m.arena.var(v);
        let Some(x) = parameter_value(m, e) else {
            continue;
        };
        let c = m.arena.num(x);
        let sv = &mut m.vars[v as usize];
        sv.kind = VKind::Constant;
        sv.binding = Some(c);
        values.insert(v, c);
        m.warnings.push(format!(
            "parameter `{}` = {} is evaluated (it can no longer be changed before a run): {}; the structure is analysed for this value",
            p.name,
            crate::ir::fmt_num(x),
            p.why
        ));
    }
    m.substitute_vars(&values);
}
