//! Iterative solvers for `SolveScalar` and `Nonlinear` blocks.
//!
//! - Scalar: damped Newton (symbolic derivative or finite difference); if that stalls, search
//!   for a sign change around the start value and refine it by regula falsi (Illinois).
//! - Systems: damped Newton with an Armijo backtracking line search on the scaled residual
//!   norm (rows scaled by the size of their Jacobian entries times the variables' nominal
//!   values); if Newton fails, Levenberg–Marquardt restarted from the start values.

use crate::compile::{NonlinearStep, ScalarStep};
use crate::interp::SolverHost;
use crate::linalg::DenseLu;
use crate::model::RuntimeError;
use std::sync::Arc;

const SCALAR_MAX_ITER: usize = 60;
const NEWTON_MAX_ITER: usize = 50;
const LM_MAX_ITER: usize = 200;
const RES_TOL: f64 = 1e-10;
const STEP_TOL: f64 = 1e-12;

/// `Ok(Ok(x))`: solved; `Ok(Err((x, f)))`: failed with best point `x` and residual `f`.
pub(crate) fn solve_scalar(
    h: &mut impl SolverHost,
    s: &ScalarStep,
    x0: f64,
    nominal: f64,
) -> Result<Result<f64, (f64, f64)>, RuntimeError> {
    let scale = |x: f64| x.abs().max(nominal);
    let mut x = x0;
    let mut fx = h.scalar_residual_host(s, x)?;
    if fx == 0.0 {
        return Ok(Ok(x));
    }
    for _ in 0..SCALAR_MAX_ITER {
        h.count_iteration();
        if !fx.is_finite() {
            break;
        }
        let d = match &s.der {
            Some((code, r)) => {
                h.run_tape_host(code)?;
                h.mem()[*r as usize]
            }
            None => {
                let step = 1e-7 * scale(x);
                (h.scalar_residual_host(s, x + step)? - fx) / step
            }
        };
        if !d.is_finite() || d == 0.0 {
            break;
        }
        let step = fx / d;
        if step.abs() <= STEP_TOL * scale(x) {
            return Ok(Ok(x));
        }
        let mut lambda = 1.0;
        let mut accepted = None;
        for _ in 0..30 {
            let xn = x - lambda * step;
            let fnew = h.scalar_residual_host(s, xn)?;
            if fnew.is_finite() && fnew.abs() < fx.abs() {
                accepted = Some((xn, fnew));
                break;
            }
            lambda *= 0.5;
        }
        let Some((xn, fnew)) = accepted else { break };
        x = xn;
        fx = fnew;
        if fx == 0.0 || (lambda * step).abs() <= STEP_TOL * scale(x) {
            return Ok(Ok(x));
        }
    }
    // Newton stalled: bracket a sign change and refine it
    if let Some(root) = bracket_and_refine(h, s, x0, nominal)? {
        return Ok(Ok(root));
    }
    Ok(Err((x, fx)))
}

fn bracket_and_refine(
    h: &mut impl SolverHost,
    s: &ScalarStep,
    x0: f64,
    nominal: f64,
) -> Result<Option<f64>, RuntimeError> {
    let f0 = h.scalar_residual_host(s, x0)?;
    // the first point with a finite residual is the reference (the start value may lie
    // outside the residual's domain)
    let mut reference = f0.is_finite().then_some((x0, f0));
    let mut width = 0.01 * x0.abs().max(nominal);
    let mut bracket = None;
    for _ in 0..80 {
        for cand in [x0 + width, x0 - width] {
            let fc = h.scalar_residual_host(s, cand)?;
            if fc == 0.0 {
                return Ok(Some(cand));
            }
            if !fc.is_finite() {
                continue;
            }
            match reference {
                None => reference = Some((cand, fc)),
                Some((xr, fr)) if fr.signum() != fc.signum() => {
                    bracket = Some(if cand < xr {
                        (cand, fc, xr, fr)
                    } else {
                        (xr, fr, cand, fc)
                    });
                    break;
                }
                Some(_) => {}
            }
        }
        if bracket.is_some() || !width.is_finite() {
            break;
        }
        width *= 2.0;
    }
    let Some((mut a, mut fa, mut b, mut fb)) = bracket else {
        return Ok(None);
    };
    let mut side = 0i8;
    for _ in 0..300 {
        h.count_iteration();
        let c = (a * fb - b * fa) / (fb - fa);
        let c = if c.is_finite() && c > a && c < b {
            c
        } else {
            0.5 * (a + b)
        };
        let fc = h.scalar_residual_host(s, c)?;
        if !fc.is_finite() {
            return Ok(None);
        }
        if fc == 0.0 || (b - a).abs() <= 4.0 * f64::EPSILON * c.abs().max(nominal) {
            return Ok(Some(c));
        }
        if fc.signum() == fa.signum() {
            a = c;
            fa = fc;
            if side == -1 {
                fb *= 0.5;
            }
            side = -1;
        } else {
            b = c;
            fb = fc;
            if side == 1 {
                fa *= 0.5;
            }
            side = 1;
        }
    }
    Ok(Some(0.5 * (a + b)))
}

