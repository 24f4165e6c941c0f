//! The fabric speed-up the paper's inputs imply, and what a permutation can get at most.
//!
//! §4.1 sets the credit rate "slightly above the egress port bandwidth (e.g., 2%) and slightly
//! below the fabric speed-up", and §6.2 counts the fabric's utilisation "after deducting
//! physical protocol overheads, cell headers and control cell overheads". So the fabric must
//! carry the credit rate's packets after the cell headers and the credit cells they cost: a
//! cell link's rate is at least the credit rate times the bytes a credited packet byte takes
//! on the links. [`credit_link_bps`] is that rate; it is the least that satisfies the paper's
//! words (anything above it is a margin the paper does not give, so we add none).
//!
//! Only the cells that grow with the traffic are counted: data cells (payload plus header,
//! packed back to back within a VOQ) and one credit cell per credit. A status cell is sent
//! when a VOQ turns on or off, not per byte, and the model carries reachability messages
//! beside the links' cells (they take no link time), so neither is in the formula.
//!
//! [`permutation_bound`] is the fluid max-min rate of every flow of a permutation of long TCP
//! flows (one flow out of and one into each host port): every flow crosses the same kinds of
//! resource once, so max-min gives each the smallest of the resources' shares. Each data
//! segment costs an ack of `header_bytes` (the receiver acks every segment) on the reverse
//! path; acks are packed into cells like data (their VOQ carries nothing else), which is the
//! optimistic case an upper bound wants.

/// What a packet byte costs on a cell link.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CellCosts {
    /// A data cell on the link, header included.
    pub cell_bytes: u32,
    pub cell_header_bytes: u32,
    /// A credit cell.
    pub control_bytes: u32,
    /// Packet bytes a credit is worth.
    pub credit_bytes: u32,
}

impl CellCosts {
    /// Link bytes per packet byte credited: the data cells it fills (with their headers) and
    /// its share of a credit cell (which crosses the fabric the other way, on the links that
    /// carry the reverse path's cells: in a permutation every link carries both directions'
    /// share alike).
    pub fn link_bytes_per_packet_byte(&self) -> f64 {
        let payload = (self.cell_bytes - self.cell_header_bytes) as f64;
        self.cell_bytes as f64 / payload + self.control_bytes as f64 / self.credit_bytes as f64
    }
}

/// The least cell-link rate, b/s, that carries `ports` host ports' credit rate (the port rate
/// times 1 + `credit_speedup`) over `links` links after cell headers and credit cells.
pub fn credit_link_bps(
    port_bps: f64,
    credit_speedup: f64,
    ports: u32,
    links: u32,
    costs: &CellCosts,
) -> f64 {
    port_bps * (1.0 + credit_speedup) * ports as f64 / links as f64
        * costs.link_bytes_per_packet_byte()
}

/// A permutation's per-flow payload rate, b/s, as each resource allows it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PermutationBound {
    /// The host port (and the host's link): the flow's packets and the acks of the flow the
    /// host sends.
    pub host_port: f64,
    /// A cell link carrying one flow's cells each way (a full-bisection fabric sprayed evenly
    /// loads no link more), with the credit cells of the reverse direction's packets.
    pub cell_link: f64,
    /// The destination port's credits (port rate times 1 + speed-up), which pay for its
    /// packets and for the acks of its host's own flow.
    pub credits: f64,
}

impl PermutationBound {
    /// The max-min rate: the tightest resource.
    pub fn rate(&self) -> f64 {
        self.host_port.min(self.cell_link).min(self.credits)
    }

    /// Which resource binds.
    pub fn binding(&self) -> &'static str {
        let r = self.rate();
        if r == self.host_port {
            "the host port"
        } else if r == self.cell_link {
            "the cell links"
        } else {
            "the credit rate"
        }
    }
}

/// The fluid upper bound of a permutation of long TCP flows with `packet_bytes` packets of
/// which `header_bytes` are headers (an ack is a header alone), on host ports of `port_bps`
/// and cell links of `link_bps`, one link per host port.
pub fn permutation_bound(
    port_bps: f64,
    link_bps: f64,
    credit_speedup: f64,
    packet_bytes: u32,
    header_bytes: u32,
    costs: &CellCosts,
) -> PermutationBound {
    let payload = (packet_bytes - header_bytes) as f64;
    // Packet bytes (the segment and its ack) per payload byte delivered.
    let wire = (packet_bytes + header_bytes) as f64 / payload;
    PermutationBound {
        host_port: port_bps / wire,
        cell_link: link_bps / (wire * costs.link_bytes_per_packet_byte()),
        credits: port_bps * (1.0 + credit_speedup) / wire,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// §6.3's cells and credits with the model's 16 B header and 64 B credit cells.
    const FIG10A: CellCosts = CellCosts {
        cell_bytes: 512,
        cell_header_bytes: 16,
        control_bytes: 64,
        credit_bytes: 4096,
    };

    #[test]
    fn the_derived_link_carries_exactly_the_credit_rate_after_headers_and_credit_cells() {
        let link = credit_link_bps(10e9, 0.03, 1, 1, &FIG10A);
        // Count a second of the credit rate's cells one by one: 10.3 Gb/s of packets fill
        // cells of 496 B of payload, and every 4096 B of them cost a 64 B credit cell.
        let packets = 10.3e9 / 8.0;
        let cells = packets / 496.0;
        let credits = packets / 4096.0;
        let bytes = cells * 512.0 + credits * 64.0;
        assert!((link - bytes * 8.0).abs() < 1.0, "{link}");
        // A speed-up of about 8% over the port: above the credit rate, as §4.1 asks.
        assert!(link > 10.3e9 && link < 11e9, "{link}");
    }

    #[test]
    fn without_headers_or_credit_cells_the_links_run_at_the_credit_rate() {
        let bare = CellCosts {
            cell_header_bytes: 0,
            control_bytes: 0,
            ..FIG10A
        };
        let link = credit_link_bps(10e9, 0.03, 1, 1, &bare);
        assert!((link - 10.3e9).abs() < 1.0, "{link}");
        // Ports shared over links: 16 ports of 50 Gb/s over 18 links.
        let link = credit_link_bps(50e9, 0.0, 16, 18, &bare);
        assert!((link - 50e9 * 16.0 / 18.0).abs() < 1.0, "{link}");
    }

    #[test]
    fn the_bound_at_the_derived_rate_is_the_host_port_and_at_the_port_rate_the_links() {
        let link = credit_link_bps(10e9, 0.03, 1, 1, &FIG10A);
        let b = permutation_bound(10e9, link, 0.03, 9000, 64, &FIG10A);
        // 8936 B of payload per 9000 B packet and its 64 B ack on a 10 Gb/s port.
        assert!((b.rate() - 10e9 * 8936.0 / 9064.0).abs() < 1.0, "{b:?}");
        assert_eq!(b.binding(), "the host port");
        // The links carry the credit rate, above the port's: 3% slack over the port.
        assert!((b.cell_link / b.host_port - 1.03).abs() < 1e-12, "{b:?}");
        let at_port = permutation_bound(10e9, 10e9, 0.03, 9000, 64, &FIG10A);
        assert_eq!(at_port.binding(), "the cell links");
        assert!(at_port.rate() < b.rate());
    }
}
