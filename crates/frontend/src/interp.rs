//! Evaluation of function calls at translation time, for parameters the model structure
//! depends on (`pi = 2*Modelica.Math.asin(1.0)`, array sizes computed by functions).
//! The function is translated to its flat form and its algorithm executed on literal
//! values. External functions and anything not literal give `None` (the call then stays
//! symbolic, and an evaluation that needed it reports that it is not known).

use crate::ctx::Flattener;
use crate::expand::{fill, Val};
use crate::flat::{Expr, FunctionBody, Statement, Subscript};
use crate::fold;
use crate::inst::{err, Res};
use crate::loader::ClassId;
use moss_syntax::Span;
use rustc_hash::FxHashMap as HashMap;

/// Why execution of a body stopped early.
enum Flow {
    Normal,
    Return,
    Break,
}

struct Frame {
    vars: HashMap<String, Val>,
    steps: u64,
}

const MAX_STEPS: u64 = 2_000_000;

fn literal(v: &Val) -> bool {
    let mut ok = true;
    v.map(&mut |x| {
        ok &= fold::is_literal(&x);
        x
    });
    ok
}

pub fn call_function(f: &Flattener, id: ClassId, args: &[Val], span: Span) -> Res<Option<Val>> {
    call_function_named(f, &f.lk.name_of(id), id, args, span)
}

/// A call of the flat function `name` of class `id` (a specialization for functional
/// arguments has a name of its own, see `funargs`).
pub fn call_function_named(
    f: &Flattener,
    name: &str,
    id: ClassId,
    args: &[Val],
    span: Span,
) -> Res<Option<Val>> {
    if !args.iter().all(literal) {
        return Ok(None);
    }
    nested(f, span, || call_inner(f, name, id, args, span))
}

/// Run one level of nested evaluation, refusing runaway recursion.
fn nested<T>(f: &Flattener, span: Span, run: impl FnOnce() -> Res<T>) -> Res<T> {
    let d = f.depth.get();
    if d > 200 {
        return err(span, "function calls nest too deeply during evaluation");
    }
    f.depth.set(d + 1);
    let r = run();
    f.depth.set(d);
    r
}

fn call_inner(
    f: &Flattener,
    name: &str,
    id: ClassId,
    args: &[Val],
    span: Span,
) -> Res<Option<Val>> {
    let Some((func, mut vars)) = run_function(f, name, id, args, span)? else {
        return Ok(None);
    };
    // A record result comes back as its scalarized outputs (`c.re`, `c.im`).
    let Some(out) = func.outputs.first() else {
        return Ok(None);
    };
    if let Some((record, _)) = out.name.split_once('.') {
        let prefix = format!("{record}.");
        let mut fields = Vec::new();
        for o in func.outputs.iter().filter(|o| o.name.starts_with(&prefix)) {
            let Some(v) = vars.remove(&o.name) else {
                return Ok(None);
            };
            fields.push((o.name[prefix.len()..].to_string(), v));
        }
        let mut rec = Val::R(Vec::new());
        for (path, v) in fields {
            crate::expand::insert_field(&mut rec, &path, v);
        }
        // An array of records comes back as arrays of fields: split the output's own
        // dimensions (not the fields', `Orientation.T[3,3]` stays a matrix field).
        let rank = record_output_rank(f, id, record);
        return Ok(Some(records_of_field_arrays(rec, rank)));
    }
    Ok(vars.remove(&out.name))
}

/// Every output of a call evaluated now, in the order of the flat function's outputs.
pub fn call_outputs(
    f: &Flattener,
    name: &str,
    id: ClassId,
    args: &[Val],
    span: Span,
) -> Res<Option<Vec<Val>>> {
    if !args.iter().all(literal) {
        return Ok(None);
    }
    let Some((func, mut vars)) = nested(f, span, || run_function(f, name, id, args, span))? else {
        return Ok(None);
    };
    Ok(func
        .outputs
        .iter()
        .map(|o| vars.remove(&o.name))
        .collect::<Option<Vec<_>>>())
}

/// How many array dimensions the record output `name` of function `id` declares itself.
fn record_output_rank(f: &Flattener, id: ClassId, name: &str) -> usize {
    let node = f.package_node(id);
    f.elems(&node)
        .comps
        .iter()
        .find(|c| &*c.name == name)
        .map_or(0, |c| c.decl.subscripts.len() + c.type_subs.len())
}

