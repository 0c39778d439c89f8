//! Dependencies of the `ModelStructure` unknowns, from the program's blocks: which knowns
//! (states and inputs in continuous-time mode; inputs and parameters in initialization mode)
//! each output, derivative and initial unknown is computed from.
//!
//! One forward pass over the blocks in execution order carries, per slot, the set of knowns
//! it depends on. A relation that generates events is frozen between events, so its operands
//! give no continuous-time dependency; `when` bodies run only at events and are skipped in
//! continuous-time mode. Algebraic loops (linear and torn blocks) give every loop variable
//! the union of what the loop reads. When the sets grow past a budget (a very large model
//! with dense coupling), the analysis gives up and the attribute is left out, which FMI 2.0
//! defines as "may depend on all knowns".

use crate::variables::{Causality, Source, Table};
use moss_symbolic::program::{Block, PExpr, VarId};
use moss_symbolic::CausalProgram;
use std::collections::{BTreeSet, HashMap};

/// Per value reference of an unknown: the value references of the knowns it depends on.
#[derive(Clone, Debug, Default)]
pub struct Dependencies {
    /// Outputs and derivatives on states and inputs (continuous-time mode).
    pub continuous: HashMap<u32, Vec<u32>>,
    /// Initial unknowns on inputs and parameters (initialization mode).
    pub initial: HashMap<u32, Vec<u32>>,
}

/// Largest total size of the dependency sets before the analysis gives up.
const BUDGET: usize = 4_000_000;

/// The dependencies of the unknowns of `table`; `initial_unknowns` as in the description.
pub fn analyse(program: &CausalProgram, table: &Table, initial_unknowns: &[u32]) -> Dependencies {
    let mut out = Dependencies::default();
    let mut continuous_unknowns = table.outputs();
    continuous_unknowns.extend(&table.derivatives);
    let known = |c: &dyn Fn(Causality, u32) -> bool| {
        let mut m: HashMap<VarId, Vec<u32>> = HashMap::new();
        for (vr, v) in table.vars.iter().enumerate() {
            if c(v.causality, vr as u32) {
                m.entry(v.source.slot()).or_default().push(vr as u32);
            }
        }
        m
    };
    let states: BTreeSet<u32> = table.states.iter().copied().collect();
    let continuous_knowns = known(&|c, vr| c == Causality::Input || states.contains(&vr));
    if let Some(sets) = Flow::run(program, &continuous_knowns, &[&program.blocks], false) {
        out.continuous = collect(table, &continuous_unknowns, &sets);
    }
    let initial_knowns = known(&|c, _| matches!(c, Causality::Input | Causality::Parameter));
    let init = [
        &program.parameter_blocks,
        &program.start_blocks,
        &program.init_blocks,
    ];
    if let Some(sets) = Flow::run(program, &initial_knowns, &init, true) {
        out.initial = collect(table, initial_unknowns, &sets);
    }
    out
}

/// The sets of `unknowns` (through their slots; a state's own slot is its own known).
fn collect(table: &Table, unknowns: &[u32], sets: &[BTreeSet<u32>]) -> HashMap<u32, Vec<u32>> {
    unknowns
        .iter()
        .map(|&vr| {
            let slot = match table.vars[vr as usize].source {
                Source::Slot(s) | Source::Alias { slot: s, .. } => s,
            };
            let deps = sets
                .get(slot as usize)
                .map(|s| s.iter().copied().collect())
                .unwrap_or_default();
            (vr, deps)
        })
        .collect()
}

struct Flow {
    sets: Vec<BTreeSet<u32>>,
    size: usize,
    /// `when` bodies count (initialization, where `initial()` branches fire).
    with_when: bool,
}

impl Flow {
    fn run(
        program: &CausalProgram,
        knowns: &HashMap<VarId, Vec<u32>>,
        lists: &[&Vec<Block>],
        with_when: bool,
    ) -> Option<Vec<BTreeSet<u32>>> {
        let mut f = Flow {
            sets: vec![BTreeSet::new(); program.vars.len()],
            size: 0,
            with_when,
        };
        for (&slot, vrs) in knowns {
            if let Some(s) = f.sets.get_mut(slot as usize) {
                s.extend(vrs);
            }
        }
        for blocks in lists {
            for b in blocks.iter() {
                f.block(b)?;
            }
        }
        Some(f.sets)
    }

