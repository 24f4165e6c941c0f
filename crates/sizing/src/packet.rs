//! The packet-switched network Shoal is compared with (§5): a non-blocking folded Clos of
//! k-port packet switches.
//!
//! A folded Clos of `t` tiers of k-port switches connects up to `2·(k/2)^t` hosts without
//! blocking. Every tier but the top gives half its ports to the tier below and half to the
//! one above, so it needs `ceil(H/(k/2))` switches for H hosts; the top tier turns all k ports
//! down and needs `ceil(H/k)`. That gives the textbook counts (a k-ary fat-tree, `t = 3`,
//! `H = k³/4`: `5k²/4` switches) and §5's "24 such switches" for 512 hosts on 64 ports.
//!
//! Shoal's own Clos is not counted here but by the schedule crate, which builds it: with every
//! leaf-spine pair joined by the same number of links it sometimes needs more spines than this
//! count, never fewer (`tests::shoal_never_needs_fewer_switches_per_plane`).

use crate::error::SizingError;
use serde::Serialize;

/// Tiers and switches of one folded Clos.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FoldedClos {
    pub hosts: usize,
    pub ports: usize,
    pub tiers: usize,
    pub switches: usize,
}

/// More tiers than any network has; bounds the search.
const MAX_TIERS: usize = 16;

/// The smallest non-blocking folded Clos of `ports`-port switches for `hosts` hosts.
pub fn folded_clos(hosts: usize, ports: usize) -> Result<FoldedClos, SizingError> {
    if ports < 4 || !ports.is_multiple_of(2) || ports > u16::MAX as usize {
        return Err(SizingError::new(
            "packet_switch_ports",
            format!("an even number from 4 to 65534 (half down, half up), got {ports}"),
        ));
    }
    if hosts < 2 {
        return Err(SizingError::new(
            "nodes",
            format!("at least 2 hosts, got {hosts}"),
        ));
    }
    let half = ports / 2;
    let mut capacity = ports;
    let mut tiers = 1;
    while capacity < hosts {
        tiers += 1;
        capacity = match capacity.checked_mul(half) {
            Some(c) if tiers <= MAX_TIERS => c,
            _ => {
                return Err(SizingError::new(
                    "nodes",
                    format!(
                        "{hosts} hosts need more than {MAX_TIERS} tiers of {ports}-port switches"
                    ),
                ));
            }
        };
    }
    Ok(FoldedClos {
        hosts,
        ports,
        tiers,
        switches: (tiers - 1) * hosts.div_ceil(half) + hosts.div_ceil(ports),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use shoal_schedule::ClosShape;

    #[test]
    fn section_5s_network_is_24_switches_in_two_tiers() {
        let c = folded_clos(512, 64).unwrap();
        assert_eq!((c.tiers, c.switches), (2, 24));
    }

    #[test]
    fn full_fat_trees_have_five_k_squared_over_four_switches() {
        for k in [4usize, 8, 16, 24, 48, 64] {
            let c = folded_clos(k * k * k / 4, k).unwrap();
            assert_eq!((c.tiers, c.switches), (3, 5 * k * k / 4), "k = {k}");
        }
    }

    #[test]
    fn one_switch_serves_up_to_k_hosts() {
        assert_eq!(folded_clos(64, 64).unwrap().switches, 1);
        assert_eq!(folded_clos(65, 64).unwrap().tiers, 2);
        // k²/2 hosts still fit in two tiers, one more needs three.
        assert_eq!(folded_clos(2048, 64).unwrap().tiers, 2);
        assert_eq!(folded_clos(2049, 64).unwrap().tiers, 3);
    }

    #[test]
    fn impossible_sizes_name_their_key() {
        assert_eq!(folded_clos(512, 0).unwrap_err().key, "packet_switch_ports");
        assert_eq!(folded_clos(512, 7).unwrap_err().key, "packet_switch_ports");
        assert_eq!(folded_clos(1, 64).unwrap_err().key, "nodes");
        assert_eq!(folded_clos(usize::MAX, 4).unwrap_err().key, "nodes");
    }

    proptest! {
        /// Every switch port the count provides is needed: the ports of a t-tier Clos are at
        /// least the hosts' links at every tier boundary (2·H·(t − 1) + H), and it wastes less
        /// than a switch per tier.
        #[test]
        fn the_count_is_the_ports_the_hosts_need(hosts in 2usize..100_000, half in 2usize..40) {
            let k = 2 * half;
            let c = folded_clos(hosts, k).unwrap();
            let needed = hosts * (2 * (c.tiers - 1) + 1);
            prop_assert!(c.switches * k >= needed);
            prop_assert!(c.switches * k < needed + c.tiers * k);
        }

        #[test]
        fn shoal_never_needs_fewer_switches_per_plane(half in 2usize..40, n in 2usize..3_200) {
            let k = 2 * half;
            prop_assume!(n <= k * k / 2);
            let shoal = ClosShape::new(n, 1, k).unwrap().switches_per_plane();
            let packet = folded_clos(n, k).unwrap();
            prop_assert!(shoal >= packet.switches);
            // Equal when the leaves fill and the spines' share of each leaf's uplinks is a
            // whole number of links, as in §5 (512 nodes on 64 ports: 8 spines, 4 links each).
            if n > k && n.is_multiple_of(k) && half.is_multiple_of(n / k) {
                prop_assert_eq!(shoal, packet.switches);
            }
        }
    }
}
