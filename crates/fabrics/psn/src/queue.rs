//! A switch or NIC output queue: a data lane and, for NDP, a priority lane (control packets and
//! trimmed headers, served first), with the arrival decision of each discipline. Under the
//! other disciplines control packets queue with the data, as in htsim's queues.

use crate::config::Discipline;
use shoal_base::rng::StreamRng;
use std::collections::VecDeque;

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
    data: VecDeque<u32>,
    prio: VecDeque<u32>,
    data_bytes: u64,
    prio_bytes: u64,
}

impl OutQueue {
    /// Decides and performs an arrival. `limit` is in bytes; `trimmed_bytes` is the header size
    /// a trimmed packet keeps; RED at arrival draws its marks from `rng`.
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
    ) -> Admit {
        if control && discipline == Discipline::Trim {
            // NDP's switches serve control packets and trimmed headers first. They are small
            // and bounded by the data they answer; a separate limit would only add drops the
            // paper does not model.
            self.prio.push_back(pkt);
            self.prio_bytes += bytes as u64;
            return Admit::Queued;
        }
        let fits = self.data_bytes + bytes as u64 <= limit;
        match discipline {
            Discipline::DropTail | Discipline::Ecn { .. } | Discipline::Red(_) if !fits => {
                Admit::Dropped
            }
            Discipline::DropTail => self.push_data(pkt, bytes, Admit::Queued),
            Discipline::Ecn { k, at_dequeue } => {
                // Acks and CNPs share the FIFO but are not ECN-capable.
                let mark = !control && !at_dequeue && self.data_bytes >= k as u64 * mtu;
                self.push_data(pkt, bytes, if mark { Admit::Marked } else { Admit::Queued })
            }
            Discipline::Red(red) => {
                let mark = !control && !red.at_dequeue && red.marks(self.data_bytes, rng);
                self.push_data(pkt, bytes, if mark { Admit::Marked } else { Admit::Queued })
            }
            Discipline::Trim if fits => self.push_data(pkt, bytes, Admit::Queued),
            Discipline::Trim => {
                self.prio.push_back(pkt);
                self.prio_bytes += trimmed_bytes as u64;
                Admit::Trimmed
            }
        }
    }

    fn push_data(&mut self, pkt: u32, bytes: u32, outcome: Admit) -> Admit {
        self.data.push_back(pkt);
        self.data_bytes += bytes as u64;
        outcome
    }

    /// The next packet to send, priority lane first. The caller passes the popped packet's
    /// wire size back through [`OutQueue::account_sent`].
    #[inline]
    pub fn pop(&mut self) -> Option<(u32, bool)> {
        if let Some(p) = self.prio.pop_front() {
            return Some((p, true));
        }
        self.data.pop_front().map(|p| (p, false))
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

    /// Packets waiting in both lanes.
    pub fn packets(&self) -> usize {
        self.data.len() + self.prio.len()
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

    #[test]
    fn drop_tail_holds_exactly_its_limit() {
        let mut q = OutQueue::default();
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
                )
            })
            .collect();
        assert_eq!(outcomes[..3], [Admit::Queued; 3]);
        assert_eq!(outcomes[3..], [Admit::Dropped; 2]);
        assert_eq!(q.packets(), 3);
    }

    #[test]
    fn ecn_marks_arrivals_that_find_k_or_more_packets() {
        let mut q = OutQueue::default();
        let ecn = Discipline::Ecn {
            k: 2,
            at_dequeue: false,
        };
        let outcomes: Vec<Admit> = (0..4)
            .map(|i| q.admit(i, 1500, false, ecn, 10 * MTU, MTU, 64, &mut r()))
            .collect();
        assert_eq!(
            outcomes,
            [Admit::Queued, Admit::Queued, Admit::Marked, Admit::Marked]
        );
    }

    #[test]
    fn without_trimming_control_packets_wait_their_turn_and_count() {
        let mut q = OutQueue::default();
        let ecn = Discipline::Ecn {
            k: 1,
            at_dequeue: false,
        };
        assert_eq!(
            q.admit(1, 1500, false, ecn, 2 * MTU, MTU, 64, &mut r()),
            Admit::Queued
        );
        assert_eq!(
            q.admit(2, 64, true, ecn, 2 * MTU, MTU, 64, &mut r()),
            Admit::Queued
        );
        assert_eq!(
            q.admit(3, 1500, false, ecn, 2 * MTU, MTU, 64, &mut r()),
            Admit::Dropped
        );
        assert_eq!(q.pop(), Some((1, false)));
        assert_eq!(q.pop(), Some((2, false)));
    }

    #[test]
    fn trimmed_headers_and_control_overtake_data() {
        let mut q = OutQueue::default();
        assert_eq!(
            q.admit(1, 1500, false, Discipline::Trim, MTU, MTU, 64, &mut r()),
            Admit::Queued
        );
        assert_eq!(
            q.admit(2, 1500, false, Discipline::Trim, MTU, MTU, 64, &mut r()),
            Admit::Trimmed
        );
        assert_eq!(
            q.admit(3, 64, true, Discipline::Trim, MTU, MTU, 64, &mut r()),
            Admit::Queued
        );
        assert_eq!(q.pop(), Some((2, true)));
        assert_eq!(q.pop(), Some((3, true)));
        assert_eq!(q.pop(), Some((1, false)));
        assert_eq!(q.pop(), None);
    }

    /// The fraction of `trials` arrivals marked by `red` at a standing queue of `queued` bytes
    /// (1000-byte packets; each trial admits one and sends one, so the length stays put).
    fn marked_fraction(red: Red, queued: u64, trials: u32) -> f64 {
        let mut q = OutQueue::default();
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
            );
        }
        let mut marked = 0;
        for i in 0..trials {
            if q.admit(i, 1000, false, disc, u64::MAX, MTU, 64, &mut rng) == Admit::Marked {
                marked += 1;
            }
            let (_, prio) = q.pop().expect("queued");
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
            );
        }
        let at_arrival = Discipline::Red(Red::dcqcn_paper(false));
        let at_departure = Discipline::Red(Red::dcqcn_paper(true));
        assert_eq!(
            q.admit(300, 1000, false, at_arrival, u64::MAX, MTU, 64, &mut r()),
            Admit::Marked
        );
        assert_eq!(
            q.admit(301, 64, true, at_arrival, u64::MAX, MTU, 64, &mut r()),
            Admit::Queued
        );
        assert_eq!(
            q.admit(302, 1000, false, at_departure, u64::MAX, MTU, 64, &mut r()),
            Admit::Queued
        );
    }
}
