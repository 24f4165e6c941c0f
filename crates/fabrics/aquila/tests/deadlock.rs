//! Deadlock freedom as a checked fact: the channel dependency graph of every routing mode, at
//! several Dragonfly sizes, has no cycle; the level rule as §3.2 states it has one, shown.

use shoal_aquila::cdg::{Cdg, describe};
use shoal_aquila::routing::{LevelRule, Mode, Router};
use shoal_base::{Dur, Rate};
use shoal_topology::Dragonfly;

/// Sizes with one, two and four links between pods, single and parallel local links, and
/// pods whose TiNs hold uneven numbers of global links.
fn sizes() -> Vec<Dragonfly> {
    let base = Dragonfly::aquila(
        Rate::gbps(27),
        Rate::gbps(25),
        Dur::from_ns(20),
        Dur::from_ns(550),
    );
    [
        (3, 2, 1, 1, 1, 1),
        (5, 4, 1, 1, 3, 1),
        (7, 4, 2, 2, 6, 3),
        (9, 4, 1, 1, 3, 2),
        (6, 6, 2, 4, 10, 4),
        (13, 6, 2, 2, 10, 4),
    ]
    .into_iter()
    .map(
        |(pods, tins_per_pod, local_links, global_links, local_ports, global_ports)| Dragonfly {
            pods,
            tins_per_pod,
            local_links,
            global_links,
            local_ports,
            global_ports,
            ..base.clone()
        },
    )
    .collect()
}

#[test]
fn every_mode_is_free_of_cycles_at_every_size() {
    for df in sizes() {
        let topo = df.build().expect("valid size");
        let router = Router::new(&df, &topo, LevelRule::AfterEveryGlobal);
        for mode in Mode::ALL {
            let cdg = Cdg::build(&router, mode);
            assert!(cdg.edge_count() > 0, "{mode:?}: no dependency at all");
            if let Some(cycle) = cdg.find_cycle() {
                panic!(
                    "{} pods x {} TiNs, {mode:?}: {}",
                    df.pods,
                    df.tins_per_pod,
                    describe(&router, &cycle)
                );
            }
        }
    }
}

/// The rule as the paper states it (the level goes up only from a global to a local link)
/// lets a cell cross two global links at one level, and three pods routing through each other
/// then close a cycle of global channels. Minimal routes never cross two global links, so the
/// minimal modes stay acyclic under that rule.
#[test]
fn the_rule_as_the_paper_states_it_admits_a_cycle() {
    let mut cycles = 0;
    for df in sizes() {
        let topo = df.build().expect("valid size");
        let router = Router::new(&df, &topo, LevelRule::GlobalToLocalOnly);
        for mode in [Mode::MinimalAdaptive, Mode::MinimalDeterministic] {
            assert!(Cdg::build(&router, mode).find_cycle().is_none(), "{mode:?}");
        }
        if let Some(cycle) = Cdg::build(&router, Mode::FullyAdaptive).find_cycle() {
            let text = describe(&router, &cycle);
            println!("{} pods x {} TiNs: {text}", df.pods, df.tins_per_pod);
            assert!(
                text.contains("global"),
                "the cycle runs over global links: {text}"
            );
            let pods: std::collections::BTreeSet<u32> =
                cycle.iter().map(|c| df.pod_of(c.tin)).collect();
            assert!(pods.len() >= 3, "through at least three pods: {text}");
            cycles += 1;
        }
    }
    assert!(cycles > 0, "no size showed the cycle");
}

/// The full clique, intact and without the last links between two pods and two TiNs: minutes
/// in a debug build, under a minute with `--release`.
/// `cargo test --release -p shoal-aquila --test deadlock -- --ignored`
#[test]
#[ignore]
fn the_full_clique_is_free_of_cycles() {
    let df = Dragonfly::aquila(
        Rate::gbps(27),
        Rate::gbps(25),
        Dur::from_ns(20),
        Dur::from_ns(550),
    );
    let topo = df.build().expect("valid");
    let mut router = Router::new(&df, &topo, LevelRule::AfterEveryGlobal);
    for mode in Mode::ALL {
        let cdg = Cdg::build(&router, mode);
        assert!(cdg.find_cycle().is_none(), "{mode:?}");
    }
    // Without the two links between pods 0 and 1 and the two between TiNs 5 and 4: their
    // cells on the escape VCs, still acyclic, every TiN reaching every TiN.
    let pods = (0..df.global_links).map(|k| df.global_port(0, 1, k));
    let tins = (0..df.local_links).map(|k| (5, df.local_port(5, 4, k)));
    for (x, p) in pods.chain(tins).collect::<Vec<_>>() {
        router
            .remove_link(x, p)
            .expect("the clique stays connected");
    }
    for mode in Mode::ALL {
        let cdg = Cdg::build(&router, mode);
        assert!(cdg.find_cycle().is_none(), "{mode:?} without the links");
        assert!(cdg.dead_ends().is_empty(), "{mode:?} without the links");
        if !mode.non_minimal() {
            assert!(cdg.escape_channels() > 0, "{mode:?}");
        }
    }
}

