//! DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015): the
//! RoCEv2 rate-based congestion control, with RoCE's go-back-N reliability.
//!
//! - Reaction point (the sender, [`DcqcnSender`]): paces packets at its current rate RC. A CNP
//!   sets the target RT ← RC, cuts RC ← RC·(1 − α/2) and raises α ← (1 − g)α + g; α decays as
//!   α ← (1 − g)α every `alpha_interval` without a CNP. After a cut, the rate grows on increase
//!   events (every `increase_interval` and every `byte_counter` bytes sent, both counted from the
//!   last CNP): the first `fast_recovery_steps` events are fast recovery RC ← (RT + RC)/2, then
//!   additive increase (RT += R_AI) and, once both counters pass F, hyper increase
//!   (RT += i·R_HAI), each followed by RC ← (RT + RC)/2.
//! - Notification point (the receiver, [`DcqcnReceiver`]): when a CE-marked data packet arrives
//!   and no CNP went to the flow in the last `cnp_interval`, it sends a CNP at once.
//! - Reliability (RoCEv2 RC): the receiver accepts only the next expected packet and discards
//!   anything beyond a gap, answering the first such packet with a NACK carrying the expected
//!   offset; the sender goes back to it. It acknowledges cumulatively every `ack_every` packets
//!   (and the last one, and any duplicate); every control segment (ACK, NACK, CNP) carries the
//!   cumulative point in `ack`. A fixed retransmission timer (`rto`, re-armed on progress)
//!   recovers a lost tail by going back to the first unacknowledged byte.
//!
//! Choices and deviations, each a [`DcqcnConfig`] field where it is a number:
//! - The paper's switches mark with RED (Kmin, Kmax, Pmax); ours mark deterministically above a
//!   threshold K (`Discipline::Ecn`), so every flow crossing a congested queue sees marks at the
//!   same instants. There is no PFC: a full queue drops and go-back-N repairs it.
//! - Increase events count from 0 after each CNP and the phase is chosen before the count
//!   advances, so exactly F events are fast recovery (as in the ns-3 Mellanox model of HPCC).
//! - All state is integer: rates in bits/s (`u64`), α in 2^-20 fixed point, times in ps, so runs
//!   are bit-identical on every machine. A rate never exceeds `line_rate` nor falls below
//!   `min_rate`.
//! - The sender paces by itself: it hands out a packet only when its pacing instant is reached,
//!   and spaces packets by their wire size (payload plus `header_bytes`) at RC, so RC = line
//!   rate keeps the NIC exactly busy when `header_bytes` matches the network's.

use crate::endpoint::{Receiver, Sender, Transport};
use crate::segment::{CE, Kind, RETX, Segment};
use shoal_base::{Dur, Rate, Time};

/// α in fixed point: 1.0 is `ONE`.
const ONE: u64 = 1 << 20;

