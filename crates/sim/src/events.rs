//! Zero-crossing bookkeeping: when a relation has changed relative to its frozen value, and
//! where along a step it changed (Illinois root finding on the dense output).

use moss_symbolic::program::RelOp;

/// Truth of `lhs <op> rhs` given `g = lhs - rhs`.
pub fn relation_holds(op: RelOp, g: f64) -> bool {
    match op {
        RelOp::Gt => g > 0.0,
        RelOp::Ge => g >= 0.0,
        RelOp::Lt => g < 0.0,
        RelOp::Le => g <= 0.0,
        RelOp::Eq => g == 0.0,
        RelOp::Ne => g != 0.0,
    }
}

/// Has zero crossing `g` changed since the last event? For ordered relations: its relation
/// value differs from the frozen one. For `==`/`<>` (which hardly ever hold exactly on
/// reals): `g` changed sign strictly since the start of the step (`g_start`).
pub fn has_crossed(op: RelOp, frozen: bool, g_start: f64, g: f64) -> bool {
    if g.is_nan() {
        return false;
    }
    match op {
        RelOp::Eq | RelOp::Ne => g * g_start < 0.0,
        _ => relation_holds(op, g) != frozen,
    }
}

/// Time tolerance of root location inside the step `[t0, t1]`: about 1e-12 relative.
pub fn root_time_tolerance(t0: f64, t1: f64) -> f64 {
    (1e-12 * t1.abs().max(t0.abs()).max(t1 - t0))
        .max(4.0 * f64::EPSILON * t1.abs())
        .max(f64::MIN_POSITIVE)
}

