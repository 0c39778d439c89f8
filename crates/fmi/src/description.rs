//! `modelDescription.xml` for FMI 2.0, written from the variable table ([`crate::variables`])
//! and the program: variables with causality, variability, initial, start values, units and
//! descriptions; `ModelStructure` (outputs, derivatives, initial unknowns, each with the
//! dependencies the program's blocks give); the event indicator count; `DefaultExperiment`
//! from the `experiment` annotation.
//!
//! Written by hand rather than through an XML crate: the document is flat, its element order
//! is fixed by the schema, and the only escaping needed is that of attribute values.

use crate::deps::Dependencies;
use crate::payload::Payload;
use crate::units;
use crate::variables::{self, BaseType, Causality, FmuVar, Initial, Table, Variability};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// Which interfaces the FMU offers, and the name of its shared library.
#[derive(Clone, Debug)]
pub struct Interfaces {
    pub model_exchange: bool,
    pub co_simulation: bool,
    /// File name (without `.so`) of the library in `binaries/<platform>/`; a C identifier.
    pub model_identifier: String,
}

/// A C identifier from a Modelica class name (`A.B.C` → `A_B_C`).
pub fn model_identifier(model_name: &str) -> String {
    let mut id: String = model_name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if !id.starts_with(|c: char| c.is_ascii_alphabetic()) {
        id.insert_str(0, "m_");
    }
    id
}

/// Escape text for a double-quoted XML attribute.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\n' => out.push_str("&#10;"),
            '\r' | '\t' => out.push(' '),
            c if (c as u32) < 0x20 => {}
            c => out.push(c),
        }
    }
    out
}

/// An `xs:double` literal (shortest round-trip form; `INF`, `-INF`, `NaN`).
pub fn real_text(x: f64) -> String {
    if x.is_nan() {
        "NaN".into()
    } else if x.is_infinite() {
        if x > 0.0 { "INF" } else { "-INF" }.into()
    } else {
        format!("{x:?}")
    }
}

fn value_text(ty: BaseType, x: f64) -> String {
    match ty {
        BaseType::Real => real_text(x),
        BaseType::Integer => format!("{}", x.round() as i64),
        BaseType::Boolean => (x != 0.0).to_string(),
    }
}

fn causality_text(c: Causality) -> &'static str {
    match c {
        Causality::Parameter => "parameter",
        Causality::CalculatedParameter => "calculatedParameter",
        Causality::Input => "input",
        Causality::Output => "output",
        Causality::Local => "local",
    }
}

fn variability_text(v: Variability) -> &'static str {
    match v {
        Variability::Constant => "constant",
        Variability::Fixed => "fixed",
        Variability::Discrete => "discrete",
        Variability::Continuous => "continuous",
    }
}

/// The whole `modelDescription.xml` of an FMI 2.0 FMU.
pub fn fmi2(payload: &Payload, table: &Table, deps: &Dependencies, ifs: &Interfaces) -> String {
    let p = &payload.program;
    let mut x = String::new();
    x.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    // Structured names tell importers how to build a tree of components; one name outside
    // that grammar (a generated one, an enumeration subscript) makes them all flat.
    let structured = table.vars.iter().all(|v| variables::is_structured(&v.name));
    let _ = writeln!(
        x,
        "<fmiModelDescription fmiVersion=\"2.0\" modelName=\"{}\" guid=\"{}\" \
         generationTool=\"moss {}\" variableNamingConvention=\"{}\" \
         numberOfEventIndicators=\"{}\">",
        escape(&p.name),
        escape(&payload.token),
        escape(&payload.moss_version),
        if structured { "structured" } else { "flat" },
        p.zero_crossings.len()
    );
    let id = escape(&ifs.model_identifier);
    if ifs.model_exchange {
        let _ = writeln!(
            x,
            "  <ModelExchange modelIdentifier=\"{id}\" canNotUseMemoryManagementFunctions=\"true\" \
             canGetAndSetFMUstate=\"true\" canSerializeFMUstate=\"true\" \
             providesDirectionalDerivative=\"true\"/>"
        );
    }
    if ifs.co_simulation {
        let _ = writeln!(
            x,
            "  <CoSimulation modelIdentifier=\"{id}\" canHandleVariableCommunicationStepSize=\"true\" \
             canInterpolateInputs=\"false\" maxOutputDerivativeOrder=\"0\" \
             canNotUseMemoryManagementFunctions=\"true\" canGetAndSetFMUstate=\"true\" \
             canSerializeFMUstate=\"true\" providesDirectionalDerivative=\"true\"/>"
        );
    }
    unit_definitions(&mut x, table);
    x.push_str("  <LogCategories>\n");
    x.push_str("    <Category name=\"logEvents\" description=\"events and mode changes\"/>\n");
    x.push_str("    <Category name=\"logStatusError\" description=\"errors\"/>\n");
    x.push_str("  </LogCategories>\n");
    default_experiment(&mut x, payload);
    x.push_str("  <ModelVariables>\n");
    for (vr, v) in table.vars.iter().enumerate() {
        scalar_variable(&mut x, vr as u32, v);
    }
    x.push_str("  </ModelVariables>\n");
    model_structure(&mut x, table, deps);
    x.push_str("</fmiModelDescription>\n");
    x
}

