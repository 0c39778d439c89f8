//! `moss compare RESULT REFERENCE`: check a result against a reference by the tube method
//! (see `moss_results::compare`). Prints one line per signal and a summary; exits 1 when any
//! signal fails or is missing, 2 on usage errors (missing files, bad options).

use super::{EXIT_MODEL_ERROR, EXIT_OK, EXIT_USAGE};
use moss_results::compare::{
    compare_results, read_signal_list, CompareOptions, CompareReport, SignalReport, Status,
};
use moss_results::plot::comparison_plot;
use moss_results::{read_result, Format, SimResult};
use std::path::{Path, PathBuf};

/// Arguments of `moss compare`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The result to check (.csv or .mat).
    pub result: PathBuf,
    /// The reference result (.csv or .mat).
    pub reference: PathBuf,
    /// File with the signals to compare, one per line (a first line `time` is skipped), like
    /// the references' comparisonSignals.txt. Default: every signal of the reference.
    #[arg(long, value_name = "FILE")]
    pub signals: Option<PathBuf>,
    /// Relative tolerance of the tube, applied to time and value ranges.
    #[arg(long, default_value_t = 0.002, allow_negative_numbers = true)]
    pub tolerance: f64,
    /// Lower bound of the value range a tube's height is relative to. The default 1e-12 is
    /// csv-compare 2.0.3's, which fails signals that are zero up to rounding noise (1e-15)
    /// on noise of their own size; csv-compare 2.1 uses 0.001.
    #[arg(long, default_value_t = 1e-12, value_name = "FLOOR")]
    pub value_floor: f64,
    /// Write a plot (reference, tube, result) of every failing signal into this directory.
    #[arg(long, value_name = "DIR")]
    pub plot_dir: Option<PathBuf>,
    /// Image format of the plots in --plot-dir: svg or png.
    #[arg(long, default_value = "svg", value_parser = ["svg", "png"])]
    pub plot_format: String,
}

pub fn run(args: Args) -> u8 {
    match compare(&args) {
        Ok(report) if report.passed() => EXIT_OK,
        Ok(_) => EXIT_MODEL_ERROR,
        Err((code, message)) => {
            eprintln!("error: {message}");
            code
        }
    }
}

type Failure = (u8, String);

fn compare(args: &Args) -> Result<CompareReport, Failure> {
    if !(args.tolerance.is_finite() && args.tolerance > 0.0) {
        return Err((
            EXIT_USAGE,
            format!(
                "--tolerance must be a positive number, got {}",
                args.tolerance
            ),
        ));
    }
    if !(args.value_floor.is_finite() && args.value_floor > 0.0) {
        return Err((
            EXIT_USAGE,
            format!(
                "--value-floor must be a positive number, got {}",
                args.value_floor
            ),
        ));
    }
    let result = load(&args.result)?;
    let reference = load(&args.reference)?;
    let signals = match &args.signals {
        Some(path) => {
            check_exists(path)?;
            read_signal_list(path).map_err(|e| (EXIT_USAGE, e.to_string()))?
        }
        None => reference.names().map(str::to_string).collect(),
    };
    let options = CompareOptions {
        tolerance: args.tolerance,
        floor_y: args.value_floor,
        ..CompareOptions::default()
    };
    let report = compare_results(&result, &reference, &signals, &options);
    print_table(&report);
    print_summary(&report, args.tolerance);
    if let Some(dir) = &args.plot_dir {
        write_plots(dir, &args.plot_format, &report, &result, &reference)?;
    }
    Ok(report)
}

fn check_exists(path: &Path) -> Result<(), Failure> {
    if path.exists() {
        Ok(())
    } else {
        Err((EXIT_USAGE, format!("{}: no such file", path.display())))
    }
}

