//! Entry points used by the CLI and by tests of later stages.

use crate::ctx::{Flattener, Inherited};
use crate::flat::{Equation, Experiment, Expr, FlatModel};
use crate::flatten::Collected;
use crate::inst::{Mod, Res, PREDEFINED_SOURCE};
use crate::loader::{ClassId, Library};
use moss_syntax::ast::{self, ClassKind, ExprKind};
use moss_syntax::{Diagnostic, SourceMap, Span};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where to find classes. Priority: `libs` in order, then `MODELICAPATH` entries (when
/// `use_modelicapath`), then the bundled library (when `use_bundled`).
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    pub libs: Vec<PathBuf>,
    pub use_modelicapath: bool,
    pub use_bundled: bool,
}

/// A successful flattening: the model plus warnings.
#[derive(Debug)]
pub struct Flattened {
    pub model: FlatModel,
    pub warnings: Vec<Diagnostic>,
}

/// A failed one: the diagnostics and the sources they point into.
#[derive(Debug)]
pub struct Failure {
    pub diagnostics: Vec<Diagnostic>,
    pub sources: Arc<SourceMap>,
    pub kind: FailureKind,
}

/// What stopped the flattening, for callers that report failures by kind (the Python
/// package raises a different exception for each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureKind {
    /// A file read on the way has syntax errors (they come first in the diagnostics).
    Syntax,
    /// The requested class is not on the library path.
    ClassNotFound,
    /// The model itself is wrong (types, modifiers, connections, ...).
    Model,
}

/// Load libraries and instantiate `model`: a class name found on the library roots, or a
/// path to a `.mo` file (meaning the last top-level class it defines, with the file's
/// directory added as a library root).
pub fn flatten_model(opts: &LoadOptions, model: &str) -> Result<Flattened, Failure> {
    let mut lib = Library::new(&opts.libs, opts.use_modelicapath, opts.use_bundled);
    lib.add_text("<predefined>", PREDEFINED_SOURCE);
    lib.add_text("<moss tables>", crate::tables::TABLES_SOURCE);
    let path = Path::new(model);
    let is_file = model.ends_with(".mo") || path.is_file();
    if is_file {
        if let Some(dir) = path.parent() {
            let dir = if dir.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                dir.to_path_buf()
            };
            lib.add_root_front(dir);
        }
    }
    let class = if is_file {
        lib.load_file(path)
    } else {
        find_class(&lib, model)
    };
    let mut kind = if class.is_err() && !is_file {
        FailureKind::ClassNotFound
    } else {
        FailureKind::Model
    };
    let result = class.and_then(|c| instantiate(&lib, c));
    let parse_errors: Vec<Diagnostic> = lib
        .diagnostics
        .borrow()
        .iter()
        .filter(|d| d.is_error())
        .cloned()
        .collect();
    match result {
        Ok((mut model, warnings)) => {
            model.sources = lib.sources.clone();
            Ok(Flattened { model, warnings })
        }
        Err(d) => {
            if !parse_errors.is_empty() {
                kind = FailureKind::Syntax;
            }
            let mut diagnostics = parse_errors;
            diagnostics.push(*d);
            Err(Failure {
                diagnostics,
                sources: lib.sources.clone(),
                kind,
            })
        }
    }
}

fn find_class(lib: &Library, name: &str) -> Res<ClassId> {
    let parts: Vec<&str> = name.trim_start_matches('.').split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(Box::new(Diagnostic::error(
            Span::DUMMY,
            format!("`{name}` is not a class name"),
        )
        .with_help("give a class name such as `Modelica.Blocks.Examples.PID_Controller` or a `.mo` file")));
    }
    lib.lookup_qualified(&parts).ok_or_else(|| {
        let mut d = Diagnostic::error(Span::DUMMY, format!("class `{name}` not found"));
        d = if parts.len() > 1 && lib.top_level(parts[0]).is_none() {
            d.with_help(format!(
                "no library `{}` on the library path: pass --lib DIR or set MODELICAPATH",
                parts[0]
            ))
        } else {
            d.with_help("check the spelling; class names are case-sensitive")
        };
        Box::new(d)
    })
}

