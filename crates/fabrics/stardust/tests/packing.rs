//! The adapter's ingress against what it must do with any mix of packets and credits: packing
//! never mixes VOQs, a VOQ never sends more than its credits and one packet (the surplus that
//! later credits pay, §4.1), cells are full except a burst's last, and each VOQ's cells carry
//! its packets back to back in order. Then the egress reassembly: whatever order a stream's
//! cells arrive in, every packet comes out exactly once, whole and in order.

mod common;

use proptest::prelude::*;
use rand::seq::SliceRandom;
use shoal_base::rng::stream;
use shoal_base::{Dur, Time};
use shoal_stardust::adapter::Adapter;
use shoal_stardust::cell::{Body, Cell, Control, Data, FIRST, LAST, Packet};
use shoal_stardust::config::AdapterConfig;
use shoal_stardust::reach::ReachTable;
use shoal_stardust::reassembly::{Freed, Stream};

fn cfg(cell_bytes: u32, credit_bytes: u32) -> AdapterConfig {
    AdapterConfig {
        fas: 3,
        ports: 2,
        classes: 2,
        credit_bytes,
        cell_bytes,
        reassembly_timeout: Dur::from_us(100),
        ..common::adapter_config()
    }
}

/// Adapter 0 with 5 links, all reaching every adapter.
fn adapter(c: AdapterConfig) -> common::Fa {
    let mut reach = ReachTable::new(c.fas as usize, 5);
    for d in 0..c.fas {
        for l in 0..5 {
            reach.set(d, l, true);
        }
    }
    common::Fa::new(Adapter::new(0, c, reach, stream(1, "test", 0)))
}

fn drain(a: &mut common::Fa, now: Time) -> Vec<Cell> {
    let mut cells = Vec::new();
    for l in 0..5 {
        while let Some(c) = a.next_tx(now, l, false) {
            cells.push(c);
        }
    }
    cells
}

/// A VOQ: (destination adapter 1 or 2, port, class).
type Voq = (u32, u16, u8);

