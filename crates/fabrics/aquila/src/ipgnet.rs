//! IP over GNet (§3.3) as sans-IO state machines: the ingress of the sending TiN and the egress
//! of the receiving one. No clock, no engine: the simulator feeds them cells as they arrive and
//! polls what they want sent.
//!
//! - Every IP packet is announced by an **RTS** (16 B, on its own deterministically routed VC,
//!   so the RTSs of one flow arrive in the order they were sent) before any of its data enters
//!   the fabric; the ingress buffers the packet meanwhile (the hosts of `sim.rs`).
//! - The egress queues RTSs in FIFOs per (port, CoS) — 4 ports × 8 CoS = 32 queues — and its
//!   **CTS scheduler** grants a packet only when its reassembly space is free and fewer than
//!   `window` granted packets are still arriving; it shares the port among the CoS queues by
//!   deficit round-robin over bytes with per-CoS weights ([`Egress`]).
//! - An RTS that arrives at a queue already `ctd_depth` deep is answered by a **CTD** (clear to
//!   drop): the ingress discards the packet, and none of its data crosses the fabric.
//! - Data cells arrive in any order and are reassembled; a complete packet is **released** to
//!   the host only after every earlier-granted packet of its flow (grant order = RTS order,
//!   the queue being a FIFO), and is marked **ECN** when its RTS queue is deeper than
//!   `ecn_depth` at that moment (§3.3: "if the RTS queue exceeds the marking threshold when the
//!   packet has been reassembled and is ready to send").
//!
//! Where §3.3 is silent, our choices: reassembly space and the window are per port (each port's
//! egress buffer is sized by its own bandwidth-delay product, as the paper says of the buffer);
//! the window counts packets granted and not yet completely received ("outstanding packet
//! fetches"); the scheduler never lets a later packet of the same queue overtake a head that
//! does not fit (FIFO per queue, so no starvation of large packets); a CTD'd packet leaves a
//! gap in its flow that the release order skips (its later packets are not held for it).

use std::collections::{BTreeMap, VecDeque};

/// Classes of service per port (§3.3: eight).
pub const COS: usize = 8;

/// What the egress of a TiN is given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EgressConfig {
    /// Endpoint ports (§3.3: four; two host NICs in a clique of two hosts per TiN).
    pub ports: usize,
    /// Reassembly bytes per port.
    pub reassembly_bytes: u32,
    /// Granted packets per port still arriving, at most.
    pub window: u32,
    /// An RTS arriving at a queue holding this many RTSs is answered by a CTD.
    pub ctd_depth: u32,
    /// A packet released while its RTS queue holds more than this many RTSs is ECN-marked.
    pub ecn_depth: u32,
    /// Deficit round-robin quantum of each CoS, in bytes per round.
    pub quantum: [u32; COS],
}

/// A request to send, as the egress reads it from an RTS cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rts {
    /// The sending endpoint and its ingress buffer slot (echoed in the CTS or CTD).
    pub src: u32,
    pub slot: u32,
    /// Destination port and class of service: the queue.
    pub port: u8,
    pub cos: u8,
    /// Reassembly bytes the packet needs.
    pub bytes: u32,
    /// Flow key (the flow-invariant fields): the unit of release order.
    pub flow: u64,
}

/// What the egress sends back to an ingress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grant {
    /// Send the packet in `slot`; its cells name reassembly descriptor `desc`.
    Cts { src: u32, slot: u32, desc: u32 },
    /// Drop the packet in `slot`.
    Ctd { src: u32, slot: u32 },
}

/// A reassembled packet handed to its port, in its flow's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Released {
    pub rts: Rts,
    pub ecn: bool,
}

#[derive(Clone, Copy, Debug)]
struct Desc {
    rts: Rts,
    received: u32,
    /// Position in its flow's grant order.
    order: u64,
}

#[derive(Clone, Copy, Debug, Default)]
struct FlowOrder {
    granted: u64,
    released: u64,
}

/// The egress half of IP over GNet at one TiN.
#[derive(Clone, Debug)]
pub struct Egress {
    cfg: EgressConfig,
    /// Per (port, CoS): the RTS FIFOs.
    queues: Vec<VecDeque<Rts>>,
    deficit: Vec<u64>,
    /// Per port: the CoS the round-robin visits next, free reassembly bytes, packets arriving.
    next_cos: Vec<usize>,
    free: Vec<u32>,
    arriving: Vec<u32>,
    descs: Vec<Option<Desc>>,
    free_descs: Vec<u32>,
    flows: BTreeMap<u64, FlowOrder>,
    /// Complete packets waiting for an earlier packet of their flow: (flow, order) -> desc.
    held: BTreeMap<(u64, u64), u32>,
    grants: VecDeque<Grant>,
    released: VecDeque<Released>,
}

