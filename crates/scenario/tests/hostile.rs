//! Values a hostile or careless file gives that once panicked, were clamped silently or ran
//! away with memory: each is refused, naming its key.

use shoal_scenario::{ErrorKind, parse};

const RACK: &str = "[rack]\nnodes = 16\nchannels = 2\nswitch_ports = 8\n";
const OPEN: &str = "[workload]\nkind = \"open-loop\"\nmatrix = \"uniform\"\nsize = { dist = \"fixed\", bytes = 1000 }\n[run]\ncompleted_flows = 10\n";

fn refused_key(text: &str) -> String {
    match parse(text, "hostile.toml") {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => {
            assert_eq!(e.kind, ErrorKind::Value, "{e}");
            e.key
        }
    }
}

#[test]
fn rates_below_a_bit_per_second_or_beyond_any_link_are_refused() {
    for gbps in ["1e-12", "1e-10", "1e308", "2e9"] {
        let rack = RACK.replace(
            "channels = 2",
            &format!("channels = 2\nchannel_gbps = {gbps}"),
        );
        let text = format!("{rack}\n[workload]\nkind = \"permutation\"\nflow_bytes = 1000\n");
        assert_eq!(refused_key(&text), "rack.channel_gbps", "{gbps}");
        let net = format!(
            "[scenario]\nfabric = \"dctcp\"\n[network]\nhosts = 8\nradix = 4\nlink_gbps = {gbps}\n\
             [workload]\nkind = \"permutation\"\nflow_bytes = 1000\n"
        );
        assert_eq!(refused_key(&net), "network.link_gbps", "{gbps}");
        let load = format!("{RACK}{OPEN}").replace(
            "matrix = \"uniform\"",
            &format!("matrix = \"uniform\"\nload = 0.5\nload_node_gbps = {gbps}"),
        );
        assert_eq!(refused_key(&load), "workload.load_node_gbps", "{gbps}");
    }
}

#[test]
fn gaps_below_a_picosecond_are_refused() {
    for gap in ["1e-300", "1e-4"] {
        let text = format!("{RACK}{OPEN}").replace(
            "matrix = \"uniform\"",
            &format!("matrix = \"uniform\"\nmean_gap_ns = {gap}"),
        );
        assert_eq!(refused_key(&text), "workload.mean_gap_ns", "{gap}");
    }
    let huge_load = format!("{RACK}{OPEN}")
        .replace("matrix = \"uniform\"", "matrix = \"uniform\"\nload = 1e15");
    assert_eq!(refused_key(&huge_load), "workload.load");
}

#[test]
fn list_workloads_too_large_to_draw_are_refused_before_any_allocation() {
    let text = format!(
        "{RACK}[workload]\nkind = \"random-pairs\"\nflows = 4294967295\nflow_bytes = 1000\n"
    );
    let e = parse(&text, "hostile.toml").expect_err("refused");
    assert_eq!(e.key, "workload.flows");
    assert!(e.reason.contains("open-loop"), "{e}");
}

#[test]
fn a_trace_with_a_wait_of_seconds_is_refused_like_a_mistyped_load() {
    let dir = std::env::temp_dir().join("shoal-hostile-trace");
    std::fs::create_dir_all(&dir).expect("dir");
    let trace = dir.join("gap.csv");
    std::fs::write(
        &trace,
        "src,dst,size_bytes,start_ns\n0,1,100,0\n1,2,100,1000000000000\n",
    )
    .expect("write");
    let text = format!(
        "{RACK}[workload]\nkind = \"trace\"\nfile = {:?}\n",
        trace.display().to_string()
    );
    assert_eq!(refused_key(&text), "workload.file");
    // Flows at the same instant are fine.
    std::fs::write(
        &trace,
        "src,dst,size_bytes,start_ns\n0,1,100,5\n1,2,100,5\n",
    )
    .expect("write");
    assert!(parse(&text, "hostile.toml").is_ok());
}

