//! A clique as the simulator needs it: the Dragonfly, the TiN's switch and links, the hosts.
//! The scenario table (`crate::scenario`) resolves into this; tests build it directly.

use crate::rma::Rma;
use crate::routing::Mode;
use crate::swift::SwiftConfig;
use crate::wire::{HEADER_LEN, MAX_CELL_LEN, WORD};
use shoal_base::{Dur, Rate};
use shoal_topology::Dragonfly;

/// Everything one run of the clique depends on.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    pub dragonfly: Dragonfly,
    /// Hosts sharing one TiN (§3.3: a NIC serves up to two).
    pub hosts_per_tin: u32,
    /// A host's IP injection and delivery rate.
    pub host_rate: Rate,
    /// Host (NIC) to TiN switch port and back, one way.
    pub host_delay: Dur,
    /// From a cell's head at a switch input to its head at an output (§3.1: 20 ns).
    pub fall_through: Dur,
    /// Rate at which a cell crosses the crossbar (how long the "busy" signals last).
    pub crossbar_rate: Rate,
    pub islip_iterations: u32,
    /// Input FIFO per VC, in 8-byte words: on local links, global links, endpoint ports.
    pub local_vc_words: u32,
    pub global_vc_words: u32,
    pub endpoint_vc_words: u32,
    /// Output queue per (port, VC), in words.
    pub output_vc_words: u32,
    pub mode: Mode,
    /// Adaptive routing takes a non-minimal candidate only when its queue depth times this
    /// weight, plus `nonminimal_bias_words`, is below the best minimal candidate's.
    pub nonminimal_weight: u32,
    pub nonminimal_bias_words: u32,
    /// Hops a cell may take (the header's decrementing count).
    pub hop_limit: u8,
    /// IP packet size on the wire (MTU) and the headers in it.
    pub mtu_bytes: u32,
    pub header_bytes: u32,
    /// How hosts put IP packets into the fabric.
    pub injection: Injection,
    /// IP over GNet (§3.3, with [`Injection::RtsCts`]): packets a host's ingress holds
    /// announced and not yet sent; per egress port, reassembly bytes and the window of granted
    /// packets still arriving; the RTS queue depth that draws a CTD, and the one above which a
    /// released packet is ECN-marked.
    pub ingress_packets: u32,
    pub reassembly_bytes: u32,
    pub cts_window: u32,
    pub ctd_depth: u32,
    pub ecn_depth: u32,
    /// 1RMA's engines and the hosts' PCIe (§3.4).
    pub rma: Rma,
    /// Swift (§5: both workloads run delay-based congestion control): on every IP connection
    /// between two hosts that carries flows or RPCs, and on 1RMA's lookups per (initiator,
    /// target).
    pub swift_ip: SwiftConfig,
    pub swift_rma: SwiftConfig,
    /// Seed of the routing choices.
    pub seed: u64,
}

/// How hosts put IP packets into the fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Injection {
    /// §3.3's IP over GNet: an RTS per packet, data cells only after the egress's CTS,
    /// reassembly and release at the egress in RTS order.
    RtsCts,
    /// A host cuts each packet into cells and sends them at once (no admission control): the
    /// fabric alone, for the Dragonfly's bandwidth claims.
    RawCells,
}

impl Injection {
    pub const fn name(self) -> &'static str {
        match self {
            Injection::RtsCts => "rts-cts",
            Injection::RawCells => "raw-cells",
        }
    }

    pub fn parse(s: &str) -> Option<Injection> {
        [Injection::RtsCts, Injection::RawCells]
            .into_iter()
            .find(|i| i.name() == s)
    }
}

