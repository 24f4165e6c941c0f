//! An 8-byte header read as one big-endian `u64` of bit fields whose low byte is a
//! CRC-8/AUTOSAR over the seven bytes before it. Shoal's cell header ([`crate::Header`]) and
//! Aquila's GNet routing header (`shoal-aquila`'s `wire`) share this layout and name their own
//! fields on top of [`Word`]; [`crate::header_view!`] and [`crate::cell_view!`] write the views'
//! common part, [`check_widths`] the first check of their `emit`.

use core::ops::Range;

use crate::Error;

/// Bytes in the word.
pub const WORD_LEN: usize = 8;

/// A run of `width` bits whose lowest bit is bit `shift` of the word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bits {
    pub shift: u32,
    pub width: u32,
}

impl Bits {
    pub const fn new(shift: u32, width: u32) -> Self {
        Bits { shift, width }
    }

    /// Largest value the field holds; also its mask before shifting.
    pub const fn max(self) -> u64 {
        (1 << self.width) - 1
    }

    pub const fn mask(self) -> u64 {
        self.max() << self.shift
    }

    pub const fn get(self, word: u64) -> u64 {
        (word >> self.shift) & self.max()
    }

    /// Replaces the field; bits of `value` above the width are dropped.
    pub const fn set(self, word: u64, value: u64) -> u64 {
        (word & !self.mask()) | ((value & self.max()) << self.shift)
    }
}

/// The CRC: the word's low byte.
pub const CRC: Bits = Bits::new(0, 8);

/// Whether `fields` tile the word exactly, no overlap and no unassigned bit: a header's layout
/// asserts it at compile time.
pub const fn tiles(fields: &[Bits]) -> bool {
    let mut covered = 0u64;
    let mut i = 0;
    while i < fields.len() {
        if covered & fields[i].mask() != 0 {
            return false;
        }
        covered |= fields[i].mask();
        i += 1;
    }
    covered == u64::MAX
}

/// CRC-8/AUTOSAR (poly 0x2F, init 0xFF, xorout 0xFF), table built at compile time.
pub(crate) const CRC8: crc::Crc<u8> = crc::Crc::<u8>::new(&crc::CRC_8_AUTOSAR);

/// Bytes the CRC protects: all but the CRC byte itself.
const CRC_COVERED: Range<usize> = 0..WORD_LEN - 1;