/// State of one nonlinear solve.
struct System<'a> {
    nl: &'a NonlinearStep,
    n: usize,
    /// Residual row scales.
    row_scale: Vec<f64>,
    /// The Jacobian rows the scales are made of (row-major, `n * n`; only their magnitudes
    /// count): the smallest row seen so far, weighed with the variables' current
    /// magnitudes. Shared with a kept Jacobian until a row is tightened.
    scale_rows: Arc<Vec<f64>>,
    last_error: Option<String>,
    /// Best point seen (smallest scaled residual norm), for the failure report.
    best: Option<(f64, Vec<f64>)>,
}

impl System<'_> {
    /// Residuals at `x` (None if evaluation failed or produced non-finite values).
    fn residuals(&mut self, h: &mut impl SolverHost, x: &[f64]) -> Option<Vec<f64>> {
        for (&v, &xi) in self.nl.vars.iter().zip(x) {
            h.mem()[v as usize] = xi;
        }
        let r = h
            .run_steps_host(&self.nl.inner)
            .and_then(|_| h.run_tape_host(&self.nl.res_code));
        if let Err(e) = r {
            self.last_error = Some(e.message);
            return None;
        }
        let f: Vec<f64> = self.nl.res.iter().map(|&r| h.mem()[r as usize]).collect();
        if !f.iter().all(|v| v.is_finite()) {
            return None;
        }
        let merit = self.merit(&f);
        match &mut self.best {
            Some((m, best)) if merit < *m => {
                *m = merit;
                best.clear();
                best.extend_from_slice(x);
            }
            Some(_) => {}
            None => self.best = Some((merit, x.to_vec())),
        }
        Some(f)
    }

    /// Project a trial point into the variables' min/max bounds.
    fn project(&self, x: &mut [f64]) {
        for (xi, &(lo, hi)) in x.iter_mut().zip(&self.nl.bounds) {
            *xi = xi.clamp(lo, hi);
        }
    }

    fn merit(&self, f: &[f64]) -> f64 {
        f.iter()
            .zip(&self.row_scale)
            .map(|(fi, s)| (fi / s) * (fi / s))
            .sum::<f64>()
    }

    fn max_scaled(&self, f: &[f64]) -> f64 {
        f.iter()
            .zip(&self.row_scale)
            .fold(0.0f64, |m, (fi, s)| m.max((fi / s).abs()))
    }

    /// Row-major Jacobian at `x` where `f = F(x)` was the last evaluation.
    fn jacobian(&mut self, h: &mut impl SolverHost, x: &[f64], f: &[f64]) -> Option<Vec<f64>> {
        let n = self.n;
        let mut j = vec![0.0; n * n];
        if let Some((code, entries)) = &self.nl.jac {
            if let Err(e) = h.run_tape_host(code) {
                self.last_error = Some(e.message);
                return None;
            }
            for &(r, c, reg) in entries {
                j[r as usize * n + c as usize] += h.mem()[reg as usize];
            }
            return j.iter().all(|v| v.is_finite()).then_some(j);
        }
        let mut xp = x.to_vec();
        let step = |c: usize| 1e-7 * x[c].abs().max(self.nl.nominal[c]);
        if let Some(g) = &self.nl.fd_groups {
            // columns sharing no row perturbed together (see `fd_columns`)
            for group in &g.groups {
                for &c in group {
                    xp[c as usize] = x[c as usize] + step(c as usize);
                }
                let fp = self.residuals(h, &xp)?;
                for &c in group {
                    let c = c as usize;
                    for &r in &g.col_rows[c] {
                        let r = r as usize;
                        j[r * n + c] = (fp[r] - f[r]) / step(c);
                    }
                    xp[c] = x[c];
                }
            }
        } else {
            for c in 0..n {
                xp[c] = x[c] + step(c);
                let fp = self.residuals(h, &xp)?;
                for r in 0..n {
                    j[r * n + c] = (fp[r] - f[r]) / step(c);
                }
                xp[c] = x[c];
            }
        }
        // restore the memory to F(x)
        self.residuals(h, x)?;
        Some(j)
    }

    /// Scale of each residual row: its largest Jacobian entry times the magnitude of the
    /// variable (nominal, or the current value when larger), so that the convergence test is
    /// relative for systems whose unknowns are far from their nominal values (megavolts).
    fn set_row_scale(&mut self, j: Arc<Vec<f64>>, x: &[f64]) {
        self.scale_rows = j;
        self.rescale_at(x);
    }

    /// The row scales for the variables' magnitudes at `x`, from the stored Jacobian rows.
    fn rescale_at(&mut self, x: &[f64]) {
        for r in 0..self.n {
            let s = self.weighed_row(&self.scale_rows[r * self.n..(r + 1) * self.n], x);
            self.row_scale[r] = usable_scale(s);
        }
    }

    /// Largest `|J_rc|` of one row times the magnitude of variable `c` at `x`.
    fn weighed_row(&self, row: &[f64], x: &[f64]) -> f64 {
        row.iter()
            .zip(x)
            .zip(&self.nl.nominal)
            .fold(0.0f64, |m, ((j, xi), nom)| {
                m.max((j * nom.max(xi.abs())).abs())
            })
    }

    /// Keep, row by row, the Jacobian row that weighs less at `x`: a start far from the
    /// solution (a junction forward-biased by volts) has Jacobian entries many orders of
    /// magnitude above those at the root, and a test relative to them would accept a point
    /// that is no solution (currents of 1e-4 A left in a CMOS inverter's node equations).
    /// The variables' magnitudes are always those at `x`: unknowns that grow from a zero
    /// start to 5e10 V/s (a transistor's junction slopes at initialization) make their
    /// residual terms, and the rounding in them, grow as much.
    fn tighten_row_scale(&mut self, j: &[f64], x: &[f64]) {
        let n = self.n;
        for r in 0..n {
            let new_row = &j[r * n..(r + 1) * n];
            let old = self.weighed_row(&self.scale_rows[r * n..(r + 1) * n], x);
            let new = self.weighed_row(new_row, x);
            let kept = if new < old {
                let rows = Arc::make_mut(&mut self.scale_rows);
                rows[r * n..(r + 1) * n].copy_from_slice(new_row);
                new
            } else {
                old
            };
            self.row_scale[r] = usable_scale(kept);
        }
    }

    fn converged(&self, f: &[f64]) -> bool {
        self.max_scaled(f) <= RES_TOL
    }

    /// Every component of the step `lambda * dx` from `x` within `rel` of the variable's
    /// magnitude (its value or nominal, the larger).
    fn step_within(&self, x: &[f64], dx: &[f64], lambda: f64, rel: f64) -> bool {
        dx.iter()
            .zip(x)
            .zip(&self.nl.nominal)
            .all(|((d, xi), nom)| (lambda * d).abs() <= rel * xi.abs().max(*nom))
    }

    fn step_small(&self, x: &[f64], dx: &[f64]) -> bool {
        dx.iter()
            .zip(x)
            .zip(&self.nl.nominal)
            .all(|((d, xi), nom)| d.abs() <= STEP_TOL * xi.abs().max(*nom))
    }
}