/// `R(re = A(..), im = A(..))` (the fields of an array of records) to `A(R(..), ...)`,
/// splitting the `rank` leading dimensions that belong to the record array.
fn records_of_field_arrays(rec: Val, rank: usize) -> Val {
    let Val::R(fields) = &rec else {
        return rec;
    };
    if rank == 0 {
        return rec;
    }
    let n = match fields.first() {
        Some((_, Val::A(items))) => items.len(),
        _ => return rec,
    };
    if !fields
        .iter()
        .all(|(_, v)| matches!(v, Val::A(items) if items.len() == n))
    {
        return rec;
    }
    Val::A(
        (0..n)
            .map(|i| {
                records_of_field_arrays(
                    Val::R(
                        fields
                            .iter()
                            .map(|(name, v)| (name.clone(), v.index_path(&[i])))
                            .collect(),
                    ),
                    rank - 1,
                )
            })
            .collect(),
    )
}

type Run = (crate::flat::Function, HashMap<String, Val>);

fn run_function(
    f: &Flattener,
    name: &str,
    id: ClassId,
    args: &[Val],
    span: Span,
) -> Res<Option<Run>> {
    let func = match f.translate_function(name, id) {
        Ok(func) => func,
        Err(_) => return Ok(None),
    };
    let mut fr = Frame {
        vars: HashMap::default(),
        steps: 0,
    };
    for (k, input) in func.inputs.iter().enumerate() {
        match args.get(k) {
            Some(v) => {
                fr.vars.insert(input.name.clone(), v.clone());
            }
            None => return Ok(None),
        }
    }
    // A binding may use a variable declared after it (`x[max(nrow, ncol)] = cat(1, b,
    // zeros(max(nrow, ncol) - nrow))` before `Integer nrow = size(A, 1)`): bindings are
    // equations, so each pass initializes what it can, until nothing changes.
    let mut pending: Vec<&crate::flat::FunctionVar> =
        func.outputs.iter().chain(&func.locals).collect();
    while !pending.is_empty() {
        let before = pending.len();
        let mut still = Vec::new();
        for v in pending {
            match initial_value(f, v, &mut fr, span)? {
                Some(init) => {
                    fr.vars.insert(v.name.clone(), init);
                }
                None => still.push(v),
            }
        }
        if still.len() == before {
            return Ok(None);
        }
        pending = still;
    }
    let done = match &func.body {
        FunctionBody::Algorithm(body) => exec(f, body, &mut fr, span)?.is_some(),
        FunctionBody::External {
            language,
            name: routine,
            args,
            ..
        } if language == "FORTRAN 77" => run_lapack(f, &func, routine, args, &mut fr, span)?,
        FunctionBody::External {
            language,
            name: routine,
            args,
            ..
        } if language == "C" => {
            run_string_function(f, &func, routine, args, &mut fr, span)?
                || run_matrix_file_io(f, &func, routine, args, &mut fr, span)?
        }
        FunctionBody::External { .. } => false,
    };
    Ok(done.then_some((func, fr.vars)))
}

/// The value of output or local `v` before the body runs: its binding, else zeros of its
/// declared size; `None` when that needs something not known (yet).
fn initial_value(
    f: &Flattener,
    v: &crate::flat::FunctionVar,
    fr: &mut Frame,
    span: Span,
) -> Res<Option<Val>> {
    if let Some(d) = &v.default {
        return eval(f, d, fr, span);
    }
    let mut dims = Vec::new();
    for dim in &v.dims {
        match dim {
            Some(e) => {
                match eval(f, e, fr, span)?.and_then(|x| x.scalar().and_then(fold::as_i64)) {
                    Some(n) => dims.push(n.max(0) as usize),
                    None => return Ok(None),
                }
            }
            None => dims.push(0),
        }
    }
    let zero = match v.ty {
        crate::flat::ScalarType::Real => Expr::Real(0.0),
        crate::flat::ScalarType::Boolean => Expr::Boolean(false),
        crate::flat::ScalarType::String => Expr::String(String::new()),
        _ => Expr::Integer(0),
    };
    crate::limits::check_dims(&dims, span, &format!("the local array `{}`", v.name))?;
    Ok(Some(fill(&Val::S(zero), &dims)))
}

