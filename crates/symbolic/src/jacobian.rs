//! The symbolic Jacobian of the whole ODE, as a *tangent program*: forward-mode symbolic
//! differentiation of the simulation blocks.
//!
//! Every state `x_j` gets a seed slot `$seed(x_j)`, every continuous unknown `v` computed by
//! the blocks a tangent slot `$d(v)`. Each block is differentiated into blocks that compute
//! the tangents of its outputs from the tangents of its inputs:
//! - `v := e` gives `$d(v) := Σ ∂e/∂u · $d(u)` (the IR's `diff` with `$d(u)` as the leaf of
//!   `u`), `v` solved implicitly from `r(v, u) = 0` gives `$d(v) := -(∂r/∂u · $d(u)) / ∂r/∂v`;
//! - a linear system `A x = b` gives `A dx = db - dA · x` (same matrix);
//! - a torn nonlinear loop with a symbolic loop Jacobian `J` gives the linear system
//!   `J dz = -dr|dz=0` in the tangents `dz` of its tearing variables, between two runs of the
//!   differentiated inner assignments (the first with `dz = 0`, the second with the solution).
//!   Without a loop Jacobian the differentiated loop is left to Newton's method (it is
//!   linear, so one step solves it).
//!
//! Running the tangent program after the blocks, with the seeds set to a vector `s`, leaves
//! `J s` in the tangents of the state derivatives: with the columns of one colour of the
//! Jacobian pattern seeded together, a few runs give every entry of the Jacobian, exact up
//! to rounding (no difference quotients, so tiny states such as Robertson's keep accurate
//! Jacobians).
//!
//! Relations are frozen in continuous mode, so they are constants here (`if` differentiates
//! into `if` with the same condition); discrete variables and parameters have no tangent.
//! Blocks that cannot be differentiated (an algorithm or a multi-output call with
//! continuous outputs depending on the states, a function without a derivative) make the
//! whole tangent program unavailable; the runtime then uses finite differences, and
//! `moss translate` says why.

use crate::ir::{Arena, ExprId, Node, VarIx};
use crate::model::{EqBody, Model, SEq, SVar, VKind};
use crate::program::ValueType;
use crate::solve::WBlock;
use rustc_hash::FxHashMap as HashMap;

/// Upper bound on the size of the tangent expressions written out as trees, relative to the
/// size of the blocks they differentiate (plus a constant). Beyond it, numerical
/// differences are cheaper than the symbolic Jacobian.
const MAX_GROWTH: usize = 12;
const GROWTH_ALLOWANCE: usize = 20_000;

/// The tangent program in working form.
pub struct TangentProgram {
    /// Seed variable of each state, in the order of the states given.
    pub seeds: Vec<VarIx>,
    /// Tangent of each state derivative (`None`: the derivative does not depend on states).
    pub outputs: Vec<Option<VarIx>>,
    pub blocks: Vec<WBlock>,
    /// Every variable created here (seeds and tangents).
    pub created: Vec<VarIx>,
    /// Equations created here; `WBlock::Unit` of the blocks numbers them after the
    /// equations given to [`tangent_program`].
    pub eqs: Vec<SEq>,
}

struct Builder<'m> {
    m: &'m mut Model,
    /// Number of the equations the blocks refer to: the equations created here follow them.
    eqs_base: usize,
    /// Equations created for the tangent program (units of derivative calls).
    new_eqs: Vec<SEq>,
    /// Tangent variable of each variable that has one (states: their seed).
    tangent: HashMap<VarIx, VarIx>,
    memo: HashMap<ExprId, ExprId>,
    created: Vec<VarIx>,
}

/// Differentiate the simulation blocks `blocks` (over `eqs`) with respect to `states`.
/// `derivatives[i]` is the variable holding `der(states[i])`. `Err` says why no tangent
/// program exists.
pub fn tangent_program(
    m: &mut Model,
    blocks: &[WBlock],
    eqs: &[SEq],
    states: &[VarIx],
    derivatives: &[VarIx],
) -> Result<TangentProgram, String> {
    let mut b = Builder {
        m,
        eqs_base: eqs.len(),
        new_eqs: Vec::new(),
        tangent: HashMap::default(),
        memo: HashMap::default(),
        created: Vec::new(),
    };
    let seeds: Vec<VarIx> = states
        .iter()
        .map(|&s| {
            let seed = b.new_var(format!("$seed({})", b.m.var_name(s)));
            b.tangent.insert(s, seed);
            seed
        })
        .collect();
    let mut out = Vec::new();
    for block in blocks {
        b.block(block, eqs, &mut out)?;
    }
    let outputs = derivatives
        .iter()
        .map(|d| b.tangent.get(d).copied())
        .collect();
    let new_eqs = std::mem::take(&mut b.new_eqs);
    let eq_of = |i: u32| -> &SEq {
        let i = i as usize;
        eqs.get(i).unwrap_or_else(|| &new_eqs[i - eqs.len()])
    };
    check_growth(b.m, &eq_of, blocks, &out)?;
    Ok(TangentProgram {
        seeds,
        outputs,
        blocks: out,
        created: b.created,
        eqs: new_eqs,
    })
}

