//! Shared helpers of the integration tests.
#![allow(dead_code)]

use moss_results::{ResultVar, SimResult, Storage, VarKind};
use std::path::PathBuf;

/// The reference folders copied into `tests/data`.
pub const REFERENCES: [&str; 2] = [
    "Modelica.Mechanics.Rotational.Examples.LossyGearDemo1",
    "Modelica.Mechanics.Translational.Examples.ElastoGap",
];

pub fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// Path of a reference CSV: `tests/data/<model>/<Short>.csv`.
pub fn reference_csv(model: &str) -> PathBuf {
    let short = model.rsplit('.').next().unwrap_or(model);
    data_dir().join(model).join(format!("{short}.csv"))
}

pub fn signals_file(model: &str) -> PathBuf {
    data_dir().join(model).join("comparisonSignals.txt")
}

/// A fresh temporary directory for one test (removed by the caller or left in target/tmp).
pub fn temp_dir(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("moss-results-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A small result with every storage kind: columns, a negated and a plain alias, parameters,
/// odd names, an event (two rows at t = 0.5) and awkward numbers.
pub fn fixture() -> SimResult {
    let vars = vec![
        ResultVar::column("inertia1.phi", 0)
            .with_unit("rad")
            .with_description("Absolute rotation angle"),
        ResultVar::column("inertia1.w", 1).with_unit("rad/s"),
        ResultVar::alias("spring.flange_a.tau", 2, false).with_unit("N.m"),
        ResultVar::alias("spring.flange_b.tau", 2, true).with_unit("N.m"),
        ResultVar::column("x[2]", 2),
        ResultVar::column("der(x[1])", 3),
        ResultVar::parameter("J", 2.5).with_unit("kg.m2"),
        ResultVar::new("n", VarKind::Constant, Storage::Constant(-3.0)),
        ResultVar::column("on", 4).with_kind(VarKind::Discrete),
    ];
    let mut r = SimResult::with_vars(vars).unwrap();
    for k in 0..=10 {
        let t = k as f64 * 0.1;
        let row = [
            (t * 3.0).sin(),
            1.0 / 3.0 + t,
            -1e-300 * (k as f64),
            6.02e23 * t,
            if t < 0.5 { 0.0 } else { 1.0 },
        ];
        r.push_row(t, &row).unwrap();
        if k == 5 {
            let mut after = row;
            after[4] = 0.0;
            r.push_row(t, &after).unwrap();
        }
    }
    r
}