impl Egress {
    pub fn new(cfg: EgressConfig) -> Egress {
        let queues = cfg.ports * COS;
        Egress {
            queues: vec![VecDeque::new(); queues],
            deficit: vec![0; queues],
            next_cos: vec![0; cfg.ports],
            free: vec![cfg.reassembly_bytes; cfg.ports],
            arriving: vec![0; cfg.ports],
            descs: Vec::new(),
            free_descs: Vec::new(),
            flows: BTreeMap::new(),
            held: BTreeMap::new(),
            grants: VecDeque::new(),
            released: VecDeque::new(),
            cfg,
        }
    }

    pub fn config(&self) -> &EgressConfig {
        &self.cfg
    }

    /// RTSs waiting in queue (`port`, `cos`).
    pub fn depth(&self, port: u8, cos: u8) -> usize {
        self.queues[port as usize * COS + cos as usize].len()
    }

    /// Free reassembly bytes of `port`.
    pub fn free_bytes(&self, port: u8) -> u32 {
        self.free[port as usize]
    }

    /// Granted packets of `port` not yet completely received.
    pub fn arriving(&self, port: u8) -> u32 {
        self.arriving[port as usize]
    }

    /// An RTS has arrived. A packet larger than the whole reassembly space could never be
    /// granted: it is dropped (CTD) too.
    pub fn on_rts(&mut self, rts: Rts) {
        assert!((rts.port as usize) < self.cfg.ports && (rts.cos as usize) < COS);
        let q = rts.port as usize * COS + rts.cos as usize;
        if self.queues[q].len() >= self.cfg.ctd_depth as usize
            || rts.bytes > self.cfg.reassembly_bytes
        {
            self.grants.push_back(Grant::Ctd {
                src: rts.src,
                slot: rts.slot,
            });
            return;
        }
        self.queues[q].push_back(rts);
        self.schedule(rts.port as usize);
    }

    /// `bytes` of the packet of descriptor `desc` have arrived (a data cell).
    pub fn on_data(&mut self, desc: u32, bytes: u32) {
        let d = self.descs[desc as usize]
            .as_mut()
            .expect("data for a granted packet");
        d.received += bytes;
        assert!(
            d.received <= d.rts.bytes,
            "more data than the RTS announced"
        );
        if d.received < d.rts.bytes {
            return;
        }
        let d = *d;
        let port = d.rts.port as usize;
        self.arriving[port] -= 1;
        self.held.insert((d.rts.flow, d.order), desc);
        self.release(d.rts.flow);
        self.schedule(port);
    }

    /// The next CTS or CTD to send.
    pub fn poll_grant(&mut self) -> Option<Grant> {
        self.grants.pop_front()
    }

    /// The next packet to hand to its port.
    pub fn poll_release(&mut self) -> Option<Released> {
        self.released.pop_front()
    }

    /// Releases the complete packets of `flow` that are next in its order.
    fn release(&mut self, flow: u64) {
        loop {
            let Some(f) = self.flows.get_mut(&flow) else {
                return; // every granted packet of the flow has left
            };
            let Some(desc) = self.held.remove(&(flow, f.released)) else {
                return;
            };
            f.released += 1;
            if f.released == f.granted {
                self.flows.remove(&flow);
            }
            let d = self.descs[desc as usize].take().expect("held packet");
            self.free_descs.push(desc);
            let port = d.rts.port as usize;
            self.free[port] += d.rts.bytes;
            let ecn = self.depth(d.rts.port, d.rts.cos) > self.cfg.ecn_depth as usize;
            self.released.push_back(Released { rts: d.rts, ecn });
            self.schedule(port);
        }
    }

