//! Every key of every registered fabric's tables and of every workload kind, given hostile
//! values (0, −1, 1e-300, 1e308, NaN, ±inf, 2^32, 2^63, wrong types): the file is refused
//! naming a key of its table, or `shoal run` runs it to the end, under a memory limit and a
//! time limit, in a process of its own, so that an abort or a hang is seen as one. Never a
//! panic, an abort or a hang.
//!
//! The keys come from the registry itself: each base scenario is resolved, and every key its
//! resolved file writes back (every default filled in) is fuzzed, so a new key of any fabric
//! is fuzzed without editing this test. The quick version (in CI, a few seconds) tries every
//! key with every hostile value; `cargo test -p shoal-cli --test fuzz_keys -- --ignored` tries
//! every key on every base that has it, with 20 random values of its type besides.

mod common;

use common::{SHOAL, scratch_in};
use shoal_scenario::{WORKLOAD_KEYS, registry};
use std::collections::BTreeMap;
use std::panic::catch_unwind;
use std::path::Path;
use std::process::Command;

/// The memory a run may take (virtual, KiB): well below the machine's 24 GiB, above any run
/// of these small bases.
const MEMORY_KIB: u64 = 12 << 20;
/// Seconds a run may take before it counts as hung.
const TIME_S: u32 = 60;

