//! What reconfigurability costs (§2 and Table 1). XFabric's argument is that d crosspoints of n
//! ports are affordable in a rack while a fully reconfigurable fabric is not: connecting all n·d
//! internal ports through one circuit switch needs a folded Clos of crosspoint ASICs, which takes
//! 5·n·d ports. Both cost and power scale with the port count, so the model counts ports and
//! prices them.
//!
//! Money is kept in cents and power in milliwatts, so the paper's figures check exactly.

use crate::rack::Rack;

/// The price of one crosspoint port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortPrice {
    pub cents_per_port: u64,
    pub milliwatts_per_port: u64,
}

impl Default for PortPrice {
    /// $3 and 0.28 W per port: the paper's figures for a 10 Gb/s electrical crosspoint.
    fn default() -> PortPrice {
        PortPrice {
            cents_per_port: 300,
            milliwatts_per_port: 280,
        }
    }
}

/// The ports of one switching fabric and what they cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FabricCost {
    pub ports: u64,
    pub cents: u64,
    pub milliwatts: u64,
}

impl FabricCost {
    /// `ports` crosspoint ports at `price`.
    pub fn of_ports(ports: u64, price: PortPrice) -> FabricCost {
        FabricCost {
            ports,
            cents: ports * price.cents_per_port,
            milliwatts: ports * price.milliwatts_per_port,
        }
    }

    /// The cost in dollars, for reports.
    pub fn dollars(&self) -> f64 {
        self.cents as f64 / 100.0
    }

    /// The power in watts, for reports.
    pub fn watts(&self) -> f64 {
        self.milliwatts as f64 / 1000.0
    }

    /// How many crosspoint ASICs of `ports_per_asic` ports provide these ports (the paper sizes a
    /// single ASIC at about 350 ports).
    pub fn asics(&self, ports_per_asic: u64) -> u64 {
        self.ports.div_ceil(ports_per_asic.max(1))
    }
}

/// Table 1: the internal switching of XFabric against a fully reconfigurable (OSA-style) fabric
/// built as a folded-Clos circuit switch, for the same rack.
///
/// Like the paper, the comparison counts the internal ports only. Both designs need the same
/// uplink crosspoint (n + l ports), which is given on its own in `uplink_crosspoint`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CostComparison {
    /// d internal crosspoints of n ports each.
    pub xfabric: FabricCost,
    /// A folded Clos providing n·d ports, which takes 5·n·d.
    pub clos: FabricCost,
    /// The uplink crosspoint, common to both.
    pub uplink_crosspoint: FabricCost,
}

impl CostComparison {
    /// Prices the rack's internal switching both ways.
    pub fn for_rack(rack: &Rack, price: PortPrice) -> CostComparison {
        let internal = (rack.socs() * rack.ports_per_soc()) as u64;
        CostComparison {
            xfabric: FabricCost::of_ports(internal, price),
            clos: FabricCost::of_ports(5 * internal, price),
            uplink_crosspoint: FabricCost::of_ports(rack.uplink_crosspoint_ports() as u64, price),
        }
    }

    /// How many times more power (and money) the Clos circuit switch takes.
    pub fn clos_to_xfabric(&self) -> f64 {
        self.clos.ports as f64 / self.xfabric.ports as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rack::RackSpec;

    fn compare(socs: usize) -> CostComparison {
        let rack = Rack::new(
            RackSpec {
                socs,
                ports_per_soc: 6,
                uplinks: 8,
            },
            0,
        )
        .unwrap();
        CostComparison::for_rack(&rack, PortPrice::default())
    }

    #[test]
    fn table_1_for_343_socs() {
        let t = compare(343);
        // OSA's fully reconfigurable fabric supports 2,058 ports (§6.1), through 5x as many.
        assert_eq!(t.xfabric.ports, 2058);
        assert_eq!(t.clos.ports, 10_290);
        assert_eq!(t.xfabric.cents, 617_400);
        assert_eq!(t.clos.cents, 3_087_000);
        assert_eq!(t.xfabric.milliwatts, 576_240);
        assert_eq!(t.clos.milliwatts, 2_881_200);
        assert_eq!(t.uplink_crosspoint.ports, 351);
        assert_eq!(t.clos_to_xfabric(), 5.0);
    }

    #[test]
    fn section_2_figures_for_256_socs() {
        // "0.4 kW versus 2.2 kW", "about $4.6K" against "$23K", 7,680 ports in 22 ASICs of 350.
        let t = compare(256);
        assert_eq!(t.xfabric.ports, 1536);
        assert_eq!(t.clos.ports, 7680);
        assert_eq!((t.xfabric.watts() / 100.0).round() / 10.0, 0.4);
        assert_eq!((t.clos.watts() / 100.0).round() / 10.0, 2.2);
        assert_eq!(t.xfabric.dollars(), 4608.0);
        assert_eq!(t.clos.dollars(), 23_040.0);
        assert_eq!(t.clos.asics(350), 22);
        // §2's span of "1.3 to 2.6 kW" at 0.14 to 0.28 W per port implies about 9,300 ports, not
        // 7,680; the 2.2 kW the paper compares against is the one that follows from 7,680.
        assert_eq!(t.clos.milliwatts, 2_150_400);
    }
}
