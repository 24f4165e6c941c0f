//! TCP NewReno (RFC 5681 and 6582) and DCTCP (RFC 8257) as one sender with two congestion
//! responses, plus the receiver that acknowledges every segment.
//!
//! Choices where the papers are silent, each a `TcpConfig` field:
//! - sequence numbers count payload bytes; every segment but the last carries `mss` bytes;
//! - the receiver acknowledges every segment at once (no delayed acks) and echoes each CE mark
//!   in that segment's ack, which is DCTCP's precise echo without the delayed-ack state machine;
//! - the retransmission timer follows RFC 6298 (srtt, rttvar, `rto_min`, doubling back-off) and
//!   a timeout restarts from the first unacknowledged byte with a window of one segment
//!   (go-back-N: the receiver keeps what it has, so only holes cost);
//! - DCTCP's α is fixed point (2^-20 units) so runs are identical on every machine; its initial
//!   value is `dctcp_alpha_init` (Linux starts at 1, i.e. the first mark halves the window);
//! - DCTCP's reaction to marks is RFC 8257's by default, or htsim's ([`DctcpReaction`]) when a
//!   run must match that simulator's setup.

use crate::endpoint::{Receiver, Sender, Transport};
use crate::reorder::Reassembly;
use crate::segment::{CE, ECE, Kind, RETX, Segment};
use shoal_base::{Dur, Time};

/// α and the ECN fraction in fixed point: 1.0 is `ONE`.
const ONE: u64 = 1 << 20;

/// Parameters of the TCP family.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpConfig {
    /// Payload bytes per full segment.
    pub mss: u32,
    /// Initial congestion window, in segments.
    pub initial_window: u32,
    /// Upper bound on the congestion window, in segments (`None`: unbounded).
    pub max_window: Option<u32>,
    /// Slow-start threshold before the first loss or mark, in segments (`None`: unbounded, so
    /// slow start runs until the first congestion signal; htsim's DCTCP example starts at 15).
    pub initial_ssthresh: Option<u32>,
    /// Smallest retransmission timeout.
    pub rto_min: Dur,
    /// Timeout before the first RTT sample.
    pub rto_initial: Dur,
    /// DCTCP: the EWMA gain g as a power of two (g = 2^-shift; 4 gives RFC 8257's 1/16).
    /// `None` runs plain NewReno (losses only).
    pub dctcp_g_shift: Option<u32>,
    /// DCTCP: α before the first window of feedback, in [0, 1].
    pub dctcp_alpha_init: f64,
    /// DCTCP: how α is measured and when the window is cut.
    pub dctcp_reaction: DctcpReaction,
}

/// DCTCP's reaction to ECN echoes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DctcpReaction {
    /// RFC 8257: α is the EWMA of the fraction of acknowledged *bytes* that were marked,
    /// updated once per window of data; the window is cut by α/2 at most once per window, and
    /// only in a window whose acks carried a mark.
    #[default]
    Rfc8257,
    /// htsim's DCTCP (csg-htsim `DCTCPSrc`, described here from its behaviour): α is the EWMA
    /// of the fraction of *acks* that carried a mark, updated each time the acks counted since
    /// the last update reach the window as it was then (two packets at the start); at every
    /// such update the window is cut by α/2 and the slow-start threshold set to it whenever
    /// α > 0, whether or not that window saw a mark, even in fast recovery. A marked ack also
    /// ends slow start (threshold lowered to the window) without cutting. The update runs
    /// before the ack's ordinary TCP processing, and a loss restarts the count from the
    /// window at the loss.
    Htsim,
}

impl TcpConfig {
    /// NewReno with common data-centre values: 1460 B segments, initial window 10, RTO 1 ms min.
    pub fn newreno() -> TcpConfig {
        TcpConfig {
            mss: 1460,
            initial_window: 10,
            max_window: None,
            initial_ssthresh: None,
            rto_min: Dur::from_us(1_000),
            rto_initial: Dur::from_us(1_000),
            dctcp_g_shift: None,
            dctcp_alpha_init: 1.0,
            dctcp_reaction: DctcpReaction::Rfc8257,
        }
    }

    /// DCTCP with g = 1/16 and the NewReno defaults otherwise.
    pub fn dctcp() -> TcpConfig {
        TcpConfig {
            dctcp_g_shift: Some(4),
            ..TcpConfig::newreno()
        }
    }
}

/// The TCP family as a [`Transport`].
#[derive(Clone, Debug)]
pub struct Tcp(pub TcpConfig);

