//! Locating an event evaluates the zero crossings at many points between two steps; there
//! only the blocks the crossings read run (`CausalProgram::zero_crossing_blocks`).

use moss_codegen::{ExecutableModel, Interpreter};
use moss_frontend::api::{flatten_model, LoadOptions};
use std::path::PathBuf;

fn write_model(name: &str, source: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("moss-zc-blocks-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("creates the scratch folder");
    let file = dir.join(format!("{name}.mo"));
    std::fs::write(&file, source).expect("writes the model");
    file
}

fn program_of(file: &std::path::Path) -> moss_symbolic::CausalProgram {
    let opts = LoadOptions {
        libs: vec![],
        use_modelicapath: false,
        use_bundled: true,
    };
    let flat = flatten_model(&opts, &file.to_string_lossy())
        .expect("flattens")
        .model;
    moss_symbolic::translate(&flat).expect("translates")
}

/// A switch on `b` (two blocks from the states) in a model of more blocks: the crossings
/// need those two only; their values at a new point are those a whole evaluation gives,
/// and the variables they do not need are computed again by the next evaluation at the
/// same point, not left from the crossings' partial one.
const SOURCE: &str = "model Switched
  Real x(start = 1, fixed = true);
  Real y(start = 0, fixed = true);
  Real a, b, c, d, e, f, w;
equation
  a = sin(y) + x;
  b = a^2 + y;
  c = 2*b + cos(x);
  d = c + a*exp(-y);
  e = d*d - c;
  f = e + sqrt(1 + d^2);
  w = if b > 2 then 1 else -1;
  der(x) = -0.5*x + w;
  der(y) = f - y;
end Switched;";

#[test]
fn the_crossings_run_only_the_blocks_they_read() {
    let file = write_model("Switched", SOURCE);
    let program = program_of(&file);
    let slice = program
        .zero_crossing_blocks
        .clone()
        .expect("computed by the translation");
    assert!(
        !slice.is_empty() && 2 * slice.len() <= program.blocks.len(),
        "{} of {} blocks",
        slice.len(),
        program.blocks.len()
    );
    let slot = |name: &str| program.var_by_name(name).expect("a variable") as usize;
    let (b, f) = (slot("b"), slot("f"));

    let mut model = Interpreter::new(program.clone()).expect("compiles");
    model.initialize(0.0).expect("initializes");
    let mut whole = Interpreter::new(program).expect("compiles");
    whole.initialize(0.0).expect("initializes");

    let (mut g, mut g_whole, mut dx) = ([0.0], [0.0], [0.0; 2]);
    for point in [[1.3, 0.4], [0.7, -0.2], [2.0, 1.1]] {
        model
            .zero_crossings(0.5, &point, &mut g)
            .expect("crossings");
        whole
            .derivatives(0.5, &point, &mut dx)
            .expect("derivatives");
        whole
            .zero_crossings(0.5, &point, &mut g_whole)
            .expect("crossings");
        assert_eq!(g, g_whole, "at {point:?}");
        assert_eq!(model.values()[b], whole.values()[b], "b at {point:?}");
        // `f` is not needed by the crossing: the next evaluation at this point computes it,
        // the Jacobian's too
        let (mut column, mut column_whole) = ([0.0; 2], [0.0; 2]);
        model
            .zero_crossings(0.5, &point, &mut g)
            .expect("crossings");
        model
            .jacobian_times(0.5, &point, &[0.0, 1.0], &mut column)
            .expect("tangent");
        whole
            .jacobian_times(0.5, &point, &[0.0, 1.0], &mut column_whole)
            .expect("tangent");
        assert_eq!(column, column_whole, "at {point:?}");
        model
            .zero_crossings(0.5, &point, &mut g)
            .expect("crossings");
        let mut dx_model = [0.0; 2];
        model
            .derivatives(0.5, &point, &mut dx_model)
            .expect("derivatives");
        assert_eq!(dx_model, dx, "at {point:?}");
        assert_eq!(model.values()[f], whole.values()[f], "f at {point:?}");
    }
}
