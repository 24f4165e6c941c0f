//! Frames to and from the 8-byte wire header of `shoal-cell`.
//!
//! The simulator keeps frames as records and only goes through bytes for cells it corrupts (so a
//! flipped bit reaches the node exactly as the hardware would see it); the live emulator goes
//! through bytes for every cell.

use crate::frame::{CellRec, Frame, Kind, Rx};
use shoal_base::NodeId;
use shoal_cell::{CellKind, Error, Header, HeaderRepr};

/// The wire header of a frame. Fails only for ids or lengths the 8-byte header cannot carry
/// (racks above 1,024 nodes, cells above 71 bytes), which configuration checks rule out.
pub fn encode<P>(frame: &Frame<P>) -> Result<[u8; 8], Error> {
    let c = &frame.cell;
    let kind = match c.kind {
        Kind::Idle => CellKind::Idle,
        Kind::Unreachable => CellKind::Unreachable,
        Kind::Data { sop, eop } => CellKind::Data {
            sop,
            eop,
            len: u8::try_from(c.len).map_err(|_| Error::FieldRange {
                field: "len",
                value: c.len as u64,
                max: 63,
            })?,
        },
    };
    HeaderRepr {
        kind,
        dst: c.dst.0,
        src: c.src.0,
        seq: c.seq,
        feedback: frame.feedback,
        lcd: frame.lcd,
        class: c.class,
    }
    .to_bytes()
}

/// What a node receives for `bytes`: the frame if the header is intact and well formed,
/// otherwise `Rx::Corrupt` with whatever the feedback field now says (App. D). A header that
/// passes the CRC but breaks the format is treated as corrupt too: it cannot be trusted.
pub fn decode<P>(bytes: &[u8], payload: P) -> Rx<P> {
    let Ok(header) = Header::new_checked(bytes) else {
        return Rx::Corrupt { feedback: 0 };
    };
    match HeaderRepr::parse(&header) {
        Ok(h) => {
            let (kind, len) = match h.kind {
                CellKind::Idle => (Kind::Idle, 0),
                CellKind::Unreachable => (Kind::Unreachable, 0),
                CellKind::Data { sop, eop, len } => (Kind::Data { sop, eop }, len as u16),
            };
            Rx::Cell(Frame {
                cell: CellRec {
                    dst: NodeId(h.dst),
                    src: NodeId(h.src),
                    seq: h.seq,
                    len,
                    class: h.class,
                    kind,
                },
                feedback: h.feedback,
                lcd: h.lcd,
                payload,
            })
        }
        Err(_) => Rx::Corrupt {
            feedback: header.feedback(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data_frame() -> Frame<()> {
        Frame {
            cell: CellRec {
                dst: NodeId(511),
                src: NodeId(3),
                seq: 32_000,
                len: 56,
                class: 1,
                kind: Kind::Data {
                    sop: true,
                    eop: false,
                },
            },
            feedback: 11,
            lcd: true,
            payload: (),
        }
    }

    #[test]
    fn frames_survive_the_wire() {
        let f = data_frame();
        let bytes = encode(&f).unwrap();
        assert_eq!(decode(&bytes, ()), Rx::Cell(f));
    }

    #[test]
    fn a_flipped_bit_is_a_corrupt_cell_that_still_shows_its_feedback() {
        let bytes = encode(&data_frame()).unwrap();
        for bit in 0..64 {
            let mut b = bytes;
            b[bit / 8] ^= 1 << (bit % 8);
            match decode(&b, ()) {
                Rx::Corrupt { .. } => {}
                other => panic!("bit {bit}: {other:?}"),
            }
        }
        // A bit outside the feedback field leaves the feedback readable.
        let mut b = bytes;
        b[7] ^= 1;
        assert_eq!(decode(&b, ()), Rx::Corrupt { feedback: 11 });
    }
}
