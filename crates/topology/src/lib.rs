//! Network topologies shared by the packet and cell fabrics: leaf-spine, k-ary fat-tree, 3D
//! torus, direct networks wired link by link (a reconfigurable rack's circuits), the cell
//! Clos of Stardust (edge devices with many unbundled links into the fabric) and Aquila's
//! Dragonfly of TiNs, each built
//! from a plain parameter struct into one validated, immutable [`Topology`].
//!
//! A `Topology` is what a discrete-event simulator walks in its hot loop, so every query is an
//! index into a flat array: node `n`'s ports are one contiguous slice of links (compressed sparse
//! rows), and the routing tables hold, for every (node, destination host) row, the hop distance
//! and the ECMP set of ports on a shortest path. The tables are computed once, by a BFS from
//! every host, when the graph is built; queries never hash or allocate.
//!
//! Conventions every builder follows, because simulators hash flows over port numbers:
//! - hosts are nodes `0..hosts()`, switches follow;
//! - a switch lists its down ports (towards hosts) before its up ports;
//! - a torus host lists +x, -x, +y, -y, +z, -z (see [`torus`] for dimensions of size 1 and 2).
//!
//! ```
//! use shoal_base::{Dur, Rate};
//! use shoal_topology::FatTree;
//!
//! // The 432-host fat-tree used to cross-validate against htsim.
//! let t = FatTree { k: 12, oversubscription: 1, rate: Rate::gbps(10), link_delay: Dur::from_us(1) }
//!     .build()
//!     .unwrap();
//! assert_eq!(t.hosts(), 432);
//! assert_eq!(t.shortest_paths(0, 431), 36);
//! // A host's only port, then any of the edge switch's six up ports.
//! assert_eq!(t.next_hops(0, 431), &[0]);
//! let edge = t.link(0, 0).peer;
//! assert_eq!(t.next_hops(edge, 431), &[6, 7, 8, 9, 10, 11]);
//! ```
//!
//! Bad builder parameters come back as a [`TopologyError`] naming the parameter and the reason;
//! queries with out-of-range indices are caller bugs and panic.

#![forbid(unsafe_code)]

pub mod cell_clos;
pub mod direct;
pub mod dragonfly;
pub mod fat_tree;
pub mod graph;
pub mod leaf_spine;
mod routing;
pub mod torus;

pub use cell_clos::CellClos;
pub use direct::Direct;
pub use dragonfly::{Dragonfly, DragonflyPort};
pub use fat_tree::FatTree;
pub use graph::{Kind, Link, NodeIdx, PortIdx, Topology, TopologyError};
pub use leaf_spine::LeafSpine;
pub use torus::Torus;
