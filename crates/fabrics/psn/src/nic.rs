//! htsim's default host NIC ([`crate::HostNic::RoundRobin`]): a host's flows take turns, one
//! packet each, instead of leaving in the order their windows were handed over.
//!
//! htsim (queue.cpp, `FairPriorityQueue`; fairpullqueue.cpp, `FairPullQueue`) keeps one queue
//! per flow in a map ordered by flow id and an iterator that moves one flow on after every
//! packet sent, skipping flows with nothing queued and going back to the first flow after the
//! last. Its map keeps every flow it ever queued; ours drops a flow once it has nothing queued
//! and remembers instead whether the flow served last was the highest id seen, which is when
//! htsim's iterator reaches the end of its map and starts again from the lowest id. The two
//! orders are the same as long as a flow first appears after every lower id has (flows are
//! numbered as they start, here and in htsim's connection-matrix runs); a test checks ours
//! against a literal model of htsim's.
//!
//! The packet to send is chosen when the link becomes free (htsim dequeues in
//! `beginService`), so a packet queued while another is on the wire competes for the next turn.

use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound::{Excluded, Unbounded};

/// One priority class: its flows' queues of packet slots, served in turn.
#[derive(Default)]
struct Class {
    /// Each flow's waiting packets; a flow with none has no entry.
    flows: BTreeMap<u32, VecDeque<u32>>,
    /// The flow served last.
    last: Option<u32>,
    /// The flow served last was the highest id seen: the next turn starts from the lowest.
    wrap: bool,
    /// The highest flow id ever queued here.
    highest: Option<u32>,
}

impl Class {
    fn push(&mut self, flow: u32, pkt: u32) {
        self.flows.entry(flow).or_default().push_back(pkt);
        self.highest = self.highest.max(Some(flow));
    }

    fn pop(&mut self) -> Option<u32> {
        let after_last = match self.last {
            Some(last) if !self.wrap => self.flows.range((Excluded(last), Unbounded)).next(),
            _ => None,
        };
        let flow = *after_last.or_else(|| self.flows.iter().next())?.0;
        let queue = self.flows.get_mut(&flow).expect("a flow with packets");
        let pkt = queue.pop_front().expect("a flow with an entry has packets");
        if queue.is_empty() {
            self.flows.remove(&flow);
        }
        self.last = Some(flow);
        self.wrap = self.highest == Some(flow);
        Some(pkt)
    }

    fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }
}

/// A host NIC of two classes served in strict priority, control first, each round-robin over
/// flows. Unbounded: the transports' windows bound it, as htsim's (whose limit only prints).
#[derive(Default)]
pub struct RoundRobinNic {
    control: Class,
    data: Class,
    /// Wire bytes waiting (what a queue sample counts).
    bytes: u64,
}

impl RoundRobinNic {
    /// Queues packet slot `pkt` of flow `flow`, `bytes` on the wire, in the control class or
    /// the data class.
    pub fn push(&mut self, control: bool, flow: u32, pkt: u32, bytes: u32) {
        self.bytes += u64::from(bytes);
        if control {
            self.control.push(flow, pkt);
        } else {
            self.data.push(flow, pkt);
        }
    }

    /// The next packet to send: the control class's turn if it has one, else the data's. The
    /// caller passes its wire bytes back through [`RoundRobinNic::account_sent`].
    pub fn pop(&mut self) -> Option<u32> {
        self.control.pop().or_else(|| self.data.pop())
    }

    pub fn account_sent(&mut self, bytes: u32) {
        self.bytes -= u64::from(bytes);
    }

    /// Wire bytes waiting.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    pub fn is_empty(&self) -> bool {
        self.control.is_empty() && self.data.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;

    /// Pops everything, as (flow, packet) pairs when packets are numbered `flow * 1000 + i`.
    fn drain(nic: &mut RoundRobinNic) -> Vec<(u32, u32)> {
        std::iter::from_fn(|| nic.pop())
            .map(|p| (p / 1000, p % 1000))
            .collect()
    }

