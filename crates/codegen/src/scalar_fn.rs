//! Scalar functions compiled to a compact form and run on `f64` frames.
//!
//! Media property functions (Helmholtz energies, their derivatives, the Newton loops that
//! invert them) are made of scalar Reals, Integers and Booleans, loops over constant
//! coefficient tables and calls of other such functions. The tree interpreter of `func.rs`
//! runs them with dynamically typed [`Value`]s, a heap-allocated frame per call and a copy
//! of every value read; it dominated the run time of the media examples. A function whose
//! inputs, outputs and locals are all scalars is compiled here once more, from its
//! [`FStmt`]/[`FExpr`] trees, into [`SStmt`]/[`SExpr`]: every value is an `f64` (Integers
//! and Booleans are exact in it), constant tables are `f64` slices indexed in place,
//! constant built-in calls are folded, frames come from a pool, calls of other scalar
//! functions pass `f64`s directly, and built-in math runs without dispatch on value kinds.
//!
//! Local arrays of constant size (the IF97 functions keep the powers of their arguments in
//! `Real o[20]`) get one frame slot per element and are read and written element by element.
//!
//! Array inputs of constant size (the Spice3 device functions take the terminal voltages
//! as `v[6]`, next to dozens of record fields that arrive as scalars) are laid out in the
//! frame the same way; the caller passes their elements.
//!
//! Anything the compiler does not cover keeps the tree interpreter: a function with an
//! array output or an input of variable size, a string variable, a local array used as a whole, or a statement
//! or expression outside the scalar subset,
//! simply gets no compiled form. Inside a compiled function, an argument of a call that is
//! not a scalar (a slice of a table, an array constant) and the message of a failing
//! assertion are evaluated by the tree interpreter on a [`Value`] copy of the frame.
//! `MOSS_TREE_FUNCTIONS=1` turns the compiled form off (to compare both paths).

use crate::builtins::{call_builtin, Builtin, Math1, Math2};
use crate::func::{constant_values, CBody, CFunction, Env, FExpr, FStmt, FSub, FTarget, Ty};
use crate::value::{to_modelica_string, VResult, Value};
use moss_frontend::flat::{AssertLevel, BinaryOp};
use std::sync::Arc;

mod arrays;

/// A function compiled to the scalar form.
#[derive(Clone, Debug)]
pub struct ScalarFn {
    pub(crate) frame_size: usize,
    pub(crate) local_types: Vec<Ty>,
    /// Every input, in declaration order.
    pub(crate) inputs: Vec<SInput>,
    /// The bindings of outputs and locals, in initialization order (the others start at
    /// 0): assignments of scalars, element assignments of arrays.
    pub(crate) init: Vec<SStmt>,
    /// Every output in declaration order: its slot (the first element's, for an array)
    /// and element type.
    pub(crate) outputs: Vec<(u32, Ty)>,
    /// The dimensions of each output that is an array of constant size (`None`: a scalar).
    output_dims: Vec<Option<Arc<[usize]>>>,
    /// Whether one of them is an array, and the number of output elements (kept: both are
    /// asked on every call).
    array_outputs: bool,
    flat_len: usize,
    pub(crate) body: Vec<SStmt>,
}

impl ScalarFn {
    /// Whether the compiled form can take `args` (positional, possibly fewer than the
    /// inputs: the rest have defaults): scalars for scalar inputs, arrays of the declared
    /// shapes for array inputs.
    pub fn accepts(&self, args: &[Value]) -> bool {
        self.takes(args.len())
            && args
                .iter()
                .zip(&self.inputs)
                .all(|(a, input)| input.accepts(a))
    }

    /// Whether a call may pass the first `nargs` inputs: every input after them has a
    /// default of the compiled form (an array default of another size than a specialized
    /// copy's input has none: such a copy is only made for calls that pass the input).
    pub(crate) fn takes(&self, nargs: usize) -> bool {
        nargs <= self.inputs.len() && self.inputs[nargs..].iter().all(|i| i.default.is_some())
    }

    /// Whether an output is an array (a record output's vector field: moist air's
    /// `setState_pTX` returns `state.X`). Such a function returns its outputs as values
    /// ([`Env::call_scalar_values`]) or flattened ([`ScalarFn::flat_outputs`]); scalar
    /// callers read its scalar outputs, and whole arrays by [`SStmt::TupleArrays`].
    pub(crate) fn has_array_outputs(&self) -> bool {
        self.array_outputs
    }

    /// The frame slots of the outputs' elements: declaration order, arrays row-major (the
    /// order of a model's flattened call outputs).
    fn flat_outputs(&self) -> impl Iterator<Item = (u32, Ty)> + '_ {
        // scalar outputs only (nearly every function): the slice itself, on every call
        let scalars = (!self.array_outputs).then(|| self.outputs.iter().copied());
        let arrays = self.array_outputs.then(|| {
            self.outputs
                .iter()
                .zip(&self.output_dims)
                .flat_map(|(&(slot, ty), dims)| {
                    let n = dims.as_ref().map_or(1, |d| d.iter().product::<usize>()) as u32;
                    (slot..slot + n).map(move |s| (s, ty))
                })
        });
        scalars
            .into_iter()
            .flatten()
            .chain(arrays.into_iter().flatten())
    }

    /// Position among [`ScalarFn::flat_outputs`] of output `index` when it is a scalar.
    pub(crate) fn flat_position(&self, index: usize) -> Option<usize> {
        if self.output_dims.get(index)?.is_some() {
            return None;
        }
        Some(self.flat_start(index))
    }

    /// Position among [`ScalarFn::flat_outputs`] of the first element of output `index`.
    pub(crate) fn flat_start(&self, index: usize) -> usize {
        self.output_dims[..index.min(self.output_dims.len())]
            .iter()
            .map(|d| d.as_ref().map_or(1, |d| d.iter().product::<usize>()))
            .sum()
    }

    /// The number of [`ScalarFn::flat_outputs`].
    pub(crate) fn flat_output_count(&self) -> usize {
        self.flat_len
    }

    /// Whether output `index` is an array.
    pub(crate) fn output_is_array(&self, index: usize) -> bool {
        self.output_dims.get(index).is_some_and(Option::is_some)
    }

    /// Output `index` read from a finished frame: a scalar, or an array of its dimensions.
    fn output_value(&self, index: usize, frame: &[f64]) -> Value {
        let (slot, ty) = self.outputs[index];
        match &self.output_dims[index] {
            None => ty.value_of(frame[slot as usize]),
            Some(dims) => {
                let n: usize = dims.iter().product();
                let start = slot as usize;
                Value::Array(crate::value::ArrayVal {
                    dims: dims.to_vec(),
                    data: frame[start..start + n]
                        .iter()
                        .map(|&x| ty.value_of(x))
                        .collect(),
                })
            }
        }
    }

    /// Zero every slot but the inputs' (undo what an abandoned native run wrote).
    fn reset_locals(&self, frame: &mut [f64]) {
        let mut keep = vec![false; frame.len()];
        for input in &self.inputs {
            let start = input.slot as usize;
            keep[start..start + input.len()].fill(true);
        }
        for (x, keep) in frame.iter_mut().zip(keep) {
            if !keep {
                *x = 0.0;
            }
        }
    }
}

/// An input of a scalar function: a scalar at frame slot `slot`, or an array of constant
/// size (a record's voltage vector `v[6]`) laid out row-major from `slot` on.
#[derive(Clone, Debug)]
pub(crate) struct SInput {
    pub(crate) slot: u32,
    pub(crate) ty: Ty,
    /// The default's value, one expression per element.
    default: Option<Vec<SExpr>>,
    pub(crate) dims: Option<Arc<[usize]>>,
}

impl SInput {
    /// A String input, which the compiled form has only when nothing reads it: whatever
    /// is passed is ignored.
    pub(crate) fn ignored(&self) -> bool {
        self.ty == Ty::Str
    }

    /// Frame slots the input occupies.
    pub(crate) fn len(&self) -> usize {
        self.dims.as_ref().map_or(1, |d| d.iter().product())
    }

    /// Whether `v` can be passed for this input: a scalar for a scalar, an array of the
    /// declared shape with scalar elements for an array.
    fn accepts(&self, v: &Value) -> bool {
        if self.ignored() {
            return true;
        }
        match (&self.dims, v) {
            (None, Value::Real(_) | Value::Int(_) | Value::Bool(_)) => true,
            (Some(dims), Value::Array(a)) => {
                a.dims.as_slice() == &**dims && a.data.iter().all(|x| scalar_const(x).is_some())
            }
            _ => false,
        }
    }

