use super::*;
use proptest::prelude::*;

const TOL: f64 = 1e-9;

/// `a` and `b` agree within `TOL`, relative to their size (absolute below 1).
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= TOL * a.abs().max(b.abs()).max(1.0)
}

fn assert_rates(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "got {got:?}, want {want:?}");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(close(g, w), "rate {i}: got {g}, want {w} (all: {got:?})");
    }
}

/// The max-min characterization, checked independently of the solver: the allocation is
/// feasible, and every entity is at its cap or crosses a saturated link on which its
/// rate/weight is the largest. Feasible + bottlenecked is exactly (weighted) max-min fairness.
fn assert_max_min(p: &MaxMin, rates: &[f64]) {
    assert_eq!(rates.len(), p.n_entities());
    let mut load = vec![0.0; p.n_links()];
    let mut max_norm = vec![0.0f64; p.n_links()];
    for (e, &r) in rates.iter().enumerate() {
        assert!(r >= 0.0 && r.is_finite(), "entity {e}: rate {r}");
        assert!(
            r <= p.cap(e) || close(r, p.cap(e)),
            "entity {e}: rate {r} above cap {}",
            p.cap(e)
        );
        for &l in p.entity_links(e) {
            load[l] += r;
            max_norm[l] = max_norm[l].max(r / p.weight(e));
        }
    }
    for (l, &x) in load.iter().enumerate() {
        assert!(
            x <= p.capacity(l) || close(x, p.capacity(l)),
            "link {l}: load {x} > {}",
            p.capacity(l)
        );
    }
    for (e, &r) in rates.iter().enumerate() {
        let capped = close(r, p.cap(e));
        let bottlenecked = p
            .entity_links(e)
            .iter()
            .any(|&l| close(load[l], p.capacity(l)) && close(r / p.weight(e), max_norm[l]));
        assert!(
            capped || bottlenecked,
            "entity {e} (rate {r}) has no bottleneck"
        );
    }
}

fn solve_checked(p: &MaxMin) -> Vec<f64> {
    let rates = p.solve().expect("valid problem");
    assert_max_min(p, &rates);
    rates
}

fn flows(pairs: &[(u16, u16)]) -> Vec<(NodeId, NodeId)> {
    pairs.iter().map(|&(s, d)| (NodeId(s), NodeId(d))).collect()
}

// ---- generic allocator: hand-checked instances ----

#[test]
fn single_bottleneck_splits_evenly() {
    let mut p = MaxMin::new();
    let l = p.add_link(10.0);
    for _ in 0..4 {
        p.add_entity(&[l]);
    }
    assert_rates(&solve_checked(&p), &[2.5; 4]);
}

#[test]
fn parking_lot_equal_links() {
    // The long entity crosses both links; each short one crosses one: everyone gets 1/2.
    let mut p = MaxMin::new();
    let (a, b) = (p.add_link(1.0), p.add_link(1.0));
    p.add_entity(&[a, b]);
    p.add_entity(&[a]);
    p.add_entity(&[b]);
    assert_rates(&solve_checked(&p), &[0.5, 0.5, 0.5]);
}

#[test]
fn parking_lot_unequal_links() {
    // Link a (1) saturates first at 1/2: long and short-a freeze there; short-b takes what is
    // left of b (2): 3/2.
    let mut p = MaxMin::new();
    let (a, b) = (p.add_link(1.0), p.add_link(2.0));
    p.add_entity(&[a, b]);
    p.add_entity(&[a]);
    p.add_entity(&[b]);
    assert_rates(&solve_checked(&p), &[0.5, 0.5, 1.5]);
}

#[test]
fn three_link_parking_lot() {
    // Long flow over 3 links of 1, one short flow on each of links 0 and 1, two on link 2:
    // link 2 saturates at 1/3 (long and its two short flows), then links 0 and 1 give 2/3.
    let mut p = MaxMin::new();
    let l: Vec<usize> = (0..3).map(|_| p.add_link(1.0)).collect();
    p.add_entity(&l);
    p.add_entity(&[l[0]]);
    p.add_entity(&[l[1]]);
    p.add_entity(&[l[2]]);
    p.add_entity(&[l[2]]);
    assert_rates(
        &solve_checked(&p),
        &[1.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0],
    );
}

