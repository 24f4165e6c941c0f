//! The slotted engine: a delay line between endpoints on a static schedule.
//!
//! Order within a slot `s`, the engine's contract:
//! 1. every endpoint receives, in (receiver, channel) order, what its scheduled senders
//!    transmitted in slot `s − delay`;
//! 2. every endpoint transmits, in (sender, channel) order, one cell (or silence) to its peer of
//!    slot `s` on each channel; the [`Medium`] decides what arrives.
//!
//! So a transmission in slot `s` can already reflect everything received up to slot `s`, and
//! a delay of `d` slots means a cell sent in slot `s` is handed over at the start of slot `s + d`.
//! The engine allocates only when built: the delay line is a ring of `delay` frames of one entry
//! per (receiver, channel).

/// Who transmits to whom, slot by slot.
pub trait SlotSchedule {
    fn nodes(&self) -> usize;
    fn channels(&self) -> usize;
    /// The node `node` transmits to on `channel` in absolute slot `slot`, or `None` if idle.
    fn peer(&self, slot: u64, node: usize, channel: usize) -> Option<usize>;
}

/// A node as the engine sees it.
pub trait SlottedEndpoint {
    /// What the endpoint transmits.
    type Tx: Copy;
    /// What it receives, after the medium: the cell, a damaged cell, or nothing.
    type Rx: Copy;
    /// The cell for `to` in `slot`; `None` is silence (a failed or stopped sender).
    fn transmit(&mut self, slot: u64, to: usize) -> Option<Self::Tx>;
    fn receive(&mut self, slot: u64, from: usize, rx: Self::Rx);
    /// Hint: `transmit(_, to)` will be called soon. Lets the endpoint prefetch its state.
    fn prefetch_tx(&self, _to: usize) {}
    /// Hint: `receive(_, from, _)` will be called soon.
    fn prefetch_rx(&self, _from: usize) {}
}

/// How many endpoints ahead the engine issues prefetch hints: far enough for a cache miss to
/// complete, near enough for the line to still be there.
const LOOKAHEAD: usize = 4;

/// The fabric between endpoints: maps what was sent to what arrives (loss, corruption).
pub trait Medium<E: SlottedEndpoint> {
    fn carry(
        &mut self,
        slot: u64,
        channel: usize,
        from: usize,
        to: usize,
        sent: Option<E::Tx>,
    ) -> E::Rx;
}

#[derive(Clone, Copy)]
struct Landing<R> {
    /// Sender, or `u32::MAX` when nobody was scheduled to send to this (receiver, channel).
    from: u32,
    rx: Option<R>,
}

/// Drives endpoints slot by slot with a fixed delay.
pub struct SlottedEngine<R> {
    nodes: usize,
    channels: usize,
    delay: u64,
    ring: Vec<Landing<R>>,
    slot: u64,
}

impl<R: Copy> SlottedEngine<R> {
    /// `delay` is in slots and at least 1.
    pub fn new(nodes: usize, channels: usize, delay: u64) -> Self {
        assert!(delay >= 1, "a cell cannot arrive in the slot it is sent");
        let empty = Landing {
            from: u32::MAX,
            rx: None,
        };
        SlottedEngine {
            nodes,
            channels,
            delay,
            ring: vec![empty; delay as usize * nodes * channels],
            slot: 0,
        }
    }

    /// The next slot to run.
    pub fn slot(&self) -> u64 {
        self.slot
    }

    /// Runs one slot.
    pub fn step<E, S, M>(&mut self, schedule: &S, endpoints: &mut [E], medium: &mut M)
    where
        E: SlottedEndpoint<Rx = R>,
        S: SlotSchedule,
        M: Medium<E>,
    {
        debug_assert_eq!(endpoints.len(), self.nodes);
        let s = self.slot;
        let width = self.nodes * self.channels;
        let base = (s % self.delay) as usize * width;
        let frame = &mut self.ring[base..base + width];
        let ahead = LOOKAHEAD * self.channels;
        for k in 0..width {
            if let Some(next) = frame.get(k + ahead)
                && next.rx.is_some()
            {
                endpoints[(k + ahead) / self.channels].prefetch_rx(next.from as usize);
            }
            let landing = &mut frame[k];
            if let Some(rx) = landing.rx.take() {
                endpoints[k / self.channels].receive(s, landing.from as usize, rx);
            }
            landing.from = u32::MAX;
        }
        for i in 0..self.nodes {
            if i + LOOKAHEAD < self.nodes {
                for ch in 0..self.channels {
                    if let Some(j) = schedule.peer(s, i + LOOKAHEAD, ch) {
                        endpoints[i + LOOKAHEAD].prefetch_tx(j);
                    }
                }
            }
            let endpoint = &mut endpoints[i];
            for ch in 0..self.channels {
                if let Some(j) = schedule.peer(s, i, ch) {
                    let sent = endpoint.transmit(s, j);
                    let rx = medium.carry(s, ch, i, j, sent);
                    let landing = &mut frame[j * self.channels + ch];
                    debug_assert_eq!(landing.from, u32::MAX, "two senders to one receiver port");
                    *landing = Landing {
                        from: i as u32,
                        rx: Some(rx),
                    };
                }
            }
        }
        self.slot += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ring of 3 nodes, one channel: node i sends to i+1. Each endpoint sends the slot number.
    struct Ring3;
    impl SlotSchedule for Ring3 {
        fn nodes(&self) -> usize {
            3
        }
        fn channels(&self) -> usize {
            1
        }
        fn peer(&self, _: u64, node: usize, _: usize) -> Option<usize> {
            Some((node + 1) % 3)
        }
    }

    #[derive(Default)]
    struct Probe {
        got: Vec<(u64, usize, Option<u64>)>,
        silent_after: Option<u64>,
    }
    impl SlottedEndpoint for Probe {
        type Tx = u64;
        type Rx = Option<u64>;
        fn transmit(&mut self, slot: u64, _: usize) -> Option<u64> {
            match self.silent_after {
                Some(t) if slot >= t => None,
                _ => Some(slot),
            }
        }
        fn receive(&mut self, slot: u64, from: usize, rx: Option<u64>) {
            self.got.push((slot, from, rx));
        }
    }

    struct Wire;
    impl Medium<Probe> for Wire {
        fn carry(
            &mut self,
            _: u64,
            _: usize,
            _: usize,
            _: usize,
            sent: Option<u64>,
        ) -> Option<u64> {
            sent
        }
    }

    #[test]
    fn cells_arrive_exactly_delay_slots_later_and_silence_is_reported() {
        for delay in 1..4u64 {
            let mut engine = SlottedEngine::new(3, 1, delay);
            let mut eps: Vec<Probe> = (0..3).map(|_| Probe::default()).collect();
            eps[0].silent_after = Some(5);
            for _ in 0..10 {
                engine.step(&Ring3, &mut eps, &mut Wire);
            }
            // Node 1 hears node 0: slot t carries what was sent at t - delay.
            let want: Vec<(u64, usize, Option<u64>)> = (delay..10)
                .map(|t| (t, 0, (t - delay < 5).then_some(t - delay)))
                .collect();
            assert_eq!(eps[1].got, want, "delay {delay}");
        }
    }
}