#[test]
fn a_file_larger_than_any_scenario_is_not_read_to_the_end() {
    let dir = std::env::temp_dir().join("shoal-hostile-big");
    std::fs::create_dir_all(&dir).expect("dir");
    let big = dir.join("big.toml");
    let line = "# padding padding padding padding padding padding padding padding\n";
    let mut text = String::with_capacity(17 << 20);
    while text.len() <= (16 << 20) {
        text.push_str(line);
    }
    std::fs::write(&big, &text).expect("write");
    let e = shoal_scenario::load(&big).expect_err("refused");
    assert_eq!(e.kind, ErrorKind::Io);
    assert!(e.reason.contains("not a scenario file"), "{e}");
    #[cfg(unix)]
    {
        let e = shoal_scenario::load(std::path::Path::new("/dev/zero")).expect_err("refused");
        assert!(e.reason.contains("not a scenario file"), "{e}");
    }
}

/// A four-adapter, one-tier Stardust with four flows: the base of the Stardust cases below.
const STARDUST: &str = "[scenario]\nfabric = \"stardust\"\n[stardust]\ntopology = \"cell-clos\"\n\
    fas = 4\nfas_per_pod = 4\nfe1_per_pod = 2\nparallel = 1\nfe2 = 0\n";
const FOUR_FLOWS: &str = "[workload]\nkind = \"open-loop\"\nflows = 4\nmatrix = \"uniform\"\n\
    size = { dist = \"fixed\", bytes = 3000 }\n[run]\nuntil_us = 20.0\n";

/// Issue 37: `stardust.port_gbps = 1e-300` panicked computing an ideal FCT ("serialization at a
/// zero rate"), and `link_gbps` at the same values was refused naming `stardust.topology`. Every
/// fabric's rates now share one rule (1 Mb/s to 10⁶ Gb/s), and each names its own key.
#[test]
fn stardust_rates_no_link_could_have_are_refused_naming_their_key() {
    for gbps in ["1e-300", "1e-12", "1e-4", "1e308", "2e6"] {
        for key in ["port_gbps", "link_gbps"] {
            let text =
                STARDUST.replace("fe2 = 0\n", &format!("fe2 = 0\n{key} = {gbps}\n")) + FOUR_FLOWS;
            assert_eq!(refused_key(&text), format!("stardust.{key}"), "{gbps}");
            let Err(e) = parse(&text, "hostile.toml") else {
                panic!("accepted {key} = {gbps}");
            };
            let msg = e.to_string();
            assert!(msg.len() < 300, "a short message: {msg}");
        }
    }
    let ok =
        STARDUST.replace("fe2 = 0\n", "fe2 = 0\nport_gbps = 0.01\nlink_gbps = 0.02\n") + FOUR_FLOWS;
    parse(&ok, "hostile.toml").expect("10 Mb/s ports are a rate");
}

/// Issue 37: weights `[0, 1]` with traffic in class 0 spun for ever (the scheduler said a VOQ
/// wanted credit and then picked none). A class of weight 0 would never be served: refused.
#[test]
fn a_class_weight_of_zero_is_refused() {
    let weighted = |w: &str| {
        STARDUST.replace(
            "fe2 = 0\n",
            &format!("fe2 = 0\nclasses = 2\nclass_policy = \"weighted\"\nclass_weights = {w}\n"),
        ) + FOUR_FLOWS
    };
    assert_eq!(refused_key(&weighted("[0, 1]")), "stardust.class_weights");
    assert_eq!(refused_key(&weighted("[1, 0]")), "stardust.class_weights");
    parse(&weighted("[1, 3]"), "hostile.toml").expect("positive weights");
}