/// Read a result file; missing files and unknown extensions are usage errors, unreadable
/// contents result errors.
fn load(path: &Path) -> Result<SimResult, Failure> {
    check_exists(path)?;
    if Format::from_path(path).is_none() {
        return Err((
            EXIT_USAGE,
            format!("{}: expected a .csv or .mat result file", path.display()),
        ));
    }
    read_result(path).map_err(|e| (EXIT_MODEL_ERROR, e.to_string()))
}

fn status_text(status: &Status) -> String {
    match status {
        Status::Pass => "pass".to_string(),
        Status::Fail => "FAIL".to_string(),
        Status::Missing => "MISSING in result".to_string(),
        Status::NotInReference => "MISSING in reference".to_string(),
        Status::TooShort {
            result_end: Some(end),
        } => format!("FAIL: result ends at t = {end}, before the reference"),
        Status::TooShort { result_end: None } => "FAIL: result has no points".to_string(),
        Status::Invalid(why) => format!("INVALID: {why}"),
    }
}

fn print_table(report: &CompareReport) {
    let width = report
        .signals
        .iter()
        .map(|s| s.name.len())
        .chain([6])
        .max()
        .unwrap_or(6);
    println!(
        "{:<width$}  {:<8}  {:>8}  {:>12}  {:>12}",
        "signal", "status", "outside", "max dist", "first fail"
    );
    for s in &report.signals {
        println!("{}", table_row(s, width));
    }
}

fn table_row(s: &SignalReport, width: usize) -> String {
    let status = status_text(&s.status);
    match s.status {
        Status::Pass | Status::Fail => format!(
            "{:<width$}  {:<8}  {:>8}  {:>12}  {:>12}",
            s.name,
            status,
            s.points_outside,
            if s.points_outside > 0 {
                format!("{:.4e}", s.max_distance)
            } else {
                "-".to_string()
            },
            s.first_failure
                .map_or("-".to_string(), |t| format!("{t:.6}")),
        ),
        _ => format!("{:<width$}  {status}", s.name),
    }
}

fn print_summary(report: &CompareReport, tolerance: f64) {
    let total = report.signals.len();
    let failed = report.failures();
    let verdict = if failed == 0 { "PASSED" } else { "FAILED" };
    println!(
        "{verdict}: {} of {total} signals passed, {failed} failed (tube tolerance {tolerance})",
        total - failed
    );
}

fn write_plots(
    dir: &Path,
    format: &str,
    report: &CompareReport,
    result: &SimResult,
    reference: &SimResult,
) -> Result<(), Failure> {
    std::fs::create_dir_all(dir)
        .map_err(|e| (EXIT_USAGE, format!("{}: cannot create: {e}", dir.display())))?;
    for s in report.signals.iter().filter(|s| s.status == Status::Fail) {
        let (Some(ref_y), Some(res_y)) = (reference.series(&s.name), result.series(&s.name)) else {
            continue;
        };
        let unit = match result.unit(&s.name) {
            "" => reference.unit(&s.name),
            unit => unit,
        };
        let plot = comparison_plot(
            &s.name,
            unit,
            (reference.time(), &ref_y),
            (result.time(), &res_y),
            s.dt,
            s.dy,
        );
        let path = dir.join(format!("{}.{format}", file_stem_for(&s.name)));
        plot.save(&path).map_err(|e| (EXIT_MODEL_ERROR, e))?;
        println!("plot: {}", path.display());
    }
    Ok(())
}

