//! Realised offered load, as the Shoal paper defines load (§7.3): L = F / (R · N · τ), for mean
//! flow size F, node rate R, N nodes and mean flow inter-arrival time τ across the rack.
//!
//! Both F and τ are measured from the flows actually handed to the fabric, not taken from the
//! workload's parameters, so a run reports the load it really offered (a short run of a
//! heavy-tailed workload can miss its nominal load by a lot). τ is the span of start times over
//! the n − 1 gaps between n flows; pass the records of the window to measure.

use crate::record::FlowRecord;

/// Offered payload bytes per second, F / τ; `None` for fewer than two flows or when they all
/// start at once (τ = 0).
///
/// This is total bytes · (n − 1) / (n · span), not total bytes / span: F averages over n flows,
/// τ over their n − 1 gaps.
pub fn offered_bytes_per_sec(records: &[FlowRecord]) -> Option<f64> {
    let first = records.iter().map(|r| r.start).min()?;
    let last = records.iter().map(|r| r.start).max()?;
    let gaps = records.len().checked_sub(1).filter(|&g| g > 0)? as f64;
    let tau_ps = last.since(first).ps() as f64 / gaps;
    let total: u128 = records.iter().map(|r| u128::from(r.bytes)).sum();
    let mean_bytes = total as f64 / records.len() as f64;
    (tau_ps > 0.0).then(|| mean_bytes * 1e12 / tau_ps)
}

/// Realised load L = 8F / (R · N · τ) with R in bits per second (the paper's F/(R·N·τ) with F
/// in bits): the fraction of the rack's aggregate node bandwidth the flows ask for. `None` when
/// [`offered_bytes_per_sec`] is, or for a rate that is not finite and positive, or no nodes.
pub fn realised_load(records: &[FlowRecord], node_rate_bps: f64, nodes: usize) -> Option<f64> {
    let valid = node_rate_bps.is_finite() && node_rate_bps > 0.0 && nodes > 0;
    let offered = offered_bytes_per_sec(records)?;
    valid.then(|| offered * 8.0 / (node_rate_bps * nodes as f64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use shoal_base::{Dur, NodeId, Time};

    /// `n` flows, one every `gap`, sizes cycling through `sizes`.
    fn regular(n: u64, gap: Dur, sizes: &[u64]) -> Vec<FlowRecord> {
        (0..n)
            .map(|i| FlowRecord {
                id: i,
                src: NodeId(0),
                dst: NodeId(1),
                bytes: sizes[i as usize % sizes.len()],
                start: Time(7_000 + i * gap.ps()),
                finish: None,
            })
            .collect()
    }

    #[test]
    fn regular_arrivals_give_the_exact_load() {
        // Mean 50 kB every 1 us is 50 GB/s = 400 Gb/s; 16 nodes at 100 Gb/s offer 1,600 Gb/s.
        let records = regular(1_000, Dur::from_us(1), &[25_000, 75_000]);
        assert_eq!(offered_bytes_per_sec(&records), Some(5e10));
        assert_eq!(realised_load(&records, 100e9, 16), Some(0.25));
    }

    #[test]
    fn start_order_does_not_matter() {
        let mut records = regular(10, Dur::from_ns(250), &[1_000]);
        records.reverse();
        assert_eq!(offered_bytes_per_sec(&records), Some(4e9));
    }

    #[test]
    fn undefined_loads_are_none() {
        let one = regular(1, Dur::from_us(1), &[1]);
        let simultaneous = regular(5, Dur::ZERO, &[1]);
        let fine = regular(5, Dur::from_us(1), &[1]);
        assert_eq!(offered_bytes_per_sec(&[]), None);
        assert_eq!(offered_bytes_per_sec(&one), None);
        assert_eq!(offered_bytes_per_sec(&simultaneous), None);
        assert_eq!(realised_load(&fine, 0.0, 4), None);
        assert_eq!(realised_load(&fine, f64::NAN, 4), None);
        assert_eq!(realised_load(&fine, 1e9, 0), None);
    }
}
