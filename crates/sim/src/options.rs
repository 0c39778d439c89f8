//! Simulation options and their resolution against the model's `experiment` annotation.

use moss_symbolic::CausalProgram;
use std::fmt;
use std::sync::Arc;

/// Which integrator to use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Solver {
    /// Chosen by the simulator: DOPRI5 while the problem is not stiff, BDF from the point
    /// where DOPRI5's stiffness test (15 stability-limited steps in a row) fires, for the rest
    /// of the run. Non-stiff models get the cheaper explicit method (about 2.5x faster than
    /// BDF on them); stiff ones, or ones that become stiff (a contact closing, a fast mode
    /// switching on), pay at most the few dozen explicit steps before the switch.
    #[default]
    Auto,
    Dopri5,
    Bdf,
    /// Fixed-step explicit Euler (step: `max_step`, else the output interval).
    Euler,
    /// Fixed-step classical Runge–Kutta 4 (step: `max_step`, else the output interval).
    Rk4,
}

impl Solver {
    pub fn parse(s: &str) -> Option<Solver> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Some(Solver::Auto),
            "dopri5" | "dopri" | "rk45" => Some(Solver::Dopri5),
            "bdf" | "dassl" | "cvode" => Some(Solver::Bdf),
            "euler" => Some(Solver::Euler),
            "rk4" => Some(Solver::Rk4),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Solver::Auto => "auto",
            Solver::Dopri5 => "dopri5",
            Solver::Bdf => "bdf",
            Solver::Euler => "euler",
            Solver::Rk4 => "rk4",
        }
    }
}

/// When to give up on rapidly repeating events.
#[derive(Clone, Debug, PartialEq)]
pub struct ChatteringGuard {
    /// This many events of one zero crossing in a row, each advancing time by less than
    /// `tiny_advance × max(1, |t|, stop - start)`, is chattering.
    pub max_repeats: usize,
    pub tiny_advance: f64,
    /// This many events of any kind within `window × max(1, stop - start)` is chattering.
    pub max_events_in_window: usize,
    pub window: f64,
}

impl Default for ChatteringGuard {
    fn default() -> Self {
        ChatteringGuard {
            max_repeats: 20,
            tiny_advance: 1e-9,
            max_events_in_window: 1000,
            window: 1e-6,
        }
    }
}

/// Called with the current simulation time (for progress bars).
pub type ProgressFn = Arc<dyn Fn(f64) + Send + Sync>;

/// Options of [`crate::simulate`]. `None` fields come from the model's experiment annotation,
/// then from the fallbacks 0 .. 1 s, 500 intervals, tolerance 1e-6.
#[derive(Clone, Default)]
pub struct SimOptions {
    pub start_time: Option<f64>,
    pub stop_time: Option<f64>,
    /// Output interval (takes precedence over `intervals`).
    pub interval: Option<f64>,
    /// Number of output intervals.
    pub intervals: Option<usize>,
    /// Relative tolerance; the absolute tolerance of a state is this times its nominal value.
    pub tolerance: Option<f64>,
    pub solver: Solver,
    /// Where BDF's Jacobian values come from.
    pub jacobian: crate::jacobian::JacobianMode,
    /// Independent parameters to override before initialization.
    pub parameters: Vec<(String, f64)>,
    /// Store only variables whose full name matches this regular expression (whole-name
    /// match). `time` is always stored.
    pub vars: Option<String>,
    /// Also store protected variables (left out by default, as OpenModelica does unless
    /// asked; a `vars` pattern that names them stores them anyway).
    pub protected: bool,
    /// Largest step the integrator may take (default: a fiftieth of the simulated span); the
    /// step of the fixed-step methods (default: the output interval).
    pub max_step: Option<f64>,
    pub chattering: ChatteringGuard,
    pub progress: Option<ProgressFn>,
}

impl fmt::Debug for SimOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SimOptions")
            .field("start_time", &self.start_time)
            .field("stop_time", &self.stop_time)
            .field("interval", &self.interval)
            .field("intervals", &self.intervals)
            .field("tolerance", &self.tolerance)
            .field("solver", &self.solver)
            .field("jacobian", &self.jacobian)
            .field("parameters", &self.parameters)
            .field("vars", &self.vars)
            .field("max_step", &self.max_step)
            .field("chattering", &self.chattering)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

pub const DEFAULT_START: f64 = 0.0;
pub const DEFAULT_STOP: f64 = 1.0;
pub const DEFAULT_INTERVALS: usize = 500;
pub const DEFAULT_TOLERANCE: f64 = 1e-6;
/// More output points than this is almost certainly a mistake (and would exhaust memory).
pub const MAX_OUTPUT_INTERVALS: f64 = 1e8;

/// Options with every default filled in and checked.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    pub start: f64,
    pub stop: f64,
    pub interval: f64,
    pub tolerance: f64,
    pub solver: Solver,
    pub max_step: f64,
}