impl Builder<'_> {
    fn new_var(&mut self, name: String) -> VarIx {
        let mut v = SVar::new(name, VKind::Continuous, ValueType::Real);
        v.hidden = true;
        let ix = self.m.add_var(v);
        self.created.push(ix);
        ix
    }

    /// Does `v` get a tangent? Only continuous Real unknowns do.
    fn differentiable(&self, v: VarIx) -> bool {
        let sv = &self.m.vars[v as usize];
        sv.kind == VKind::Continuous && sv.ty == ValueType::Real
    }

    fn tangent_of(&mut self, v: VarIx) -> VarIx {
        if let Some(&t) = self.tangent.get(&v) {
            return t;
        }
        let t = self.new_var(format!("$d({})", self.m.var_name(v)));
        self.tangent.insert(v, t);
        t
    }

    /// Directional derivative of `e`: Σ ∂e/∂u · $d(u) over the variables with tangents.
    fn diff(&mut self, e: ExprId) -> Result<ExprId, String> {
        let tangent = &self.tangent;
        let mut leaf = |a: &mut Arena, u: VarIx| tangent.get(&u).map(|&t| a.var(t));
        let fder = self.m.arena.fder.clone();
        self.m
            .arena
            .diff(e, &mut leaf, &fder, &mut self.memo)
            .map_err(|e| self.m.arena.explain(&e))
    }

    /// Directional derivative of `e` with `skip` treated as constant (fresh memo, since the
    /// shared one assumes every tangent).
    fn diff_without(&mut self, e: ExprId, skip: VarIx) -> Result<ExprId, String> {
        let tangent = &self.tangent;
        let mut leaf = |a: &mut Arena, u: VarIx| {
            if u == skip {
                None
            } else {
                tangent.get(&u).map(|&t| a.var(t))
            }
        };
        let fder = self.m.arena.fder.clone();
        self.m
            .arena
            .diff(e, &mut leaf, &fder, &mut HashMap::default())
            .map_err(|e| self.m.arena.explain(&e))
    }

    fn is_zero(&self, e: ExprId) -> bool {
        self.m.arena.as_const(e) == Some(0.0)
    }

    fn block(&mut self, b: &WBlock, eqs: &[SEq], out: &mut Vec<WBlock>) -> Result<(), String> {
        match b {
            WBlock::Assign { var, expr } => self.assign(*var, *expr, out),
            WBlock::SolveScalar {
                var,
                residual,
                derivative,
            } => self.solve_scalar(*var, *residual, *derivative, out),
            WBlock::Linear { vars, matrix, rhs } => self.linear(vars, matrix, rhs, out),
            WBlock::Nonlinear {
                iteration_vars,
                inner,
                residuals,
                jacobian,
                ..
            } => self.nonlinear(
                iteration_vars,
                inner,
                residuals,
                jacobian.as_deref(),
                eqs,
                out,
            ),
            WBlock::Unit(e) => self.unit(&eqs[*e as usize], out),
        }
    }

    fn assign(&mut self, var: VarIx, expr: ExprId, out: &mut Vec<WBlock>) -> Result<(), String> {
        if !self.differentiable(var) {
            return Ok(());
        }
        let d = self.diff(expr)?;
        if self.is_zero(d) {
            return Ok(());
        }
        let t = self.tangent_of(var);
        out.push(WBlock::Assign { var: t, expr: d });
        Ok(())
    }

    /// `r(v, u) = 0`: `dv = -(∂r/∂u du) / (∂r/∂v)`.
    fn solve_scalar(
        &mut self,
        var: VarIx,
        residual: ExprId,
        derivative: Option<ExprId>,
        out: &mut Vec<WBlock>,
    ) -> Result<(), String> {
        if !self.differentiable(var) {
            return Ok(());
        }
        let dr = self.diff_without(residual, var)?;
        if self.is_zero(dr) {
            return Ok(());
        }
        let drdv = match derivative {
            Some(d) => d,
            None => {
                let mut memo = HashMap::default();
                self.m
                    .arena
                    .diff_var(residual, var, &mut memo)
                    .map_err(|e| self.m.arena.explain(&e))?
            }
        };
        let q = self.m.arena.div(dr, drdv);
        let expr = self.m.arena.neg(q);
        let t = self.tangent_of(var);
        out.push(WBlock::Assign { var: t, expr });
        Ok(())
    }

    /// `A x = b`: `A dx = db - dA x`.
    fn linear(
        &mut self,
        vars: &[VarIx],
        matrix: &[(u32, u32, ExprId)],
        rhs: &[ExprId],
        out: &mut Vec<WBlock>,
    ) -> Result<(), String> {
        let mut new_rhs = Vec::with_capacity(rhs.len());
        for &b in rhs {
            new_rhs.push(self.diff(b)?);
        }
        for &(r, c, a) in matrix {
            let da = self.diff(a)?;
            if self.is_zero(da) {
                continue;
            }
            let x = self.m.arena.var(vars[c as usize]);
            let t = self.m.arena.mul(da, x);
            let slot = &mut new_rhs[r as usize];
            *slot = self.m.arena.sub(*slot, t);
        }
        if new_rhs.iter().all(|&e| self.is_zero(e)) {
            return Ok(());
        }
        let tangents = vars.iter().map(|&v| self.tangent_of(v)).collect();
        out.push(WBlock::Linear {
            vars: tangents,
            matrix: matrix.to_vec(),
            rhs: new_rhs,
        });
        Ok(())
    }

    fn nonlinear(
        &mut self,
        iteration_vars: &[VarIx],
        inner: &[WBlock],
        residuals: &[ExprId],
        jacobian: Option<&[(u32, u32, ExprId)]>,
        eqs: &[SEq],
        out: &mut Vec<WBlock>,
    ) -> Result<(), String> {
        if let Some(&z) = iteration_vars.iter().find(|&&z| !self.differentiable(z)) {
            let name = self.m.var_name(z);
            return Err(format!(
                "the loop iterating on the discrete variable `{name}`"
            ));
        }
        let dz: Vec<VarIx> = iteration_vars.iter().map(|&z| self.tangent_of(z)).collect();
        let mut inner_d = Vec::new();
        for b in inner {
            self.block(b, eqs, &mut inner_d)?;
        }
        let mut dr = Vec::with_capacity(residuals.len());
        for &r in residuals {
            dr.push(self.diff(r)?);
        }
        // the tangent loop starts from zero, not from the previous seed's solution: a
        // torn solve without a symbolic Jacobian (one step along a difference Jacobian)
        // leaves roundoff of the size of its start, a nonzero where the column has none
        for &t in &dz {
            let zero = self.m.arena.zero();
            out.push(WBlock::Assign { var: t, expr: zero });
        }
        match jacobian {
            Some(j) => {
                out.extend(inner_d.iter().cloned());
                let rhs = dr.iter().map(|&r| self.m.arena.neg(r)).collect();
                out.push(WBlock::Linear {
                    vars: dz,
                    matrix: j.to_vec(),
                    rhs,
                });
                out.extend(inner_d);
            }
            None => out.push(WBlock::Nonlinear {
                iteration_vars: dz,
                inner: inner_d,
                residuals: dr,
                jacobian: None,
                linear: true,
                fallback: None,
            }),
        }
        Ok(())
    }

    /// Units with fixed causality: only those with continuous outputs that depend on the
    /// states matter (when-equations and effects do nothing in continuous mode).
    fn unit(&mut self, eq: &SEq, out: &mut Vec<WBlock>) -> Result<(), String> {
        if let EqBody::Call {
            outputs,
            func,
            args,
        } = &eq.body
        {
            if self.m.arena.fder.contains_key(func) {
                return self.call_unit(outputs, func, args, out);
            }
        }
        if let EqBody::Algorithm { index, .. } = &eq.body {
            let name = crate::algorithm_functions::function_name(*index);
            if let Some(unit) = self.algorithm_as_call(&name) {
                let (outputs, args) = unit;
                return self.call_unit(&outputs, &name, &args, out);
            }
        }
        let (outputs, inputs, what): (Vec<VarIx>, Vec<ExprId>, String) = match &eq.body {
            EqBody::Call {
                outputs,
                func,
                args,
            } => (
                outputs.iter().flatten().copied().collect(),
                args.clone(),
                format!("the call of `{func}` with several outputs"),
            ),
            EqBody::Algorithm {
                index,
                outputs,
                inputs,
            } => {
                let reads = inputs.iter().map(|&v| self.m.arena.var(v)).collect();
                let name = crate::algorithm_functions::function_name(*index);
                let why = match self.m.arena.fder_failures.get(&name) {
                    Some(why) => format!("an algorithm section ({why})"),
                    None => "an algorithm section".to_string(),
                };
                (outputs.clone(), reads, why)
            }
            EqBody::Eq { .. } | EqBody::When(_) | EqBody::Effect(_) => return Ok(()),
        };
        let continuous_out = outputs.iter().any(|&v| self.differentiable(v));
        if !continuous_out {
            return Ok(());
        }
        let tangent = &self.tangent;
        let depends = inputs.iter().any(|&e| {
            self.m.arena.any_node(
                e,
                &mut |n| matches!(n, Node::Var(v) if tangent.contains_key(v)),
            )
        });
        if depends {
            let at = match eq.origin.instance.as_ref() {
                "" => String::new(),
                i => format!(" in `{i}`"),
            };
            return Err(format!(
                "{what}{at} computes continuous variables from the states"
            ));
        }
        Ok(())
    }
}

