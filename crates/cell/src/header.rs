//! Zero-copy views: [`Header`] over the first 8 bytes of a buffer, [`Cell`] over a whole cell.
//!
//! The views do no semantic checking: getters return whatever bits are on the wire, even when
//! the CRC is wrong, because a node still reads `feedback` and `lcd` from a corrupted cell
//! before discarding it (paper, App. D). [`crate::HeaderRepr::parse`] is the validating path.
//!
//! A view built with `new_checked` never panics, whatever its setters later write. One built
//! with `new_unchecked` over a buffer shorter than [`HEADER_LEN`] panics on the first access.

use crate::HEADER_LEN;

/// Where each field sits in the header, read as one big-endian `u64`.
pub(crate) mod field {
    pub(crate) use crate::word::{Bits, CRC};

    // (lowest bit, width), from the top of the word down.
    pub(crate) const DST: Bits = Bits::new(54, 10);
    pub(crate) const SRC: Bits = Bits::new(44, 10);
    pub(crate) const SEQ: Bits = Bits::new(29, 15);
    pub(crate) const FEEDBACK: Bits = Bits::new(19, 10);
    pub(crate) const SOP: Bits = Bits::new(18, 1);
    pub(crate) const EOP: Bits = Bits::new(17, 1);
    pub(crate) const LCD: Bits = Bits::new(16, 1);
    pub(crate) const CLASS: Bits = Bits::new(14, 2);
    pub(crate) const LEN: Bits = Bits::new(8, 6);

    const ALL: [Bits; 10] = [DST, SRC, SEQ, FEEDBACK, SOP, EOP, LCD, CLASS, LEN, CRC];

    // The fields must tile the 64-bit word exactly: no overlap, no unused bit.
    const _: () = assert!(crate::word::tiles(&ALL), "header fields must tile the word");
}

crate::header_view! {
    /// A read/write view of an 8-byte cell header at the start of `buffer`.
    ///
    /// Longer buffers are fine (e.g. a whole cell); only the first [`HEADER_LEN`] bytes are used.
    /// Setters do not touch the CRC: call [`Header::fill_crc`] after the last one.
    pub struct Header;
}

impl<T: AsRef<[u8]>> Header<T> {
    // The narrowing casts below cannot lose bits: each field is at most 15 bits wide.

    /// Final destination node.
    pub fn dst(&self) -> u16 {
        self.get(field::DST) as u16
    }

    /// Node that sourced the cell; an intermediate hop leaves it unchanged.
    pub fn src(&self) -> u16 {
        self.get(field::SRC) as u16
    }

    /// Per-(src, dst) sequence number, modulo [`crate::SEQ_MODULUS`].
    pub fn seq(&self) -> u16 {
        self.get(field::SEQ) as u16
    }

    /// Rate-limit feedback: a queue length in cells, saturated at [`crate::MAX_FEEDBACK`].
    pub fn feedback(&self) -> u16 {
        self.get(field::FEEDBACK) as u16
    }

    pub fn sop(&self) -> bool {
        self.get(field::SOP) != 0
    }

    pub fn eop(&self) -> bool {
        self.get(field::EOP) != 0
    }

    /// Last-cell-dropped: the previous cell from the receiver of this one to its sender was lost.
    pub fn lcd(&self) -> bool {
        self.get(field::LCD) != 0
    }

    /// Traffic class, 0 = highest priority.
    pub fn class(&self) -> u8 {
        self.get(field::CLASS) as u8
    }