pub(crate) fn solve_nonlinear(
    h: &mut impl SolverHost,
    nl: &NonlinearStep,
) -> Result<(), RuntimeError> {
    h.count_solve();
    let n = nl.vars.len();
    let x_start: Vec<f64> = nl
        .vars
        .iter()
        .map(|&v| {
            let x = h.mem()[v as usize];
            if x.is_finite() {
                x
            } else {
                0.0
            }
        })
        .collect();
    let mut sys = System {
        nl,
        n,
        row_scale: vec![1.0; n],
        scale_rows: Arc::default(),
        last_error: None,
        best: None,
    };
    if nl.linear {
        if let Some((x, settled)) = linear_step(h, &mut sys, &x_start) {
            // the memory holds the values at `x` unless the last evaluation was elsewhere
            if !settled {
                sys.residuals(h, &x);
            }
            return Ok(());
        }
    }
    if let Some(x) = newton(h, &mut sys, &x_start)? {
        sys.residuals(h, &x);
        return Ok(());
    }
    h.count_fallback();
    if let Some(x) = levenberg_marquardt(h, &mut sys, &x_start)? {
        sys.residuals(h, &x);
        return Ok(());
    }
    // a zero start value is often a singular point of the torn equations (a resistance
    // or a temperature divided by): retry from the nominal magnitudes of both signs
    for x_alt in alternative_starts(&x_start, nl) {
        if let Some(x) = newton(h, &mut sys, &x_alt)? {
            sys.residuals(h, &x);
            return Ok(());
        }
        if let Some(x) = levenberg_marquardt(h, &mut sys, &x_alt)? {
            sys.residuals(h, &x);
            return Ok(());
        }
    }
    Err(failure(h, &mut sys, &x_start))
}

