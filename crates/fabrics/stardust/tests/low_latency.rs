//! Low-latency VOQs (§5.7): they send without credit, so a packet leaves at once when its
//! bucket has room; whatever the packet sizes and arrival times, no interval T carries more of
//! one such VOQ's bytes than its rate times T plus its burst and one packet, every packet goes
//! in the end, and no status asks for credit. The credited class beside it still waits.

mod common;

use proptest::prelude::*;
use shoal_base::rng::stream;
use shoal_base::{Dur, Rate, Time};
use shoal_stardust::adapter::Adapter;
use shoal_stardust::cell::{Body, Cell, Control, Packet};
use shoal_stardust::config::{AdapterConfig, LowLatency};
use shoal_stardust::reach::ReachTable;

const LINKS: u32 = 4;

fn cfg(rate: Rate, burst_bytes: u32) -> AdapterConfig {
    AdapterConfig {
        fas: 2,
        classes: 2,
        low_latency: LowLatency {
            classes: 0b10,
            rate,
            burst_bytes,
        },
        ..common::adapter_config()
    }
}

fn adapter(c: AdapterConfig) -> common::Fa {
    let mut reach = ReachTable::new(2, LINKS as usize);
    for l in 0..LINKS {
        reach.set(1, l, true);
    }
    common::Fa::new(Adapter::new(0, c, reach, stream(5, "ll", 0)))
}

fn drain(a: &mut common::Fa, now: Time) -> Vec<Cell> {
    let mut cells = Vec::new();
    for l in 0..LINKS {
        while let Some(c) = a.next_tx(now, l, false) {
            cells.push(c);
        }
    }
    cells
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn a_low_latency_voq_never_sends_more_than_its_rate_and_burst(
        gbps in 1u64..50,
        burst in 0u32..20_000,
        packets in prop::collection::vec((0u64..200_000_000, 64u32..1501), 1..120),
    ) {
        let rate = Rate::gbps(gbps);
        let mut a = adapter(cfg(rate, burst));
        let mut arrivals = packets.clone();
        arrivals.sort();
        // (time, payload bytes) of every data cell sent.
        let mut sent: Vec<(u64, u64)> = Vec::new();
        let mut offered = 0u64;
        let record = |cells: Vec<Cell>, now: Time, sent: &mut Vec<(u64, u64)>| {
            for c in cells {
                match c.body {
                    Body::Data(d) => {
                        prop_assert_eq!(d.class, 1);
                        sent.push((now.0, d.bytes as u64));
                    }
                    Body::Control(m) => prop_assert!(false, "a low-latency VOQ sent {m:?}"),
                }
            }
            Ok(())
        };
        let mut i = 0;
        loop {
            let next_arrival = arrivals.get(i).map(|&(t, _)| Time(t));
            let timer = a.poll_timeout();
            let now = match (next_arrival, timer) {
                (Some(x), Some(t)) => x.min(t),
                (Some(x), None) => x,
                (None, Some(t)) => t,
                (None, None) => break,
            };
            if timer == Some(now) {
                a.handle_timeout(now);
            }
            while i < arrivals.len() && arrivals[i].0 == now.0 {
                let wire = arrivals[i].1;
                offered += wire as u64;
                let first = sent.len();
                a.handle_packet(now, 1, 0, 1, Packet { record: i as u32, wire }, u64::MAX);
                record(drain(&mut a, now), now, &mut sent)?;
                // With the bucket empty since long enough, the packet leaves at once.
                if i == 0 {
                    prop_assert!(sent.len() > first, "the first packet waited");
                }
                i += 1;
            }
            record(drain(&mut a, now), now, &mut sent)?;
        }
        let total: u64 = sent.iter().map(|&(_, b)| b).sum();
        prop_assert_eq!(total, offered, "every packet went");
        prop_assert_eq!(a.ingress_bytes(), 0);
        // Any interval [t_i, t_j] between two sending instants.
        let slack = burst as u64 + 1500;
        for i in 0..sent.len() {
            let mut bytes = 0u64;
            for j in i..sent.len() {
                bytes += sent[j].1;
                let allowed = rate.bytes_in(Dur(sent[j].0 - sent[i].0)) + slack + 1;
                prop_assert!(
                    bytes <= allowed,
                    "{} B in {} ps at {} Gb/s, burst {}",
                    bytes,
                    sent[j].0 - sent[i].0,
                    gbps,
                    burst
                );
            }
        }
    }
}

#[test]
fn the_credited_class_beside_it_still_waits_for_credit() {
    let mut a = adapter(cfg(Rate::gbps(5), 4096));
    let p = |record| Packet { record, wire: 1500 };
    a.handle_packet(Time::ZERO, 1, 0, 0, p(0), u64::MAX);
    a.handle_packet(Time::ZERO, 1, 0, 1, p(1), u64::MAX);
    let cells = drain(&mut a, Time::ZERO);
    let data: Vec<u8> = cells
        .iter()
        .filter_map(|c| match c.body {
            Body::Data(d) => Some(d.class),
            _ => None,
        })
        .collect();
    assert!(!data.is_empty() && data.iter().all(|&c| c == 1));
    let asks = cells
        .iter()
        .filter(|c| {
            matches!(
                c.body,
                Body::Control(Control::Status {
                    class: 0,
                    on: true,
                    ..
                })
            )
        })
        .count();
    assert_eq!(asks, 1, "class 0 asks for credit");
}
