//! How the packet network behaves: queue discipline and size, path choice, header sizes.

use rand::RngExt;
use shoal_base::rng::StreamRng;
use shoal_fabric::config::{ConfigError, Keys, value};

/// What a switch output queue does when packets arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Discipline {
    /// Drop arrivals that do not fit.
    DropTail,
    /// Drop-tail plus ECN: mark CE when more than `k` full-size packets are queued, measured when
    /// the packet arrives or, with `at_dequeue`, when it starts transmission (htsim's DCTCP).
    Ecn { k: u32, at_dequeue: bool },
    /// Drop-tail plus RED-style ECN (DCQCN's switch): mark CE with a probability that rises
    /// linearly with the queue, measured at arrival or, with `Red::at_dequeue`, at departure.
    Red(Red),
    /// NDP: a data packet that does not fit is trimmed to its header and queued in the priority
    /// lane with the control packets, which are served first.
    Trim,
}

/// DCQCN's marking (Zhu et al., SIGCOMM 2015, §3.1): with `q` bytes queued, a packet is marked
/// with probability 0 for `q <= kmin`, `pmax · (q − kmin) / (kmax − kmin)` for `kmin < q <= kmax`
/// and 1 above `kmax`. Unlike RED proper there is no averaging of the queue: the DCQCN paper
/// marks on the instantaneous length, as commodity switches do.
///
/// `pmax` is kept in parts per million so that the configuration stays integer (and `Eq`); a
/// draw compares integers, `u < pmax_ppm · (q − kmin)` for `u` uniform below
/// `10⁶ · (kmax − kmin)`, so the probability is exact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Red {
    pub kmin_bytes: u64,
    pub kmax_bytes: u64,
    pub pmax_ppm: u32,
    /// Measure the queue when the packet starts transmission (htsim's point) instead of when
    /// it arrives.
    pub at_dequeue: bool,
}

/// One in a million: `Red::pmax_ppm`'s unit.
pub const PPM: u64 = 1_000_000;

impl Red {
    /// The DCQCN paper's setting: Kmin = 5 KB, Kmax = 200 KB, Pmax = 1%. We read its KB as
    /// 1024 bytes, the unit switch buffers are sized in.
    pub fn dcqcn_paper(at_dequeue: bool) -> Red {
        Red {
            kmin_bytes: 5 * 1024,
            kmax_bytes: 200 * 1024,
            pmax_ppm: 10_000,
            at_dequeue,
        }
    }

    /// The marking probability at `queued` bytes, as (numerator, denominator).
    pub fn probability(&self, queued: u64) -> (u64, u64) {
        let span = self.kmax_bytes - self.kmin_bytes;
        if queued <= self.kmin_bytes {
            (0, 1)
        } else if queued > self.kmax_bytes {
            (1, 1)
        } else {
            (
                self.pmax_ppm as u64 * (queued - self.kmin_bytes),
                PPM * span,
            )
        }
    }

    /// Whether a packet that finds `queued` bytes is marked; draws from `rng` only on the ramp.
    pub fn marks(&self, queued: u64, rng: &mut StreamRng) -> bool {
        match self.probability(queued) {
            (0, _) => false,
            (n, d) if n >= d => true,
            (n, d) => rng.random_range(0..d) < n,
        }
    }
}

/// How switches choose among equal-cost ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathChoice {
    /// Hash the flow: every packet of a flow takes the same path.
    Ecmp,
    /// Hash each packet: a flow is sprayed over all paths.
    Spray,
    /// Each end picks every packet's whole path, cycling through random permutations of all
    /// shortest paths (htsim's NDP: [`crate::source_route`]).
    Source,
    /// Each subflow of a flow (one for single-path transports) keeps one source-routed shortest
    /// path for its life, distinct from its siblings' while there are enough paths (htsim's
    /// MPTCP draws them at random without repeats): the first draws of a
    /// [`crate::source_route::PathCycle`].
    Pinned,
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

/// How a host's NIC orders the packets its flows hand it (the NIC queue is unbounded: the
/// transports' windows bound it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostNic {
    /// Ours, with no source: one FIFO, so a flow's window leaves whole before a later flow's
    /// first packet; under NDP control packets (acks, nacks, pulls) go first.
    Fifo,
    /// htsim's default host queue (queue.cpp's FairPriorityQueue over fairpullqueue.cpp's
    /// FairPullQueue; fat_tree_topology.cpp builds it for every transport unless
    /// `-host_queue_type` says otherwise): two classes, control before data; within a class
    /// one packet per flow in turn, flows taken in the order of their ids ([`crate::nic`]).
    /// The classes are htsim's packet priorities: acks, pulls and CNPs high; data and NDP's
    /// nacks low (ndppacket.h, tcppacket.h).
    RoundRobin,
    /// htsim's `-host_queue_type prio` (queue.cpp's PriorityQueue): the same two classes as
    /// [`HostNic::RoundRobin`], each one FIFO. It differs from [`HostNic::Fifo`] only in where
    /// NDP's nacks wait: with the data here, first there.
    Priority,
}

