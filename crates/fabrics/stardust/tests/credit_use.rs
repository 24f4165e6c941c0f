//! How a Fabric Adapter uses its credit and reacts to FCI, against hand-computed expectations:
//! an empty VOQ keeps unspent credit (§4.1's "stored for later accounting") and spends it on
//! the packets that come within the keep time, then gives back what is left; FCI cuts the
//! credit rate once per window by the fraction of cells marked in it and raises it in windows
//! without marks.

mod common;

use shoal_base::rng::stream;
use shoal_base::{Dur, Rate, Time};
use shoal_stardust::adapter::{Adapter, FULL_RATE};
use shoal_stardust::cell::{Body, Cell, Control, Data, FIRST, Frag, LAST, MAX_FRAGS, Packet};
use shoal_stardust::config::{AdapterConfig, FciReaction};
use shoal_stardust::reach::ReachTable;

fn cfg(keep: Dur) -> AdapterConfig {
    AdapterConfig {
        fas: 2,
        port_rate: Rate::gbps(10),
        credit_speedup_ppm: 30_000,
        cell_bytes: 512,
        credit_keep: keep,
        fci: FciReaction {
            decrease: 1 << 15, // 0.5
            interval: Dur::from_us(5),
            increase: 1 << 11, // 1/32
            min_rate: 1 << 14, // 0.25
        },
        ..common::adapter_config()
    }
}

fn adapter(keep: Dur) -> common::Fa {
    let mut reach = ReachTable::new(2, 1);
    reach.set(1, 0, true);
    common::Fa::new(Adapter::new(
        0,
        cfg(keep),
        reach,
        stream(3, "credit-use", 0),
    ))
}

fn us(t: u64) -> Time {
    Time::ZERO + Dur::from_us(t)
}

/// Everything the adapter put on its link: (data cells, statuses as (on, returned)).
fn sent(a: &mut common::Fa, now: Time) -> (usize, Vec<(bool, u32)>) {
    let (mut data, mut status) = (0, Vec::new());
    while a.poll_link_kick().is_some() {}
    while let Some(c) = a.next_tx(now, 0, false) {
        match c.body {
            Body::Data(_) => data += 1,
            Body::Control(Control::Status { on, returned, .. }) => status.push((on, returned)),
            Body::Control(Control::Credit { .. }) => panic!("no port asked this adapter"),
        }
    }
    (data, status)
}

fn ack(a: &mut common::Fa, now: Time, record: u32) {
    let p = Packet { record, wire: 64 };
    assert!(a.handle_packet(now, 1, 0, 0, p, u64::MAX));
}

fn credit(a: &mut common::Fa, now: Time) {
    let body = Body::Control(Control::Credit {
        port: 0,
        class: 0,
        bytes: 4096,
    });
    a.handle_cell(
        now,
        Cell {
            src: 1,
            dst: 0,
            fci: false,
            sent_at: 0,
            body,
        },
    );
}

#[test]
fn an_empty_voq_spends_kept_credit_at_once_and_gives_back_the_rest_after_the_keep() {
    let mut a = adapter(Dur::from_us(25));
    ack(&mut a, us(0), 0);
    assert_eq!(
        sent(&mut a, us(0)),
        (0, vec![(true, 0)]),
        "asks, holds nothing"
    );
    credit(&mut a, us(2));
    // 64 B spent; the VOQ is empty and keeps the other 4,032 B.
    assert_eq!(sent(&mut a, us(2)), (1, vec![(false, 0)]));
    // Acks within the keep go at once, paid from what it kept: no credit awaited.
    for (i, t) in [10, 20].into_iter().enumerate() {
        ack(&mut a, us(t), 1 + i as u32);
        assert_eq!(sent(&mut a, us(t)), (1, vec![(true, 0), (false, 0)]));
    }
    // Kept until 25 us after its last status (at 20 us), then 4,096 - 3 x 64 B go back.
    a.handle_timeout(us(30));
    assert_eq!(sent(&mut a, us(30)), (0, vec![]));
    assert_eq!(a.poll_timeout(), Some(us(45)));
    a.handle_timeout(us(44));
    assert_eq!(sent(&mut a, us(44)), (0, vec![]));
    a.handle_timeout(us(45));
    assert_eq!(sent(&mut a, us(45)), (0, vec![(false, 4096 - 3 * 64)]));
    assert_eq!(a.stats().credit_returned_bytes, 4096 - 3 * 64);
    // Nothing kept any more: the next ack waits for a credit.
    ack(&mut a, us(50), 3);
    assert_eq!(sent(&mut a, us(50)), (0, vec![(true, 0)]));
}

#[test]
fn without_a_keep_unspent_credit_goes_back_at_once() {
    let mut a = adapter(Dur::ZERO);
    ack(&mut a, us(0), 0);
    credit(&mut a, us(2));
    assert_eq!(
        sent(&mut a, us(2)),
        (1, vec![(true, 0), (false, 4096 - 64)])
    );
    ack(&mut a, us(10), 1);
    assert_eq!(sent(&mut a, us(10)), (0, vec![(true, 0)]));
}

/// A data cell from adapter 1 holding one whole 100 B packet.
fn data_cell(seq: u32, fci: bool) -> Cell {
    let mut frag = [Frag::default(); MAX_FRAGS];
    frag[0] = Frag {
        record: seq,
        bytes: 100,
        flags: FIRST | LAST,
    };
    Cell {
        src: 1,
        dst: 0,
        fci,
        sent_at: 0,
        body: Body::Data(Data {
            port: 0,
            class: 0,
            seq,
            bytes: 100,
            frags: 1,
            frag,
        }),
    }
}

