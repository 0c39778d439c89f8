//! Conversion of the flat model into the working model: variables get their variability
//! class, expressions go into the arena (constants folded), event operators are rewritten
//! (`edge`, `change`, `sample`, `noEvent`), if-equations become equations with
//! if-expressions, `when` equations become units with branch items.
//!
//! Event policy: a relation generates events unless it is inside `noEvent`/`smooth` or its
//! operands contain neither `time` nor a continuous variable (discrete values only change at
//! events, so such a relation can be evaluated live). The step functions `div`, `mod`, `rem`,
//! `ceil`, `floor`, `integer` of continuous arguments are rewritten with discrete `$floorN`
//! helpers updated by generated when-equations (see `Conv::floor_helper`), so they change
//! only at events (these are the spec's event-triggering functions). `abs`, `sign`, `min`,
//! `max` stay calls evaluated live: the specification expands `abs`/`sign` inside `noEvent`
//! and does not list `min`/`max` as event-triggering.
//!
//! This module holds the conversion driver [`convert`] and its state `Conv`; the conversion
//! itself is split by concept: `variables` (declarations, attributes, class corrections),
//! `derivatives` (`derivative`/`inverse` annotations), `expressions` (expressions and event
//! operators), `step_functions` (`$floorN` event helpers), `calls` (inlining, multi-output
//! calls), `equations`, `if_equations`, `when_equations`, `algorithms`, and `call_units`
//! (passes over the call units after conversion).

mod algorithms;
mod call_units;
mod calls;
mod derivatives;
mod equations;
mod expressions;
mod if_equations;
mod semilinear;
mod step_functions;
mod variables;
mod when_equations;

pub(crate) use variables::value_type;

use call_units::{group_call_outputs, output_sizes, split_differentiated_units};
use derivatives::inverse_annotations;
use variables::{bind_defined_inputs, make_when_assigned_discrete, protect_unit_outputs};

use crate::ir::{ExprId, VarIx};
use crate::model::{Model, SEq};
use moss_frontend::flat::{FlatModel, Origin};
use moss_syntax::Diagnostic;
use rustc_hash::FxHashMap as HashMap;

struct Conv<'a> {
    m: Model,
    flat: &'a FlatModel,
    errors: Vec<Diagnostic>,
    /// `floor(q)` helpers by argument: the discrete variable holding the value.
    floor_helpers: HashMap<ExprId, VarIx>,
    /// when-equations updating the helpers (appended to the model's equations).
    helper_eqs: Vec<SEq>,
    /// Input bindings of functions being inlined (innermost last).
    env: Vec<HashMap<String, ExprId>>,
    /// Calls of multi-output functions used inside expressions: the hidden variables holding
    /// their outputs (computed by one `Call` unit per distinct call).
    call_units: HashMap<ExprId, Vec<VarIx>>,
}

/// Build the working model from the flat model.
pub fn convert(flat: &FlatModel) -> Result<Model, Vec<Diagnostic>> {
    let mut c = Conv {
        m: Model {
            name: flat.name.clone(),
            ..Model::default()
        },
        flat,
        errors: Vec::new(),
        floor_helpers: HashMap::default(),
        helper_eqs: Vec::new(),
        env: Vec::new(),
        call_units: HashMap::default(),
    };
    c.collect_derivative_annotations();
    c.m.arena.finv = std::sync::Arc::new(inverse_annotations(&c.flat.functions));
    c.declare_variables();
    c.convert_attributes();
    c.m.eqs.reserve(flat.equations.len());
    let rewritten = semilinear::apply_zero_flow_rule(&flat.equations);
    for eq in rewritten.as_deref().unwrap_or(&flat.equations) {
        let mut out = Vec::new();
        c.equation(eq, &mut out);
        c.m.eqs.extend(out);
    }
    for eq in &flat.initial_equations {
        let mut out = Vec::new();
        c.equation(eq, &mut out);
        c.m.init_eqs.extend(out);
    }
    for alg in &flat.algorithms {
        let statements = c.sample_sources(&alg.statements, &alg.origin);
        let eq = c.algorithm(&statements, alg.origin.clone());
        c.m.eqs.push(eq);
        c.algorithm_event_sources(&statements, &alg.origin);
    }
    for alg in &flat.initial_algorithms {
        let eq = c.algorithm(&alg.statements, alg.origin.clone());
        c.m.init_eqs.push(eq);
    }
    let helpers = std::mem::take(&mut c.helper_eqs);
    c.m.eqs.extend(helpers);
    // after the equations: functions without a `derivative` annotation are inlined by
    // conversion where possible, which beats calling a generated derivative
    c.generate_function_derivatives();
    group_call_outputs(&mut c.m.eqs, &c.m.arena);
    let output_sizes = |func: &str| flat.functions.get(func).map(output_sizes);
    split_differentiated_units(&mut c.m, &output_sizes);
    make_when_assigned_discrete(&mut c.m);
    bind_defined_inputs(&mut c.m, &flat.sources);
    protect_unit_outputs(&mut c.m);
    if c.errors.is_empty() {
        Ok(c.m)
    } else {
        Err(c.errors)
    }
}

impl<'a> Conv<'a> {
    fn err(&mut self, origin: &Origin, msg: String, help: &str) {
        let mut d = Diagnostic::error(origin.span, msg);
        if !help.is_empty() {
            d = d.with_help(help.to_string());
        }
        self.errors.push(d);
    }

    fn lookup(&mut self, name: &str, o: &Origin) -> Option<VarIx> {
        let r = self.m.by_name.get(name).copied();
        if r.is_none() {
            self.err(
                o,
                format!("unknown variable `{name}` in the flat model"),
                "this is a frontend bug: every variable used must be declared",
            );
        }
        r
    }
}