impl Builder<'_> {
    /// An algorithm section as the call of its function (see [`crate::algorithm_functions`])
    /// that has a derivative: the unit's outputs and arguments.
    fn algorithm_as_call(&mut self, name: &str) -> Option<(Vec<Option<VarIx>>, Vec<ExprId>)> {
        if !self.m.arena.fder.contains_key(name) {
            return None;
        }
        let f = self.m.arena.generated.get(name)?.clone();
        let (inputs, outputs) = crate::algorithm_functions::signature(self.m, &f)?;
        let args = inputs.iter().map(|&v| self.m.arena.var(v)).collect();
        Some((outputs.into_iter().map(Some).collect(), args))
    }

    /// `(v_0, v_1, ...) = f(args)` with a derivative of `f`: each tangent `$d(v_i)` is output
    /// `i` of the derivative call (the IR maps it to the right output of the derivative
    /// function). When several outputs have tangents, they come from one unit
    /// `($d(v_0), $d(v_1), ...) = f_der(args, dargs)` (a new equation of the tangent
    /// program): one call for all of them, where per-output assignments would each write
    /// out, and run, the whole derivative call (a Spice3 transistor's device function has
    /// a dozen outputs and a hundred arguments).
    fn call_unit(
        &mut self,
        outputs: &[Option<VarIx>],
        func: &str,
        args: &[ExprId],
        out: &mut Vec<WBlock>,
    ) -> Result<(), String> {
        let call = self.m.arena.intern(Node::Call(
            std::sync::Arc::from(func),
            args.to_vec().into_boxed_slice(),
        ));
        let declared = self.m.arena.fder_outputs.get(func).cloned();
        if let Some(declared) = declared.filter(|d| d.len() != outputs.len()) {
            return self.array_output_call_unit(outputs, func, call, &declared, out);
        }
        let mut tangents = Vec::new();
        for (i, v) in outputs.iter().enumerate() {
            let Some(v) = *v else { continue };
            if !self.differentiable(v) {
                continue;
            }
            let value = self.m.arena.intern(Node::CallOutput(call, i as u32));
            let d = self.diff(value)?;
            if !self.is_zero(d) {
                tangents.push((v, d));
            }
        }
        if tangents.len() > 1 {
            if let Some(unit) = self.shared_call_unit(&tangents) {
                out.push(unit);
                return Ok(());
            }
        }
        for (v, d) in tangents {
            let t = self.tangent_of(v);
            out.push(WBlock::Assign { var: t, expr: d });
        }
        Ok(())
    }

    /// `(v_0, ..., v_n) = f(args)` where `f` has array outputs, so that the unit's
    /// outputs are their elements (`{angles[1], angles[2], angles[3]} =
    /// axesRotationsAngles(R, ...)`), not one per output as a `CallOutput` selects them:
    /// the derivative call's outputs, the derivatives of `f`'s Real outputs, are then laid
    /// out element by element the same way when every output of `f` is Real, and one unit
    /// `($d(v_0), ..., $d(v_n)) = f_der(args, dargs)` computes the tangents.
    fn array_output_call_unit(
        &mut self,
        outputs: &[Option<VarIx>],
        func: &str,
        call: ExprId,
        declared: &[Option<u32>],
        out: &mut Vec<WBlock>,
    ) -> Result<(), String> {
        if !outputs.iter().flatten().any(|&v| self.differentiable(v)) {
            return Ok(());
        }
        if declared.iter().any(Option::is_none) {
            return Err(format!(
                "the call of `{func}` has array outputs beside outputs that are not Real"
            ));
        }
        let d = self.diff(call)?;
        if self.is_zero(d) {
            return Ok(());
        }
        let Node::Call(fd, dargs) = self.m.arena.node(d).clone() else {
            return Err(format!(
                "the derivative of the call of `{func}` is not a call"
            ));
        };
        let mut unit_outputs = Vec::with_capacity(outputs.len());
        for &o in outputs {
            unit_outputs.push(match o {
                Some(v) if self.differentiable(v) => Some(self.tangent_of(v)),
                _ => None,
            });
        }
        out.push(self.derivative_unit(unit_outputs, &fd, &dargs));
        Ok(())
    }

    /// `(outputs) = fd(dargs)` as a new equation of the tangent program, and its block.
    fn derivative_unit(
        &mut self,
        outputs: Vec<Option<VarIx>>,
        fd: &str,
        dargs: &[ExprId],
    ) -> WBlock {
        let eq = SEq::new(
            EqBody::Call {
                outputs,
                func: fd.to_string(),
                args: dargs.to_vec(),
            },
            moss_frontend::flat::Origin::default(),
        );
        let index = (self.eqs_base + self.new_eqs.len()) as u32;
        self.new_eqs.push(eq);
        WBlock::Unit(index)
    }

    /// One unit computing every tangent of `tangents` when each is an output of the same
    /// derivative call; `None` otherwise.
    fn shared_call_unit(&mut self, tangents: &[(VarIx, ExprId)]) -> Option<WBlock> {
        let mut shared: Option<ExprId> = None;
        let mut by_output: Vec<(usize, VarIx)> = Vec::with_capacity(tangents.len());
        for &(v, d) in tangents {
            let Node::CallOutput(c, k) = *self.m.arena.node(d) else {
                return None;
            };
            if *shared.get_or_insert(c) != c {
                return None;
            }
            by_output.push((k as usize, v));
        }
        let Node::Call(fd, dargs) = self.m.arena.node(shared?).clone() else {
            return None;
        };
        let n = by_output.iter().map(|&(k, _)| k + 1).max()?;
        let mut unit_outputs = vec![None; n];
        for (k, v) in by_output {
            if unit_outputs[k].is_some() {
                return None;
            }
            unit_outputs[k] = Some(self.tangent_of(v));
        }
        Some(self.derivative_unit(unit_outputs, &fd, &dargs))
    }
}