/// Run the external FORTRAN 77 call `routine(args)` of `func` natively when moss has the
/// LAPACK routine (`crate::lapack`): the arguments evaluated and flattened, the ones the
/// routine writes stored back into the variables they name, in their declared shape and
/// type. `false` when the routine is unknown or an argument is not a literal number.
fn run_lapack(
    f: &Flattener,
    func: &crate::flat::Function,
    routine: &str,
    args: &[Expr],
    fr: &mut Frame,
    span: Span,
) -> Res<bool> {
    let mut flat = Vec::with_capacity(args.len());
    let mut shapes = Vec::with_capacity(args.len());
    for a in args {
        let Some(v) = eval(f, a, fr, span)? else {
            return Ok(false);
        };
        let Some(nums) = v
            .scalars()
            .iter()
            .map(fold::as_f64)
            .collect::<Option<Vec<_>>>()
        else {
            return Ok(false);
        };
        flat.push(nums);
        shapes.push(v.shape());
    }
    let written = match crate::lapack::call(routine, &flat) {
        None => return Ok(false),
        Some(Ok(w)) => w,
        Some(Err(msg)) => return err(span, format!("in function `{}`: {msg}", func.name)),
    };
    for (pos, data) in written {
        let Some(Expr::Var { name, subscripts }) = args.get(pos) else {
            continue;
        };
        if !subscripts.is_empty() {
            continue;
        }
        let integer = func
            .inputs
            .iter()
            .chain(&func.outputs)
            .chain(&func.locals)
            .any(|v| &v.name == name && v.ty != crate::flat::ScalarType::Real);
        let scalar = |x: f64| {
            Val::S(if integer {
                Expr::Integer(x.round() as i64)
            } else {
                Expr::Real(x)
            })
        };
        let mut items = data.into_iter().map(scalar);
        fr.vars
            .insert(name.clone(), reshape(&shapes[pos], &mut items));
    }
    Ok(true)
}

/// Run the pure string functions of the MSL's C library (`ModelicaStrings_length`,
/// `_skipWhiteSpace`, `_substring`, `_compare`) natively, with the run time's code
/// (`moss_mslc`): `Strings.isEmpty(fileName)` in a parameter's binding is then known at
/// translation time. `false` for other routines or arguments not known now.
fn run_string_function(
    f: &Flattener,
    func: &crate::flat::Function,
    routine: &str,
    args: &[Expr],
    fr: &mut Frame,
    span: Span,
) -> Res<bool> {
    let mut values = Vec::with_capacity(args.len());
    for a in args {
        match eval(f, a, fr, span)? {
            Some(Val::S(e)) => values.push(e),
            _ => return Ok(false),
        }
    }
    let text = |k: usize| match values.get(k) {
        Some(Expr::String(s)) => Some(s.as_str()),
        _ => None,
    };
    let int = |k: usize| values.get(k).and_then(fold::as_i64);
    let boolean = |k: usize| match values.get(k) {
        Some(Expr::Boolean(b)) => Some(*b),
        _ => None,
    };
    let result = match routine {
        "ModelicaStrings_length" => text(0).map(|s| Expr::Integer(moss_mslc::length(s))),
        "ModelicaStrings_skipWhiteSpace" => text(0)
            .zip(int(1))
            .map(|(s, i)| Expr::Integer(moss_mslc::skip_white_space(s.as_bytes(), i))),
        "ModelicaStrings_substring" => match (text(0), int(1), int(2)) {
            (Some(s), Some(a), Some(b)) => Some(Expr::String(moss_mslc::substring(s, a, b))),
            _ => None,
        },
        "ModelicaStrings_compare" => match (text(0), text(1), boolean(2)) {
            (Some(a), Some(b), Some(case)) => {
                let ordinal = moss_mslc::compare(a, b, case);
                match func.outputs.first().map(|o| &o.ty) {
                    Some(crate::flat::ScalarType::Enumeration { name, literals }) => {
                        literals.get(ordinal as usize - 1).map(|l| Expr::Enum {
                            ty: name.clone(),
                            literal: l.clone(),
                            index: ordinal as u32,
                        })
                    }
                    _ => Some(Expr::Integer(ordinal)),
                }
            }
            _ => None,
        },
        _ => None,
    };
    let (Some(result), Some(out)) = (result, func.outputs.first()) else {
        return Ok(false);
    };
    fr.vars.insert(out.name.clone(), Val::S(result));
    Ok(true)
}