/// Fill in defaults from the experiment annotation and check them; the error is a sentence
/// saying what is wrong.
pub fn resolve(opts: &SimOptions, program: &CausalProgram) -> Result<Resolved, String> {
    let exp = &program.experiment;
    let start = opts.start_time.or(exp.start_time).unwrap_or(DEFAULT_START);
    let stop = opts.stop_time.or(exp.stop_time).unwrap_or(DEFAULT_STOP);
    if !start.is_finite() || !stop.is_finite() {
        return Err(format!(
            "start time {start} and stop time {stop} must be finite"
        ));
    }
    if stop < start {
        return Err(format!(
            "the stop time ({stop}) is before the start time ({start})"
        ));
    }
    let span = stop - start;
    let interval = match (opts.interval, opts.intervals) {
        (Some(i), _) => i,
        (None, Some(0)) => return Err("the number of output intervals must be at least 1".into()),
        (None, Some(n)) => span / n as f64,
        (None, None) => exp
            .interval
            .filter(|i| *i > 0.0)
            .unwrap_or(span / DEFAULT_INTERVALS as f64),
    };
    if !(interval > 0.0 && interval.is_finite()) && span > 0.0 {
        return Err(format!(
            "the output interval must be positive, not {interval}"
        ));
    }
    if span > 0.0 && span / interval > MAX_OUTPUT_INTERVALS {
        return Err(format!(
            "the output interval {interval} gives {:.0} output points over {span} s; use a \
             larger --interval (at most {MAX_OUTPUT_INTERVALS:.0} points)",
            span / interval
        ));
    }
    let tolerance = opts
        .tolerance
        .or(exp.tolerance)
        .unwrap_or(DEFAULT_TOLERANCE);
    if !(tolerance > 0.0 && tolerance < 1.0) {
        return Err(format!(
            "the tolerance must be between 0 and 1 (exclusive), not {tolerance}"
        ));
    }
    if let Some(h) = opts.max_step {
        if !(h > 0.0 && h.is_finite()) {
            return Err(format!("the maximum step must be positive, not {h}"));
        }
    }
    let fixed = matches!(opts.solver, Solver::Euler | Solver::Rk4);
    let max_step = opts
        .max_step
        .unwrap_or(if fixed { interval } else { span / 50.0 });
    let max_step = if max_step > 0.0 && max_step.is_finite() {
        max_step
    } else {
        f64::MAX
    };
    Ok(Resolved {
        start,
        stop,
        interval: if interval > 0.0 { interval } else { 1.0 },
        tolerance,
        solver: opts.solver,
        max_step,
    })
}

/// Output times `start, start + interval, ..., stop` (the last one exactly `stop`; an
/// interval that does not divide the span leaves a shorter last interval).
pub fn output_grid(start: f64, stop: f64, interval: f64) -> Vec<f64> {
    let span = stop - start;
    if span <= 0.0 {
        return vec![start];
    }
    let n = (span / interval * (1.0 - 1e-12)).ceil().max(1.0) as usize;
    let mut grid: Vec<f64> = (0..n).map(|k| start + k as f64 * interval).collect();
    grid.push(stop);
    grid
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_ends_exactly_at_stop() {
        let g = output_grid(0.0, 1.0, 0.1);
        assert_eq!(g.len(), 11);
        assert_eq!(*g.last().unwrap_or(&0.0), 1.0);
        let g = output_grid(0.0, 1.0, 0.3);
        assert_eq!(g, vec![0.0, 0.3, 0.6, 0.8999999999999999, 1.0]);
    }

    #[test]
    fn experiment_annotation_fills_defaults() {
        let mut p = CausalProgram::default();
        p.experiment.stop_time = Some(10.0);
        p.experiment.tolerance = Some(1e-8);
        let r = resolve(&SimOptions::default(), &p).expect("valid");
        assert_eq!((r.start, r.stop, r.tolerance), (0.0, 10.0, 1e-8));
        assert!((r.interval - 0.02).abs() < 1e-15);
        let opts = SimOptions {
            stop_time: Some(2.0),
            intervals: Some(4),
            ..Default::default()
        };
        let r = resolve(&opts, &p).expect("valid");
        assert_eq!((r.stop, r.interval), (2.0, 0.5));
    }

    #[test]
    fn bad_options_are_explained() {
        let p = CausalProgram::default();
        let opts = SimOptions {
            start_time: Some(2.0),
            stop_time: Some(1.0),
            ..Default::default()
        };
        let e = resolve(&opts, &p).expect_err("invalid");
        assert!(e.contains("before the start time"), "{e}");
        let opts = SimOptions {
            stop_time: Some(10.0),
            interval: Some(1e-9),
            ..Default::default()
        };
        let e = resolve(&opts, &p).expect_err("too many points");
        assert!(e.contains("larger --interval"), "{e}");
    }
}
