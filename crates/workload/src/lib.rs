//! The workload layer: flows `(src, dst, bytes, start)` that any fabric can run, generated
//! deterministically from a seeded stream. Fabrics pull flows from a [`FlowSource`] in start order.

pub mod flow;
pub mod patterns;
pub mod source;

pub use flow::Flow;
pub use source::{FlowSource, IterSource};
