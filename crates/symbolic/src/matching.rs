//! Bipartite matching of equations to variables, and the diagnosis of structurally singular
//! systems.
//!
//! Matching: a cheap greedy pass, then breadth-first (shortest) augmenting paths, iterative.
//! On sparse chain models the greedy pass matches almost everything and the remaining paths
//! are short, so the whole pass is near-linear.
//!
//! Diagnosis: after a maximum matching, the Dulmage–Mendelsohn over-determined part is
//! everything reachable from unmatched equations by alternating paths, the under-determined
//! part everything reachable from unmatched variables. Both are reported with the equations
//! printed as Modelica text and the source locations of equations and variables.

use crate::ir::VarIx;
use crate::model::{Model, SEq};
use moss_syntax::Diagnostic;

pub const NONE: u32 = u32::MAX;

/// Visited marks for one augmenting search; also records what was coloured (Pantelides).
#[derive(Default)]
pub struct Visit {
    eq_stamp: Vec<u32>,
    var_stamp: Vec<u32>,
    gen: u32,
    /// Equation from which each visited variable was reached (valid for this search).
    parent: Vec<u32>,
    pub eqs: Vec<u32>,
    pub vars: Vec<VarIx>,
}

impl Visit {
    fn start(&mut self, n_eq: usize, n_var: usize) {
        if self.eq_stamp.len() < n_eq {
            self.eq_stamp.resize(n_eq, 0);
        }
        if self.var_stamp.len() < n_var {
            self.var_stamp.resize(n_var, 0);
        }
        self.gen += 1;
        self.eqs.clear();
        self.vars.clear();
    }
}

/// A (partial) matching between equations and variables, both by global index.
#[derive(Clone, Debug)]
pub struct Matching {
    pub var_of_eq: Vec<VarIx>,
    pub eq_of_var: Vec<u32>,
}

impl Matching {
    pub fn new(n_eq: usize, n_var: usize) -> Matching {
        Matching {
            var_of_eq: vec![NONE; n_eq],
            eq_of_var: vec![NONE; n_var],
        }
    }

    pub fn grow(&mut self, n_eq: usize, n_var: usize) {
        if self.var_of_eq.len() < n_eq {
            self.var_of_eq.resize(n_eq, NONE);
        }
        if self.eq_of_var.len() < n_var {
            self.eq_of_var.resize(n_var, NONE);
        }
    }

    pub fn set(&mut self, e: u32, v: VarIx) {
        self.var_of_eq[e as usize] = v;
        self.eq_of_var[v as usize] = e;
    }

    /// Match each listed equation to its first free allowed variable.
    pub fn greedy(&mut self, eqs: &[u32], adj: &[Vec<VarIx>], allowed: &dyn Fn(VarIx) -> bool) {
        for &e in eqs {
            if self.var_of_eq[e as usize] != NONE {
                continue;
            }
            if let Some(&v) = adj[e as usize]
                .iter()
                .find(|&&v| allowed(v) && self.eq_of_var[v as usize] == NONE)
            {
                self.set(e, v);
            }
        }
    }

    /// Search a shortest augmenting path from the unmatched equation `root` (breadth-first,
    /// so the search stays local when a free variable is near, which keeps Pantelides'
    /// repeated searches near-linear on long chains). On failure, `vis.eqs` and `vis.vars`
    /// hold the coloured equations and variables (everything reachable).
    pub fn augment(
        &mut self,
        root: u32,
        adj: &[Vec<VarIx>],
        allowed: &dyn Fn(VarIx) -> bool,
        vis: &mut Visit,
    ) -> bool {
        vis.start(self.var_of_eq.len(), self.eq_of_var.len());
        if vis.parent.len() < self.eq_of_var.len() {
            vis.parent.resize(self.eq_of_var.len(), NONE);
        }
        let gen = vis.gen;
        vis.eq_stamp[root as usize] = gen;
        vis.eqs.push(root);
        let mut head = 0;
        while head < vis.eqs.len() {
            let e = vis.eqs[head];
            head += 1;
            for &v in &adj[e as usize] {
                if !allowed(v) || vis.var_stamp[v as usize] == gen {
                    continue;
                }
                vis.var_stamp[v as usize] = gen;
                vis.vars.push(v);
                vis.parent[v as usize] = e;
                let e2 = self.eq_of_var[v as usize];
                if e2 == NONE {
                    // flip the path back to the root
                    let mut cur = v;
                    loop {
                        let eq = vis.parent[cur as usize];
                        let old = self.var_of_eq[eq as usize];
                        self.set(eq, cur);
                        if eq == root || old == NONE {
                            break;
                        }
                        cur = old;
                    }
                    return true;
                }
                if vis.eq_stamp[e2 as usize] != gen {
                    vis.eq_stamp[e2 as usize] = gen;
                    vis.eqs.push(e2);
                }
            }
        }
        false
    }
}