/// Small base scenarios: each fabric the registry knows (the packet fabrics by transport) and
/// each workload kind. Each runs in well under a second.
fn bases(dir: &Path) -> Vec<(String, String)> {
    let trace = dir.join("trace.csv");
    std::fs::write(
        &trace,
        "src,dst,size_bytes,start_ns\n0,1,3000,0\n2,3,1500,100\n",
    )
    .expect("trace");
    let cm = dir.join("pairs.cm");
    std::fs::write(
        &cm,
        "Nodes 8\nConnections 2\n0->1 start 0 size 3000\n2->3 start 1000 size 1500\n",
    )
    .expect("connection matrix");
    let dag = dir.join("step.csv");
    std::fs::write(
        &dag,
        "id,kind,src,dst,bytes,duration_us,after\n0,send,0,1,3000,,\n1,compute,1,,,1,0\n\
         2,send,1,2,1500,0.5,1\n",
    )
    .expect("dag");
    let rack = "[rack]\nnodes = 8\nchannels = 1\nswitch_ports = 4\ndelay_slots = 1\n";
    let open = "[workload]\nkind = \"open-loop\"\nload = 0.5\nflows = 20\nmatrix = \"uniform\"\n\
                size = { dist = \"fixed\", bytes = 3000 }\n[run]\nuntil_us = 20.0\n";
    let mut b: Vec<(String, String)> = Vec::new();
    let mut add = |name: &str, text: String| b.push((name.to_owned(), text));
    for name in registry::names() {
        let table = match registry::tables_of(name).first().copied() {
            Some("rack") => rack.to_owned(),
            Some("network") => {
                let topology = if name == "r2c2" {
                    "topology = \"torus\"\nx = 2\ny = 2\nz = 2\n"
                } else {
                    "hosts = 8\nradix = 4\n"
                };
                format!("[network]\n{topology}queue_packets = 50\n")
            }
            Some("switch") => "[switch]\nhosts = 8\n".to_owned(),
            Some("xfabric") => "[xfabric]\nsocs = 8\nports_per_soc = 3\nuplinks = 1\n".to_owned(),
            Some("stardust") => "[stardust]\ntopology = \"cell-clos\"\nfas = 4\nfas_per_pod = 4\n\
                                 fe1_per_pod = 2\nparallel = 1\nfe2 = 0\nports_per_fa = 2\n"
                .to_owned(),
            Some("clique") => "[clique]\npods = 3\ntins_per_pod = 2\nlocal_links = 1\n\
                               global_links = 1\nlocal_ports = 1\nglobal_ports = 1\n"
                .to_owned(),
            other => panic!("fabric {name}: no base for its table {other:?}: add one here"),
        };
        add(
            name,
            format!("[scenario]\nname = \"{name}\"\nfabric = \"{name}\"\n{table}{open}"),
        );
    }
    // Keys a resolved file writes only with others: Stardust's classes, low-latency VOQs,
    // other topologies and TCP at the hosts; every [run] key.
    let stardust = "[scenario]\nname = \"s\"\nfabric = \"stardust\"\n[stardust]\n";
    for (name, table) in [
        (
            "stardust classes",
            "topology = \"cell-clos\"\nfas = 4\nfas_per_pod = 4\nfe1_per_pod = 2\nparallel = 1\n\
             fe2 = 0\nports_per_fa = 2\nclasses = 2\nclass_policy = \"weighted\"\n\
             class_weights = [1, 2]\nlow_latency_classes = [1]\nlow_latency_share = 0.1\n\
             low_latency_burst_bytes = 3000\n",
        ),
        (
            "stardust leaf-spine",
            "topology = \"leaf-spine\"\nleaves = 2\nspines = 2\nfas_per_leaf = 2\n",
        ),
        (
            "stardust fat-tree tcp",
            "topology = \"fat-tree\"\nk = 4\ntransport = \"tcp\"\n",
        ),
    ] {
        add(name, format!("{stardust}{table}{open}"));
    }
    // Aquila's [failure] and [bootstrap] tables, as the committed scenarios give them (runs
    // refuse them, `shoal repro` runs them; their keys are checked when resolved).
    for name in ["aquila-failure", "aquila-bootstrap"] {
        let file = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios")
            .join(format!("{name}.toml"));
        let text = std::fs::read_to_string(file).expect("the committed scenario");
        // Their full cliques run 20 us of flows, not until the flows end.
        add(name, format!("{text}\n[run]\nuntil_us = 20.0\n"));
    }
    add(
        "dcqcn fat-tree pfc",
        format!(
            "[scenario]\nname = \"d\"\nfabric = \"dcqcn\"\n[network]\ntopology = \"fat-tree\"\n\
             k = 4\noversubscription = 1\npfc = true\n{open}"
        ),
    );
    add(
        "run keys",
        format!(
            "[scenario]\nname = \"r\"\n{rack}{}completed_flows = 10\nmeasure_from_us = 1.0\n\
             sample_every_us = 2.0\n",
            open
        ),
    );
    let workloads = [
        ("permutation", "pairs = 4\nflow_bytes = 3000\n".to_owned()),
        (
            "incast",
            "senders = [1, 2, 3]\ndst = 0\nflow_bytes = 3000\n".to_owned(),
        ),
        ("random-pairs", "flows = 10\nflow_bytes = 3000\n".to_owned()),
        (
            "probe",
            "src = 0\ndst = 1\nprobe_bytes = 64\nperiod_us = 1.0\nprobes = 5\n\
             background = { kind = \"random-pairs\", flows = 4, flow_bytes = 3000 }\n"
                .to_owned(),
        ),
        (
            "open-loop",
            "load = 0.5\nflows = 20\nmatrix = \"uniform\"\n\
             size = { dist = \"pareto\", shape = 1.05, mean_bytes = 3000, cap_bytes = 100000 }\n"
                .to_owned(),
        ),
        (
            "open-loop",
            "mean_gap_ns = 100.0\nflows = 20\nmatrix = \"hotspot\"\nhot = 1\n\
             hot_fraction = 0.5\nsize = { dist = \"fixed\", bytes = 3000 }\n"
                .to_owned(),
        ),
        (
            "open-loop",
            "load = 0.3\nflows = 20\nmatrix = \"weighted\"\nweights = [[0, 1, 1, 1, 1, 1, 1, 1], [1, 0, 1, 1, 1, 1, 1, 1], [1, 1, 0, 1, 1, 1, 1, 1], [1, 1, 1, 0, 1, 1, 1, 1], [1, 1, 1, 1, 0, 1, 1, 1], [1, 1, 1, 1, 1, 0, 1, 1], [1, 1, 1, 1, 1, 1, 0, 1], [1, 1, 1, 1, 1, 1, 1, 0]]\n\
             size = { dist = \"fixed\", bytes = 3000 }\n"
                .to_owned(),
        ),
        (
            "open-loop",
            "load = 0.3\nflows = 20\nmatrix = \"among\"\namong = [0, 1, 2]\n\
             size = { dist = \"fixed\", bytes = 3000 }\n"
                .to_owned(),
        ),
        (
            "closed-loop",
            "flows = 20\nmatrix = \"uniform\"\nsize = { dist = \"empirical\", cdf = \"websearch\" }\n"
                .to_owned(),
        ),
        ("disaggregated", "app = \"memcached-ycsb\"\nflows = 20\n".to_owned()),
        ("trace", format!("file = {:?}\n", trace.display().to_string())),
        (
            "connection-matrix",
            format!("file = {:?}\n", cm.display().to_string()),
        ),
        (
            "collective",
            "op = \"all-reduce\"\nalgorithm = \"ring\"\nranks = [0, 1, 2, 3, 4, 5, 6, 7]\n\
             message_bytes = 16000\niterations = 2\ncompute_us = 1.0\n"
                .to_owned(),
        ),
        (
            "collective",
            "placement = \"spread\"\n[[workload.jobs]]\nname = \"dp\"\nop = \"all-reduce\"\n\
             algorithm = \"double-binary-tree\"\nranks = 4\nmessage_bytes = 16000\nchunks = 2\n\
             [[workload.jobs]]\nop = \"all-to-all\"\nalgorithm = \"staged\"\ngroup_size = 2\n\
             ranks = [1, 3, 5, 7]\nmessage_bytes = 8000\niterations = 2\ncompute_us = 1.0\n"
                .to_owned(),
        ),
        ("dag", format!("file = {:?}\n", dag.display().to_string())),
        (
            "chakra",
            format!(
                "traces = {:?}\n",
                concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/data/chakra/tiny")
            ),
        ),
    ];
    for (kind, _) in WORKLOAD_KEYS {
        assert!(
            workloads.iter().any(|(k, _)| *k == kind),
            "workload kind {kind}: no base here: add one"
        );
    }
    for (kind, keys) in workloads {
        // The disaggregated profile needs several nodes of each role.
        let rack = if kind == "disaggregated" {
            rack.replace("nodes = 8", "nodes = 32")
                .replace("switch_ports = 4", "switch_ports = 8")
        } else {
            rack.to_owned()
        };
        add(
            &format!("workload {kind}"),
            format!(
                "[scenario]\nname = \"w\"\n{rack}[workload]\nkind = \"{kind}\"\n{keys}\
                 [run]\nuntil_us = 20.0\n"
            ),
        );
    }
    b
}

