//! Comparison of a result against a reference by the tube method (csv-compare's method, as
//! specified in the repository's `reference/README.md`).
//!
//! For one signal with reference points `(t_i, y_i)` and tolerance `tol`:
//! `dt = tol * max(t_max - t_min, |t_min|, floor_x)`, `dy = tol * max(y_max - y_min, |y_min|,
//! floor_y)`. The lower tube edge at time `s` is the minimum of the reference polyline over the
//! window `[s - dt, s + dt]` (clipped to the reference's time range) minus `dy`, the upper edge
//! the maximum plus `dy`. Duplicate reference times (events) are two vertices of the polyline,
//! so a window that reaches the event time spans the whole jump.
//!
//! The edges are evaluated exactly at the result's own time points (no resampling); points
//! outside the reference's time range are not checked. The window extremum is the extremum of
//! the polyline at the two window ends (interpolated) and of the vertices inside; the vertices
//! inside are tracked with monotone deques while the window slides forward, so one signal costs
//! `O(n + m)` for `n` reference and `m` result points.

use crate::SimResult;
use std::collections::VecDeque;
use std::path::Path;

/// Tube parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CompareOptions {
    /// Relative tolerance applied to both axes (default 0.002, as for the MSL references).
    pub tolerance: f64,
    /// Lower bound of the time base `baseX` (1e-12).
    pub floor_x: f64,
    /// Lower bound of the value base `baseY` (1e-12 as csv-compare 2.0.3; 2.1 uses 0.001).
    pub floor_y: f64,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            tolerance: 0.002,
            floor_x: 1e-12,
            floor_y: 1e-12,
        }
    }
}

/// Outcome of one signal.
#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    /// Every checked point is inside the tube.
    Pass,
    /// At least one point is outside the tube.
    Fail,
    /// The signal is not in the result.
    Missing,
    /// The signal is not in the reference (it cannot be checked).
    NotInReference,
    /// The result stops before the reference's end (by more than `dt`): the rest of the
    /// reference is not covered, which must not pass unnoticed (e.g. an aborted simulation).
    TooShort { result_end: Option<f64> },
    /// The data cannot be compared (e.g. empty reference, times going backwards).
    Invalid(String),
}

/// Per-signal report.
#[derive(Clone, Debug, PartialEq)]
pub struct SignalReport {
    pub name: String,
    pub status: Status,
    /// Result points inside the reference's time range.
    pub points_checked: usize,
    /// Result points outside the tube.
    pub points_outside: usize,
    /// Largest distance of a point outside the tube (0 if none; infinite for NaN values).
    pub max_distance: f64,
    /// Time of the first point outside the tube.
    pub first_failure: Option<f64>,
    /// Tube half width and half height used.
    pub dt: f64,
    pub dy: f64,
}

impl SignalReport {
    fn with_status(name: &str, status: Status) -> Self {
        SignalReport {
            name: name.to_string(),
            status,
            points_checked: 0,
            points_outside: 0,
            max_distance: 0.0,
            first_failure: None,
            dt: 0.0,
            dy: 0.0,
        }
    }

    /// Whether the signal passed.
    pub fn passed(&self) -> bool {
        self.status == Status::Pass
    }
}

/// Reports of all compared signals.
#[derive(Clone, Debug, PartialEq)]
pub struct CompareReport {
    pub signals: Vec<SignalReport>,
}

impl CompareReport {
    /// Whether every signal passed (an empty comparison passes vacuously).
    pub fn passed(&self) -> bool {
        self.signals.iter().all(SignalReport::passed)
    }

    /// Number of signals that did not pass.
    pub fn failures(&self) -> usize {
        self.signals.iter().filter(|s| !s.passed()).count()
    }
}

/// Tube half sizes `(dt, dy)` for a reference signal.
pub fn tube_size(times: &[f64], values: &[f64], options: &CompareOptions) -> (f64, f64) {
    let (t_min, t_max) = min_max(times);
    let (y_min, y_max) = min_max(values);
    let base_x = (t_max - t_min).max(t_min.abs()).max(options.floor_x);
    let base_y = (y_max - y_min).max(y_min.abs()).max(options.floor_y);
    (options.tolerance * base_x, options.tolerance * base_y)
}