    /// Store `v` (accepted by [`SInput::accepts`]) into the frame.
    fn store(&self, v: &Value, frame: &mut [f64]) -> VResult<()> {
        if self.ignored() {
            return Ok(());
        }
        let base = self.slot as usize;
        match v {
            Value::Array(a) if self.dims.is_some() => {
                for (k, x) in a.data.iter().enumerate() {
                    frame[base + k] = coerce(self.ty, x.as_f64()?);
                }
            }
            _ => frame[base] = coerce(self.ty, v.as_f64()?),
        }
        Ok(())
    }
}

#[derive(Clone, Debug)]
pub(crate) enum SExpr {
    Const(f64),
    Local(u32),
    Neg(Box<SExpr>),
    Not(Box<SExpr>),
    Bin(BinaryOp, Box<SExpr>, Box<SExpr>),
    /// Element of a constant table: data (row-major), dimensions, one index per dimension.
    Elem(Arc<[f64]>, Arc<[usize]>, Vec<SExpr>),
    /// Element of a constant vector (the common case in coefficient loops).
    Elem1(Arc<[f64]>, Box<SExpr>),
    /// Element of a local array of fixed size: its first frame slot, dimensions, one index
    /// per dimension.
    LocalElem(u32, Arc<[usize]>, Vec<SExpr>),
    M1(Math1, Box<SExpr>),
    M2(Math2, Box<SExpr>, Box<SExpr>),
    /// `Integer(x)`: the largest Integer not greater than x.
    Floor(Box<SExpr>),
    ToBool(Box<SExpr>),
    SemiLinear(Box<[SExpr; 3]>),
    /// Output `index` of function `f`.
    Call(u32, Vec<SArg>, usize),
    If(Vec<(SExpr, SExpr)>, Box<SExpr>),
}

/// An argument of a call: a scalar, a local array of fixed size passed whole (its first
/// frame slot, dimensions and element type), or anything else, evaluated by the tree
/// interpreter.
#[derive(Clone, Debug)]
pub(crate) enum SArg {
    Scalar(SExpr),
    Array(u32, Arc<[usize]>, Ty),
    /// An array expression of constant size, element by element (a record constant's
    /// coefficient vector, an array literal): its dimensions and elements.
    Elements(Arc<[usize]>, Vec<SExpr>),
    Value(FExpr),
}

/// A target of [`SStmt::TupleArrays`]: a scalar local, or a local array (first slot,
/// number of elements, element type).
#[derive(Clone, Debug)]
pub(crate) enum TupleTarget {
    Scalar(u32, Ty),
    Array(u32, usize, Ty),
}

#[derive(Clone, Debug)]
pub(crate) enum SStmt {
    Assign(u32, Ty, SExpr),
    /// `a[i, ...] := e` of a local array: first slot, dimensions, indices, element type.
    AssignElem(u32, Arc<[usize]>, Vec<SExpr>, Ty, SExpr),
    Tuple(Vec<Option<(u32, Ty)>>, u32, Vec<SArg>),
    /// A tuple call with whole local arrays among its targets (the callee's array outputs).
    TupleArrays(Vec<Option<TupleTarget>>, u32, Vec<SArg>),
    Call(u32, Vec<SArg>),
    If(Vec<(SExpr, Vec<SStmt>)>, Vec<SStmt>),
    /// Loop variable, start, step, stop, body.
    For(u32, SExpr, Option<SExpr>, SExpr, Vec<SStmt>),
    While(SExpr, Vec<SStmt>),
    Assert(SExpr, FExpr, AssertLevel),
    Return,
    Break,
}

/// Whether the compiled form is used (`MOSS_TREE_FUNCTIONS=1` keeps the tree interpreter
/// for every function, to compare the two).
pub fn enabled() -> bool {
    std::env::var_os("MOSS_TREE_FUNCTIONS").is_none_or(|v| v != "1")
}

/// The scalar form of `f`, or `None` when it uses anything outside the scalar subset.
///
/// Local arrays of constant size without a binding (the IF97 functions' `o[20]` of powers
/// of their arguments) are laid out in the frame after the scalars, one slot per element,
/// and read and written element by element; any other use of such an array (as a whole, a
/// slice, an argument) keeps the function in the tree interpreter.
pub fn compile(
    f: &CFunction,
    callees: &CalleeOutputs,
    ignored_inputs: &[bool],
) -> Option<ScalarFn> {
    let CBody::Stmts(stmts) = &f.body else {
        return None;
    };
    if f.outputs.iter().any(|d| d.ty == Ty::Str) {
        return None;
    }
    // String inputs the body never reads (the `name` of a medium's data record, passed
    // along with its numbers) are accepted and ignored (`ignored_string_inputs`); any other
    // String keeps the function in the tree interpreter
    let unread: Vec<u32> = f
        .inputs
        .iter()
        .zip(ignored_inputs)
        .filter(|(_, &ignored)| ignored)
        .map(|(d, _)| d.slot)
        .collect();
    let string_local = f
        .local_types
        .iter()
        .enumerate()
        .any(|(slot, ty)| *ty == Ty::Str && !unread.contains(&(slot as u32)));
    if string_local {
        return None;
    }
    let mut cx = Compiler {
        arrays: Default::default(),
        callees,
    };
    let mut frame_size = f.local_types.len();
    // array inputs of constant size are laid out after the scalars, like local arrays
    let mut input_dims = Vec::with_capacity(f.inputs.len());
    for d in &f.inputs {
        if unread.contains(&d.slot) {
            if !d.dims.is_empty() {
                return None;
            }
            input_dims.push(None);
            continue;
        }
        if d.ty == Ty::Str {
            return None;
        }
        if d.dims.is_empty() {
            input_dims.push(None);
            continue;
        }
        let dims: Arc<[usize]> = constant_dims(d)?.into();
        let len: usize = dims.iter().product();
        if len > MAX_LOCAL_ARRAY {
            return None;
        }
        let base = u32::try_from(frame_size).ok()?;
        cx.arrays.insert(
            d.slot,
            LocalArray {
                base,
                dims: dims.clone(),
                ty: d.ty,
            },
        );
        input_dims.push(Some((base, dims)));
        frame_size += len;
    }
    for d in f.initialized.iter().filter(|d| !d.dims.is_empty()) {
        let dims = constant_dims(d)?;
        let len: usize = dims.iter().product();
        if len > MAX_LOCAL_ARRAY {
            return None;
        }
        cx.arrays.insert(
            d.slot,
            LocalArray {
                base: u32::try_from(frame_size).ok()?,
                dims: dims.into(),
                ty: d.ty,
            },
        );
        frame_size += len;
    }
    let inputs = f
        .inputs
        .iter()
        .zip(input_dims)
        .map(|(d, array)| {
            let default = match (&d.default, &array) {
                (Some(_), _) if unread.contains(&d.slot) => None,
                (Some(e), None) => Some(vec![cx.expr(e)?]),
                // an array default of the input's size (`X[:] = reference_X`)
                (Some(e), Some((_, dims))) => cx
                    .elements(e)
                    .filter(|x| x.dims.as_slice() == &**dims)
                    .map(|x| x.items),
                (None, _) => None,
            };
            Some(match array {
                Some((base, dims)) => SInput {
                    slot: base,
                    ty: d.ty,
                    default,
                    dims: Some(dims),
                },
                None => SInput {
                    slot: d.slot,
                    ty: d.ty,
                    default,
                    dims: None,
                },
            })
        })
        .collect::<Option<_>>()?;
    // array outputs of constant size are laid out like local arrays (above)
    let output_dims = f
        .outputs
        .iter()
        .map(|d| match d.dims.is_empty() {
            true => Some(None),
            false => cx.arrays.get(&d.slot).map(|a| Some(a.dims.clone())),
        })
        .collect::<Option<Vec<_>>>()?;
    let outputs = f
        .outputs
        .iter()
        .map(|d| (cx.arrays.get(&d.slot).map_or(d.slot, |a| a.base), d.ty))
        .collect();
    let mut init = Vec::new();
    for d in &f.initialized {
        let Some(e) = &d.default else { continue };
        match cx.arrays.get(&d.slot) {
            None => init.push(SStmt::Assign(d.slot, d.ty, cx.expr(e)?)),
            // `Real v2[3] = {v[1]^2, v[2]^2, v[3]^2}`, `Real c[3] = solve(A, b)`
            Some(a) => init.extend(cx.assign_array(a, e)?),
        }
    }
    Some(ScalarFn {
        frame_size,
        local_types: f.local_types.clone(),
        inputs,
        init,
        outputs,
        array_outputs: output_dims.iter().any(Option::is_some),
        flat_len: output_dims
            .iter()
            .map(|d| d.as_ref().map_or(1, |d| d.iter().product::<usize>()))
            .sum(),
        output_dims,
        body: cx.stmts_of(stmts)?,
    })
}

