//! Built-in functions: resolved from their names once at compile time.
//!
//! [`Math1`] and [`Math2`] are the scalar functions the expression tapes execute directly;
//! [`Builtin`] covers every built-in at the value level (arrays, strings, Integers) for the
//! function interpreter and for calls the tape cannot express with scalars.

use crate::value::{to_modelica_string, ArrayVal, VResult, Value};

/// Scalar functions of one argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Math1 {
    Abs,
    Sign,
    Sqrt,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Exp,
    Log,
    Log10,
    Ceil,
    Floor,
}

impl Math1 {
    pub fn from_name(name: &str) -> Option<Math1> {
        Some(match name {
            "abs" => Math1::Abs,
            "sign" => Math1::Sign,
            "sqrt" => Math1::Sqrt,
            "sin" => Math1::Sin,
            "cos" => Math1::Cos,
            "tan" => Math1::Tan,
            "asin" => Math1::Asin,
            "acos" => Math1::Acos,
            "atan" => Math1::Atan,
            "sinh" => Math1::Sinh,
            "cosh" => Math1::Cosh,
            "tanh" => Math1::Tanh,
            "exp" => Math1::Exp,
            "log" => Math1::Log,
            "log10" => Math1::Log10,
            "ceil" => Math1::Ceil,
            // `integer(x)` is the largest Integer not greater than x: floor as a number
            "floor" | "integer" => Math1::Floor,
            _ => return None,
        })
    }

    #[inline(always)]
    pub fn apply(self, x: f64) -> f64 {
        match self {
            Math1::Abs => x.abs(),
            Math1::Sign => {
                if x > 0.0 {
                    1.0
                } else if x < 0.0 {
                    -1.0
                } else {
                    0.0
                }
            }
            Math1::Sqrt => x.sqrt(),
            Math1::Sin => x.sin(),
            Math1::Cos => x.cos(),
            Math1::Tan => x.tan(),
            Math1::Asin => x.asin(),
            Math1::Acos => x.acos(),
            Math1::Atan => x.atan(),
            Math1::Sinh => x.sinh(),
            Math1::Cosh => x.cosh(),
            Math1::Tanh => x.tanh(),
            Math1::Exp => x.exp(),
            Math1::Log => x.ln(),
            Math1::Log10 => x.log10(),
            Math1::Ceil => x.ceil(),
            Math1::Floor => x.floor(),
        }
    }
}

/// Scalar functions of two arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Math2 {
    Atan2,
    Min,
    Max,
    /// `div(x, y)`: truncated quotient.
    Div,
    /// `mod(x, y) = x - floor(x/y)*y`
    Mod,
    /// `rem(x, y) = x - div(x, y)*y`
    Rem,
    Pow,
}

impl Math2 {
    pub fn from_name(name: &str) -> Option<Math2> {
        Some(match name {
            "atan2" => Math2::Atan2,
            "min" => Math2::Min,
            "max" => Math2::Max,
            "div" => Math2::Div,
            "mod" => Math2::Mod,
            "rem" => Math2::Rem,
            _ => return None,
        })
    }

    #[inline(always)]
    pub fn apply(self, x: f64, y: f64) -> f64 {
        match self {
            Math2::Atan2 => x.atan2(y),
            Math2::Min => {
                if x <= y {
                    x
                } else {
                    y
                }
            }
            Math2::Max => {
                if x >= y {
                    x
                } else {
                    y
                }
            }
            Math2::Div => (x / y).trunc(),
            Math2::Mod => x - (x / y).floor() * y,
            Math2::Rem => x - (x / y).trunc() * y,
            Math2::Pow => pow(x, y),
        }
    }
}

/// `x ^ y` with exact small integer exponents (faster and exact for negative bases).
#[inline(always)]
pub fn pow(x: f64, y: f64) -> f64 {
    if y == 2.0 {
        x * x
    } else if y.fract() == 0.0 && y.abs() < 64.0 {
        x.powi(y as i32)
    } else {
        x.powf(y)
    }
}