/// DCQCN's parameters. [`DcqcnConfig::paper`] gives the paper's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DcqcnConfig {
    /// Payload bytes per full packet (1000: the payload size of HPCC's ns-3 RoCE simulations).
    pub mss: u32,
    /// Header bytes on the wire per data packet, for pacing; set it to the network's
    /// `NetConfig::header_bytes` (40 by default there).
    pub header_bytes: u32,
    /// The NIC's line rate: flows start at it and never exceed it (paper: flows start at line
    /// rate, no slow start).
    pub line_rate: Rate,
    /// Floor of the current and target rate (ours: line rate / 1000, 10 Mb/s at 10 Gb/s; the
    /// paper gives none, and a floor keeps the pacing gap finite).
    pub min_rate: Rate,
    /// α's gain g = 2^-`g_shift` (paper: g = 1/256, so 8).
    pub g_shift: u32,
    /// α decays by (1 − g) when this passes without a CNP (paper: K = 55 µs).
    pub alpha_interval: Dur,
    /// Rate increase timer T (paper: 55 µs).
    pub increase_interval: Dur,
    /// Rate increase byte counter B, in payload bytes sent (paper: 10 MB).
    pub byte_counter: u64,
    /// Fast recovery steps F (paper: 5).
    pub fast_recovery_steps: u32,
    /// Additive increase R_AI (paper: 40 Mb/s at 40 Gb/s; scaled with the line rate to line/1000,
    /// 10 Mb/s at 10 Gb/s).
    pub rate_ai: Rate,
    /// Hyper increase R_HAI (ten times R_AI here; the paper's value is not reproduced).
    pub rate_hai: Rate,
    /// At most one CNP per flow per this interval at the receiver (paper: N = 50 µs).
    pub cnp_interval: Dur,
    /// The receiver acknowledges every this many in-order packets (1, as HPCC's ns-3 RoCE model
    /// does). Above 1, keep `rto` above `ack_every` packet times at `min_rate`.
    pub ack_every: u32,
    /// At most this many full packets unacknowledged (`None`: no limit, the rate alone paces).
    /// Shoal's §7.3 gives its DCQCN baseline a 35-packet window.
    pub max_window: Option<u32>,
    /// Retransmission timeout for a lost tail, re-armed whenever the cumulative ack moves (ours:
    /// 1 ms, like TCP's minimum here; RoCE NICs use a configurable 4.096 µs·2^n).
    pub rto: Dur,
}

impl DcqcnConfig {
    /// The paper's parameters at `line_rate`, with the scaled and chosen values described on
    /// each field.
    pub fn paper(line_rate: Rate) -> DcqcnConfig {
        let ai = Rate((line_rate.0 / 1000).max(1));
        DcqcnConfig {
            mss: 1000,
            header_bytes: 40,
            line_rate,
            min_rate: Rate((line_rate.0 / 1000).max(1)),
            g_shift: 8,
            alpha_interval: Dur::from_us(55),
            increase_interval: Dur::from_us(55),
            byte_counter: 10_000_000,
            fast_recovery_steps: 5,
            rate_ai: ai,
            rate_hai: Rate(ai.0 * 10),
            cnp_interval: Dur::from_us(50),
            ack_every: 1,
            max_window: None,
            rto: Dur::from_us(1_000),
        }
    }
}

/// DCQCN as a [`Transport`].
#[derive(Clone, Debug)]
pub struct Dcqcn(pub DcqcnConfig);

impl Transport for Dcqcn {
    type Sender = DcqcnSender;
    type Receiver = DcqcnReceiver;

    fn name(&self) -> &str {
        "dcqcn"
    }

    fn mss(&self) -> u32 {
        self.0.mss
    }

    fn sender(&self, bytes: u64, now: Time) -> DcqcnSender {
        DcqcnSender::new(self.0, bytes, now)
    }

    fn receiver(&self, bytes: u64) -> DcqcnReceiver {
        DcqcnReceiver::new(self.0, bytes)
    }
}

/// The reaction point: a paced, rate-controlled go-back-N sender.
#[derive(Clone, Debug)]
pub struct DcqcnSender {
    cfg: DcqcnConfig,
    size: u64,
    /// Every byte below this is acknowledged.
    una: u64,
    /// Next byte to send (falls back on a NACK or a timeout).
    nxt: u64,
    /// Highest byte ever sent.
    high: u64,
    /// Current rate RC and target rate RT, bits/s.
    rc: u64,
    rt: u64,
    alpha: u64,
    /// The last time the driver called in: a pacing instant at or before it is due at once.
    clock: Time,
    next_send: Time,
    alpha_at: Time,
    increase_at: Time,
    /// Increase events since the last CNP: timer expiries (T) and byte counter expiries (BC).
    t_count: u32,
    bc_count: u32,
    /// Payload bytes sent since the byte counter last expired.
    bytes_since: u64,
    rto_at: Option<Time>,
    cnps: u64,
    timeouts: u64,
}