/// A torn linear loop: the residuals are affine in `x`, so `x0 - J⁻¹ r(x0)` is the solution
/// up to rounding, checked only loosely (rounding in residuals made of large terms would fail
/// Newton's tight test). `None` when `J` is singular, or when the residuals at the new point
/// are not small, which happens in event mode when a relation on a loop variable switches
/// branch between the two points; the general solver then handles the loop (singular but
/// consistent systems and branch switches included). With the solution, whether the memory
/// was last evaluated at it (then it need not be evaluated again: the same numbers).
fn linear_step(h: &mut impl SolverHost, sys: &mut System, x0: &[f64]) -> Option<(Vec<f64>, bool)> {
    h.count_iteration();
    let f = sys.residuals(h, x0)?;
    let (j, lu) = match kept_jacobian(h, sys) {
        Some(kept) => kept,
        None => {
            let j = Arc::new(sys.jacobian(h, x0, &f)?);
            match DenseLu::factor(sys.n, j.to_vec()) {
                Ok(lu) => {
                    let lu = Arc::new(lu);
                    if let Some(c) = &sys.nl.jac_cache {
                        h.machine()
                            .keep_matrix(c, Some(Arc::clone(&lu)), Arc::clone(&j));
                    }
                    (j, lu)
                }
                Err(_) => {
                    sys.set_row_scale(Arc::clone(&j), x0);
                    return min_norm_step(h, sys, x0, &f, &j).map(|x| (x, false));
                }
            }
        }
    };
    sys.set_row_scale(j, x0);
    let mut dx: Vec<f64> = f.iter().map(|v| -v).collect();
    lu.solve(&mut dx);
    let x: Vec<f64> = x0.iter().zip(&dx).map(|(a, d)| a + d).collect();
    let f1 = sys.residuals(h, &x)?;
    // the residuals at the solution are judged by the magnitudes there (the Jacobian is
    // the same: the loop is linear)
    sys.rescale_at(&x);
    if sys.max_scaled(&f1) > LINEAR_STEP_TOL {
        return None;
    }
    // residuals exactly zero leave nothing to refine (the refinement's step would be zero
    // and its point no better): the memory holds the values at `x`
    if f1.iter().all(|r| *r == 0.0) {
        return Some((x, true));
    }
    // one step of iterative refinement: an ill-conditioned J (stiffly coupled, locked
    // clutches) leaves more than rounding in the first solution
    Some(polish(h, sys, x, &f1, &lu))
}

/// The Jacobian of a torn linear loop and its factors, kept from an earlier solve whose
/// Jacobian inputs had the values they have now (`NonlinearStep::jac_cache`).
fn kept_jacobian(h: &mut impl SolverHost, sys: &System) -> Option<(Arc<Vec<f64>>, Arc<DenseLu>)> {
    let cache = sys.nl.jac_cache.as_ref()?;
    let m = h.machine();
    match m.kept_matrix(cache) {
        Some(k) => {
            let lu = Arc::clone(k.dense.as_ref()?);
            let j = Arc::clone(&k.matrix);
            m.kept_matrix_solves += 1;
            Some((j, lu))
        }
        None => {
            m.drop_kept_matrix(cache);
            None
        }
    }
}

