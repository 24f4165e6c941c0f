//! TCP at the hosts (`[stardust] transport = "tcp"`): §6.3 runs "an unmodified TCP (New Reno)
//! on top of Stardust". Each flow has a NewReno sender at its source host and a receiver at
//! its destination host (`shoal_transport`'s, unchanged); data segments and their acks are
//! ordinary host packets to the fabric, so acks cross it too, through their own VOQs and
//! credits. The fabric's packets name a handle into `Segments`, which says whose segment
//! it is and where it goes.

use shoal_base::Time;
use shoal_transport::{Kind, Receiver, Segment, Sender, TcpConfig, TcpReceiver, TcpSender};

/// What the hosts run above the fabric.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HostTransport {
    /// Hosts hand their flows to the adapter as fast as their port allows (the fabric's own
    /// scheduling is what is measured).
    None,
    /// TCP NewReno (or another member of the family) per flow.
    Tcp(TcpConfig),
}

/// One flow's two ends.
pub(crate) struct Ends {
    pub sender: TcpSender,
    pub receiver: TcpReceiver,
    /// The sender's timer as armed on the event queue.
    pub armed: Option<Time>,
    /// Whether the flow waits in its source host's rotation.
    pub in_rotation: bool,
}

/// A segment on its way: its flow (the run's record), the node it goes to and the segment.
#[derive(Clone, Copy, Debug)]
pub(crate) struct InFlight {
    pub flow: u32,
    pub to: u32,
    pub seg: Segment,
}

/// Segments between their host and the far host, by handle (reused once delivered or lost).
#[derive(Default)]
pub(crate) struct Segments {
    slots: Vec<InFlight>,
    free: Vec<u32>,
}

impl Segments {
    pub fn insert(&mut self, s: InFlight) -> u32 {
        if let Some(h) = self.free.pop() {
            self.slots[h as usize] = s;
            return h;
        }
        self.slots.push(s);
        self.slots.len() as u32 - 1
    }

    pub fn get(&self, h: u32) -> &InFlight {
        &self.slots[h as usize]
    }

    pub fn remove(&mut self, h: u32) -> InFlight {
        self.free.push(h);
        self.slots[h as usize]
    }
}

impl Ends {
    pub fn new(cfg: TcpConfig, bytes: u64) -> Ends {
        Ends {
            sender: TcpSender::new(cfg, bytes),
            receiver: TcpReceiver::new(bytes),
            armed: None,
            in_rotation: false,
        }
    }

    /// A segment for this flow arrived at its host: the ack to send back, if any, and the
    /// payload bytes it delivered in order.
    pub fn arrive(&mut self, now: Time, seg: &Segment) -> (Option<Segment>, u64) {
        if seg.kind == Kind::Data {
            let before = self.receiver.delivered();
            let reply = self.receiver.handle(now, seg);
            (reply, self.receiver.delivered() - before)
        } else {
            self.sender.handle(now, seg);
            (None, 0)
        }
    }
}
