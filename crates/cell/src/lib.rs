//! Wire format of Shoal's fixed-size cells (64 B in the paper: an 8-byte header, then payload).
//!
//! Every slot of the static schedule carries exactly one cell, so the header has to do all of
//! the fabric's signalling: forwarding (§3.3.1), congestion feedback (Eq. 1/6), reassembly
//! (§3.5), failure and drop notices (§3.5, App. C/D) and corruption detection (App. D).
//!
//! # Header layout
//!
//! The header is one big-endian `u64`: byte 0 holds bits 63..56, byte 7 holds the CRC.
//!
//! | bits   | field    | width | meaning |
//! |--------|----------|-------|---------|
//! | 63..54 | dst      | 10 | final destination node (racks up to 1024 nodes) |
//! | 53..44 | src      | 10 | node that sourced the cell, not the previous hop |
//! | 43..29 | seq      | 15 | per-(src, dst) sequence number, wraps mod 2^15 |
//! | 28..19 | feedback | 10 | rate-limit feedback: a queue length in cells, saturates at 1023 |
//! | 18     | sop      | 1  | start of packet |
//! | 17     | eop      | 1  | end of packet |
//! | 16     | lcd      | 1  | last cell dropped (App. C/D) |
//! | 15..14 | class    | 2  | traffic class, 0 = highest priority (App. C) |
//! | 13..8  | len      | 6  | payload bytes in this cell, 0..=63 (at most cell size - 8) |
//! | 7..0   | crc      | 8  | CRC-8/AUTOSAR over bytes 0..=6 |
//!
//! `len`, `sop` and `eop` give the [`CellKind`]: `len > 0` is a data cell; `len == 0` with
//! neither flag is an idle cell; `len == 0` with only `sop` is an unreachable notice; `len == 0`
//! with `eop` is malformed, and so is `src == dst`.
//!
//! # Why these widths
//!
//! The paper's Fig. 5 fixes only dst (10 bits), end-of-packet and last-cell-dropped (1 bit
//! each) and the CRC (8 bits); the other widths did not survive and are our choice:
//!
//! - `src` is as wide as `dst`. It names the original source because cells detour through an
//!   intermediate node and reassembly is per source.
//! - `seq` gets what is left. Reassembly compares numbers with serial arithmetic
//!   ([`seq_distance`]), which stays correct while reordering within a (src, dst) pair is under
//!   2^14 cells, i.e. 917 KB of payload in 64 B cells; the paper's simulations saw 200 KB.
//! - `feedback` carries queue lengths; the paper's worst per-destination queue was 11 cells and
//!   the worst aggregate per node 336, so 10 bits leave headroom, and larger values saturate.
//! - `class` allows the four priority levels of App. C's multi-class extension.
//! - `len` lets a packet's last cell be partly filled; 6 bits cover cells of up to 71 bytes.
//! - CRC-8/AUTOSAR (poly 0x2F, init 0xFF, xorout 0xFF) has Hamming distance 4 at 56 data bits,
//!   so any 1-, 2- or 3-bit error is caught, and its nonzero init makes an all-zero header fail.
//!
//! # API
//!
//! In the style of smoltcp's `wire` module: [`Header`] and [`Cell`] are zero-copy views with
//! field accessors that trust the buffer; [`HeaderRepr`] is the checked, owned form with
//! `parse` and `emit`.
//!
//! ```
//! use shoal_cell::{Cell, CellKind, DEFAULT_CELL_LEN, HeaderRepr};
//!
//! let repr = HeaderRepr {
//!     kind: CellKind::Data { sop: true, eop: true, len: 3 },
//!     dst: 7,
//!     src: 2,
//!     seq: 41,
//!     feedback: 0,
//!     lcd: false,
//!     class: 0,
//! }
//! .with_feedback_saturating(5000);
//!
//! let mut buf = [0u8; DEFAULT_CELL_LEN];
//! let mut cell = Cell::new_unchecked(&mut buf[..]);
//! repr.emit(&mut cell.header_mut())?;
//! cell.payload_mut().copy_from_slice(b"abc");
//!
//! let cell = Cell::new_checked(&buf[..])?;
//! assert_eq!(HeaderRepr::parse(&cell.header())?.feedback, 1023);
//! assert_eq!(cell.payload(), b"abc");
//! # Ok::<(), shoal_cell::Error>(())
//! ```

