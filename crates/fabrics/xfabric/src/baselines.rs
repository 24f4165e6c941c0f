//! The two static topologies of §6.1, which need no circuit switch at all: the 3D torus (highest
//! path length and path diversity; the rack-scale design of AMD SeaMicro) and a random regular
//! graph (an expander: short paths, high bisection bandwidth). Both come out as the same
//! [`SocGraph`] as XFabric and OSA, over the same SoC ids.

use crate::error::Error;
use crate::graph::{MAX_GRAPH_SOCS, SocGraph, node};
use rand::RngExt;
use shoal_base::rng;
use shoal_topology::torus::{self, SizeTwo};

/// How many fresh pairings [`random_regular`] tries before it gives up.
const ATTEMPTS: usize = 100;

/// How many random draws the pairing makes before it checks whether any pair is still possible.
const DRAWS_BEFORE_CHECK: usize = 64;

/// An `x × y × z` torus with wrap-around links, degree 6. SoC `(i, j, k)` is
/// `i + x * (j + y * k)`; the links are `shoal_topology::torus::links`, the packet networks'
/// torus wiring.
///
/// A dimension of size 2 joins each SoC to the same neighbour both ways round, which gives two
/// parallel links (the degree stays 6: [`SizeTwo::TwoLinks`]); a dimension of size 1 would be a
/// self-loop and is rejected.
pub fn torus_3d(x: usize, y: usize, z: usize) -> Result<SocGraph, Error> {
    if let Some(&size) = [x, y, z].iter().find(|&&s| s < 2) {
        return Err(Error::TorusDimension { size });
    }
    let socs = x.saturating_mul(y).saturating_mul(z);
    if socs > MAX_GRAPH_SOCS {
        return Err(Error::TooManySocs {
            socs,
            max: MAX_GRAPH_SOCS,
        });
    }
    // Each side is at most MAX_GRAPH_SOCS, so the casts are exact.
    let (_, wires) = torus::links([x as u32, y as u32, z as u32], SizeTwo::TwoLinks);
    SocGraph::from_links(
        socs,
        wires
            .into_iter()
            .map(|[(a, _), (b, _)]| (node(a as usize), node(b as usize))),
    )
}

/// The sides of the most cube-like torus with `socs` SoCs (a cube when `socs` is one); `(1, 1, socs)` when `socs` has no such factors.
pub fn torus_sides(socs: usize) -> (usize, usize, usize) {
    let mut best = (1, 1, socs);
    for x in 2..=socs {
        if x * x * x > socs {
            break;
        }
        if !socs.is_multiple_of(x) {
            continue;
        }
        for y in x..=socs / x {
            if y * y > socs / x {
                break;
            }
            if (socs / x).is_multiple_of(y) {
                best = (x, y, socs / x / y);
            }
        }
    }
    best
}

/// A connected random `degree`-regular simple graph (no self-loops, no parallel links, as in
/// Jellyfish and the paper's "Random"), drawn from `seed`.
///
/// Built by random pairing of ports (Steger and Wormald): two free ports are drawn at random and
/// linked if their SoCs differ and are not linked yet. When no such pair is left the pairing
/// starts over, as it does when the result is not connected; each attempt has its own stream.
pub fn random_regular(socs: usize, degree: usize, seed: u64) -> Result<SocGraph, Error> {
    if socs < 2 {
        return Err(Error::TooFewSocs { socs, min: 2 });
    }
    if socs > MAX_GRAPH_SOCS {
        return Err(Error::TooManySocs {
            socs,
            max: MAX_GRAPH_SOCS,
        });
    }
    if degree == 0 {
        return Err(Error::NoPorts);
    }
    if degree >= socs || (socs * degree) % 2 == 1 {
        return Err(Error::NoRegularGraph { socs, degree });
    }
    for attempt in 0..ATTEMPTS {
        let mut r = rng::stream(seed, "xfabric.random_regular", attempt as u64);
        if let Some(links) = pairing(socs, degree, &mut r) {
            let g = SocGraph::from_links(socs, links.into_iter().map(|(a, b)| (node(a), node(b))))?;
            if g.is_connected() {
                return Ok(g);
            }
        }
    }
    Err(Error::RegularGraphAttempts {
        socs,
        degree,
        attempts: ATTEMPTS,
    })
}

