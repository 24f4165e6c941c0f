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
//! Because `d >= 1`, running each node's receptions and then its transmissions before moving to
//! the next node is indistinguishable from running the two phases over all nodes; the engine does
//! the former (see [`SlottedEngine::step`]). The engine allocates only when built: the delay line
//! is a ring of `d + 1` frames of one entry per (receiver, channel).

/// No peer: the node does not transmit on this channel in this slot.
pub const IDLE: u16 = u16::MAX;

/// Who transmits to whom, slot by slot.
pub trait SlotSchedule {
    fn nodes(&self) -> usize;
    fn channels(&self) -> usize;
    /// The peers of slot `slot`, `nodes × channels` entries in (node, channel) order: the node
    /// each node transmits to on each channel, or [`IDLE`]. One call per slot, so a periodic
    /// schedule reduces the slot to its phase once, not per node.
    fn peers(&self, slot: u64) -> &[u16];
}

/// A node as the engine sees it.
///
/// The `hint*` methods let an endpoint overlap its cache misses; they must not change its
/// behaviour. The engine calls them as a software pipeline of three stages, each some endpoints
/// before the endpoint runs ([`STAGES`]): at each stage [`hint`](Self::hint), then, if it asks
/// for them, [`hint_rx`](Self::hint_rx) and [`hint_tx`](Self::hint_tx) for the slot's peers.
/// Each stage may read what the one before fetched (now in cache) to find the next lines to
/// fetch: typically stage 0 the endpoint's own structure, stage 1 the per-peer records named by
/// the ids, stage 2 the queue entries those name.
pub trait SlottedEndpoint {
    /// What travels on one channel in one slot: the cell as sent, then as the medium leaves it
    /// (intact, damaged, or nothing). `Default` fills the delay line before anything is sent.
    type Rx: Copy + Default;
    /// Writes the cell for `to` in `slot` (or silence, for a failed or stopped sender) straight
    /// into the delay line. In place rather than returned: a returned cell was assembled field
    /// by field on the stack and then copied with wider loads, which the CPU cannot forward
    /// from the narrower stores still in flight (`perf` put about a tenth of the simulator's
    /// samples at 512 nodes on that copy; see BENCHMARKS.md).
    fn transmit(&mut self, slot: u64, to: usize, out: &mut Self::Rx);
    fn receive(&mut self, slot: u64, from: usize, rx: Self::Rx);
    /// Hint, stage `stage`: the endpoint will run soon. Returns whether the per-peer hints of
    /// this stage are worth calling (an idle endpoint may have nothing to fetch).
    fn hint(&self, _stage: usize) -> bool {
        false
    }
    /// Hint, stage `stage`: `transmit(_, to)` will be called soon.
    fn hint_tx(&self, _stage: usize, _to: usize) {}
    /// Hint, stage `stage`: `receive(_, from, rx)` will be called soon.
    fn hint_rx(&self, _stage: usize, _from: usize, _rx: &Self::Rx) {}
}

/// How many endpoints ahead of the running one the engine issues each stage of hints: far
/// enough apart for a cache miss to complete before the next stage reads the line, near enough
/// for the line to still be in cache.
pub const STAGES: [usize; 3] = [3, 2, 1];

/// The fabric between endpoints: turns what was sent into what arrives (loss, corruption), in
/// place.
pub trait Medium<E: SlottedEndpoint> {
    fn carry(&mut self, slot: u64, channel: usize, from: usize, to: usize, cell: &mut E::Rx);
}

#[derive(Clone, Copy)]
struct Landing<R> {
    /// Sender, or `u32::MAX` when nobody was scheduled to send to this (receiver, channel).
    from: u32,
    /// What arrives; meaningless while `from` is `u32::MAX`.
    rx: R,
}

/// Drives endpoints slot by slot with a fixed delay.
pub struct SlottedEngine<R> {
    nodes: usize,
    channels: usize,
    delay: u64,
    /// `delay + 1` frames of `nodes × channels` landings: in slot `s` frame `s mod (delay + 1)`
    /// is read and frame `(s + delay) mod (delay + 1)` written, so that one node can transmit
    /// before the next one has received.
    ring: Vec<Landing<R>>,
    slot: u64,
    /// Issue the `hint*` calls.
    hints: bool,
}

impl<R: Copy + Default> SlottedEngine<R> {
    /// `delay` is in slots and at least 1.
    pub fn new(nodes: usize, channels: usize, delay: u64) -> Self {
        assert!(delay >= 1, "a cell cannot arrive in the slot it is sent");
        let empty = Landing {
            from: u32::MAX,
            rx: R::default(),
        };
        SlottedEngine {
            nodes,
            channels,
            delay,
            ring: vec![empty; (delay as usize + 1) * nodes * channels],
            slot: 0,
            hints: true,
        }
    }

