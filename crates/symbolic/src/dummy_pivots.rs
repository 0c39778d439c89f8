//! Numerical check of a static dummy derivative selection.
//!
//! The dummy derivatives of one level must make the Jacobian of that level's differentiated
//! equations with respect to them nonsingular (Mattsson–Söderlind). The structural matching
//! in [`crate::index`] guarantees a nonzero pattern and [`crate::index`]'s static-coefficient
//! test keeps each chosen coefficient away from zero, but a block of parameter coefficients
//! can still be singular as a whole. The three phase currents of a delta-connected winding
//! with a current source across two terminals are the common case: the source ties
//! `i1 - i3` to its current, the space-phasor transformation maps `(i1, i2, i3)` to
//! `(alpha, beta, zero)`, and `i1 - i3` does not involve the zero-sequence component. Making
//! the zero-sequence current's derivative the dummy (structurally fine) leaves `alpha`,
//! `beta` as states that the constraint ties together and the zero-sequence current
//! undetermined: a torn loop whose Jacobian is exactly zero at run time.
//!
//! For each connected block of the level, the selected columns are factorized with the
//! parameter values, and coefficients that depend on the solution replaced by generic
//! (pseudo-random) values: a block that is singular then is singular for every solution, up
//! to a set of measure zero. Such a selection is replaced by a greedy one in the preference
//! order, a candidate kept when it raises the rank (the linear-matroid counterpart of the
//! structural greedy matching). In the machines' case the winding block also holds the air
//! gap's rotation matrix (coefficients that depend on the rotor angle): generic values keep
//! the check valid there too.

use crate::ir::VarIx;
use crate::model::{EqBody, Model};
use crate::zero_params::parameter_value;
use rustc_hash::FxHashMap as HashMap;

/// Blocks larger than this (equations) are not checked: the dense elimination would cost
/// the cube of their size, and such blocks are connection networks with unit coefficients.
const MAX_BLOCK: usize = 200;

/// Relative size below which a pivot counts as zero.
const RANK_TOLERANCE: f64 = 1e-9;

/// `selected[i]` is the dummy of equation `g[i]`; `h` holds the level's candidates from the
/// preferred dummy to the preferred state. Returns the selection with every numerically
/// singular parameter block replaced by a regular one where one exists.
pub fn regular_selection(m: &mut Model, g: &[u32], h: &[VarIx], selected: &[VarIx]) -> Vec<VarIx> {
    let mut out = selected.to_vec();
    let pos: HashMap<VarIx, usize> = h.iter().enumerate().map(|(i, &v)| (v, i)).collect();
    // the level's equations, each with its candidate columns
    let rows: Vec<Vec<usize>> = g
        .iter()
        .map(|&e| {
            let eq = m.eqs[e as usize].clone();
            let mut cols: Vec<usize> = m
                .incidence(&eq)
                .into_iter()
                .filter_map(|v| pos.get(&v).copied())
                .collect();
            cols.sort_unstable();
            cols.dedup();
            cols
        })
        .collect();
    for block in connected_blocks(&rows, h.len()) {
        if block.len() > MAX_BLOCK {
            continue;
        }
        let Some(matrix) = block_matrix(m, g, h, &rows, &block) else {
            continue;
        };
        // a dummy outside the candidates (not produced by the selections that call this)
        // leaves the block as chosen
        let chosen: Vec<usize> = block
            .iter()
            .filter_map(|&r| pos.get(&selected[r]).copied())
            .collect();
        if chosen.len() != block.len() {
            continue;
        }
        if numeric_rank(&matrix, &chosen) == block.len() {
            continue;
        }
        let mut cols: Vec<usize> = matrix.cols.clone();
        cols.sort_unstable();
        let Some(greedy) = greedy_columns(&matrix, &cols) else {
            continue;
        };
        // give each equation of the block one of the new dummies (any assignment will do:
        // the block is solved as a whole, only the set of dummies matters)
        for (&r, &c) in block.iter().zip(&greedy) {
            out[r] = h[c];
        }
    }
    out
}

