//! Overconstrained connection loops end to end (spec 9.4): a `connect` that closes a loop of
//! overdetermined connectors gives `zeros(n) = equalityConstraint(a, b)`, whose residues are
//! implicit equations in the variables of `a` and `b`. They are solved with the rest of the
//! model, differentiated by index reduction when they constrain states, and a loop they
//! cannot close is reported, not a crash.
//!
//! The models: rotational flanges carry an overdetermined `Rotation` record whose
//! `equalityConstraint` returns `{sin(phi1 - phi2)}` (zero where the two angles agree, with
//! the regular slope `cos(0) = 1` there). A fixed root, springs `tau = c (phi_a - phi_b)`
//! (branches between their flanges) and inertias.

use crate::library_support;

use library_support::{assert_close, moss_command, scratch_dir, simulate_source};

/// The component library shared by the models, followed by the system `body` (its
/// components and connects) in a model `name`.
fn rotational_model(name: &str, body: &str) -> String {
    format!(
        r#"model {name}
  record Rotation "planar orientation; overdetermined: its loop residue is sin of the angle error"
    Real phi;
    function equalityConstraint
      input Rotation R1;
      input Rotation R2;
      output Real residue[1];
    algorithm
      residue := {{sin(R1.phi - R2.phi)}};
    end equalityConstraint;
  end Rotation;
  connector Flange
    Rotation R;
    flow Real tau;
  end Flange;
  model Fixed
    Flange f;
  equation
    Connections.root(f.R);
    f.R.phi = 0;
  end Fixed;
  model Spring
    Flange a, b;
    parameter Real c = 1;
  equation
    Connections.branch(a.R, b.R);
    a.tau = c*(a.R.phi - b.R.phi);
    a.tau + b.tau = 0;
  end Spring;
  model Inertia
    Flange a;
    parameter Real J = 1;
    Real phi;
    Real w;
  equation
    Connections.potentialRoot(a.R);
    phi = a.R.phi;
    w = der(phi);
    J*der(w) = a.tau;
  end Inertia;
{body}
end {name};
"#
    )
}

/// Two springs in parallel between the fixed root and one inertia: the second spring closes
/// a loop, and its residue decides how the torque splits between the springs.
fn parallel_springs() -> String {
    rotational_model(
        "ParallelSprings",
        "  Fixed fixed;
  Spring s1(c = 2), s2(c = 3);
  Inertia load(J = 0.5, phi(start = 0.5, fixed = true), w(start = 0, fixed = true));
equation
  connect(fixed.f, s1.a);
  connect(fixed.f, s2.a);
  connect(s1.b, load.a);
  connect(s2.b, load.a);",
    )
}

/// Two inertias, each on its own spring to the root, and a rigid connection between them
/// that closes the loop: the residue constrains the two angles, which are both states.
fn coupled_inertias() -> String {
    rotational_model(
        "CoupledInertias",
        "  Fixed fixed;
  Spring s1(c = 2), s2(c = 3);
  Inertia i1(J = 0.5, phi(start = 0.5, fixed = true), w(start = 0, fixed = true));
  Inertia i2(J = 1.5);
equation
  connect(fixed.f, s1.a);
  connect(fixed.f, s2.a);
  connect(s1.b, i1.a);
  connect(s2.b, i2.a);
  connect(i1.a, i2.a);",
    )
}

