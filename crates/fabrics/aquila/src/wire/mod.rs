//! Wire format of GNet cells (§3.1): variable-length cells of 16 to 160 bytes, each opening with
//! an 8-byte routing header.
//!
//! The paper lists the header's fields (16-bit source and destination GNet addresses, the cell
//! length and type, the VC, a decrementing hop count, an 8-bit header CRC and a trace-enable bit)
//! but not their widths or order; those below are our choice, with the reasons after the table.
//!
//! # Header layout
//!
//! The header is one big-endian `u64`: byte 0 holds bits 63..56, byte 7 holds the CRC.
//!
//! | bits   | field    | width | meaning |
//! |--------|----------|-------|---------|
//! | 63..48 | dst      | 16 | destination GNet address: pod (6) · TiN (4) · endpoint (6) |
//! | 47..32 | src      | 16 | source GNet address, same split |
//! | 31..27 | len      | 5  | cell length in 8-byte words, header included: 2..=20 (16..=160 B) |
//! | 26..24 | type     | 3  | [`CellType`]: data, RTS, CTS, CTD, 1RMA Req, 1RMA Resp; 6 and 7 unused |
//! | 23..19 | vc       | 5  | virtual channel, 0..=31 |
//! | 18..13 | hops     | 6  | hops left: every switch decrements it; a cell at 0 is not forwarded |
//! | 12     | trace    | 1  | sample this cell at every TiN it crosses (§5, debugging black holes) |
//! | 11..8  | reserved | 4  | zero |
//! | 7..0   | crc      | 8  | CRC-8/AUTOSAR over bytes 0..=6 |
//!
//! # Why these widths
//!
//! - **Addresses** have the Dragonfly's three parts (§3.2). The largest clique has 48 pods of 12
//!   TiNs and a TiN 18 internal endpoints, so pod needs 6 bits, TiN 4 and endpoint 5; the spare
//!   bit goes to the endpoint.
//! - **Length in 8-byte words.** GNet runs over a custom 66/64b PCS (§3.1), so a cell occupies
//!   whole 64-bit blocks and every legal length (16..=160 B) is a multiple of 8: 5 bits say it.
//!   A data cell's last bytes may be padding; the exact packet length travels in the RTS.
//! - **Type** needs six values (data, RTS, CTS, CTD, Req, Resp: §3.3-3.4): 3 bits.
//! - **VC**: 32 per link (§3.1), 5 bits.
//! - **Hops**: the longest route of §3.2 (local, global, local, global, local) is five
//!   switch-to-switch hops; 6 bits leave room for detours around failed links.
//! - **CRC-8/AUTOSAR** (poly 0x2F, init 0xFF, xorout 0xFF), as for the Shoal cell: Hamming
//!   distance 4 over the 56 covered bits, and an all-zero header fails. The paper names no
//!   polynomial.
//! - Four bits are left over; they must be zero, so that every header has one encoding.
//!
//! # Cell sizes by type
//!
//! | type | length | why |
//! |------|--------|-----|
//! | RTS  | 16 B   | §3.3: 8 B header + 8 B (packet length, CoS, ingress buffer slot, buffer use) |
//! | CTS, CTD | 16 B | §3.3: header + the ingress pointer copied from the RTS and the reassembly slot |
//! | Req  | 48 B   | §3.4: "3× larger than a CTS": host address, memory id, HMAC |
//! | data, Resp | 16..=160 B | payload up to 152 B; Resp sized like a PCIe read completion |
//!
//! # API
//!
//! In the style of smoltcp's `wire` module and of `shoal-cell`: [`Header`] and [`Cell`] are
//! zero-copy views whose accessors trust the buffer; [`HeaderRepr`] is the checked, owned form
//! with `parse` and `emit`.
//!
//! ```
//! use shoal_aquila::wire::{Cell, CellType, GnetAddr, HeaderRepr};
//!
//! let repr = HeaderRepr {
//!     dst: GnetAddr::new(47, 11, 0)?,
//!     src: GnetAddr::new(3, 2, 1)?,
//!     ty: CellType::Data,
//!     len_words: 4,
//!     vc: 6,
//!     hops: 6,
//!     trace: false,
//! };
//! let mut buf = [0u8; 32];
//! let mut cell = Cell::new_unchecked(&mut buf[..]);
//! repr.emit(&mut cell.header_mut())?;
//! cell.payload_mut()[..3].copy_from_slice(b"abc");
//!
//! let cell = Cell::new_checked(&buf[..])?;
//! assert_eq!(HeaderRepr::parse(&cell.header())?, repr);
//! assert_eq!(cell.payload().len(), 24);
//! # Ok::<(), shoal_aquila::wire::Error>(())
//! ```

