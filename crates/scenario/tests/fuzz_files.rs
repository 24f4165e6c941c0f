//! The files a scenario names (trace CSVs, flow-size CDFs, htsim's connection matrices),
//! hostile: well-formed lines with hostile numbers, junk and bad headers. Each is refused
//! naming a workload key, or runs without a panic. Every scenario key of every fabric is
//! fuzzed by `crates/cli/tests/fuzz_keys.rs`, which takes them from the registry.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use shoal_fabric::NoProgress;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// A small rack the files' flows run on, in milliseconds.
const RACK: &str = "[rack]\nnodes = 8\nchannels = 1\nswitch_ports = 4\ndelay_slots = 1\n";

/// A line of a trace or CDF file: mostly well formed, with hostile numbers and junk mixed in.
fn hostile_line(fields: usize, sep: &'static str) -> impl Strategy<Value = String> {
    let field = prop_oneof![
        (0u64..20).prop_map(|v| v.to_string()),
        prop::sample::select(vec![
            "-1",
            "0",
            "1e308",
            "nan",
            "inf",
            "18446744073709551616",
            "",
            " ",
            "x",
            "1.5",
            "100",
            "99999999999999999999",
        ])
        .prop_map(str::to_owned),
        "[ -~]{0,6}",
    ];
    prop::collection::vec(field, fields..=fields + 1).prop_map(move |f| f.join(sep))
}

fn fuzz_file(
    cases: u32,
    header: &str,
    fields: usize,
    sep: &'static str,
    scenario: impl Fn(&str) -> String,
) {
    fuzz_lines(cases, header, hostile_line(fields, sep), scenario);
}

/// Files of `header` and up to 12 lines drawn from `line`, named in the scenario `scenario`
/// makes: refused naming a workload key, or run, never a panic.
fn fuzz_lines(
    cases: u32,
    header: &str,
    line: impl Strategy<Value = String>,
    scenario: impl Fn(&str) -> String,
) {
    let dir = std::env::temp_dir().join(format!("shoal-fuzz-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&prop::collection::vec(line, 0..12), |lines| {
            let path = dir.join("input.txt");
            let body = lines.join("\n");
            std::fs::write(&path, format!("{header}{body}\n")).expect("write");
            let text = scenario(&path.display().to_string());
            match catch_unwind(|| {
                shoal_scenario::parse(&text, &dir.join("s.toml").display().to_string())
            }) {
                Err(_) => Err(TestCaseError::fail(format!("panicked on:\n{body}"))),
                Ok(Err(e)) => {
                    prop_assert!(e.key.starts_with("workload"), "{e}");
                    Ok(())
                }
                Ok(Ok(s)) => {
                    let ran = catch_unwind(AssertUnwindSafe(|| s.run(&mut NoProgress)));
                    prop_assert!(ran.is_ok(), "the run panicked on:\n{body}");
                    Ok(())
                }
            }
        })
        .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn hostile_trace_and_cdf_files_are_refused_or_run() {
    fuzz_file(300, "src,dst,size_bytes,start_ns\n", 4, ",", |path| {
        format!("{RACK}[workload]\nkind = \"trace\"\nfile = {path:?}\n[run]\nuntil_us = 20.0\n")
    });
    fuzz_file(300, "", 2, " ", |path| {
        format!(
            "{RACK}[workload]\nkind = \"open-loop\"\nflows = 10\nmatrix = \"uniform\"\n\
             size = {{ dist = \"empirical\", cdf = {path:?} }}\n[run]\nuntil_us = 20.0\n"
        )
    });
}

/// htsim's connection-matrix files (`kind = "connection-matrix"`): well-formed lines with
/// hostile numbers, junk lines and bad headers.
#[test]
fn hostile_connection_matrices_are_refused_or_run() {
    let number = || {
        prop_oneof![
            (0u64..10).prop_map(|v| v.to_string()),
            prop::sample::select(vec![
                "-1",
                "1e308",
                "nan",
                "18446744073709551616",
                "99999999999999999999",
                "",
                "x",
                "4294967295",
            ])
            .prop_map(str::to_owned),
        ]
    };
    let line = prop_oneof![
        4 => (number(), number(), number(), number())
            .prop_map(|(a, b, t, n)| format!("{a}->{b} start {t} size {n}")),
        1 => prop::sample::select(vec!["Nodes 8", "Nodes x", "Connections 99", "->", "# note"])
            .prop_map(str::to_owned),
        1 => "[ -~]{0,12}",
    ];
    fuzz_lines(300, "Nodes 8\nConnections 3\n", line, |path| {
        format!(
            "{RACK}[workload]\nkind = \"connection-matrix\"\nfile = {path:?}\n\
             [run]\nuntil_us = 20.0\n"
        )
    });
}

/// Dependency-graph files (`kind = "dag"`): lines mostly well formed, with hostile numbers,
/// unknown and repeated ids, self-sends, cycles and junk mixed in.
#[test]
fn hostile_dag_files_are_refused_or_run() {
    let number = || {
        prop_oneof![
            4 => (0u64..10).prop_map(|v| v.to_string()),
            1 => prop::sample::select(vec![
                "-1", "1e308", "nan", "", "x", "18446744073709551616", "2.5", "1e7",
            ])
            .prop_map(str::to_owned),
        ]
    };
    let after = prop::collection::vec(0u64..12, 0..3)
        .prop_map(|ids| ids.iter().map(u64::to_string).collect::<Vec<_>>().join(" "));
    let line = prop_oneof![
        4 => (0u64..12, number(), number(), number(), after.clone())
            .prop_map(|(id, s, d, b, a)| format!("{id},send,{s},{d},{b},,{a}")),
        2 => (0u64..12, number(), number(), after)
            .prop_map(|(id, n, t, a)| format!("{id},compute,{n},,,{t},{a}")),
        1 => "[ -~]{0,16}",
    ];
    fuzz_lines(
        300,
        "id,kind,src,dst,bytes,duration_us,after\n",
        line,
        |path| {
            format!("{RACK}[workload]\nkind = \"dag\"\nfile = {path:?}\n[run]\nuntil_us = 50.0\n")
        },
    );
}
