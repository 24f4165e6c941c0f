//! MPTCP in `[network]`: its defaults (8 subflows, each pinned to a path of its own), the
//! `mptcp_subflows` key checked and refused by the other transports, pinned paths refused on a
//! torus.

use shoal_psn::{NetworkSpec, PathChoice, TransportSpec};
use shoal_scenario::parse;

fn scenario(fabric: &str, network: &str) -> String {
    format!(
        "[scenario]\nname = \"mptcp\"\nfabric = \"{fabric}\"\n[network]\n{network}\n[workload]\nkind = \"permutation\"\nflow_bytes = 3000\n"
    )
}

fn spec(fabric: &str, network: &str) -> NetworkSpec {
    let s = parse(&scenario(fabric, network), "mptcp.toml").expect("resolves");
    s.spec::<NetworkSpec>().expect("a packet network").clone()
}

fn refused(fabric: &str, network: &str) -> String {
    match parse(&scenario(fabric, network), "mptcp.toml") {
        Ok(_) => panic!("{fabric} accepted {network:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn mptcp_defaults_to_eight_subflows_on_pinned_paths() {
    let s = spec("mptcp", "hosts = 8\nradix = 4");
    assert_eq!(s.net.path, PathChoice::Pinned);
    let TransportSpec::Mptcp(c) = s.transport else {
        panic!("not MPTCP: {:?}", s.transport)
    };
    assert_eq!(c.subflows, 8);
    assert_eq!(c.subflow.dctcp_g_shift, None, "subflows are NewReno");
    let s = spec(
        "mptcp",
        "hosts = 8\nradix = 4\nmptcp_subflows = 3\npath = \"ecmp\"",
    );
    assert_eq!(s.net.path, PathChoice::Ecmp);
    assert!(matches!(s.transport, TransportSpec::Mptcp(c) if c.subflows == 3));
}

#[test]
fn bad_subflow_counts_and_pinned_paths_on_a_torus_are_refused_by_key() {
    let e = refused("mptcp", "hosts = 8\nradix = 4\nmptcp_subflows = 0");
    assert!(e.contains("network.mptcp_subflows"), "{e}");
    let e = refused("tcp", "hosts = 8\nradix = 4\nmptcp_subflows = 2");
    assert!(
        e.contains("network.mptcp_subflows") && e.contains("does not use"),
        "{e}"
    );
    let e = refused("mptcp", "topology = \"torus\"\nx = 2\ny = 2\nz = 2");
    assert!(e.contains("network.path") && e.contains("torus"), "{e}");
    // A single-path transport may pin too: one path per flow.
    assert_eq!(
        spec("tcp", "hosts = 8\nradix = 4\npath = \"pinned\"")
            .net
            .path,
        PathChoice::Pinned
    );
    let torus = refused(
        "tcp",
        "topology = \"torus\"\nx = 2\ny = 2\nz = 2\npath = \"pinned\"",
    );
    assert!(torus.contains("network.path"), "{torus}");
}