/// Run the MSL's matrix file readers (`ModelicaIO_readMatrixSizes`,
/// `ModelicaIO_readRealMatrix`) natively, so that a parameter bound to
/// `Streams.readRealMatrix(file, name, dim[1], dim[2])` with `dim =
/// Streams.readMatrixSize(file, name)` has its size and values at translation time. `false`
/// for other routines or arguments not known now; a file that cannot be read is an error.
fn run_matrix_file_io(
    f: &Flattener,
    func: &crate::flat::Function,
    routine: &str,
    args: &[Expr],
    fr: &mut Frame,
    span: Span,
) -> Res<bool> {
    if !matches!(
        routine,
        "ModelicaIO_readMatrixSizes" | "ModelicaIO_readRealMatrix"
    ) {
        return Ok(false);
    }
    let text = |k: usize, fr: &mut Frame| -> Res<Option<String>> {
        let Some(a) = args.get(k) else {
            return Ok(None);
        };
        Ok(match eval(f, a, fr, span)? {
            Some(Val::S(Expr::String(s))) => Some(s),
            _ => None,
        })
    };
    let (Some(file), Some(name)) = (text(0, fr)?, text(1, fr)?) else {
        return Ok(false);
    };
    let Some(Expr::Var { name: out, .. }) = args.get(2) else {
        return Ok(false);
    };
    let matrix = moss_matio::read_matrix(&file, &name)
        .or_else(|e| err(span, format!("in function `{}`: {e}", func.name)))?;
    let value = if routine == "ModelicaIO_readMatrixSizes" {
        Val::A(vec![
            Val::S(Expr::Integer(matrix.rows as i64)),
            Val::S(Expr::Integer(matrix.cols as i64)),
        ])
    } else {
        let declared: Vec<i64> = (3..5)
            .filter_map(|k| args.get(k))
            .map(|a| eval(f, a, fr, span))
            .collect::<Res<Vec<_>>>()?
            .into_iter()
            .flatten()
            .filter_map(|v| v.scalar().and_then(fold::as_i64))
            .collect();
        if declared != [matrix.rows as i64, matrix.cols as i64] {
            return err(
                span,
                format!(
                    "in function `{}`: matrix `{name}` in `{file}` is {} x {}, not {}",
                    func.name,
                    matrix.rows,
                    matrix.cols,
                    declared
                        .iter()
                        .map(|d| d.to_string())
                        .collect::<Vec<_>>()
                        .join(" x ")
                ),
            );
        }
        let mut items = matrix.data.iter().map(|&x| Val::S(Expr::Real(x)));
        reshape(&[matrix.rows, matrix.cols], &mut items)
    };
    fr.vars.insert(out.clone(), value);
    Ok(true)
}

/// The next elements of `items` as a nested array of shape `dims` (a scalar for `[]`).
fn reshape(dims: &[usize], items: &mut impl Iterator<Item = Val>) -> Val {
    match dims.split_first() {
        None => items.next().unwrap_or(Val::S(Expr::Real(0.0))),
        Some((&n, rest)) => Val::A((0..n).map(|_| reshape(rest, items)).collect()),
    }
}