/// Instantiate class `class` as the model and produce the flat model.
fn instantiate(lib: &Library, class: ClassId) -> Res<(FlatModel, Vec<Diagnostic>)> {
    let fl = Flattener::new(lib);
    let entry = lib.get(class);
    let kind = entry.def.prefixes.kind;
    if matches!(
        kind,
        ClassKind::Package | ClassKind::Function { .. } | ClassKind::Type | ClassKind::Operator
    ) {
        return Err(Box::new(
            Diagnostic::error(
                entry.def.name.span,
                format!(
                    "`{}` is a {}, not a model",
                    entry.full_name,
                    kind_name(kind)
                ),
            )
            .with_help("give a model, block or class to check"),
        ));
    }
    if entry.def.prefixes.partial {
        return Err(Box::new(
            Diagnostic::error(
                entry.def.name.span,
                format!(
                    "`{}` is partial and cannot be instantiated",
                    entry.full_name
                ),
            )
            .with_help("check a non-partial model that extends it"),
        ));
    }
    let top = fl.new_node(
        class,
        String::new(),
        Mod::default(),
        None,
        Inherited::default(),
    );
    let mut col = Collected::default();
    fl.walk(&top, &mut col)?;
    if let Some(e) = fl.errors.borrow_mut().drain(..).next() {
        return Err(Box::new(e));
    }
    crate::expandable::finish(&fl, &mut col)?;
    let mut model = FlatModel {
        name: entry.full_name.clone(),
        ..FlatModel::default()
    };
    let graph = std::mem::take(&mut col.connections.graph);
    let (constraints, graph_solution) = graph.solve(&mut col.connections)?;
    col.equations.extend(constraints);
    col.connections.check_signal_sources()?;
    crate::connect_rules::check_fixed_pairs(&col.connections.fixed_pairs, &col.variables)?;
    let instream = finish_connections(&mut col);
    model.variables = col.variables;
    model.equations = col.equations;
    model.initial_equations = col.initial_equations;
    model.algorithms = col.algorithms;
    model.initial_algorithms = col.initial_algorithms;
    model.inner_outer = std::mem::take(&mut col.inner_outer);
    replace_streams(&mut model, &instream);
    crate::overconstrained::replace_queries(
        &mut model,
        &graph_solution,
        &col.connections.occurrences,
    );
    drop_unused_string_parameters(&mut model);
    model.functions = fl.collect_functions()?;
    crate::lift::lift_array_calls(&mut model, &fl.array_calls.borrow());
    model.experiment = experiment(&entry.def);
    model.structural_parameters = fl.structural.borrow().iter().cloned().collect();
    check_flat_model(&model)?;
    let warnings = fl.warnings.borrow().clone();
    Ok((model, warnings))
}

/// The checks of the finished flat model. They only read it, so the type check (about half
/// of their time: 1.7 of 3.3 s for a 100,000-section RC ladder) runs on a second thread
/// beside the others. The first error in the order below is reported, whatever thread
/// finds it first, so the message does not depend on timing.
fn check_flat_model(model: &FlatModel) -> Res<()> {
    const CHECK_STACK_BYTES: usize = 64 * 1024 * 1024;
    std::thread::scope(|scope| {
        // The type check recurses over expression depth: the main thread's stack, not the
        // 2 MiB default of a new thread (untouched stack costs nothing).
        let types = std::thread::Builder::new()
            .stack_size(CHECK_STACK_BYTES)
            .spawn_scoped(scope, || crate::typecheck::check(model));
        let others = check_references(model)
            .and_then(|()| check_variability(model))
            .and_then(|()| check_reinit(model))
            .and_then(|()| check_cyclic_bindings(model))
            .and_then(|()| check_constant_values(model));
        let types = match types {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(_) => crate::typecheck::check(model),
        };
        others.and(types)
    })
}

fn kind_name(k: ClassKind) -> &'static str {
    match k {
        ClassKind::Package => "package",
        ClassKind::Function { .. } => "function",
        ClassKind::Type => "type",
        ClassKind::Operator => "operator",
        _ => "class",
    }
}

