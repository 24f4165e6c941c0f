//! The XFabric experiments' quick versions (64-125 SoCs; the 27-SoC prototype for Fig. 5). Their
//! numeric claims compare with the paper's 343-SoC numbers and several miss at this scale (see
//! docs/results/xfabric.md); every verdict is pinned, so none flips unnoticed.

mod common;

/// Runs the quick version with its verdicts pinned (see `common::check_claims`); a claim whose
/// input is missing is reported as not checked and never passes.
fn pinned(name: &str, count: usize, misses: &[&str]) -> Vec<shoal_repro::Claim> {
    let claims = common::check_claims(name, true, count, misses);
    for c in &claims {
        if c.ours.starts_with("not checked") {
            assert!(!c.pass(), "{} passes unchecked", c.claim);
        }
    }
    claims
}

/// The claim whose text starts with `starts` is reported as not checked (and so misses).
fn not_checked(claims: &[shoal_repro::Claim], starts: &str) {
    let c = claims
        .iter()
        .find(|c| c.claim.starts_with(starts))
        .unwrap_or_else(|| panic!("no claim {starts:?}"));
    assert!(c.ours.starts_with("not checked") && !c.pass(), "{c:?}");
}

#[test]
fn xfabric_fig2_quick() {
    pinned(
        "xfabric-fig2",
        10,
        &[
            "Production: 3D torus / XFabric",
            "Production: Random / XFabric",
            "LiveJournal: OSA worse than XFabric",
            "Production: reconfigurable fabrics have less path diversity",
            "Production: torus has the least loaded bottleneck link",
            "LiveJournal: torus has the least loaded bottleneck link",
        ],
    );
}

#[test]
fn xfabric_fig3_quick() {
    pinned(
        "xfabric-fig3",
        6,
        &[
            "(b) best Random / XFabric path length at high skew",
            "(b) random destinations: XFabric and OSA almost the same",
        ],
    );
}

#[test]
fn xfabric_fig4_quick() {
    pinned(
        "xfabric-fig4",
        4,
        &[
            "(a) XFabric path length at 125 SoCs",
            "(b) XFabric uplink path shorter than Random",
            "(b) XFabric uplink path shorter than 3D torus",
        ],
    );
}

/// Fig. 5 on the packet engine, 1,200 TCP flows per run: the path-length claims and the loss bound
/// hold; completion times hang on the few largest flows of so short a trace and are printed only.
#[test]
fn xfabric_fig5_quick() {
    let claims = pinned(
        "xfabric-fig5",
        11,
        &[
            "(a) path length cut against the torus, t <= 1 s",
            "(b) t = 0.1 s completes later than t = 1 s",
            "(c) path length, clusters of 2",
            "(c) clusters of 2: over twice shorter",
            "§6.5 frames lost per link per reconfiguration, Production",
        ],
    );
    // The quick sweep has no clusters of 2: those claims are there, not checked.
    not_checked(&claims, "(c) path length, clusters of 2");
    not_checked(&claims, "(c) clusters of 2: over twice shorter");
}

/// Fig. 6(a) times generation on this machine. The quick sizes stop at 128 SoCs: the paper's
/// three 1,024-SoC numbers are not checked (misses); the bound of 700 ms up to 512 SoCs holds
/// with a margin of two orders of magnitude at these sizes (a few ms), so it is pinned too.
#[test]
fn xfabric_fig6a_quick() {
    let claims = pinned(
        "xfabric-fig6a",
        4,
        &[
            "XFabric generation time at 1,024 SoCs",
            "OSA generation time at 1,024 SoCs",
            "OSA / XFabric generation time at 1,024 SoCs",
        ],
    );
    not_checked(&claims, "OSA / XFabric generation time at 1,024 SoCs");
}

#[test]
fn xfabric_fig6b_quick() {
    pinned(
        "xfabric-fig6b",
        3,
        &[
            "last SoC on its new tables",
            "last crosspoint switched after the first",
        ],
    );
}

/// The Production stand-in's sweep at 64 SoCs: each claim is checked at every point of the range.
#[test]
fn xfabric_production_quick() {
    let claims = pinned(
        "xfabric-production",
        5,
        &[
            "Fig. 2 3D torus / XFabric",
            "Fig. 2 Random / XFabric",
            "Fig. 4(b) XFabric uplink path shorter than Random",
            "Fig. 4(b) XFabric uplink path shorter than 3D torus",
        ],
    );
    for c in &claims {
        assert!(c.ours.starts_with("holds at "), "{c:?}");
    }
}

/// The full versions (343 SoCs, 512 for Fig. 4(a); Fig. 5 at 20,000 flows per run), as
/// `shoal repro xfabric-fig2 xfabric-fig3 xfabric-fig4 xfabric-fig5 xfabric-fig6a xfabric-fig6b` runs them: prints every claim, fails on none (several miss; see
/// docs/results/xfabric.md). Run with `cargo test --release -p shoal-repro --test xfabric --
/// --ignored --nocapture`.
#[test]
#[ignore]
fn xfabric_full_scale() {
    for name in [
        "xfabric-fig4",
        "xfabric-fig3",
        "xfabric-fig2",
        "xfabric-fig5",
        "xfabric-production",
    ] {
        common::run(name, false);
    }
}
