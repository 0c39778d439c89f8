//! No model may make the frontend panic: a few small models are mutated deterministically at
//! the level of tokens (deleted, duplicated, swapped, replaced by keywords, operators or
//! extreme numbers) and of lines, and every variant goes through instantiation, flattening
//! and the type checker as `moss check FILE.mo` does. Errors are fine; a panic fails the
//! test (the fuzz target `check` in fuzz/ does the same at a larger scale, see
//! docs/fuzzing.md).

use crate::common;

/// Small models covering the frontend's main paths: components with modifiers and
/// inheritance, connectors and connect equations, arrays and for-loops, functions and
/// algorithms, when-equations and records.
const MODELS: &[&str] = &[
    "model A\n  parameter Real k(min = 0) = 2;\n  Real x(start = 1, fixed = true);\n  Real y[3];\nequation\n  der(x) = -k * x;\n  for i in 1:3 loop\n    y[i] = i * x;\n  end for;\nend A;\n",
    "connector Pin\n  Real v;\n  flow Real i;\nend Pin;\nmodel R\n  Pin p, n;\n  parameter Real r = 1;\nequation\n  p.v - n.v = r * p.i;\n  p.i + n.i = 0;\nend R;\nmodel C\n  R r1(r = 2), r2;\nequation\n  connect(r1.n, r2.p);\n  connect(r2.n, r1.p);\n  r1.p.v = 0;\nend C;\n",
    "function f\n  input Real u;\n  input Integer n = 2;\n  output Real y;\nalgorithm\n  y := 0;\n  for i in 1:n loop\n    y := y + u ^ i;\n  end for;\nend f;\nmodel F\n  Real z = f(time, n = 3);\n  discrete Integer c(start = 0);\nequation\n  when sample(0, 0.1) then\n    c = pre(c) + 1;\n  end when;\nend F;\n",
    "record P\n  Real a = 1;\n  Real b[2] = {1, 2};\nend P;\npartial model Base\n  replaceable parameter P p;\n  Real x;\nend Base;\nmodel E\n  extends Base(p(a = 3));\n  type Mode = enumeration(off, on);\n  parameter Mode m = Mode.on;\nequation\n  x = if m == Mode.on then p.a + sum(p.b) else 0;\nend E;\n",
];

/// Tokens worth putting somewhere else: keywords, operators, extreme numbers, builtins.
const INSERTS: &[&str] = &[
    "parameter",
    "constant",
    "discrete",
    "flow",
    "stream",
    "input",
    "output",
    "inner",
    "outer",
    "replaceable",
    "redeclare",
    "final",
    "each",
    "extends",
    "der",
    "pre",
    "edge",
    "sample",
    "initial",
    "size",
    "end",
    "for",
    "loop",
    "if",
    "then",
    "else",
    "when",
    "connect",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ";",
    ",",
    ".",
    ":",
    "=",
    ":=",
    "+",
    "-",
    "*",
    "/",
    "^",
    "0",
    "-1",
    "1e308",
    "2147483647",
    "9999999999",
    "1.5",
    "true",
    "\"s\"",
    "Real",
    "Integer",
    "Boolean",
    "String",
    "time",
    "x",
    "p",
];

/// Simple deterministic generator (xorshift), so failures are reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Split into tokens: identifiers/numbers, single punctuation characters, whitespace runs.
fn tokens(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    for ch in text.chars() {
        let word = ch.is_alphanumeric() || ch == '_';
        let cur_word = cur
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        let cur_space = cur.chars().next().is_some_and(char::is_whitespace);
        // A token continues while word characters follow word characters, or whitespace
        // follows whitespace.
        let continues = (word && cur_word) || (ch.is_whitespace() && cur_space);
        if !cur.is_empty() && !continues {
            out.push(std::mem::take(&mut cur));
        }
        cur.push(ch);
    }
    out.push(cur);
    out
}

/// One to three token edits.
fn mutate(rng: &mut Rng, toks: &[String]) -> String {
    let mut t = toks.to_vec();
    for _ in 0..=rng.below(3) {
        let at = rng.below(t.len());
        match rng.below(5) {
            0 => {
                let end = (at + 1 + rng.below(4)).min(t.len());
                t.drain(at..end);
            }
            1 => t.insert(at, format!(" {} ", INSERTS[rng.below(INSERTS.len())])),
            2 => t[at] = INSERTS[rng.below(INSERTS.len())].to_string(),
            3 => {
                let other = rng.below(t.len());
                t.swap(at, other);
            }
            _ => {
                let end = (at + rng.below(12)).min(t.len());
                let chunk = t[at..end].to_vec();
                t.splice(end..end, chunk);
            }
        }
        if t.is_empty() {
            t.push(String::new());
        }
    }
    t.concat()
}

#[test]
fn mutated_models_do_not_panic_the_frontend() {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let mut rejected = 0;
    let mut total = 0;
    for (k, model) in MODELS.iter().enumerate() {
        assert!(
            common::flat_text(&format!("Seed{k}"), model).is_ok(),
            "seed {k} must be legal"
        );
        let toks = tokens(model);
        for n in 0..150 {
            let text = mutate(&mut rng, &toks);
            let r = std::panic::catch_unwind(|| common::flat_text(&format!("Mut{k}_{n}"), &text));
            match r {
                Ok(Ok(flat)) => {
                    let _ = moss_frontend::stats::stats(&flat);
                }
                Ok(Err(_)) => rejected += 1,
                Err(_) => panic!("the frontend panicked on:\n{text}"),
            }
            total += 1;
        }
    }
    // The mutations must exercise the error paths, not only produce legal variants.
    assert!(rejected * 4 > total, "{rejected} of {total} rejected");
}