#[test]
fn capped_entity_releases_capacity() {
    let mut p = MaxMin::new();
    let l = p.add_link(10.0);
    p.add_weighted_entity(&[l], 1.0, Some(1.0));
    p.add_entity(&[l]);
    p.add_entity(&[l]);
    assert_rates(&solve_checked(&p), &[1.0, 4.5, 4.5]);
}

#[test]
fn cap_above_fair_share_is_not_binding() {
    let mut p = MaxMin::new();
    let l = p.add_link(10.0);
    p.add_weighted_entity(&[l], 1.0, Some(7.0));
    p.add_entity(&[l]);
    assert_rates(&solve_checked(&p), &[5.0, 5.0]);
}

#[test]
fn weights_scale_shares() {
    let mut p = MaxMin::new();
    let l = p.add_link(6.0);
    p.add_weighted_entity(&[l], 1.0, None);
    p.add_weighted_entity(&[l], 2.0, None);
    assert_rates(&solve_checked(&p), &[2.0, 4.0]);
}

#[test]
fn zero_capacity_link_freezes_its_entities_at_zero() {
    let mut p = MaxMin::new();
    let (dead, ok) = (p.add_link(0.0), p.add_link(3.0));
    p.add_entity(&[dead, ok]);
    p.add_entity(&[ok]);
    assert_rates(&solve_checked(&p), &[0.0, 3.0]);
}

#[test]
fn duplicate_link_counts_twice() {
    // x crosses the link twice, y once: 2x + y = 3 with x = y gives 1 each.
    let mut p = MaxMin::new();
    let l = p.add_link(3.0);
    p.add_entity(&[l, l]);
    p.add_entity(&[l]);
    assert_rates(&solve_checked(&p), &[1.0, 1.0]);
}

#[test]
fn linkless_entity_gets_its_cap_and_empty_problem_is_empty() {
    let mut p = MaxMin::new();
    p.add_weighted_entity(&[], 2.0, Some(4.0));
    assert_rates(&solve_checked(&p), &[4.0]);
    assert_eq!(MaxMin::new().solve(), Ok(vec![]));
}

#[test]
fn bad_inputs_are_typed_errors() {
    let one = |capacity: f64, links: &[usize], weight: f64, cap: Option<f64>| {
        let mut p = MaxMin::new();
        p.add_link(capacity);
        p.add_weighted_entity(links, weight, cap);
        p.solve()
    };
    for c in [-1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            one(c, &[0], 1.0, None),
            Err(MaxMinError::BadCapacity { link: 0, .. })
        ));
    }
    assert_eq!(
        one(1.0, &[0, 3], 1.0, None),
        Err(MaxMinError::LinkOutOfRange {
            entity: 0,
            link: 3,
            n_links: 1
        })
    );
    for w in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            one(1.0, &[0], w, None),
            Err(MaxMinError::BadWeight { entity: 0, .. })
        ));
    }
    for c in [-0.5, f64::NAN] {
        assert!(matches!(
            one(1.0, &[0], 1.0, Some(c)),
            Err(MaxMinError::BadCap { entity: 0, .. })
        ));
    }
    assert_eq!(
        one(1.0, &[], 1.0, None),
        Err(MaxMinError::Unbounded { entity: 0 })
    );
    assert_eq!(
        one(1.0, &[], 1.0, Some(f64::INFINITY)),
        Err(MaxMinError::Unbounded { entity: 0 })
    );
    // An infinite cap is "uncapped", not an error, when a link bounds the entity.
    assert_eq!(one(1.0, &[0], 1.0, Some(f64::INFINITY)), Ok(vec![1.0]));
}