/// The rows of the level grouped into blocks that share candidates (union-find).
fn connected_blocks(rows: &[Vec<usize>], n_cols: usize) -> Vec<Vec<usize>> {
    let mut parent: Vec<usize> = (0..rows.len()).collect();
    fn find(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    let mut owner: Vec<Option<usize>> = vec![None; n_cols];
    for (r, cols) in rows.iter().enumerate() {
        for &c in cols {
            match owner[c] {
                None => owner[c] = Some(r),
                Some(o) => {
                    let (a, b) = (find(&mut parent, o), find(&mut parent, r));
                    parent[a] = b;
                }
            }
        }
    }
    let mut groups: HashMap<usize, Vec<usize>> = HashMap::default();
    for r in 0..rows.len() {
        let root = find(&mut parent, r);
        groups.entry(root).or_default().push(r);
    }
    let mut blocks: Vec<Vec<usize>> = groups.into_values().collect();
    blocks.sort_unstable();
    blocks
}

/// A dense block: `values[i][j]` is the coefficient of candidate `cols[j]` in row `i`.
struct BlockMatrix {
    cols: Vec<usize>,
    values: Vec<Vec<f64>>,
}

/// The block's coefficients: parameter expressions at the parameter values, the others at
/// generic values; `None` when a parameter coefficient has no value or an equation is not a
/// plain `lhs = rhs`.
fn block_matrix(
    m: &mut Model,
    g: &[u32],
    h: &[VarIx],
    rows: &[Vec<usize>],
    block: &[usize],
) -> Option<BlockMatrix> {
    let mut cols: Vec<usize> = block
        .iter()
        .flat_map(|&r| rows[r].iter().copied())
        .collect();
    cols.sort_unstable();
    cols.dedup();
    let col_of: HashMap<usize, usize> = cols.iter().enumerate().map(|(j, &c)| (c, j)).collect();
    let mut values = vec![vec![0.0; cols.len()]; block.len()];
    for (i, &r) in block.iter().enumerate() {
        let EqBody::Eq { lhs, rhs } = m.eqs[g[r] as usize].body else {
            return None;
        };
        let residual = m.arena.sub(lhs, rhs);
        for &c in &rows[r] {
            let coef = m
                .arena
                .diff_var(residual, h[c], &mut HashMap::default())
                .ok()?;
            values[i][col_of[&c]] = if m.is_parameter_expr(coef) {
                parameter_value(m, coef)?
            } else {
                generic_value(g[r], h[c])
            };
        }
    }
    Some(BlockMatrix { cols, values })
}

/// A reproducible value in ±[0.5, 1.5) for the coefficient of `v` in equation `e` that
/// depends on the solution (a hash of the pair: the same translation makes the same choice).
fn generic_value(e: u32, v: VarIx) -> f64 {
    let mut x = (u64::from(e) << 32 | u64::from(v)).wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 31;
    let unit = (x >> 11) as f64 / (1u64 << 53) as f64;
    let magnitude = 0.5 + unit;
    if x & 1 == 0 {
        magnitude
    } else {
        -magnitude
    }
}

/// The numerical rank of the columns `chosen` (candidate indices) of the block.
fn numeric_rank(b: &BlockMatrix, chosen: &[usize]) -> usize {
    let mut basis = Basis::new(b.values.len());
    chosen
        .iter()
        .filter_map(|c| b.cols.iter().position(|x| x == c))
        .filter(|&j| basis.add(&column(b, j)))
        .count()
}

/// Candidates of `order` (preferred dummies first) kept while they raise the rank, until it
/// equals the number of rows; `None` when the block has no regular choice.
fn greedy_columns(b: &BlockMatrix, order: &[usize]) -> Option<Vec<usize>> {
    let n = b.values.len();
    let mut basis = Basis::new(n);
    let mut kept = Vec::new();
    for &c in order {
        let j = b.cols.iter().position(|x| *x == c)?;
        if basis.add(&column(b, j)) {
            kept.push(c);
            if kept.len() == n {
                return Some(kept);
            }
        }
    }
    None
}

fn column(b: &BlockMatrix, j: usize) -> Vec<f64> {
    b.values.iter().map(|row| row[j]).collect()
}

/// An orthonormal basis grown one column at a time (modified Gram–Schmidt, twice for
/// stability).
struct Basis {
    vectors: Vec<Vec<f64>>,
    dim: usize,
}

impl Basis {
    fn new(dim: usize) -> Self {
        Basis {
            vectors: Vec::new(),
            dim,
        }
    }

    /// Adds `v` when it is independent of the basis (relative to its own norm).
    fn add(&mut self, v: &[f64]) -> bool {
        if self.vectors.len() == self.dim {
            return false;
        }
        let norm0 = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        if norm0 == 0.0 {
            return false;
        }
        let mut w = v.to_vec();
        for _ in 0..2 {
            for q in &self.vectors {
                let dot: f64 = q.iter().zip(&w).map(|(a, b)| a * b).sum();
                for (wi, qi) in w.iter_mut().zip(q) {
                    *wi -= dot * qi;
                }
            }
        }
        let norm = w.iter().map(|x| x * x).sum::<f64>().sqrt();
        if norm <= RANK_TOLERANCE * norm0 {
            return false;
        }
        for x in &mut w {
            *x /= norm;
        }
        self.vectors.push(w);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(values: Vec<Vec<f64>>) -> BlockMatrix {
        let cols = (0..values[0].len()).collect();
        BlockMatrix { cols, values }
    }

    /// The delta winding of the module documentation: rows alpha, beta, zero and the
    /// source constraint over (i1, i2, i3, i0): choosing i0 with the phase currents is
    /// singular, the greedy choice skips it for a regular set.
    #[test]
    fn zero_sequence_dummy_is_rejected_for_a_regular_choice() {
        let (c, s) = (-0.5f64, 3f64.sqrt() / 2.0);
        let k = (2.0f64 / 3.0).sqrt();
        let b = block(vec![
            vec![-k, -k * c, -k * c, 0.0, 1.0, 0.0],
            vec![0.0, -k * s, k * s, 0.0, 0.0, 1.0],
            vec![-1.0 / 3.0, -1.0 / 3.0, -1.0 / 3.0, 1.0, 0.0, 0.0],
            vec![1.0, 0.0, -1.0, 0.0, 0.0, 0.0],
        ]);
        // columns: i1, i2, i3, i0, alpha, beta
        assert_eq!(numeric_rank(&b, &[0, 1, 2, 3]), 3);
        let greedy = greedy_columns(&b, &[0, 1, 2, 3, 4, 5]).expect("a regular choice exists");
        assert_eq!(greedy.len(), 4);
        assert!(
            !greedy.contains(&3),
            "the zero-sequence current stays a state"
        );
        assert_eq!(numeric_rank(&b, &greedy), 4);
    }

    #[test]
    fn blocks_follow_shared_candidates() {
        let rows = vec![vec![0, 1], vec![2], vec![1, 3], vec![4]];
        let blocks = connected_blocks(&rows, 5);
        assert_eq!(blocks, vec![vec![0, 2], vec![1], vec![3]]);
    }
}
