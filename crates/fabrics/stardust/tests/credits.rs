//! The egress scheduler's pace: however many VOQs ask and whenever the caller wakes the
//! adapter, no window of time carries more credit than the port rate plus the speed-up allows
//! (one credit of slack), and the credited bytes plus the buffer never exceed the buffer.

mod common;

use proptest::prelude::*;
use shoal_base::Time;
use shoal_base::rng::stream;
use shoal_stardust::adapter::Adapter;
use shoal_stardust::cell::{Body, Cell, Control};
use shoal_stardust::config::AdapterConfig;
use shoal_stardust::reach::ReachTable;

fn cfg(speedup_ppm: u32, buffer: u64) -> AdapterConfig {
    AdapterConfig {
        credit_speedup_ppm: speedup_ppm,
        egress_buffer_bytes: buffer,
        ..common::adapter_config()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn credits_never_outrun_the_port_rate_plus_speedup(
        speedup in 0u32..100_000,
        requests in prop::collection::vec((1u32..8, 0u64..2_000_000, any::<bool>()), 1..40),
        late in prop::collection::vec(0u64..3_000_000, 200),
    ) {
        let c = cfg(speedup, 1 << 30);
        let mut reach = ReachTable::new(8, 1);
        for d in 1..8 {
            reach.set(d, 0, true);
        }
        let mut a = common::Fa::new(Adapter::new(0, c, reach, stream(2, "t", 0)));
        let mut events: Vec<(u64, u32, bool)> = requests.iter().map(|&(s, t, on)| (t, s, on)).collect();
        events.sort();
        let mut credits: Vec<u64> = Vec::new();
        let mut seq = [0u32; 8];
        let mut now = 0u64;
        let mut i = 0;
        let mut k = 0;
        while credits.len() < 150 && now < 50_000_000 {
            // The caller may wake the adapter late (it must not then send a burst).
            let wake = a.poll_timeout().map(|t| t.0 + late[k % late.len()] * (k % 3 == 0) as u64);
            k += 1;
            let next_req = events.get(i).map(|e| e.0);
            let t = match (wake, next_req) {
                (Some(w), Some(r)) => w.min(r),
                (w, r) => match w.or(r) { Some(t) => t, None => break },
            };
            now = now.max(t);
            if next_req == Some(t) {
                let (_, src, on) = events[i];
                i += 1;
                seq[src as usize] += 1;
                a.handle_cell(Time(now), Cell { src, dst: 0, fci: false, sent_at: 0,
                    body: Body::Control(Control::Status { port: 0, class: 0, seq: seq[src as usize], on, returned: 0 }) });
            } else {
                a.handle_timeout(Time(now));
            }
            while let Some(cell) = a.next_tx(Time(now), 0, false) {
                if let Body::Control(Control::Credit { bytes, .. }) = cell.body {
                    prop_assert_eq!(bytes, 4096);
                    credits.push(now);
                }
            }
        }
        let gap = c.credit_rate().serialize(4096).0;
        for (j, &t) in credits.iter().enumerate() {
            for (m, &u) in credits[j..].iter().enumerate() {
                // m + 1 credits in [t, u]: at most one per gap, plus the first.
                prop_assert!(u - t >= m as u64 * gap, "{} credits in {} ps (gap {})", m + 1, u - t, gap);
            }
        }
    }
}

#[test]
fn the_scheduler_stops_when_credit_would_overfill_the_buffer() {
    // A buffer for exactly three credits: three go out, then nothing until data or returns.
    let c = cfg(20_000, 3 * 4096);
    let mut reach = ReachTable::new(8, 1);
    reach.set(1, 0, true);
    let mut a = common::Fa::new(Adapter::new(0, c, reach, stream(2, "t", 0)));
    a.handle_cell(
        Time::ZERO,
        Cell {
            src: 1,
            dst: 0,
            fci: false,
            sent_at: 0,
            body: Body::Control(Control::Status {
                port: 0,
                class: 0,
                seq: 1,
                on: true,
                returned: 0,
            }),
        },
    );
    let mut n = 0;
    while let Some(t) = a.poll_timeout() {
        a.handle_timeout(t);
        n += 1;
        assert!(n < 10, "the scheduler does not stop");
    }
    assert_eq!(a.stats().credits, 3);
    assert_eq!(a.egress(0), (0, 3 * 4096));
    // The VOQ gives one credit back unused: room for one more.
    a.handle_cell(
        Time(1_000_000),
        Cell {
            src: 1,
            dst: 0,
            fci: false,
            sent_at: 0,
            body: Body::Control(Control::Status {
                port: 0,
                class: 0,
                seq: 2,
                on: true,
                returned: 4096,
            }),
        },
    );
    let t = a.poll_timeout().expect("room again");
    a.handle_timeout(t);
    assert_eq!(a.stats().credits, 4);
    assert_eq!(a.poll_timeout(), None);
}
