//! Top-level physical connectors of a model translated on its own.
//!
//! The balance rule of the specification counts one equation per flow variable of a
//! top-level connector, "provided when the class is used". Translated on its own, nothing is
//! connected: the frontend then writes `c.i = 0` for every such flow (an open pin, as for any
//! unconnected connector). That is right for a pin whose potential the model determines, but
//! a component such as a resistor determines only potential *differences*: with every pin
//! open, its potentials float (under-determined) while its flows are fixed twice
//! (`p.i + n.i = 0` and `p.i = 0`, `n.i = 0`: over-determined).
//!
//! Such a pin is grounded instead: its open-pin equation is dropped and its potential becomes
//! a top-level input (held at its start value, 0 unless given), so the environment supplies
//! the potential rather than the flow. Pins are chosen from the structural diagnosis (the
//! Dulmage–Mendelsohn parts of the collapsed structure): only a pin whose open equation is
//! over-determined and whose potential is under-determined, one at a time (the last declared
//! first) until the structure is nonsingular. Models without such a deficiency are unchanged.

use crate::index;
use crate::ir::{Node, VarIx};
use crate::model::{EqBody, Model, VKind};
use moss_frontend::flat::{ScalarType, Variability};
use moss_frontend::FlatModel;

/// A flow of a top-level connector with its open-pin equation `flow = 0`.
struct OpenPin {
    connector: String,
    flow: VarIx,
    equation: usize,
    potentials: Vec<VarIx>,
}

/// Ground top-level connectors whose potential the model leaves undetermined (see the module
/// documentation). Runs on the converted model before alias elimination.
pub fn ground_floating_connectors(m: &mut Model, flat: &FlatModel) {
    let mut pins = open_pins(m, flat);
    if pins.is_empty() {
        return;
    }
    let Ok(taken) = index::unit_outputs(m) else {
        return;
    };
    let mut removed = vec![false; m.eqs.len()];
    while !pins.is_empty() {
        let eq_ids: Vec<u32> = (0..m.eqs.len() as u32)
            .filter(|&e| {
                !removed[e as usize] && matches!(m.eqs[e as usize].body, EqBody::Eq { .. })
            })
            .collect();
        let adj = plain_incidence(m);
        let Some(parts) = index::collapsed_singular_parts(m, &eq_ids, &adj, &taken) else {
            break;
        };
        let pick = pins.iter().rposition(|p| {
            parts.over_eqs.binary_search(&(p.equation as u32)).is_ok()
                && p.potentials
                    .iter()
                    .any(|v| parts.under_vars.binary_search(v).is_ok())
        });
        let Some(k) = pick else {
            break;
        };
        let pin = pins.remove(k);
        let Some(&pot) = pin
            .potentials
            .iter()
            .find(|v| parts.under_vars.binary_search(v).is_ok())
        else {
            break;
        };
        removed[pin.equation] = true;
        m.vars[pot as usize].kind = VKind::Input;
        let start = m.vars[pot as usize]
            .start
            .map(|s| m.text(s))
            .unwrap_or_else(|| "0".to_string());
        m.warnings.push(format!(
            "top-level connector `{}`: the model does not determine its potential `{}`, so `{}` is taken as an input (held at {}) instead of the open-pin equation `{} = 0`",
            pin.connector,
            m.vars[pot as usize].name,
            m.vars[pot as usize].name,
            start,
            m.vars[pin.flow as usize].name
        ));
    }
    if removed.iter().any(|&r| r) {
        let mut i = 0;
        m.eqs.retain(|_| {
            let keep = !removed[i];
            i += 1;
            keep
        });
    }
}

/// Incidence of the plain equations (units have none: their outputs are excluded anyway).
fn plain_incidence(m: &mut Model) -> Vec<Vec<VarIx>> {
    let mut adj = Vec::with_capacity(m.eqs.len());
    for i in 0..m.eqs.len() {
        let eq = m.eqs[i].clone();
        adj.push(if matches!(eq.body, EqBody::Eq { .. }) {
            m.incidence(&eq)
        } else {
            Vec::new()
        });
    }
    adj
}

/// The connector part of a top-level connector element (`p` of `p.i`, `c[2]` of `c[2].i`),
/// or `None` for variables of components and plain top-level variables.
fn top_level_connector(name: &str) -> Option<&str> {
    let mut depth = 0;
    let mut dot = None;
    for (i, ch) in name.char_indices() {
        match ch {
            '[' => depth += 1,
            ']' => depth -= 1,
            '.' if depth == 0 => {
                if dot.is_some() {
                    return None;
                }
                dot = Some(i);
            }
            _ => {}
        }
    }
    dot.map(|i| &name[..i])
}

/// Flows of top-level connectors with their open-pin equations and their connector's
/// potential variables, in declaration order.
fn open_pins(m: &Model, flat: &FlatModel) -> Vec<OpenPin> {
    let mut pins = Vec::new();
    let mut open_eq: std::collections::HashMap<VarIx, usize> = std::collections::HashMap::new();
    for (i, eq) in m.eqs.iter().enumerate() {
        if let EqBody::Eq { lhs, rhs } = eq.body {
            let (l, r) = (m.arena.node(lhs), m.arena.node(rhs));
            match (l, r) {
                (Node::Var(v), _) if m.arena.as_const(rhs) == Some(0.0) => {
                    open_eq.entry(*v).or_insert(i);
                }
                (_, Node::Var(v)) if m.arena.as_const(lhs) == Some(0.0) => {
                    open_eq.entry(*v).or_insert(i);
                }
                _ => {}
            }
        }
    }
    if open_eq.is_empty() {
        return pins;
    }
    for fv in flat.variables.iter().filter(|v| v.is_flow) {
        let Some(conn) = top_level_connector(&fv.name) else {
            continue;
        };
        let Some(&flow) = m.by_name.get(&fv.name) else {
            continue;
        };
        let Some(&equation) = open_eq.get(&flow) else {
            continue;
        };
        let prefix = format!("{conn}.");
        let potentials: Vec<VarIx> = flat
            .variables
            .iter()
            .filter(|v| {
                v.name.starts_with(&prefix)
                    && !v.is_flow
                    && !v.is_stream
                    && v.ty == ScalarType::Real
                    && v.variability == Variability::Continuous
            })
            .filter_map(|v| m.by_name.get(&v.name).copied())
            .filter(|&v| m.vars[v as usize].kind == VKind::Continuous)
            .collect();
        if potentials.is_empty() {
            continue;
        }
        pins.push(OpenPin {
            connector: conn.to_string(),
            flow,
            equation,
            potentials,
        });
    }
    pins
}