/// Every built-in callable at the value level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    M1(Math1),
    M2(Math2),
    /// `Integer(x)` (enumeration to Integer), `Real(x)`, `Boolean(x)`: conversions.
    ToInteger,
    ToReal,
    ToBoolean,
    String,
    SemiLinear,
    /// `noEvent`, `smooth` (last argument), `homotopy` (first argument): identity.
    NoEvent,
    Smooth,
    Homotopy,
    Size,
    Ndims,
    Sum,
    Product,
    Fill,
    Zeros,
    Ones,
    Linspace,
    Cat,
    Transpose,
    Identity,
    Diagonal,
    Cross,
    Skew,
    OuterProduct,
    Symmetric,
    Scalar,
    Vector,
    Matrix,
    /// Dynamic state selection (`moss_symbolic::state_sets`): weight, quality and choice.
    StateSetWeight,
    StateSetQuality,
    StateSetSelect,
}

impl Builtin {
    /// Resolve a plain built-in name. Event operators (`pre`, `edge`, `initial`, ...) are
    /// handled by the compilers, not here.
    pub fn from_name(name: &str) -> Option<Builtin> {
        if let Some(m) = Math1::from_name(name) {
            return Some(Builtin::M1(m));
        }
        Some(match name {
            "atan2" => Builtin::M2(Math2::Atan2),
            "div" => Builtin::M2(Math2::Div),
            "mod" => Builtin::M2(Math2::Mod),
            "rem" => Builtin::M2(Math2::Rem),
            // min/max accept one array or two scalars: handled by `call_builtin`
            "min" => Builtin::M2(Math2::Min),
            "max" => Builtin::M2(Math2::Max),
            "Integer" => Builtin::ToInteger,
            "Real" => Builtin::ToReal,
            "Boolean" => Builtin::ToBoolean,
            "String" => Builtin::String,
            "semiLinear" => Builtin::SemiLinear,
            "noEvent" => Builtin::NoEvent,
            "smooth" => Builtin::Smooth,
            "homotopy" => Builtin::Homotopy,
            "size" => Builtin::Size,
            "ndims" => Builtin::Ndims,
            "sum" => Builtin::Sum,
            "product" => Builtin::Product,
            "fill" => Builtin::Fill,
            "zeros" => Builtin::Zeros,
            "ones" => Builtin::Ones,
            "linspace" => Builtin::Linspace,
            "cat" => Builtin::Cat,
            "transpose" => Builtin::Transpose,
            "identity" => Builtin::Identity,
            "diagonal" => Builtin::Diagonal,
            "cross" => Builtin::Cross,
            "skew" => Builtin::Skew,
            "outerProduct" => Builtin::OuterProduct,
            "symmetric" => Builtin::Symmetric,
            "scalar" => Builtin::Scalar,
            "vector" => Builtin::Vector,
            "matrix" => Builtin::Matrix,
            moss_symbolic::state_sets::WEIGHT => Builtin::StateSetWeight,
            moss_symbolic::state_sets::QUALITY => Builtin::StateSetQuality,
            moss_symbolic::state_sets::SELECT => Builtin::StateSetSelect,
            _ => return None,
        })
    }
}

/// Displays a builtin's name only when an error message needs it.
struct BuiltinName(Builtin);

impl std::fmt::Display for BuiltinName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Builtin::M1(m) => write!(f, "{m:?}"),
            Builtin::M2(m) => write!(f, "{m:?}"),
            other => write!(f, "{other:?}"),
        }
    }
}

fn arg<F: std::fmt::Display + ?Sized>(args: &[Value], i: usize, f: &F) -> VResult<Value> {
    args.get(i)
        .cloned()
        .ok_or_else(|| format!("{f}: missing argument {}", i + 1))
}

/// Apply a scalar function element-wise (Modelica's vectorized calls).
fn map1(v: &Value, f: &dyn Fn(&Value) -> VResult<Value>) -> VResult<Value> {
    match v {
        Value::Array(a) => Ok(Value::Array(ArrayVal {
            dims: a.dims.clone(),
            data: a.data.iter().map(f).collect::<VResult<Vec<_>>>()?,
        })),
        s => f(s),
    }
}

fn int_or_real(x: &Value, y: &Value) -> bool {
    matches!(x, Value::Int(_)) && matches!(y, Value::Int(_))
}

