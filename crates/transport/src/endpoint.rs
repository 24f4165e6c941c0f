//! The sans-IO contract between a transport and whatever drives it (the packet simulator, a
//! test harness): the driver passes time and segments in, and drains segments and the next
//! wake-up time out. Nothing here knows about queues, links or an event list.

use crate::segment::Segment;
use shoal_base::{Rate, Time};

/// The sending side of one flow.
pub trait Sender {
    /// A segment from the receiver arrived (an ack, a pull, a nack, a congestion notification).
    fn handle(&mut self, now: Time, seg: &Segment);
    /// The time given by [`Sender::timeout`] was reached.
    fn handle_timeout(&mut self, now: Time);
    /// The next segment to send now, if the transport allows one. Drivers call it until `None`
    /// after every input.
    fn poll_transmit(&mut self, now: Time) -> Option<Segment>;
    /// When the sender wants [`Sender::handle_timeout`] called (a retransmission timer, a pacing
    /// instant), if at all.
    fn timeout(&self) -> Option<Time>;
    /// Every byte has been acknowledged.
    fn is_finished(&self) -> bool;
    /// Retransmission timeouts so far (a counter the simulator reports).
    fn timeouts(&self) -> u64 {
        0
    }
    /// A rate computed outside the flow (R2C2's per-node max-min computation): pace at it from
    /// `now` on. Transports that set their own pace ignore it.
    fn set_rate(&mut self, _now: Time, _rate: Rate) {}
}

/// The receiving side of one flow.
pub trait Receiver {
    /// A data segment (or a trimmed header) arrived; returns the reply to send at once, if any.
    fn handle(&mut self, now: Time, seg: &Segment) -> Option<Segment>;
    /// Payload bytes delivered in order so far.
    fn delivered(&self) -> u64;
    /// Payload bytes held out of order (waiting for a gap to fill).
    fn held_out_of_order(&self) -> u64;
    /// Pulls waiting for the host's pacer (receiver-driven transports such as NDP); the driver
    /// asks for them one at a time with [`Receiver::next_pull`], at the pace it owns.
    fn pulls_pending(&self) -> u32 {
        0
    }
    /// Issues one pull, if any is pending.
    fn next_pull(&mut self, _now: Time) -> Option<Segment> {
        None
    }
}

/// A transport: how to make the two ends of a flow of `bytes` bytes.
pub trait Transport {
    type Sender: Sender;
    type Receiver: Receiver;
    /// A short name for tables ("dctcp", "ndp", ...).
    fn name(&self) -> &str;
    /// Payload bytes per full data segment.
    fn mss(&self) -> u32;
    fn sender(&self, bytes: u64, now: Time) -> Self::Sender;
    fn receiver(&self, bytes: u64) -> Self::Receiver;
    /// Whether senders take their rate from a rack-wide rate computation ([`Sender::set_rate`]),
    /// which the driver then runs (R2C2).
    fn rate_controlled(&self) -> bool {
        false
    }
    /// Subflows per connection (`Segment::path` runs below it): the driver may give each a
    /// path of its own (MPTCP). 1 for single-path transports.
    fn subflows(&self) -> u32 {
        1
    }
}
