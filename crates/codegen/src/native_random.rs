//! The random number generators of the MSL's C support library (`ModelicaRandom`), run
//! natively with bit-identical sequences: xorshift64*, xorshift128+ and xorshift1024*
//! (S. Vigna's generators, state passed as 32-bit Integer vectors in little-endian word
//! order, the result mapped to (0, 1] by `int64 * 2^-64 + 0.5`), the impure generator's
//! global xorshift1024* state, the automatic global seed, `convertRealToIntegers`, and
//! `ModelicaStrings_hashString` (the "AP" string hash the MSL uses for local seeds).
//! The algorithms are public (the generators are public domain); the code is written here.

use crate::native::NativeResult;
use crate::value::{VResult, Value};
use std::cell::RefCell;

/// 2^-64: turns a signed 64-bit integer into a double in (-0.5, 0.5).
const INV_2_64: f64 = 5.421_010_862_427_522e-20;

/// The MSL's map from a 64-bit generator output to a double in (0, 1].
fn to_unit(x: u64) -> f64 {
    (x as i64) as f64 * INV_2_64 + 0.5
}

/// 32-bit Integer words (low word first, as the C union on little-endian machines) to
/// 64-bit state words.
fn words_to_u64(words: &[i64]) -> Vec<u64> {
    words
        .chunks(2)
        .map(|w| {
            let lo = w[0] as i32 as u32 as u64;
            let hi = w.get(1).copied().unwrap_or(0) as i32 as u32 as u64;
            lo | (hi << 32)
        })
        .collect()
}

fn u64_to_words(s: &[u64]) -> Vec<i64> {
    s.iter()
        .flat_map(|&x| [(x as u32) as i32 as i64, ((x >> 32) as u32) as i32 as i64])
        .collect()
}

pub fn xorshift64star_step(state: u64) -> (u64, f64) {
    let mut x = state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    let x = x.wrapping_mul(2_685_821_657_736_338_717);
    (x, to_unit(x))
}

pub fn xorshift128plus_step(s: [u64; 2]) -> ([u64; 2], f64) {
    let mut s1 = s[0];
    let s0 = s[1];
    s1 ^= s1 << 23;
    let next = (s1 ^ s0 ^ (s1 >> 17) ^ (s0 >> 26)).wrapping_add(s0);
    ([s0, next], to_unit(next))
}

/// One step of xorshift1024* on the 16-word state with index `p`.
pub fn xorshift1024star_step(s: &mut [u64; 16], p: &mut i64) -> f64 {
    *p &= 15;
    let s0 = s[*p as usize];
    *p = (*p + 1) & 15;
    let mut s1 = s[*p as usize];
    s1 ^= s1 << 31;
    s1 ^= s1 >> 11;
    let s0 = s0 ^ (s0 >> 30);
    s[*p as usize] = s0 ^ s1;
    to_unit(s[*p as usize].wrapping_mul(1_181_783_497_276_652_981))
}

fn int_vector(v: &Value, what: &str, len: usize) -> VResult<Vec<i64>> {
    let items = v.flatten();
    if items.len() < len {
        return Err(format!(
            "{what} must have at least {len} elements, has {}",
            items.len()
        ));
    }
    items.iter().map(Value::as_i64).collect()
}

fn int_values(words: Vec<i64>) -> Value {
    Value::vector(words.into_iter().map(Value::Int).collect())
}

fn arg<'a>(args: &'a [Value], i: usize, what: &str) -> VResult<&'a Value> {
    args.get(i)
        .ok_or_else(|| format!("missing argument {} ({what})", i + 1))
}

/// `ModelicaRandom_xorshift64star(stateIn, stateOut, y)`.
pub fn xorshift64star(args: &[Value]) -> VResult<NativeResult> {
    let words = int_vector(arg(args, 0, "stateIn")?, "the state", 2)?;
    let (x, y) = xorshift64star_step(words_to_u64(&words[..2])[0]);
    Ok(NativeResult {
        returned: None,
        written: vec![(1, int_values(u64_to_words(&[x]))), (2, Value::Real(y))],
    })
}

/// `ModelicaRandom_xorshift128plus(stateIn, stateOut, y)`.
pub fn xorshift128plus(args: &[Value]) -> VResult<NativeResult> {
    let words = int_vector(arg(args, 0, "stateIn")?, "the state", 4)?;
    let s = words_to_u64(&words[..4]);
    let (next, y) = xorshift128plus_step([s[0], s[1]]);
    Ok(NativeResult {
        returned: None,
        written: vec![(1, int_values(u64_to_words(&next))), (2, Value::Real(y))],
    })
}

fn state1024(words: &[i64]) -> ([u64; 16], i64) {
    let mut s = [0u64; 16];
    s.copy_from_slice(&words_to_u64(&words[..32]));
    (s, words[32])
}

/// `ModelicaRandom_xorshift1024star(stateIn, stateOut, y)`: 32 state words and the index.
pub fn xorshift1024star(args: &[Value]) -> VResult<NativeResult> {
    let words = int_vector(arg(args, 0, "stateIn")?, "the state", 33)?;
    let (mut s, mut p) = state1024(&words);
    let y = xorshift1024star_step(&mut s, &mut p);
    let mut out = u64_to_words(&s);
    out.push(p);
    Ok(NativeResult {
        returned: None,
        written: vec![(1, int_values(out)), (2, Value::Real(y))],
    })
}

