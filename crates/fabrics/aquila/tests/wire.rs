//! Properties of the GNet cell codec over generated headers and arbitrary bytes.

use proptest::prelude::*;
use shoal_aquila::wire::{
    Cell, CellType, Error, GnetAddr, HEADER_LEN, Header, HeaderRepr, MAX_CELL_LEN, MAX_HOPS, VCS,
    WORD,
};

fn ty() -> impl Strategy<Value = CellType> {
    prop::sample::select(CellType::ALL.to_vec())
}

/// Any valid header: every field over its whole range, a length its type allows, src != dst.
fn repr() -> impl Strategy<Value = HeaderRepr> {
    (
        ty(),
        any::<u16>(),
        1..=u16::MAX,
        0..VCS as u8,
        0..=MAX_HOPS,
        any::<bool>(),
    )
        .prop_flat_map(|(ty, dst, offset, vc, hops, trace)| {
            ty.len_words().prop_map(move |len_words| HeaderRepr {
                dst: GnetAddr(dst),
                // A nonzero offset around the address space reaches every address but dst.
                src: GnetAddr(dst.wrapping_add(offset)),
                ty,
                len_words,
                vc,
                hops,
                trace,
            })
        })
}

proptest! {
    #[test]
    fn emit_then_parse_round_trips(repr in repr()) {
        let bytes = repr.to_bytes()?;
        prop_assert_eq!(HeaderRepr::from_bytes(&bytes)?, repr);

        let h = Header::new_checked(&bytes[..])?;
        prop_assert!(h.verify_crc());
        prop_assert_eq!((h.dst(), h.src(), h.len_words()), (repr.dst, repr.src, repr.len_words));
        prop_assert_eq!((h.vc(), h.hops(), h.trace()), (repr.vc, repr.hops, repr.trace));
        prop_assert_eq!(h.type_bits(), repr.ty as u8);
        prop_assert_eq!(h.reserved(), 0);
    }

    #[test]
    fn every_single_bit_flip_is_detected(repr in repr()) {
        let word = u64::from_be_bytes(repr.to_bytes()?);
        for bit in 0..64 {
            let flipped = (word ^ (1 << bit)).to_be_bytes();
            let parsed = HeaderRepr::from_bytes(&flipped);
            prop_assert!(matches!(parsed, Err(Error::Crc { .. })), "bit {}: {:?}", bit, parsed);
        }
    }

    /// A switch's hop: the count drops by one, the CRC stays right, nothing else changes.
    #[test]
    fn a_hop_changes_only_the_hop_count(repr in repr()) {
        let mut bytes = repr.to_bytes()?;
        let took = Header::new_unchecked(&mut bytes[..]).take_hop();
        prop_assert_eq!(took, repr.hops > 0);
        let want = HeaderRepr { hops: repr.hops.saturating_sub(1), ..repr };
        prop_assert_eq!(HeaderRepr::from_bytes(&bytes)?, want);
    }

    /// A cell written into a buffer of its own length reads back its payload, and one byte
    /// less is a truncated cell.
    #[test]
    fn cells_carry_their_payload(
        repr in repr(),
        fill in any::<u8>(),
        spare in 0usize..16,
    ) {
        let len = repr.cell_len();
        let mut buf = vec![0u8; len + spare];
        let mut cell = Cell::new_unchecked(&mut buf[..]);
        repr.emit(&mut cell.header_mut())?;
        let payload: Vec<u8> = (0..len - HEADER_LEN).map(|i| fill.wrapping_add(i as u8)).collect();
        cell.payload_mut().copy_from_slice(&payload);

        let cell = Cell::new_checked(&buf[..])?;
        prop_assert_eq!(cell.payload(), &payload[..]);
        prop_assert_eq!(HeaderRepr::parse(&cell.header())?, repr);
        prop_assert_eq!(
            Cell::new_checked(&buf[..len - 1]).err(),
            Some(Error::Truncated { need: len, got: len - 1 })
        );
    }

    /// Garbage of any length never panics, and whatever parses is the canonical encoding of
    /// its own repr (no two byte strings mean the same header).
    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..MAX_CELL_LEN + 8)) {
        if let Ok(h) = Header::new_checked(&bytes[..]) {
            let _ = (h.dst(), h.src(), h.len_words(), h.type_bits(), h.vc(), h.hops());
            let _ = (h.trace(), h.reserved(), h.crc(), h.verify_crc());
        }
        if let Ok(cell) = Cell::new_checked(&bytes[..]) {
            let len = cell.header().cell_len();
            prop_assert_eq!(cell.payload().len(), len.saturating_sub(HEADER_LEN));
        }
        if let Ok(repr) = HeaderRepr::from_bytes(&bytes) {
            prop_assert_eq!(&repr.to_bytes()?[..], &bytes[..HEADER_LEN]);
            prop_assert_eq!(repr.cell_len() % WORD, 0);
            prop_assert!((16..=MAX_CELL_LEN).contains(&repr.cell_len()));
        }
    }

    /// Headers with a correct CRC but random fields: parse accepts exactly the valid ones.
    #[test]
    fn parse_enforces_the_rules(word in any::<u64>()) {
        let mut bytes = word.to_be_bytes();
        let mut h = Header::new_unchecked(&mut bytes[..]);
        h.fill_crc();
        let ty = CellType::from_bits(h.type_bits());
        let breaks_a_rule = h.reserved() != 0
            || ty.is_none_or(|t| !t.len_words().contains(&h.len_words()))
            || h.src() == h.dst();
        match HeaderRepr::from_bytes(&bytes) {
            Ok(repr) => prop_assert!(!breaks_a_rule, "accepted {:?}", repr),
            Err(Error::Malformed(_)) => prop_assert!(breaks_a_rule),
            Err(e) => prop_assert!(false, "unexpected {:?}", e),
        }
    }
}
