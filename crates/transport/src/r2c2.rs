//! R2C2 (Costa et al., "R2C2: A Network Stack for Rack-scale Computers", SIGCOMM 2015): the
//! congestion control of the direct-connect (3D torus) baseline of Shoal §7.3. Flow starts and
//! finishes are broadcast across the rack; every node knows all active flows and their routes,
//! computes max-min fair rates over them, and each sender paces at its flow's computed rate.
//!
//! This module is the end host: a sender paced at a rate set from outside
//! ([`Sender::set_rate`]) and a receiver. The rate computation and the broadcast live in the
//! packet simulator (`shoal-psn`'s `r2c2` module), which needs the topology. The R2C2 paper
//! itself was not available; everything below is what Shoal §7.3 and our issue state plus the
//! choices listed here.
//!
//! Choices (each a [`R2c2Config`] field where it is a number):
//! - Rates are wire rates (payload plus `header_bytes`), like link capacities: the sender spaces
//!   packets by their wire size at the paced rate, as DCQCN does here.
//! - The sender paces at `utilization_ppm` (98% by default) of the computed rate: the max-min
//!   computation allocates data only, and the acks (one per `ack_every` packets, 0.8% of a
//!   link at 64 B per 8 × 1040 B) and broadcasts need the rest, else a saturated link's queue
//!   grows without bound.
//! - A sender sends nothing until it is given a rate (it starts at rate 0); the simulator gives a
//!   new flow the rate its source computes at once, with its own flow added to what it knows.
//! - Reliability: the receiver reassembles out of order (multipath routing reorders) and
//!   acknowledges cumulatively every `ack_every` data packets, on the last byte and on any
//!   duplicate. The sender keeps one retransmission timer, re-armed when the cumulative ack
//!   moves; when it fires, the sender goes back to the first unacknowledged byte (go-back-N;
//!   the receiver ignores what it already has). Torus hosts queue without limit in
//!   `shoal-psn`, so no packet is lost and the timer is a safeguard.
//! - The timer waits `rto` plus the time the sender needs, at its paced rate, to send the
//!   `ack_every` full packets that one ack covers. A fixed `rto` alone fires on every flow paced
//!   below `ack_every` × wire packet / `rto` (67 Mb/s with our defaults) before its ack can
//!   exist, and each spurious go-back-N resends what is already on its way: in an overloaded
//!   torus, where max-min shares fall to a few Mb/s, that added load and hid the real FCTs.
//! - Rates from the node's rate computation reach the sender through [`Sender::set_rate`]; the
//!   transport says it wants them with [`Transport::rate_controlled`].

use crate::endpoint::{Receiver, Sender, Transport};
use crate::reorder::Reassembly;
use crate::segment::{Kind, RETX, Segment};
use shoal_base::{Dur, Rate, Time};

/// R2C2's end-host parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct R2c2Config {
    /// Payload bytes per full packet.
    pub mss: u32,
    /// Header bytes on the wire per data packet, for pacing; set it to the network's
    /// `NetConfig::header_bytes` (40 by default there).
    pub header_bytes: u32,
    /// The sender paces at this fraction of the computed rate, in parts per million.
    pub utilization_ppm: u32,
    /// The receiver acknowledges cumulatively every this many data packets.
    pub ack_every: u32,
    /// Retransmission timeout beyond the time an ack takes to become due at the paced rate
    /// (see the module's choices); re-armed whenever the cumulative ack moves.
    pub rto: Dur,
}

impl R2c2Config {
    /// Our defaults: 1000 B payload (as DCQCN here), 98% pacing, an ack per 8 packets, 1 ms RTO.
    pub fn paper() -> R2c2Config {
        R2c2Config {
            mss: 1000,
            header_bytes: 40,
            utilization_ppm: 980_000,
            ack_every: 8,
            rto: Dur::from_us(1_000),
        }
    }
}

