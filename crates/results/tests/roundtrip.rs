//! Write-then-read round trips through CSV and MAT: values exact, aliases resolved.

mod common;

use common::{fixture, temp_dir};
use moss_results::{read_result, write_result, SimResult, Storage};

fn assert_same_series(original: &SimResult, back: &SimResult) {
    assert_eq!(back.time(), original.time());
    for var in original.vars() {
        let a = original.series(&var.name).unwrap();
        let b = back
            .series(&var.name)
            .unwrap_or_else(|| panic!("{} missing", var.name));
        // Bit-exact, including the sign of zero from negated aliases of 0.
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&a), bits(&b), "{}", var.name);
    }
}

#[test]
fn csv_round_trip_is_exact() {
    let dir = temp_dir("csv-roundtrip");
    let path = dir.join("fixture.csv");
    let original = fixture();
    write_result(&original, &path).unwrap();
    let back = read_result(&path).unwrap();
    assert_same_series(&original, &back);
    let names: Vec<&str> = back.names().collect();
    let expected: Vec<&str> = original.names().collect();
    assert_eq!(names, expected);
}

#[test]
fn mat_round_trip_is_exact_and_keeps_aliases() {
    let dir = temp_dir("mat-roundtrip");
    let path = dir.join("fixture.mat");
    let original = fixture();
    write_result(&original, &path).unwrap();
    let back = read_result(&path).unwrap();
    assert_same_series(&original, &back);
    assert_eq!(back.ncols(), original.ncols());
    assert_eq!(
        back.var("spring.flange_b.tau").unwrap().storage,
        Storage::Alias {
            of: 2,
            negated: true
        }
    );
    assert_eq!(back.var("J").unwrap().storage, Storage::Constant(2.5));
    assert_eq!(back.var("J").unwrap().unit, "kg.m2");
    assert_eq!(
        back.var("inertia1.phi").unwrap().description,
        "Absolute rotation angle"
    );
}

#[test]
fn reference_csv_survives_mat_and_csv() {
    for model in common::REFERENCES {
        let reference = read_result(&common::reference_csv(model)).unwrap();
        let dir = temp_dir(&format!("ref-{model}"));
        for ext in ["csv", "mat"] {
            let path = dir.join(format!("copy.{ext}"));
            write_result(&reference, &path).unwrap();
            assert_same_series(&reference, &read_result(&path).unwrap());
        }
    }
}

#[test]
fn unknown_extension_is_a_clear_error() {
    let err = read_result(std::path::Path::new("result.txt")).unwrap_err();
    assert!(err.to_string().contains(".csv or .mat"), "{err}");
}