fn scalar_const(v: &Value) -> Option<f64> {
    match v {
        Value::Real(_) | Value::Int(_) | Value::Bool(_) => v.as_f64().ok(),
        _ => None,
    }
}

/// What a caller knows of every function's outputs before any is compiled.
pub struct CalleeOutputs {
    /// Which outputs are scalars (Real, Integer, Boolean).
    scalar: Vec<Vec<bool>>,
    /// Which outputs are numeric arrays, and their sizes where constant.
    arrays: Vec<Vec<OutputShape>>,
}

/// An output as a whole-array target sees it.
#[derive(Clone, Debug, PartialEq)]
enum OutputShape {
    NotArray,
    Fixed(Vec<usize>),
    /// Sizes known only when the call returns (an external LAPACK routine's result):
    /// checked then.
    Open,
}

impl CalleeOutputs {
    /// Whether output `k` of function `f` can be stored into a local array of `dims`.
    fn fits(&self, f: u32, k: usize, dims: &[usize]) -> bool {
        match self.arrays.get(f as usize).and_then(|o| o.get(k)) {
            Some(OutputShape::Fixed(d)) => d.as_slice() == dims,
            Some(OutputShape::Open) => true,
            Some(OutputShape::NotArray) | None => false,
        }
    }
}

/// The outputs of the program's functions, from their declarations.
pub fn callee_outputs(funcs: &[CFunction]) -> CalleeOutputs {
    CalleeOutputs {
        scalar: funcs
            .iter()
            .map(|f| {
                f.outputs
                    .iter()
                    .map(|d| d.dims.is_empty() && d.ty != Ty::Str)
                    .collect()
            })
            .collect(),
        arrays: funcs
            .iter()
            .map(|f| {
                f.outputs
                    .iter()
                    .map(|d| match d.dims.is_empty() || d.ty == Ty::Str {
                        true => OutputShape::NotArray,
                        false => constant_dims(d).map_or(OutputShape::Open, OutputShape::Fixed),
                    })
                    .collect()
            })
            .collect(),
    }
}

/// For every function, which inputs are String scalars that nothing in it reads except
/// to pass them on to such inputs of its callees (the `name` of an ideal gas's data record,
/// handed from `h_Tlow_der` to `cp_Tlow`). Computed to a fixed point from "all of them", so
/// recursion does not make a String look read.
pub fn ignored_string_inputs(funcs: &[CFunction]) -> Vec<Vec<bool>> {
    let mut ignored: Vec<Vec<bool>> = funcs
        .iter()
        .map(|f| {
            let body = matches!(f.body, CBody::Stmts(_));
            f.inputs
                .iter()
                .map(|d| body && d.ty == Ty::Str && d.dims.is_empty())
                .collect()
        })
        .collect();
    loop {
        let mut changed = false;
        for (k, f) in funcs.iter().enumerate() {
            for j in 0..f.inputs.len() {
                if ignored[k][j] && string_is_read(f, f.inputs[j].slot, &ignored) {
                    ignored[k][j] = false;
                    changed = true;
                }
            }
        }
        if !changed {
            return ignored;
        }
    }
}

/// Whether `slot` is read in `f` other than as an argument for an ignored input.
fn string_is_read(f: &CFunction, slot: u32, ignored: &[Vec<bool>]) -> bool {
    use crate::specialize::{walk_expr_mut, walk_stmt_mut, Visit};
    let CBody::Stmts(stmts) = &f.body else {
        return true;
    };
    let passed_on = |g: u32, args: &mut [FExpr]| {
        for (j, a) in args.iter_mut().enumerate() {
            let ignored_there = ignored
                .get(g as usize)
                .and_then(|i| i.get(j))
                .copied()
                .unwrap_or(false);
            if ignored_there && matches!(a, FExpr::Local(s) if *s == slot) {
                *a = FExpr::Const(Value::Int(0));
            }
        }
    };
    // arguments passed on are blanked out first; anything still naming the slot reads it
    let mut body = stmts.to_vec();
    for s in &mut body {
        walk_stmt_mut(s, &mut |v| match v {
            Visit::Expr(FExpr::Call(g, args, _)) => passed_on(*g, args),
            Visit::Tuple(g, args) => passed_on(*g, args),
            Visit::Expr(_) => {}
        });
    }
    let mut read = false;
    let mut note = |e: &mut FExpr| match e {
        FExpr::Local(s) if *s == slot => read = true,
        FExpr::Index(base, _) if matches!(**base, FExpr::Local(s) if s == slot) => read = true,
        _ => {}
    };
    for s in &mut body {
        walk_stmt_mut(s, &mut |v| {
            if let Visit::Expr(e) = v {
                note(e)
            }
        });
    }
    let mut decls: Vec<FExpr> = f
        .inputs
        .iter()
        .chain(&f.initialized)
        .flat_map(|d| d.default.iter().chain(d.dims.iter().flatten()))
        .cloned()
        .collect();
    for e in &mut decls {
        walk_expr_mut(e, &mut note);
    }
    read
}

/// Largest local array laid out in a scalar frame (elements).
const MAX_LOCAL_ARRAY: usize = 4096;

/// The sizes of a local array declared with constant dimensions.
fn constant_dims(d: &crate::func::FVarDecl) -> Option<Vec<usize>> {
    d.dims
        .iter()
        .map(|e| match e {
            Some(FExpr::Const(v)) => {
                let x = scalar_const(v)?;
                (x >= 0.0 && x.fract() == 0.0).then_some(x as usize)
            }
            _ => None,
        })
        .collect()
}

/// A local array of fixed size in a scalar frame.
#[derive(Clone, Debug)]
struct LocalArray {
    base: u32,
    dims: Arc<[usize]>,
    ty: Ty,
}

/// Compiles statements and expressions to the scalar form; knows the local arrays and
/// which outputs of the program's functions are scalars.
struct Compiler<'a> {
    arrays: rustc_hash::FxHashMap<u32, LocalArray>,
    callees: &'a CalleeOutputs,
}