// ---- Shoal virtual-link model ----

const R: f64 = 100.0;

#[test]
fn two_nodes_one_flow_uses_the_only_link() {
    assert_rates(&shoal_maxmin(2, R, &flows(&[(0, 1)])).unwrap(), &[R]);
    assert_rates(
        &shoal_maxmin_uniform(2, R, &flows(&[(1, 0)])).unwrap(),
        &[R],
    );
}

#[test]
fn three_nodes_one_flow_gets_full_rate() {
    // Subflows 0→1→2 and direct 0→2, each alone on links of R/2: R/2 each, R in total.
    let (p, _) = subflow_problem(3, R, &flows(&[(0, 2)])).unwrap();
    assert_eq!(p.n_entities(), 2);
    assert_eq!(p.entity_links(0).len(), 2, "via node 1: two hops");
    assert_eq!(p.entity_links(1).len(), 1, "direct: one hop");
    assert_rates(&solve_checked(&p), &[R / 2.0, R / 2.0]);
    assert_rates(&shoal_maxmin(3, R, &flows(&[(0, 2)])).unwrap(), &[R]);
    assert_rates(
        &shoal_maxmin_uniform(3, R, &flows(&[(0, 2)])).unwrap(),
        &[R],
    );
}

#[test]
fn four_nodes_one_flow_gets_full_rate() {
    // N − 1 = 3 subflows, each alone on links of R/3.
    assert_rates(&shoal_maxmin(4, R, &flows(&[(3, 1)])).unwrap(), &[R]);
    assert_rates(
        &shoal_maxmin_uniform(4, R, &flows(&[(3, 1)])).unwrap(),
        &[R],
    );
}

#[test]
fn two_flows_from_one_source_share_its_links() {
    // 0→1 and 0→2 in a 4-node rack (links of C = R/3). Source links 0→1, 0→2, 0→3 each carry
    // two subflows (0→1 direct + 0→1→2; 0→2→1 + 0→2 direct; 0→3→1 + 0→3→2); every other hop
    // carries one. So every subflow gets C/2 and each flow 3·C/2 = R/2.
    let f = flows(&[(0, 1), (0, 2)]);
    assert_rates(&shoal_maxmin(4, R, &f).unwrap(), &[R / 2.0, R / 2.0]);
    assert_rates(
        &shoal_maxmin_uniform(4, R, &f).unwrap(),
        &[R / 2.0, R / 2.0],
    );
}

#[test]
fn four_nodes_unequal_shares() {
    // A 0→1, B 0→2, C 0→3, D 1→2, links of C = R/3 (in units of C below).
    // 0→2 carries A's 0→2→1, B direct, C's 0→2→3 and D's 1→0→2: 4 subflows, saturates at 1/4.
    // 0→1 and 0→3 then carry 3 unfrozen subflows each: they saturate at 1/3.
    // D's remaining subflows (direct 1→2, 1→3→2) share 1→2 and 1→3, 3→2 with B's and C's
    // 1/3-subflows: they get 2/3 each.
    // A = B = C = 1/4 + 1/3 + 1/3 = 11/12; D = 1/4 + 2/3 + 2/3 = 19/12.
    let c = R / 3.0;
    let f = flows(&[(0, 1), (0, 2), (0, 3), (1, 2)]);
    let (p, _) = subflow_problem(4, R, &f).unwrap();
    solve_checked(&p);
    let want = [
        11.0 / 12.0 * c,
        11.0 / 12.0 * c,
        11.0 / 12.0 * c,
        19.0 / 12.0 * c,
    ];
    assert_rates(&shoal_maxmin(4, R, &f).unwrap(), &want);
}