/// A place in a TOML document: table keys and array indices.
#[derive(Clone, Debug)]
enum Seg {
    Key(String),
    Idx(usize),
}

fn path_text(path: &[Seg]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) if s.is_empty() => s.push_str(k),
            Seg::Key(k) => {
                s.push('.');
                s.push_str(k);
            }
            Seg::Idx(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// Every leaf of `v` under `path` (arrays by their first element, and as a whole).
fn leaves(v: &toml::Value, path: &mut Vec<Seg>, out: &mut Vec<(Vec<Seg>, toml::Value)>) {
    match v {
        toml::Value::Table(t) => {
            for (k, v) in t {
                path.push(Seg::Key(k.clone()));
                leaves(v, path, out);
                path.pop();
            }
        }
        toml::Value::Array(a) => {
            out.push((path.clone(), v.clone()));
            if let Some(first) = a.first() {
                path.push(Seg::Idx(0));
                leaves(first, path, out);
                path.pop();
            }
        }
        other => out.push((path.clone(), other.clone())),
    }
}

fn set(doc: &mut toml::Value, path: &[Seg], value: toml::Value) {
    let mut at = doc;
    for seg in path {
        at = match seg {
            Seg::Key(k) => at.get_mut(k.as_str()).expect("the key"),
            Seg::Idx(i) => at.get_mut(*i).expect("the element"),
        };
    }
    *at = value;
}

/// The hostile values of a key whose resolved value is `like`: its own type's extremes and
/// every other type.
fn hostile(like: &toml::Value) -> Vec<toml::Value> {
    use toml::Value as V;
    let mut v = match like {
        V::Integer(_) => vec![
            V::Integer(0),
            V::Integer(-1),
            V::Integer(1 << 32),
            V::Integer(i64::MAX),
            V::Integer(i64::MIN),
            V::Integer(4_294_967_295),
            V::Float(1e308),
            V::Float(0.5),
        ],
        V::Float(_) => vec![
            V::Float(0.0),
            V::Float(-1.0),
            V::Float(1e-300),
            V::Float(1e308),
            V::Float(f64::NAN),
            V::Float(f64::INFINITY),
            V::Float(f64::NEG_INFINITY),
            V::Float(4_294_967_296.0),
            V::Float(1e-12),
            V::Integer(i64::MAX),
        ],
        V::String(_) => vec![
            V::String(String::new()),
            V::String("no-such-value".into()),
            V::String("\u{0}\u{7f}é".into()),
        ],
        V::Boolean(b) => vec![V::Boolean(!b)],
        V::Array(_) => vec![
            V::Array(vec![]),
            V::Array(vec![V::Integer(-1)]),
            V::Array(vec![V::Float(f64::NAN); 3]),
            V::Array(vec![V::Integer(1 << 40); 2]),
        ],
        _ => vec![],
    };
    v.extend([
        V::Boolean(true),
        V::String("x".into()),
        V::Array(vec![]),
        V::Table(toml::Table::new()),
    ]);
    v
}

/// What a case came to.
enum Outcome {
    Refused,
    Ran,
}

/// One case: the base's resolved document with `path` set to `value`. Err says what went
/// wrong (a panic, an abort, a hang, an error that names no key of its table).
fn case(
    dir: &Path,
    doc: &toml::Value,
    path: &[Seg],
    value: &toml::Value,
) -> Result<Outcome, String> {
    let mut doc = doc.clone();
    set(&mut doc, path, value.clone());
    let text = toml::to_string(&doc).map_err(|e| format!("cannot write the case: {e}"))?;
    let file = dir.join("case.toml");
    let key = path_text(path);
    let table = match &path[0] {
        Seg::Key(k) => k.clone(),
        Seg::Idx(_) => unreachable!("documents are tables"),
    };
    let origin = file.display().to_string();
    let parsed = catch_unwind(|| shoal_scenario::parse(&text, &origin).map(|s| s.resolved_toml()))
        .map_err(|_| format!("{key} = {value}: resolving panicked"))?;
    if let Ok(resolved) = &parsed {
        no_silent_change(&key, path, value, resolved)?;
    }
    if let Err(e) = parsed {
        // The key itself, or one of its table or another table of the scenario whose value
        // conflicts with it (a clique too small for the [bootstrap] table's TiNs).
        let named = e.key.starts_with(&table)
            || doc
                .as_table()
                .is_some_and(|t| t.keys().any(|k| e.key.starts_with(k.as_str())));
        if !named {
            return Err(format!("{key} = {value}: refused naming {:?}: {e}", e.key));
        }
        check_message(&key, value, &e.to_string())?;
        return Ok(Outcome::Refused);
    }
    std::fs::write(&file, &text).map_err(|e| e.to_string())?;
    let out = dir.join("out");
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {MEMORY_KIB}; exec timeout -s KILL {TIME_S} \"$@\""
        ))
        .arg("sh")
        .args([SHOAL, "run"])
        .arg(&file)
        .arg("--out")
        .arg(&out)
        .args(["--force", "--quiet", "--no-db"])
        .env("SHOAL_HUGE_PAGES", "0")
        .output()
        .map_err(|e| format!("cannot start shoal: {e}"))?;
    let err = String::from_utf8_lossy(&o.stderr);
    match o.status.code() {
        Some(0) => Ok(Outcome::Ran),
        Some(1) if err.contains("shoal: error:") && !err.contains("panicked") => {
            check_message(&key, value, &err)?;
            Ok(Outcome::Refused)
        }
        Some(101) => Err(format!("{key} = {value}: the run panicked: {err}")),
        Some(124) | Some(137) | None => Err(format!(
            "{key} = {value}: killed (hung past {TIME_S} s, or out of {} GiB): {err}",
            MEMORY_KIB >> 20
        )),
        Some(c) => Err(format!("{key} = {value}: exit {c} (an abort?): {err}")),
    }
}

