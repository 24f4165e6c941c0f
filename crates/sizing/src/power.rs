//! §5's power comparison: a Shoal rack against the packet-switched network (PSN) that gives
//! its hosts the same worst-case bandwidth, every input a field.
//!
//! §5, for 512 nodes: the PSN is a non-blocking folded Clos of 24 packet switches of 64 x 50
//! Gb/s at 350 W, with 50 Gb/s NICs; Shoal gives each node 100 Gb/s to make up for detouring
//! (§3.3.1 halves the worst case), so it has two planes of 24 circuit switches of 64 x 50 Gb/s
//! at 38.5 W. A 100 Gb/s NIC draws 12.4 W today and ten times less once integrated with the SoC;
//! Shoal's adds 11% (Appendix B): 1.37 W against the PSN's 0.62 W. Total: 2.55 kW against
//! 8.72 kW, 71% lower.
//!
//! The model keeps those inputs and recomputes the counts for any rack: the circuit switches
//! from the schedule crate's Clos (`crate::rack`), the packet switches from the folded Clos of
//! `crate::packet`.

use crate::error::{SizingError, check_range};
use crate::packet::{FoldedClos, folded_clos};
use crate::rack::ClosSizing;
use serde::Serialize;
use shoal_base::Rate;

/// A switch as §5 prices it: its ports, their rate, and its power.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SwitchPart {
    pub ports: usize,
    pub port_gbps: f64,
    pub watts: f64,
}

impl SwitchPart {
    /// §5 [47, 49]: today's packet switches "support 64 ports at 50 Gbps and consume a maximum
    /// of 350 W".
    pub const PACKET: SwitchPart = SwitchPart {
        ports: 64,
        port_gbps: 50.0,
        watts: 350.0,
    };

    /// §5, "extrapolating from today's circuit switches \[76\], we estimate that a 64×50 Gbps
    /// circuit switch would consume 38.5 W".
    pub const CIRCUIT: SwitchPart = SwitchPart {
        ports: 64,
        port_gbps: 50.0,
        watts: 38.5,
    };

    /// A part of the same technology with other ports or rates. §5 gives one radix and one
    /// rate; we scale the power with the I/O bandwidth (ports x rate), the first-order rule
    /// when SerDes and per-port logic dominate, as §5's area argument says they do.
    pub fn scaled(self, ports: usize, port_gbps: f64) -> SwitchPart {
        SwitchPart {
            ports,
            port_gbps,
            watts: self.watts * (ports as f64 * port_gbps) / (self.ports as f64 * self.port_gbps),
        }
    }
}

/// NIC power (§5): today's 100 Gb/s NIC, the saving of integrating it with the SoC, and what
/// Shoal's routing and congestion control add (Appendix B).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct NicPower {
    /// §5 \[77\]: "a typical power consumption of 12.4 W for today's 100 Gbps NICs".
    pub watts_per_100g: f64,
    /// §5: "the same 10x reduction in power consumption" as other SoC-integrated parts.
    pub soc_integration: f64,
    /// Appendix B: Shoal's extra functions draw "up to 11% of the power consumed by commercial
    /// ASIC NICs".
    pub shoal_overhead: f64,
}

impl Default for NicPower {
    fn default() -> NicPower {
        NicPower {
            watts_per_100g: 12.4,
            soc_integration: 10.0,
            shoal_overhead: 0.11,
        }
    }
}

impl NicPower {
    /// A packet network's NIC at `gbps`: §5's 0.62 W for 50 Gb/s is 12.4 W / 10 halved, so
    /// NIC power is taken to scale with its rate.
    pub fn packet_watts(&self, gbps: f64) -> f64 {
        self.watts_per_100g * gbps / 100.0 / self.soc_integration
    }

    /// Shoal's NIC at `gbps`: the same, plus its overhead (§5: 1.37 W at 100 Gb/s).
    pub fn shoal_watts(&self, gbps: f64) -> f64 {
        self.packet_watts(gbps) * (1.0 + self.shoal_overhead)
    }
}

/// The power inputs beside the rack's own sizes.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PowerSpec {
    /// Ports of the packet switches; `None`: the circuit switches' radix (§5 uses 64 for both).
    pub packet_switch_ports: Option<usize>,
    /// Rate of their ports; `None`: the PSN's host rate, one port per host (§5: 50 Gb/s).
    pub packet_port_gbps: Option<f64>,
    /// Power of one packet switch; `None`: [`SwitchPart::PACKET`] scaled to its ports and rate.
    pub packet_switch_watts: Option<f64>,
    /// Power of one circuit switch; `None`: [`SwitchPart::CIRCUIT`] scaled to the rack's radix
    /// and channel rate.
    pub circuit_switch_watts: Option<f64>,
    pub nic: NicPower,
    /// The PSN's host rate is Shoal's node rate over this: Shoal doubles the fabric's
    /// bandwidth to make up for detouring (§3.3.1, §5).
    pub detour_factor: f64,
}