impl DcqcnSender {
    pub fn new(cfg: DcqcnConfig, size: u64, now: Time) -> DcqcnSender {
        let line = cfg.line_rate.0;
        DcqcnSender {
            cfg,
            size,
            una: 0,
            nxt: 0,
            high: 0,
            rc: line,
            rt: line,
            alpha: ONE,
            clock: now,
            next_send: now,
            alpha_at: now + cfg.alpha_interval,
            increase_at: now + cfg.increase_interval,
            t_count: 0,
            bc_count: 0,
            bytes_since: 0,
            rto_at: None,
            cnps: 0,
            timeouts: 0,
        }
    }

    /// The current rate RC.
    pub fn rate(&self) -> Rate {
        Rate(self.rc)
    }

    /// The target rate RT.
    pub fn target(&self) -> Rate {
        Rate(self.rt)
    }

    /// α in [0, 1], for reports and tests.
    pub fn alpha(&self) -> f64 {
        self.alpha as f64 / ONE as f64
    }

    /// CNPs received so far.
    pub fn cnps(&self) -> u64 {
        self.cnps
    }

    fn clamp_rates(&mut self) {
        let (lo, hi) = (
            self.cfg.min_rate.0.min(self.cfg.line_rate.0),
            self.cfg.line_rate.0,
        );
        self.rc = self.rc.clamp(lo, hi);
        self.rt = self.rt.clamp(lo, hi);
    }

    /// A CNP: cut the rate with the current α, then raise α, and restart the increase stages.
    fn on_cnp(&mut self, now: Time) {
        self.cnps += 1;
        self.rt = self.rc;
        let cut = (self.rc as u128 * self.alpha as u128 / (2 * ONE as u128)) as u64;
        self.rc -= cut;
        self.alpha = self.alpha - (self.alpha >> self.cfg.g_shift) + (ONE >> self.cfg.g_shift);
        self.alpha_at = now + self.cfg.alpha_interval;
        self.increase_at = now + self.cfg.increase_interval;
        self.t_count = 0;
        self.bc_count = 0;
        self.bytes_since = 0;
        self.clamp_rates();
    }

    /// One increase event; the phase follows the counters before this event is counted.
    fn increase(&mut self) {
        let f = self.cfg.fast_recovery_steps;
        let (hi, lo) = (
            self.t_count.max(self.bc_count),
            self.t_count.min(self.bc_count),
        );
        if hi < f {
            // Fast recovery: RT stays.
        } else if lo > f {
            self.rt = self
                .rt
                .saturating_add((lo - f) as u64 * self.cfg.rate_hai.0);
        } else {
            self.rt = self.rt.saturating_add(self.cfg.rate_ai.0);
        }
        self.rt = self.rt.min(self.cfg.line_rate.0);
        // Rounded up, so RC reaches RT rather than stalling a bit/s below it.
        self.rc = (self.rc as u128 + self.rt as u128).div_ceil(2) as u64;
        self.clamp_rates();
    }

    fn has_data(&self) -> bool {
        self.nxt < self.size
    }
}

impl Sender for DcqcnSender {
    fn handle(&mut self, now: Time, seg: &Segment) {
        self.clock = now;
        if seg.kind == Kind::Data {
            return;
        }
        let ack = seg.ack.min(self.size);
        if ack > self.una {
            self.una = ack;
            self.nxt = self.nxt.max(ack);
            self.rto_at = (self.una < self.high).then_some(now + self.cfg.rto);
        }
        match seg.kind {
            Kind::Nack if ack < self.nxt => self.nxt = ack,
            Kind::Cnp => self.on_cnp(now),
            _ => {}
        }
    }

    fn handle_timeout(&mut self, now: Time) {
        self.clock = now;
        if self.is_finished() {
            return;
        }
        while self.alpha_at <= now {
            self.alpha -= self.alpha >> self.cfg.g_shift;
            self.alpha_at += self.cfg.alpha_interval;
        }
        while self.increase_at <= now {
            self.increase();
            self.t_count = self.t_count.saturating_add(1);
            self.increase_at += self.cfg.increase_interval;
        }
        if self.rto_at.is_some_and(|at| at <= now) {
            self.timeouts += 1;
            self.nxt = self.una;
            self.rto_at = Some(now + self.cfg.rto);
        }
    }

