//! [`HeaderRepr`]: a validated, owned header, parsed from or emitted into a [`Header`] view.

use serde::Serialize;

use crate::header::{Header, field};
use crate::word::check_widths;
use crate::{Error, HEADER_LEN, MAX_FEEDBACK};

/// What a cell carries, derived from its (`len`, `sop`, `eop`) fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CellKind {
    /// No payload (`len` 0, `sop` 0, `eop` 0). Every slot carries a cell, so idle cells keep the
    /// feedback, lcd and failure-detection signals flowing when there is no traffic.
    Idle,
    /// No payload, `sop` 1, `eop` 0: the sender can no longer reach node `dst` (§3.5, failure
    /// reaction ii), so the receiver stops detouring cells for `dst` through it. The notice is
    /// meant for the node at the other end of the slot, not for `dst`.
    Unreachable,
    /// `len` (>= 1) payload bytes of a packet; `sop`/`eop` mark the packet's first/last cell.
    Data { sop: bool, eop: bool, len: u8 },
}

impl CellKind {
    /// Payload bytes carried: 0 for the control kinds.
    pub const fn payload_len(self) -> u8 {
        match self {
            CellKind::Idle | CellKind::Unreachable => 0,
            CellKind::Data { len, .. } => len,
        }
    }
}

/// The semantic content of a cell header, every field range-checked.
///
/// `seq` is meaningful for data cells only; emitters put 0 there for the control kinds, and
/// parsing keeps whatever value arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct HeaderRepr {
    pub kind: CellKind,
    pub dst: u16,
    pub src: u16,
    pub seq: u16,
    pub feedback: u16,
    pub lcd: bool,
    pub class: u8,
}

