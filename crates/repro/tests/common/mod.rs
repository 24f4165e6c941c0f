//! Runs experiments for the tests: figures into a scratch folder (so that writing them is
//! tested too), every claim printed as a table row.
#![allow(dead_code)] // each test file uses its own subset

use shoal_repro::Claim;
use std::path::PathBuf;

/// Where experiment `name` writes its figures in tests.
pub fn plots_dir(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("shoal-repro-test-{name}"))
}

/// Experiment `name` wrote its figure `stem` (SVG, PNG and the CSV of its points, which has
/// at least one point).
pub fn figure_written(name: &str, stem: &str) {
    let dir = plots_dir(name);
    for ext in ["svg", "png"] {
        assert!(
            dir.join(format!("{stem}.{ext}")).is_file(),
            "{name}: no {stem}.{ext}"
        );
    }
    let csv = std::fs::read_to_string(dir.join(format!("{stem}.csv"))).expect("the figure's CSV");
    assert!(csv.lines().count() >= 2, "{name}: {stem}.csv has no point");
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
    if quick {
        in_index(name, &claims);
    }
    for c in &claims {
        eprintln!(
            "{} | {} | paper {} | ours {} | {} | {}",
            c.figure,
            c.claim,
            c.paper,
            c.ours,
            c.tolerance,
            if c.pass() { "pass" } else { "FAIL" }
        );
    }
    claims
}

/// The claims index (`docs/results/claims.json`, written by `shoal repro --index`) is complete:
/// it has a quick row for every claim `name` makes at its quick scale. A claim added or
/// reworded without regenerating the index fails here.
fn in_index(name: &str, claims: &[Claim]) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/results/claims.json"
    );
    let text = std::fs::read_to_string(path).expect("docs/results/claims.json");
    let rows: Vec<serde_json::Value> = serde_json::from_str(&text).expect("the index is JSON");
    let indexed = |c: &Claim| {
        rows.iter().any(|r| {
            r["experiment"] == name
                && r["scale"] == "quick"
                && r["figure"] == c.figure.as_str()
                && r["claim"] == c.claim.as_str()
        })
    };
    for c in claims {
        assert!(
            indexed(c),
            "{name}: the claim {:?} has no quick row in docs/results/claims.json: run \
             `shoal repro --index` and commit what it writes",
            c.claim
        );
    }
}

/// Runs experiment `name` again with `threads` threads and checks it makes `claims` exactly:
/// text, numbers and verdicts.
pub fn same_on_threads(name: &str, quick: bool, threads: usize, claims: &[Claim]) {
    let text = |c: &[Claim]| -> Vec<(String, String, bool)> {
        c.iter()
            .map(|c| (c.claim.clone(), c.ours.clone(), c.pass()))
            .collect()
    };
    assert_eq!(
        text(&run_on(name, quick, threads)),
        text(claims),
        "{name} on {threads} threads"
    );
}

/// Runs experiment `name` and fails on any claim outside its tolerance.
pub fn check(name: &str, quick: bool) {
    let claims = run(name, quick);
    assert!(!claims.is_empty(), "{name} checked nothing");
    let failed: Vec<&str> = claims
        .iter()
        .filter(|c| !c.pass())
        .map(|c| c.claim.as_str())
        .collect();
    assert!(failed.is_empty(), "{name}: failed claims {failed:?}");
}

/// Runs experiment `name`: `count` claims whose verdicts are pinned, exactly the ones whose
/// text starts with one of `misses` missing and every other passing, each miss saying why. A claim that flips either way fails the test: a deliberate change
/// updates the pin and says why in its commit.
pub fn check_claims(name: &str, quick: bool, count: usize, misses: &[&str]) -> Vec<Claim> {
    let claims = run(name, quick);
    let verdicts: Vec<String> = claims
        .iter()
        .map(|c| format!("{}: {}", if c.pass() { "pass" } else { "miss" }, c.claim))
        .collect();
    assert_eq!(claims.len(), count, "{name}: claims {verdicts:#?}");
    for c in &claims {
        let pinned_miss = misses.iter().any(|m| c.claim.starts_with(m));
        assert_eq!(
            c.pass(),
            !pinned_miss,
            "{name}: the verdict of {:?} changed (ours {}); all: {verdicts:#?}",
            c.claim,
            c.ours
        );
    }
    for m in misses {
        assert!(
            claims.iter().any(|c| c.claim.starts_with(m)),
            "{name}: no claim starts with the pinned miss {m:?}: {verdicts:#?}"
        );
    }
    misses_say_why(&claims);
    claims
}

/// Every claim of `claims` that does not pass says why.
pub fn misses_say_why(claims: &[Claim]) {
    for c in claims.iter().filter(|c| !c.pass()) {
        assert!(!c.why.is_empty(), "a miss says why: {}", c.claim);
    }
}

/// Runs experiment `name`: exactly the claims for which `known_miss` says so miss, with their
/// reason in the table; every other claim passes.
pub fn check_known_misses(name: &str, quick: bool, known_miss: impl Fn(&Claim) -> bool) {
    let claims = run(name, quick);
    assert!(!claims.is_empty(), "{name} checked nothing");
    for c in &claims {
        assert_eq!(c.pass(), !known_miss(c), "{}: ours {}", c.claim, c.ours);
    }
}
