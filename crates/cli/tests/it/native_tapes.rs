//! The model's equations run as native code once their tapes have run often enough
//! (`codegen/src/tape_jit.rs`; `MOSS_TAPE_RUNS` sets how often). The results must be the interpreter's bit for bit
//! (`MOSS_JIT=0` keeps every tape interpreted): events with reinit, `sample`, `delay`,
//! `noEvent` relations, `homotopy`, if-expressions, a linear and a nonlinear loop and a
//! function call in the middle of a tape.

use crate::library_support::{moss_command, scratch_dir};

const SOURCE: &str = r#"
function bump "a call inside the equations (a generic call of the tape)"
  input Real x;
  output Real y;
protected
  Integer i = 0;
algorithm
  while i < 2 loop
    i := i + 1;
  end while;
  y := x/(1 + x*x);
end bump;

model NativeTapes
  Real h(start = 1, fixed = true) "a bouncing ball";
  Real v(start = 0, fixed = true);
  Real late = delay(h, 0.05);
  discrete Integer ticks(start = 0, fixed = true);
  Real smooth = if noEvent(h > 0.5) then h - 0.5 else 0.5*(h - 0.5)^2;
  Real blend = homotopy(sin(h), h);
  Real a "a linear loop";
  Real b;
  Real z(start = 0.5) "a nonlinear loop";
  Real called = bump(h + v) + (if v > 0 then 1 else -1);
equation
  der(h) = v;
  der(v) = -9.81;
  when h < 0 then
    reinit(v, -0.8*pre(v));
  end when;
  when sample(0, 0.1) then
    ticks = pre(ticks) + 1;
  end when;
  a + 2*b = h;
  3*a - b = v;
  z + 0.1*sin(z) = 0.3*h + 0.2;
  annotation(experiment(StopTime = 2, Interval = 0.01));
end NativeTapes;
"#;

/// Simulate with the environment `env`; the result file's text.
fn simulate(env: &[(&str, &str)]) -> String {
    let tag: String = env.iter().map(|(k, v)| format!("-{k}{v}")).collect();
    let dir = scratch_dir(&format!("native-tapes{tag}"));
    let file = dir.join("NativeTapes.mo");
    std::fs::write(&file, SOURCE).expect("writes the model");
    let csv = dir.join("result.csv");
    let out = moss_command()
        .current_dir(&dir)
        .envs(env.iter().copied())
        .args(["simulate", &file.to_string_lossy(), "-o"])
        .arg(&csv)
        .output()
        .expect("runs the moss binary");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&csv).expect("reads the result");
    let _ = std::fs::remove_dir_all(&dir);
    text
}

#[test]
fn native_equations_give_the_interpreters_results_bit_for_bit() {
    // translated after 50 runs (the default waits for about 2,000, more than this short
    // run has)
    let native = simulate(&[("MOSS_TAPE_RUNS", "50")]);
    let interpreted = simulate(&[("MOSS_JIT", "0")]);
    assert!(native.lines().count() > 200, "{native}");
    assert!(
        native == interpreted,
        "native and interpreted results differ"
    );
    // the ball bounced: some row has h near zero and v positive after the first impact
    let header: Vec<&str> = native.lines().next().expect("header").split(',').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h.trim_matches('"') == name)
            .unwrap_or_else(|| panic!("column {name} in {header:?}"))
    };
    let (h, v, ticks) = (col("h"), col("v"), col("ticks"));
    let rows: Vec<Vec<f64>> = native
        .lines()
        .skip(1)
        .map(|l| {
            l.split(',')
                .map(|x| x.parse().unwrap_or(f64::NAN))
                .collect()
        })
        .collect();
    assert!(rows.iter().any(|r| r[v] > 3.0 && r[h] < 0.1), "no bounce");
    let last = rows.last().expect("rows");
    assert_eq!(last[ticks], 21.0, "samples at 0, 0.1, ..., 2");
}