/// What a full NDP switch queue trims, and what bounds its priority lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrimRule {
    /// Ours, with no source: the arriving packet is trimmed; the priority lane has no limit;
    /// the data lane's limit counts the packets waiting, not the one on the wire.
    Arriving,
    /// htsim's CompositeQueue (compositequeue.cpp): the data lane's limit counts the packet
    /// being sent as well; an arriving data packet that does not fit is trimmed with
    /// probability 1/2, else it is queued and the data lane's last packet is trimmed instead;
    /// a header or control packet that would take the priority lane above twice the data
    /// lane's limit is dropped.
    Htsim,
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
    /// How host NICs order their packets.
    pub host_nic: HostNic,
    /// What NDP's switches trim (read only under [`Discipline::Trim`]).
    pub trim: TrimRule,
    /// Seeds path hashing, RED's marking draws and htsim's trimming coin.
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
            host_nic: HostNic::Fifo,
            trim: TrimRule::Arriving,
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

    /// Checks every rule the switches' values obey (the one place they are written), for a
    /// transport carrying `mss` payload bytes per packet; errors name the `[network]` key to
    /// blame (of two that conflict, the one the file gives: `keys`, or
    /// [`shoal_fabric::config::NO_KEYS`] for a network built in code).
    pub fn validate(&self, mss: u32, keys: &Keys<'_>) -> Result<(), ConfigError> {
        if self.queue_packets == 0 {
            return Err(value("network.queue_packets", "must be at least 1 packet"));
        }
        if self.control_bytes == 0 {
            return Err(value("network.control_bytes", "must be at least 1 byte"));
        }
        if self.pull_pacing == 0 || self.pull_pacing > 100 {
            return Err(value(
                "network.pull_pacing",
                format!(
                    "{} is not a whole percent in (0, 1]: pulls cannot outpace the link",
                    self.pull_pacing as f64 / 100.0
                ),
            ));
        }
        if let Some(pfc) = self.pfc {
            if pfc.xoff_bytes == 0 {
                return Err(value(
                    "network.pfc_xoff_packets",
                    "must be at least 1 packet",
                ));
            }
            if pfc.xon_bytes >= pfc.xoff_bytes {
                return Err(value(
                    "network.pfc_xon_packets",
                    format!(
                        "PFC needs xon < xoff: resuming at {} B is not below pausing at {} B",
                        pfc.xon_bytes, pfc.xoff_bytes
                    ),
                ));
            }
        }
        match self.discipline {
            Discipline::Ecn { k, .. } if k == 0 || k > self.queue_packets => Err(value(
                keys.blame(&["network.ecn_k", "network.queue_packets"]),
                format!(
                    "ECN threshold k = {k} packets is out of range: must be 1 to the queue's {} \
                     packets, or nothing would be marked",
                    self.queue_packets
                ),
            )),
            Discipline::Red(red) => {
                if red.kmax_bytes <= red.kmin_bytes {
                    return Err(value(
                        keys.blame(&["network.red_kmax_bytes", "network.red_kmin_bytes"]),
                        format!(
                            "RED needs kmin < kmax, got kmin = {} B and kmax = {} B",
                            red.kmin_bytes, red.kmax_bytes
                        ),
                    ));
                }
                if red.pmax_ppm == 0 || red.pmax_ppm as u64 > PPM {
                    return Err(value(
                        "network.red_pmax",
                        format!(
                            "{} is not a probability in [1e-6, 1] (RED needs 0 < pmax <= 1)",
                            red.pmax_ppm as f64 / PPM as f64
                        ),
                    ));
                }
                // Without PFC a queue holds at most `queue_bytes`, so Kmin must lie below it or
                // nothing is ever marked; Kmax may lie above it (the ramp is then cut off).
                let queue_bytes = self.queue_packets as u64 * self.mtu(mss) as u64;
                if self.pfc.is_none() && red.kmin_bytes >= queue_bytes {
                    return Err(value(
                        "network.red_kmin_bytes",
                        format!(
                            "{} B is not below the queue's {queue_bytes} B (queue_packets × \
                             packet_bytes): nothing would be marked",
                            red.kmin_bytes
                        ),
                    ));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shoal_fabric::config::NO_KEYS;

    #[test]
    fn red_parameters_are_checked_and_the_error_names_them() {
        let net = |red: Red| NetConfig {
            discipline: Discipline::Red(red),
            ..NetConfig::ecn(100, 20)
        };
        let check = |n: NetConfig| n.validate(1460, &NO_KEYS);
        let paper = Red::dcqcn_paper(false);
        assert_eq!(check(net(paper)), Ok(()));
        let inverted = Red {
            kmin_bytes: paper.kmax_bytes,
            ..paper
        };
        let err = check(net(inverted)).unwrap_err();
        assert_eq!(err.key, "network.red_kmax_bytes");
        assert!(err.reason.contains("kmin < kmax"), "{err}");
        for pmax_ppm in [0, 1_000_001] {
            let err = check(net(Red { pmax_ppm, ..paper })).unwrap_err();
            assert_eq!(err.key, "network.red_pmax");
            assert!(err.reason.contains("0 < pmax <= 1"), "{err}");
        }
    }
}
