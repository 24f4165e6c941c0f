//! Properties of the public API over generated headers and arbitrary bytes.

use proptest::prelude::*;
use shoal_cell::{
    CLASSES, Cell, CellKind, Error, HEADER_LEN, Header, HeaderRepr, MAX_FEEDBACK, MAX_NODES,
    MAX_PAYLOAD_LEN, SEQ_MODULUS, seq_add, seq_distance,
};

fn kind() -> impl Strategy<Value = CellKind> {
    prop_oneof![
        Just(CellKind::Idle),
        Just(CellKind::Unreachable),
        (any::<bool>(), any::<bool>(), 1..=MAX_PAYLOAD_LEN)
            .prop_map(|(sop, eop, len)| CellKind::Data { sop, eop, len }),
    ]
}

/// Any valid header: every field over its whole range, `src != dst`.
fn repr() -> impl Strategy<Value = HeaderRepr> {
    let nodes = MAX_NODES as u16;
    (
        kind(),
        0..nodes,
        1..nodes,
        0..SEQ_MODULUS,
        0..=MAX_FEEDBACK,
        any::<bool>(),
        0..CLASSES as u8,
    )
        .prop_map(
            move |(kind, dst, offset, seq, feedback, lcd, class)| HeaderRepr {
                kind,
                dst,
                // A nonzero offset around the id space reaches every node but dst.
                src: (dst + offset) % nodes,
                seq,
                feedback,
                lcd,
                class,
            },
        )
}

proptest! {
    #[test]
    fn emit_then_parse_round_trips(repr in repr()) {
        let bytes = repr.to_bytes()?;
        prop_assert_eq!(HeaderRepr::from_bytes(&bytes)?, repr);

        let h = Header::new_checked(&bytes[..])?;
        prop_assert!(h.verify_crc());
        prop_assert_eq!((h.dst(), h.src(), h.seq()), (repr.dst, repr.src, repr.seq));
        prop_assert_eq!((h.feedback(), h.lcd(), h.class()), (repr.feedback, repr.lcd, repr.class));
        prop_assert_eq!(h.payload_len(), repr.kind.payload_len());
    }

    #[test]
    fn every_single_bit_flip_is_detected(repr in repr()) {
        let word = u64::from_be_bytes(repr.to_bytes()?);
        for bit in 0..64 {
            let flipped = (word ^ (1 << bit)).to_be_bytes();
            prop_assert!(!Header::new_unchecked(&flipped[..]).verify_crc(), "bit {}", bit);
            let parsed = HeaderRepr::from_bytes(&flipped);
            prop_assert!(matches!(parsed, Err(Error::Crc { .. })), "bit {}: {:?}", bit, parsed);
        }
    }

    /// A data cell written into a buffer of its own cell size reads back its payload.
    #[test]
    fn data_cells_carry_their_payload(
        repr in repr(),
        payload in proptest::collection::vec(any::<u8>(), 1..=MAX_PAYLOAD_LEN as usize),
        spare in 0usize..8,
    ) {
        let len = payload.len() as u8;
        let repr = HeaderRepr { kind: CellKind::Data { sop: true, eop: true, len }, ..repr };
        let mut buf = vec![0u8; HEADER_LEN + payload.len() + spare];
        let mut cell = Cell::new_unchecked(&mut buf[..]);
        repr.emit(&mut cell.header_mut())?;
        cell.payload_mut().copy_from_slice(&payload);

        let cell = Cell::new_checked(&buf[..])?;
        prop_assert_eq!(cell.payload(), &payload[..]);
        prop_assert_eq!(HeaderRepr::parse(&cell.header())?, repr);
        prop_assert_eq!(Cell::new_checked(&buf[..HEADER_LEN + payload.len() - 1]).err(),
            Some(Error::Truncated { need: HEADER_LEN + payload.len(), got: buf.len() - spare - 1 }));
    }

    /// Garbage of any length never panics, and whatever parses is the canonical encoding of
    /// its own repr (no two byte strings mean the same header).
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
        if let Ok(h) = Header::new_checked(&bytes[..]) {
            let _ = (h.dst(), h.src(), h.seq(), h.feedback(), h.sop(), h.eop(), h.lcd());
            let _ = (h.class(), h.payload_len(), h.crc(), h.verify_crc());
        }
        if let Ok(cell) = Cell::new_checked(&bytes[..]) {
            prop_assert_eq!(cell.payload().len(), usize::from(cell.header().payload_len()));
        }
        if let Ok(repr) = HeaderRepr::from_bytes(&bytes) {
            prop_assert_eq!(&repr.to_bytes()?[..], &bytes[..HEADER_LEN]);
        }
    }

    /// Headers with a correct CRC but random fields: parse accepts exactly the valid ones.
    #[test]
    fn parse_enforces_the_kind_rules(word in any::<u64>()) {
        let mut bytes = word.to_be_bytes();
        let mut h = Header::new_unchecked(&mut bytes[..]);
        h.fill_crc();
        let breaks_a_rule = (h.payload_len() == 0 && h.eop()) || h.src() == h.dst();
        match HeaderRepr::from_bytes(&bytes) {
            Ok(repr) => prop_assert!(!breaks_a_rule, "accepted {:?}", repr),
            Err(Error::Malformed(_)) => prop_assert!(breaks_a_rule),
            Err(e) => prop_assert!(false, "unexpected {:?}", e),
        }
    }

    #[test]
    fn seq_distance_inverts_seq_add(from in 0..SEQ_MODULUS, delta in -16384i16..16384) {
        let to = seq_add(from, delta as u16);
        prop_assert!(to < SEQ_MODULUS);
        prop_assert_eq!(seq_distance(from, to), delta);
        prop_assert_eq!(seq_distance(to, from), if delta == -16384 { -16384 } else { -delta });
    }
}
