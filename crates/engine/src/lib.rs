//! Engines drive models; they contain no model. Each engine owns time and the order in which
//! things happen, and talks to the model through small traits, so the same node logic runs under
//! a simulator, a test harness or the live emulator.
//!
//! - [`des`]: discrete-event time in picoseconds, for asynchronous fabrics (packet switches,
//!   Stardust, Aquila): a monotone queue of small `Copy` events, ties in a deterministic order.
//! - [`fluid`]: the flow-level engine: flows as fluids sharing links max-min fairly, for
//!   topology studies (XFabric's rack).
//! - [`slotted`]: time in whole slots, for fabrics on a static schedule (Shoal). Every slot each
//!   node receives what was sent `delay` slots ago, then transmits one cell per channel.

#![forbid(unsafe_code)]

pub mod des;
pub mod fluid;
pub mod slotted;

pub use des::EventQueue;
pub use fluid::FluidNet;
pub use slotted::{IDLE, Medium, SlotSchedule, SlottedEndpoint, SlottedEngine};
