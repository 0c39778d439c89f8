//! Functions made of scalars run in their compiled form (`codegen/src/scalar_fn.rs`); the
//! tree interpreter (`MOSS_TREE_FUNCTIONS=1`) must give the same results bit for bit, and
//! both must match the values computed by hand.
//!
//! The functions cover what the compiled form handles: loops over constant tables, `while`
//! with an Integer counter and a Boolean flag, `for` with a step and `break`, defaults of
//! inputs, tuple calls, Integer built-ins, `if` expressions, and a call with an array
//! argument (a table row), which the compiled caller hands to the tree interpreter.

use crate::library_support;

use library_support::{moss_command, scratch_dir};

const SOURCE: &str = r#"
function horner "polynomial 1*x^3 - 2*x^2 + 0.5*x + 3 over a constant table"
  input Real x;
  output Real y;
protected
  Real c[4] = {1.0, -2.0, 0.5, 3.0};
algorithm
  y := 0;
  for i in 1:4 loop
    y := y*x + c[i];
  end for;
end horner;

function newtonSqrt "square root by Newton's method"
  input Real a;
  input Real tol = 1e-15;
  output Real r;
  output Integer iterations;
protected
  Boolean done = false;
algorithm
  r := max(a, 1);
  iterations := 0;
  while not done and iterations < 100 loop
    r := 0.5*(r + a/r);
    iterations := iterations + 1;
    done := abs(r*r - a) <= tol*a;
  end while;
end newtonSqrt;

function sumOdd "sum of the odd numbers up to n"
  input Integer n;
  output Integer s;
algorithm
  s := 0;
  for k in 1:2:1000 loop
    if k > n then
      break;
    end if;
    s := s + k;
  end for;
end sumOdd;

function combine
  input Real x;
  output Real y;
protected
  Real r;
  Integer it;
algorithm
  (r, it) := newtonSqrt(x);
  y := r + horner(x) + sumOdd(integer(x)) + div(7, 2) + mod(-7, 3)
    + (if x > 2 then 100 else 0);
end combine;

function line "a straight line from a row of coefficients"
  input Real x;
  input Real coefs[2];
  output Real y;
algorithm
  y := coefs[1] + x*coefs[2];
end line;

function tableLine
  input Real x;
  input Integer row;
  output Real y;
protected
  Real tab[2, 2] = {{1, 2}, {3, 4}};
algorithm
  y := line(x, tab[row, 1:2]);
end tableLine;

model ScalarFunctions
  Real x = 1 + time;
  Real y1 = combine(x);
  Real y2 = tableLine(x, 2);
  annotation(experiment(StopTime = 3, Interval = 0.25));
end ScalarFunctions;
"#;

/// Simulate the model (with `MOSS_TREE_FUNCTIONS` set to `tree`) and return the result
/// and the statistics moss printed.
fn run(tree: &str) -> (moss_results::SimResult, String) {
    run_source("ScalarFunctions", SOURCE, tree)
}

/// [`run`] for the last model of `source`, written to `<name>.mo`.
pub(crate) fn run_source(
    name: &str,
    source: &str,
    tree: &str,
) -> (moss_results::SimResult, String) {
    run_with(name, source, &[("MOSS_TREE_FUNCTIONS", tree)])
}

