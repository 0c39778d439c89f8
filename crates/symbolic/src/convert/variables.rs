//! Variables: declaration of the flat model's variables with their variability class and
//! value type, conversion of their bindings and attributes, and the passes that correct a
//! variable's class or alias protection once the equations are known (bound inputs,
//! when-assigned variables, outputs of units).

use super::Conv;
use crate::ir::Node;
use crate::model::{EqBody, Model, SVar, VKind};
use crate::program::ValueType;
use moss_frontend::flat::{Causality, ScalarType, StateSelect, Variability};
use moss_syntax::Diagnostic;

/// A top-level input with a binding (`input Real u = sin(time)`) arrives as the equation
/// `u = ...`: such an input is computed by the model, i.e. an ordinary unknown. A connection
/// of the input (`connect(u, block.u)` gives `u = block.u`) has the same form but leaves the
/// input external; it is told apart by its origin, which is a `connect` statement.
pub(super) fn bind_defined_inputs(m: &mut Model, sources: &moss_syntax::SourceMap) {
    let mut defined = Vec::new();
    for eq in &m.eqs {
        if let EqBody::Eq { lhs, .. } = eq.body {
            if let Node::Var(v) = *m.arena.node(lhs) {
                if m.vars[v as usize].kind == VKind::Input
                    && !is_connect_origin(sources, eq.origin.span)
                {
                    defined.push(v);
                }
            }
        }
    }
    for v in defined {
        let sv = &mut m.vars[v as usize];
        sv.kind = if sv.ty == ValueType::Real {
            VKind::Continuous
        } else {
            VKind::Discrete
        };
    }
}

/// Does the span point at a `connect(...)` equation?
pub(super) fn is_connect_origin(sources: &moss_syntax::SourceMap, span: moss_syntax::Span) -> bool {
    if span.is_dummy() {
        return false;
    }
    let Some(file) = sources.get(span.file) else {
        return false;
    };
    file.text
        .get(span.start as usize..)
        .is_some_and(|t| t.starts_with("connect") && t[7..].trim_start().starts_with('('))
}

/// Variables computed by units (calls with several outputs, algorithms, when-equations) are
/// named by the unit itself, so alias elimination must keep them.
pub(super) fn protect_unit_outputs(m: &mut Model) {
    let mut outs = Vec::new();
    for eq in m.eqs.iter().chain(&m.init_eqs) {
        outs.extend(eq.fixed_outputs().unwrap_or_default());
    }
    for v in outs {
        m.vars[v as usize].protected_from_alias = true;
    }
}

/// Variables assigned inside `when` are discrete-time even when declared without `discrete`.
pub(super) fn make_when_assigned_discrete(m: &mut Model) {
    for eq in &m.eqs {
        if let EqBody::When(_) = eq.body {
            for v in eq.fixed_outputs().unwrap_or_default() {
                if m.vars[v as usize].kind == VKind::Continuous {
                    m.vars[v as usize].kind = VKind::Discrete;
                }
            }
        }
    }
}

pub(crate) fn value_type(t: &ScalarType) -> ValueType {
    match t {
        ScalarType::Real => ValueType::Real,
        ScalarType::Integer => ValueType::Integer,
        ScalarType::Boolean => ValueType::Boolean,
        ScalarType::String => ValueType::String,
        // Clock variables are removed by the clock pass before conversion.
        ScalarType::Clock => ValueType::Boolean,
        ScalarType::Enumeration { .. } => ValueType::Enumeration,
    }
}

/// A top-level name has no `.` outside subscripts (`u`, `u[1]`, but not `gain.u`).
fn is_top_level(name: &str) -> bool {
    let mut depth = 0;
    for ch in name.chars() {
        match ch {
            '[' => depth += 1,
            ']' => depth -= 1,
            '.' if depth == 0 => return false,
            _ => {}
        }
    }
    true
}

impl<'a> Conv<'a> {
    pub(super) fn declare_variables(&mut self) {
        // Sized once: growing the table of a large model step by step copied it (and rehashed
        // the names) about twice over.
        let n = self.flat.variables.len();
        self.m.vars.reserve(n);
        self.m.by_name.reserve(n);
        for v in &self.flat.variables {
            let ty = value_type(&v.ty);
            let kind = match v.variability {
                Variability::Constant => VKind::Constant,
                Variability::Parameter => VKind::Parameter,
                _ if v.causality == Causality::Input && is_top_level(&v.name) => VKind::Input,
                Variability::Continuous if ty == ValueType::Real => VKind::Continuous,
                _ => VKind::Discrete,
            };
            let mut sv = SVar::new(v.name.clone(), kind, ty);
            sv.unit = v.attrs.unit.clone().unwrap_or_default();
            sv.description = v.description.clone();
            sv.hidden = v.is_protected;
            sv.state_select = v.attrs.state_select.unwrap_or(StateSelect::Default);
            sv.origin = v.origin.clone();
            sv.fixed = v.attrs.fixed;
            sv.start_given = v.attrs.start_given;
            if self.m.by_name.contains_key(&v.name) {
                self.errors.push(Diagnostic::error(
                    v.origin.span,
                    format!("variable `{}` is declared twice in the flat model", v.name),
                ));
            }
            self.m.add_var(sv);
        }
    }

    /// Bindings and attributes may refer to other variables, so they are converted after all
    /// variables exist. Constants with literal bindings are folded into expressions.
    pub(super) fn convert_attributes(&mut self) {
        for (i, v) in self.flat.variables.iter().enumerate() {
            let o = &v.origin;
            let binding = v.binding.as_ref().map(|b| self.expr(b, o, false));
            let start = v.attrs.start.as_ref().map(|b| self.expr(b, o, false));
            let nominal = v.attrs.nominal.as_ref().map(|b| self.expr(b, o, false));
            let min = v.attrs.min.as_ref().map(|b| self.expr(b, o, false));
            let max = v.attrs.max.as_ref().map(|b| self.expr(b, o, false));
            let sv = &mut self.m.vars[i];
            sv.binding = binding;
            sv.start = start;
            sv.nominal = nominal;
            sv.min = min;
            sv.max = max;
        }
    }
}
