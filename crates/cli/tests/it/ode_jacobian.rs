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

/// Translate a model (file or class name) with the bundled library, and MODELICAPATH when
/// `modelicapath` is set.
fn try_interpreter_for(model: &str, modelicapath: bool) -> Result<Interpreter, String> {
    let opts = LoadOptions {
        libs: vec![],
        use_modelicapath: modelicapath,
        use_bundled: true,
    };
    let flat = match flatten_model(&opts, model) {
        Ok(f) => f.model,
        Err(_) => return Err(format!("{model} does not flatten")),
    };
    let program =
        moss_symbolic::translate(&flat).map_err(|_| format!("{model} does not translate"))?;
    if let JacobianSource::FiniteDifferences(why) = &program.report.jacobian {
        return Err(format!("{model}: no symbolic ODE Jacobian: {why}"));
    }
    Interpreter::new(program).map_err(|e| format!("{model}: {e}"))
}

/// Translate a model file (its last class) with the bundled library only.
fn interpreter_for(file: &Path) -> Interpreter {
    try_interpreter_for(&file.to_string_lossy(), false).unwrap_or_else(|e| panic!("{e}"))
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
fn try_compare_at(
    model: &mut Interpreter,
    label: &str,
    t: f64,
    x: &[f64],
) -> Result<usize, String> {
    let n = x.len();
    let mut in_pattern = vec![vec![false; n]; n];
    for &(i, j) in model.jacobian_pattern() {
        in_pattern[i as usize][j as usize] = true;
    }
    let rt = |e: moss_codegen::RuntimeError| format!("{label}: {e}");
    let mut f = vec![0.0; n];
    let mut seed = vec![0.0; n];
    let mut column = vec![0.0; n];
    let mut compared = 0;
    for j in 0..n {
        model.derivatives(t, x, &mut f).map_err(rt)?;
        seed[j] = 1.0;
        model
            .jacobian_times(t, x, &seed, &mut column)
            .map_err(|e| {
                format!("{label}: the tangent program declines (differences instead): {e}")
            })?;
        seed[j] = 0.0;
        let h = 1e-6 * x[j].abs().max(1.0);
        let (fp, fm) = perturbed(model, t, x, j, h).map_err(rt)?;
        for i in 0..n {
            let fd = (fp[i] - fm[i]) / (2.0 * h);
            let scale = 1.0 + fd.abs().max(column[i].abs()) + f[i].abs() / x[j].abs().max(1.0);
            let slopes = Slopes::at(h, f[i], fp[i], fm[i]);
            let disagrees = !slopes.admit(column[i], scale)
                && !agrees_with_shorter_steps(model, t, x, (i, j), h, (f[i], column[i]), scale)
                    .map_err(rt)?;
            let outside = !in_pattern[i][j] && (column[i] != 0.0 || fd.abs() > 1e-8 * scale);
            if (disagrees || outside) && column[i].is_finite() {
                if let Some(jump) =
                    value_jump(model, t, x, (i, j), h, (f[i], column[i])).map_err(rt)?
                {
                    return Err(format!(
                        "{label}: der(x{i}) jumps by {jump:e} between points {h:e} apart in x{j} (the tolerance of a torn loop's solve): not compared"
                    ));
                }
            }
            if disagrees {
                return Err(format!(
                    "{label}: d der(x{i}) / d x{j}: symbolic {} against central difference {fd} (forward {}, backward {}) at x = {x:?}",
                    column[i], slopes.forward, slopes.backward
                ));
            }
            if outside {
                return Err(format!(
                    "{label}: entry ({i}, {j}) = {} (difference {fd}) outside the structural pattern",
                    column[i]
                ));
            }
            compared += 1;
        }
    }
    Ok(compared)
}

/// The difference quotients of one entry with step `h`.
struct Slopes {
    central: f64,
    forward: f64,
    backward: f64,
}

impl Slopes {
    fn at(h: f64, f: f64, fp: f64, fm: f64) -> Slopes {
        Slopes {
            central: (fp - fm) / (2.0 * h),
            forward: (fp - f) / h,
            backward: (f - fm) / h,
        }
    }

    /// Whether `symbolic` is the derivative these quotients measure: the central one, or
    /// at a kink (a saturation limit reached exactly, inside noEvent), where the central
    /// difference straddles two branches, one of the one-sided slopes.
    fn admit(&self, symbolic: f64, scale: f64) -> bool {
        let jump = (self.forward - self.backward).abs();
        let kink = jump > 1e-3 * self.forward.abs().max(self.backward.abs()) && jump > 1e-5 * scale;
        let one_sided = |s: f64| (symbolic - s).abs() <= 1e-4 * (1.0 + s.abs());
        (symbolic - self.central).abs() <= 1e-5 * scale
            || kink && (one_sided(self.forward) || one_sided(self.backward))
    }
}

/// `f(x + h e_j)` and `f(x - h e_j)`.
fn perturbed(
    model: &mut Interpreter,
    t: f64,
    x: &[f64],
    j: usize,
    h: f64,
) -> Result<(Vec<f64>, Vec<f64>), moss_codegen::RuntimeError> {
    let n = x.len();
    let (mut fp, mut fm) = (vec![0.0; n], vec![0.0; n]);
    let mut xp = x.to_vec();
    xp[j] += h;
    model.derivatives(t, &xp, &mut fp)?;
    xp[j] = x[j] - h;
    model.derivatives(t, &xp, &mut fm)?;
    Ok((fp, fm))
}

/// Differences with steps 100 and 10,000 times shorter: a smooth function whose curvature
/// lives on a scale below the first step (the MSL's pipe friction regularizes zero flow
/// over a third of a pascal; the first step of a pressure state is 0.1 Pa) agrees with its
/// derivative only as the step shrinks.
fn agrees_with_shorter_steps(
    model: &mut Interpreter,
    t: f64,
    x: &[f64],
    (i, j): (usize, usize),
    h: f64,
    (f, symbolic): (f64, f64),
    scale: f64,
) -> Result<bool, moss_codegen::RuntimeError> {
    for shorter in [h * 1e-2, h * 1e-4] {
        let (fp, fm) = perturbed(model, t, x, j, shorter)?;
        if Slopes::at(shorter, f, fp[i], fm[i]).admit(symbolic, scale) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The size of a jump in `f_i` next to `x` that does not shrink with the step (a Taylor
/// remainder would, as the square of the step): values computed by a torn loop's iteration
/// carry the loop's tolerance, and differences over short steps magnify it. `None` when
/// the remainder shrinks, or the jump is too large to be such noise.
fn value_jump(
    model: &mut Interpreter,
    t: f64,
    x: &[f64],
    (i, j): (usize, usize),
    h: f64,
    (f, symbolic): (f64, f64),
) -> Result<Option<f64>, moss_codegen::RuntimeError> {
    let mut remainders = Vec::new();
    for step in [h, h * 1e-2] {
        let (fp, fm) = perturbed(model, t, x, j, step)?;
        let ahead = (fp[i] - f - step * symbolic).abs();
        let behind = (f - fm[i] - step * symbolic).abs();
        remainders.push(ahead.max(behind));
    }
    let (long, short) = (remainders[0], remainders[1]);
    let noise = short > 0.1 * long && short <= 1e-6 * (1.0 + f.abs());
    Ok(noise.then_some(short))
}

/// Check the Jacobian at the initial point and at a perturbed one (away from special values
/// such as zero velocities).
fn check_model(file: &Path) -> usize {
    let mut model = interpreter_for(file);
    check_interpreter(&mut model, &file.display().to_string()).unwrap_or_else(|e| panic!("{e}"))
}

fn check_interpreter(model: &mut Interpreter, label: &str) -> Result<usize, String> {
    let t0 = model.program.experiment.start_time.unwrap_or(0.0);
    model.initialize(t0).map_err(|e| format!("{label}: {e}"))?;
    let n = model.n_states();
    let mut x = vec![0.0; n];
    model.states(&mut x);
    let mut compared =
        try_compare_at(model, label, t0, &x).map_err(|e| outside_domain(label, "initial", e))?;
    let shifted: Vec<f64> = x
        .iter()
        .enumerate()
        .map(|(i, v)| v * 1.05 + 0.01 * (i as f64 + 1.0))
        .collect();
    compared += try_compare_at(model, label, t0, &shifted)
        .map_err(|e| outside_domain(label, "shifted", e))?;
    Ok(compared)
}

/// A point may lie on the edge of the model's domain (a tank filled to its rim) or beyond
/// it (the shifted point): a difference step there fails the model's assertions, and the
/// point is not compared, saying so.
fn outside_domain(label: &str, point: &str, e: String) -> String {
    if e.contains("assertion failed") && !e.contains("declines") {
        format!(
            "{label}: the {point} point is at or outside the model's domain, not compared ({e})"
        )
    } else {
        e
    }
}

/// Local check against a real library (not run in CI): the models named one per line in the
/// file `MOSS_JACOBIAN_MODELS`, loaded through MODELICAPATH, e.g.
/// `MODELICAPATH=/path/to/msl MOSS_JACOBIAN_MODELS=models.txt cargo test -p moss-cli --test it
/// ode_jacobian -- --ignored --nocapture`. Prints one line per model and fails if any
/// symbolic Jacobian disagrees with differences.
#[test]
#[ignore]
fn library_models_listed_in_the_environment() {
    let Ok(list) = std::env::var("MOSS_JACOBIAN_MODELS") else {
        return;
    };
    let text = std::fs::read_to_string(&list).expect("reads the model list");
    let mut disagreements = Vec::new();
    for name in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let outcome =
            try_interpreter_for(name, true).and_then(|mut m| check_interpreter(&mut m, name));
        match outcome {
            Ok(n) => println!("ok   {name}: {n} entries"),
            Err(e)
                if e.contains("no symbolic ODE Jacobian")
                    || e.contains("does not")
                    || e.contains("declines")
                    || e.contains("outside the model's domain")
                    || e.contains("not compared") =>
            {
                println!("skip {e}")
            }
            Err(e) => {
                println!("FAIL {e}");
                disagreements.push(e);
            }
        }
    }
    assert!(disagreements.is_empty(), "{disagreements:#?}");
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

/// The state index of `name`.
fn state_index(model: &Interpreter, name: &str) -> usize {
    let p = &model.program;
    p.states
        .iter()
        .position(|&v| p.vars[v as usize].name == name)
        .unwrap_or_else(|| panic!("`{name}` is not a state"))
}

/// A torn loop that is singular where the tangent program runs (`w*a = w*b + w^2*x` at
/// `w = 0`, consistent for any `a`): the value solve keeps `a` where it was, so the
/// derivative of `a` is zero there (the tangent program starts its loop unknowns from
/// zero), not what the last regular run left in its tangent slot.
#[test]
fn a_loop_singular_at_the_point_has_zero_tangents_for_its_kept_unknowns() {
    let file = write_model(
        "SingularLoop",
        "model SingularLoop
           Real w(start = 0, fixed = true);
           Real x(start = 1, fixed = true);
           Real a, b;
         equation
           der(w) = 1;
           a + b = x;
           w*a = w*b + w^2*x;
           der(x) = -a;
         end SingularLoop;",
    );
    let mut model = interpreter_for(&file);
    // regular at w = 0.5: a = (1 + w) x / 2
    let regular = dx_dx_at_w(&mut model, 0.5).expect("regular");
    assert!((regular + 0.75).abs() < 1e-12, "{regular}");
    let kept = dx_dx_at_w(&mut model, 0.0).expect("consistent");
    assert_eq!(kept, 0.0, "the kept unknown has no derivative");
}

/// The tangent program runs, per seed pattern, only the steps that depend on its seeds
/// (`tangent_slices`): products with a colour of independent columns are the sums of the
/// columns, and a column computed after others is what it is computed alone (the tangents
/// that a run leaves behind are cleared, so a later slice that skips their steps reads
/// zeros). Two chains of springs and masses and a loop coupling the ends of both.
#[test]
fn seeds_of_a_colour_run_their_own_slice_of_the_tangent_program() {
    let file = write_model(
        "TwoChains",
        "model TwoChains
           parameter Integer n = 4;
           Real x[n](each start = 0.3, each fixed = true), y[n](each start = -0.2, each fixed = true);
           Real u[n](each start = 0.1, each fixed = true), v[n](each start = 0.05, each fixed = true);
           Real c;
         equation
           for i in 1:n loop
             der(x[i]) = u[i];
             der(y[i]) = v[i];
             der(u[i]) = -sin(x[i]) * (if i > 1 then x[i - 1] else 1) - 0.1 * u[i]^3;
             der(v[i]) = -y[i]^3 + (if i < n then y[i + 1] else c);
           end for;
           c + 0.5 * sin(c) = x[n] * y[1];
         end TwoChains;",
    );
    let mut model = interpreter_for(&file);
    model.initialize(0.0).expect("initializes");
    let n = model.n_states();
    let at: Vec<f64> = (0..n).map(|k| 0.1 + 0.05 * k as f64).collect();
    let column = |model: &mut Interpreter, seeds: &[usize]| {
        let mut seed = vec![0.0; n];
        for &j in seeds {
            seed[j] = 1.0;
        }
        let mut out = vec![0.0; n];
        model
            .jacobian_times(0.0, &at, &seed, &mut out)
            .expect("tangent run");
        out
    };
    let forward: Vec<Vec<f64>> = (0..n).map(|j| column(&mut model, &[j])).collect();
    let backward: Vec<Vec<f64>> = (0..n).rev().map(|j| column(&mut model, &[j])).collect();
    for j in 0..n {
        assert_eq!(
            forward[j],
            backward[n - 1 - j],
            "column {j} depends on the order of runs"
        );
        assert!(forward[j].iter().any(|&v| v != 0.0), "column {j} is zero");
    }
    // every state with the x of another chain position: columns without a common row
    let (x1, x3) = (state_index(&model, "x[1]"), state_index(&model, "x[3]"));
    let (y2, y4) = (state_index(&model, "y[2]"), state_index(&model, "y[4]"));
    let group = [x1, x3, y2];
    let together = column(&mut model, &group);
    for r in 0..n {
        let sum: f64 = group.iter().map(|&j| forward[j][r]).sum();
        assert_eq!(together[r], sum, "row {r} of the colour's product");
    }
    // and a single column again after the group
    assert_eq!(column(&mut model, &[y4]), forward[y4]);
}

/// d der(x) / d x from the tangent program at `w` and `x = 1` (the models above).
fn dx_dx_at_w(model: &mut Interpreter, w: f64) -> Result<f64, moss_codegen::RuntimeError> {
    model.initialize(0.0).expect("initializes");
    let (iw, ix) = (state_index(model, "w"), state_index(model, "x"));
    let (mut at, mut seed, mut out) = (vec![0.0; 2], vec![0.0; 2], vec![0.0; 2]);
    seed[ix] = 1.0;
    (at[iw], at[ix]) = (w, 1.0);
    model.jacobian_times(0.0, &at, &seed, &mut out)?;
    Ok(out[ix])
}

/// Where the tangent's linear system is not finite (`d sqrt(w)/dw` at `w = 0`) the tangent
/// program declines (a solve that passed over the NaN row gave the machines' field
/// weakening controller a Jacobian 10 % off); the integrator then takes differences.
#[test]
fn a_tangent_system_that_is_not_finite_declines() {
    let file = write_model(
        "RootLoop",
        "model RootLoop
           Real w(start = 0, fixed = true);
           Real x(start = 1, fixed = true);
           Real a, b;
         equation
           der(w) = 1;
           a + b = x;
           sqrt(w)*a = sqrt(w)*(b + x);
           der(x) = -a;
         end RootLoop;",
    );
    let mut model = interpreter_for(&file);
    // regular at w = 0.5: a = x
    let regular = dx_dx_at_w(&mut model, 0.5).expect("regular");
    assert!((regular + 1.0).abs() < 1e-12, "{regular}");
    let declined = dx_dx_at_w(&mut model, 0.0).expect_err("declines");
    assert!(
        declined.message.contains("singular linear system"),
        "{declined}"
    );
}

/// A torn loop whose Jacobian is too large to write out (2,000 terms) is solved in the
/// tangent program with a difference Jacobian, one step from its start: started from the
/// previous column's solution it left roundoff where the column has no entry (`der(x2)`
/// does not depend on `x1`); started from zero the column is exact.
#[test]
fn tangent_loops_without_a_symbolic_jacobian_start_from_zero() {
    let file = write_model(
        "LargeLoop",
        "model LargeLoop
           Real x1(start = 1, fixed = true);
           Real x2(start = 0.5, fixed = true);
           Real v, i;
         equation
           i = sum(sin(k*v)*exp(v/k)/k^3 for k in 1:2000);
           v + i = x2;
           der(x1) = -x1;
           der(x2) = -i;
         end LargeLoop;",
    );
    assert!(check_model(&file) > 0);
}

/// An algorithm section computing continuous variables from the states is differentiated
/// as a function of what it reads (Spice3's semiconductor resistor computes its current in
/// one): branches, a `while` loop, outputs that only parameters feed, an output read after
/// it is assigned.
#[test]
fn algorithm_sections_are_differentiated_as_functions() {
    let file = write_model(
        "SectionModel",
        "model SectionModel
           parameter Real R = 2;
           Real x(start = 1, fixed = true);
           Real y(start = 0.5, fixed = true);
           Real g, i, s;
           Integer k;
         algorithm
           g := 1/R;
           i := g*x;
           if x > y then
             i := i + 0.1*(x - y)^2;
           else
             i := i - 0.2*y*x;
           end if;
           s := 0;
           k := 0;
           while k < 3 loop
             k := k + 1;
             s := s + y^k/k;
           end while;
           s := s*i;
         equation
           der(x) = -i - s;
           der(y) = x - y*s;
         end SectionModel;",
    );
    // both need a symbolic Jacobian; at the start x > y, and at the shifted point of
    // `check_model` too
    assert!(check_model(&file) > 0);
    let mut model = interpreter_for(&file);
    model.initialize(0.0).expect("initializes");
    let (ix, iy) = (state_index(&model, "x"), state_index(&model, "y"));
    let mut at = vec![0.0; 2];
    (at[ix], at[iy]) = (0.3, 0.9);
    assert_eq!(
        try_compare_at(&mut model, "the other branch", 0.0, &at),
        Ok(4)
    );
}

/// A section that a function cannot be keeps finite differences, and the report says why.
#[test]
fn an_algorithm_reading_time_keeps_differences_and_says_why() {
    let file = write_model(
        "TimedSection",
        "model TimedSection
           Real x(start = 1, fixed = true);
           Real i;
         algorithm
           i := x*(1 + time);
         equation
           der(x) = -i;
         end TimedSection;",
    );
    let why = finite_difference_reason(&file);
    assert!(
        why.contains("an algorithm section (it has `time`)"),
        "{why}"
    );
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

/// Torn linear loops become linear systems of the tangent program: one with a matrix of
/// parameters, one whose matrix follows the state `x`. Their factors are kept while the
/// matrix inputs keep their values (every column of one Jacobian, and the parameter matrix
/// for good) and computed anew when `x` moves: the columns must agree with differences at
/// two points, with the kept factors used on the way.
#[test]
fn kept_factors_of_tangent_linear_systems_follow_their_inputs() {
    let file = write_model(
        "KeptMatrices",
        r#"
model KeptMatrices
  parameter Real a = 4, b = 1, c = 3;
  Real x(start = 1, fixed = true);
  Real w(start = 0.5, fixed = true);
  Real y1, y2, y3, z1, z2;
equation
  a*y1 + b*y2 + y3 = x;
  b*y1 + c*y2 + y3 = 2*x*w;
  y1 + y2 + a*y3 = sin(10*time);
  (2 + x^2)*z1 + z2 = w;
  z1 + (3 + exp(x))*z2 = cos(time);
  der(x) = -y1 - y2 - y3 + 0.1*z1 - z2;
  der(w) = y1*z2 - w;
end KeptMatrices;
"#,
    );
    let mut model = interpreter_for(&file);
    assert_eq!(check_interpreter(&mut model, "KeptMatrices"), Ok(8));
    assert!(
        model.stats().kept_matrix_solves > 0,
        "no kept factors used: {:?}",
        model.stats()
    );
}

/// Why the ODE Jacobian of the model in `file` uses finite differences (panics when it is
/// symbolic).
fn finite_difference_reason(file: &Path) -> String {
    let opts = LoadOptions {
        libs: vec![],
        use_modelicapath: false,
        use_bundled: true,
    };
    let flat = flatten_model(&opts, &file.to_string_lossy()).expect("flattens");
    let program = moss_symbolic::translate(&flat.model).expect("translates");
    match program.report.jacobian {
        JacobianSource::FiniteDifferences(why) => why,
        _ => panic!("{}: a symbolic Jacobian", file.display()),
    }
}

/// A pump curve as `Modelica.Fluid`'s `quadraticFlow` computes it: the parabola through
/// three nominal points, fitted with LAPACK's `dgesv` (an external function, which has no
/// derivative) from the nominal arrays. `HEAD_NOMINAL` is the third argument of the call.
fn pump_curve_model(name: &str, head_nominal: &str) -> String {
    format!(
        r#"
model {name}
  function dgesv_vec
    input Real A[:, size(A, 1)];
    input Real b[size(A, 1)];
    output Real x[size(A, 1)] = b;
    output Integer info;
  protected
    Integer n = size(A, 1);
    Integer nrhs = 1;
    Real Awork[size(A, 1), size(A, 1)] = A;
    Integer lda = max(1, size(A, 1));
    Integer ldb = max(1, size(b, 1));
    Integer ipiv[size(A, 1)];
  external "FORTRAN 77" dgesv(n, nrhs, Awork, lda, ipiv, x, ldb, info);
  end dgesv_vec;
  function head "The parabola through (V_flow_nominal[i], head_nominal[i])"
    input Real V_flow;
    input Real V_flow_nominal[3];
    input Real head_nominal[3];
    output Real head;
  protected
    Real c[3];
    Integer info;
  algorithm
    (c, info) := dgesv_vec([ones(3), V_flow_nominal, V_flow_nominal .^ 2], head_nominal);
    head := c[1] + V_flow*(c[2] + V_flow*c[3]);
  end head;
  parameter Real Vn[3] = {{0, 1, 1.5}};
  Real V(start = 0.5, fixed = true);
  Real h(start = 1, fixed = true);
equation
  der(V) = head(V, Vn, {head_nominal}) - h;
  der(h) = 2*V - 0.1*h;
end {name};
"#
    )
}

#[test]
fn functions_calling_external_code_on_constant_inputs_are_differentiated() {
    // the nominal arrays are a parameter and a literal: the fit is constant, the derivative
    // of the call is (c[2] + 2 V c[3]) dV, and the ODE Jacobian is symbolic
    let file = write_model("PumpCurve", &pump_curve_model("PumpCurve", "{10, 5, 0}"));
    assert_eq!(check_model(&file), 4 * 2);
}

#[test]
fn functions_calling_external_code_on_varying_inputs_fall_back_to_differences() {
    // the head points move with the state `h`: the call's derivative along them is unknown,
    // so the Jacobian says why it uses finite differences instead of dropping that term
    let file = write_model(
        "PumpCurveVarying",
        &pump_curve_model("PumpCurveVarying", "{10, 5, 0}*h"),
    );
    // (a symbolic one would ignore d head / d h)
    let why = finite_difference_reason(&file);
    assert_eq!(
        why,
        "function `PumpCurveVarying.head` has no derivative with respect to its argument 3 \
         (its algorithm passes it to a function that has none)"
    );
}

#[test]
fn calls_with_array_outputs_get_one_derivative_unit() {
    // `{y[1], y[2]} = rotated(...)`: the unit's outputs are the elements of one array
    // output (as `Frames.axesRotationsAngles` in the MultiBody sensors), not one per output
    let file = write_model(
        "ArrayOutputCall",
        r#"
model ArrayOutputCall
  function rotated "r rotated by phi, written as a loop so that it stays a call"
    input Real phi;
    input Real r[2];
    input Integer sequence[2] = {1, 2};
    output Real y[2];
  protected
    Real c = cos(phi);
    Real s = sin(phi);
  algorithm
    assert(sequence[1] <> sequence[2], "sequence must name two axes");
    if abs(phi) < 1e-12 then
      y := r;
    else
      for k in 1:2 loop
        y[sequence[k]] := if k == 1 then c*r[1] - s*r[2] else s*r[1] + c*r[2];
      end for;
    end if;
  end rotated;
  Real phi(start = 0.3, fixed = true);
  Real w(start = 1, fixed = true);
  parameter Integer seq[2] = {1, 2};
  Real y[2];
equation
  y = rotated(phi, {w, 2*w}, seq);
  der(phi) = w;
  der(w) = -y[1] - 0.1*y[2];
end ArrayOutputCall;
"#,
    );
    assert_eq!(check_model(&file), 8);
}

#[test]
fn vectorized_calls_inside_functions_are_differentiated_element_by_element() {
    // `m := blend(x, a, b)` over vectors (the media's `setSmoothState` calls `smoothStep`
    // so): the derivative loops over the elements with the scalar derivative function
    let file = write_model(
        "VectorizedCall",
        r#"
model VectorizedCall
  function blend "between y1 and y2 as x goes from 0 to 1"
    input Real x;
    input Real y1;
    input Real y2;
    output Real y;
  algorithm
    y := y1 + x^2*(y2 - y1);
  end blend;
  function blendAll "blend applied to vectors: a vectorized call"
    input Real x;
    input Real a[2];
    input Real b[2];
    output Real m[2];
  algorithm
    m := blend(x, a, b);
  end blendAll;
  Real x(start = 0.5, fixed = true);
  Real z(start = 1, fixed = true);
  Real m[2];
equation
  m = blendAll(x, {z, 2*z}, {3*z, x});
  der(x) = -m[1];
  der(z) = -0.5*m[2];
end VectorizedCall;
"#,
    );
    assert_eq!(check_model(&file), 8);
}

#[test]
fn a_derivative_that_is_a_state_depends_on_itself() {
    // `der(x)` is a state after index reduction (`der(der(x))` appears): its row of the
    // pattern holds its own column (the MultiBody `PrismaticConstraint` missed it)
    let file = write_model(
        "DerivativeState",
        r#"
model DerivativeState
  Real x(start = 1, fixed = true);
  Real v(start = 0, fixed = true);
  Real a;
equation
  a = der(der(x));
  der(x) = v;
  a = -x - 0.1*der(x);
end DerivativeState;
"#,
    );
    assert_eq!(check_model(&file), 8);
}

#[test]
fn a_missing_derivative_says_which_call_lacks_one() {
    // `q(V)` solves with LAPACK (an external function, no derivative) along its varying
    // input: the report names the external function behind the missing derivative
    let source = pump_curve_model("SolveOfState", "{10, 5, 0}").replace(
        "  parameter Real Vn[3]",
        r#"  function q
    input Real x;
    output Real y;
  protected
    Real c[2];
    Integer info;
  algorithm
    (c, info) := dgesv_vec([2, 0; 0, 1], {x, 1});
    y := c[1];
  end q;
  parameter Real Vn[3]"#,
    );
    let source = source.replace("der(h) = 2*V - 0.1*h;", "der(h) = q(V) - 0.1*h;");
    let file = write_model("SolveOfState", &source);
    let why = finite_difference_reason(&file);
    assert_eq!(
        why,
        "function `SolveOfState.q` has no derivative (function `SolveOfState.dgesv_vec` has \
         no derivative: `SolveOfState.dgesv_vec` is an external function)"
    );
}
