//! ECN marking in `[network]`: DCQCN's switches default to the DCQCN paper's RED ramp, DCTCP's
//! to one threshold; each mode refuses the other's keys, and bad RED parameters name their key.
//! Also NDP's pull pacing, which a run would otherwise round.

use shoal_psn::{Discipline, Red};
use shoal_scenario::parse;

fn scenario(fabric: &str, extra: &str) -> String {
    format!(
        "[scenario]\nname = \"ecn\"\nfabric = \"{fabric}\"\n[network]\nhosts = 8\nradix = 4\n{extra}\n[workload]\nkind = \"permutation\"\nflow_bytes = 3000\n"
    )
}

fn discipline(fabric: &str, extra: &str) -> Discipline {
    let s = parse(&scenario(fabric, extra), "ecn.toml").expect("resolves");
    s.spec::<shoal_psn::NetworkSpec>()
        .expect("a packet network")
        .net
        .discipline
}

/// The error's text when `extra` is refused.
fn refused(fabric: &str, extra: &str) -> String {
    match parse(&scenario(fabric, extra), "ecn.toml") {
        Ok(_) => panic!("{fabric} accepted {extra:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn dcqcn_marks_with_the_papers_red_and_dctcp_with_a_threshold() {
    assert_eq!(
        discipline("dcqcn", ""),
        Discipline::Red(Red {
            kmin_bytes: 5120,
            kmax_bytes: 204_800,
            pmax_ppm: 10_000,
            at_dequeue: true,
        })
    );
    assert_eq!(
        discipline("dctcp", ""),
        Discipline::Ecn {
            k: 20,
            at_dequeue: true
        }
    );
    assert_eq!(
        discipline(
            "dcqcn",
            "ecn = \"red\"\nred_kmin_bytes = 3000\nred_kmax_bytes = 90000\nred_pmax = 0.25\necn_marking = \"arrival\""
        ),
        Discipline::Red(Red {
            kmin_bytes: 3000,
            kmax_bytes: 90_000,
            pmax_ppm: 250_000,
            at_dequeue: false,
        })
    );
    assert_eq!(
        discipline("dcqcn", "ecn = \"threshold\"\necn_k = 7"),
        Discipline::Ecn {
            k: 7,
            at_dequeue: true
        }
    );
}

#[test]
fn bad_red_settings_are_refused_with_their_key_and_reason() {
    let cases = [
        ("dcqcn", "red_pmax = 0.0", "network.red_pmax"),
        ("dcqcn", "red_pmax = 1.5", "network.red_pmax"),
        (
            "dcqcn",
            "red_kmin_bytes = 9000\nred_kmax_bytes = 9000",
            "network.red_kmax_bytes",
        ),
        ("dcqcn", "red_kmin_bytes = 150000", "network.red_kmin_bytes"),
        ("dcqcn", "ecn_k = 20", "network.ecn_k"),
        ("dcqcn", "ecn = \"wred\"", "network.ecn"),
        ("dctcp", "red_pmax = 0.01", "network.red_pmax"),
        ("ndp", "ecn = \"red\"", "network.ecn"),
        ("tcp", "red_kmin_bytes = 100", "network.red_kmin_bytes"),
    ];
    for (fabric, extra, key) in cases {
        let e = refused(fabric, extra);
        assert!(
            e.contains("ecn.toml") && e.contains(key),
            "{fabric} {extra:?}: {e}"
        );
    }
    // Two keys in conflict: the error names the one the file gives.
    assert!(
        refused("dcqcn", "red_kmin_bytes = 300000\npfc = true")
            .contains(": network.red_kmin_bytes: ")
    );
    assert!(refused("dcqcn", "red_kmax_bytes = 100").contains(": network.red_kmax_bytes: "));
    assert!(refused("dctcp", "header_bytes = 2000").contains(": network.header_bytes: "));
    assert!(refused("dctcp", "packet_bytes = 40").contains(": network.packet_bytes: "));
    // The reasons say what is wrong.
    assert!(refused("dcqcn", "red_pmax = 0.0").contains("0 < pmax <= 1"));
    assert!(refused("dcqcn", "red_kmin_bytes = 9000\nred_kmax_bytes = 10").contains("kmin < kmax"));
    assert!(refused("dcqcn", "red_kmin_bytes = 150000").contains("nothing would be marked"));
    // With PFC the queue has no byte limit, so a high Kmin is fine.
    assert!(matches!(
        discipline(
            "dcqcn",
            "pfc = true\nred_kmin_bytes = 150000\nred_kmax_bytes = 400000"
        ),
        Discipline::Red(_)
    ));
}

#[test]
fn ndp_pull_pacing_is_a_whole_percent() {
    let pacing = |extra: &str| {
        let s = parse(&scenario("ndp", extra), "ecn.toml").expect("resolves");
        s.spec::<shoal_psn::NetworkSpec>()
            .expect("a packet network")
            .net
            .pull_pacing
    };
    assert_eq!(pacing(""), 99);
    assert_eq!(pacing("pull_pacing = 0.5"), 50);
    assert_eq!(pacing("pull_pacing = 1.0"), 100);
    for bad in ["0.995", "0.001", "0.0", "1.01"] {
        let e = refused("ndp", &format!("pull_pacing = {bad}"));
        assert!(e.contains("network.pull_pacing"), "{bad}: {e}");
    }
    assert!(refused("ndp", "pull_pacing = 0.995").contains("whole percent"));
}

/// DCTCP's reaction to marks: RFC 8257's unless `dctcp_reaction = "htsim"` asks for htsim's,
/// an unknown name is refused with its key, and fabrics without DCTCP refuse the key.
#[test]
fn dctcp_reacts_as_rfc8257_unless_htsims_reaction_is_asked_for() {
    use shoal_psn::TransportSpec;
    use shoal_psn::build::DctcpReaction;
    let reaction = |extra: &str| {
        let s = parse(&scenario("dctcp", extra), "ecn.toml").expect("resolves");
        match &s
            .spec::<shoal_psn::NetworkSpec>()
            .expect("a packet network")
            .transport
        {
            TransportSpec::Tcp(c) => c.dctcp_reaction,
            other => panic!("dctcp resolved to {other:?}"),
        }
    };
    assert_eq!(reaction(""), DctcpReaction::Rfc8257);
    assert_eq!(
        reaction("dctcp_reaction = \"rfc8257\""),
        DctcpReaction::Rfc8257
    );
    assert_eq!(reaction("dctcp_reaction = \"htsim\""), DctcpReaction::Htsim);
    let e = refused("dctcp", "dctcp_reaction = \"linux\"");
    assert!(
        e.contains("network.dctcp_reaction") && e.contains("\"linux\""),
        "{e}"
    );
    for fabric in ["tcp", "ndp", "dcqcn"] {
        let e = refused(fabric, "dctcp_reaction = \"htsim\"");
        assert!(e.contains("network.dctcp_reaction"), "{e}");
    }
}