    /// Grants what `port`'s reassembly space and window allow: deficit round-robin over its
    /// CoS queues, each queue in FIFO order.
    fn schedule(&mut self, port: usize) {
        let base = port * COS;
        while self.arriving[port] < self.cfg.window {
            if self.queues[base..base + COS].iter().all(VecDeque::is_empty) {
                return;
            }
            let cos = self.next_cos[port];
            let q = base + cos;
            let Some(&head) = self.queues[q].front() else {
                self.deficit[q] = 0;
                self.next_cos[port] = (cos + 1) % COS;
                continue;
            };
            if u64::from(head.bytes) > self.deficit[q] {
                // This queue's turn is over: it gains its quantum for the next.
                self.deficit[q] += u64::from(self.cfg.quantum[cos]);
                self.next_cos[port] = (cos + 1) % COS;
                continue;
            }
            if head.bytes > self.free[port] {
                return; // wait for reassembly space; the head keeps its turn
            }
            self.queues[q].pop_front();
            self.deficit[q] -= u64::from(head.bytes);
            self.free[port] -= head.bytes;
            self.arriving[port] += 1;
            let f = self.flows.entry(head.flow).or_default();
            let order = f.granted;
            f.granted += 1;
            let desc = Desc {
                rts: head,
                received: 0,
                order,
            };
            let id = match self.free_descs.pop() {
                Some(id) => {
                    self.descs[id as usize] = Some(desc);
                    id
                }
                None => {
                    self.descs.push(Some(desc));
                    self.descs.len() as u32 - 1
                }
            };
            self.grants.push_back(Grant::Cts {
                src: head.src,
                slot: head.slot,
                desc: id,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn config(reassembly_bytes: u32, window: u32, ctd_depth: u32) -> EgressConfig {
        EgressConfig {
            ports: 2,
            reassembly_bytes,
            window,
            ctd_depth,
            ecn_depth: 2,
            quantum: [1000, 500, 500, 500, 500, 500, 500, 500],
        }
    }

    /// One step of a run: an RTS from flow `flow` (its port and CoS follow from the flow), or
    /// a data cell of `bytes` for the `pick`-th packet granted and not yet complete.
    #[derive(Clone, Debug)]
    enum Step {
        Rts { flow: u8, bytes: u32 },
        Data { pick: usize, bytes: u32 },
    }

    fn steps() -> impl Strategy<Value = Vec<Step>> {
        let step = prop_oneof![
            (0u8..6, 1u32..3000).prop_map(|(flow, bytes)| Step::Rts { flow, bytes }),
            (0usize..16, 1u32..400).prop_map(|(pick, bytes)| Step::Data { pick, bytes }),
        ];
        prop::collection::vec(step, 1..300)
    }

    /// What a test run saw, with the reassembly bytes it saw granted and not yet released.
    #[derive(Default)]
    struct Seen {
        slots: BTreeMap<u32, Rts>,
        dropped: Vec<u32>,
        released: BTreeMap<u64, Vec<u32>>,
        /// Granted and incomplete: (desc, bytes left).
        granted: Vec<(u32, u32)>,
        granted_bytes: [u64; 2],
    }

    impl Seen {
        /// Takes the egress's outputs and checks its invariants.
        fn check(&mut self, e: &mut Egress, cfg: &EgressConfig) -> Result<(), TestCaseError> {
            while let Some(g) = e.poll_grant() {
                match g {
                    Grant::Cts { slot, desc, .. } => {
                        let r = self.slots[&slot];
                        self.granted.push((desc, r.bytes));
                        self.granted_bytes[r.port as usize] += u64::from(r.bytes);
                    }
                    Grant::Ctd { slot, .. } => self.dropped.push(slot),
                }
            }
            while let Some(r) = e.poll_release() {
                self.granted_bytes[r.rts.port as usize] -= u64::from(r.rts.bytes);
                self.released
                    .entry(r.rts.flow)
                    .or_default()
                    .push(r.rts.slot);
            }
            for port in 0..2u8 {
                // CTS never promises more than the reassembly space.
                let held = self.granted_bytes[port as usize];
                prop_assert!(held <= u64::from(cfg.reassembly_bytes));
                prop_assert_eq!(
                    u64::from(e.free_bytes(port)),
                    u64::from(cfg.reassembly_bytes) - held
                );
                prop_assert!(e.arriving(port) <= cfg.window);
            }
            Ok(())
        }
    }

    /// Drives an egress through `steps`, then completes every granted packet, checking the
    /// invariants after every input, and that each flow's packets not dropped are released
    /// once each and in RTS order.
    fn drive(cfg: EgressConfig, steps: &[Step]) -> Result<(), TestCaseError> {
        let mut e = Egress::new(cfg.clone());
        let mut seen = Seen::default();
        let mut sent: BTreeMap<u64, Vec<u32>> = BTreeMap::new(); // flow -> slots in RTS order
        let mut slot = 0u32;
        for s in steps {
            match *s {
                Step::Rts { flow, bytes } => {
                    let rts = Rts {
                        src: u32::from(flow),
                        slot,
                        port: flow % 2,
                        cos: flow % 3,
                        bytes,
                        flow: u64::from(flow),
                    };
                    let depth = e.depth(rts.port, rts.cos);
                    seen.slots.insert(slot, rts);
                    sent.entry(rts.flow).or_default().push(slot);
                    e.on_rts(rts);
                    seen.check(&mut e, &cfg)?;
                    // A CTD exactly when the queue was at its threshold (or the packet can
                    // never fit).
                    let ctd = seen.dropped.last() == Some(&slot);
                    prop_assert_eq!(
                        ctd,
                        depth >= cfg.ctd_depth as usize || bytes > cfg.reassembly_bytes
                    );
                    slot += 1;
                }
                Step::Data { pick, bytes } => {
                    if seen.granted.is_empty() {
                        continue;
                    }
                    let i = pick % seen.granted.len();
                    let (desc, left) = seen.granted[i];
                    let b = bytes.min(left);
                    if b == left {
                        seen.granted.swap_remove(i);
                    } else {
                        seen.granted[i].1 -= b;
                    }
                    e.on_data(desc, b);
                    seen.check(&mut e, &cfg)?;
                }
            }
        }
        // Complete everything: every packet not dropped is granted and released in the end.
        while let Some((desc, left)) = seen.granted.pop() {
            e.on_data(desc, left);
            seen.check(&mut e, &cfg)?;
        }
        for (flow, order) in &sent {
            let kept: Vec<u32> = order
                .iter()
                .copied()
                .filter(|s| !seen.dropped.contains(s))
                .collect();
            let got = seen.released.get(flow).cloned().unwrap_or_default();
            prop_assert_eq!(got, kept, "flow {}", flow);
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn cts_never_exceeds_reassembly_space_and_flows_release_in_rts_order(
            s in steps(), space in 1000u32..8000, window in 1u32..6, ctd in 1u32..40,
        ) {
            drive(config(space, window, ctd), &s)?;
        }
    }

    /// A deep queue marks what it releases; a shallow one does not.
    #[test]
    fn ecn_follows_the_rts_queue_depth() {
        let mut e = Egress::new(config(1000, 1, 100));
        let rts = |slot| Rts {
            src: 0,
            slot,
            port: 0,
            cos: 0,
            bytes: 1000,
            flow: 7,
        };
        for slot in 0..5 {
            e.on_rts(rts(slot));
        }
        // One granted (space for one), four waiting: above the threshold of 2.
        assert_eq!(
            e.poll_grant(),
            Some(Grant::Cts {
                src: 0,
                slot: 0,
                desc: 0
            })
        );
        assert_eq!(e.poll_grant(), None);
        e.on_data(0, 1000);
        assert!(e.poll_release().expect("released").ecn);
        // The release freed space: the next is granted; drain until the queue is short.
        let mut marks = Vec::new();
        while let Some(Grant::Cts { desc, .. }) = e.poll_grant() {
            e.on_data(desc, 1000);
            marks.push(e.poll_release().expect("released").ecn);
        }
        assert_eq!(marks, [true, false, false, false]);
    }

    /// With both queues backlogged, two CoS share the grants in the ratio of their quanta.
    #[test]
    fn cos_queues_share_by_their_quanta() {
        let mut e = Egress::new(config(1 << 30, 1, 1 << 20));
        for slot in 0..300 {
            for cos in 0..2u8 {
                e.on_rts(Rts {
                    src: 0,
                    slot: slot * 2 + u32::from(cos),
                    port: 0,
                    cos,
                    bytes: 100,
                    flow: u64::from(cos),
                });
            }
        }
        // One packet at a time (window 1): each completion lets the round-robin choose again.
        let mut order = Vec::new();
        while let Some(Grant::Cts { slot, desc, .. }) = e.poll_grant() {
            order.push(slot % 2);
            e.on_data(desc, 100);
            if order.len() == 200 {
                break;
            }
        }
        // After the first rounds, every round grants 1000 B of CoS 0 and 500 B of CoS 1.
        let start = order.iter().position(|&c| c == 1).expect("CoS 1 served");
        for round in order[start..].chunks_exact(15) {
            let cos1 = round.iter().filter(|&&c| c == 1).count();
            assert_eq!(cos1, 5, "{order:?}");
        }
    }
}
