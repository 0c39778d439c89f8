//! Event analysis on the working model.
//!
//! - Every `when` branch condition gets a hidden Boolean slot `$whenCondN` computed by an
//!   ordinary equation `$whenCondN = condition`; the `When` block fires on the rising edge of
//!   its slots (see `program` docs). Because the slots are ordinary unknowns, they are sorted
//!   before the `When` block like any other variable.
//! - Zero crossings are extracted while emitting program expressions (`emit`): every
//!   event-generating relation gets an index, its `lhs - rhs` and, for `time <op> e` with `e`
//!   parameter-only, the time event.
//! - `edge`, `change`, `pre`, `initial`, `terminal`, `sample` are rewritten in `convert`.

use crate::model::{EqBody, Model, SEq, SVar, VKind};
use crate::program::ValueType;

/// Create the condition slots of all when-equations.
pub fn add_when_condition_slots(m: &mut Model) {
    let mut new_eqs = Vec::new();
    let mut k = 0usize;
    for i in 0..m.eqs.len() {
        let EqBody::When(branches) = &m.eqs[i].body else {
            continue;
        };
        let origin = m.eqs[i].origin.clone();
        let mut branches = branches.clone();
        for b in branches.iter_mut() {
            b.slots.clear();
            for &c in &b.conds {
                k += 1;
                let mut sv =
                    SVar::new(format!("$whenCond{k}"), VKind::Discrete, ValueType::Boolean);
                sv.hidden = true;
                sv.protected_from_alias = true;
                sv.origin = origin.clone();
                sv.description = format!("condition: {}", m.text(c));
                let slot = m.add_var(sv);
                let lhs = m.arena.var(slot);
                new_eqs.push(SEq::new(EqBody::Eq { lhs, rhs: c }, origin.clone()));
                b.slots.push(slot);
            }
        }
        m.eqs[i].body = EqBody::When(branches);
    }
    m.eqs.extend(new_eqs);
}
