//! The workload layer: flows `(src, dst, bytes, start)` that any fabric can run, generated
//! deterministically from a seeded stream. Fabrics consume flows in start order.

pub mod flow;
pub mod patterns;

pub use flow::Flow;
