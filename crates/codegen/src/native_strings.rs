//! The scanning and comparison functions of `ModelicaStrings` (the MSL's
//! `Modelica.Utilities.Strings.Advanced` and `Strings.compare`), executed natively. Indices
//! are 1-based byte positions, as in the MSL; every scanner first skips white space and, when
//! it finds no token, returns `nextIndex = startIndex` with a zero or empty value.

use crate::native::{arg, int_arg, string_arg, NativeResult};
use crate::value::{VResult, Value};

pub(crate) use moss_mslc::{byte_at, skip_white_space};

/// Index after a run of ASCII digits starting at `i`.
fn skip_digits(bytes: &[u8], mut i: i64) -> i64 {
    while byte_at(bytes, i).is_some_and(|b| b.is_ascii_digit()) {
        i += 1;
    }
    i
}

/// The text and the scan's inputs shared by the number scanners.
fn scan_inputs(args: &[Value]) -> VResult<(String, i64, bool)> {
    let text = string_arg(args, 0, "string")?;
    let start = int_arg(args, 1, "startIndex")?;
    let unsigned = arg(args, 2, "unsigned")?.as_bool()?;
    Ok((text, start, unsigned))
}

/// Index after an optional sign at `i` (none when `unsigned`), and whether it was `-`.
fn skip_sign(bytes: &[u8], i: i64, unsigned: bool) -> (i64, bool) {
    match byte_at(bytes, i) {
        Some(s @ (b'+' | b'-')) if !unsigned => (i + 1, s == b'-'),
        _ => (i, false),
    }
}

/// `ModelicaStrings_scanInteger(string, startIndex, unsigned, nextIndex, number)`: after
/// white space, an optionally signed run of digits not continued as a Real number.
pub(crate) fn scan_integer(args: &[Value]) -> VResult<NativeResult> {
    let (text, start, unsigned) = scan_inputs(args)?;
    let bytes = text.as_bytes();
    let (first_digit, negative) = skip_sign(bytes, skip_white_space(bytes, start), unsigned);
    let end = skip_digits(bytes, first_digit);
    // no digits, or the digits begin a Real number ("123.4", "1e3"): no Integer here
    let found = end > first_digit && !matches!(byte_at(bytes, end), Some(b'.' | b'e' | b'E'));
    let (next, number) = if found {
        let value = digits_value(&bytes[(first_digit - 1) as usize..(end - 1) as usize]);
        (end, if negative { -value } else { value })
    } else {
        (start, 0)
    };
    Ok(NativeResult {
        returned: None,
        written: vec![(3, Value::Int(next)), (4, Value::Int(number))],
    })
}

fn digits_value(digits: &[u8]) -> i64 {
    digits.iter().fold(0i64, |v, d| {
        v.saturating_mul(10).saturating_add(i64::from(d - b'0'))
    })
}

/// `ModelicaStrings_scanReal(string, startIndex, unsigned, nextIndex, number)`: after white
/// space, a number of the Modelica grammar `[sign] digits [. [digits]] [(e|E) [sign] digits]`.
/// An exponent marker without digits after it is not part of the number.
pub(crate) fn scan_real(args: &[Value]) -> VResult<NativeResult> {
    let (text, start, unsigned) = scan_inputs(args)?;
    let bytes = text.as_bytes();
    let begin = skip_white_space(bytes, start);
    let (first_digit, _) = skip_sign(bytes, begin, unsigned);
    let mut end = skip_digits(bytes, first_digit);
    let found = end > first_digit;
    if found && byte_at(bytes, end) == Some(b'.') {
        end = skip_digits(bytes, end + 1);
    }
    if found && matches!(byte_at(bytes, end), Some(b'e' | b'E')) {
        let (exponent, _) = skip_sign(bytes, end + 1, false);
        let after = skip_digits(bytes, exponent);
        if after > exponent {
            end = after;
        }
    }
    let parsed = found
        .then(|| std::str::from_utf8(&bytes[(begin - 1) as usize..(end - 1) as usize]).ok())
        .flatten()
        .and_then(|s| s.parse::<f64>().ok());
    let (next, number) = match parsed {
        Some(x) => (end, x),
        None => (start, 0.0),
    };
    Ok(NativeResult {
        returned: None,
        written: vec![(3, Value::Int(next)), (4, Value::Real(number))],
    })
}