fn min_max(xs: &[f64]) -> (f64, f64) {
    xs.iter()
        .filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        })
}

/// Lower and upper tube edges at the given (non-decreasing) times.
///
/// `None` for times outside the reference's time range. `ref_t` must be non-decreasing and
/// non-empty and `at` non-decreasing (checked by [`compare_signal`]).
pub fn tube_at(
    ref_t: &[f64],
    ref_y: &[f64],
    dt: f64,
    dy: f64,
    at: &[f64],
) -> Vec<Option<(f64, f64)>> {
    let n = ref_t.len().min(ref_y.len());
    let mut out = Vec::with_capacity(at.len());
    if n == 0 {
        out.resize(at.len(), None);
        return out;
    }
    let (t_first, t_last) = (ref_t[0], ref_t[n - 1]);
    let mut window = SlidingExtrema::default();
    // Vertices [lo, hi) are inside the current window.
    let (mut lo, mut hi) = (0usize, 0usize);
    for &s in at {
        if !(t_first..=t_last).contains(&s) {
            out.push(None);
            continue;
        }
        let a = (s - dt).max(t_first);
        let b = (s + dt).min(t_last);
        while hi < n && ref_t[hi] <= b {
            window.push(hi, ref_y[hi]);
            hi += 1;
        }
        while lo < n && ref_t[lo] < a {
            lo += 1;
        }
        window.drop_before(lo);
        let ends = [
            polyline_at(ref_t, ref_y, lo, a),
            polyline_at(ref_t, ref_y, hi, b),
        ];
        let (mut low, mut high) = window.extrema();
        for y in ends.into_iter().flatten() {
            low = low.min(y);
            high = high.max(y);
        }
        out.push(Some((low - dy, high + dy)));
    }
    out
}

/// Value of the reference polyline at `x` where vertex `k` is the first with `t_k >= x`
/// (or `t_k > x`): interpolation on the segment `(k-1, k)`. `None` at or beyond the ends,
/// where the vertices themselves are in the window.
fn polyline_at(t: &[f64], y: &[f64], k: usize, x: f64) -> Option<f64> {
    if k == 0 || k >= t.len() {
        return None;
    }
    let (t0, t1, y0, y1) = (t[k - 1], t[k], y[k - 1], y[k]);
    if t1 <= t0 {
        // Not reached for the indices tube_at passes (t_{k-1} < x <= t_k); kept total.
        return Some(y1);
    }
    let w = ((x - t0) / (t1 - t0)).clamp(0.0, 1.0);
    Some(y0 + w * (y1 - y0))
}

/// Minimum and maximum of a sliding window of values (monotone deques of indices).
#[derive(Default)]
struct SlidingExtrema {
    min: VecDeque<(usize, f64)>,
    max: VecDeque<(usize, f64)>,
}

impl SlidingExtrema {
    fn push(&mut self, index: usize, value: f64) {
        while self.min.back().is_some_and(|&(_, v)| v >= value) {
            self.min.pop_back();
        }
        self.min.push_back((index, value));
        while self.max.back().is_some_and(|&(_, v)| v <= value) {
            self.max.pop_back();
        }
        self.max.push_back((index, value));
    }

    fn drop_before(&mut self, first: usize) {
        while self.min.front().is_some_and(|&(i, _)| i < first) {
            self.min.pop_front();
        }
        while self.max.front().is_some_and(|&(i, _)| i < first) {
            self.max.pop_front();
        }
    }

    /// `(+inf, -inf)` when the window holds no vertex.
    fn extrema(&self) -> (f64, f64) {
        (
            self.min.front().map_or(f64::INFINITY, |&(_, v)| v),
            self.max.front().map_or(f64::NEG_INFINITY, |&(_, v)| v),
        )
    }
}

fn is_non_decreasing(xs: &[f64]) -> bool {
    xs.windows(2).all(|w| w[0] <= w[1])
}

