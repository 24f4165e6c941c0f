//! Engines drive models; they contain no model. Each engine owns time and the order in which
//! things happen, and talks to the model through small traits, so the same node logic runs under
//! a simulator, a test harness or the live emulator.
//!
//! - [`slotted`]: time in whole slots, for fabrics on a static schedule (Shoal). Every slot each
//!   node receives what was sent `delay` slots ago, then transmits one cell per channel.

pub mod slotted;

pub use slotted::{IDLE, Medium, SlotSchedule, SlottedEndpoint, SlottedEngine};
