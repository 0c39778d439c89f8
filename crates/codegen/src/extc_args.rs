//! Arguments of external C calls (see `extc.rs`): their C types, decided once when the
//! function is compiled (spec 12.9.1: Real is `double`, Integer, Boolean and enumerations
//! are `int`, String is `const char*`; arrays pass a pointer to their row-major data,
//! scalar outputs a pointer to their value), and the conversion of values to buffers and
//! back around each call.

use crate::extc::{c_string, Buffer, CArg, CCall, CType};
use crate::func::{Env, Scope, Ty};
use crate::value::{ArrayVal, VResult, Value};
use moss_frontend::flat::{Expr, Function, FunctionBody, FunctionVar, ScalarType};
use std::ffi::CString;

/// The C type of a variable of `f`: an external object is a handle, else by its type.
fn var_c_type(f: &Function, v: &FunctionVar) -> CType {
    match &f.body {
        FunctionBody::External { code, .. } if code.objects.contains(&v.name) => CType::Ptr,
        _ => c_type(&v.ty),
    }
}

fn c_type(t: &ScalarType) -> CType {
    match t {
        ScalarType::Real => CType::Double,
        ScalarType::String => CType::Str,
        _ => CType::Int,
    }
}

/// The declaration of a variable of `f` by name.
fn var<'f>(f: &'f Function, name: &str) -> Option<(&'f FunctionVar, bool)> {
    if let Some(v) = f.inputs.iter().find(|v| v.name == name) {
        return Some((v, true));
    }
    f.outputs
        .iter()
        .chain(&f.locals)
        .find(|v| v.name == name)
        .map(|v| (v, false))
}

/// C type of an argument expression that is not a plain variable: `size(...)` and integer
/// arithmetic are `int`, strings `const char*`, anything else `double`.
fn expr_type(f: &Function, e: &Expr) -> CType {
    match e {
        Expr::Integer(_) | Expr::Boolean(_) | Expr::Enum { .. } => CType::Int,
        Expr::Real(_) => CType::Double,
        Expr::String(_) => CType::Str,
        Expr::Var { name, .. } => var(f, name).map_or(CType::Double, |(v, _)| var_c_type(f, v)),
        Expr::Call { func, args } => match func.as_str() {
            "size" | "integer" | "Integer" | "div" | "mod" | "rem" => CType::Int,
            "max" | "min" | "abs" => args.first().map_or(CType::Double, |a| expr_type(f, a)),
            _ => CType::Double,
        },
        Expr::Unary { arg, .. } => expr_type(f, arg),
        Expr::Binary { lhs, rhs, .. } => match (expr_type(f, lhs), expr_type(f, rhs)) {
            (CType::Int, CType::Int) => CType::Int,
            (CType::Str, _) | (_, CType::Str) => CType::Str,
            _ => CType::Double,
        },
        _ => CType::Double,
    }
}

/// The call of user C function `c_name` with the arguments of the external clause.
pub fn c_call(
    scope: &mut Scope,
    f: &Function,
    c_name: &str,
    output: &Option<String>,
    args: &[Expr],
) -> VResult<CCall> {
    let mut cargs = Vec::with_capacity(args.len());
    for a in args {
        let plain = match a {
            Expr::Var { name, subscripts } if subscripts.is_empty() => var(f, name),
            _ => None,
        };
        let arg = match plain {
            // outputs, locals and arrays of outputs/locals are passed by pointer
            Some((v, false)) => {
                let (slot, slot_ty) = scope
                    .lookup_local(&v.name)
                    .ok_or_else(|| format!("unknown variable `{}`", v.name))?;
                CArg::Out {
                    slot,
                    slot_ty,
                    ty: var_c_type(f, v),
                }
            }
            Some((v, true)) => CArg::In {
                expr: scope.compile_expr(a)?,
                ty: var_c_type(f, v),
                array: !v.dims.is_empty(),
            },
            None => CArg::In {
                expr: scope.compile_expr(a)?,
                ty: expr_type(f, a),
                array: false,
            },
        };
        cargs.push(arg);
    }
    let ret = match output {
        Some(o) => {
            let (v, _) = var(f, o).ok_or_else(|| format!("unknown output `{o}`"))?;
            let (slot, slot_ty) = scope
                .lookup_local(o)
                .ok_or_else(|| format!("unknown output `{o}`"))?;
            Some((slot, slot_ty, var_c_type(f, v)))
        }
        None => None,
    };
    let code = match &f.body {
        FunctionBody::External { code, .. } => code.clone(),
        _ => Default::default(),
    };
    Ok(CCall {
        c_name: c_name.to_string(),
        args: cargs,
        ret,
        code,
        entry: Err(format!(
            "function `{}` calls external C function `{c_name}`, which was not compiled",
            f.name
        )),
        objects: Default::default(),
    })
}