mod header;
mod repr;

pub use header::{Cell, Header};
pub use repr::HeaderRepr;

use serde::Serialize;

/// Bytes in a cell header.
pub const HEADER_LEN: usize = shoal_cell::word::WORD_LEN;
/// Bytes in one PCS block: the unit of a cell's length.
pub const WORD: usize = 8;
/// Shortest cell (§3.1): a header and one word, the size of an RTS.
pub const MIN_CELL_LEN: usize = 16;
/// Longest cell (§3.1): about 50 ns at 25 Gb/s.
pub const MAX_CELL_LEN: usize = 160;
/// Payload bytes of the longest cell.
pub const MAX_PAYLOAD_LEN: usize = MAX_CELL_LEN - HEADER_LEN;
/// Virtual channels per GNet link (§3.1).
pub const VCS: usize = 1 << header::field::VC.width;
/// Largest hop count the header holds.
pub const MAX_HOPS: u8 = header::field::HOPS.max() as u8;
/// Pods, TiNs per pod and endpoints per TiN the address format reaches.
pub const MAX_PODS: u16 = 1 << addr::POD_BITS;
pub const MAX_TINS_PER_POD: u16 = 1 << addr::TIN_BITS;
pub const MAX_ENDPOINTS: u16 = 1 << addr::ENDPOINT_BITS;

/// Why a buffer is not a valid cell, or a [`HeaderRepr`] cannot be emitted: the errors of
/// Shoal's cell codec, whose header word this one shares ([`shoal_cell::word`]).
pub use shoal_cell::Error;

/// The kinds of GNet cell (§3.3, §3.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CellType {
    /// A piece of an IP packet, sent after a CTS; routed adaptively.
    Data = 0,
    /// Request to send: one per IP packet, unsolicited, deterministically routed.
    Rts = 1,
    /// Clear to send: the egress grants the packet reassembly space.
    Cts = 2,
    /// Clear to drop: the egress tells the ingress to discard the packet (incast).
    Ctd = 3,
    /// A 1RMA read request, carrying the whole request.
    RmaReq = 4,
    /// A 1RMA read response: one PCIe read completion's data.
    RmaResp = 5,
}

impl CellType {
    pub const ALL: [CellType; 6] = [
        CellType::Data,
        CellType::Rts,
        CellType::Cts,
        CellType::Ctd,
        CellType::RmaReq,
        CellType::RmaResp,
    ];

    /// The type the 3-bit field names, if any.
    pub const fn from_bits(bits: u8) -> Option<CellType> {
        match bits {
            0 => Some(CellType::Data),
            1 => Some(CellType::Rts),
            2 => Some(CellType::Cts),
            3 => Some(CellType::Ctd),
            4 => Some(CellType::RmaReq),
            5 => Some(CellType::RmaResp),
            _ => None,
        }
    }

    /// The lengths this type may have, in words (see the module's size table).
    pub const fn len_words(self) -> core::ops::RangeInclusive<u8> {
        const MIN: u8 = (MIN_CELL_LEN / WORD) as u8;
        const MAX: u8 = (MAX_CELL_LEN / WORD) as u8;
        match self {
            CellType::Rts | CellType::Cts | CellType::Ctd => MIN..=MIN,
            CellType::RmaReq => 6..=6,
            CellType::Data | CellType::RmaResp => MIN..=MAX,
        }
    }
}

