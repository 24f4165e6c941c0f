//! Our six application profiles, standing for the paper's four kinds of workload. Every
//! number here is an assumption (the traces behind §7.4 are not available); each profile says
//! why in its `rationale` and its classes' `what`.

use super::profile::{AppProfile, PerRole, Role, TrafficClass};
use crate::sizes::SizeDist;
use serde::{Deserialize, Serialize};

/// A 4 KiB page: the unit in which a disaggregated CPU fetches and evicts remote memory
/// (Gao et al. model remote memory as paging at page granularity).
const PAGE: u64 = 4096;

/// The six applications standing for the paper's four kinds of disaggregated workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum App {
    HadoopWordcount,
    HadoopSort,
    GraphlabCf,
    TimelyPagerank,
    MemcachedYcsb,
    SparkSql,
}

/// Page traffic of a CPU node working on remote memory: fetches (memory→CPU) and evictions of
/// dirty pages (CPU→memory), both one page.
fn paging(fetch: f64, evict: f64) -> [TrafficClass; 2] {
    [
        TrafficClass {
            from: Role::Memory,
            to: Role::Cpu,
            weight: fetch,
            sizes: SizeDist::Fixed(PAGE),
            what: "remote memory page fetches on page faults, one 4 KiB page each".into(),
        },
        TrafficClass {
            from: Role::Cpu,
            to: Role::Memory,
            weight: evict,
            sizes: SizeDist::Fixed(PAGE),
            what: "evictions of dirty pages to remote memory, one 4 KiB page each".into(),
        },
    ]
}

/// A heavy-tailed size: Pareto of shape 1.5 with the given uncapped mean, clamped at `cap`.
fn tail(mean: f64, cap: u64) -> SizeDist {
    SizeDist::Pareto {
        shape: 1.5,
        mean,
        cap: Some(cap),
    }
}

fn class(from: Role, to: Role, weight: f64, sizes: SizeDist, what: &str) -> TrafficClass {
    TrafficClass {
        from,
        to,
        weight,
        sizes,
        what: what.into(),
    }
}

impl App {
    pub fn all() -> [App; 6] {
        [
            App::HadoopWordcount,
            App::HadoopSort,
            App::GraphlabCf,
            App::TimelyPagerank,
            App::MemcachedYcsb,
            App::SparkSql,
        ]
    }

