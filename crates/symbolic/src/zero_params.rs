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
//!
//! Parameters declared with `annotation(Evaluate=true)` are evaluated the same way, from the
//! start and without a warning: the model asks for it (spec 18.3), typically so that a zero
//! capacitance removes `C*der(v)` and `v` is no longer a state.

use crate::ir::{ExprId, Node, VarIx};
use crate::model::{Model, VKind};
use rustc_hash::FxHashMap as HashMap;

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
    /// Asked for by the model (`annotation(Evaluate=true)`): no warning.
    pub requested: bool,
}

/// The value of a parameter expression from bindings and start values, when it is made of
/// arithmetic, relations, logic and the elementary functions. A value that is zero up to the
/// rounding of its own computation is exactly zero: `cos(pi/2)` of a winding's orientation is
/// 6.1e-17 in floating point, and dividing by it (a pivot that is really zero) turns a
/// machine's flux equations into noise.
pub fn parameter_value(m: &Model, e: ExprId) -> Option<f64> {
    value_at_depth(m, e, 0, false).map(Rounded::snapped)
}

/// The value of `e` at the start values of its variables (0 where none is given), with the
/// parameters at their bindings and the common elementary functions: the point at which
/// initialization begins (used for the first choice of a dynamic state set).
pub fn start_point_value(m: &Model, e: ExprId) -> Option<f64> {
    value_at_depth(m, e, 0, true)
        .map(Rounded::snapped)
        .filter(|x| x.is_finite())
}

/// A computed value with the magnitude its rounding error is proportional to: the sum of the
/// magnitudes of the terms of a sum, the product of those of a product, and for `sin`/`cos`
/// the magnitude of the argument (whose own rounding moves the result by as much).
#[derive(Clone, Copy, Debug)]
struct Rounded {
    value: f64,
    scale: f64,
}

impl Rounded {
    fn exact(value: f64) -> Self {
        Rounded {
            value,
            scale: value.abs(),
        }
    }

    /// Zero when the value is within a few units of rounding of its scale.
    fn snapped(self) -> f64 {
        if self.value != 0.0 && self.value.abs() <= 8.0 * f64::EPSILON * self.scale {
            0.0
        } else {
            self.value
        }
    }
}

