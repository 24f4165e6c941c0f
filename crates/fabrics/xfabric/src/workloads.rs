//! From flows to the controller's inputs: [`demand_of`] and [`full_demand_of`] turn a list of
//! `shoal_workload` flows (the §6.1 volumes of `shoal_workload::volumes`, whose uplink traffic goes
//! to or from `shoal_workload::OUTSIDE`) into the matrices Algorithm 1, OSA and uplink placement
//! take; [`skewed_random_demand`] and [`dense_random_demand`] are the demands Fig. 6(a) and the
//! topology benchmark time Algorithm 1 on.

use crate::demand::{Demand, DemandMatrix};
use crate::error::Error;
use crate::graph::node;
use rand::RngExt;
use shoal_base::{NodeId, rng};
use shoal_workload::volumes::MAX_VOLUME_NODES;
use shoal_workload::{Flow, OUTSIDE};

/// Why flows could not be summed into a demand.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WorkloadError {
    #[error("a flow between two outside endpoints (flow {index}): one end must be a SoC")]
    OutsideToOutside { index: usize },
    #[error(transparent)]
    Model(#[from] Error),
}

/// At most [`MAX_VOLUME_NODES`] SoCs: the last node id names the outside.
fn check_socs(socs: usize, min: usize) -> Result<(), WorkloadError> {
    if socs < min {
        return Err(Error::TooFewSocs { socs, min }.into());
    }
    if socs > MAX_VOLUME_NODES {
        return Err(Error::TooManySocs {
            socs,
            max: MAX_VOLUME_NODES,
        }
        .into());
    }
    Ok(())
}

fn check_soc(soc: NodeId, socs: usize) -> Result<(), WorkloadError> {
    if soc.idx() >= socs {
        return Err(Error::SocOutOfRange {
            soc: soc.idx(),
            socs,
        }
        .into());
    }
    Ok(())
}

/// The internal demand matrix of `flows` over `socs` SoCs: bytes summed per ordered SoC pair
/// (saturating at `u64::MAX`); flows to or from the outside are left out.
pub fn demand_of(flows: &[Flow], socs: usize) -> Result<DemandMatrix, WorkloadError> {
    Ok(full_demand_of(flows, socs)?.internal().clone())
}

/// The whole demand of `flows`: the internal matrix plus each SoC's egress and ingress bytes, the
/// input of [`crate::place_uplinks`].
pub fn full_demand_of(flows: &[Flow], socs: usize) -> Result<Demand, WorkloadError> {
    check_socs(socs, 1)?;
    let mut bytes = vec![0u64; socs * socs];
    let mut sent = vec![0u64; socs];
    let mut received = vec![0u64; socs];
    for (index, f) in flows.iter().enumerate() {
        match (f.src, f.dst) {
            (OUTSIDE, OUTSIDE) => {
                return Err(WorkloadError::OutsideToOutside { index });
            }
            (a, OUTSIDE) => {
                check_soc(a, socs)?;
                sent[a.idx()] = sent[a.idx()].saturating_add(f.bytes);
            }
            (OUTSIDE, b) => {
                check_soc(b, socs)?;
                received[b.idx()] = received[b.idx()].saturating_add(f.bytes);
            }
            (a, b) => {
                check_soc(a, socs)?;
                check_soc(b, socs)?;
                if a == b {
                    return Err(Error::SelfDemand { soc: a.idx() }.into());
                }
                let e = &mut bytes[a.idx() * socs + b.idx()];
                *e = e.saturating_add(f.bytes);
            }
        }
    }
    Ok(Demand::new(
        DemandMatrix::from_rows(socs, bytes)?,
        sent,
        received,
    )?)
}

/// Fig. 6(a)'s demand for timing topology generation: each SoC sends to `destinations` random
/// others, volumes spread roughly log-uniformly over six orders of magnitude (1 KiB to 2 GiB): a
/// handful of heavy pairs and many light ones, as the paper's production trace has. The paper
/// does not say which demand it timed.
pub fn skewed_random_demand(socs: usize, destinations: usize, seed: u64) -> DemandMatrix {
    let mut m = DemandMatrix::zeros(socs).expect("at least two SoCs");
    for s in 0..socs {
        let mut r = rng::stream(seed, "xfabric.workload.skewed_demand", s as u64);
        for _ in 0..destinations {
            let t = (s + 1 + r.random_range(0..socs - 1)) % socs;
            let scale = r.random_range(10..30);
            let bytes = (1u64 << scale) + r.random_range(0..1u64 << scale);
            m.set(node(s), node(t), bytes).expect("t differs from s");
        }
    }
    m
}

/// Every ordered pair with a random volume below 1 GiB: the worst case for Algorithm 1, which
/// then sorts all n(n − 1)/2 pairs.
pub fn dense_random_demand(socs: usize, seed: u64) -> DemandMatrix {
    let mut r = rng::stream(seed, "xfabric.workload.dense_demand", socs as u64);
    let bytes = (0..socs * socs)
        .map(|i| {
            if i / socs == i % socs {
                0
            } else {
                r.random_range(1..1u64 << 30)
            }
        })
        .collect();
    DemandMatrix::from_rows(socs, bytes).expect("the diagonal is zero")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demand_of_sums_flows() {
        let flows = [
            Flow::volume(node(0), node(1), 5),
            Flow::volume(node(0), node(1), 7),
            Flow::volume(node(2), OUTSIDE, 3),
            Flow::volume(OUTSIDE, node(2), 4),
        ];
        let m = demand_of(&flows, 3).unwrap();
        assert_eq!(m.get(node(0), node(1)), 12);
        assert_eq!(m.total(), 12);
        let d = full_demand_of(&flows, 3).unwrap();
        assert_eq!(
            (d.sent_external(node(2)), d.received_external(node(2))),
            (3, 4)
        );
        assert!(demand_of(&flows, 2).is_err());
        assert_eq!(
            demand_of(&[Flow::volume(OUTSIDE, OUTSIDE, 1)], 3),
            Err(WorkloadError::OutsideToOutside { index: 0 })
        );
    }
}
