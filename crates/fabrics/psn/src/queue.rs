//! A switch or NIC output queue: a data lane and, for NDP, a priority lane (control packets and
//! trimmed headers, served first), with the arrival decision of each discipline. Under the
//! other disciplines control packets queue with the data, as in htsim's queues.
//!
//! A lane is a linked list through the packet slab ([`Links`]): a port holds two (head, tail)
//! pairs instead of two ring buffers of its own. About as many instructions per packet-hop,
//! but far fewer cache lines: each port's buffers were lines of their own, and on the DCTCP
//! example the simulated L2 misses per packet-hop fell from 5.9 to 4.1 (BENCHMARKS.md).

use crate::config::Discipline;
use rand::RngExt;
use shoal_base::rng::StreamRng;

/// No packet: the end of a lane.
const END: u32 = u32::MAX;

/// Each packet's successor in the lane that holds it, indexed by packet slot (stale for a
/// lane's last packet).
#[derive(Default)]
pub struct Links(Vec<u32>);

impl Links {
    /// Room for packet slots `0..slots`.
    pub fn cover(&mut self, slots: usize) {
        if self.0.len() < slots {
            self.0.resize(slots, END);
        }
    }
}

/// A FIFO of packets linked through [`Links`].
#[derive(Clone, Copy)]
struct Lane {
    head: u32,
    tail: u32,
}

impl Default for Lane {
    fn default() -> Self {
        Lane {
            head: END,
            tail: END,
        }
    }
}

impl Lane {
    /// Appends `pkt`. The last packet's link is never read (`pop` knows it by `tail`), so a
    /// packet joining an empty lane, as most do, touches no link at all.
    #[inline]
    fn push(&mut self, pkt: u32, links: &mut Links) {
        if self.tail == END {
            self.head = pkt;
        } else {
            links.0[self.tail as usize] = pkt;
        }
        self.tail = pkt;
    }

    #[inline]
    fn pop(&mut self, links: &Links) -> Option<u32> {
        let pkt = self.head;
        if pkt == END {
            return None;
        }
        if pkt == self.tail {
            self.head = END;
            self.tail = END;
        } else {
            self.head = links.0[pkt as usize];
        }
        Some(pkt)
    }

    #[inline]
    fn is_empty(&self) -> bool {
        self.head == END
    }

    /// Removes the last packet. A lane has no back links, so this walks from the head: it
    /// serves htsim's trimming only, on queues of a few packets (NDP's are 8 to 12).
    fn pop_back(&mut self, links: &Links) -> Option<u32> {
        let last = self.tail;
        if last == END {
            return None;
        }
        if self.head == last {
            *self = Lane::default();
            return Some(last);
        }
        let mut p = self.head;
        while links.0[p as usize] != last {
            p = links.0[p as usize];
        }
        self.tail = p;
        Some(last)
    }
}

/// The packet a port is sending: htsim keeps it in its lane, and counts its bytes there, until
/// its last bit leaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OnWire {
    pub bytes: u32,
    /// It came from the priority lane.
    pub prio: bool,
}

/// htsim's trimming decision ([`crate::TrimRule::Htsim`]) on one arrival: what became of the
/// arriving packet, and of the data lane's last packet if it was trimmed in its place
/// ([`Admit::Trimmed`] with its header queued, or [`Admit::Dropped`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HtsimTrim {
    pub arriving: Admit,
    pub victim: Option<(u32, Admit)>,
}

/// What happened to an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    Queued,
    /// Queued with its CE bit set.
    Marked,
    /// Cut to its header and queued in the priority lane.
    Trimmed,
    Dropped,
}

/// One output queue. Lengths are kept in bytes; limits come from the caller in bytes too.
#[derive(Default)]
pub struct OutQueue {
    data: Lane,
    prio: Lane,
    data_bytes: u64,
    prio_bytes: u64,
}