fn voq_of(i: u8) -> Voq {
    (1 + (i % 2) as u32, ((i / 2) % 2) as u16, (i / 4) % 2)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn packing_keeps_voqs_apart_and_spends_only_credit(
        cell in prop_oneof![Just(64u32), Just(256), Just(512)],
        credit in prop_oneof![Just(2000u32), Just(4096), Just(9000)],
        ops in prop::collection::vec((0u8..8, 41u32..9000, any::<bool>()), 1..120),
    ) {
        let c = cfg(cell, credit);
        let mut a = adapter(c);
        let mut packets: Vec<(Voq, Packet)> = Vec::new();
        let mut credited = [0u64; 8];
        let mut cells = Vec::new();
        for (i, &(v, size, give_credit)) in ops.iter().enumerate() {
            let (dst, port, class) = voq_of(v);
            let p = Packet { record: i as u32, wire: size };
            prop_assert!(a.handle_packet(Time(i as u64), dst, port, class, p, u64::MAX));
            packets.push(((dst, port, class), p));
            if give_credit {
                credited[v as usize] += credit as u64;
                a.handle_cell(Time(i as u64), Cell {
                    src: dst, dst: 0, fci: false, sent_at: 0,
                    body: Body::Control(Control::Credit { port, class, bytes: credit }),
                });
            }
            cells.extend(drain(&mut a, Time(i as u64)));
        }
        let voq_of_record = |r: u32| packets[r as usize].0;
        let mut streams: Vec<Vec<Data>> = vec![Vec::new(); 8];
        for cell in &cells {
            let Body::Data(d) = cell.body else { continue };
            let v = (cell.dst, d.port, d.class);
            prop_assert!(d.bytes as u32 <= c.cell_payload());
            prop_assert_eq!(d.bytes as u32, d.fragments().iter().map(|f| f.bytes as u32).sum::<u32>());
            for f in d.fragments() {
                prop_assert_eq!(voq_of_record(f.record), v, "a cell mixes VOQs");
            }
            let i = (0..8u8).find(|&i| voq_of(i) == v).unwrap();
            streams[i as usize].push(d);
        }
        for (i, s) in streams.iter_mut().enumerate() {
            s.sort_by_key(|d| d.seq);
            for (k, d) in s.iter().enumerate() {
                prop_assert_eq!(d.seq as usize, k, "sequence numbers are dense");
            }
            // The stream's fragments are its packets, whole, in arrival order.
            let mine: Vec<Packet> = packets.iter().filter(|(v, _)| *v == voq_of(i as u8)).map(|x| x.1).collect();
            let mut got: Vec<(u32, u32)> = Vec::new();
            for d in s.iter() {
                for f in d.fragments() {
                    if f.flags & FIRST != 0 {
                        got.push((f.record, 0));
                    }
                    let last = got.last_mut().expect("a stream starts with a packet's first fragment");
                    prop_assert_eq!(last.0, f.record);
                    last.1 += f.bytes as u32;
                    if f.flags & LAST != 0 {
                        prop_assert_eq!(last.1, packets[f.record as usize].1.wire);
                    }
                }
            }
            prop_assert!(got.len() <= mine.len());
            for (g, m) in got.iter().zip(&mine) {
                prop_assert_eq!(g.0, m.record, "out of order");
            }
            let sent: u64 = got.iter().map(|g| g.1 as u64).sum();
            let largest = mine.iter().map(|p| p.wire as u64).max().unwrap_or(0);
            prop_assert!(sent < credited[i] + largest || sent == 0, "VOQ {} sent {} on {} of credit", i, sent, credited[i]);
            // Every cell but the last of a burst is full: count cells against bytes.
            let cap = c.cell_payload() as u64;
            let fragments: u64 = s.iter().map(|d| d.frags as u64).sum();
            prop_assert!(s.len() as u64 <= sent.div_ceil(cap) + (credited[i] / credit as u64) + fragments / 8);
        }
    }

    #[test]
    fn reassembly_releases_every_packet_once_in_order_whatever_the_arrival_order(
        sizes in prop::collection::vec(41u32..3000, 1..60),
        seed in any::<u64>(),
    ) {
        let c = cfg(256, 4096);
        let mut a = adapter(c);
        for (i, &s) in sizes.iter().enumerate() {
            a.handle_packet(Time::ZERO, 1, 0, 0, Packet { record: i as u32, wire: s }, u64::MAX);
        }
        let total: u32 = sizes.iter().sum();
        a.handle_cell(Time::ZERO, Cell {
            src: 1, dst: 0, fci: false, sent_at: 0,
            body: Body::Control(Control::Credit { port: 0, class: 0, bytes: total }),
        });
        let mut cells: Vec<Data> = drain(&mut a, Time::ZERO).into_iter()
            .filter_map(|c| match c.body { Body::Data(d) => Some(d), _ => None }).collect();
        cells.shuffle(&mut stream(seed, "order", 0));
        let mut s = Stream::default();
        let mut out = Vec::new();
        let mut freed = Freed::default();
        for d in cells {
            prop_assert!(s.accept(&d, &mut |p| out.push(p), &mut freed));
        }
        prop_assert_eq!(freed, Freed::default());
        prop_assert!(!s.has_gap());
        let expect: Vec<Packet> = sizes.iter().enumerate().map(|(i, &w)| Packet { record: i as u32, wire: w }).collect();
        prop_assert_eq!(out, expect);
    }
}

#[test]
fn a_lost_cell_drops_only_the_packets_it_cut() {
    // Packets of 300 B in 256 B cells (240 B of payload): cell 1 holds the end of packet 0 and
    // the start of packet 1. Losing it loses those two, and the stream resumes at packet 2.
    let c = cfg(256, 4096);
    let mut a = adapter(c);
    for i in 0..6 {
        a.handle_packet(
            Time::ZERO,
            1,
            0,
            0,
            Packet {
                record: i,
                wire: 300,
            },
            u64::MAX,
        );
    }
    a.handle_cell(
        Time::ZERO,
        Cell {
            src: 1,
            dst: 0,
            fci: false,
            sent_at: 0,
            body: Body::Control(Control::Credit {
                port: 0,
                class: 0,
                bytes: 1800,
            }),
        },
    );
    let mut cells: Vec<Data> = drain(&mut a, Time::ZERO)
        .into_iter()
        .filter_map(|c| match c.body {
            Body::Data(d) => Some(d),
            _ => None,
        })
        .collect();
    cells.sort_by_key(|d| d.seq);
    assert_eq!(cells.len(), 8, "1800 B in cells of 240 B");
    let mut s = Stream::default();
    let mut out = Vec::new();
    let mut freed = Freed::default();
    for d in cells.iter().filter(|d| d.seq != 1) {
        s.accept(d, &mut |p| out.push(p.record), &mut freed);
    }
    assert!(out.is_empty(), "everything waits behind the gap");
    s.give_up(&mut |p| out.push(p.record), &mut freed);
    assert_eq!(out, vec![2, 3, 4, 5]);
    assert_eq!(freed.lost_cells, 1);
    // Packet 0 was half joined (240 B); packet 1's 60 B in cell 2 were skipped.
    assert_eq!(freed.packets, 1);
    assert_eq!(freed.bytes, 240 + 120);
}