/// Issue 37: Stardust kept fractions in fixed point and rounded silently (`credit_speedup =
/// 4e-7` ran as 0, `1.5e-6` as 2e-6, `fci_increase = 3e-7` as 0, `low_latency_share = 1e-12`
/// rounded up). A value the model cannot hold is refused, saying what it would have become;
/// one it can hold resolves to itself.
#[test]
fn stardust_values_the_model_cannot_hold_are_refused_not_rounded() {
    let with =
        |line: &str| STARDUST.replace("fe2 = 0\n", &format!("fe2 = 0\n{line}\n")) + FOUR_FLOWS;
    for (line, key) in [
        ("credit_speedup = 4e-7", "stardust.credit_speedup"),
        ("credit_speedup = 1.5e-6", "stardust.credit_speedup"),
        ("fci_increase = 3e-7", "stardust.fci_increase"),
        ("fci_decrease = 1e-6", "stardust.fci_decrease"),
        ("fci_min_rate = 1e-9", "stardust.fci_min_rate"),
        (
            "low_latency_classes = [0]\nlow_latency_share = 1e-12",
            "stardust.low_latency_share",
        ),
    ] {
        assert_eq!(refused_key(&with(line)), key, "{line}");
    }
    for line in [
        "credit_speedup = 0.03",
        "fci_increase = 0.25",
        "credit_speedup = 0",
    ] {
        let s = parse(&with(line), "hostile.toml").expect(line);
        let (k, v) = line.split_once(" = ").expect("a key");
        let resolved: toml::Table = toml::from_str(&s.resolved_toml()).expect("resolved");
        let back = resolved["stardust"][k].as_float().expect("a float");
        assert!(
            (back - v.parse::<f64>().expect("a number")).abs() < 1e-12,
            "{line}: {back}"
        );
    }
}

/// Issue 37: `stardust.egress_buffer_kb = 1e308` was reported under `ingress_buffer_mb`, and
/// huge or tiny numbers were printed as 300-digit decimals.
#[test]
fn each_buffer_names_its_own_key_and_numbers_print_short() {
    let with =
        |line: &str| STARDUST.replace("fe2 = 0\n", &format!("fe2 = 0\n{line}\n")) + FOUR_FLOWS;
    for (line, key) in [
        ("egress_buffer_kb = 1e308", "stardust.egress_buffer_kb"),
        ("ingress_buffer_mb = 1e308", "stardust.ingress_buffer_mb"),
    ] {
        assert_eq!(refused_key(&with(line)), key, "{line}");
    }
    for line in [
        "egress_buffer_kb = 1e308",
        "link_delay_ns = 1e308",
        "reassembly_timeout_us = 1e-300",
        "port_gbps = 1e-300",
    ] {
        let Err(e) = parse(&with(line), "hostile.toml") else {
            panic!("accepted {line}");
        };
        let longest = e
            .to_string()
            .split(|c: char| !c.is_ascii_digit())
            .map(str::len)
            .max()
            .unwrap_or(0);
        assert!(longest < 20, "{line}: {e}");
    }
}

/// Issue 37: `flows = 4294967295` with neither a load nor a gap started them all at once and
/// aborted every fabric ("memory allocation failed"); a delay line of 10⁸ slots (or Fig. 9's
/// `latency_ns = 4294967295`) took gigabytes. Both are refused, naming the key and the bound.
#[test]
fn allocations_no_machine_could_hold_are_refused_naming_the_bound() {
    let all_at_once = |flows: u64| {
        format!("{RACK}{OPEN}").replace(
            "matrix = \"uniform\"",
            &format!("matrix = \"uniform\"\nflows = {flows}"),
        )
    };
    assert_eq!(refused_key(&all_at_once(4_294_967_295)), "workload.flows");
    parse(&all_at_once(1000), "hostile.toml").expect("a thousand at once");
    let fig9 = RACK.replace("channels = 2", "channels = 2\nlatency_ns = 4294967295.0")
        + "[workload]\nkind = \"permutation\"\nflow_bytes = 1000\n";
    assert_eq!(refused_key(&fig9), "rack.latency_ns");
    for line in ["delay_slots = 100000000", "latency_ns = 900000000.0"] {
        let text = RACK.replace("channels = 2", &format!("channels = 2\n{line}"))
            + "[workload]\nkind = \"permutation\"\nflow_bytes = 1000\n";
        let Err(e) = parse(&text, "hostile.toml") else {
            panic!("accepted {line}");
        };
        assert!(e.to_string().contains("50000000"), "{line}: {e}");
    }
}