#[test]
fn full_permutation_gets_about_half() {
    // With each node sending one flow to d(i) ≠ i, link i→d(i) carries only i's direct
    // subflow (C = R/(N − 1)) and every other link two two-hop subflows (C/2 each). A flow is
    // then (N − 2)·C/2 + C = R·N/(2(N − 1)): the §6.2 halving, approached as N grows. Under
    // uniform spreading the shared links cap every flow at exactly R/2.
    for (n, shift) in [(8u16, 1u16), (16, 5)] {
        let f: Vec<(NodeId, NodeId)> = (0..n)
            .map(|i| (NodeId(i), NodeId((i + shift) % n)))
            .collect();
        let per_subflow = R * f64::from(n) / (2.0 * f64::from(n - 1));
        assert_rates(
            &shoal_maxmin(n.into(), R, &f).unwrap(),
            &vec![per_subflow; n.into()],
        );
        assert_rates(
            &shoal_maxmin_uniform(n.into(), R, &f).unwrap(),
            &vec![R / 2.0; n.into()],
        );
        let (p, _) = subflow_problem(n.into(), R, &f).unwrap();
        solve_checked(&p);
    }
}

#[test]
fn incast_splits_the_destination_evenly() {
    // n sources into node 0 of an 8-node rack: each of 0's N − 1 incoming links carries exactly
    // n subflows (one per source: the direct one from that link's own sender if it is a source,
    // a relayed one otherwise), while the sources' outgoing links carry one each. So every
    // subflow gets C/n and every flow (N − 1)·C/n = R/n.
    let n_nodes = 8;
    for n in 1..n_nodes as u16 {
        let f: Vec<(NodeId, NodeId)> = (1..=n).map(|s| (NodeId(s), NodeId(0))).collect();
        let want = vec![R / f64::from(n); n.into()];
        assert_rates(&shoal_maxmin(n_nodes, R, &f).unwrap(), &want);
        assert_rates(&shoal_maxmin_uniform(n_nodes, R, &f).unwrap(), &want);
    }
}

#[test]
fn duplicate_pairs_share_one_flow() {
    // Two listings of 0→1 are one Shoal flow of rate R, reported as R/2 each; 0→2 alongside
    // makes the pairs share node 0's links as in two_flows_from_one_source_share_its_links.
    assert_rates(
        &shoal_maxmin(3, R, &flows(&[(0, 1), (0, 1)])).unwrap(),
        &[R / 2.0, R / 2.0],
    );
    let f = flows(&[(0, 1), (0, 2), (0, 1)]);
    assert_rates(
        &shoal_maxmin(4, R, &f).unwrap(),
        &[R / 4.0, R / 2.0, R / 4.0],
    );
    assert_rates(
        &shoal_maxmin_uniform(4, R, &f).unwrap(),
        &[R / 4.0, R / 2.0, R / 4.0],
    );
}

#[test]
fn shoal_bad_inputs_are_typed_errors() {
    let f = flows(&[(0, 1)]);
    assert_eq!(
        shoal_maxmin(1, R, &[]),
        Err(MaxMinError::TooFewNodes { n_nodes: 1 })
    );
    assert!(matches!(
        shoal_maxmin(3, -1.0, &f),
        Err(MaxMinError::BadNodeRate { .. })
    ));
    assert!(matches!(
        shoal_maxmin_uniform(3, f64::NAN, &f),
        Err(MaxMinError::BadNodeRate { .. })
    ));
    assert_eq!(
        shoal_maxmin(3, R, &flows(&[(0, 1), (1, 3)])),
        Err(MaxMinError::NodeOutOfRange {
            flow: 1,
            node: NodeId(3),
            n_nodes: 3
        })
    );
    assert_eq!(
        shoal_maxmin_uniform(3, R, &flows(&[(2, 2)])),
        Err(MaxMinError::SelfFlow {
            flow: 0,
            node: NodeId(2)
        })
    );
    assert_eq!(shoal_maxmin(3, R, &[]), Ok(vec![]));
    assert_eq!(shoal_maxmin(3, 0.0, &f), Ok(vec![0.0]));
}

