//! The benchmark of `shoal bench`, runnable without the CLI:
//! `cargo test --release -p shoal-rack --test bench -- --ignored --nocapture`, with
//! `SHOAL_BENCH_NODES`, `SHOAL_BENCH_PAIRS`, `SHOAL_BENCH_SLOTS` and `SHOAL_BENCH_WARMUP` to
//! change the defaults. Ignored by default: it takes tens of seconds and means nothing in a
//! debug build.

use shoal_rack::bench::{BenchOptions, run};

fn env<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

#[test]
#[ignore]
fn bench() {
    let d = BenchOptions::default();
    let nodes = env("SHOAL_BENCH_NODES").unwrap_or(d.nodes);
    let opts = BenchOptions {
        nodes,
        pairs: env("SHOAL_BENCH_PAIRS").unwrap_or(nodes as usize),
        slots: env("SHOAL_BENCH_SLOTS").unwrap_or(d.slots),
        warmup_slots: env("SHOAL_BENCH_WARMUP").unwrap_or(d.warmup_slots),
    };
    let report = run(&opts).expect("bench");
    println!("{report}");
}
