//! Per-colour slices of the ODE Jacobian's tangent program.
//!
//! The simulator evaluates the Jacobian one colour of columns at a time (`moss-sim`'s
//! `FdJacobian::evaluate_symbolic`): the seed is one on the colour's states and zero
//! elsewhere. Tangents are linear in the seed, so a step of the tangent program that reads
//! nothing depending on the colour's seeds computes zeros: it need not run, as long as its
//! outputs hold zeros when the steps that do run read them. A Spice3 four-bit adder has 80
//! colours, and each transistor's derivatives depend on the few states around it.
//!
//! So each run of the tangent program runs the steps that depend, transitively, on the
//! seeds it is given (found once per distinct set of nonzero seeds and kept), and the steps
//! that compute anything besides tangents (always: their values are not linear in the
//! seed); at its end it sets the tangent slots those steps wrote back to zero, so that every
//! run starts from zeros.

use crate::compile::Step;
use moss_symbolic::program::{CausalProgram, OdeJacobian, VarKind};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// Sets of seeds larger than this are not told apart (their blocks share one key).
const MAX_TRACKED_SEEDS: usize = 32;

/// Per block of the tangent program, a key of the seeds it depends on, transitively: the
/// compiler keeps consecutive blocks in one tape only while their keys agree, so that the
/// steps follow the dependence on seeds (a tape mixing the blocks of every transistor
/// would run for every colour). Blocks that depend on no seed have key 0, those that
/// depend on many share one key.
pub fn seed_dependence_keys(p: &CausalProgram, jac: &OdeJacobian) -> Vec<u64> {
    const WIDE: u64 = u64::MAX;
    let mut deps: Vec<Option<Arc<[u32]>>> = vec![None; p.vars.len()];
    let wide: Arc<[u32]> = Arc::from(vec![u32::MAX]);
    for (k, &s) in jac.seeds.iter().enumerate() {
        if let Some(d) = deps.get_mut(s as usize) {
            *d = Some(Arc::from(vec![k as u32]));
        }
    }
    let mut keys = Vec::with_capacity(jac.blocks.len());
    for b in &jac.blocks {
        let (reads, writes) = moss_symbolic::api::block_io(b);
        let mut set: Vec<u32> = Vec::new();
        let mut is_wide = false;
        for r in reads {
            match deps.get(r as usize).and_then(|d| d.as_ref()) {
                Some(d) if Arc::ptr_eq(d, &wide) => is_wide = true,
                Some(d) => set.extend(d.iter().copied()),
                None => {}
            }
        }
        set.sort_unstable();
        set.dedup();
        is_wide |= set.len() > MAX_TRACKED_SEEDS;
        let (key, value) = if is_wide {
            (WIDE, Some(Arc::clone(&wide)))
        } else if set.is_empty() {
            (0, None)
        } else {
            let mut h = rustc_hash::FxHasher::default();
            set.hash(&mut h);
            (h.finish().clamp(1, WIDE - 1), Some(Arc::from(set)))
        };
        for w in writes {
            if let Some(d) = deps.get_mut(w as usize) {
                d.clone_from(&value);
            }
        }
        keys.push(key);
    }
    keys
}

/// What a run of the tangent program needs to know about its steps to run a slice.
pub struct TangentSteps {
    /// Slots of the seeds, in seed order.
    seeds: Vec<u32>,
    /// Per step: the slots it reads and those it writes.
    reads: Vec<Vec<u32>>,
    writes: Vec<Vec<u32>>,
    /// Per step: it writes a slot that is not a tangent (or has no known outputs), so it
    /// always runs.
    always: Vec<bool>,
    /// Every tangent slot some step writes: zeroed before the first run.
    pub tangent_writes: Vec<u32>,
    n_slots: usize,
}

/// The steps one seed pattern runs, and the tangent slots to zero after them.
pub struct Slice {
    pub steps: Vec<u32>,
    pub zero: Vec<u32>,
}