impl HeaderRepr {
    /// Validates a header: the CRC first (a corrupted header says nothing reliable), then the
    /// kind rules and `src != dst`. To read feedback and lcd from a corrupted cell, use the
    /// [`Header`] getters directly.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(header: &Header<&T>) -> Result<Self, Error> {
        header.check_crc()?;
        let kind = match (header.payload_len(), header.sop(), header.eop()) {
            (0, _, true) => return Err(Error::Malformed("end-of-packet set on a cell with len 0")),
            (0, false, false) => CellKind::Idle,
            (0, true, false) => CellKind::Unreachable,
            (len, sop, eop) => CellKind::Data { sop, eop, len },
        };
        let repr = HeaderRepr {
            kind,
            dst: header.dst(),
            src: header.src(),
            seq: header.seq(),
            feedback: header.feedback(),
            lcd: header.lcd(),
            class: header.class(),
        };
        repr.check_semantics()?;
        Ok(repr)
    }

    /// Writes every field and the CRC. Nothing is written if a field is out of range or the
    /// header would not parse back. Does not check `len` against a cell's payload area: call
    /// [`crate::Cell::check_len`] afterwards when emitting into a whole cell.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(
        &self,
        header: &mut Header<&mut T>,
    ) -> Result<(), Error> {
        self.check()?;
        let (sop, eop) = match self.kind {
            CellKind::Idle => (false, false),
            CellKind::Unreachable => (true, false),
            CellKind::Data { sop, eop, .. } => (sop, eop),
        };
        header.set_dst(self.dst);
        header.set_src(self.src);
        header.set_seq(self.seq);
        header.set_feedback(self.feedback);
        header.set_sop(sop);
        header.set_eop(eop);
        header.set_lcd(self.lcd);
        header.set_class(self.class);
        header.set_payload_len(self.kind.payload_len());
        header.fill_crc();
        Ok(())
    }

    /// The 8 header bytes, CRC included.
    pub fn to_bytes(&self) -> Result<[u8; HEADER_LEN], Error> {
        let mut bytes = [0u8; HEADER_LEN];
        self.emit(&mut Header::new_unchecked(&mut bytes[..]))?;
        Ok(bytes)
    }

    /// Parses the first 8 bytes of `bytes`; anything after them (a cell's payload) is ignored.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Self::parse(&Header::new_checked(bytes)?)
    }

    /// Sets `feedback` from a queue length in cells, clamped to [`MAX_FEEDBACK`]. A saturated
    /// value still tells the sender to back off as hard as the field can say.
    #[must_use]
    pub fn with_feedback_saturating(mut self, queue_cells: usize) -> Self {
        self.feedback = u16::try_from(queue_cells).map_or(MAX_FEEDBACK, |q| q.min(MAX_FEEDBACK));
        self
    }

    /// Every field within its width, then the rules `parse` enforces.
    fn check(&self) -> Result<(), Error> {
        check_widths(&[
            ("dst", u64::from(self.dst), field::DST),
            ("src", u64::from(self.src), field::SRC),
            ("seq", u64::from(self.seq), field::SEQ),
            ("feedback", u64::from(self.feedback), field::FEEDBACK),
            ("class", u64::from(self.class), field::CLASS),
            ("len", u64::from(self.kind.payload_len()), field::LEN),
        ])?;
        if let CellKind::Data { len: 0, .. } = self.kind {
            return Err(Error::Malformed("data cell with len 0"));
        }
        self.check_semantics()
    }

    fn check_semantics(&self) -> Result<(), Error> {
        if self.src == self.dst {
            return Err(Error::Malformed("src equals dst"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CLASSES, MAX_NODES, SEQ_MODULUS};

    const DATA: HeaderRepr = HeaderRepr {
        kind: CellKind::Data {
            sop: true,
            eop: false,
            len: 56,
        },
        dst: 17,
        src: 2,
        seq: 1234,
        feedback: 5,
        lcd: false,
        class: 1,
    };

    /// Bytes of a header whose CRC is right but whose fields break a kind rule.
    fn raw(edit: impl FnOnce(&mut Header<&mut [u8]>)) -> [u8; HEADER_LEN] {
        let mut bytes = DATA.to_bytes().expect("DATA is valid");
        let mut header = Header::new_unchecked(&mut bytes[..]);
        edit(&mut header);
        header.fill_crc();
        bytes
    }

    #[test]
    fn eop_without_payload_is_malformed() {
        for sop in [false, true] {
            let bytes = raw(|h| {
                h.set_payload_len(0);
                h.set_sop(sop);
                h.set_eop(true);
            });
            assert_eq!(
                HeaderRepr::from_bytes(&bytes),
                Err(Error::Malformed("end-of-packet set on a cell with len 0"))
            );
        }
    }

    #[test]
    fn src_equal_to_dst_is_malformed_on_parse_and_emit() {
        let bytes = raw(|h| h.set_src(17));
        assert_eq!(
            HeaderRepr::from_bytes(&bytes),
            Err(Error::Malformed("src equals dst"))
        );
        let repr = HeaderRepr { src: 17, ..DATA };
        assert_eq!(repr.to_bytes(), Err(Error::Malformed("src equals dst")));
    }

    #[test]
    fn control_kinds_come_from_len_zero() {
        let idle = raw(|h| {
            h.set_payload_len(0);
            h.set_sop(false);
        });
        assert_eq!(
            HeaderRepr::from_bytes(&idle).map(|r| r.kind),
            Ok(CellKind::Idle)
        );
        let unreachable = raw(|h| h.set_payload_len(0));
        assert_eq!(
            HeaderRepr::from_bytes(&unreachable).map(|r| r.kind),
            Ok(CellKind::Unreachable)
        );
    }

    #[test]
    fn crc_is_checked_before_semantics() {
        let mut bytes = raw(|h| h.set_src(17));
        bytes[7] ^= 1;
        assert!(matches!(
            HeaderRepr::from_bytes(&bytes),
            Err(Error::Crc { .. })
        ));
    }

    #[test]
    fn out_of_range_fields_are_rejected_on_emit_without_writing() {
        let cases = [
            (
                HeaderRepr {
                    dst: MAX_NODES as u16,
                    ..DATA
                },
                "dst",
                1024,
                1023,
            ),
            (
                HeaderRepr {
                    src: MAX_NODES as u16,
                    ..DATA
                },
                "src",
                1024,
                1023,
            ),
            (
                HeaderRepr {
                    seq: SEQ_MODULUS,
                    ..DATA
                },
                "seq",
                32768,
                32767,
            ),
            (
                HeaderRepr {
                    feedback: MAX_FEEDBACK + 1,
                    ..DATA
                },
                "feedback",
                1024,
                1023,
            ),
            (
                HeaderRepr {
                    class: CLASSES as u8,
                    ..DATA
                },
                "class",
                4,
                3,
            ),
            (
                HeaderRepr {
                    kind: CellKind::Data {
                        sop: false,
                        eop: true,
                        len: 64,
                    },
                    ..DATA
                },
                "len",
                64,
                63,
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
    }

    #[test]
    fn data_cell_without_payload_cannot_be_emitted() {
        let repr = HeaderRepr {
            kind: CellKind::Data {
                sop: true,
                eop: true,
                len: 0,
            },
            ..DATA
        };
        assert_eq!(
            repr.to_bytes(),
            Err(Error::Malformed("data cell with len 0"))
        );
    }

    #[test]
    fn from_bytes_needs_eight_bytes_and_ignores_the_rest() {
        let mut cell = [0u8; 64];
        cell[..HEADER_LEN].copy_from_slice(&DATA.to_bytes().expect("DATA is valid"));
        assert_eq!(HeaderRepr::from_bytes(&cell), Ok(DATA));
        assert_eq!(
            HeaderRepr::from_bytes(&cell[..7]),
            Err(Error::Truncated {
                need: HEADER_LEN,
                got: 7
            })
        );
    }

    #[test]
    fn feedback_saturates_at_the_field_maximum() {
        for (queue, want) in [
            (0, 0),
            (11, 11),
            (1023, 1023),
            (1024, 1023),
            (usize::MAX, 1023),
        ] {
            assert_eq!(
                DATA.with_feedback_saturating(queue).feedback,
                want,
                "queue {queue}"
            );
        }
        assert!(DATA.with_feedback_saturating(usize::MAX).to_bytes().is_ok());
    }
}