/// Defaults of a clique, each with the paper section it comes from or the reason for it
/// where the paper is silent; the scenario table's defaults are these.
pub mod defaults {
    /// §3.2: 48 pods of 12 TiNs, 24 local and 8 global ports per TiN, two links between any
    /// two TiNs of a pod and between any two pods.
    pub const PODS: u32 = 48;
    pub const TINS_PER_POD: u32 = 12;
    pub const LOCAL_LINKS: u32 = 2;
    pub const GLOBAL_LINKS: u32 = 2;
    pub const LOCAL_PORTS: u32 = 24;
    pub const GLOBAL_PORTS: u32 = 8;
    /// §3.2: single-lane 28 Gb/s links.
    pub const LANE_GBPS: f64 = 28.0;
    /// §3.1: GNet's own 66/64b PCS: 64 data bits in every 66. So a local link carries
    /// 27.15 Gb/s of cells and a 160 B cell takes 47 ns ("about 50 ns").
    pub const PCS_EFFICIENCY: f64 = 64.0 / 66.0;
    /// §3.2: FEC on global links costs 6% of the bandwidth (25.5 Gb/s of cells: the paper's
    /// "2 x 25 Gb/s between any two pods") and 30 ns per hop.
    pub const FEC_OVERHEAD: f64 = 0.06;
    pub const FEC_NS: f64 = 30.0;
    /// §3.1: 20 ns fall-through and 40 ns per hop without FEC; the other 20 ns are the link
    /// (SerDes, PCS, backplane), our split.
    pub const FALL_THROUGH_NS: f64 = 20.0;
    pub const LOCAL_LINK_NS: f64 = 20.0;
    /// §3.2 puts pods up to 100 m apart; we take 50 m of fibre (5 ns/m) as a typical global
    /// link, on top of the 20 ns of the link and the 30 ns of FEC.
    pub const FIBER_M: f64 = 50.0;
    /// The paper gives no crossbar speed; a speedup of 2 over the lane rate, so that a busy
    /// crossbar port is rarely what holds a cell.
    pub const CROSSBAR_SPEEDUP: f64 = 2.0;
    /// The paper gives no iSLIP iteration count: 3 (see `crate::islip`).
    pub const ISLIP_ITERATIONS: u32 = 3;
    /// Buffers are not given in the paper. A VC's input FIFO holds at least one credit round
    /// trip of its link at full rate, so one VC alone can keep a link busy: 4 cells of 160 B
    /// on local and endpoint links (round trip about 110 ns, 2.3 cells), 20 on global links
    /// (50 m: about 670 ns, 13.4 cells).
    pub const LOCAL_VC_CELLS: u32 = 4;
    pub const GLOBAL_VC_CELLS: u32 = 20;
    pub const ENDPOINT_VC_CELLS: u32 = 4;
    /// Output queue per (port, VC). Its depth is adaptive routing's signal, and with one FIFO
    /// per input VC it is what holds head-of-line blocking back: at 100% uniform random load
    /// on a 9 x 4 clique, minimal routing carried 0.52 of injection with 4 cells, 0.75 with 32
    /// (measured; the paper gives no size). 16 is our compromise.
    pub const OUTPUT_VC_CELLS: u32 = 16;
    /// §5, Fig. 6: two hosts share a TiN's 100 Gb/s NIC, 50 Gb/s each.
    pub const HOSTS_PER_TIN: u32 = 2;
    pub const HOST_GBPS: f64 = 50.0;
    /// The NIC is on the TiN chip: one on-chip hop each way, as long as a local link's.
    pub const HOST_LINK_NS: f64 = 20.0;
    /// The paper gives no weights: a non-minimal route crosses two global links for one, so
    /// its queue counts twice, and it must be lighter by one full cell as well, so that an
    /// idle clique routes minimally.
    pub const NONMINIMAL_WEIGHT: u32 = 2;
    pub const NONMINIMAL_BIAS_CELLS: u32 = 1;
    /// One more than the longest route (local, global, local, global, local).
    pub const HOP_LIMIT: u8 = 6;
    /// Not given: 4 KB IP packets, with 40 B of IP and transport headers.
    pub const MTU_BYTES: u32 = 4096;
    pub const HEADER_BYTES: u32 = 40;
    /// §3.3 sizes the egress buffer by the bandwidth-delay product and gives no number: 32 KB
    /// per port, 50 Gb/s for 5.2 µs, a few idle fabric round trips (about 2 µs across the full
    /// clique) so that a port stays busy while its grants travel; the window matches it in
    /// 4 KB packets. Measured on the 9 x 4 test clique at 100% uniform random load (adaptive):
    /// windows of 1, 2, 4, 8, 16, 32 packets carried 0.44, 0.64, 0.74, 0.76, 0.73, 0.61 of
    /// injection; more grants in flight only deepen the fabric's queues.
    pub const REASSEMBLY_BYTES: u32 = 32 * 1024;
    pub const CTS_WINDOW: u32 = 8;
    /// Not given: a host's ingress announces up to 16 packets (64 KB) ahead, as many as one
    /// egress port grants, so that one destination can keep a sender busy.
    pub const INGRESS_PACKETS: u32 = 16;
    /// Not given: a CTD once 256 RTSs wait at a queue (16 full ingresses, 1 MB announced), so
    /// that only a heavy incast drops; ECN above 16 waiting RTSs (one full window behind).
    pub const CTD_DEPTH: u32 = 256;
    pub const ECN_DEPTH: u32 = 16;
}

/// Words in a full 160 B cell.
pub const CELL_WORDS: u32 = (MAX_CELL_LEN / WORD) as u32;