fn math2(m: Math2, x: &Value, y: &Value) -> VResult<Value> {
    if int_or_real(x, y) {
        let (a, b) = (x.as_i64()?, y.as_i64()?);
        let r = match m {
            Math2::Min => a.min(b),
            Math2::Max => a.max(b),
            Math2::Div | Math2::Mod | Math2::Rem if b == 0 => return Err(zero_divisor(m, x, y)),
            Math2::Div => a.wrapping_div(b),
            Math2::Mod => {
                let r = a.wrapping_rem_euclid(b);
                if b < 0 && r != 0 {
                    r + b
                } else {
                    r
                }
            }
            Math2::Rem => a.wrapping_rem(b),
            Math2::Atan2 | Math2::Pow => return Ok(Value::Real(m.apply(a as f64, b as f64))),
        };
        return Ok(Value::Int(r));
    }
    let (a, b) = (x.as_f64()?, y.as_f64()?);
    if b == 0.0 && matches!(m, Math2::Div | Math2::Mod | Math2::Rem) {
        return Err(zero_divisor(m, x, y));
    }
    Ok(Value::Real(m.apply(a, b)))
}

/// The error of `div`, `mod` or `rem` with a zero divisor (spec 3.7.1: undefined).
fn zero_divisor(m: Math2, x: &Value, y: &Value) -> String {
    let name = format!("{m:?}").to_lowercase();
    format!(
        "division by zero in `{name}({}, {})`: the divisor of `{name}` must not be zero",
        crate::value::to_modelica_string(x, 6),
        crate::value::to_modelica_string(y, 6)
    )
}

fn fold_numeric(
    v: &Value,
    init: f64,
    f: fn(f64, f64) -> f64,
    int_f: fn(i64, i64) -> i64,
) -> VResult<Value> {
    let elems = v.flatten();
    if elems.iter().all(|e| matches!(e, Value::Int(_))) {
        let mut acc = init as i64;
        for e in &elems {
            acc = int_f(acc, e.as_i64()?);
        }
        return Ok(Value::Int(acc));
    }
    let mut acc = init;
    for e in &elems {
        acc = f(acc, e.as_f64()?);
    }
    Ok(Value::Real(acc))
}

fn extreme(v: &Value, want_max: bool) -> VResult<Value> {
    let elems = v.flatten();
    let mut best: Option<Value> = None;
    for e in elems {
        best = Some(match best {
            None => e,
            Some(b) => math2(if want_max { Math2::Max } else { Math2::Min }, &b, &e)?,
        });
    }
    best.ok_or_else(|| "min/max of an empty array".to_string())
}

fn dims_from(args: &[Value], f: &str) -> VResult<Vec<usize>> {
    args.iter()
        .map(|a| {
            let n = a.as_i64()?;
            usize::try_from(n).map_err(|_| format!("{f}: negative dimension {n}"))
        })
        .collect()
}

fn matrix_of(v: &Value, f: &str) -> VResult<(usize, usize, Vec<Value>)> {
    match v {
        Value::Array(a) if a.dims.len() == 2 => Ok((a.dims[0], a.dims[1], a.data.clone())),
        Value::Array(a) if a.dims.len() == 1 => Ok((a.dims[0], 1, a.data.clone())),
        other => Err(format!("{f}: expected a matrix, got {:?}", other.dims())),
    }
}

fn mat(rows: usize, cols: usize, data: Vec<Value>) -> Value {
    Value::Array(ArrayVal::new(vec![rows, cols], data))
}