    #[test]
    fn two_backlogged_flows_share_the_nic_within_one_packet() {
        // Flow 1 hands over its whole window of 35 before flow 2 hands over its own: a FIFO
        // would send all of flow 1 first; the round-robin NIC alternates.
        let mut nic = RoundRobinNic::default();
        for f in [1, 2] {
            for i in 0..35 {
                nic.push(false, f, f * 1000 + i, 1500);
            }
        }
        let sent = drain(&mut nic);
        assert_eq!(sent.len(), 70);
        let mut count = [0i32; 2];
        for &(f, _) in &sent {
            count[f as usize - 1] += 1;
            assert!((count[0] - count[1]).abs() <= 1, "{count:?} after {sent:?}");
        }
        // Each flow's own packets stay in order.
        for f in [1, 2] {
            let own: Vec<u32> = sent.iter().filter(|s| s.0 == f).map(|s| s.1).collect();
            assert_eq!(own, (0..35).collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_lone_flow_leaves_in_the_order_it_was_queued() {
        let mut nic = RoundRobinNic::default();
        let mut rng = shoal_base::rng::stream(3, "test.nic", 0);
        let (mut next, mut sent) = (0, Vec::new());
        for _ in 0..500 {
            if rng.random_bool(0.6) {
                nic.push(false, 7, 7000 + next, 1500);
                next += 1;
            } else if let Some(p) = nic.pop() {
                sent.push(p - 7000);
            }
        }
        sent.extend(drain(&mut nic).iter().map(|s| s.1));
        assert_eq!(sent, (0..next).collect::<Vec<_>>());
    }

    #[test]
    fn control_packets_go_before_any_data() {
        let mut nic = RoundRobinNic::default();
        nic.push(false, 1, 1000, 1500);
        nic.push(false, 2, 2000, 1500);
        nic.push(true, 3, 3000, 64);
        nic.push(true, 1, 1001, 64);
        // Within a class, turns go by flow id (1 before 3), not by arrival.
        assert_eq!(drain(&mut nic), [(1, 1), (3, 0), (1, 0), (2, 0)]);
    }

    /// htsim's order, written as its code keeps it: every flow ever queued stays in a list
    /// sorted by id, and a position moves one flow on after each packet sent, wrapping at the
    /// end. Only the data class (one class suffices: the classes are independent).
    #[derive(Default)]
    struct Literal {
        flows: Vec<(u32, VecDeque<u32>)>,
        at: usize,
    }

    impl Literal {
        fn push(&mut self, flow: u32, pkt: u32) {
            match self.flows.binary_search_by_key(&flow, |f| f.0) {
                Ok(i) => self.flows[i].1.push_back(pkt),
                Err(i) => {
                    self.flows.insert(i, (flow, VecDeque::from([pkt])));
                    // A flow inserted at or before the position shifts the flow it points at.
                    if i <= self.at {
                        self.at += 1;
                    }
                }
            }
        }

        fn pop(&mut self) -> Option<u32> {
            if self.flows.iter().all(|f| f.1.is_empty()) {
                return None;
            }
            loop {
                if self.at == self.flows.len() {
                    self.at = 0;
                }
                let i = self.at;
                self.at += 1;
                if let Some(p) = self.flows[i].1.pop_front() {
                    return Some(p);
                }
            }
        }
    }

    #[test]
    fn the_order_is_htsims_for_flows_that_appear_in_id_order() {
        // Random scripts: new flows appear with rising ids (as flows start), old ones come back
        // with more packets (retransmissions, new windows); pushes and pops interleave.
        for seed in 0..50 {
            let mut rng = shoal_base::rng::stream(seed, "test.nic", 1);
            let (mut ours, mut literal) = (RoundRobinNic::default(), Literal::default());
            let (mut flows, mut pkt) = (0u32, 0u32);
            for step in 0..2000 {
                if rng.random_bool(0.55) {
                    let flow = if flows == 0 || rng.random_bool(0.1) {
                        flows += 1;
                        flows * 3 // ids with gaps, as a host sees only some flows
                    } else {
                        rng.random_range(1..=flows) * 3
                    };
                    for _ in 0..rng.random_range(1..5) {
                        pkt += 1;
                        ours.push(false, flow, pkt, 1500);
                        literal.push(flow, pkt);
                    }
                } else {
                    assert_eq!(ours.pop(), literal.pop(), "seed {seed}, step {step}");
                }
            }
            while let Some(p) = literal.pop() {
                assert_eq!(ours.pop(), Some(p), "seed {seed}, draining");
            }
            assert!(ours.is_empty());
        }
    }
}