/// Illinois (modified regula falsi) on `[a, b]`, where `crossed(a)` is false and
/// `crossed(b)` is true. `eval(t)` returns `(g(t), crossed(t))`. Returns the final bracket
/// `(lo, hi)` with `hi - lo <= tol` (or no float between them); `hi` is on the changed side.
pub fn illinois<E>(
    mut a: f64,
    mut ga: f64,
    mut b: f64,
    mut gb: f64,
    tol: f64,
    mut eval: impl FnMut(f64) -> Result<(f64, bool), E>,
) -> Result<(f64, f64), E> {
    // Which end moved last (+1: b, -1: a), to halve the stale end's value.
    let mut last_side = 0i32;
    let mut width_before = b - a;
    // Once only: if `g` is zero over a stretch, later probes bisect.
    let mut probed_beside_end = false;
    for iteration in 0..200 {
        let width = b - a;
        if width <= tol {
            break;
        }
        let mid = a + 0.5 * width;
        if mid <= a || mid >= b {
            break;
        }
        let secant = if gb != ga && ga.is_finite() && gb.is_finite() {
            b - gb * (b - a) / (gb - ga)
        } else {
            mid
        };
        // The secant through a zero end (`g` exactly zero where the relation changed: a
        // triangle wave's corner at a time event) is that end: the root is there to within
        // the rounding of `g`, so probe just beside it once, which bisection would take
        // forty halvings to reach.
        let beside_zero_end = if gb == 0.0 && !probed_beside_end {
            Some(b - 0.5 * tol)
        } else if ga == 0.0 && !probed_beside_end {
            Some(a + 0.5 * tol)
        } else {
            None
        };
        // Fall back to bisection when the secant point is useless or the bracket stopped
        // shrinking fast (every third iteration, check that it at least halved).
        let mut t = if secant > a && secant < b {
            secant
        } else if let Some(t) = beside_zero_end.filter(|&t| t > a && t < b) {
            probed_beside_end = true;
            t
        } else {
            mid
        };
        if iteration % 3 == 2 {
            if width > 0.5 * width_before && beside_zero_end.is_none() {
                t = mid;
            }
            width_before = width;
        }
        // Never probe closer to an end than a fraction of the tolerance: keeps the final
        // bracket from crawling one float at a time.
        t = t.clamp(a + 0.25 * tol.min(width), b - 0.25 * tol.min(width));
        let (g, crossed) = eval(t)?;
        if crossed {
            b = t;
            gb = g;
            if last_side == 1 {
                ga *= 0.5;
            }
            last_side = 1;
        } else {
            a = t;
            ga = g;
            if last_side == -1 {
                gb *= 0.5;
            }
            last_side = -1;
        }
    }
    Ok((a, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relation_change_follows_operator() {
        assert!(has_crossed(RelOp::Lt, false, 1.0, -1e-300));
        assert!(!has_crossed(RelOp::Lt, false, 1.0, 0.0));
        assert!(has_crossed(RelOp::Le, false, 1.0, 0.0));
        assert!(has_crossed(RelOp::Ge, false, -1.0, 0.0));
        assert!(!has_crossed(RelOp::Gt, false, -1.0, 0.0));
        assert!(has_crossed(RelOp::Eq, false, -1.0, 2.0));
        assert!(!has_crossed(RelOp::Gt, false, -1.0, f64::NAN));
    }

    #[test]
    fn illinois_finds_root_to_tolerance() {
        // g(t) = t^3 - 0.3 (root at 0.3^(1/3)), crossed when g >= 0.
        let root = 0.3f64.cbrt();
        let mut evals = 0;
        let (lo, hi) = illinois(0.0, -0.3, 1.0, 0.7, 1e-12, |t| {
            evals += 1;
            let g = t * t * t - 0.3;
            Ok::<_, ()>((g, g >= 0.0))
        })
        .expect("no error");
        assert!(hi - lo <= 1e-12, "bracket {lo} {hi}");
        assert!(lo <= root && root <= hi, "root {root} not in [{lo}, {hi}]");
        assert!(evals < 30, "{evals} evaluations");
    }

    #[test]
    fn illinois_handles_root_at_right_end() {
        // Changed exactly at b (a time event landed on): bracket shrinks onto b.
        let (lo, hi) = illinois(0.0, -0.5, 0.5, 0.0, 1e-12, |t| {
            let g = t - 0.5;
            Ok::<_, ()>((g, g >= 0.0))
        })
        .expect("no error");
        assert_eq!(hi, 0.5);
        assert!(hi - lo <= 1e-12);
    }

    #[test]
    fn a_zero_at_the_changed_end_is_confirmed_beside_it_without_bisecting() {
        // g is exactly zero where the relation changed (a corner of a triangle wave at a
        // time event): the secant points at b itself, and halving [a, b] down to 1e-12
        // took 38 evaluations. One probe beside b settles it.
        let mut evals = 0;
        let (lo, hi) = illinois(1.111e-3, 0.278, 1.25e-3, 0.0, 2.5e-15, |t| {
            evals += 1;
            let g = 2000.0 * (1.25e-3 - t);
            Ok::<_, ()>((g, g <= 0.0))
        })
        .expect("no error");
        assert_eq!(hi, 1.25e-3);
        assert!(hi - lo <= 2.5e-15, "bracket {lo} {hi}");
        assert!(evals <= 2, "{evals} evaluations");
    }

    #[test]
    fn a_zero_stretch_is_bisected_to_its_start() {
        // g is zero from 0.3 on (crossed there: g >= 0), so every secant points at the end
        // and the probe beside it is crossed too: the search bisects to 0.3 instead of
        // crawling towards it by the tolerance.
        let mut evals = 0;
        let (lo, hi) = illinois(0.0, -0.3, 1.0, 0.0, 1e-12, |t| {
            evals += 1;
            let g = (t - 0.3).min(0.0);
            Ok::<_, ()>((g, g >= 0.0))
        })
        .expect("no error");
        assert!(
            lo <= 0.3 && 0.3 <= hi && hi - lo <= 1e-12,
            "bracket {lo} {hi}"
        );
        assert!(evals < 60, "{evals} evaluations");
    }
}
