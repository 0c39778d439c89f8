//! `moss check` and `moss flatten` end to end: output, exit codes (0 ok, 1 model error,
//! 2 usage error), models given as class names or `.mo` files.

use std::process::Command;

fn moss(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_moss"))
        .args(args)
        .env_remove("MODELICAPATH")
        .output()
        .expect("run moss");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn temp_model(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("moss-check-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(format!("{name}.mo"));
    std::fs::write(&path, text).expect("write model");
    path
}

#[test]
fn check_of_a_bundled_example_reports_counts() {
    let (code, out, err) = moss(&["check", "Modelica.Mechanics.Rotational.Examples.First"]);
    assert_eq!(code, 0, "{err}");
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some("Check of Modelica.Mechanics.Rotational.Examples.First completed successfully.")
    );
    let counts = lines.next().unwrap_or_default();
    let eqs: usize = counts
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(
        eqs > 0 && counts.contains(&format!("{eqs} equations, {eqs} variables")),
        "{counts}"
    );
}

#[test]
fn check_and_flatten_of_a_file() {
    let path = temp_model(
        "Decay",
        "model Decay\n  parameter Real k = 2;\n  Real x(start = 1, fixed = true);\nequation\n  der(x) = -k*x;\nend Decay;\n",
    );
    let p = path.to_str().expect("utf-8 path");
    let (code, out, _) = moss(&["check", p]);
    assert_eq!(code, 0);
    assert!(
        out.contains("1 equations, 1 variables (1 states, 0 discrete), 1 parameters"),
        "{out}"
    );
    let (code, out, _) = moss(&["flatten", p]);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "model Decay\n  parameter Real k = 2;\n  Real x(start = 1, fixed = true);\nequation\n  der(x) = -k * x;\nend Decay;\n"
    );
    let _ = std::fs::remove_dir_all(path.parent().expect("dir"));
}

#[test]
fn model_errors_exit_1_with_a_diagnostic() {
    let path = temp_model("Bad", "model Bad\n  Real x = y;\nend Bad;\n");
    let (code, _, err) = moss(&["check", path.to_str().expect("utf-8 path")]);
    assert_eq!(code, 1);
    assert!(err.starts_with("error: unknown name `y`\n"), "{err}");
    let (code, _, err) = moss(&["check", "No.Such.Model"]);
    assert_eq!(code, 1);
    assert!(err.contains("class `No.Such.Model` not found"), "{err}");
    let _ = std::fs::remove_dir_all(path.parent().expect("dir"));
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(moss(&["check"]).0, 2);
    assert_eq!(moss(&["check", "missing-file.mo"]).0, 2);
    assert_eq!(moss(&["flatten", "--lib", "/no/such/dir", "M"]).0, 2);
}

/// A panic (here one requested through the test hook) is reported as an internal error of
/// moss with its location, exit status 1, and no Rust panic text or backtrace hint.
#[test]
fn a_panic_is_reported_as_an_internal_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_moss"))
        .args(["check", "Modelica.Mechanics.Rotational.Examples.First"])
        .env_remove("MODELICAPATH")
        .env_remove("RUST_BACKTRACE")
        .env("MOSS_TEST_INTERNAL_ERROR", "1")
        .output()
        .expect("run moss");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let first = err.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(
            "error: internal error in moss (please report): panic requested by \
             MOSS_TEST_INTERNAL_ERROR (at crates/cli/src/internal_error.rs:"
        ),
        "{err}"
    );
    assert!(!err.contains("panicked at"), "{err}");
    assert!(
        !err.contains("RUST_BACKTRACE=1` environment variable"),
        "{err}"
    );
}