/// What `crates/cli/tests/fuzz_keys.rs` found, each once a panic, an abort or a silent change:
/// a Stardust link of 130 s (its in-flight cells overflowed a sum), an interval of 57 days
/// between reachability messages (their spread overflowed), a leaf-spine of 1,716 leaves
/// (24 GB), an Aquila clique of two pods (a detour to a TiN without global links had no
/// route), a flow-size cap of 5.41 B (rounded to 5), a period of 0.6 ps (rounded to 1).
#[test]
fn what_the_registry_fuzzing_found_is_refused_or_runs() {
    let with =
        |line: &str| STARDUST.replace("fe2 = 0\n", &format!("fe2 = 0\n{line}\n")) + FOUR_FLOWS;
    assert_eq!(
        refused_key(&with("link_delay_ns = 130000000000.0")),
        "stardust.link_delay_ns"
    );
    let leaf_spine = "[scenario]\nfabric = \"stardust\"\n[stardust]\ntopology = \"leaf-spine\"\n\
                      leaves = 1716\nspines = 2\nfas_per_leaf = 2\n"
        .to_owned()
        + FOUR_FLOWS;
    assert!(refused_key(&leaf_spine).starts_with("stardust."));
    let far = parse(&with("reach_interval_us = 4920000000000.0"), "hostile.toml")
        .expect("an interval of 57 days is a time");
    far.run(&mut shoal_fabric::NoProgress).expect("runs");
    let two_pods = "[scenario]\nfabric = \"aquila\"\n[clique]\npods = 2\ntins_per_pod = 2\n\
                    local_links = 1\nglobal_links = 1\nlocal_ports = 1\nglobal_ports = 1\n\
                    [workload]\nkind = \"open-loop\"\nload = 0.5\nflows = 20\nmatrix = \"uniform\"\n\
                    size = { dist = \"fixed\", bytes = 3000 }\n[run]\nuntil_us = 20.0\n";
    let out = parse(two_pods, "hostile.toml")
        .expect("two pods")
        .run(&mut shoal_fabric::NoProgress)
        .expect("runs");
    assert!(out.records.iter().any(|r| r.finish.is_some()));
    let cap = format!("{RACK}{OPEN}").replace(
        "size = { dist = \"fixed\", bytes = 1000 }",
        "size = { dist = \"pareto\", shape = 1.2, mean_bytes = 1000, cap_bytes = 5.41 }",
    );
    assert_eq!(refused_key(&cap), "workload.size.cap_bytes");
    let xfabric = "[scenario]\nfabric = \"xfabric\"\n[xfabric]\nsocs = 8\nports_per_soc = 3\n\
                   uplinks = 1\nperiod_ms = 6.12e-10\n[workload]\nkind = \"permutation\"\n\
                   flow_bytes = 1000\n";
    assert_eq!(refused_key(xfabric), "xfabric.period_ms");
}

/// Issue 37: a wait of seconds between flows on a packet network was refused saying "the
/// Shoal simulator steps through every idle slot". The reason is the fabric's own now.
#[test]
fn an_idle_gap_is_refused_in_words_that_fit_every_fabric() {
    let text = "[scenario]\nfabric = \"dctcp\"\n[network]\nhosts = 8\nradix = 4\n\
                [workload]\nkind = \"open-loop\"\nmean_gap_ns = 5e9\nflows = 10\n\
                matrix = \"uniform\"\nsize = { dist = \"fixed\", bytes = 1000 }\n";
    let Err(e) = parse(text, "hostile.toml") else {
        panic!("a 5 s gap accepted");
    };
    assert_eq!(e.key, "workload.mean_gap_ns");
    assert!(!e.to_string().contains("Shoal"), "{e}");
}