/// Call a built-in on values.
pub fn call_builtin(b: Builtin, args: &[Value]) -> VResult<Value> {
    let name = BuiltinName(b);
    match b {
        Builtin::M1(m) => {
            let x = arg(args, 0, &name)?;
            map1(&x, &|e| match (m, e) {
                (Math1::Abs, Value::Int(i)) => Ok(Value::Int(i.abs())),
                (Math1::Sign, Value::Int(i)) => Ok(Value::Int(i.signum())),
                (Math1::Floor, Value::Int(i)) => Ok(Value::Int(*i)),
                (Math1::Ceil, Value::Int(i)) => Ok(Value::Int(*i)),
                _ => Ok(Value::Real(m.apply(e.as_f64()?))),
            })
        }
        Builtin::M2(m @ (Math2::Min | Math2::Max)) if args.len() == 1 => {
            extreme(&args[0], m == Math2::Max)
        }
        Builtin::M2(m) => math2(m, &arg(args, 0, &name)?, &arg(args, 1, &name)?),
        Builtin::ToInteger => {
            let x = arg(args, 0, &name)?;
            Ok(Value::Int(match x {
                Value::Real(r) => r.floor() as i64,
                o => o.as_i64()?,
            }))
        }
        Builtin::ToReal => map1(&arg(args, 0, &name)?, &|e| Ok(Value::Real(e.as_f64()?))),
        Builtin::ToBoolean => Ok(Value::Bool(arg(args, 0, &name)?.as_bool()?)),
        Builtin::String => string_of(args),
        Builtin::SemiLinear => {
            let x = arg(args, 0, &name)?.as_f64()?;
            let kp = arg(args, 1, &name)?.as_f64()?;
            let kn = arg(args, 2, &name)?.as_f64()?;
            Ok(Value::Real(if x >= 0.0 { kp * x } else { kn * x }))
        }
        Builtin::NoEvent | Builtin::Homotopy => arg(args, 0, &name),
        Builtin::Smooth => arg(args, args.len().max(1) - 1, &name),
        Builtin::Size => {
            let a = arg(args, 0, &name)?;
            let dims = a.dims();
            match args.get(1) {
                Some(i) => {
                    let i = i.as_i64()?;
                    let d = usize::try_from(i - 1)
                        .ok()
                        .and_then(|k| dims.get(k))
                        .ok_or_else(|| format!("size: dimension {i} out of range for {dims:?}"))?;
                    Ok(Value::Int(*d as i64))
                }
                None => Ok(Value::vector(
                    dims.iter().map(|&d| Value::Int(d as i64)).collect(),
                )),
            }
        }
        Builtin::Ndims => Ok(Value::Int(arg(args, 0, &name)?.dims().len() as i64)),
        Builtin::Sum => fold_numeric(&arg(args, 0, &name)?, 0.0, |a, b| a + b, i64::wrapping_add),
        Builtin::Product => {
            fold_numeric(&arg(args, 0, &name)?, 1.0, |a, b| a * b, i64::wrapping_mul)
        }
        Builtin::Fill => {
            let v = arg(args, 0, &name)?;
            let dims = dims_from(&args[1..], "fill")?;
            fill(v, dims)
        }
        Builtin::Zeros => fill(Value::Int(0), dims_from(args, "zeros")?),
        Builtin::Ones => fill(Value::Int(1), dims_from(args, "ones")?),
        Builtin::Linspace => {
            let a = arg(args, 0, &name)?.as_f64()?;
            let b = arg(args, 1, &name)?.as_f64()?;
            let n = arg(args, 2, &name)?.as_i64()?;
            if n < 2 {
                return Err(format!("linspace: n must be at least 2, got {n}"));
            }
            let xs: Vec<f64> = (0..n)
                .map(|i| a + (b - a) * i as f64 / (n - 1) as f64)
                .collect();
            Ok(Value::real_vector(&xs))
        }
        Builtin::Cat => cat(args),
        Builtin::Transpose => {
            let (r, c, d) = matrix_of(&arg(args, 0, &name)?, "transpose")?;
            let mut out = Vec::with_capacity(d.len());
            for j in 0..c {
                for i in 0..r {
                    out.push(d[i * c + j].clone());
                }
            }
            Ok(mat(c, r, out))
        }
        Builtin::Identity => {
            let n = dims_from(&args[..1.min(args.len())], "identity")?
                .first()
                .copied()
                .ok_or("identity: missing argument")?;
            let data = (0..n * n)
                .map(|k| Value::Int((k / n == k % n) as i64))
                .collect();
            Ok(mat(n, n, data))
        }
        Builtin::Diagonal => {
            let v = arg(args, 0, &name)?.flatten();
            let n = v.len();
            let mut data = vec![Value::Int(0); n * n];
            for (i, e) in v.into_iter().enumerate() {
                data[i * n + i] = e;
            }
            let zero = data
                .iter()
                .find(|e| !matches!(e, Value::Int(_)))
                .map(|e| e.zero_like());
            if let Some(z) = zero {
                for (k, e) in data.iter_mut().enumerate() {
                    if k / n != k % n {
                        *e = z.clone();
                    }
                }
            }
            Ok(mat(n, n, data))
        }
        Builtin::Cross => {
            let x = real3(&arg(args, 0, &name)?)?;
            let y = real3(&arg(args, 1, &name)?)?;
            Ok(Value::real_vector(&[
                x[1] * y[2] - x[2] * y[1],
                x[2] * y[0] - x[0] * y[2],
                x[0] * y[1] - x[1] * y[0],
            ]))
        }
        Builtin::Skew => {
            let x = real3(&arg(args, 0, &name)?)?;
            let d = [0.0, -x[2], x[1], x[2], 0.0, -x[0], -x[1], x[0], 0.0];
            Ok(mat(3, 3, d.iter().map(|&v| Value::Real(v)).collect()))
        }
        Builtin::OuterProduct => {
            let x = arg(args, 0, &name)?.flatten();
            let y = arg(args, 1, &name)?.flatten();
            let mut data = Vec::with_capacity(x.len() * y.len());
            for a in &x {
                for b in &y {
                    data.push(Value::Real(a.as_f64()? * b.as_f64()?));
                }
            }
            Ok(mat(x.len(), y.len(), data))
        }
        Builtin::Symmetric => {
            let (r, c, d) = matrix_of(&arg(args, 0, &name)?, "symmetric")?;
            let mut out = d.clone();
            for i in 0..r {
                for j in 0..c.min(i) {
                    out[i * c + j] = d[j * c + i].clone();
                }
            }
            Ok(mat(r, c, out))
        }
        Builtin::Scalar => {
            let v = arg(args, 0, &name)?.flatten();
            if v.len() != 1 {
                return Err(format!(
                    "scalar: argument has {} elements, expected 1",
                    v.len()
                ));
            }
            Ok(v[0].clone())
        }
        Builtin::Vector => Ok(Value::vector(arg(args, 0, &name)?.flatten())),
        Builtin::Matrix => {
            let v = arg(args, 0, &name)?;
            match &v {
                Value::Array(a) if a.dims.len() >= 2 => {
                    let r = a.dims[0];
                    Ok(mat(r, a.data.len() / r.max(1), a.data.clone()))
                }
                Value::Array(a) => Ok(mat(a.dims[0], 1, a.data.clone())),
                s => Ok(mat(1, 1, vec![s.clone()])),
            }
        }
        Builtin::StateSetWeight | Builtin::StateSetQuality | Builtin::StateSetSelect => {
            let xs = args
                .iter()
                .map(Value::as_f64)
                .collect::<VResult<Vec<f64>>>()?;
            state_set_builtin(b, &xs)
        }
    }
}