/// R2C2 as a [`Transport`].
#[derive(Clone, Debug)]
pub struct R2c2(pub R2c2Config);

impl Transport for R2c2 {
    type Sender = R2c2Sender;
    type Receiver = R2c2Receiver;

    fn name(&self) -> &str {
        "r2c2"
    }

    fn rate_controlled(&self) -> bool {
        true
    }

    fn mss(&self) -> u32 {
        self.0.mss
    }

    fn sender(&self, bytes: u64, now: Time) -> R2c2Sender {
        R2c2Sender::new(self.0, bytes, now)
    }

    fn receiver(&self, bytes: u64) -> R2c2Receiver {
        R2c2Receiver::new(self.0, bytes)
    }
}

/// A sender paced at an externally computed rate.
#[derive(Clone, Debug)]
pub struct R2c2Sender {
    cfg: R2c2Config,
    size: u64,
    una: u64,
    nxt: u64,
    high: u64,
    /// The computed rate and the paced rate (bits/s, 0 = do not send).
    rate: u64,
    pace: u64,
    clock: Time,
    /// When the last packet went out and its wire bytes: the next instant follows from them at
    /// whatever the rate is then.
    last_tx: Option<(Time, u32)>,
    next_send: Time,
    rto_at: Option<Time>,
    timeouts: u64,
}

impl R2c2Sender {
    pub fn new(cfg: R2c2Config, size: u64, now: Time) -> R2c2Sender {
        R2c2Sender {
            cfg,
            size,
            una: 0,
            nxt: 0,
            high: 0,
            rate: 0,
            pace: 0,
            clock: now,
            last_tx: None,
            next_send: now,
            rto_at: None,
            timeouts: 0,
        }
    }

    /// Paces the flow at `rate` (times `utilization_ppm`) from `now` on: the next packet leaves
    /// one wire-packet time at the new rate after the previous one, or at once if that is past.
    fn pace_at(&mut self, now: Time, rate: Rate) {
        self.clock = self.clock.max(now);
        self.rate = rate.0;
        self.pace = (rate.0 as u128 * self.cfg.utilization_ppm as u128 / 1_000_000) as u64;
        self.next_send = match self.last_tx {
            Some((at, wire)) if self.pace > 0 => at + Rate(self.pace).serialize(wire as u64),
            _ => now,
        };
        // A slower pace delays the ack the timer waits for.
        if let Some(at) = self.rto_at {
            self.rto_at = Some(at.max(self.rto_from(now)));
        }
    }

    /// When the retransmission timer armed at `now` fires: `rto` after the `ack_every` full
    /// packets one ack covers have left at the paced rate.
    fn rto_from(&self, now: Time) -> Time {
        let covered =
            self.cfg.ack_every.max(1) as u64 * (self.cfg.mss + self.cfg.header_bytes) as u64;
        let pacing = if self.pace > 0 {
            Rate(self.pace).serialize(covered)
        } else {
            Dur::ZERO
        };
        now + pacing + self.cfg.rto
    }

    /// The rate last set.
    pub fn rate(&self) -> Rate {
        Rate(self.rate)
    }

    /// The rate packets are paced at.
    pub fn paced(&self) -> Rate {
        Rate(self.pace)
    }

    fn has_data(&self) -> bool {
        self.nxt < self.size
    }
}

impl Sender for R2c2Sender {
    fn handle(&mut self, now: Time, seg: &Segment) {
        self.clock = now;
        if seg.kind != Kind::Ack {
            return;
        }
        let ack = seg.ack.min(self.size);
        if ack > self.una {
            self.una = ack;
            self.nxt = self.nxt.max(ack);
            self.rto_at = (self.una < self.high).then(|| self.rto_from(now));
        }
    }

    fn handle_timeout(&mut self, now: Time) {
        self.clock = now;
        if self.is_finished() {
            return;
        }
        if self.rto_at.is_some_and(|at| at <= now) {
            self.timeouts += 1;
            self.nxt = self.una;
            self.rto_at = Some(self.rto_from(now));
        }
    }