/// The tangent blocks must stay a small multiple of the blocks they differentiate when
/// written out as trees.
fn check_growth<'e>(
    m: &Model,
    eq_of: &dyn Fn(u32) -> &'e SEq,
    blocks: &[WBlock],
    tangent: &[WBlock],
) -> Result<(), String> {
    let original = blocks_tree_size(m, eq_of, blocks, usize::MAX);
    let limit = original
        .saturating_mul(MAX_GROWTH)
        .saturating_add(GROWTH_ALLOWANCE);
    let size = blocks_tree_size(m, eq_of, tangent, limit);
    if size >= limit {
        return Err(format!(
            "the differentiated blocks would be too large ({} nodes written out, against {} for the blocks)",
            size, original
        ));
    }
    Ok(())
}

/// Nodes of the blocks' expressions written out as trees (the arguments of a unit's call
/// included), counted up to `cap`.
fn blocks_tree_size<'e>(
    m: &Model,
    eq_of: &dyn Fn(u32) -> &'e SEq,
    blocks: &[WBlock],
    cap: usize,
) -> usize {
    let mut memo = HashMap::default();
    let mut total = 0usize;
    let mut add = |e: ExprId, total: &mut usize| {
        *total = total.saturating_add(m.arena.tree_size(e, cap, &mut memo));
    };
    let mut stack: Vec<&WBlock> = blocks.iter().collect();
    while let Some(b) = stack.pop() {
        match b {
            WBlock::Assign { expr, .. } => add(*expr, &mut total),
            WBlock::SolveScalar { residual, .. } => add(*residual, &mut total),
            WBlock::Linear { matrix, rhs, .. } => {
                matrix.iter().for_each(|&(_, _, e)| add(e, &mut total));
                rhs.iter().for_each(|&e| add(e, &mut total));
            }
            WBlock::Nonlinear {
                inner, residuals, ..
            } => {
                residuals.iter().for_each(|&e| add(e, &mut total));
                stack.extend(inner.iter());
            }
            WBlock::Unit(e) => {
                if let EqBody::Call { args, .. } = &eq_of(*e).body {
                    total = total.saturating_add(1);
                    args.iter().for_each(|&a| add(a, &mut total));
                }
            }
        }
        if total >= cap {
            return total;
        }
    }
    total
}