/// A torn linear loop whose Jacobian is singular but consistent (two locked friction
/// elements sharing one holding torque): the solution of least nominal-weighted norm over
/// all unknowns of the loop, which depends on the equations only. Continuing from `x0`
/// instead would carry whatever split the previous evaluation left (a sliding element's
/// path parameter is an acceleration, not the torque it holds once locked), so the modes
/// an event iteration settles in would depend on the history of trial points rather than
/// on the model; and the norm of the iteration variables alone would depend on which
/// variables tearing picked.
fn min_norm_step(
    h: &mut impl SolverHost,
    sys: &mut System,
    x0: &[f64],
    f: &[f64],
    j: &[f64],
) -> Option<Vec<f64>> {
    let n = sys.n;
    // the residuals are J x + c with c = f - J x0: solve J x = J x0 - f
    let b: Vec<f64> = (0..n)
        .map(|r| (0..n).map(|c| j[r * n + c] * x0[c]).sum::<f64>() - f[r])
        .collect();
    let w = sys.nl.nominal.clone();
    let xp = crate::linalg::solve_min_norm(n, j, &b, &w)?;
    let x = if sys.nl.inner_vars.is_empty() || n > MIN_NORM_MAX_VARS {
        xp
    } else {
        least_loop_norm(h, sys, &xp, j, &w).unwrap_or(xp)
    };
    let f1 = sys.residuals(h, &x)?;
    sys.rescale_at(&x);
    (sys.max_scaled(&f1) <= LINEAR_STEP_TOL).then_some(x)
}

/// Largest torn linear loop whose singular solution minimizes over the inner unknowns too
/// (the null space is found column by column, O(n^4)); larger ones minimize over the
/// iteration variables only.
const MIN_NORM_MAX_VARS: usize = 24;

/// Move the particular solution `xp` of a singular torn linear loop within the null space
/// of `J` to the point of least norm over all the loop's unknowns (iteration variables
/// weighted by `w`, inner ones by their nominal values). The inner unknowns are affine in
/// the iteration variables, so one evaluation per null direction gives their change.
fn least_loop_norm(
    h: &mut impl SolverHost,
    sys: &mut System,
    xp: &[f64],
    j: &[f64],
    w: &[f64],
) -> Option<Vec<f64>> {
    let n = sys.n;
    let dirs = null_directions(n, j, w);
    if dirs.is_empty() {
        return None;
    }
    let inner: Vec<(u32, f64)> = sys.nl.inner_vars.clone();
    sys.residuals(h, xp)?;
    let yp: Vec<f64> = inner.iter().map(|&(v, _)| h.mem()[v as usize]).collect();
    // rows of the least-squares problem in the null-space coordinates t: one per unknown
    let q = dirs.len();
    let mut rows: Vec<(Vec<f64>, f64)> = Vec::with_capacity(inner.len() + n);
    let mut g = vec![vec![0.0; q]; inner.len()];
    for (k, d) in dirs.iter().enumerate() {
        let xk: Vec<f64> = xp.iter().zip(d).map(|(a, b)| a + b).collect();
        sys.residuals(h, &xk)?;
        for (i, &(v, _)) in inner.iter().enumerate() {
            g[i][k] = h.mem()[v as usize] - yp[i];
        }
    }
    for (i, &(_, nom)) in inner.iter().enumerate() {
        rows.push((g[i].iter().map(|e| e / nom).collect(), -yp[i] / nom));
    }
    for c in 0..n {
        rows.push((dirs.iter().map(|d| d[c] / w[c]).collect(), -xp[c] / w[c]));
    }
    // normal equations (singular when directions repeat, always consistent)
    let mut m = vec![0.0; q * q];
    let mut rhs = vec![0.0; q];
    for (row, target) in &rows {
        for a in 0..q {
            rhs[a] += row[a] * target;
            for b in 0..q {
                m[a * q + b] += row[a] * row[b];
            }
        }
    }
    let t = crate::linalg::solve_min_norm(q, &m, &rhs, &vec![1.0; q])?;
    let x: Vec<f64> = (0..n)
        .map(|c| xp[c] + dirs.iter().zip(&t).map(|(d, tk)| d[c] * tk).sum::<f64>())
        .collect();
    x.iter().all(|v| v.is_finite()).then_some(x)
}