impl Transport for Tcp {
    type Sender = TcpSender;
    type Receiver = TcpReceiver;

    fn name(&self) -> &str {
        if self.0.dctcp_g_shift.is_some() {
            "dctcp"
        } else {
            "tcp"
        }
    }

    fn mss(&self) -> u32 {
        self.0.mss
    }

    fn sender(&self, bytes: u64, _now: Time) -> TcpSender {
        TcpSender::new(self.0, bytes)
    }

    fn receiver(&self, bytes: u64) -> TcpReceiver {
        TcpReceiver::new(bytes)
    }
}

/// RFC 6298 round-trip estimator, in picoseconds (shared with MPTCP's subflows).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RttEstimator {
    pub(crate) srtt: u64,
    rttvar: u64,
    pub(crate) rto: u64,
    pub(crate) sampled: bool,
}

impl RttEstimator {
    /// No sample yet: the timeout is `cfg`'s initial one (at least its minimum).
    pub(crate) fn new(cfg: &TcpConfig) -> RttEstimator {
        RttEstimator {
            srtt: 0,
            rttvar: 0,
            rto: cfg.rto_initial.0.max(cfg.rto_min.0),
            sampled: false,
        }
    }

    pub(crate) fn sample(&mut self, rtt: u64, rto_min: u64) {
        if self.sampled {
            let err = self.srtt.abs_diff(rtt);
            self.rttvar = (3 * self.rttvar + err) / 4;
            self.srtt = (7 * self.srtt + rtt) / 8;
        } else {
            self.srtt = rtt;
            self.rttvar = rtt / 2;
            self.sampled = true;
        }
        self.rto = (self.srtt + 4 * self.rttvar).max(rto_min);
    }
}

/// DCTCP's per-window ECN accounting.
#[derive(Clone, Copy, Debug)]
struct DctcpState {
    g_shift: u32,
    alpha: u64,
    /// What this window has acknowledged and how much of it was marked: bytes (RFC 8257) or
    /// acks (htsim).
    acked: u64,
    marked: u64,
    /// RFC 8257: α is updated when the cumulative ack passes this (one window of data).
    /// htsim: α is updated when `acked` acks of `mss` bytes reach this (the window at the
    /// last update).
    window_end: u64,
    /// No second cut until the cumulative ack passes this (one cut per window).
    cut_end: u64,
}

/// The sending side of a TCP or DCTCP flow.
#[derive(Clone, Debug)]
pub struct TcpSender {
    cfg: TcpConfig,
    size: u64,
    una: u64,
    nxt: u64,
    /// Highest byte ever sent (`nxt` falls back after a timeout).
    high: u64,
    cwnd: u64,
    ssthresh: u64,
    dupacks: u32,
    /// NewReno: in fast recovery until the cumulative ack reaches this.
    recover: Option<u64>,
    /// A retransmission of this offset is due before new data.
    retransmit: Option<u64>,
    rtt: RttEstimator,
    rto_at: Option<Time>,
    dctcp: Option<DctcpState>,
    timeouts: u64,
}

impl TcpSender {
    pub fn new(cfg: TcpConfig, size: u64) -> TcpSender {
        let mss = cfg.mss as u64;
        TcpSender {
            cfg,
            size,
            una: 0,
            nxt: 0,
            high: 0,
            cwnd: cfg.initial_window.max(1) as u64 * mss,
            ssthresh: cfg.initial_ssthresh.map_or(u64::MAX, |s| s as u64 * mss),
            dupacks: 0,
            recover: None,
            retransmit: None,
            rtt: RttEstimator::new(&cfg),
            rto_at: None,
            dctcp: cfg.dctcp_g_shift.map(|g_shift| DctcpState {
                g_shift,
                alpha: (cfg.dctcp_alpha_init.clamp(0.0, 1.0) * ONE as f64) as u64,
                acked: 0,
                marked: 0,
                window_end: match cfg.dctcp_reaction {
                    DctcpReaction::Rfc8257 => 0,
                    DctcpReaction::Htsim => 2 * mss,
                },
                cut_end: 0,
            }),
            timeouts: 0,
        }
    }

    /// DCTCP's α in [0, 1] (0 for NewReno), for reports and tests.
    pub fn alpha(&self) -> f64 {
        self.dctcp.map_or(0.0, |d| d.alpha as f64 / ONE as f64)
    }

    fn mss(&self) -> u64 {
        self.cfg.mss as u64
    }

