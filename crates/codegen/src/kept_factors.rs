//! Kept factors: linear systems whose matrices depend on a few variables only.
//!
//! The compiler finds the linear systems (and torn linear loops) whose matrix entries read
//! nothing but some variables, through pure operations and pure functions; at run time the
//! machine keeps each such matrix's factors with the values those inputs had, and a solve
//! whose inputs are bit for bit the same skips computing the entries and factoring.

use crate::builtins::Builtin;
use crate::compile::Step;
use crate::func::CFunction;
use crate::linalg::DenseLu;
use crate::machine::Machine;
use moss_symbolic::program::PExpr;
use rustc_hash::FxHashMap as HashMap;

/// A linear system whose matrix entries read nothing but `inputs` (variables, through pure
/// operations and pure functions): while they keep their values, the factors of the last
/// matrix still hold and neither the entries nor the factorization are computed again.
///
/// Two kinds of systems profit. A matrix of parameters only (the node equations of a
/// linear circuit) is factored once per run. And the torn linear systems of the ODE
/// Jacobian's tangent program have one matrix per point, the same for every colour of
/// Jacobian columns: a Spice3 four-bit adder evaluates its transistors' derivative
/// functions in those matrices 80 times per Jacobian, once would do.
pub struct MatrixCache {
    /// Place of the kept factors in the machine (numbered by the compiler).
    pub id: usize,
    pub inputs: Vec<u32>,
    /// User functions the entries call: the cache is dropped when one of them is impure.
    pub calls: Vec<u32>,
}

/// The variables the entries of a linear system's matrix read and the user functions they
/// call, or `None` when an entry depends on more than those: time, `pre`, a frozen
/// relation, an event operator, `homotopy`'s parameter.
pub(crate) fn matrix_inputs(
    matrix: &[(u32, u32, PExpr)],
    fn_index: &HashMap<String, u32>,
) -> Option<(Vec<u32>, Vec<u32>)> {
    fn walk(
        e: &PExpr,
        fn_index: &HashMap<String, u32>,
        vars: &mut Vec<u32>,
        calls: &mut Vec<u32>,
    ) -> bool {
        let all = |es: &[&PExpr], vars: &mut Vec<u32>, calls: &mut Vec<u32>| {
            es.iter().all(|x| walk(x, fn_index, vars, calls))
        };
        match e {
            PExpr::Const(_) | PExpr::Str(_) => true,
            PExpr::Var(v) => {
                vars.push(*v);
                true
            }
            PExpr::Neg(a) | PExpr::Not(a) => all(&[a], vars, calls),
            PExpr::Arith(_, a, b) | PExpr::And(a, b) | PExpr::Or(a, b) => all(&[a, b], vars, calls),
            PExpr::Rel { lhs, rhs, zc, .. } => zc.is_none() && all(&[lhs, rhs], vars, calls),
            PExpr::If(c, a, b) => all(&[c, a, b], vars, calls),
            PExpr::Array(xs) => xs.iter().all(|x| walk(x, fn_index, vars, calls)),
            PExpr::Call { func, args } => {
                let known = match fn_index.get(func.as_str()) {
                    Some(&f) => {
                        calls.push(f);
                        true
                    }
                    None => matches!(
                        Builtin::from_name(func),
                        Some(b) if !matches!(
                            b,
                            Builtin::Homotopy
                                | Builtin::StateSetWeight
                                | Builtin::StateSetQuality
                                | Builtin::StateSetSelect
                        )
                    ),
                };
                known && args.iter().all(|x| walk(x, fn_index, vars, calls))
            }
            PExpr::Pre(_) | PExpr::Time | PExpr::Initial | PExpr::Terminal | PExpr::Sample(_) => {
                false
            }
        }
    }
    let (mut vars, mut calls) = (Vec::new(), Vec::new());
    for (_, _, e) in matrix {
        if !walk(e, fn_index, &mut vars, &mut calls) {
            return None;
        }
    }
    vars.sort_unstable();
    vars.dedup();
    calls.sort_unstable();
    calls.dedup();
    Some((vars, calls))
}

