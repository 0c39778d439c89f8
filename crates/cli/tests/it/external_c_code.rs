//! External C functions with their code in the `Include` annotation (spec 12.9): moss
//! compiles the code with the system C compiler, loads it and calls it through the C
//! mapping of the arguments. Every test writes its own tiny C code; a machine without a
//! C compiler skips them (with a message), since that is what they need.

use crate::library_support;

use library_support::{assert_close, scratch_dir, Trajectories};
use std::path::Path;
use std::process::{Command, Output};

/// Is there a C compiler (`$CC` or `cc`)? Prints why a test is skipped when not.
fn have_cc() -> bool {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let ok = Command::new(&cc).arg("--version").output().is_ok();
    if !ok {
        eprintln!("skipped: no C compiler `{cc}` on this machine");
    }
    ok
}

/// `moss simulate <file> -o result.csv` in `dir`, with the compiled code cached in `dir`.
fn simulate(dir: &Path, file: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_moss"))
        .env_remove("MODELICAPATH")
        .env("MOSS_CACHE_DIR", dir.join("cache"))
        .current_dir(dir)
        .args(["simulate", file, "-o", "result.csv"])
        .output()
        .expect("runs the moss binary")
}

fn simulate_ok(name: &str, source: &str) -> Trajectories {
    let dir = scratch_dir(name);
    let file = format!("{name}.mo");
    std::fs::write(dir.join(&file), source).expect("writes the model");
    let out = simulate(&dir, &file);
    assert!(
        out.status.success(),
        "moss simulate {name} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Trajectories {
        label: name.into(),
        result: moss_results::read_result(&dir.join("result.csv")).expect("a result"),
    }
}