/// The cells of adapter 1's VOQ towards adapter 0 for `packets` packets of `wire` bytes, in
/// sequence order.
fn cells_to_0(c: AdapterConfig, packets: u32, wire: u32) -> Vec<Cell> {
    let mut reach = ReachTable::new(c.fas as usize, 5);
    for d in 0..c.fas {
        for l in 0..5 {
            reach.set(d, l, true);
        }
    }
    let mut src = common::Fa::new(Adapter::new(1, c, reach, stream(1, "test", 1)));
    for i in 0..packets {
        src.handle_packet(Time::ZERO, 0, 0, 0, Packet { record: i, wire }, u64::MAX);
    }
    src.handle_cell(
        Time::ZERO,
        Cell {
            src: 0,
            dst: 1,
            fci: false,
            sent_at: 0,
            body: Body::Control(Control::Credit {
                port: 0,
                class: 0,
                bytes: packets * wire,
            }),
        },
    );
    let mut cells: Vec<Cell> = drain(&mut src, Time::ZERO)
        .into_iter()
        .filter(|c| c.is_data())
        .collect();
    cells.sort_by_key(|c| match c.body {
        Body::Data(d) => d.seq,
        _ => unreachable!(),
    });
    cells
}

#[test]
fn the_reassembly_timer_times_the_missing_cell_not_the_stream() {
    // Timeout 100 us. Every 40 us the missing head arrives with the cell after the next, so
    // the stream always has a gap (for 120 us and on) but no cell is missing for more than
    // 40 us: nothing may be given up. Then a cell stays missing: it is given up after 100 us.
    let c = cfg(256, 4096);
    let cells = cells_to_0(c, 8, 240);
    assert_eq!(cells.len(), 8, "one packet per cell");
    let mut a = adapter(c);
    let step = Dur::from_us(40);
    let mut now = Time::ZERO;
    a.handle_cell(now, cells[1]);
    for k in 0..3 {
        now += step;
        while let Some(t) = a.poll_timeout().filter(|&t| t <= now) {
            a.handle_timeout(t);
        }
        a.handle_cell(now, cells[2 * k]);
        a.handle_cell(now, cells[2 * k + 3]);
    }
    assert_eq!(a.stats().lost_cells, 0, "no cell was missing for 100 us");
    assert_eq!(a.stats().packets_out, 0, "no packet sent to the host yet");
    let mut out = Vec::new();
    while let Some(p) = a.next_packet(0) {
        out.push(p.record);
    }
    assert_eq!(
        out,
        (0..6).collect::<Vec<_>>(),
        "cells 0-5 joined in order, 6 missing"
    );
    // Cell 6 never comes: its timer (started when it became the head, at 120 us) expires at
    // 220 us, not before (the adapter may wake earlier to set the timer again).
    let deadline = Time::ZERO + Dur::from_us(120 + 100);
    let mut wakes = 0;
    while let Some(t) = a.poll_timeout().filter(|&t| t < deadline) {
        a.handle_timeout(t);
        wakes += 1;
        assert!(wakes < 10, "the timer settles");
    }
    assert_eq!(
        a.stats().lost_cells,
        0,
        "cell 6 missing for less than 100 us"
    );
    assert_eq!(a.poll_timeout(), Some(deadline));
    a.handle_timeout(deadline);
    assert_eq!(a.stats().lost_cells, 1);
    assert_eq!(a.next_packet(0).map(|p| p.record), Some(7));
}

#[test]
fn a_burst_of_lost_cells_is_given_up_at_once() {
    // Cells 1-3 never come; 0 and 4-7 arrive at time 0. All three have been missing since
    // then: one timeout later all three are given up together, not one timeout each.
    let c = cfg(256, 4096);
    let cells = cells_to_0(c, 8, 240);
    let mut a = adapter(c);
    for k in [0, 4, 5, 6, 7] {
        a.handle_cell(Time::ZERO, cells[k]);
    }
    let deadline = Time::ZERO + Dur::from_us(100);
    assert_eq!(a.poll_timeout(), Some(deadline));
    a.handle_timeout(deadline);
    assert_eq!(a.stats().lost_cells, 3);
    let mut out = Vec::new();
    while let Some(p) = a.next_packet(0) {
        out.push(p.record);
    }
    assert_eq!(out, [0, 4, 5, 6, 7]);
    assert_eq!(a.poll_timeout(), None, "no gap left");
}

