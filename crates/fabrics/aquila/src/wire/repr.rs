//! [`HeaderRepr`]: a validated, owned GNet header, parsed from or emitted into a [`Header`].

use serde::Serialize;
use shoal_cell::word::check_widths;

use super::header::{Header, field};
use super::{CellType, Error, GnetAddr, HEADER_LEN};

/// The semantic content of a GNet routing header, every field range-checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct HeaderRepr {
    pub dst: GnetAddr,
    pub src: GnetAddr,
    pub ty: CellType,
    /// Cell length in 8-byte words, header included; must suit `ty` ([`CellType::len_words`]).
    pub len_words: u8,
    pub vc: u8,
    pub hops: u8,
    pub trace: bool,
}

impl HeaderRepr {
    /// Validates a header: the CRC first (a corrupted header says nothing reliable), then the
    /// type, its length, the reserved bits and `src != dst`.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(header: &Header<&T>) -> Result<Self, Error> {
        header.check_crc()?;
        if header.reserved() != 0 {
            return Err(Error::Malformed("reserved bits set"));
        }
        let ty =
            CellType::from_bits(header.type_bits()).ok_or(Error::Malformed("unknown cell type"))?;
        let repr = HeaderRepr {
            dst: header.dst(),
            src: header.src(),
            ty,
            len_words: header.len_words(),
            vc: header.vc(),
            hops: header.hops(),
            trace: header.trace(),
        };
        repr.check_semantics()?;
        Ok(repr)
    }

    /// Writes every field, zero reserved bits and the CRC. Nothing is written if a field is out
    /// of range or the header would not parse back. Does not check the length against a
    /// buffer: call [`super::Cell::check_len`] afterwards when emitting into a whole cell.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(
        &self,
        header: &mut Header<&mut T>,
    ) -> Result<(), Error> {
        self.check()?;
        header.set_dst(self.dst);
        header.set_src(self.src);
        header.set_len_words(self.len_words);
        header.set_type_bits(self.ty as u8);
        header.set_vc(self.vc);
        header.set_hops(self.hops);
        header.set_trace(self.trace);
        header.set_reserved(0);
        header.fill_crc();
        Ok(())
    }

    /// The 8 header bytes, CRC included.
    pub fn to_bytes(&self) -> Result<[u8; HEADER_LEN], Error> {
        let mut bytes = [0u8; HEADER_LEN];
        self.emit(&mut Header::new_unchecked(&mut bytes[..]))?;
        Ok(bytes)
    }

    /// Parses the first 8 bytes of `bytes`; anything after them (the payload) is ignored.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Self::parse(&Header::new_checked(bytes)?)
    }

    /// Cell length in bytes.
    pub fn cell_len(&self) -> usize {
        usize::from(self.len_words) * super::WORD
    }

    /// Every field within its width, then the rules `parse` enforces.
    fn check(&self) -> Result<(), Error> {
        check_widths(&[
            ("len", u64::from(self.len_words), field::LEN),
            ("vc", u64::from(self.vc), field::VC),
            ("hops", u64::from(self.hops), field::HOPS),
        ])?;
        self.check_semantics()
    }

    fn check_semantics(&self) -> Result<(), Error> {
        if !self.ty.len_words().contains(&self.len_words) {
            return Err(Error::Malformed("length does not suit the cell type"));
        }
        if self.src == self.dst {
            return Err(Error::Malformed("src equals dst"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::header::Header;

    fn addr(pod: u16, tin: u16, endpoint: u16) -> GnetAddr {
        GnetAddr::new(pod, tin, endpoint).expect("fits")
    }

    // Byte fixtures. The first seven bytes were worked out by hand from the layout table; the
    // CRC bytes were computed once with a separate bitwise CRC-8/AUTOSAR and pinned.

    /// An RTS from (3, 2, 1) to (47, 11, 0) on VC 30 with 6 hops to go.
    /// dst 101111 1011 000000, src 000011 0010 000001,
    /// len 00010, type 001, vc 11110, hops 000110, trace 0, reserved 0000.
    const RTS: [u8; 8] = [0xbe, 0xc0, 0x0c, 0x81, 0x11, 0xf0, 0xc0, 0x27];

    /// A full 160 B data cell for (0, 0, 1) from the all-ones address, VC 31, no hop left,
    /// traced. len 10100, type 000, vc 11111, hops 000000, trace 1.
    const DATA: [u8; 8] = [0x00, 0x01, 0xff, 0xff, 0xa0, 0xf8, 0x10, 0x94];

    /// A 48 B 1RMA Req: alternating bit patterns catch a field shifted by one.
    /// dst (21, 10, 42) = 010101 1010 101010, src (42, 5, 21) = 101010 0101 010101,
    /// len 00110, type 100, vc 10101, hops 101010, trace 0.
    const REQ: [u8; 8] = [0x56, 0xaa, 0xa9, 0x55, 0x34, 0xad, 0x40, 0x10];

    fn fixtures() -> [([u8; 8], HeaderRepr); 3] {
        [
            (
                RTS,
                HeaderRepr {
                    dst: addr(47, 11, 0),
                    src: addr(3, 2, 1),
                    ty: CellType::Rts,
                    len_words: 2,
                    vc: 30,
                    hops: 6,
                    trace: false,
                },
            ),
            (
                DATA,
                HeaderRepr {
                    dst: addr(0, 0, 1),
                    src: addr(63, 15, 63),
                    ty: CellType::Data,
                    len_words: 20,
                    vc: 31,
                    hops: 0,
                    trace: true,
                },
            ),
            (
                REQ,
                HeaderRepr {
                    dst: addr(21, 10, 42),
                    src: addr(42, 5, 21),
                    ty: CellType::RmaReq,
                    len_words: 6,
                    vc: 21,
                    hops: 42,
                    trace: false,
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
        let h = Header::new_checked(&REQ[..]).expect("8 bytes");
        assert_eq!(
            (h.dst().pod(), h.dst().tin(), h.dst().endpoint()),
            (21, 10, 42)
        );
        assert_eq!(
            (h.src().pod(), h.src().tin(), h.src().endpoint()),
            (42, 5, 21)
        );
        assert_eq!((h.len_words(), h.cell_len(), h.type_bits()), (6, 48, 4));
        assert_eq!(
            (h.vc(), h.hops(), h.trace(), h.crc()),
            (21, 42, false, 0x10)
        );
        assert!(h.verify_crc());
    }

    /// Bytes of a header whose CRC is right but whose fields break a rule.
    fn raw(edit: impl FnOnce(&mut Header<&mut [u8]>)) -> [u8; HEADER_LEN] {
        let mut bytes = RTS;
        let mut header = Header::new_unchecked(&mut bytes[..]);
        edit(&mut header);
        header.fill_crc();
        bytes
    }

    #[test]
    fn rule_breakers_are_malformed() {
        type Edit = fn(&mut Header<&mut [u8]>);
        let cases: [(Edit, &str); 5] = [
            (|h| h.set_reserved(1), "reserved bits set"),
            (|h| h.set_type_bits(6), "unknown cell type"),
            (|h| h.set_type_bits(7), "unknown cell type"),
            (|h| h.set_len_words(3), "length does not suit the cell type"),
            (|h| h.set_src(h.dst()), "src equals dst"),
        ];
        for (edit, why) in cases {
            assert_eq!(
                HeaderRepr::from_bytes(&raw(edit)),
                Err(Error::Malformed(why))
            );
        }
        // Data cells take any length from 2 to 20 words, and nothing outside it.
        for len in 0..32u8 {
            let bytes = raw(|h| {
                h.set_type_bits(CellType::Data as u8);
                h.set_len_words(len);
            });
            assert_eq!(
                HeaderRepr::from_bytes(&bytes).is_ok(),
                (2..=20).contains(&len)
            );
        }
    }

    #[test]
    fn crc_is_checked_before_semantics() {
        let mut bytes = raw(|h| h.set_reserved(3));
        bytes[7] ^= 1;
        assert!(matches!(
            HeaderRepr::from_bytes(&bytes),
            Err(Error::Crc { .. })
        ));
    }

    #[test]
    fn out_of_range_fields_are_rejected_on_emit_without_writing() {
        let (_, rts) = fixtures()[0];
        let data = HeaderRepr {
            ty: CellType::Data,
            ..rts
        };
        let cases = [
            (HeaderRepr { vc: 32, ..rts }, "vc", 32, 31),
            (HeaderRepr { hops: 64, ..rts }, "hops", 64, 63),
            (
                HeaderRepr {
                    len_words: 32,
                    ..data
                },
                "len",
                32,
                31,
            ),
        ];
        for (repr, field, value, max) in cases {
            let mut bytes = [0x5a; HEADER_LEN];
            let result = repr.emit(&mut Header::new_unchecked(&mut bytes[..]));
            assert_eq!(result, Err(Error::FieldRange { field, value, max }));
            assert_eq!(
                bytes, [0x5a; HEADER_LEN],
                "{field}: emit wrote before failing"
            );
        }
        let short_req = HeaderRepr {
            ty: CellType::RmaReq,
            ..rts
        };
        assert_eq!(
            short_req.to_bytes(),
            Err(Error::Malformed("length does not suit the cell type"))
        );
    }
}