/// `ModelicaStrings_scanString(string, startIndex, nextIndex, string2)`: after white space,
/// a string literal in double quotes; its value has the escape sequences of the Modelica
/// grammar (`\"`, `\\`, `\n`, ...) replaced by the characters they stand for.
pub(crate) fn scan_string(args: &[Value]) -> VResult<NativeResult> {
    let text = string_arg(args, 0, "string")?;
    let start = int_arg(args, 1, "startIndex")?;
    let bytes = text.as_bytes();
    let open = skip_white_space(bytes, start);
    let mut value = Vec::new();
    let mut i = open + 1;
    let mut closed = None;
    if byte_at(bytes, open) == Some(b'"') {
        while let Some(b) = byte_at(bytes, i) {
            match b {
                b'"' => {
                    closed = Some(i + 1);
                    break;
                }
                b'\\' => {
                    let Some(e) = byte_at(bytes, i + 1) else {
                        break;
                    };
                    value.push(unescape(e));
                    i += 2;
                }
                _ => {
                    value.push(b);
                    i += 1;
                }
            }
        }
    }
    let (next, token) = match closed {
        Some(next) => (next, String::from_utf8_lossy(&value).into_owned()),
        None => (start, String::new()),
    };
    Ok(NativeResult {
        returned: None,
        written: vec![(2, Value::Int(next)), (3, Value::Str(token))],
    })
}

/// The character an escape sequence `\e` of a Modelica string stands for.
fn unescape(e: u8) -> u8 {
    match e {
        b'a' => 0x07,
        b'b' => 0x08,
        b'f' => 0x0c,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'v' => 0x0b,
        // \" \' \? \\ stand for themselves
        other => other,
    }
}

/// `ModelicaStrings_scanIdentifier(string, startIndex, nextIndex, identifier)`: after white
/// space, a letter followed by letters, digits and underscores.
pub(crate) fn scan_identifier(args: &[Value]) -> VResult<NativeResult> {
    let text = string_arg(args, 0, "string")?;
    let start = int_arg(args, 1, "startIndex")?;
    let bytes = text.as_bytes();
    let first = skip_white_space(bytes, start);
    let (next, token) = if byte_at(bytes, first).is_some_and(|b| b.is_ascii_alphabetic()) {
        let mut end = first + 1;
        while byte_at(bytes, end).is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_') {
            end += 1;
        }
        let token = &bytes[(first - 1) as usize..(end - 1) as usize];
        (end, String::from_utf8_lossy(token).into_owned())
    } else {
        (start, String::new())
    };
    Ok(NativeResult {
        returned: None,
        written: vec![(2, Value::Int(next)), (3, Value::Str(token))],
    })
}

