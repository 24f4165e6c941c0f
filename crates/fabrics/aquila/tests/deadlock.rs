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

/// The full clique: minutes in a debug build, about ten seconds with `--release`.
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
    let router = Router::new(&df, &topo, LevelRule::AfterEveryGlobal);
    for mode in Mode::ALL {
        let cdg = Cdg::build(&router, mode);
        assert!(cdg.find_cycle().is_none(), "{mode:?}");
    }
}
