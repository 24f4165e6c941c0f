//! Every numeric scenario key, given a hostile value (negative, zero, tiny, huge, not finite,
//! past any integer width): the file is refused naming a key of that table, or it resolves to
//! the value as given (no silent clamp) and a short run of it ends without a panic. The quick
//! version runs in CI; `cargo test -p shoal-scenario --test fuzz_keys -- --ignored` runs the
//! long one.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use shoal_fabric::NoProgress;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU32, Ordering};

/// Cases that resolved and ran, so the test shows it exercised runs and not only refusals.
static RAN: AtomicU32 = AtomicU32::new(0);

/// A small base scenario per fabric, each a few milliseconds to run.
const RACK: &str = "[rack]\nnodes = 8\nchannels = 1\nswitch_ports = 4\ndelay_slots = 1\n";
const NETWORK: &str =
    "[scenario]\nfabric = \"dctcp\"\n[network]\nhosts = 8\nradix = 4\nqueue_packets = 50\n";
const SWITCH: &str = "[scenario]\nfabric = \"ideal-switch\"\n[switch]\nhosts = 8\n";
const WORKLOAD: &str = "[workload]\nkind = \"open-loop\"\nload = 0.5\nflows = 20\nmatrix = \"uniform\"\nsize = { dist = \"fixed\", bytes = 3000 }\n[run]\nuntil_us = 20.0\n";

/// (dotted key, the base it goes into, integer or float).
const KEYS: &[(&str, &str, bool)] = &[
    ("rack.nodes", RACK, true),
    ("rack.channels", RACK, true),
    ("rack.channel_gbps", RACK, false),
    ("rack.slot_ns", RACK, false),
    ("rack.guard_ns", RACK, false),
    ("rack.cell_bytes", RACK, true),
    ("rack.header_bytes", RACK, true),
    ("rack.overhead_bytes", RACK, true),
    ("rack.delay_slots", RACK, true),
    ("rack.switch_ports", RACK, true),
    ("rack.classes", RACK, true),
    ("rack.low_class_queue_cells", RACK, true),
    ("rack.packet_bytes", RACK, true),
    ("rack.header_bit_error_rate", RACK, false),
    ("network.hosts", NETWORK, true),
    ("network.radix", NETWORK, true),
    ("network.link_gbps", NETWORK, false),
    ("network.link_delay_ns", NETWORK, false),
    ("network.packet_bytes", NETWORK, true),
    ("network.header_bytes", NETWORK, true),
    ("network.control_bytes", NETWORK, true),
    ("network.queue_packets", NETWORK, true),
    ("network.ecn_k", NETWORK, true),
    ("network.initial_window", NETWORK, true),
    ("network.max_window", NETWORK, true),
    ("network.rto_min_us", NETWORK, false),
    ("switch.hosts", SWITCH, true),
    ("switch.link_gbps", SWITCH, false),
    ("switch.link_delay_ns", SWITCH, false),
    ("switch.packet_bytes", SWITCH, true),
    ("switch.header_bytes", SWITCH, true),
    ("workload.load", RACK, false),
    ("workload.load_node_gbps", RACK, false),
    ("workload.flows", RACK, true),
    ("workload.start_us", RACK, false),
    ("run.until_us", RACK, false),
    ("run.completed_flows", RACK, true),
    ("run.measure_from_us", RACK, false),
    ("run.sample_every_us", RACK, false),
];

fn hostile_int() -> impl Strategy<Value = i64> {
    prop_oneof![
        prop::sample::select(vec![
            i64::MIN,
            -1,
            0,
            1,
            2,
            3,
            4,
            7,
            64,
            255,
            256,
            65_535,
            65_536,
            u32::MAX as i64,
            1 << 40,
            i64::MAX
        ]),
        -10i64..100_000,
    ]
}

fn hostile_float() -> impl Strategy<Value = f64> {
    prop_oneof![
        prop::sample::select(vec![
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -1.0,
            0.0,
            1e-300,
            1e-12,
            1e-6,
            1e-3,
            0.5,
            1.0,
            2.0,
            100.0,
            1e6,
            1e12,
            1e18,
            1e308
        ]),
        -10.0f64..1e5,
    ]
}

