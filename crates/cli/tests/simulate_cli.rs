//! `moss simulate` as a user runs it: exit codes and messages of usage errors (these need no
//! model, so they hold whatever state the compiler stages are in).

use std::process::Command;

fn moss(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_moss"))
        .args(args)
        .output()
        .expect("runs the moss binary");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn missing_model_file_is_a_usage_error() {
    let (code, err) = moss(&["simulate", "does/not/exist.mo"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no such file: does/not/exist.mo"), "{err}");
}

#[test]
fn unknown_result_format_is_a_usage_error() {
    let (code, err) = moss(&["simulate", "M", "-o", "result.txt"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(".csv or .mat"), "{err}");
}

#[test]
fn bad_variable_filter_is_a_usage_error() {
    let (code, err) = moss(&["simulate", "M", "--vars", "x("]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("invalid variable filter"), "{err}");
}

#[test]
fn malformed_parameter_override_is_a_usage_error() {
    let (code, err) = moss(&["simulate", "M", "-p", "k"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("NAME=VALUE"), "{err}");
    let (code, err) = moss(&["simulate", "M", "-p", "k=fast"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a number"), "{err}");
}

#[test]
fn unknown_solver_is_a_usage_error() {
    let (code, err) = moss(&["simulate", "M", "--solver", "ode45"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("use auto, bdf, dopri5, euler or rk4"), "{err}");
}

#[test]
fn missing_library_directory_is_a_usage_error() {
    let (code, err) = moss(&["simulate", "M", "--lib", "no/such/dir"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a directory"), "{err}");
}
