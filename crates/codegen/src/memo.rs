//! Results of the latest calls of expensive pure functions, per function.
//!
//! Media property functions are called many times with the same arguments within one
//! evaluation of the model: `density_ph(p, h)`, `temperature_ph(p, h)` and
//! `vapourQuality(...)` each solve the same equation of state for the same state, and the
//! derivative functions of the Jacobian call the primal functions again. A pure function
//! (spec 12.3: no side effects, its outputs depend on its inputs only) gives the same
//! outputs for the same inputs, so the outputs of its last few calls are kept and reused.
//! Only functions that are worth it are memoized ([`worth_memoizing`]), and only calls whose
//! arguments are scalars or short arrays of scalars; keys compare arguments bit for bit with
//! their type (and arrays with their shape).

use crate::value::Value;

/// Calls remembered per function; a small ring, compared linearly.
const ENTRIES: usize = 4;

/// One argument of a remembered call: the type and the bits of its value.
pub type KeyPart = (u8, u64);

#[derive(Clone, Debug, Default)]
struct Ring {
    entries: Vec<(Vec<KeyPart>, Vec<Value>)>,
    next: usize,
}

/// The remembered calls of every function of a program (indexed like the function table).
#[derive(Clone, Debug, Default)]
pub struct CallMemo {
    rings: Vec<Ring>,
    /// Calls of functions (memoized or not) and lookups answered, for `--stats`.
    pub calls: u64,
    pub hits: u64,
    /// Calls run by the compiled scalar form (`scalar_fn.rs`).
    pub scalar_calls: u64,
    /// Scalar calls that ran as native code (`jit.rs`).
    pub native_calls: u64,
    /// A buffer for building keys (the compiled calls build one per call; it is copied
    /// only when the call's outputs are stored).
    pub key_scratch: Vec<KeyPart>,
}

/// The key of a call, or `None` when an argument is a string or an array of more than
/// [`MAX_ARRAY_KEY`] elements. Arrays of numbers (a medium's mass fractions `X`) enter with
/// their dimensions and every element, so that `T_phX(p, h, X)` is remembered like a
/// function of scalars.
pub fn call_key(args: &[Value]) -> Option<Vec<KeyPart>> {
    let mut key = Vec::with_capacity(args.len());
    for a in args {
        push_key(a, &mut key)?;
    }
    Some(key)
}

/// Longest array argument a key holds.
const MAX_ARRAY_KEY: usize = 16;

fn push_key(a: &Value, key: &mut Vec<KeyPart>) -> Option<()> {
    match a {
        Value::Real(x) => key.push((0, x.to_bits())),
        Value::Int(i) => key.push((1, *i as u64)),
        Value::Bool(b) => key.push((2, *b as u64)),
        Value::Str(_) => return None,
        Value::Array(arr) => {
            if arr.data.len() > MAX_ARRAY_KEY {
                return None;
            }
            key.push((3, arr.dims.len() as u64));
            for &d in &arr.dims {
                key.push((4, d as u64));
            }
            for x in &arr.data {
                if matches!(x, Value::Array(_)) {
                    return None;
                }
                push_key(x, key)?;
            }
        }
    }
    Some(())
}

impl CallMemo {
    /// The outputs of an earlier call of function `f` with the same arguments.
    pub fn lookup(&self, f: u32, key: &[KeyPart]) -> Option<Vec<Value>> {
        self.lookup_ref(f, key).map(<[Value]>::to_vec)
    }

    /// [`Self::lookup`] without copying the outputs.
    pub fn lookup_ref(&self, f: u32, key: &[KeyPart]) -> Option<&[Value]> {
        let ring = self.rings.get(f as usize)?;
        ring.entries
            .iter()
            .find(|(k, _)| k.as_slice() == key)
            .map(|(_, outs)| outs.as_slice())
    }

    /// Remember the outputs of a call, replacing the oldest remembered call of `f`.
    pub fn store(&mut self, f: u32, key: Vec<KeyPart>, outs: &[Value]) {
        self.store_from(f, &key, outs.iter().cloned());
    }

