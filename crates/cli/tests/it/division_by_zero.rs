//! `div`, `mod` and `rem` with a zero divisor are errors (spec 3.7.1), never a silent
//! `Inf`/`NaN`: at translation time when the divisor is a literal zero, at run time as a
//! simulation error that names the call, its arguments and the time.

use crate::library_support;

use library_support::{moss_command, scratch_dir, translate_failure};

#[test]
fn literal_zero_divisor_is_a_translation_error() {
    let err = translate_failure(
        "LiteralDiv",
        "model LiteralDiv\n  parameter Integer k = div(1, 0);\nend LiteralDiv;\n",
    );
    assert!(
        err.contains("division by zero: the divisor of `div` is 0")
            && err.contains("LiteralDiv.mo:2:"),
        "{err}"
    );
    let err = translate_failure(
        "LiteralMod",
        "model LiteralMod\n  Integer k = mod(integer(time), 0);\nend LiteralMod;\n",
    );
    assert!(err.contains("the divisor of `mod` is 0"), "{err}");
}

const RUNTIME: &str = r#"
model RuntimeRem
  parameter Integer n = 0;
  parameter Integer k = rem(7, n);
end RuntimeRem;
"#;

const DURING_SIMULATION: &str = r#"
model LateDiv "the divisor reaches zero at t = 0.5"
  Integer n = integer(3 - 4*time);
  Integer k = div(10, n);
  annotation(experiment(StopTime = 1));
end LateDiv;
"#;

fn simulate_failure(name: &str, source: &str) -> String {
    let dir = scratch_dir(name);
    let file = dir.join(format!("{name}.mo"));
    std::fs::write(&file, source).expect("writes the model");
    let out = moss_command()
        .current_dir(&dir)
        .arg("simulate")
        .arg(&file)
        .args(["-o", "result.csv"])
        .output()
        .expect("runs moss");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "a model error:\n{stderr}");
    stderr
}

#[test]
fn zero_divisor_of_a_parameter_is_a_simulation_error() {
    let err = simulate_failure("RuntimeRem", RUNTIME);
    assert!(
        err.contains("division by zero in `rem(7, 0)`") && err.contains("at time 0"),
        "{err}"
    );
}

#[test]
fn divisor_reaching_zero_stops_the_simulation_there() {
    let err = simulate_failure("LateDiv", DURING_SIMULATION);
    assert!(err.contains("division by zero in `div(10, 0)`"), "{err}");
    assert!(err.contains("at time 0.5"), "{err}");
}
