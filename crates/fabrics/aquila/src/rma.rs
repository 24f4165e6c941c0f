//! 1RMA on GNet (§3.4): a remote read is one Req cell to the target, whose 1RMA engine reads
//! the host's memory over PCIe and sends every PCIe read completion back as a Resp cell of its
//! own; the initiator's engine writes each Resp's bytes into memory as it arrives (any order)
//! and issues the read's completion once the last one is in.
//!
//! # In the fabric
//!
//! - **Req** (48 B, `CellType::RmaReq`) travels like a CTS (§3.4: "GNet handles Req like a
//!   CTS"): a VC class of its own, served with the control cells at high priority, so that no
//!   request waits behind data and no response can block the requests that free it. Unlike the
//!   IP control cells it is routed by the clique's mode (adaptive): §3.4 says Req, like Resp,
//!   "can be freely reordered" and is "inherently compatible with adaptive routing".
//! - **Resp** cells carry one PCIe completion each (§3.4), adaptively routed, on the
//!   low-latency half of the VCs shared with low-latency IP (§3.4): the data class that IP's
//!   data cells use in this model. At the target host's endpoint port, Resp cells and IP data
//!   cells take turns a cell at a time (§3.4: IP is cellified, so a response never waits behind
//!   a whole bulk packet).
//!
//! # Total execution time
//!
//! As §5 measures it: from the initiator's hardware receiving the read command to its hardware
//! issuing the completion. Its PCIe part is the target's (the Req's arrival to its last
//! completion coming off PCIe) plus the initiator's completion delay; the rest is the fabric's
//! (the paper: "Aquila traversal accounts for only 2.5-3 µs; the rest is PCIe latency").

use shoal_base::{Dur, Rate, Time};

use crate::wire::{CellType, HEADER_LEN, MAX_CELL_LEN, WORD};

/// The 1RMA engines' parameters: the paper gives none of them (§3.4 names no PCIe figure).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rma {
    /// From a read request leaving the target's 1RMA engine to its first completion back.
    pub pcie_latency: Dur,
    /// Rate at which completions come off the target's PCIe link.
    pub pcie_rate: Rate,
    /// Payload of one PCIe read completion, so of one Resp cell.
    pub completion_bytes: u32,
    /// From the last Resp's arrival to the completion the initiator issues.
    pub completion_delay: Dur,
}

/// Defaults, each with its reason.
pub mod defaults {
    /// §3.4 and §5: a 4 KB read takes about 4 µs end to end, of which the fabric 2.5-3 µs, so
    /// PCIe 1-1.5 µs. Neugebauer et al. (SIGCOMM'18) measure 0.5-1 µs for a small DMA read
    /// from host memory on current servers. We take 1 µs for the target's read round trip ...
    pub const PCIE_LATENCY_NS: f64 = 1000.0;
    /// ... and 250 ns at the initiator (about half a PCIe round trip: the posted write of the
    /// last bytes and the completion behind it), 1.25 µs of PCIe in all.
    pub const COMPLETION_DELAY_NS: f64 = 250.0;
    /// PCIe Gen3 x16 (126 Gb/s of lanes), about 100 Gb/s of read completions after the
    /// transaction layer's headers: twice a host's 50 Gb/s share of the NIC.
    pub const PCIE_GBPS: f64 = 100.0;
    /// §3.4 sizes Resp cells for "the most common PCIe completion size observed from host
    /// root complexes" without giving it. Root complexes split read completions at the read
    /// completion boundary, 64 or 128 B; we take 128 B (a 4 KB read in 32 completions), which
    /// with the 8 B routing header and 8 B of response header (the read's slot, the offset)
    /// fills a 144 B cell.
    pub const COMPLETION_BYTES: u32 = 128;
}

/// A Resp cell's own header after the routing header: the read it belongs to and the offset
/// of its bytes (our choice; §3.4 gives no layout).
pub const RESP_HEADER: u32 = 8;

/// A Req cell, in words (48 B).
pub const REQ_WORDS: u8 = *CellType::RmaReq.len_words().start();

/// The largest completion a Resp cell can carry.
pub const MAX_COMPLETION: u32 = (MAX_CELL_LEN - HEADER_LEN) as u32 - RESP_HEADER;

impl Rma {
    /// Every default.
    pub fn paper() -> Rma {
        use defaults as d;
        let ns = |x: f64| Dur::from_ns_f64(x).expect("a default delay");
        Rma {
            pcie_latency: ns(d::PCIE_LATENCY_NS),
            pcie_rate: crate::spec::rate(d::PCIE_GBPS, 1.0),
            completion_bytes: d::COMPLETION_BYTES,
            completion_delay: ns(d::COMPLETION_DELAY_NS),
        }
    }

    /// Why these parameters cannot run, if they cannot.
    pub fn check(&self) -> Result<(), String> {
        if self.completion_bytes == 0 || self.completion_bytes > MAX_COMPLETION {
            return Err(format!(
                "a PCIe completion of {} B does not fit a Resp cell (1..={MAX_COMPLETION} B)",
                self.completion_bytes
            ));
        }
        if self.pcie_rate.0 == 0 {
            return Err("a PCIe rate of 0".into());
        }
        Ok(())
    }

    /// Resp cells (so PCIe completions) of a read of `bytes`.
    pub fn completions(&self, bytes: u32) -> u32 {
        bytes.div_ceil(self.completion_bytes)
    }

    /// Words of a Resp cell carrying `carried` bytes (at least the 16 B minimum cell).
    pub fn resp_words(carried: u32) -> u8 {
        let bytes = HEADER_LEN as u32 + RESP_HEADER + carried;
        bytes.div_ceil(WORD as u32).max(2) as u8
    }