/// Connection-set equations and zero flows of unconnected inside connectors.
fn finish_connections(col: &mut Collected) -> HashMap<String, Expr> {
    let flows_of = connector_flows(&col.variables);
    let (eqs, instream) = col.connections.equations(&flows_of);
    col.equations.extend(eqs);
    for f in &col.inside_flows {
        if !col.connections.has_inside(f) {
            let origin = col
                .variables
                .iter()
                .find(|v| &v.name == f)
                .map(|v| v.origin.clone())
                .unwrap_or_default();
            col.equations.push(Equation::Equal {
                lhs: Expr::Var {
                    name: f.clone(),
                    subscripts: Vec::new(),
                },
                rhs: Expr::Integer(0),
                origin,
            });
        }
    }
    instream
}

/// Connector name → its (first) flow variable.
fn connector_flows(vars: &[crate::flat::Variable]) -> HashMap<String, String> {
    let mut out = HashMap::default();
    for v in vars.iter().filter(|v| v.is_flow) {
        if let Some((conn, _)) = v.name.rsplit_once('.') {
            out.entry(conn.to_string())
                .or_insert_with(|| v.name.clone());
        }
    }
    out
}

/// Expand `inStream`/`actualStream` everywhere in the model.
fn replace_streams(model: &mut FlatModel, instream: &HashMap<String, Expr>) {
    let by_connector = connector_flows(&model.variables);
    let flow_of_var: HashMap<String, String> = model
        .variables
        .iter()
        .filter(|v| v.is_stream)
        .filter_map(|v| {
            let (conn, _) = v.name.rsplit_once('.')?;
            Some((v.name.clone(), by_connector.get(conn)?.clone()))
        })
        .collect();
    let mut f = |e: &mut Expr| crate::connect::replace_streams(e, instream, &flow_of_var);
    crate::walk::model_equation_exprs_mut(model, &mut f);
}

/// String parameters and constants that nothing refers to (file names and table names of
/// the MSL table blocks once the tables are lowered) are dropped: they cannot influence the
/// simulation and later stages only compute with numbers. Numeric parameters stay whatever
/// their bindings read (`J = readRealParameter(file, "J")` is a result users look at).
fn drop_unused_string_parameters(model: &mut FlatModel) {
    loop {
        // Only string-valued parameters can go, so only their uses are looked for: a
        // large model has hundreds of thousands of names and rarely a string among them.
        let candidates: HashSet<String> = model
            .variables
            .iter()
            .filter(|v| {
                v.variability <= crate::flat::Variability::Parameter
                    && v.ty == crate::flat::ScalarType::String
            })
            .map(|v| v.name.clone())
            .collect();
        if candidates.is_empty() {
            break;
        }
        let mut used: HashSet<String> = HashSet::default();
        let mut note = |e: &mut Expr| {
            crate::walk::visit(e, &mut |x| {
                if let Expr::Var { name, .. } = x {
                    if candidates.contains(name) {
                        used.insert(name.clone());
                    }
                }
            })
        };
        crate::walk::model_equation_exprs_mut(model, &mut note);
        for v in &mut model.variables {
            crate::walk::variable_exprs_mut(v, &mut note);
        }
        let before = model.variables.len();
        model
            .variables
            .retain(|v| !candidates.contains(&v.name) || used.contains(&v.name));
        if model.variables.len() == before {
            break;
        }
    }
    drop_unused_functions(model);
}

