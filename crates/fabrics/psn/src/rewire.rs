//! Rewiring a direct network while it runs: the hook a reconfigurable rack (XFabric) plugs its
//! controller into.
//!
//! At the times the controller asks for, the simulator hands it the bytes every host sent to every
//! other host since the last call (what XFabric's SoCs report) and takes back a new topology with
//! the same hosts and ports. The circuits and every forwarding table change at that instant; the
//! control-plane protocol that gets them there, and its latency, is modelled on its own
//! (`shoal_xfabric::reconfig`). What the data plane sees:
//! - a packet on the wire of a link that changes (serializing or propagating) is lost: the
//!   crosspoint cut it, and the receiver's CRC check drops it;
//! - packets still queued at a port whose link changed leave by the new link, and its far end
//!   forwards them by the new tables;
//! - nothing else is touched: transports recover the losses end to end.

use shoal_base::Time;
use shoal_topology::Topology;

/// A controller that rewires the network during a run.
pub trait Rewiring {
    /// When to rewire first; `None` never.
    fn first(&self) -> Option<Time>;

    /// Rewires at `now`. `sent[src * hosts + dst]` holds the wire bytes of data packets host
    /// `src` sent to host `dst` since the previous call (since the start for the first). The new
    /// topology must have the hosts and port counts of the old one.
    fn rewire(&mut self, now: Time, sent: &[u64]) -> Result<Rewired, String>;
}

/// A controller's answer: the topology from now on, and when to rewire next (`None`: never).
pub struct Rewired {
    pub topology: Topology,
    pub next: Option<Time>,
}

/// Refuses a topology that does not fit the ports of the running one, naming the difference.
pub(crate) fn check_shape(old: &Topology, new: &Topology) -> Result<(), String> {
    if new.nodes() != old.nodes() || new.hosts() != old.hosts() {
        return Err(format!(
            "the new topology has {} nodes ({} hosts), the running one {} ({})",
            new.nodes(),
            new.hosts(),
            old.nodes(),
            old.hosts()
        ));
    }
    for n in 0..old.nodes() as u32 {
        if new.ports(n) != old.ports(n) {
            return Err(format!(
                "node {n} has {} ports in the new topology, {} in the running one",
                new.ports(n),
                old.ports(n)
            ));
        }
    }
    Ok(())
}
