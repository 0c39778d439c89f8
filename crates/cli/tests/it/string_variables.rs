//! String variables at run time (their slots hold handles into the machine's string pool,
//! `moss_codegen`'s `string_pool.rs`): discrete Strings assigned at events, `String(x,
//! <options>)` conversions with named options (spec 3.7.1), `String(e)` of an enumeration
//! variable, String comparisons driving numeric variables and asserts. Result files leave
//! String variables out, so the checks read numeric variables computed from them.

use crate::library_support;

use library_support::{assert_close, moss_command, scratch_dir, simulate_source};

/// A String rebuilt at every sample from a counter; `hit` is 1 while it reads "n=3".
const COUNTER_TEXT: &str = r#"
model CounterText
  type Colour = enumeration(red, green, blue);
  Integer n(start = 0, fixed = true);
  discrete String s(start = "none", fixed = true);
  Colour c(start = Colour.red, fixed = true);
  Real hit = if s == "n=3" then 1 else 0;
  Real blue = if String(c) == "blue" then 1 else 0;
  String padded = String(n, minimumLength = 4, leftJustified = false);
  Real paddedOk = if padded == "   " + String(n) then 1 else 0;
  String fixedPoint = String(2.5 + n, format = "6.2f");
  // "  2.50" against "2.5" (%g drops the trailing zero) padded by hand
  // folded at translation time: 6 significant digits, as at run time
  Real piOk = if String(3.14159265) == "3.14159" and String(-1.5e-7) == "-1.5e-07" then 1 else 0;
  Real formatOk = if fixedPoint == "  " + String(2.5 + n, significantDigits = 3) + "0" then 1 else 0;
equation
  when sample(0.1, 0.1) then
    n = pre(n) + 1;
    s = "n=" + String(n);
    c = if n >= 2 then Colour.blue else Colour.green;
  end when;
  annotation(experiment(StopTime = 0.55));
end CounterText;
"#;

#[test]
fn discrete_strings_change_at_events_and_drive_numbers() {
    let r = simulate_source("CounterText", COUNTER_TEXT, &[]);
    // n = 3 from t = 0.3 to 0.4
    assert_close("hit before n = 3", r.at("hit", 0.25), 0.0, 0.0);
    assert_close("hit while s = \"n=3\"", r.at("hit", 0.35), 1.0, 0.0);
    assert_close("hit after n = 3", r.at("hit", 0.45), 0.0, 0.0);
    assert_close("green after the first sample", r.at("blue", 0.15), 0.0, 0.0);
    assert_close("blue from the second sample", r.at("blue", 0.25), 1.0, 0.0);
    // n < 10: one digit right-justified in 4 characters; "2.50" ... "7.50" in 6.2f
    assert_close("String of a Real literal", r.at("piOk", 0.3), 1.0, 0.0);
    for t in [0.05, 0.25, 0.52] {
        assert_close("minimumLength/leftJustified", r.at("paddedOk", t), 1.0, 0.0);
        assert_close("format = \"6.2f\"", r.at("formatOk", t), 1.0, 0.0);
    }
}

/// A failed assert whose condition compares Strings stops the run with its message.
#[test]
fn an_assert_comparing_strings_fails_with_its_message() {
    let source = r#"
model StringAssert
  discrete String s(start = "a", fixed = true);
equation
  when time > 0.2 then
    s = "b";
  end when;
  assert(s == "a", "s changed to " + s);
  annotation(experiment(StopTime = 0.5));
end StringAssert;
"#;
    let dir = scratch_dir("StringAssert");
    let file = dir.join("StringAssert.mo");
    std::fs::write(&file, source).unwrap();
    let out = moss_command()
        .current_dir(&dir)
        .arg("simulate")
        .arg(&file)
        .arg("-o")
        .arg(dir.join("r.csv"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the assert must fail:\n{stderr}");
    assert!(
        stderr.contains("assertion failed: s changed to b"),
        "message: {stderr}"
    );
}

/// `String(r)` of an operator record calls the record's `'String'` (spec 14.4).
#[test]
fn string_of_an_operator_record_calls_its_string_operator() {
    let source = r#"
model RecordText
  operator record Pair
    Integer a;
    Integer b;
    operator function 'String'
      input Pair p;
      output String s;
    algorithm
      s := "(" + String(p.a) + ", " + String(p.b) + ")";
    end 'String';
  end Pair;
  Pair p = Pair(if time > 0.5 then 1 else 0, 2);
  Real ok = if String(p) == (if time > 0.5 then "(1, 2)" else "(0, 2)") then 1 else 0;
  annotation(experiment(StopTime = 1));
end RecordText;
"#;
    let r = simulate_source("RecordText", source, &[]);
    for t in [0.25, 0.75] {
        assert_close("String(p) through 'String'", r.at("ok", t), 1.0, 0.0);
    }
}

/// `format` cannot be combined with the other options (spec 3.7.1): a located error.
#[test]
fn format_with_other_string_options_is_rejected() {
    let source = r#"
model BadFormat
  String s = String(time, format = "6.2f", minimumLength = 3);
end BadFormat;
"#;
    let dir = scratch_dir("BadFormat");
    let file = dir.join("BadFormat.mo");
    std::fs::write(&file, source).unwrap();
    let out = moss_command().arg("check").arg(&file).output().unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        text.contains("`format` cannot be combined with the other options of `String`"),
        "{text}"
    );
    assert!(text.contains("BadFormat.mo:3:14"), "{text}");
}
