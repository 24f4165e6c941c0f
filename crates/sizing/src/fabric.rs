//! One table across fabrics: each fabric's own sizing, power and cost model answers for a host
//! count through [`SizingModel`], in the same [`Row`].
//!
//! The models do not share assumptions beyond the host count, and the rows say where each
//! comes from: Shoal and its packet-switched baseline from Shoal's §5 and Fig. 11 (power in
//! watts, cost relative to the packet network), XFabric from its own §2 and Table 1 (ports of
//! 10 Gb/s crosspoints, priced in dollars and watts per port), Stardust from its §7 and Fig. 11
//! (a data-center network of 25G links against fat-trees with bundled links, our prices; see
//! [`crate::stardust`]). A fabric added later (Aquila) implements the trait and takes one line
//! in [`models`].

use crate::SizeSpec;
use crate::error::SizingError;
use crate::{cost, power, rack, stardust};
use serde::Serialize;
use shoal_xfabric::{CostComparison, FabricCost, PortPrice, Rack, RackSpec};

/// One fabric for one host count.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    pub fabric: String,
    /// The paper and section the model follows.
    pub source: &'static str,
    pub hosts: usize,
    /// Each host's link rate, all channels or ports together.
    pub host_gbps: f64,
    pub switches: usize,
    /// Switch ports in all.
    pub switch_ports: usize,
    pub switches_watts: f64,
    /// One host's NIC; `None` where the model has none.
    pub nic_watts: Option<f64>,
    pub total_watts: f64,
    /// Cost over the packet network of the same hosts, at the two ends of the model's range.
    pub cost_vs_packet: Option<[f64; 2]>,
    /// Cost in dollars, for models that price parts.
    pub cost_usd: Option<f64>,
    pub note: String,
}

/// A fabric's sizing model.
pub trait SizingModel {
    /// The model's name, for a row it cannot give.
    fn name(&self) -> &'static str;
    /// Its rows for `hosts` hosts: the fabric, and any reference it is compared with.
    fn rows(&self, hosts: usize) -> Result<Vec<Row>, SizingError>;
}

/// Every fabric `shoal size` compares, in table order.
pub fn models(spec: &SizeSpec) -> Vec<Box<dyn SizingModel + '_>> {
    vec![
        Box::new(ShoalModel(spec)),
        Box::new(XFabricModel(&spec.xfabric)),
        Box::new(StardustModel(&spec.stardust)),
    ]
}

/// Stardust's Fig. 11: its network and the fat-trees of 25G, 50G and 100G links for the same
/// hosts, costs in dollars at our prices and relative to the cheapest fat-tree.
pub struct StardustModel<'a>(pub &'a stardust::StardustCostSpec);

impl SizingModel for StardustModel<'_> {
    fn name(&self) -> &'static str {
        "stardust"
    }

    fn rows(&self, hosts: usize) -> Result<Vec<Row>, SizingError> {
        let spec = self.0;
        let nets = stardust::compare(spec, hosts)?;
        let cheapest = nets[1..]
            .iter()
            .map(|n| n.cost_usd)
            .fold(f64::INFINITY, f64::min);
        let p = spec.transceiver_usd;
        Ok(nets
            .iter()
            .map(|n| {
                let gbps = spec.lane_gbps * n.bundle as f64;
                let (fabric, what) = if n.stardust {
                    (
                        "stardust".to_string(),
                        format!(
                            "Fabric Elements at {} of a ToR's price and power, unbundled links \
                             carried {} to a transceiver",
                            spec.fe_cost_ratio, n.bundle
                        ),
                    )
                } else {
                    (
                        format!("fat-tree-{gbps}g"),
                        "ToR-class switches".to_string(),
                    )
                };
                let rel = n.cost_usd / cheapest;
                Row {
                    fabric,
                    source: "Stardust §7, Fig. 11, App. A",
                    hosts,
                    host_gbps: spec.lane_gbps,
                    switches: (n.tors + n.switches) as usize,
                    switch_ports: ((n.tors + n.switches) * n.radix as u64) as usize,
                    switches_watts: n.devices_watts,
                    nic_watts: None,
                    total_watts: n.total_watts,
                    cost_vs_packet: Some([rel, rel]),
                    cost_usd: Some(n.cost_usd),
                    note: format!(
                        "{} tier(s) of {}-port {what} over {} ToRs/adapters of {} servers, \
                         {} links of {gbps}G, {} transceivers; fabric {:.1} kW; lookup table {:.1} kbit \
                         a switch (App. C); our prices: \
                         ToR ${}, transceivers ${}/${}/${} (25/50/100G), fibre ${}/fibre-m + \
                         ${}, DAC ${}; cost relative to the cheapest fat-tree",
                        n.tiers,
                        n.radix,
                        n.tors,
                        spec.servers_per_tor,
                        n.bundles,
                        n.transceivers,
                        n.fabric_watts / 1e3,
                        n.table_bits / 1e3,
                        spec.tor_usd,
                        p[0],
                        p[1],
                        p[2],
                        spec.fibre_usd_per_m,
                        spec.cable_connectors_usd,
                        spec.dac_usd,
                    ),
                }
            })
            .collect())
    }
}