/// Keep only the functions called from the model (directly, from other kept functions, or
/// as their derivatives).
fn drop_unused_functions(model: &mut FlatModel) {
    let mut called: Vec<String> = Vec::new();
    let mut note = |e: &mut Expr| {
        crate::walk::visit(e, &mut |x| {
            if let Expr::Call { func, .. } = x {
                called.push(func.clone());
            }
        })
    };
    crate::walk::model_equation_exprs_mut(model, &mut note);
    for v in &mut model.variables {
        crate::walk::variable_exprs_mut(v, &mut note);
    }
    for a in model.algorithms.iter().chain(&model.initial_algorithms) {
        for s in &a.statements {
            statement_calls(s, &mut called);
        }
    }
    for eq in model.equations.iter().chain(&model.initial_equations) {
        collect_equation_calls(eq, &mut called);
    }
    let mut keep: HashSet<String> = HashSet::default();
    while let Some(name) = called.pop() {
        if !keep.insert(name.clone()) {
            continue;
        }
        let Some(f) = model.functions.get(&name) else {
            continue;
        };
        called.extend(f.derivatives.iter().map(|d| d.function.clone()));
        let mut body_calls = Vec::new();
        let mut note = |e: &mut Expr| {
            crate::walk::visit(e, &mut |x| {
                if let Expr::Call { func, .. } = x {
                    body_calls.push(func.clone());
                }
            })
        };
        let mut f = f.clone();
        for v in f
            .inputs
            .iter_mut()
            .chain(f.outputs.iter_mut())
            .chain(f.locals.iter_mut())
        {
            if let Some(d) = &mut v.default {
                note(d);
            }
            for d in v.dims.iter_mut().flatten() {
                note(d);
            }
        }
        let mut procedure_calls = Vec::new();
        match &mut f.body {
            crate::flat::FunctionBody::Algorithm(stmts) => {
                for s in stmts.iter_mut() {
                    statement_calls(s, &mut procedure_calls);
                    crate::walk::statement_exprs_mut(s, &mut note);
                }
            }
            crate::flat::FunctionBody::External { args, .. } => args.iter_mut().for_each(note),
        }
        called.extend(body_calls);
        called.extend(procedure_calls);
    }
    model.functions.retain(|name, _| keep.contains(name));
}

/// Procedure calls (`f(x);`) in statements, recursively.
fn statement_calls(s: &crate::flat::Statement, out: &mut Vec<String>) {
    use crate::flat::Statement as S;
    match s {
        S::Call { func, .. } => out.push(func.clone()),
        S::If {
            branches, else_, ..
        } => {
            branches
                .iter()
                .flat_map(|(_, b)| b)
                .for_each(|x| statement_calls(x, out));
            else_.iter().for_each(|x| statement_calls(x, out));
        }
        S::For { body, .. } | S::While { body, .. } => {
            body.iter().for_each(|x| statement_calls(x, out))
        }
        S::When { branches, .. } => branches
            .iter()
            .flat_map(|(_, b)| b)
            .for_each(|x| statement_calls(x, out)),
        _ => {}
    }
}

/// Functions called as equations (`f(x);` in an equation section), recursively.
fn collect_equation_calls(e: &Equation, out: &mut Vec<String>) {
    match e {
        Equation::Call { func, .. } => out.push(func.clone()),
        Equation::If {
            branches, else_, ..
        } => {
            branches
                .iter()
                .flat_map(|(_, b)| b)
                .for_each(|x| collect_equation_calls(x, out));
            else_.iter().for_each(|x| collect_equation_calls(x, out));
        }
        Equation::When { branches, .. } => branches
            .iter()
            .flat_map(|(_, b)| b)
            .for_each(|x| collect_equation_calls(x, out)),
        _ => {}
    }
}

/// Every variable named in the model's equations must be a flat variable.
fn check_references(model: &FlatModel) -> Res<()> {
    let names: HashSet<&str> = model.variables.iter().map(|v| v.name.as_str()).collect();
    let mut bad: Option<(String, Span)> = None;
    let mut check = |e: &Expr, span: Span| {
        crate::walk::visit(e, &mut |x| {
            if bad.is_some() {
                return;
            }
            match x {
                Expr::Var { name, .. } if !names.contains(name.as_str()) => {
                    bad = Some((format!("unknown variable `{name}` in the flat model"), span))
                }
                Expr::Call { func, .. } if func == "[]" => {
                    bad = Some((
                        "an array-valued function call is used inside an expression; assign it to an array variable first".into(),
                        span,
                    ))
                }
                _ => {}
            }
        });
    };
    for eq in model.equations.iter().chain(&model.initial_equations) {
        let span = eq_span(eq);
        crate::walk::equation_exprs(eq, &mut |x| check(x, span));
    }
    for a in model.algorithms.iter().chain(&model.initial_algorithms) {
        for s in &a.statements {
            crate::walk::statement_exprs(s, &mut |x| check(x, a.origin.span));
        }
    }
    for v in &model.variables {
        crate::walk::variable_exprs(v, &mut |e| check(e, v.origin.span));
    }
    match bad {
        Some((msg, span)) => Err(Box::new(Diagnostic::error(span, msg))),
        None => Ok(()),
    }
}

