//! Sizing, power and cost of a rack fabric: the half of a hardware architect's question the
//! simulator does not answer. Node count, channels, slot and guard band, cell size and switch
//! radix in; switches, epoch, latency, throughput, NIC memory, power and cost out, beside the
//! packet-switched network of the same hosts and bandwidth and the other fabrics' own models.
//!
//! - [`rack`]: the Shoal rack itself (§3.2, §3.4, §4.1): the Clos of each channel's plane, slot,
//!   guard band, epoch, worst-case latency and throughput, from the schedule crate's types.
//! - [`memory`]: the NIC's on-chip state (§4.2) against Appendix B, its worst-case buffer
//!   (§3.3.4), and the largest rack a memory holds.
//! - [`packet`]: the packet network's non-blocking folded Clos (§5).
//! - [`power`]: §5's power comparison.
//! - [`cost`]: Fig. 11's relative cost and §5's area argument, with the input the paper leaves
//!   out reconstructed.
//! - [`fabric`]: one table across fabrics; XFabric's port cost model and Stardust's Fig. 11
//!   ([`stardust`]) answer beside Shoal's.
//!
//! Every input has its paper's value as its default, written once, where it is defined, with
//! the section it comes from. The models are pure functions of their inputs; every input a
//! caller can get wrong is refused with its key and the reason ([`SizingError`]), never a panic.

#![forbid(unsafe_code)]

pub mod cost;
mod error;
pub mod fabric;
pub mod memory;
pub mod packet;
pub mod power;
pub mod rack;
pub mod stardust;

pub use error::SizingError;

use serde::Serialize;

/// Everything a sizing takes.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SizeSpec {
    pub rack: rack::ShoalSpec,
    pub widths: memory::StateWidths,
    /// The on-chip memory the NIC state is held against (Appendix B's Stratix V).
    pub on_chip_bits: u64,
    pub power: power::PowerSpec,
    pub cost: cost::CostSpec,
    pub xfabric: fabric::XFabricSpec,
    pub stardust: stardust::StardustCostSpec,
}

impl Default for SizeSpec {
    /// §5's rack and every paper default.
    fn default() -> SizeSpec {
        SizeSpec {
            rack: rack::ShoalSpec::default(),
            widths: memory::StateWidths::default(),
            on_chip_bits: memory::STRATIX_V_BRAM_BITS,
            power: power::PowerSpec::default(),
            cost: cost::CostSpec::default(),
            xfabric: fabric::XFabricSpec::default(),
            stardust: stardust::StardustCostSpec::default(),
        }
    }
}

/// The NIC's memory against the on-chip memory given.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MemoryReport {
    pub nic: memory::NicMemory,
    pub on_chip_bits: u64,
    /// The NIC state's share of it (Appendix B: 13% at 500 nodes).
    pub on_chip_share: f64,
    /// The largest rack whose NIC state fits it.
    pub max_nodes: Option<usize>,
}

/// A model that could not size the host count, and why; the other rows stand.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NotSized {
    pub model: &'static str,
    pub reason: String,
}

/// Everything `shoal size` reports.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    pub spec: SizeSpec,
    pub rack: rack::RackSizing,
    pub memory: MemoryReport,
    pub power: power::PowerComparison,
    pub cost: cost::CostReport,
    pub fabrics: Vec<fabric::Row>,
    pub not_sized: Vec<NotSized>,
}