/// Whether comparing `inputs` values costs less than what a hit saves: computing the
/// entries (about one instruction each) and factoring an `n`-square matrix.
pub(crate) fn cache_pays(inputs: usize, matrix_instructions: usize, n: usize) -> bool {
    2 * inputs < matrix_instructions + n * n * n / 3
}

/// Drop the matrix caches of linear systems whose entries call an impure function (a
/// function that calls an impure one is impure too).
pub(crate) fn drop_impure_matrix_caches(funcs: &[CFunction], steps: &mut [&mut Step]) {
    let own_pure: Vec<bool> = funcs.iter().map(|f| f.own_pure).collect();
    let callees: Vec<Vec<u32>> = funcs
        .iter()
        .map(|f| f.callees.iter().copied().collect())
        .collect();
    let pure = crate::memo::pure_functions(&own_pure, &callees);
    for s in steps {
        s.for_each_step(&mut |s| {
            let impure = |c: &Option<MatrixCache>| {
                c.as_ref()
                    .is_some_and(|c| c.calls.iter().any(|&f| !pure[f as usize]))
            };
            match s {
                Step::Linear(l) if impure(&l.cache) => l.cache = None,
                Step::Nonlinear(nl) if impure(&nl.jac_cache) => nl.jac_cache = None,
                _ => {}
            }
        });
    }
}

/// The factors of one cached matrix and the values of its inputs.
#[derive(Clone, Debug)]
pub struct KeptMatrix {
    pub inputs: Vec<f64>,
    /// Dense factors; `None` for a sparse system, whose factor stays in `sparse_factors`.
    /// Shared: a torn linear loop solved on kept factors (a power converter's switches, 27
    /// million times a run) takes them without copying.
    pub dense: Option<std::sync::Arc<DenseLu>>,
    /// The matrix itself (row-major), where it is needed besides its factors (the row
    /// scales of a torn linear loop); empty otherwise.
    pub matrix: std::sync::Arc<Vec<f64>>,
}

impl Machine {
    /// The kept matrix of `cache`, if it was computed for the current values of its inputs
    /// (compared bit for bit).
    pub fn kept_matrix(&self, cache: &MatrixCache) -> Option<&KeptMatrix> {
        let kept = self.kept_matrices.get(cache.id)?.as_ref()?;
        let same = cache
            .inputs
            .iter()
            .zip(&kept.inputs)
            .all(|(&v, x)| self.mem[v as usize].to_bits() == x.to_bits());
        same.then_some(kept)
    }

    /// Keep `matrix` and its factors for the current values of the inputs of `cache`.
    pub fn keep_matrix(
        &mut self,
        cache: &MatrixCache,
        dense: Option<std::sync::Arc<DenseLu>>,
        matrix: std::sync::Arc<Vec<f64>>,
    ) {
        if self.kept_matrices.len() <= cache.id {
            self.kept_matrices.resize(cache.id + 1, None);
        }
        let inputs = cache.inputs.iter().map(|&v| self.mem[v as usize]).collect();
        self.kept_matrices[cache.id] = Some(KeptMatrix {
            inputs,
            dense,
            matrix,
        });
    }

    /// Forget the kept matrix of `cache` (it is being computed anew).
    pub fn drop_kept_matrix(&mut self, cache: &MatrixCache) {
        if let Some(k) = self.kept_matrices.get_mut(cache.id) {
            *k = None;
        }
    }
}

impl Machine {
    /// After a start or an event: the branches of loops may have changed, so the event's
    /// own solution is the next guess.
    pub fn forget_guesses(&mut self) {
        self.step_start_guess.clear();
        self.step_end_guess.clear();
        self.step_start_time = None;
        self.step_end_time = None;
        self.output_guess.clear();
        self.output_time = None;
        self.last_evaluation = None;
    }
}
