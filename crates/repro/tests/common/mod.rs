//! Runs an experiment and fails the test on any claim outside its tolerance, printing the table.

pub fn check(name: &str, quick: bool) {
    // Figures go to a scratch folder, so that writing them is tested too.
    let opts = shoal_repro::Options {
        quick,
        plots: Some(std::env::temp_dir().join(format!("shoal-repro-test-{name}"))),
        scale: None,
    };
    let claims = shoal_repro::run(name, &opts, &mut |m| eprintln!("{m}"))
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(!claims.is_empty(), "{name} checked nothing");
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
    let failed: Vec<&str> = claims
        .iter()
        .filter(|c| !c.pass)
        .map(|c| c.claim.as_str())
        .collect();
    assert!(failed.is_empty(), "{name}: failed claims {failed:?}");
}
