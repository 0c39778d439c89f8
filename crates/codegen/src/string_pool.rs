//! The values of String variables at run time.
//!
//! Model variables live in [`crate::machine::Machine::mem`], one `f64` each; a String
//! variable's slot holds a *handle*: the index of its text in the machine's [`StringPool`].
//! Texts are interned, so two handles are equal exactly when the texts are, and everything
//! that works on slots keeps working for Strings without knowing about them: `pre` values
//! and the event iteration's change test compare handles, snapshots copy them, and a slot
//! never written holds 0, the handle of the empty string. Only the function interpreter
//! (`func.rs`: algorithm sections, and the blocks `compile.rs` sends there because they
//! compute or compare Strings) turns handles into texts and back; the numeric tapes never
//! see them. Result files leave String variables out (`moss_sim::record`).
//!
//! The pool only grows: a model producing a new text at every step (`String(time)`) keeps
//! every one of them, which is bounded by the number of distinct texts it produces.

use rustc_hash::FxHashMap as HashMap;

#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct StringPool {
    texts: Vec<String>,
    /// Handle of every text; rebuilt from `texts` when missing (after deserialization).
    #[cfg_attr(feature = "serde", serde(skip))]
    index: HashMap<String, u32>,
}

impl Default for StringPool {
    fn default() -> Self {
        let mut pool = StringPool {
            texts: Vec::new(),
            index: HashMap::default(),
        };
        pool.intern("");
        pool
    }
}

impl StringPool {
    /// The handle of `text`, added to the pool when new.
    pub fn intern(&mut self, text: &str) -> f64 {
        if self.index.len() != self.texts.len() {
            self.index = self
                .texts
                .iter()
                .enumerate()
                .map(|(i, t)| (t.clone(), i as u32))
                .collect();
        }
        if let Some(&h) = self.index.get(text) {
            return h as f64;
        }
        let h = self.texts.len() as u32;
        self.texts.push(text.to_string());
        self.index.insert(text.to_string(), h);
        h as f64
    }

    /// The text of a handle; a value that is no handle (never the case for a slot written
    /// through the interpreter) reads as the empty string.
    pub fn text(&self, handle: f64) -> &str {
        if handle >= 0.0 && handle.fract() == 0.0 {
            if let Some(t) = self.texts.get(handle as usize) {
                return t;
            }
        }
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::StringPool;

    #[test]
    fn equal_texts_share_a_handle_and_zero_is_empty() {
        let mut p = StringPool::default();
        assert_eq!(p.text(0.0), "");
        let a = p.intern("abc");
        assert_eq!(p.intern("abc"), a);
        assert_ne!(p.intern("abd"), a);
        assert_eq!(p.text(a), "abc");
        assert_eq!(p.text(-1.0), "");
    }
}