/// A file name for a signal: characters other than letters, digits, `.`, `_`, `-` become `_`.
fn file_stem_for(signal: &str) -> String {
    signal
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(model: &str, file: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../results/tests/data")
            .join(model)
            .join(file)
    }

    const MODEL: &str = "Modelica.Mechanics.Rotational.Examples.LossyGearDemo1";

    fn args(result: PathBuf, reference: PathBuf) -> Args {
        Args {
            result,
            reference,
            signals: Some(data(MODEL, "comparisonSignals.txt")),
            tolerance: 0.002,
            value_floor: 1e-12,
            plot_dir: None,
            plot_format: "svg".to_string(),
        }
    }

    #[test]
    fn reference_against_itself_exits_0() {
        let csv = data(MODEL, "LossyGearDemo1.csv");
        assert_eq!(run(args(csv.clone(), csv)), EXIT_OK);
    }

    #[test]
    fn missing_signal_exits_1_and_bad_usage_2() {
        let csv = data(MODEL, "LossyGearDemo1.csv");
        let other = data(
            "Modelica.Mechanics.Translational.Examples.ElastoGap",
            "ElastoGap.csv",
        );
        // ElastoGap has none of LossyGearDemo1's signals.
        assert_eq!(run(args(other, csv.clone())), EXIT_MODEL_ERROR);
        assert_eq!(
            run(args(PathBuf::from("nope.csv"), csv.clone())),
            EXIT_USAGE
        );
        let mut bad_tolerance = args(csv.clone(), csv);
        bad_tolerance.tolerance = -1.0;
        assert_eq!(run(bad_tolerance), EXIT_USAGE);
    }

    /// A signal that is zero up to rounding noise: the result's noise (3e-14) is far outside
    /// a tube sized by the reference's own noise (1e-15) with csv-compare 2.0.3's floor, and
    /// inside with 2.1's.
    #[test]
    fn value_floor_decides_signals_of_rounding_noise() {
        let dir = std::env::temp_dir().join(format!("moss-floor-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let table = |noise: f64| {
            let mut text = String::from("\"time\",\"y\"\n");
            for i in 0..=10 {
                let sign = if i % 2 == 0 { 1.0 } else { -1.0 };
                text.push_str(&format!("{:?},{:?}\n", f64::from(i) * 0.1, sign * noise));
            }
            text
        };
        let (result, reference) = (dir.join("result.csv"), dir.join("reference.csv"));
        std::fs::write(&result, table(3e-14)).unwrap();
        std::fs::write(&reference, table(1e-15)).unwrap();
        let mut strict = args(result.clone(), reference.clone());
        strict.signals = None;
        assert_eq!(run(strict), EXIT_MODEL_ERROR);
        let mut floor = args(result.clone(), reference.clone());
        floor.signals = None;
        floor.value_floor = 1e-3;
        assert_eq!(run(floor), EXIT_OK);
        let mut bad = args(result, reference);
        bad.value_floor = 0.0;
        assert_eq!(run(bad), EXIT_USAGE);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn failing_signals_get_plots() {
        let csv = data(MODEL, "LossyGearDemo1.csv");
        let dir = std::env::temp_dir().join(format!("moss-compare-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // The reference with every value of the first signal column scaled by 1.5.
        let text = std::fs::read_to_string(&csv).unwrap();
        let mut lines = text.lines();
        let mut perturbed = format!("{}\n", lines.next().unwrap());
        for line in lines {
            let mut fields: Vec<String> = line.split(',').map(str::to_string).collect();
            let x: f64 = fields[1].parse().unwrap();
            fields[1] = format!("{:?}", 1.5 * x + 1.0);
            perturbed.push_str(&fields.join(","));
            perturbed.push('\n');
        }
        let result = dir.join("perturbed.csv");
        std::fs::write(&result, perturbed).unwrap();
        let mut a = args(result, csv);
        a.signals = None;
        a.plot_dir = Some(dir.join("plots"));
        assert_eq!(run(a), EXIT_MODEL_ERROR);
        let plots: Vec<_> = std::fs::read_dir(dir.join("plots")).unwrap().collect();
        assert_eq!(plots.len(), 1);
        let svg = std::fs::read_to_string(plots[0].as_ref().unwrap().path()).unwrap();
        assert!(svg.contains("tube lower") && svg.contains("result"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn signal_file_names_are_safe() {
        assert_eq!(file_stem_for("der(x[2])"), "der_x_2__");
        assert_eq!(file_stem_for("a.b_c"), "a.b_c");
    }
}