impl OutQueue {
    /// Decides and performs an arrival. `limit` is in bytes; `trimmed_bytes` is the header size
    /// a trimmed packet keeps; RED at arrival draws its marks from `rng`; a queued packet is
    /// linked into `links`.
    // Inlined into its one caller (`Sim::enqueue`), which otherwise passes eight arguments
    // (the discipline by value) once per packet-hop.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn admit(
        &mut self,
        pkt: u32,
        bytes: u32,
        control: bool,
        discipline: Discipline,
        limit: u64,
        mtu: u64,
        trimmed_bytes: u32,
        rng: &mut StreamRng,
        links: &mut Links,
    ) -> Admit {
        if control && discipline == Discipline::Trim {
            // NDP's switches serve control packets and trimmed headers first. They are small
            // and bounded by the data they answer; a separate limit would only add drops the
            // paper does not model.
            self.prio.push(pkt, links);
            self.prio_bytes += bytes as u64;
            return Admit::Queued;
        }
        let fits = self.data_bytes + bytes as u64 <= limit;
        match discipline {
            Discipline::DropTail | Discipline::Ecn { .. } | Discipline::Red(_) if !fits => {
                Admit::Dropped
            }
            Discipline::DropTail => self.push_data(pkt, bytes, Admit::Queued, links),
            Discipline::Ecn { k, at_dequeue } => {
                // Acks and CNPs share the FIFO but are not ECN-capable.
                let mark = !control && !at_dequeue && self.data_bytes >= k as u64 * mtu;
                let outcome = if mark { Admit::Marked } else { Admit::Queued };
                self.push_data(pkt, bytes, outcome, links)
            }
            Discipline::Red(red) => {
                let mark = !control && !red.at_dequeue && red.marks(self.data_bytes, rng);
                let outcome = if mark { Admit::Marked } else { Admit::Queued };
                self.push_data(pkt, bytes, outcome, links)
            }
            Discipline::Trim if fits => self.push_data(pkt, bytes, Admit::Queued, links),
            Discipline::Trim => {
                self.prio.push(pkt, links);
                self.prio_bytes += trimmed_bytes as u64;
                Admit::Trimmed
            }
        }
    }

    /// An arrival under htsim's trimming (compositequeue.cpp): `limit` bounds the data lane and
    /// twice `limit` the priority lane, each counting the packet on the wire if it came from
    /// it (`on_wire`); a data packet that does not fit is trimmed to `trimmed_bytes` if a coin
    /// drawn from `rng` says so, else queued with the data lane's last packet trimmed instead
    /// (`wire` gives a queued packet's bytes); a header that does not fit the priority lane is
    /// dropped. The coin is drawn only when the data lane is full, as htsim draws it.
    #[allow(clippy::too_many_arguments)]
    pub fn admit_htsim(
        &mut self,
        pkt: u32,
        bytes: u32,
        control: bool,
        limit: u64,
        trimmed_bytes: u32,
        on_wire: Option<OnWire>,
        rng: &mut StreamRng,
        links: &mut Links,
        wire: impl Fn(u32) -> u32,
    ) -> HtsimTrim {
        let sending = |prio: bool| match on_wire {
            Some(w) if w.prio == prio => u64::from(w.bytes),
            _ => 0,
        };
        // The room the priority lane has left, in bytes.
        let header_room = (2 * limit).saturating_sub(sending(true));
        if control {
            let arriving = self.push_header(pkt, bytes, header_room, Admit::Queued, links);
            return HtsimTrim {
                arriving,
                victim: None,
            };
        }
        if self.data_bytes + sending(false) + u64::from(bytes) <= limit {
            self.data.push(pkt, links);
            self.data_bytes += u64::from(bytes);
            return HtsimTrim {
                arriving: Admit::Queued,
                victim: None,
            };
        }
        // htsim asserts that the data lane holds a packet here (it counts the one on the wire
        // among them, and would trim that one); with nothing waiting the arrival is trimmed.
        let trim_tail = rng.random_bool(0.5) && !self.data.is_empty();
        if !trim_tail {
            let arriving = self.push_header(pkt, trimmed_bytes, header_room, Admit::Trimmed, links);
            return HtsimTrim {
                arriving,
                victim: None,
            };
        }
        let victim = self.data.pop_back(links).expect("checked non-empty");
        self.data_bytes -= u64::from(wire(victim));
        let outcome = self.push_header(victim, trimmed_bytes, header_room, Admit::Trimmed, links);
        self.data.push(pkt, links);
        self.data_bytes += u64::from(bytes);
        HtsimTrim {
            arriving: Admit::Queued,
            victim: Some((victim, outcome)),
        }
    }

    /// Queues a header or control packet of `bytes` in the priority lane if the lane stays
    /// within `room` bytes (then the outcome is `kept`), else drops it.
    fn push_header(
        &mut self,
        pkt: u32,
        bytes: u32,
        room: u64,
        kept: Admit,
        links: &mut Links,
    ) -> Admit {
        if self.prio_bytes + u64::from(bytes) > room {
            return Admit::Dropped;
        }
        self.prio.push(pkt, links);
        self.prio_bytes += u64::from(bytes);
        kept
    }

    fn push_data(&mut self, pkt: u32, bytes: u32, outcome: Admit, links: &mut Links) -> Admit {
        self.data.push(pkt, links);
        self.data_bytes += bytes as u64;
        outcome
    }

    /// The next packet to send, priority lane first. The caller passes the popped packet's
    /// wire size back through [`OutQueue::account_sent`].
    #[inline]
    pub fn pop(&mut self, links: &Links) -> Option<(u32, bool)> {
        if let Some(p) = self.prio.pop(links) {
            return Some((p, true));
        }
        self.data.pop(links).map(|p| (p, false))
    }

    /// Removes a sent packet's bytes from its lane's length.
    #[inline]
    pub fn account_sent(&mut self, bytes: u32, from_prio: bool) {
        if from_prio {
            self.prio_bytes -= bytes as u64;
        } else {
            self.data_bytes -= bytes as u64;
        }
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty() && self.prio.is_empty()
    }

    /// Bytes waiting in both lanes.
    pub fn bytes(&self) -> u64 {
        self.data_bytes + self.prio_bytes
    }

    /// Bytes waiting in the data lane (what ECN and the capacity look at).
    pub fn data_bytes(&self) -> u64 {
        self.data_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Red;

    const MTU: u64 = 1500;

    fn r() -> StreamRng {
        shoal_base::rng::stream(1, "test.queue", 0)
    }

    /// Links for packet ids below 2^20.
    fn links() -> Links {
        let mut l = Links::default();
        l.cover(1 << 20);
        l
    }

    #[test]
    fn drop_tail_holds_exactly_its_limit() {
        let mut q = OutQueue::default();
        let mut l = links();
        let outcomes: Vec<Admit> = (0..5)
            .map(|i| {
                q.admit(
                    i,
                    1500,
                    false,
                    Discipline::DropTail,
                    3 * MTU,
                    MTU,
                    64,
                    &mut r(),
                    &mut l,
                )
            })
            .collect();
        assert_eq!(outcomes[..3], [Admit::Queued; 3]);
        assert_eq!(outcomes[3..], [Admit::Dropped; 2]);
        let queued = std::iter::from_fn(|| q.pop(&l)).count();
        assert_eq!(queued, 3);
    }

    #[test]
    fn ecn_marks_arrivals_that_find_k_or_more_packets() {
        let mut q = OutQueue::default();
        let mut l = links();
        let ecn = Discipline::Ecn {
            k: 2,
            at_dequeue: false,
        };
        let outcomes: Vec<Admit> = (0..4)
            .map(|i| q.admit(i, 1500, false, ecn, 10 * MTU, MTU, 64, &mut r(), &mut l))
            .collect();
        assert_eq!(
            outcomes,
            [Admit::Queued, Admit::Queued, Admit::Marked, Admit::Marked]
        );
    }

    #[test]
    fn without_trimming_control_packets_wait_their_turn_and_count() {
        let mut q = OutQueue::default();
        let mut l = links();
        let ecn = Discipline::Ecn {
            k: 1,
            at_dequeue: false,
        };
        assert_eq!(
            q.admit(1, 1500, false, ecn, 2 * MTU, MTU, 64, &mut r(), &mut l),
            Admit::Queued
        );
        assert_eq!(
            q.admit(2, 64, true, ecn, 2 * MTU, MTU, 64, &mut r(), &mut l),
            Admit::Queued
        );
        assert_eq!(
            q.admit(3, 1500, false, ecn, 2 * MTU, MTU, 64, &mut r(), &mut l),
            Admit::Dropped
        );
        assert_eq!(q.pop(&l), Some((1, false)));
        assert_eq!(q.pop(&l), Some((2, false)));
    }

    #[test]
    fn trimmed_headers_and_control_overtake_data() {
        let mut q = OutQueue::default();
        let mut l = links();
        assert_eq!(
            q.admit(
                1,
                1500,
                false,
                Discipline::Trim,
                MTU,
                MTU,
                64,
                &mut r(),
                &mut l,
            ),
            Admit::Queued
        );
        assert_eq!(
            q.admit(
                2,
                1500,
                false,
                Discipline::Trim,
                MTU,
                MTU,
                64,
                &mut r(),
                &mut l,
            ),
            Admit::Trimmed
        );
        assert_eq!(
            q.admit(
                3,
                64,
                true,
                Discipline::Trim,
                MTU,
                MTU,
                64,
                &mut r(),
                &mut l,
            ),
            Admit::Queued
        );
        assert_eq!(q.pop(&l), Some((2, true)));
        assert_eq!(q.pop(&l), Some((3, true)));
        assert_eq!(q.pop(&l), Some((1, false)));
        assert_eq!(q.pop(&l), None);
    }

    /// The fraction of `trials` arrivals marked by `red` at a standing queue of `queued` bytes
    /// (1000-byte packets; each trial admits one and sends one, so the length stays put).
    fn marked_fraction(red: Red, queued: u64, trials: u32) -> f64 {
        let mut q = OutQueue::default();
        let mut l = links();
        let mut rng = shoal_base::rng::stream(7, "test.red", queued);
        let disc = Discipline::Red(red);
        for i in 0..queued / 1000 {
            q.admit(
                i as u32,
                1000,
                false,
                Discipline::DropTail,
                u64::MAX,
                MTU,
                64,
                &mut rng,
                &mut l,
            );
        }
        let mut marked = 0;
        // Ids after the standing queue's, so that no packet is queued twice.
        for i in (queued / 1000) as u32..(queued / 1000) as u32 + trials {
            if q.admit(i, 1000, false, disc, u64::MAX, MTU, 64, &mut rng, &mut l) == Admit::Marked {
                marked += 1;
            }
            let (_, prio) = q.pop(&l).expect("queued");
            q.account_sent(1000, prio);
            assert_eq!(q.data_bytes(), queued);
        }
        marked as f64 / trials as f64
    }

    #[test]
    fn red_marks_on_a_linear_ramp_from_kmin_to_kmax() {
        // The DCQCN paper's curve (Pmax 1%) and a steep one (Pmax 60%), which makes the ramp's
        // shape visible well above the noise. At each length the marked fraction of n draws is
        // binomial: it must lie within 5 standard deviations of p(q) (a false alarm about once
        // in 1.7 million), and exactly 0 or 1 off the ramp.
        let n = 200_000;
        for pmax_ppm in [10_000, 600_000] {
            let red = Red {
                pmax_ppm,
                ..Red::dcqcn_paper(false)
            };
            let (kmin, kmax) = (red.kmin_bytes as f64, red.kmax_bytes as f64);
            let pmax = pmax_ppm as f64 / 1e6;
            for queued in [0, 5_000, 6_000, 50_000, 100_000, 150_000, 204_000, 205_000] {
                let q = queued as f64;
                let p = if q <= kmin {
                    0.0
                } else if q > kmax {
                    1.0
                } else {
                    pmax * (q - kmin) / (kmax - kmin)
                };
                let got = marked_fraction(red, queued, n);
                let tol = 5.0 * (p * (1.0 - p) / n as f64).sqrt();
                assert!(
                    (got - p).abs() <= tol,
                    "pmax {pmax}, {queued} B queued: marked {got}, formula {p} ± {tol}"
                );
            }
        }
    }

    #[test]
    fn red_never_marks_control_packets_or_at_arrival_when_marking_at_departure() {
        let mut q = OutQueue::default();
        let mut l = links();
        for i in 0..300 {
            q.admit(
                i,
                1000,
                false,
                Discipline::DropTail,
                u64::MAX,
                MTU,
                64,
                &mut r(),
                &mut l,
            );
        }
        let at_arrival = Discipline::Red(Red::dcqcn_paper(false));
        let at_departure = Discipline::Red(Red::dcqcn_paper(true));
        assert_eq!(
            q.admit(
                300,
                1000,
                false,
                at_arrival,
                u64::MAX,
                MTU,
                64,
                &mut r(),
                &mut l,
            ),
            Admit::Marked
        );
        assert_eq!(
            q.admit(
                301,
                64,
                true,
                at_arrival,
                u64::MAX,
                MTU,
                64,
                &mut r(),
                &mut l,
            ),
            Admit::Queued
        );
        assert_eq!(
            q.admit(
                302,
                1000,
                false,
                at_departure,
                u64::MAX,
                MTU,
                64,
                &mut r(),
                &mut l,
            ),
            Admit::Queued
        );
    }

    /// htsim's trimming on a queue whose data packets are 1500 B, headers 64 B.
    #[allow(clippy::too_many_arguments)]
    fn htsim(
        q: &mut OutQueue,
        pkt: u32,
        bytes: u32,
        control: bool,
        limit: u64,
        on_wire: Option<OnWire>,
        rng: &mut StreamRng,
        l: &mut Links,
    ) -> HtsimTrim {
        q.admit_htsim(pkt, bytes, control, limit, 64, on_wire, rng, l, |_| 1500)
    }

    #[test]
    fn htsim_counts_the_packet_on_the_wire_against_the_limit() {
        // Three packets' room: with one data packet on the wire, two more fit, then the third
        // is trimmed (or trims the last); with a header on the wire, three fit.
        for (on_wire, fit) in [
            (None, 3),
            (
                Some(OnWire {
                    bytes: 1500,
                    prio: false,
                }),
                2,
            ),
            (
                Some(OnWire {
                    bytes: 64,
                    prio: true,
                }),
                3,
            ),
        ] {
            let (mut q, mut l, mut rng) = (OutQueue::default(), links(), r());
            let queued = (0..5)
                .map(|i| htsim(&mut q, i, 1500, false, 3 * MTU, on_wire, &mut rng, &mut l))
                .take_while(|t| t.arriving == Admit::Queued && t.victim.is_none())
                .count();
            assert_eq!(queued, fit, "{on_wire:?}");
        }
    }

    #[test]
    fn htsim_trims_the_arrival_or_the_last_queued_packet_half_the_time_each() {
        // A full queue of 4 packets; each round one packet leaves from the head and one
        // arrives. When the last queued packet is trimmed it must be the one queued last, and
        // the arrival takes its place. The share of arrivals trimmed is binomial(n, 1/2):
        // within 5 standard deviations.
        let (mut q, mut l, mut rng) = (OutQueue::default(), links(), r());
        let limit = 4 * MTU;
        let mut fifo: std::collections::VecDeque<u32> = (0..4).collect();
        for i in 0..4 {
            htsim(&mut q, i, 1500, false, limit, None, &mut rng, &mut l);
        }
        let n = 20_000u32;
        let mut arrivals_trimmed = 0;
        for i in 4..4 + n {
            let t = htsim(&mut q, i, 1500, false, limit, None, &mut rng, &mut l);
            match t {
                HtsimTrim {
                    arriving: Admit::Trimmed,
                    victim: None,
                } => arrivals_trimmed += 1,
                HtsimTrim {
                    arriving: Admit::Queued,
                    victim: Some((v, Admit::Trimmed)),
                } => {
                    assert_eq!(Some(v), fifo.pop_back(), "the victim is the last queued");
                    fifo.push_back(i);
                }
                other => panic!("unexpected {other:?}"),
            }
            // Headers first, then the data lane's head.
            while let Some((p, prio)) = q.pop(&l) {
                if prio {
                    q.account_sent(64, true);
                } else {
                    assert_eq!(Some(p), fifo.pop_front(), "round {i}");
                    q.account_sent(1500, false);
                    break;
                }
            }
            // Refill to full for the next round (ids above the run's, never reused).
            let j = 100_000 + i;
            assert_eq!(
                htsim(&mut q, j, 1500, false, limit, None, &mut rng, &mut l),
                HtsimTrim {
                    arriving: Admit::Queued,
                    victim: None
                }
            );
            fifo.push_back(j);
        }
        let share = arrivals_trimmed as f64 / n as f64;
        let tol = 5.0 * (0.25 / n as f64).sqrt();
        assert!(
            (share - 0.5).abs() <= tol,
            "{share} of arrivals trimmed, expected 0.5 ± {tol}"
        );
    }

    #[test]
    fn htsim_drops_headers_beyond_twice_the_data_limit() {
        // Data limit 3 × 1500 B: the priority lane holds 9000 B, 140 headers of 64 B; with a
        // header on the wire, one fewer.
        for (on_wire, room) in [
            (None, 9000 / 64),
            (
                Some(OnWire {
                    bytes: 64,
                    prio: true,
                }),
                9000 / 64 - 1,
            ),
        ] {
            let (mut q, mut l, mut rng) = (OutQueue::default(), links(), r());
            let kept = (1000..1300)
                .map(|i| htsim(&mut q, i, 64, true, 3 * MTU, on_wire, &mut rng, &mut l).arriving)
                .take_while(|&a| a == Admit::Queued)
                .count();
            assert_eq!(kept, room, "{on_wire:?}");
            assert_eq!(
                htsim(&mut q, 2000, 64, true, 3 * MTU, on_wire, &mut rng, &mut l).arriving,
                Admit::Dropped
            );
        }
    }
}