/// `moss <command> <file> <args>` on the source written to a scratch file:
/// (success, stdout, stderr).
fn run_moss(name: &str, source: &str, command: &str) -> (bool, String, String) {
    let dir = scratch_dir(name);
    let file = dir.join(format!("{name}.mo"));
    std::fs::write(&file, source)
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", file.display()));
    let out = moss_command()
        .current_dir(&dir)
        .arg(command)
        .arg(&file)
        .output()
        .expect("runs the moss binary");
    let _ = std::fs::remove_dir_all(&dir);
    // a crash of moss is never an acceptable answer, even for a model it rejects
    assert_ne!(out.status.code(), Some(101), "moss panicked on {name}");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The 1-based line of the connect that closes the loop of [`parallel_springs`].
fn closing_connect_line(source: &str) -> usize {
    source
        .lines()
        .position(|l| l.trim() == "connect(s2.b, load.a);")
        .map(|i| i + 1)
        .expect("the model has the loop-closing connect")
}

#[test]
fn loop_of_parallel_springs_translates() {
    let (ok, out, err) = run_moss("ParallelSprings", &parallel_springs(), "translate");
    assert!(ok, "translate failed:\n{out}{err}");
    // the residue is solved for the angle of the loop-closing spring's end: no state is
    // added or removed, and no index reduction is needed
    assert!(out.contains("index before reduction: 1"), "{out}");
    assert!(out.contains("load.phi") && out.contains("load.w"), "{out}");
}

#[test]
fn parallel_springs_share_the_torque_as_their_stiffnesses() {
    let run = simulate_source(
        "ParallelSprings",
        &parallel_springs(),
        &["--stop-time", "3", "--tolerance", "1e-8"],
    );
    // J phi'' = -(c1 + c2) phi with phi(0) = 0.5, w(0) = 0
    let (c1, c2, j) = (2.0, 3.0, 0.5);
    let omega = f64::sqrt((c1 + c2) / j);
    for (i, &t) in run.time().iter().enumerate().step_by(20) {
        let phi = 0.5 * (omega * t).cos();
        assert_close("load.phi", run.get("load.phi")[i], phi, 1e-5);
        // each spring carries the torque of its own stiffness (tau = c (0 - phi)), which
        // only holds when the residue closes the loop with equal angles
        assert_close("s1.a.tau", run.get("s1.a.tau")[i], -c1 * phi, 1e-4);
        assert_close("s2.a.tau", run.get("s2.a.tau")[i], -c2 * phi, 1e-4);
        assert_close("s2.b.R.phi", run.get("s2.b.R.phi")[i], phi, 1e-6);
    }
}

#[test]
fn residue_between_two_states_is_differentiated_by_index_reduction() {
    let (ok, out, err) = run_moss("CoupledInertias", &coupled_inertias(), "translate");
    assert!(ok, "translate failed:\n{out}{err}");
    // sin(phi1 - phi2) = 0 between two differentiated angles: index 3, reduced by
    // differentiating the inlined residue twice; one inertia keeps its states
    assert!(out.contains("index before reduction: 3"), "{out}");
    assert!(out.contains("states (2):"), "{out}");

    let run = simulate_source(
        "CoupledInertias",
        &coupled_inertias(),
        &["--stop-time", "3", "--tolerance", "1e-8"],
    );
    // the coupled inertias move as one: (J1 + J2) phi'' = -(c1 + c2) phi
    let omega = f64::sqrt((2.0 + 3.0) / (0.5 + 1.5));
    for (i, &t) in run.time().iter().enumerate().step_by(20) {
        let phi = 0.5 * (omega * t).cos();
        assert_close("i1.phi", run.get("i1.phi")[i], phi, 1e-5);
        assert_close("i2.phi", run.get("i2.phi")[i], phi, 1e-5);
        // each inertia takes the torque of its own acceleration (J phi''), while each spring
        // pushes by its own stiffness: the residue makes the rigid link carry the difference
        let accel = -omega * omega * phi;
        assert_close("i1.a.tau", run.get("i1.a.tau")[i], 0.5 * accel, 1e-4);
        assert_close("i2.a.tau", run.get("i2.a.tau")[i], 1.5 * accel, 1e-4);
        assert_close("s1.b.tau", run.get("s1.b.tau")[i], 2.0 * phi, 1e-4);
        assert_close("s2.b.tau", run.get("s2.b.tau")[i], 3.0 * phi, 1e-4);
    }
}

#[test]
fn rigid_loop_is_reported_at_the_closing_connect() {
    // springs made rigid (an offset instead of a compliance): both ends of the loop-closing
    // connect are already fixed, so the residue has nothing to determine
    let source = parallel_springs().replace(
        "    a.tau = c*(a.R.phi - b.R.phi);",
        "    b.R.phi = a.R.phi + c;",
    );
    let (ok, out, err) = run_moss("RigidLoop", &source, "translate");
    assert!(!ok, "a rigid loop must not translate:\n{out}");
    assert!(err.contains("structurally singular"), "{err}");
    assert!(
        err.contains("closes a loop of overdetermined connectors"),
        "{err}"
    );
    // located at the connect that closes the loop
    let at = format!("RigidLoop.mo:{}:3", closing_connect_line(&source));
    assert!(err.contains(&at), "{at} missing in {err}");
    assert!(err.contains("0 = sin(s2.b.R.phi - load.a.R.phi)"), "{err}");
}

#[test]
fn residue_function_that_cannot_be_inlined_is_a_clear_error() {
    // a while loop makes the residue opaque: it cannot be solved for the angles
    let source = parallel_springs().replace(
        "      residue := {sin(R1.phi - R2.phi)};",
        "      residue := {R1.phi - R2.phi};
      while abs(residue[1]) > 3.15 loop
        residue := {residue[1] - 6.28};
      end while;",
    );
    let (ok, out, err) = run_moss("OpaqueResidue", &source, "translate");
    assert!(!ok, "an opaque residue must not translate:\n{out}");
    assert!(
        err.contains("cannot solve this equation for the arguments of `ParallelSprings.Rotation.equalityConstraint`"),
        "{err}"
    );
    let at = format!("OpaqueResidue.mo:{}:3", closing_connect_line(&source));
    assert!(err.contains(&at), "{at} missing in {err}");
}

/// Residue functions written by users outside connection graphs: `{0, 0} = f(x)`,
/// `zeros(2) = f(x)` and a residue inside an expression (bound to an auxiliary array by the
/// frontend). The body has a protected array, a scalar product and an unrolled for loop.
const CIRCLE: &str = r#"model Circle "a point on the unit circle and on a line turning with time"
  function residues
    input Real p[2];
    input Real angle;
    output Real r[2];
  protected
    Real normal[2];
  algorithm
    normal := {-sin(angle), cos(angle)};
    r[1] := p*p - 1;
    for i in 2:2 loop
      r[i] := normal*p;
    end for;
  end residues;
  Real x(start = 1), y(start = 0);
  Real u(start = 1), v(start = 0);
  Real a(start = 1), b(start = 0);
equation
  {0, 0} = residues({x, y}, time);
  {0, 0} = -2*residues({u, v}, time);
  zeros(2) = residues({a, b}, 0.5*time);
end Circle;
"#;

#[test]
fn residue_equations_written_by_users_are_solved_for_their_arguments() {
    let run = simulate_source("Circle", CIRCLE, &["--stop-time", "1"]);
    for (i, &t) in run.time().iter().enumerate().step_by(25) {
        let at = |name: &str| run.get(name)[i];
        for (px, py, angle) in [("x", "y", t), ("u", "v", t), ("a", "b", 0.5 * t)] {
            assert_close(px, at(px), angle.cos(), 1e-7);
            assert_close(py, at(py), angle.sin(), 1e-7);
        }
    }
}

/// A residue between orientations given as rotation matrices, one of them returned by a
/// function (its matrix output is passed whole to the residue function): rows of the
/// matrices, scalar products, and an unknown angle found from the residue.
const MATRIX_RESIDUE: &str = r#"model MatrixResidue "find the angle whose rotation matrix matches a turning one"
  record Orientation
    Real T[2, 2];
    function equalityConstraint
      input Orientation R1;
      input Orientation R2;
      output Real residue[1];
    algorithm
      // first row of R1 against the second row of R2: sin(phi1 - phi2)
      residue := {R1.T[1, :]*R2.T[2, :]};
    end equalityConstraint;
  end Orientation;
  function planar
    input Real phi;
    output Orientation R;
  algorithm
    R := Orientation(T = [cos(phi), sin(phi); -sin(phi), cos(phi)]);
  end planar;
  Real x(start = 0.1);
equation
  {0} = Orientation.equalityConstraint(planar(0.5*time), planar(x));
end MatrixResidue;
"#;

#[test]
fn residue_of_rotation_matrices_from_a_function_is_solved() {
    let run = simulate_source("MatrixResidue", MATRIX_RESIDUE, &["--stop-time", "2"]);
    for (i, &t) in run.time().iter().enumerate().step_by(25) {
        assert_close("x", run.get("x")[i], 0.5 * t, 1e-7);
    }
}

/// The parallel springs, each fixed to its own root: the part of the graph has two definite
/// roots, so the connect that would join their trees is broken and gives the residue
/// (spec 9.4.2); the motion is that of the single-root model.
#[test]
fn two_roots_split_the_graph_and_the_breaking_connect_gives_the_residue() {
    let source = rotational_model(
        "TwoRoots",
        "  Fixed fixed1, fixed2;
  Spring s1(c = 2), s2(c = 3);
  Inertia load(J = 0.5, phi(start = 0.5, fixed = true), w(start = 0, fixed = true));
equation
  connect(fixed1.f, s1.a);
  connect(fixed2.f, s2.a);
  connect(s1.b, load.a);
  connect(s2.b, load.a);",
    );
    let run = simulate_source(
        "TwoRoots",
        &source,
        &["--stop-time", "3", "--tolerance", "1e-8"],
    );
    let omega = f64::sqrt((2.0 + 3.0) / 0.5);
    for (i, &t) in run.time().iter().enumerate().step_by(20) {
        let phi = 0.5 * (omega * t).cos();
        assert_close("load.phi", run.get("load.phi")[i], phi, 1e-5);
        assert_close("s2.a.tau", run.get("s2.a.tau")[i], -3.0 * phi, 1e-4);
        assert_close("fixed2.f.tau", run.get("fixed2.f.tau")[i], 3.0 * phi, 1e-4);
    }
}
