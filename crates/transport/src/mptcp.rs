//! Multipath TCP (RFC 8684's data plane, reduced to what congestion needs) with the Linked
//! Increases Algorithm of RFC 6356: a connection of `subflows` NewReno subflows, each with its own
//! sequence space, window, RTT estimate and retransmission timer; the connection's bytes are
//! handed out in segment-sized chunks to whichever subflow has window space.
//!
//! LIA couples only the increase. In congestion avoidance an ack of `acked` bytes on subflow i
//! grows its window by `min(α · acked · mss / cwnd_total, acked · mss / cwnd_i)` with
//! `α = cwnd_total · max_k(cwnd_k / rtt_k²) / (Σ_k cwnd_k / rtt_k)²`, so the first term is
//! `acked · mss · max_k(cwnd_k / rtt_k²) / (Σ_k cwnd_k / rtt_k)²`; slow start, fast recovery,
//! the halving on loss and the timeout are each subflow's own, as NewReno's
//! ([`crate::tcp`]). On one path the coupled term equals NewReno's increase.
//!
//! Choices where the RFCs leave room or the simulators differ, each stated here:
//! - the sums run over the subflows with an RTT sample (a subflow without one has no rate yet);
//!   the increase is computed in f64 (+, −, ×, ÷ in a fixed order, so identical on every
//!   IEEE-754 machine) and its fraction of a byte carried to the next ack;
//! - a data segment carries its subflow offset in `seq` and its connection offset in `ack` (the
//!   data sequence mapping) and its subflow in `Segment::path`; the receiver acknowledges each
//!   subflow cumulatively and keeps everything that arrives out of order, so no connection-level
//!   data ack or receive window is modelled (htsim's MPTCP has neither);
//! - a subflow that times out resends its own chunks (go-back-N within the subflow, as
//!   [`crate::tcp`]); chunks are never reinjected on another subflow;
//! - the scheduler serves subflows with window space round robin, one segment each in turn
//!   (Linux prefers the lowest RTT; with the paths of one fat-tree level the RTTs differ only
//!   by queueing).

use crate::endpoint::{Receiver, Sender, Transport};
use crate::reorder::Reassembly;
use crate::segment::{Kind, RETX, Segment};
use crate::tcp::{RttEstimator, TcpConfig, ack_for};
use shoal_base::{Dur, Time};
use std::collections::VecDeque;

/// Parameters of MPTCP: every subflow's NewReno parameters and how many subflows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MptcpConfig {
    /// Each subflow's parameters (its `dctcp_g_shift` is ignored: subflows are NewReno).
    pub subflow: TcpConfig,
    /// Subflows per connection, at least 1.
    pub subflows: u32,
}

/// MPTCP as a [`Transport`].
#[derive(Clone, Debug)]
pub struct Mptcp(pub MptcpConfig);

impl Transport for Mptcp {
    type Sender = MptcpSender;
    type Receiver = MptcpReceiver;

    fn name(&self) -> &str {
        "mptcp"
    }

    fn mss(&self) -> u32 {
        self.0.subflow.mss
    }

    fn sender(&self, bytes: u64, _now: Time) -> MptcpSender {
        MptcpSender::new(self.0, bytes)
    }

    fn receiver(&self, bytes: u64) -> MptcpReceiver {
        MptcpReceiver::new(bytes, self.0.subflows)
    }

    fn subflows(&self) -> u32 {
        self.0.subflows.max(1)
    }
}

/// A run of connection bytes mapped onto a subflow.
#[derive(Clone, Copy, Debug)]
struct Chunk {
    /// Offset in the subflow.
    sub: u64,
    /// Offset in the connection.
    data: u64,
    len: u32,
}

/// One NewReno subflow, in its own sequence space.
#[derive(Clone, Debug)]
struct Subflow {
    una: u64,
    nxt: u64,
    /// Highest subflow byte ever sent: every byte below it is mapped in `chunks` (or acked).
    high: u64,
    cwnd: u64,
    ssthresh: u64,
    dupacks: u32,
    recover: Option<u64>,
    retransmit: Option<u64>,
    rtt: RttEstimator,
    rto_at: Option<Time>,
    /// The mappings of every byte from `una` to `high`, in subflow order.
    chunks: VecDeque<Chunk>,
    /// The fraction of a byte of coupled increase not yet added to `cwnd`.
    carry: f64,
}

