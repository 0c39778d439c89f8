//! The MSL reference CSVs in tests/data: a reference compared with itself passes; a perturbed
//! copy fails at the perturbation.

mod common;

use moss_results::compare::{compare_results, read_signal_list, CompareOptions, Status};
use moss_results::{read_result, ResultVar, SimResult};

#[test]
fn reference_compared_with_itself_passes() {
    for model in common::REFERENCES {
        let reference = read_result(&common::reference_csv(model)).unwrap();
        let signals = read_signal_list(&common::signals_file(model)).unwrap();
        assert!(!signals.is_empty());
        let report = compare_results(&reference, &reference, &signals, &CompareOptions::default());
        assert!(report.passed(), "{model}: {report:?}");
        assert!(report
            .signals
            .iter()
            .all(|s| s.points_checked == reference.len()));
    }
}

/// `reference` with `signal` multiplied by `factor` from `from_time` on.
fn perturbed(reference: &SimResult, signal: &str, from_time: f64, factor: f64) -> SimResult {
    let vars: Vec<ResultVar> = reference
        .names()
        .enumerate()
        .map(|(c, n)| ResultVar::column(n, c))
        .collect();
    let columns: Vec<Vec<f64>> = reference
        .names()
        .map(|n| reference.series(n).unwrap())
        .collect();
    let target = reference.names().position(|n| n == signal).unwrap();
    let mut out = SimResult::with_vars(vars).unwrap();
    for (i, &t) in reference.time().iter().enumerate() {
        let row: Vec<f64> = columns
            .iter()
            .enumerate()
            .map(|(c, col)| {
                if c == target && t >= from_time {
                    col[i] * factor
                } else {
                    col[i]
                }
            })
            .collect();
        out.push_row(t, &row).unwrap();
    }
    out
}

#[test]
fn perturbed_reference_fails_on_the_perturbed_signal_only() {
    for model in common::REFERENCES {
        let reference = read_result(&common::reference_csv(model)).unwrap();
        let signals = read_signal_list(&common::signals_file(model)).unwrap();
        let victim = &signals[0];
        let stop = *reference.time().last().unwrap();
        let changed = perturbed(&reference, victim, 0.5 * stop, 1.1);
        let report = compare_results(&changed, &reference, &signals, &CompareOptions::default());
        assert!(!report.passed(), "{model}");
        for s in &report.signals {
            if &s.name == victim {
                assert_eq!(s.status, Status::Fail, "{model} {}", s.name);
                assert!(s.first_failure.unwrap() >= 0.5 * stop);
                assert!(s.max_distance > 0.0);
            } else {
                assert_eq!(s.status, Status::Pass, "{model} {}", s.name);
            }
        }
    }
}

#[test]
fn result_without_a_signal_fails_as_missing() {
    let model = common::REFERENCES[0];
    let reference = read_result(&common::reference_csv(model)).unwrap();
    let signals = read_signal_list(&common::signals_file(model)).unwrap();
    let empty = SimResult::with_vars(Vec::new()).unwrap();
    let report = compare_results(&empty, &reference, &signals, &CompareOptions::default());
    assert!(report.signals.iter().all(|s| s.status == Status::Missing));
}