    /// The kebab-case name, as scenario files and serde write it.
    pub fn name(self) -> &'static str {
        match self {
            App::HadoopWordcount => "hadoop-wordcount",
            App::HadoopSort => "hadoop-sort",
            App::GraphlabCf => "graphlab-cf",
            App::TimelyPagerank => "timely-pagerank",
            App::MemcachedYcsb => "memcached-ycsb",
            App::SparkSql => "spark-sql",
        }
    }

    /// Our parameter profile for the application. Common assumptions: memory traffic is
    /// page-sized and makes most flows (remote memory is the traffic disaggregation adds);
    /// storage and application (CPU↔CPU) transfers are Pareto of shape 1.5, clamped; a third
    /// of each role is hot. Shares and sizes are chosen so that the mean flow is 3 to 7 KB and,
    /// at 512 nodes of 100 Gb/s with §7.4's 12.65 ns gap, the rack-wide load is 0.04 to 0.09 and
    /// no node is offered more than about 0.4 of its rate on average (hot nodes carry 3 to 6
    /// times the mean; see [`super::DisaggSummary::peak_node_load`]). The bound matters: the
    /// paper's fabrics carry at most 50 Gb/s of a node's own traffic (the packet-switched
    /// baselines' links; Shoal's 100 Gb/s halved by detour, less cell headers and guard bands:
    /// about 38.5 Gb/s), and the paper reports queues of a few cells for every application, so
    /// its workload cannot have overloaded any node. Storage blocks of 64 KB, as we first had,
    /// offered 72-75 Gb/s to the busiest node of three applications.
    pub fn profile(self) -> AppProfile {
        use Role::{Cpu, Storage};
        // Storage I/O: requests of Pareto size, 16 KB uncapped mean, clamped at 4 MB (mean
        // about 15 KB, 0.04% of them 1 MB or more, so there are a few long flows to measure).
        let block = || tail(16e3, 4_000_000);
        let (category, roles, classes, hot_share, rationale): (_, _, Vec<TrafficClass>, _, _) =
            match self {
                App::HadoopWordcount => (
                    "batch processing",
                    (0.5, 0.3, 0.2),
                    [
                        paging(0.62, 0.22).to_vec(),
                        vec![
                            class(
                                Storage,
                                Cpu,
                                0.07,
                                block(),
                                "input splits read from storage",
                            ),
                            class(
                                Cpu,
                                Cpu,
                                0.06,
                                tail(32e3, 1_000_000),
                                "shuffle of combined word counts (small after the combiner)",
                            ),
                            class(
                                Cpu,
                                Storage,
                                0.03,
                                block(),
                                "reduce output written to storage",
                            ),
                        ],
                    ]
                    .concat(),
                    0.86,
                    "map-heavy scan: input read once, little shuffle; paging makes most flows",
                ),
                App::HadoopSort => (
                    "batch processing",
                    (0.55, 0.25, 0.2),
                    [
                        paging(0.52, 0.26).to_vec(),
                        vec![
                            class(
                                Storage,
                                Cpu,
                                0.07,
                                block(),
                                "input splits read from storage",
                            ),
                            class(
                                Cpu,
                                Cpu,
                                0.09,
                                block(),
                                "shuffle: every record crosses the network once",
                            ),
                            class(
                                Cpu,
                                Storage,
                                0.06,
                                block(),
                                "sorted output, as large as the input, written to storage",
                            ),
                        ],
                    ]
                    .concat(),
                    0.86,
                    "shuffle-heavy: output as large as the input; more evictions than WordCount",
                ),
                App::GraphlabCf => (
                    "graph processing",
                    (0.5, 0.4, 0.1),
                    [
                        paging(0.60, 0.28).to_vec(),
                        vec![
                            class(
                                Cpu,
                                Cpu,
                                0.11,
                                tail(16e3, 512_000),
                                "vertex and edge updates exchanged between workers",
                            ),
                            class(Storage, Cpu, 0.01, block(), "graph loaded from storage"),
                        ],
                    ]
                    .concat(),
                    0.87,
                    "in-memory graph larger than local memory: random page accesses",
                ),
                App::TimelyPagerank => (
                    "graph processing",
                    (0.55, 0.35, 0.1),
                    [
                        paging(0.50, 0.20).to_vec(),
                        vec![
                            class(
                                Cpu,
                                Cpu,
                                0.29,
                                tail(8e3, 256_000),
                                "rank updates exchanged between dataflow workers each iteration",
                            ),
                            class(Storage, Cpu, 0.01, block(), "graph loaded from storage"),
                        ],
                    ]
                    .concat(),
                    0.86,
                    "message-heavy iterative dataflow with small messages",
                ),
                App::MemcachedYcsb => (
                    "interactive queries",
                    (0.4, 0.6, 0.0),
                    [
                        paging(0.62, 0.13).to_vec(),
                        vec![class(
                            Cpu,
                            Cpu,
                            0.25,
                            SizeDist::Fixed(1100),
                            "YCSB requests and responses: 1 KB records plus headers",
                        )],
                    ]
                    .concat(),
                    0.90,
                    "key-value store on remote memory; Zipfian keys make it the most skewed; \
                     no storage traffic",
                ),
                App::SparkSql => (
                    "relational queries",
                    (0.55, 0.2, 0.25),
                    [
                        paging(0.57, 0.18).to_vec(),
                        vec![
                            class(Storage, Cpu, 0.09, block(), "table scans read from storage"),
                            class(
                                Cpu,
                                Cpu,
                                0.14,
                                tail(16e3, 2_000_000),
                                "join and aggregation shuffles",
                            ),
                            class(
                                Cpu,
                                Storage,
                                0.02,
                                block(),
                                "query results written to storage",
                            ),
                        ],
                    ]
                    .concat(),
                    0.86,
                    "scan-heavy analytical queries (Big Data Benchmark style)",
                ),
            };
        AppProfile {
            name: self.name().into(),
            category: category.into(),
            roles: PerRole {
                cpu: roles.0,
                memory: roles.1,
                storage: roles.2,
            },
            classes,
            hot_nodes: 1.0 / 3.0,
            hot_share,
            rationale: rationale.into(),
        }
    }
}