impl Subflow {
    fn new(cfg: &TcpConfig) -> Subflow {
        Subflow {
            una: 0,
            nxt: 0,
            high: 0,
            cwnd: cfg.initial_window.max(1) as u64 * cfg.mss as u64,
            ssthresh: cfg
                .initial_ssthresh
                .map_or(u64::MAX, |s| s as u64 * cfg.mss as u64),
            dupacks: 0,
            recover: None,
            retransmit: None,
            rtt: RttEstimator::new(cfg),
            rto_at: None,
            chunks: VecDeque::new(),
            carry: 0.0,
        }
    }

    fn arm_timer(&mut self, now: Time) {
        self.rto_at = (self.una < self.high).then_some(now + Dur(self.rtt.rto));
    }

    /// The segment that resends the chunk at subflow offset `sub` (below `high`).
    fn resend(&self, sub: u64, path: u16, now: Time) -> Segment {
        let i = self
            .chunks
            .binary_search_by_key(&sub, |c| c.sub)
            .expect("resends start at a chunk: acks and timeouts stop at chunk boundaries");
        let c = self.chunks[i];
        data_segment(c, path, now, true)
    }
}

fn data_segment(c: Chunk, path: u16, now: Time, retx: bool) -> Segment {
    let mut seg = Segment::data(c.sub, c.len, now);
    seg.ack = c.data;
    seg.path = path;
    if retx {
        seg.flags |= RETX;
    }
    seg
}

/// The sending side of an MPTCP connection.
#[derive(Clone, Debug)]
pub struct MptcpSender {
    cfg: TcpConfig,
    size: u64,
    /// Connection bytes handed to a subflow so far.
    assigned: u64,
    subs: Vec<Subflow>,
    /// The subflow the scheduler asks first next time.
    turn: usize,
    timeouts: u64,
}

impl MptcpSender {
    pub fn new(cfg: MptcpConfig, size: u64) -> MptcpSender {
        let n = cfg.subflows.clamp(1, u16::MAX as u32) as usize;
        MptcpSender {
            cfg: cfg.subflow,
            size,
            assigned: 0,
            subs: (0..n).map(|_| Subflow::new(&cfg.subflow)).collect(),
            turn: 0,
            timeouts: 0,
        }
    }

    /// Each subflow's congestion window in bytes, for tests and reports.
    pub fn windows(&self) -> Vec<u64> {
        self.subs.iter().map(|s| s.cwnd).collect()
    }

    fn mss(&self) -> u64 {
        self.cfg.mss as u64
    }

    /// LIA's congestion-avoidance increase for an ack of `acked` bytes on subflow `i`, in
    /// bytes (fractional): the smaller of the coupled and the subflow's own NewReno increase.
    fn lia_increase(&self, i: usize, acked: u64) -> f64 {
        let (mut best, mut sum) = (0.0f64, 0.0f64);
        for s in self.subs.iter().filter(|s| s.rtt.sampled) {
            let (c, r) = (s.cwnd as f64, s.rtt.srtt.max(1) as f64);
            best = best.max(c / (r * r));
            sum += c / r;
        }
        let bytes = (acked * self.mss()) as f64;
        let own = bytes / self.subs[i].cwnd as f64;
        if sum > 0.0 {
            own.min(bytes * best / (sum * sum))
        } else {
            own
        }
    }

    fn cap_window(&mut self, i: usize) {
        let mss = self.mss();
        let s = &mut self.subs[i];
        if let Some(max) = self.cfg.max_window {
            s.cwnd = s.cwnd.min(max as u64 * mss);
        }
        s.cwnd = s.cwnd.max(mss);
    }

    /// The next segment subflow `i` may send now: a resend below `high`, else a new chunk.
    fn next_on(&mut self, i: usize, now: Time) -> Option<Segment> {
        let path = i as u16;
        let mss = self.mss();
        let s = &mut self.subs[i];
        if s.nxt - s.una >= s.cwnd {
            return None;
        }
        let seg = if s.nxt < s.high {
            s.resend(s.nxt, path, now)
        } else if self.assigned < self.size {
            let len = (self.size - self.assigned).min(mss) as u32;
            let c = Chunk {
                sub: s.high,
                data: self.assigned,
                len,
            };
            self.assigned += len as u64;
            s.chunks.push_back(c);
            s.high += len as u64;
            data_segment(c, path, now, false)
        } else {
            return None;
        };
        s.nxt += seg.payload as u64;
        if s.rto_at.is_none() {
            s.arm_timer(now);
        }
        Some(seg)
    }
}