    fn poll_transmit(&mut self, now: Time) -> Option<Segment> {
        self.clock = now;
        if !self.has_data() || now < self.next_send {
            return None;
        }
        if let Some(w) = self.cfg.max_window
            && self.nxt - self.una >= w as u64 * self.cfg.mss as u64
        {
            return None; // an ack reopens the window
        }
        let len = (self.size - self.nxt).min(self.cfg.mss as u64) as u32;
        let mut seg = Segment::data(self.nxt, len, now);
        if self.nxt < self.high {
            seg.flags |= RETX;
        }
        self.nxt += len as u64;
        self.high = self.high.max(self.nxt);
        self.next_send = now + Rate(self.rc).serialize((len + self.cfg.header_bytes) as u64);
        if self.rto_at.is_none() {
            self.rto_at = Some(now + self.cfg.rto);
        }
        self.bytes_since += len as u64;
        if self.bytes_since >= self.cfg.byte_counter {
            self.bytes_since -= self.cfg.byte_counter;
            self.increase();
            self.bc_count = self.bc_count.saturating_add(1);
        }
        Some(seg)
    }

    fn timeout(&self) -> Option<Time> {
        if self.is_finished() {
            return None;
        }
        let pace = (self.has_data() && self.next_send > self.clock).then_some(self.next_send);
        [
            Some(self.alpha_at),
            Some(self.increase_at),
            self.rto_at,
            pace,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn is_finished(&self) -> bool {
        self.una >= self.size
    }

    fn timeouts(&self) -> u64 {
        self.timeouts
    }
}

/// The notification point and RoCE responder: in-order acceptance, NACKs, CNPs.
#[derive(Clone, Debug)]
pub struct DcqcnReceiver {
    cfg: DcqcnConfig,
    size: u64,
    /// Every byte below this has arrived; nothing beyond it is kept.
    expected: u64,
    /// In-order packets since the last reply.
    since_reply: u32,
    /// The offset last NACKed (one NACK per gap).
    nacked: Option<u64>,
    last_cnp: Option<Time>,
    cnps: u64,
}

impl DcqcnReceiver {
    pub fn new(cfg: DcqcnConfig, size: u64) -> DcqcnReceiver {
        DcqcnReceiver {
            cfg,
            size,
            expected: 0,
            since_reply: 0,
            nacked: None,
            last_cnp: None,
            cnps: 0,
        }
    }

    /// CNPs sent so far.
    pub fn cnps(&self) -> u64 {
        self.cnps
    }
}

impl Receiver for DcqcnReceiver {
    fn handle(&mut self, now: Time, seg: &Segment) -> Option<Segment> {
        if seg.kind != Kind::Data {
            return None;
        }
        let mut must_ack = false;
        let mut nack = false;
        if seg.seq == self.expected {
            self.expected += seg.payload as u64;
            self.since_reply += 1;
            must_ack = self.expected >= self.size || seg.has(RETX);
        } else if seg.seq > self.expected {
            // Go-back-N: drop it; the first packet past the gap asks for a resend.
            if self.nacked != Some(self.expected) {
                self.nacked = Some(self.expected);
                nack = true;
            }
        } else {
            must_ack = true; // a duplicate: the sender may have missed our ack
        }
        let cnp_due = seg.has(CE)
            && self
                .last_cnp
                .is_none_or(|t| now >= t + self.cfg.cnp_interval);
        let kind = if nack {
            Kind::Nack
        } else if cnp_due {
            self.last_cnp = Some(now);
            self.cnps += 1;
            Kind::Cnp
        } else if must_ack || self.since_reply >= self.cfg.ack_every {
            Kind::Ack
        } else {
            return None;
        };
        self.since_reply = 0;
        Some(Segment::control(kind, seg.seq, self.expected, seg.stamp))
    }

    fn delivered(&self) -> u64 {
        self.expected.min(self.size)
    }

    fn held_out_of_order(&self) -> u64 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BIG: u64 = 1 << 40;

    fn cfg() -> DcqcnConfig {
        DcqcnConfig::paper(Rate::gbps(10))
    }

    fn cnp(at: Time) -> Segment {
        Segment::control(Kind::Cnp, 0, 0, at)
    }

    fn us(n: u64) -> Time {
        Time(n * 1_000_000)
    }

    #[test]
    fn a_cnp_cuts_the_rate_by_half_alpha_and_sets_the_target() {
        let mut s = DcqcnSender::new(cfg(), BIG, Time::ZERO);
        assert_eq!(s.rate(), Rate::gbps(10));
        // α starts at 1: the first CNP halves the rate.
        s.handle(us(1), &cnp(us(1)));
        assert_eq!(s.target(), Rate::gbps(10));
        assert_eq!(s.rate(), Rate::gbps(5));
        // α ← (1 − g) + g = 1 still; the next cut halves again, target = the rate before it.
        s.handle(us(2), &cnp(us(2)));
        assert_eq!(s.target(), Rate::gbps(5));
        assert_eq!(s.rate().0, 2_500_000_000);
        // With a smaller α the cut is α/2 of the rate.
        let mut s = DcqcnSender::new(cfg(), BIG, Time::ZERO);
        s.alpha = ONE / 4;
        s.handle(us(1), &cnp(us(1)));
        assert_eq!(s.rate().0, 10_000_000_000 * 7 / 8);
        assert_eq!(s.alpha, ONE / 4 - ((ONE / 4) >> 8) + (ONE >> 8));
    }

    #[test]
    fn without_cnps_alpha_decays_by_one_minus_g_every_55_us() {
        let mut s = DcqcnSender::new(cfg(), BIG, Time::ZERO);
        s.handle(us(0), &cnp(us(0)));
        let a0 = s.alpha;
        s.handle_timeout(us(54));
        assert_eq!(s.alpha, a0, "no decay before 55 µs");
        s.handle_timeout(us(55));
        assert_eq!(s.alpha, a0 - (a0 >> 8));
        let mut want = a0;
        for _ in 0..10 {
            want -= want >> 8;
        }
        s.handle_timeout(us(550));
        assert_eq!(s.alpha, want);
        // (1 − 1/256)^10 ≈ 0.9616.
        assert!((s.alpha() - 0.9616).abs() < 1e-3, "{}", s.alpha());
        // A CNP restarts the α timer.
        s.handle(us(560), &cnp(us(560)));
        let a1 = s.alpha;
        s.handle_timeout(us(605));
        assert_eq!(s.alpha, a1);
    }

    #[test]
    fn fast_recovery_halves_the_gap_to_the_target_for_five_steps_then_adds() {
        let mut s = DcqcnSender::new(cfg(), BIG, Time::ZERO);
        // Two CNPs: RT = 5 Gb/s, RC = 2.5 Gb/s, so additive increase has room to show.
        s.handle(us(0), &cnp(us(0)));
        s.handle(us(0), &cnp(us(0)));
        let target = s.target().0;
        assert_eq!(target, 5_000_000_000);
        let mut gap = target - s.rate().0;
        for step in 1..=5u64 {
            s.handle_timeout(us(55 * step));
            assert_eq!(s.target().0, target, "fast recovery keeps RT");
            let now_gap = target - s.rate().0;
            assert!(
                now_gap.abs_diff(gap / 2) <= 1,
                "step {step}: {now_gap} vs {gap}"
            );
            gap = now_gap;
        }
        // After F = 5 steps the gap is 1/32 of the cut; then additive increase moves RT.
        assert!((target - s.rate().0).abs_diff(2_500_000_000 / 32) <= 5);
        s.handle_timeout(us(55 * 6));
        assert_eq!(s.target().0, target + cfg().rate_ai.0);
    }

    #[test]
    fn the_rate_stays_between_the_floor_and_line_rate() {
        let mut s = DcqcnSender::new(cfg(), BIG, Time::ZERO);
        for i in 0..200 {
            s.handle(us(i), &cnp(us(i)));
            assert!(s.rate() >= cfg().min_rate);
        }
        assert_eq!(s.rate(), cfg().min_rate);
        // Recovery (fast, additive, and the byte counter would add hyper) never passes line rate.
        for i in 1..100_000 {
            s.handle_timeout(us(200 + 55 * i));
            assert!(s.rate() <= Rate::gbps(10) && s.target() <= Rate::gbps(10));
        }
        assert_eq!(s.rate(), Rate::gbps(10));
    }

    #[test]
    fn the_sender_paces_at_its_rate_and_goes_back_on_a_nack() {
        let c = cfg();
        let mut s = DcqcnSender::new(c, 10 * 1000, Time::ZERO);
        let a = s.poll_transmit(Time::ZERO).expect("first packet at once");
        assert_eq!((a.seq, a.payload), (0, 1000));
        assert!(s.poll_transmit(Time::ZERO).is_none(), "paced");
        let gap = Rate::gbps(10).serialize(1040);
        assert_eq!(s.timeout(), Some(Time(gap.0)));
        let b = s.poll_transmit(Time(gap.0)).expect("second");
        assert_eq!(b.seq, 1000);
        // The receiver missed 1000: the sender goes back to it.
        let mut r = DcqcnReceiver::new(c, 10 * 1000);
        assert_eq!(r.handle(Time(0), &a).map(|x| x.kind), Some(Kind::Ack));
        let c2 = s.poll_transmit(Time(2 * gap.0)).expect("third");
        let nack = r.handle(Time(3 * gap.0), &c2).expect("nack");
        assert_eq!((nack.kind, nack.ack), (Kind::Nack, 1000));
        s.handle(Time(3 * gap.0), &nack);
        let again = s.poll_transmit(Time(3 * gap.0)).expect("resend");
        assert_eq!(again.seq, 1000);
        assert!(again.has(RETX));
    }

    #[test]
    fn a_lost_tail_is_resent_after_the_retransmission_timeout() {
        let c = cfg();
        let mut s = DcqcnSender::new(c, 3 * 1000, Time::ZERO);
        let mut t = Time::ZERO;
        let mut sent = 0;
        while sent < 3 {
            if s.poll_transmit(t).is_some() {
                sent += 1;
            }
            t = s.timeout().expect("pacing");
        }
        // Only the first packet is acknowledged; the rest vanish.
        s.handle(
            Time(100_000),
            &Segment::control(Kind::Ack, 0, 1000, Time::ZERO),
        );
        let rto = Time(100_000) + c.rto;
        assert!(s.poll_transmit(Time(200_000)).is_none(), "everything sent");
        s.handle_timeout(rto);
        assert_eq!(s.timeouts(), 1);
        assert!(s.timeout().is_some_and(|t| t > rto));
        let again = s.poll_transmit(rto).expect("go back");
        assert_eq!(again.seq, 1000);
        assert!(again.has(RETX));
    }

    #[test]
    fn the_receiver_sends_at_most_one_cnp_per_interval() {
        let mut r = DcqcnReceiver::new(cfg(), BIG);
        let mut kinds = Vec::new();
        for i in 0..120u64 {
            let mut d = Segment::data(i * 1000, 1000, us(i));
            d.flags |= CE;
            kinds.push(r.handle(us(i), &d).expect("acks every packet").kind);
        }
        let cnps: Vec<usize> = (0..kinds.len())
            .filter(|&i| kinds[i] == Kind::Cnp)
            .collect();
        assert_eq!(cnps, vec![0, 50, 100]);
    }
}
