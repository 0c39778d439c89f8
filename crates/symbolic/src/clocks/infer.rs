//! Clock inference (spec 16.7.2–16.7.4): every clocked partition gets its clock from the
//! clocks written in it (`sample(u, c)`, `when c then`) or through the sampling operators
//! that connect it to other partitions of the same base partition. Conflicts (two different
//! clocks for one partition, two base clocks meeting) and partitions whose clock cannot be
//! determined are errors that name the places involved.

use super::clock::{NClock, Relation};
use moss_syntax::{Diagnostic, Span};
use std::collections::VecDeque;

/// A clocked partition as inference sees it.
#[derive(Clone, Debug, Default)]
pub struct Node {
    /// Clocks required by the partition's own equations, with where they were written.
    pub given: Vec<(NClock, Span)>,
    /// A place in the partition (for messages).
    pub span: Span,
    /// A variable of the partition (for messages).
    pub example: String,
}

/// `clock(to) = clock(from).then(relation)`; `None`: a factor to be inferred.
#[derive(Clone, Debug)]
pub struct Edge {
    pub from: usize,
    pub to: usize,
    pub relation: Option<Relation>,
    pub span: Span,
}

/// The clock of every node, or the first conflict found.
pub fn infer_clocks(nodes: &[Node], edges: &[Edge]) -> Result<Vec<NClock>, Diagnostic> {
    let mut clock: Vec<Option<(NClock, Span)>> = vec![None; nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        for (c, span) in &n.given {
            match &clock[i] {
                None => clock[i] = Some((c.clone(), *span)),
                Some((old, old_span)) => {
                    if !same_ticks(old, c) {
                        return Err(conflict(&n.example, *span, *old_span));
                    }
                    if old.solver.is_none() && c.solver.is_some() {
                        clock[i] = Some((c.clone(), *old_span));
                    }
                }
            }
        }
    }
    let mut adjacent: Vec<Vec<(usize, Option<Relation>, Span)>> = vec![Vec::new(); nodes.len()];
    for e in edges {
        adjacent[e.from].push((e.to, e.relation, e.span));
        adjacent[e.to].push((e.from, e.relation.map(Relation::inverse), e.span));
    }
    let mut queue: VecDeque<usize> = (0..nodes.len()).filter(|&i| clock[i].is_some()).collect();
    while let Some(i) = queue.pop_front() {
        let (ci, _) = clock[i].clone().expect("queued nodes have clocks");
        for &(j, rel, span) in &adjacent[i] {
            let Some(rel) = rel else { continue };
            let cj = ci.then(&rel);
            match &clock[j] {
                None => {
                    clock[j] = Some((cj, span));
                    queue.push_back(j);
                }
                Some((old, old_span)) => {
                    if !same_ticks(old, &cj) {
                        return Err(conflict(&nodes[j].example, span, *old_span));
                    }
                    if old.solver.is_none() && cj.solver.is_some() {
                        let s = *old_span;
                        clock[j] = Some((cj, s));
                    }
                }
            }
        }
    }
    // Edges with inferred factors: both ends must be known by now, on one base clock.
    for e in edges {
        if e.relation.is_some() {
            continue;
        }
        if let (Some((a, _)), Some((b, bspan))) = (&clock[e.from], &clock[e.to]) {
            if a.base != b.base {
                return Err(Diagnostic::error(
                    e.span,
                    "this operator connects partitions of two different base clocks",
                )
                .with_secondary(*bspan, "the other clock comes from here")
                .with_help(
                    "sub-, super-, shift- and backSample and noClock stay within one base clock; use hold and sample to cross between base clocks",
                ));
            }
        }
    }
    clock
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            c.map(|(c, _)| c).ok_or_else(|| {
                Diagnostic::error(
                    nodes[i].span,
                    format!(
                        "the clock of the clocked partition containing `{}` cannot be inferred",
                        nodes[i].example
                    ),
                )
                .with_help("associate a clock with it, e.g. `sample(u, Clock(0.1))`, or connect it to a clocked signal")
            })
        })
        .collect()
}

fn same_ticks(a: &NClock, b: &NClock) -> bool {
    a.base == b.base && a.factor == b.factor && a.shift == b.shift
}

fn conflict(example: &str, span: Span, other: Span) -> Diagnostic {
    Diagnostic::error(
        span,
        format!("conflicting clocks: the partition containing `{example}` gets two different clocks"),
    )
    .with_secondary(other, "the other clock comes from here")
    .with_help("a clocked partition has exactly one clock; use subSample/superSample/shiftSample to relate clocks, or hold and sample to cross between base clocks")
}