/// One attempt at pairing every port, or `None` if it gets stuck.
fn pairing(socs: usize, degree: usize, r: &mut rng::StreamRng) -> Option<Vec<(usize, usize)>> {
    let mut points: Vec<usize> = (0..socs)
        .flat_map(|s| std::iter::repeat_n(s, degree))
        .collect();
    let mut adj: Vec<Vec<usize>> = vec![Vec::with_capacity(degree); socs];
    let mut links = Vec::with_capacity(socs * degree / 2);
    let suitable = |adj: &[Vec<usize>], u: usize, v: usize| u != v && !adj[u].contains(&v);
    while !points.is_empty() {
        let drawn = (0..DRAWS_BEFORE_CHECK).find_map(|_| {
            let i = r.random_range(0..points.len());
            let j = r.random_range(0..points.len());
            suitable(&adj, points[i], points[j]).then_some((i, j))
        });
        let (i, j) = match drawn {
            Some(pair) => pair,
            None => {
                // Draws keep failing only near the end, when few points are left: list the pairs
                // that are still possible and draw among them, or give up if there are none.
                let mut options = Vec::new();
                for i in 0..points.len() {
                    for j in i + 1..points.len() {
                        if suitable(&adj, points[i], points[j]) {
                            options.push((i, j));
                        }
                    }
                }
                if options.is_empty() {
                    return None;
                }
                options[r.random_range(0..options.len())]
            }
        };
        let (u, v) = (points[i], points[j]);
        adj[u].push(v);
        adj[v].push(u);
        links.push((u, v));
        // Remove the higher index first so the lower one still names the same point.
        points.swap_remove(i.max(j));
        points.swap_remove(i.min(j));
    }
    Some(links)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forwarding::ForwardingTables;
    use proptest::prelude::*;
    use shoal_base::NodeId;

    #[test]
    fn a_7_cubed_torus_matches_the_paper_rack() {
        let g = torus_3d(7, 7, 7).unwrap();
        assert_eq!(g.socs(), 343);
        assert_eq!(g.links().len(), 343 * 3);
        assert!(g.is_simple());
        assert!((0..343).all(|s| g.degree(NodeId(s)) == 6));
        let f = ForwardingTables::new(&g);
        // Each ring of 7 is at most 3 hops across, so the diameter is 9, and from any SoC the
        // mean distance to the others is 3 * (2 * (1 + 2 + 3) / 7) * 343 / 342.
        let far = (0..343)
            .map(|t| f.hops(NodeId(0), NodeId(t)).unwrap())
            .max()
            .unwrap();
        assert_eq!(far, 9);
        let sum: u32 = (0..343)
            .map(|t| f.hops(NodeId(0), NodeId(t)).unwrap() as u32)
            .sum();
        assert_eq!(sum, 3 * 12 * 49);
        // The opposite corner is reachable through all three dimensions first.
        assert_eq!(f.next_hops(NodeId(0), NodeId(3 + 7 * (3 + 7 * 3))).len(), 3);
    }

    #[test]
    fn the_torus_joins_each_soc_to_its_six_grid_neighbours() {
        // An independent construction: every SoC to its +1 neighbour in each dimension.
        for dims in [[2, 2, 2], [2, 3, 4], [3, 3, 3], [4, 2, 5], [7, 7, 7]] {
            let [x, y, z] = dims;
            let id = |i: usize, j: usize, k: usize| node(i + x * (j + y * k));
            let mut links = Vec::new();
            for k in 0..z {
                for j in 0..y {
                    for i in 0..x {
                        links.push((id(i, j, k), id((i + 1) % x, j, k)));
                        links.push((id(i, j, k), id(i, (j + 1) % y, k)));
                        links.push((id(i, j, k), id(i, j, (k + 1) % z)));
                    }
                }
            }
            let expected = SocGraph::from_links(x * y * z, links).unwrap();
            assert_eq!(torus_3d(x, y, z).unwrap(), expected, "{dims:?}");
        }
    }

    #[test]
    fn a_dimension_of_two_doubles_the_link() {
        let g = torus_3d(2, 3, 3).unwrap();
        assert_eq!(g.multiplicity(NodeId(0), NodeId(1)), 2);
        assert!((0..18).all(|s| g.degree(NodeId(s)) == 6));
        assert_eq!(torus_3d(1, 3, 3), Err(Error::TorusDimension { size: 1 }));
    }

    #[test]
    fn impossible_regular_graphs_are_rejected() {
        assert_eq!(
            random_regular(7, 3, 0),
            Err(Error::NoRegularGraph { socs: 7, degree: 3 })
        );
        assert_eq!(
            random_regular(6, 6, 0),
            Err(Error::NoRegularGraph { socs: 6, degree: 6 })
        );
        assert_eq!(random_regular(6, 0, 0), Err(Error::NoPorts));
        assert_eq!(
            random_regular(1, 0, 0),
            Err(Error::TooFewSocs { socs: 1, min: 2 })
        );
        // Degree 1 is a perfect matching, connected only for two SoCs.
        assert!(random_regular(2, 1, 0).is_ok());
        assert_eq!(
            random_regular(8, 1, 0),
            Err(Error::RegularGraphAttempts {
                socs: 8,
                degree: 1,
                attempts: ATTEMPTS
            })
        );
    }

    #[test]
    fn the_paper_random_rack_is_an_expander() {
        let g = random_regular(343, 6, 11).unwrap();
        let f = ForwardingTables::new(&g);
        let torus = ForwardingTables::new(&torus_3d(7, 7, 7).unwrap());
        let mean = |f: &ForwardingTables| {
            let mut sum = 0u64;
            for s in 0..343 {
                for t in 0..343 {
                    sum += f.hops(NodeId(s), NodeId(t)).unwrap() as u64;
                }
            }
            sum as f64 / (343.0 * 342.0)
        };
        // A 6-regular graph reaches at most 6 * 5^(h-1) new SoCs at h hops, so the mean distance
        // over 342 others is at least (6 + 2 * 30 + 3 * 150 + 4 * 156) / 342 = 3.33; random graphs
        // come close to that bound, far below the torus's 36/7 = 5.14.
        let m = mean(&f);
        assert!((3.33..3.8).contains(&m), "mean distance {m}");
        assert!(mean(&torus) > 5.1);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn random_regular_graphs_are_regular_simple_and_connected(
            socs in 8usize..80, degree in 3usize..7, seed in any::<u64>(),
        ) {
            prop_assume!((socs * degree) % 2 == 0);
            let g = random_regular(socs, degree, seed).unwrap();
            prop_assert!(g.is_simple());
            prop_assert!(g.is_connected());
            prop_assert!((0..socs).all(|s| g.degree(node(s)) == degree));
            prop_assert_eq!(&g, &random_regular(socs, degree, seed).unwrap());
        }
    }
}
