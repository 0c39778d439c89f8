//! Passes over the converted model's call units (`(o_0, o_1, ...) = f(args)`), run by
//! [`super::convert`] after all equations are converted: grouping `CallOutput` equations of
//! one call into a unit, and splitting units with differentiated outputs back into one
//! equation per scalar output so index reduction can differentiate them.

use crate::ir::{ExprId, Node, VarIx};
use crate::model::{EqBody, Model, SEq};
use moss_frontend::flat;
use rustc_hash::FxHashMap as HashMap;

/// A unit `(o_0, o_1, ...) = f(args)` one of whose outputs appears differentiated
/// (`der(state.p)` with `state = setSmoothState(...)`) gives one equation
/// `o_k = CallOutput(f(args), k)` per scalar output: a unit has fixed causality and is never
/// differentiated, those equations are (index reduction, through the function's
/// derivative), and their outputs may be chosen as dummy states.
/// Differentiating such an output differentiates the call's arguments, so units computing
/// variables those arguments read are split as well. `CallOutput` selects a whole output,
/// so array outputs (a medium state's mass fractions `X`) stay in the unit, with the scalar
/// outputs left out of it; their elements are not differentiated.
pub(super) fn split_differentiated_units(
    m: &mut Model,
    output_sizes: &dyn Fn(&str) -> Option<Vec<usize>>,
) {
    let mut wanted: Vec<bool> = m.vars.iter().map(|v| v.der.is_some()).collect();
    let mut changed = true;
    while changed {
        changed = false;
        for i in 0..m.eqs.len() {
            // a definition `v = expr` of a differentiated `v` (an inlined record setter,
            // `state.p = smoothStep(x, a.p, b.p, dx)`) differentiates what `expr` reads
            if let Some(read) = definition_reads(m, i, &wanted) {
                for v in read {
                    changed |= !wanted[v as usize];
                    wanted[v as usize] = true;
                }
                continue;
            }
            let Some(layout) = split_layout(m, i, &wanted, output_sizes) else {
                continue;
            };
            if layout.iter().all(|o| o.is_none()) {
                continue;
            }
            let EqBody::Call { args, .. } = &m.eqs[i].body else {
                continue;
            };
            let mut read = Vec::new();
            for a in args.clone() {
                m.arena.vars_of(a, false, &mut read);
            }
            for v in read {
                changed |= !wanted[v as usize];
                wanted[v as usize] = true;
            }
        }
    }
    for i in 0..m.eqs.len() {
        let Some(layout) = split_layout(m, i, &wanted, output_sizes) else {
            continue;
        };
        let EqBody::Call {
            outputs,
            func,
            args,
        } = &m.eqs[i].body
        else {
            continue;
        };
        let (mut outputs, func, args) = (outputs.clone(), func.clone(), args.clone());
        let call = m.arena.intern(Node::Call(
            std::sync::Arc::from(func.as_str()),
            args.clone().into_boxed_slice(),
        ));
        let origin = m.eqs[i].origin.clone();
        let mut split = Vec::new();
        for (k, pos) in layout.iter().enumerate() {
            let Some(pos) = *pos else { continue };
            let Some(v) = outputs[pos].take() else {
                continue;
            };
            let lhs = m.arena.var(v);
            let rhs = m.arena.intern(Node::CallOutput(call, k as u32));
            split.push(SEq::new(EqBody::Eq { lhs, rhs }, origin.clone()));
        }
        if split.is_empty() {
            continue;
        }
        if outputs.iter().any(|o| o.is_some()) {
            // the array outputs: the rest of the unit
            m.eqs[i].body = EqBody::Call {
                outputs,
                func,
                args,
            };
            m.eqs.extend(split);
        } else {
            let mut rest = split.into_iter();
            if let Some(first) = rest.next() {
                m.eqs[i] = first;
            }
            m.eqs.extend(rest);
        }
    }
}

/// The variables not yet wanted that equation `i` reads when it is a definition `v = expr`
/// (or `expr = v`) of a `wanted` variable `v`; `None` otherwise (or when there are none).
fn definition_reads(m: &mut Model, i: usize, wanted: &[bool]) -> Option<Vec<VarIx>> {
    let EqBody::Eq { lhs, rhs } = m.eqs[i].body else {
        return None;
    };
    let defined = |e: ExprId| match *m.arena.node(e) {
        Node::Var(v) => wanted.get(v as usize).copied().unwrap_or(false),
        _ => false,
    };
    let other = if defined(lhs) {
        rhs
    } else if defined(rhs) {
        lhs
    } else {
        return None;
    };
    let mut read = Vec::new();
    m.arena.vars_of(other, false, &mut read);
    read.retain(|&v| !wanted.get(v as usize).copied().unwrap_or(true));
    (!read.is_empty()).then_some(read)
}