impl Compiler<'_> {
    fn stmts_of(&self, stmts: &[FStmt]) -> Option<Vec<SStmt>> {
        let mut out = Vec::with_capacity(stmts.len());
        for s in stmts {
            match s {
                // a whole local array assigned: one statement per element
                FStmt::Assign(FTarget::Local(slot, _), e) if self.arrays.contains_key(slot) => {
                    out.extend(self.assign_array(&self.arrays[slot], e)?);
                }
                _ => out.push(self.stmt(s)?),
            }
        }
        Some(out)
    }

    fn stmt(&self, s: &FStmt) -> Option<SStmt> {
        Some(match s {
            FStmt::Assign(FTarget::Local(slot, ty), e) if !self.arrays.contains_key(slot) => {
                SStmt::Assign(*slot, *ty, self.expr(e)?)
            }
            FStmt::Assign(FTarget::LocalIndexed(slot, subs), e) => {
                let a = self.arrays.get(slot)?;
                SStmt::AssignElem(
                    a.base,
                    a.dims.clone(),
                    self.indices(a, subs)?,
                    a.ty,
                    self.expr(e)?,
                )
            }
            FStmt::Tuple(targets, f, args) => {
                let whole = targets.iter().any(
                    |t| matches!(t, Some(FTarget::Local(slot, _)) if self.arrays.contains_key(slot)),
                );
                if whole {
                    return self.tuple_with_arrays(targets, *f, args);
                }
                let ts = targets
                    .iter()
                    .map(|t| match t {
                        None => Some(None),
                        Some(FTarget::Local(slot, ty)) => Some(Some((*slot, *ty))),
                        Some(_) => None,
                    })
                    .collect::<Option<_>>()?;
                SStmt::Tuple(ts, *f, self.args(args)?)
            }
            FStmt::Eval(FExpr::Call(f, args, _)) => SStmt::Call(*f, self.args(args)?),
            FStmt::If(branches, else_) => {
                let bs = branches
                    .iter()
                    .map(|(c, b)| Some((self.expr(c)?, self.stmts_of(b)?)))
                    .collect::<Option<_>>()?;
                SStmt::If(bs, self.stmts_of(else_)?)
            }
            FStmt::For(slot, FExpr::Range(a, step, b), body) => SStmt::For(
                *slot,
                self.expr(a)?,
                match step {
                    Some(s) => Some(self.expr(s)?),
                    None => None,
                },
                self.expr(b)?,
                self.stmts_of(body)?,
            ),
            FStmt::While(c, body) => SStmt::While(self.expr(c)?, self.stmts_of(body)?),
            FStmt::Assert(c, msg, level) => {
                if self.mentions_array(msg) {
                    return None;
                }
                SStmt::Assert(self.expr(c)?, msg.clone(), *level)
            }
            FStmt::Return => SStmt::Return,
            FStmt::Break => SStmt::Break,
            _ => return None,
        })
    }

    /// `x := e` for a whole local array: element by element ([`Compiler::assign_whole`]),
    /// or from a call's array output of the same size.
    fn assign_array(&self, a: &LocalArray, e: &FExpr) -> Option<Vec<SStmt>> {
        if let Some(stmts) = self.assign_whole(a, e) {
            return Some(stmts);
        }
        let FExpr::Call(f, args, index) = e else {
            return None;
        };
        if !self.callees.fits(*f, *index, &a.dims) {
            return None;
        }
        let mut targets = vec![None; *index + 1];
        targets[*index] = Some(TupleTarget::Array(a.base, a.dims.iter().product(), a.ty));
        // (the arguments may read the array: the outputs are copied after the call)
        Some(vec![SStmt::TupleArrays(targets, *f, self.args(args)?)])
    }

    /// `(a, x) := f(...)` where `x` is a whole local array taking an array output of the
    /// same constant size (a record result's vector field).
    fn tuple_with_arrays(
        &self,
        targets: &[Option<FTarget>],
        f: u32,
        args: &[FExpr],
    ) -> Option<SStmt> {
        let ts = targets
            .iter()
            .enumerate()
            .map(|(k, t)| match t {
                None => Some(None),
                Some(FTarget::Local(slot, ty)) => match self.arrays.get(slot) {
                    None => Some(Some(TupleTarget::Scalar(*slot, *ty))),
                    Some(a) => self
                        .callees
                        .fits(f, k, &a.dims)
                        .then(|| Some(TupleTarget::Array(a.base, a.dims.iter().product(), a.ty))),
                },
                Some(_) => None,
            })
            .collect::<Option<_>>()?;
        Some(SStmt::TupleArrays(ts, f, self.args(args)?))
    }

    fn args(&self, args: &[FExpr]) -> Option<Vec<SArg>> {
        args.iter().map(|a| self.arg(a)).collect()
    }

    /// A scalar argument, or one the tree interpreter evaluates on a [`Value`] copy of the
    /// frame (which holds no local arrays: an argument reading one is not compiled).
    fn arg(&self, e: &FExpr) -> Option<SArg> {
        if let FExpr::Local(slot) = e {
            if let Some(a) = self.arrays.get(slot) {
                return Some(SArg::Array(a.base, a.dims.clone(), a.ty));
            }
        }
        if let Some(s) = self.expr(e) {
            return Some(SArg::Scalar(s));
        }
        if let Some(x) = self.elements(e) {
            return Some(SArg::Elements(x.dims.into(), x.items));
        }
        if self.mentions_array(e) {
            return None;
        }
        Some(SArg::Value(e.clone()))
    }

    fn boxed(&self, e: &FExpr) -> Option<Box<SExpr>> {
        self.expr(e).map(Box::new)
    }

    /// The scalar form of an expression, or `None` when it is not (known to be) a scalar.
    fn expr(&self, e: &FExpr) -> Option<SExpr> {
        Some(match e {
            FExpr::Const(v) => SExpr::Const(scalar_const(v)?),
            FExpr::Local(s) if !self.arrays.contains_key(s) => SExpr::Local(*s),
            FExpr::Neg(a) => SExpr::Neg(self.boxed(a)?),
            FExpr::Not(a) => SExpr::Not(self.boxed(a)?),
            FExpr::Bin(op, a, b) => match (self.expr(a), self.expr(b)) {
                (Some(x), Some(y)) => SExpr::Bin(*op, Box::new(x), Box::new(y)),
                // the dot product of two vectors
                _ => self.array_reduction(e)?,
            },
            FExpr::Index(base, subs) => match &**base {
                FExpr::Local(s) => {
                    let a = self.arrays.get(s)?;
                    SExpr::LocalElem(a.base, a.dims.clone(), self.indices(a, subs)?)
                }
                _ => self.table_element(base, subs)?,
            },
            FExpr::Builtin(b, args) => match self.builtin(*b, args) {
                Some(x) => x,
                // `sum`, `product`, `scalar` of an array expression
                None => self.array_reduction(e)?,
            },
            FExpr::Call(f, args, index) => {
                // a call as a value must give a scalar (an array-valued call as an
                // argument or operand stays with the tree interpreter)
                let scalar = self
                    .callees
                    .scalar
                    .get(*f as usize)
                    .and_then(|outs| outs.get(*index))
                    .copied()
                    .unwrap_or(false);
                if !scalar {
                    return None;
                }
                SExpr::Call(*f, self.args(args)?, *index)
            }
            FExpr::If(branches, else_) => SExpr::If(
                branches
                    .iter()
                    .map(|(c, v)| Some((self.expr(c)?, self.expr(v)?)))
                    .collect::<Option<_>>()?,
                self.boxed(else_)?,
            ),
            _ => return None,
        })
    }

    /// One scalar index per dimension of a local array.
    fn indices(&self, a: &LocalArray, subs: &[FSub]) -> Option<Vec<SExpr>> {
        if subs.len() != a.dims.len() {
            return None;
        }
        subs.iter()
            .map(|s| match s {
                FSub::Index(e) => self.expr(e),
                FSub::All => None,
            })
            .collect()
    }

    /// Whether `e` reads a local array (anywhere inside).
    fn mentions_array(&self, e: &FExpr) -> bool {
        let any = |es: &[FExpr]| es.iter().any(|x| self.mentions_array(x));
        match e {
            FExpr::Local(s) => self.arrays.contains_key(s),
            FExpr::Neg(a) | FExpr::Not(a) => self.mentions_array(a),
            FExpr::Bin(_, a, b) => self.mentions_array(a) || self.mentions_array(b),
            FExpr::Index(base, subs) => {
                self.mentions_array(base)
                    || subs.iter().any(|s| match s {
                        FSub::Index(x) => self.mentions_array(x),
                        FSub::All => false,
                    })
            }
            FExpr::Builtin(_, args) | FExpr::Call(_, args, _) => any(args),
            FExpr::Array(xs) | FExpr::FlatArray(_, xs) => any(xs),
            FExpr::If(branches, else_) => {
                branches
                    .iter()
                    .any(|(c, v)| self.mentions_array(c) || self.mentions_array(v))
                    || self.mentions_array(else_)
            }
            FExpr::Range(a, step, b) => {
                self.mentions_array(a)
                    || step.as_deref().is_some_and(|x| self.mentions_array(x))
                    || self.mentions_array(b)
            }
            FExpr::Const(_)
            | FExpr::Mem(_)
            | FExpr::Slot(..)
            | FExpr::Alias(..)
            | FExpr::Pre(..)
            | FExpr::Time
            | FExpr::Initial
            | FExpr::Terminal
            | FExpr::Sample(_) => false,
        }
    }
    /// `table[i, j, ...]` of a constant numeric table with one scalar index per dimension.
    fn table_element(&self, base: &FExpr, subs: &[FSub]) -> Option<SExpr> {
        let FExpr::Const(Value::Array(a)) = base else {
            return None;
        };
        if subs.len() != a.dims.len() {
            return None;
        }
        let data: Vec<f64> = a.data.iter().map(scalar_const).collect::<Option<_>>()?;
        let idx = subs
            .iter()
            .map(|s| match s {
                FSub::Index(e) => self.expr(e),
                FSub::All => None,
            })
            .collect::<Option<_>>()?;
        let mut idx: Vec<SExpr> = idx;
        if idx.len() == 1 {
            return Some(SExpr::Elem1(data.into(), Box::new(idx.remove(0))));
        }
        Some(SExpr::Elem(data.into(), a.dims.clone().into(), idx))
    }

    fn builtin(&self, b: Builtin, args: &[FExpr]) -> Option<SExpr> {
        // a call of constants (the size of a table, `sum` of coefficients) is folded now
        if let Some(values) = constant_values(args) {
            if !matches!(b, Builtin::StateSetSelect) {
                if let Ok(v) = call_builtin(b, &values) {
                    return scalar_const(&v).map(SExpr::Const);
                }
            }
        }
        let one = |k: usize| args.get(k).and_then(|a| self.boxed(a));
        Some(match b {
            Builtin::M1(m) if args.len() == 1 => SExpr::M1(m, one(0)?),
            Builtin::M2(m) if args.len() == 2 => SExpr::M2(m, one(0)?, one(1)?),
            Builtin::ToInteger if args.len() == 1 => SExpr::Floor(one(0)?),
            Builtin::ToBoolean if args.len() == 1 => SExpr::ToBool(one(0)?),
            Builtin::ToReal | Builtin::NoEvent | Builtin::Homotopy if !args.is_empty() => {
                self.expr(&args[0])?
            }
            Builtin::Smooth if !args.is_empty() => self.expr(args.last()?)?,
            Builtin::SemiLinear if args.len() == 3 => SExpr::SemiLinear(Box::new([
                self.expr(&args[0])?,
                self.expr(&args[1])?,
                self.expr(&args[2])?,
            ])),
            _ => return None,
        })
    }
}