/// Execute statements; `None` when something cannot be evaluated.
fn exec(f: &Flattener, body: &[Statement], fr: &mut Frame, span: Span) -> Res<Option<Flow>> {
    for s in body {
        fr.steps += 1;
        if fr.steps > MAX_STEPS {
            return err(span, "function evaluation takes too many steps");
        }
        match s {
            Statement::Assign { target, value, .. } => {
                let Some(v) = eval(f, value, fr, span)? else {
                    return Ok(None);
                };
                if !assign(f, target, v, fr, span)? {
                    return Ok(None);
                }
            }
            Statement::If {
                branches, else_, ..
            } => {
                let mut taken = false;
                for (c, b) in branches {
                    match eval(f, c, fr, span)? {
                        Some(Val::S(Expr::Boolean(true))) => {
                            match exec(f, b, fr, span)? {
                                Some(Flow::Normal) => {}
                                other => return Ok(other),
                            }
                            taken = true;
                            break;
                        }
                        Some(Val::S(Expr::Boolean(false))) => {}
                        _ => return Ok(None),
                    }
                }
                if !taken {
                    match exec(f, else_, fr, span)? {
                        Some(Flow::Normal) => {}
                        other => return Ok(other),
                    }
                }
            }
            Statement::For {
                var, range, body, ..
            } => {
                let Some(Val::A(items)) = eval(f, range, fr, span)? else {
                    return Ok(None);
                };
                for it in items {
                    fr.vars.insert(var.clone(), it);
                    match exec(f, body, fr, span)? {
                        Some(Flow::Normal) => {}
                        Some(Flow::Break) => break,
                        other => return Ok(other),
                    }
                }
            }
            Statement::While {
                condition, body, ..
            } => loop {
                fr.steps += 1;
                if fr.steps > MAX_STEPS {
                    return err(span, "function evaluation takes too many steps");
                }
                match eval(f, condition, fr, span)? {
                    Some(Val::S(Expr::Boolean(true))) => match exec(f, body, fr, span)? {
                        Some(Flow::Normal) => {}
                        Some(Flow::Break) => break,
                        other => return Ok(other),
                    },
                    Some(Val::S(Expr::Boolean(false))) => break,
                    _ => return Ok(None),
                }
            },
            Statement::Assert {
                condition, message, ..
            } => {
                if let Some(Val::S(Expr::Boolean(false))) = eval(f, condition, fr, span)? {
                    let msg = match eval(f, message, fr, span)? {
                        Some(Val::S(Expr::String(m))) => m,
                        _ => String::new(),
                    };
                    return err(
                        span,
                        format!("assertion failed while evaluating a function: {msg}"),
                    );
                }
            }
            Statement::TupleAssign { targets, value, .. } => {
                let Expr::Call { func, args } = value else {
                    return Ok(None);
                };
                let Some(id) = f.functions.borrow().get(func).copied() else {
                    return Ok(None);
                };
                let mut vals = Vec::new();
                for a in args {
                    match eval(f, a, fr, span)? {
                        Some(v) => vals.push(v),
                        None => return Ok(None),
                    }
                }
                let Some(outs) = call_outputs(f, func, id, &vals, span)? else {
                    return Ok(None);
                };
                for (t, v) in targets.iter().zip(outs) {
                    if let Some(t) = t {
                        if !assign(f, t, v, fr, span)? {
                            return Ok(None);
                        }
                    }
                }
            }
            Statement::Return { .. } => return Ok(Some(Flow::Return)),
            Statement::Break { .. } => return Ok(Some(Flow::Break)),
            _ => return Ok(None),
        }
    }
    Ok(Some(Flow::Normal))
}

/// One evaluated subscript: `:` (`All`), an index, or a list of indices (`x[2:3]`).
enum Sub {
    All,
    One(usize),
    Many(Vec<usize>),
}

fn index_of(
    f: &Flattener,
    subs: &[Subscript],
    fr: &mut Frame,
    span: Span,
) -> Res<Option<Vec<Sub>>> {
    let mut out = Vec::new();
    for s in subs {
        match s {
            Subscript::All => out.push(Sub::All),
            Subscript::Index(e) => match eval(f, e, fr, span)? {
                Some(Val::S(x)) => match fold::as_i64(&x) {
                    Some(i) if i >= 1 => out.push(Sub::One(i as usize - 1)),
                    _ => return Ok(None),
                },
                Some(Val::A(items)) => {
                    let mut is = Vec::new();
                    for it in items {
                        match it.scalar().and_then(fold::as_i64) {
                            Some(i) if i >= 1 => is.push(i as usize - 1),
                            _ => return Ok(None),
                        }
                    }
                    out.push(Sub::Many(is));
                }
                _ => return Ok(None),
            },
        }
    }
    Ok(Some(out))
}

fn assign(f: &Flattener, target: &Expr, v: Val, fr: &mut Frame, span: Span) -> Res<bool> {
    let Expr::Var { name, subscripts } = target else {
        return Ok(false);
    };
    if subscripts.is_empty() {
        fr.vars.insert(name.clone(), v);
        return Ok(true);
    }
    let Some(idx) = index_of(f, subscripts, fr, span)? else {
        return Ok(false);
    };
    let Some(cur) = fr.vars.get_mut(name) else {
        return Ok(false);
    };
    if !put(cur, &idx, v) {
        return err(span, format!("index out of bounds assigning `{name}`"));
    }
    Ok(true)
}