/// Sizes the rack of `spec` and compares the fabrics for its node count.
pub fn size(spec: &SizeSpec) -> Result<Report, SizingError> {
    let rack = rack::size_rack(&spec.rack)?;
    let nodes = spec.rack.nodes;
    let nic = memory::nic_memory(nodes, spec.rack.cell_bytes, spec.widths)?;
    if spec.on_chip_bits == 0 {
        return Err(SizingError::new("on_chip_mbit", "must be above 0"));
    }
    let memory = MemoryReport {
        nic,
        on_chip_bits: spec.on_chip_bits,
        on_chip_share: nic.on_chip_bits as f64 / spec.on_chip_bits as f64,
        max_nodes: memory::max_nodes_for(spec.on_chip_bits, spec.rack.cell_bytes, spec.widths)?,
    };
    let power = power::compare_power(&rack.clos, nodes, spec.rack.channel_rate, &spec.power)?;
    let cost = cost::cost(&power, &spec.cost)?;
    let mut fabrics = Vec::new();
    let mut not_sized = Vec::new();
    for model in fabric::models(spec) {
        match model.rows(nodes) {
            Ok(rows) => fabrics.extend(rows),
            Err(e) => not_sized.push(NotSized {
                model: model.name(),
                reason: e.to_string(),
            }),
        }
    }
    Ok(Report {
        spec: *spec,
        rack,
        memory,
        power,
        cost,
        fabrics,
        not_sized,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use shoal_base::{Dur, Rate};
    use shoal_schedule::Arrangement;

    #[test]
    fn the_default_is_section_5s_rack_and_every_model_answers() {
        let r = size(&SizeSpec::default()).unwrap();
        assert_eq!(r.rack.clos.switches, 48);
        assert_eq!(r.power.packet.switches, 24);
        let names: Vec<&str> = r.fabrics.iter().map(|f| f.fabric.as_str()).collect();
        assert_eq!(
            names,
            [
                "shoal",
                "packet",
                "xfabric",
                "xfabric-clos",
                "stardust",
                "fat-tree-25g",
                "fat-tree-50g",
                "fat-tree-100g"
            ]
        );
        assert!(r.not_sized.is_empty());
    }

    #[test]
    fn a_model_that_cannot_size_the_rack_is_reported_and_the_others_stand() {
        // 8,192 nodes on 128-port switches: Shoal and the PSN size it, XFabric's model holds
        // at most 4,096 SoCs.
        let spec = SizeSpec {
            rack: rack::ShoalSpec {
                nodes: 8_192,
                switch_ports: 128,
                ..rack::ShoalSpec::default()
            },
            ..SizeSpec::default()
        };
        let r = size(&spec).unwrap();
        assert_eq!(r.fabrics.len(), 6);
        assert_eq!(r.not_sized[0].model, "xfabric");
        assert!(r.not_sized[0].reason.contains("4096"), "{:?}", r.not_sized);
    }

    fn any_f64() -> impl Strategy<Value = f64> {
        prop_oneof![
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(-1.0),
            Just(0.0),
            0.0..10.0f64,
            0.0..1e12f64,
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Whatever the inputs, a sizing is a report or an error naming one, never a panic.
        #[test]
        fn no_input_panics(
            nodes in prop_oneof![2usize..3_000, 0usize..70_000, Just(usize::MAX)],
            channels in prop_oneof![1usize..8, 0usize..300],
            gbps in prop_oneof![1u64..400, 0u64..200_000],
            bps in prop_oneof![Just(0u64), Just(1), Just(u64::MAX)],
            use_bps in any::<bool>(),
            switch_ports in prop_oneof![4usize..130, 0usize..70_000],
            cell_bytes in prop_oneof![16u32..256, 0u32..3_000_000],
            header_bytes in 0u32..100,
            slot in prop::option::of(prop_oneof![0u64..100_000, 0u64..u64::MAX]),
            guard in prop_oneof![0u64..10_000, 0u64..u64::MAX],
            given in any::<bool>(),
            tolerance in prop_oneof![0u64..100, 0u64..u64::MAX],
            cable in prop_oneof![0u64..10_000, 0u64..u64::MAX],
            delay in prop::option::of(prop_oneof![0u32..10, any::<u32>()]),
            cyclic in any::<bool>(),
            header_bits in 0u32..40,
            timestamp_bits in 0u32..40,
            on_chip_bits in any::<u64>(),
            watts in any_f64(),
            ratio in any_f64(),
            packet_ports in prop::option::of(0usize..70_000),
        ) {
            let rate = if use_bps { Rate(bps) } else { Rate::gbps(gbps) };
            let rack = rack::ShoalSpec {
                nodes,
                channels,
                channel_rate: rate,
                switch_ports,
                cell_bytes,
                header_bytes,
                overhead_bytes: 0,
                guard: if given {
                    rack::Guard::Given(Dur(guard))
                } else {
                    rack::Guard::Budget(rack::GuardBudget {
                        reconfiguration: Dur(guard),
                        cable_tolerance_mm: tolerance,
                        sync_precision: Dur(guard / 3),
                    })
                },
                slot: slot.map(Dur),
                latency: match delay {
                    Some(d) => rack::Latency::Slots(d),
                    None => rack::Latency::Physical { cable_mm: cable, per_switch: Dur(guard) },
                },
                arrangement: if cyclic { Arrangement::Cyclic } else { Arrangement::PropagationAware },
            };
            let spec = SizeSpec {
                rack,
                widths: memory::StateWidths { header_bits, timestamp_bits },
                on_chip_bits,
                power: power::PowerSpec {
                    circuit_switch_watts: Some(watts),
                    packet_port_gbps: Some(ratio),
                    packet_switch_ports: packet_ports,
                    ..power::PowerSpec::default()
                },
                cost: cost::CostSpec {
                    circuit_to_packet: Some(ratio),
                    ..cost::CostSpec::default()
                },
                xfabric: fabric::XFabricSpec {
                    uplinks: packet_ports,
                    ..fabric::XFabricSpec::default()
                },
                stardust: stardust::StardustCostSpec {
                    fe_cost_ratio: ratio,
                    tor_watts: watts,
                    ..stardust::StardustCostSpec::default()
                },
            };
            match size(&spec) {
                Ok(r) => prop_assert_eq!(r.rack.clos.switches % r.rack.clos.planes, 0),
                Err(e) => prop_assert!(!e.key.is_empty() && !e.reason.is_empty()),
            }
        }
    }
}