/// The value an assignment stores in a local of type `ty` (Integer rounds, Boolean tests).
#[inline]
fn coerce(ty: Ty, x: f64) -> f64 {
    match ty {
        // most values are integral already; `round` is a library call on x86-64
        Ty::Int if x as i64 as f64 == x => x,
        Ty::Int => x.round(),
        Ty::Bool => f64::from(u8::from(x != 0.0)),
        Ty::Real | Ty::Str => x,
    }
}

#[inline]
fn truth(b: bool) -> f64 {
    f64::from(u8::from(b))
}

fn value_to_f64(v: &Value, func: &str) -> VResult<f64> {
    scalar_const(v).ok_or_else(|| {
        format!(
            "function `{func}` returned a {} where a scalar was expected",
            v.type_name()
        )
    })
}

/// One index of a table element, checked against its dimension.
#[inline]
fn table_index(x: f64, n: usize) -> VResult<usize> {
    if !x.is_finite() {
        return Err(format!("expected an Integer, got {x}"));
    }
    let i = x.round() as i64;
    if i >= 1 && (i as usize) <= n {
        Ok(i as usize - 1)
    } else {
        Err(format!("index {i} out of bounds 1..{n}"))
    }
}

/// What a statement list did to the control flow.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Flow {
    Next,
    Break,
    Return,
}

/// Iterations after which a `while` loop is taken to be endless (as in `func.rs`).
const MAX_WHILE_ITERATIONS: u64 = 100_000_000;

/// How the arguments of a model call site reach the frame of a compiled callee: a frame
/// with the constant arguments in place, copied per call, and the places of the others.
/// A Spice3 device call passes a hundred arguments, most of them parameters folded to
/// constants; matching each one's expression at every call cost more than the device
/// equations in native code.
#[derive(Clone, Debug)]
pub struct CallPlan {
    template: Box<[f64]>,
    live: Box<[(u32, Source)]>,
    nargs: usize,
}

/// Where a non-constant argument comes from, and the type of the input it goes to.
#[derive(Clone, Copy, Debug)]
enum Source {
    Mem(u32, Ty),
    Slot(u32, Ty, Ty),
    Alias(u32, f64, f64, Ty),
}

impl CallPlan {
    /// The plan for calling `sf` with `args`, or `None` when an argument is not a constant,
    /// a register, a model variable or an array literal of them of the input's size.
    pub fn new(sf: &ScalarFn, args: &[FExpr]) -> Option<CallPlan> {
        if !sf.takes(args.len()) {
            return None;
        }
        let mut template = vec![0.0; sf.frame_size].into_boxed_slice();
        let mut live = Vec::new();
        for (a, input) in args.iter().zip(&sf.inputs) {
            if input.ignored() {
                continue;
            }
            let leaves: &[FExpr] = match (a, &input.dims) {
                (_, None) => std::slice::from_ref(a),
                (FExpr::Array(xs) | FExpr::FlatArray(_, xs), Some(_))
                    if xs.len() == input.len() =>
                {
                    xs
                }
                // a constant table (`Matrices.isEqual(table, {{0, 1, 1, 0, 0}})`) is part
                // of the template
                (FExpr::Const(Value::Array(c)), Some(dims)) if c.dims.as_slice() == &**dims => {
                    for (k, x) in c.data.iter().enumerate() {
                        let dest = input.slot as usize + k;
                        template[dest] = coerce(input.ty, scalar_const(x)?);
                    }
                    continue;
                }
                _ => return None,
            };
            for (k, leaf) in leaves.iter().enumerate() {
                let dest = input.slot + u32::try_from(k).ok()?;
                let ty = input.ty;
                match leaf {
                    FExpr::Const(v) => template[dest as usize] = coerce(ty, scalar_const(v)?),
                    FExpr::Mem(r) => live.push((dest, Source::Mem(*r, ty))),
                    FExpr::Slot(v, vty) if *vty != Ty::Str => {
                        live.push((dest, Source::Slot(*v, *vty, ty)))
                    }
                    FExpr::Alias(v, s, o) => live.push((dest, Source::Alias(*v, *s, *o, ty))),
                    _ => return None,
                }
            }
        }
        Some(CallPlan {
            template,
            live: live.into_boxed_slice(),
            nargs: args.len(),
        })
    }
}

/// The number `Env::eval` gives for a model slot of type `ty` holding `x`, without the
/// `Value` (Integers rounded, Booleans 0/1).
#[inline]
fn slot_number(ty: Ty, x: f64) -> f64 {
    match ty {
        Ty::Int => x.round() as i64 as f64,
        Ty::Bool => truth(x != 0.0),
        Ty::Real | Ty::Str => x,
    }
}

/// An array literal's element known to be a scalar without evaluating it (a nested
/// literal would make the array deeper than the input's shape says).
fn is_scalar_leaf(e: &FExpr) -> bool {
    match e {
        FExpr::Mem(_) | FExpr::Slot(..) | FExpr::Alias(..) | FExpr::Pre(..) => true,
        FExpr::Const(v) => scalar_const(v).is_some(),
        _ => false,
    }
}

/// Frames of scalar calls, reused so that a call allocates nothing.
#[derive(Clone, Debug, Default)]
pub struct FramePool(Vec<Vec<f64>>);

impl FramePool {
    pub(crate) fn take(&mut self, size: usize) -> Vec<f64> {
        let mut f = self.0.pop().unwrap_or_default();
        f.clear();
        f.resize(size, 0.0);
        f
    }

    pub(crate) fn give(&mut self, f: Vec<f64>) {
        self.0.push(f);
    }
}

/// The scalar form of a function its callers chose it for (they check that it has one).
fn scalar_form(func: &crate::func::CFunction) -> VResult<&ScalarFn> {
    func.scalar.as_deref().ok_or_else(|| {
        format!(
            "function `{}` has no compiled scalar form (internal)",
            func.name
        )
    })
}

/// The outputs of a call made from a scalar function: the callee's frame (read at its
/// output slots) or, for a callee run by the tree interpreter, the outputs in order.
struct CallOut {
    frame: Vec<f64>,
    slots: Option<usize>,
    /// Array outputs of a callee run through [`Env::call`], by output position.
    whole: Vec<(usize, Value)>,
}