/// SplitMix64, enough for reproducible random flow lists in tests.
fn random_flows(seed: u64, n_nodes: usize, n_flows: usize) -> Vec<(NodeId, NodeId)> {
    let mut z = seed;
    let mut next = move |bound: usize| {
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut x = z;
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((x ^ (x >> 31)) % bound as u64) as usize
    };
    (0..n_flows)
        .map(|_| {
            let s = next(n_nodes);
            let d = (s + 1 + next(n_nodes - 1)) % n_nodes;
            (NodeId(s as u16), NodeId(d as u16))
        })
        .collect()
}

/// Checks both Shoal references on random flows against the characterization.
fn check_random_shoal(n_nodes: usize, f: &[(NodeId, NodeId)]) {
    let (p, pairs) = subflow_problem(n_nodes, R, f).unwrap();
    let sub = solve_checked(&p);
    let per_flow = shoal_maxmin(n_nodes, R, f).unwrap();
    for (i, &x) in per_flow.iter().enumerate() {
        let pr = pairs.of_flow[i];
        let total: f64 = sub[pr * (n_nodes - 1)..(pr + 1) * (n_nodes - 1)]
            .iter()
            .sum();
        assert!(close(x * pairs.multiplicity[pr] as f64, total));
        assert!(x <= R * (1.0 + TOL), "flow {i}: {x} above the node rate");
    }
    let (p, _) = uniform_problem(n_nodes, R, f).unwrap();
    solve_checked(&p);
}

#[test]
fn random_64_node_rack_is_max_min() {
    for seed in 0..3 {
        check_random_shoal(64, &random_flows(seed, 64, 128));
    }
}

/// The §7.2 scale: 1,024 random flows in a 512-node rack (≈ 520k subflows). Run with
/// `cargo test --release -p shoal-metrics -- --ignored`.
#[test]
#[ignore = "large: run in release"]
fn random_512_node_rack_1024_flows() {
    check_random_shoal(512, &random_flows(7, 512, 1024));
}

// ---- properties ----

fn instance() -> impl Strategy<Value = MaxMin> {
    (1usize..6)
        .prop_flat_map(|n_links| {
            // Integer capacities and unit weights make ties (several links saturating at one
            // level) common; zero capacities and caps exercise the degenerate paths.
            let capacity =
                prop_oneof![1 => Just(0.0), 3 => (1u8..5).prop_map(f64::from), 3 => 0.0f64..10.0];
            let weight = prop_oneof![3 => Just(1.0), 1 => 0.25f64..4.0];
            let cap =
                prop::option::weighted(0.3, prop_oneof![(0u8..4).prop_map(f64::from), 0.0f64..8.0]);
            let entity = (prop::collection::vec(0..n_links, 0..4), weight, cap);
            (
                prop::collection::vec(capacity, n_links),
                prop::collection::vec(entity, 1..12),
            )
        })
        .prop_map(|(capacities, entities)| {
            let mut p = MaxMin::new();
            for c in capacities {
                p.add_link(c);
            }
            for (links, weight, cap) in entities {
                // A linkless entity needs a cap to be bounded.
                let cap = if links.is_empty() {
                    cap.or(Some(1.0))
                } else {
                    cap
                };
                p.add_weighted_entity(&links, weight, cap);
            }
            p
        })
}

proptest! {
    #[test]
    fn allocation_is_feasible_and_bottlenecked(p in instance()) {
        let rates = p.solve().unwrap();
        assert_max_min(&p, &rates);
    }

    #[test]
    fn shoal_allocations_are_max_min(
        n_nodes in 2usize..7,
        raw in prop::collection::vec((0usize..64, 0usize..64), 0..12),
    ) {
        let f: Vec<(NodeId, NodeId)> = raw
            .iter()
            .map(|&(s, o)| {
                let s = s % n_nodes;
                (NodeId(s as u16), NodeId(((s + 1 + o % (n_nodes - 1)) % n_nodes) as u16))
            })
            .collect();
        check_random_shoal(n_nodes, &f);
    }
}