    fn cap_window(&mut self) {
        if let Some(max) = self.cfg.max_window {
            self.cwnd = self.cwnd.min(max as u64 * self.mss());
        }
        self.cwnd = self.cwnd.max(self.mss());
    }

    fn segment_at(&self, seq: u64, now: Time) -> Segment {
        let len = (self.size - seq).min(self.mss()) as u32;
        Segment::data(seq, len, now)
    }

    fn arm_timer(&mut self, now: Time) {
        self.rto_at = (self.una < self.size).then_some(now + Dur(self.rtt.rto));
    }

    /// DCTCP: account one ack's newly acknowledged bytes, update α once per window and cut the
    /// window once per window of marks (RFC 8257 §3.3-3.4).
    fn dctcp_on_ack(&mut self, newly: u64, ece: bool) {
        let Some(mut d) = self.dctcp else { return };
        if self.cfg.dctcp_reaction != DctcpReaction::Rfc8257 {
            return;
        }
        d.acked += newly;
        if ece {
            d.marked += newly;
        }
        if self.una >= d.window_end {
            let fraction = (d.marked * ONE).checked_div(d.acked).unwrap_or(0);
            d.alpha = d.alpha - (d.alpha >> d.g_shift) + (fraction >> d.g_shift);
            d.acked = 0;
            d.marked = 0;
            d.window_end = self.nxt;
        }
        if ece && self.una >= d.cut_end && self.recover.is_none() {
            let cut = self.cwnd * d.alpha / (2 * ONE);
            self.cwnd -= cut;
            self.ssthresh = self.cwnd.max(2 * self.mss());
            self.cwnd = self.cwnd.max(self.mss());
            d.cut_end = self.nxt;
        }
        self.dctcp = Some(d);
    }

    /// DCTCP with htsim's reaction ([`DctcpReaction::Htsim`]): count one ack, and at the end of
    /// a window of acks update α and, while α > 0, cut the window by α/2.
    fn dctcp_htsim_on_ack(&mut self, ece: bool) {
        let Some(mut d) = self.dctcp else { return };
        if self.cfg.dctcp_reaction != DctcpReaction::Htsim {
            return;
        }
        d.acked += 1;
        if ece {
            d.marked += 1;
            self.ssthresh = self.ssthresh.min(self.cwnd);
        }
        if d.acked * self.mss() >= d.window_end {
            let fraction = d.marked * ONE / d.acked;
            d.alpha = d.alpha - (d.alpha >> d.g_shift) + (fraction >> d.g_shift);
            d.acked = 0;
            d.marked = 0;
            if d.alpha > 0 {
                // The product rounded down, as htsim's integer window takes it.
                self.cwnd = (self.cwnd * (2 * ONE - d.alpha) / (2 * ONE)).max(self.mss());
                self.ssthresh = self.cwnd;
            }
            d.window_end = self.cwnd;
        }
        self.dctcp = Some(d);
    }

    /// DCTCP with htsim's reaction: a loss restarts the ack count from the window at the loss.
    fn dctcp_htsim_on_loss(&mut self) {
        if let Some(d) = self.dctcp.as_mut()
            && self.cfg.dctcp_reaction == DctcpReaction::Htsim
        {
            d.acked = 0;
            d.marked = 0;
            d.window_end = self.cwnd;
        }
    }
}

impl Sender for TcpSender {
    fn handle(&mut self, now: Time, seg: &Segment) {
        if seg.kind != Kind::Ack {
            return;
        }
        self.dctcp_htsim_on_ack(seg.has(ECE));
        let ack = seg.ack.min(self.size);
        if ack > self.una {
            let newly = ack - self.una;
            self.rtt
                .sample(now.0.saturating_sub(seg.stamp.0), self.cfg.rto_min.0);
            self.una = ack;
            self.nxt = self.nxt.max(ack);
            self.dupacks = 0;
            match self.recover {
                Some(r) if ack >= r => {
                    self.recover = None;
                    self.cwnd = self.ssthresh;
                }
                Some(_) => {
                    // NewReno partial ack: the next hole is lost too.
                    self.retransmit = Some(self.una);
                }
                None if self.cwnd < self.ssthresh => self.cwnd += newly.min(self.mss()),
                None => self.cwnd += (self.mss() * self.mss() / self.cwnd).max(1),
            }
            self.dctcp_on_ack(newly, seg.has(ECE));
            self.cap_window();
            self.arm_timer(now);
        } else if ack == self.una && self.una < self.high {
            self.dctcp_on_ack(0, seg.has(ECE));
            self.dupacks += 1;
            if self.recover.is_some() {
                self.cwnd += self.mss();
            } else if self.dupacks == 3 {
                self.dctcp_htsim_on_loss();
                let flight = self.high - self.una;
                self.ssthresh = (flight / 2).max(2 * self.mss());
                self.cwnd = self.ssthresh + 3 * self.mss();
                self.recover = Some(self.high);
                self.retransmit = Some(self.una);
            }
            self.cap_window();
        }
    }

