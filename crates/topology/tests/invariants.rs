//! Whole-graph checks applied to every builder: links are symmetric, `distance` agrees with a BFS
//! written here independently of the crate's routing code, `next_hops` is exactly the set of
//! ports that get one hop closer, and shortest-path counts match their closed forms.

use proptest::prelude::*;
use shoal_base::{Dur, Rate};
use shoal_topology::{Direct, FatTree, LeafSpine, Link, NodeIdx, Topology, Torus};

/// Hop distances from every node to `dst`, by a BFS over `Topology::link` alone.
fn bfs_from(t: &Topology, dst: NodeIdx) -> Vec<u32> {
    let mut dist = vec![u32::MAX; t.nodes()];
    dist[dst as usize] = 0;
    let mut queue = std::collections::VecDeque::from([dst]);
    while let Some(n) = queue.pop_front() {
        for p in 0..t.ports(n) as u32 {
            let m = t.link(n, p).peer;
            if dist[m as usize] == u32::MAX {
                dist[m as usize] = dist[n as usize] + 1;
                queue.push_back(m);
            }
        }
    }
    dist
}

fn check_invariants(t: &Topology) {
    let nodes = t.nodes() as u32;
    for n in 0..nodes {
        for p in 0..t.ports(n) as u32 {
            let link = t.link(n, p);
            let back = t.link(link.peer, link.peer_port);
            assert_eq!(
                back,
                Link {
                    peer: n,
                    peer_port: p,
                    ..link
                },
                "{}: link ({n}, {p}) is not symmetric",
                t.name()
            );
        }
    }
    for dst in 0..t.hosts() as u32 {
        let dist = bfs_from(t, dst);
        for n in 0..nodes {
            let d = dist[n as usize];
            assert_ne!(d, u32::MAX, "{}: node {n} cannot reach {dst}", t.name());
            assert_eq!(t.distance(n, dst), d, "{}: distance({n}, {dst})", t.name());
            let closer: Vec<u32> = (0..t.ports(n) as u32)
                .filter(|&p| dist[t.link(n, p).peer as usize] + 1 == d)
                .collect();
            assert_eq!(
                t.next_hops(n, dst),
                closer,
                "{}: next_hops({n}, {dst})",
                t.name()
            );
            assert_eq!(closer.is_empty(), n == dst);
        }
    }
}

/// Hosts on the same leaf have one path (through the leaf); otherwise any spine will do.
fn leaf_spine_paths(ls: &LeafSpine, a: u32, b: u32) -> u64 {
    if a / ls.hosts_per_leaf == b / ls.hosts_per_leaf {
        1
    } else {
        u64::from(ls.spines)
    }
}

/// The multinomial of the per-dimension step counts (the orders in which the steps can be
/// taken), doubled for each dimension where both ways round are equally short and are distinct
/// links (size above 2).
fn torus_paths(dims: [u32; 3], a: u32, b: u32) -> u64 {
    let coords = |n: u32| {
        [
            n % dims[0],
            (n / dims[0]) % dims[1],
            n / (dims[0] * dims[1]),
        ]
    };
    let (ca, cb) = (coords(a), coords(b));
    let mut steps = [0u64; 3];
    let mut ties = 1u64;
    for d in 0..3 {
        let up = (cb[d] + dims[d] - ca[d]) % dims[d];
        let down = (dims[d] - up) % dims[d];
        steps[d] = u64::from(up.min(down));
        if up != 0 && up == down && dims[d] > 2 {
            ties *= 2;
        }
    }
    let fact = |n: u64| (1..=n).map(u128::from).product::<u128>();
    let total = steps.iter().sum();
    let orders = fact(total) / steps.iter().map(|&s| fact(s)).product::<u128>();
    u64::try_from(orders).unwrap() * ties
}

#[test]
fn fat_trees_satisfy_the_invariants() {
    for (k, o) in [(2, 1), (4, 1), (6, 2), (12, 1)] {
        let t = FatTree {
            k,
            oversubscription: o,
            rate: Rate::gbps(10),
            link_delay: Dur::from_us(1),
        }
        .build()
        .unwrap();
        check_invariants(&t);
    }
}