fn unit_definitions(x: &mut String, table: &Table) {
    // unit -> its display units
    let mut units: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for v in table
        .vars
        .iter()
        .filter(|v| v.ty == BaseType::Real && !v.unit.is_empty())
    {
        let displays = units.entry(v.unit.as_str()).or_default();
        if !v.display_unit.is_empty() {
            displays.insert(v.display_unit.as_str());
        }
    }
    if units.is_empty() {
        return;
    }
    x.push_str("  <UnitDefinitions>\n");
    for (unit, displays) in units {
        if displays.is_empty() {
            let _ = writeln!(x, "    <Unit name=\"{}\"/>", escape(unit));
            continue;
        }
        let _ = writeln!(x, "    <Unit name=\"{}\">", escape(unit));
        for d in displays {
            let (factor, offset) = units::conversion(unit, d).unwrap_or((1.0, 0.0));
            let _ = write!(x, "      <DisplayUnit name=\"{}\"", escape(d));
            if factor != 1.0 {
                let _ = write!(x, " factor=\"{}\"", real_text(factor));
            }
            if offset != 0.0 {
                let _ = write!(x, " offset=\"{}\"", real_text(offset));
            }
            x.push_str("/>\n");
        }
        x.push_str("    </Unit>\n");
    }
    x.push_str("  </UnitDefinitions>\n");
}

fn default_experiment(x: &mut String, payload: &Payload) {
    let e = &payload.program.experiment;
    let mut attrs = String::new();
    let fields = [
        ("startTime", e.start_time),
        ("stopTime", e.stop_time),
        ("tolerance", e.tolerance),
        ("stepSize", e.interval),
    ];
    for (name, value) in fields {
        if let Some(v) = value.filter(|v| v.is_finite()) {
            let _ = write!(attrs, " {name}=\"{}\"", real_text(v));
        }
    }
    let _ = writeln!(x, "  <DefaultExperiment{attrs}/>");
}

fn scalar_variable(x: &mut String, vr: u32, v: &FmuVar) {
    let _ = write!(
        x,
        "    <ScalarVariable name=\"{}\" valueReference=\"{vr}\"",
        escape(&v.name)
    );
    if !v.description.is_empty() {
        let _ = write!(x, " description=\"{}\"", escape(&v.description));
    }
    let _ = write!(
        x,
        " causality=\"{}\" variability=\"{}\"",
        causality_text(v.causality),
        variability_text(v.variability)
    );
    match v.initial {
        Some(Initial::Exact) => x.push_str(" initial=\"exact\""),
        Some(Initial::Calculated) => x.push_str(" initial=\"calculated\""),
        None => {}
    }
    x.push_str(">\n      <");
    x.push_str(match v.ty {
        BaseType::Real => "Real",
        BaseType::Integer => "Integer",
        BaseType::Boolean => "Boolean",
    });
    if v.ty == BaseType::Real {
        if !v.unit.is_empty() {
            let _ = write!(x, " unit=\"{}\"", escape(&v.unit));
        }
        if !v.display_unit.is_empty() {
            let _ = write!(x, " displayUnit=\"{}\"", escape(&v.display_unit));
        }
        if v.nominal.is_finite() && v.nominal > 0.0 && v.nominal != 1.0 {
            let _ = write!(x, " nominal=\"{}\"", real_text(v.nominal));
        }
    }
    if let Some(s) = v.start {
        let _ = write!(x, " start=\"{}\"", value_text(v.ty, s));
    }
    if let Some(state) = v.derivative_of {
        let _ = write!(x, " derivative=\"{}\"", state + 1);
    }
    x.push_str("/>\n    </ScalarVariable>\n");
}

