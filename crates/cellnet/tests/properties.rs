//! The shared machinery against plain reference models: handles are never live twice and are
//! reused last-freed first; every FIFO behaves as its own `VecDeque` whatever the interleaving;
//! the ring as a `VecDeque` across its growth; a link's departures as the arithmetic of one
//! server (start when free, leave after the exact serialization, arrive after the delay);
//! link-level credits never go below zero or above what exists.

use proptest::prelude::*;
use shoal_base::{Dur, Rate, Time};
use shoal_cellnet::{Fifos, Handles, LinkCredits, Links, Ring};
use std::collections::{BTreeSet, VecDeque};

proptest! {
    #[test]
    fn handles_are_unique_while_live_and_reused_last_freed_first(
        ops in prop::collection::vec(any::<(bool, u8)>(), 1..400)
    ) {
        let mut h = Handles::new();
        let mut live: Vec<u32> = Vec::new();
        let mut freed: Vec<u32> = Vec::new();
        let mut most = 0usize;
        for (alloc, pick) in ops {
            if alloc || live.is_empty() {
                let x = h.alloc();
                prop_assert!(!live.contains(&x));
                if let Some(last) = freed.pop() {
                    prop_assert_eq!(x, last, "the last freed comes back first");
                }
                live.push(x);
            } else {
                let x = live.swap_remove(pick as usize % live.len());
                h.free(x);
                freed.push(x);
            }
            most = most.max(live.len());
            prop_assert_eq!(h.live(), live.len());
            prop_assert_eq!(h.high_water(), most, "no slot created while one is free");
        }
        for &x in &live {
            prop_assert!(h.is_live(x));
        }
    }

    #[test]
    fn fifos_behave_as_separate_deques(
        ops in prop::collection::vec((0u8..4, 0u32..6, 0u32..6), 1..500)
    ) {
        const QUEUES: u32 = 6;
        let mut f = Fifos::new(QUEUES as usize);
        let mut model: Vec<VecDeque<u32>> = vec![VecDeque::new(); QUEUES as usize];
        let mut handles = Handles::new();
        for (op, q, r) in ops {
            match op {
                0 | 1 => {
                    let x = handles.alloc();
                    f.push_back(q, x);
                    model[q as usize].push_back(x);
                }
                2 => {
                    let got = f.pop_front(q);
                    prop_assert_eq!(got, model[q as usize].pop_front());
                    if let Some(x) = got {
                        handles.free(x);
                    }
                }
                _ => {
                    f.append(q, r);
                    if q != r {
                        let moved: Vec<u32> = model[r as usize].drain(..).collect();
                        model[q as usize].extend(moved);
                    }
                }
            }
            for q in 0..QUEUES {
                let m = &model[q as usize];
                prop_assert_eq!(f.len(q), m.len());
                prop_assert_eq!(f.is_empty(q), m.is_empty());
                prop_assert_eq!(f.front(q), m.front().copied());
                prop_assert_eq!(f.back(q), m.back().copied());
                prop_assert_eq!(f.iter(q).collect::<Vec<_>>(), m.iter().copied().collect::<Vec<_>>());
            }
        }
        // Every live handle is in exactly one queue.
        let queued: Vec<u32> = (0..QUEUES).flat_map(|q| f.iter(q).collect::<Vec<_>>()).collect();
        let distinct: BTreeSet<u32> = queued.iter().copied().collect();
        prop_assert_eq!(distinct.len(), queued.len());
        prop_assert_eq!(queued.len(), handles.live());
    }

    #[test]
    fn the_ring_is_a_deque_across_its_growth(
        ops in prop::collection::vec(any::<(bool, u16)>(), 1..600),
        start in 0usize..9
    ) {
        let mut r: Ring<(u16, u32)> = Ring::with_capacity(start);
        let mut m: VecDeque<(u16, u32)> = VecDeque::new();
        for (i, (push, v)) in ops.into_iter().enumerate() {
            if push {
                r.push_back((v, i as u32));
                m.push_back((v, i as u32));
            } else {
                prop_assert_eq!(r.pop_front(), m.pop_front());
            }
            prop_assert_eq!(r.len(), m.len());
            prop_assert_eq!(r.front(), m.front());
            prop_assert!(r.capacity() >= r.len());
            prop_assert!(r.capacity() == 0 || r.capacity().is_power_of_two());
            prop_assert_eq!(r.get(m.len() / 2), m.get(m.len() / 2));
            prop_assert!(r.iter().eq(m.iter()));
        }
    }

    #[test]
    fn a_link_is_one_server_with_exact_serialization(
        gbps in prop::sample::select(vec![1u64, 10, 25, 40, 50, 100, 400]),
        odd in 0u64..1000,
        delay_ns in 0u64..5000,
        sends in prop::collection::vec((0u64..2000, 1u64..10_000), 1..60)
    ) {
        // Rates that divide 8 Tb·ps evenly take the multiplication, the others the division.
        let rate = Rate(gbps * 1_000_000_000 + odd);
        let delay = Dur::from_ns(delay_ns);
        let mut links = Links::new();
        let l = links.push(rate, delay);
        let mut now = Time::ZERO;
        let mut free = Time::ZERO;
        for (gap_ns, bytes) in sends {
            now += Dur::from_ns(gap_ns);
            prop_assert_eq!(links.is_idle(l, now), now >= free);
            let d = links.send(l, now, bytes);
            prop_assert_eq!(links.serialize(l, bytes), rate.serialize(bytes));
            prop_assert_eq!(d.start, now.max(free));
            prop_assert_eq!(d.done, d.start + rate.serialize(bytes));
            prop_assert_eq!(d.arrive, d.done + delay);
            prop_assert_eq!(links.busy_until(l), d.done);
            free = d.done;
        }
    }

    #[test]
    fn link_credits_stay_between_zero_and_what_exists(
        ops in prop::collection::vec((any::<bool>(), 0u32..3, 0u32..2, 1u32..5), 1..300)
    ) {
        let per_vc = 8;
        let mut c = LinkCredits::new(3, 2, per_vc);
        let mut spent = [[0u32; 2]; 3];
        for (take, l, vc, n) in ops {
            let (li, vi) = (l as usize, vc as usize);
            if take {
                let ok = c.take(l, vc, n);
                prop_assert_eq!(ok, per_vc - spent[li][vi] >= n);
                if ok {
                    spent[li][vi] += n;
                }
            } else {
                let back = n.min(spent[li][vi]);
                c.give(l, vc, back);
                spent[li][vi] -= back;
            }
            prop_assert_eq!(c.left(l, vc), per_vc - spent[li][vi]);
        }
    }
}

