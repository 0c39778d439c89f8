//! The FMU's variable table: which program slots and aliases become FMI variables, with
//! their value references, causality, variability and `initial`. Built the same way by the
//! exporter (for modelDescription.xml) and by the runtime (to resolve value references), so
//! the two always agree. The value reference of a variable is its position in the table.

use moss_symbolic::program::{ValueType, VarKind};
use moss_symbolic::CausalProgram;
use std::collections::HashSet;

/// FMI base type. Enumerations are exposed as Integers (their 1-based values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BaseType {
    Real,
    Integer,
    Boolean,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Causality {
    Parameter,
    CalculatedParameter,
    Input,
    Output,
    Local,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variability {
    Constant,
    Fixed,
    Discrete,
    Continuous,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Initial {
    Exact,
    Calculated,
}

/// Where a variable's value lives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Source {
    Slot(u32),
    /// `scale * slot + offset`
    Alias {
        slot: u32,
        scale: f64,
        offset: f64,
    },
}

impl Source {
    pub fn slot(self) -> u32 {
        match self {
            Source::Slot(s) | Source::Alias { slot: s, .. } => s,
        }
    }

    /// The variable's value from the slot's value.
    pub fn read(self, slot_value: f64) -> f64 {
        match self {
            Source::Slot(_) => slot_value,
            Source::Alias { scale, offset, .. } => scale * slot_value + offset,
        }
    }

    /// The slot's value that gives the variable `value` (`None`: an alias with scale 0).
    pub fn write(self, value: f64) -> Option<f64> {
        match self {
            Source::Slot(_) => Some(value),
            Source::Alias { scale, offset, .. } => (scale != 0.0).then(|| (value - offset) / scale),
        }
    }
}

#[derive(Clone, Debug)]
pub struct FmuVar {
    pub name: String,
    pub source: Source,
    pub ty: BaseType,
    /// The program's kind of the slot behind the variable.
    pub kind: VarKind,
    pub causality: Causality,
    pub variability: Variability,
    /// `None`: the default of the causality/variability combination (not written).
    pub initial: Option<Initial>,
    /// Written as the start attribute (variables with `initial` exact, and inputs).
    pub start: Option<f64>,
    pub unit: String,
    /// A display unit with a known conversion from `unit` (see [`crate::units`]); set by
    /// the exporter from the flat model ([`Table::set_display_units`]), empty otherwise.
    pub display_unit: String,
    pub description: String,
    pub nominal: f64,
    /// For `der(x)`: the value reference of `x`.
    pub derivative_of: Option<u32>,
}

/// All FMU variables, in value-reference order.
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub vars: Vec<FmuVar>,
    /// Value references of the states, in the program's state order.
    pub states: Vec<u32>,
    /// Value references of the state derivatives, in the program's state order.
    pub derivatives: Vec<u32>,
    by_name: std::collections::HashMap<String, u32>,
}

impl Table {
    pub fn get(&self, vr: u32) -> Option<&FmuVar> {
        self.vars.get(vr as usize)
    }

    pub fn vr_of(&self, name: &str) -> Option<u32> {
        self.by_name.get(name).copied()
    }

    /// Value references of the outputs, in table order.
    pub fn outputs(&self) -> Vec<u32> {
        self.vrs_where(|v| v.causality == Causality::Output)
    }

    /// Display units by variable name (the program does not carry them): kept where
    /// [`crate::units::conversion`] knows how they relate to the variable's unit.
    pub fn set_display_units<'a>(&mut self, units: impl IntoIterator<Item = (&'a str, &'a str)>) {
        for (name, display) in units {
            let Some(&vr) = self.by_name.get(name) else {
                continue;
            };
            let v = &mut self.vars[vr as usize];
            if crate::units::conversion(&v.unit, display).is_some() {
                v.display_unit = display.to_string();
            }
        }
    }

    /// FMI 3.0's `independent` variable `time`: the value reference after the table's.
    pub fn time_vr(&self) -> u32 {
        self.vars.len() as u32
    }

    /// FMI 3.0 declares event indicators as variables: event indicator `i` (0-based) has
    /// the value reference `time_vr() + 1 + i`.
    pub fn event_indicator_vr(&self, i: usize) -> u32 {
        self.time_vr() + 1 + i as u32
    }

    pub fn inputs(&self) -> Vec<u32> {
        self.vrs_where(|v| v.causality == Causality::Input)
    }

    fn vrs_where(&self, f: impl Fn(&FmuVar) -> bool) -> Vec<u32> {
        (0..self.vars.len() as u32)
            .filter(|&i| f(&self.vars[i as usize]))
            .collect()
    }
}

