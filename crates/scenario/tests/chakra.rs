//! `kind = "chakra"` as a scenario: the committed four-rank trace resolves, its ranks placed
//! by default or by a list, and bad keys are refused with the key and the reason.

use shoal_scenario::{Scenario, WorkloadSpec, load, parse};
use shoal_workload::chakra::CtrlDeps;
use std::path::Path;

const SCENARIO: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../scenarios/chakra-tiny.toml"
);

fn with_workload(workload: &str) -> Result<Scenario, String> {
    let text = std::fs::read_to_string(SCENARIO).expect("the committed scenario");
    let at = text.find("[workload]").expect("a workload table");
    let text = format!("{}[workload]\n{workload}", &text[..at]);
    parse(&text, SCENARIO).map_err(|e| e.to_string())
}

#[test]
fn the_committed_trace_resolves_with_rank_r_on_node_r_or_on_the_nodes_listed() {
    let s = load(Path::new(SCENARIO)).expect("loads");
    let again = parse(&s.resolved_toml(), "resolved.toml").expect("the resolved file parses");
    assert_eq!(again.workload, s.workload);
    let WorkloadSpec::Chakra {
        ranks,
        sends,
        listed,
        ..
    } = &s.workload
    else {
        panic!("a chakra workload: {:?}", s.workload)
    };
    assert_eq!(
        ranks.iter().map(|n| n.0).collect::<Vec<_>>(),
        vec![0, 1, 2, 3]
    );
    assert!(!listed);
    // 4 ring sends and a 4-rank ring all-reduce's 4 × 6.
    assert_eq!(*sends, 28);
    let s = with_workload(
        "kind = \"chakra\"\ntraces = \"data/chakra/tiny\"\nranks = [3, 2, 1, 0]\n\
             ctrl_deps = \"ignore\"\n",
    )
    .expect("listed ranks");
    let WorkloadSpec::Chakra {
        ranks,
        listed,
        ctrl,
        ..
    } = &s.workload
    else {
        panic!("chakra")
    };
    assert_eq!(
        ranks.iter().map(|n| n.0).collect::<Vec<_>>(),
        vec![3, 2, 1, 0]
    );
    assert!(listed);
    assert_eq!(*ctrl, CtrlDeps::Ignore);
    assert!(s.resolved_toml().contains("ranks = [3, 2, 1, 0]"));
    let again = parse(&s.resolved_toml(), "resolved.toml").expect("the resolved file parses");
    assert_eq!(again.workload, s.workload);
}

#[test]
fn bad_chakra_keys_are_refused_with_the_key_and_the_reason() {
    let cases = [
        ("kind = \"chakra\"\n", "workload.traces"),
        (
            "kind = \"chakra\"\ntraces = \"data/chakra/none\"\n",
            "none.0.et: one file per rank",
        ),
        (
            "kind = \"chakra\"\ntraces = \"data/chakra/tiny\"\nranks = [0, 1]\n",
            "2 nodes listed for 4 ranks",
        ),
        (
            "kind = \"chakra\"\ntraces = \"data/chakra/tiny\"\nranks = [0, 1, 2, 9]\n",
            "workload.ranks[3]",
        ),
        (
            "kind = \"chakra\"\ntraces = \"data/chakra/tiny\"\nranks = \"all\"\n",
            "expected a list of node ids",
        ),
        (
            "kind = \"chakra\"\ntraces = \"data/chakra/tiny\"\nfile = \"x\"\n",
            "workload.file",
        ),
        (
            "kind = \"chakra\"\ntraces = \"data/chakra/tiny\"\nctrl_deps = \"data\"\n",
            "workload.ctrl_deps",
        ),
    ];
    for (body, want) in cases {
        let e = with_workload(body).expect_err(body);
        assert!(e.contains(want), "{body}: want {want:?}, got {e}");
    }
}