/// `<Unknown index=.. dependencies=..>`: indices are 1-based positions in ModelVariables.
fn unknown(x: &mut String, vr: u32, deps: Option<&Vec<u32>>) {
    let _ = write!(x, "      <Unknown index=\"{}\"", vr + 1);
    if let Some(d) = deps {
        let list: Vec<String> = d.iter().map(|v| (v + 1).to_string()).collect();
        let _ = write!(x, " dependencies=\"{}\"", list.join(" "));
    }
    x.push_str("/>\n");
}

fn model_structure(x: &mut String, table: &Table, deps: &Dependencies) {
    x.push_str("  <ModelStructure>\n");
    let outputs = table.outputs();
    if !outputs.is_empty() {
        x.push_str("    <Outputs>\n");
        for &vr in &outputs {
            unknown(x, vr, deps.continuous.get(&vr));
        }
        x.push_str("    </Outputs>\n");
    }
    if !table.derivatives.is_empty() {
        x.push_str("    <Derivatives>\n");
        for &vr in &table.derivatives {
            unknown(x, vr, deps.continuous.get(&vr));
        }
        x.push_str("    </Derivatives>\n");
    }
    let initial = initial_unknowns(table);
    if !initial.is_empty() {
        x.push_str("    <InitialUnknowns>\n");
        for vr in initial {
            unknown(x, vr, deps.initial.get(&vr));
        }
        x.push_str("    </InitialUnknowns>\n");
    }
    x.push_str("  </ModelStructure>\n");
}

/// What FMI 2.0 requires in `InitialUnknowns`: outputs not `initial="exact"`, calculated
/// parameters, and all states and derivatives (here always calculated), in index order.
pub fn initial_unknowns(table: &Table) -> Vec<u32> {
    let mut set: BTreeSet<u32> = table.states.iter().copied().collect();
    set.extend(table.derivatives.iter().copied());
    for (vr, v) in table.vars.iter().enumerate() {
        let calculated = v.initial != Some(Initial::Exact);
        if (v.causality == Causality::Output && calculated)
            || v.causality == Causality::CalculatedParameter
        {
            set.insert(vr as u32);
        }
    }
    set.into_iter().collect()
}