/// Directions spanning the null space of `J` (in the unknowns' units): the projections of
/// the weighted unit vectors onto the null space of `J W`, scaled back by `W`; those that
/// vanish are dropped.
fn null_directions(n: usize, j: &[f64], w: &[f64]) -> Vec<Vec<f64>> {
    let jw: Vec<f64> = (0..n * n).map(|k| j[k] * w[k % n]).collect();
    let ones = vec![1.0; n];
    let mut dirs = vec![];
    for k in 0..n {
        let col: Vec<f64> = (0..n).map(|r| jw[r * n + k]).collect();
        let Some(range_part) = crate::linalg::solve_min_norm(n, &jw, &col, &ones) else {
            continue;
        };
        let p: Vec<f64> = (0..n)
            .map(|c| f64::from(u8::from(c == k)) - range_part[c])
            .collect();
        if p.iter().fold(0.0f64, |m, v| m.max(v.abs())) > 1e-8 {
            dirs.push(p.iter().zip(w).map(|(a, b)| a * b).collect());
        }
    }
    dirs
}

/// Largest scaled residual accepted after the exact step of a torn linear loop.
const LINEAR_STEP_TOL: f64 = 1e-6;

/// Start points to retry from when the given ones fail: each variable starting at zero
/// moves to plus (then minus) its nominal value, projected into its bounds; then the
/// mirrored start `-x` (a circuit with hysteresis, like a Schmitt trigger, jumps from one
/// saturated branch to the mirrored one when its current branch ends).
fn alternative_starts(x_start: &[f64], nl: &NonlinearStep) -> Vec<Vec<f64>> {
    let mut starts: Vec<Vec<f64>> = vec![];
    if x_start.contains(&0.0) {
        for sign in [1.0, -1.0] {
            starts.push(
                x_start
                    .iter()
                    .zip(&nl.nominal)
                    .zip(&nl.bounds)
                    .map(|((&x, &nom), &(lo, hi))| {
                        if x == 0.0 {
                            (sign * nom).clamp(lo, hi)
                        } else {
                            x
                        }
                    })
                    .collect(),
            );
        }
    }
    starts.push(
        x_start
            .iter()
            .zip(&nl.bounds)
            .map(|(&x, &(lo, hi))| (-x).clamp(lo, hi))
            .collect(),
    );
    starts.retain(|x| x.as_slice() != x_start);
    starts.dedup();
    starts
}

fn newton(
    h: &mut impl SolverHost,
    sys: &mut System,
    x0: &[f64],
) -> Result<Option<Vec<f64>>, RuntimeError> {
    let mut x = x0.to_vec();
    let Some(mut f) = sys.residuals(h, &x) else {
        return Ok(None);
    };
    let mut scaled = false;
    for _ in 0..NEWTON_MAX_ITER {
        h.count_iteration();
        let Some(j) = sys.jacobian(h, &x, &f) else {
            return Ok(None);
        };
        if scaled {
            sys.tighten_row_scale(&j, &x);
        } else {
            sys.set_row_scale(Arc::new(j.clone()), &x);
            scaled = true;
        }
        let converged = sys.converged(&f);
        let Ok(lu) = DenseLu::factor(sys.n, j) else {
            return Ok(converged.then_some(x));
        };
        if converged {
            return Ok(Some(polish(h, sys, x, &f, &lu).0));
        }
        let mut dx: Vec<f64> = f.iter().map(|v| -v).collect();
        lu.solve(&mut dx);
        if sys.step_small(&x, &dx) {
            return Ok((sys.max_scaled(&f) <= 1e-6).then_some(x));
        }
        let phi = sys.merit(&f);
        let mut lambda = 1.0;
        let mut accepted = None;
        while lambda >= 1e-5 {
            let mut xn: Vec<f64> = x.iter().zip(&dx).map(|(a, d)| a + lambda * d).collect();
            sys.project(&mut xn);
            if let Some(fnew) = sys.residuals(h, &xn) {
                if sys.merit(&fnew) <= (1.0 - 1e-4 * lambda) * phi {
                    accepted = Some((xn, fnew));
                    break;
                }
            }
            if lambda == 1.0 && at_rounding_floor(sys, &x, &dx, &f) {
                return Ok(Some(x));
            }
            lambda *= 0.5;
        }
        let Some((xn, fnew)) = accepted else {
            return Ok(None);
        };
        // The row scale is that of the Jacobian at the previous point, which stands for the
        // one here when the step was short; after a long step the test waits for the
        // Jacobian here (the next iteration).
        let short = sys.step_within(&x, &dx, lambda, SHORT_STEP);
        x = xn;
        f = fnew;
        if short && sys.converged(&f) {
            return Ok(Some(polish(h, sys, x, &f, &lu).0));
        }
    }
    Ok(None)
}