/// With `at_start`, variables (and their `pre`) take their start values; without, only
/// parameters and constants have values.
fn value_at_depth(m: &Model, e: ExprId, depth: u32, at_start: bool) -> Option<Rounded> {
    // bindings may refer to each other in a (faulty) cycle
    if depth > 64 {
        return None;
    }
    let a = &m.arena;
    if let Some(x) = a.as_const(e) {
        return Some(Rounded::exact(x));
    }
    let val = |x: ExprId| value_at_depth(m, x, depth + 1, at_start);
    let num = |x: ExprId| val(x).map(|r| r.value);
    let logic = |b: bool| Rounded::exact(f64::from(u8::from(b)));
    Some(match a.node(e) {
        Node::Var(v) | Node::Pre(v) if at_start => {
            let sv = &m.vars[*v as usize];
            match sv.kind {
                VKind::Parameter | VKind::Constant => val(sv.binding.or(sv.start)?)?,
                _ => match sv.start {
                    Some(s) => val(s)?,
                    None => Rounded::exact(0.0),
                },
            }
        }
        Node::Var(v) => {
            let sv = &m.vars[*v as usize];
            if !matches!(sv.kind, VKind::Parameter | VKind::Constant) || sv.fixed == Some(false) {
                return None;
            }
            val(sv.binding.or(sv.start)?)?
        }
        Node::Neg(x) => {
            let r = val(*x)?;
            Rounded {
                value: -r.value,
                ..r
            }
        }
        Node::Add(x, y) | Node::Sub(x, y) => {
            let (p, q) = (val(*x)?, val(*y)?);
            let value = if matches!(a.node(e), Node::Add(..)) {
                p.value + q.value
            } else {
                p.value - q.value
            };
            Rounded {
                value,
                scale: p.scale + q.scale,
            }
        }
        Node::Mul(x, y) => {
            let (p, q) = (val(*x)?, val(*y)?);
            Rounded {
                value: p.value * q.value,
                scale: p.scale * q.scale,
            }
        }
        Node::Div(x, y) => {
            let (p, q) = (val(*x)?, val(*y)?);
            Rounded {
                value: p.value / q.value,
                scale: p.scale / q.value.abs(),
            }
        }
        Node::Pow(x, y) => Rounded::exact(num(*x)?.powf(num(*y)?)),
        // conditions on parameters (`if RD > -1e40 then RD else 0`, the MSL's "is given"
        // tests): true is 1, false is 0
        Node::Rel { op, lhs, rhs, .. } => {
            let ord = num(*lhs)?.partial_cmp(&num(*rhs)?)?;
            logic(op.holds(ord))
        }
        Node::Not(x) => logic(num(*x)? == 0.0),
        Node::And(x, y) => logic(num(*x)? != 0.0 && num(*y)? != 0.0),
        Node::Or(x, y) => logic(num(*x)? != 0.0 || num(*y)? != 0.0),
        Node::If(c, x, y) => {
            if num(*c)? != 0.0 {
                val(*x)?
            } else {
                val(*y)?
            }
        }
        Node::Call(f, args) if args.len() == 1 => {
            let r = val(args[0])?;
            let x = r.value;
            let value = match f.as_ref() {
                "sin" => x.sin(),
                "cos" => x.cos(),
                "tan" => x.tan(),
                "asin" => x.asin(),
                "acos" => x.acos(),
                "atan" => x.atan(),
                "exp" => x.exp(),
                "log" => x.ln(),
                "sqrt" => x.sqrt(),
                "abs" => x.abs(),
                "sinh" => x.sinh(),
                "cosh" => x.cosh(),
                "tanh" => x.tanh(),
                _ => return None,
            };
            // the periodic functions are as uncertain as their argument (`cos(pi/2)`)
            let scale = match f.as_ref() {
                "sin" | "cos" | "tan" => value.abs().max(r.scale.min(1.0e300)),
                _ => value.abs(),
            };
            Rounded { value, scale }
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
    let d = a.diff_var(r, v, &mut HashMap::default()).ok()?;
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
                requested: false,
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
    let mut values = HashMap::default();
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
        m.evaluated.push(crate::program::EvaluatedParam {
            name: p.name.clone(),
            value: x,
            ty: m.vars[v as usize].ty,
            why: p.why.clone(),
        });
        if !p.requested {
            m.warnings.push(format!(
                "parameter `{}` = {} is evaluated (it can no longer be changed before a run): {}; the structure is analysed for this value",
                p.name,
                crate::ir::fmt_num(x),
                p.why
            ));
        }
    }
    m.substitute_vars(&values);
}

/// The parameters the model asks to evaluate: those declared with `annotation(Evaluate=true)`,
/// then, repeatedly, those whose binding refers to evaluated parameters and otherwise only to
/// constants.
///
/// The second group matters because the annotation sits on one top-level parameter that is
/// passed down by modifiers (`C1(final C=CapVal)`): the capacitor's own `C` carries no
/// annotation. The flat model does not say whether such a binding is `final`, so every
/// parameter bound that way is evaluated; the specification allows a tool to evaluate any
/// parameter whose binding depends only on evaluated values, and nothing is lost for the
/// user, because a parameter bound to other parameters cannot be set before a run anyway
/// (it is computed from them). Parameters whose value is not plain arithmetic of known values
/// stay parameters (see [`parameter_value`]).
pub fn requested_parameters(
    m: &mut Model,
    flat: &moss_frontend::FlatModel,
) -> Vec<EvaluatedParameter> {
    let mut evaluated = vec![false; m.vars.len()];
    let mut out = Vec::new();
    for fv in flat.variables.iter().filter(|v| v.evaluate) {
        let Some(&v) = m.by_name.get(&fv.name) else {
            continue;
        };
        if is_evaluable(m, v) {
            evaluated[v as usize] = true;
            out.push(EvaluatedParameter {
                name: fv.name.clone(),
                why: "declared with annotation(Evaluate=true)".into(),
                requested: true,
            });
        }
    }
    if out.is_empty() {
        return out;
    }
    loop {
        let mut added = false;
        for v in 0..m.vars.len() as VarIx {
            if evaluated[v as usize] || m.vars[v as usize].kind != VKind::Parameter {
                continue;
            }
            // the cheap structural test first: values are only computed for candidates
            let Some(source) = bound_to_evaluated(m, v, &evaluated) else {
                continue;
            };
            if is_evaluable(m, v) {
                evaluated[v as usize] = true;
                added = true;
                out.push(EvaluatedParameter {
                    name: m.vars[v as usize].name.clone(),
                    why: format!("bound to the evaluated parameter `{source}`"),
                    requested: true,
                });
            }
        }
        if !added {
            return out;
        }
    }
}

/// A parameter (not `fixed=false`) whose value is known at translation time.
fn is_evaluable(m: &Model, v: VarIx) -> bool {
    let sv = &m.vars[v as usize];
    if sv.kind != VKind::Parameter || sv.fixed == Some(false) {
        return false;
    }
    sv.binding
        .or(sv.start)
        .is_some_and(|e| parameter_value(m, e).is_some())
}

/// When the binding of `v` refers to at least one evaluated parameter and otherwise only to
/// constants: the name of an evaluated parameter it refers to.
fn bound_to_evaluated(m: &mut Model, v: VarIx, evaluated: &[bool]) -> Option<String> {
    let b = m.vars[v as usize].binding?;
    let mut refs = Vec::new();
    m.arena.vars_of(b, false, &mut refs);
    let known = |x: &VarIx| evaluated[*x as usize] || m.vars[*x as usize].kind == VKind::Constant;
    if !refs.iter().all(known) {
        return None;
    }
    let source = refs.iter().find(|&&x| evaluated[x as usize])?;
    Some(m.vars[*source as usize].name.clone())
}

/// Forget `der(x)` where no equation mentions it any more: evaluated parameters and the
/// constants they imply turn terms such as `C*der(v)` into zero, and `v` is then an algebraic
/// variable rather than a state (otherwise index reduction would differentiate an equation
/// to compute a derivative nothing needs). Returns how many derivatives were forgotten.
pub fn forget_vanished_derivatives(m: &mut Model) -> usize {
    let used = variables_in_equations(m);
    let mut forgotten = 0;
    for v in 0..m.vars.len() {
        let Some(d) = m.vars[v].der else {
            continue;
        };
        let dv = &m.vars[d as usize];
        if used[d as usize] || dv.der.is_some() || dv.protected_from_alias || dv.eliminated {
            continue;
        }
        m.vars[v].der = None;
        let dv = &mut m.vars[d as usize];
        dv.der_of = None;
        dv.eliminated = true;
        forgotten += 1;
    }
    forgotten
}

/// Which variables occur in some equation or initial equation (also as an output of a unit
/// or a `reinit` target).
fn variables_in_equations(m: &mut Model) -> Vec<bool> {
    let mut used = vec![false; m.vars.len()];
    let mut vs = Vec::new();
    let bodies: Vec<crate::model::EqBody> = m
        .eqs
        .iter()
        .chain(m.init_eqs.iter())
        .map(|e| e.body.clone())
        .collect();
    for mut body in bodies {
        let mut exprs = Vec::new();
        crate::model::map_exprs(&mut body, &mut |e| {
            exprs.push(e);
            e
        });
        for e in exprs {
            // cleared each time: `vars_of` sorts what it is given, and a vector growing
            // over all equations made this pass quadratic in the model size
            vs.clear();
            m.arena.vars_of(e, false, &mut vs);
            for &x in &vs {
                used[x as usize] = true;
            }
        }
        let mut mark = |x: VarIx| used[x as usize] = true;
        match &body {
            crate::model::EqBody::Call { outputs, .. } => {
                outputs.iter().flatten().for_each(|&x| mark(x))
            }
            crate::model::EqBody::Algorithm {
                outputs, inputs, ..
            } => outputs.iter().chain(inputs).for_each(|&x| mark(x)),
            crate::model::EqBody::When(branches) => {
                for it in branches.iter().flat_map(|b| &b.items) {
                    match it {
                        crate::model::WhenItem::Assign { var, .. }
                        | crate::model::WhenItem::Reinit { var, .. } => mark(*var),
                        crate::model::WhenItem::CallOutputs { outputs, .. } => {
                            outputs.iter().flatten().for_each(|&x| mark(x))
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    used
}