/// Parameters and constants may only depend on parameters and constants (spec 3.8).
fn check_variability(model: &FlatModel) -> Res<()> {
    let by_name: HashMap<&str, &crate::flat::Variable> = model
        .variables
        .iter()
        .map(|v| (v.name.as_str(), v))
        .collect();
    for v in &model.variables {
        let Some(b) = &v.binding else { continue };
        let mut bad: Option<String> = None;
        crate::walk::visit(b, &mut |x| match x {
            Expr::Var { name, .. } if bad.is_none() => {
                if let Some(dep) = by_name.get(name.as_str()) {
                    if dep.variability > v.variability {
                        bad = Some(name.clone());
                    }
                }
            }
            Expr::Time if bad.is_none() => bad = Some("time".into()),
            _ => {}
        });
        if let Some(dep) = bad {
            let kind = match v.variability {
                crate::flat::Variability::Constant => "constant",
                _ => "parameter",
            };
            return Err(Box::new(
                Diagnostic::error(
                    v.origin.span,
                    format!(
                        "{kind} `{}` depends on `{dep}`, which varies during the simulation",
                        v.name
                    ),
                )
                .with_help(format!(
                    "declare `{dep}` as a parameter, or remove the `{kind}` prefix"
                )),
            ));
        }
    }
    Ok(())
}

/// Every constant has a value (spec 4.4.4); fields of records bound as a whole get theirs
/// from the record's binding, so this is checked on the flat model.
fn check_constant_values(model: &FlatModel) -> Res<()> {
    let missing = model
        .variables
        .iter()
        .find(|v| v.variability == crate::flat::Variability::Constant && v.binding.is_none());
    match missing {
        Some(v) => Err(Box::new(
            Diagnostic::error(v.origin.span, format!("constant `{}` has no value", v.name))
                .with_help("give it a binding: `constant Real c = ...;`"),
        )),
        None => Ok(()),
    }
}

/// Bindings of parameters and constants must not depend on themselves (spec 4.4.4).
fn check_cyclic_bindings(model: &FlatModel) -> Res<()> {
    let index: HashMap<&str, usize> = model
        .variables
        .iter()
        .enumerate()
        .map(|(i, v)| (v.name.as_str(), i))
        .collect();
    let known_bool = |c: &Expr| match c {
        Expr::Boolean(b) => Some(*b),
        Expr::Var { name, subscripts } if subscripts.is_empty() => {
            match index
                .get(name.as_str())
                .map(|&j| &model.variables[j].binding)
            {
                Some(Some(Expr::Boolean(b))) => Some(*b),
                _ => None,
            }
        }
        _ => None,
    };
    let deps: Vec<Vec<usize>> = model
        .variables
        .iter()
        .map(|v| {
            let mut d = Vec::new();
            if let Some(b) = &v.binding {
                binding_deps(b, &index, &known_bool, &mut d);
            }
            d
        })
        .collect();
    // Iterative depth-first search with colours: 0 new, 1 on the stack, 2 done.
    let mut colour = vec![0u8; deps.len()];
    for start in 0..deps.len() {
        if colour[start] != 0 {
            continue;
        }
        let mut stack = vec![(start, 0usize)];
        colour[start] = 1;
        while let Some((v, next)) = stack.pop() {
            if let Some(&w) = deps[v].get(next) {
                stack.push((v, next + 1));
                match colour[w] {
                    0 => {
                        colour[w] = 1;
                        stack.push((w, 0));
                    }
                    1 => {
                        let var = &model.variables[w];
                        return Err(Box::new(
                            Diagnostic::error(
                                var.origin.span,
                                format!("the binding of `{}` depends on itself", var.name),
                            )
                            .with_help("break the cycle of parameter bindings"),
                        ));
                    }
                    _ => {}
                }
            } else {
                colour[v] = 2;
            }
        }
    }
    Ok(())
}