#[test]
fn fci_cuts_by_the_marked_fraction_once_a_window_and_recovers_in_windows_without_marks() {
    let mut a = adapter(Dur::ZERO);
    let mut seq = 0;
    let mut deliver = |a: &mut common::Fa, t: Time, fci: bool| {
        a.handle_cell(t, data_cell(seq, fci));
        seq += 1;
        while a.next_packet(0).is_some() {}
    };
    // First window (0-5 us): 100 cells, 20 of them marked. Nothing changes inside it.
    for i in 0..100u64 {
        deliver(&mut a, Time(i * 40_000), i % 5 == 0);
    }
    assert_eq!(a.rate_factor(Time(99 * 40_000)), FULL_RATE);
    // The first cell of the next window closes it: 1 - 0.5 x 0.2 = 0.9 of the full rate.
    deliver(&mut a, us(5), false);
    let cut = (FULL_RATE as u64 * (1 << 15) * 20 / 100) >> 16;
    let after_cut = FULL_RATE - cut as u32;
    assert_eq!(after_cut, 58_983);
    assert_eq!(a.rate_factor(us(5)), after_cut);
    // Three windows end before 20 us, none with a mark: 3 x 1/32 back.
    deliver(&mut a, us(20), false);
    assert_eq!(a.rate_factor(us(20)), after_cut + 3 * 2048);
    // Capped at the full rate.
    deliver(&mut a, us(25), false);
    assert_eq!(a.rate_factor(us(25)), FULL_RATE);
    // Every cell marked, window after window: halved each time, down to the floor.
    let mut expect = FULL_RATE as u64;
    for w in 6..12u64 {
        deliver(&mut a, us(5 * w) + Dur::from_ns(100), true);
        deliver(&mut a, us(5 * w + 5), true);
        expect = (expect / 2).max(1 << 14);
        assert_eq!(a.rate_factor(us(5 * w + 5)) as u64, expect, "window {w}");
    }
}

/// A packet of `wire` bytes from host to adapter 1, port 0.
fn packet(a: &mut common::Fa, now: Time, record: u32, wire: u32) {
    let p = Packet { record, wire };
    assert!(a.handle_packet(now, 1, 0, 0, p, u64::MAX));
}

#[test]
fn a_packet_larger_than_the_credit_goes_on_the_first_credit_and_later_credits_pay_its_surplus() {
    let mut a = adapter(Dur::from_us(25));
    packet(&mut a, us(0), 0, 9064);
    packet(&mut a, us(0), 1, 9064);
    assert_eq!(sent(&mut a, us(0)), (0, vec![(true, 0)]));
    // The first credit lets the whole first packet go (19 cells of 496 B): 4,968 B of surplus.
    credit(&mut a, us(2));
    assert_eq!(sent(&mut a, us(2)).0, 19);
    assert_eq!(a.ingress_bytes(), 9064);
    // The second credit pays 4,096 of it: still 872 B owed, nothing goes.
    credit(&mut a, us(4));
    assert_eq!(sent(&mut a, us(4)), (0, vec![]));
    // The third leaves 3,224 B of credit: the second packet goes, and the VOQ, empty, says off
    // while owing 5,840 B, which it keeps (nothing to give back).
    credit(&mut a, us(6));
    assert_eq!(sent(&mut a, us(6)), (19, vec![(false, 0)]));
    assert_eq!(a.ingress_bytes(), 0);
    a.handle_timeout(us(100));
    assert_eq!(
        sent(&mut a, us(100)),
        (0, vec![]),
        "a debt is not given back"
    );
    assert_eq!(a.stats().credit_returned_bytes, 0);
}

#[test]
fn a_cut_credit_rate_recovers_window_by_window_while_no_data_arrives() {
    let mut a = adapter(Dur::ZERO);
    // One window (0-5 us) with every cell marked: the factor halves (decrease 0.5).
    for i in 0..10u32 {
        a.handle_cell(Time(i as u64 * 100_000), data_cell(i, true));
    }
    assert_eq!(a.rate_factor(us(5)), FULL_RATE / 2);
    // No cell after it: each window that ends gives back 1/32 (applied when credits are due
    // or the factor is read).
    assert_eq!(a.rate_factor(us(10)), FULL_RATE / 2 + 2048);
    // Three more end by 27 us (at 15, 20 and 25).
    assert_eq!(a.rate_factor(us(27)), FULL_RATE / 2 + 4 * 2048);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// A backlogged VOQ spends what it was credited and at most one packet more: after C
    /// bytes of credit it has sent S bytes with C <= S < C + the largest packet (§4.1's
    /// surplus, carried as a debt).
    #[test]
    fn a_backlogged_voq_sends_its_credit_and_less_than_one_packet_more(
        sizes in proptest::collection::vec(64u32..=9064, 40..80),
        credits in 1u32..30,
    ) {
        let mut a = adapter(Dur::from_us(25));
        let total: u64 = sizes.iter().map(|&w| w as u64).sum();
        for (i, &w) in sizes.iter().enumerate() {
            packet(&mut a, us(0), i as u32, w);
        }
        let largest = *sizes.iter().max().unwrap() as u64;
        for c in 1..=credits {
            credit(&mut a, us(c as u64));
            sent(&mut a, us(c as u64));
            let spent = total - a.ingress_bytes();
            let granted = c as u64 * 4096;
            if spent < total {
                proptest::prop_assert!(spent >= granted, "{spent} sent for {granted} credited");
            }
            proptest::prop_assert!(spent < granted + largest, "{spent} sent for {granted} credited");
        }
    }
}