    /// Give every slot of `outputs` the union `reads`.
    fn write(&mut self, outputs: &[VarId], reads: &BTreeSet<u32>) -> Option<()> {
        for &o in outputs {
            if let Some(s) = self.sets.get_mut(o as usize) {
                let before = s.len();
                s.extend(reads);
                self.size += s.len() - before;
            }
        }
        (self.size <= BUDGET).then_some(())
    }

    fn block(&mut self, b: &Block) -> Option<()> {
        let mut reads = BTreeSet::new();
        let mut outputs = Vec::new();
        self.gather(b, &mut reads, &mut outputs);
        self.write(&outputs, &reads)
    }

    /// What a block reads (as known sets) and which slots it writes.
    fn gather(&self, b: &Block, reads: &mut BTreeSet<u32>, outputs: &mut Vec<VarId>) {
        match b {
            Block::Assign { var, expr } => {
                self.expr(expr, reads);
                outputs.push(*var);
            }
            Block::SolveScalar { var, residual, .. } => {
                self.expr(residual, reads);
                outputs.push(*var);
            }
            Block::Linear { vars, matrix, rhs } => {
                matrix.iter().for_each(|(_, _, e)| self.expr(e, reads));
                rhs.iter().for_each(|e| self.expr(e, reads));
                outputs.extend(vars);
            }
            Block::Nonlinear {
                iteration_vars,
                inner,
                residuals,
                ..
            } => {
                for b in inner {
                    self.gather(b, reads, outputs);
                }
                residuals.iter().for_each(|e| self.expr(e, reads));
                outputs.extend(iteration_vars);
            }
            Block::CallOutputs {
                outputs: o, args, ..
            } => {
                args.iter().for_each(|e| self.expr(e, reads));
                outputs.extend(o.iter().flatten());
            }
            Block::Algorithm {
                inputs, outputs: o, ..
            } => {
                for &i in inputs {
                    self.slot(i, reads);
                }
                outputs.extend(o);
            }
            Block::When { branches } if self.with_when => {
                for br in branches {
                    for b in &br.body {
                        self.gather(b, reads, outputs);
                    }
                }
            }
            Block::When { .. }
            | Block::Reinit { .. }
            | Block::Assert { .. }
            | Block::Terminate { .. } => {}
        }
    }

    fn slot(&self, v: VarId, reads: &mut BTreeSet<u32>) {
        if let Some(s) = self.sets.get(v as usize) {
            reads.extend(s);
        }
    }

    fn expr(&self, e: &PExpr, reads: &mut BTreeSet<u32>) {
        match e {
            PExpr::Var(v) => self.slot(*v, reads),
            PExpr::Neg(a) | PExpr::Not(a) => self.expr(a, reads),
            PExpr::Arith(_, a, b) | PExpr::And(a, b) | PExpr::Or(a, b) => {
                self.expr(a, reads);
                self.expr(b, reads);
            }
            // Frozen between events (continuous-time mode); live at initialization.
            PExpr::Rel { lhs, rhs, zc, .. } => {
                if zc.is_none() || self.with_when {
                    self.expr(lhs, reads);
                    self.expr(rhs, reads);
                }
            }
            PExpr::If(c, a, b) => {
                self.expr(c, reads);
                self.expr(a, reads);
                self.expr(b, reads);
            }
            PExpr::Call { args, .. } | PExpr::Array(args) => {
                args.iter().for_each(|a| self.expr(a, reads));
            }
            PExpr::Const(_)
            | PExpr::Str(_)
            | PExpr::Pre(_)
            | PExpr::Time
            | PExpr::Initial
            | PExpr::Terminal
            | PExpr::Sample(_) => {}
        }
    }
}