#[test]
#[should_panic(expected = "credits returned")]
fn returning_credits_never_spent_is_caught() {
    let mut c = LinkCredits::new(1, 1, 4);
    c.give(0, 0, 1);
}

#[test]
fn a_busy_link_queues_cells_back_to_back() {
    // 512-byte cells at 10 Gb/s take 409.6 ns; three sent at once leave one after another.
    let mut links = Links::new();
    let l = links.push(Rate::gbps(10), Dur::from_ns(1000));
    let at = Time::ZERO;
    let d: Vec<_> = (0..3).map(|_| links.send(l, at, 512)).collect();
    assert_eq!(d[0].done, Time(409_600));
    assert_eq!(d[1].start, d[0].done);
    assert_eq!(d[2].arrive, Time(3 * 409_600 + 1_000_000));
}

#[cfg(debug_assertions)]
#[test]
#[should_panic(expected = "already in a queue")]
fn a_handle_in_two_queues_is_caught() {
    let mut f = Fifos::new(2);
    f.push_back(0, 7);
    f.push_back(1, 7);
}

#[cfg(debug_assertions)]
#[test]
#[should_panic(expected = "freed twice")]
fn a_double_free_is_caught() {
    let mut h = Handles::new();
    let x = h.alloc();
    h.free(x);
    h.free(x);
}