#![forbid(unsafe_code)]

mod header;
mod repr;
mod view;
pub mod word;

pub use header::{Cell, Header};
pub use repr::{CellKind, HeaderRepr};

/// Bytes in a cell header.
pub const HEADER_LEN: usize = word::WORD_LEN;
/// Cell size used by the paper: a 20.5 ns slot at 25 Gb/s.
pub const DEFAULT_CELL_LEN: usize = 64;
/// Node ids the 10-bit `dst`/`src` fields address.
pub const MAX_NODES: usize = 1 << header::field::DST.width;
/// Sequence numbers wrap modulo this.
pub const SEQ_MODULUS: u16 = 1 << header::field::SEQ.width;
/// Largest rate-limit feedback value; longer queues are reported as this.
pub const MAX_FEEDBACK: u16 = header::field::FEEDBACK.max() as u16;
/// Traffic classes the 2-bit `class` field distinguishes.
pub const CLASSES: usize = 1 << header::field::CLASS.width;
/// Largest payload the 6-bit `len` field can declare.
pub const MAX_PAYLOAD_LEN: u8 = header::field::LEN.max() as u8;

/// Why a buffer is not a valid cell, or a [`HeaderRepr`] cannot be emitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("buffer too short: need {need} bytes, got {got}")]
    Truncated { need: usize, got: usize },
    #[error("header CRC mismatch: stored {stored:#04x}, computed {computed:#04x}")]
    Crc { stored: u8, computed: u8 },
    /// The CRC is right but the fields break a rule; the string names the rule.
    #[error("malformed cell: {0}")]
    Malformed(&'static str),
    #[error("{field} = {value} does not fit its field (max {max})")]
    FieldRange {
        field: &'static str,
        value: u64,
        max: u64,
    },
}

/// `seq + delta`, modulo [`SEQ_MODULUS`].
pub const fn seq_add(seq: u16, delta: u16) -> u16 {
    // 2^15 divides 2^16, so wrapping in u16 then masking is addition mod 2^15.
    seq.wrapping_add(delta) & (SEQ_MODULUS - 1)
}