/// `result = ModelicaStrings_compare(string1, string2, caseSensitive)` (see `moss_mslc`).
pub(crate) fn compare(args: &[Value]) -> VResult<NativeResult> {
    let a = string_arg(args, 0, "string1")?;
    let b = string_arg(args, 1, "string2")?;
    let case_sensitive = arg(args, 2, "caseSensitive")?.as_bool()?;
    Ok(NativeResult {
        returned: Some(Value::Int(moss_mslc::compare(&a, &b, case_sensitive))),
        written: vec![],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Value {
        Value::Str(s.to_string())
    }

    fn written(r: NativeResult) -> Vec<Value> {
        r.written.into_iter().map(|(_, v)| v).collect()
    }

    fn integer(s: &str, start: i64, unsigned: bool) -> Vec<Value> {
        let args = [text(s), Value::Int(start), Value::Bool(unsigned)];
        written(scan_integer(&args).expect("runs"))
    }

    fn real(s: &str, start: i64, unsigned: bool) -> Vec<Value> {
        let args = [text(s), Value::Int(start), Value::Bool(unsigned)];
        written(scan_real(&args).expect("runs"))
    }

    #[test]
    fn scan_integer_reads_signed_digits_after_white_space() {
        // "1 0 1": bits at odd positions, as the memory files of the digital library
        assert_eq!(integer("1 0 1", 3, false), [Value::Int(4), Value::Int(0)]);
        assert_eq!(
            integer("  -42x", 1, false),
            [Value::Int(6), Value::Int(-42)]
        );
        // a sign where none is allowed, a Real number, no digits: nothing found
        assert_eq!(integer("-42", 1, true), [Value::Int(1), Value::Int(0)]);
        assert_eq!(integer(" 12.5", 1, false), [Value::Int(1), Value::Int(0)]);
        assert_eq!(integer("   ", 2, false), [Value::Int(2), Value::Int(0)]);
    }

    #[test]
    fn scan_real_follows_the_modelica_number_grammar() {
        assert_eq!(real(" = 2.5;", 4, false), [Value::Int(7), Value::Real(2.5)]);
        assert_eq!(
            real("-1.5e-3x", 1, false),
            [Value::Int(8), Value::Real(-1.5e-3)]
        );
        assert_eq!(real("7.", 1, false), [Value::Int(3), Value::Real(7.0)]);
        assert_eq!(real("12E2", 1, false), [Value::Int(5), Value::Real(1200.0)]);
        // an exponent marker without digits ends the number before it
        assert_eq!(real("3e+", 1, false), [Value::Int(2), Value::Real(3.0)]);
        // no digit before the point, a sign where none is allowed, nothing: not found
        assert_eq!(real(" .5", 1, false), [Value::Int(1), Value::Real(0.0)]);
        assert_eq!(real("+1", 1, true), [Value::Int(1), Value::Real(0.0)]);
        assert_eq!(real("", 1, false), [Value::Int(1), Value::Real(0.0)]);
    }

    #[test]
    fn scan_string_reads_a_quoted_literal_with_escapes() {
        let scan = |s: &str, start: i64| {
            written(scan_string(&[text(s), Value::Int(start)]).expect("runs"))
        };
        assert_eq!(scan(r#"  "ab" x"#, 1), [Value::Int(7), text("ab")]);
        assert_eq!(scan(r#""a\"b\n""#, 1), [Value::Int(9), text("a\"b\n")]);
        // unterminated, or no quote at all
        assert_eq!(scan(r#" "ab"#, 1), [Value::Int(1), text("")]);
        assert_eq!(scan("ab", 1), [Value::Int(1), text("")]);
    }

    #[test]
    fn scan_identifier_reads_a_letter_then_letters_digits_underscores() {
        let scan = |s: &str, start: i64| {
            written(scan_identifier(&[text(s), Value::Int(start)]).expect("runs"))
        };
        assert_eq!(
            scan("  phi_rel0 = 1", 1),
            [Value::Int(11), text("phi_rel0")]
        );
        assert_eq!(scan("J=2", 1), [Value::Int(2), text("J")]);
        assert_eq!(scan(" 1x", 1), [Value::Int(1), text("")]);
        assert_eq!(scan("_x", 1), [Value::Int(1), text("")]);
    }

    #[test]
    fn compare_orders_bytes_with_optional_case_folding() {
        let cmp = |a: &str, b: &str, case: bool| {
            compare(&[text(a), text(b), Value::Bool(case)])
                .expect("runs")
                .returned
        };
        assert_eq!(cmp("abc", "abd", true), Some(Value::Int(1)));
        assert_eq!(cmp("abc", "abc", true), Some(Value::Int(2)));
        assert_eq!(cmp("b", "abc", true), Some(Value::Int(3)));
        assert_eq!(cmp("ABC", "abc", true), Some(Value::Int(1)));
        assert_eq!(cmp("ABC", "abc", false), Some(Value::Int(2)));
    }
}