/// Generated slots (`$...`), the hidden `pre(v)` unknowns of initialization and tangent
/// slots are no model variables.
fn is_exposed(name: &str, kind: VarKind) -> bool {
    kind != VarKind::Tangent && !name.starts_with('$') && !name.starts_with("pre(")
}

fn base_type(ty: ValueType) -> Option<BaseType> {
    match ty {
        ValueType::Real => Some(BaseType::Real),
        ValueType::Integer | ValueType::Enumeration => Some(BaseType::Integer),
        ValueType::Boolean => Some(BaseType::Boolean),
        // String values are folded away at translation; nothing to exchange at run time.
        ValueType::String => None,
    }
}

/// Causality, variability, initial and whether a start value is written, for a variable of
/// program kind `kind` (`alias`: reached through an alias), following the FMI 2.0 table of
/// legal combinations.
fn classify(
    kind: VarKind,
    ty: BaseType,
    is_output: bool,
    alias: bool,
) -> (Causality, Variability, Option<Initial>, bool) {
    let changing = if ty == BaseType::Real {
        Variability::Continuous
    } else {
        Variability::Discrete
    };
    match kind {
        VarKind::Constant => {
            let causality = if is_output {
                Causality::Output
            } else {
                Causality::Local
            };
            (causality, Variability::Constant, Some(Initial::Exact), true)
        }
        VarKind::Parameter | VarKind::DependentParameter if is_output => (
            Causality::Output,
            changing,
            Some(Initial::Calculated),
            false,
        ),
        VarKind::Parameter => (Causality::Parameter, Variability::Fixed, None, true),
        VarKind::DependentParameter => (
            Causality::CalculatedParameter,
            Variability::Fixed,
            None,
            false,
        ),
        VarKind::Input if !alias => (Causality::Input, changing, None, true),
        VarKind::Discrete => {
            let causality = if is_output {
                Causality::Output
            } else {
                Causality::Local
            };
            (causality, Variability::Discrete, None, false)
        }
        _ => {
            let causality = if is_output {
                Causality::Output
            } else {
                Causality::Local
            };
            (causality, changing, None, false)
        }
    }
}

/// The variable table of `program`; `outputs` are the full names of its top-level outputs.
pub fn table(program: &CausalProgram, outputs: &[String]) -> Table {
    let outputs: HashSet<&str> = outputs.iter().map(String::as_str).collect();
    let mut t = Table::default();
    let state_slots: HashSet<u32> = program.states.iter().copied().collect();
    // States and derivatives are always exposed (whatever their names): the FMU's state
    // vector is the program's.
    let continuous: HashSet<u32> = state_slots
        .iter()
        .chain(&program.derivatives)
        .copied()
        .collect();
    let mut vr_of_slot = std::collections::HashMap::new();
    for (slot, v) in program.vars.iter().enumerate() {
        let exposed = continuous.contains(&(slot as u32)) || is_exposed(&v.name, v.kind);
        let Some(ty) = base_type(v.ty).filter(|_| exposed) else {
            continue;
        };
        vr_of_slot.insert(slot as u32, t.vars.len() as u32);
        let is_state = state_slots.contains(&(slot as u32));
        // A state is continuous whatever its declared type says.
        let kind = if is_state { VarKind::State } else { v.kind };
        let (causality, variability, initial, has_start) =
            classify(kind, ty, outputs.contains(v.name.as_str()), false);
        push(
            &mut t,
            FmuVar {
                name: fmi_name(&v.name),
                source: Source::Slot(slot as u32),
                ty,
                kind,
                causality,
                variability,
                initial,
                start: has_start.then_some(v.start),
                unit: v.unit.clone(),
                display_unit: String::new(),
                description: v.description.clone(),
                nominal: v.nominal,
                derivative_of: None,
            },
        );
    }
    for a in &program.aliases {
        let Some(target) = program.vars.get(a.target as usize) else {
            continue;
        };
        let Some(ty) = base_type(target.ty).filter(|_| is_exposed(&a.name, target.kind)) else {
            continue;
        };
        if t.by_name.contains_key(&fmi_name(&a.name)) {
            continue;
        }
        let source = Source::Alias {
            slot: a.target,
            scale: a.scale,
            offset: a.offset,
        };
        // An alias of a state is not a state of the FMU (only one variable per state is).
        let kind = match target.kind {
            VarKind::State | VarKind::Derivative | VarKind::Input => VarKind::Algebraic,
            k => k,
        };
        let (causality, variability, initial, has_start) =
            classify(kind, ty, outputs.contains(a.name.as_str()), true);
        push(
            &mut t,
            FmuVar {
                name: fmi_name(&a.name),
                source,
                ty,
                kind,
                causality,
                variability,
                initial,
                start: has_start.then(|| source.read(target.start)),
                unit: a.unit.clone(),
                display_unit: String::new(),
                description: a.description.clone(),
                nominal: (a.scale * target.nominal).abs(),
                derivative_of: None,
            },
        );
    }
    link_states(&mut t, program, &vr_of_slot);
    t
}

