//! 1RMA reads (§3.4) and IP RPCs through the clique, driven by CliqueMap-like lookups under
//! Swift: whatever the load, the routing mode and the value size, every lookup completes
//! exactly once with exactly its bytes (IP packets dropped by CTD are sent again), no cell is
//! dropped for lack of credit and the clique ends at rest.

use proptest::prelude::*;
use shoal_aquila::cliquemap::{Bulk, Lookups, Transport};
use shoal_aquila::routing::Mode;
use shoal_aquila::spec::Injection;
use shoal_aquila::{Spec, lookups, lookups_beside};
use shoal_base::{Dur, Time};
use shoal_topology::Dragonfly;

/// 3 pods of 2 TiNs, two hosts each (12 hosts).
fn tiny(mode: Mode, seed: u64) -> Spec {
    let full = Spec::aquila();
    Spec {
        dragonfly: Dragonfly {
            pods: 3,
            tins_per_pod: 2,
            local_links: 1,
            global_links: 1,
            local_ports: 1,
            global_ports: 2,
            ..full.dragonfly.clone()
        },
        mode,
        seed,
        ..full
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn every_read_completes_once_with_its_bytes(
        seed in 1u64..1000,
        load in 0.1f64..1.2,
        value_bytes in 1u32..9000,
        mode in prop::sample::select(Mode::ALL.to_vec()),
    ) {
        let spec = tiny(mode, seed);
        let qps = Lookups::qps_for_load(load, spec.host_rate, &spec.rma, value_bytes);
        let run = lookups(
            &spec,
            Lookups {
                qps_per_client: qps,
                value_bytes,
                until: Time::ZERO + Dur::from_us(20),
                transport: Transport::Rma,
            },
            Time::ZERO,
        ).expect("runs");
        let c = &run.counters;
        prop_assert!(!run.reads.is_empty());
        prop_assert_eq!(c.rma_reads_issued, run.reads.len() as u64);
        prop_assert_eq!(c.rma_reads_completed, c.rma_reads_issued);
        prop_assert_eq!(c.rma_req_cells, c.rma_reads_issued);
        let completions: u64 = run.reads.iter().map(|r| u64::from(r.bytes.div_ceil(128))).sum();
        prop_assert_eq!(c.rma_resp_cells, completions);
        for r in &run.reads {
            prop_assert_eq!(r.completions, 1);
            prop_assert_eq!(r.received, r.bytes);
            prop_assert_eq!(r.bytes, value_bytes);
            prop_assert!(r.initiator != r.target);
            // Swift's window may hold a lookup before the hardware sees it.
            prop_assert!(r.arrived <= r.issued);
            let exec = r.execution().expect("completed");
            // At least the PCIe part and a Req's and a Resp's trip through one switch.
            prop_assert!(exec > r.pcie + Dur(2 * spec.fall_through.0));
        }
        prop_assert_eq!(c.credit_overflows, 0);
        prop_assert_eq!(c.hop_limit_drops, 0);
        prop_assert_eq!(run.in_flight, 0);
        prop_assert_eq!(c.cells_delivered, c.cells_injected);
        prop_assert!(run.at_rest);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Lookups by IP RPC: every one completes once with exactly its value's bytes, and the
    /// clique (RTS/CTS admission, reassembly, the backends' software queues, Swift's windows)
    /// ends at rest, even when the egress clears packets to drop (CTD): a shallow CTD
    /// threshold makes drops common, and every dropped packet is sent again. The lookup rate
    /// is the one of values of at least 1 KB (`qps_for_load` counts 1RMA's cells, far smaller
    /// than the IP packets, RTS, CTS and acknowledgements an RPC of a tiny value takes: at its
    /// rate for 3 B values the RPCs would build milliseconds of backlog).
    #[test]
    fn every_rpc_completes_once_with_its_bytes(
        seed in 1u64..1000,
        load in 0.1f64..1.2,
        value_bytes in 1u32..9000,
        service_ns in 0u64..3000,
        ctd_depth in 1u32..8,
    ) {
        let spec = Spec { ctd_depth, ..tiny(Mode::FullyAdaptive, seed) };
        let rated = value_bytes.max(1024);
        let qps = Lookups::qps_for_load(load, spec.host_rate, &spec.rma, rated);
        let service = Dur(service_ns * 1000);
        let run = lookups(
            &spec,
            Lookups {
                qps_per_client: qps,
                value_bytes,
                until: Time::ZERO + Dur::from_us(20),
                transport: Transport::IpRpc { service },
            },
            Time::ZERO,
        ).expect("runs");
        let c = &run.counters;
        prop_assert!(!run.rpcs.is_empty());
        prop_assert!(run.reads.is_empty());
        prop_assert_eq!(c.rpcs_completed, c.rpcs_issued);
        prop_assert_eq!(c.rpcs_issued, run.rpcs.len() as u64);
        for r in &run.rpcs {
            prop_assert_eq!(r.completions, 1);
            prop_assert_eq!(r.received, r.bytes);
            prop_assert!(r.client != r.server);
            // At least the backend's service and two trips through a switch.
            let latency = r.latency().expect("completed");
            prop_assert!(latency > service + Dur(2 * spec.fall_through.0));
        }
        prop_assert_eq!(c.resent_packets, c.ctd_drops);
        prop_assert_eq!(c.credit_overflows, 0);
        prop_assert_eq!(run.in_flight, 0);
        prop_assert!(run.at_rest);
    }
}

/// An incast of RPCs at a CTD threshold of one waiting RTS: many packets are dropped, every
/// one is sent again, and every RPC still completes exactly once.
#[test]
fn rpcs_complete_once_through_heavy_ctd_drops() {
    let spec = Spec {
        ctd_depth: 1,
        ..tiny(Mode::FullyAdaptive, 5)
    };
    let qps = Lookups::qps_for_load(1.5, spec.host_rate, &spec.rma, 16_384);
    let run = lookups(
        &spec,
        Lookups {
            qps_per_client: qps,
            value_bytes: 16_384,
            until: Time::ZERO + Dur::from_us(20),
            transport: Transport::IpRpc {
                service: Dur::from_ns(100),
            },
        },
        Time::ZERO,
    )
    .expect("runs");
    let c = &run.counters;
    assert!(c.ctd_drops > 50, "{} drops", c.ctd_drops);
    assert_eq!(c.resent_packets, c.ctd_drops);
    assert_eq!(c.rpcs_completed, c.rpcs_issued);
    assert!(
        run.rpcs
            .iter()
            .all(|r| r.completions == 1 && r.received == r.bytes)
    );
    assert!(run.at_rest);
}

#[test]
fn lookup_runs_are_deterministic() {
    let spec = tiny(Mode::FullyAdaptive, 3);
    let l = Lookups {
        qps_per_client: 500_000.0,
        value_bytes: 4096,
        until: Time::ZERO + Dur::from_us(10),
        transport: Transport::Rma,
    };
    let a = lookups(&spec, l, Time::ZERO).expect("runs");
    let b = lookups(&spec, l, Time::ZERO).expect("runs");
    assert_eq!(a.reads, b.reads);
    assert_eq!(a.counters, b.counters);
    let c = lookups(&Spec { seed: 4, ..spec }, l, Time::ZERO).expect("runs");
    assert_ne!(a.reads, c.reads, "the seed drives the lookups");
}

#[test]
fn bad_lookups_are_refused() {
    let spec = tiny(Mode::FullyAdaptive, 1);
    let l = Lookups {
        qps_per_client: 0.0,
        value_bytes: 4096,
        until: Time::ZERO,
        transport: Transport::Rma,
    };
    assert!(lookups(&spec, l, Time::ZERO).is_err());
    let mut bad = spec.clone();
    bad.rma.completion_bytes = 200;
    let l = Lookups {
        qps_per_client: 1.0,
        ..l
    };
    let e = lookups(&bad, l, Time::ZERO).expect_err("a 200 B completion does not fit");
    assert!(e.contains("200 B"), "{e}");
    let raw = Spec {
        injection: Injection::RawCells,
        ..spec
    };
    let rpc = Lookups {
        transport: Transport::IpRpc {
            service: Dur::from_us(1),
        },
        ..l
    };
    let e = lookups(&raw, rpc, Time::ZERO).expect_err("RPCs need RTS/CTS");
    assert!(e.contains("rts-cts"), "{e}");
}

/// 1RMA beside bulk IP (Fig. 8): every read and every bulk message runs to its end, and
/// 1RMA's Resp cells in VCs of their own, served 8 for 1 against the bulk class, see a lower
/// mean and 99th-percentile execution time than when they share the bulk IP's VCs.
#[test]
fn separate_vcs_isolate_reads_from_bulk_ip() {
    let spec = tiny(Mode::FullyAdaptive, 2);
    let l = Lookups {
        qps_per_client: Lookups::qps_for_load(0.1, spec.host_rate, &spec.rma, 4096),
        value_bytes: 4096,
        until: Time::ZERO + Dur::from_us(60),
        transport: Transport::Rma,
    };
    let run = |shares: bool| {
        let bulk = Bulk {
            qps_per_host: 100_000.0,
            bytes: 64 * 1024,
            rma_shares_bulk_vcs: shares,
        };
        let out = lookups_beside(&spec, l, Some(bulk), Time::ZERO).expect("runs");
        assert!(out.at_rest && out.in_flight == 0);
        assert_eq!(out.counters.credit_overflows, 0);
        assert!(
            out.reads
                .iter()
                .all(|r| r.completions == 1 && r.received == r.bytes)
        );
        // 100,000 messages of 64 KB a second per host, 52 Gb/s offered: more than the tiny
        // clique's single global links carry, so the bulk queues wherever it goes.
        assert!(out.bulk_payload_bytes > 0);
        let mut exec: Vec<u64> = out.reads.iter().map(|r| r.execution().unwrap().0).collect();
        exec.sort_unstable();
        let mean = exec.iter().sum::<u64>() as f64 / exec.len() as f64;
        (mean, exec[exec.len() * 99 / 100])
    };
    let (high_mean, high_p99) = run(false);
    let (low_mean, low_p99) = run(true);
    assert!(
        high_mean < low_mean && high_p99 < low_p99,
        "separate VCs: mean {high_mean} ps, p99 {high_p99} ps; shared: {low_mean}, {low_p99}"
    );
}
