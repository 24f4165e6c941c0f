//! Captures of the cells a node sends and receives, as classic pcap files.
//!
//! Link type: `LINKTYPE_USER0` (DLT 147), the first of the values tcpdump reserves for private
//! use (147-162). Each record is one live-rack datagram exactly as it crossed the link: the
//! 16-byte shim of `datagram.rs` (slot, channel, previous hop, next hop) followed by the 64-byte
//! cell (8-byte header, payload). `assets/wireshark/shoal.lua` dissects both and checks the
//! header's CRC-8; `docs/live.md` says how to load it.
//!
//! Timestamps are nanoseconds since the rack's slot 0 on `CLOCK_MONOTONIC`, not dates (the
//! rack has no reason to read the date), so Wireshark shows them as early January 1970.

use std::io::{self, Write};

/// DLT 147: the user-defined link type of the captures.
pub const LINKTYPE_SHOAL: u32 = 147;

/// The pcap magic number for nanosecond timestamps.
const MAGIC_NS: u32 = 0xa1b2_3c4d;

/// Writes one capture.
pub struct PcapWriter<W: Write> {
    out: W,
    /// Records written.
    pub records: u64,
}

impl<W: Write> PcapWriter<W> {
    /// Starts a capture: writes the file header.
    pub fn new(mut out: W) -> io::Result<Self> {
        let mut h = Vec::with_capacity(24);
        h.extend_from_slice(&MAGIC_NS.to_le_bytes());
        h.extend_from_slice(&2u16.to_le_bytes()); // version 2.4
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&0i32.to_le_bytes()); // GMT offset
        h.extend_from_slice(&0u32.to_le_bytes()); // timestamp accuracy
        h.extend_from_slice(&65_535u32.to_le_bytes()); // snap length
        h.extend_from_slice(&LINKTYPE_SHOAL.to_le_bytes());
        out.write_all(&h)?;
        Ok(PcapWriter { out, records: 0 })
    }

    /// Appends one record taken at `ts_ns`.
    pub fn record(&mut self, ts_ns: u64, data: &[u8]) -> io::Result<()> {
        let mut h = [0u8; 16];
        h[0..4].copy_from_slice(&((ts_ns / 1_000_000_000) as u32).to_le_bytes());
        h[4..8].copy_from_slice(&((ts_ns % 1_000_000_000) as u32).to_le_bytes());
        h[8..12].copy_from_slice(&(data.len() as u32).to_le_bytes());
        h[12..16].copy_from_slice(&(data.len() as u32).to_le_bytes());
        self.out.write_all(&h)?;
        self.out.write_all(data)?;
        self.records += 1;
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The file reads back as pcap: header fields at their offsets, then length-prefixed records
    /// with the timestamps split into seconds and nanoseconds.
    #[test]
    fn captures_follow_the_pcap_layout() {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        w.record(3_000_000_007, &[1, 2, 3]).unwrap();
        w.record(5, &[9; 80]).unwrap();
        let b = w.out;
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
        assert_eq!(u32_at(0), MAGIC_NS);
        assert_eq!(u32_at(20), 147);
        assert_eq!((u32_at(24), u32_at(28), u32_at(32)), (3, 7, 3));
        assert_eq!(&b[40..43], &[1, 2, 3]);
        assert_eq!((u32_at(43), u32_at(47), u32_at(51)), (0, 5, 80));
        assert_eq!(b.len(), 24 + 16 + 3 + 16 + 80);
    }
}
