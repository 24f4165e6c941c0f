//! The bytes behind the cells of one node.
//!
//! The node never sees payload bytes: each cell carries a handle ([`Bytes`]) that the driver
//! resolves when the cell goes on the wire or is delivered (`shoal-node`'s [`Payload`] contract).
//! Handles are `Copy` and the node may keep one for a while (retransmission after App. D's
//! last-cell-dropped, rerouting after a failure), so no handle can say when its bytes may be
//! freed. The arena is therefore a ring addressed by absolute position: bytes live until the ring
//! has wrapped past them, and a handle that outlived its bytes is *detected* (the resolve fails
//! and is counted), never read as someone else's data. With tens of MiB and admission control at
//! the hosts (`tun.rs`), that takes seconds of backlog, far beyond any cell's lifetime in a
//! rack whose queues Eq. 3-5 bound.

use shoal_node::Payload;

/// A run of payload bytes in the node's arena: `len` bytes from absolute position `at`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bytes {
    pub at: u64,
    pub len: u16,
}

impl Payload for Bytes {
    /// The arena position of the message the host submitted.
    type Packet = u64;

    fn fragment(packet: u64, offset: u64, len: u16) -> Bytes {
        Bytes {
            at: packet + offset,
            len,
        }
    }
}

/// A ring of bytes addressed by absolute position.
pub struct Arena {
    buf: Vec<u8>,
    /// Bytes ever appended, padding included: the absolute position of the next byte.
    head: u64,
}

impl Arena {
    pub fn new(capacity: usize) -> Arena {
        assert!(capacity > 0, "an arena needs room");
        Arena {
            buf: vec![0; capacity],
            head: 0,
        }
    }

    /// Copies `bytes` in and returns their position. A run never straddles the end of the ring
    /// (the tail is skipped instead), so every handle resolves to one slice.
    ///
    /// # Panics
    /// If `bytes` is longer than the ring.
    pub fn append(&mut self, bytes: &[u8]) -> u64 {
        let cap = self.buf.len() as u64;
        let len = bytes.len() as u64;
        assert!(len <= cap, "{len} bytes do not fit an arena of {cap}");
        let offset = self.head % cap;
        if offset + len > cap {
            self.head += cap - offset;
        }
        let at = self.head;
        let start = (at % cap) as usize;
        self.buf[start..start + bytes.len()].copy_from_slice(bytes);
        self.head += len;
        at
    }

    /// The bytes of `b`; `None` if the ring has wrapped past them (or they were never written).
    pub fn get(&self, b: Bytes) -> Option<&[u8]> {
        let cap = self.buf.len() as u64;
        let end = b.at.checked_add(b.len as u64)?;
        if end > self.head || self.head - b.at > cap {
            return None;
        }
        let start = (b.at % cap) as usize;
        self.buf.get(start..start + b.len as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whatever the sizes, a handle resolves to exactly the bytes appended under it while
        /// they are younger than the ring, and to nothing once the ring has wrapped past them.
        #[test]
        fn handles_resolve_to_their_bytes_or_to_nothing(
            sizes in proptest::collection::vec(1usize..100, 1..200),
        ) {
            let mut arena = Arena::new(256);
            let mut written: Vec<(u64, Vec<u8>)> = Vec::new();
            for (i, &n) in sizes.iter().enumerate() {
                let bytes: Vec<u8> = (0..n).map(|k| (i * 31 + k) as u8).collect();
                written.push((arena.append(&bytes), bytes));
            }
            let head = arena.head;
            for (at, bytes) in &written {
                let b = Bytes { at: *at, len: bytes.len() as u16 };
                match arena.get(b) {
                    Some(got) => prop_assert_eq!(got, &bytes[..]),
                    None => prop_assert!(head - at > 256),
                }
                // A fragment of a live run is the matching part of it.
                if bytes.len() > 2 && head - at <= 256 {
                    let part = Bytes::fragment(*at, 1, (bytes.len() - 2) as u16);
                    prop_assert_eq!(arena.get(part).unwrap(), &bytes[1..bytes.len() - 1]);
                }
            }
        }
    }

    #[test]
    fn a_handle_past_the_head_resolves_to_nothing() {
        let mut arena = Arena::new(64);
        let at = arena.append(b"abc");
        assert_eq!(arena.get(Bytes { at, len: 3 }), Some(&b"abc"[..]));
        assert_eq!(arena.get(Bytes { at, len: 4 }), None);
    }
}