/// The dynamic state-selection built-ins (`moss_symbolic::state_sets`) on their arguments'
/// numbers: weight (mask, j, i), quality and choice (mask, n, p, the constraints' Jacobian).
pub(crate) fn state_set_builtin(b: Builtin, xs: &[f64]) -> VResult<Value> {
    let name = BuiltinName(b).to_string();
    let int = |k: usize| -> VResult<i64> {
        let x = *xs
            .get(k)
            .ok_or_else(|| format!("`{name}` needs at least {} arguments", k + 1))?;
        Value::Real(x).as_i64()
    };
    match b {
        Builtin::StateSetWeight => Ok(Value::Real(moss_symbolic::state_sets::weight(
            int(0)?,
            int(1)?,
            int(2)? - 1,
        ))),
        _ => {
            let (mask, n, p) = (int(0)?, int(1)?.max(0) as usize, int(2)?.max(0) as usize);
            let jac = &xs[3..];
            Ok(if b == Builtin::StateSetQuality {
                Value::Real(moss_symbolic::state_sets::quality(mask, n, p, jac))
            } else {
                Value::Int(moss_symbolic::state_sets::select(mask, n, p, jac))
            })
        }
    }
}

fn real3(v: &Value) -> VResult<[f64; 3]> {
    let e = v.flatten();
    if e.len() != 3 {
        return Err(format!("expected a 3-vector, got {} elements", e.len()));
    }
    Ok([e[0].as_f64()?, e[1].as_f64()?, e[2].as_f64()?])
}