/// The variables a binding depends on. Of an if-expression whose conditions are literals or
/// Boolean parameters bound to literals, only the branch taken counts: the MSL's
/// `T_start = if use_T_start then T0 else T(h_start)` with
/// `h_start = if use_T_start then h(T_start) else h0` is no cycle.
fn binding_deps(
    e: &Expr,
    index: &HashMap<&str, usize>,
    known_bool: &dyn Fn(&Expr) -> Option<bool>,
    out: &mut Vec<usize>,
) {
    if let Expr::If { branches, else_ } = e {
        let mut taken: Option<&Expr> = None;
        for (c, v) in branches {
            match known_bool(c) {
                Some(true) => {
                    taken = Some(v);
                    break;
                }
                Some(false) => continue,
                None => {
                    taken = None;
                    break;
                }
            }
        }
        let all_known = branches.iter().all(|(c, _)| known_bool(c).is_some());
        if let Some(v) = taken.or(all_known.then_some(&**else_)) {
            return binding_deps(v, index, known_bool, out);
        }
    }
    if let Expr::Var { name, .. } = e {
        if let Some(&j) = index.get(name.as_str()) {
            out.push(j);
        }
    }
    crate::walk::exprs(e, &mut |x| binding_deps(x, index, known_bool, out));
}

/// `reinit` only applies to continuous-time Real variables.
fn check_reinit(model: &FlatModel) -> Res<()> {
    fn visit(e: &Equation, out: &mut Vec<(String, Span)>) {
        match e {
            Equation::Reinit { var, origin, .. } => out.push((var.clone(), origin.span)),
            Equation::When { branches, .. } => branches
                .iter()
                .flat_map(|(_, b)| b)
                .for_each(|x| visit(x, out)),
            Equation::If {
                branches, else_, ..
            } => {
                branches
                    .iter()
                    .flat_map(|(_, b)| b)
                    .for_each(|x| visit(x, out));
                else_.iter().for_each(|x| visit(x, out));
            }
            _ => {}
        }
    }
    let mut targets = Vec::new();
    model.equations.iter().for_each(|e| visit(e, &mut targets));
    for (name, span) in targets {
        let ok = model.variables.iter().any(|v| {
            v.name == name
                && v.ty == crate::flat::ScalarType::Real
                && v.variability == crate::flat::Variability::Continuous
        });
        if !ok {
            return Err(Box::new(
                Diagnostic::error(
                    span,
                    format!("`reinit` of `{name}`: only continuous-time Real variables can be reinitialized"),
                )
                .with_help("reinit applies to states (variables that appear differentiated)"),
            ));
        }
    }
    Ok(())
}

fn eq_span(e: &Equation) -> Span {
    e.origin().span
}

fn number(e: &ast::Expr) -> Option<f64> {
    match &e.kind {
        ExprKind::Integer(i) => Some(*i as f64),
        ExprKind::Real { value, .. } => Some(*value),
        ExprKind::Unary {
            op: ast::UnaryOp::Neg,
            operand,
        } => number(operand).map(|v| -v),
        _ => None,
    }
}

/// Values of `annotation(experiment(...))`.
fn experiment(def: &ast::ClassDef) -> Experiment {
    let mut x = Experiment::default();
    let Some(ann) = crate::funcs::class_annotation(def) else {
        return x;
    };
    let Some(exp) = ann.find("experiment") else {
        return x;
    };
    let Some(cm) = exp
        .modification
        .as_ref()
        .and_then(|m| m.class_modification.as_ref())
    else {
        return x;
    };
    for a in &cm.args {
        let ast::Argument::Modification(m) = a else {
            continue;
        };
        let Some(v) = m
            .modification
            .as_ref()
            .and_then(|mm| mm.binding.as_ref())
            .and_then(|b| number(&b.expr))
        else {
            continue;
        };
        match m.name.parts[0].as_str() {
            "StartTime" => x.start_time = Some(v),
            "StopTime" => x.stop_time = Some(v),
            "Tolerance" => x.tolerance = Some(v),
            "Interval" => x.interval = Some(v),
            _ => {}
        }
    }
    x
}