impl Sender for MptcpSender {
    fn handle(&mut self, now: Time, seg: &Segment) {
        let i = seg.path as usize;
        if seg.kind != Kind::Ack || i >= self.subs.len() {
            return;
        }
        let mss = self.mss();
        let s = &self.subs[i];
        let ack = seg.ack.min(s.high);
        if ack > s.una {
            let newly = ack - s.una;
            let avoid = s.recover.is_none() && s.cwnd >= s.ssthresh;
            let increase = if avoid {
                self.lia_increase(i, newly.min(mss))
            } else {
                0.0
            };
            let rto_min = self.cfg.rto_min.0;
            let s = &mut self.subs[i];
            s.rtt.sample(now.0.saturating_sub(seg.stamp.0), rto_min);
            s.una = ack;
            s.nxt = s.nxt.max(ack);
            s.dupacks = 0;
            while s
                .chunks
                .front()
                .is_some_and(|c| c.sub + c.len as u64 <= ack)
            {
                s.chunks.pop_front();
            }
            match s.recover {
                Some(r) if ack >= r => {
                    s.recover = None;
                    s.cwnd = s.ssthresh;
                }
                // NewReno partial ack: the next hole is lost too.
                Some(_) => s.retransmit = Some(s.una),
                None if s.cwnd < s.ssthresh => s.cwnd += newly.min(mss),
                None => {
                    let grow = increase + s.carry;
                    s.cwnd += grow as u64;
                    s.carry = grow.fract();
                }
            }
            self.cap_window(i);
            self.subs[i].arm_timer(now);
        } else if ack == s.una && s.una < s.high {
            let s = &mut self.subs[i];
            s.dupacks += 1;
            if s.recover.is_some() {
                s.cwnd += mss;
            } else if s.dupacks == 3 {
                let flight = s.high - s.una;
                s.ssthresh = (flight / 2).max(2 * mss);
                s.cwnd = s.ssthresh + 3 * mss;
                s.recover = Some(s.high);
                s.retransmit = Some(s.una);
            }
            self.cap_window(i);
        }
    }

    fn handle_timeout(&mut self, now: Time) {
        let mss = self.mss();
        for s in &mut self.subs {
            let Some(at) = s.rto_at else { continue };
            if now < at || s.una >= s.high {
                continue;
            }
            self.timeouts += 1;
            s.ssthresh = ((s.high - s.una) / 2).max(2 * mss);
            s.cwnd = mss;
            s.nxt = s.una;
            s.recover = None;
            s.retransmit = None;
            s.dupacks = 0;
            s.rtt.rto = (s.rtt.rto * 2).min(Dur::from_us(1_000_000).0);
            s.rto_at = Some(now + Dur(s.rtt.rto));
        }
    }

    fn poll_transmit(&mut self, now: Time) -> Option<Segment> {
        let n = self.subs.len();
        for k in 0..n {
            let i = (self.turn + k) % n;
            let s = &mut self.subs[i];
            if let Some(sub) = s.retransmit.take() {
                let seg = s.resend(sub, i as u16, now);
                if s.rto_at.is_none() {
                    s.arm_timer(now);
                }
                return Some(seg);
            }
        }
        for k in 0..n {
            let i = (self.turn + k) % n;
            if let Some(seg) = self.next_on(i, now) {
                self.turn = (i + 1) % n;
                return Some(seg);
            }
        }
        None
    }

    fn timeout(&self) -> Option<Time> {
        self.subs.iter().filter_map(|s| s.rto_at).min()
    }

    fn is_finished(&self) -> bool {
        self.assigned >= self.size && self.subs.iter().all(|s| s.una >= s.high)
    }

    fn timeouts(&self) -> u64 {
        self.timeouts
    }
}

/// The receiving side: acknowledges each subflow cumulatively (echoing CE marks) and delivers
/// the connection's bytes in order.
#[derive(Clone, Debug)]
pub struct MptcpReceiver {
    size: u64,
    data: Reassembly,
    subs: Vec<Reassembly>,
}

impl MptcpReceiver {
    pub fn new(size: u64, subflows: u32) -> MptcpReceiver {
        let n = subflows.clamp(1, u16::MAX as u32) as usize;
        MptcpReceiver {
            size,
            data: Reassembly::default(),
            subs: vec![Reassembly::default(); n],
        }
    }
}

impl Receiver for MptcpReceiver {
    fn handle(&mut self, _now: Time, seg: &Segment) -> Option<Segment> {
        let i = seg.path as usize;
        if seg.kind != Kind::Data || i >= self.subs.len() {
            return None;
        }
        self.subs[i].insert(seg.seq, seg.payload);
        self.data.insert(seg.ack, seg.payload);
        Some(ack_for(seg, self.subs[i].in_order()))
    }

    fn delivered(&self) -> u64 {
        self.data.in_order().min(self.size)
    }

