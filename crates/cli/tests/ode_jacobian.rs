//! The symbolic ODE Jacobian (the tangent program built by `moss-symbolic`) against central
//! differences of the right-hand side, on every example model and on small models written for
//! each kind of block it differentiates: explicit assignments, implicit scalar equations,
//! linear systems, torn nonlinear loops and index-reduced mechanics. Entries outside the
//! structural pattern must be zero too.

use moss_codegen::{ExecutableModel, Interpreter};
use moss_frontend::api::{flatten_model, LoadOptions};
use moss_symbolic::program::JacobianSource;
use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Translate a model file (its last class) with the bundled library only.
fn interpreter_for(file: &Path) -> Interpreter {
    let opts = LoadOptions {
        libs: vec![],
        use_modelicapath: false,
        use_bundled: true,
    };
    let model = file.to_string_lossy().into_owned();
    let flat = match flatten_model(&opts, &model) {
        Ok(f) => f.model,
        Err(_) => panic!("{model} does not flatten"),
    };
    let program =
        moss_symbolic::translate(&flat).unwrap_or_else(|_| panic!("{model} does not translate"));
    assert_eq!(
        program.report.jacobian,
        JacobianSource::Symbolic,
        "{model}: expected a symbolic ODE Jacobian"
    );
    Interpreter::new(program).unwrap_or_else(|e| panic!("{model}: {e}"))
}

