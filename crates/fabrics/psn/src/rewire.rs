//! Rewiring a direct network while it runs: the hook a reconfigurable rack (XFabric) plugs its
//! controller into.
//!
//! At the times the controller asks for, the simulator hands it the bytes every host sent to every
//! other host since the last call (what XFabric's SoCs report) and takes back a new topology with
//! the same hosts and ports. Either the circuits and every forwarding table change at that instant,
//! or the controller says when each changed port takes its new link and when each node starts
//! forwarding by the new tables ([`Staged`]: the control plane's latency, which
//! `shoal_xfabric::reconfig` simulates); until then a node forwards by the old tables over
//! whatever circuits its ports have, so a packet can be sent where its next hop no longer is, and
//! one that has crossed more links than there are nodes is dropped (it is looping between nodes on
//! tables of two versions; counted as `packets_lost_stale_tables`). What the data plane sees:
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
    /// How the change reaches the data plane; `None`: every circuit and table at once, now.
    pub staged: Option<Staged>,
}

/// A change that reaches the data plane piece by piece. Every port whose link changes must be
/// listed in `circuits` and every node in `tables`, once each, at times no earlier than the
/// rewiring and before the next one (a next rewiring applies whatever is still pending first).
#[derive(Clone, Debug, Default)]
pub struct Staged {
    /// `(at, node, port)`: the port takes its link in the new topology at `at`.
    pub circuits: Vec<(Time, u32, u32)>,
    /// `(at, node)`: the node forwards by the new topology's tables from `at` on.
    pub tables: Vec<(Time, u32)>,
}

/// Refuses a staging that leaves a changed port or a node out, lists one twice, or goes back in
/// time.
pub(crate) fn check_staged(
    old: &Topology,
    new: &Topology,
    staged: &Staged,
    now: Time,
) -> Result<(), String> {
    let nodes = old.nodes();
    let mut port_listed: Vec<Vec<bool>> = (0..nodes as u32)
        .map(|n| vec![false; old.ports(n)])
        .collect();
    for &(at, n, p) in &staged.circuits {
        if at < now {
            return Err(format!(
                "node {n} port {p} switches at {at}, before the rewiring at {now}"
            ));
        }
        let slot = port_listed
            .get_mut(n as usize)
            .and_then(|ports| ports.get_mut(p as usize))
            .ok_or_else(|| format!("staged port {n}:{p} does not exist"))?;
        if std::mem::replace(slot, true) {
            return Err(format!("node {n} port {p} is staged twice"));
        }
    }
    for n in 0..nodes as u32 {
        for (p, link) in new.links(n).iter().enumerate() {
            let was = old.link(n, p as u32);
            if (was.peer, was.peer_port) != (link.peer, link.peer_port)
                && !port_listed[n as usize][p]
            {
                return Err(format!(
                    "node {n} port {p} changes its link but is not staged"
                ));
            }
        }
    }
    let mut node_listed = vec![false; nodes];
    for &(at, n) in &staged.tables {
        if at < now {
            return Err(format!(
                "node {n} switches tables at {at}, before the rewiring at {now}"
            ));
        }
        let slot = node_listed
            .get_mut(n as usize)
            .ok_or_else(|| format!("staged node {n} does not exist"))?;
        if std::mem::replace(slot, true) {
            return Err(format!("node {n}'s tables are staged twice"));
        }
    }
    if let Some(n) = node_listed.iter().position(|&l| !l) {
        return Err(format!("node {n}'s tables are not staged"));
    }
    Ok(())
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
