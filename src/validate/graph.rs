//! The dependency graph of a step plan: nodes are step indexes, an edge says "this step needs
//! that one first".
//!
//! [`DepGraph::topo_order`] is Kahn's algorithm with a min-heap on the array index, so among the
//! steps that are ready at the same time the one written first runs first; when the graph has
//! cycles it returns them instead (each cycle once, disjoint cycles separately). Everything is
//! linear in steps plus edges, except [`DepGraph::reaches`], which is one bounded search per
//! call. This module knows nothing of step ids, atoms or documents.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Dependencies per step index.
#[derive(Debug, Clone, Default)]
pub struct DepGraph {
    deps: Vec<Vec<usize>>,
}

impl DepGraph {
    /// `n` steps, no edge.
    pub fn new(n: usize) -> DepGraph {
        DepGraph {
            deps: vec![Vec::new(); n],
        }
    }

    pub fn len(&self) -> usize {
        self.deps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.deps.is_empty()
    }

    /// `step` needs `dep` first. Out-of-range indexes are ignored. A repeated edge is kept:
    /// Kahn counts it on both sides, so it is harmless, and checking for it would cost a scan.
    pub fn add_edge(&mut self, step: usize, dep: usize) {
        if dep >= self.deps.len() {
            return;
        }
        if let Some(list) = self.deps.get_mut(step) {
            list.push(dep);
        }
    }

    /// The direct dependencies of `step`.
    pub fn deps(&self, step: usize) -> &[usize] {
        self.deps.get(step).map_or(&[], Vec::as_slice)
    }

    /// A topological order keeping array order among ready steps, or every cycle found.
    /// Each cycle is listed from its lowest index, each step followed by one it depends on.
    pub fn topo_order(&self) -> Result<Vec<usize>, Vec<Vec<usize>>> {
        let n = self.deps.len();
        let mut waiting: Vec<usize> = self.deps.iter().map(Vec::len).collect();
        let mut dependents = vec![Vec::new(); n];
        for (step, deps) in self.deps.iter().enumerate() {
            for &d in deps {
                dependents[d].push(step);
            }
        }
        let mut ready: BinaryHeap<Reverse<usize>> =
            (0..n).filter(|&i| waiting[i] == 0).map(Reverse).collect();
        let mut order = Vec::with_capacity(n);
        while let Some(Reverse(i)) = ready.pop() {
            order.push(i);
            for &next in &dependents[i] {
                waiting[next] -= 1;
                if waiting[next] == 0 {
                    ready.push(Reverse(next));
                }
            }
        }
        if order.len() == n {
            return Ok(order);
        }
        Err(self.cycles(&waiting))
    }

    /// Cycles among the steps Kahn could not place (`waiting > 0`). Every such step has a
    /// dependency that is also unplaced, so following those edges must loop.
    fn cycles(&self, waiting: &[usize]) -> Vec<Vec<usize>> {
        const UNSEEN: usize = usize::MAX;
        let n = self.deps.len();
        // The walk that first visited each step, and its position on that walk.
        let mut walk_of = vec![UNSEEN; n];
        let mut pos_on_walk = vec![0usize; n];
        let mut cycles = Vec::new();
        for start in 0..n {
            if waiting[start] == 0 || walk_of[start] != UNSEEN {
                continue;
            }
            let mut walk = Vec::new();
            let mut cur = start;
            loop {
                walk_of[cur] = start;
                pos_on_walk[cur] = walk.len();
                walk.push(cur);
                let Some(&next) = self.deps[cur].iter().find(|&&d| waiting[d] > 0) else {
                    break; // cannot happen for an unplaced step; stop rather than loop
                };
                if walk_of[next] == start {
                    let mut cycle = walk[pos_on_walk[next]..].to_vec();
                    if let Some(min_at) = (0..cycle.len()).min_by_key(|&k| cycle[k]) {
                        cycle.rotate_left(min_at);
                    }
                    cycles.push(cycle);
                    break;
                }
                if walk_of[next] != UNSEEN {
                    break; // joins an earlier walk, whose cycle is already reported
                }
                cur = next;
            }
        }
        cycles
    }

    /// Whether `target` is a dependency of `from`, directly or through other steps, following
    /// only edges of steps other than `from` after the first hop.
    pub fn reaches(&self, from: usize, target: usize) -> bool {
        let deps = self.deps(from);
        if deps.contains(&target) {
            return true;
        }
        let mut seen = vec![false; self.deps.len()];
        let mut stack: Vec<usize> = deps.to_vec();
        while let Some(cur) = stack.pop() {
            if cur == target {
                return true;
            }
            if std::mem::replace(&mut seen[cur], true) {
                continue;
            }
            stack.extend(self.deps[cur].iter().copied().filter(|&d| !seen[d]));
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(n: usize, edges: &[(usize, usize)]) -> DepGraph {
        let mut g = DepGraph::new(n);
        for &(s, d) in edges {
            g.add_edge(s, d);
        }
        g
    }

    #[test]
    fn keeps_array_order_among_ready_steps() {
        // 0 needs 2; 1 and 2 are free.
        assert_eq!(graph(3, &[(0, 2)]).topo_order(), Ok(vec![1, 2, 0]));
        assert_eq!(graph(3, &[]).topo_order(), Ok(vec![0, 1, 2]));
        assert_eq!(
            graph(4, &[(1, 3), (3, 2)]).topo_order(),
            Ok(vec![0, 2, 3, 1])
        );
    }

    #[test]
    fn finds_each_cycle_once() {
        // 0 -> 1 -> 2 -> 0 and 3 -> 3, and 4 hangs on the first cycle.
        let g = graph(5, &[(0, 1), (1, 2), (2, 0), (3, 3), (4, 0)]);
        assert_eq!(g.topo_order(), Err(vec![vec![0, 1, 2], vec![3]]));
        let g = graph(3, &[(2, 1), (1, 2), (1, 2), (0, 2)]);
        assert_eq!(g.topo_order(), Err(vec![vec![1, 2]]));
    }

    #[test]
    fn reaches_follows_transitive_dependencies() {
        let g = graph(4, &[(3, 2), (2, 1), (1, 0)]);
        assert!(g.reaches(3, 0));
        assert!(g.reaches(3, 2));
        assert!(!g.reaches(0, 3));
        assert!(!g.reaches(2, 3));
        let g = graph(2, &[(0, 1), (1, 0)]);
        assert!(g.reaches(0, 0), "a cycle leads back to the start");
    }
}