/// Shoal's §5 and Fig. 11, with the packet network they compare against.
pub struct ShoalModel<'a>(pub &'a SizeSpec);

impl SizingModel for ShoalModel<'_> {
    fn name(&self) -> &'static str {
        "shoal"
    }

    fn rows(&self, hosts: usize) -> Result<Vec<Row>, SizingError> {
        let spec = self.0;
        let rack_spec = rack::ShoalSpec {
            nodes: hosts,
            ..spec.rack
        };
        let sizing = rack::size_rack(&rack_spec)?;
        let p = power::compare_power(&sizing.clos, hosts, rack_spec.channel_rate, &spec.power)?;
        let c = cost::cost(&p, &spec.cost)?;
        let row = |fabric: &str, n: &power::NetworkPower, cost: [f64; 2], note: String| Row {
            fabric: fabric.to_string(),
            source: "Shoal §5, Fig. 11",
            hosts,
            host_gbps: n.host_gbps,
            switches: n.switches,
            switch_ports: n.switches * n.switch.ports,
            switches_watts: n.switches_watts,
            nic_watts: Some(n.nic_watts),
            total_watts: n.total_watts,
            cost_vs_packet: Some(cost),
            cost_usd: None,
            note,
        };
        Ok(vec![
            row(
                "shoal",
                &p.shoal,
                c.by_nic_cost.map(|a| a.relative_cost),
                format!(
                    "{} circuit switches of {} x {} Gb/s in {} plane(s); cost at a circuit switch \
                     {:.0}% of a packet switch, NICs {}-{}x",
                    p.shoal.switches,
                    p.shoal.switch.ports,
                    p.shoal.switch.port_gbps,
                    p.shoal.planes,
                    c.circuit_to_packet * 100.0,
                    c.by_nic_cost[0].shoal_nic_cost,
                    c.by_nic_cost[1].shoal_nic_cost,
                ),
            ),
            row(
                "packet",
                &p.packet,
                [1.0, 1.0],
                format!(
                    "non-blocking folded Clos, {} tier(s) of {} x {} Gb/s packet switches",
                    p.packet.tiers, p.packet.switch.ports, p.packet.switch.port_gbps
                ),
            ),
        ])
    }
}

/// XFabric's port cost model (`shoal_xfabric::cost`): its parameters beside the host count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct XFabricSpec {
    /// d: internal ports per SoC, and crosspoints (XFabric §6.1: 6).
    pub ports_per_soc: usize,
    /// l: uplinks to the data center; `None`: XFabric §6.1's 8, or one per SoC in racks of
    /// fewer.
    pub uplinks: Option<usize>,
    pub cents_per_port: u64,
    pub milliwatts_per_port: u64,
}

impl Default for XFabricSpec {
    fn default() -> XFabricSpec {
        let price = PortPrice::default();
        XFabricSpec {
            ports_per_soc: RackSpec::default().ports_per_soc,
            uplinks: None,
            cents_per_port: price.cents_per_port,
            milliwatts_per_port: price.milliwatts_per_port,
        }
    }
}

/// XFabric §2 sizes a crosspoint ASIC at about 350 ports.
const XFABRIC_PORTS_PER_ASIC: u64 = 350;

/// XFabric prices 10 Gb/s electrical crosspoint ports.
const XFABRIC_PORT_GBPS: f64 = 10.0;

/// XFabric's rack (d crosspoints of n ports) and the fully reconfigurable folded-Clos circuit
/// switch it is compared with (its Table 1).
pub struct XFabricModel<'a>(pub &'a XFabricSpec);