/// `Err(FieldRange)` for the first `(name, value, bits)` whose value does not fit its bits: what
/// a header's `emit` checks before it writes anything.
pub fn check_widths(fields: &[(&'static str, u64, Bits)]) -> Result<(), Error> {
    for &(field, value, bits) in fields {
        if value > bits.max() {
            return Err(Error::FieldRange {
                field,
                value,
                max: bits.max(),
            });
        }
    }
    Ok(())
}

/// A read/write view of the word at the start of `buffer`; longer buffers are fine (a whole
/// cell), only the first [`WORD_LEN`] bytes are used. Accessors panic on a shorter buffer:
/// [`Word::check_len`] is the check the headers' `new_checked` make first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Word<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Word<T> {
    pub const fn new(buffer: T) -> Self {
        Word { buffer }
    }

    /// `Err(Truncated)` if the buffer is shorter than the word.
    pub fn check_len(&self) -> Result<(), Error> {
        let got = self.buffer.as_ref().len();
        if got < WORD_LEN {
            return Err(Error::Truncated {
                need: WORD_LEN,
                got,
            });
        }
        Ok(())
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn word(&self) -> u64 {
        let mut bytes = [0u8; WORD_LEN];
        bytes.copy_from_slice(&self.buffer.as_ref()[..WORD_LEN]);
        u64::from_be_bytes(bytes)
    }

    pub fn get(&self, bits: Bits) -> u64 {
        bits.get(self.word())
    }

    /// The CRC as stored in byte 7.
    pub fn crc(&self) -> u8 {
        self.get(CRC) as u8
    }

    /// The CRC that bytes 0..=6 should carry.
    pub fn computed_crc(&self) -> u8 {
        CRC8.checksum(&self.buffer.as_ref()[CRC_COVERED])
    }

    pub fn verify_crc(&self) -> bool {
        self.crc() == self.computed_crc()
    }

    /// `Err(Crc)` with both values unless the stored CRC is the computed one.
    pub fn check_crc(&self) -> Result<(), Error> {
        let (stored, computed) = (self.crc(), self.computed_crc());
        if stored != computed {
            return Err(Error::Crc { stored, computed });
        }
        Ok(())
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Word<T> {
    /// Writes one field, like a hardware register: bits above its width are dropped.
    pub fn set(&mut self, bits: Bits, value: u64) {
        let word = bits.set(self.word(), value);
        self.buffer.as_mut()[..WORD_LEN].copy_from_slice(&word.to_be_bytes());
    }

    /// Computes the CRC over bytes 0..=6 and stores it in byte 7.
    pub fn fill_crc(&mut self) {
        let crc = self.computed_crc();
        self.set(CRC, crc.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiling_finds_overlaps_and_gaps() {
        assert!(tiles(&[Bits::new(8, 56), CRC]));
        assert!(!tiles(&[Bits::new(7, 57), CRC]), "overlap");
        assert!(!tiles(&[Bits::new(9, 55), CRC]), "gap");
    }

    #[test]
    fn crc_is_the_autosar_catalogue_entry() {
        assert_eq!(CRC8.checksum(b"123456789"), 0xdf);
    }

    /// A word whose CRC is right, from its seven data bytes.
    fn sealed(data: u64) -> [u8; WORD_LEN] {
        let mut bytes = (data << 8).to_be_bytes();
        Word::new(&mut bytes[..]).fill_crc();
        bytes
    }

    #[test]
    fn all_zero_and_all_one_words_fail_the_crc() {
        for byte in [0x00, 0xff] {
            let bytes = [byte; WORD_LEN];
            assert!(!Word::new(&bytes[..]).verify_crc(), "{byte:#04x} passed");
        }
    }

    /// Hamming distance 4 over the 56 covered bits: every double and triple bit flip of a good
    /// word is caught, whichever header's fields the word carries.
    #[test]
    fn every_double_and_triple_bit_flip_is_caught() {
        let data = [0, (1 << 56) - 1, 0x55_5555_5555_5555, 0x01_2345_6789_abcd];
        for word in data.map(|d| u64::from_be_bytes(sealed(d))) {
            assert!(Word::new(&word.to_be_bytes()[..]).verify_crc());
            for a in 0..64 {
                for b in a + 1..64 {
                    let two = word ^ (1 << a) ^ (1 << b);
                    let bytes = two.to_be_bytes();
                    assert!(
                        !Word::new(&bytes[..]).verify_crc(),
                        "{word:#x}: bits {a},{b}"
                    );
                    for c in b + 1..64 {
                        let bytes = (two ^ (1 << c)).to_be_bytes();
                        let caught = !Word::new(&bytes[..]).verify_crc();
                        assert!(caught, "{word:#x}: bits {a},{b},{c}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_crc_error_names_both_values() {
        let mut bytes = sealed(0x01_2345_6789_abcd);
        assert_eq!(Word::new(&bytes[..]).check_crc(), Ok(()));
        let good = bytes[7];
        bytes[7] = good ^ 0x5a;
        let want = Error::Crc {
            stored: good ^ 0x5a,
            computed: good,
        };
        assert_eq!(Word::new(&bytes[..]).check_crc(), Err(want));
    }

    #[test]
    fn a_short_buffer_says_its_length() {
        let short = Word::new(&[0u8; 7][..]).check_len();
        assert_eq!(short, Err(Error::Truncated { need: 8, got: 7 }));
        assert_eq!(Word::new(&[0u8; 9][..]).check_len(), Ok(()));
    }

    #[test]
    fn widths_are_checked_in_order() {
        let (narrow, wide) = (Bits::new(8, 2), Bits::new(10, 54));
        assert_eq!(
            check_widths(&[("a", 3, narrow), ("b", 1 << 53, wide)]),
            Ok(())
        );
        let too_big = Err(Error::FieldRange {
            field: "a",
            value: 4,
            max: 3,
        });
        assert_eq!(
            check_widths(&[("a", 4, narrow), ("b", 1 << 54, wide)]),
            too_big
        );
    }
}
