//! LAPACK routines that the MSL calls through `external "FORTRAN 77"` and that moss runs
//! natively (`Modelica.Math.Matrices.LAPACK`). The numerical kernels are
//! `moss_frontend::lapack`, shared with translation-time evaluation; this module converts
//! the interpreter's values to their flattened form and back.

use crate::native::NativeResult;
use crate::value::{ArrayVal, VResult, Value};

/// Run the LAPACK routine `name` (one `native_function` accepted) on evaluated arguments.
pub fn call(name: &str, args: &[Value]) -> VResult<NativeResult> {
    let flat: Vec<Vec<f64>> = args
        .iter()
        .map(|a| match a {
            // a character argument (`dgetrs("N", ...)`) by its character code
            Value::Str(s) => Ok(vec![s.bytes().next().map_or(0.0, f64::from)]),
            _ => a
                .flatten()
                .iter()
                .map(Value::as_f64)
                .collect::<VResult<_>>(),
        })
        .collect::<VResult<_>>()?;
    let written = moss_frontend::lapack::call(name, &flat)
        .ok_or_else(|| format!("LAPACK routine `{name}` has no native implementation"))??;
    let written = written
        .into_iter()
        .map(|(pos, data)| {
            let like = args.get(pos).unwrap_or(&Value::Real(0.0));
            (pos, shaped_like(like, data))
        })
        .collect();
    Ok(NativeResult {
        returned: None,
        written,
    })
}

/// `data` in the shape of the argument `like`, Integer elements where it had Integers
/// (`ipiv`, `info`).
fn shaped_like(like: &Value, data: Vec<f64>) -> Value {
    let elem = |proto: &Value, x: f64| match proto {
        Value::Int(_) => Value::Int(x.round() as i64),
        _ => Value::Real(x),
    };
    match like {
        Value::Array(arr) => {
            let proto = arr.data.first().cloned().unwrap_or(Value::Real(0.0));
            let data = data.into_iter().map(|x| elem(&proto, x)).collect();
            Value::Array(ArrayVal::new(arr.dims.clone(), data))
        }
        scalar => elem(scalar, data.first().copied().unwrap_or(0.0)),
    }
}