/// A 9-cube: from node `n` towards `dst` the ECMP set is the ports of the bits in which they
/// differ, so the table holds all 512 subsets of nine ports, more than a byte numbers: the
/// rows take two-byte set numbers, and route as the BFS says.
#[test]
fn a_hypercube_has_more_sets_than_a_byte_numbers() {
    let dim = 9u32;
    let hosts = 1u32 << dim;
    let links = (0..hosts)
        .flat_map(|n| (0..dim).map(move |p| (n, p)))
        .filter(|&(n, p)| n & 1 << p == 0)
        .map(|(n, p)| [(n, p), (n | 1 << p, p)])
        .collect();
    let t = Direct {
        hosts,
        ports_per_host: dim,
        links,
        rate: Rate::gbps(10),
        link_delay: Dur::from_ns(100),
    }
    .build()
    .unwrap();
    check_invariants(&t);
    let far = hosts - 1;
    assert_eq!(t.next_hops(0, far), (0..dim).collect::<Vec<_>>());
    // A u16 distance and a u16 set number per (node, host) row, plus the 512 sets.
    let rows = (hosts * hosts) as usize;
    let sets = 512 * 4 + (dim as usize * 256 + 512) * 4;
    assert_eq!(t.routing_bytes(), rows * 4 + sets);
}

#[test]
fn fat_tree_path_counts_by_locality() {
    let k = 8u32;
    let t = FatTree {
        k,
        oversubscription: 1,
        rate: Rate::gbps(100),
        link_delay: Dur::from_ns(500),
    }
    .build()
    .unwrap();
    let (per_edge, per_pod) = (k / 2, k * k / 4);
    for a in (0..t.hosts() as u32).step_by(5) {
        for b in 0..t.hosts() as u32 {
            let expected = if a == b || a / per_edge == b / per_edge {
                1
            } else if a / per_pod == b / per_pod {
                u64::from(k / 2)
            } else {
                u64::from(k * k / 4)
            };
            assert_eq!(t.shortest_paths(a, b), expected, "{a} -> {b}");
        }
    }
}

#[test]
fn a_16_by_16_by_16_torus_counts_paths_beyond_u32() {
    let t = Torus {
        x: 16,
        y: 16,
        z: 16,
        rate: Rate::gbps(100),
        link_delay: Dur::from_ns(50),
    }
    .build()
    .unwrap();
    let far = 8 + 16 * (8 + 16 * 8);
    // 24! / (8!)³ orders, times two ways round in each of the three tied dimensions.
    assert_eq!(t.shortest_paths(0, far), 9_465_511_770 * 8);
    assert_eq!(t.distance(0, far), 24);
    assert_eq!(t.next_hops(0, far), &[0, 1, 2, 3, 4, 5]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_leaf_spines_hold(
        leaves in 1u32..7,
        spines in 1u32..6,
        per_leaf in 1u32..6,
        host_gbps in 1u64..101,
        fabric_gbps in 1u64..401,
        ns in 0u64..2_000,
    ) {
        prop_assume!(leaves * per_leaf >= 2);
        let ls = LeafSpine {
            leaves,
            spines,
            hosts_per_leaf: per_leaf,
            host_rate: Rate::gbps(host_gbps),
            fabric_rate: Rate::gbps(fabric_gbps),
            link_delay: Dur::from_ns(ns),
        };
        let t = ls.build().unwrap();
        prop_assert_eq!(t.hosts(), (leaves * per_leaf) as usize);
        prop_assert_eq!(t.switches(), (leaves + spines) as usize);
        prop_assert_eq!(t.link_count(), (leaves * per_leaf + leaves * spines) as usize);
        check_invariants(&t);
        for a in 0..t.hosts() as u32 {
            for b in 0..t.hosts() as u32 {
                prop_assert_eq!(t.shortest_paths(a, b), leaf_spine_paths(&ls, a, b));
            }
        }
    }

    #[test]
    fn random_tori_hold(x in 1u32..7, y in 1u32..7, z in 1u32..7) {
        prop_assume!(x * y * z >= 2);
        let rate = Rate::gbps(25);
        let t = Torus { x, y, z, rate, link_delay: Dur::from_ns(20) }.build().unwrap();
        let degree = |s: u32| match s {
            1 => 0,
            2 => 1,
            _ => 2,
        };
        for n in 0..t.nodes() as u32 {
            prop_assert_eq!(t.ports(n), degree(x) + degree(y) + degree(z));
        }
        check_invariants(&t);
        for a in 0..t.hosts() as u32 {
            for b in 0..t.hosts() as u32 {
                let paths = torus_paths([x, y, z], a, b);
                prop_assert_eq!(t.shortest_paths(a, b), paths, "{} -> {}", a, b);
                if a != b {
                    let p = t.dimension_order_hop(a, b).unwrap();
                    prop_assert!(t.next_hops(a, b).contains(&p));
                }
            }
        }
    }
}