    fn poll_transmit(&mut self, now: Time) -> Option<Segment> {
        self.clock = now;
        if !self.has_data() || self.pace == 0 || now < self.next_send {
            return None;
        }
        let len = (self.size - self.nxt).min(self.cfg.mss as u64) as u32;
        let mut seg = Segment::data(self.nxt, len, now);
        if self.nxt < self.high {
            seg.flags |= RETX;
        }
        self.nxt += len as u64;
        self.high = self.high.max(self.nxt);
        let wire = len + self.cfg.header_bytes;
        self.last_tx = Some((now, wire));
        self.next_send = now + Rate(self.pace).serialize(wire as u64);
        if self.rto_at.is_none() {
            self.rto_at = Some(self.rto_from(now));
        }
        Some(seg)
    }

    fn timeout(&self) -> Option<Time> {
        if self.is_finished() {
            return None;
        }
        let pace = (self.has_data() && self.pace > 0 && self.next_send > self.clock)
            .then_some(self.next_send);
        [self.rto_at, pace].into_iter().flatten().min()
    }

    fn is_finished(&self) -> bool {
        self.una >= self.size
    }

    fn timeouts(&self) -> u64 {
        self.timeouts
    }

    fn set_rate(&mut self, now: Time, rate: Rate) {
        self.pace_at(now, rate);
    }
}

/// Reassembles out of order and acknowledges cumulatively.
#[derive(Clone, Debug)]
pub struct R2c2Receiver {
    cfg: R2c2Config,
    size: u64,
    got: Reassembly,
    since_ack: u32,
}

impl R2c2Receiver {
    pub fn new(cfg: R2c2Config, size: u64) -> R2c2Receiver {
        R2c2Receiver {
            cfg,
            size,
            got: Reassembly::default(),
            since_ack: 0,
        }
    }
}

impl Receiver for R2c2Receiver {
    fn handle(&mut self, _now: Time, seg: &Segment) -> Option<Segment> {
        if seg.kind != Kind::Data {
            return None;
        }
        let new = self.got.insert(seg.seq, seg.payload);
        self.since_ack += 1;
        let must = !new || self.got.in_order() >= self.size;
        if !must && self.since_ack < self.cfg.ack_every.max(1) {
            return None;
        }
        self.since_ack = 0;
        Some(Segment::control(
            Kind::Ack,
            seg.seq,
            self.got.in_order(),
            seg.stamp,
        ))
    }

    fn delivered(&self) -> u64 {
        self.got.in_order().min(self.size)
    }

