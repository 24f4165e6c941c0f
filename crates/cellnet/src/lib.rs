//! The machinery of a cell fabric's data path laid out for its loop (DESIGN.md principle 1;
//! `docs/design/cell-datapath.md`), shared by the fabrics whose data paths move cells:
//! Stardust's and Aquila's. No model lives here, only storage and timing:
//!
//! - [`Handles`]: `u32` handles of a struct-of-arrays store (the fabric keeps the columns),
//!   reused last-freed first so that a steady state touches a small, fixed set of slots;
//! - [`Fifos`]: any number of FIFOs of handles, linked through one array indexed by handle,
//!   for a handle that is in at most one queue at a time (a cell on a link or in an output);
//! - [`Ring`]: a growable ring of small `Copy` records (credits, requests, statuses);
//! - [`Links`]: timed links, one record each (busy until, serialization, delay), with
//!   optional link-level credits per virtual channel;
//! - [`Landings`]: link-level credits in flight, each with the time it lands at the sender,
//!   read by the sender when it next considers sending instead of an event per credit.
//!
//! Everything is deterministic (no hashing, no unordered iteration) and allocation-free once
//! the structures have grown to the run's high-water mark.

#![forbid(unsafe_code)]

mod fifo;
mod handles;
mod landing;
mod link;
mod ring;

pub use fifo::Fifos;
pub use handles::{Handle, Handles};
pub use landing::{Landing, Landings};
pub use link::{Departure, LinkCredits, Links};
pub use ring::Ring;
