//! What one UDP datagram carries between a node and the circuit switch: a 16-byte emulation shim,
//! then the 64-byte cell exactly as the paper puts it on the wire (8-byte header with its CRC-8,
//! 56 bytes of payload; `shoal-cell`).
//!
//! The shim stands in for what hardware knows without being told: the slot in which the cell was
//! sent (the rack's common clock, §3.4), the channel (the lane of the link), and the ports at both
//! ends (the cabling). The paper is silent on an emulation; we carry these so that the switch can
//! forward by the schedule of the cell's own slot when the host's scheduler delays a datagram,
//! and so that a cell arriving in the wrong place is *visible* (a schedule violation) rather
//! than quietly accepted. The cell itself is never touched by the shim: the receiver checks its
//! CRC exactly as a Shoal NIC would.
//!
//! Layout (big-endian), also decoded by `assets/wireshark/shoal.lua`:
//!
//! | bytes  | field   | meaning |
//! |--------|---------|---------|
//! | 0..2   | magic   | `"SL"` |
//! | 2      | version | 1 |
//! | 3      | channel | the channel (Clos plane) the cell was sent on |
//! | 4..6   | from    | the node that transmitted it (the previous hop, not the cell's `src`) |
//! | 6..8   | to      | the node the sender meant it for (its peer in the schedule) |
//! | 8..16  | slot    | the slot in which it was sent |
//! | 16..80 | cell    | the cell: header (8 B) and payload (56 B) |
//!
//! A datagram on channel 255 is not a cell but a *beacon*: "I am alive, stuck before
//! transmitting in `slot`", which a driver sends while it waits for a late cell and the switch
//! copies to every node (its cell bytes are zero). Hardware never needs one, since a real rack
//! never stalls; an emulated node that waits for a peer stops sending too, and without beacons the
//! nodes waiting on *it* would take it for dead (see `driver.rs`).

use shoal_base::{ChannelId, NodeId};

/// Bytes of the shim.
pub const SHIM_LEN: usize = 16;
/// Bytes of one cell: the paper's 64 B.
pub const CELL_LEN: usize = shoal_cell::DEFAULT_CELL_LEN;
/// Payload bytes of one cell.
pub const PAYLOAD_LEN: usize = CELL_LEN - shoal_cell::HEADER_LEN;
/// Bytes of one datagram.
pub const DATAGRAM_LEN: usize = SHIM_LEN + CELL_LEN;

/// The channel number that marks a beacon.
pub const BEACON: ChannelId = ChannelId(u8::MAX);

const MAGIC: [u8; 2] = *b"SL";
const VERSION: u8 = 1;

/// Where and when a cell was sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shim {
    pub slot: u64,
    pub channel: ChannelId,
    pub from: NodeId,
    pub to: NodeId,
}

/// Why a datagram is not one of ours. (A cell with a bad CRC is still a datagram: its header is
/// the receiver's business.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DatagramError {
    #[error("a datagram has {DATAGRAM_LEN} bytes, got {0}")]
    Length(usize),
    #[error("not a live-rack datagram (magic or version)")]
    Magic,
}

/// The datagram for `cell` sent as `shim` says.
pub fn encode(shim: &Shim, cell: &[u8; CELL_LEN]) -> [u8; DATAGRAM_LEN] {
    let mut out = [0u8; DATAGRAM_LEN];
    out[0..2].copy_from_slice(&MAGIC);
    out[2] = VERSION;
    out[3] = shim.channel.0;
    out[4..6].copy_from_slice(&shim.from.0.to_be_bytes());
    out[6..8].copy_from_slice(&shim.to.0.to_be_bytes());
    out[8..16].copy_from_slice(&shim.slot.to_be_bytes());
    out[SHIM_LEN..].copy_from_slice(cell);
    out
}

/// The shim and the cell of a datagram.
pub fn decode(bytes: &[u8]) -> Result<(Shim, &[u8; CELL_LEN]), DatagramError> {
    let bytes: &[u8; DATAGRAM_LEN] = bytes
        .try_into()
        .map_err(|_| DatagramError::Length(bytes.len()))?;
    if bytes[0..2] != MAGIC || bytes[2] != VERSION {
        return Err(DatagramError::Magic);
    }
    let u16_at = |i: usize| u16::from_be_bytes([bytes[i], bytes[i + 1]]);
    let shim = Shim {
        channel: ChannelId(bytes[3]),
        from: NodeId(u16_at(4)),
        to: NodeId(u16_at(6)),
        slot: u64::from_be_bytes(bytes[8..16].try_into().expect("8 bytes")),
    };
    let cell = bytes[SHIM_LEN..].try_into().expect("64 bytes");
    Ok((shim, cell))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn datagrams_round_trip(slot: u64, channel: u8, from: u16, to: u16, fill: u8) {
            let shim = Shim { slot, channel: ChannelId(channel), from: NodeId(from), to: NodeId(to) };
            let cell = [fill; CELL_LEN];
            let bytes = encode(&shim, &cell);
            let (s, c) = decode(&bytes).unwrap();
            prop_assert_eq!(s, shim);
            prop_assert_eq!(c, &cell);
        }
    }

    #[test]
    fn foreign_datagrams_are_refused() {
        let bytes = encode(
            &Shim {
                slot: 1,
                channel: ChannelId(0),
                from: NodeId(1),
                to: NodeId(2),
            },
            &[0; CELL_LEN],
        );
        assert_eq!(decode(&bytes[..79]), Err(DatagramError::Length(79)));
        let mut other = bytes;
        other[0] = b'X';
        assert_eq!(decode(&other), Err(DatagramError::Magic));
    }
}