    fn handle_timeout(&mut self, now: Time) {
        let Some(at) = self.rto_at else { return };
        if now < at || self.una >= self.size {
            return;
        }
        self.timeouts += 1;
        self.dctcp_htsim_on_loss();
        let flight = self.high - self.una;
        self.ssthresh = (flight / 2).max(2 * self.mss());
        self.cwnd = self.mss();
        self.nxt = self.una;
        self.recover = None;
        self.retransmit = None;
        self.dupacks = 0;
        self.rtt.rto = (self.rtt.rto * 2).min(Dur::from_us(1_000_000).0);
        self.rto_at = Some(now + Dur(self.rtt.rto));
    }

    fn poll_transmit(&mut self, now: Time) -> Option<Segment> {
        if let Some(seq) = self.retransmit.take() {
            let mut seg = self.segment_at(seq, now);
            seg.flags |= RETX;
            if self.rto_at.is_none() {
                self.arm_timer(now);
            }
            return Some(seg);
        }
        // After a timeout `nxt` is below `high`: what is resent then is a retransmission.
        let in_flight = self.nxt - self.una;
        if self.nxt >= self.size || in_flight >= self.cwnd {
            return None;
        }
        let mut seg = self.segment_at(self.nxt, now);
        if self.nxt < self.high {
            seg.flags |= RETX;
        }
        self.nxt += seg.payload as u64;
        self.high = self.high.max(self.nxt);
        if self.rto_at.is_none() {
            self.arm_timer(now);
        }
        Some(seg)
    }

    fn timeout(&self) -> Option<Time> {
        self.rto_at
    }

    fn is_finished(&self) -> bool {
        self.una >= self.size
    }

    fn timeouts(&self) -> u64 {
        self.timeouts
    }
}

/// The cumulative acknowledgement `cumulative` of data segment `seg`, echoing its CE mark and
/// naming its subflow (shared with MPTCP's receiver).
pub(crate) fn ack_for(seg: &Segment, cumulative: u64) -> Segment {
    let mut ack = Segment::control(Kind::Ack, seg.seq, cumulative, seg.stamp);
    ack.path = seg.path;
    if seg.has(CE) {
        ack.flags |= ECE;
    }
    ack
}

/// The receiving side: acknowledges every data segment cumulatively and echoes CE marks.
#[derive(Clone, Debug)]
pub struct TcpReceiver {
    size: u64,
    got: Reassembly,
}

impl TcpReceiver {
    pub fn new(size: u64) -> TcpReceiver {
        TcpReceiver {
            size,
            got: Reassembly::default(),
        }
    }
}

