//! The order in which a fabric schedule visits its permutation columns.
//!
//! Every arrangement here is a sequence of cyclic shifts: in a column with offset `d`, node `i`
//! transmits to `(i + d) mod M`. The modulus `M` is the node count, except for the
//! propagation-aware arrangement of an even node count, which schedules one virtual node more
//! (Appendix A) so that `M` is odd; transmissions to or from the virtual node become idle slots.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How the permutation columns of one epoch are ordered.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Arrangement {
    /// The schedule of the paper's Fig. 3: column `t = 1..N-1` has offset `t`. Every ordered pair
    /// is served once per epoch, but `i -> j` and `j -> i` can be as little as one column apart
    /// (zero for the self-inverse offset `N/2` of an even `N`), so it absorbs almost no
    /// propagation delay.
    #[default]
    Cyclic,
    /// Appendix A (Fig. 19): the first `(M-1)/2` columns keep offsets `1..`, the rest run in
    /// reverse order, so `i -> j` and `j -> i` are always exactly `(M-1)/2` columns apart. For an
    /// even `N`, `M = N + 1` and each node idles one column per epoch (a throughput cost of 1/N).
    PropagationAware,
}

impl Arrangement {
    pub const ALL: [Arrangement; 2] = [Arrangement::Cyclic, Arrangement::PropagationAware];

    /// The name used on the command line and in reports.
    pub const fn name(self) -> &'static str {
        match self {
            Arrangement::Cyclic => "cyclic",
            Arrangement::PropagationAware => "propagation-aware",
        }
    }

    /// The modulus `M` of the shifts: `N`, or `N + 1` when a virtual node is added.
    pub(crate) const fn modulus(self, nodes: usize) -> usize {
        match self {
            Arrangement::PropagationAware if nodes.is_multiple_of(2) => nodes + 1,
            _ => nodes,
        }
    }

    /// Columns per epoch: `M - 1` (so `N - 1`, or `N` for the propagation-aware even case).
    pub const fn columns(self, nodes: usize) -> usize {
        self.modulus(nodes) - 1
    }

    /// The shift offset (in `1..M`) of the column at 0-based position `p < columns`.
    pub(crate) const fn offset_at(self, nodes: usize, position: usize) -> usize {
        let modulus = self.modulus(nodes);
        match self {
            Arrangement::Cyclic => position + 1,
            Arrangement::PropagationAware => {
                let half = (modulus - 1) / 2;
                if position < half {
                    position + 1
                } else {
                    // 1-based position half + q carries offset M - q.
                    modulus - (position - half + 1)
                }
            }
        }
    }
}

impl fmt::Display for Arrangement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The name given was neither `cyclic` nor `propagation-aware`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown arrangement {0:?}: expected \"cyclic\" or \"propagation-aware\"")]
pub struct UnknownArrangement(pub String);

impl FromStr for Arrangement {
    type Err = UnknownArrangement;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Arrangement::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| UnknownArrangement(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn propagation_aware_offsets_for_seven_nodes_reverse_the_second_half() {
        let offsets: Vec<usize> = (0..6)
            .map(|p| Arrangement::PropagationAware.offset_at(7, p))
            .collect();
        assert_eq!(offsets, [1, 2, 3, 6, 5, 4]);
        let cyclic: Vec<usize> = (0..6)
            .map(|p| Arrangement::Cyclic.offset_at(7, p))
            .collect();
        assert_eq!(cyclic, [1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn propagation_aware_with_even_nodes_uses_one_virtual_node() {
        assert_eq!(Arrangement::PropagationAware.columns(8), 8);
        let offsets: Vec<usize> = (0..8)
            .map(|p| Arrangement::PropagationAware.offset_at(8, p))
            .collect();
        assert_eq!(offsets, [1, 2, 3, 4, 8, 7, 6, 5]);
    }

    #[test]
    fn names_round_trip() {
        for a in Arrangement::ALL {
            assert_eq!(a.name().parse::<Arrangement>(), Ok(a));
        }
        assert!("fig3".parse::<Arrangement>().is_err());
    }
}