impl TangentSteps {
    /// `starts[s]` is the index of the first block of `jac.blocks` compiled into step `s`
    /// (a step holds consecutive blocks, up to the next step's first).
    pub fn new(
        p: &CausalProgram,
        jac: &OdeJacobian,
        steps: &[Step],
        starts: &[usize],
    ) -> Option<Self> {
        let n_slots = p.vars.len();
        if starts.len() != steps.len() || jac.seeds.iter().any(|&s| s as usize >= n_slots) {
            return None;
        }
        let is_tangent = |v: u32| p.vars.get(v as usize).map(|x| x.kind) == Some(VarKind::Tangent);
        let mut reads = Vec::with_capacity(steps.len());
        let mut writes = Vec::with_capacity(steps.len());
        let mut always = Vec::with_capacity(steps.len());
        let mut tangent_writes = Vec::new();
        for (s, &start) in starts.iter().enumerate() {
            let end = starts.get(s + 1).copied().unwrap_or(jac.blocks.len());
            let mut r = Vec::new();
            let mut w = Vec::new();
            for b in jac.blocks.get(start..end)? {
                let (br, bw) = moss_symbolic::api::block_io(b);
                r.extend(br);
                w.extend(bw);
            }
            r.sort_unstable();
            r.dedup();
            w.sort_unstable();
            w.dedup();
            if w.iter().any(|&v| v as usize >= n_slots) || r.iter().any(|&v| v as usize >= n_slots)
            {
                return None;
            }
            always.push(w.is_empty() || w.iter().any(|&v| !is_tangent(v)));
            tangent_writes.extend(w.iter().copied().filter(|&v| is_tangent(v)));
            reads.push(r);
            writes.push(w);
        }
        tangent_writes.sort_unstable();
        tangent_writes.dedup();
        Some(TangentSteps {
            seeds: jac.seeds.clone(),
            reads,
            writes,
            always,
            tangent_writes,
            n_slots,
        })
    }

    /// The steps to run when the seeds at positions `nonzero` (indices into the seeds)
    /// are the only ones not zero.
    pub fn slice(&self, nonzero: &[u32]) -> Slice {
        let mut depends = vec![false; self.n_slots];
        for &k in nonzero {
            if let Some(&s) = self.seeds.get(k as usize) {
                depends[s as usize] = true;
            }
        }
        let mut steps = Vec::new();
        let mut zero = Vec::new();
        for s in 0..self.reads.len() {
            let reads_seed = self.reads[s].iter().any(|&v| depends[v as usize]);
            if !reads_seed && !self.always[s] {
                continue;
            }
            steps.push(s as u32);
            for &v in &self.writes[s] {
                if reads_seed {
                    depends[v as usize] = true;
                }
                if self.tangent_writes.binary_search(&v).is_ok() {
                    zero.push(v);
                }
            }
        }
        zero.sort_unstable();
        zero.dedup();
        Slice { steps, zero }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seeds in slots 10 and 11; steps: 0 reads seed 0, 1 reads seed 1, 2 combines both, 3
    /// computes a value that is not a tangent (slot 30) from a variable, 4 depends on no seed.
    fn steps() -> TangentSteps {
        TangentSteps {
            seeds: vec![10, 11],
            reads: vec![vec![10], vec![11], vec![20, 21], vec![5], vec![6]],
            writes: vec![vec![20], vec![21], vec![22], vec![30], vec![23]],
            always: vec![false, false, false, true, false],
            tangent_writes: vec![20, 21, 22, 23],
            n_slots: 40,
        }
    }

    #[test]
    fn a_slice_runs_what_depends_on_its_seeds_and_what_is_not_a_tangent() {
        let ts = steps();
        let first = ts.slice(&[0]);
        assert_eq!(first.steps, vec![0, 2, 3]);
        assert_eq!(first.zero, vec![20, 22]);
        let second = ts.slice(&[1]);
        assert_eq!(second.steps, vec![1, 2, 3]);
        assert_eq!(second.zero, vec![21, 22]);
        let both = ts.slice(&[0, 1]);
        assert_eq!(both.steps, vec![0, 1, 2, 3]);
        assert_eq!(ts.slice(&[]).steps, vec![3]);
    }
}