/// Signed distance from `from` to `to` on the 2^15 sequence circle, in `-16384..=16383`:
/// positive when `to` comes after `from`. Inputs are taken modulo [`SEQ_MODULUS`].
///
/// Two numbers exactly half the circle apart are ambiguous; they come out as -16384. Keeping
/// in-flight reordering under 2^14 cells per (src, dst) pair avoids that case.
pub const fn seq_distance(from: u16, to: u16) -> i16 {
    let diff = to.wrapping_sub(from) & (SEQ_MODULUS - 1);
    // Move the 15-bit difference to the top of an i16 and shift back: bit 14 becomes the sign.
    ((diff << 1) as i16) >> 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seq_distance_across_the_wrap() {
        let cases = [
            (5, 5, 0),
            (5, 6, 1),
            (6, 5, -1),
            (32767, 0, 1),
            (0, 32767, -1),
            (32760, 8, 16),
            (8, 32760, -16),
            (0, 16383, 16383),
            (0, 16384, -16384),
            (16384, 0, -16384),
            (0, 16385, -16383),
        ];
        for (from, to, want) in cases {
            assert_eq!(seq_distance(from, to), want, "seq_distance({from}, {to})");
        }
    }

    #[test]
    fn seq_helpers_reduce_inputs_modulo_the_field() {
        assert_eq!(seq_add(32767, 1), 0);
        assert_eq!(seq_add(32000, 1000), 232);
        assert_eq!(seq_add(0, u16::MAX), 32767);
        assert_eq!(seq_distance(0x8000 | 3, 4), 1);
    }

    #[test]
    fn constants_match_the_layout() {
        assert_eq!((MAX_NODES, SEQ_MODULUS, MAX_FEEDBACK), (1024, 32768, 1023));
        assert_eq!((CLASSES, MAX_PAYLOAD_LEN), (4, 63));
        assert!(usize::from(MAX_PAYLOAD_LEN) >= DEFAULT_CELL_LEN - HEADER_LEN);
    }

    #[test]
    fn errors_say_what_went_wrong() {
        let e = Error::FieldRange {
            field: "dst",
            value: 1024,
            max: 1023,
        };
        assert_eq!(
            e.to_string(),
            "dst = 1024 does not fit its field (max 1023)"
        );
        let e = Error::Crc {
            stored: 0x0a,
            computed: 0xe4,
        };
        assert_eq!(
            e.to_string(),
            "header CRC mismatch: stored 0x0a, computed 0xe4"
        );
    }

    // Byte fixtures. The header bytes were worked out by hand from the layout table; the CRC
    // bytes were computed once with a separate bitwise CRC-8/AUTOSAR and pinned.

    /// Node 3 has nothing for node 5 this slot. It reports a queue of 7 cells and that the
    /// last cell 5 sent it was dropped.
    /// dst 5 = 0000000101, src 3 = 0000000011, seq 0, feedback 7 = 0000000111, lcd 1.
    const IDLE: [u8; 8] = [0x01, 0x40, 0x30, 0x00, 0x00, 0x39, 0x00, 0xe4];

    /// Node 512 tells the node at the other end of the slot that it lost node 1023, with its
    /// feedback saturated. dst 1023 = all ones, src 512 = 1000000000, feedback 1023, sop 1.
    const UNREACHABLE: [u8; 8] = [0xff, 0xe0, 0x00, 0x00, 0x1f, 0xfc, 0x00, 0x27];

    /// Last cell of a packet from 682 to 341: 40 bytes, class 2, seq 21845, feedback 300,
    /// lcd 1. Alternating bit patterns catch a field shifted by one.
    /// 0101010101 1010101010 101010101010101 0100101100 0 1 1 10 101000
    const DATA: [u8; 8] = [0x55, 0x6a, 0xaa, 0xaa, 0xa9, 0x63, 0xa8, 0x25];

    fn fixtures() -> [([u8; 8], HeaderRepr); 3] {
        [
            (
                IDLE,
                HeaderRepr {
                    kind: CellKind::Idle,
                    dst: 5,
                    src: 3,
                    seq: 0,
                    feedback: 7,
                    lcd: true,
                    class: 0,
                },
            ),
            (
                UNREACHABLE,
                HeaderRepr {
                    kind: CellKind::Unreachable,
                    dst: 1023,
                    src: 512,
                    seq: 0,
                    feedback: MAX_FEEDBACK,
                    lcd: false,
                    class: 0,
                },
            ),
            (
                DATA,
                HeaderRepr {
                    kind: CellKind::Data {
                        sop: false,
                        eop: true,
                        len: 40,
                    },
                    dst: 341,
                    src: 682,
                    seq: 21845,
                    feedback: 300,
                    lcd: true,
                    class: 2,
                },
            ),
        ]
    }

    #[test]
    fn fixtures_parse() {
        for (bytes, repr) in fixtures() {
            assert_eq!(HeaderRepr::from_bytes(&bytes), Ok(repr));
        }
    }

    #[test]
    fn fixtures_emit() {
        for (bytes, repr) in fixtures() {
            assert_eq!(repr.to_bytes(), Ok(bytes), "{repr:?}");
        }
    }

    #[test]
    fn fixture_fields_through_the_view() {
        let h = Header::new_checked(&DATA[..]).expect("8 bytes");
        assert_eq!(
            (h.dst(), h.src(), h.seq(), h.feedback()),
            (341, 682, 21845, 300)
        );
        assert_eq!((h.sop(), h.eop(), h.lcd()), (false, true, true));
        assert_eq!((h.class(), h.payload_len(), h.crc()), (2, 40, 0x25));
        assert!(h.verify_crc());
    }
}
