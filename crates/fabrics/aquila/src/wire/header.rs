//! Zero-copy views: [`Header`] over the first 8 bytes of a buffer, [`Cell`] over a whole cell.
//!
//! The views do no semantic checking: getters return whatever bits are on the wire, even when
//! the CRC is wrong (a cell with a bad header CRC is discarded, but a TiN still counts it by
//! port and VC). [`super::HeaderRepr::parse`] is the validating path.
//!
//! A view built with `new_checked` never panics, whatever its setters later write. One built
//! with `new_unchecked` over a buffer shorter than [`super::HEADER_LEN`] panics on the first
//! access.

use super::{GnetAddr, WORD};

/// Where each field sits in the header, read as one big-endian `u64`.
pub(crate) mod field {
    pub(crate) use shoal_cell::word::{Bits, CRC};

    // (lowest bit, width), from the top of the word down.
    pub(crate) const DST: Bits = Bits::new(48, 16);
    pub(crate) const SRC: Bits = Bits::new(32, 16);
    pub(crate) const LEN: Bits = Bits::new(27, 5);
    pub(crate) const TYPE: Bits = Bits::new(24, 3);
    pub(crate) const VC: Bits = Bits::new(19, 5);
    pub(crate) const HOPS: Bits = Bits::new(13, 6);
    pub(crate) const TRACE: Bits = Bits::new(12, 1);
    pub(crate) const RESERVED: Bits = Bits::new(8, 4);

    const ALL: [Bits; 9] = [DST, SRC, LEN, TYPE, VC, HOPS, TRACE, RESERVED, CRC];

    // The fields must tile the 64-bit word exactly: no overlap, no unassigned bit.
    const _: () = assert!(
        shoal_cell::word::tiles(&ALL),
        "header fields must tile the word"
    );
}

shoal_cell::header_view! {
    /// A read/write view of an 8-byte GNet routing header at the start of `buffer`.
    ///
    /// Longer buffers are fine (a whole cell); only the first [`super::HEADER_LEN`] bytes are
    /// used. Setters do not touch the CRC: call [`Header::fill_crc`] after the last one.
    pub struct Header;
}

impl<T: AsRef<[u8]>> Header<T> {
    // The narrowing casts below cannot lose bits: each field is at most 16 bits wide.

    /// Destination GNet address.
    pub fn dst(&self) -> GnetAddr {
        GnetAddr(self.get(field::DST) as u16)
    }

    /// Source GNet address; switches leave it unchanged.
    pub fn src(&self) -> GnetAddr {
        GnetAddr(self.get(field::SRC) as u16)
    }

    /// Cell length in 8-byte words, header included.
    pub fn len_words(&self) -> u8 {
        self.get(field::LEN) as u8
    }

    /// Cell length in bytes, header included.
    pub fn cell_len(&self) -> usize {
        usize::from(self.len_words()) * WORD
    }

    /// The raw 3-bit type; [`super::CellType::from_bits`] names it.
    pub fn type_bits(&self) -> u8 {
        self.get(field::TYPE) as u8
    }

    /// Virtual channel the cell occupies on this link.
    pub fn vc(&self) -> u8 {
        self.get(field::VC) as u8
    }

    /// Hops left.
    pub fn hops(&self) -> u8 {
        self.get(field::HOPS) as u8
    }

    pub fn trace(&self) -> bool {
        self.get(field::TRACE) != 0
    }