fn write_model(name: &str, source: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("moss-ode-jacobian-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("creates the scratch folder");
    let file = dir.join(format!("{name}.mo"));
    std::fs::write(&file, source).expect("writes the model");
    file
}

/// Compare `J e_j` from the tangent program with central differences at `x`, column by
/// column; also check that the pattern covers every nonzero. Returns the number of entries
/// compared.
fn compare_at(model: &mut Interpreter, label: &str, t: f64, x: &[f64]) -> usize {
    let n = x.len();
    let mut in_pattern = vec![vec![false; n]; n];
    for &(i, j) in model.jacobian_pattern() {
        in_pattern[i as usize][j as usize] = true;
    }
    let mut f = vec![0.0; n];
    let (mut fp, mut fm) = (vec![0.0; n], vec![0.0; n]);
    let mut seed = vec![0.0; n];
    let mut column = vec![0.0; n];
    let mut compared = 0;
    for j in 0..n {
        model.derivatives(t, x, &mut f).expect("derivatives");
        seed[j] = 1.0;
        model
            .jacobian_times(t, x, &seed, &mut column)
            .unwrap_or_else(|e| panic!("{label}: tangent program: {e}"));
        seed[j] = 0.0;
        let h = 1e-6 * x[j].abs().max(1.0);
        let mut xp = x.to_vec();
        xp[j] += h;
        model.derivatives(t, &xp, &mut fp).expect("derivatives");
        let mut xm = x.to_vec();
        xm[j] -= h;
        model.derivatives(t, &xm, &mut fm).expect("derivatives");
        for i in 0..n {
            let fd = (fp[i] - fm[i]) / (2.0 * h);
            let scale = 1.0 + fd.abs().max(column[i].abs()) + f[i].abs() / x[j].abs().max(1.0);
            assert!(
                (column[i] - fd).abs() <= 1e-5 * scale,
                "{label}: d der(x{i}) / d x{j}: symbolic {} against central difference {fd} at x = {x:?}",
                column[i]
            );
            if !in_pattern[i][j] {
                assert!(
                    column[i] == 0.0 && fd.abs() <= 1e-8 * scale,
                    "{label}: entry ({i}, {j}) = {} outside the structural pattern",
                    column[i]
                );
            }
            compared += 1;
        }
    }
    compared
}

/// Check the Jacobian at the initial point and at a perturbed one (away from special values
/// such as zero velocities).
fn check_model(file: &Path) -> usize {
    let label = file.display().to_string();
    let mut model = interpreter_for(file);
    let t0 = model.program.experiment.start_time.unwrap_or(0.0);
    model
        .initialize(t0)
        .unwrap_or_else(|e| panic!("{label}: {e}"));
    let n = model.n_states();
    let mut x = vec![0.0; n];
    model.states(&mut x);
    let mut compared = compare_at(&mut model, &label, t0, &x);
    let shifted: Vec<f64> = x
        .iter()
        .enumerate()
        .map(|(i, v)| v * 1.05 + 0.01 * (i as f64 + 1.0))
        .collect();
    compared += compare_at(&mut model, &label, t0, &shifted);
    compared
}

#[test]
fn every_example_has_a_symbolic_jacobian_that_matches_differences() {
    let dir = repo_root().join("examples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("examples folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "mo"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "examples found: {files:?}");
    for f in &files {
        assert!(check_model(f) > 0, "{}: nothing compared", f.display());
    }
}

#[test]
fn robertson_kinetics() {
    let file = write_model(
        "Robertson",
        r#"
model Robertson "Robertson's stiff chemical kinetics"
  Real y1(start = 1, fixed = true);
  Real y2(start = 0, fixed = true);
  Real y3(start = 0, fixed = true);
equation
  der(y1) = -0.04*y1 + 1e4*y2*y3;
  der(y2) = 0.04*y1 - 1e4*y2*y3 - 3e7*y2^2;
  der(y3) = 3e7*y2^2;
end Robertson;
"#,
    );
    assert_eq!(check_model(&file), 18);
}

#[test]
fn implicit_scalar_equation() {
    // y + exp(y) = x cannot be solved for y symbolically: a Newton block, differentiated as
    // dy = dx / (1 + exp(y)).
    let file = write_model(
        "ImplicitScalar",
        r#"
model ImplicitScalar
  Real x(start = 2, fixed = true);
  Real y;
equation
  y + exp(y) = x;
  der(x) = -y*x;
end ImplicitScalar;
"#,
    );
    assert_eq!(check_model(&file), 2);
}

#[test]
fn linear_and_nonlinear_loops() {
    // Two capacitors joined by a resistive network (a linear system in the node voltages) and
    // a diode-like exponential element in series with a resistor (a torn nonlinear loop).
    let file = write_model(
        "Loops",
        r#"
model Loops
  parameter Real C1 = 1e-3, C2 = 2e-3, R1 = 10, R2 = 20, R3 = 30, Is = 1e-9, Vt = 0.025, R4 = 5;
  Real v1(start = 1, fixed = true);
  Real v2(start = 0.2, fixed = true);
  Real u1, u2, i1, i2, i3;
  Real vd, id;
equation
  // linear network: u1, u2 node voltages between the capacitors
  i1 = (v1 - u1)/R1;
  i2 = (u1 - u2)/R2;
  i3 = (u2 - v2)/R3;
  i1 = i2 + u1/(R1 + R2);
  i2 = i3 + u2/(R2 + R3);
  C1*der(v1) = -i1;
  // nonlinear: the diode current through R4 charges C2
  id = Is*(exp(vd/Vt) - 1);
  v1 - vd = R4*id;
  C2*der(v2) = i3 + id*1e-3;
end Loops;
"#,
    );
    assert_eq!(check_model(&file), 8);
}

#[test]
fn translate_reports_the_jacobian_source() {
    let file = write_model(
        "Report",
        r#"
model Report
  Real x(start = 1, fixed = true);
  Real v(start = 0, fixed = true);
equation
  der(x) = v;
  der(v) = -sin(x) - 0.1*v*abs(v);
end Report;
"#,
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_moss"))
        .env_remove("MODELICAPATH")
        .arg("translate")
        .arg(&file)
        .output()
        .expect("runs moss");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("ODE Jacobian: 2x2, 3 structural nonzeros, symbolic"),
        "{text}"
    );
    assert!(text.contains("4 tangent;"), "{text}");
}
