//! Parameter blocks: parameters and constants whose bindings are not literals are computed
//! from other parameters, in dependency order (Tarjan; a cycle is an error). Parameters with
//! literal bindings are not computed at all: their value is `ProgVar::start`, so `-p NAME=V`
//! overrides work by setting the start value before running these blocks.

use crate::ir::VarIx;
use crate::model::{Model, VKind};
use crate::solve::WBlock;
use crate::sort;
use moss_syntax::Diagnostic;

/// Is this variable a parameter (or constant) computed from a non-literal binding?
pub fn is_dependent(m: &Model, v: VarIx) -> bool {
    let sv = &m.vars[v as usize];
    matches!(sv.kind, VKind::Parameter | VKind::Constant)
        && !sv.eliminated
        && sv.fixed != Some(false)
        && sv.binding.is_some_and(|b| m.arena.as_const(b).is_none())
}

/// Parameters whose bindings depend (transitively) on `fixed=false` parameters can only be
/// computed after initialization has found those: their bindings become initial equations
/// and they become unknowns of the initialization problem (like `fixed=false` parameters).
pub fn move_free_dependents_to_init(m: &mut Model) {
    loop {
        let mut moved = false;
        for v in 0..m.vars.len() {
            if !is_dependent(m, v as VarIx) {
                continue;
            }
            let Some(b) = m.vars[v].binding else { continue };
            let mut vs = Vec::new();
            m.arena.vars_of(b, false, &mut vs);
            if !vs.iter().any(|&x| m.vars[x as usize].is_free_parameter()) {
                continue;
            }
            let lhs = m.arena.var(v as VarIx);
            let origin = m.vars[v].origin.clone();
            m.init_eqs.push(crate::model::SEq::new(
                crate::model::EqBody::Eq { lhs, rhs: b },
                origin,
            ));
            m.vars[v].kind = VKind::Parameter;
            m.vars[v].fixed = Some(false);
            moved = true;
        }
        if !moved {
            break;
        }
    }
}

pub fn parameter_blocks(m: &mut Model) -> Result<Vec<WBlock>, Vec<Diagnostic>> {
    let dependent: Vec<VarIx> = (0..m.vars.len() as VarIx)
        .filter(|&v| is_dependent(m, v))
        .collect();
    let mut node_of = vec![u32::MAX; m.vars.len()];
    for (i, &v) in dependent.iter().enumerate() {
        node_of[v as usize] = i as u32;
    }
    let mut deps = Vec::with_capacity(dependent.len());
    for &v in &dependent {
        let mut vs = Vec::new();
        if let Some(b) = m.vars[v as usize].binding {
            m.arena.vars_of(b, false, &mut vs);
        }
        let mut d: Vec<u32> = vs
            .into_iter()
            .map(|x| node_of[x as usize])
            .filter(|&n| n != u32::MAX)
            .collect();
        d.sort_unstable();
        d.dedup();
        deps.push(d);
    }
    let roots: Vec<u32> = (0..dependent.len() as u32).collect();
    let mut out = Vec::new();
    for comp in sort::tarjan(&deps, &roots) {
        let v = dependent[comp[0] as usize];
        let self_loop = deps[comp[0] as usize].contains(&comp[0]);
        if comp.len() > 1 || self_loop {
            let names: Vec<String> = comp
                .iter()
                .map(|&c| m.vars[dependent[c as usize] as usize].name.clone())
                .collect();
            return Err(vec![Diagnostic::error(
                m.vars[v as usize].origin.span,
                format!(
                    "parameter bindings depend on each other in a cycle: {}",
                    names.join(", ")
                ),
            )
            .with_help(
                "give one of these parameters a value that does not depend on the others",
            )]);
        }
        if let Some(expr) = m.vars[v as usize].binding {
            out.push(WBlock::Assign { var: v, expr });
        }
    }
    Ok(out)
}