/// The value at dotted `key` of a TOML document.
fn get<'a>(doc: &'a toml::Table, key: &str) -> Option<&'a toml::Value> {
    let (table, leaf) = key.split_once('.')?;
    doc.get(table)?.as_table()?.get(leaf)
}

fn check(key: &str, base: &str, value: toml::Value) -> Result<(), TestCaseError> {
    let mut doc: toml::Table = toml::from_str(&format!("{base}{WORKLOAD}")).expect("base parses");
    let (table, leaf) = key.split_once('.').expect("dotted");
    doc.get_mut(table)
        .and_then(|t| t.as_table_mut())
        .expect("the base has the table")
        .insert(leaf.to_owned(), value.clone());
    let text = toml::to_string(&doc).expect("serializes");
    let parsed = catch_unwind(|| shoal_scenario::parse(&text, "fuzz.toml"));
    let Ok(parsed) = parsed else {
        return Err(TestCaseError::fail(format!(
            "{key} = {value}: parsing panicked"
        )));
    };
    let s = match parsed {
        Err(e) => {
            prop_assert!(
                e.key.starts_with(table) || e.key == "run" || e.key.starts_with("workload"),
                "{key} = {value}: refused naming {:?}: {e}",
                e.key
            );
            return Ok(());
        }
        Ok(s) => s,
    };
    // No silent clamp: the resolved file holds the value as given, up to rounding to the
    // clock's picosecond (times) or a bit per second (rates).
    let unit = if key.ends_with("_ns") {
        5e-4
    } else if key.ends_with("_us") {
        5e-7
    } else if key.ends_with("_gbps") {
        1e-9
    } else {
        0.0
    };
    let resolved: toml::Table = toml::from_str(&s.resolved_toml()).expect("resolved parses");
    if let Some(back) = get(&resolved, key) {
        let same = match (&value, back) {
            (toml::Value::Integer(a), toml::Value::Integer(b)) => a == b,
            (toml::Value::Integer(a), toml::Value::Float(b)) => {
                (*a as f64 - b).abs() <= 1e-9 * b.abs()
            }
            (toml::Value::Float(a), toml::Value::Float(b)) => {
                (a - b).abs() <= 1e-9 * a.abs().max(b.abs()) + unit
            }
            (toml::Value::Float(a), toml::Value::Integer(b)) => (a - *b as f64).abs() < 1e-9,
            _ => true,
        };
        prop_assert!(same, "{key} = {value} resolved to {back}");
    }
    // A short run of a small configuration ends without a panic (large racks are only
    // resolved: their memory, not a bug, bounds them).
    if s.nodes() <= 64 {
        let short = s
            .with_settings(&[("run.until_us", toml::Value::Float(5.0))])
            .unwrap_or_else(|_| s.clone());
        let ran = catch_unwind(AssertUnwindSafe(|| short.run(&mut NoProgress)));
        prop_assert!(ran.is_ok(), "{key} = {value}: the run panicked");
        RAN.fetch_add(1, Ordering::Relaxed);
    }
    Ok(())
}

fn fuzz(cases: u32) {
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let value = prop_oneof![
        hostile_int().prop_map(toml::Value::Integer),
        hostile_float().prop_map(toml::Value::Float),
    ];
    let strategy = (prop::sample::select(KEYS.to_vec()), value);
    runner
        .run(&strategy, |((key, base, int), value)| {
            // Mostly the key's own type; sometimes the other one (a type error is a refusal).
            let value = match (int, &value) {
                (true, toml::Value::Float(f))
                    if f.is_finite() && f.fract() == 0.0 && f.abs() < 9e18 =>
                {
                    toml::Value::Integer(*f as i64)
                }
                _ => value,
            };
            check(key, base, value)
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let ran = RAN.load(Ordering::Relaxed);
    assert!(
        ran >= cases / 10,
        "only {ran} of {cases} cases resolved and ran"
    );
}

#[test]
fn hostile_values_of_every_numeric_key_are_refused_or_run() {
    fuzz(400);
}

#[test]
#[ignore = "long: cargo test -p shoal-scenario --test fuzz_keys -- --ignored"]
fn hostile_values_of_every_numeric_key_are_refused_or_run_long() {
    fuzz(20_000);
}

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
    let dir = std::env::temp_dir().join(format!("shoal-fuzz-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(
            &prop::collection::vec(hostile_line(fields, sep), 0..12),
            |lines| {
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
            },
        )
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
