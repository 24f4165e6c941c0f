//! The `shoal` binary end to end: run, schedule, cell, repro.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::*;

/// A fresh, empty folder for one test.
fn scratch(name: &str) -> PathBuf {
    scratch_in("shoal-cli-tests", name)
}

fn summary(dir: &Path) -> serde_json::Map<String, Value> {
    let text = std::fs::read_to_string(dir.join("summary.json")).expect("summary.json");
    match serde_json::from_str(&text).expect("summary.json is JSON") {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

const SUMMARY_KEYS: [&str; 24] = [
    "fabric",
    "scenario",
    "nodes",
    "seed",
    "tool_version",
    "flows",
    "flows_measured",
    "flows_completed",
    "workload",
    "mean_flow_bytes",
    "realised_load",
    "short_fct_us",
    "short_slowdown",
    "long_goodput_gbps",
    "queue_unit",
    "max_queue_cells",
    "max_node_queue_cells",
    "max_node_transit_cells",
    "max_reorder_bytes",
    "delivered_gbps_per_node",
    "sim_time_us",
    "wall_time_s",
    "node_channel_slots_per_s",
    "counters",
];

#[test]
fn run_writes_summary_scenario_and_flows() {
    let dir = scratch("run");
    let file = write(&dir, "tiny.toml", TINY);
    let out = dir.join("out");
    let o = run_ok(&["run", &file, "--out", out.to_str().unwrap(), "--quiet"]);
    assert!(stdout(&o).contains("8 of 8 completed"), "{}", stdout(&o));
    assert!(
        stderr(&o).is_empty(),
        "--quiet prints nothing on stderr: {}",
        stderr(&o)
    );

    let s = summary(&out);
    for key in SUMMARY_KEYS {
        assert!(s.contains_key(key), "summary.json lacks {key}");
    }
    assert_eq!(s["fabric"], "shoal");
    assert_eq!(s["scenario"], "tiny");
    assert_eq!(
        (s["nodes"].as_u64(), s["seed"].as_u64()),
        (Some(8), Some(5))
    );
    assert_eq!(s["flows"], 8);
    assert_eq!(s["flows_completed"], 8);
    for k in ["mean", "p50", "p99", "p999"] {
        assert!(
            s["short_fct_us"][k].as_f64().is_some_and(|v| v > 0.0),
            "{k}"
        );
    }
    assert!(s["long_goodput_gbps"].is_null(), "3 KB flows are not long");
    assert!(s["counters"]["node_channel_slots"].as_u64().unwrap() > 0);

    let csv = std::fs::read_to_string(out.join("flows.csv")).expect("flows.csv");
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("id,src,dst,bytes,start_us,finish_us,fct_us")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 8, "one row per flow");
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row.len(), 7);
        assert_eq!(row[0], i.to_string());
        assert_eq!(row[3], "3000");
        let fct: f64 = row[6].parse().expect("completed flows have an FCT");
        let (start, finish): (f64, f64) = (row[4].parse().unwrap(), row[5].parse().unwrap());
        assert!((finish - start - fct).abs() < 1e-6);
    }

    // The resolved scenario reproduces the run.
    let resolved = shoal_scenario::load(&out.join("scenario.toml")).expect("resolved loads");
    let original = shoal_scenario::parse(TINY, "tiny.toml").unwrap();
    assert_eq!(*resolved.fabric, *original.fabric);
    assert_eq!(resolved.flows(), original.flows());

    // A second run into the same, now non-empty, folder is refused unless forced.
    let again = shoal(&["run", &file, "--out", out.to_str().unwrap(), "--quiet"]);
    assert!(!again.status.success());
    assert!(stderr(&again).contains("--force"), "{}", stderr(&again));
    run_ok(&[
        "run",
        &file,
        "--out",
        out.to_str().unwrap(),
        "--quiet",
        "--force",
    ]);
}

/// summary.json without the two wall-clock keys.
fn deterministic_summary(dir: &Path) -> serde_json::Map<String, Value> {
    let mut s = summary(dir);
    s.remove("wall_time_s").expect("wall_time_s present");
    s.remove("node_channel_slots_per_s").expect("speed present");
    s
}

#[test]
fn same_seed_gives_identical_results_and_another_seed_other_flows() {
    let dir = scratch("determinism");
    let file = write(&dir, "tiny.toml", TINY);
    let outs: Vec<PathBuf> = ["a", "b", "c"].iter().map(|n| dir.join(n)).collect();
    for (out, seed) in outs.iter().zip(["11", "11", "12"]) {
        run_ok(&[
            "run",
            &file,
            "--seed",
            seed,
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ]);
    }
    let text = |d: &Path, f: &str| std::fs::read_to_string(d.join(f)).expect("output");
    // Byte-identical apart from the two wall-clock values.
    let strip = |d: &Path| {
        text(d, "summary.json")
            .lines()
            .filter(|l| {
                !l.contains("\"wall_time_s\"") && !l.contains("\"node_channel_slots_per_s\"")
            })
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&outs[0]), strip(&outs[1]));
    assert_eq!(
        deterministic_summary(&outs[0]),
        deterministic_summary(&outs[1])
    );
    assert_eq!(text(&outs[0], "flows.csv"), text(&outs[1], "flows.csv"));
    assert_eq!(
        text(&outs[0], "scenario.toml"),
        text(&outs[1], "scenario.toml")
    );
    assert_eq!(summary(&outs[0])["seed"], 11);
    assert_ne!(text(&outs[0], "flows.csv"), text(&outs[2], "flows.csv"));
}

#[test]
fn the_built_in_default_runs() {
    let dir = scratch("default");
    let out = dir.join("out");
    let o = run_ok(&["run", "--out", out.to_str().unwrap(), "--quiet"]);
    assert!(stdout(&o).contains("default (512 nodes"), "{}", stdout(&o));
    let s = summary(&out);
    assert_eq!(s["flows"], s["flows_completed"]);
}

#[test]
fn a_sweep_runs_every_point() {
    let dir = scratch("sweep");
    let text =
        format!("{TINY}[sweep]\nparameter = \"workload.flow_bytes\"\nvalues = [1000, 4000]\n");
    let file = write(&dir, "sweep.toml", &text);
    let out = dir.join("out");
    run_ok(&["run", &file, "--out", out.to_str().unwrap(), "--quiet"]);
    let table = std::fs::read_to_string(out.join("sweep.csv")).expect("sweep.csv");
    assert_eq!(table.lines().count(), 3, "{table}");
    for (i, v) in [(0, "1000"), (1, "4000")] {
        let point = out.join(format!("{i}-{v}"));
        let csv = std::fs::read_to_string(point.join("flows.csv")).expect("point flows.csv");
        assert!(csv.lines().skip(1).all(|l| l.split(',').nth(3) == Some(v)));
    }
    // The top-level scenario.toml holds the sweep and reproduces it.
    let again = shoal_scenario::load(&out.join("scenario.toml")).expect("loads");
    assert_eq!(again.sweep_points().unwrap().len(), 2);
}

/// Points run side by side give the same files as points run one after the other: only the
/// wall-time fields of summary.json may differ.
#[test]
fn a_sweep_gives_the_same_results_whatever_the_number_of_jobs() {
    let dir = scratch("sweep-jobs");
    let text = format!(
        "{TINY}[sweep]\nparameter = \"workload.flow_bytes\"\nvalues = [500, 1000, 2000, 4000, 8000]\n"
    );
    let file = write(&dir, "sweep.toml", &text);
    let runs: Vec<PathBuf> = ["1", "3"]
        .iter()
        .map(|jobs| {
            let out = dir.join(format!("jobs-{jobs}"));
            run_ok(&[
                "run",
                &file,
                "--out",
                out.to_str().unwrap(),
                "--quiet",
                "--jobs",
                jobs,
            ]);
            out
        })
        .collect();
    let read = |p: PathBuf| std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p:?}: {e}"));
    assert_eq!(
        read(runs[0].join("sweep.csv")),
        read(runs[1].join("sweep.csv"))
    );
    for (i, v) in ["500", "1000", "2000", "4000", "8000"].iter().enumerate() {
        let point = format!("{i}-{v}");
        for name in ["flows.csv", "scenario.toml"] {
            let (a, b) = (
                runs[0].join(&point).join(name),
                runs[1].join(&point).join(name),
            );
            assert_eq!(read(a), read(b), "{point}/{name}");
        }
        let mut summaries: Vec<_> = runs.iter().map(|r| summary(&r.join(&point))).collect();
        for s in &mut summaries {
            s.remove("wall_time_s");
            s.remove("node_channel_slots_per_s");
        }
        assert_eq!(summaries[0], summaries[1], "{point}/summary.json");
    }
}