fn fill(v: Value, dims: Vec<usize>) -> VResult<Value> {
    if dims.is_empty() {
        return Ok(v);
    }
    // fill(array, n) nests: the element's dims come last
    let inner = v.dims();
    let elems = v.flatten();
    let count: usize = dims.iter().product();
    let mut data = Vec::with_capacity(count * elems.len());
    for _ in 0..count {
        data.extend(elems.iter().cloned());
    }
    let mut all = dims;
    all.extend(inner);
    Ok(Value::Array(ArrayVal::new(all, data)))
}

/// `cat(k, a, b, ...)`: concatenation along dimension k.
fn cat(args: &[Value]) -> VResult<Value> {
    let k = arg(args, 0, "cat")?.as_i64()?;
    let parts: Vec<&Value> = args[1..].iter().collect();
    if parts.is_empty() {
        return Err("cat: nothing to concatenate".into());
    }
    let nd = parts[0].dims().len().max(1);
    let k = usize::try_from(k - 1)
        .ok()
        .filter(|&k| k < nd)
        .ok_or_else(|| format!("cat: dimension {k} out of range"))?;
    let shapes: Vec<Vec<usize>> = parts
        .iter()
        .map(|p| if p.is_array() { p.dims() } else { vec![1] })
        .collect();
    for s in &shapes {
        if s.len() != nd || (0..nd).any(|d| d != k && s[d] != shapes[0][d]) {
            return Err(format!(
                "cat: incompatible sizes {:?} and {:?}",
                shapes[0], s
            ));
        }
    }
    let outer: usize = shapes[0][..k].iter().product();
    let mut data = Vec::new();
    for o in 0..outer {
        for (p, s) in parts.iter().zip(&shapes) {
            let block: usize = s[k..].iter().product();
            let flat = p.flatten();
            data.extend(flat[o * block..(o + 1) * block].iter().cloned());
        }
    }
    let mut dims = shapes[0].clone();
    dims[k] = shapes.iter().map(|s| s[k]).sum();
    Ok(Value::Array(ArrayVal::new(dims, data)))
}

/// `String(x)`, `String(x, significantDigits)`, `String(x, minimumLength, leftJustified)`
/// (the frontend places named arguments in order; we accept the common positional forms).
fn string_of(args: &[Value]) -> VResult<Value> {
    let x = arg(args, 0, "String")?;
    let mut significant = 6usize;
    let mut min_len = 0usize;
    let mut left = true;
    if let Some(Value::Str(format)) = args.get(1) {
        return format_with_spec(&x, format).map(Value::Str);
    }
    match (&x, args.len()) {
        (Value::Real(_), 2) => significant = args[1].as_i64()?.max(1) as usize,
        (_, n) if n >= 3 => {
            min_len = args[1].as_i64()?.max(0) as usize;
            left = args[2].as_bool()?;
            if let (Value::Real(_), Some(s)) = (&x, args.get(3)) {
                significant = s.as_i64()?.max(1) as usize;
            }
        }
        (_, 2) => min_len = args[1].as_i64()?.max(0) as usize,
        _ => {}
    }
    let mut s = to_modelica_string(&x, significant);
    while s.len() < min_len {
        if left {
            s.push(' ');
        } else {
            s.insert(0, ' ');
        }
    }
    Ok(Value::Str(s))
}

/// `String(x, format = "...")`: a C-like format specification `[-][0][width][.precision]type`
/// with type `f`, `e`, `E`, `g`, `G` or `d`.
fn format_with_spec(x: &Value, spec: &str) -> VResult<String> {
    let bad = || {
        format!("String: unsupported format \"{spec}\" (use e.g. \"8.3f\", \"e\", \"g\", \"d\")")
    };
    let body = spec.strip_prefix('%').unwrap_or(spec);
    let (left, body) = match body.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, body),
    };
    let ty = body.chars().last().ok_or_else(bad)?;
    let nums = &body[..body.len() - ty.len_utf8()];
    let (width, precision) = match nums.split_once('.') {
        Some((w, p)) => (w, Some(p.parse::<usize>().map_err(|_| bad())?)),
        None => (nums, None),
    };
    let zero_pad = width.starts_with('0') && !left;
    let width: usize = if width.is_empty() {
        0
    } else {
        width.parse().map_err(|_| bad())?
    };
    let v = x.as_f64()?;
    let text = match ty {
        'f' => format!("{:.*}", precision.unwrap_or(6), v),
        'e' | 'E' => {
            let t = format!("{:.*e}", precision.unwrap_or(6), v);
            // C style exponent: e+05
            let (m, e) = t.split_once('e').unwrap_or((&t, "0"));
            let e: i32 = e.parse().unwrap_or(0);
            let t = format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
            if ty == 'E' {
                t.to_uppercase()
            } else {
                t
            }
        }
        'g' | 'G' => {
            let t = crate::value::format_real(v, precision.unwrap_or(6).max(1));
            if ty == 'G' {
                t.to_uppercase()
            } else {
                t
            }
        }
        'd' | 'i' => format!("{}", v.round() as i64),
        _ => return Err(bad()),
    };
    Ok(if text.len() >= width {
        text
    } else if left {
        format!("{text:<width$}")
    } else if zero_pad {
        let (sign, digits) = match text.strip_prefix('-') {
            Some(d) => ("-", d),
            None => ("", text.as_str()),
        };
        format!("{sign}{digits:0>w$}", w = width - sign.len())
    } else {
        format!("{text:>width$}")
    })
}

