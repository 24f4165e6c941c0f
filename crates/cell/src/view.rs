//! The part every zero-copy view over a [`crate::word::Word`] shares, written once: Shoal's
//! [`crate::Header`] and [`crate::Cell`] and Aquila's GNet `Header` and `Cell` are each one
//! invocation plus their own field accessors.
//!
//! Macros rather than a generic type or a trait: the views' methods must stay inherent (callers
//! write `Header::new_checked(..)` and `h.verify_crc()` without importing a trait), and Rust
//! lets a crate give inherent methods only to its own types, so Aquila could not name its
//! fields on a generic view defined here.

/// Defines `$Header<T: AsRef<[u8]>>`, a read/write view of the 8-byte header word at the start
/// of a buffer, with its constructors, the CRC and raw field access (`get` and `set`, private,
/// for the accessors the codec writes beside it).
#[macro_export]
macro_rules! header_view {
    ($(#[$attr:meta])* pub struct $Header:ident;) => {
        $(#[$attr])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $Header<T: AsRef<[u8]>> {
            word: $crate::word::Word<T>,
        }

        impl<T: AsRef<[u8]>> $Header<T> {
            /// Wraps `buffer` without checking its length (see the module docs for what that
            /// risks).
            pub const fn new_unchecked(buffer: T) -> Self {
                $Header {
                    word: $crate::word::Word::new(buffer),
                }
            }

            /// Wraps `buffer` after checking it holds a whole header.
            pub fn new_checked(buffer: T) -> Result<Self, $crate::Error> {
                let header = Self::new_unchecked(buffer);
                header.check_len()?;
                Ok(header)
            }

            /// `Err(Truncated)` if the buffer is shorter than a header (8 bytes).
            pub fn check_len(&self) -> Result<(), $crate::Error> {
                self.word.check_len()
            }

            pub fn into_inner(self) -> T {
                self.word.into_inner()
            }

            fn get(&self, bits: $crate::word::Bits) -> u64 {
                self.word.get(bits)
            }

            /// The CRC as stored in byte 7.
            pub fn crc(&self) -> u8 {
                self.word.crc()
            }

            /// The CRC that bytes 0..=6 should carry.
            pub fn computed_crc(&self) -> u8 {
                self.word.computed_crc()
            }

            pub fn verify_crc(&self) -> bool {
                self.word.verify_crc()
            }

            /// `Err(Crc)` unless the CRC is right: the first check of `HeaderRepr::parse`.
            pub(crate) fn check_crc(&self) -> Result<(), $crate::Error> {
                self.word.check_crc()
            }
        }

        impl<T: AsRef<[u8]> + AsMut<[u8]>> $Header<T> {
            fn set(&mut self, bits: $crate::word::Bits, value: u64) {
                self.word.set(bits, value);
            }

            /// Stores an arbitrary CRC byte (fault injection, tests); `fill_crc` is the norm.
            pub fn set_crc(&mut self, value: u8) {
                self.set($crate::word::CRC, value.into());
            }

            /// Computes the CRC over bytes 0..=6 and stores it in byte 7.
            pub fn fill_crc(&mut self) {
                self.word.fill_crc();
            }
        }
    };
}

/// Defines `$Cell<T: AsRef<[u8]>>`, a view of one whole cell: a `$Header` (from
/// [`header_view!`]) and the payload after it, up to the length `$needs` computes from the
/// header `$h` (header included). Payload slices stop at the buffer's end, so a setter that
/// raises the declared length after the check cannot make them panic.
#[macro_export]
macro_rules! cell_view {
    (
        $(#[$attr:meta])* pub struct $Cell:ident($Header:ident);
        needs |$h:ident| $needs:expr;
    ) => {
        $(#[$attr])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $Cell<T: AsRef<[u8]>> {
            buffer: T,
        }

        impl<T: AsRef<[u8]>> $Cell<T> {
            /// Wraps `buffer` without checking its length (see the module docs for what that
            /// risks).
            pub const fn new_unchecked(buffer: T) -> Self {
                $Cell { buffer }
            }

            /// Wraps `buffer` after checking it holds a header and the length it declares.
            pub fn new_checked(buffer: T) -> Result<Self, $crate::Error> {
                let cell = Self::new_unchecked(buffer);
                cell.check_len()?;
                Ok(cell)
            }

            /// `Err(Truncated)` if the buffer is shorter than a header, or than the length
            /// the header declares.
            pub fn check_len(&self) -> Result<(), $crate::Error> {
                let got = self.buffer.as_ref().len();
                $crate::word::Word::new(self.buffer.as_ref()).check_len()?;
                let need = self.needs();
                if got < need {
                    return Err($crate::Error::Truncated { need, got });
                }
                Ok(())
            }

            pub fn into_inner(self) -> T {
                self.buffer
            }

            pub fn header(&self) -> $Header<&[u8]> {
                $Header::new_unchecked(self.buffer.as_ref())
            }

            /// The payload: the bytes after the header up to the declared length, clipped at
            /// the buffer's end; empty if the declared length is below one header.
            pub fn payload(&self) -> &[u8] {
                let range = self.payload_range();
                &self.buffer.as_ref()[range]
            }

            /// Bytes the header says the cell needs, header included.
            fn needs(&self) -> usize {
                let $h = self.header();
                $needs
            }

            fn payload_range(&self) -> core::ops::Range<usize> {
                let end = self.needs().min(self.buffer.as_ref().len());
                $crate::word::WORD_LEN.min(end)..end
            }
        }

        impl<T: AsRef<[u8]> + AsMut<[u8]>> $Cell<T> {
            pub fn header_mut(&mut self) -> $Header<&mut [u8]> {
                $Header::new_unchecked(self.buffer.as_mut())
            }

            /// The payload, writable; clipped like `payload`.
            pub fn payload_mut(&mut self) -> &mut [u8] {
                let range = self.payload_range();
                &mut self.buffer.as_mut()[range]
            }
        }
    };
}