/// Where the address bits go.
mod addr {
    pub(super) const POD_BITS: u32 = 6;
    pub(super) const TIN_BITS: u32 = 4;
    pub(super) const ENDPOINT_BITS: u32 = 6;
    const _: () = assert!(POD_BITS + TIN_BITS + ENDPOINT_BITS == 16);
}

/// A GNet address: pod, TiN within the pod, endpoint (protocol engine) within the TiN (§3.2).
/// Every 16-bit value is one, so conversion from the wire cannot fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct GnetAddr(pub u16);

impl GnetAddr {
    /// The address of `endpoint` on TiN `tin` of pod `pod`, if each part fits its bits.
    pub const fn new(pod: u16, tin: u16, endpoint: u16) -> Result<GnetAddr, Error> {
        if pod >= MAX_PODS {
            return Err(Error::FieldRange {
                field: "pod",
                value: pod as u64,
                max: MAX_PODS as u64 - 1,
            });
        }
        if tin >= MAX_TINS_PER_POD {
            return Err(Error::FieldRange {
                field: "tin",
                value: tin as u64,
                max: MAX_TINS_PER_POD as u64 - 1,
            });
        }
        if endpoint >= MAX_ENDPOINTS {
            return Err(Error::FieldRange {
                field: "endpoint",
                value: endpoint as u64,
                max: MAX_ENDPOINTS as u64 - 1,
            });
        }
        Ok(GnetAddr(
            (pod << (addr::TIN_BITS + addr::ENDPOINT_BITS))
                | (tin << addr::ENDPOINT_BITS)
                | endpoint,
        ))
    }

    pub const fn pod(self) -> u16 {
        self.0 >> (addr::TIN_BITS + addr::ENDPOINT_BITS)
    }

    pub const fn tin(self) -> u16 {
        (self.0 >> addr::ENDPOINT_BITS) & (MAX_TINS_PER_POD - 1)
    }

    pub const fn endpoint(self) -> u16 {
        self.0 & (MAX_ENDPOINTS - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_match_the_paper() {
        assert_eq!((MIN_CELL_LEN, MAX_CELL_LEN, VCS), (16, 160, 32));
        // The full clique: 48 pods x 12 TiNs, 18 internal endpoints per TiN.
        const { assert!(MAX_PODS >= 48 && MAX_TINS_PER_POD >= 12 && MAX_ENDPOINTS >= 18) };
        assert_eq!(MAX_HOPS, 63);
    }

    #[test]
    fn addresses_split_into_their_three_parts() {
        let a = GnetAddr::new(47, 11, 17).expect("fits");
        assert_eq!((a.pod(), a.tin(), a.endpoint()), (47, 11, 17));
        assert_eq!(a.0, (47 << 10) | (11 << 6) | 17);
        for raw in [0u16, 1, 0x3ff, 0xfc00, u16::MAX] {
            let a = GnetAddr(raw);
            assert_eq!(GnetAddr::new(a.pod(), a.tin(), a.endpoint()), Ok(a));
        }
        assert_eq!(
            GnetAddr::new(64, 0, 0),
            Err(Error::FieldRange {
                field: "pod",
                value: 64,
                max: 63
            })
        );
        assert!(GnetAddr::new(0, 16, 0).is_err());
        assert!(GnetAddr::new(0, 0, 64).is_err());
    }

    #[test]
    fn type_sizes_follow_section_3() {
        assert_eq!(CellType::Rts.len_words(), 2..=2);
        assert_eq!(CellType::RmaReq.len_words(), 6..=6, "48 B, 3x a CTS");
        assert_eq!(CellType::Data.len_words(), 2..=20);
        for (i, ty) in CellType::ALL.iter().enumerate() {
            assert_eq!(CellType::from_bits(i as u8), Some(*ty));
        }
        assert_eq!(CellType::from_bits(6), None);
        assert_eq!(CellType::from_bits(7), None);
    }
}