    /// [`Self::store`] from a key slice and an iterator of outputs; a replaced call's
    /// storage is reused, so a full ring stores without allocating.
    pub fn store_from(&mut self, f: u32, key: &[KeyPart], outs: impl Iterator<Item = Value>) {
        let f = f as usize;
        if self.rings.len() <= f {
            self.rings.resize_with(f + 1, Ring::default);
        }
        let ring = &mut self.rings[f];
        if ring.entries.len() < ENTRIES {
            ring.entries.push((key.to_vec(), outs.collect()));
        } else {
            let (k, o) = &mut ring.entries[ring.next];
            k.clear();
            k.extend_from_slice(key);
            o.clear();
            o.extend(outs);
        }
        ring.next = (ring.next + 1) % ENTRIES;
    }
}

/// Which functions to memoize, given for each function whether it is pure by itself
/// (declared pure, a Modelica algorithm or a math-library body), whether its body is worth
/// skipping (it loops or calls other functions) and the functions it calls. A function
/// calling an impure one is impure too (directly or through a chain of calls).
pub fn worth_memoizing(own_pure: &[bool], costly: &[bool], callees: &[Vec<u32>]) -> Vec<bool> {
    let pure = pure_functions(own_pure, callees);
    pure.iter().zip(costly).map(|(p, c)| *p && *c).collect()
}

/// Which functions are pure: pure by themselves and calling only pure functions (directly
/// or through a chain of calls).
pub fn pure_functions(own_pure: &[bool], callees: &[Vec<u32>]) -> Vec<bool> {
    let mut pure = own_pure.to_vec();
    loop {
        let mut changed = false;
        for f in 0..pure.len() {
            if pure[f] && callees[f].iter().any(|&g| !pure[g as usize]) {
                pure[f] = false;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    pure
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_arguments_are_keys_with_their_shape() {
        let arr = |xs: &[f64]| {
            Value::Array(crate::value::ArrayVal {
                dims: vec![xs.len()],
                data: xs.iter().map(|&x| Value::Real(x)).collect(),
            })
        };
        let a = call_key(&[Value::Real(1e5), arr(&[0.01, 0.99])]).unwrap();
        let b = call_key(&[Value::Real(1e5), arr(&[0.01, 0.99])]).unwrap();
        let c = call_key(&[Value::Real(1e5), arr(&[0.02, 0.98])]).unwrap();
        let d = call_key(&[Value::Real(1e5), arr(&[0.01, 0.99, 0.0])]).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
        assert!(call_key(&[arr(&[0.0; 17])]).is_none());
    }

    #[test]
    fn keys_tell_types_and_values_apart() {
        let a = call_key(&[Value::Real(1.0), Value::Int(2)]).unwrap();
        let b = call_key(&[Value::Int(1), Value::Int(2)]).unwrap();
        assert_ne!(a, b);
        assert!(call_key(&[Value::Str("x".into())]).is_none());
    }

    #[test]
    fn the_ring_keeps_the_latest_calls() {
        let mut m = CallMemo::default();
        for i in 0..6 {
            let key = call_key(&[Value::Real(i as f64)]).unwrap();
            m.store(3, key, &[Value::Real(10.0 * i as f64)]);
        }
        let hit = |m: &CallMemo, x: f64| m.lookup(3, &call_key(&[Value::Real(x)]).unwrap());
        assert!(hit(&m, 0.0).is_none() && hit(&m, 1.0).is_none());
        assert!(matches!(hit(&m, 5.0).as_deref(), Some([Value::Real(y)]) if *y == 50.0));
        assert!(m
            .lookup(0, &call_key(&[Value::Real(5.0)]).unwrap())
            .is_none());
    }

    #[test]
    fn impurity_spreads_to_callers() {
        // 0 calls 1 calls 2 (impure); 3 is pure but cheap
        let memo = worth_memoizing(
            &[true, true, false, true],
            &[true, true, true, false],
            &[vec![1], vec![2], vec![], vec![]],
        );
        assert_eq!(memo, vec![false, false, false, false]);
        let memo = worth_memoizing(&[true, true], &[true, true], &[vec![1], vec![]]);
        assert_eq!(memo, vec![true, true]);
    }
}
