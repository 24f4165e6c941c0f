//! Link failures in the clique simulator (§3.2): "link failures look like congestion, which
//! lets adaptive routing route around a failed link until the SDN routing engine removes the
//! entries of the link that lost connectivity".
//!
//! When a link fails, the cells on its wire and in its output queues at either end are lost
//! (counted in `link_failure_drops`); a cell whose head had already reached the far input
//! counts as arrived. From then on each TiN's routing leaves out candidates on a failed port:
//! adaptive and deterministic modes choose among the others; a cell just injected whose
//! minimal candidates all failed leaves non-minimally; a cell with no candidate left waits at
//! the head of its FIFO. After the controller's delay the SDN removes the link from the tables
//! ([`crate::routing::Router::remove_link`]) and the TiNs at its ends arbitrate again, so a
//! waiting cell takes a route of the new tables; where those have no route on its class's
//! VCs, it takes the escape VCs (`crate::escape`). A cell on VC 31 that a later removal left
//! with no route at all is dropped and counted (`stranded_drops`).

use super::{NONE, Sim, VCS};
use crate::routing::Candidates;
use shoal_base::Time;

impl Sim<'_> {
    /// The first global index of the port `port` of TiN `tin`, checked.
    fn network_port(&self, tin: u32, port: u32) -> Result<usize, String> {
        let tins = self.router.dragonfly().tins();
        if tin >= tins {
            return Err(format!("TiN {tin} does not exist ({tins} TiNs)"));
        }
        let ports = self.router.ports(tin);
        if port as usize >= ports {
            return Err(format!(
                "TiN {tin} has {ports} network ports: port {port} does not exist"
            ));
        }
        Ok((self.sw.base[tin as usize] + port) as usize)
    }

    /// Fails, at `now`, the link on network port `port` of TiN `tin` (both directions).
    pub(crate) fn fail_link(&mut self, now: Time, tin: u32, port: u32) -> Result<(), String> {
        let a = self.network_port(tin, port)?;
        if self.sw.down[a] {
            return Err(format!(
                "the link on port {port} of TiN {tin} has failed already"
            ));
        }
        let b = self.sw.far[a] as usize;
        self.sw.down_links += 1;
        for p in [a, b] {
            self.sw.down[p] = true;
            for v in 0..VCS {
                let oq = p * VCS + v;
                while let Some(id) = self.sw.fifos.pop_front(self.sw.out_queues + oq as u32) {
                    self.sw.free_cell(id);
                    self.counters.link_failure_drops += 1;
                }
                self.sw.vout[oq].words = 0;
            }
            self.sw.out_mask[p] = 0;
            // Heads routed to the failed port choose again (and every head waiting for a
            // crossbar output of the TiN is looked at again).
            let t = self.sw.tin[p] as usize;
            self.release_xbar_waiters(now, t as u32, true);
            for q in self.sw.base[t] as usize..self.sw.base[t + 1] as usize {
                for v in 0..VCS {
                    let head = &mut self.sw.vin[q * VCS + v].head;
                    if head.oq != NONE && (head.oq as usize) / VCS == p {
                        head.oq = NONE;
                    }
                }
            }
            self.wake_arbiter(t as u32, now);
        }
        Ok(())
    }

    /// The SDN removes the failed link on port `port` of TiN `tin` from the routing tables.
    pub(crate) fn remove_route(&mut self, now: Time, tin: u32, port: u32) -> Result<(), String> {
        let a = self.network_port(tin, port)?;
        if !self.sw.down[a] {
            return Err(format!(
                "the link on port {port} of TiN {tin} has not failed: the SDN keeps it"
            ));
        }
        self.router.remove_link(tin, port)?;
        let longest = self.router.longest_route();
        if longest > u16::from(self.spec.hop_limit) {
            return Err(format!(
                "a hop limit of {} is below the longest route of the tables without the link \
                 on port {port} of TiN {tin} ({longest} hops)",
                self.spec.hop_limit
            ));
        }
        let far = self.sw.tin[self.sw.far[a] as usize];
        self.wake_arbiter(tin, now);
        self.wake_arbiter(far, now);
        Ok(())
    }

    /// Leaves out the candidates of TiN `tin` on failed ports: `None` when none is left,
    /// `Some(true)` when only non-minimal ones are (they become the choice).
    pub(super) fn avoid_failed(&self, tin: u32, cand: &mut Candidates) -> Option<bool> {
        let base = self.sw.base[tin as usize];
        let up =
            |h: &crate::routing::Hop| h.port.is_none_or(|p| !self.sw.down[(base + p) as usize]);
        cand.minimal.retain(up);
        cand.non_minimal.retain(up);
        if !cand.minimal.is_empty() {
            return Some(false);
        }
        if cand.non_minimal.is_empty() {
            return None;
        }
        std::mem::swap(&mut cand.minimal, &mut cand.non_minimal);
        Some(true)
    }
}
