//! Runs experiments for the tests: figures into a scratch folder (so that writing them is
//! tested too), every claim printed as a table row.
#![allow(dead_code)] // each test file uses its own subset

use shoal_repro::Claim;
use std::path::PathBuf;

/// Where experiment `name` writes its figures in tests.
pub fn plots_dir(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("shoal-repro-test-{name}"))
}

/// Runs experiment `name` and prints its claims.
pub fn run(name: &str, quick: bool) -> Vec<Claim> {
    run_on(name, quick, 1)
}

/// Runs experiment `name` with `threads` threads inside each run and prints its claims.
pub fn run_on(name: &str, quick: bool, threads: usize) -> Vec<Claim> {
    let opts = shoal_repro::Options {
        quick,
        // Side by side runs of one experiment write apart.
        plots: Some(match threads {
            1 => plots_dir(name),
            t => plots_dir(&format!("{name}-threads-{t}")),
        }),
        scale: None,
        threads,
    };
    let claims = shoal_repro::run(name, &opts, &mut |m| eprintln!("{m}"))
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    for c in &claims {
        eprintln!(
            "{} | {} | paper {} | ours {} | {} | {}",
            c.figure,
            c.claim,
            c.paper,
            c.ours,
            c.tolerance,
            if c.pass { "pass" } else { "FAIL" }
        );
    }
    claims
}

/// Runs experiment `name` again with `threads` threads and checks it makes `claims` exactly:
/// text, numbers and verdicts.
pub fn same_on_threads(name: &str, quick: bool, threads: usize, claims: &[Claim]) {
    let text = |c: &[Claim]| -> Vec<(String, String, bool)> {
        c.iter()
            .map(|c| (c.claim.clone(), c.ours.clone(), c.pass))
            .collect()
    };
    assert_eq!(
        text(&run_on(name, quick, threads)),
        text(claims),
        "{name} on {threads} threads"
    );
}

/// The claim whose text starts with `starts` exists and passes.
pub fn holds(claims: &[Claim], starts: &str) {
    let c = claims
        .iter()
        .find(|c| c.claim.starts_with(starts))
        .unwrap_or_else(|| panic!("no claim {starts:?}"));
    assert!(c.pass, "{} (ours {})", c.claim, c.ours);
}

/// Runs experiment `name` and fails on any claim outside its tolerance.
pub fn check(name: &str, quick: bool) {
    let claims = run(name, quick);
    assert!(!claims.is_empty(), "{name} checked nothing");
    let failed: Vec<&str> = claims
        .iter()
        .filter(|c| !c.pass)
        .map(|c| c.claim.as_str())
        .collect();
    assert!(failed.is_empty(), "{name}: failed claims {failed:?}");
}

/// Runs experiment `name`: `count` claims, each a pass unless `may_miss` allows a miss, and
/// every miss with its reason in the table (`[miss: ...]`).
/// Returns the claims.
pub fn check_claims(
    name: &str,
    quick: bool,
    count: usize,
    may_miss: impl Fn(&Claim) -> bool,
) -> Vec<Claim> {
    let claims = run(name, quick);
    assert_eq!(claims.len(), count, "{name}: claims");
    for c in &claims {
        assert!(c.pass || may_miss(c), "{}: ours {}", c.claim, c.ours);
        if !c.pass {
            assert!(c.claim.contains("[miss:"), "a miss says why: {}", c.claim);
        }
    }
    claims
}

/// The Aquila entries' quick verdicts recorded from the data path issue 38 rebuilds (its
/// criterion (c): the rebuilt one keeps every quick claim's pass or miss, unless a change is a
/// deliberate fidelity fix, which its test and note name). One line per claim: the entry, `pass`
/// or `miss`, and the claim's text before its reason (`[miss: ...]`, which holds numbers).
pub const AQUILA_VERDICTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/aquila_verdicts.txt");

/// A claim's verdict line: entry, verdict, the claim's text before its reason.
pub fn verdict_line(name: &str, c: &Claim) -> String {
    let key = c.claim.split(" [miss:").next().unwrap_or_default();
    let verdict = if c.pass { "pass" } else { "miss" };
    format!("{name}\t{verdict}\t{key}")
}

/// `claims` of experiment `name` have the verdicts recorded in [`AQUILA_VERDICTS`], claim for
/// claim.
pub fn same_verdicts(name: &str, claims: &[Claim]) {
    let text = std::fs::read_to_string(AQUILA_VERDICTS).expect("tests/aquila_verdicts.txt");
    let prefix = format!("{name}\t");
    let recorded: Vec<&str> = text.lines().filter(|l| l.starts_with(&prefix)).collect();
    let now: Vec<String> = claims.iter().map(|c| verdict_line(name, c)).collect();
    assert_eq!(
        now, recorded,
        "{name}: the quick verdicts differ from the old data path's (issue 38's oracle)"
    );
}

/// Runs experiment `name`: exactly the claims for which `known_miss` says so miss, with their
/// reason in the table; every other claim passes.
pub fn check_known_misses(name: &str, quick: bool, known_miss: impl Fn(&Claim) -> bool) {
    let claims = run(name, quick);
    assert!(!claims.is_empty(), "{name} checked nothing");
    for c in &claims {
        assert_eq!(c.pass, !known_miss(c), "{}: ours {}", c.claim, c.ours);
    }
}