/// A value that resolved is kept as given, up to the unit it is held in (a picosecond for
/// times, a bit per second for rates, the steps of a fixed-point fraction, a whole byte:
/// within 0.5%, the rule of `Keys::steps`): never clamped or rounded further silently.
fn no_silent_change(
    key: &str,
    path: &[Seg],
    value: &toml::Value,
    resolved: &str,
) -> Result<(), String> {
    let doc: toml::Value = toml::from_str(resolved).map_err(|e| format!("{key}: {e}"))?;
    let mut at = &doc;
    for seg in path {
        let next = match seg {
            Seg::Key(k) => at.get(k.as_str()),
            Seg::Idx(i) => at.get(*i),
        };
        let Some(next) = next else {
            // Written back under another key (a latency as delay slots, say): not comparable.
            return Ok(());
        };
        at = next;
    }
    let unit = if key.ends_with("_ns") {
        5e-4
    } else if key.ends_with("_us") {
        5e-7
    } else if key.ends_with("_gbps") {
        1e-9
    } else {
        0.0
    };
    let same = match (value, at) {
        (toml::Value::Float(a), toml::Value::Float(b)) => {
            (a - b).abs() <= 5e-3 * a.abs().max(b.abs()) + unit
        }
        (toml::Value::Integer(a), toml::Value::Float(b)) => {
            (*a as f64 - b).abs() <= 1e-9 * b.abs() + unit
        }
        (toml::Value::Float(a), toml::Value::Integer(b)) => (a - *b as f64).abs() < 1e-9,
        (toml::Value::Integer(a), toml::Value::Integer(b)) => a == b,
        _ => true,
    };
    if same {
        Ok(())
    } else {
        Err(format!("{key} = {value} resolved to {at}"))
    }
}

