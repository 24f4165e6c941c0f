//! A fabric as a plug-in: it owns its scenario table (the raw keys, their defaults written once
//! with the paper section they come from, every rule that checks them), its resolved form
//! written back as TOML, and how it builds a [`Fabric`]. The scenario crate keeps what every
//! fabric shares (`[scenario]`, `[workload]`, `[run]`, `[sweep]`) and finds the fabric that
//! `scenario.fabric` names in its registry, the one list of fabrics.

use crate::Fabric;
use crate::config::{ConfigError, Keys, TableError, TomlOut};
use shoal_base::{Dur, Rate};
use shoal_metrics::IdealFct;
use std::any::Any;
use std::fmt;

/// What a fabric's resolver gets from the scenario file.
pub struct Resolving<'a> {
    /// The name `scenario.fabric` gave (one of [`FabricKind::names`]).
    pub fabric: &'a str,
    /// The whole scenario text, for [`crate::config::read_table`].
    pub text: &'a str,
    /// Which keys the file gives, and the shared checks.
    pub keys: &'a Keys<'a>,
    /// The run seed (random parts of the fabric, such as failed nodes, derive from it).
    pub seed: u64,
}

/// A kind of fabric a scenario can name.
pub trait FabricKind: Sync {
    /// The values of `scenario.fabric` that select it ("shoal"; "dctcp", "ndp", ...).
    fn names(&self) -> &'static [&'static str];
    /// The top-level tables it reads ("rack", "network"): a file that names another fabric
    /// and gives one of these is refused.
    fn tables(&self) -> &'static [&'static str];
    /// Reads and checks its tables; every default is filled in.
    fn resolve(&self, input: &Resolving<'_>) -> Result<Box<dyn ResolvedFabric>, TableError>;
}

/// A fabric's configuration, resolved and validated: what the shared layers need to know of
/// it, and how to build it.
pub trait ResolvedFabric: AnySpec + fmt::Debug + Send + Sync {
    /// The name runs are reported under ("shoal", "dctcp", ...).
    fn name(&self) -> &str;
    /// Nodes (hosts) the workload spreads over.
    fn nodes(&self) -> usize;
    /// A node's rate, the R of a load (§7.3: L = F / (R · N · τ)).
    fn node_rate(&self) -> Rate;
    /// What a lone flow takes on the idle fabric, for slowdowns.
    fn ideal_fct(&self) -> Result<IdealFct, ConfigError>;
    /// The unit of its queue statistics ("cells", "packets").
    fn queue_unit(&self) -> &'static str;
    /// The fabric changes state only at multiples of this (a slot): sampling more often is
    /// refused. `None` for event-driven fabrics.
    fn tick(&self) -> Option<Dur> {
        None
    }
    /// The same fabric for another run seed (random parts drawn again).
    fn reseed(&mut self, seed: u64) {
        let _ = seed;
    }
    /// Its tables with every key, so that loading them gives this configuration again.
    fn write_toml(&self, out: &mut TomlOut);
    /// The fabric, ready to run.
    fn build(&self) -> Result<Box<dyn Fabric>, ConfigError>;
    /// The levels at which its nodes fall into groups (hosts by leaf, pod, TiN or Fabric
    /// Adapter), the default level first, for placing collective jobs packed into groups or
    /// spread over them. Empty (the default) where every node stands alike to every other, as
    /// on one switch: all the nodes are then one group.
    fn node_groups(&self) -> Vec<NodeGroups> {
        Vec::new()
    }
}

/// One level of a fabric's hierarchy and the group of each node at that level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeGroups {
    /// The level as a scenario names it ("leaf", "pod", "tin", "fa").
    pub level: &'static str,
    /// Per node id, the index of its group (groups numbered from 0 in node order).
    pub group: Vec<u32>,
}

impl NodeGroups {
    /// `nodes` nodes in consecutive blocks of `size` (the last block may be short): every
    /// fabric here numbers its hosts group by group.
    pub fn blocks(level: &'static str, nodes: usize, size: usize) -> NodeGroups {
        let size = size.max(1);
        NodeGroups {
            level,
            group: (0..nodes).map(|n| (n / size) as u32).collect(),
        }
    }
}

/// Cloning, comparing and downcasting a boxed [`ResolvedFabric`]; implemented for every
/// configuration type that is `Clone + PartialEq`.
pub trait AnySpec {
    fn clone_box(&self) -> Box<dyn ResolvedFabric>;
    fn same(&self, other: &dyn ResolvedFabric) -> bool;
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T: ResolvedFabric + Clone + PartialEq + 'static> AnySpec for T {
    fn clone_box(&self) -> Box<dyn ResolvedFabric> {
        Box::new(self.clone())
    }

    fn same(&self, other: &dyn ResolvedFabric) -> bool {
        other.as_any().downcast_ref::<T>() == Some(self)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

impl Clone for Box<dyn ResolvedFabric> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

impl PartialEq for dyn ResolvedFabric {
    fn eq(&self, other: &Self) -> bool {
        self.same(other)
    }
}
