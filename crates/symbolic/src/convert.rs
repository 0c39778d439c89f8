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

use crate::ir::{ExprId, Node, Rel, VarIx};
use crate::model::{Effect, EqBody, Model, SEq, SVar, VKind, WhenBranch, WhenItem};
use crate::program::ValueType;
use moss_frontend::flat::{
    self, BinaryOp, Causality, Equation, FlatModel, Origin, ScalarType, StateSelect, Statement,
    UnaryOp, Variability,
};
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
    for eq in &flat.equations {
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

/// A unit `(o_0, o_1, ...) = f(args)` one of whose outputs appears differentiated
/// (`der(state.p)` with `state = setSmoothState(...)`) gives one equation
/// `o_k = CallOutput(f(args), k)` per scalar output: a unit has fixed causality and is never
/// differentiated, those equations are (index reduction, through the function's
/// derivative), and their outputs may be chosen as dummy states.
/// Differentiating such an output differentiates the call's arguments, so units computing
/// variables those arguments read are split as well. `CallOutput` selects a whole output,
/// so array outputs (a medium state's mass fractions `X`) stay in the unit, with the scalar
/// outputs left out of it; their elements are not differentiated.
fn split_differentiated_units(m: &mut Model, output_sizes: &dyn Fn(&str) -> Option<Vec<usize>>) {
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
fn output_sizes(f: &flat::Function) -> Vec<usize> {
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
fn group_call_outputs(eqs: &mut Vec<SEq>, arena: &crate::ir::Arena) {
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

/// A top-level input with a binding (`input Real u = sin(time)`) arrives as the equation
/// `u = ...`: such an input is computed by the model, i.e. an ordinary unknown. A connection
/// of the input (`connect(u, block.u)` gives `u = block.u`) has the same form but leaves the
/// input external; it is told apart by its origin, which is a `connect` statement.
fn bind_defined_inputs(m: &mut Model, sources: &moss_syntax::SourceMap) {
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
fn is_connect_origin(sources: &moss_syntax::SourceMap, span: moss_syntax::Span) -> bool {
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
fn protect_unit_outputs(m: &mut Model) {
    let mut outs = Vec::new();
    for eq in m.eqs.iter().chain(&m.init_eqs) {
        outs.extend(eq.fixed_outputs().unwrap_or_default());
    }
    for v in outs {
        m.vars[v as usize].protected_from_alias = true;
    }
}

/// Variables assigned inside `when` are discrete-time even when declared without `discrete`.
fn make_when_assigned_discrete(m: &mut Model) {
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

/// Does a (flat) equation contain `der(...)`?
fn contains_der(eq: &Equation) -> bool {
    let mut found = false;
    let mut e = eq.clone();
    moss_frontend::walk::equation_exprs_mut(&mut e, &mut |x| found |= expr_contains_der(x));
    found
}

/// Does a (flat) expression contain `der(...)`?
fn expr_contains_der(e: &flat::Expr) -> bool {
    let mut found = false;
    moss_frontend::walk::visit(e, &mut |y| {
        found |= matches!(y, flat::Expr::Call { func, .. } if func == "der");
    });
    found
}

/// Is `func` the `equalityConstraint` function of an overdetermined type or record (the
/// name the specification reserves for it)? With a `connect` as origin, the equation is the
/// residue of a loop of the connection graph.
fn is_equality_constraint(func: &str) -> bool {
    func.rsplit('.').next() == Some("equalityConstraint")
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

/// Does a `noDerivative`/`zeroDerivative` list name the function input `input`? A record
/// input is one flat input per field (`properties.rho`), and the annotation names the
/// record (`noDerivative = properties`): the name covers all its fields.
fn names_input(list: &[String], input: &str) -> bool {
    list.iter().any(|n| {
        input
            .strip_prefix(n.as_str())
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('.') || rest.starts_with('['))
    })
}

/// The inverses offered by the `inverse` annotations of `functions`, with the arguments of
/// each inverse call mapped to the original call's arguments (one flat argument per record
/// field, as calls are flattened) or its value. An entry is left out where the mapping
/// fails: a function with more than one output or a non-scalar one, an input that is not a
/// Real scalar, an argument that is not a formal of the function, an inverse input left
/// to its default.
fn inverse_annotations(
    functions: &std::collections::BTreeMap<String, moss_frontend::flat::Function>,
) -> HashMap<String, Vec<crate::ir::InverseFn>> {
    use crate::ir::{InverseArg, InverseFn};
    // the formal an input belongs to: `state` for `state.p`, `X` for `X[1]`
    fn formal(name: &str) -> &str {
        name.split(['.', '[']).next().unwrap_or(name)
    }
    let mut out: HashMap<String, Vec<InverseFn>> = HashMap::default();
    for f in functions.values() {
        let [output] = &f.outputs[..] else { continue };
        if output.ty != ScalarType::Real || !output.dims.is_empty() {
            continue;
        }
        for ann in &f.inverses {
            let Some(g) = functions.get(&ann.function) else {
                continue;
            };
            let Some(input) = f
                .inputs
                .iter()
                .position(|i| i.name == ann.input && i.ty == ScalarType::Real && i.dims.is_empty())
            else {
                continue;
            };
            // the inverse's inputs grouped by formal, in order
            let mut groups: Vec<(&str, Vec<usize>)> = Vec::new();
            for (k, gi) in g.inputs.iter().enumerate() {
                match groups.last_mut() {
                    Some((n, ks)) if *n == formal(&gi.name) => ks.push(k),
                    _ => groups.push((formal(&gi.name), vec![k])),
                }
            }
            let sources = |name: &str| -> Vec<InverseArg> {
                if name == output.name {
                    return vec![InverseArg::Output];
                }
                (0..f.inputs.len())
                    .filter(|&j| formal(&f.inputs[j].name) == name)
                    .map(InverseArg::Input)
                    .collect()
            };
            let mut args: Vec<Option<InverseArg>> = vec![None; g.inputs.len()];
            let mut ok = true;
            for (k, (named, name)) in ann.args.iter().enumerate() {
                let group = match named {
                    None => groups.get(k),
                    Some(n) => groups.iter().find(|(g, _)| g == n),
                };
                let src = sources(name);
                match group {
                    Some((_, slots)) if slots.len() == src.len() => {
                        for (&slot, s) in slots.iter().zip(src) {
                            args[slot] = Some(s);
                        }
                    }
                    _ => ok = false,
                }
            }
            let Some(args) = args.into_iter().collect::<Option<Vec<_>>>() else {
                continue;
            };
            if ok {
                out.entry(f.name.clone()).or_default().push(InverseFn {
                    input,
                    function: ann.function.clone(),
                    args,
                });
            }
        }
    }
    out
}

impl<'a> Conv<'a> {
    fn collect_derivative_annotations(&mut self) {
        let mut fder = HashMap::default();
        let mut second = Vec::new();
        // First derivatives of other functions: an annotation on them names the derivative
        // of the derivative, whose extra inputs are the derivatives of their `du` inputs
        // only (see `second_derivatives_declared_on_the_first`), whatever its `order` says.
        let firsts: std::collections::HashSet<&str> = self
            .flat
            .functions
            .values()
            .filter_map(|f| {
                let d = f.derivatives.iter().find(|d| d.order == 1)?;
                (d.function != f.name).then_some(d.function.as_str())
            })
            .collect();
        for (name, f) in &self.flat.functions {
            if firsts.contains(name.as_str()) {
                continue;
            }
            let Some(ann) = f.derivatives.iter().find(|d| d.order == 1) else {
                continue;
            };
            let mask: Vec<bool> = f
                .inputs
                .iter()
                .map(|i| {
                    i.ty == ScalarType::Real
                        && !names_input(&ann.no_derivative, &i.name)
                        && !names_input(&ann.zero_derivative, &i.name)
                })
                .collect();
            // `derivative(order=2) = f_der2`: the derivative of f_der(u, du) is
            // f_der2(u, du, ddu), i.e. only the `du` inputs get a new derivative argument
            if let Some(ann2) = f.derivatives.iter().find(|d| d.order == 2) {
                let n_du = mask.iter().filter(|&&b| b).count();
                let mask2 = vec![false; f.inputs.len()]
                    .into_iter()
                    .chain(std::iter::repeat_n(true, n_du))
                    .collect();
                second.push((ann.function.clone(), ann2.function.clone(), mask2));
            }
            fder.insert(name.clone(), (ann.function.clone(), mask));
        }
        for (f_der, f_der2, mask2) in second {
            fder.entry(f_der).or_insert((f_der2, mask2));
        }
        self.second_derivatives_declared_on_the_first(&mut fder);
        self.m.arena.late_inline = std::sync::Arc::new(crate::inline::late_inline_functions(
            &self.flat.functions,
            &fder,
        ));
        self.m.arena.fder = std::sync::Arc::new(fder);
    }

    /// Derivatives of the algorithm functions without a `derivative` annotation
    /// ([`crate::autodiff`]), registered with the annotated ones.
    fn generate_function_derivatives(&mut self) {
        let annotated = (*self.m.arena.fder).clone();
        let generated = crate::autodiff::generate_derivatives(&self.flat.functions, &annotated);
        let mut fder = annotated;
        fder.extend(generated.fder);
        self.m.arena.fder_outputs =
            std::sync::Arc::new(crate::autodiff::derivative_output_indices(
                &self.flat.functions,
                &generated.functions,
                &fder,
            ));
        self.m.arena.direction_args = std::sync::Arc::new(
            fder.values()
                .map(|(fd, mask)| (fd.clone(), mask.len()))
                .collect(),
        );
        self.m.arena.fder = std::sync::Arc::new(fder);
        self.m.arena.fder_zero_required = std::sync::Arc::new(generated.zero_required);
        self.m.arena.generated = std::sync::Arc::new(generated.functions);
    }

    /// Some libraries put `derivative(order=2) = f_der2` on the first derivative `f_der`
    /// itself rather than on `f`. Read that as the derivative of `f_der`: its inputs beyond
    /// those of `f` (the `du` arguments) get a derivative argument each.
    fn second_derivatives_declared_on_the_first(
        &self,
        fder: &mut HashMap<String, (String, Vec<bool>)>,
    ) {
        let firsts: Vec<(String, usize)> = self
            .flat
            .functions
            .values()
            .filter_map(|f| {
                let ann = f.derivatives.iter().find(|d| d.order == 1)?;
                Some((ann.function.clone(), f.inputs.len()))
            })
            .collect();
        for (f_der, n_original) in firsts {
            if fder.contains_key(&f_der) {
                continue;
            }
            let Some(fd) = self.flat.functions.get(&f_der) else {
                continue;
            };
            let Some(ann) = fd.derivatives.iter().min_by_key(|d| d.order) else {
                continue;
            };
            let mask: Vec<bool> = fd
                .inputs
                .iter()
                .enumerate()
                .map(|(i, inp)| {
                    i >= n_original
                        && inp.ty == ScalarType::Real
                        && !names_input(&ann.no_derivative, &inp.name)
                        && !names_input(&ann.zero_derivative, &inp.name)
                })
                .collect();
            fder.insert(f_der, (ann.function.clone(), mask));
        }
    }

    fn declare_variables(&mut self) {
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
    fn convert_attributes(&mut self) {
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

    /// Convert an expression. `no_event`: inside `noEvent`/`smooth`.
    fn expr(&mut self, e: &flat::Expr, o: &Origin, no_event: bool) -> ExprId {
        use flat::Expr as E;
        match e {
            E::Real(v) => self.m.arena.num(*v),
            E::Integer(v) => self.m.arena.num(*v as f64),
            E::Boolean(b) => self.m.arena.num(if *b { 1.0 } else { 0.0 }),
            E::String(s) => self.m.arena.intern(Node::Str(s.as_str().into())),
            E::Enum { index, .. } => self.m.arena.num(*index as f64),
            E::Var { name, .. } => {
                if let Some(&e) = self.env.last().and_then(|env| env.get(name)) {
                    return e;
                }
                let Some(v) = self.lookup(name, o) else {
                    return self.m.arena.zero();
                };
                self.var_ref(v, o)
            }
            E::Time => self.m.arena.intern(Node::Time),
            E::Unary { op, arg } => {
                let a = self.expr(arg, o, no_event);
                match op {
                    UnaryOp::Neg => self.m.arena.neg(a),
                    UnaryOp::Not => self.m.arena.not(a),
                }
            }
            E::Binary { op, lhs, rhs } => {
                let a = self.expr(lhs, o, no_event);
                let b = self.expr(rhs, o, no_event);
                self.binary(*op, a, b, no_event)
            }
            E::Call { func, args } => self.call(func, args, o, no_event),
            E::If { branches, else_ } => {
                if let Some(chosen) = self.structural_branch(branches, else_, o) {
                    return self.expr(chosen, o, no_event);
                }
                let mut acc = self.expr(else_, o, no_event);
                for (c, v) in branches.iter().rev() {
                    let c = self.expr(c, o, no_event);
                    let v = self.expr(v, o, no_event);
                    acc = self.m.arena.if_(c, v, acc);
                }
                acc
            }
            E::Array(items) => {
                let items: Vec<ExprId> = items.iter().map(|x| self.expr(x, o, no_event)).collect();
                self.m.arena.intern(Node::Array(items.into_boxed_slice()))
            }
            E::CallOutput { call, index } => {
                let c = self.expr(call, o, no_event);
                if let Some(v) = self.inlined_call_output(c, *index) {
                    return v;
                }
                // A call of parameters only (a record parameter bound to a function, one
                // binding per field) is read where the parameters are computed: a hidden
                // variable would be solved with the equations, after the parameter blocks
                // that read it, which would see it still zero.
                if self.m.is_parameter_expr(c) {
                    return self.m.arena.intern(Node::CallOutput(c, *index as u32));
                }
                match self.call_output_var(c, *index, o) {
                    Some(v) => self.m.arena.var(v),
                    None => self.m.arena.intern(Node::CallOutput(c, *index as u32)),
                }
            }
            E::Range { .. } | E::Tuple(_) => {
                self.err(
                    o,
                    "a range or output list cannot appear in a model equation here".into(),
                    "",
                );
                self.m.arena.zero()
            }
        }
    }

    /// The branch of an if-expression whose branches contain derivatives, when its
    /// conditions are parameter expressions (see [`Conv::structural_condition`]). Only the
    /// chosen branch is converted, so the others create no derivative variables.
    fn structural_branch<'e>(
        &mut self,
        branches: &'e [(flat::Expr, flat::Expr)],
        else_: &'e flat::Expr,
        o: &Origin,
    ) -> Option<&'e flat::Expr> {
        if !branches.iter().any(|(_, v)| expr_contains_der(v)) && !expr_contains_der(else_) {
            return None;
        }
        for (c, v) in branches {
            let c = self.expr(c, o, false);
            let c = self.structural_condition(c);
            match self.m.arena.as_const(c) {
                Some(0.0) => continue,
                Some(_) => return Some(v),
                None => return None,
            }
        }
        Some(else_)
    }

    /// A condition that selects between branches with different derivatives decides the
    /// structure of the model (which variables are states), so it must be known at
    /// translation time: a condition on parameters is evaluated from their bindings (as for
    /// parameters declared with `Evaluate=true`, e.g. `use_fder` of the adaptors). Other
    /// conditions are returned unchanged.
    fn structural_condition(&mut self, c: ExprId) -> ExprId {
        if self.m.arena.as_const(c).is_some() {
            return c;
        }
        match self.parameter_value(c) {
            Some(x) => self.m.arena.num(x),
            None => c,
        }
    }

    /// The value of an expression of parameters and constants, from their bindings.
    fn parameter_value(&mut self, e: ExprId) -> Option<f64> {
        let mut cur = e;
        for _ in 0..32 {
            if let Some(x) = self.m.arena.as_const(cur) {
                return Some(x);
            }
            let mut vs = Vec::new();
            self.m.arena.vars_of(cur, false, &mut vs);
            let all_bound = vs.iter().all(|&v| {
                let sv = &self.m.vars[v as usize];
                matches!(sv.kind, VKind::Parameter | VKind::Constant)
                    && sv.fixed != Some(false)
                    && sv.binding.is_some()
            });
            if !all_bound || vs.is_empty() {
                return None;
            }
            let vars = &self.m.vars;
            let mut memo = HashMap::default();
            cur = self.m.arena.substitute(
                cur,
                &mut |_, n| match n {
                    Node::Var(v) => vars[*v as usize].binding,
                    _ => None,
                },
                false,
                &mut memo,
            );
        }
        None
    }

    /// A variable reference: constants with literal values fold to numbers.
    fn var_ref(&mut self, v: VarIx, _o: &Origin) -> ExprId {
        let sv = &self.m.vars[v as usize];
        if sv.kind == VKind::Constant {
            if let Some(b) = sv.binding {
                if self.m.arena.as_const(b).is_some() {
                    return b;
                }
            }
        }
        self.m.arena.var(v)
    }

    fn binary(&mut self, op: BinaryOp, a: ExprId, b: ExprId, no_event: bool) -> ExprId {
        let ar = &mut self.m.arena;
        match op {
            BinaryOp::Add | BinaryOp::ElemAdd => ar.add(a, b),
            BinaryOp::Sub | BinaryOp::ElemSub => ar.sub(a, b),
            BinaryOp::Mul | BinaryOp::ElemMul => ar.mul(a, b),
            BinaryOp::Div | BinaryOp::ElemDiv => ar.div(a, b),
            BinaryOp::Pow | BinaryOp::ElemPow => ar.pow(a, b),
            BinaryOp::And => ar.and(a, b),
            BinaryOp::Or => ar.or(a, b),
            BinaryOp::Lt => self.relation(Rel::Lt, a, b, no_event),
            BinaryOp::Le => self.relation(Rel::Le, a, b, no_event),
            BinaryOp::Gt => self.relation(Rel::Gt, a, b, no_event),
            BinaryOp::Ge => self.relation(Rel::Ge, a, b, no_event),
            BinaryOp::Eq => self.relation(Rel::Eq, a, b, no_event),
            BinaryOp::Ne => self.relation(Rel::Ne, a, b, no_event),
        }
    }

    fn relation(&mut self, op: Rel, a: ExprId, b: ExprId, no_event: bool) -> ExprId {
        let event = !no_event && (self.is_continuous(a) || self.is_continuous(b));
        self.m.arena.rel(op, a, b, event)
    }

    /// Does `e` vary continuously in time (contains `time` or a continuous variable)?
    fn is_continuous(&mut self, e: ExprId) -> bool {
        let vars = &self.m.vars;
        self.m.arena.any_node(e, &mut |n| match n {
            Node::Time => true,
            Node::Var(v) => matches!(vars[*v as usize].kind, VKind::Continuous | VKind::Input),
            _ => false,
        })
    }

    /// The literal names of an enumeration-typed variable reference.
    fn enumeration_literals(&self, e: &flat::Expr) -> Option<Vec<std::sync::Arc<str>>> {
        let flat::Expr::Var { name, subscripts } = e else {
            return None;
        };
        if !subscripts.is_empty() {
            return None;
        }
        let v = self.flat.variables.iter().find(|v| &v.name == name)?;
        match &v.ty {
            ScalarType::Enumeration { literals, .. } => Some(literals.clone()),
            _ => None,
        }
    }

    /// `String(e)` of an enumeration variable is its literal's name (spec 4.9.5.2); at run
    /// time a value is only its index, so the names are chosen by an if-expression over
    /// the indices. Options (`minimumLength`, `leftJustified`) pad the chosen name.
    fn enumeration_to_string(&mut self, args: &[flat::Expr], o: &Origin, no_event: bool) -> ExprId {
        let literals = self.enumeration_literals(&args[0]).unwrap_or_default();
        let e = self.expr(&args[0], o, true);
        let mut acc = self.m.arena.str("");
        for (i, name) in literals.iter().enumerate().rev() {
            let index = self.m.arena.num((i + 1) as f64);
            let is = self.m.arena.rel(Rel::Eq, e, index, false);
            let text = self.m.arena.str(name);
            acc = self.m.arena.if_(is, text, acc);
        }
        if args.len() == 1 {
            return acc;
        }
        let mut rest: Vec<ExprId> = vec![acc];
        rest.extend(args[1..].iter().map(|a| self.expr(a, o, no_event)));
        self.m.arena.call("String", rest)
    }

    fn call(&mut self, func: &str, args: &[flat::Expr], o: &Origin, no_event: bool) -> ExprId {
        let arity_ok = |n: usize| args.len() == n;
        match func {
            "der" if arity_ok(1) => {
                let a = self.expr(&args[0], o, no_event);
                if let Node::Var(v) = *self.m.arena.node(a) {
                    if self.m.vars[v as usize].kind == VKind::Continuous {
                        let d = self.m.der_var(v);
                        return self.m.arena.var(d);
                    }
                }
                match self.m.diff_time(a) {
                    Ok(d) => d,
                    Err(f) => {
                        self.no_derivative(&f, o);
                        self.m.arena.zero()
                    }
                }
            }
            "pre" if arity_ok(1) => {
                let a = self.expr(&args[0], o, no_event);
                self.pre_of(a, o)
            }
            "String" if self.enumeration_literals(&args[0]).is_some() => {
                self.enumeration_to_string(args, o, no_event)
            }
            "edge" if arity_ok(1) => {
                let a = self.expr(&args[0], o, no_event);
                let p = self.pre_of(a, o);
                let np = self.m.arena.not(p);
                self.m.arena.and(a, np)
            }
            "change" if arity_ok(1) => {
                let a = self.expr(&args[0], o, no_event);
                let p = self.pre_of(a, o);
                self.m.arena.rel(Rel::Ne, a, p, false)
            }
            "initial" => self.m.arena.intern(Node::Initial),
            "terminal" => self.m.arena.intern(Node::Terminal),
            "sample" if arity_ok(2) => {
                let s = self.expr(&args[0], o, true);
                let i = self.expr(&args[1], o, true);
                let id = self.m.samples.len() as u32;
                self.m.samples.push((s, i));
                self.m.arena.intern(Node::Sample(id))
            }
            "noEvent" if arity_ok(1) => self.expr(&args[0], o, true),
            "smooth" if arity_ok(2) => self.expr(&args[1], o, true),
            "semiLinear" if arity_ok(3) => {
                let x = self.expr(&args[0], o, no_event);
                let a = self.expr(&args[1], o, no_event);
                let b = self.expr(&args[2], o, no_event);
                let zero = self.m.arena.zero();
                // spec 3.7.4.1: `smooth(0, if x >= 0 then x*a else x*b)`, continuous in `x`,
                // so no event at `x = 0` (as for `smooth` above): at a flow reversal an event
                // would only stop the integration, and a flow that hovers around zero (a
                // stream port's mass flow at rest) makes it chatter.
                let c = self.relation(Rel::Ge, x, zero, true);
                let ax = self.m.arena.mul(a, x);
                let bx = self.m.arena.mul(b, x);
                self.m.arena.if_(c, ax, bx)
            }
            _ => {
                let a: Vec<ExprId> = args.iter().map(|x| self.expr(x, o, no_event)).collect();
                // a function with an `inverse` annotation stays a call, so that an equation
                // solved for one of its inputs can use the inverse (`solve`)
                if self.m.arena.finv.contains_key(func) {
                    return self.m.arena.call(func, a);
                }
                if let Some(e) = self.inline_call(func, &a, o, no_event) {
                    return e;
                }
                // functions with a `derivative` annotation keep their call through index
                // reduction and are inlined after it
                if !self.m.arena.fder.contains_key(func) {
                    if let Some(e) = crate::inline::inline_call(
                        &mut self.m.arena,
                        &self.flat.functions,
                        func,
                        &a,
                    ) {
                        return e;
                    }
                }
                if !no_event && crate::ir::STEP_FUNCTIONS.contains(&func) {
                    if let Some(e) = self.step_function_with_events(func, &a, o) {
                        return e;
                    }
                }
                self.m.arena.call(func, a)
            }
        }
    }

    /// Inline a call of a function whose body is the single statement `output := expr` over
    /// scalar inputs (e.g. `Modelica.Math.sin`): the expression is converted with the
    /// inputs bound to the arguments, so differentiation and solving see through it. As in
    /// a function body, relations of the inlined expression do not generate events.
    fn inline_call(
        &mut self,
        func: &str,
        a: &[ExprId],
        o: &Origin,
        no_event: bool,
    ) -> Option<ExprId> {
        const MAX_INLINE_DEPTH: usize = 16;
        if self.env.len() >= MAX_INLINE_DEPTH {
            return None;
        }
        let f = self.flat.functions.get(func)?;
        let body = single_output_expression(f)?;
        if f.inputs.len() != a.len() {
            return None;
        }
        let env: HashMap<String, ExprId> = f
            .inputs
            .iter()
            .zip(a)
            .map(|(i, &e)| (i.name.clone(), e))
            .collect();
        self.env.push(env);
        // relations inside functions never generate events
        let _ = no_event;
        let e = self.expr(body, o, true);
        self.env.pop();
        Some(e)
    }

    /// Output `index` of a call of a known multi-output function, as a hidden variable
    /// computed by a `(o1, o2, ...) = f(args)` unit shared by all uses of the same call.
    fn call_output_var(&mut self, c: ExprId, index: usize, o: &Origin) -> Option<VarIx> {
        if let Some(vs) = self.call_units.get(&c) {
            return vs.get(index).copied();
        }
        let Node::Call(func, args) = self.m.arena.node(c).clone() else {
            return None;
        };
        let f = self.flat.functions.get(&*func)?;
        if index >= f.outputs.len() || f.outputs.iter().any(|out| !out.dims.is_empty()) {
            return None;
        }
        let k = self.call_units.len() + 1;
        let mut vars = Vec::new();
        for out in &f.outputs {
            let ty = value_type(&out.ty);
            let kind = if ty == ValueType::Real {
                VKind::Continuous
            } else {
                VKind::Discrete
            };
            let mut sv = SVar::new(format!("$call{k}.{}", out.name), kind, ty);
            sv.hidden = true;
            sv.protected_from_alias = true;
            sv.origin = o.clone();
            sv.description = format!("output {} of {}", out.name, func);
            vars.push(self.m.add_var(sv));
        }
        self.helper_eqs.push(SEq::new(
            EqBody::Call {
                outputs: vars.iter().map(|&v| Some(v)).collect(),
                func: func.to_string(),
                args: args.to_vec(),
            },
            o.clone(),
        ));
        self.call_units.insert(c, vars.clone());
        vars.get(index).copied()
    }

    /// Step functions of continuous arguments change only at events: they are rewritten in
    /// terms of `floor` helpers (`ceil(e) = -floor(-e)`, `div(x, y) = trunc(x/y)`,
    /// `mod(x, y) = x - floor(x/y)*y`, `rem(x, y) = x - div(x, y)*y`), see
    /// [`Conv::floor_helper`]. Returns `None` when the arguments are not continuous.
    fn step_function_with_events(
        &mut self,
        func: &str,
        a: &[ExprId],
        o: &Origin,
    ) -> Option<ExprId> {
        if !a.iter().any(|&x| self.is_continuous(x)) {
            return None;
        }
        fn ar<'c>(c: &'c mut Conv<'_>) -> &'c mut crate::ir::Arena {
            &mut c.m.arena
        }
        match (func, a.len()) {
            ("floor", 1) | ("integer", 1) | ("Integer", 1) => Some(self.floor_helper(a[0], o)),
            ("ceil", 1) => {
                let q = ar(self).neg(a[0]);
                let h = self.floor_helper(q, o);
                Some(ar(self).neg(h))
            }
            ("div", 2) => Some(self.trunc_div(a[0], a[1], o)),
            ("mod", 2) => {
                let q = ar(self).div(a[0], a[1]);
                let h = self.floor_helper(q, o);
                let hy = ar(self).mul(h, a[1]);
                Some(ar(self).sub(a[0], hy))
            }
            ("rem", 2) => {
                let d = self.trunc_div(a[0], a[1], o);
                let dy = ar(self).mul(d, a[1]);
                Some(ar(self).sub(a[0], dy))
            }
            _ => None,
        }
    }

    /// `trunc(x/y)` = `if x/y >= 0 then floor(x/y) else -floor(-x/y)`.
    fn trunc_div(&mut self, x: ExprId, y: ExprId, o: &Origin) -> ExprId {
        let q = self.m.arena.div(x, y);
        let zero = self.m.arena.zero();
        let c = self.m.arena.rel(Rel::Ge, q, zero, true);
        let hp = self.floor_helper(q, o);
        let nq = self.m.arena.neg(q);
        let hn = self.floor_helper(nq, o);
        let nhn = self.m.arena.neg(hn);
        self.m.arena.if_(c, hp, nhn)
    }

    /// A discrete Integer `$floorN` holding `floor(q)`, updated only at events by
    /// `when {initial(), not initial() and q < pre(h), not initial() and q >= pre(h) + 1}
    /// then h = floor(q); end when`. During initialization `pre(h)` is still the start value,
    /// so the range conditions are held false there: otherwise one would be true already at
    /// initialization and, when `q` moves at the first event (a delayed or discrete argument
    /// settling after initialization), there would be no rising edge to update `h`.
    fn floor_helper(&mut self, q: ExprId, o: &Origin) -> ExprId {
        if let Some(&h) = self.floor_helpers.get(&q) {
            return self.m.arena.var(h);
        }
        let k = self.floor_helpers.len() + 1;
        let mut sv = SVar::new(format!("$floor{k}"), VKind::Discrete, ValueType::Integer);
        sv.hidden = true;
        sv.protected_from_alias = true;
        sv.origin = o.clone();
        sv.description = format!("floor({}) updated at events", self.m.text(q));
        let h = self.m.add_var(sv);
        self.floor_helpers.insert(q, h);
        let a = &mut self.m.arena;
        let pre_h = a.intern(Node::Pre(h));
        let one = a.one();
        let upper = a.add(pre_h, one);
        let init = a.intern(Node::Initial);
        let not_init = a.not(init);
        let below = a.rel(Rel::Lt, q, pre_h, true);
        let below = a.and(not_init, below);
        let above = a.rel(Rel::Ge, q, upper, true);
        let above = a.and(not_init, above);
        let value = a.call("floor", vec![q]);
        self.helper_eqs.push(SEq::new(
            EqBody::When(vec![WhenBranch {
                conds: vec![init, below, above],
                slots: Vec::new(),
                initial: true,
                items: vec![WhenItem::Assign {
                    var: h,
                    expr: value,
                }],
            }]),
            o.clone(),
        ));
        self.m.arena.var(h)
    }

    fn pre_of(&mut self, a: ExprId, o: &Origin) -> ExprId {
        match *self.m.arena.node(a) {
            Node::Var(v) => self.m.arena.intern(Node::Pre(v)),
            Node::Const(_) => a,
            _ => {
                self.err(
                    o,
                    "`pre`, `edge` and `change` need a variable as argument".into(),
                    "introduce a variable for the expression and apply the operator to it",
                );
                a
            }
        }
    }

    fn no_derivative(&mut self, e: &crate::ir::DiffError, o: &Origin) {
        self.err(
            o,
            format!("cannot differentiate this expression: {e}"),
            "add `annotation(derivative = ...)` to the function, or avoid `der` of its result",
        );
    }

    /// Convert one equation into zero or more working equations.
    fn equation(&mut self, eq: &Equation, out: &mut Vec<SEq>) {
        match eq {
            Equation::Equal { lhs, rhs, origin } => self.equal(lhs, rhs, origin, out),
            Equation::If {
                branches,
                else_,
                origin,
            } => self.if_equation(branches, else_, origin, out),
            Equation::When { branches, origin } => {
                let mut bs = Vec::new();
                for (c, body) in branches {
                    let cond = self.expr(c, origin, false);
                    let conds = match self.m.arena.node(cond) {
                        Node::Array(items) => items.to_vec(),
                        _ => vec![cond],
                    };
                    let initial = conds.iter().any(|&c| enabled_by_initial(&self.m.arena, c));
                    let mut items = Vec::new();
                    for e in body {
                        self.when_item(e, &mut items);
                    }
                    bs.push(WhenBranch {
                        conds,
                        slots: Vec::new(),
                        initial,
                        items,
                    });
                }
                for b in &bs {
                    for it in &b.items {
                        if let WhenItem::Assign { var, .. } | WhenItem::Reinit { var, .. } = it {
                            self.m.vars[*var as usize].protected_from_alias = true;
                        }
                    }
                }
                out.push(SEq::new(EqBody::When(bs), origin.clone()));
            }
            Equation::Reinit { origin, .. } => self.err(
                origin,
                "`reinit` is only allowed inside a `when` equation".into(),
                "put the reinit into `when condition then ... end when`",
            ),
            Equation::Assert {
                condition,
                message,
                level,
                origin,
            } => {
                let cond = self.expr(condition, origin, true);
                let msg = self.expr(message, origin, true);
                out.push(SEq::new(
                    EqBody::Effect(Effect::Assert {
                        cond,
                        msg,
                        level: *level,
                    }),
                    origin.clone(),
                ));
            }
            Equation::Terminate { message, origin } => {
                let msg = self.expr(message, origin, true);
                out.push(SEq::new(
                    EqBody::Effect(Effect::Terminate { msg }),
                    origin.clone(),
                ));
            }
            Equation::Call { func, args, origin } => {
                let args = args.iter().map(|a| self.expr(a, origin, true)).collect();
                out.push(SEq::new(
                    EqBody::Effect(Effect::Call {
                        func: func.clone(),
                        args,
                    }),
                    origin.clone(),
                ));
            }
        }
    }

    fn equal(&mut self, lhs: &flat::Expr, rhs: &flat::Expr, o: &Origin, out: &mut Vec<SEq>) {
        /// The variables `v` of targets that are all `pre(v)`.
        fn pre_targets(items: &[flat::Expr]) -> Option<Vec<String>> {
            items
                .iter()
                .map(|i| match i {
                    flat::Expr::Call { func, args } if func == "pre" => match args.as_slice() {
                        [flat::Expr::Var { name, subscripts }] if subscripts.is_empty() => {
                            Some(name.clone())
                        }
                        _ => None,
                    },
                    _ => None,
                })
                .collect()
        }
        use flat::Expr as E;
        match (lhs, rhs) {
            (E::Tuple(targets), E::Call { func, args }) => {
                let args: Vec<ExprId> = args.iter().map(|a| self.expr(a, o, false)).collect();
                if self.inlined_tuple(targets, func, &args, o, out) {
                    return;
                }
                let Some(outputs) = self.tuple_outputs(func, targets, o) else {
                    return;
                };
                out.push(SEq::new(
                    EqBody::Call {
                        outputs,
                        func: func.clone(),
                        args,
                    },
                    o.clone(),
                ));
            }
            (E::Array(items), E::Call { func, args }) if self.flat.functions.contains_key(func) => {
                let args: Vec<ExprId> = args.iter().map(|a| self.expr(a, o, false)).collect();
                if let Some(value) = self.inline_array_value(func, &args, o, out) {
                    let first = out.len();
                    self.equal_elements(items, value, o, out);
                    if is_equality_constraint(func) && is_connect_origin(&self.flat.sources, o.span)
                    {
                        for eq in &mut out[first..] {
                            eq.loop_residue = true;
                        }
                    }
                    return;
                }
                if let Some(vars) = pre_targets(items) {
                    // `pre(state) = f(...)` in an initial equation: the call determines the
                    // pre values (unknowns of the initialization problem of their own)
                    let outputs = vars.iter().map(|n| self.lookup(n, o)).collect();
                    let mut eq = SEq::new(
                        EqBody::Call {
                            outputs,
                            func: func.clone(),
                            args,
                        },
                        o.clone(),
                    );
                    eq.pre_outputs = true;
                    out.push(eq);
                    return;
                }
                if !items.iter().all(|i| matches!(i, E::Var { .. })) {
                    return self.err(
                        o,
                        format!("cannot solve this equation for the arguments of `{func}`: its array result is equated to expressions that are not variables, which needs the function inlined, but the body of `{func}` cannot be inlined"),
                        "write the function body with assignments, if-statements, for loops over constant ranges and asserts (no while loops or external calls), or write the equations element by element without the function",
                    );
                }
                let outputs = items
                    .iter()
                    .map(|t| match t {
                        E::Var { name, .. } => self.lookup(name, o),
                        _ => None,
                    })
                    .collect();
                out.push(SEq::new(
                    EqBody::Call {
                        outputs,
                        func: func.clone(),
                        args,
                    },
                    o.clone(),
                ));
            }
            (E::Array(a), E::Array(b)) if a.len() == b.len() => {
                for (x, y) in a.iter().zip(b) {
                    self.equal(x, y, o, out);
                }
            }
            _ => {
                let l = self.expr(lhs, o, false);
                let r = self.expr(rhs, o, false);
                out.push(SEq::new(EqBody::Eq { lhs: l, rhs: r }, o.clone()));
            }
        }
    }

    /// `(a, b) = f(x)` with `f` inlined: one equation per output (per element for arrays),
    /// so the outputs need not be computed by the call (as `v = p.v - n.v` of complex
    /// numbers, whose `v` other equations determine). False (nothing emitted) when `f` is not
    /// inlinable or the targets do not match the outputs' shapes.
    fn inlined_tuple(
        &mut self,
        targets: &[Option<flat::Expr>],
        func: &str,
        args: &[ExprId],
        o: &Origin,
        out: &mut Vec<SEq>,
    ) -> bool {
        use crate::array_ops::is_array;
        if self.m.arena.fder.contains_key(func) {
            return false;
        }
        let Some((values, asserts)) =
            crate::inline::inline_outputs(&mut self.m.arena, &self.flat.functions, func, args)
        else {
            return false;
        };
        let fits = targets.len() <= values.len()
            && targets.iter().zip(&values).all(|(t, &v)| match t {
                Some(flat::Expr::Array(_)) => is_array(&self.m.arena, v),
                Some(_) => !is_array(&self.m.arena, v),
                None => true,
            });
        if !fits {
            return false;
        }
        self.push_asserts(asserts, o, out);
        for (t, v) in targets.iter().zip(values) {
            match t {
                Some(flat::Expr::Array(items)) => self.equal_elements(items, v, o, out),
                Some(t) => {
                    let l = self.expr(t, o, false);
                    out.push(SEq::new(EqBody::Eq { lhs: l, rhs: v }, o.clone()));
                }
                None => {}
            }
        }
        true
    }

    /// Asserts of an inlined function body, as asserts of the model.
    fn push_asserts(
        &mut self,
        asserts: Vec<crate::inline::InlinedAssert>,
        o: &Origin,
        out: &mut Vec<SEq>,
    ) {
        for a in asserts {
            let effect = Effect::Assert {
                cond: a.cond,
                msg: a.msg,
                level: a.level,
            };
            out.push(SEq::new(EqBody::Effect(effect), o.clone()));
        }
    }

    /// Output `index` of the call `c` with the function inlined (an array literal for an
    /// array output); only for bodies without asserts (the call may be used in several
    /// places).
    fn inlined_call_output(&mut self, c: ExprId, index: usize) -> Option<ExprId> {
        let Node::Call(func, args) = self.m.arena.node(c).clone() else {
            return None;
        };
        if self.m.arena.fder.contains_key(&*func) {
            return None;
        }
        let (values, asserts) =
            crate::inline::inline_outputs(&mut self.m.arena, &self.flat.functions, &func, &args)?;
        if !asserts.is_empty() {
            return None;
        }
        // an array output is only used whole, as the argument of another call
        values.get(index).copied()
    }

    /// The array value of `func(args)` with the function inlined, unless the function keeps
    /// its calls for a `derivative` annotation (index reduction differentiates those).
    /// The asserts of the body become asserts of the model.
    fn inline_array_value(
        &mut self,
        func: &str,
        args: &[ExprId],
        o: &Origin,
        out: &mut Vec<SEq>,
    ) -> Option<ExprId> {
        if self.m.arena.fder.contains_key(func) {
            return None;
        }
        let (value, asserts) =
            crate::inline::inline_array_call(&mut self.m.arena, &self.flat.functions, func, args)?;
        self.push_asserts(asserts, o, out);
        Some(value)
    }

    /// `{x1, x2, ...} = value` for an array literal `value` of the same shape: one scalar
    /// equation per element. Residues such as `{0, 0} = f(a, b)` so become implicit equations
    /// in the variables of `a` and `b`.
    fn equal_elements(
        &mut self,
        items: &[flat::Expr],
        value: ExprId,
        o: &Origin,
        out: &mut Vec<SEq>,
    ) {
        let values = crate::array_ops::items(&self.m.arena, value).unwrap_or_default();
        if values.len() != items.len() {
            return self.err(
                o,
                format!(
                    "the two sides of this equation have different sizes ({} and {})",
                    items.len(),
                    values.len()
                ),
                "make the array on the left as large as the function's output",
            );
        }
        for (x, v) in items.iter().zip(values) {
            match (x, crate::array_ops::is_array(&self.m.arena, v)) {
                (flat::Expr::Array(inner), true) => self.equal_elements(inner, v, o, out),
                (flat::Expr::Array(_), false) | (_, true) => {
                    return self.err(
                        o,
                        "the two sides of this equation have different numbers of dimensions"
                            .into(),
                        "make the array on the left match the shape of the function's output",
                    )
                }
                (x, false) => {
                    let l = self.expr(x, o, false);
                    out.push(SEq::new(EqBody::Eq { lhs: l, rhs: v }, o.clone()));
                }
            }
        }
    }

    /// if-equation: a branch with a constant condition is taken directly; otherwise every
    /// branch must have the same number of scalar equations, and equation k becomes
    /// `0 = if c1 then r1k elseif ... else rek` (or `v = if ...` when all branches assign the
    /// same variable `v`).
    fn if_equation(
        &mut self,
        branches: &[(flat::Expr, Vec<Equation>)],
        else_: &[Equation],
        o: &Origin,
        out: &mut Vec<SEq>,
    ) {
        let mut conds = Vec::new();
        let mut bodies: Vec<Vec<SEq>> = Vec::new();
        let structural = branches.iter().any(|(_, b)| b.iter().any(contains_der))
            || else_.iter().any(contains_der);
        for (c, body) in branches {
            let mut c = self.expr(c, o, false);
            if structural {
                c = self.structural_condition(c);
            }
            match self.m.arena.as_const(c) {
                Some(0.0) => continue,
                Some(_) => {
                    let mut eqs = Vec::new();
                    for e in body {
                        self.equation(e, &mut eqs);
                    }
                    if conds.is_empty() {
                        out.extend(eqs);
                        return;
                    }
                    // constant-true condition after variable ones acts as the else branch
                    bodies.push(eqs);
                    return self.combine_if(conds, bodies, o, out);
                }
                None => {}
            }
            let mut eqs = Vec::new();
            for e in body {
                self.equation(e, &mut eqs);
            }
            conds.push(c);
            bodies.push(eqs);
        }
        let mut eqs = Vec::new();
        for e in else_ {
            self.equation(e, &mut eqs);
        }
        if conds.is_empty() {
            out.extend(eqs);
            return;
        }
        bodies.push(eqs);
        self.combine_if(conds, bodies, o, out)
    }

    /// When every branch assigns the same variables (`v = ...`), each in its own order, the
    /// equations are put in the first branch's order, so that equation k of the combined
    /// if-equation determines one variable instead of coupling several (a clocked counter
    /// written `if c then n = ...; b = ...; else b = ...; n = ...; end if`).
    fn align_branches_by_lhs(&self, bodies: Vec<Vec<SEq>>) -> Vec<Vec<SEq>> {
        let lhs_of = |e: &SEq| match &e.body {
            EqBody::Eq { lhs, .. } if matches!(self.m.arena.node(*lhs), Node::Var(_)) => Some(*lhs),
            _ => None,
        };
        let order: Option<Vec<ExprId>> = bodies[0].iter().map(lhs_of).collect();
        let Some(order) = order else { return bodies };
        let distinct: std::collections::HashSet<ExprId> = order.iter().copied().collect();
        if distinct.len() != order.len() {
            return bodies;
        }
        // position in the first branch's order of each equation of every branch
        let mut perms: Vec<Vec<usize>> = Vec::with_capacity(bodies.len());
        for body in &bodies {
            let mut perm = Vec::with_capacity(body.len());
            let mut seen = vec![false; order.len()];
            for e in body {
                let k = lhs_of(e).and_then(|l| order.iter().position(|o| *o == l));
                match k {
                    Some(k) if !seen[k] => {
                        seen[k] = true;
                        perm.push(k);
                    }
                    // a branch that does not assign the same variables: keep the written order
                    _ => return bodies,
                }
            }
            perms.push(perm);
        }
        bodies
            .into_iter()
            .zip(perms)
            .map(|(body, perm)| {
                let mut slots: Vec<Option<SEq>> = vec![None; perm.len()];
                for (e, k) in body.into_iter().zip(perm) {
                    slots[k] = Some(e);
                }
                slots.into_iter().flatten().collect()
            })
            .collect()
    }

    /// Asserts are no equations (spec 8.3.4 counts equations, 8.3.7 makes `assert` a
    /// check): each one leaves its branch as an assert of its own whose condition holds
    /// trivially while another branch is active, `if c1 then true elseif c2 then cond
    /// else true` for one in the second branch. The remaining bodies are returned.
    fn guard_branch_asserts(
        &mut self,
        conds: &[ExprId],
        bodies: Vec<Vec<SEq>>,
        out: &mut Vec<SEq>,
    ) -> Vec<Vec<SEq>> {
        let mut kept = Vec::with_capacity(bodies.len());
        for (i, body) in bodies.into_iter().enumerate() {
            let mut eqs = Vec::with_capacity(body.len());
            for mut e in body {
                let EqBody::Effect(Effect::Assert { cond, .. }) = &mut e.body else {
                    eqs.push(e);
                    continue;
                };
                let one = self.m.arena.one();
                // the else branch (index conds.len()) is active when no condition holds
                let mut acc = if i == conds.len() { *cond } else { one };
                for (j, &c) in conds.iter().enumerate().rev() {
                    let then = if j == i { *cond } else { one };
                    acc = self.m.arena.if_(c, then, acc);
                }
                *cond = acc;
                out.push(e);
            }
            kept.push(eqs);
        }
        kept
    }

    fn combine_if(
        &mut self,
        conds: Vec<ExprId>,
        bodies: Vec<Vec<SEq>>,
        o: &Origin,
        out: &mut Vec<SEq>,
    ) {
        let bodies = self.guard_branch_asserts(&conds, bodies, out);
        let counts: Vec<usize> = bodies.iter().map(|b| b.len()).collect();
        if counts.iter().any(|&c| c != counts[0]) {
            let list = counts
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(", ");
            self.err(
                o,
                format!("the branches of this if-equation have different numbers of equations ({list})"),
                "every branch (including `else`) must contain the same number of equations unless the condition is a parameter expression",
            );
            return;
        }
        let bodies = self.align_branches_by_lhs(bodies);
        for k in 0..counts[0] {
            let mut lhs_var: Option<ExprId> = None;
            let mut same_lhs = true;
            let mut parts = Vec::new();
            for b in &bodies {
                match &b[k].body {
                    EqBody::Eq { lhs, rhs } => {
                        if matches!(self.m.arena.node(*lhs), Node::Var(_))
                            && lhs_var.is_none_or(|l| l == *lhs)
                        {
                            lhs_var = Some(*lhs);
                        } else {
                            same_lhs = false;
                        }
                        parts.push((*lhs, *rhs));
                    }
                    _ => {
                        self.err(
                            o,
                            "only plain equations are supported inside if-equations with non-parameter conditions".into(),
                            "move when-equations, asserts and function calls with several outputs out of the if-equation",
                        );
                        return;
                    }
                }
            }
            let (lhs, rhs) = match (same_lhs, lhs_var) {
                (true, Some(l)) => {
                    let mut acc = parts[parts.len() - 1].1;
                    for (i, &c) in conds.iter().enumerate().rev() {
                        acc = self.m.arena.if_(c, parts[i].1, acc);
                    }
                    (l, acc)
                }
                _ => {
                    let residual = |m: &mut Model, (l, r): (ExprId, ExprId)| m.arena.sub(l, r);
                    let mut acc = residual(&mut self.m, parts[parts.len() - 1]);
                    for (i, &c) in conds.iter().enumerate().rev() {
                        let r = residual(&mut self.m, parts[i]);
                        acc = self.m.arena.if_(c, r, acc);
                    }
                    (self.m.arena.zero(), acc)
                }
            };
            out.push(SEq::new(EqBody::Eq { lhs, rhs }, o.clone()));
        }
    }

    /// The variables a tuple `(t1, t2, ...) = f(...)` assigns, in the order of the function's
    /// outputs flattened element by element (the call unit's convention): a scalar target is
    /// one variable, an array target `{x[1], x[2]}` its elements, a skipped output as many
    /// `None` as it has elements (its size must then be known from the declaration).
    fn tuple_outputs(
        &mut self,
        func: &str,
        targets: &[Option<flat::Expr>],
        o: &Origin,
    ) -> Option<Vec<Option<VarIx>>> {
        use flat::Expr as E;
        let mut outputs = Vec::new();
        for (k, t) in targets.iter().enumerate() {
            match t {
                Some(E::Var { name, .. }) => outputs.push(self.lookup(name, o)),
                Some(E::Array(items)) => {
                    let mut elems = Vec::new();
                    flatten_array_targets(items, &mut elems);
                    for name in elems {
                        outputs.push(name.and_then(|n| self.lookup(&n, o)));
                    }
                }
                Some(_) => outputs.push(None),
                None => {
                    let size = self.skipped_output_size(func, k);
                    let Some(size) = size else {
                        self.err(
                            o,
                            format!("output {} of `{func}` is skipped, but its size is not known at translation time", k + 1),
                            "assign the output to a variable",
                        );
                        return None;
                    };
                    outputs.extend(std::iter::repeat_n(None, size));
                }
            }
        }
        Some(outputs)
    }

    /// Number of scalar elements of output `k` of a function, from constant dimensions.
    fn skipped_output_size(&self, func: &str, k: usize) -> Option<usize> {
        let Some(f) = self.flat.functions.get(func) else {
            return Some(1);
        };
        let out = f.outputs.get(k)?;
        let mut size = 1usize;
        for d in &out.dims {
            match d {
                Some(flat::Expr::Integer(n)) if *n >= 0 => size = size.saturating_mul(*n as usize),
                _ => return None,
            }
        }
        Some(size)
    }

    fn when_item(&mut self, e: &Equation, items: &mut Vec<WhenItem>) {
        use flat::Expr as E;
        match e {
            Equation::Equal { lhs, rhs, origin } => match lhs {
                E::Var { name, .. } => {
                    let Some(var) = self.lookup(name, origin) else {
                        return;
                    };
                    let expr = self.expr(rhs, origin, false);
                    items.push(WhenItem::Assign { var, expr });
                }
                E::Tuple(_) | E::Array(_) => {
                    let mut tmp = Vec::new();
                    self.equal(lhs, rhs, origin, &mut tmp);
                    for eq in tmp {
                        match eq.body {
                            EqBody::Call {
                                outputs,
                                func,
                                args,
                            } => items.push(WhenItem::CallOutputs {
                                outputs,
                                func,
                                args,
                            }),
                            EqBody::Eq { lhs, rhs } => self.when_assign(lhs, rhs, origin, items),
                            _ => {}
                        }
                    }
                }
                _ => self.err(
                    origin,
                    "the left side of an equation inside `when` must be a variable".into(),
                    "write `v = expression;` inside when-equations",
                ),
            },
            Equation::If {
                branches,
                else_,
                origin,
            } => {
                let mut tmp = Vec::new();
                self.if_equation(branches, else_, origin, &mut tmp);
                for eq in tmp {
                    if let EqBody::Eq { lhs, rhs } = eq.body {
                        self.when_assign(lhs, rhs, origin, items);
                    }
                }
            }
            Equation::Reinit { var, value, origin } => {
                let Some(v) = self.lookup(var, origin) else {
                    return;
                };
                let expr = self.expr(value, origin, false);
                items.push(WhenItem::Reinit { var: v, expr });
            }
            Equation::Assert {
                condition,
                message,
                level,
                origin,
            } => {
                let cond = self.expr(condition, origin, true);
                let msg = self.expr(message, origin, true);
                items.push(WhenItem::Assert {
                    cond,
                    msg,
                    level: *level,
                });
            }
            Equation::Terminate { message, origin } => {
                let msg = self.expr(message, origin, true);
                items.push(WhenItem::Terminate { msg });
            }
            Equation::Call { func, args, origin } => {
                let args = args.iter().map(|a| self.expr(a, origin, true)).collect();
                items.push(WhenItem::CallOutputs {
                    outputs: Vec::new(),
                    func: func.clone(),
                    args,
                });
            }
            Equation::When { origin, .. } => self.err(
                origin,
                "when-equations cannot be nested".into(),
                "use `elsewhen` or combine the conditions",
            ),
        }
    }

    fn when_assign(&mut self, lhs: ExprId, rhs: ExprId, o: &Origin, items: &mut Vec<WhenItem>) {
        match *self.m.arena.node(lhs) {
            Node::Var(var) => items.push(WhenItem::Assign { var, expr: rhs }),
            _ => self.err(
                o,
                "the left side of an equation inside `when` must be a variable".into(),
                "write `v = expression;` inside when-equations",
            ),
        }
    }

    /// Relations in an algorithm are evaluated by the algorithm itself, but they generate
    /// events like relations in equations (spec 8.5): the conditions of `when` statements,
    /// and every relation outside `when` bodies (if- and while-conditions, assigned
    /// expressions), whose change switches what the algorithm computes (a table source's
    /// `if time >= t[i] then y := x[i]`). For the simulator to stop at the instant one of
    /// them changes, each gets a hidden Boolean variable computed by an equation,
    /// `$algEventN = relation`, whose emission creates the zero crossing (or time event).
    /// The variables are not read by anything. Step functions of continuous arguments get
    /// their event helpers (`$floorN`) the same way. Relations inside `when` bodies are only
    /// evaluated at events and need no source.
    fn algorithm_event_sources(&mut self, stmts: &[Statement], origin: &Origin) {
        let errors_before = self.errors.len();
        let mut flat_rels = Vec::new();
        statement_event_relations(stmts, &mut flat_rels);
        let mut relations = Vec::new();
        for e in flat_rels {
            let c = self.expr(e, origin, false);
            collect_event_relations(&self.m.arena, c, &mut relations);
        }
        // a relation this conversion cannot handle (one reading a `for` iterator) is still
        // evaluated by the algorithm; it just gets no event source
        self.errors.truncate(errors_before);
        relations.sort_unstable();
        relations.dedup();
        for rel in relations {
            let k = self.m.vars.len();
            let mut sv = SVar::new(format!("$algEvent{k}"), VKind::Discrete, ValueType::Boolean);
            sv.hidden = true;
            sv.protected_from_alias = true;
            sv.origin = origin.clone();
            sv.description = format!("event source of an algorithm: {}", self.m.text(rel));
            let v = self.m.add_var(sv);
            let lhs = self.m.arena.var(v);
            self.helper_eqs
                .push(SEq::new(EqBody::Eq { lhs, rhs: rel }, origin.clone()));
        }
    }

    /// `when sample(start, interval) then ... end when;` in an algorithm: the sample becomes a
    /// hidden Boolean variable defined by an equation, `$algSampleN = sample(start,
    /// interval)`, which the scheduler of samples drives, and the condition reads that
    /// variable (true at the sample instants, false between them). Returns the statements
    /// with their top-level `when` conditions rewritten.
    fn sample_sources(&mut self, stmts: &[Statement], origin: &Origin) -> Vec<Statement> {
        let mut out = stmts.to_vec();
        for s in &mut out {
            let Statement::When { branches, .. } = s else {
                continue;
            };
            for (cond, _) in branches.iter_mut() {
                self.replace_sample_calls(cond, origin);
            }
        }
        out
    }

    fn replace_sample_calls(&mut self, e: &mut flat::Expr, origin: &Origin) {
        match e {
            flat::Expr::Call { func, args } if func == "sample" && args.len() == 2 => {
                let k = self.m.vars.len();
                let name = format!("$algSample{k}");
                let mut sv = SVar::new(name.clone(), VKind::Discrete, ValueType::Boolean);
                sv.hidden = true;
                sv.protected_from_alias = true;
                sv.origin = origin.clone();
                sv.description = "sample of an algorithm's when-condition".to_string();
                let rhs = self.expr(e, origin, false);
                let v = self.m.add_var(sv);
                let lhs = self.m.arena.var(v);
                self.helper_eqs
                    .push(SEq::new(EqBody::Eq { lhs, rhs }, origin.clone()));
                *e = flat::Expr::Var {
                    name,
                    subscripts: Vec::new(),
                };
            }
            flat::Expr::Array(items) => items
                .iter_mut()
                .for_each(|x| self.replace_sample_calls(x, origin)),
            flat::Expr::Unary { arg, .. } => self.replace_sample_calls(arg, origin),
            flat::Expr::Binary { lhs, rhs, .. } => {
                self.replace_sample_calls(lhs, origin);
                self.replace_sample_calls(rhs, origin);
            }
            _ => {}
        }
    }

    fn algorithm(&mut self, stmts: &[Statement], origin: Origin) -> SEq {
        let mut assigned = Vec::new();
        let mut read = Vec::new();
        collect_statement_names(stmts, &mut assigned, &mut read);
        let mut outputs: Vec<VarIx> = assigned
            .iter()
            .filter_map(|n| self.m.by_name.get(n).copied())
            .collect();
        outputs.sort_unstable();
        outputs.dedup();
        let mut inputs: Vec<VarIx> = read
            .iter()
            .filter_map(|n| self.m.by_name.get(n).copied())
            .filter(|v| outputs.binary_search(v).is_err())
            .collect();
        inputs.sort_unstable();
        inputs.dedup();
        let under_pre: Vec<VarIx> = names_under_pre(stmts)
            .iter()
            .filter_map(|n| self.m.by_name.get(n).copied())
            .collect();
        // the statements name these variables: alias elimination must keep them
        for &v in outputs.iter().chain(&inputs).chain(&under_pre) {
            self.m.vars[v as usize].protected_from_alias = true;
        }
        for name in assigned_only_in_when(stmts) {
            if let Some(&v) = self.m.by_name.get(&name) {
                if self.m.vars[v as usize].kind == VKind::Continuous {
                    self.m.vars[v as usize].kind = VKind::Discrete;
                }
            }
        }
        let index = self.m.algorithms.len();
        self.m.algorithms.push(stmts.to_vec());
        SEq::new(
            EqBody::Algorithm {
                index,
                outputs,
                inputs,
            },
            origin,
        )
    }
}

/// The event-generating relations of algorithm statements, as flat expressions: those of
/// `when` conditions, and outside `when` bodies those of `if` and `while` conditions and of
/// assigned values, at any depth of `if`, `for` and `while`.
fn statement_event_relations<'a>(stmts: &'a [Statement], out: &mut Vec<&'a flat::Expr>) {
    for s in stmts {
        match s {
            Statement::When { branches, .. } => {
                for (c, _) in branches {
                    flat_relations(c, out);
                }
            }
            Statement::Assign { value, .. } | Statement::TupleAssign { value, .. } => {
                flat_relations(value, out)
            }
            Statement::If {
                branches, else_, ..
            } => {
                for (c, body) in branches {
                    flat_relations(c, out);
                    statement_event_relations(body, out);
                }
                statement_event_relations(else_, out);
            }
            Statement::While {
                condition, body, ..
            } => {
                flat_relations(condition, out);
                statement_event_relations(body, out);
            }
            Statement::For { body, .. } => statement_event_relations(body, out),
            _ => {}
        }
    }
}

/// The relations inside `e`, nested ones too, and the calls of step functions (`floor`,
/// `integer`, `div`, ...: converting one with a continuous argument creates its event
/// helper), except below `noEvent` and `smooth` (which suppress events). Only these are
/// converted later, so that the calls around them are not instantiated a second time (an
/// impure function must be called once).
fn flat_relations<'a>(e: &'a flat::Expr, out: &mut Vec<&'a flat::Expr>) {
    use flat::{BinaryOp as B, Expr as E};
    match e {
        E::Call { func, args } if crate::ir::STEP_FUNCTIONS.contains(&func.as_str()) => {
            out.push(e);
            args.iter().for_each(|a| flat_relations(a, out));
        }
        E::Binary { op, lhs, rhs } => {
            if matches!(op, B::Lt | B::Le | B::Gt | B::Ge | B::Eq | B::Ne) {
                out.push(e);
            }
            flat_relations(lhs, out);
            flat_relations(rhs, out);
        }
        E::Unary { arg, .. } => flat_relations(arg, out),
        E::Call { func, .. } if func == "noEvent" || func == "smooth" => {}
        E::Call { args, .. } => args.iter().for_each(|a| flat_relations(a, out)),
        E::If { branches, else_ } => {
            for (c, v) in branches {
                flat_relations(c, out);
                flat_relations(v, out);
            }
            flat_relations(else_, out);
        }
        E::Array(items) => items.iter().for_each(|a| flat_relations(a, out)),
        E::CallOutput { call, .. } => flat_relations(call, out),
        _ => {}
    }
}

/// Event-generating relations inside `e` (not below other relations).
fn collect_event_relations(a: &crate::ir::Arena, e: ExprId, out: &mut Vec<ExprId>) {
    match a.node(e) {
        Node::Rel { event: true, .. } => out.push(e),
        Node::Not(x) => collect_event_relations(a, *x, out),
        Node::And(x, y) | Node::Or(x, y) => {
            collect_event_relations(a, *x, out);
            collect_event_relations(a, *y, out);
        }
        Node::If(c, x, y) => {
            for z in [*c, *x, *y] {
                collect_event_relations(a, z, out);
            }
        }
        Node::Array(items) => items
            .iter()
            .for_each(|&x| collect_event_relations(a, x, out)),
        _ => {}
    }
}

/// The expression of a function `output := expr` (one scalar output, scalar inputs, no
/// locals) whose expression reads only the inputs.
fn single_output_expression(f: &flat::Function) -> Option<&flat::Expr> {
    let flat::FunctionBody::Algorithm(stmts) = &f.body else {
        return None;
    };
    if f.outputs.len() != 1
        || !f.locals.is_empty()
        || !f.outputs[0].dims.is_empty()
        || f.inputs.iter().any(|i| !i.dims.is_empty())
        || f.is_impure
    {
        return None;
    }
    let [Statement::Assign { target, value, .. }] = stmts.as_slice() else {
        return None;
    };
    match target {
        flat::Expr::Var { name, subscripts }
            if subscripts.is_empty() && *name == f.outputs[0].name => {}
        _ => return None,
    }
    let mut names = Vec::new();
    expr_names(value, &mut names);
    if !names.iter().all(|n| f.inputs.iter().any(|i| &i.name == n)) {
        return None;
    }
    if contains_subscripts(value) {
        return None;
    }
    Some(value)
}

fn contains_subscripts(e: &flat::Expr) -> bool {
    use flat::Expr as E;
    match e {
        E::Var { subscripts, .. } => !subscripts.is_empty(),
        E::Unary { arg, .. } => contains_subscripts(arg),
        E::Binary { lhs, rhs, .. } => contains_subscripts(lhs) || contains_subscripts(rhs),
        E::Call { args, .. } => args.iter().any(contains_subscripts),
        E::If { branches, else_ } => {
            branches
                .iter()
                .any(|(c, v)| contains_subscripts(c) || contains_subscripts(v))
                || contains_subscripts(else_)
        }
        E::Array(items) => items.iter().any(contains_subscripts),
        E::Range { .. } | E::Tuple(_) | E::CallOutput { .. } => true,
        _ => false,
    }
}

/// Variables an algorithm assigns only inside its `when` statements: they change only at
/// events, i.e. they are discrete (their `fixed` start values then initialize `pre`).
/// When-statements appear only at the top level of an algorithm.
fn assigned_only_in_when(stmts: &[Statement]) -> Vec<String> {
    let (mut inside, mut outside, mut read) = (Vec::new(), Vec::new(), Vec::new());
    for s in stmts {
        match s {
            Statement::When { .. } => {
                collect_statement_names(std::slice::from_ref(s), &mut inside, &mut read)
            }
            _ => collect_statement_names(std::slice::from_ref(s), &mut outside, &mut read),
        }
    }
    let outside: std::collections::HashSet<String> = outside.into_iter().collect();
    inside.retain(|n| !outside.contains(n));
    inside.sort_unstable();
    inside.dedup();
    inside
}

/// Element names of an array target (nested for matrices), in row-major order; `None` for
/// an element that is not a variable.
fn flatten_array_targets(items: &[flat::Expr], out: &mut Vec<Option<String>>) {
    for it in items {
        match it {
            flat::Expr::Var { name, .. } => out.push(Some(name.clone())),
            flat::Expr::Array(inner) => flatten_array_targets(inner, out),
            _ => out.push(None),
        }
    }
}

/// Names read under `pre(...)` by statements.
fn names_under_pre(stmts: &[Statement]) -> Vec<String> {
    let mut out = Vec::new();
    for s in stmts {
        let mut s = s.clone();
        moss_frontend::walk::statement_exprs_mut(&mut s, &mut |e| {
            moss_frontend::walk::visit(e, &mut |x| {
                if let flat::Expr::Call { func, args } = x {
                    if func == "pre" {
                        args.iter().for_each(|a| {
                            moss_frontend::walk::visit(a, &mut |y| {
                                if let flat::Expr::Var { name, .. } = y {
                                    out.push(name.clone());
                                }
                            })
                        });
                    }
                }
            })
        });
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Variables an assignment target assigns (a variable, or an array literal of them for an
/// array-valued target) and the names its subscripts read.
fn assigned_names(target: &flat::Expr, assigned: &mut Vec<String>, read: &mut Vec<String>) {
    match target {
        flat::Expr::Var { name, subscripts } => {
            assigned.push(name.clone());
            for sub in subscripts {
                if let flat::Subscript::Index(e) = sub {
                    expr_names(e, read);
                }
            }
        }
        flat::Expr::Array(items) => {
            for t in items {
                assigned_names(t, assigned, read);
            }
        }
        _ => {}
    }
}

/// Names assigned and read by statements (recursively).
fn collect_statement_names(
    stmts: &[Statement],
    assigned: &mut Vec<String>,
    read: &mut Vec<String>,
) {
    for s in stmts {
        match s {
            Statement::Assign { target, value, .. } => {
                assigned_names(target, assigned, read);
                expr_names(value, read);
            }
            Statement::TupleAssign { targets, value, .. } => {
                // a target is a variable or, for an array output, the array of its elements
                for t in targets.iter().flatten() {
                    assigned_names(t, assigned, read);
                }
                expr_names(value, read);
            }
            Statement::If {
                branches, else_, ..
            } => {
                for (c, b) in branches {
                    expr_names(c, read);
                    collect_statement_names(b, assigned, read);
                }
                collect_statement_names(else_, assigned, read);
            }
            Statement::When { branches, .. } => {
                for (c, b) in branches {
                    expr_names(c, read);
                    collect_statement_names(b, assigned, read);
                }
            }
            Statement::For { range, body, .. } => {
                expr_names(range, read);
                collect_statement_names(body, assigned, read);
            }
            Statement::While {
                condition, body, ..
            } => {
                expr_names(condition, read);
                collect_statement_names(body, assigned, read);
            }
            Statement::Reinit { var, value, .. } => {
                read.push(var.clone());
                expr_names(value, read);
            }
            Statement::Assert {
                condition, message, ..
            } => {
                expr_names(condition, read);
                expr_names(message, read);
            }
            Statement::Terminate { message, .. } => expr_names(message, read),
            Statement::Call { args, .. } => args.iter().for_each(|a| expr_names(a, read)),
            Statement::Return { .. } | Statement::Break { .. } => {}
        }
    }
}

fn expr_names(e: &flat::Expr, out: &mut Vec<String>) {
    use flat::Expr as E;
    match e {
        E::Var { name, subscripts } => {
            out.push(name.clone());
            for s in subscripts {
                if let flat::Subscript::Index(i) = s {
                    expr_names(i, out);
                }
            }
        }
        E::Unary { arg, .. } => expr_names(arg, out),
        E::Binary { lhs, rhs, .. } => {
            expr_names(lhs, out);
            expr_names(rhs, out);
        }
        // `pre(v)` is the value before the event, known when the algorithm runs: not a
        // dependency on `v` (a loop through it is no algebraic loop)
        E::Call { func, .. } if func == "pre" => {}
        E::Call { args, .. } => args.iter().for_each(|a| expr_names(a, out)),
        E::If { branches, else_ } => {
            for (c, v) in branches {
                expr_names(c, out);
                expr_names(v, out);
            }
            expr_names(else_, out);
        }
        E::Array(items) => items.iter().for_each(|a| expr_names(a, out)),
        E::Range { start, step, stop } => {
            expr_names(start, out);
            if let Some(s) = step {
                expr_names(s, out);
            }
            expr_names(stop, out);
        }
        E::Tuple(items) => items.iter().flatten().for_each(|a| expr_names(a, out)),
        E::CallOutput { call, .. } => expr_names(call, out),
        _ => {}
    }
}

/// Is a when-condition enabled at initialization (spec 8.6): `initial()` itself, an element
/// of the condition vector, or an operand of `or` (true whenever `initial()` is). A
/// condition that merely mentions `initial()` (`not initial()`, `initial() and c`) is false
/// at initialization, so its equations do not take part there.
fn enabled_by_initial(arena: &crate::ir::Arena, c: ExprId) -> bool {
    match *arena.node(c) {
        Node::Initial => true,
        Node::Or(a, b) => enabled_by_initial(arena, a) || enabled_by_initial(arena, b),
        _ => false,
    }
}