/// Whether the links of `topo` that `removed` keeps connect every TiN to TiN 0: an
/// independent search, not the router's.
fn connected(topo: &shoal_topology::Topology, tins: u32, removed: &[(u32, u32)]) -> bool {
    let mut seen = vec![false; tins as usize];
    let mut stack = vec![0u32];
    seen[0] = true;
    while let Some(x) = stack.pop() {
        for (p, l) in topo.links(x).iter().enumerate() {
            let gone = removed.contains(&(x, p as u32)) || removed.contains(&(l.peer, l.peer_port));
            if !gone && !seen[l.peer as usize] {
                seen[l.peer as usize] = true;
                stack.push(l.peer);
            }
        }
    }
    seen.iter().all(|&s| s)
}

/// Every removal of all the links between two TiNs (one link, or its parallel twins: the
/// last one goes), at every size: either the clique stays connected, and then in every mode
/// the routes with the escape VCs have no dependency cycle and lead every TiN to every TiN
/// (the escape VCs taking over where the routing VCs lost every route); or it does not, and
/// the removal is refused, saying so.
#[test]
fn every_removal_that_keeps_the_clique_connected_is_routed_without_cycles() {
    let (mut removals, mut refused, mut escaping) = (0, 0, 0);
    for df in sizes() {
        let topo = df.build().expect("valid size");
        let intact = Router::new(&df, &topo, LevelRule::AfterEveryGlobal);
        for x in 0..df.tins() {
            let mut peers: Vec<u32> = topo.links(x).iter().map(|l| l.peer).collect();
            peers.sort_unstable();
            peers.dedup();
            for y in peers.into_iter().filter(|&y| y > x) {
                let mut router = Router::new(&df, &topo, LevelRule::AfterEveryGlobal);
                let ports: Vec<u32> = (0..topo.ports(x) as u32)
                    .filter(|&p| topo.link(x, p).peer == y)
                    .collect();
                let gone: Vec<(u32, u32)> = ports.iter().map(|&p| (x, p)).collect();
                let (last, rest) = ports.split_last().expect("a link");
                for &p in rest {
                    router.remove_link(x, p).expect("a parallel link is left");
                }
                let ok = connected(&topo, df.tins(), &gone);
                match router.remove_link(x, *last) {
                    Err(e) => {
                        assert!(!ok, "TiN {x} - TiN {y}: refused, yet connected: {e}");
                        assert!(e.contains("no working path"), "{e}");
                        refused += 1;
                        continue;
                    }
                    Ok(()) => assert!(ok, "TiN {x} - TiN {y}: removed, yet cut off"),
                }
                removals += 1;
                for mode in Mode::ALL {
                    let cdg = Cdg::build(&router, mode);
                    let at = format!(
                        "{} pods x {} TiNs, TiN {x} - TiN {y} removed, {mode:?}",
                        df.pods, df.tins_per_pod
                    );
                    if let Some(cycle) = cdg.find_cycle() {
                        panic!("{at}: {}", describe(&router, &cycle));
                    }
                    assert!(cdg.dead_ends().is_empty(), "{at}: {:?}", cdg.dead_ends());
                    // The intact tables never need the escape VCs.
                    if mode == Mode::MinimalAdaptive {
                        assert_eq!(Cdg::build(&intact, mode).escape_channels(), 0);
                        escaping += usize::from(cdg.escape_channels() > 0);
                    }
                }
            }
        }
    }
    println!(
        "{removals} removals routed ({escaping} of them over the escape VCs), {refused} refused"
    );
    // Every TiN of these sizes has two neighbours at least: no one removal cuts the clique
    // (`failure.rs` tests the refusal).
    assert_eq!(refused, 0);
    assert!(removals > 100 && escaping > 10);
}
