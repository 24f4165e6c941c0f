//! Throughput at each destination over a measurement window: the fabric-level view of how
//! evenly it served its nodes (an unfair or stalled node shows as a low minimum).

use serde::Serialize;
use shoal_base::Dur;

/// Per-node delivery rates over one window, in Gb/s of payload.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DestThroughput {
    /// One entry per node, in node order.
    pub per_node_gbps: Vec<f64>,
    pub mean_gbps: f64,
    pub min_gbps: f64,
}

impl DestThroughput {
    /// From the payload bytes each node received during `window` (e.g. a fabric's
    /// `delivered_bytes`, counted from `measure_from`, over `sim_time − measure_from`); `None`
    /// for no nodes or an empty window.
    pub fn of(delivered_bytes: &[u64], window: Dur) -> Option<DestThroughput> {
        if delivered_bytes.is_empty() || window == Dur::ZERO {
            return None;
        }
        let secs = window.as_secs_f64();
        let per_node_gbps: Vec<f64> = delivered_bytes
            .iter()
            .map(|&b| b as f64 * 8.0 / secs / 1e9)
            .collect();
        Some(DestThroughput {
            mean_gbps: per_node_gbps.iter().sum::<f64>() / per_node_gbps.len() as f64,
            min_gbps: per_node_gbps.iter().copied().fold(f64::INFINITY, f64::min),
            per_node_gbps,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_mean_and_min() {
        // 10 us: 125 kB is 100 Gb/s, 62.5 kB is 50 Gb/s.
        let t = DestThroughput::of(&[125_000, 62_500, 0, 125_000], Dur::from_us(10)).unwrap();
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        let want = [100.0, 50.0, 0.0, 100.0];
        assert!(t.per_node_gbps.iter().zip(want).all(|(&g, w)| close(g, w)));
        assert!(close(t.mean_gbps, 62.5) && t.min_gbps == 0.0);
    }

    #[test]
    fn no_nodes_or_no_window_is_none() {
        assert_eq!(DestThroughput::of(&[], Dur::from_us(1)), None);
        assert_eq!(DestThroughput::of(&[5], Dur::ZERO), None);
    }
}
