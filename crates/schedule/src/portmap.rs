//! One switch's configuration in one slot: which input port is connected to which output port.

use crate::ids::{PortId, SwitchId, SwitchKind};
use serde::Serialize;
use serde::ser::{SerializeSeq, Serializer};
use shoal_base::ChannelId;

const UNCONNECTED: u16 = u16::MAX;

/// The circuits of one switch in one slot: for each input port, the output port it feeds, if any.
///
/// A port map as built may still be wrong (two inputs on one output); the verifier checks that.
/// Serialized as one array entry per input port, `null` for an unconnected input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortMap {
    out: Vec<u16>,
}

impl PortMap {
    /// A switch of `ports` ports with no circuit set up.
    pub(crate) fn unconnected(ports: usize) -> PortMap {
        PortMap {
            out: vec![UNCONNECTED; ports],
        }
    }

    /// Sets up the circuit `input -> output` (overwriting what `input` fed before).
    pub(crate) fn connect(&mut self, input: PortId, output: PortId) {
        self.out[input.idx()] = output.0;
    }

    #[cfg(test)]
    pub(crate) fn disconnect(&mut self, input: PortId) {
        self.out[input.idx()] = UNCONNECTED;
    }

    /// Number of ports of the switch.
    pub fn ports(&self) -> usize {
        self.out.len()
    }

    /// The output port `input` is connected to; `None` if it is unconnected or not a port.
    pub fn output(&self, input: PortId) -> Option<PortId> {
        match self.out.get(input.idx()) {
            Some(&o) if o != UNCONNECTED => Some(PortId(o)),
            _ => None,
        }
    }

    /// Every circuit `(input, output)`, by increasing input port.
    pub fn connections(&self) -> impl Iterator<Item = (PortId, PortId)> + '_ {
        self.out
            .iter()
            .enumerate()
            .filter(|&(_, &o)| o != UNCONNECTED)
            .map(|(i, &o)| (PortId(i as u16), PortId(o)))
    }

    /// Number of circuits set up.
    pub fn connected(&self) -> usize {
        self.out.iter().filter(|&&o| o != UNCONNECTED).count()
    }
}

impl Serialize for PortMap {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.out.len()))?;
        for i in 0..self.out.len() {
            seq.serialize_element(&self.output(PortId(i as u16)).map(|p| p.0))?;
        }
        seq.end()
    }
}

/// The port maps of every switch of one plane in one slot: what a plane is configured to at once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanePortMaps {
    pub(crate) plane: ChannelId,
    pub(crate) leaves: Vec<PortMap>,
    pub(crate) spines: Vec<PortMap>,
}

impl PlanePortMaps {
    pub fn plane(&self) -> ChannelId {
        self.plane
    }

    /// The map of `kind` in this plane; `None` if the plane has no such switch.
    pub fn get(&self, kind: SwitchKind) -> Option<&PortMap> {
        match kind {
            SwitchKind::Leaf(l) => self.leaves.get(l.idx()),
            SwitchKind::Spine(s) => self.spines.get(s.idx()),
        }
    }

    /// Every switch of the plane with its map: leaves first, then spines, by index.
    pub fn iter(&self) -> impl Iterator<Item = (SwitchId, &PortMap)> + '_ {
        let plane = self.plane;
        let leaves = self
            .leaves
            .iter()
            .enumerate()
            .map(move |(l, m)| (SwitchId::leaf(plane, crate::ids::LeafId(l as u16)), m));
        let spines = self
            .spines
            .iter()
            .enumerate()
            .map(move |(s, m)| (SwitchId::spine(plane, crate::ids::SpineId(s as u16)), m));
        leaves.chain(spines)
    }

    #[cfg(test)]
    pub(crate) fn get_mut(&mut self, kind: SwitchKind) -> &mut PortMap {
        match kind {
            SwitchKind::Leaf(l) => &mut self.leaves[l.idx()],
            SwitchKind::Spine(s) => &mut self.spines[s.idx()],
        }
    }
}