/// The impure generator's state: per thread, so parallel simulations (sweeps) do not draw
/// from each other's sequences.
struct ImpureState {
    s: [u64; 16],
    p: i64,
    id: i64,
}

thread_local! {
    static IMPURE: RefCell<ImpureState> = const {
        RefCell::new(ImpureState { s: [0; 16], p: 0, id: 0 })
    };
}

/// `ModelicaRandom_setInternalState_xorshift1024star(state, nState, id)`.
pub fn set_internal_state(args: &[Value]) -> VResult<NativeResult> {
    let words = int_vector(arg(args, 0, "state")?, "the state", 33)?;
    let id = arg(args, 2, "id")?.as_i64()?;
    let (s, p) = state1024(&words);
    IMPURE.with(|st| *st.borrow_mut() = ImpureState { s, p, id });
    Ok(NativeResult {
        returned: None,
        written: vec![],
    })
}

/// `y = ModelicaRandom_impureRandom_xorshift1024star(id)`.
pub fn impure_random(args: &[Value]) -> VResult<NativeResult> {
    let id = arg(args, 0, "id")?.as_i64()?;
    IMPURE.with(|st| {
        let mut st = st.borrow_mut();
        if st.id != id {
            return Err(
                "impureRandom was called before initializeImpureRandom set up its state"
                    .to_string(),
            );
        }
        let st = &mut *st;
        let y = xorshift1024star_step(&mut st.s, &mut st.p);
        Ok(NativeResult {
            returned: Some(Value::Real(y)),
            written: vec![],
        })
    })
}

/// `seed = ModelicaRandom_automaticGlobalSeed(dummy)`: from the wall clock and the process
/// id, as the MSL does (so it differs between runs by design).
pub fn automatic_global_seed() -> VResult<NativeResult> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let ms_of_day = (now.as_millis() % 86_400_000) as i64;
    let pid = std::process::id() as i64;
    let seed = (1 + ms_of_day + 6007 * pid) as i32 as i64;
    Ok(NativeResult {
        returned: Some(Value::Int(seed)),
        written: vec![],
    })
}

/// `ModelicaRandom_convertRealToIntegers(d, i)`: the two 32-bit halves of the double.
pub fn convert_real_to_integers(args: &[Value]) -> VResult<NativeResult> {
    let d = arg(args, 0, "d")?.as_f64()?;
    Ok(NativeResult {
        returned: None,
        written: vec![(1, int_values(u64_to_words(&[d.to_bits()])))],
    })
}

/// `ModelicaStrings_hashString(string)`: the "AP" hash over the bytes, as a signed 32-bit
/// Integer.
pub fn hash_string(text: &str) -> i64 {
    let mut h: u32 = 0xAAAA_AAAA;
    for (i, &b) in text.as_bytes().iter().enumerate() {
        let b = b as u32;
        h ^= if i & 1 == 0 {
            (h << 7) ^ b.wrapping_mul(h >> 3)
        } else {
            !((h << 11).wrapping_add(b ^ (h >> 5)))
        };
    }
    h as i32 as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Words round-trip, low word first, negative 32-bit words kept.
    #[test]
    fn state_words_round_trip() {
        let words = vec![-1, 2, 123_456_789, -987_654_321];
        assert_eq!(u64_to_words(&words_to_u64(&words)), words);
        assert_eq!(words_to_u64(&[1, 0]), vec![1]);
        assert_eq!(words_to_u64(&[0, 1]), vec![1 << 32]);
    }

    /// The xorshift64* step of state 1: by hand, x = 1 ^ (1 << 25) = 33554433, then
    /// x ^= x >> 27 leaves it (33554433 >> 27 = 0), times the multiplier.
    #[test]
    fn xorshift64star_first_step_by_hand() {
        let (x, y) = xorshift64star_step(1);
        let expected = 33_554_433u64.wrapping_mul(2_685_821_657_736_338_717);
        assert_eq!(x, expected);
        assert!(y > 0.0 && y <= 1.0);
        assert_eq!(y, (expected as i64) as f64 * INV_2_64 + 0.5);
    }

    /// Outputs stay in (0, 1] and the generators do not get stuck.
    #[test]
    fn generators_produce_unit_interval_values() {
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        let mut s2 = [1u64, 2];
        let mut s16 = [0u64; 16];
        for (i, w) in s16.iter_mut().enumerate() {
            *w = (i as u64 + 1) * 0x0123_4567_89AB_CDEF;
        }
        let mut p = 0;
        let mut seen = std::collections::HashSet::new();
        for _ in 0..1000 {
            let (x, y) = xorshift64star_step(s);
            s = x;
            let (n, y2) = xorshift128plus_step(s2);
            s2 = n;
            let y3 = xorshift1024star_step(&mut s16, &mut p);
            for v in [y, y2, y3] {
                assert!(v > 0.0 && v <= 1.0, "{v}");
            }
            seen.insert(y.to_bits());
        }
        assert_eq!(seen.len(), 1000);
    }

    #[test]
    fn hash_of_empty_string_is_the_initial_value() {
        assert_eq!(hash_string(""), 0xAAAA_AAAAu32 as i32 as i64);
        assert_ne!(hash_string("a"), hash_string("b"));
    }
}
