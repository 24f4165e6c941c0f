//! The experiments at the paper's scale (512 nodes where the paper has them). Too slow for the
//! default test run; run them with
//! `cargo test --release -p shoal-repro --test paper_scale -- --ignored --nocapture`.

mod common;

#[test]
#[ignore = "paper scale: minutes"]
fn fig9_prototype_throughput() {
    common::check("fig9", false);
}

#[test]
#[ignore = "paper scale: minutes"]
fn fig12_permutation_throughput() {
    common::check("fig12", false);
}

#[test]
#[ignore = "paper scale: minutes"]
fn fairness() {
    // With the §3.3.3 ready queue, 200 or more random flows miss (see quick.rs); 50 flows and
    // the one-flow-per-source control hold.
    common::check_known_misses("fairness", false, |c| {
        c.claim.contains("random flows")
            && c.claim.contains("optimisations on")
            && !c.claim.starts_with("50 ")
    });
}

#[test]
#[ignore = "paper scale: minutes"]
fn fig13_incast() {
    common::check("fig13", false);
}

#[test]
#[ignore = "paper scale: minutes"]
fn fig14_detour_optimisations() {
    common::check("fig14", false);
}

#[test]
#[ignore = "paper scale: minutes"]
fn table1_failure_costs() {
    // The leaf-spine link row misses: one counting for every row (see quick.rs).
    common::check_known_misses("table1", false, |c| {
        c.claim.starts_with("slots lost to a leaf-spine link")
    });
}

/// Nine loads of one million completed flows each on 512 nodes: hours at the simulator's
/// present speed (BENCHMARKS.md); run it alone with `-- --ignored fig15`.
#[test]
#[ignore = "paper scale: hours"]
fn fig15_datacenter_workload() {
    common::check("fig15", false);
}

/// Six failure fractions of one million completed flows each on 512 nodes: hours.
#[test]
#[ignore = "paper scale: hours"]
fn fig17_node_failures() {
    common::check("fig17", false);
}

/// Six runs of one million completed flows (512 and 1,024 nodes): hours.
#[test]
#[ignore = "paper scale: hours"]
fn epoch_size() {
    common::check("epoch", false);
}

/// Six applications of one million completed flows each on 512 nodes: hours.
#[test]
#[ignore = "paper scale: hours"]
fn fig18_disaggregated() {
    common::check("fig18", false);
}

/// Shoal and its four Fig. 15 baselines, nine loads of one million completed flows each on 512
/// nodes: many hours (R2C2 4 to 22 minutes a load). Run it alone with
/// `cargo test --release -p shoal-repro --test paper_scale -- --ignored --nocapture fig15_baselines`,
/// or scaled with `cargo run --release -p shoal-cli -- repro fig15-baselines
/// --scale "nodes=512 loads=0.2,0.7 flows=20000 torus_flows=2000"` (docs/results/baselines.md).
#[test]
#[ignore = "paper scale: many hours"]
fn fig15_baselines() {
    common::check("fig15-baselines", false);
}

/// Stardust Fig. 9 at the paper's scale: 256 adapters x 32 links, 130,560 flows, 1 ms
/// measured at each of seven utilisations. Its results are not committed yet.
#[test]
#[ignore = "paper scale: tens of minutes"]
fn stardust_fig9_two_tier_load() {
    common::check("stardust-fig9", false);
}

/// Stardust's failures on Fig. 9's full two-tier network, 1 ms measured after recovery.
#[test]
#[ignore = "paper scale: tens of minutes"]
fn stardust_failures() {
    common::check("stardust-failures", false);
}

/// Stardust Fig. 10(c) on the 432-node fat-tree, 8 to 431 backends.
#[test]
#[ignore = "paper scale: minutes"]
fn stardust_fig10c_incast() {
    common::check_known_misses("stardust-fig10c", false, |c| {
        c.claim.contains("equals DCTCP")
    });
}
