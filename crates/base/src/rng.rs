//! Seeded random streams. Every random component (a workload generator, a failure injector, a
//! corruption model) draws from its own stream derived from (run seed, component label), so adding
//! a component never shifts the numbers another one sees, and a run is a pure function of its seed.

use rand::SeedableRng;
pub use rand_xoshiro::Xoshiro256PlusPlus as StreamRng;

/// One step of SplitMix64: a bijective mixer, used to spread (seed, label) into generator state.
fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a over the label: stable across platforms and Rust versions (unlike `DefaultHasher`).
fn label_hash(label: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in label.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The stream for component `label` (e.g. `"workload.arrivals"`) and index `index` (e.g. a node
/// id) of the run with seed `seed`.
pub fn stream(seed: u64, label: &str, index: u64) -> StreamRng {
    let mut state = [0u8; 32];
    let mut z = splitmix64(seed ^ splitmix64(label_hash(label) ^ splitmix64(index)));
    for chunk in state.chunks_mut(8) {
        z = splitmix64(z);
        chunk.copy_from_slice(&z.to_le_bytes());
    }
    StreamRng::from_seed(state)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a1: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(stream(7, "a", 0), |r, _| Some(r.next_u64()))
            .collect();
        let a2: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(stream(7, "a", 0), |r, _| Some(r.next_u64()))
            .collect();
        let b: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(stream(7, "b", 0), |r, _| Some(r.next_u64()))
            .collect();
        let c: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(stream(7, "a", 1), |r, _| Some(r.next_u64()))
            .collect();
        let d: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(stream(8, "a", 0), |r, _| Some(r.next_u64()))
            .collect();
        assert_eq!(a1, a2);
        assert_ne!(a1, b);
        assert_ne!(a1, c);
        assert_ne!(a1, d);
    }

    const PINNED: u64 = 376_525_151_681_654_662;

    #[test]
    fn first_draw_is_pinned() {
        // Pinning one value catches an accidental change of generator or derivation, which would
        // silently change every published result.
        let mut r = stream(1, "pin", 0);
        assert_eq!(
            r.next_u64(),
            PINNED,
            "the stream derivation changed: published results would move"
        );
    }
}