/// The whole `modelDescription.xml` of an FMI 3.0 FMU: the same variables and dependencies
/// as for FMI 2.0, in FMI 3.0's form (typed elements with inline attributes, value
/// references instead of indices in `ModelStructure`), plus the `independent` variable
/// `time` and one variable per event indicator, which FMI 3.0 declares as variables.
pub fn fmi3(payload: &Payload, table: &Table, deps: &Dependencies, ifs: &Interfaces) -> String {
    let p = &payload.program;
    let mut x = String::new();
    x.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let structured = table.vars.iter().all(|v| variables::is_structured(&v.name));
    let _ = writeln!(
        x,
        "<fmiModelDescription fmiVersion=\"3.0\" modelName=\"{}\" instantiationToken=\"{}\" \
         generationTool=\"moss {}\" variableNamingConvention=\"{}\">",
        escape(&p.name),
        escape(&payload.token),
        escape(&payload.moss_version),
        if structured { "structured" } else { "flat" },
    );
    let id = escape(&ifs.model_identifier);
    if ifs.model_exchange {
        let _ = writeln!(
            x,
            "  <ModelExchange modelIdentifier=\"{id}\" canGetAndSetFMUState=\"true\" canSerializeFMUState=\"true\" \
             providesDirectionalDerivatives=\"true\"/>"
        );
    }
    if ifs.co_simulation {
        let _ = writeln!(
            x,
            "  <CoSimulation modelIdentifier=\"{id}\" canGetAndSetFMUState=\"true\" canSerializeFMUState=\"true\" \
             providesDirectionalDerivatives=\"true\" \
             canHandleVariableCommunicationStepSize=\"true\"/>"
        );
    }
    unit_definitions(&mut x, table);
    x.push_str("  <LogCategories>\n");
    x.push_str("    <Category name=\"logEvents\" description=\"events and mode changes\"/>\n");
    x.push_str("    <Category name=\"logStatusError\" description=\"errors\"/>\n");
    x.push_str("  </LogCategories>\n");
    default_experiment(&mut x, payload);
    x.push_str("  <ModelVariables>\n");
    let _ = writeln!(
        x,
        "    <Float64 name=\"time\" valueReference=\"{}\" causality=\"independent\" \
         variability=\"continuous\" description=\"Simulation time\"/>",
        table.time_vr()
    );
    for (vr, v) in table.vars.iter().enumerate() {
        variable3(&mut x, vr as u32, v);
    }
    let n_ind = p.zero_crossings.len();
    for (i, zc) in p.zero_crossings.iter().enumerate() {
        let _ = writeln!(
            x,
            "    <Float64 name=\"{}\" valueReference=\"{}\" description=\"{}\" \
             causality=\"local\" variability=\"continuous\"/>",
            event_indicator_name(table, i),
            table.event_indicator_vr(i),
            escape(&zc.description)
        );
    }
    x.push_str("  </ModelVariables>\n");
    x.push_str("  <ModelStructure>\n");
    let element = |x: &mut String, tag: &str, vr: u32, deps: Option<&Vec<u32>>| {
        let _ = write!(x, "    <{tag} valueReference=\"{vr}\"");
        if let Some(d) = deps {
            let list: Vec<String> = d.iter().map(u32::to_string).collect();
            let _ = write!(x, " dependencies=\"{}\"", list.join(" "));
        }
        x.push_str("/>\n");
    };
    for vr in table.outputs() {
        element(&mut x, "Output", vr, deps.continuous.get(&vr));
    }
    for &vr in &table.derivatives {
        element(
            &mut x,
            "ContinuousStateDerivative",
            vr,
            deps.continuous.get(&vr),
        );
    }
    for vr in initial_unknowns(table) {
        element(&mut x, "InitialUnknown", vr, deps.initial.get(&vr));
    }
    for i in 0..n_ind {
        element(&mut x, "EventIndicator", table.event_indicator_vr(i), None);
    }
    x.push_str("  </ModelStructure>\n");
    x.push_str("</fmiModelDescription>\n");
    x
}

/// Name of event indicator `i`: `_eventIndicator_<i+1>` (made unique should the model have
/// a variable of that name).
fn event_indicator_name(table: &Table, i: usize) -> String {
    let mut name = format!("_eventIndicator_{}", i + 1);
    while table.vr_of(&name).is_some() {
        name.insert(0, '_');
    }
    name
}

fn variable3(x: &mut String, vr: u32, v: &FmuVar) {
    let tag = match v.ty {
        BaseType::Real => "Float64",
        BaseType::Integer => "Int32",
        BaseType::Boolean => "Boolean",
    };
    let _ = write!(
        x,
        "    <{tag} name=\"{}\" valueReference=\"{vr}\"",
        escape(&v.name)
    );
    if !v.description.is_empty() {
        let _ = write!(x, " description=\"{}\"", escape(&v.description));
    }
    let _ = write!(
        x,
        " causality=\"{}\" variability=\"{}\"",
        causality_text(v.causality),
        variability_text(v.variability)
    );
    match v.initial {
        Some(Initial::Exact) => x.push_str(" initial=\"exact\""),
        Some(Initial::Calculated) => x.push_str(" initial=\"calculated\""),
        None => {}
    }
    if v.ty == BaseType::Real {
        if !v.unit.is_empty() {
            let _ = write!(x, " unit=\"{}\"", escape(&v.unit));
        }
        if !v.display_unit.is_empty() {
            let _ = write!(x, " displayUnit=\"{}\"", escape(&v.display_unit));
        }
        if v.nominal.is_finite() && v.nominal > 0.0 && v.nominal != 1.0 {
            let _ = write!(x, " nominal=\"{}\"", real_text(v.nominal));
        }
    }
    if let Some(s) = v.start {
        let _ = write!(x, " start=\"{}\"", value_text(v.ty, s));
    }
    if let Some(state) = v.derivative_of {
        let _ = write!(x, " derivative=\"{state}\"");
    }
    x.push_str("/>\n");
}