/// Functions of the C math library callable through `external "C"`.
pub fn libm_function(name: &str) -> Option<Builtin> {
    Some(match name {
        "sin" | "cos" | "tan" | "asin" | "acos" | "atan" | "sinh" | "cosh" | "tanh" | "exp"
        | "log" | "log10" | "sqrt" | "ceil" | "floor" => Builtin::from_name(name)?,
        "fabs" => Builtin::M1(Math1::Abs),
        "atan2" => Builtin::M2(Math2::Atan2),
        "pow" => Builtin::M2(Math2::Pow),
        "fmin" => Builtin::M2(Math2::Min),
        "fmax" => Builtin::M2(Math2::Max),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::array_literal;

    fn b(name: &str) -> Builtin {
        Builtin::from_name(name).expect("known builtin")
    }
    fn reals(xs: &[f64]) -> Value {
        Value::real_vector(xs)
    }
    fn ints(xs: &[i64]) -> Value {
        Value::vector(xs.iter().map(|&i| Value::Int(i)).collect())
    }
    fn nums(v: &Value) -> Vec<f64> {
        v.flatten()
            .iter()
            .map(|e| e.as_f64().expect("number"))
            .collect()
    }
    fn call(name: &str, args: &[Value]) -> Value {
        call_builtin(b(name), args).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    #[test]
    fn vector_algebra() {
        let x = reals(&[1.0, 2.0, 3.0]);
        let y = reals(&[4.0, 5.0, 6.0]);
        assert_eq!(
            nums(&call("cross", &[x.clone(), y.clone()])),
            vec![-3.0, 6.0, -3.0]
        );
        // skew(x) * y == cross(x, y)
        let s = call("skew", std::slice::from_ref(&x));
        let sy: Vec<f64> = (0..3)
            .map(|i| (0..3).map(|j| nums(&s)[i * 3 + j] * nums(&y)[j]).sum())
            .collect();
        assert_eq!(sy, vec![-3.0, 6.0, -3.0]);
        let op = call("outerProduct", &[x.clone(), y]);
        assert_eq!(op.dims(), vec![3, 3]);
        assert_eq!(nums(&op)[5], 2.0 * 6.0);
        assert_eq!(call("sum", std::slice::from_ref(&x)), Value::Real(6.0));
        assert_eq!(call("product", &[ints(&[2, 3, 4])]), Value::Int(24));
        assert_eq!(call("max", std::slice::from_ref(&x)), Value::Real(3.0));
        assert_eq!(call("min", &[ints(&[5, -2, 7])]), Value::Int(-2));
        assert_eq!(call("ndims", &[x]), Value::Int(1));
    }

    #[test]
    fn matrix_construction() {
        let m = array_literal(vec![reals(&[1.0, 2.0]), reals(&[3.0, 4.0])]).expect("2x2");
        let t = call("transpose", std::slice::from_ref(&m));
        assert_eq!(nums(&t), vec![1.0, 3.0, 2.0, 4.0]);
        assert_eq!(
            nums(&call("symmetric", std::slice::from_ref(&m))),
            vec![1.0, 2.0, 2.0, 4.0]
        );
        assert_eq!(
            nums(&call("diagonal", &[reals(&[1.0, 2.0])])),
            vec![1.0, 0.0, 0.0, 2.0]
        );
        assert_eq!(
            nums(&call("identity", &[Value::Int(2)])),
            vec![1.0, 0.0, 0.0, 1.0]
        );
        let c = call("cat", &[Value::Int(2), m.clone(), m.clone()]);
        assert_eq!(c.dims(), vec![2, 4]);
        assert_eq!(nums(&c), vec![1.0, 2.0, 1.0, 2.0, 3.0, 4.0, 3.0, 4.0]);
        let c1 = call("cat", &[Value::Int(1), m.clone(), m.clone()]);
        assert_eq!(c1.dims(), vec![4, 2]);
        assert_eq!(call("vector", std::slice::from_ref(&m)).dims(), vec![4]);
        assert_eq!(call("matrix", &[reals(&[1.0, 2.0])]).dims(), vec![2, 1]);
        assert_eq!(
            call(
                "scalar",
                &[call(
                    "fill",
                    &[Value::Real(7.0), Value::Int(1), Value::Int(1)]
                )]
            ),
            Value::Real(7.0)
        );
        assert_eq!(call("size", std::slice::from_ref(&m)), ints(&[2, 2]));
        assert_eq!(
            call("zeros", &[Value::Int(2), Value::Int(3)]).dims(),
            vec![2, 3]
        );
        assert_eq!(
            nums(&call(
                "linspace",
                &[Value::Real(0.0), Value::Real(1.0), Value::Int(5)]
            )),
            vec![0.0, 0.25, 0.5, 0.75, 1.0]
        );
        assert!(call_builtin(
            b("linspace"),
            &[Value::Real(0.0), Value::Real(1.0), Value::Int(1)]
        )
        .is_err());
        assert!(call_builtin(b("cat"), &[Value::Int(3), m.clone(), m]).is_err());
    }

    #[test]
    fn integer_functions_and_strings() {
        assert_eq!(
            call("div", &[Value::Int(-7), Value::Int(2)]),
            Value::Int(-3)
        );
        assert_eq!(call("mod", &[Value::Int(-7), Value::Int(3)]), Value::Int(2));
        assert_eq!(
            call("mod", &[Value::Int(7), Value::Int(-3)]),
            Value::Int(-2)
        );
        assert_eq!(
            call("rem", &[Value::Int(-7), Value::Int(3)]),
            Value::Int(-1)
        );
        assert!(call_builtin(b("div"), &[Value::Int(1), Value::Int(0)]).is_err());
        assert_eq!(
            call("mod", &[Value::Real(5.5), Value::Real(2.0)]),
            Value::Real(1.5)
        );
        assert_eq!(call("abs", &[ints(&[-1, 2])]), ints(&[1, 2]));
        assert_eq!(call("Integer", &[Value::Real(2.7)]), Value::Int(2));
        assert_eq!(
            call("String", &[Value::Real(0.1)]),
            Value::Str("0.1".into())
        );
        assert_eq!(
            call("String", &[Value::Real(2.0 / 3.0), Value::Int(3)]),
            Value::Str("0.667".into())
        );
        assert_eq!(
            call(
                "String",
                &[Value::Int(42), Value::Int(5), Value::Bool(false)]
            ),
            Value::Str("   42".into())
        );
        assert_eq!(
            call("String", &[Value::Bool(false)]),
            Value::Str("false".into())
        );
        assert_eq!(
            call("String", &[Value::Real(2.71249), Value::Str("8.3f".into())]),
            Value::Str("   2.712".into())
        );
        assert_eq!(
            call("String", &[Value::Real(-2.5), Value::Str("07.2f".into())]),
            Value::Str("-002.50".into())
        );
        assert_eq!(
            call(
                "String",
                &[Value::Real(12345.678), Value::Str("-.2e".into())]
            ),
            Value::Str("1.23e+04".into())
        );
        assert_eq!(
            call("String", &[Value::Int(7), Value::Str("3d".into())]),
            Value::Str("  7".into())
        );
        assert!(call_builtin(b("String"), &[Value::Real(1.0), Value::Str("q".into())]).is_err());
        assert_eq!(libm_function("fabs"), Some(Builtin::M1(Math1::Abs)));
        assert_eq!(libm_function("my_solver"), None);
    }
}