/// A refusal's message is short and names numbers in a readable form (1e308, not 309 digits).
fn check_message(key: &str, value: &toml::Value, msg: &str) -> Result<(), String> {
    let digits = msg
        .split(|c: char| !c.is_ascii_digit())
        .map(str::len)
        .max()
        .unwrap_or(0);
    if digits > 24 {
        return Err(format!(
            "{key} = {value}: a number of {digits} digits in: {msg}"
        ));
    }
    Ok(())
}

/// Values of the type of `like` drawn from `rng`: integers spread over every magnitude,
/// floats over every exponent, either sign.
fn random_values(like: &toml::Value, rng: &mut u64, n: usize) -> Vec<toml::Value> {
    let mut next = || {
        // xorshift64*: a fixed sequence, so a failure is found again by the same run.
        *rng ^= *rng >> 12;
        *rng ^= *rng << 25;
        *rng ^= *rng >> 27;
        rng.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    (0..n)
        .filter_map(|_| {
            let r = next();
            let sign = if r & 1 == 0 { 1 } else { -1 };
            match like {
                toml::Value::Integer(_) => {
                    Some(toml::Value::Integer(sign * (next() >> (r % 64)) as i64 / 2))
                }
                toml::Value::Float(_) => {
                    let exp = (r % 80) as i32 - 40;
                    let mantissa = (next() % 1000) as f64 / 100.0;
                    Some(toml::Value::Float(sign as f64 * mantissa * 10f64.powi(exp)))
                }
                _ => None,
            }
        })
        .collect()
}

/// The quick version: every key once (on the first base that has it; the packet fabrics share
/// [network]) with every hostile value. The long one: every key on every base that has it,
/// with every hostile value and `random` more of its type.
fn fuzz(long: bool) {
    let dir = scratch_in("shoal-cli-fuzz", if long { "long" } else { "quick" });
    let mut keys: BTreeMap<(String, usize), (Vec<Seg>, toml::Value)> = BTreeMap::new();
    let bases = bases(&dir);
    let mut docs = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (i, (name, text)) in bases.iter().enumerate() {
        let s = shoal_scenario::parse(text, "base.toml")
            .unwrap_or_else(|e| panic!("base {name} does not resolve: {e}"));
        let doc: toml::Value = toml::from_str(&s.resolved_toml()).expect("resolved TOML");
        let mut found = Vec::new();
        leaves(&doc, &mut Vec::new(), &mut found);
        for (path, like) in found {
            let text = path_text(&path);
            if matches!(
                text.as_str(),
                "scenario.name" | "scenario.description" | "scenario.tool_version"
            ) {
                continue;
            }
            if seen.insert(text.clone()) || long {
                keys.insert((text, i), (path, like));
            }
        }
        docs.push(doc);
    }
    let (mut refused, mut ran, mut failures) = (0, 0, Vec::new());
    let mut rng = 0x5eed_u64;
    for ((_, base), (path, like)) in &keys {
        let mut values = hostile(like);
        if long {
            values.extend(random_values(like, &mut rng, 20));
        }
        for value in &values {
            match case(&dir, &docs[*base], path, value) {
                Ok(Outcome::Refused) => refused += 1,
                Ok(Outcome::Ran) => ran += 1,
                Err(e) => failures.push(format!("[{}] {e}", bases[*base].0)),
            }
        }
    }
    let mut per_table: BTreeMap<&str, usize> = BTreeMap::new();
    for (key, _) in keys.keys() {
        *per_table
            .entry(key.split('.').next().unwrap_or(""))
            .or_default() += 1;
    }
    eprintln!("keys per table: {per_table:?}");
    eprintln!(
        "{} keys of {} bases: {refused} refused, {ran} ran, {} failed",
        keys.len(),
        bases.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(ran > 0 && refused > 0, "{ran} ran, {refused} refused");
}

#[test]
fn hostile_values_of_every_registered_key_are_refused_or_run() {
    fuzz(false);
}

#[test]
#[ignore = "long: cargo test -p shoal-cli --test fuzz_keys -- --ignored"]
fn hostile_values_of_every_registered_key_are_refused_or_run_long() {
    fuzz(true);
}
