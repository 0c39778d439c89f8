//! The recommended rewriting of `semiLinear` at zero flow (spec 3.7.2.5, rule 2): with
//! `x = 0` and `y = 0` among the equations, `y = semiLinear(x, sa, sb)` holds for any `sa`
//! and `sb`, leaving one of them undetermined (an unconnected port of a model that computes
//! its enthalpy flow with `semiLinear`: both flows are zero). The rule replaces it by
//! `sa = sb`, which selects the meaningful solution.

use moss_frontend::flat::{Equation, Expr};
use rustc_hash::FxHashSet as HashSet;

/// The equations with rule 2 applied, or `None` when it applies nowhere.
pub(super) fn apply_zero_flow_rule(eqs: &[Equation]) -> Option<Vec<Equation>> {
    let zero = variables_equated_to_zero(eqs);
    if zero.is_empty() {
        return None;
    }
    let mut out: Option<Vec<Equation>> = None;
    for (k, eq) in eqs.iter().enumerate() {
        let Some(rewritten) = zero_flow_form(eq, &zero) else {
            continue;
        };
        out.get_or_insert_with(|| eqs.to_vec())[k] = rewritten;
    }
    out
}

/// Names of the scalar variables some equation sets to zero (`v = 0` or `0 = v`).
fn variables_equated_to_zero(eqs: &[Equation]) -> HashSet<&str> {
    let mut out = HashSet::default();
    for eq in eqs {
        let Equation::Equal { lhs, rhs, .. } = eq else {
            continue;
        };
        for (a, b) in [(lhs, rhs), (rhs, lhs)] {
            if let (Some(v), true) = (scalar_var(a), is_zero(b)) {
                out.insert(v);
            }
        }
    }
    out
}

/// `sa = sb` for `y = semiLinear(x, sa, sb)` (either side) with `x` and `y` set to zero.
fn zero_flow_form(eq: &Equation, zero: &HashSet<&str>) -> Option<Equation> {
    let Equation::Equal { lhs, rhs, origin } = eq else {
        return None;
    };
    for (a, b) in [(lhs, rhs), (rhs, lhs)] {
        let Some(y) = scalar_var(a) else {
            continue;
        };
        let Expr::Call { func, args } = b else {
            continue;
        };
        if func != "semiLinear" || args.len() != 3 || !zero.contains(y) {
            continue;
        }
        if scalar_var(&args[0]).is_some_and(|x| zero.contains(x)) {
            return Some(Equation::Equal {
                lhs: args[1].clone(),
                rhs: args[2].clone(),
                origin: origin.clone(),
            });
        }
    }
    None
}

fn scalar_var(e: &Expr) -> Option<&str> {
    match e {
        Expr::Var { name, subscripts } if subscripts.is_empty() => Some(name),
        _ => None,
    }
}

fn is_zero(e: &Expr) -> bool {
    matches!(e, Expr::Real(x) if *x == 0.0) || matches!(e, Expr::Integer(0))
}