    /// Wire bytes of every Resp cell of a read of `bytes`.
    pub fn resp_wire_bytes(&self, bytes: u32) -> u64 {
        let full = bytes / self.completion_bytes;
        let rest = bytes % self.completion_bytes;
        let cell = |c: u32| u64::from(Self::resp_words(c)) * WORD as u64;
        u64::from(full) * cell(self.completion_bytes) + if rest > 0 { cell(rest) } else { 0 }
    }
}

/// The target host's PCIe as a 1RMA engine sees it: a read's completions come back after a
/// fixed latency, one after the other at the link's rate; reads overlap their latencies and
/// queue only for the link.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pcie {
    /// When the link has sent every completion asked of it so far.
    free: Time,
}

impl Pcie {
    /// A read of `bytes` asked at `now`: calls `each(at, carried)` for every completion in
    /// order, `at` the time it is off the link.
    pub fn read(&mut self, rma: &Rma, now: Time, bytes: u32, mut each: impl FnMut(Time, u32)) {
        let mut t = (now + rma.pcie_latency).max(self.free);
        let mut left = bytes;
        while left > 0 {
            let carried = left.min(rma.completion_bytes);
            left -= carried;
            t += rma.pcie_rate.serialize(u64::from(carried));
            each(t, carried);
        }
        self.free = t;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_4k_read_is_32_completions_of_144_byte_cells() {
        let rma = Rma::paper();
        rma.check().expect("defaults run");
        assert_eq!(rma.completions(4096), 32);
        assert_eq!(Rma::resp_words(128), 18);
        assert_eq!(rma.resp_wire_bytes(4096), 32 * 144);
        assert_eq!(rma.resp_wire_bytes(4097), 32 * 144 + 24);
        assert_eq!(REQ_WORDS, 6);
        assert!(
            Rma {
                completion_bytes: MAX_COMPLETION + 1,
                ..rma
            }
            .check()
            .is_err()
        );
        assert!(
            Rma {
                completion_bytes: 0,
                ..rma
            }
            .check()
            .is_err()
        );
    }

    #[test]
    fn pcie_overlaps_latencies_and_queues_for_the_link() {
        let rma = Rma::paper();
        let ser = rma.pcie_rate.serialize(128);
        let mut pcie = Pcie::default();
        let mut first = Vec::new();
        pcie.read(&rma, Time::ZERO, 4096, |t, c| first.push((t, c)));
        assert_eq!(first.len(), 32);
        assert_eq!(first.iter().map(|&(_, c)| c).sum::<u32>(), 4096);
        // A lone read: the latency, then one completion per serialization.
        for (k, &(t, _)) in first.iter().enumerate() {
            assert_eq!(
                t,
                Time::ZERO + rma.pcie_latency + Dur(ser.0 * (k as u64 + 1))
            );
        }
        let end = first[31].0;
        // A read asked 10 ns later waits for the link, not for a second latency in full.
        let mut second = Vec::new();
        pcie.read(&rma, Time::ZERO + Dur(10_000), 200, |t, c| {
            second.push((t, c))
        });
        assert_eq!(
            second,
            [
                (end + ser, 128),
                (end + ser + rma.pcie_rate.serialize(72), 72)
            ]
        );
        // One asked long after the link is idle sees the bare latency.
        let later = end + Dur(1_000_000);
        let mut third = Vec::new();
        pcie.read(&rma, later, 1, |t, c| third.push((t, c)));
        assert_eq!(
            third,
            [(later + rma.pcie_latency + rma.pcie_rate.serialize(1), 1)]
        );
    }
}

#[cfg(test)]
mod idle {
    use super::*;
    use crate::sim::Sim;
    use crate::spec::Spec;

    /// One 4 KB read between the two hosts of one TiN in an idle clique takes the sum of its
    /// parts: the Req through the switch (host link, fall-through, ejection link), the PCIe
    /// latency and first completion, the 32 Resp cells back to back on the target's link
    /// (slower than PCIe), the last one through the switch, the completion delay.
    #[test]
    fn an_idle_read_takes_the_sum_of_its_parts() {
        let spec = Spec::aquila();
        let rma = spec.rma;
        let mut sim = Sim::new(&spec, Time::ZERO).expect("builds");
        sim.issue_read(Time::ZERO, 0, 1, 4096);
        while sim.step(None).is_some() {}
        let r = sim.read_records(Time::ZERO)[0];
        let host = |bytes: u64| spec.host_rate.serialize(bytes);
        let through = |bytes: u64| Dur(2 * spec.host_delay.0 + spec.fall_through.0) + host(bytes);
        let req = through(48);
        let first = rma.pcie_latency + rma.pcie_rate.serialize(128);
        assert!(
            rma.pcie_rate.serialize(128) < host(144),
            "PCIe outpaces the link"
        );
        let stream = Dur(31 * host(144).0);
        let expect = req + first + stream + through(144) + rma.completion_delay;
        assert_eq!(r.execution(), Some(expect));
        assert_eq!(r.received, 4096);
        // PCIe part: the target's latency and 32 completions, and the initiator's delay.
        let pcie =
            rma.pcie_latency + Dur(32 * rma.pcie_rate.serialize(128).0) + rma.completion_delay;
        assert_eq!(r.pcie, pcie);
        let off_pcie = rma.pcie_latency + Dur(32 * rma.pcie_rate.serialize(128).0);
        assert_eq!(r.target_wait, Dur((first + stream).0 - off_pcie.0));
        assert!(sim.at_rest());
    }
}