impl Env<'_> {
    /// Call the scalar form of function `f` with arguments given as values (all scalars).
    pub(crate) fn call_scalar_values(&mut self, f: u32, args: &[Value]) -> VResult<Vec<Value>> {
        let funcs = self.funcs;
        let sf = scalar_form(&funcs[f as usize])?;
        let mut frame = self.m.frames.take(sf.frame_size);
        for (input, a) in sf.inputs.iter().zip(args) {
            if let Err(e) = input.store(a, &mut frame) {
                self.m.frames.give(frame);
                return Err(e);
            }
        }
        let r = self.enter_scalar(f, &mut frame, args.len());
        let outs = r.map(|_| {
            (0..sf.outputs.len())
                .map(|k| sf.output_value(k, &frame))
                .collect()
        });
        self.m.frames.give(frame);
        outs
    }

    /// A call made by native code (`jit::native_call`): the elements of the passed inputs
    /// in order (a scalar is one), outputs flattened.
    pub(crate) fn call_from_native(
        &mut self,
        f: u32,
        nargs: usize,
        args: &[f64],
        outs: &mut [f64],
    ) -> VResult<()> {
        let funcs = self.funcs;
        let sf = scalar_form(&funcs[f as usize])?;
        self.m.memo.calls += 1;
        let mut cf = self.m.frames.take(sf.frame_size);
        // `args` holds the passed inputs' elements one after the other
        if args.len() == nargs {
            // all scalars (the common case: a media function calling another)
            for (x, input) in args.iter().zip(&sf.inputs) {
                cf[input.slot as usize] = coerce(input.ty, *x);
            }
        } else {
            let mut rest = args;
            for input in sf.inputs.iter().take(nargs) {
                let n = input.len();
                if rest.len() < n {
                    break;
                }
                let (now, later) = rest.split_at(n);
                for (k, x) in now.iter().enumerate() {
                    cf[input.slot as usize + k] = coerce(input.ty, *x);
                }
                rest = later;
            }
        }
        let r = self.enter_scalar(f, &mut cf, nargs);
        if r.is_ok() {
            for ((slot, _), o) in sf.flat_outputs().zip(outs.iter_mut()) {
                *o = cf[slot as usize];
            }
        }
        self.m.frames.give(cf);
        r
    }

    /// Call the scalar form of function `f` by its [`CallPlan`]; hands over the outputs
    /// flattened ([`ScalarFn::flat_outputs`]) with their positions.
    pub(crate) fn call_planned(
        &mut self,
        f: u32,
        plan: &CallPlan,
        outs: &mut dyn FnMut(usize, f64),
    ) -> VResult<()> {
        let funcs = self.funcs;
        let sf = scalar_form(&funcs[f as usize])?;
        let mut cf = self.m.frames.take(0);
        cf.extend_from_slice(&plan.template);
        let mem = &self.m.mem;
        for &(dest, src) in plan.live.iter() {
            cf[dest as usize] = match src {
                Source::Mem(r, ty) => coerce(ty, mem[r as usize]),
                Source::Slot(v, vty, ty) => coerce(ty, slot_number(vty, mem[v as usize])),
                Source::Alias(v, s, o, ty) => coerce(ty, s * mem[v as usize] + o),
            };
        }
        self.m.memo.calls += 1;
        let r = self.enter_scalar(f, &mut cf, plan.nargs);
        if r.is_ok() {
            for (k, (slot, _)) in sf.flat_outputs().enumerate() {
                outs(k, cf[slot as usize]);
            }
        }
        self.m.frames.give(cf);
        r
    }

    /// Call the scalar form of function `f` with arguments given as tree expressions
    /// (the model's call sites: constants, registers the tape computed, arrays of them),
    /// each evaluated straight into the callee's frame instead of into the [`Value`]
    /// vector of [`Env::call`]: a Spice3 device call passes a hundred record fields.
    /// Appends the outputs to `outs`, flattened ([`ScalarFn::flat_outputs`]: with scalar
    /// outputs only, output `k` is at `k`); `Ok(false)` (nothing appended) when an argument does
    /// not fit the compiled form, for the caller to take the general path.
    pub(crate) fn call_scalar_exprs(
        &mut self,
        f: u32,
        args: &[FExpr],
        frame: &mut Vec<Value>,
        outs: &mut Vec<f64>,
    ) -> VResult<bool> {
        let funcs = self.funcs;
        let sf = scalar_form(&funcs[f as usize])?;
        if !sf.takes(args.len()) {
            return Ok(false);
        }
        let mut cf = self.m.frames.take(sf.frame_size);
        let stored = self.store_args(sf, args, frame, &mut cf);
        let r = match stored {
            Ok(true) => {
                self.m.memo.calls += 1;
                self.enter_scalar(f, &mut cf, args.len())
            }
            other => {
                self.m.frames.give(cf);
                return other;
            }
        };
        if r.is_ok() {
            outs.extend(sf.flat_outputs().map(|(slot, _)| cf[slot as usize]));
        }
        self.m.frames.give(cf);
        r.map(|_| true)
    }

    /// Evaluate call arguments into the input slots of `cf`; `Ok(false)` when one does not
    /// have the input's shape.
    fn store_args(
        &mut self,
        sf: &ScalarFn,
        args: &[FExpr],
        frame: &mut Vec<Value>,
        cf: &mut [f64],
    ) -> VResult<bool> {
        for (a, input) in args.iter().zip(&sf.inputs) {
            if input.ignored() {
                continue;
            }
            let base = input.slot as usize;
            match (a, &input.dims) {
                (FExpr::Const(v), None) => match scalar_const(v) {
                    Some(x) => cf[base] = coerce(input.ty, x),
                    None => return Ok(false),
                },
                (FExpr::Mem(r), None) => cf[base] = coerce(input.ty, self.m.mem[*r as usize]),
                (FExpr::Slot(v, ty), None) if *ty != Ty::Str => {
                    cf[base] = coerce(input.ty, slot_number(*ty, self.m.mem[*v as usize]));
                }
                (FExpr::Alias(v, scale, offset), None) => {
                    cf[base] = coerce(input.ty, scale * self.m.mem[*v as usize] + offset);
                }
                (FExpr::Const(Value::Array(c)), Some(dims)) if c.dims.as_slice() == &**dims => {
                    for (k, x) in c.data.iter().enumerate() {
                        match scalar_const(x) {
                            Some(x) => cf[base + k] = coerce(input.ty, x),
                            None => return Ok(false),
                        }
                    }
                }
                (FExpr::Array(leaves) | FExpr::FlatArray(_, leaves), Some(_))
                    if leaves.len() == input.len() && leaves.iter().all(is_scalar_leaf) =>
                {
                    for (k, leaf) in leaves.iter().enumerate() {
                        let x = match leaf {
                            FExpr::Mem(r) => self.m.mem[*r as usize],
                            other => self.eval(other, frame)?.as_f64()?,
                        };
                        cf[base + k] = coerce(input.ty, x);
                    }
                }
                _ => {
                    let v = self.eval(a, frame)?;
                    if !input.accepts(&v) {
                        return Ok(false);
                    }
                    input.store(&v, cf)?;
                }
            }
        }
        Ok(true)
    }

    /// Run function `f` on `frame`, whose first `nargs` inputs are set: the call memo,
    /// the depth limit and the error context of [`Env::call`], then the body.
    fn enter_scalar(&mut self, f: u32, frame: &mut [f64], nargs: usize) -> VResult<()> {
        let funcs = self.funcs;
        let func = &funcs[f as usize];
        let sf = scalar_form(func)?;
        if self.depth >= crate::func::MAX_CALL_DEPTH {
            return Err(format!(
                "function `{}`: call depth exceeds {} (unbounded recursion?)",
                func.name,
                crate::func::MAX_CALL_DEPTH
            ));
        }
        // the key is built in the memo's scratch buffer (no allocation per call)
        let key = func.memo.then(|| {
            let mut key = std::mem::take(&mut self.m.memo.key_scratch);
            key.clear();
            key.extend(sf.inputs[..nargs].iter().flat_map(|input| {
                let start = input.slot as usize;
                let ty = input.ty;
                frame[start..start + input.len()]
                    .iter()
                    .map(move |&x| match ty {
                        Ty::Int => (1u8, x as i64 as u64),
                        Ty::Bool => (2, u64::from(x != 0.0)),
                        Ty::Real | Ty::Str => (0, x.to_bits()),
                    })
            }));
            key
        });
        if let Some(k) = &key {
            // (the tree interpreter keeps an array output whole: not for this frame)
            let hit = self.m.memo.lookup_ref(f, k).filter(|outs| {
                !sf.array_outputs
                    || (outs.len() == sf.flat_len
                        && !outs.iter().any(|v| matches!(v, Value::Array(_))))
            });
            if let Some(outs) = hit {
                for ((slot, _), v) in sf.flat_outputs().zip(outs) {
                    frame[slot as usize] = v.as_f64()?;
                }
                self.m.memo.hits += 1;
                self.m.memo.key_scratch = key.unwrap_or_default();
                return Ok(());
            }
        }
        self.m.memo.scalar_calls += 1;
        self.depth += 1;
        let native = func.native.get(f, funcs);
        let r = self.run_scalar(sf, native, frame, nargs).map_err(|e| {
            if e.starts_with("in function") {
                e
            } else {
                format!("in function `{}`: {e}", func.name)
            }
        });
        self.depth -= 1;
        r?;
        if let Some(k) = key {
            let outs = sf
                .flat_outputs()
                .map(|(slot, ty)| ty.value_of(frame[slot as usize]));
            self.m.memo.store_from(f, &k, outs);
            self.m.memo.key_scratch = k;
        }
        Ok(())
    }

    fn run_scalar(
        &mut self,
        sf: &ScalarFn,
        native: Option<&crate::jit::NativeFn>,
        frame: &mut [f64],
        nargs: usize,
    ) -> VResult<()> {
        for (k, input) in sf.inputs.iter().enumerate().skip(nargs) {
            let d = input
                .default
                .as_ref()
                .ok_or_else(|| format!("input {} has no value and no default", k + 1))?;
            for (j, e) in d.iter().enumerate() {
                frame[input.slot as usize + j] = coerce(input.ty, self.seval(e, frame, sf)?);
            }
        }
        if let Some(native) = native {
            self.m.native_error = None;
            if native.run(frame, self) {
                self.m.memo.native_calls += 1;
                return Ok(());
            }
            if let Some(e) = self.m.native_error.take() {
                return Err(e);
            }
            // the native code stopped by itself: the interpreter reports why
            sf.reset_locals(frame);
        }
        self.sexec(&sf.init, frame, sf)?;
        self.sexec(&sf.body, frame, sf)?;
        Ok(())
    }

    fn sexec(&mut self, stmts: &[SStmt], frame: &mut [f64], sf: &ScalarFn) -> VResult<Flow> {
        for s in stmts {
            let flow = self.sexec_one(s, frame, sf)?;
            if flow != Flow::Next {
                return Ok(flow);
            }
        }
        Ok(Flow::Next)
    }

    fn sexec_one(&mut self, s: &SStmt, frame: &mut [f64], sf: &ScalarFn) -> VResult<Flow> {
        match s {
            SStmt::Assign(slot, ty, e) => {
                frame[*slot as usize] = coerce(*ty, self.seval(e, frame, sf)?);
            }
            SStmt::AssignElem(base, dims, idx, ty, e) => {
                let x = coerce(*ty, self.seval(e, frame, sf)?);
                let flat = self.local_position(dims, idx, frame, sf)?;
                frame[*base as usize + flat] = x;
            }
            SStmt::Tuple(targets, f, args) => {
                let out = self.scall(*f, args, frame, sf)?;
                for (k, t) in targets.iter().enumerate() {
                    if let Some((slot, ty)) = t {
                        frame[*slot as usize] = coerce(*ty, self.output(&out, *f, k)?);
                    }
                }
                self.m.frames.give(out.frame);
            }
            SStmt::TupleArrays(targets, f, args) => {
                let out = self.scall(*f, args, frame, sf)?;
                let r = self.store_tuple(&out, *f, targets, frame);
                self.m.frames.give(out.frame);
                r?;
            }
            SStmt::Call(f, args) => {
                let out = self.scall(*f, args, frame, sf)?;
                self.m.frames.give(out.frame);
            }
            SStmt::If(branches, else_) => {
                for (c, body) in branches {
                    if self.seval(c, frame, sf)? != 0.0 {
                        return self.sexec(body, frame, sf);
                    }
                }
                return self.sexec(else_, frame, sf);
            }
            SStmt::For(slot, a, step, b, body) => {
                return self.sfor(*slot, (a, step.as_ref(), b), body, frame, sf)
            }
            SStmt::While(c, body) => {
                let mut count = 0u64;
                while self.seval(c, frame, sf)? != 0.0 {
                    count += 1;
                    if count > MAX_WHILE_ITERATIONS {
                        return Err(format!(
                            "while loop did not end after {MAX_WHILE_ITERATIONS} iterations"
                        ));
                    }
                    match self.sexec(body, frame, sf)? {
                        Flow::Break => break,
                        Flow::Return => return Ok(Flow::Return),
                        Flow::Next => {}
                    }
                }
            }
            SStmt::Assert(c, msg, level) => {
                if self.seval(c, frame, sf)? == 0.0 {
                    let text = to_modelica_string(&self.escape(msg, frame, sf)?, 6);
                    match level {
                        AssertLevel::Error => return Err(format!("assertion failed: {text}")),
                        AssertLevel::Warning => {
                            if !self.m.warnings.contains(&text) {
                                eprintln!("warning: assertion at time {}: {text}", self.m.time());
                                self.m.warnings.push(text);
                            }
                        }
                    }
                }
            }
            SStmt::Return => return Ok(Flow::Return),
            SStmt::Break => return Ok(Flow::Break),
        }
        Ok(Flow::Next)
    }

    /// `for i in a:step:b`: Integer ranges count; others take `a + k*step` for the
    /// `floor((b - a)/step + 1e-10) + 1` values of a Real range (as `func::range_values`).
    fn sfor(
        &mut self,
        slot: u32,
        (a, step, b): (&SExpr, Option<&SExpr>, &SExpr),
        body: &[SStmt],
        frame: &mut [f64],
        sf: &ScalarFn,
    ) -> VResult<Flow> {
        let a = self.seval(a, frame, sf)?;
        let s = match step {
            Some(s) => self.seval(s, frame, sf)?,
            None => 1.0,
        };
        let b = self.seval(b, frame, sf)?;
        if s == 0.0 {
            return Err("for loop range with step 0".into());
        }
        let integral = a.fract() == 0.0 && s.fract() == 0.0 && b.fract() == 0.0;
        let n = if integral {
            ((b - a) / s).floor() + 1.0
        } else {
            ((b - a) / s + 1e-10).floor() + 1.0
        };
        let n = if n.is_finite() && n > 0.0 {
            n as u64
        } else {
            0
        };
        for k in 0..n {
            frame[slot as usize] = a + k as f64 * s;
            match self.sexec(body, frame, sf)? {
                Flow::Break => break,
                Flow::Return => return Ok(Flow::Return),
                Flow::Next => {}
            }
        }
        Ok(Flow::Next)
    }

    fn seval(&mut self, e: &SExpr, frame: &mut [f64], sf: &ScalarFn) -> VResult<f64> {
        Ok(match e {
            SExpr::Const(x) => *x,
            SExpr::Local(s) => frame[*s as usize],
            SExpr::Neg(a) => -self.seval(a, frame, sf)?,
            SExpr::Not(a) => truth(self.seval(a, frame, sf)? == 0.0),
            SExpr::Bin(op, a, b) => {
                let x = self.seval(a, frame, sf)?;
                match op {
                    BinaryOp::And if x == 0.0 => return Ok(0.0),
                    BinaryOp::Or if x != 0.0 => return Ok(1.0),
                    _ => {}
                }
                let y = self.seval(b, frame, sf)?;
                bin(*op, x, y)
            }
            SExpr::Elem(data, dims, idx) => {
                let mut flat = 0usize;
                for (e, &n) in idx.iter().zip(dims.iter()) {
                    flat = flat * n + table_index(self.seval(e, frame, sf)?, n)?;
                }
                data[flat]
            }
            SExpr::Elem1(data, i) => data[table_index(self.seval(i, frame, sf)?, data.len())?],
            SExpr::LocalElem(base, dims, idx) => {
                let flat = self.local_position(dims, idx, frame, sf)?;
                frame[*base as usize + flat]
            }
            SExpr::M1(m, a) => m.apply(self.seval(a, frame, sf)?),
            SExpr::M2(m, a, b) => {
                let x = self.seval(a, frame, sf)?;
                m.apply(x, self.seval(b, frame, sf)?)
            }
            SExpr::Floor(a) => self.seval(a, frame, sf)?.floor(),
            SExpr::ToBool(a) => truth(self.seval(a, frame, sf)? != 0.0),
            SExpr::SemiLinear(args) => {
                let x = self.seval(&args[0], frame, sf)?;
                let kp = self.seval(&args[1], frame, sf)?;
                let kn = self.seval(&args[2], frame, sf)?;
                if x >= 0.0 {
                    kp * x
                } else {
                    kn * x
                }
            }
            SExpr::Call(f, args, index) => {
                let out = self.scall(*f, args, frame, sf)?;
                let v = self.output(&out, *f, *index);
                self.m.frames.give(out.frame);
                v?
            }
            SExpr::If(branches, else_) => {
                for (c, v) in branches {
                    if self.seval(c, frame, sf)? != 0.0 {
                        return self.seval(v, frame, sf);
                    }
                }
                self.seval(else_, frame, sf)?
            }
        })
    }

    /// Row-major position of an element of a local array (indices checked).
    fn local_position(
        &mut self,
        dims: &[usize],
        idx: &[SExpr],
        frame: &mut [f64],
        sf: &ScalarFn,
    ) -> VResult<usize> {
        let mut flat = 0usize;
        for (e, &n) in idx.iter().zip(dims) {
            flat = flat * n + table_index(self.seval(e, frame, sf)?, n)?;
        }
        Ok(flat)
    }

    /// Store the outputs of a call made by [`Env::scall`] into tuple targets, arrays whole.
    fn store_tuple(
        &self,
        out: &CallOut,
        f: u32,
        targets: &[Option<TupleTarget>],
        frame: &mut [f64],
    ) -> VResult<()> {
        for (k, t) in targets.iter().enumerate() {
            match t {
                None => {}
                Some(TupleTarget::Scalar(slot, ty)) => {
                    frame[*slot as usize] = coerce(*ty, self.output(out, f, k)?);
                }
                Some(TupleTarget::Array(base, len, ty)) => {
                    let dest = &mut frame[*base as usize..*base as usize + len];
                    match (out.slots, self.funcs[f as usize].scalar.as_deref()) {
                        (None, Some(csf)) => {
                            let size = csf.output_dims.get(k).and_then(|d| d.as_deref());
                            if size.map(|d| d.iter().product::<usize>()) != Some(*len) {
                                return Err(format!(
                                    "function `{}`: output {} does not have {len} elements",
                                    self.funcs[f as usize].name,
                                    k + 1
                                ));
                            }
                            let start = csf.outputs[k].0 as usize;
                            for (d, x) in dest.iter_mut().zip(&out.frame[start..start + len]) {
                                *d = coerce(*ty, *x);
                            }
                        }
                        _ => {
                            let v = out.whole.iter().find(|(j, _)| *j == k).map(|(_, v)| v);
                            let Some(Value::Array(a)) = v else {
                                return Err(format!(
                                    "function `{}`: output {} is not an array",
                                    self.funcs[f as usize].name,
                                    k + 1
                                ));
                            };
                            if a.data.len() != *len {
                                return Err(format!(
                                    "function `{}`: output {} has {} elements, {len} expected",
                                    self.funcs[f as usize].name,
                                    k + 1,
                                    a.data.len()
                                ));
                            }
                            for (d, x) in dest.iter_mut().zip(&a.data) {
                                *d = coerce(*ty, x.as_f64()?);
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Output `k` of a call made by [`Env::scall`].
    fn output(&self, out: &CallOut, f: u32, k: usize) -> VResult<f64> {
        let func = &self.funcs[f as usize];
        let x = match (out.slots, func.scalar.as_deref()) {
            (None, Some(csf)) => csf
                .outputs
                .get(k)
                .map(|(slot, _)| out.frame[*slot as usize]),
            _ => out.frame.get(k).copied(),
        };
        x.ok_or_else(|| format!("function `{}` has no output {}", func.name, k + 1))
    }

    /// Call function `f` from a scalar function: directly on a pooled frame when `f` has a
    /// scalar form and every argument is a scalar, else through [`Env::call`].
    fn scall(
        &mut self,
        f: u32,
        args: &[SArg],
        frame: &mut [f64],
        sf: &ScalarFn,
    ) -> VResult<CallOut> {
        let funcs = self.funcs;
        let callee = &funcs[f as usize];
        let direct = callee.scalar.as_deref().filter(|csf| {
            csf.takes(args.len())
                && args.iter().zip(&csf.inputs).all(|(a, input)| match a {
                    SArg::Scalar(_) => input.dims.is_none(),
                    SArg::Array(_, dims, _) | SArg::Elements(dims, _) => {
                        input.dims.as_ref() == Some(dims)
                    }
                    SArg::Value(_) => input.ignored(),
                })
        });
        if let Some(csf) = direct {
            self.m.memo.calls += 1;
            let mut cf = self.m.frames.take(csf.frame_size);
            for (a, input) in args.iter().zip(&csf.inputs) {
                match a {
                    SArg::Scalar(e) => match self.seval(e, frame, sf) {
                        Ok(x) => cf[input.slot as usize] = coerce(input.ty, x),
                        Err(e) => {
                            self.m.frames.give(cf);
                            return Err(e);
                        }
                    },
                    SArg::Array(base, _, _) => {
                        let (from, to) = (*base as usize, input.slot as usize);
                        let len = input.len();
                        for (d, x) in cf[to..to + len].iter_mut().zip(&frame[from..from + len]) {
                            *d = coerce(input.ty, *x);
                        }
                    }
                    SArg::Elements(_, items) => {
                        for (k, e) in items.iter().enumerate() {
                            match self.seval(e, frame, sf) {
                                Ok(x) => cf[input.slot as usize + k] = coerce(input.ty, x),
                                Err(e) => {
                                    self.m.frames.give(cf);
                                    return Err(e);
                                }
                            }
                        }
                    }
                    SArg::Value(_) => {}
                }
            }
            if let Err(e) = self.enter_scalar(f, &mut cf, args.len()) {
                self.m.frames.give(cf);
                return Err(e);
            }
            return Ok(CallOut {
                frame: cf,
                slots: None,
                whole: Vec::new(),
            });
        }
        let mut vals = Vec::with_capacity(args.len());
        for (k, a) in args.iter().enumerate() {
            vals.push(match a {
                SArg::Scalar(e) => {
                    let x = self.seval(e, frame, sf)?;
                    match callee.inputs.get(k) {
                        Some(d) => d.ty.value_of(x),
                        None => Value::Real(x),
                    }
                }
                SArg::Array(base, dims, ty) => {
                    let len: usize = dims.iter().product();
                    let start = *base as usize;
                    Value::Array(crate::value::ArrayVal {
                        dims: dims.to_vec(),
                        data: frame[start..start + len]
                            .iter()
                            .map(|&x| ty.value_of(x))
                            .collect(),
                    })
                }
                SArg::Elements(dims, items) => {
                    let ty = callee.inputs.get(k).map_or(Ty::Real, |d| d.ty);
                    let data = items
                        .iter()
                        .map(|e| Ok(ty.value_of(self.seval(e, frame, sf)?)))
                        .collect::<VResult<_>>()?;
                    Value::Array(crate::value::ArrayVal {
                        dims: dims.to_vec(),
                        data,
                    })
                }
                SArg::Value(e) => self.escape(e, frame, sf)?,
            });
        }
        let outs = self.call(f, vals)?;
        let mut out = self.m.frames.take(0);
        let mut whole = Vec::new();
        let n = outs.len();
        for (k, v) in outs.into_iter().enumerate() {
            // an array output keeps its position (scalar reads never name it)
            match v {
                Value::Array(_) => {
                    out.push(f64::NAN);
                    whole.push((k, v));
                }
                v => out.push(value_to_f64(&v, &callee.name)?),
            }
        }
        Ok(CallOut {
            frame: out,
            slots: Some(n),
            whole,
        })
    }

    /// Evaluate a tree expression on a [`Value`] copy of a scalar frame.
    fn escape(&mut self, e: &FExpr, frame: &[f64], sf: &ScalarFn) -> VResult<Value> {
        let mut values: Vec<Value> = sf
            .local_types
            .iter()
            .zip(frame)
            .map(|(t, x)| t.value_of(*x))
            .collect();
        self.eval(e, &mut values)
    }
}

/// A binary operator on scalars, with the results of `func::real_op` (Booleans as 0/1).
#[inline(always)]
fn bin(op: BinaryOp, a: f64, b: f64) -> f64 {
    use BinaryOp::*;
    match op {
        Add | ElemAdd => a + b,
        Sub | ElemSub => a - b,
        Mul | ElemMul => a * b,
        Div | ElemDiv => a / b,
        Pow | ElemPow => crate::builtins::pow(a, b),
        Lt => truth(a < b),
        Le => truth(a <= b),
        Gt => truth(a > b),
        Ge => truth(a >= b),
        Eq => truth(a == b),
        Ne => truth(a != b),
        And => truth(a != 0.0 && b != 0.0),
        Or => truth(a != 0.0 || b != 0.0),
    }
}