/// Maximum matching of `eqs` (global indices into `adj`) over allowed variables.
pub fn maximum_matching(
    eqs: &[u32],
    adj: &[Vec<VarIx>],
    n_var: usize,
    allowed: &dyn Fn(VarIx) -> bool,
    pre: Option<Matching>,
) -> Matching {
    let mut m = pre.unwrap_or_else(|| Matching::new(adj.len(), n_var));
    m.grow(adj.len(), n_var);
    m.greedy(eqs, adj, allowed);
    let mut vis = Visit::default();
    for &e in eqs {
        if m.var_of_eq[e as usize] == NONE {
            m.augment(e, adj, allowed, &mut vis);
        }
    }
    m
}

/// The Dulmage–Mendelsohn parts reachable from unmatched equations (over-determined) and from
/// unmatched variables (under-determined).
pub struct DmParts {
    pub over_eqs: Vec<u32>,
    pub over_vars: Vec<VarIx>,
    pub under_eqs: Vec<u32>,
    pub under_vars: Vec<VarIx>,
}

pub fn dulmage_mendelsohn(
    eqs: &[u32],
    unknowns: &[VarIx],
    adj: &[Vec<VarIx>],
    mt: &Matching,
    allowed: &dyn Fn(VarIx) -> bool,
) -> DmParts {
    let n_var = mt.eq_of_var.len();
    // over-determined: unmatched eq -> its vars -> their matched eqs
    let mut seen_eq = vec![false; adj.len()];
    let mut seen_var = vec![false; n_var];
    let mut over_eqs = Vec::new();
    let mut over_vars = Vec::new();
    let mut queue: Vec<u32> = eqs
        .iter()
        .copied()
        .filter(|&e| mt.var_of_eq[e as usize] == NONE)
        .collect();
    for &e in &queue {
        seen_eq[e as usize] = true;
    }
    while let Some(e) = queue.pop() {
        over_eqs.push(e);
        for &v in &adj[e as usize] {
            if !allowed(v) || seen_var[v as usize] {
                continue;
            }
            seen_var[v as usize] = true;
            over_vars.push(v);
            let e2 = mt.eq_of_var[v as usize];
            if e2 != NONE && !seen_eq[e2 as usize] {
                seen_eq[e2 as usize] = true;
                queue.push(e2);
            }
        }
    }
    // under-determined: unmatched var -> eqs containing it -> their matched vars
    let mut rev: Vec<Vec<u32>> = vec![Vec::new(); n_var];
    for &e in eqs {
        for &v in &adj[e as usize] {
            if allowed(v) {
                rev[v as usize].push(e);
            }
        }
    }
    let mut seen_eq = vec![false; adj.len()];
    let mut seen_var = vec![false; n_var];
    let mut under_eqs = Vec::new();
    let mut under_vars = Vec::new();
    let mut vq: Vec<VarIx> = unknowns
        .iter()
        .copied()
        .filter(|&v| mt.eq_of_var[v as usize] == NONE)
        .collect();
    for &v in &vq {
        seen_var[v as usize] = true;
    }
    while let Some(v) = vq.pop() {
        under_vars.push(v);
        for &e in &rev[v as usize] {
            if seen_eq[e as usize] {
                continue;
            }
            seen_eq[e as usize] = true;
            under_eqs.push(e);
            let v2 = mt.var_of_eq[e as usize];
            if v2 != NONE && !seen_var[v2 as usize] {
                seen_var[v2 as usize] = true;
                vq.push(v2);
            }
        }
    }
    for list in [&mut over_eqs, &mut under_eqs] {
        list.sort_unstable();
    }
    over_vars.sort_unstable();
    under_vars.sort_unstable();
    DmParts {
        over_eqs,
        over_vars,
        under_eqs,
        under_vars,
    }
}

const MAX_LISTED: usize = 12;

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

fn list_eqs(m: &Model, eqs: &[SEq], ids: &[u32], mut d: Diagnostic, what: &str) -> Diagnostic {
    for (k, &e) in ids.iter().enumerate() {
        let eq = &eqs[e as usize];
        if k >= MAX_LISTED {
            d = d.with_note(format!("... and {} more equations", ids.len() - MAX_LISTED));
            break;
        }
        let text = describe_equation(m, eq);
        if eq.origin.span.is_dummy() {
            d = d.with_note(format!("{what}: {text}"));
        } else if eq.origin.span == d.span {
            d.label = format!("{}; {what}: {text}", d.label);
        } else {
            d = d.with_secondary(eq.origin.span, format!("{what}: {text}"));
        }
    }
    d
}

/// Equation text; a differentiated equation is shown as the user's equation it came from.
pub fn describe_equation(m: &Model, eq: &SEq) -> String {
    let mut root = match eq.diff_of {
        Some(r) => r,
        None => return m.eq_text(eq),
    };
    let mut times = 1;
    while let Some(p) = m.eqs.get(root as usize).and_then(|e| e.diff_of) {
        root = p;
        times += 1;
    }
    match m.eqs.get(root as usize) {
        Some(orig) => format!(
            "{} (differentiated {} by index reduction: {})",
            m.eq_text(orig),
            if times == 1 {
                "once".to_string()
            } else {
                format!("{times} times")
            },
            m.eq_text(eq)
        ),
        None => m.eq_text(eq),
    }
}