    /// Whether to issue the prefetch hints (on by default). They pay off only when the
    /// endpoints' state outgrows the caches; below that they cost instructions for nothing.
    pub fn with_hints(mut self, on: bool) -> Self {
        self.hints = on;
        self
    }

    /// The next slot to run.
    pub fn slot(&self) -> u64 {
        self.slot
    }

    /// Runs one slot.
    ///
    /// Node by node, it first hands the node what it receives, then takes what it transmits.
    /// That is the contract of the module: nothing transmitted in slot `s` arrives before
    /// `s + 1`, so no node can tell this order from "every node receives, then every node
    /// transmits", and the medium still sees transmissions in (sender, channel) order. Doing
    /// one node at a time keeps its state in cache between its receptions and transmissions.
    pub fn step<E, S, M>(&mut self, schedule: &S, endpoints: &mut [E], medium: &mut M)
    where
        E: SlottedEndpoint<Rx = R>,
        S: SlotSchedule,
        M: Medium<E>,
    {
        debug_assert_eq!(endpoints.len(), self.nodes);
        let s = self.slot;
        let (n, c) = (self.nodes, self.channels);
        let width = n * c;
        let frames = self.delay + 1;
        let read = (s % frames) as usize;
        let write = ((s + self.delay) % frames) as usize;
        // The frame read in this slot and the one written, disjoint since `delay >= 1`.
        let (input, output) = {
            let (low, high) = self.ring.split_at_mut(read.max(write) * width);
            let (first, second) = (&mut low[read.min(write) * width..], &mut high[..width]);
            if read < write {
                (first, second)
            } else {
                (second, first)
            }
        };
        let peers = schedule.peers(s);
        assert_eq!(
            peers.len(),
            width,
            "the schedule's row has one entry per node and channel"
        );
        for i in 0..n {
            if self.hints {
                // One call per stage with a literal stage, so that each inlined copy of the
                // endpoint's hint code keeps only that stage's branch.
                let at = |a: usize| (a < n).then(|| (a * c..(a + 1) * c, &endpoints[a]));
                if let Some((r, e)) = at(i + STAGES[0]) {
                    hint(0, e, &input[r.clone()], &peers[r]);
                }
                if let Some((r, e)) = at(i + STAGES[1]) {
                    hint(1, e, &input[r.clone()], &peers[r]);
                }
                if let Some((r, e)) = at(i + STAGES[2]) {
                    hint(2, e, &input[r.clone()], &peers[r]);
                }
            }
            let endpoint = &mut endpoints[i];
            for landing in &mut input[i * c..(i + 1) * c] {
                if landing.from != u32::MAX {
                    endpoint.receive(s, landing.from as usize, landing.rx);
                }
                landing.from = u32::MAX;
            }
            for (ch, &j) in peers[i * c..(i + 1) * c].iter().enumerate() {
                if j == IDLE {
                    continue;
                }
                let j = j as usize;
                let landing = &mut output[j * c + ch];
                debug_assert_eq!(landing.from, u32::MAX, "two senders to one receiver port");
                landing.from = i as u32;
                endpoint.transmit(s, j, &mut landing.rx);
                medium.carry(s, ch, i, j, &mut landing.rx);
            }
        }
        self.slot += 1;
    }
}

/// One stage of hints for one endpoint, given its landings and peers in this slot.
#[inline(always)]
fn hint<E: SlottedEndpoint>(stage: usize, endpoint: &E, input: &[Landing<E::Rx>], peers: &[u16]) {
    if !endpoint.hint(stage) {
        return;
    }
    for (landing, &j) in input.iter().zip(peers) {
        if landing.from != u32::MAX {
            endpoint.hint_rx(stage, landing.from as usize, &landing.rx);
        }
        if j != IDLE {
            endpoint.hint_tx(stage, j as usize);
        }
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
        fn peers(&self, _: u64) -> &[u16] {
            &[1, 2, 0]
        }
    }

    #[derive(Default)]
    struct Probe {
        got: Vec<(u64, usize, Option<u64>)>,
        silent_after: Option<u64>,
    }
    impl SlottedEndpoint for Probe {
        type Rx = Option<u64>;
        fn transmit(&mut self, slot: u64, _: usize, out: &mut Option<u64>) {
            *out = match self.silent_after {
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
        fn carry(&mut self, _: u64, _: usize, _: usize, _: usize, _: &mut Option<u64>) {}
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