impl Default for PowerSpec {
    fn default() -> PowerSpec {
        PowerSpec {
            packet_switch_ports: None,
            packet_port_gbps: None,
            packet_switch_watts: None,
            circuit_switch_watts: None,
            nic: NicPower::default(),
            detour_factor: 2.0,
        }
    }
}

/// One network's power.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct NetworkPower {
    pub hosts: usize,
    /// Each host's link rate, all channels or lanes together.
    pub host_gbps: f64,
    pub tiers: usize,
    pub switches: usize,
    /// One switch as used.
    pub switch: SwitchPart,
    /// Parallel copies of the Clos: Shoal's planes (one per channel), the PSN's lanes (hosts
    /// faster than one switch port).
    pub planes: usize,
    pub nic_watts: f64,
    pub switches_watts: f64,
    pub nics_watts: f64,
    pub total_watts: f64,
}

impl NetworkPower {
    fn new(
        hosts: usize,
        host_gbps: f64,
        tiers: usize,
        planes: usize,
        switches: usize,
        switch: SwitchPart,
        nic_watts: f64,
    ) -> NetworkPower {
        let switches_watts = switches as f64 * switch.watts;
        let nics_watts = hosts as f64 * nic_watts;
        NetworkPower {
            hosts,
            host_gbps,
            tiers,
            switches,
            switch,
            planes,
            nic_watts,
            switches_watts,
            nics_watts,
            total_watts: switches_watts + nics_watts,
        }
    }
}

/// Shoal against the PSN.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PowerComparison {
    pub shoal: NetworkPower,
    pub packet: NetworkPower,
    /// 1 − Shoal / PSN (§5: 71%).
    pub reduction: f64,
}

/// Checks the power inputs, naming the one at fault.
fn check(spec: &PowerSpec) -> Result<(), SizingError> {
    let nic = spec.nic;
    check_range("nic_watts_per_100g", nic.watts_per_100g, 0.0, 1e6)?;
    check_range("soc_integration", nic.soc_integration, 1e-6, 1e6)?;
    check_range("shoal_nic_overhead", nic.shoal_overhead, 0.0, 1e3)?;
    check_range("detour_factor", spec.detour_factor, 1.0, 1e3)?;
    if let Some(w) = spec.packet_switch_watts {
        check_range("packet_switch_watts", w, 0.0, 1e9)?;
    }
    if let Some(w) = spec.circuit_switch_watts {
        check_range("circuit_switch_watts", w, 0.0, 1e9)?;
    }
    if let Some(g) = spec.packet_port_gbps {
        check_range("packet_port_gbps", g, 1e-3, 1e6)?;
    }
    Ok(())
}

