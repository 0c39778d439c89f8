//! Block lower triangular sorting: Tarjan's strongly connected components, iterative (an
//! explicit stack, so 1e5-long dependency chains cannot overflow) and linear in the size of
//! the dependency graph.
//!
//! Node `n` depends on node `p` when `n` reads a variable that `p` computes. Tarjan emits
//! components dependencies-first, which is exactly the execution order.

/// Strongly connected components of the graph `deps` (node -> nodes it depends on), in an
/// order where every component comes after the components it depends on. `roots` gives the
/// order in which unvisited nodes start a search (nodes nobody depends on end up last when
/// listed last).
pub fn tarjan(deps: &[Vec<u32>], roots: &[u32]) -> Vec<Vec<u32>> {
    const UNSEEN: u32 = u32::MAX;
    let n = deps.len();
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<u32> = Vec::new();
    let mut call: Vec<(u32, usize)> = Vec::new();
    let mut next = 0u32;
    let mut out = Vec::new();
    for &root in roots {
        if index[root as usize] != UNSEEN {
            continue;
        }
        call.push((root, 0));
        index[root as usize] = next;
        low[root as usize] = next;
        next += 1;
        stack.push(root);
        on_stack[root as usize] = true;
        while let Some(&mut (v, ref mut i)) = call.last_mut() {
            let vs = v as usize;
            if *i < deps[vs].len() {
                let w = deps[vs][*i];
                *i += 1;
                let ws = w as usize;
                if index[ws] == UNSEEN {
                    index[ws] = next;
                    low[ws] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[ws] = true;
                    call.push((w, 0));
                } else if on_stack[ws] {
                    low[vs] = low[vs].min(index[ws]);
                }
            } else {
                call.pop();
                if let Some(&(parent, _)) = call.last() {
                    low[parent as usize] = low[parent as usize].min(low[vs]);
                }
                if low[vs] == index[vs] {
                    let mut comp = Vec::new();
                    while let Some(w) = stack.pop() {
                        on_stack[w as usize] = false;
                        comp.push(w);
                        if w == v {
                            break;
                        }
                    }
                    comp.reverse();
                    out.push(comp);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_in_dependency_order() {
        // 0 <- 1 <-> 2 <- 3
        let deps = vec![vec![], vec![0, 2], vec![1], vec![2]];
        let c = tarjan(&deps, &[3, 2, 1, 0]);
        assert_eq!(c.len(), 3);
        assert_eq!(c[0], vec![0]);
        let mut mid = c[1].clone();
        mid.sort();
        assert_eq!(mid, vec![1, 2]);
        assert_eq!(c[2], vec![3]);
    }

    #[test]
    fn long_chain_does_not_overflow() {
        let n = 200_000u32;
        let deps: Vec<Vec<u32>> = (0..n)
            .map(|i| if i == 0 { vec![] } else { vec![i - 1] })
            .collect();
        let c = tarjan(&deps, &[n - 1]);
        assert_eq!(c.len(), n as usize);
        assert_eq!(c[0], vec![0]);
    }
}
