//! The memory a Shoal NIC needs: on chip, the state §4.2 lists; off chip, the worst-case
//! buffer of §3.3.4.
//!
//! §4.2: "Each NIC maintains a cell cache on the on-chip memory, of size N − 1 cells, which
//! stores the next cell to forward per intermediate node ... two vectors of size N − 1 each,
//! that record the last cell sent (received) to (from) each intermediate node, and a (N − 1) ×
//! (N − 1) matrix that stores the rate limit feedback received from each intermediate node for
//! each active local flow." The paper gives no widths; [`StateWidths`] says which we take and
//! why. Appendix B synthesised the NIC for 500 nodes onto a Stratix V with 52 Mbit of block RAM
//! and used 13% of it; `tests::appendix_b_*` checks the model against that.

use crate::error::SizingError;
use serde::Serialize;
use shoal_schedule::MAX_NODES;

/// The block RAM of the prototype's Stratix V (5SGXEA7, App. B: "52 Mbits"): 2,560 M20K blocks
/// of 20 Kibit.
pub const STRATIX_V_BRAM_BITS: u64 = 2_560 * 20 * 1024;

/// How wide the entries of the on-chip state are.
///
/// Our choice, since the paper gives none: the header's widths (Fig. 5 sizes them for racks of
/// up to 1,024 nodes: a 10-bit node id; our cell format gives the rate-limit feedback 10 bits
/// too), widened when N needs more, and a 16-bit arrival time per matrix entry. The time is
/// there because Eq. 2 needs it: a subflow may release its next cell once `len(Q_ij(t)) +
/// (t − T) ≥ len(Q_jk(T))`, so the matrix must remember when (T) each feedback arrived, not
/// only its value (our node keeps it beside the feedback, `Sub::since`). Sixteen bits is a
/// register word; with it the model gives Appendix B's 13% at 500 nodes (12.9%), and without
/// any time it gives 5.3%, so the synthesised design did keep about that much more per entry.
/// That makes the width a fit to the one number Appendix B gives, and we say so where we check
/// it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct StateWidths {
    /// Least width of a node id and of a feedback value (a queue length).
    pub header_bits: u32,
    /// The arrival time of a feedback, per matrix entry.
    pub timestamp_bits: u32,
}

impl Default for StateWidths {
    fn default() -> StateWidths {
        StateWidths {
            header_bits: 10,
            timestamp_bits: 16,
        }
    }
}

/// Bits that name `0..=max`.
fn bits_for(max: u64) -> u32 {
    (u64::BITS - max.leading_zeros()).max(1)
}

/// One NIC's memory for a rack of `nodes`, in bits (on chip) and bytes (off chip).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct NicMemory {
    pub nodes: usize,
    /// Width of a node id in the vectors: `max(header_bits, bits for N − 1)`.
    pub id_bits: u32,
    /// Width of a matrix entry: a feedback (`max(header_bits, bits for N)`, Eq. 5 bounds a
    /// queue by N) and its arrival time.
    pub entry_bits: u32,
    /// N − 1 cells, the next to forward per intermediate (§3.3.4: 32 KB at 512 nodes).
    pub cell_cache_bits: u64,
    /// The last cell sent to each intermediate: the destination it was for.
    pub sent_vector_bits: u64,
    /// The last cell received from each intermediate: the queue it joined.
    pub received_vector_bits: u64,
    /// (N − 1) × (N − 1) entries: per local flow, per intermediate.
    pub rate_limit_matrix_bits: u64,
    /// All of the above.
    pub on_chip_bits: u64,
    /// Off chip: every queue at its Eq. 5 bound of N cells, N − 1 queues: the buffer that no
    /// traffic pattern, all-to-one incast included, overflows (§3.3.4: 17 MB at 512 nodes).
    pub buffer_bytes: u64,
}

/// The NIC memory of one node, refusing node counts a rack cannot have and cells of no bytes.
pub fn nic_memory(
    nodes: usize,
    cell_bytes: u32,
    widths: StateWidths,
) -> Result<NicMemory, SizingError> {
    check(widths)?;
    if !(2..=MAX_NODES).contains(&nodes) {
        return Err(SizingError::new(
            "nodes",
            format!("2 to {MAX_NODES} nodes, got {nodes}"),
        ));
    }
    if cell_bytes == 0 || cell_bytes > 1 << 20 {
        return Err(SizingError::new(
            "cell_bytes",
            format!("1 B to 1 MiB, got {cell_bytes}"),
        ));
    }
    Ok(memory(nodes as u64, u64::from(cell_bytes), widths))
}

/// The sizes, for inputs already checked (N ≤ 65,535 and widths ≤ 64 keep every product far
/// below u64::MAX).
fn memory(n: u64, cell_bytes: u64, w: StateWidths) -> NicMemory {
    let peers = n - 1;
    let id_bits = w.header_bits.max(bits_for(peers));
    let entry_bits = w.header_bits.max(bits_for(n)) + w.timestamp_bits;
    let cell_cache_bits = peers * cell_bytes * 8;
    let sent_vector_bits = peers * u64::from(id_bits);
    let received_vector_bits = sent_vector_bits;
    let rate_limit_matrix_bits = peers * peers * u64::from(entry_bits);
    NicMemory {
        nodes: n as usize,
        id_bits,
        entry_bits,
        cell_cache_bits,
        sent_vector_bits,
        received_vector_bits,
        rate_limit_matrix_bits,
        on_chip_bits: cell_cache_bits
            + sent_vector_bits
            + received_vector_bits
            + rate_limit_matrix_bits,
        buffer_bytes: peers * n * cell_bytes,
    }
}

