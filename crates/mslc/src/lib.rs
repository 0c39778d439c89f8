//! The pure functions of the MSL's C support library (`ModelicaStrings_*`), written here
//! from their documented contracts. Both translation-time evaluation (`moss-frontend`:
//! a parameter bound to `Strings.isEmpty(fileName)`) and the run time (`moss-codegen`)
//! call them, so they agree. Indices are 1-based byte positions, as in the MSL.

/// `ModelicaStrings_length`: the length in bytes.
pub fn length(text: &str) -> i64 {
    text.len() as i64
}

/// `ModelicaStrings_skipWhiteSpace`: 1-based index of the first byte at or after `start`
/// that is not white space (one past the end if there is none).
pub fn skip_white_space(bytes: &[u8], start: i64) -> i64 {
    let mut i = start.max(1);
    while let Some(b) = byte_at(bytes, i) {
        if !b.is_ascii_whitespace() {
            break;
        }
        i += 1;
    }
    i
}

/// The byte at 1-based index `i`, if there is one.
pub fn byte_at(bytes: &[u8], i: i64) -> Option<u8> {
    usize::try_from(i - 1)
        .ok()
        .and_then(|k| bytes.get(k))
        .copied()
}

/// `ModelicaStrings_substring(string, startIndex, endIndex)`: bytes `startIndex ..=
/// endIndex`, with the corrections the MSL documents (a start below 1 is 1, a negative end
/// means the start, an end past the string is its end, an empty range gives "").
pub fn substring(text: &str, start: i64, end: i64) -> String {
    let bytes = text.as_bytes();
    let len = bytes.len() as i64;
    let start = start.max(1);
    let end = if end < 0 { start } else { end }.min(len);
    if start > len || end < start {
        String::new()
    } else {
        String::from_utf8_lossy(&bytes[(start - 1) as usize..end as usize]).into_owned()
    }
}

/// `ModelicaStrings_compare(string1, string2, caseSensitive)`: the ordinal of
/// `Modelica.Utilities.Types.Compare` (1 Less, 2 Equal, 3 Greater), comparing bytes, ASCII
/// letters folded to lower case when not case sensitive.
pub fn compare(a: &str, b: &str, case_sensitive: bool) -> i64 {
    let order = if case_sensitive {
        a.as_bytes().cmp(b.as_bytes())
    } else {
        let fold = |s: &str| {
            s.bytes()
                .map(|c| c.to_ascii_lowercase())
                .collect::<Vec<u8>>()
        };
        fold(a).cmp(&fold(b))
    };
    match order {
        std::cmp::Ordering::Less => 1,
        std::cmp::Ordering::Equal => 2,
        std::cmp::Ordering::Greater => 3,
    }
}
