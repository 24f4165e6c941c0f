//! NDP (Handley et al., SIGCOMM 2017): the sender starts a flow at line rate with an initial
//! window; switches trim packets that do not fit to their header; the receiver acknowledges
//! every packet, answers every trimmed header with a NACK, and for each arrival queues one PULL,
//! which the host's pacer releases at its link rate; every PULL lets the sender send one packet,
//! retransmissions first.
//!
//! Choices where the paper leaves room, each a field of [`NdpConfig`]:
//! - a PULL carries a per-flow pull counter (`ack`), and the sender sends one packet per counter
//!   step it has not yet honoured, so reordered or duplicated pulls neither lose nor double
//!   credit;
//! - the sender keeps a coarse retransmission timer (`rto`) for packets whose header was lost
//!   too (only when a priority queue overflows, which our queues never do, or after failures):
//!   every `rto` while packets are outstanding it re-queues those sent at least `rto` ago and
//!   still unacknowledged;
//! - the pacer belongs to the driver (the simulator's host), at `pull_rate` of the link.

use crate::endpoint::{Receiver, Sender, Transport};
use crate::reorder::Reassembly;
use crate::segment::{Kind, RETX, Segment, TRIMMED};
use shoal_base::{Dur, Time};
use std::collections::{BTreeMap, VecDeque};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NdpConfig {
    /// Payload bytes per full packet.
    pub mss: u32,
    /// Packets sent at line rate before the first pull.
    pub initial_window: u32,
    /// Resend what is unacknowledged this long after it was sent.
    pub rto: Dur,
}

impl NdpConfig {
    /// The htsim example's values: 9000 B packets, initial window 23, a 1 ms timer.
    pub fn new(mss: u32, initial_window: u32) -> NdpConfig {
        NdpConfig {
            mss,
            initial_window,
            rto: Dur::from_us(1_000),
        }
    }
}

/// NDP as a [`Transport`].
#[derive(Clone, Debug)]
pub struct Ndp(pub NdpConfig);

impl Transport for Ndp {
    type Sender = NdpSender;
    type Receiver = NdpReceiver;

    fn name(&self) -> &str {
        "ndp"
    }

    fn mss(&self) -> u32 {
        self.0.mss
    }

    fn sender(&self, bytes: u64, _now: Time) -> NdpSender {
        NdpSender::new(self.0, bytes)
    }

    fn receiver(&self, bytes: u64) -> NdpReceiver {
        NdpReceiver::new(self.0.mss, bytes)
    }
}

/// The sending side of an NDP flow.
#[derive(Clone, Debug)]
pub struct NdpSender {
    cfg: NdpConfig,
    size: u64,
    /// Next new byte to send.
    nxt: u64,
    /// Packets that may be sent now: the initial window, then one per pull.
    credit: u64,
    /// Highest pull counter honoured.
    pulled: u64,
    /// Offsets to resend, in the order they were NACKed.
    resend: VecDeque<u64>,
    /// Sent and not yet acknowledged: offset → time last sent.
    unacked: BTreeMap<u64, Time>,
    acked_bytes: u64,
    /// When the retransmission timer next looks for stale packets.
    rto_at: Option<Time>,
    timeouts: u64,
}

impl NdpSender {
    pub fn new(cfg: NdpConfig, size: u64) -> NdpSender {
        NdpSender {
            cfg,
            size,
            nxt: 0,
            credit: cfg.initial_window.max(1) as u64,
            pulled: 0,
            resend: VecDeque::new(),
            unacked: BTreeMap::new(),
            acked_bytes: 0,
            rto_at: None,
            timeouts: 0,
        }
    }

    fn len_at(&self, seq: u64) -> u32 {
        (self.size - seq).min(self.cfg.mss as u64) as u32
    }
}