fn check(w: StateWidths) -> Result<(), SizingError> {
    if !(1..=32).contains(&w.header_bits) {
        return Err(SizingError::new(
            "header_bits",
            format!("1 to 32 bits, got {}", w.header_bits),
        ));
    }
    if w.timestamp_bits > 32 {
        return Err(SizingError::new(
            "timestamp_bits",
            format!("0 to 32 bits, got {}", w.timestamp_bits),
        ));
    }
    Ok(())
}

/// The largest rack whose NIC state fits `on_chip_bits`: `None` when not even two nodes fit;
/// [`MAX_NODES`] when the memory holds more than any rack this toolkit can name needs.
pub fn max_nodes_for(
    on_chip_bits: u64,
    cell_bytes: u32,
    widths: StateWidths,
) -> Result<Option<usize>, SizingError> {
    nic_memory(2, cell_bytes, widths)?;
    let fits =
        |n: usize| memory(n as u64, u64::from(cell_bytes), widths).on_chip_bits <= on_chip_bits;
    if !fits(2) {
        return Ok(None);
    }
    // The state grows with N (every width is non-decreasing in N): bisect on [lo fits, hi not].
    let (mut lo, mut hi) = (2usize, MAX_NODES + 1);
    if fits(MAX_NODES) {
        return Ok(Some(MAX_NODES));
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(Some(lo))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn paper(nodes: usize) -> NicMemory {
        nic_memory(nodes, 64, StateWidths::default()).unwrap()
    }

    /// Appendix B: 500 nodes (64-port switches) take 13% of the Stratix V's 52 Mbit of block
    /// RAM. The paper gives one digit of precision, so ±0.5 points. The check holds with the
    /// arrival time per entry that Eq. 2 needs; the feedback alone would fill well under half of
    /// what the synthesised design used.
    #[test]
    fn appendix_b_500_nodes_take_13_percent_of_a_stratix_v() {
        let m = paper(500);
        let share = m.on_chip_bits as f64 / STRATIX_V_BRAM_BITS as f64;
        assert!((share - 0.13).abs() <= 0.005, "{share}");
        let without_time = nic_memory(
            500,
            64,
            StateWidths {
                timestamp_bits: 0,
                ..StateWidths::default()
            },
        )
        .unwrap();
        let share = without_time.on_chip_bits as f64 / STRATIX_V_BRAM_BITS as f64;
        assert!(share < 0.065, "{share}");
    }

    #[test]
    fn section_3_3_4_512_nodes_cache_32_kb_on_chip_and_buffer_17_mb_off_chip() {
        let m = paper(512);
        assert_eq!(m.cell_cache_bits / 8, 511 * 64); // 32,704 B: "just 32 KB"
        assert_eq!((m.buffer_bytes as f64 / 1e6).round(), 17.0); // "17 MB"
    }

    /// §3.5: "The on-chip memory consumption for Shoal scales as Θ(N² log(N)) bits ... Even for
    /// a very dense rack comprising ∼1000 nodes, this results in a memory consumption only of
    /// the order of a megabyte."
    #[test]
    fn section_3_5_a_thousand_nodes_take_megabytes() {
        let bytes = paper(1000).on_chip_bits as f64 / 8.0;
        assert!((1e6..1e7).contains(&bytes), "{bytes}");
    }

    #[test]
    fn the_largest_rack_a_memory_holds_is_the_last_that_fits() {
        let n = max_nodes_for(STRATIX_V_BRAM_BITS, 64, StateWidths::default())
            .unwrap()
            .unwrap();
        assert!(paper(n).on_chip_bits <= STRATIX_V_BRAM_BITS);
        assert!(paper(n + 1).on_chip_bits > STRATIX_V_BRAM_BITS);
        // Appendix B's 13% at 500 nodes leaves room for about √(1/0.13) ≈ 2.8 times as many.
        assert!((1_300..1_450).contains(&n), "{n}");
        assert_eq!(max_nodes_for(10, 64, StateWidths::default()).unwrap(), None);
        assert_eq!(
            max_nodes_for(u64::MAX, 64, StateWidths::default()).unwrap(),
            Some(MAX_NODES)
        );
    }

    #[test]
    fn impossible_inputs_name_their_key() {
        let w = StateWidths::default();
        assert_eq!(nic_memory(1, 64, w).unwrap_err().key, "nodes");
        assert_eq!(nic_memory(usize::MAX, 64, w).unwrap_err().key, "nodes");
        assert_eq!(nic_memory(8, 0, w).unwrap_err().key, "cell_bytes");
        let wide = StateWidths {
            timestamp_bits: 99,
            ..w
        };
        assert_eq!(nic_memory(8, 64, wide).unwrap_err().key, "timestamp_bits");
    }

    proptest! {
        /// Θ(N² log N): once the matrix dominates (a few hundred nodes), doubling N multiplies
        /// the state by about four, a little more where the widths grow.
        #[test]
        fn state_grows_as_n_squared_log_n(n in 256usize..30_000) {
            let a = paper(n).on_chip_bits as f64;
            let b = paper(2 * n).on_chip_bits as f64;
            prop_assert!((3.8..=4.6).contains(&(b / a)), "{}", b / a);
        }
    }
}