fn push(t: &mut Table, var: FmuVar) {
    t.by_name.insert(var.name.clone(), t.vars.len() as u32);
    t.vars.push(var);
}

/// Find the state and derivative variables (slots, not aliases) and link each derivative
/// to its state.
fn link_states(
    t: &mut Table,
    program: &CausalProgram,
    vr_of_slot: &std::collections::HashMap<u32, u32>,
) {
    for (s, d) in program.states.iter().zip(&program.derivatives) {
        let (Some(&sv), Some(&dv)) = (vr_of_slot.get(s), vr_of_slot.get(d)) else {
            continue;
        };
        t.states.push(sv);
        t.derivatives.push(dv);
        let der = &mut t.vars[dv as usize];
        der.derivative_of = Some(sv);
        der.ty = BaseType::Real;
        der.variability = Variability::Continuous;
    }
}

/// The FMI name of a program variable: nested derivatives `der(der(x))` become `der(x,2)`,
/// the form of the structured naming convention; other names are kept.
pub fn fmi_name(name: &str) -> String {
    let mut inner = name;
    let mut order = 0;
    while let Some(rest) = inner.strip_prefix("der(").and_then(|r| r.strip_suffix(')')) {
        inner = rest;
        order += 1;
    }
    if order >= 2 {
        format!("der({inner},{order})")
    } else {
        name.to_string()
    }
}

/// Whether `name` follows FMI 2.0's structured naming convention: `a.b[1,2].c`, quoted
/// identifiers, `der(name)` and `der(name,n)`.
pub fn is_structured(name: &str) -> bool {
    if let Some(arg) = name.strip_prefix("der(").and_then(|r| r.strip_suffix(')')) {
        let inner = match arg.rsplit_once(',') {
            Some((inner, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => inner,
            _ => arg,
        };
        return is_identifier_path(inner);
    }
    is_identifier_path(name)
}

/// `B-name [indices] { "." B-name [indices] }`
fn is_identifier_path(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    loop {
        // one name
        if i < b.len() && b[i] == b'\'' {
            i += 1;
            while i < b.len() && b[i] != b'\'' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            if i >= b.len() {
                return false;
            }
            i += 1;
        } else {
            if i >= b.len() || !(b[i].is_ascii_alphabetic() || b[i] == b'_') {
                return false;
            }
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
        }
        // optional indices: unsigned integers separated by commas
        if i < b.len() && b[i] == b'[' {
            i += 1;
            loop {
                let digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
                if digits == 0 {
                    return false;
                }
                i += digits;
                while i < b.len() && b[i] == b' ' {
                    i += 1;
                }
                match b.get(i) {
                    Some(b',') => {
                        i += 1;
                        while i < b.len() && b[i] == b' ' {
                            i += 1;
                        }
                    }
                    Some(b']') => {
                        i += 1;
                        break;
                    }
                    _ => return false,
                }
            }
        }
        match b.get(i) {
            None => return true,
            Some(b'.') => i += 1,
            Some(_) => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_derivatives_are_renamed() {
        assert_eq!(fmi_name("der(der(J1.phi))"), "der(J1.phi,2)");
        assert_eq!(fmi_name("der(x)"), "der(x)");
        assert_eq!(fmi_name("a.b"), "a.b");
    }

    #[test]
    fn structured_names_are_recognised() {
        for ok in [
            "x",
            "a.b[1].c",
            "a[1,2]",
            "der(x)",
            "der(a.b[3])",
            "der(x,2)",
            "'q x'.y",
        ] {
            assert!(is_structured(ok), "{ok}");
        }
        for bad in [
            "$x",
            "der(der(x))",
            "a..b",
            "x[i]",
            "1a",
            "a[1",
            "pre(x)",
            "",
        ] {
            assert!(!is_structured(bad), "{bad}");
        }
    }
}