    fn held_out_of_order(&self) -> u64 {
        self.data.held()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(subflows: u32) -> MptcpConfig {
        MptcpConfig {
            subflow: TcpConfig {
                mss: 1000,
                initial_window: 2,
                initial_ssthresh: Some(2),
                ..TcpConfig::newreno()
            },
            subflows,
        }
    }

    /// Sends what the windows allow at `t`, acks every segment at `t + rtt` (in order), and
    /// returns what the windows then are.
    fn one_round(s: &mut MptcpSender, t: Time, rtt: &[u64]) -> Vec<u64> {
        let mut sent = Vec::new();
        while let Some(seg) = s.poll_transmit(t) {
            sent.push(seg);
        }
        sent.sort_by_key(|seg| rtt[seg.path as usize]);
        for seg in sent {
            let at = Time(t.0 + rtt[seg.path as usize]);
            let mut ack = Segment::control(Kind::Ack, seg.seq, seg.seq + 1000, seg.stamp);
            ack.path = seg.path;
            s.handle(at, &ack);
        }
        s.windows()
    }

    #[test]
    fn one_subflow_grows_as_newreno() {
        // Congestion avoidance from 2 segments: two acks of mss add mss²/cwnd each (the second
        // computed in f64, so within a byte of the integer arithmetic).
        let mut s = MptcpSender::new(config(1), 1 << 40);
        let w = one_round(&mut s, Time(0), &[1_000_000]);
        let newreno = 2000 + 500 + 400; // 1000²/2000, then 1000²/2500
        assert!(w[0].abs_diff(newreno) <= 1, "{w:?} against {newreno}");
    }

    #[test]
    fn equal_subflows_together_grow_by_a_share_of_one_tcp() {
        // n subflows with equal windows w and RTTs: α = 1/n, each ack adds mss²/(n²·w), so over
        // a round (n·w/mss acks) the connection grows by mss/n; a loss halves one subflow, 1/n of
        // the connection, so growth and cuts balance where one TCP's would (RFC 6356 §3).
        for n in [2u32, 4, 8] {
            // Windows of 40 segments, so that a round's whole segments are near w/mss.
            let mut cfg = config(n);
            cfg.subflow.initial_window = 40;
            cfg.subflow.initial_ssthresh = Some(40);
            let mut s = MptcpSender::new(cfg, 1 << 40);
            let rtt = vec![1_000_000; n as usize];
            let mut t = Time(0);
            // Rounds until every subflow is sampled and the windows are near equal.
            for _ in 0..3 {
                one_round(&mut s, t, &rtt);
                t = Time(t.0 + 2_000_000);
            }
            let start: u64 = s.windows().iter().sum();
            let after: u64 = one_round(&mut s, t, &rtt).iter().sum();
            let grown = (after - start) as f64;
            let expected = 1000.0 / n as f64;
            assert!(
                (grown - expected).abs() <= 0.25 * expected,
                "n = {n}: the connection grew {grown} B in a round, expected ~{expected} B"
            );
        }
    }

    #[test]
    fn the_subflow_with_the_shorter_rtt_is_not_held_below_its_own_tcp() {
        // The coupled increase never exceeds the subflow's own NewReno increase.
        let mut s = MptcpSender::new(config(2), 1 << 40);
        let rtt = [1_000_000, 8_000_000];
        one_round(&mut s, Time(0), &rtt);
        for i in 0..2 {
            assert!(s.lia_increase(i, 1000) <= 1000.0 * 1000.0 / s.subs[i].cwnd as f64 + 1e-9);
        }
    }

    #[test]
    fn every_byte_is_mapped_once_and_delivered_in_order() {
        let size = 10_500;
        let mut s = MptcpSender::new(config(3), size);
        let mut r = MptcpReceiver::new(size, 3);
        let mut data = Vec::new();
        let mut t = Time(0);
        while !s.is_finished() {
            let mut sent = Vec::new();
            while let Some(seg) = s.poll_transmit(t) {
                sent.push(seg);
            }
            // Deliver in reverse: every segment arrives out of order at the connection level.
            for seg in sent.iter().rev() {
                data.push((seg.ack, seg.payload));
                let ack = r.handle(t, seg).expect("an ack");
                s.handle(Time(t.0 + 1), &ack);
            }
            t = Time(t.0 + 10);
        }
        data.sort();
        let mut next = 0;
        for (off, len) in data {
            assert_eq!(off, next, "chunks tile the connection");
            next += len as u64;
        }
        assert_eq!(next, size);
        assert_eq!(r.delivered(), size);
        assert_eq!(r.held_out_of_order(), 0);
    }
}
