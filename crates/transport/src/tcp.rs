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
//!   value is `dctcp_alpha_init` (Linux starts at 1, i.e. the first mark halves the window).

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
    acked: u64,
    marked: u64,
    /// α is updated when the cumulative ack passes this (one window of data).
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
                window_end: 0,
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
}

impl Sender for TcpSender {
    fn handle(&mut self, now: Time, seg: &Segment) {
        if seg.kind != Kind::Ack {
            return;
        }
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