/// Compares a sized Shoal rack (`clos`, with `channel_rate` per channel) with the PSN that
/// gives its hosts the same worst-case bandwidth.
pub fn compare_power(
    clos: &ClosSizing,
    nodes: usize,
    channel_rate: Rate,
    spec: &PowerSpec,
) -> Result<PowerComparison, SizingError> {
    check(spec)?;
    let channel_gbps = channel_rate.as_gbps_f64();
    let node_gbps = clos.planes as f64 * channel_gbps;
    let mut circuit = SwitchPart::CIRCUIT.scaled(clos.ports, channel_gbps);
    if let Some(w) = spec.circuit_switch_watts {
        circuit.watts = w;
    }
    let shoal = NetworkPower::new(
        nodes,
        node_gbps,
        clos.tiers,
        clos.planes,
        clos.switches,
        circuit,
        spec.nic.shoal_watts(node_gbps),
    );

    let host_gbps = node_gbps / spec.detour_factor;
    let ports = spec.packet_switch_ports.unwrap_or(clos.ports);
    let port_gbps = spec.packet_port_gbps.unwrap_or(host_gbps);
    let lanes = (host_gbps / port_gbps).ceil().max(1.0);
    if lanes > 1e4 {
        return Err(SizingError::new(
            "packet_port_gbps",
            format!(
                "{port_gbps} Gb/s ports would take {lanes} parallel networks for {host_gbps} Gb/s hosts"
            ),
        ));
    }
    let lanes = lanes as usize;
    let FoldedClos {
        tiers, switches, ..
    } = folded_clos(nodes, ports)?;
    let mut packet_switch = SwitchPart::PACKET.scaled(ports, port_gbps);
    if let Some(w) = spec.packet_switch_watts {
        packet_switch.watts = w;
    }
    let packet = NetworkPower::new(
        nodes,
        host_gbps,
        tiers,
        lanes,
        lanes * switches,
        packet_switch,
        spec.nic.packet_watts(host_gbps),
    );
    Ok(PowerComparison {
        shoal,
        packet,
        reduction: 1.0 - shoal.total_watts / packet.total_watts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rack::{ShoalSpec, size_rack};

    fn section_5() -> PowerComparison {
        let spec = ShoalSpec::default();
        let clos = size_rack(&spec).unwrap().clos;
        compare_power(&clos, spec.nodes, spec.channel_rate, &PowerSpec::default()).unwrap()
    }

    /// Every number of §5's paragraph, to the paper's precision (it truncates 1.3764 W to
    /// 1.37 W, and 2.553 kW to 2.55 kW).
    #[test]
    fn section_5s_numbers() {
        let p = section_5();
        assert_eq!(p.packet.switches, 24);
        assert_eq!(p.shoal.switches, 48);
        assert!(
            (p.shoal.nic_watts - 1.37).abs() < 0.01,
            "{}",
            p.shoal.nic_watts
        );
        assert!(
            (p.packet.nic_watts - 0.62).abs() < 1e-9,
            "{}",
            p.packet.nic_watts
        );
        assert!((p.shoal.total_watts / 1e3 - 2.55).abs() < 0.01);
        assert!((p.packet.total_watts / 1e3 - 8.72).abs() < 0.01);
        assert_eq!((p.reduction * 100.0).round(), 71.0);
        assert_eq!(p.packet.host_gbps, 50.0);
        assert_eq!(p.shoal.host_gbps, 100.0);
    }

    /// §7.1's rack of 4 x 25 Gb/s channels has twice the planes of switches half as fast:
    /// the same bandwidth, so the same power.
    #[test]
    fn more_slower_channels_draw_the_same_power() {
        let spec = ShoalSpec {
            channels: 4,
            channel_rate: Rate::gbps(25),
            ..ShoalSpec::default()
        };
        let clos = size_rack(&spec).unwrap().clos;
        let p = compare_power(&clos, spec.nodes, spec.channel_rate, &PowerSpec::default()).unwrap();
        assert_eq!(p.shoal.switches, 96);
        assert!((p.shoal.total_watts - section_5().shoal.total_watts).abs() < 1e-9);
    }

    /// Per node the PSN's switches draw about nine times Shoal's (350 W against 2 x 38.5 W),
    /// so the reduction stays near 71% at every size both networks build in two tiers. A PSN
    /// of at most k hosts is one switch, while Shoal's fabric always has both stages (§3.2),
    /// so there the saving mostly goes.
    #[test]
    fn the_reduction_holds_at_other_sizes_but_not_below_one_switch() {
        let compare = |nodes: usize| {
            let spec = ShoalSpec {
                nodes,
                ..ShoalSpec::default()
            };
            let clos = size_rack(&spec).unwrap().clos;
            compare_power(&clos, nodes, spec.channel_rate, &PowerSpec::default()).unwrap()
        };
        for nodes in [128usize, 256, 1000, 1024, 2048] {
            let p = compare(nodes);
            assert_eq!(p.packet.tiers, 2);
            assert!(
                (0.70..0.72).contains(&p.reduction),
                "{nodes}: {}",
                p.reduction
            );
        }
        let p = compare(64);
        assert_eq!((p.packet.tiers, p.packet.switches), (1, 1));
        assert!(p.reduction < 0.3, "{}", p.reduction);
    }

    #[test]
    fn faster_hosts_than_packet_ports_take_parallel_networks() {
        let spec = ShoalSpec::default();
        let clos = size_rack(&spec).unwrap().clos;
        let p = compare_power(
            &clos,
            spec.nodes,
            spec.channel_rate,
            &PowerSpec {
                packet_port_gbps: Some(25.0),
                ..PowerSpec::default()
            },
        )
        .unwrap();
        assert_eq!((p.packet.planes, p.packet.switches), (2, 48));
        // Half-rate switches draw half: the PSN's switch power is unchanged.
        assert!((p.packet.switches_watts - 24.0 * 350.0).abs() < 1e-9);
    }

    #[test]
    fn impossible_inputs_name_their_key() {
        let spec = ShoalSpec::default();
        let clos = size_rack(&spec).unwrap().clos;
        let bad = |p: PowerSpec| {
            compare_power(&clos, spec.nodes, spec.channel_rate, &p)
                .unwrap_err()
                .key
        };
        let nic = NicPower::default();
        assert_eq!(
            bad(PowerSpec {
                circuit_switch_watts: Some(f64::NAN),
                ..PowerSpec::default()
            }),
            "circuit_switch_watts"
        );
        assert_eq!(
            bad(PowerSpec {
                nic: NicPower {
                    soc_integration: 0.0,
                    ..nic
                },
                ..PowerSpec::default()
            }),
            "soc_integration"
        );
        assert_eq!(
            bad(PowerSpec {
                packet_switch_ports: Some(3),
                ..PowerSpec::default()
            }),
            "packet_switch_ports"
        );
        assert_eq!(
            bad(PowerSpec {
                packet_port_gbps: Some(1e-3),
                ..PowerSpec::default()
            }),
            "packet_port_gbps"
        );
        assert_eq!(
            bad(PowerSpec {
                detour_factor: 0.5,
                ..PowerSpec::default()
            }),
            "detour_factor"
        );
    }
}
