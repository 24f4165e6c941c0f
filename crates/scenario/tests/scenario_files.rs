//! Every scenario shipped in `scenarios/` resolves, and its resolved form round-trips.

use shoal_rack::RackSpec;
use std::path::PathBuf;

fn scenario_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios")
}

#[test]
fn every_shipped_scenario_parses_and_round_trips() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(scenario_dir())
        .expect("scenarios/ exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(
        files.iter().any(|p| p.ends_with("default.toml")),
        "scenarios/default.toml is missing"
    );
    for path in &files {
        let s = shoal_scenario::load(path).unwrap_or_else(|e| panic!("{e}"));
        let (mut source, _) = s.source().unwrap_or_else(|e| panic!("{e}"));
        let first = source.next_due(shoal_base::Time(u64::MAX));
        assert!(first.is_some(), "{}: no flows", path.display());
        let again = shoal_scenario::parse(&s.resolved_toml(), "resolved.toml")
            .unwrap_or_else(|e| panic!("{}: resolved form refused: {e}", path.display()));
        assert_eq!(*again.fabric, *s.fabric, "{}", path.display());
        assert_eq!(again.workload, s.workload, "{}", path.display());
        assert_eq!(again.limits, s.limits, "{}", path.display());
        assert_eq!(again.seed, s.seed, "{}", path.display());
        for (value, point) in s.sweep_points().unwrap_or_else(|e| panic!("{e}")) {
            assert!(point.sweep.is_none(), "{}: point {value}", path.display());
        }
    }
}

#[test]
fn the_embedded_default_is_the_file_and_is_the_paper_rack() {
    let file = std::fs::read_to_string(scenario_dir().join("default.toml")).expect("readable");
    assert_eq!(file, shoal_scenario::DEFAULT_SCENARIO);
    let s = shoal_scenario::default_scenario().expect("the default resolves");
    let r = rack(&s);
    assert_eq!((r.nodes, r.channels, r.cell_bytes), (512, 4, 64));
    assert_eq!(
        (r.slot.0, r.guard.0, r.channel_rate.0),
        (23_250, 2_750, 25_000_000_000)
    );
    // Every [rack] key of the default restates a default: an empty [rack] gives the same rack.
    let bare = shoal_scenario::parse(
        "[workload]\nkind = \"permutation\"\npairs = 128\nflow_bytes = 100000\n",
        "bare.toml",
    )
    .expect("resolves");
    assert_eq!(rack(&bare), rack(&s));
}

/// Every TOML example of the format reference resolves (completed with a minimal workload when
/// it shows only another table).
#[test]
fn the_examples_in_the_format_reference_resolve() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/scenarios.md");
    let doc = std::fs::read_to_string(&path).expect("docs/scenarios.md exists");
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in doc.lines() {
        match (&mut current, line.trim()) {
            (None, "```toml") => current = Some(String::new()),
            (Some(block), "```") => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            (Some(block), _) => {
                block.push_str(line);
                block.push('\n');
            }
            _ => {}
        }
    }
    assert!(
        blocks.len() >= 6,
        "the reference shows an example per workload kind"
    );
    for block in blocks {
        let text = if block.contains("[workload]") {
            block.clone()
        } else {
            format!("{block}\n[workload]\nkind = \"permutation\"\nflow_bytes = 1\n")
        };
        if let Err(e) = shoal_scenario::parse(&text, "docs/scenarios.md") {
            panic!("{e}\n{block}");
        }
    }
}

/// The rack of a Shoal scenario.
fn rack(s: &shoal_scenario::Scenario) -> &shoal_rack::RackConfig {
    &s.spec::<RackSpec>().expect("a Shoal rack").config
}