    /// The four bits that must be zero.
    pub fn reserved(&self) -> u8 {
        self.get(field::RESERVED) as u8
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Header<T> {
    // Setters keep only the low bits that fit the field, like a hardware register would.
    // `HeaderRepr::emit` is the range-checked way to write a header.

    pub fn set_dst(&mut self, value: GnetAddr) {
        self.set(field::DST, value.0.into());
    }

    pub fn set_src(&mut self, value: GnetAddr) {
        self.set(field::SRC, value.0.into());
    }

    pub fn set_len_words(&mut self, value: u8) {
        self.set(field::LEN, value.into());
    }

    pub fn set_type_bits(&mut self, value: u8) {
        self.set(field::TYPE, value.into());
    }

    pub fn set_vc(&mut self, value: u8) {
        self.set(field::VC, value.into());
    }

    pub fn set_hops(&mut self, value: u8) {
        self.set(field::HOPS, value.into());
    }

    pub fn set_trace(&mut self, value: bool) {
        self.set(field::TRACE, value.into());
    }

    pub fn set_reserved(&mut self, value: u8) {
        self.set(field::RESERVED, value.into());
    }

    /// What a switch does on each hop: one hop fewer, and a new CRC (the hop count is covered).
    /// Returns false, changing nothing, when no hop is left.
    pub fn take_hop(&mut self) -> bool {
        let hops = self.hops();
        if hops == 0 {
            return false;
        }
        self.set_hops(hops - 1);
        self.fill_crc();
        true
    }
}

shoal_cell::cell_view! {
    /// A view of one whole cell: the header followed by the payload area.
    ///
    /// The cell is the first `len_words · 8` bytes of the buffer; a longer buffer (a FIFO slot
    /// of the largest size) is fine.
    pub struct Cell(Header);
    needs |header| header.cell_len();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{Error, HEADER_LEN, MAX_CELL_LEN};

    /// Every field as (name, bits, setter), to check that each setter touches its bits only.
    type Setter = fn(&mut Header<&mut [u8]>, u64);
    const SETTERS: [(&str, field::Bits, Setter); 9] = [
        ("dst", field::DST, |h, v| h.set_dst(GnetAddr(v as u16))),
        ("src", field::SRC, |h, v| h.set_src(GnetAddr(v as u16))),
        ("len", field::LEN, |h, v| h.set_len_words(v as u8)),
        ("type", field::TYPE, |h, v| h.set_type_bits(v as u8)),
        ("vc", field::VC, |h, v| h.set_vc(v as u8)),
        ("hops", field::HOPS, |h, v| h.set_hops(v as u8)),
        ("trace", field::TRACE, |h, v| h.set_trace(v != 0)),
        ("reserved", field::RESERVED, |h, v| h.set_reserved(v as u8)),
        ("crc", field::CRC, |h, v| h.set_crc(v as u8)),
    ];

    #[test]
    fn each_setter_writes_exactly_its_bits() {
        for background in [0u64, u64::MAX, 0x0123_4567_89ab_cdef] {
            for (name, bits, set) in SETTERS {
                for value in [0, bits.max()] {
                    let mut buf = background.to_be_bytes();
                    set(&mut Header::new_unchecked(&mut buf[..]), value);
                    let after = u64::from_be_bytes(buf);
                    assert_eq!(
                        after & !bits.mask(),
                        background & !bits.mask(),
                        "{name} disturbed other bits"
                    );
                    assert_eq!(bits.get(after), value, "{name} did not store {value}");
                }
            }
        }
    }

    #[test]
    fn setters_drop_bits_above_the_field_width() {
        let mut buf = [0u8; HEADER_LEN];
        let mut h = Header::new_unchecked(&mut buf[..]);
        h.set_len_words(32 + 3);
        h.set_vc(32 + 7);
        h.set_hops(64 + 5);
        h.set_type_bits(8 + 1);
        assert_eq!(
            (h.len_words(), h.vc(), h.hops(), h.type_bits()),
            (3, 7, 5, 1)
        );
        assert_eq!(h.src(), GnetAddr(0), "len overflow leaked into src");
    }

    #[test]
    fn a_hop_decrements_the_count_and_keeps_the_crc_right() {
        let mut buf = [0u8; HEADER_LEN];
        let mut h = Header::new_unchecked(&mut buf[..]);
        h.set_hops(2);
        h.set_len_words(2);
        h.fill_crc();
        assert!(h.take_hop() && h.verify_crc() && h.hops() == 1);
        assert!(h.take_hop() && h.verify_crc() && h.hops() == 0);
        let before = buf;
        let mut h = Header::new_unchecked(&mut buf[..]);
        assert!(!h.take_hop(), "no hop left");
        assert_eq!(buf, before);
    }

    #[test]
    fn short_buffers_are_truncated_errors() {
        let buf = [0u8; HEADER_LEN];
        for got in 0..HEADER_LEN {
            let want = Some(Error::Truncated {
                need: HEADER_LEN,
                got,
            });
            assert_eq!(Header::new_checked(&buf[..got]).err(), want);
            assert_eq!(Cell::new_checked(&buf[..got]).err(), want);
        }
    }

    #[test]
    fn a_cell_needs_its_declared_length() {
        let mut buf = [0u8; MAX_CELL_LEN];
        Header::new_unchecked(&mut buf[..]).set_len_words(20);
        assert!(Cell::new_checked(&buf[..]).is_ok());
        assert_eq!(
            Cell::new_checked(&buf[..159]),
            Err(Error::Truncated {
                need: 160,
                got: 159
            })
        );
        let cell = Cell::new_checked(&buf[..]).expect("160 B");
        assert_eq!(cell.payload().len(), 152);
    }

    #[test]
    fn payload_is_clipped_when_len_is_raised_or_below_a_header() {
        let mut buf = [0u8; 24];
        let mut cell = Cell::new_unchecked(&mut buf[..]);
        cell.header_mut().set_len_words(20);
        assert_eq!(cell.payload().len(), 16);
        assert_eq!(cell.payload_mut().len(), 16);
        assert!(cell.check_len().is_err());
        cell.header_mut().set_len_words(0);
        assert!(cell.payload().is_empty());
    }
}
