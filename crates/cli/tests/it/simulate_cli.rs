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

#[test]
fn unknown_jacobian_mode_is_a_usage_error() {
    let (code, err) = moss(&["simulate", "M", "--jacobian", "exact"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("use auto or numeric"), "{err}");
}

/// Protected variables stay out of the results by default; `--protected`, or a `--vars`
/// pattern that names them, brings them in (generated `$` slots never appear).
#[test]
fn protected_variables_are_stored_when_the_filter_names_them() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("moss-protected-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch folder");
    let file = dir.join("Hidden.mo");
    std::fs::write(
        &file,
        "model Hidden\n  Real x(start = 1, fixed = true);\nprotected\n  Real rate = 2*x;\nequation\n  der(x) = -rate;\nend Hidden;\n",
    )
    .expect("writes the model");
    let header = |args: &[&str]| -> String {
        let csv = dir.join("out.csv");
        let out = Command::new(env!("CARGO_BIN_EXE_moss"))
            .arg("simulate")
            .arg(&file)
            .arg("-o")
            .arg(&csv)
            .args(args)
            .output()
            .expect("runs the moss binary");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = std::fs::read_to_string(&csv).expect("result written");
        text.lines().next().unwrap_or_default().to_string()
    };
    let default = header(&[]);
    assert!(
        default.contains("\"x\"") || default.contains(",x"),
        "{default}"
    );
    assert!(!default.contains("rate"), "{default}");
    let asked = header(&["--vars", "x|rate"]);
    assert!(asked.contains("rate"), "{asked}");
    let everything = header(&["--vars", ".*"]);
    assert!(everything.contains("rate"), "{everything}");
    assert!(!everything.contains('$'), "{everything}");
    let with_protected = header(&["--protected"]);
    assert!(with_protected.contains("rate"), "{with_protected}");
    assert!(with_protected.contains("\"x\""), "{with_protected}");
    assert!(!with_protected.contains('$'), "{with_protected}");
    let _ = std::fs::remove_dir_all(&dir);
}
