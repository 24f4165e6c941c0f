//! Every experiment's quick version passes (the paper-scale ones are the ignored tests of
//! `paper_scale.rs`).

mod common;

#[test]
fn fig9_prototype_throughput() {
    common::check("fig9", true);
}

#[test]
fn fig10_prototype_incast() {
    common::check("fig10", true);
}

#[test]
fn fig12_permutation_throughput() {
    common::check("fig12", true);
}

#[test]
fn fairness() {
    common::check("fairness", true);
}

#[test]
fn fig13_incast() {
    common::check("fig13", true);
}

#[test]
fn fig14_detour_optimisations() {
    common::check("fig14", true);
}

#[test]
fn fig15_datacenter_workload() {
    common::check("fig15", true);
}

#[test]
fn table1_failure_costs() {
    common::check("table1", true);
}