/// For a unit with a `wanted` (differentiated) output: per function output, the position of
/// its element among the unit's outputs when it is a scalar (`None` for array outputs).
/// `None` when the unit needs no split or its outputs' sizes are not known.
fn split_layout(
    m: &Model,
    i: usize,
    wanted: &[bool],
    output_sizes: &dyn Fn(&str) -> Option<Vec<usize>>,
) -> Option<Vec<Option<usize>>> {
    let EqBody::Call { outputs, func, .. } = &m.eqs[i].body else {
        return None;
    };
    if !outputs.iter().flatten().any(|&v| wanted[v as usize]) {
        return None;
    }
    let sizes = unit_output_sizes(output_sizes(func)?, outputs.len())?;
    let mut layout = Vec::with_capacity(sizes.len());
    let mut pos = 0;
    for (size, scalar) in sizes {
        layout.push(scalar.then_some(pos));
        pos += size;
    }
    Some(layout)
}

/// Sizes of a function's outputs (`0` where a dimension is not a literal) completed from the
/// number of elements of a unit calling it: one unknown size is what is left. Each size
/// comes with whether the output is a scalar.
fn unit_output_sizes(declared: Vec<usize>, elements: usize) -> Option<Vec<(usize, bool)>> {
    // `usize::MAX` marks a scalar, so that an array of unknown (0) size is told apart
    let known: usize = declared
        .iter()
        .map(|&s| if s == usize::MAX { 1 } else { s })
        .sum();
    let unknown = declared.iter().filter(|&&s| s == 0).count();
    let rest = elements.checked_sub(known)?;
    if unknown > 1 || (unknown == 0 && rest != 0) {
        return None;
    }
    Some(
        declared
            .into_iter()
            .map(|s| match s {
                usize::MAX => (1, true),
                0 => (rest, false),
                n => (n, false),
            })
            .collect(),
    )
}

/// Element counts of a function's outputs: `usize::MAX` for a scalar, `0` for an array with
/// a size that is not a literal.
pub(super) fn output_sizes(f: &flat::Function) -> Vec<usize> {
    f.outputs
        .iter()
        .map(|o| {
            if o.dims.is_empty() {
                return usize::MAX;
            }
            let mut size = 1usize;
            for d in &o.dims {
                match d {
                    Some(flat::Expr::Integer(n)) if *n >= 0 => {
                        size = size.saturating_mul(*n as usize)
                    }
                    _ => return 0,
                }
            }
            size
        })
        .collect()
}

/// Equations `v_i = CallOutput(f(args), i)` selecting outputs of the same call (one shared
/// node thanks to hash-consing) become one `(v_0, v_1, ...) = f(args)` unit, so the function
/// is called once and every output is matched to its variable.
pub(super) fn group_call_outputs(eqs: &mut Vec<SEq>, arena: &crate::ir::Arena) {
    let mut groups: HashMap<ExprId, Vec<(usize, u32, VarIx)>> = HashMap::default();
    for (i, eq) in eqs.iter().enumerate() {
        let EqBody::Eq { lhs, rhs } = eq.body else {
            continue;
        };
        let (Node::Var(v), Node::CallOutput(call, k)) = (arena.node(lhs), arena.node(rhs)) else {
            continue;
        };
        if matches!(arena.node(*call), Node::Call(..)) {
            groups.entry(*call).or_default().push((i, *k, *v));
        }
    }
    if groups.is_empty() {
        return;
    }
    let mut remove = vec![false; eqs.len()];
    let mut units = Vec::new();
    let mut keys: Vec<ExprId> = groups.keys().copied().collect();
    keys.sort_unstable();
    for call in keys {
        let members = &groups[&call];
        let Node::Call(func, args) = arena.node(call) else {
            continue;
        };
        let n = members.iter().map(|m| m.1 as usize + 1).max().unwrap_or(0);
        let mut outputs = vec![None; n];
        let mut duplicate = false;
        for &(_, k, v) in members {
            duplicate |= outputs[k as usize].is_some();
            outputs[k as usize] = Some(v);
        }
        if duplicate {
            continue;
        }
        for &(i, _, _) in members {
            remove[i] = true;
        }
        let origin = eqs[members[0].0].origin.clone();
        units.push(SEq::new(
            EqBody::Call {
                outputs,
                func: func.to_string(),
                args: args.to_vec(),
            },
            origin,
        ));
    }
    let mut i = 0;
    eqs.retain(|_| {
        let keep = !remove[i];
        i += 1;
        keep
    });
    eqs.extend(units);
}
