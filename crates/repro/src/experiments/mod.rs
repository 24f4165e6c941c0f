//! One module per paper figure or claim.

use crate::Experiment;

mod aquila_bootstrap;
mod aquila_failure;
mod aquila_fig10;
mod aquila_fig6;
mod aquila_fig7;
mod aquila_fig8;
mod aquila_fig9;
mod aquila_lookups;
mod aquila_theory;
mod collectives;
mod epoch;
mod fairness;
mod fig09;
mod fig10;
mod fig11;
mod fig12;
mod fig13;
mod fig14;
mod fig15;
mod fig15_baselines;
mod fig17;
mod fig18;
mod power;
mod sizing;
mod stardust_failures;
mod stardust_fig10a;
mod stardust_fig10b;
mod stardust_fig10c;
mod stardust_fig11;
mod stardust_fig7;
mod stardust_fig9;
mod stardust_incast;
mod stardust_models;
mod table1;
mod xfabric_common;
mod xfabric_fig2;
mod xfabric_fig3;
mod xfabric_fig4;
mod xfabric_fig5;
mod xfabric_fig6a;
mod xfabric_fig6b;
mod xfabric_production;

pub(crate) const ALL: &[Experiment] = &[
    Experiment {
        name: "fig9",
        figure: "Shoal Fig. 9",
        results: Some("shoal-core.md"),
        summary: "prototype: full-permutation throughput vs slot size",
        run: fig09::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "fig10",
        figure: "Shoal Fig. 10",
        results: Some("shoal-core.md"),
        summary: "prototype: 7:1 incast of seven cells",
        run: fig10::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "fig12",
        figure: "Shoal Fig. 12",
        results: Some("shoal-core.md"),
        summary: "512 nodes: destination throughput vs permutation pairs",
        run: fig12::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "fairness",
        figure: "Shoal §7.2",
        results: Some("shoal-core.md"),
        summary: "512 nodes: random flows against their max-min rates",
        run: fairness::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "fig13",
        figure: "Shoal Fig. 13",
        results: Some("shoal-core.md"),
        summary: "512 nodes: incast of 130 KB flows from a growing number of senders",
        run: fig13::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "fig14",
        figure: "Shoal Fig. 14",
        results: Some("shoal-core.md"),
        summary: "512 nodes: short probe flows with and without the §3.3.3 optimisations",
        run: fig14::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "fig15",
        figure: "Shoal Fig. 15-16",
        results: Some("shoal-datacenter.md"),
        summary: "512 nodes: datacenter workload vs load (FCT, goodput, queues, reordering)",
        run: fig15::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "fig15-baselines",
        figure: "Shoal Fig. 15",
        results: Some("baselines.md"),
        summary: "512 nodes: Shoal vs DCTCP, DCQCN, NDP (Clos) and R2C2 (torus) on one workload",
        run: fig15_baselines::run,
        timed: false,
        scale: Some(fig15_baselines::SCALE),
    },
    Experiment {
        name: "fig17",
        figure: "Shoal Fig. 17",
        results: Some("shoal-datacenter.md"),
        summary: "512 nodes: datacenter workload at load 1 with 0-50% of the nodes failed",
        run: fig17::run,
        timed: false,
        scale: Some(fig17::SCALE),
    },
    Experiment {
        name: "fig18",
        figure: "Shoal Fig. 18",
        results: Some("shoal-datacenter.md"),
        summary: "512 nodes: the six disaggregated applications (§7.4)",
        run: fig18::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "epoch",
        figure: "Shoal §7.3",
        results: Some("shoal-datacenter.md"),
        summary: "512 nodes: tail FCT with a twice longer epoch (2 x 50 Gb/s, 1,024 nodes)",
        run: epoch::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "table1",
        figure: "Shoal Table 1",
        results: Some("shoal-core.md"),
        summary: "slots lost to a failed node, link or switch of the Clos",
        run: table1::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "sizing",
        figure: "Shoal §3, App. B",
        results: None,
        summary: "models: Clos capacity, slot, guard band, epoch, NIC memory vs App. B's FPGA",
        run: sizing::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "stardust-models",
        figure: "Stardust App. A, B, E, §4-§6",
        results: Some("stardust.md"),
        summary: "models: fat-tree counts, parallelism, credit size, element memory, reachability, M/D/1",
        run: stardust_models::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "stardust-fig11",
        figure: "Stardust Fig. 11, §7",
        results: Some("stardust.md"),
        summary: "models: cost and power of Stardust against fat-trees of 25G, 50G and 100G links, 1K-1M hosts (our prices and watts: the paper's are lost)",
        run: stardust_fig11::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "aquila-fig6",
        figure: "Aquila Fig. 6",
        results: Some("aquila-fig6.md"),
        summary: "fabric RTT under uniform random IP traffic at growing load: < 20 us at 70%, < 40 us near line rate",
        run: aquila_fig6::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "aquila-fig7",
        figure: "Aquila Fig. 7",
        results: Some("aquila-fig7.md"),
        summary: "1RMA 4 KB reads by CliqueMap clients at growing load: execution < 10 us, median near 4 us, fabric 2.5-3 us",
        run: aquila_fig7::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "aquila-fig8",
        figure: "Aquila Fig. 8",
        results: Some("aquila-fig8.md"),
        summary: "1RMA isolation from bulk IP: high-priority 1RMA median and tail < 5 us with or without bulk IP, just over 10 us sharing VCs with it",
        run: aquila_fig8::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "aquila-fig9",
        figure: "Aquila Fig. 9",
        results: Some("aquila-fig9.md"),
        summary: "burstiness: 0.6 Gb/s of IP RPCs per host, growing RPC size: tail fabric RTT grows > 40 us on the full clique, not at half scale",
        run: aquila_fig9::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "aquila-fig10",
        figure: "Aquila Fig. 10",
        results: Some("aquila-fig10.md"),
        summary: "CliqueMap 4 KB lookups by 1RMA vs IP RPC: 50% lower median and tail at low QPS, > 3x at high QPS",
        run: aquila_fig10::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "stardust-fig9",
        figure: "Stardust Fig. 9",
        results: Some("stardust.md"),
        summary: "two tiers, 128K flows: traversal latency and last-stage queue vs M/D/1, FCI at 120%",
        run: stardust_fig9::run,
        timed: false,
        scale: Some(stardust_fig9::SCALE),
    },
    Experiment {
        name: "aquila-bootstrap",
        figure: "Aquila §4.4",
        results: Some("aquila-bootstrap.md"),
        summary: "in-band bootstrap in waves: per-TiN times 3-48 min, a full clique in about 2.5 hours",
        run: aquila_bootstrap::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "aquila-failure",
        figure: "Aquila §3.2 failures",
        results: Some("aquila-failure.md"),
        summary: "a global and a local link fail under load: adaptive routing, then the SDN, route around them; only their cells lost",
        run: aquila_failure::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "aquila-theory",
        figure: "Aquila §3.2-3.3",
        results: Some("aquila-theory.md"),
        summary: "Dragonfly at full load: uniform random, pod shift (minimal, Valiant, adaptive), RTS incast",
        run: aquila_theory::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "stardust-failures",
        figure: "Stardust §5.9, App. E",
        results: Some("stardust.md"),
        summary: "a link and a second-tier element fail under load: reroute time against App. E, cells lost, throughput kept",
        run: stardust_failures::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "stardust-incast",
        figure: "Stardust §5.3",
        results: Some("stardust.md"),
        summary: "128 adapters send 1 MB each to one 50 Gb/s port: admitted at the port rate, held at the sources, nothing lost, even draining",
        run: stardust_incast::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "stardust-fig7",
        figure: "Stardust Fig. 7, App. F",
        results: Some("stardust.md"),
        summary: "two 100 Gb/s ports, three flows: Stardust runs both ports at their rate, twice an Ethernet fabric's throughput with classes",
        run: stardust_fig7::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "stardust-fig10a",
        figure: "Stardust Fig. 10(a)",
        results: Some("stardust.md"),
        summary: "TCP over Stardust on the 432-node k = 12 fat-tree, a permutation, against DCTCP, DCQCN and MPTCP: mean utilisation and flows at 9.44 Gb/s",
        run: stardust_fig10a::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "stardust-fig10b",
        figure: "Stardust Fig. 10(b)",
        results: Some("stardust.md"),
        summary: "FCT between one pair of the 432-node fat-tree while every other host sources four long flows: TCP over Stardust against DCTCP, DCQCN and MPTCP",
        run: stardust_fig10b::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "stardust-fig10c",
        figure: "Stardust Fig. 10(c)",
        results: Some("stardust.md"),
        summary: "incast of 450 KB responses from up to 431 backends: Stardust's last completion against DCTCP's and MPTCP's, first against last, nothing lost",
        run: stardust_fig10c::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "power",
        figure: "Shoal §5",
        results: None,
        summary: "models: power of a 512-node Shoal rack against a packet-switched Clos",
        run: power::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "fig11",
        figure: "Shoal Fig. 11",
        results: None,
        summary: "models: Shoal's cost vs the packet network's against the switch cost ratio",
        run: fig11::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "xfabric-fig2",
        figure: "XFabric Fig. 2",
        results: Some("xfabric.md"),
        summary: "343 SoCs: path length, diversity, bottleneck of XFabric/OSA/torus/Random",
        run: xfabric_fig2::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "xfabric-fig3",
        figure: "XFabric Fig. 3",
        results: Some("xfabric.md"),
        summary: "343 SoCs: path length vs cluster size and vs destinations per SoC",
        run: xfabric_fig3::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "xfabric-fig4",
        figure: "XFabric Fig. 4",
        results: Some("xfabric.md"),
        summary: "Production: path length vs rack size, uplink path length",
        run: xfabric_fig4::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "xfabric-fig5",
        figure: "XFabric Fig. 5",
        results: Some("xfabric.md"),
        summary: "27-SoC prototype, TCP: path length and completion vs reconfiguration period",
        run: xfabric_fig5::run,
        timed: false,
        scale: Some(xfabric_fig5::SCALE),
    },
    Experiment {
        name: "xfabric-fig6a",
        figure: "XFabric Fig. 6(a)",
        results: Some("xfabric.md"),
        summary: "topology generation time, Algorithm 1 vs OSA, 27 to 1,024 SoCs (wall clock)",
        run: xfabric_fig6a::run,
        timed: true,
        scale: None,
    },
    Experiment {
        name: "xfabric-fig6b",
        figure: "XFabric Fig. 6(b)",
        results: Some("xfabric.md"),
        summary: "27 SoCs: time for every SoC to use its new tables in one reconfiguration",
        run: xfabric_fig6b::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "xfabric-production",
        figure: "XFabric Production stand-in",
        results: Some("xfabric.md"),
        summary: "343 SoCs: Fig. 2/4 Production claims across the stand-in's plausible parameters",
        run: xfabric_production::run,
        timed: false,
        scale: None,
    },
    Experiment {
        name: "collectives",
        figure: "Collectives (theory)",
        results: Some("collectives.md"),
        summary: "ring and halving-doubling all-reduce, all-to-all: bus bandwidth vs message size on every fabric at 50 Gb/s per node; a ring beside an MoE all-to-all",
        run: collectives::run,
        timed: false,
        scale: Some(collectives::SCALE),
    },
];