/// Store `v` at subscripts `idx` of `slot` (slices take arrays of their size).
fn put(slot: &mut Val, idx: &[Sub], v: Val) -> bool {
    let Some((first, rest)) = idx.split_first() else {
        *slot = v;
        return true;
    };
    let Val::A(items) = slot else {
        return false;
    };
    match first {
        Sub::One(i) => match items.get_mut(*i) {
            Some(x) => put(x, rest, v),
            None => false,
        },
        Sub::All => match v {
            Val::A(vs) if vs.len() == items.len() => {
                items.iter_mut().zip(vs).all(|(x, y)| put(x, rest, y))
            }
            _ => false,
        },
        Sub::Many(is) => match v {
            Val::A(vs) if vs.len() == is.len() => {
                is.iter().zip(vs).all(|(i, y)| match items.get_mut(*i) {
                    Some(x) => put(x, rest, y),
                    None => false,
                })
            }
            _ => false,
        },
    }
}

/// Evaluate a flat expression of a function body to a literal value.
fn eval(f: &Flattener, e: &Expr, fr: &mut Frame, span: Span) -> Res<Option<Val>> {
    Ok(Some(match e {
        Expr::Real(_)
        | Expr::Integer(_)
        | Expr::Boolean(_)
        | Expr::String(_)
        | Expr::Enum { .. } => Val::S(e.clone()),
        Expr::Var { name, subscripts } => {
            let Some(v) = fr.vars.get(name).cloned() else {
                return Ok(None);
            };
            let Some(idx) = index_of(f, subscripts, fr, span)? else {
                return Ok(None);
            };
            select(v, &idx)
        }
        Expr::Time => return Ok(None),
        Expr::Unary { op, arg } => {
            let Some(a) = eval(f, arg, fr, span)? else {
                return Ok(None);
            };
            a.map(&mut |x| fold::unary(*op, x))
        }
        Expr::Binary { op, lhs, rhs } => {
            let (Some(a), Some(b)) = (eval(f, lhs, fr, span)?, eval(f, rhs, fr, span)?) else {
                return Ok(None);
            };
            f.binary_flat(*op, a, b, span)?
        }
        Expr::Call { func, args } => {
            let mut vals = Vec::new();
            for a in args {
                match eval(f, a, fr, span)? {
                    Some(v) => vals.push(v),
                    None => return Ok(None),
                }
            }
            if crate::flat::BUILTINS.contains(&func.as_str()) {
                f.builtin(func, vals, span)?
            } else {
                let id = f.functions.borrow().get(func).copied();
                match id {
                    Some(id) => match call_function_named(f, func, id, &vals, span)? {
                        Some(v) => v,
                        None => return Ok(None),
                    },
                    None => return Ok(None),
                }
            }
        }
        Expr::If { branches, else_ } => {
            for (c, v) in branches {
                match eval(f, c, fr, span)? {
                    Some(Val::S(Expr::Boolean(true))) => return eval(f, v, fr, span),
                    Some(Val::S(Expr::Boolean(false))) => {}
                    _ => return Ok(None),
                }
            }
            return eval(f, else_, fr, span);
        }
        Expr::Array(items) => {
            let mut out = Vec::new();
            for i in items {
                match eval(f, i, fr, span)? {
                    Some(v) => out.push(v),
                    None => return Ok(None),
                }
            }
            Val::A(out)
        }
        Expr::Range { start, step, stop } => {
            let s = eval(f, start, fr, span)?.and_then(|v| v.scalar().cloned());
            let t = eval(f, stop, fr, span)?.and_then(|v| v.scalar().cloned());
            let st = match step {
                Some(x) => eval(f, x, fr, span)?.and_then(|v| v.scalar().cloned()),
                None => Some(Expr::Integer(1)),
            };
            let (Some(s), Some(t), Some(st)) = (s, t, st) else {
                return Ok(None);
            };
            // the same elements as a range in a declaration (Real ranges too: `d:d:1`)
            match crate::expand::range_values(&s, step.as_ref().map(|_| &st), &t, span) {
                Ok(v) => v,
                Err(_) => return Ok(None),
            }
        }
        Expr::Tuple(_) | Expr::CallOutput { .. } => return Ok(None),
    }))
}

fn select(v: Val, idx: &[Sub]) -> Val {
    let Some((first, rest)) = idx.split_first() else {
        return v;
    };
    match (v, first) {
        (Val::A(mut items), Sub::One(i)) if *i < items.len() => select(items.swap_remove(*i), rest),
        (Val::A(items), Sub::All) => Val::A(items.into_iter().map(|x| select(x, rest)).collect()),
        (Val::A(items), Sub::Many(is)) => Val::A(
            is.iter()
                .filter_map(|i| items.get(*i).cloned())
                .map(|x| select(x, rest))
                .collect(),
        ),
        (other, _) => other,
    }
}