    fn held_out_of_order(&self) -> u64 {
        self.got.held()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> R2c2Config {
        R2c2Config {
            utilization_ppm: 1_000_000,
            ..R2c2Config::paper()
        }
    }

    #[test]
    fn sends_nothing_until_given_a_rate_then_paces_at_it() {
        let mut s = R2c2Sender::new(cfg(), 10_000, Time::ZERO);
        assert_eq!(s.poll_transmit(Time::ZERO), None);
        assert_eq!(s.timeout(), None);
        s.set_rate(Time::ZERO, Rate::gbps(8));
        assert_eq!(s.rate(), Rate::gbps(8));
        assert!(s.poll_transmit(Time::ZERO).is_some());
        assert_eq!(s.poll_transmit(Time::ZERO), None);
        // 1040 wire bytes at 8 Gb/s: 1.04 µs.
        let gap = Time::ZERO + Dur::from_ns(1040);
        assert_eq!(s.timeout(), Some(gap));
        // Halving the rate moves the next instant to 2.08 µs after the last packet.
        s.set_rate(Time::ZERO, Rate::gbps(4));
        assert_eq!(s.timeout(), Some(Time::ZERO + Dur::from_ns(2080)));
    }

    /// What [`run`] saw.
    struct Outcome {
        sent: u64,
        timeouts: u64,
        delivered: u64,
        done: Time,
    }

    /// Runs a flow of `bytes` at `rate` over a lossless path with `delay` each way, dropping
    /// the first copy of the packet at `lose` if given, until the sender has everything acked.
    fn run(bytes: u64, rate: Rate, delay: Dur, lose: Option<u64>) -> Outcome {
        let mut s = R2c2Sender::new(cfg(), bytes, Time::ZERO);
        let mut r = R2c2Receiver::new(cfg(), bytes);
        s.set_rate(Time::ZERO, rate);
        let mut now = Time::ZERO;
        let (mut lost, mut sent) = (false, 0);
        // Acks in flight, in the order they arrive (one path, one delay).
        let mut acks: std::collections::VecDeque<(Time, Segment)> = Default::default();
        while !s.is_finished() {
            while let Some(seg) = s.poll_transmit(now) {
                sent += 1;
                if Some(seg.seq) == lose && !lost {
                    lost = true;
                    continue;
                }
                if let Some(ack) = r.handle(now + delay, &seg) {
                    acks.push_back((now + delay + delay, ack));
                }
            }
            let next = [acks.front().map(|a| a.0), s.timeout()]
                .into_iter()
                .flatten()
                .min()
                .expect("an unfinished sender waits for something");
            now = next;
            while acks.front().is_some_and(|a| a.0 <= now) {
                let (_, ack) = acks.pop_front().expect("checked");
                s.handle(now, &ack);
            }
            s.handle_timeout(now);
        }
        Outcome {
            sent,
            timeouts: s.timeouts(),
            delivered: r.delivered(),
            done: now,
        }
    }

    #[test]
    fn a_slow_paced_flow_waits_for_its_acks_without_timing_out() {
        // At 10 Mb/s the 8 packets one ack covers take 6.7 ms, far beyond the 1 ms `rto`.
        let out = run(100_000, Rate(10_000_000), Dur::from_us(2), None);
        assert_eq!((out.timeouts, out.delivered), (0, 100_000));
        // 100 packets of 1040 wire bytes at 10 Mb/s, less the last gap, plus a round trip.
        let ideal = Dur::from_ns(99 * 832_000 + 4_000);
        assert!(
            out.done - Time::ZERO <= ideal + Dur::from_ns(1),
            "{:?}",
            out.done
        );
    }

    #[test]
    fn a_slow_paced_flow_still_resends_a_lost_packet_once() {
        let out = run(30_000, Rate(10_000_000), Dur::from_us(2), Some(29_000));
        assert_eq!((out.timeouts, out.delivered), (1, 30_000));
    }

    #[test]
    fn slowing_down_extends_an_armed_timer() {
        let mut s = R2c2Sender::new(cfg(), 100_000, Time::ZERO);
        s.set_rate(Time::ZERO, Rate::gbps(100));
        assert!(s.poll_transmit(Time::ZERO).is_some());
        let armed = s.rto_at.expect("armed by the first packet");
        s.set_rate(Time::ZERO, Rate(1_000_000));
        // 8 × 1040 B at 1 Mb/s is 66.56 ms.
        assert_eq!(
            s.rto_at,
            Some(Time::ZERO + Dur::from_us(66_560) + cfg().rto)
        );
        assert!(s.rto_at > Some(armed));
    }

    #[test]
    fn delivers_everything_and_finishes() {
        let out = run(20_500, Rate::gbps(100), Dur::ZERO, None);
        assert_eq!((out.sent, out.delivered, out.timeouts), (21, 20_500, 0));
    }

    #[test]
    fn a_lost_tail_is_resent_after_the_timeout() {
        let out = run(3_000, Rate::gbps(100), Dur::ZERO, Some(2_000));
        assert_eq!((out.timeouts, out.delivered), (1, 3_000));
    }
}