/// A row scale that can be divided by: a vanishing or non-finite one is replaced by 1.
fn usable_scale(s: f64) -> f64 {
    if s > 1e-300 && s.is_finite() {
        s
    } else {
        1.0
    }
}

/// Whether Newton stalls on the rounding noise of the residuals at `x`: the full step from a
/// point whose scaled residual is already small (below `ROUNDING_FLOOR_TOL`) and which moves
/// no variable by more than `ROUNDING_FLOOR_STEP` of its magnitude does not lower the
/// residual. The residuals are then made of terms much larger than their difference (a
/// transistor's base current balanced against emitter and collector currents, 5e-15 A of
/// rounding beside 1e-9 of scale), no point reachable evaluates closer to zero, and
/// iterating on would only walk the noise until the iteration limit.
fn at_rounding_floor(sys: &System, x: &[f64], dx: &[f64], f: &[f64]) -> bool {
    sys.max_scaled(f) <= ROUNDING_FLOOR_TOL && sys.step_within(x, dx, 1.0, ROUNDING_FLOOR_STEP)
}

/// Largest scaled residual accepted when Newton stalls on rounding (see `at_rounding_floor`).
const ROUNDING_FLOOR_TOL: f64 = 1e-5;

/// Largest relative Newton step accepted as rounding noise (see `at_rounding_floor`).
const ROUNDING_FLOOR_STEP: f64 = 1e-4;

/// A Newton step no longer than this, relative to the variables' magnitudes, leaves the
/// Jacobian (and so the scale of the convergence test) about as it was.
const SHORT_STEP: f64 = 1e-3;

/// One more chord step (with the last factored Jacobian) after convergence, kept when it
/// lowers the residual. The tolerance is relative to the largest Jacobian entry, so a
/// converged point can still be off by much in a small quantity (the voltage across an
/// ideal diode next to a 1e5 S conductance); zero crossings on such quantities then fire
/// on solver noise. The extra step costs one residual evaluation and, near the root,
/// shrinks the error by orders of magnitude. Returns the point and whether it is the one
/// the memory was last evaluated at (the refined one).
fn polish(
    h: &mut impl SolverHost,
    sys: &mut System,
    x: Vec<f64>,
    f: &[f64],
    lu: &DenseLu,
) -> (Vec<f64>, bool) {
    let mut dx: Vec<f64> = f.iter().map(|v| -v).collect();
    lu.solve(&mut dx);
    let mut xn: Vec<f64> = x.iter().zip(&dx).map(|(a, d)| a + d).collect();
    sys.project(&mut xn);
    match sys.residuals(h, &xn) {
        Some(fnew) if sys.merit(&fnew) < sys.merit(f) => (xn, true),
        _ => (x, false),
    }
}

