//! `stardust.link_sizing`: the fabric links' rate derived from the credit rate (§4.1, §6.2)
//! instead of given, refused when both are given or the sizing is unknown, and written back as
//! the rate it resolved to.

use shoal_scenario::{ErrorKind, parse};
use shoal_stardust::StardustSpec;
use shoal_stardust::speedup::{CellCosts, credit_link_bps};

const BASE: &str = "[scenario]\nfabric = \"stardust\"\n[stardust]\ntopology = \"fat-tree\"\n\
k = 4\nports_per_fa = 1\nport_gbps = 10.0\ncell_bytes = 512\ncredit_bytes = 4096\n\
credit_speedup = 0.03\nSIZING\n[workload]\nkind = \"permutation\"\nflow_bytes = 100000\n";

fn scenario(sizing: &str) -> Result<shoal_scenario::Scenario, shoal_scenario::ScenarioError> {
    parse(&BASE.replace("SIZING", sizing), "link_sizing.toml")
}

fn link_bps(s: &shoal_scenario::Scenario) -> u64 {
    s.spec::<StardustSpec>()
        .expect("a stardust scenario")
        .link_rate
        .0
}

#[test]
fn credit_rate_sizing_gives_the_links_the_credit_rate_after_headers_and_credit_cells() {
    let s = scenario("link_sizing = \"credit-rate\"").unwrap();
    let want = credit_link_bps(
        10e9,
        0.03,
        1,
        1,
        &CellCosts {
            cell_bytes: 512,
            cell_header_bytes: 16,
            control_bytes: 64,
            credit_bytes: 4096,
        },
    );
    assert_eq!(link_bps(&s), want.round() as u64);
    // Written back as the rate, the resolved file resolves to the same links.
    let again = parse(&s.resolved_toml(), "resolved.toml").unwrap();
    assert_eq!(link_bps(&again), link_bps(&s));
    // "given" (the default) keeps link_gbps.
    let given = scenario("link_sizing = \"given\"\nlink_gbps = 10.0").unwrap();
    assert_eq!(link_bps(&given), 10_000_000_000);
}

#[test]
fn a_rate_given_twice_or_an_unknown_sizing_is_refused_naming_the_key() {
    for (sizing, key, says) in [
        (
            "link_sizing = \"credit-rate\"\nlink_gbps = 10.0",
            "stardust.link_gbps",
            "not both",
        ),
        (
            "link_sizing = \"fast\"",
            "stardust.link_sizing",
            "unknown sizing",
        ),
    ] {
        let e = scenario(sizing).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Value, "{e}");
        assert_eq!(e.key, key, "{e}");
        assert!(e.to_string().contains(says), "{e}");
    }
}