/// `run --set` changes the scenario as the file would: the resolved scenario.toml and the run
/// show the new values, and a key the scenario does not know is refused by name.
#[test]
fn run_set_changes_keys_and_refuses_unknown_ones() {
    let dir = scratch("run-set");
    let file = write(&dir, "tiny.toml", TINY);
    let out = dir.join("out");
    run_ok(&[
        "run",
        &file,
        "--set",
        "workload.flow_bytes=777",
        "--set",
        "rack.engine=\"fast\"",
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    let resolved = std::fs::read_to_string(out.join("scenario.toml")).expect("scenario.toml");
    assert!(resolved.contains("flow_bytes = 777"), "{resolved}");
    assert!(resolved.contains("engine = \"fast\""), "{resolved}");
    let flows = std::fs::read_to_string(out.join("flows.csv")).expect("flows.csv");
    assert!(
        flows
            .lines()
            .skip(1)
            .all(|l| l.split(',').nth(3) == Some("777"))
    );
    let o = shoal(&["run", &file, "--set", "rack.nodez=9", "--quiet"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("rack.nodez: unknown key"),
        "{}",
        stderr(&o)
    );
}

/// A run of the fast engine cut into parts on several threads writes the files of a run on one
/// thread: only the wall-time fields of summary.json may differ.
#[test]
fn a_run_gives_the_same_results_whatever_the_threads() {
    let dir = scratch("threads");
    let text = r#"
[scenario]
name = "threads"
seed = 3
[rack]
nodes = 24
channels = 2
delay_slots = 2
engine = "fast"
[workload]
kind = "open-loop"
load = 0.6
flows = 400
size = { dist = "fixed", bytes = 2000 }
[run]
sample_every_us = 0.5
"#;
    let file = write(&dir, "threads.toml", text);
    let runs: Vec<PathBuf> = ["1", "3"]
        .iter()
        .map(|threads| {
            let out = dir.join(format!("threads-{threads}"));
            let o = run_ok(&[
                "run",
                &file,
                "--out",
                out.to_str().unwrap(),
                "--quiet",
                "--threads",
                threads,
            ]);
            assert!(!stderr(&o).contains("node engine"), "{}", stderr(&o));
            out
        })
        .collect();
    let read = |p: PathBuf| std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p:?}: {e}"));
    for name in ["flows.csv", "series.csv", "scenario.toml"] {
        assert_eq!(read(runs[0].join(name)), read(runs[1].join(name)), "{name}");
    }
    assert_eq!(
        deterministic_summary(&runs[0]),
        deterministic_summary(&runs[1])
    );
    assert!(read(runs[0].join("flows.csv")).lines().count() > 100);
}

/// An impossible point is refused, naming it, before any point runs (so no thread is left
/// running the others).
#[test]
fn an_impossible_sweep_point_is_refused_before_any_point_runs() {
    let dir = scratch("sweep-fail");
    // 20 nodes do not fit the 4-port switches of TINY (at most 8 per plane).
    let text = format!("{TINY}[sweep]\nparameter = \"rack.nodes\"\nvalues = [8, 20, 8]\n");
    let file = write(&dir, "sweep.toml", &text);
    let out = dir.join("out");
    let o = shoal(&[
        "run",
        &file,
        "--out",
        out.to_str().unwrap(),
        "--quiet",
        "--jobs",
        "2",
    ]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("rack.nodes = 20") && err.contains("switch_ports"),
        "{err}"
    );
    assert!(!out.join("0-8").exists(), "a point ran");
}

#[test]
fn an_unknown_key_is_refused_with_file_key_and_reason() {
    let dir = scratch("unknown");
    let file = write(
        &dir,
        "typo.toml",
        &TINY.replace("delay_slots", "delay_slotz"),
    );
    let o = shoal(&["run", &file, "--out", dir.join("out").to_str().unwrap()]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("typo.toml"), "{err}");
    assert!(err.contains("rack.delay_slotz"), "{err}");
    assert!(err.contains("unknown"), "{err}");
    assert!(!dir.join("out").join("summary.json").exists());
}

#[test]
fn cell_encode_then_decode_round_trips() {
    let o = run_ok(&[
        "cell",
        "encode",
        "--dst",
        "341",
        "--src",
        "682",
        "--seq",
        "21845",
        "--feedback",
        "300",
        "--lcd",
        "--class",
        "2",
        "--eop",
        "--len",
        "40",
    ]);
    let hex = stdout(&o).trim().to_owned();
    // The header crate's pinned fixture for these fields.
    assert_eq!(hex, "556aaaaaa963a825");
    let o = run_ok(&["cell", "decode", &hex]);
    let v: Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert_eq!(
        (v["dst"].as_u64(), v["src"].as_u64()),
        (Some(341), Some(682))
    );
    assert_eq!(
        (v["seq"].as_u64(), v["feedback"].as_u64()),
        (Some(21845), Some(300))
    );
    assert_eq!(
        (v["lcd"].as_bool(), v["class"].as_u64()),
        (Some(true), Some(2))
    );
    assert_eq!(v["kind"]["data"]["len"], 40);
    assert_eq!(v["kind"]["data"]["eop"], true);
    // Separators and a whole cell's bytes are accepted.
    let spaced = format!("{}:{} {}", &hex[..4], &hex[4..], "00".repeat(56));
    let o = run_ok(&["cell", "decode", &spaced]);
    assert_eq!(serde_json::from_str::<Value>(&stdout(&o)).unwrap(), v);
    // Idle and unreachable kinds round-trip too.
    for kind in ["idle", "unreachable"] {
        let o = run_ok(&[
            "cell", "encode", "--dst", "5", "--src", "3", "--kind", kind, "--json",
        ]);
        let v: Value = serde_json::from_str(&stdout(&o)).expect("JSON");
        let o = run_ok(&["cell", "decode", v["hex"].as_str().unwrap()]);
        let back: Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(back, v["header"]);
        assert_eq!(back["kind"], kind);
    }
}

#[test]
fn cell_decode_reports_errors_as_json_and_exits_1() {
    let expect_error = |hex: &str, kind: &str| {
        let o = shoal(&["cell", "decode", hex]);
        assert_eq!(o.status.code(), Some(1), "{hex}");
        let v: Value = serde_json::from_str(&stdout(&o)).expect("JSON error on stdout");
        assert_eq!(v["error"], kind, "{hex}: {v}");
        assert!(v["message"].as_str().is_some_and(|m| !m.is_empty()));
        v
    };
    // One flipped bit of the pinned idle header.
    let v = expect_error("01403000003900e5", "crc");
    assert_eq!(
        (v["stored"].as_str(), v["computed"].as_str()),
        (Some("0xe5"), Some("0xe4"))
    );
    assert!(v["message"].as_str().unwrap().contains("CRC"));
    expect_error("01403000003900", "truncated");
    expect_error("zz403000003900e4", "bad_hex");
    expect_error("0140300", "bad_hex");
}

#[test]
fn cell_encode_refuses_out_of_range_fields() {
    for args in [
        &["--dst", "1024", "--src", "1"][..],
        &["--dst", "1", "--src", "1"],
        &["--dst", "1", "--src", "2", "--class", "4"],
        &["--dst", "1", "--src", "2", "--len", "64"],
        &["--dst", "1", "--src", "2", "--kind", "idle", "--sop"],
    ] {
        let o = shoal(&[&["cell", "encode"][..], args].concat());
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(!stderr(&o).is_empty(), "{args:?}");
    }
}

/// The JSON alone is enough to trace every scheduled cell: from the sender's cable into its
/// leaf, through each switch's port map and the next cable, it reaches the receiver's cable.
#[test]
fn schedule_json_traces_every_cell_through_its_cabling() {
    // 20 nodes on 8 ports: one link per leaf-spine pair; 8 on 8: one spine, four links per leaf.
    for (nodes, ports, channels) in [("20", "8", "2"), ("8", "8", "1")] {
        let o = run_ok(&[
            "schedule",
            "--nodes",
            nodes,
            "--ports",
            ports,
            "--channels",
            channels,
            "--json",
        ]);
        let v: Value = serde_json::from_str(&stdout(&o)).expect("JSON");
        let switches = v["switches"].as_array().unwrap();
        let find = |plane: &Value, kind: &str, id: &Value| {
            switches
                .iter()
                .position(|s| s["switch"]["plane"] == *plane && s["switch"]["kind"][kind] == *id)
                .unwrap_or_else(|| panic!("no {kind} {id} in plane {plane}"))
        };
        let mut traced = 0;
        for slot in v["fabric"].as_array().unwrap() {
            let t = slot["slot"].as_u64().unwrap() as usize;
            for ch in slot["channels"].as_array().unwrap() {
                let plane = &ch["channel"];
                for (src, dst) in ch["peers"].as_array().unwrap().iter().enumerate() {
                    if dst.is_null() {
                        continue;
                    }
                    let (mut sw, mut port) = switches
                        .iter()
                        .enumerate()
                        .filter(|(_, s)| s["switch"]["plane"] == *plane)
                        .find_map(|(i, s)| {
                            let cables = s["cabling"].as_array().unwrap();
                            let p = cables.iter().position(|c| c["node"] == src)?;
                            Some((i, p))
                        })
                        .expect("every node is cabled to a leaf");
                    let mut hops = 0;
                    let reached = loop {
                        let out = switches[sw]["slots"][t][port].as_u64().unwrap_or_else(|| {
                            panic!("slot {t}: {src} -> {dst} stops at switch {sw} port {port}")
                        }) as usize;
                        let cable = &switches[sw]["cabling"][out];
                        if !cable["node"].is_null() {
                            break cable["node"].clone();
                        }
                        let (kind, far) = if cable["spine"].is_null() {
                            ("leaf", &cable["leaf"])
                        } else {
                            ("spine", &cable["spine"])
                        };
                        sw = find(plane, kind, &far[kind]);
                        port = far["port"].as_u64().unwrap() as usize;
                        hops += 1;
                        assert!(hops <= 2, "slot {t}: {src} -> {dst} loops");
                    };
                    assert_eq!(&reached, dst, "slot {t}, channel {plane}, from {src}");
                    traced += 1;
                }
            }
        }
        assert_eq!(
            traced,
            v["verdict"]["transmissions_traced"].as_u64().unwrap()
        );
    }
}

#[test]
fn schedule_reports_json_and_a_summary() {
    let o = run_ok(&[
        "schedule",
        "--nodes",
        "8",
        "--ports",
        "4",
        "--channels",
        "1",
        "--json",
    ]);
    let v: Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert_eq!(v["verdict"]["pairs_checked"], 56);
    assert_eq!(v["nodes"], 8);
    let o = run_ok(&[
        "schedule",
        "--nodes",
        "512",
        "--ports",
        "64",
        "--channels",
        "4",
        "--delay-slots",
        "2",
    ]);
    let text = stdout(&o);
    assert!(text.contains("epoch       128 slots"), "{text}");
    assert!(text.contains("contention-free"), "{text}");
    let o = shoal(&[
        "schedule",
        "--nodes",
        "512",
        "--ports",
        "8",
        "--channels",
        "4",
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("32 ports"), "{}", stderr(&o));
}

/// `shoal size` with no input is §5's rack: its switch counts and power in the summary, and the
/// same report as JSON with every section docs/outputs.md names.
#[test]
fn size_reports_section_5_as_a_table_and_as_json() {
    let text = stdout(&run_ok(&["size"]));
    assert!(text.contains("48 circuit switches"), "{text}");
    assert!(text.contains("Shoal 2.55 kW"), "{text}");
    assert!(text.contains("network's 8.72 kW"), "{text}");
    for fabric in ["shoal ", "packet ", "xfabric ", "xfabric-clos "] {
        assert!(
            text.lines().any(|l| l.starts_with(fabric)),
            "no {fabric}row: {text}"
        );
    }
    let v: Value = serde_json::from_str(&stdout(&run_ok(&["size", "--json"]))).expect("JSON");
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "cost",
            "fabrics",
            "memory",
            "not_sized",
            "power",
            "rack",
            "spec"
        ]
    );
    assert_eq!(v["rack"]["clos"]["switches"], 48);
    assert_eq!(v["power"]["packet"]["switches"], 24);
    assert_eq!(v["fabrics"][0]["fabric"], "shoal");
    assert_eq!(v["spec"]["rack"]["nodes"], 512);
}

/// A scenario's [rack] is sized as it is, flags override it, and an impossible input names the
/// flag to change.
#[test]
fn size_reads_a_scenario_rack_and_names_the_flag_at_fault() {
    let dir = scratch("size");
    let tiny = write(&dir, "tiny.toml", TINY);
    let v: Value =
        serde_json::from_str(&stdout(&run_ok(&["size", &tiny, "--json"]))).expect("JSON");
    // 8 nodes on 4-port switches, one channel: Fig. 2's 4 leaves and 2 spines.
    assert_eq!(v["rack"]["clos"]["switches"], 6);
    assert_eq!(v["rack"]["timing"]["delay_slots"], 1);
    // Appendix A's schedule (the default) takes N columns for an even N.
    assert_eq!(v["rack"]["timing"]["epoch_slots"], 8);
    let v: Value = serde_json::from_str(&stdout(&run_ok(&[
        "size",
        &tiny,
        "--switch-ports",
        "8",
        "--json",
    ])))
    .expect("JSON");
    assert_eq!(v["rack"]["clos"]["ports"], 8);
    let o = shoal(&["size", &tiny, "--nodes", "9"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("--switch-ports: ") && stderr(&o).contains("at least 6 ports"),
        "{}",
        stderr(&o)
    );
    for (args, flag) in [
        (&["--nodes", "1"][..], "--nodes: "),
        (&["--channel-gbps", "0"], "--channel-gbps: "),
        (&["--slot-ns", "5"], "--slot-ns: "),
        (
            &["--circuit-switch-watts", "NaN"],
            "--circuit-switch-watts: ",
        ),
        (&["--on-chip-mbit", "0"], "--on-chip-mbit: "),
    ] {
        let o = shoal(&[&["size"][..], args].concat());
        assert!(!o.status.success(), "{args:?}");
        assert!(stderr(&o).contains(flag), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    }
}

#[test]
fn repro_lists_and_refuses_unknown_names() {
    let o = run_ok(&["repro", "--list"]);
    assert!(!stdout(&o).is_empty());
    let o = shoal(&["repro", "no-such-figure"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("no-such-figure"), "{}", stderr(&o));
    // Run side by side, one experiment named twice would write its figures twice at once.
    let o = shoal(&["repro", "fig10", "fig9", "fig10", "--quick"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("\"fig10\" is named twice"),
        "{}",
        stderr(&o)
    );
    // --quick fixes the scale, so a --scale beside it is refused rather than ignored.
    let o = shoal(&["repro", "fig17", "--quick", "--scale", "load=0.3"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--scale"), "{}", stderr(&o));
}

#[test]
fn every_subcommand_has_help() {
    for sub in [
        &["run"][..],
        &["schedule"],
        &["cell"],
        &["cell", "decode"],
        &["cell", "encode"],
        &["repro"],
        &["bench"],
        &["compare"],
        &["size"],
    ] {
        let o = run_ok(&[sub, &["--help"][..]].concat());
        let text = stdout(&o);
        assert!(text.contains("Usage: shoal"), "{sub:?}: {text}");
    }
    let help = stdout(&run_ok(&["run", "--help"]));
    for needle in [
        "out/<scenario name>",
        "summary.json",
        "flows.csv",
        "--seed",
        "Example",
    ] {
        assert!(help.contains(needle), "run --help lacks {needle}");
    }
}

/// `repro --index` refuses, before running anything, a folder that is not one and a database
/// named with --db that does not exist (rather than indexing quick rows only, silently).
#[test]
fn repro_index_refuses_a_missing_folder_or_database_before_running() {
    let dir = scratch("repro-index");
    let o = shoal_in(&dir, &["repro", "--index", "no-such-folder"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("no-such-folder: not a folder"),
        "{}",
        stderr(&o)
    );
    std::fs::create_dir_all(dir.join("index")).expect("folder");
    let o = shoal_in(&dir, &["repro", "--index", "index", "--db", "missing.db"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("--db missing.db: no such results database"),
        "{}",
        stderr(&o)
    );
    assert!(
        !stderr(&o).contains("running"),
        "ran experiments: {}",
        stderr(&o)
    );
    assert!(!dir.join("index/README.md").exists() && !dir.join("missing.db").exists());
}

#[test]
fn repro_json_has_exactly_the_claim_keys_and_the_exit_status_follows_them() {
    let list: Value = serde_json::from_str(&stdout(&run_ok(&["repro", "--list", "--json"])))
        .expect("--list --json is JSON");
    let names: Vec<&str> = list
        .as_array()
        .expect("array")
        .iter()
        .map(|e| e["name"].as_str().expect("name"))
        .collect();
    // The prototype incast is the quickest experiment; any other will do if it is renamed.
    let Some(name) = names.iter().find(|n| **n == "fig10").or(names.first()) else {
        return;
    };
    let out = scratch("repro-json").join("figures");
    let o = shoal(&[
        "repro",
        name,
        "--quick",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]);
    let claims: Value = serde_json::from_str(&stdout(&o)).expect("stdout is only JSON");
    let claims = claims.as_array().expect("an array of claims");
    assert!(!claims.is_empty());
    let index: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/results/claims.json"
        ))
        .expect("the claims index"),
    )
    .expect("the claims index is JSON");
    let index = index.as_array().expect("an array of rows");
    let mut same_as_index = true;
    for c in claims {
        let keys: Vec<&str> = c
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        assert_eq!(
            sorted,
            [
                "claim",
                "figure",
                "ours",
                "paper",
                "pass",
                "tolerance",
                "verdict",
                "why"
            ]
        );
        let pass = c["pass"].as_bool().expect("pass is a boolean");
        assert_eq!(pass, c["verdict"] == "pass", "{c}");
        assert_eq!(
            pass,
            c["why"] == "",
            "a claim that does not pass says why: {c}"
        );
        // The exit status follows the committed index: a verdict as it records succeeds.
        let recorded = index.iter().find(|r| {
            r["experiment"] == *name
                && r["scale"] == "quick"
                && r["figure"] == c["figure"]
                && r["claim"] == c["claim"]
        });
        same_as_index &= recorded.is_some_and(|r| r["verdict"] == c["verdict"]);
    }
    assert_eq!(o.status.success(), same_as_index);
}

#[test]
fn bench_reports_json() {
    let o = run_ok(&[
        "bench",
        "--json",
        "--nodes",
        "32",
        "--slots",
        "300",
        "--warmup-slots",
        "50",
    ]);
    let v: Value = serde_json::from_str(&stdout(&o)).expect("stdout is only JSON");
    assert_eq!(
        (v["nodes"].as_u64(), v["slots"].as_u64()),
        (Some(32), Some(300))
    );
    assert!(
        v["node_channel_slots_per_s"]
            .as_f64()
            .is_some_and(|r| r > 0.0)
    );
    let o = shoal(&["bench", "--nodes", "32", "--pairs", "33"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("pairs"), "{}", stderr(&o));
}

/// `shoal` asks glibc for transparent huge pages by executing itself again with the tunable
/// set (`crates/cli/src/huge_pages.rs`); the report says so, and `SHOAL_HUGE_PAGES=0` keeps
/// ordinary pages. The results are the same either way.
#[test]
fn huge_pages_are_asked_for_unless_switched_off_and_change_no_result() {
    let args = [
        "bench",
        "--json",
        "--datacenter",
        "--nodes",
        "16",
        "--flows",
        "200",
    ];
    let report = |off: bool| {
        let mut command = Command::new(SHOAL);
        command.args(args).env_remove("GLIBC_TUNABLES");
        if off {
            command.env("SHOAL_HUGE_PAGES", "0");
        }
        let o = command.output().expect("the shoal binary runs");
        assert!(o.status.success(), "{}", stderr(&o));
        let v: Value = serde_json::from_str(&stdout(&o)).expect("stdout is only JSON");
        v
    };
    let (on, off) = (report(false), report(true));
    assert_eq!(off["huge_pages"], "off");
    if cfg!(all(target_os = "linux", target_env = "gnu")) {
        let status = on["huge_pages"].as_str().expect("a status");
        assert!(status.starts_with("on"), "{status}");
    }
    for key in ["flows_completed", "sim_time_us"] {
        assert_eq!(on[key], off[key], "{key}");
    }
}

/// Warm-up exclusion: flows that start before `run.measure_from_us` are run but left out of
/// the flow statistics; a time series is written when the scenario samples.
#[test]
fn warm_up_flows_are_left_out_and_series_are_written() {
    let dir = scratch("warmup");
    let text = r#"
[rack]
nodes = 8
channels = 1
switch_ports = 4
delay_slots = 1
[workload]
kind = "open-loop"
mean_gap_ns = 100.0
flows = 40
size = { dist = "fixed", bytes = 500 }
[run]
measure_from_us = 2.0
sample_every_us = 0.5
"#;
    let file = write(&dir, "warm.toml", text);
    let out = dir.join("out");
    run_ok(&["run", &file, "--out", out.to_str().unwrap(), "--quiet"]);
    let s = summary(&out);
    let flows = s["flows"].as_u64().expect("flows");
    let measured = s["flows_measured"].as_u64().expect("flows_measured");
    assert_eq!(flows, 40);
    // Poisson starts 100 ns apart on average: about 20 of 40 start before 2 us.
    assert!(
        measured > 0 && measured < flows,
        "{measured} of {flows} measured"
    );
    assert_eq!(s["flows_completed"].as_u64(), Some(measured));
    let series = std::fs::read_to_string(out.join("series.csv")).expect("series.csv");
    let mut lines = series.lines();
    assert_eq!(
        lines.next(),
        Some("time_ns,queued_bytes,max_queue_bytes,delivered_bytes,completed_flows,active_flows")
    );
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|v| v.parse().expect("a number")).collect())
        .collect();
    assert!(rows.len() >= 8, "{} samples", rows.len());
    // Delivered bytes and completions only grow.
    assert!(
        rows.windows(2)
            .all(|w| w[1][3] >= w[0][3] && w[1][4] >= w[0][4])
    );
}

/// `shoal plot` draws CSV columns (a sweep's table) and names a missing column.
#[test]
fn plot_draws_csv_columns_and_names_a_missing_one() {
    let dir = scratch("plot");
    let file = write(
        &dir,
        "sweep.csv",
        "workload.load,dir,short_fct_p99_us,long_goodput_gbps\n0.1,0-0.1,10.5,60\n0.5,1-0.5,20.25,\n",
    );
    let out = dir.join("fig");
    run_ok(&[
        "plot",
        &file,
        "--x",
        "workload.load",
        "--y",
        "short_fct_p99_us",
        "--y",
        "long_goodput_gbps",
        "--out",
        out.to_str().unwrap(),
    ]);
    let csv = std::fs::read_to_string(dir.join("fig.csv")).expect("fig.csv");
    // The empty goodput cell is skipped, not read as zero.
    assert_eq!(csv.lines().count(), 1 + 2 + 1, "{csv}");
    assert!(dir.join("fig.svg").exists() && dir.join("fig.png").exists());
    let o = shoal(&["plot", &file, "--x", "load", "--y", "short_fct_p99_us"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("no column \"load\""), "{}", stderr(&o));
}

/// TINY's workload on an 8-host packet network of `fabric` (4 leaves of 2 hosts, 2 spines).
fn tiny_packet(fabric: &str, extra: &str) -> String {
    format!(
        r#"
[scenario]
name = "tiny-{fabric}"
seed = 5
fabric = "{fabric}"
[network]
hosts = 8
radix = 4
link_gbps = 10.0
{extra}
[workload]
kind = "permutation"
flow_bytes = 3000
"#
    )
}

#[test]
fn packet_fabrics_run_from_scenarios_and_their_resolved_file_repeats_the_run() {
    let dir = scratch("packet");
    for fabric in ["dctcp", "ndp", "dcqcn", "tcp", "mptcp", "r2c2"] {
        let text = match fabric {
            // R2C2 routes on a torus: 2 x 2 x 2 is TINY's eight nodes.
            "r2c2" => tiny_packet(fabric, "topology = \"torus\"\nx = 2\ny = 2\nz = 2")
                .replace("hosts = 8\nradix = 4\n", ""),
            _ => tiny_packet(fabric, ""),
        };
        let file = write(&dir, &format!("{fabric}.toml"), &text);
        let out = dir.join(fabric);
        let o = run_ok(&["run", &file, "--out", out.to_str().unwrap(), "--quiet"]);
        assert!(
            stdout(&o).contains("8 of 8 completed"),
            "{fabric}: {}",
            stdout(&o)
        );
        let s = summary(&out);
        assert_eq!(s["fabric"], fabric);
        assert_eq!(s["queue_unit"], "packets");
        // The resolved scenario names every key and gives the same run.
        let again = dir.join(format!("{fabric}-again"));
        let resolved = out.join("scenario.toml");
        run_ok(&[
            "run",
            resolved.to_str().unwrap(),
            "--out",
            again.to_str().unwrap(),
            "--quiet",
        ]);
        assert_eq!(
            deterministic_summary(&out),
            deterministic_summary(&again),
            "{fabric}"
        );
    }
    // A key the fabric does not use is refused with the file, key and reason.
    let bad = write(&dir, "bad.toml", &tiny_packet("ndp", "ecn_k = 5"));
    let o = shoal(&["run", &bad, "--out", dir.join("bad").to_str().unwrap()]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("bad.toml") && e.contains("network.ecn_k") && e.contains("does not use"),
        "{e}"
    );
}

#[test]
fn compare_runs_every_fabric_on_the_same_flows_and_refuses_different_ones() {
    let dir = scratch("compare");
    let shoal_file = write(&dir, "tiny.toml", TINY);
    let ndp = write(&dir, "ndp.toml", &tiny_packet("ndp", ""));
    let out = dir.join("out");
    let o = run_ok(&[
        "compare",
        &shoal_file,
        &ndp,
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    let text = stdout(&o);
    assert!(
        text.contains("tiny-ndp") && text.contains("shoal"),
        "{text}"
    );
    let csv = std::fs::read_to_string(out.join("compare.csv")).expect("compare.csv");
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .starts_with("scenario,fabric,flows")
    );
    for f in [
        "short_fct_p99_us.svg",
        "short_fct_mean_us.png",
        "tiny/summary.json",
        "tiny-ndp/flows.csv",
    ] {
        assert!(out.join(f).exists(), "{f} missing");
    }
    // Another flow size draws other flows: refused before anything runs.
    let other = write(
        &dir,
        "other.toml",
        &tiny_packet("dctcp", "").replace("3000", "4000"),
    );
    let o = shoal(&[
        "compare",
        &shoal_file,
        &other,
        "--out",
        dir.join("x").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("[workload]"), "{}", stderr(&o));
}

/// Experiments run side by side print the same claims, in the order asked for, as run one
/// after the other.
#[test]
fn repro_gives_the_same_claims_in_the_same_order_whatever_the_jobs_and_threads() {
    let dir = scratch("repro-jobs");
    let claims = |jobs: &str, threads: &str| {
        let out = dir.join(format!("jobs-{jobs}-threads-{threads}"));
        let o = shoal(&[
            "repro",
            "table1",
            "fig10",
            "fig9",
            "fig13",
            "--quick",
            "--json",
            "--jobs",
            jobs,
            "--threads",
            threads,
            "--out",
            out.to_str().unwrap(),
        ]);
        let v: Value = serde_json::from_str(&stdout(&o)).expect("stdout is only JSON");
        v
    };
    let one = claims("1", "1");
    let figures: Vec<&str> = one
        .as_array()
        .expect("an array")
        .iter()
        .map(|c| c["figure"].as_str().expect("figure"))
        .collect();
    let mut order = figures.clone();
    order.dedup();
    assert_eq!(
        order,
        [
            "Shoal Table 1",
            "Shoal Fig. 10",
            "Shoal Fig. 9",
            "Shoal Fig. 13"
        ]
    );
    assert_eq!(claims("4", "1"), one);
    assert_eq!(claims("1", "3"), one);
}

/// A results folder that names the current folder (`out/..`, or a scenario named "..") must
/// not replace the files there: the folder is created before it is checked for files, and a
/// scenario name always becomes a folder of its own.
#[test]
fn run_and_compare_never_write_into_a_folder_that_holds_files() {
    let dir = scratch("dotdot");
    let named = TINY.replace("name = \"tiny\"", "name = \"..\"");
    let file = write(&dir, "dotdot.toml", &named);
    let mine = write(&dir, "summary.json", "mine\n");
    let untouched = || assert_eq!(std::fs::read_to_string(&mine).unwrap(), "mine\n");

    // Default folder out/<name>: the name ".." becomes the folder out/__.
    let o = shoal_in(&dir, &["run", &file, "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    untouched();
    assert_eq!(summary(&dir.join("out").join("__"))["scenario"], "..");

    // --out fresh/.. names the current folder once fresh/ exists: refused, and fresh/ is
    // not left behind.
    let o = shoal_in(&dir, &["run", &file, "--quiet", "--out", "fresh/.."]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("fresh/.. is not empty"),
        "{}",
        stderr(&o)
    );
    untouched();
    assert!(!dir.join("fresh").exists());

    // compare: the same folders, and names that differ only in replaced characters are
    // refused before anything runs.
    let ndp = tiny_packet("ndp", "").replace("tiny-ndp", "a/b");
    let ndp = write(&dir, "ndp.toml", &ndp);
    let o = shoal_in(
        &dir,
        &["compare", &file, &ndp, "--quiet", "--out", "new/.."],
    );
    assert!(!o.status.success());
    assert!(stderr(&o).contains("new/.. is not empty"), "{}", stderr(&o));
    untouched();
    let o = shoal_in(&dir, &["compare", &file, &ndp, "--quiet", "--out", "cmp"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dir.join("cmp/__/summary.json").exists() && dir.join("cmp/a_b/summary.json").exists());
    let other = write(&dir, "other.toml", &named.replace("\"..\"", "\"a_b\""));
    let o = shoal_in(&dir, &["compare", &other, &ndp, "--quiet", "--out", "cmp2"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("would share the results folder"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.join("cmp2").exists());
    untouched();
}

/// `repro --out` is checked before any experiment runs (at paper scale they take hours),
/// not when the first figure is written.
#[test]
fn repro_refuses_an_unusable_out_folder_before_running() {
    let dir = scratch("repro-out");
    let file = write(&dir, "a-file", "x");
    for out in [file.clone(), format!("{file}/figures")] {
        let o = shoal(&["repro", "fig10", "--quick", "--out", &out]);
        assert!(!o.status.success(), "--out {out}");
        let e = stderr(&o);
        assert!(e.contains(&format!("--out {out}")), "{e}");
        assert!(!e.contains("running fig10"), "an experiment ran: {e}");
    }
    let out = dir.join("figures");
    let o = shoal(&["repro", "fig10", "--quick", "--out", out.to_str().unwrap()]);
    assert!(stderr(&o).contains("running fig10"), "{}", stderr(&o));
    assert!(out.is_dir());
    let left: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with(".shoal-repro-write-check"))
        .collect();
    assert!(left.is_empty(), "probe left behind: {left:?}");
}

/// A scale at which no claim can be checked is refused before anything runs, rather than
/// ending in "0 of 0 claims pass" and exit status 0.
#[test]
fn repro_refuses_a_scale_that_checks_no_claim() {
    let dir = scratch("repro-no-claim");
    let out = dir.join("figures");
    let o = shoal(&[
        "repro",
        "fig17",
        "--scale",
        "nodes=32 fractions=0 flows=20",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success(), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("fractions must include 0.2, 0.4 or 0.5"),
        "{}",
        stderr(&o)
    );
}

/// `--scale` settings are checked before anything runs: a key an experiment does not take, a
/// count below what a run needs and a key given twice are refused, naming the key, the
/// reason and the keys each experiment takes.
#[test]
fn repro_refuses_scale_settings_the_experiments_would_not_use_as_given() {
    let dir = scratch("repro-scale");
    let out = dir.join("figures");
    let out = out.to_str().unwrap();
    for (args, want) in [
        (
            &["fig10", "--scale", "nodes=8"][..],
            "fig10 runs at its own scale and takes no settings; the experiments that do: \
             fig15-baselines (nodes, loads, flows, torus_flows), fig17 (nodes, fractions, \
             flows, load), stardust-fig9 (utilisations), xfabric-fig5",
        ),
        (
            &["stardust-fig9", "--scale", "utilisations=0.85"],
            "0.85 is not one of the figure's points",
        ),
        (
            &["fig17", "fig15-baselines", "--scale", "fractions=0,0.2"],
            "fig15-baselines: --scale: unknown key \"fractions\" (the keys are nodes, loads",
        ),
        (&["fig17", "--scale", "flows=0"], "flows must be at least 1"),
        (
            &["fig15-baselines", "--scale", "flows=0"],
            "flows must be at least 1",
        ),
        (
            &["xfabric-fig5", "--scale", "flows=10"],
            "flows must be at least 27",
        ),
        (
            &["fig17", "--scale", "flows=10 fractions=0,0.2 flows=20"],
            "flows is given twice",
        ),
        (&["--scale", "flows=10"], "name the experiments to scale"),
    ] {
        let o = shoal(&[&["repro", "--out", out][..], args].concat());
        assert!(!o.status.success(), "{args:?}");
        let e = stderr(&o);
        assert!(e.contains(want), "{args:?}: {e}");
        assert!(!e.contains("running"), "{args:?}: an experiment ran: {e}");
    }
}

/// An option of one benchmark given to another is an error naming it, not silently ignored
/// (clap waives `requires` when the required option conflicts with one given); --flows 0 and
/// --nodes out of range are refused by their own names.
#[test]
fn bench_refuses_options_it_would_ignore_and_counts_out_of_range() {
    for (args, want) in [
        (
            &[
                "--slots",
                "10",
                "--load",
                "0.5",
                "--nodes",
                "16",
                "--warmup-slots",
                "0",
            ][..],
            "'--load <L>'",
        ),
        (&["--flows", "5", "--nodes", "16"], "--flows"),
        (&["--sim-ms", "1", "--nodes", "16"], "'--sim-ms <MS>'"),
        (
            &[
                "--sim-ms",
                "1",
                "--datacenter",
                "--nodes",
                "16",
                "--flows",
                "10",
            ],
            "'--sim-ms <MS>'",
        ),
        (
            &["--load", "0.5", "--psn", "ndp", "--sim-ms", "1"],
            "'--load <L>'",
        ),
        (&["--scenario", "x.toml"], "--psn"),
        (
            &[
                "--psn",
                "dctcp",
                "--scenario",
                "../../scenarios/htsim-ndp-permutation.toml",
            ],
            "runs fabric \"ndp\", not --psn dctcp",
        ),
        (
            &["--psn", "ndp", "--scenario", "no-such-file.toml"],
            "no-such-file.toml",
        ),
        (
            &["--datacenter", "--nodes", "16", "--flows", "0"],
            "'--flows <M>': must be at least 1",
        ),
        (&["--nodes", "0"], "'--nodes <N>': 0 is not in 2..=16384"),
        (
            &["--datacenter", "--nodes", "1"],
            "'--nodes <N>': 1 is not in 2..=16384",
        ),
    ] {
        let o = shoal(&[&["bench"][..], args].concat());
        assert!(!o.status.success(), "{args:?} ran: {}", stdout(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
}

/// `shoal plot` errors say what is wrong where: the empty file, the file and line of a value
/// that cannot be drawn, the --y given twice, and the --out folder that cannot be made (once,
/// with its cause said once).
#[test]
fn plot_errors_name_the_file_line_option_and_folder() {
    let dir = scratch("plot-errors");
    let good = write(&dir, "good.csv", "x,y\n1,2\n2,3\n");
    let empty = write(&dir, "empty.csv", "");
    let nan = write(&dir, "nan.csv", "x,y\n1,2\n2,NaN\n");
    let inf = write(&dir, "inf.csv", "x,y\ninf,2\n");
    let zero = write(&dir, "zero.csv", "x,y\n1,2\n2,0\n");
    let out = dir.join("fig");
    let out = out.to_str().unwrap();
    let not_a_folder = format!("{good}/fig");
    for (args, want) in [
        (
            vec![&empty[..], "--x", "x", "--y", "y"],
            format!("{empty}: the file is empty"),
        ),
        (
            vec![&nan[..], "--x", "x", "--y", "y", "--out", out],
            format!("{nan}:3: column \"y\": \"NaN\" is not a finite number"),
        ),
        (
            vec![&inf[..], "--x", "x", "--y", "y", "--out", out],
            format!("{inf}:2: column \"x\": \"inf\" is not a finite number"),
        ),
        (
            vec![&zero[..], "--x", "x", "--y", "y", "--log-y", "--out", out],
            format!("{zero}:3: column \"y\": 0 cannot be shown on a log axis"),
        ),
        (
            vec![&good[..], "--x", "x", "--y", "y", "--y", "y", "--out", out],
            "--y \"y\" is given twice".to_owned(),
        ),
        (
            vec![&good[..], "--x", "x", "--y", "y", "--out", &not_a_folder],
            format!("--out {not_a_folder}: {good} is not a folder"),
        ),
    ] {
        let o = shoal(&[&["plot"][..], &args].concat());
        assert!(!o.status.success(), "{args:?}");
        let e = stderr(&o);
        assert!(e.contains(&want), "{args:?}: {e}");
        // The cause is said once.
        let cause = e.rsplit(": ").next().unwrap_or("");
        assert_eq!(e.matches(cause).count(), 1, "{args:?}: {e}");
    }
    assert!(!dir.join("fig.svg").exists(), "nothing was drawn");
}

/// `compare --set` refuses an empty key, or an empty part of a dotted one, saying so, before
/// any scenario is read.
#[test]
fn compare_refuses_an_empty_set_key() {
    let dir = scratch("compare-set");
    let a = write(&dir, "a.toml", TINY);
    let b = write(&dir, "b.toml", &tiny_packet("ndp", ""));
    let out = dir.join("out");
    for (set, want) in [
        ("=3", "--set \"=3\": the key before '=' is empty"),
        (" =3", "the key before '=' is empty"),
        (
            "run..completed_flows=3",
            "\"run..completed_flows\" has an empty part",
        ),
        (".x=3", "\".x\" has an empty part"),
    ] {
        let o = shoal(&[
            "compare",
            &a,
            &b,
            "--set",
            set,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(!o.status.success(), "{set}");
        assert!(stderr(&o).contains(want), "{set}: {}", stderr(&o));
    }
    assert!(!out.exists());
}

/// A reader that stops reading (`shoal repro --list | head -c 100`) ends `shoal` quietly with
/// the shell's status for SIGPIPE, never with a panic.
#[cfg(unix)]
#[test]
fn a_closed_stdout_ends_the_program_quietly() {
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    for args in [
        &["repro", "--list"][..],
        &[
            "schedule",
            "--nodes",
            "64",
            "--ports",
            "16",
            "--channels",
            "1",
        ],
    ] {
        let mut child = Command::new(SHOAL)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the shoal binary runs");
        // Close the reading end before the program has printed anything.
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("it ends");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(
            out.status.success() || out.status.signal() == Some(libc::SIGPIPE),
            "{args:?}: {:?}: {err}",
            out.status
        );
    }
}

/// `shoal plot data.csv --out data` would write its figure's CSV over its own input.
#[test]
fn plot_refuses_to_overwrite_its_input() {
    let dir = scratch("plot-self");
    let csv = dir.join("simple.csv");
    std::fs::write(&csv, "x,y\n1,2\n2,3\n").expect("write");
    let out = shoal_in(
        &dir,
        &[
            "plot",
            "simple.csv",
            "--x",
            "x",
            "--y",
            "y",
            "--out",
            "simple",
        ],
    );
    assert!(!out.status.success(), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("the file it is drawn from"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(&csv).expect("read"),
        "x,y\n1,2\n2,3\n"
    );
}

/// A comparison measures the same flows on every fabric: run.completed_flows = N becomes the
/// first N flows of the identical list (run.measured_flows), not each fabric's first N to
/// complete, and every run stops once all of them have completed.
#[test]
fn compare_measures_the_same_flow_ids_on_every_fabric() {
    let dir = scratch("compare-same-flows");
    let workload = "[workload]\nkind = \"open-loop\"\nload = 0.6\nload_node_gbps = 50.0\n\
                    flows = 400\nmatrix = \"uniform\"\n\
                    size = { dist = \"pareto\", shape = 1.2, mean_bytes = 20000 }\n\
                    [sweep]\nparameter = \"workload.load\"\nvalues = [0.3, 0.6]\n";
    let a = write(
        &dir,
        "a.toml",
        &format!(
            "[scenario]\nname = \"a\"\n[rack]\nnodes = 16\nchannels = 2\nswitch_ports = 8\n{workload}"
        ),
    );
    let b = write(
        &dir,
        "b.toml",
        &format!(
            "[scenario]\nname = \"b\"\nfabric = \"ideal-switch\"\n[switch]\nhosts = 16\nlink_gbps = 50.0\n{workload}"
        ),
    );
    let out = shoal_in(
        &dir,
        &[
            "compare",
            &a,
            &b,
            "--out",
            "cmp",
            "--set",
            "run.completed_flows=100",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("the first 100 of the identical list"),
        "{}",
        stderr(&out)
    );
    // Each point of the sweep, parsed again from the scenario's text, measures them too.
    for run in ["0.3/a", "0.3/b", "0.6/a", "0.6/b"] {
        let (name, run) = (run, dir.join("cmp").join(run));
        let s = summary(&run);
        assert_eq!(s["flows_measured"], 100, "{name}: {s:?}");
        // All of them, or the stragglers of the heavy tail cut at the horizon (twice the
        // 100th flow's start).
        let completed = s["flows_completed"].as_u64().expect("a count");
        assert!((90..=100).contains(&completed), "{name}: {s:?}");
        let resolved = std::fs::read_to_string(run.join("scenario.toml")).expect("scenario");
        assert!(resolved.contains("measured_flows = 100"), "{resolved}");
        assert!(!resolved.contains("completed_flows"), "{resolved}");
    }
}

/// Two files whose [workload] tables read the same may still draw other flows, through a
/// default underneath (each fabric's node rate): compare names the resolved key.
#[test]
fn compare_names_the_default_that_makes_workloads_differ() {
    let dir = scratch("compare-default");
    let workload = "[workload]\nkind = \"open-loop\"\nload = 0.5\nmatrix = \"uniform\"\n\
                    size = { dist = \"fixed\", bytes = 1000 }\n[run]\ncompleted_flows = 20\n";
    let a = write(
        &dir,
        "a.toml",
        &format!("[rack]\nnodes = 16\nchannels = 2\nswitch_ports = 8\n{workload}"),
    );
    let b = write(
        &dir,
        "b.toml",
        &format!(
            "[scenario]\nfabric = \"ideal-switch\"\n[switch]\nhosts = 16\nlink_gbps = 100.0\n{workload}"
        ),
    );
    let out = shoal_in(&dir, &["compare", &a, &b, "--out", "cmp"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("workload.load_node_gbps = 50.0 against 100.0"),
        "{err}"
    );
}

/// A scenario that runs for many seconds: a sweep of two long points.
const LONG: &str = r#"
[scenario]
name = "long"
[rack]
nodes = 64
channels = 2
switch_ports = 16
[workload]
kind = "open-loop"
load = 0.5
matrix = "uniform"
size = { dist = "pareto", shape = 1.05, mean_bytes = 100000, cap_bytes = 1e9 }
[run]
completed_flows = 1000000
sample_every_us = 10.0
[sweep]
parameter = "workload.load"
values = [0.3, 0.5]
"#;

/// Starts `shoal run LONG` into `out` and waits until its folder is marked incomplete.
fn start_long(dir: &Path, out: &str) -> std::process::Child {
    let scenario = write(dir, "long.toml", LONG);
    let mut child = Command::new(SHOAL)
        .args(["run", &scenario, "--out", out, "--quiet", "--jobs", "1"])
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the shoal binary runs");
    let marker = dir.join(out).join("0-0.3").join("INCOMPLETE");
    for _ in 0..600 {
        if marker.exists() {
            return child;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("the long run never opened its first point's folder");
}

#[test]
fn a_killed_sweep_leaves_its_folders_marked_incomplete_and_no_torn_table() {
    let dir = scratch("killed-sweep");
    let mut child = start_long(&dir, "res");
    std::thread::sleep(std::time::Duration::from_millis(300));
    child.kill().expect("kill");
    let _ = child.wait();
    let res = dir.join("res");
    assert!(res.join("INCOMPLETE").exists());
    assert!(res.join("0-0.3").join("INCOMPLETE").exists());
    assert!(!res.join("0-0.3").join("summary.json").exists());
    assert!(
        !res.join("sweep.csv").exists(),
        "no table of points that did not finish"
    );
    // Without the results database nothing says which points finished: a rerun is refused
    // without --force (with the database it resumes: see the test below).
    let again = shoal_in(
        &dir,
        &["run", "long.toml", "--out", "res", "--quiet", "--no-db"],
    );
    assert!(!again.status.success());
    assert!(stderr(&again).contains("not empty"), "{}", stderr(&again));
}

/// Five points of a few thousand flows each: long enough (a fraction of a second a point) to
/// kill the sweep between two points.
const RESUMABLE: &str = r#"
[scenario]
name = "resumable"
seed = 3
[rack]
nodes = 32
channels = 2
switch_ports = 8
[workload]
kind = "open-loop"
load = 0.5
matrix = "uniform"
size = { dist = "pareto", shape = 1.05, mean_bytes = 100000, cap_bytes = 1e7 }
[run]
completed_flows = 3000
[sweep]
parameter = "workload.load"
values = [0.2, 0.3, 0.4, 0.5, 0.6]
"#;

/// The rows `shoal runs --format json` prints for the database `db`.
fn db_rows(db: &Path) -> Vec<Value> {
    let o = run_ok(&["runs", "--db", db.to_str().unwrap(), "--format", "json"]);
    match serde_json::from_str(&stdout(&o)).expect("runs --format json is JSON") {
        Value::Array(rows) => rows,
        other => panic!("not an array: {other}"),
    }
}

#[test]
fn a_sweep_killed_part_way_resumes_to_exactly_the_uninterrupted_result() {
    let dir = scratch("resume-sweep");
    let scenario = write(&dir, "sweep.toml", RESUMABLE);
    let points = ["0-0.2", "1-0.3", "2-0.4", "3-0.5", "4-0.6"];
    let mut child = Command::new(SHOAL)
        .args(["run", &scenario, "--out", "res", "--quiet", "--jobs", "1"])
        .current_dir(&dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the shoal binary runs");
    // Killed as soon as its second point is complete, while the third runs.
    let second = dir.join("res").join(points[1]);
    let mut waited = 0;
    let complete = |p: &Path| p.join("summary.json").exists() && !p.join("INCOMPLETE").exists();
    while !complete(&second) {
        assert!(waited < 6000, "the second point never finished");
        assert!(
            child.try_wait().expect("wait").is_none(),
            "the sweep ended before it was killed"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
        waited += 1;
    }
    child.kill().expect("kill");
    let _ = child.wait();
    let res = dir.join("res");
    assert!(
        res.join("INCOMPLETE").exists() && !res.join("sweep.csv").exists(),
        "the kill came before the sweep ended"
    );
    // The points the database holds as finished (a point killed after its folder was
    // complete but before its row was finished counts as unfinished, and runs again).
    let done_rows = db_rows(&dir.join("shoal.db"));
    let finished: Vec<&str> = points
        .iter()
        .copied()
        .filter(|p| {
            done_rows.iter().any(|r| {
                r["status"] == "done"
                    && r["folder"].as_str().unwrap().ends_with(&format!("res/{p}"))
            })
        })
        .collect();
    assert!((1..5).contains(&finished.len()), "{finished:?}");
    assert!(finished.iter().all(|p| complete(&res.join(p))));
    // The row the kill left running names a process that is gone: its state is stale.
    for r in done_rows.iter().filter(|r| r["status"] == "running") {
        assert_eq!(r["state"], "stale", "{r}");
        assert_eq!(r["job"], Value::Null);
    }

    // The same command again does only the rest.
    let again = shoal_in(&dir, &["run", &scenario, "--out", "res", "--jobs", "1"]);
    assert!(again.status.success(), "{}", stderr(&again));
    let note = format!(
        "resuming res: {} of 5 points finished before, {} to run",
        finished.len(),
        5 - finished.len()
    );
    assert!(stderr(&again).contains(&note), "{}", stderr(&again));
    assert!(!res.join("INCOMPLETE").exists());

    // An uninterrupted run gives the same table byte for byte, and the same points.
    let whole = shoal_in(&dir, &["run", &scenario, "--out", "whole", "--quiet"]);
    assert!(whole.status.success(), "{}", stderr(&whole));
    let read = |p: PathBuf| std::fs::read(&p).unwrap_or_else(|e| panic!("{p:?}: {e}"));
    assert_eq!(
        read(res.join("sweep.csv")),
        read(dir.join("whole").join("sweep.csv"))
    );
    for p in points {
        for name in ["flows.csv", "scenario.toml"] {
            assert_eq!(
                read(res.join(p).join(name)),
                read(dir.join("whole").join(p).join(name)),
                "{p}/{name}"
            );
        }
    }

    // The database: a point that finished before the kill ran once; the one the kill cut
    // short left a running row and then finished on the rerun.
    let rows = db_rows(&dir.join("shoal.db"));
    for p in points {
        let folder = res.join(p);
        let of_point: Vec<&Value> = rows
            .iter()
            .filter(|r| {
                Path::new(r["folder"].as_str().unwrap())
                    .ends_with(folder.strip_prefix(&dir).unwrap())
            })
            .collect();
        let statuses: Vec<&str> = of_point
            .iter()
            .map(|r| r["status"].as_str().unwrap())
            .collect();
        if finished.contains(&p) {
            assert_eq!(statuses, ["done"], "{p}");
        } else if p == points[finished.len()] {
            // Killed while it ran (or, rarely, just before its row was written).
            assert!(
                statuses == ["running", "done"] || statuses == ["done"],
                "{p}: killed, then run again: {statuses:?}"
            );
        } else {
            assert_eq!(statuses, ["done"], "{p}: never started before the kill");
        }
        assert!(
            of_point
                .iter()
                .all(|r| r["kind"] == "sweep-point" && r["seed"] == 3)
        );
        // Each row names the value it swept, e.g. point 1-0.3 `workload.load = 0.3`.
        let value = p.split_once('-').unwrap().1;
        assert!(
            of_point
                .iter()
                .all(|r| r["swept"] == format!("workload.load = {value}").as_str()),
            "{p}: {of_point:?}"
        );
    }
    // With --force every point runs again.
    let forced = shoal_in(&dir, &["run", &scenario, "--out", "res", "--force"]);
    assert!(forced.status.success(), "{}", stderr(&forced));
    assert!(!stderr(&forced).contains("resuming"), "{}", stderr(&forced));
    assert_eq!(
        read(res.join("sweep.csv")),
        read(dir.join("whole").join("sweep.csv"))
    );
}

#[test]
fn a_comparison_run_again_keeps_its_finished_runs() {
    let dir = scratch("resume-compare");
    let shoal_file = write(&dir, "tiny.toml", TINY);
    let ndp = write(&dir, "ndp.toml", &tiny_packet("ndp", ""));
    let args = ["compare", &shoal_file, &ndp, "--out", "cmp"];
    let first = shoal_in(&dir, &args);
    assert!(first.status.success(), "{}", stderr(&first));
    // Off a terminal, a line as each run ends, the time left on all but the last.
    let err = stderr(&first);
    assert!(
        err.contains("shoal compare: 1 of 2 runs finished in ")
            && err.contains(" left\n")
            && err.contains("shoal compare: 2 of 2 runs finished in "),
        "{err}"
    );
    let table = std::fs::read(dir.join("cmp/compare.csv")).expect("compare.csv");
    let second = shoal_in(&dir, &args);
    assert!(second.status.success(), "{}", stderr(&second));
    assert!(
        stderr(&second).contains("resuming cmp: 2 of 2 runs finished before, 0 to run"),
        "{}",
        stderr(&second)
    );
    assert_eq!(
        std::fs::read(dir.join("cmp/compare.csv")).expect("compare.csv"),
        table
    );
    // A run whose folder was damaged since is done again.
    std::fs::remove_file(dir.join("cmp/tiny-ndp/summary.json")).expect("remove");
    let third = shoal_in(&dir, &args);
    assert!(third.status.success(), "{}", stderr(&third));
    assert!(
        stderr(&third).contains("1 of 2 runs finished before, 1 to run"),
        "{}",
        stderr(&third)
    );
    assert_eq!(
        std::fs::read(dir.join("cmp/compare.csv")).expect("compare.csv"),
        table
    );
    let rows = db_rows(&dir.join("shoal.db"));
    assert_eq!(rows.len(), 3);
    assert!(
        rows.iter()
            .all(|r| r["kind"] == "compare" && r["status"] == "done")
    );
    // The first comparison's two runs are one series, the third's rerun another; none sweeps.
    let series: Vec<&str> = rows.iter().map(|r| r["series"].as_str().unwrap()).collect();
    assert!(series[0].starts_with("compare ") && series[0].contains("cmp"));
    assert_eq!(series[0], series[1]);
    assert_ne!(series[1], series[2]);
    assert!(rows.iter().all(|r| r["swept"].is_null()));
    let first = stdout(&run_ok(&[
        "runs",
        "--db",
        dir.join("shoal.db").to_str().unwrap(),
        "--series",
        series[0],
        "--format",
        "json",
    ]));
    let first: Vec<Value> = serde_json::from_str(&first).expect("JSON");
    assert_eq!(first.len(), 2, "{first:?}");
}

#[test]
fn runs_lists_filters_and_exports_every_run() {
    let dir = scratch("runs");
    let tiny = write(&dir, "tiny.toml", TINY);
    let ndp = write(&dir, "ndp.toml", &tiny_packet("ndp", ""));
    for (file, out) in [(&tiny, "results/a"), (&ndp, "results/b")] {
        let o = shoal_in(&dir, &["run", file, "--out", out, "--quiet"]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    // The database sits beside the results folders; --no-db records nothing.
    let db = dir.join("results").join("shoal.db");
    assert!(db.is_file());
    let o = shoal_in(
        &dir,
        &["run", &tiny, "--out", "elsewhere/c", "--quiet", "--no-db"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!dir.join("elsewhere").join("shoal.db").exists());

    let dbs = db.to_str().unwrap();
    let table = stdout(&run_ok(&["runs", "--db", dbs]));
    assert!(
        table.contains("tiny-ndp") && table.contains("done"),
        "{table}"
    );
    let only_ndp = stdout(&run_ok(&["runs", "--db", dbs, "--fabric", "ndp"]));
    assert_eq!(only_ndp.lines().count(), 3, "{only_ndp}");
    let none = stdout(&run_ok(&["runs", "--db", dbs, "--status", "failed"]));
    assert_eq!(none.lines().count(), 2, "{none}");

    // CSV: a row per run, every metric a column, values equal to the summary's.
    let csv = stdout(&run_ok(&["runs", "--db", dbs, "--format", "csv"]));
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().expect("header").clone();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("{name} in {header:?}"))
    };
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("row")).collect();
    assert_eq!(rows.len(), 2);
    let s = summary(&dir.join("results/a"));
    assert_eq!(rows[0][col("scenario")], *"tiny");
    assert_eq!(
        rows[0][col("flows_completed")],
        s["flows_completed"].to_string()
    );
    let p99: f64 = rows[0][col("short_fct_us.p99")].parse().expect("a number");
    assert_eq!(p99, s["short_fct_us"]["p99"].as_f64().unwrap());
    assert_eq!(
        rows[0][col("scenario_toml")],
        std::fs::read_to_string(dir.join("results/a/scenario.toml")).unwrap()
    );
    assert_eq!(rows[0][col("revision")].len(), 40, "a git commit");

    // JSON: the same runs; a missing database is named, never created.
    assert_eq!(db_rows(&db).len(), 2);
    let o = shoal_in(&dir, &["runs"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("out/shoal.db: no results database"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.join("out").exists());

    // A repro experiment's row holds its claims, as `repro --json` prints them.
    let o = shoal_in(
        &dir,
        &[
            "repro",
            "fig10",
            "--quick",
            "--json",
            "--out",
            "results/repro",
        ],
    );
    let printed: Value = serde_json::from_str(&stdout(&o)).expect("claims JSON");
    let rows = db_rows(&db);
    let repro: Vec<&Value> = rows.iter().filter(|r| r["kind"] == "repro").collect();
    assert_eq!(repro.len(), 1);
    assert_eq!(repro[0]["scenario"], "fig10");
    assert_eq!(repro[0]["claims"], printed);
    assert_eq!(
        repro[0]["metrics"]["claims"].as_u64(),
        Some(printed.as_array().unwrap().len() as u64)
    );
}

#[test]
fn a_second_run_into_a_folder_being_written_is_refused() {
    let dir = scratch("concurrent");
    let mut child = start_long(&dir, "res");
    let second = write(&dir, "tiny.toml", TINY);
    let out = shoal_in(
        &dir,
        &["run", &second, "--out", "res", "--force", "--quiet"],
    );
    child.kill().expect("kill");
    let _ = child.wait();
    assert!(!out.status.success(), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("another shoal run is writing into"),
        "{}",
        stderr(&out)
    );
    // The first run's files are still there: the refused run touched nothing.
    assert!(dir.join("res").join("0-0.3").exists());
}

#[test]
fn force_replaces_the_previous_results_and_nothing_else() {
    let dir = scratch("force-clears");
    let sweep = write(
        &dir,
        "sweep.toml",
        &format!(
            "{TINY}[run]\nsample_every_us = 1.0\n[sweep]\nparameter = \"workload.flow_bytes\"\nvalues = [1000, 2000, 3000]\n"
        ),
    );
    let first = shoal_in(&dir, &["run", &sweep, "--out", "res", "--quiet"]);
    assert!(first.status.success(), "{}", stderr(&first));
    std::fs::write(dir.join("res").join("notes.txt"), "mine").expect("write");
    let tiny = write(&dir, "tiny.toml", TINY);
    let second = shoal_in(&dir, &["run", &tiny, "--out", "res", "--quiet", "--force"]);
    assert!(second.status.success(), "{}", stderr(&second));
    let mut left: Vec<String> = std::fs::read_dir(dir.join("res"))
        .expect("read")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        [
            ".shoal-written",
            "flows.csv",
            "notes.txt",
            "scenario.toml",
            "summary.json"
        ],
        "no point folder, sweep.csv or series.csv of the sweep is left"
    );
}

#[test]
fn an_unwritable_results_folder_is_refused_before_the_run() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("unwritable");
    let locked = dir.join("locked");
    std::fs::create_dir_all(&locked).expect("mkdir");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).expect("chmod");
    let scenario = write(&dir, "long.toml", LONG);
    if std::fs::write(locked.join("probe"), "").is_ok() {
        // Root writes into read-only folders: make the folder unwritable for the run another
        // way, a folder where its lock file goes.
        std::fs::create_dir_all(locked.join(".shoal.lock")).expect("mkdir");
    }
    let started = std::time::Instant::now();
    let out = shoal_in(
        &dir,
        &["run", &scenario, "--out", "locked", "--quiet", "--force"],
    );
    assert!(!out.status.success());
    assert!(stderr(&out).contains("locked"), "{}", stderr(&out));
    assert!(started.elapsed().as_secs() < 30, "it ran before refusing");
}

/// Hostile flag values for the commands that take numbers: each call ends without a panic
/// (exit status 101), refused with a message or answered; one that takes too long is stopped
/// (a bounded budget, not a failure).
#[test]
fn hostile_flags_never_panic() {
    use std::process::Stdio;
    let values = [
        "-1",
        "0",
        "1",
        "2",
        "3",
        "7",
        "64",
        "65535",
        "65536",
        "4294967296",
        "1e308",
        "nan",
        "inf",
        "-inf",
        "0.5",
        "1e-300",
        "",
        "x",
        "18446744073709551616",
    ];
    let commands: &[(&[&str], &[&str])] = &[
        (&["schedule"], &["--nodes", "--ports", "--channels"]),
        (
            &["cell", "encode"],
            &["--dst", "--src", "--seq", "--feedback", "--class"],
        ),
        (
            &["size"],
            &[
                "--nodes",
                "--channels",
                "--channel-gbps",
                "--switch-ports",
                "--cell-bytes",
                "--slot-ns",
                "--cable-m",
                "--on-chip-mbit",
                "--packet-switch-ports",
                "--circuit-cost-ratio",
            ],
        ),
        (
            &["bench"],
            &["--nodes", "--pairs", "--slots", "--warmup-slots"],
        ),
    ];
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    for _ in 0..80 {
        let (cmd, flags) = commands[next(commands.len())];
        let mut args: Vec<String> = cmd.iter().map(|s| s.to_string()).collect();
        for flag in flags {
            if next(2) == 0 {
                args.push(format!("{flag}={}", values[next(values.len())]));
            } else if cmd == ["schedule"] {
                // Its required flags, so that values and not the usage are checked.
                args.push(format!("{flag}=4"));
            }
        }
        let mut child = Command::new(SHOAL)
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the shoal binary runs");
        let started = std::time::Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait") {
                break Some(status);
            }
            if started.elapsed().as_secs() >= 3 {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut e, &mut err);
        }
        if let Some(status) = status {
            assert_ne!(status.code(), Some(101), "shoal {}: {err}", args.join(" "));
            assert!(!err.contains("panicked"), "shoal {}: {err}", args.join(" "));
        }
    }
}

/// A full disk (a temporary file that is /dev/full) fails the run naming the file, and the
/// folder stays marked incomplete with no summary.
#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_names_the_file_and_leaves_no_summary() {
    let dir = scratch("full-disk");
    let res = dir.join("res");
    std::fs::create_dir_all(&res).expect("mkdir");
    std::os::unix::fs::symlink("/dev/full", res.join(".flows.csv.tmp")).expect("symlink");
    let tiny = write(&dir, "tiny.toml", TINY);
    let out = shoal_in(&dir, &["run", &tiny, "--out", "res", "--force", "--quiet"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("flows.csv"), "{err}");
    assert!(res.join("INCOMPLETE").exists());
    assert!(!res.join("summary.json").exists());
    // The database holds the run as failed, with the same error.
    let rows = db_rows(&dir.join("shoal.db"));
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["status"], "failed");
    assert!(
        rows[0]["error"].as_str().unwrap().contains("flows.csv"),
        "{}",
        rows[0]
    );
}

#[test]
fn bench_refuses_a_load_whose_flows_are_seconds_apart() {
    let out = shoal(&[
        "bench",
        "--datacenter",
        "--load",
        "1e-9",
        "--nodes",
        "16",
        "--flows",
        "10",
    ]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("above the 1 s allowed"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn replications_run_under_derived_seeds_and_report_a_95_percent_interval() {
    let dir = scratch("replications");
    let tiny = write(&dir, "tiny.toml", TINY);
    let o = shoal_in(
        &dir,
        &["run", &tiny, "--out", "reps", "--replications", "3"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("±"), "{}", stdout(&o));
    let reps = dir.join("reps");
    let mut reader = csv::Reader::from_path(reps.join("replications.csv")).expect("table");
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("row")).collect();
    assert_eq!(rows.len(), 3);
    let mut seeds = Vec::new();
    let mut means = Vec::new();
    for (r, row) in rows.iter().enumerate() {
        assert_eq!(
            (&row[0], &row[1]),
            (format!("r{r}").as_str(), r.to_string().as_str())
        );
        let s = summary(&reps.join(format!("r{r}")));
        // The seed the table names is the run's, and its folder's scenario repeats it.
        assert_eq!(s["seed"].to_string(), row[2]);
        let again = shoal_scenario::load(&reps.join(format!("r{r}/scenario.toml"))).expect("loads");
        assert_eq!(again.seed.to_string(), row[2]);
        seeds.push(row[2].to_owned());
        means.push(s["short_fct_us"]["mean"].as_f64().unwrap());
    }
    assert_eq!(seeds[0], "5", "the first replication is the plain run");
    assert!(seeds[1] != seeds[2] && seeds[1] != seeds[0]);
    // ci.csv against the interval computed here from the summaries: t(2) = 4.303.
    let ci = std::fs::read_to_string(reps.join("ci.csv")).expect("ci.csv");
    let line = ci
        .lines()
        .find(|l| l.starts_with("short_fct_mean_us,"))
        .expect("a row for the mean FCT");
    let cells: Vec<f64> = line
        .split(',')
        .skip(1)
        .map(|c| c.parse().expect("a number"))
        .collect();
    let mean = means.iter().sum::<f64>() / 3.0;
    let sd = (means.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
    let half = 4.303 * sd / 3f64.sqrt();
    assert_eq!(cells[0], 3.0);
    assert!((cells[1] - mean).abs() < 1e-9, "{line}");
    assert!(
        (cells[2] - (mean - half)).abs() < 1e-9 && (cells[3] - (mean + half)).abs() < 1e-9,
        "{line}"
    );
    // The same command gives the same seeds and intervals; the database holds each run.
    let o = shoal_in(
        &dir,
        &[
            "run",
            &tiny,
            "--out",
            "again",
            "--replications",
            "3",
            "--quiet",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    for f in ["replications.csv", "ci.csv"] {
        assert_eq!(
            std::fs::read_to_string(reps.join(f)).unwrap(),
            std::fs::read_to_string(dir.join("again").join(f)).unwrap(),
            "{f}"
        );
    }
    let rows = db_rows(&dir.join("shoal.db"));
    // Runs side by side may start in either order.
    let mut first: Vec<String> = rows[..3].iter().map(|r| r["seed"].to_string()).collect();
    first.sort();
    seeds.sort();
    assert_eq!(first, seeds);
    assert!(rows.iter().all(|r| r["kind"] == "replication"));
}

/// Runs made apart go on one figure: each file's rows split by --series (a file without that
/// column is one series named after the file), renamed for the legend.
#[test]
fn plot_draws_several_files_split_into_series() {
    let dir = scratch("plot-files");
    let sweep = write(
        &dir,
        "shoal-sweep.csv",
        "workload.load,short_fct_p99_us\n0.1,16.9\n0.2,21.1\n",
    );
    let compare = write(
        &dir,
        "compare.csv",
        "workload.load,fabric,short_fct_p99_us\n0.1,dctcp,21.1\n0.1,ndp,18.9\n0.2,dctcp,27.2\n0.2,ndp,\n",
    );
    let out = dir.join("fig");
    let args = [
        "plot",
        &sweep,
        &compare,
        "--x",
        "workload.load",
        "--y",
        "short_fct_p99_us",
        "--series",
        "fabric",
        "--rename",
        "shoal-sweep=Shoal",
        "--rename",
        "dctcp=DCTCP",
        "--out",
        out.to_str().unwrap(),
    ];
    run_ok(&args);
    let points = std::fs::read_to_string(dir.join("fig.csv")).expect("the figure's CSV");
    assert_eq!(
        points,
        "series,x,y\nShoal,0.1,16.9\nShoal,0.2,21.1\nDCTCP,0.1,21.1\nDCTCP,0.2,27.2\nndp,0.1,18.9\n"
    );
    let svg = std::fs::read_to_string(dir.join("fig.svg")).expect("svg");
    assert!(svg.contains("Shoal") && svg.contains("DCTCP") && svg.contains("ndp"));
    // A name no series has is refused, naming those there are.
    let mut wrong = args.to_vec();
    wrong[12] = "tcp=TCP";
    let o = shoal(&wrong);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("no series is named \"tcp\"") && stderr(&o).contains("dctcp"),
        "{}",
        stderr(&o)
    );
}

/// `shoal report`: one page holding every recorded run, every claim and every figure, with
/// nothing loaded from elsewhere.
#[test]
fn report_is_one_self_contained_page_with_every_claim_and_figure() {
    let dir = scratch("report");
    let tiny = write(&dir, "tiny.toml", TINY);
    let ndp = write(&dir, "ndp.toml", &tiny_packet("ndp", ""));
    for args in [
        vec!["run", &tiny, "--out", "res/tiny", "--quiet"],
        vec!["compare", &tiny, &ndp, "--out", "res/cmp", "--quiet"],
    ] {
        let o = shoal_in(&dir, &args);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let o = shoal_in(
        &dir,
        &[
            "repro",
            "fig10",
            "--quick",
            "--json",
            "--out",
            "res/figures",
        ],
    );
    let claims: Value = serde_json::from_str(&stdout(&o)).expect("claims JSON");
    let claims = claims.as_array().expect("array");
    let o = shoal_in(
        &dir,
        &["report", "--db", "res/shoal.db", "--out", "page.html"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let page = std::fs::read_to_string(dir.join("page.html")).expect("the page");
    // Every claim is a row of the claim table, with its verdict.
    let table = &page[page.find("id=\"claim-table\"").expect("claim table")..];
    let table = &table[..table.find("</table>").expect("end")];
    let verdicts =
        table.matches("class=\"pass\"").count() + table.matches("class=\"miss\"").count();
    assert_eq!(verdicts, claims.len());
    for c in claims {
        assert!(table.contains(c["claim"].as_str().unwrap()), "{c}");
    }
    // Every figure the comparison and the experiment wrote is inlined.
    let svg_files = |d: &str| {
        std::fs::read_dir(dir.join(d))
            .expect("folder")
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == "svg")
            })
            .count()
    };
    let figures = svg_files("res/cmp") + svg_files("res/figures");
    assert!(figures > 0);
    assert_eq!(page.matches("<svg").count(), figures);
    // Each caption says what made its figure.
    assert_eq!(
        page.matches("<figcaption>shoal compare of tiny, tiny-ndp: ")
            .count(),
        svg_files("res/cmp")
    );
    assert_eq!(
        page.matches("<figcaption>shoal repro (quick: fig10): ")
            .count(),
        svg_files("res/figures")
    );
    // Each of the four runs, with its provenance; nothing is fetched from elsewhere.
    let rows = db_rows(&dir.join("res/shoal.db"));
    assert_eq!(rows.len(), 4);
    for r in &rows {
        assert!(page.contains(r["revision"].as_str().unwrap()));
        assert!(page.contains(&format!("<td class=\"num\">{}</td>", r["id"])));
    }
    for external in ["src=\"http", "href=\"http", "<script", "<link", "@import"] {
        assert!(!page.contains(external), "{external}");
    }
    // A missing database is named, and no page is written.
    let o = shoal_in(
        &dir,
        &["report", "--db", "nothing.db", "--out", "none.html"],
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("nothing.db: no results database"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.join("none.html").exists());
}

#[test]
fn slurm_options_are_refused_where_they_would_mean_nothing() {
    let dir = scratch("slurm-options");
    let tiny = write(&dir, "tiny.toml", TINY);
    let out = dir.join("out");
    let out = out.to_str().unwrap();
    for (args, reason) in [
        (vec!["--wait"], "--wait is an option of --backend slurm"),
        (
            vec!["--partition", "x"],
            "--partition is an option of --backend slurm",
        ),
        (
            vec!["--backend", "slurm", "--no-db", "--replications", "2"],
            "needs the results database",
        ),
        (vec!["--backend", "slurm"], "a single run runs here"),
    ] {
        let mut all = vec!["run", tiny.as_str(), "--out", out, "--quiet"];
        all.extend(&args);
        let o = shoal(&all);
        assert!(!o.status.success(), "{args:?}");
        assert!(stderr(&o).contains(reason), "{args:?}: {}", stderr(&o));
    }
    assert!(!dir.join("out").exists(), "nothing written");
}

/// `(series, x, y)` rows of a figure's CSV.
fn figure_rows(path: &Path) -> Vec<(String, f64, f64)> {
    let mut reader = csv::Reader::from_path(path).expect("the figure's CSV");
    reader
        .records()
        .map(|r| {
            let r = r.expect("row");
            (
                r[0].to_owned(),
                r[1].parse().unwrap(),
                r[2].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_comparison_draws_each_fabrics_fct_cdf_and_slowdown_by_size_agreeing_with_its_table() {
    let dir = scratch("distributions");
    let tiny = write(&dir, "tiny.toml", TINY);
    let ndp = write(&dir, "ndp.toml", &tiny_packet("ndp", ""));
    let o = shoal_in(&dir, &["compare", &tiny, &ndp, "--out", "cmp", "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = std::fs::read_to_string(dir.join("cmp/compare.csv")).expect("table");
    let mut reader = csv::Reader::from_reader(table.as_bytes());
    let header = reader.headers().expect("header").clone();
    let col = |name: &str| header.iter().position(|h| h == name).expect(name);
    let cdf = figure_rows(&dir.join("cmp/fct_cdf.csv"));
    let by_size = figure_rows(&dir.join("cmp/slowdown_by_size.csv"));
    // Slowdowns over one reference, the first scenario's ideal FCT (no ideal switch here):
    // with every flow of one size, each fabric's bin over its FCT p99 is the same 1 / ideal.
    let mut per_us = Vec::new();
    for (i, row) in reader.records().enumerate() {
        let row = row.expect("row");
        let name = &format!("{} ({})", &row[col("fabric")], &row[col("scenario")]);
        let points: Vec<(f64, f64)> = cdf
            .iter()
            .filter(|(s, _, _)| s == name)
            .map(|&(_, x, y)| (x, y))
            .collect();
        assert_eq!(points.len(), 8, "{name}: one point per short flow");
        assert!(
            points
                .windows(2)
                .all(|w| w[0].0 <= w[1].0 && w[0].1 < w[1].1)
        );
        assert_eq!(points.last().unwrap().1, 1.0);
        // The first value the CDF reaches 0.99 at is the table's nearest-rank p99.
        let p99 = points.iter().find(|p| p.1 >= 0.99).unwrap().0;
        let table_p99: f64 = row[col("short_fct_p99_us")].parse().unwrap();
        assert!(
            (p99 - table_p99).abs() < 5e-4,
            "{name}: {p99} vs {table_p99}"
        );
        // Every flow has 3000 bytes: one size bin, whose p99 is the table's slowdown p99.
        let bins: Vec<&(String, f64, f64)> = by_size.iter().filter(|(s, _, _)| s == name).collect();
        assert_eq!(bins.len(), 1, "{name}");
        if i == 0 {
            let table_slowdown: f64 = row[col("short_slowdown_p99")].parse().unwrap();
            assert!((bins[0].2 - table_slowdown).abs() < 5e-4 * table_slowdown.max(1.0));
        }
        per_us.push(bins[0].2 / table_p99);
        // Drawn at the centre of the quarter-decade bin that holds 3000 bytes.
        let half_bin = 10f64.powf(0.125);
        assert!(bins[0].1 / half_bin <= 3000.0 && 3000.0 < bins[0].1 * half_bin);
    }
    assert_eq!(per_us.len(), 2);
    assert!(
        (per_us[0] - per_us[1]).abs() < 1e-3 * per_us[0],
        "{per_us:?}"
    );
    for f in ["fct_cdf.svg", "slowdown_by_size.svg"] {
        let svg = std::fs::read_to_string(dir.join("cmp").join(f)).expect(f);
        assert!(
            svg.contains("short-flow FCT (µs)") || svg.contains("flow size (bytes)"),
            "{f}"
        );
    }
}

#[test]
fn compare_replications_share_seeds_across_fabrics_and_report_intervals_and_means() {
    let dir = scratch("compare-replications");
    let open_loop = |text: &str| {
        text.replace(
            "kind = \"permutation\"\nflow_bytes = 3000",
            "kind = \"open-loop\"\nload = 0.5\nload_node_gbps = 10.0\nmatrix = \"uniform\"\n\
             size = { dist = \"pareto\", shape = 1.05, mean_bytes = 20000, cap_bytes = 1e6 }\n\
             [run]\ncompleted_flows = 100",
        )
    };
    let tiny = write(&dir, "tiny.toml", &open_loop(TINY));
    let ndp = write(&dir, "ndp.toml", &open_loop(&tiny_packet("ndp", "")));
    let o = shoal_in(
        &dir,
        &[
            "compare",
            &tiny,
            &ndp,
            "--out",
            "cmp",
            "--quiet",
            "--replications",
            "3",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let cmp = dir.join("cmp");
    let mut table = csv::Reader::from_path(cmp.join("compare.csv")).expect("compare.csv");
    let rows: Vec<csv::StringRecord> = table.records().map(|r| r.expect("row")).collect();
    assert_eq!(rows.len(), 6);
    // Replication r has one seed for both fabrics, the scenario's own for r = 0.
    for r in 0..3 {
        let seeds: Vec<&str> = rows
            .iter()
            .filter(|x| x[1] == *r.to_string())
            .map(|x| &x[2])
            .collect();
        assert_eq!(seeds.len(), 2);
        assert_eq!(seeds[0], seeds[1]);
        assert_eq!(r == 0, seeds[0] == "5");
        // ... and so the same flows (each run stops at its 100th completion: one list is the
        // start of the other).
        let flows = |name: &str| {
            let text = std::fs::read_to_string(cmp.join(format!("{name}-r{r}/flows.csv"))).unwrap();
            text.lines()
                .map(|l| l.split(',').take(5).collect::<Vec<_>>().join(","))
                .collect::<Vec<_>>()
        };
        let (a, b) = (flows("tiny"), flows("tiny-ndp"));
        let n = a.len().min(b.len());
        assert!(n > 100);
        assert_eq!(a[..n], b[..n], "replication {r}");
    }
    // ci.csv's mean is the mean of the rows; the bar drawn is that mean.
    let mut ci = csv::Reader::from_path(cmp.join("ci.csv")).expect("ci.csv");
    let ci: Vec<csv::StringRecord> = ci.records().map(|r| r.expect("row")).collect();
    // The bars' CSV names each category (the scenario) in its x column.
    let mut bars = csv::Reader::from_path(cmp.join("short_fct_mean_us.csv")).expect("bars");
    let bars: Vec<(String, f64)> = bars
        .records()
        .map(|r| {
            let r = r.expect("row");
            (r[1].to_owned(), r[2].parse().unwrap())
        })
        .collect();
    // Bars and legends name the fabric and its scenario.
    for (i, (name, label)) in [("tiny", "shoal (tiny)"), ("tiny-ndp", "ndp (tiny-ndp)")]
        .iter()
        .enumerate()
    {
        let values: Vec<f64> = rows
            .iter()
            .filter(|r| &r[0] == *name)
            .map(|r| r[6].parse().unwrap())
            .collect();
        let mean = values.iter().sum::<f64>() / 3.0;
        let row = ci
            .iter()
            .find(|r| &r[0] == *name && &r[1] == "short_fct_mean_us")
            .expect("the metric's interval");
        assert_eq!(&row[2], "3");
        let ci_mean: f64 = row[3].parse().unwrap();
        assert!((ci_mean - mean).abs() < 1e-3, "{name}: {ci_mean} vs {mean}");
        let (low, high): (f64, f64) = (row[4].parse().unwrap(), row[5].parse().unwrap());
        assert!(low <= ci_mean && ci_mean <= high);
        assert_eq!(bars[i].0, *label);
        assert!(
            (bars[i].1 - ci_mean).abs() < 1e-9,
            "{name}: bar {}",
            bars[i].1
        );
    }
    // The CDF pools the three replications' short flows.
    let cdf = figure_rows(&cmp.join("fct_cdf.csv"));
    let short: usize = (0..3)
        .map(|r| {
            let path = cmp.join(format!("tiny-r{r}/flows.csv"));
            let mut reader = csv::Reader::from_path(path).unwrap();
            reader
                .records()
                .filter(|x| {
                    let x = x.as_ref().unwrap();
                    !x[6].is_empty() && x[3].parse::<u64>().unwrap() <= 100_000
                })
                .count()
        })
        .sum();
    assert_eq!(
        cdf.iter().filter(|(s, _, _)| s == "shoal (tiny)").count(),
        short
    );
}

#[test]
fn a_sweep_slurm_cannot_take_leaves_failed_rows_and_runs_here_afterwards() {
    let dir = scratch("no-sbatch");
    let sweep =
        format!("{TINY}[sweep]\nparameter = \"workload.flow_bytes\"\nvalues = [1000, 2000]\n");
    let scenario = write(&dir, "sweep.toml", &sweep);
    // No sbatch on the PATH: nothing is submitted, and the rows say why.
    let empty = dir.join("no-programs");
    std::fs::create_dir_all(&empty).expect("dir");
    let o = Command::new(SHOAL)
        .args([
            "run",
            &scenario,
            "--out",
            "res",
            "--quiet",
            "--backend",
            "slurm",
        ])
        .current_dir(&dir)
        .env("PATH", &empty)
        .output()
        .expect("runs");
    assert!(!o.status.success());
    assert!(stderr(&o).contains("cannot start sbatch"), "{}", stderr(&o));
    let rows = db_rows(&dir.join("shoal.db"));
    assert_eq!(rows.len(), 2);
    for r in &rows {
        assert_eq!(
            (&r["status"], &r["state"]),
            (&"failed".into(), &"failed".into())
        );
        assert!(
            r["error"].as_str().unwrap().contains("cannot start sbatch"),
            "{r}"
        );
    }
    assert!(
        dir.join("res/.slurm/job-1.sh").is_file(),
        "the script stays, to submit by hand"
    );
    // The same sweep here afterwards resumes the folder and runs both points.
    let here = shoal_in(&dir, &["run", &scenario, "--out", "res", "--quiet"]);
    assert!(here.status.success(), "{}", stderr(&here));
    assert!(dir.join("res/sweep.csv").is_file());
    let rows = db_rows(&dir.join("shoal.db"));
    assert_eq!(rows.iter().filter(|r| r["status"] == "done").count(), 2);
}

#[test]
fn a_comparison_of_sampling_runs_draws_their_time_series() {
    let dir = scratch("compare-series");
    let tiny = write(&dir, "tiny.toml", TINY);
    let ndp = write(&dir, "ndp.toml", &tiny_packet("ndp", ""));
    let o = shoal_in(
        &dir,
        &[
            "compare",
            &tiny,
            &ndp,
            "--out",
            "cmp",
            "--quiet",
            "--set",
            "run.sample_every_us=0.5",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let cmp = dir.join("cmp");
    for (column, index) in [("queued_bytes", 1), ("active_flows", 5)] {
        let drawn = figure_rows(&cmp.join(format!("{column}.csv")));
        for (name, label) in [("tiny", "shoal (tiny)"), ("tiny-ndp", "ndp (tiny-ndp)")] {
            // Every sample, in µs, exactly as series.csv holds it in ns.
            let mut series = csv::Reader::from_path(cmp.join(name).join("series.csv")).unwrap();
            let want: Vec<(f64, f64)> = series
                .records()
                .map(|r| {
                    let r = r.unwrap();
                    (
                        r[0].parse::<f64>().unwrap() / 1e3,
                        r[index].parse().unwrap(),
                    )
                })
                .collect();
            let got: Vec<(f64, f64)> = drawn
                .iter()
                .filter(|(s, _, _)| s == label)
                .map(|&(_, x, y)| (x, y))
                .collect();
            assert!(want.len() > 2, "{name} sampled");
            assert_eq!(got, want, "{column} of {name}");
        }
    }
}

#[test]
fn a_collective_run_reports_nccls_figures_against_theory() {
    // A ring all-reduce of S over n ranks on the ideal switch (50 Gb/s links, 100 ns each,
    // 1500 B packets with 40 B of headers: the defaults): each of the 2(n−1) steps sends
    // c = S/n alone on its links, taking its packets' wire time, one more packet at the switch
    // and both links' delay. busbw = S/t · 2(n−1)/n then sits just under the link rate.
    let dir = scratch("collective");
    let (n, s) = (8u64, 8_000_000u64);
    let file = write(
        &dir,
        "ring.toml",
        &format!(
            "[scenario]\nname = \"ring\"\nfabric = \"ideal-switch\"\n[switch]\nhosts = {n}\n\
             [workload]\nkind = \"collective\"\nop = \"all-reduce\"\nmessage_bytes = {s}\n\
             iterations = 2\ncompute_us = 10.0\n"
        ),
    );
    let out = dir.join("out");
    let o = run_ok(&["run", &file, "--out", out.to_str().unwrap(), "--quiet"]);
    assert!(stdout(&o).contains("busbw"), "{}", stdout(&o));
    let summary = summary(&out);
    let c = summary["collective"]
        .as_object()
        .expect("a collective object");
    let num = |k: &str| c[k].as_f64().unwrap_or_else(|| panic!("{k}: {}", c[k]));
    let rate = 50e9 / 8.0;
    let chunk = (s / n) as f64;
    let packets = (chunk / 1460.0).ceil();
    let step = (chunk + packets * 40.0) / rate + 1500.0 / rate + 2.0 * 100e-9;
    let theory_us = 2.0 * (n as f64 - 1.0) * step * 1e6;
    let t = num("completion_us");
    assert!(
        (t - theory_us).abs() / theory_us < 0.05,
        "completion {t} us, theory {theory_us} us"
    );
    assert_eq!(c["iterations_completed"], 2);
    let algbw = num("algbw_gbps");
    assert!((algbw - s as f64 * 8.0 / (t * 1e3)).abs() < 1e-6 * algbw);
    let busbw = num("busbw_gbps");
    assert!((busbw - algbw * 2.0 * 7.0 / 8.0).abs() < 1e-6 * busbw);
    assert!(busbw < 50.0 && busbw > 47.5, "busbw {busbw} Gb/s, links 50");
    // Two iterations and the compute between them.
    assert!(
        (num("job_us") - (2.0 * t + 10.0)).abs() < 1e-3,
        "{}",
        num("job_us")
    );
    // flows.csv places each send: 2 iterations of 2(n−1) steps of n sends.
    let flows = std::fs::read_to_string(out.join("flows.csv")).expect("flows.csv");
    let mut lines = flows.lines();
    assert!(
        lines
            .next()
            .expect("a header")
            .ends_with(",iteration,step,chunk,job")
    );
    let mut per_place = std::collections::BTreeMap::new();
    for line in lines {
        let cells: Vec<&str> = line.split(',').collect();
        let place = (
            cells[7].to_owned(),
            cells[8].parse::<u64>().expect("a step"),
        );
        *per_place.entry(place).or_insert(0u64) += 1;
    }
    assert_eq!(per_place.len() as u64, 2 * 2 * (n - 1));
    assert!(per_place.values().all(|&c| c == n), "{per_place:?}");
}

#[test]
fn two_jobs_on_disjoint_nodes_of_a_non_blocking_switch_each_run_as_alone() {
    // A data-parallel ring all-reduce beside an MoE all-to-all, 8 ranks each, spread over
    // 16 hosts: on the ideal switch disjoint nodes share no link, so each job's completion
    // time is the one it has alone (the same run with only it), and each job is reported
    // under its name with the first job's figures kept at the top.
    let dir = scratch("jobs");
    let base = "[scenario]\nfabric = \"ideal-switch\"\n[switch]\nhosts = 16\n[workload]\n\
                kind = \"collective\"\nplacement = \"spread\"\n";
    let dp = "[[workload.jobs]]\nname = \"dp\"\nop = \"all-reduce\"\nranks = 8\n\
              message_bytes = 4000000\nchunks = 2\n";
    let moe = "[[workload.jobs]]\nname = \"moe\"\nop = \"all-to-all\"\nranks = 8\n\
               message_bytes = 2000000\niterations = 2\ncompute_us = 5.0\n";
    let run = |name: &str, text: String| {
        let file = write(&dir, &format!("{name}.toml"), &text);
        let out = dir.join(name);
        run_ok(&["run", &file, "--out", out.to_str().unwrap(), "--quiet"]);
        (summary(&out), out)
    };
    let (both, out) = run("both", format!("{base}{dp}{moe}"));
    let c = &both["collective"];
    let jobs = c["jobs"].as_array().expect("a list of jobs");
    assert_eq!(jobs.len(), 2);
    assert_eq!(c["name"], "dp");
    assert_eq!(c["completion_us"], jobs[0]["completion_us"]);
    for (k, name) in [(0, "dp"), (1, "moe")] {
        let job = &jobs[k];
        assert_eq!(job["name"], name);
        let share = job["slowest_rank_share"].as_f64().expect("a share");
        assert!((0.0..1.0).contains(&share), "{name}: {share}");
        let text = if k == 0 { dp } else { moe };
        let (alone, _) = run(name, format!("{base}{text}"));
        let (a, b) = (
            alone["collective"]["completion_us"]
                .as_f64()
                .expect("a time"),
            job["completion_us"].as_f64().expect("a time"),
        );
        assert!(
            (a - b).abs() <= 1e-6 * a,
            "{name}: alone {a} us, beside the other {b} us"
        );
    }
    // flows.csv names each send's job; the ideal switch's hosts are one group, so spread
    // placement takes them in id order (the ring on nodes 0-7, the all-to-all on 8-15).
    let flows = std::fs::read_to_string(out.join("flows.csv")).expect("flows.csv");
    for line in flows.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        let src: u64 = cells[1].parse().expect("a node");
        assert_eq!(cells[10], (src / 8).to_string(), "{line}");
    }
}

#[test]
fn a_chakra_trace_runs_on_the_ideal_switch_in_the_time_its_graph_implies() {
    // scenarios/chakra-tiny.toml: four ranks compute 10 µs, each sends c = 100,000 B to the
    // next round a ring (one flow per link each way), then all-reduce 4c, a ring of 2(n−1) = 6
    // steps of c. Every flow is alone on its links, so the graph implies 10 µs + 7 steps, a
    // step being c's packets' wire time (1460 B of payload and 40 B of headers each), one more
    // packet at the switch and both links' delay (the collective test's model above).
    let scenario = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/chakra-tiny.toml"
    );
    let out = scratch("chakra").join("out");
    run_ok(&["run", scenario, "--out", out.to_str().unwrap(), "--quiet"]);
    let s = summary(&out);
    assert_eq!(s["flows"], 4 + 4 * 6);
    assert_eq!(s["flows_completed"], 4 + 4 * 6);
    let rate = 50e9 / 8.0;
    let c = 100_000f64;
    let step = (c + (c / 1460.0).ceil() * 40.0) / rate + 1500.0 / rate + 2.0 * 100e-9;
    let theory_us = 10.0 + 7.0 * step * 1e6;
    let t = s["sim_time_us"].as_f64().expect("sim_time_us");
    assert!(
        (t - theory_us).abs() / theory_us < 0.01,
        "completion {t} us, the graph implies {theory_us} us"
    );
}