impl Receiver for TcpReceiver {
    fn handle(&mut self, _now: Time, seg: &Segment) -> Option<Segment> {
        if seg.kind != Kind::Data {
            return None;
        }
        self.got.insert(seg.seq, seg.payload);
        Some(ack_for(seg, self.got.in_order()))
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

    /// Sends what the window allows, acks it all at once (one ack per segment, in order), and
    /// returns how many segments the sender then has in flight: its window in whole segments.
    fn window_after_one_round(cfg: TcpConfig) -> u64 {
        let mss = cfg.mss as u64;
        let mut s = TcpSender::new(cfg, 1 << 40);
        let t0 = Time(0);
        let mut sent = Vec::new();
        while let Some(seg) = s.poll_transmit(t0) {
            sent.push(seg);
        }
        let now = Time(10_000_000);
        for seg in &sent {
            let ack = Segment::control(Kind::Ack, seg.seq, seg.seq + mss, seg.stamp);
            s.handle(now, &ack);
        }
        let mut more = 0;
        while s.poll_transmit(now).is_some() {
            more += 1;
        }
        more
    }

    /// Keeps the window full and acks one segment at a time, in order, the first ack marked
    /// and no other: the window (bytes) and α (units of 2^-20) after each of `acks` acks.
    fn one_mark_then_none(reaction: DctcpReaction, acks: usize) -> Vec<(u64, u64)> {
        // mss 1000 B, a window of 10 held at its cap of 10 (congestion avoidance from the
        // start), α from 0, g = 1/16.
        let cfg = TcpConfig {
            mss: 1000,
            initial_window: 10,
            initial_ssthresh: Some(10),
            max_window: Some(10),
            dctcp_alpha_init: 0.0,
            dctcp_reaction: reaction,
            ..TcpConfig::dctcp()
        };
        let mut s = TcpSender::new(cfg, 1 << 40);
        let now = Time(0);
        let mut acked = 0;
        (0..acks)
            .map(|i| {
                while s.poll_transmit(now).is_some() {}
                acked += 1000;
                let mut ack = Segment::control(Kind::Ack, acked - 1000, acked, now);
                if i == 0 {
                    ack.flags |= ECE;
                }
                s.handle(now, &ack);
                (s.cwnd, s.dctcp.map_or(0, |d| d.alpha))
            })
            .collect()
    }

    /// The acks (1-based) after which the window is smaller than before: only a cut shrinks it.
    fn cuts(trace: &[(u64, u64)]) -> Vec<usize> {
        let mut before = 10_000;
        let mut at = Vec::new();
        for (i, &(cwnd, _)) in trace.iter().enumerate() {
            if cwnd < before {
                at.push(i + 1);
            }
            before = cwnd;
        }
        at
    }

    #[test]
    fn rfc8257_cuts_once_in_the_marked_window() {
        let trace = one_mark_then_none(DctcpReaction::Rfc8257, 40);
        // Ack 1 ends the first (empty) window: all its bytes marked, α = 1/16 = 65,536. The
        // window first grows by 1000²/10,000 = 100 to 10,100, then loses
        // 10,100 · α/2 = 315 (rounded down): 9785.
        assert_eq!(trace[0], (9785, 65_536));
        // No later ack is marked: no other cut, and α only decays.
        assert_eq!(cuts(&trace), [1]);
        assert!(trace.windows(2).all(|w| w[1].1 <= w[0].1));
        assert!(trace[39].1 < 65_536);
    }

    #[test]
    fn htsim_cuts_at_every_window_of_acks_while_alpha_is_positive() {
        let trace = one_mark_then_none(DctcpReaction::Htsim, 40);
        // Ack 1 is marked but only counted (its ssthresh, already the window, stays); the
        // window grows to 10,100 and its cap holds it at 10,000.
        assert_eq!(trace[0], (10_000, 0));
        // Ack 2 completes the first count of two acks (2 · mss ≥ the initial 2 packets): one of
        // the two was marked, α = (1/2)/16 = 32,768; the window is cut to
        // 10,000 · (1 − α/2) = 9843 (rounded down), then grows by 1000²/9843 = 101.
        assert_eq!(trace[1], (9944, 32_768));
        // Then a count ends every 10 acks (10 · mss ≥ a window of 98xx): α decays by 1/16 at
        // each, 30,720, 28,800, 27,000 (exact), and each still cuts though no ack was marked.
        assert_eq!(cuts(&trace), [2, 12, 22, 32]);
        let alpha = |ack: usize| trace[ack - 1].1;
        assert_eq!(
            [alpha(11), alpha(12), alpha(22), alpha(32), alpha(40)],
            [32_768, 30_720, 28_800, 27_000, 27_000]
        );
    }

    #[test]
    fn slow_start_stops_at_the_initial_ssthresh() {
        let base = TcpConfig {
            mss: 1000,
            initial_window: 10,
            ..TcpConfig::dctcp()
        };
        // Unbounded: every ack of the first window adds a segment, 10 → 20.
        assert_eq!(window_after_one_round(base), 20);
        // From 15 on, congestion avoidance adds mss²/cwnd per ack: 5 acks reach 15 segments,
        // the other 5 add 66 + 66 + 65 + 65 + 65 bytes (integer division): a window of 15,327
        // bytes, into which a 16th segment may start (one goes while less than it is in flight).
        let capped = TcpConfig {
            initial_ssthresh: Some(15),
            ..base
        };
        assert_eq!(window_after_one_round(capped), 16);
        // A threshold above the whole round changes nothing.
        let high = TcpConfig {
            initial_ssthresh: Some(40),
            ..base
        };
        assert_eq!(window_after_one_round(high), 20);
    }
}
