//! The XFabric experiments' quick versions (64-125 SoCs; the 27-SoC prototype for Fig. 5). Their numeric claims compare with the
//! paper's 343-SoC numbers and may miss at this scale (see docs/results/xfabric.md); the tests
//! print every claim and hold the ones that are about orderings and shapes.

mod common;

use common::holds;

/// Runs the quick version; a claim whose input is missing is reported as not checked and never
/// passes.
fn run(name: &str) -> Vec<shoal_repro::Claim> {
    let claims = common::run(name, true);
    for c in &claims {
        if c.ours.starts_with("not checked") {
            assert!(!c.pass, "{} passes unchecked", c.claim);
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
    assert!(c.ours.starts_with("not checked") && !c.pass, "{c:?}");
}

#[test]
fn xfabric_fig2_quick() {
    let claims = run("xfabric-fig2");
    assert_eq!(claims.len(), 10);
    holds(&claims, "Production: XFabric path length");
    holds(&claims, "Production: XFabric comparable to OSA");
    holds(&claims, "LiveJournal: smaller gain over Random");
}

#[test]
fn xfabric_fig3_quick() {
    let claims = run("xfabric-fig3");
    assert_eq!(claims.len(), 6);
    holds(&claims, "(a) clusters of 2");
    holds(&claims, "(a) clustered: XFabric and OSA almost the same");
}

#[test]
fn xfabric_fig4_quick() {
    let claims = run("xfabric-fig4");
    assert_eq!(claims.len(), 4);
    holds(&claims, "(a) XFabric shortest at every size");
}

/// Fig. 5 on the packet engine, 1,200 TCP flows per run: the path-length claims and the loss bound
/// hold; completion times hang on the few largest flows of so short a trace and are printed only.
#[test]
fn xfabric_fig5_quick() {
    let claims = run("xfabric-fig5");
    assert_eq!(claims.len(), 11);
    holds(&claims, "(a) path length cut against the torus, t <= 30 s");
    holds(&claims, "(a) XFabric path length at t = 1 s");
    holds(
        &claims,
        "§6.5 frames lost per link per reconfiguration, every run",
    );
    // The quick sweep has no clusters of 2: those claims are there, not checked.
    not_checked(&claims, "(c) path length, clusters of 2");
    not_checked(&claims, "(c) clusters of 2: over twice shorter");
}

/// Fig. 6(a) times generation on this machine: the test runs it and checks that it reports, not how
/// fast (speed lives in BENCHMARKS.md).
#[test]
fn xfabric_fig6a_quick() {
    let claims = run("xfabric-fig6a");
    assert_eq!(claims.len(), 4);
    // The quick sizes stop at 128 SoCs: the paper's 1,024-SoC numbers are not checked.
    not_checked(&claims, "OSA / XFabric generation time at 1,024 SoCs");
}

#[test]
fn xfabric_fig6b_quick() {
    let claims = run("xfabric-fig6b");
    assert_eq!(claims.len(), 3);
    holds(&claims, "one consistent configuration after");
}

/// The Production stand-in's sweep at 64 SoCs: each claim is checked at every point of the range.
#[test]
fn xfabric_production_quick() {
    let claims = run("xfabric-production");
    assert_eq!(claims.len(), 5);
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