impl SizingModel for XFabricModel<'_> {
    fn name(&self) -> &'static str {
        "xfabric"
    }

    fn rows(&self, hosts: usize) -> Result<Vec<Row>, SizingError> {
        let spec = self.0;
        let default_uplinks = RackSpec::default().uplinks.min(hosts);
        let rack = Rack::new(
            RackSpec {
                socs: hosts,
                ports_per_soc: spec.ports_per_soc,
                uplinks: spec.uplinks.unwrap_or(default_uplinks),
            },
            0,
        )
        .map_err(|e| {
            let key = match e {
                shoal_xfabric::Error::NoPorts | shoal_xfabric::Error::TooManyPorts { .. } => {
                    "xfabric_ports_per_soc"
                }
                shoal_xfabric::Error::NoUplinks | shoal_xfabric::Error::TooManyUplinks { .. } => {
                    "xfabric_uplinks"
                }
                _ => "nodes",
            };
            SizingError::new(key, format!("XFabric: {e}"))
        })?;
        let price = PortPrice {
            cents_per_port: spec.cents_per_port,
            milliwatts_per_port: spec.milliwatts_per_port,
        };
        let t = CostComparison::for_rack(&rack, price);
        let host_gbps = rack.ports_per_soc() as f64 * XFABRIC_PORT_GBPS;
        let row = |fabric: &str, f: &FabricCost, note: String| Row {
            fabric: fabric.to_string(),
            source: "XFabric §2, Table 1",
            hosts,
            host_gbps,
            switches: f.asics(XFABRIC_PORTS_PER_ASIC) as usize,
            switch_ports: f.ports as usize,
            switches_watts: f.watts(),
            nic_watts: None,
            total_watts: f.watts(),
            cost_vs_packet: None,
            cost_usd: Some(f.dollars()),
            note,
        };
        Ok(vec![
            row(
                "xfabric",
                &t.xfabric,
                format!(
                    "{} crosspoints of {} ports of 10 Gb/s (switches: ASICs of {} ports); the \
                     SoCs' own packet switches and the {}-port uplink crosspoint are not counted",
                    rack.ports_per_soc(),
                    rack.socs(),
                    XFABRIC_PORTS_PER_ASIC,
                    t.uplink_crosspoint.ports
                ),
            ),
            row(
                "xfabric-clos",
                &t.clos,
                format!(
                    "the fully reconfigurable circuit switch XFabric compares with: a folded \
                     Clos of crosspoints, {}x its ports",
                    t.clos_to_xfabric()
                ),
            ),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xfabric_answers_with_its_own_table_1() {
        let spec = XFabricSpec::default();
        let rows = XFabricModel(&spec).rows(256).unwrap();
        // XFabric §2 for 256 SoCs: about $4.6K and 0.4 kW against $23K and 2.2 kW, the Clos in
        // 22 ASICs of 350 ports.
        assert_eq!(rows[0].cost_usd, Some(4608.0));
        assert_eq!(rows[1].cost_usd, Some(23_040.0));
        assert_eq!(rows[1].switches, 22);
        assert_eq!((rows[1].total_watts / 100.0).round() / 10.0, 2.2);
    }

    #[test]
    fn small_racks_take_fewer_uplinks_unless_told() {
        let spec = XFabricSpec::default();
        assert!(XFabricModel(&spec).rows(4).is_ok());
        let told = XFabricSpec {
            uplinks: Some(8),
            ..spec
        };
        assert_eq!(
            XFabricModel(&told).rows(4).unwrap_err().key,
            "xfabric_uplinks"
        );
    }

    #[test]
    fn shoal_rows_are_shoal_then_its_packet_baseline() {
        let spec = SizeSpec::default();
        let rows = ShoalModel(&spec).rows(512).unwrap();
        let names: Vec<&str> = rows.iter().map(|r| r.fabric.as_str()).collect();
        assert_eq!(names, ["shoal", "packet"]);
        assert_eq!((rows[0].switches, rows[1].switches), (48, 24));
        assert_eq!(rows[1].cost_vs_packet, Some([1.0, 1.0]));
        let [lo, hi] = rows[0].cost_vs_packet.unwrap();
        assert!(lo < hi && hi < 1.0);
    }
}
