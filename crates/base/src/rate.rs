//! Link rates as integer bits per second, and exact serialization times.

use crate::time::Dur;
use serde::{Deserialize, Serialize};

/// A link or channel rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Rate(pub u64);

impl Rate {
    pub const fn gbps(g: u64) -> Rate {
        Rate(g * 1_000_000_000)
    }

    pub fn as_gbps_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }

    /// Time to serialize `bytes` at this rate, rounded up to a whole picosecond.
    pub fn serialize(self, bytes: u64) -> Dur {
        assert!(self.0 > 0, "serialization at a zero rate");
        // Bit-picoseconds fit in a u64 below 2.3 MB: the 64-bit division is several times
        // cheaper than the 128-bit one, and packet simulators call this per packet per hop.
        const PS_BITS: u64 = 8 * 1_000_000_000_000;
        if bytes <= u64::MAX / PS_BITS {
            return Dur((bytes * PS_BITS).div_ceil(self.0));
        }
        let bits = bytes as u128 * PS_BITS as u128;
        Dur(bits.div_ceil(self.0 as u128) as u64)
    }

    /// Bytes that fit in `d` at this rate (rounded down).
    pub fn bytes_in(self, d: Dur) -> u64 {
        (d.0 as u128 * self.0 as u128 / 8 / 1_000_000_000_000) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_64_byte_cell_takes_5120_ps_at_100g_and_20480_at_25g() {
        assert_eq!(Rate::gbps(100).serialize(64), Dur(5_120));
        assert_eq!(Rate::gbps(25).serialize(64), Dur(20_480));
        // The prototype: 64 B at 10 Gb/s is 51.2 ns, eight 6.4 ns clock cycles.
        assert_eq!(Rate::gbps(10).serialize(64), Dur(51_200));
    }

    #[test]
    fn the_64_bit_path_agrees_with_128_bit_arithmetic() {
        for rate in [
            1,
            7,
            10_000_000_000,
            25_000_000_000,
            16_666_666_667,
            u64::MAX,
        ] {
            for bytes in [0, 1, 63, 1500, 9000, 2_305_843, 2_305_844, 1 << 40] {
                let exact = (bytes as u128 * 8_000_000_000_000).div_ceil(rate as u128);
                if exact <= u64::MAX as u128 {
                    assert_eq!(
                        Rate(rate).serialize(bytes),
                        Dur(exact as u64),
                        "{rate} {bytes}"
                    );
                }
            }
        }
    }

    #[test]
    fn bytes_in_inverts_serialize() {
        let r = Rate::gbps(25);
        assert_eq!(r.bytes_in(r.serialize(64)), 64);
        assert_eq!(Rate::gbps(10).bytes_in(Dur(51_200)), 64);
    }
}