fn simulate_err(name: &str, source: &str) -> String {
    let dir = scratch_dir(name);
    let file = format!("{name}.mo");
    std::fs::write(dir.join(&file), source).expect("writes the model");
    let out = simulate(&dir, &file);
    assert_eq!(out.status.code(), Some(1), "a model error, not a crash");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

const MAPPING: &str = r#"
model Mapping
  function scaledSum "explicit call: array with its size, an Integer, a scalar output by pointer"
    input Real u[:];
    input Integer k;
    output Real s;
    output Real mean;
  external "C" s = scaledSum(u, size(u, 1), k, mean) annotation(Include = "
double scaledSum(const double *u, int n, int k, double *mean) {
  double s = 0; int i;
  for (i = 0; i < n; i++) s += u[i];
  *mean = s / n;
  return k * s;
}");
  end scaledSum;
  function twice "default mapping: y = twice(x)"
    input Integer x;
    output Integer y;
  external annotation(Include = "int twice(int x) { return 2 * x; }");
  end twice;
  function rows "an output array passed by pointer, row-major"
    input Integer n;
    output Real a[2, 3];
  external "C" fillRows(a, n) annotation(Include = "
void fillRows(double *a, int n) { int i; for (i = 0; i < 6; i++) a[i] = n * (i + 1); }");
  end rows;
  parameter Real u[4] = {1, 2, 3, 4};
  parameter Real s = scaledSum(u, 3);
  Real mean;
  parameter Integer t = twice(21);
  Real a[2, 3];
  Real y = scaledSum({time, 1}, 2);
equation
  (, mean) = scaledSum(u, 1);
algorithm
  a := rows(10);
  annotation(experiment(StopTime = 1, Interval = 0.5));
end Mapping;
"#;

/// Values go through the C mapping and back: arrays with their sizes, Integers as `int`,
/// an output passed by pointer, an output array filled row by row, the default mapping.
#[test]
fn arguments_follow_the_c_mapping() {
    if !have_cc() {
        return;
    }
    let run = simulate_ok("Mapping", MAPPING);
    assert_eq!(run.last("s"), 30.0, "3 * (1 + 2 + 3 + 4)");
    assert_eq!(run.last("mean"), 2.5);
    assert_eq!(run.last("t"), 42.0);
    assert_eq!(
        run.last("a[1,2]"),
        20.0,
        "row-major: a[1,2] is the second element"
    );
    assert_eq!(run.last("a[2,1]"), 40.0);
    assert_close("y at t = 0.5", run.at("y", 0.5), 2.0 * 1.5, 1e-12);
}

const ERROR: &str = r#"
model Fails
  function checked
    input Real x;
    output Real y;
  external "C" y = checked(x) annotation(Include = "
#include \"ModelicaUtilities.h\"
double checked(double x) {
  if (x > 0.25) ModelicaFormatError(\"x = %g is too large\", x);
  return x;
}");
  end checked;
  Real y = checked(time);
  annotation(experiment(StopTime = 1));
end Fails;
"#;

/// `ModelicaFormatError` in user C code ends the simulation with the message, cleanly.
#[test]
fn modelica_error_in_c_code_is_a_simulation_error() {
    if !have_cc() {
        return;
    }
    let stderr = simulate_err("Fails", ERROR);
    assert!(
        stderr.contains("external C function `checked` reported an error: x = 0.25")
            && stderr.contains("is too large"),
        "{stderr}"
    );
}

const WRONG_NAME: &str = r#"
model WrongName
  function f
    input Real x;
    output Real y;
  external "C" y = notDefined(x) annotation(Include = "double defined(double x) { return x; }");
  end f;
  Real y = f(time);
end WrongName;
"#;

/// A function the code does not define is reported when the model is compiled.
#[test]
fn undefined_c_function_is_reported() {
    if !have_cc() {
        return;
    }
    let stderr = simulate_err("WrongName", WRONG_NAME);
    assert!(
        stderr.contains("function `WrongName.f` calls external C function `notDefined`")
            && stderr.contains("notDefined"),
        "{stderr}"
    );
}

/// `IncludeDirectory` given as a `modelica://` URI, and the default
/// `modelica://Lib/Resources/Include` of the function's library.
#[test]
fn include_directories_resolve_modelica_uris() {
    if !have_cc() {
        return;
    }
    let dir = scratch_dir("IncludeDirs");
    let lib = dir.join("Lib");
    std::fs::create_dir_all(lib.join("Resources/Include/Extra")).unwrap();
    std::fs::write(
        lib.join("Resources/Include/Extra/triple.h"),
        "static double triple(double x) { return 3 * x; }\n",
    )
    .unwrap();
    std::fs::write(
        lib.join("Resources/Include/add_one.h"),
        "static double addOne(double x) { return x + 1; }\n",
    )
    .unwrap();
    std::fs::write(
        lib.join("package.mo"),
        r##"package Lib
  function triple
    input Real x;
    output Real y;
  external "C" y = triple(x) annotation(Include = "#include \"triple.h\"",
    IncludeDirectory = "modelica://Lib/Resources/Include/Extra");
  end triple;
  function addOne
    input Real x;
    output Real y;
  external "C" y = addOne(x) annotation(Include = "#include \"add_one.h\"");
  end addOne;
  model M
    parameter Real a = triple(2);
    parameter Real b = addOne(2);
  end M;
end Lib;
"##,
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_moss"))
        .env_remove("MODELICAPATH")
        .env("MOSS_CACHE_DIR", dir.join("cache"))
        .current_dir(&dir)
        .args(["simulate", "Lib.M", "--lib", ".", "-o", "result.csv"])
        .output()
        .expect("runs moss");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result = moss_results::read_result(&dir.join("result.csv")).unwrap();
    let run = Trajectories {
        label: "Lib.M".into(),
        result,
    };
    assert_eq!(run.last("a"), 6.0);
    assert_eq!(run.last("b"), 3.0);
}

const COUNTER: &str = r#"
model Counter
  function next "keeps state in C: must be called once per event, never memoized"
    output Real y;
  external "C" annotation(Include = "double next(void) { static double n = 0; n += 1; return n; }");
  end next;
  Real x(start = 0, fixed = true);
  Real step(start = 1, fixed = true);
equation
  when sample(0.1, 0.1) then
    x = next();
    step = x - pre(x);
  end when;
  annotation(experiment(StopTime = 1, Interval = 0.05));
end Counter;
"#;

/// A C function with state is called exactly once per event of its `when`.
#[test]
fn stateful_c_function_runs_once_per_event() {
    if !have_cc() {
        return;
    }
    let run = simulate_ok("Counter", COUNTER);
    assert_eq!(run.last("x"), 10.0, "ten sample events in (0, 1]");
    assert_eq!(run.min("step"), 1.0);
    assert_eq!(run.max("step"), 1.0);
}

const OBJECTS: &str = r#"
model Objects
  class Poly "a polynomial kept in C"
    extends ExternalObject;
    function constructor
      input Real c[:];
      output Poly p;
    external "C" p = polyNew(c, size(c, 1)) annotation(Include = "
#include <stdlib.h>
#include <string.h>
typedef struct { int n; double c[8]; int evaluations; } Poly;
static int polys_built = 0;
void* polyNew(const double *c, int n) {
  Poly *p = (Poly*)calloc(1, sizeof(Poly));
  p->n = n; memcpy(p->c, c, n * sizeof(double)); polys_built++;
  return p;
}
double polyEval(void *obj, double x) {
  Poly *p = (Poly*)obj; double y = 0; int i;
  for (i = p->n - 1; i >= 0; i--) y = y * x + p->c[i];
  return y;
}
int polysBuilt(void) { return polys_built; }
void polyFree(void *p) { free(p); }");
    end constructor;
    function destructor
      input Poly p;
    external "C" polyFree(p);
    end destructor;
  end Poly;
  function eval
    input Poly p;
    input Real x;
    output Real y;
  external "C" y = polyEval(p, x);
  end eval;
  function evalLocal "builds its object in a function"
    input Real c[:];
    input Real x;
    output Real y;
  protected
    Poly p = Poly(c);
  algorithm
    y := eval(p, x);
  end evalLocal;
  function built
    input Real dummy;
    output Integer n;
  external "C" n = polysBuilt();
  end built;
  Poly p = Poly({1, 2, 3}) "1 + 2 x + 3 x^2";
  Real y = eval(p, time);
  Real z = evalLocal({0, 1}, 2 * time);
  Real n = built(time) "objects built so far";
  annotation(experiment(StopTime = 1, Interval = 0.25));
end Objects;
"#;

/// An external object is constructed from its constructor's arguments once and its handle
/// passed to the C functions, also when a function builds it in a local.
#[test]
fn external_objects_are_built_once_and_passed_as_handles() {
    if !have_cc() {
        return;
    }
    let run = simulate_ok("Objects", OBJECTS);
    assert_close("y(1)", run.last("y"), 6.0, 1e-12);
    assert_close("y(0.5)", run.at("y", 0.5), 1.0 + 1.0 + 0.75, 1e-12);
    assert_close("z(1)", run.last("z"), 2.0, 1e-12);
    assert_eq!(run.last("n"), 2.0, "one object per distinct argument list");
}
