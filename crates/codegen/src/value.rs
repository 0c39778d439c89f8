//! Dynamically typed values of the function interpreter (function bodies, algorithm sections,
//! assert messages) and the value-level implementation of the built-in functions.
//!
//! The hot path of the model (the expression tapes) works on plain `f64`; values only appear
//! where Modelica needs strings, Integers with exact arithmetic, or arrays of dynamic size.

use std::fmt::Write as _;

/// A runtime value. Arrays are stored row-major with their dimensions.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Real(f64),
    Int(i64),
    Bool(bool),
    Str(String),
    Array(ArrayVal),
}

#[derive(Clone, Debug, PartialEq)]
pub struct ArrayVal {
    pub dims: Vec<usize>,
    pub data: Vec<Value>,
}

/// Error raised while evaluating values; turned into a `RuntimeError` at the block boundary.
pub type VResult<T> = Result<T, String>;

impl Value {
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Real(_) => "Real",
            Value::Int(_) => "Integer",
            Value::Bool(_) => "Boolean",
            Value::Str(_) => "String",
            Value::Array(_) => "array",
        }
    }

    /// Numeric view of a scalar (Booleans as 0/1).
    pub fn as_f64(&self) -> VResult<f64> {
        match self {
            Value::Real(x) => Ok(*x),
            Value::Int(i) => Ok(*i as f64),
            Value::Bool(b) => Ok(if *b { 1.0 } else { 0.0 }),
            Value::Str(s) => Err(format!("expected a number, got the string \"{s}\"")),
            Value::Array(a) => {
                if a.data.len() == 1 {
                    a.data[0].as_f64()
                } else {
                    Err(format!(
                        "expected a scalar, got an array of size {:?}",
                        a.dims
                    ))
                }
            }
        }
    }

    pub fn as_i64(&self) -> VResult<i64> {
        match self {
            Value::Int(i) => Ok(*i),
            other => {
                let x = other.as_f64()?;
                if x.is_finite() {
                    Ok(x.round() as i64)
                } else {
                    Err(format!("expected an Integer, got {x}"))
                }
            }
        }
    }

    pub fn as_bool(&self) -> VResult<bool> {
        match self {
            Value::Bool(b) => Ok(*b),
            other => Ok(other.as_f64()? != 0.0),
        }
    }

    pub fn is_array(&self) -> bool {
        matches!(self, Value::Array(_))
    }

    pub fn dims(&self) -> Vec<usize> {
        match self {
            Value::Array(a) => a.dims.clone(),
            _ => vec![],
        }
    }

    /// Element `i` (0-based) along the first dimension.
    pub fn first_dim_elem(&self, i: usize) -> VResult<Value> {
        let a = self.as_array()?;
        let n = a.dims[0];
        if i >= n {
            return Err(format!("index {} out of bounds 1..{}", i + 1, n));
        }
        let inner: usize = a.dims[1..].iter().product();
        if a.dims.len() == 1 {
            Ok(a.data[i].clone())
        } else {
            Ok(Value::Array(ArrayVal {
                dims: a.dims[1..].to_vec(),
                data: a.data[i * inner..(i + 1) * inner].to_vec(),
            }))
        }
    }

    pub fn as_array(&self) -> VResult<&ArrayVal> {
        match self {
            Value::Array(a) => Ok(a),
            other => Err(format!("expected an array, got a {}", other.type_name())),
        }
    }

    /// All scalar elements in row-major order (a scalar is one element).
    pub fn flatten(&self) -> Vec<Value> {
        match self {
            Value::Array(a) => a.data.clone(),
            v => vec![v.clone()],
        }
    }

    pub fn vector(data: Vec<Value>) -> Value {
        Value::Array(ArrayVal {
            dims: vec![data.len()],
            data,
        })
    }

    pub fn real_vector(xs: &[f64]) -> Value {
        Value::vector(xs.iter().map(|&x| Value::Real(x)).collect())
    }

    /// The zero value of a scalar type: 0, 0.0, false, "".
    pub fn zero_like(&self) -> Value {
        match self {
            Value::Real(_) => Value::Real(0.0),
            Value::Int(_) => Value::Int(0),
            Value::Bool(_) => Value::Bool(false),
            Value::Str(_) => Value::Str(String::new()),
            Value::Array(a) => Value::Array(ArrayVal {
                dims: a.dims.clone(),
                data: a.data.iter().map(Value::zero_like).collect(),
            }),
        }
    }
}

impl ArrayVal {
    pub fn new(dims: Vec<usize>, data: Vec<Value>) -> ArrayVal {
        ArrayVal { dims, data }
    }

    pub fn filled(dims: Vec<usize>, v: Value) -> ArrayVal {
        let n = dims.iter().product();
        ArrayVal {
            dims,
            data: vec![v; n],
        }
    }
}

/// Build an array from the elements of an array literal `{a, b, c}` (elements may themselves
/// be arrays of equal size: matrices).
pub fn array_literal(elems: Vec<Value>) -> VResult<Value> {
    if elems.is_empty() {
        return Ok(Value::Array(ArrayVal::new(vec![0], vec![])));
    }
    let inner = elems[0].dims();
    let mut data = Vec::with_capacity(elems.len() * inner.iter().product::<usize>());
    for e in elems.iter() {
        match e {
            Value::Array(a) if a.dims == inner => data.extend(a.data.iter().cloned()),
            scalar if inner.is_empty() && !scalar.is_array() => data.push(scalar.clone()),
            other => {
                return Err(format!(
                    "array literal elements have different sizes {:?} and {:?}",
                    inner,
                    other.dims()
                ))
            }
        }
    }
    let mut dims = vec![elems.len()];
    dims.extend(inner);
    Ok(Value::Array(ArrayVal { dims, data }))
}

/// Format a Real as Modelica's `String(x)` does (shared with translation-time folding).
pub use moss_frontend::fold::format_real;

/// `String(v, ...)`: the textual form of a value.
pub fn to_modelica_string(v: &Value, significant: usize) -> String {
    match v {
        Value::Real(x) => format_real(*x, significant),
        Value::Int(i) => i.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Str(s) => s.clone(),
        Value::Array(a) => {
            let mut s = String::from("{");
            for (i, e) in a.data.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                let _ = write!(s, "{}", to_modelica_string(e, significant));
            }
            s.push('}');
            s
        }
    }
}