impl Sender for NdpSender {
    fn handle(&mut self, _now: Time, seg: &Segment) {
        match seg.kind {
            Kind::Ack => {
                if self.unacked.remove(&seg.seq).is_some() {
                    self.acked_bytes += self.len_at(seg.seq) as u64;
                }
                if self.unacked.is_empty() {
                    self.rto_at = None;
                }
            }
            Kind::Nack
                if self.unacked.contains_key(&seg.seq) && !self.resend.contains(&seg.seq) =>
            {
                self.resend.push_back(seg.seq);
            }
            Kind::Pull if seg.ack > self.pulled => {
                self.credit += seg.ack - self.pulled;
                self.pulled = seg.ack;
            }
            _ => {}
        }
    }

    fn handle_timeout(&mut self, now: Time) {
        if self.rto_at.is_none_or(|at| now < at) {
            return;
        }
        let rto = self.cfg.rto;
        // One look per period: anything sent a full period ago and not acknowledged is resent.
        self.rto_at = (!self.unacked.is_empty()).then_some(now + rto);
        let mut any = false;
        for (&seq, &sent) in &self.unacked {
            if sent + rto <= now && !self.resend.contains(&seq) {
                self.resend.push_back(seq);
                any = true;
            }
        }
        if any {
            self.timeouts += 1;
            // Nobody will pull for a packet whose every trace was lost: grant it ourselves.
            self.credit += 1;
        }
    }

    fn poll_transmit(&mut self, now: Time) -> Option<Segment> {
        if self.credit == 0 {
            return None;
        }
        let (seq, retx) = if let Some(seq) = self.resend.pop_front() {
            (seq, true)
        } else if self.nxt < self.size {
            let seq = self.nxt;
            self.nxt += self.len_at(seq) as u64;
            (seq, false)
        } else {
            return None;
        };
        self.credit -= 1;
        self.unacked.insert(seq, now);
        if self.rto_at.is_none() {
            self.rto_at = Some(now + self.cfg.rto);
        }
        let mut seg = Segment::data(seq, self.len_at(seq), now);
        if retx {
            seg.flags |= RETX;
        }
        Some(seg)
    }

    fn timeout(&self) -> Option<Time> {
        self.rto_at
    }

    fn is_finished(&self) -> bool {
        self.acked_bytes >= self.size
    }

    fn timeouts(&self) -> u64 {
        self.timeouts
    }
}

/// The receiving side: acks, nacks and pulls.
#[derive(Clone, Debug)]
pub struct NdpReceiver {
    size: u64,
    got: Reassembly,
    pulls: u32,
    /// Pulls issued so far (the counter carried by each pull).
    issued: u64,
}

impl NdpReceiver {
    pub fn new(_mss: u32, size: u64) -> NdpReceiver {
        NdpReceiver {
            size,
            got: Reassembly::default(),
            pulls: 0,
            issued: 0,
        }
    }
}

impl Receiver for NdpReceiver {
    fn handle(&mut self, now: Time, seg: &Segment) -> Option<Segment> {
        if seg.kind != Kind::Data {
            return None;
        }
        let kind = if seg.has(TRIMMED) {
            Kind::Nack
        } else {
            self.got.insert(seg.seq, seg.payload);
            Kind::Ack
        };
        // Every arrival, full or trimmed, earns the sender one more packet, until the flow is
        // complete (a pull then would only carry an empty credit).
        if self.got.in_order() < self.size {
            self.pulls += 1;
        }
        Some(Segment::control(kind, seg.seq, self.got.in_order(), now))
    }

    fn delivered(&self) -> u64 {
        self.got.in_order().min(self.size)
    }

    fn held_out_of_order(&self) -> u64 {
        self.got.held()
    }

    fn pulls_pending(&self) -> u32 {
        self.pulls
    }

    fn next_pull(&mut self, now: Time) -> Option<Segment> {
        if self.pulls == 0 {
            return None;
        }
        self.pulls -= 1;
        self.issued += 1;
        Some(Segment::control(Kind::Pull, 0, self.issued, now))
    }
}