/// A rate of `gbps` times `factor`, in whole bits per second.
pub fn rate(gbps: f64, factor: f64) -> Rate {
    Rate((gbps * factor * 1e9).round() as u64)
}

impl Spec {
    /// The full clique with every default.
    pub fn aquila() -> Spec {
        use defaults as d;
        let ns = |x: f64| Dur::from_ns_f64(x).expect("a default delay");
        let local = rate(d::LANE_GBPS, d::PCS_EFFICIENCY);
        let global = rate(d::LANE_GBPS, d::PCS_EFFICIENCY * (1.0 - d::FEC_OVERHEAD));
        Spec {
            dragonfly: Dragonfly {
                pods: d::PODS,
                tins_per_pod: d::TINS_PER_POD,
                local_links: d::LOCAL_LINKS,
                global_links: d::GLOBAL_LINKS,
                local_ports: d::LOCAL_PORTS,
                global_ports: d::GLOBAL_PORTS,
                local_rate: local,
                global_rate: global,
                local_delay: ns(d::LOCAL_LINK_NS),
                global_delay: ns(d::LOCAL_LINK_NS + d::FEC_NS + 5.0 * d::FIBER_M),
            },
            hosts_per_tin: d::HOSTS_PER_TIN,
            host_rate: rate(d::HOST_GBPS, 1.0),
            host_delay: ns(d::HOST_LINK_NS),
            fall_through: ns(d::FALL_THROUGH_NS),
            crossbar_rate: rate(d::LANE_GBPS, d::CROSSBAR_SPEEDUP),
            islip_iterations: d::ISLIP_ITERATIONS,
            local_vc_words: d::LOCAL_VC_CELLS * CELL_WORDS,
            global_vc_words: d::GLOBAL_VC_CELLS * CELL_WORDS,
            endpoint_vc_words: d::ENDPOINT_VC_CELLS * CELL_WORDS,
            output_vc_words: d::OUTPUT_VC_CELLS * CELL_WORDS,
            mode: Mode::FullyAdaptive,
            nonminimal_weight: d::NONMINIMAL_WEIGHT,
            nonminimal_bias_words: d::NONMINIMAL_BIAS_CELLS * CELL_WORDS,
            hop_limit: d::HOP_LIMIT,
            mtu_bytes: d::MTU_BYTES,
            header_bytes: d::HEADER_BYTES,
            injection: Injection::RtsCts,
            ingress_packets: d::INGRESS_PACKETS,
            reassembly_bytes: d::REASSEMBLY_BYTES,
            cts_window: d::CTS_WINDOW,
            ctd_depth: d::CTD_DEPTH,
            ecn_depth: d::ECN_DEPTH,
            rma: Rma::paper(),
            swift_ip: SwiftConfig::ip(),
            swift_rma: SwiftConfig::rma(),
            seed: 1,
        }
    }

    pub fn hosts(&self) -> u32 {
        self.dragonfly.tins() * self.hosts_per_tin
    }

    /// Payload bytes in a full IP packet.
    pub fn mss(&self) -> u32 {
        self.mtu_bytes - self.header_bytes
    }

    /// The cells (lengths in words) an IP packet of `wire_bytes` is cut into: full 160 B cells,
    /// then one holding the rest rounded up to whole words (at least 16 B).
    pub fn cell_words(wire_bytes: u32, mut each: impl FnMut(u8)) {
        let per = (MAX_CELL_LEN - HEADER_LEN) as u32;
        let mut left = wire_bytes;
        while left > 0 {
            let take = left.min(per);
            left -= take;
            let words = (HEADER_LEN as u32 + take).div_ceil(WORD as u32).max(2);
            each(words as u8);
        }
    }

    /// Cells of an IP packet of `wire_bytes`.
    pub fn cells_of(wire_bytes: u32) -> u32 {
        wire_bytes.div_ceil((MAX_CELL_LEN - HEADER_LEN) as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_are_cut_into_full_cells_and_a_rounded_last_one() {
        let cut = |b: u32| {
            let mut v = Vec::new();
            Spec::cell_words(b, |w| v.push(w));
            v
        };
        assert_eq!(cut(1), [2]);
        assert_eq!(cut(8), [2]);
        assert_eq!(cut(9), [3]);
        assert_eq!(cut(152), [20]);
        assert_eq!(cut(153), [20, 2]);
        assert_eq!(
            cut(4096),
            [20; 26].iter().copied().chain([19]).collect::<Vec<_>>()
        );
        for b in 1..5000 {
            assert_eq!(cut(b).len() as u32, Spec::cells_of(b));
            let carried: u32 = cut(b).iter().map(|&w| w as u32 * 8 - 8).sum();
            assert!(carried >= b && carried < b + 16, "{b}");
        }
    }
}
