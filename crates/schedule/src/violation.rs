//! What the verifier found wrong, and where, as one sentence per case.

use crate::arrangement::Arrangement;
use crate::clos::Path;
use crate::ids::{PortId, Slot, SwitchId};
use shoal_base::{ChannelId, NodeId};

/// Why a schedule or its switch configuration is wrong, and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Violation {
    #[error("the fabric schedule has {schedule} {what} but the Clos was built for {clos}")]
    ShapeMismatch {
        what: &'static str,
        schedule: usize,
        clos: usize,
    },
    #[error(
        "the {arrangement} schedule of {nodes} nodes on {channels} channels should last {expected} \
         slots per epoch but lasts {actual}"
    )]
    EpochLength {
        arrangement: Arrangement,
        nodes: usize,
        channels: usize,
        expected: u64,
        actual: u64,
    },
    #[error(
        "in {slot} on channel {}, {src} transmits to {dst}, which is not a node of the rack",
        channel.0
    )]
    PeerOutOfRange {
        slot: Slot,
        channel: ChannelId,
        src: NodeId,
        dst: NodeId,
    },
    #[error("in {slot} on channel {}, {node} transmits to itself", channel.0)]
    SelfTransmission {
        slot: Slot,
        channel: ChannelId,
        node: NodeId,
    },
    #[error(
        "in {slot} on channel {}, {receiver} receives from both {first} and {second}",
        channel.0
    )]
    ReceivesTwice {
        slot: Slot,
        channel: ChannelId,
        receiver: NodeId,
        first: NodeId,
        second: NodeId,
    },
    #[error(
        "the pair {src} -> {dst} is served twice per epoch: in {} on channel {} and in {} on \
         channel {}", first.0, first.1.0, second.0, second.1.0
    )]
    PairServedTwice {
        src: NodeId,
        dst: NodeId,
        first: (Slot, ChannelId),
        second: (Slot, ChannelId),
    },
    #[error("the pair {src} -> {dst} is never served in an epoch")]
    PairMissing { src: NodeId, dst: NodeId },
    #[error(
        "in {slot} on channel {}, the schedule says {node} receives from {expected:?} but its \
         `from` query answers {reported:?}", channel.0
    )]
    FromDisagrees {
        slot: Slot,
        channel: ChannelId,
        node: NodeId,
        expected: Option<NodeId>,
        reported: Option<NodeId>,
    },
    #[error(
        "the pair {src} -> {dst} is served in {} on channel {} but `slot_of` answers {reported:?}",
        served.0, served.1.0
    )]
    SlotOfDisagrees {
        src: NodeId,
        dst: NodeId,
        served: (Slot, ChannelId),
        reported: Option<(Slot, ChannelId)>,
    },
    #[error("the schedule reports a minimum turnaround of {reported} slots but it is {measured}")]
    TurnaroundMisreported { reported: u32, measured: u32 },
    #[error(
        "{dst} -> {src} comes only {turnaround} slots after {src} -> {dst}, less than the \
         {delay_slots}-slot delay the schedule must absorb"
    )]
    TurnaroundTooShort {
        src: NodeId,
        dst: NodeId,
        turnaround: u32,
        delay_slots: u32,
    },
    #[error("{switch} in {slot} has a port map of {actual} ports, but the switch has {expected}")]
    PortMapSize {
        switch: SwitchId,
        slot: Slot,
        expected: usize,
        actual: usize,
    },
    #[error("{switch} in {slot} connects input {input} to output {output}, which does not exist")]
    PortOutOfRange {
        switch: SwitchId,
        slot: Slot,
        input: PortId,
        output: PortId,
    },
    #[error("{switch} in {slot} connects both input {first} and input {second} to output {output}")]
    OutputUsedTwice {
        switch: SwitchId,
        slot: Slot,
        output: PortId,
        first: PortId,
        second: PortId,
    },
    #[error(
        "{switch} in {slot} connects {input} to {output}: a leaf must turn node-facing ports \
         towards spines and spine-facing ports towards nodes, so every cell crosses both stages"
    )]
    WrongStage {
        switch: SwitchId,
        slot: Slot,
        input: PortId,
        output: PortId,
    },
    #[error(
        "in {slot} on channel {}, {src} idles but {switch} connects its input {port}",
        channel.0
    )]
    IdleConnected {
        slot: Slot,
        channel: ChannelId,
        src: NodeId,
        switch: SwitchId,
        port: PortId,
    },
    #[error(
        "in {slot} on channel {}, the cell of {src} for {expected} reaches {switch} on {port}, \
         which is not connected", channel.0
    )]
    PathBroken {
        slot: Slot,
        channel: ChannelId,
        src: NodeId,
        expected: NodeId,
        switch: SwitchId,
        port: PortId,
    },
    #[error(
        "in {slot} on channel {}, the cell of {src} leaves {switch} on {port}, which is not cabled \
         to any leaf or node", channel.0
    )]
    LeadsNowhere {
        slot: Slot,
        channel: ChannelId,
        src: NodeId,
        switch: SwitchId,
        port: PortId,
    },
    #[error(
        "in {slot} on channel {}, the cell of {src} is delivered to {reached} through the switches \
         but the schedule sends it to {expected}", channel.0
    )]
    Misdelivered {
        slot: Slot,
        channel: ChannelId,
        src: NodeId,
        expected: NodeId,
        reached: NodeId,
    },
    #[error(
        "{switch} in {slot} connects input {input} to output {output}, but no scheduled cell uses \
         that circuit"
    )]
    DanglingCircuit {
        switch: SwitchId,
        slot: Slot,
        input: PortId,
        output: PortId,
    },
    #[error(
        "in {slot} on channel {}, the published path of {src}'s cell is {published:?} but the \
         port maps carry it along {traced:?}", channel.0
    )]
    PathDisagrees {
        slot: Slot,
        channel: ChannelId,
        src: NodeId,
        published: Option<Path>,
        traced: Option<Path>,
    },
}