/// A buffer holding `v` (a scalar or the elements of an array) as C type `ty`.
fn to_buffer(v: &Value, ty: CType) -> VResult<Buffer> {
    let items = v.flatten();
    Ok(match ty {
        CType::Double => Buffer::Double(items.iter().map(Value::as_f64).collect::<VResult<_>>()?),
        CType::Int => Buffer::Int(
            items
                .iter()
                .map(|x| {
                    let n = x.as_i64()?;
                    i32::try_from(n).map_err(|_| {
                        format!("{n} does not fit the C `int` of an external function argument")
                    })
                })
                .collect::<VResult<_>>()?,
        ),
        CType::Ptr => Buffer::Ptr(
            items
                .iter()
                .map(|x| Ok(x.as_i64()? as usize as *mut std::ffi::c_void))
                .collect::<VResult<_>>()?,
        ),
        CType::Str => {
            let strings = items
                .iter()
                .map(|x| match x {
                    Value::Str(s) => CString::new(s.as_str())
                        .map_err(|_| "a string passed to C contains a NUL character".to_string()),
                    other => Err(format!(
                        "expected a string for a C `const char*` argument, got {}",
                        other.type_name()
                    )),
                })
                .collect::<VResult<Vec<_>>>()?;
            let ptrs = strings.iter().map(|s| s.as_ptr()).collect();
            Buffer::Str(strings, ptrs)
        }
    })
}

/// Element `i` of a buffer as a value of slot type `ty`.
fn element(b: &Buffer, i: usize, ty: Ty) -> Value {
    let x = match b {
        Buffer::Double(v) => v[i],
        Buffer::Int(v) => f64::from(v[i]),
        Buffer::Str(_, p) => return Value::Str(c_string(p[i])),
        Buffer::Ptr(p) => return Value::Int(p[i] as usize as i64),
    };
    ty.value_of(x)
}

/// The value a buffer holds after the call, shaped like `before`.
fn from_buffer(b: &Buffer, before: &Value, ty: Ty) -> Value {
    match before {
        Value::Array(a) => Value::Array(ArrayVal::new(
            a.dims.clone(),
            (0..a.data.len()).map(|i| element(b, i, ty)).collect(),
        )),
        _ => element(b, 0, ty),
    }
}

/// Run an external C call: buffers from the frame, the wrapper, outputs back to the frame.
pub fn run(env: &mut Env, call: &CCall, frame: &mut Vec<Value>) -> VResult<()> {
    let entry = call.entry.as_ref().map_err(Clone::clone)?;
    let mut bufs = Vec::with_capacity(call.args.len() + 1);
    bufs.push(match call.ret {
        Some((_, _, CType::Double)) => Buffer::Double(vec![0.0]),
        Some((_, _, CType::Str)) => Buffer::Str(Vec::new(), vec![std::ptr::null()]),
        Some((_, _, CType::Ptr)) => Buffer::Ptr(vec![std::ptr::null_mut()]),
        _ => Buffer::Int(vec![0]),
    });
    let mut key = String::new();
    for a in &call.args {
        let b = match a {
            CArg::In { expr, ty, .. } => {
                let v = env.eval(expr, frame)?;
                key.push_str(&format!("{v:?};"));
                to_buffer(&v, *ty)?
            }
            CArg::Out { slot, ty, .. } => to_buffer(&frame[*slot as usize], *ty)?,
        };
        bufs.push(b);
    }
    // A constructor builds each distinct object once: the handle is the object's identity.
    let constructs = matches!(call.ret, Some((_, _, CType::Ptr)));
    if let (true, Some((slot, _, _))) = (constructs, call.ret) {
        let built = call.objects.lock().map_err(|e| e.to_string())?;
        if let Some((_, h)) = built.iter().find(|(k, _)| *k == key) {
            frame[slot as usize] = Value::Int(*h);
            return Ok(());
        }
    }
    let result = entry.call(&mut bufs).map_err(|msg| {
        format!(
            "external C function `{}` reported an error: {msg}",
            call.c_name
        )
    });
    if result.is_ok() {
        if let Some((slot, ty, _)) = call.ret {
            let v = element(&bufs[0], 0, ty);
            if let (true, Value::Int(h)) = (constructs, &v) {
                if let Ok(mut built) = call.objects.lock() {
                    built.push((key, *h));
                }
            }
            frame[slot as usize] = v;
        }
        for (a, b) in call.args.iter().zip(&bufs[1..]) {
            if let CArg::Out { slot, slot_ty, .. } = a {
                let v = from_buffer(b, &frame[*slot as usize], *slot_ty);
                frame[*slot as usize] = v;
            }
        }
    }
    entry.release();
    result
}