/// Compare one signal: result points `(res_t, res_y)` against reference `(ref_t, ref_y)`.
pub fn compare_signal(
    name: &str,
    ref_t: &[f64],
    ref_y: &[f64],
    res_t: &[f64],
    res_y: &[f64],
    options: &CompareOptions,
) -> SignalReport {
    let invalid = |why: &str| SignalReport::with_status(name, Status::Invalid(why.to_string()));
    if ref_t.is_empty() || ref_t.len() != ref_y.len() {
        return invalid("the reference has no points");
    }
    if res_t.len() != res_y.len() {
        return invalid("the result's time and value vectors differ in length");
    }
    if !is_non_decreasing(ref_t) {
        return invalid("the reference's time goes backwards");
    }
    if !is_non_decreasing(res_t) {
        return invalid("the result's time goes backwards");
    }
    let (dt, dy) = tube_size(ref_t, ref_y, options);
    let mut report = SignalReport::with_status(name, Status::Pass);
    report.dt = dt;
    report.dy = dy;
    let tube = tube_at(ref_t, ref_y, dt, dy, res_t);
    for ((&s, &z), edges) in res_t.iter().zip(res_y).zip(tube) {
        let Some((lower, upper)) = edges else {
            continue;
        };
        report.points_checked += 1;
        let distance = if z.is_nan() {
            f64::INFINITY
        } else {
            (lower - z).max(z - upper)
        };
        if distance > 0.0 {
            report.points_outside += 1;
            report.max_distance = report.max_distance.max(distance);
            report.first_failure.get_or_insert(s);
        }
    }
    if report.points_outside > 0 {
        report.status = Status::Fail;
    } else if res_t
        .last()
        .is_none_or(|&end| end < ref_t[ref_t.len() - 1] - dt)
    {
        report.status = Status::TooShort {
            result_end: res_t.last().copied(),
        };
    }
    report
}

/// Compare the named signals of `result` against `reference`. A signal missing from the
/// result fails with [`Status::Missing`].
pub fn compare_results(
    result: &SimResult,
    reference: &SimResult,
    signals: &[String],
    options: &CompareOptions,
) -> CompareReport {
    let signals = signals
        .iter()
        .map(|name| {
            let Some(ref_y) = reference.series(name) else {
                return SignalReport::with_status(name, Status::NotInReference);
            };
            let Some(res_y) = result.series(name) else {
                return SignalReport::with_status(name, Status::Missing);
            };
            compare_signal(
                name,
                reference.time(),
                &ref_y,
                result.time(),
                &res_y,
                options,
            )
        })
        .collect();
    CompareReport { signals }
}

/// Signal names from a `comparisonSignals.txt`-style file: one per line; blank lines, comment
/// lines (`#`, or `//` which the references use to switch a signal off) and a leading `time`
/// line (any case) skipped.
pub fn parse_signal_list(text: &str) -> Vec<String> {
    text.strip_prefix('\u{feff}')
        .unwrap_or(text)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with("//"))
        .enumerate()
        .filter(|&(i, l)| !(i == 0 && l.eq_ignore_ascii_case("time")))
        .map(|(_, l)| l.to_string())
        .collect()
}