/// Simulate the last model of `source` with the environment `env`; the result and the
/// statistics.
pub(crate) fn run_with(
    name: &str,
    source: &str,
    env: &[(&str, &str)],
) -> (moss_results::SimResult, String) {
    let tag: String = env.iter().map(|(k, v)| format!("-{k}{v}")).collect();
    let dir = scratch_dir(&format!("scalar-functions-{name}{tag}"));
    let file = dir.join(format!("{name}.mo"));
    std::fs::write(&file, source).expect("writes the model");
    let csv = dir.join("result.csv");
    let out = moss_command()
        .current_dir(&dir)
        .envs(env.iter().copied())
        .args(["simulate", &file.to_string_lossy(), "--stats", "-o"])
        .arg(&csv)
        .output()
        .expect("runs the moss binary");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result = moss_results::read_result(&csv).expect("reads the result");
    let _ = std::fs::remove_dir_all(&dir);
    (result, String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The number of calls `--stats` reports as run compiled.
pub(crate) fn compiled_calls(stats: &str) -> u64 {
    count_before(stats, " run compiled")
}

/// The number of compiled calls `--stats` reports as run as native code.
pub(crate) fn native_calls(stats: &str) -> u64 {
    count_before(stats, " of them as native code")
}

/// The number of calls the tree interpreter ran: all calls but those the memo answered
/// and those run compiled.
pub(crate) fn tree_calls(stats: &str) -> u64 {
    let line = stats
        .lines()
        .find(|l| l.starts_with("function calls:"))
        .unwrap_or_else(|| panic!("no function calls in the statistics:\n{stats}"));
    let total: u64 = line
        .trim_start_matches("function calls:")
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("cannot read `{line}`"));
    let memo: u64 = line
        .split(" answered by the memo")
        .next()
        .and_then(|s| s.rsplit('(').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("cannot read `{line}`"));
    total - memo - compiled_calls(stats)
}

/// The number just before `marker` on the statistics line of function calls.
fn count_before(stats: &str, marker: &str) -> u64 {
    let line = stats
        .lines()
        .find(|l| l.starts_with("function calls:"))
        .unwrap_or_else(|| panic!("no function calls in the statistics:\n{stats}"));
    let before = line
        .split(marker)
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .unwrap_or_default();
    before
        .parse()
        .unwrap_or_else(|_| panic!("cannot read `{line}`"))
}

fn expected_y1(x: f64) -> f64 {
    let n = x.floor() as i64;
    let odd_sum = ((n + 1) / 2) * ((n + 1) / 2);
    let step = if x > 2.0 { 100.0 } else { 0.0 };
    x.sqrt() + (((x - 2.0) * x + 0.5) * x + 3.0) + odd_sum as f64 + 3.0 + 2.0 + step
}

#[test]
fn compiled_and_tree_interpreted_functions_agree_with_the_hand_values() {
    let (compiled, stats) = run("0");
    let (tree, tree_stats) = run("1");
    assert!(compiled_calls(&stats) > 0, "{stats}");
    assert_eq!(compiled_calls(&tree_stats), 0, "{tree_stats}");
    for name in ["x", "y1", "y2"] {
        let a = compiled.series(name).expect("series in the compiled run");
        let b = tree.series(name).expect("series in the tree run");
        assert_eq!(
            a, b,
            "{name} differs between the compiled and the tree form"
        );
    }
    let xs = compiled.series("x").unwrap();
    let y1 = compiled.series("y1").unwrap();
    let y2 = compiled.series("y2").unwrap();
    for ((x, y1), y2) in xs.iter().zip(&y1).zip(&y2) {
        let want = expected_y1(*x);
        assert!(
            (y1 - want).abs() <= 1e-12 * want.abs(),
            "y1({x}) = {y1}, want {want}"
        );
        assert!((y2 - (3.0 + 4.0 * x)).abs() <= 1e-12, "y2({x}) = {y2}");
    }
}

const LOCAL_ARRAYS: &str = r#"
function powerSum "x + x^2 + x^3 + x^4 through local arrays, as the IF97 functions do"
  input Real x;
  output Real y;
protected
  Real o[4];
  Real m[2, 2];
algorithm
  o[1] := x;
  for i in 2:4 loop
    o[i] := o[i - 1]*x;
  end for;
  m[1, 1] := o[1] + o[2];
  m[2, 2] := o[3] + o[4];
  y := m[1, 1] + m[2, 2] + m[1, 2];
end powerSum;

function wholeArray "a local array used as a whole stays with the tree interpreter"
  input Real x;
  output Real y;
protected
  Real o[3];
algorithm
  for i in 1:3 loop
    o[i] := x*i;
  end for;
  y := sum(o) + powerSum(x);
end wholeArray;

model LocalArrays
  Real x = 1 + time;
  Real y3 = powerSum(x);
  Real y4 = wholeArray(x);
  annotation(experiment(StopTime = 3, Interval = 0.25));
end LocalArrays;
"#;

/// Local arrays of constant size are laid out in the compiled frame, element by element;
/// they start at zero in every call (`m[1, 2]` is never assigned).
#[test]
fn local_arrays_of_fixed_size_run_compiled() {
    let (compiled, stats) = run_source("LocalArrays", LOCAL_ARRAYS, "0");
    let (tree, tree_stats) = run_source("LocalArrays", LOCAL_ARRAYS, "1");
    // powerSum is compiled (called from the model and from wholeArray); wholeArray is not
    assert!(compiled_calls(&stats) > 0, "{stats}");
    assert_eq!(compiled_calls(&tree_stats), 0, "{tree_stats}");
    for name in ["y3", "y4"] {
        assert_eq!(
            compiled.series(name),
            tree.series(name),
            "{name} differs between the compiled and the tree form"
        );
    }
    let xs = compiled.series("x").unwrap();
    let y3 = compiled.series("y3").unwrap();
    let y4 = compiled.series("y4").unwrap();
    for ((x, y3), y4) in xs.iter().zip(&y3).zip(&y4) {
        let p = x + x * x + x.powi(3) + x.powi(4);
        assert!((y3 - p).abs() <= 1e-12 * p, "y3({x}) = {y3}, want {p}");
        assert!((y4 - (6.0 * x + p)).abs() <= 1e-12 * p, "y4({x}) = {y4}");
    }
}

const RECORD_AND_ARRAY_INPUTS: &str = r#"
record Junction "device parameters, as the Spice3 models pass them"
  Real satCur;
  Real vt;
  Integer polarity;
end Junction;

function current "diode current of the voltage across pins 1 and 3 of `v`"
  input Junction p;
  input Real v[3];
  output Real i;
  output Real g;
protected
  Real vd;
algorithm
  vd := p.polarity*(v[1] - v[3]);
  i := p.satCur*(exp(vd/p.vt) - 1);
  g := p.satCur/p.vt*exp(vd/p.vt);
end current;

function scaled "an array input forwarded from a compiled function"
  input Real k;
  input Real v[3];
  output Real y;
protected
  Real i;
  Real g;
algorithm
  (i, g) := current(Junction(satCur = 1e-3, vt = 0.5, polarity = -1), v);
  y := k*i + g;
end scaled;

model RecordAndArrayInputs
  parameter Junction j(satCur = 1e-3, vt = 0.5, polarity = 1);
  Real x = time;
  Real i;
  Real g;
  Real y = scaled(2, {0, x, x});
equation
  (i, g) = current(j, {x, 0.5, -x});
  annotation(experiment(StopTime = 1, Interval = 0.125));
end RecordAndArrayInputs;
"#;

/// Record fields arrive as scalar inputs and an array input of constant size is laid out
/// in the frame: such functions (the Spice3 device equations) run compiled, from the model
/// and from another compiled function, with the tree interpreter's results.
#[test]
fn record_and_fixed_size_array_inputs_run_compiled() {
    let name = "RecordAndArrayInputs";
    let (compiled, stats) = run_source(name, RECORD_AND_ARRAY_INPUTS, "0");
    let (tree, tree_stats) = run_source(name, RECORD_AND_ARRAY_INPUTS, "1");
    assert!(compiled_calls(&stats) > 0, "{stats}");
    assert_eq!(compiled_calls(&tree_stats), 0, "{tree_stats}");
    for s in ["i", "g", "y"] {
        assert_eq!(compiled.series(s), tree.series(s), "{s} differs");
    }
    let xs = compiled.series("x").unwrap();
    let (i, g, y) = (
        compiled.series("i").unwrap(),
        compiled.series("g").unwrap(),
        compiled.series("y").unwrap(),
    );
    for k in 0..xs.len() {
        let x = xs[k];
        let e = (2.0 * x / 0.5).exp();
        assert!(
            (i[k] - 1e-3 * (e - 1.0)).abs() <= 1e-12,
            "i({x}) = {}",
            i[k]
        );
        assert!((g[k] - 2e-3 * e).abs() <= 1e-12, "g({x}) = {}", g[k]);
        // scaled: vd = -(0 - x) = x
        let e2 = (x / 0.5).exp();
        let want = 2.0 * 1e-3 * (e2 - 1.0) + 2e-3 * e2;
        assert!(
            (y[k] - want).abs() <= 1e-12,
            "y({x}) = {}, want {want}",
            y[k]
        );
    }
}

/// Native code (`codegen/src/jit.rs`) computes what the scalar interpreter computes, bit for
/// bit, on every construct the models above use: tables, loops with `break`, `while`,
/// defaults, tuple calls, local arrays, record fields and array inputs.
#[test]
fn native_code_gives_the_interpreters_results_bit_for_bit() {
    for (name, source, signals) in [
        ("ScalarFunctions", SOURCE, &["y1", "y2"][..]),
        ("LocalArrays", LOCAL_ARRAYS, &["y3", "y4"][..]),
        (
            "RecordAndArrayInputs",
            RECORD_AND_ARRAY_INPUTS,
            &["i", "g", "y"][..],
        ),
    ] {
        let (native, stats) = run_with(name, source, &[]);
        let (interpreted, plain_stats) = run_with(name, source, &[("MOSS_JIT", "0")]);
        assert!(native_calls(&stats) > 0, "{name}: {stats}");
        assert_eq!(native_calls(&plain_stats), 0, "{name}: {plain_stats}");
        for s in signals {
            assert_eq!(
                native.series(s),
                interpreted.series(s),
                "{name}: {s} differs between native code and the interpreter"
            );
        }
    }
}

const FAILURES: &str = r#"
function checked "fails its assertion once x passes 2"
  input Real x;
  output Real y;
algorithm
  assert(x < 2, "x passed the bound: " + String(x));
  y := 2*x;
end checked;

function warned "warns once x passes 1, and goes on"
  input Real x;
  output Real y;
algorithm
  assert(x < 1, "x is large", AssertionLevel.warning);
  y := x + 1;
end warned;

function lookup "reads past its table once x passes 3"
  input Real x;
  output Real y;
protected
  Real tab[4] = {1, 2, 3, 4};
algorithm
  y := tab[integer(x) + 2];
end lookup;
"#;

/// What stops native code (an assertion, a warning, an index out of bounds) is reported by
/// the interpreter running the call again: the same messages as without native code.
#[test]
fn failures_in_native_code_are_reported_with_the_interpreters_messages() {
    let cases = [
        (
            "Checked",
            "Real y = checked(time);",
            "assertion failed: x passed the bound",
        ),
        ("Lookup", "Real y = lookup(time*2);", "out of bounds 1..4"),
    ];
    for (name, equation, message) in cases {
        let source = format!(
            "{FAILURES}\nmodel {name}\n  {equation}\n  annotation(experiment(StopTime = 3));\nend {name};\n"
        );
        let dir = scratch_dir(&format!("scalar-functions-failure-{name}"));
        let file = dir.join(format!("{name}.mo"));
        std::fs::write(&file, &source).expect("writes the model");
        for jit in ["1", "0"] {
            let out = moss_command()
                .current_dir(&dir)
                .env("MOSS_JIT", jit)
                .args(["simulate", &file.to_string_lossy(), "-o"])
                .arg(dir.join("r.csv"))
                .output()
                .expect("runs the moss binary");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{name} (jit {jit}): {stderr}");
            assert!(stderr.contains(message), "{name} (jit {jit}): {stderr}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    let source = format!(
        "{FAILURES}\nmodel Warned\n  Real y = warned(time);\n  annotation(experiment(StopTime = 2, Interval = 0.25));\nend Warned;\n"
    );
    let (native, stats) = run_with("Warned", &source, &[]);
    let (interpreted, _) = run_with("Warned", &source, &[("MOSS_JIT", "0")]);
    assert!(native_calls(&stats) > 0, "{stats}");
    assert_eq!(native.series("y"), interpreted.series("y"));
    let y = native.series("y").expect("y in the result");
    let t = native.series("time").expect("time in the result");
    for (t, y) in t.iter().zip(&y) {
        assert!((y - (t + 1.0)).abs() <= 1e-12, "y({t}) = {y}");
    }
}

/// A long function with many locals: `jit.rs` keeps its locals in the frame instead of SSA
/// variables (the register allocator's work grows with locals times length). Its native
/// code must still give the interpreter's results.
#[test]
fn long_functions_with_many_locals_run_natively_from_the_frame() {
    let n = 160;
    let mut body = String::from("  a1 := x;\n");
    for k in 2..=n {
        // each local depends on the previous two, with a branch, so nothing folds away
        let prev2 = if k > 2 {
            format!("a{}", k - 2)
        } else {
            "x".into()
        };
        body.push_str(&format!(
            "  a{k} := if a{} > {prev2} then 0.5*a{} + 0.25*{prev2} + {k}.0e-3 else sin(a{}) - 0.1*{prev2};\n",
            k - 1,
            k - 1,
            k - 1
        ));
    }
    let locals: String = (1..=n).map(|k| format!("  Real a{k};\n")).collect();
    // the `while` keeps the function a function (the symbolic inliner takes only
    // assignments, `if` and `for`)
    let source = format!(
        "function long\n  input Real x;\n  output Real y;\nprotected\n{locals}  Integer i;\nalgorithm\n  i := 0;\n  while i < 1 loop\n    i := i + 1;\n  end while;\n{body}  y := a{n};\nend long;\n\nmodel LongFunction\n  Real y = long(time);\n  annotation(experiment(StopTime = 1, Interval = 0.01));\nend LongFunction;\n"
    );
    let (native, stats) = run_with("LongFunction", &source, &[]);
    let (interpreted, _) = run_with("LongFunction", &source, &[("MOSS_JIT", "0")]);
    assert!(native_calls(&stats) > 0, "{stats}");
    assert_eq!(native.series("y"), interpreted.series("y"));
}

/// A chain of assignments that each use the previous value twice doubles the inlined
/// expression at every line: forty lines used to exhaust the memory of the code emitter.
/// Past a size the symbolic inliner leaves the function a call, which gives the same values.
#[test]
fn a_chain_of_assignments_too_large_to_inline_stays_a_call() {
    let n = 60;
    let mut body = String::from("  a1 := x;\n");
    for k in 2..=n {
        body.push_str(&format!(
            "  a{k} := if a{p} > 0.5 then 0.5*a{p} + 0.1 else sin(a{p}) + 0.2;\n",
            p = k - 1
        ));
    }
    let locals: String = (1..=n).map(|k| format!("  Real a{k};\n")).collect();
    let source = format!(
        "function chain\n  input Real x;\n  output Real y;\nprotected\n{locals}algorithm\n{body}  y := a{n};\nend chain;\n\nmodel Chain\n  Real y = chain(time);\n  annotation(experiment(StopTime = 1, Interval = 0.1));\nend Chain;\n"
    );
    let (result, _) = run_with("Chain", &source, &[]);
    let t = result.series("time").expect("time");
    let y = result.series("y").expect("y");
    for (t, y) in t.iter().zip(&y) {
        let mut a = *t;
        for _ in 2..=n {
            a = if a > 0.5 {
                0.5 * a + 0.1
            } else {
                a.sin() + 0.2
            };
        }
        assert!((y - a).abs() <= 1e-12, "y({t}) = {y}, want {a}");
    }
}

/// Functions with array inputs of open size (`table[:, :]`, as every table interpolation)
/// run compiled through a copy specialized to the sizes of their call site: `size()` of the
/// table folds, and the table passed on to a second function of open size specializes that
/// one too. The answers are the tree interpreter's bit for bit and the hand-computed ones.
#[test]
fn functions_with_open_array_sizes_run_compiled_for_the_sizes_of_their_call() {
    let source = r#"
function segment "linear interpolation inside row i of a table"
  input Real table[:, :];
  input Integer i;
  input Real u;
  output Real y;
algorithm
  y := table[i, 2] + (table[i + 1, 2] - table[i, 2])*(u - table[i, 1])/(table[i + 1, 1] - table[i, 1]);
end segment;

function lookup "find the row of u by search, then interpolate in it"
  input Real table[:, :];
  input Real u;
  output Real y;
protected
  Integer n = size(table, 1);
  Integer i = 1;
algorithm
  while i < n - 1 and u >= table[i + 1, 1] loop
    i := i + 1;
  end while;
  y := segment(table, i, u);
end lookup;

function total "sum of a vector of open size (a `while`: the inliner leaves it a call)"
  input Real v[:];
  output Real s = 0;
protected
  Integer k = 0;
algorithm
  while k < size(v, 1) loop
    k := k + 1;
    s := s + v[k];
  end while;
end total;

function normalized "the vector divided by its sum: an array result"
  input Real x[:];
  output Real y[size(x, 1)];
algorithm
  y := x/sum(x);
end normalized;

function pick "element k of a vector"
  input Real a[:];
  input Integer k;
  output Real y;
protected
  Integer i = 0;
algorithm
  while i < k loop
    i := i + 1;
  end while;
  y := a[i];
end pick;

function firstShare "an array-valued call as the argument of another call"
  input Real v[:];
  output Real f;
protected
  Integer i = 0;
algorithm
  while i < 1 loop
    i := i + 1;
  end while;
  f := pick(normalized(v), 1);
end firstShare;

model OpenSizes
  parameter Real tab[4, 2] = {{0, 0}, {1, 10}, {3, 20}, {4, 0}};
  parameter Real w[3] = {1, 2, 4};
  Real y = lookup(tab, 4*time);
  Real s = total({w[1], w[2], w[3]*time});
  Real z = firstShare({w[1], w[2]*time + 1, w[3]});
  annotation(experiment(StopTime = 1, Interval = 0.125));
end OpenSizes;
"#;
    let (compiled, stats) = run_source("OpenSizes", source, "0");
    let (tree, tree_stats) = run_source("OpenSizes", source, "1");
    assert!(compiled_calls(&stats) > 0, "{stats}");
    assert_eq!(compiled_calls(&tree_stats), 0, "{tree_stats}");
    assert_eq!(compiled.series("y"), tree.series("y"));
    assert_eq!(compiled.series("s"), tree.series("s"));
    assert_eq!(compiled.series("z"), tree.series("z"));
    let t = compiled.series("time").expect("time");
    let y = compiled.series("y").expect("y");
    let s = compiled.series("s").expect("s");
    let z = compiled.series("z").expect("z");
    for (((t, y), s), z) in t.iter().zip(&y).zip(&s).zip(&z) {
        let share = 1.0 / (6.0 + 2.0 * t);
        assert!((z - share).abs() <= 1e-12, "z({t}) = {z}, want {share}");
        let u = 4.0 * t;
        let want = if u < 1.0 {
            10.0 * u
        } else if u < 3.0 {
            10.0 + 5.0 * (u - 1.0)
        } else {
            20.0 - 20.0 * (u - 3.0)
        };
        assert!((y - want).abs() <= 1e-12, "y({t}) = {y}, want {want}");
        assert!((s - (3.0 + 4.0 * t)).abs() <= 1e-12, "s({t}) = {s}");
    }
}

/// A String the function never reads (the `name` of a data record passed along with its
/// numbers, as every ideal-gas property function of the MSL takes it), or only hands on to
/// such an input of another function, does not keep the function out of its compiled form
/// and native code.
#[test]
fn unread_string_inputs_do_not_keep_a_function_interpreted() {
    let source = r#"
record Data
  String name;
  Real a[3];
end Data;

function poly "the record's polynomial at x; its name is carried along, not read"
  input Data data;
  input Real x;
  output Real y = 0;
protected
  Integer i = 0;
algorithm
  while i < 3 loop
    i := i + 1;
    y := y*x + data.a[i];
  end while;
end poly;

function twice "passes the record on, its name included, and reads nothing of it"
  input Data data;
  input Real x;
  output Real y;
protected
  Integer i = 0;
algorithm
  while i < 1 loop
    i := i + 1;
  end while;
  y := 2*poly(data, x);
end twice;

model NamedData
  parameter Data d(name = "quadratic", a = {1, -2, 3});
  Real y = twice(d, time);
  annotation(experiment(StopTime = 1, Interval = 0.125));
end NamedData;
"#;
    let (compiled, stats) = run_source("NamedData", source, "0");
    let (tree, tree_stats) = run_source("NamedData", source, "1");
    // every call runs compiled: `twice` too, which hands the name on to `poly`
    let line = stats
        .lines()
        .find(|l| l.starts_with("function calls:"))
        .expect("function calls in the statistics");
    let numbers: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    let (calls, memo) = (numbers[0], numbers[1]);
    assert_eq!(compiled_calls(&stats) + memo, calls, "{stats}");
    assert!(native_calls(&stats) > 0, "{stats}");
    assert_eq!(compiled_calls(&tree_stats), 0, "{tree_stats}");
    assert_eq!(compiled.series("y"), tree.series("y"));
    let t = compiled.series("time").expect("time");
    let y = compiled.series("y").expect("y");
    for (t, y) in t.iter().zip(&y) {
        let want = 2.0 * (t * t - 2.0 * t + 3.0);
        assert!((y - want).abs() <= 1e-12, "y({t}) = {y}, want {want}");
    }
}