    /// Payload bytes carried by this cell.
    pub fn payload_len(&self) -> u8 {
        self.get(field::LEN) as u8
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Header<T> {
    // Setters keep only the low bits that fit the field, like a hardware register would.
    // `HeaderRepr::emit` is the range-checked way to write a header.

    pub fn set_dst(&mut self, value: u16) {
        self.set(field::DST, value.into());
    }

    pub fn set_src(&mut self, value: u16) {
        self.set(field::SRC, value.into());
    }

    pub fn set_seq(&mut self, value: u16) {
        self.set(field::SEQ, value.into());
    }

    pub fn set_feedback(&mut self, value: u16) {
        self.set(field::FEEDBACK, value.into());
    }

    pub fn set_sop(&mut self, value: bool) {
        self.set(field::SOP, value.into());
    }

    pub fn set_eop(&mut self, value: bool) {
        self.set(field::EOP, value.into());
    }

    pub fn set_lcd(&mut self, value: bool) {
        self.set(field::LCD, value.into());
    }

    pub fn set_class(&mut self, value: u8) {
        self.set(field::CLASS, value.into());
    }

    pub fn set_payload_len(&mut self, value: u8) {
        self.set(field::LEN, value.into());
    }
}

crate::cell_view! {
    /// A view of one whole cell: the header followed by the payload area.
    ///
    /// The cell size is the buffer length (64 B in the paper, any size >= [`HEADER_LEN`] here).
    /// Only the first `payload_len` bytes of the area are payload; the rest is padding.
    pub struct Cell(Header);
    needs |header| HEADER_LEN + usize::from(header.payload_len());
}

impl<T: AsRef<[u8]>> Cell<T> {
    /// Cell size in bytes: the buffer length.
    pub fn cell_len(&self) -> usize {
        self.buffer.as_ref().len()
    }

    /// Most payload bytes this cell could carry: cell size minus the header.
    pub fn payload_capacity(&self) -> usize {
        self.cell_len().saturating_sub(HEADER_LEN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DEFAULT_CELL_LEN, Error};

    /// Every field as (name, bits, setter), to check that each setter touches its bits only.
    type Setter = fn(&mut Header<&mut [u8]>, u64);
    const SETTERS: [(&str, field::Bits, Setter); 10] = [
        ("dst", field::DST, |h, v| h.set_dst(v as u16)),
        ("src", field::SRC, |h, v| h.set_src(v as u16)),
        ("seq", field::SEQ, |h, v| h.set_seq(v as u16)),
        ("feedback", field::FEEDBACK, |h, v| h.set_feedback(v as u16)),
        ("sop", field::SOP, |h, v| h.set_sop(v != 0)),
        ("eop", field::EOP, |h, v| h.set_eop(v != 0)),
        ("lcd", field::LCD, |h, v| h.set_lcd(v != 0)),
        ("class", field::CLASS, |h, v| h.set_class(v as u8)),
        ("len", field::LEN, |h, v| h.set_payload_len(v as u8)),
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
        h.set_dst(1024 + 7);
        h.set_seq(0x8000 | 3);
        h.set_class(4 | 1);
        h.set_payload_len(64 + 5);
        assert_eq!((h.dst(), h.seq(), h.class(), h.payload_len()), (7, 3, 1, 5));
        assert_eq!(h.src(), 0, "dst overflow leaked into src");
    }

    #[test]
    fn getters_read_a_header_whose_crc_is_wrong() {
        let mut buf = [0u8; HEADER_LEN];
        let mut h = Header::new_unchecked(&mut buf[..]);
        h.set_dst(9);
        h.set_src(4);
        h.set_feedback(321);
        h.set_lcd(true);
        h.fill_crc();
        assert!(h.verify_crc());
        let good = h.crc();
        h.set_crc(good ^ 0x5a);
        assert!(!h.verify_crc());
        assert_eq!((h.feedback(), h.lcd(), h.dst(), h.src()), (321, true, 9, 4));
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
        assert!(Header::new_checked(&buf[..]).is_ok());
        assert!(
            Cell::new_checked(&buf[..]).is_ok(),
            "a header-only cell with len 0 is fine"
        );
    }

    #[test]
    fn payload_length_is_checked_against_the_payload_area() {
        let mut buf = [0u8; DEFAULT_CELL_LEN];
        let mut h = Header::new_unchecked(&mut buf[..]);
        h.set_payload_len(57);
        assert_eq!(
            Cell::new_checked(&buf[..]),
            Err(Error::Truncated { need: 65, got: 64 })
        );
        Header::new_unchecked(&mut buf[..]).set_payload_len(56);
        let cell = Cell::new_checked(&buf[..]).expect("56 bytes fit a 64-byte cell");
        assert_eq!(cell.payload().len(), 56);
        assert_eq!(cell.payload_capacity(), 56);
    }

    #[test]
    fn payload_is_the_declared_prefix_of_the_area() {
        let mut buf = [0u8; DEFAULT_CELL_LEN];
        for (i, b) in buf.iter_mut().enumerate() {
            *b = i as u8;
        }
        let mut cell = Cell::new_unchecked(&mut buf[..]);
        cell.header_mut().set_payload_len(3);
        assert_eq!(cell.payload(), &[8, 9, 10]);
        cell.payload_mut().copy_from_slice(&[0xaa, 0xbb, 0xcc]);
        assert_eq!(&cell.into_inner()[8..12], &[0xaa, 0xbb, 0xcc, 11]);
    }

    #[test]
    fn payload_is_clipped_when_len_is_raised_after_checking() {
        let mut buf = [0u8; 12];
        let mut cell = Cell::new_checked(&mut buf[..]).expect("len 0 fits");
        cell.header_mut().set_payload_len(63);
        assert_eq!(cell.payload().len(), 4);
        assert_eq!(cell.payload_mut().len(), 4);
        assert!(cell.check_len().is_err());
    }
}