fn var_list(m: &Model, vars: &[VarIx]) -> String {
    let mut names: Vec<String> = vars
        .iter()
        .take(MAX_LISTED)
        .map(|&v| m.var_name(v))
        .collect();
    if vars.len() > MAX_LISTED {
        names.push(format!("... ({} more)", vars.len() - MAX_LISTED));
    }
    names.join(", ")
}

fn with_var_locations(m: &Model, vars: &[VarIx], mut d: Diagnostic) -> Diagnostic {
    for &v in vars.iter().take(MAX_LISTED) {
        let sv = &m.vars[v as usize];
        let span = sv
            .der_of
            .map(|b| m.vars[b as usize].origin.span)
            .unwrap_or(sv.origin.span);
        if span == d.span {
            d.label = format!("{}; `{}` declared here", d.label, sv.name);
        } else if !span.is_dummy() {
            d = d.with_secondary(span, format!("`{}` declared here", sv.name));
        }
    }
    d
}

/// Diagnostics for a structurally singular system.
pub fn singular_diagnostics(
    m: &Model,
    eqs: &[SEq],
    parts: &DmParts,
    context: &str,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if !parts.over_eqs.is_empty() {
        let span = eqs[parts.over_eqs[0] as usize].origin.span;
        let message = if parts.over_vars.is_empty() {
            format!(
                "{context}is structurally singular: {} without any unknown left to determine",
                plural(parts.over_eqs.len(), "equation")
            )
        } else {
            format!(
                "{context}is structurally singular: {} {} only {} ({})",
                plural(parts.over_eqs.len(), "equation"),
                if parts.over_eqs.len() == 1 {
                    "determines"
                } else {
                    "determine"
                },
                plural(parts.over_vars.len(), "variable"),
                var_list(m, &parts.over_vars)
            )
        };
        let mut d = Diagnostic::error(span, message)
            .with_label("over-determined: one of these equations is redundant or conflicting");
        d = list_eqs(m, eqs, &parts.over_eqs, d, "equation");
        d = with_var_locations(m, &parts.over_vars, d);
        if parts.over_eqs.iter().any(|&e| eqs[e as usize].loop_residue) {
            d = d.with_note(
                "the `connect` closes a loop of overdetermined connectors (e.g. orientations or \
                 reference angles), so it gives the residues of their `equalityConstraint` \
                 instead of equalities; here the other equations of the loop already fix both \
                 connected variables, so the residue has nothing left to determine (a rigid \
                 loop, or a loop without the elements whose forces or torques the residue \
                 should determine)",
            );
        }
        d = d.with_help(
            "remove a redundant equation (often a duplicated connection or an extra equation \
             for a variable that is already determined), or make a parameter a variable",
        );
        out.push(d);
    }
    if !parts.under_vars.is_empty() {
        let first = parts.under_vars[0];
        let span = m.vars[first as usize].origin.span;
        let mut d = Diagnostic::error(
            span,
            format!(
                "{context}is structurally singular: {} determined by only {}; not determined: {}",
                if parts.under_vars.len() == 1 {
                    "1 variable is".to_string()
                } else {
                    format!("{} variables are", parts.under_vars.len())
                },
                plural(parts.under_eqs.len(), "equation"),
                var_list(m, &parts.under_vars)
            ),
        )
        .with_label("under-determined");
        d = with_var_locations(m, &parts.under_vars, d);
        d = list_eqs(m, eqs, &parts.under_eqs, d, "equation");
        d = d.with_help(
            "add an equation for one of these variables (e.g. a missing connection, a \
             grounding, or a source), or give it a binding",
        );
        out.push(d);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_matches_completely_and_fast() {
        // eq i: x_i + x_{i+1}, last eq: x_{n-1}; greedy picks x_i, the augmenting pass
        // must fix the rest
        let n = 20_000u32;
        let mut adj: Vec<Vec<VarIx>> = (0..n - 1).map(|i| vec![i + 1, i]).collect();
        adj.push(vec![n - 1]);
        // make greedy fail on the first equations by ordering the last one first
        let order: Vec<u32> = (0..n).rev().collect();
        let m = maximum_matching(&order, &adj, n as usize, &|_| true, None);
        assert!(m.var_of_eq.iter().all(|&v| v != NONE));
        let mut seen = vec![false; n as usize];
        for &v in &m.var_of_eq {
            assert!(!seen[v as usize]);
            seen[v as usize] = true;
        }
    }

    #[test]
    fn dm_finds_over_and_under_parts() {
        // e0: a, e1: a, e2: b c  -> e0/e1 over-determine a; b/c under-determined by e2
        let adj = vec![vec![0], vec![0], vec![1, 2]];
        let eqs = [0, 1, 2];
        let mt = maximum_matching(&eqs, &adj, 3, &|_| true, None);
        let p = dulmage_mendelsohn(&eqs, &[0, 1, 2], &adj, &mt, &|_| true);
        assert_eq!(p.over_eqs, vec![0, 1]);
        assert_eq!(p.over_vars, vec![0]);
        assert_eq!(p.under_vars, vec![1, 2]);
        assert_eq!(p.under_eqs, vec![2]);
    }
}