/// Levenberg–Marquardt on the scaled residuals: robust where Newton's Jacobian is singular
/// or its steps do not decrease the residual.
fn levenberg_marquardt(
    h: &mut impl SolverHost,
    sys: &mut System,
    x0: &[f64],
) -> Result<Option<Vec<f64>>, RuntimeError> {
    let n = sys.n;
    let mut x = x0.to_vec();
    let Some(mut f) = sys.residuals(h, &x) else {
        return Ok(None);
    };
    let mut mu = -1.0;
    let mut need_jac = true;
    let mut jtj = vec![0.0; n * n];
    let mut jtf = vec![0.0; n];
    for _ in 0..LM_MAX_ITER {
        h.count_iteration();
        if sys.converged(&f) {
            return Ok(Some(x));
        }
        if need_jac {
            let Some(j) = sys.jacobian(h, &x, &f) else {
                return Ok(None);
            };
            // scaled Jacobian rows
            for r in 0..n {
                for c in 0..n {
                    let mut s = 0.0;
                    for k in 0..n {
                        s += j[k * n + r] * j[k * n + c] / sys.row_scale[k].powi(2);
                    }
                    jtj[r * n + c] = s;
                }
                jtf[r] = (0..n)
                    .map(|k| j[k * n + r] * f[k] / sys.row_scale[k].powi(2))
                    .sum();
            }
            need_jac = false;
        }
        if mu < 0.0 {
            mu = 1e-3 * (0..n).fold(0.0f64, |m, i| m.max(jtj[i * n + i])).max(1e-12);
        }
        let mut a = jtj.clone();
        for i in 0..n {
            a[i * n + i] += mu * jtj[i * n + i].max(1e-12);
        }
        let mut dx: Vec<f64> = jtf.iter().map(|v| -v).collect();
        match DenseLu::factor(n, a) {
            Ok(lu) => lu.solve(&mut dx),
            Err(_) => {
                mu *= 10.0;
                continue;
            }
        }
        let mut xn: Vec<f64> = x.iter().zip(&dx).map(|(a, d)| a + d).collect();
        sys.project(&mut xn);
        match sys.residuals(h, &xn) {
            Some(fnew) if sys.merit(&fnew) < sys.merit(&f) => {
                let small = sys.step_small(&x, &dx);
                x = xn;
                f = fnew;
                mu = (mu / 3.0).max(1e-20);
                need_jac = true;
                if small {
                    return Ok(sys.converged(&f).then_some(x));
                }
            }
            _ => {
                mu *= 4.0;
                if mu > 1e20 {
                    return Ok(None);
                }
            }
        }
    }
    Ok(None)
}

/// Up to five variables whose current value is NaN or infinite, as `name = value`.
fn non_finite_slots(h: &mut impl SolverHost) -> Vec<String> {
    let n = h.n_slots();
    let bad: Vec<(u32, f64)> = h.mem()[..n]
        .iter()
        .enumerate()
        .filter(|(_, x)| !x.is_finite())
        .take(5)
        .map(|(v, &x)| (v as u32, x))
        .collect();
    bad.into_iter()
        .map(|(v, x)| format!("{} = {x}", h.name(v)))
        .collect()
}

/// Error naming the worst residuals and the iteration variables.
fn failure(h: &mut impl SolverHost, sys: &mut System, x_start: &[f64]) -> RuntimeError {
    let last_error = sys.last_error.clone();
    let (at, x_best) = match sys.best.clone() {
        Some((_, x)) => ("at the best point found", x),
        None => ("at the start values", x_start.to_vec()),
    };
    let f = sys.residuals(h, &x_best);
    let mut details = vec![];
    match &f {
        Some(f) => {
            let scaled = |i: usize| (f[i] / sys.row_scale[i]).abs();
            let mut order: Vec<usize> = (0..sys.n).collect();
            order.sort_by(|&a, &b| scaled(b).total_cmp(&scaled(a)));
            details.push(format!("largest residuals {at}:"));
            for &i in order.iter().take(5) {
                details.push(format!(
                    "  residual {}: {} = {:e}",
                    i + 1,
                    sys.nl.res_text[i],
                    f[i]
                ));
            }
        }
        None => {
            details.push(format!("the residuals cannot be evaluated {at}"));
            // the evaluation above left the block's intermediate values in memory: the
            // non-finite ones show where it breaks (a division by a capacitance of zero)
            let bad = non_finite_slots(h);
            if !bad.is_empty() {
                details.push(format!("not finite there: {}", bad.join(", ")));
            }
        }
    }
    if let Some(e) = last_error {
        details.push(format!("last evaluation error: {e}"));
    }
    details.push("iteration variables: value (start value)".into());
    for ((&v, x), x0) in sys.nl.vars.iter().zip(&x_best).zip(x_start) {
        details.push(format!("  {} = {x} ({x0})", h.name(v)));
    }
    details.push("hint: give better start values for the iteration variables".into());
    let names: Vec<String> = sys.nl.vars.iter().map(|&v| h.name(v)).collect();
    h.fail(
        format!(
            "nonlinear system for {} did not converge (Newton and Levenberg–Marquardt failed)",
            names.join(", ")
        ),
        details,
    )
}