#[test]
fn a_voq_whose_request_goes_unanswered_asks_again() {
    // A status "on" lost with a failed link must not leave the VOQ waiting for ever: after
    // the refresh period (the reassembly timeout, 100 us here) without a credit it asks again,
    // with a newer sequence number; a credit puts the next refresh off (by the doubled wait).
    let c = cfg(256, 4096);
    let mut a = adapter(c);
    a.handle_packet(
        Time::ZERO,
        1,
        0,
        0,
        Packet {
            record: 0,
            wire: 1500,
        },
        u64::MAX,
    );
    a.handle_packet(
        Time::ZERO,
        1,
        0,
        0,
        Packet {
            record: 1,
            wire: 1500,
        },
        u64::MAX,
    );
    let status = |cells: Vec<Cell>| -> Vec<u32> {
        cells
            .into_iter()
            .filter_map(|c| match c.body {
                Body::Control(Control::Status { on: true, seq, .. }) => Some(seq),
                _ => None,
            })
            .collect()
    };
    assert_eq!(status(drain(&mut a, Time::ZERO)), [1]);
    let t = a.poll_timeout().expect("the refresh");
    assert_eq!(t, Time::ZERO + Dur::from_us(100));
    a.handle_timeout(t);
    assert_eq!(status(drain(&mut a, t)), [2]);
    assert_eq!(a.stats().status_refreshes, 1);
    // A credit for one packet at 150 us: the VOQ still asks, but was answered.
    let at = Time::ZERO + Dur::from_us(150);
    a.handle_cell(
        at,
        Cell {
            src: 1,
            dst: 0,
            fci: false,
            sent_at: 0,
            body: Body::Control(Control::Credit {
                port: 0,
                class: 0,
                bytes: 1500,
            }),
        },
    );
    drain(&mut a, at);
    for next in [200, 300] {
        let next = Time::ZERO + Dur::from_us(next);
        a.handle_timeout(next);
        assert!(status(drain(&mut a, next)).is_empty(), "answered at 150 us");
    }
    assert_eq!(a.poll_timeout(), Some(Time::ZERO + Dur::from_us(350)));
}

#[test]
fn a_voq_without_credit_asks_again_ever_less_often_until_it_asks_anew() {
    // The k-th refresh waits the period times 2^min(k, doublings) after the one before, and
    // a credit puts the next off by the same wait; only a new request (the VOQ emptied, then
    // filled) starts the waits over. Expected times summed here, not taken from the adapter.
    let period = 100u64;
    // Runs the adapter's timers until it sends an "on": that status's time.
    let next_on = |a: &mut common::Fa| -> Time {
        loop {
            let t = a.poll_timeout().expect("a refresh is armed");
            a.handle_timeout(t);
            let cells = drain(a, t);
            if cells
                .iter()
                .any(|c| matches!(c.body, Body::Control(Control::Status { on: true, .. })))
            {
                return t;
            }
        }
    };
    let credit = |a: &mut common::Fa, at: Time| {
        let body = Body::Control(Control::Credit {
            port: 0,
            class: 0,
            bytes: 1500,
        });
        let (src, dst, fci, sent_at) = (1, 0, false, 0);
        a.handle_cell(
            at,
            Cell {
                src,
                dst,
                fci,
                sent_at,
                body,
            },
        );
        drain(a, at);
    };
    let packet = |a: &mut common::Fa, at: Time, record| {
        let p = Packet { record, wire: 1500 };
        a.handle_packet(at, 1, 0, 0, p, u64::MAX);
        drain(a, at);
    };
    for doublings in 0..4u32 {
        let c = AdapterConfig {
            status_refresh_doublings: doublings,
            ..cfg(256, 4096)
        };
        let mut a = adapter(c);
        packet(&mut a, Time::ZERO, 0);
        packet(&mut a, Time::ZERO, 1);
        let mut expected = 0u64;
        for k in 0..8u32 {
            expected += period << k.min(doublings);
            assert_eq!(
                next_on(&mut a),
                Time::ZERO + Dur::from_us(expected),
                "refresh {k}"
            );
            assert_eq!(a.stats().status_refreshes, u64::from(k) + 1);
        }
        // A credit for one of the two packets: the next refresh one whole wait after it.
        let wait = Dur::from_us(period << doublings);
        let at = Time::ZERO + Dur::from_us(expected + 10);
        credit(&mut a, at);
        assert_eq!(next_on(&mut a), at + wait, "doublings {doublings}");
        // The second packet's credit empties the VOQ; a packet after that asks anew, and is
        // refreshed one period after it.
        let at = at + wait + Dur::from_us(10);
        credit(&mut a, at);
        let again = at + Dur::from_us(30);
        packet(&mut a, again, 2);
        assert_eq!(next_on(&mut a), again + Dur::from_us(period));
    }
}
