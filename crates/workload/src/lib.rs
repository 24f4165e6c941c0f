//! The workload layer: flows `(src, dst, bytes, start)` that any fabric can run, generated
//! deterministically from seeded streams (`shoal_base::rng::stream`). Fabrics pull flows from a
//! [`FlowSource`] in start order; generators stream them, so no run needs its flow list.
//!
//! - [`flow`]: the [`Flow`] record.
//! - [`source`]: the [`FlowSource`] trait fabrics pull from, and [`IterSource`] over a list.
//! - [`patterns`]: the microbenchmark patterns (permutation, incast, random pairs, periodic).
//! - [`sizes`]: flow sizes: fixed, clamped Pareto (§7.3), empirical CDFs from files.
//! - [`arrivals`]: all at once or Poisson, with the paper's load L = F/(R·N·τ).
//! - [`matrix`]: who talks to whom: uniform, permutation, incast, all-to-all, hotspot.
//! - [`dag`]: dependency-driven flows: a graph of sends and compute steps, each released when
//!   the tasks it waits for have finished (sends: delivered) plus its delay.
//! - [`collective`]: all-reduce (ring, halving-doubling), all-gather, reduce-scatter (ring) and
//!   all-to-all (direct) over a set of ranks, as a [`dag`] of sends, iterations apart by a
//!   compute time.
//! - [`chakra`]: ASTRA-sim's Chakra execution traces (one protobuf file per rank) read as a
//!   [`dag`]: compute, point-to-point and collective nodes.
//! - [`generator`]: [`OpenLoop`] and [`ClosedLoop`] sources combining the three.
//! - [`disagg`]: the disaggregated-rack workload of §7.4 (six application profiles).
//! - [`trace`]: replay of a CSV trace `src,dst,size_bytes,start_ns`.
//! - [`connection_matrix`]: htsim's connection-matrix (`.cm`) files.
//! - [`volumes`]: XFabric's §6.1 traffic volumes (clustered, random destinations,
//!   production-like, graph processing over a [`social`] graph): bytes between nodes, and between
//!   nodes and the world [`OUTSIDE`] the rack, as flows all starting at zero.

#![forbid(unsafe_code)]

pub mod arrivals;
pub mod chakra;
pub mod collective;
pub mod connection_matrix;
pub mod dag;
pub mod dag_file;
pub mod disagg;
pub mod flow;
pub mod generator;
pub mod matrix;
pub mod patterns;
pub mod sizes;
pub mod social;
pub mod source;
pub mod trace;
pub mod volumes;

pub use arrivals::{ArrivalError, Arrivals, load_of};
pub use disagg::{
    App, AppProfile, Disagg, DisaggError, DisaggSpec, DisaggSummary, PerRole, Role, TrafficClass,
};
pub use flow::{Flow, OUTSIDE};
pub use generator::{
    ClosedLoop, ClosedLoopSpec, ClosedLoopSummary, GeneratorError, OpenLoop, OpenLoopSpec,
    OpenLoopSummary,
};
pub use matrix::{Matrix, MatrixError, Pairs};
pub use sizes::{CdfError, EmpiricalCdf, SizeDist, SizeError};
pub use source::{FlowSource, IterSource};
pub use trace::{TraceError, TraceSource};
pub use volumes::{
    GraphProcessingParams, ProductionParams, VolumeError, clustered, clusters_of, graph_processing,
    production_like, random_destinations,
};
