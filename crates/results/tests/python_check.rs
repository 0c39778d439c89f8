//! Our `.mat` files must be readable by the tools people use on Dymola results: scipy and
//! DyMat. Runs `tests/python/check_mat.py` on a fixture; needs `python3` with scipy and DyMat
//! (CI installs them with `python3 -m pip install scipy DyMat`).

mod common;

use moss_results::csv::write_csv;
use moss_results::mat::write_mat;
use std::process::Command;

#[test]
fn scipy_and_dymat_read_our_mat_files() {
    let dir = common::temp_dir("python-check");
    let mat = dir.join("fixture.mat");
    let csv = dir.join("fixture.csv");
    let result = common::fixture();
    write_mat(&result, &mat).unwrap();
    write_csv(&result, &csv).unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/check_mat.py");
    let output = Command::new("python3")
        .arg(script)
        .arg(&mat)
        .arg(&csv)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run python3 ({e}); install Python 3 with scipy and DyMat")
        });
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    match output.status.code() {
        Some(0) => {}
        Some(2) => panic!(
            "python3 lacks scipy or DyMat: run `python3 -m pip install scipy DyMat`\n{stdout}{stderr}"
        ),
        _ => panic!("scipy/DyMat check failed:\n{stdout}{stderr}"),
    }
}