/// Read a signal list file (see [`parse_signal_list`]).
pub fn read_signal_list(path: &Path) -> Result<Vec<String>, crate::ResultError> {
    let text = std::fs::read_to_string(path).map_err(|e| crate::ResultError::io(path, e))?;
    Ok(parse_signal_list(&text))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n + 1` equidistant points on `[0, 1]`.
    fn grid(n: usize) -> Vec<f64> {
        (0..=n).map(|i| i as f64 / n as f64).collect()
    }

    fn sine(t: &[f64]) -> Vec<f64> {
        t.iter().map(|&t| (6.0 * t).sin()).collect()
    }

    fn check(ref_t: &[f64], ref_y: &[f64], res_t: &[f64], res_y: &[f64]) -> SignalReport {
        compare_signal("s", ref_t, ref_y, res_t, res_y, &CompareOptions::default())
    }

    #[test]
    fn tube_size_follows_the_spec_example() {
        let (dt, dy) = tube_size(&[0.0, 1.0], &[0.0, 10.0], &CompareOptions::default());
        assert!((dt - 0.002).abs() < 1e-15 && (dy - 0.02).abs() < 1e-15);
        // |y_min| counts when the signal is far from zero.
        let (_, dy) = tube_size(&[0.0, 1.0], &[100.0, 101.0], &CompareOptions::default());
        assert!((dy - 0.2).abs() < 1e-12);
    }

    #[test]
    fn identical_signal_passes() {
        let t = grid(500);
        let y = sine(&t);
        let r = check(&t, &y, &t, &y);
        assert_eq!(r.status, Status::Pass);
        assert_eq!(r.points_checked, t.len());
        assert_eq!(r.points_outside, 0);
    }

    #[test]
    fn result_on_another_grid_passes() {
        let t = grid(500);
        let s = grid(333);
        assert!(check(&t, &sine(&t), &s, &sine(&s)).passed());
    }

    #[test]
    fn offset_larger_than_dy_fails_where_it_starts() {
        let t = grid(1000);
        let y = vec![1.0; t.len()];
        let dy = tube_size(&t, &y, &CompareOptions::default()).1;
        assert!((dy - 0.002).abs() < 1e-15);
        // Shifted by 1.5 dy from t = 0.6 on.
        let z: Vec<f64> = t
            .iter()
            .map(|&t| if t >= 0.6 { 1.0 + 1.5 * dy } else { 1.0 })
            .collect();
        let r = check(&t, &y, &t, &z);
        assert_eq!(r.status, Status::Fail);
        assert_eq!(r.first_failure, Some(0.6));
        assert_eq!(r.points_outside, 401);
        assert!((r.max_distance - 0.5 * dy).abs() < 1e-12);
        // A shift below dy passes.
        let z: Vec<f64> = y.iter().map(|y| y - 0.9 * dy).collect();
        assert!(check(&t, &y, &t, &z).passed());
    }

    #[test]
    fn sloped_signal_tube_includes_the_time_window() {
        // For a sloped signal the window [t - dt, t + dt] widens the tube by slope * dt.
        let t = grid(1000);
        let y = sine(&t);
        let (dt, dy) = tube_size(&t, &y, &CompareOptions::default());
        let reach = dy + 6.0 * dt;
        let shifted = |k: f64| -> Vec<f64> { y.iter().map(|y| y + k * reach).collect() };
        assert!(!check(&t, &y, &t, &shifted(1.2)).passed());
        assert!(check(&t, &y, &t, &shifted(0.9 * dy / reach)).passed());
    }

    /// A step from 0 to 1 at `at`, as an event (two rows with the same time) on a grid.
    fn step(at: f64, n: usize) -> (Vec<f64>, Vec<f64>) {
        let mut points: Vec<(f64, f64)> = grid(n)
            .into_iter()
            .filter(|&s| s != at)
            .map(|s| (s, if s < at { 0.0 } else { 1.0 }))
            .collect();
        let k = points.partition_point(|&(s, _)| s < at);
        points.splice(k..k, [(at, 0.0), (at, 1.0)]);
        points.into_iter().unzip()
    }

    #[test]
    fn event_shifted_by_less_than_dt_passes() {
        let (t, y) = step(0.5, 100);
        let dt = 0.002;
        let (s, z) = step(0.5 + 0.7 * dt, 100);
        assert!(check(&t, &y, &s, &z).passed());
        let (s, z) = step(0.5 - 0.7 * dt, 100);
        assert!(check(&t, &y, &s, &z).passed());
    }

    #[test]
    fn event_shifted_by_more_than_dt_fails() {
        let (t, y) = step(0.5, 100);
        let dt = 0.002;
        let (s, z) = step(0.5 + 3.0 * dt, 100);
        let r = check(&t, &y, &s, &z);
        assert_eq!(r.status, Status::Fail);
        assert_eq!(r.points_outside, 1);
        assert_eq!(r.first_failure, Some(0.5 + 3.0 * dt));
        assert!((r.max_distance - (1.0 - 0.002)).abs() < 1e-12);
    }

    #[test]
    fn points_after_the_reference_end_are_not_checked() {
        let t = grid(10);
        let y = sine(&t);
        let s = vec![0.0, 0.5, 1.0, 1.5];
        let z = vec![y[0], y[5], y[10], 1e9];
        let r = check(&t, &y, &s, &z);
        assert!(r.passed());
        assert_eq!(r.points_checked, 3);
    }

    #[test]
    fn result_ending_early_does_not_pass() {
        let t = grid(10);
        let y = sine(&t);
        let r = check(&t, &y, &t[..6], &y[..6]);
        assert_eq!(
            r.status,
            Status::TooShort {
                result_end: Some(0.5)
            }
        );
        let r = check(&t, &y, &[], &[]);
        assert_eq!(r.status, Status::TooShort { result_end: None });
    }

    #[test]
    fn nan_fails() {
        let t = grid(10);
        let y = sine(&t);
        let mut z = y.clone();
        z[3] = f64::NAN;
        let r = check(&t, &y, &t, &z);
        assert_eq!(r.points_outside, 1);
        assert_eq!(r.max_distance, f64::INFINITY);
    }

    #[test]
    fn tube_matches_brute_force_window_extrema() {
        // Dense sampling of the polyline approximates the exact window extremum from inside.
        let (t, y) = step(0.31, 37);
        let y: Vec<f64> = y.iter().zip(&t).map(|(y, t)| y + (9.0 * t).sin()).collect();
        let dt = 0.013;
        let at = grid(211);
        let tube = tube_at(&t, &y, dt, 0.0, &at);
        for (&s, edges) in at.iter().zip(tube) {
            let (lower, upper) = edges.unwrap();
            let (a, b) = ((s - dt).max(0.0), (s + dt).min(1.0));
            let mut lo = f64::INFINITY;
            let mut hi = f64::NEG_INFINITY;
            for k in 0..=2000 {
                let x = a + (b - a) * k as f64 / 2000.0;
                let v = interpolate(&t, &y, x);
                lo = lo.min(v.0);
                hi = hi.max(v.1);
            }
            for (&ti, &yi) in t.iter().zip(&y) {
                if (a..=b).contains(&ti) {
                    lo = lo.min(yi);
                    hi = hi.max(yi);
                }
            }
            assert!(
                lower <= lo + 1e-12 && lower >= lo - 0.01,
                "at {s}: {lower} vs {lo}"
            );
            assert!(
                upper >= hi - 1e-12 && upper <= hi + 0.01,
                "at {s}: {upper} vs {hi}"
            );
        }
    }

    /// Both one-sided values of the polyline at `x`.
    fn interpolate(t: &[f64], y: &[f64], x: f64) -> (f64, f64) {
        let k = t.partition_point(|&ti| ti < x).clamp(1, t.len() - 1);
        let w = if t[k] > t[k - 1] {
            (x - t[k - 1]) / (t[k] - t[k - 1])
        } else {
            1.0
        };
        let v = y[k - 1] + w.clamp(0.0, 1.0) * (y[k] - y[k - 1]);
        (v, v)
    }

    #[test]
    fn missing_signal_fails() {
        let vars = vec![crate::ResultVar::column("a", 0)];
        let mut reference = SimResult::with_vars(vars).unwrap();
        reference.push_row(0.0, &[1.0]).unwrap();
        reference.push_row(1.0, &[2.0]).unwrap();
        let other = SimResult::with_vars(vec![crate::ResultVar::column("b", 0)]).unwrap();
        let report = compare_results(
            &other,
            &reference,
            &["a".to_string()],
            &CompareOptions::default(),
        );
        assert_eq!(report.signals[0].status, Status::Missing);
        assert!(!report.passed());
        let report = compare_results(
            &reference,
            &reference,
            &["a".to_string()],
            &CompareOptions::default(),
        );
        assert!(report.passed());
    }

    #[test]
    fn signal_list_skips_time() {
        assert_eq!(
            parse_signal_list("time\na.b\n\n x[2] \n"),
            vec!["a.b", "x[2]"]
        );
    }

    #[test]
    fn signal_list_skips_switched_off_signals() {
        // Several references list a signal commented out with `//`; CRLF line ends and a
        // capital `Time` occur in hand-edited files.
        assert_eq!(
            parse_signal_list("Time\r\nshaft.w\r\n// aimc.i_0_s\r\n#note\r\nshaft.phi\r\n"),
            vec!["shaft.w", "shaft.phi"]
        );
    }
}
