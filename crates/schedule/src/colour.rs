//! Proper edge colouring of bipartite multigraphs with `Δ` colours (König's theorem).
//!
//! The Clos decomposition needs, per plane and slot, an uplink index for every transmission so
//! that no source leaf and no destination leaf uses an index twice: exactly a proper edge
//! colouring of the leaf-to-leaf multigraph with `h` colours. König's theorem says `Δ <= h`
//! colours always suffice for a bipartite graph; the constructive proof is the one used here:
//! colour edges one at a time, and when the free colours at the two ends differ, swap the two
//! colours along the alternating path that starts at one end (it cannot reach the other end
//! because the graph is bipartite). Deterministic: edges are coloured in input order and the
//! lowest free colour is always chosen.

const NONE: u32 = u32::MAX;

/// An endpoint already has `colours` edges, so no proper colouring with that many colours exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DegreeTooHigh {
    pub edge: usize,
}

/// Scratch space reused across calls, so colouring a slot allocates nothing after the first one.
#[derive(Debug, Default)]
pub(crate) struct EdgeColourer {
    /// `left[v * colours + c]`: the edge of colour `c` at left vertex `v`, or `NONE`.
    left: Vec<u32>,
    right: Vec<u32>,
    path: Vec<u32>,
}

impl EdgeColourer {
    /// Colours `edges` (pairs of left and right vertex) with colours `0..colours`, writing one
    /// colour per edge into `out`.
    pub(crate) fn colour(
        &mut self,
        left_vertices: usize,
        right_vertices: usize,
        colours: usize,
        edges: &[(u32, u32)],
        out: &mut Vec<u16>,
    ) -> Result<(), DegreeTooHigh> {
        self.left.clear();
        self.left.resize(left_vertices * colours, NONE);
        self.right.clear();
        self.right.resize(right_vertices * colours, NONE);
        out.clear();
        out.resize(edges.len(), 0);

        for (e, &(x, y)) in edges.iter().enumerate() {
            let (x, y) = (x as usize, y as usize);
            let free_x = (0..colours).find(|&c| self.left[x * colours + c] == NONE);
            let free_y = (0..colours).find(|&c| self.right[y * colours + c] == NONE);
            let (Some(a), Some(b)) = (free_x, free_y) else {
                return Err(DegreeTooHigh { edge: e });
            };
            if self.right[y * colours + a] != NONE {
                // `a` is taken at y and `b` is free there: swap a and b along the path from y.
                self.flip_path(edges, out, colours, y, a, b);
            }
            self.left[x * colours + a] = e as u32;
            self.right[y * colours + a] = e as u32;
            out[e] = a as u16;
        }
        Ok(())
    }

    /// Swaps colours `a` and `b` on the maximal path that leaves right vertex `y` on colour `a`
    /// and then alternates `b`, `a`, ...; afterwards `a` is free at `y`.
    fn flip_path(
        &mut self,
        edges: &[(u32, u32)],
        out: &mut [u16],
        colours: usize,
        y: usize,
        a: usize,
        b: usize,
    ) {
        self.path.clear();
        let mut on_right = true;
        let mut vertex = y;
        let mut colour = a;
        loop {
            let table = if on_right { &self.right } else { &self.left };
            let e = table[vertex * colours + colour];
            if e == NONE {
                break;
            }
            self.path.push(e);
            let (ex, ey) = edges[e as usize];
            vertex = if on_right { ex as usize } else { ey as usize };
            on_right = !on_right;
            colour = if colour == a { b } else { a };
        }
        for &e in &self.path {
            let (ex, ey) = edges[e as usize];
            let c = out[e as usize] as usize;
            self.left[ex as usize * colours + c] = NONE;
            self.right[ey as usize * colours + c] = NONE;
        }
        for &e in &self.path {
            let (ex, ey) = edges[e as usize];
            let c = if out[e as usize] as usize == a { b } else { a };
            out[e as usize] = c as u16;
            self.left[ex as usize * colours + c] = e;
            self.right[ey as usize * colours + c] = e;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn is_proper(
        left: usize,
        right: usize,
        colours: usize,
        edges: &[(u32, u32)],
        c: &[u16],
    ) -> bool {
        let mut l = vec![false; left * colours];
        let mut r = vec![false; right * colours];
        edges.iter().zip(c).all(|(&(x, y), &k)| {
            let k = k as usize;
            let fresh = k < colours && !l[x as usize * colours + k] && !r[y as usize * colours + k];
            if fresh {
                l[x as usize * colours + k] = true;
                r[y as usize * colours + k] = true;
            }
            fresh
        })
    }

    /// Random bipartite multigraphs of maximum degree `<= colours`: drop edges whose endpoint is
    /// already full.
    fn bounded(left: usize, right: usize, colours: usize, raw: &[(u32, u32)]) -> Vec<(u32, u32)> {
        let mut dl = vec![0usize; left];
        let mut dr = vec![0usize; right];
        let mut edges = Vec::new();
        for &(x, y) in raw {
            let (x, y) = (x as usize % left, y as usize % right);
            if dl[x] < colours && dr[y] < colours {
                dl[x] += 1;
                dr[y] += 1;
                edges.push((x as u32, y as u32));
            }
        }
        edges
    }

    proptest! {
        #[test]
        fn every_bounded_degree_bipartite_multigraph_is_coloured_properly(
            left in 1usize..12,
            right in 1usize..12,
            colours in 1usize..6,
            raw in proptest::collection::vec((0u32..64, 0u32..64), 0..120),
        ) {
            let edges = bounded(left, right, colours, &raw);
            let mut out = Vec::new();
            EdgeColourer::default().colour(left, right, colours, &edges, &mut out).unwrap();
            prop_assert!(is_proper(left, right, colours, &edges, &out));
        }
    }

    #[test]
    fn a_path_swap_is_needed_and_done() {
        // Colouring (0,0)=0, (1,1)=0, (1,0) then needs colour 1 at both ends, (0,1) then finds
        // 1 free at 0 but taken at 1 and must swap along a path.
        let edges = [(0, 0), (1, 1), (1, 0), (0, 1)];
        let mut out = Vec::new();
        EdgeColourer::default()
            .colour(2, 2, 2, &edges, &mut out)
            .unwrap();
        assert!(is_proper(2, 2, 2, &edges, &out));
    }

    #[test]
    fn too_many_edges_at_a_vertex_is_refused() {
        let edges = [(0, 0), (0, 1), (0, 2)];
        let mut out = Vec::new();
        let err = EdgeColourer::default()
            .colour(1, 3, 2, &edges, &mut out)
            .unwrap_err();
        assert_eq!(err, DegreeTooHigh { edge: 2 });
    }
}
