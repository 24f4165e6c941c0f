//! Topology generation time (the paper's Fig. 6(a)): Algorithm 1 against OSA's b-matching for
//! racks of 27 to 1,024 SoCs with d = 6, on a skewed random demand. The paper reports XFabric
//! under 700 ms up to 512 SoCs and about 3 s at 1,024, and OSA 20.5 s at 1,024.
//!
//! Run with `cargo bench -p shoal-xfabric --bench topology`. Each XFabric time is the median of
//! five runs; OSA runs once per size from 256 SoCs on, and stops growing once a run takes longer
//! than `OSA_BUDGET` (the next size would take minutes). OSA is not timed on the dense demand: its
//! reduction would hold a gadget for each of the n(n − 1)/2 pairs.

use shoal_xfabric::{
    Rack, RackSpec, dense_random_demand, generate_topology, osa_topology, skewed_random_demand,
};
use std::hint::black_box;
use std::time::{Duration, Instant};

const SIZES: [usize; 6] = [27, 64, 128, 256, 512, 1024];
const PORTS: usize = 6;
const DESTINATIONS: usize = 8;
const SEED: u64 = 2016;
const OSA_BUDGET: Duration = Duration::from_secs(60);

/// The median wall-clock time of `runs` calls of `f`.
#[allow(clippy::disallowed_methods)]
fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> Duration {
    let mut samples: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            black_box(f());
            start.elapsed()
        })
        .collect();
    samples.sort_unstable();
    samples[runs / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    println!("topology generation, d = {PORTS}, {DESTINATIONS} destinations per SoC, one core");
    println!(
        "{:>6} {:>12} {:>12} {:>8} {:>18}",
        "n", "XFabric ms", "OSA ms", "ratio", "XFabric dense ms"
    );
    let mut osa_fits = true;
    for socs in SIZES {
        let demand = skewed_random_demand(socs, DESTINATIONS, SEED);
        let rack = Rack::new(
            RackSpec {
                socs,
                ports_per_soc: PORTS,
                uplinks: 8,
            },
            SEED,
        )
        .expect("the benchmark racks are valid");
        let xfabric = time(5, || {
            generate_topology(&rack, &demand, SEED).expect("d = 6 always connects")
        });
        let dense = dense_random_demand(socs, SEED);
        let xfabric_dense = time(5, || {
            generate_topology(&rack, &dense, SEED).expect("d = 6 always connects")
        });
        let osa = osa_fits.then(|| {
            let runs = if socs < 256 { 5 } else { 1 };
            time(runs, || {
                osa_topology(&demand, PORTS, SEED).expect("d = 6 always connects")
            })
        });
        let (osa_ms, ratio) = match osa {
            Some(osa) => {
                osa_fits = osa < OSA_BUDGET;
                (
                    format!("{:.1}", ms(osa)),
                    format!("{:.0}", osa.as_secs_f64() / xfabric.as_secs_f64()),
                )
            }
            None => ("skipped".to_string(), "-".to_string()),
        };
        println!(
            "{socs:>6} {:>12.2} {osa_ms:>12} {ratio:>8} {:>18.2}",
            ms(xfabric),
            ms(xfabric_dense)
        );
    }
}
