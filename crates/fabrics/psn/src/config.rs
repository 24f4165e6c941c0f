//! How the packet network behaves: queue discipline and size, path choice, header sizes.

/// What a switch output queue does when packets arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Discipline {
    /// Drop arrivals that do not fit.
    DropTail,
    /// Drop-tail plus ECN: mark CE when more than `k` full-size packets are queued, measured when
    /// the packet arrives or, with `at_dequeue`, when it starts transmission (htsim's DCTCP).
    Ecn { k: u32, at_dequeue: bool },
    /// NDP: a data packet that does not fit is trimmed to its header and queued in the priority
    /// lane with the control packets, which are served first.
    Trim,
}

/// How switches choose among equal-cost ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathChoice {
    /// Hash the flow: every packet of a flow takes the same path.
    Ecmp,
    /// Hash each packet: a flow is sprayed over all paths.
    Spray,
}

/// Priority flow control (802.1Qbb, the lossless Ethernet RoCE runs on), one class: a switch
/// counts the bytes it holds per ingress port; above `xoff_bytes` it sends PAUSE up that link,
/// and RESUME once they fall to `xon_bytes`. The paused port finishes the packet on the wire and
/// sends nothing more until resumed. With PFC on, switch queues never drop (the buffer is taken
/// to be large enough for the headroom), so `queue_packets` no longer bounds them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pfc {
    pub xoff_bytes: u64,
    pub xon_bytes: u64,
}

/// Parameters of the packet network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetConfig {
    pub discipline: Discipline,
    /// Switch output queue capacity, in full-size packets (payload plus headers).
    pub queue_packets: u32,
    pub path: PathChoice,
    /// Header bytes on the wire per data packet, on top of its payload.
    pub header_bytes: u32,
    /// Wire size of a control packet (ack, nack, pull, CNP) and of a trimmed header.
    pub control_bytes: u32,
    /// Receiver pull pacing (NDP) as a percentage of the host link rate: one pull per
    /// full-size packet time × 100 / `pull_pacing`.
    pub pull_pacing: u32,
    /// Lossless operation (DCQCN's RoCE); `None`: queues drop when full.
    pub pfc: Option<Pfc>,
    /// Seeds path hashing.
    pub seed: u64,
}

impl NetConfig {
    /// DCTCP's switch: drop-tail with ECN at arrival, ECMP.
    pub fn ecn(queue_packets: u32, k: u32) -> NetConfig {
        NetConfig {
            discipline: Discipline::Ecn {
                k,
                at_dequeue: false,
            },
            queue_packets,
            path: PathChoice::Ecmp,
            header_bytes: 40,
            control_bytes: 64,
            pull_pacing: 100,
            pfc: None,
            seed: 1,
        }
    }

    /// NDP's switch: trimming at `queue_packets`, per-packet spraying, pulls at 99% of the
    /// link (the htsim example's pacing).
    pub fn ndp(queue_packets: u32) -> NetConfig {
        NetConfig {
            discipline: Discipline::Trim,
            path: PathChoice::Spray,
            pull_pacing: 99,
            ..NetConfig::ecn(queue_packets, 0)
        }
    }

    /// Full-size packet bytes for a transport with `mss` payload bytes.
    pub fn mtu(&self, mss: u32) -> u32 {
        mss + self.header_bytes
    }

    /// Checks values that would make the network meaningless.
    pub fn validate(&self) -> Result<(), String> {
        if self.queue_packets == 0 {
            return Err("queue_packets must be at least 1".into());
        }
        if self.pull_pacing == 0 || self.pull_pacing > 100 {
            return Err(format!(
                "pull_pacing must be a percentage in 1..=100, got {}",
                self.pull_pacing
            ));
        }
        if self.control_bytes == 0 {
            return Err("control_bytes must be at least 1".into());
        }
        if let Some(pfc) = self.pfc
            && (pfc.xon_bytes >= pfc.xoff_bytes || pfc.xoff_bytes == 0)
        {
            return Err(format!(
                "PFC needs 0 <= xon < xoff, got xon = {} B and xoff = {} B",
                pfc.xon_bytes, pfc.xoff_bytes
            ));
        }
        if let Discipline::Ecn { k, .. } = self.discipline
            && k > self.queue_packets
        {
            return Err(format!(
                "ECN threshold k = {k} packets exceeds the queue of {} packets: nothing would be marked",
                self.queue_packets
            ));
        }
        Ok(())
    }
}
