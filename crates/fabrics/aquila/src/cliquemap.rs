//! A CliqueMap-like key-value lookup generator (§5): every host is a client issuing lookups of
//! one value size as a Poisson process at a given rate, each to a backend drawn uniformly among
//! the other hosts (CliqueMap places keys by hash, so a client's lookups spread evenly over
//! the backends), and every host is a backend. A lookup is a 1RMA read of the value (§3.4,
//! one-sided: no software at the backend), or an IP RPC (§5's Pony Express): a request packet
//! over IP over GNet, the backend's software serving requests one at a time, the value back
//! in full IP packets.

use crate::rma::Rma;
use rand::RngExt;
use shoal_base::Time;
use shoal_base::rng::{StreamRng, stream};
use shoal_base::{Dur, Rate};

/// What the clients do.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lookups {
    /// Lookups per second each client issues (the mean of its Poisson process).
    pub qps_per_client: f64,
    /// Bytes of one value (§5: 4 KB).
    pub value_bytes: u32,
    /// Clients issue lookups until then; the run goes on until every one has completed.
    pub until: Time,
    pub transport: Transport,
}

/// How a lookup fetches its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// A 1RMA read (§3.4).
    Rma,
    /// An IP RPC: `service` is the backend software's time per request (requests queue for
    /// it, one at a time).
    IpRpc { service: Dur },
}

/// Bulk IP traffic beside the lookups (§5, Fig. 8): every host sends messages of `bytes` to
/// a uniformly drawn other host as a Poisson process of `qps_per_host`, over IP over GNet
/// under Swift, until the lookups' `until`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bulk {
    pub qps_per_host: f64,
    pub bytes: u32,
    /// Whether 1RMA's Resp cells share the bulk IP's VCs (Fig. 8's low-priority 1RMA) or
    /// keep the low-latency VCs of their own (high priority).
    pub rma_shares_bulk_vcs: bool,
}

impl Bulk {
    /// Why this traffic cannot run, if it cannot.
    pub fn check(&self) -> Result<(), String> {
        if !(self.qps_per_host.is_finite() && self.qps_per_host > 0.0) {
            return Err(format!(
                "{} bulk messages per second is not a rate",
                self.qps_per_host
            ));
        }
        if self.bytes == 0 {
            return Err("bulk messages of 0 bytes".into());
        }
        Ok(())
    }
}

/// An RPC request's payload: the key and the RPC's own header (not given; our choice).
pub const RPC_REQUEST_BYTES: u32 = 64;

impl Lookups {
    /// The rate per client at which lookups fill `load` of a host's link: §5's offered load
    /// per machine, as the wire bytes a lookup puts on each direction of the link. Each host
    /// is a backend for as many lookups as it issues, so towards its TiN it sends a Req cell
    /// (as a client) and a value's Resp cells (as a backend) per lookup, and receives the
    /// same. Counting the Resp cells alone made tiny values absurd: a 3 B value is one 24 B
    /// Resp cell, 260 million lookups a second at 50 Gb/s, where the 48 B Req cells they also
    /// need hold the rate to a third of that. Lookups by IP RPC are asked at the same rate
    /// (Fig. 10 compares the transports at equal QPS).
    pub fn qps_for_load(load: f64, host_rate: Rate, rma: &Rma, value_bytes: u32) -> f64 {
        let req = u64::from(crate::rma::REQ_WORDS) * crate::wire::WORD as u64;
        let per_lookup = req + rma.resp_wire_bytes(value_bytes);
        load * host_rate.0 as f64 / (per_lookup as f64 * 8.0)
    }

    /// Why these lookups cannot run, if they cannot.
    pub fn check(&self) -> Result<(), String> {
        if !(self.qps_per_client.is_finite() && self.qps_per_client > 0.0) {
            return Err(format!(
                "{} lookups per second is not a rate",
                self.qps_per_client
            ));
        }
        if self.value_bytes == 0 {
            return Err("values of 0 bytes".into());
        }
        Ok(())
    }
}

/// One client's arrivals and backends, from a random stream of its own.
pub struct Client {
    rng: StreamRng,
    /// Time of the last arrival, ps, accumulated in f64 so that rounding does not drift.
    t_ps: f64,
}

impl Client {
    pub fn new(seed: u64, host: u32) -> Client {
        Client::on_stream(seed, "aquila.cliquemap", host)
    }

    /// Arrivals and peers from random stream `label` of host `host`.
    pub fn on_stream(seed: u64, label: &str, host: u32) -> Client {
        Client {
            rng: stream(seed, label, u64::from(host)),
            t_ps: 0.0,
        }
    }

    /// When the next lookup arrives: an exponential gap after the last (inverse CDF; `1 - u`
    /// is in (0, 1], so the log is finite).
    pub fn next_arrival(&mut self, qps: f64) -> Time {
        let u = 1.0 - self.rng.random::<f64>();
        self.t_ps -= u.ln() * 1e12 / qps;
        Time(self.t_ps.round() as u64)
    }

    /// The backend of the next lookup of client `host`: any of the other `hosts - 1`.
    pub fn backend(&mut self, host: u32, hosts: u32) -> u32 {
        let b = self.rng.random_range(0..hosts - 1);
        if b >= host { b + 1 } else { b }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrivals_have_the_asked_rate_and_backends_exclude_the_client() {
        let mut c = Client::new(7, 3);
        let qps = 1e6;
        let n = 20_000;
        let mut last = Time::ZERO;
        for _ in 0..n {
            let t = c.next_arrival(qps);
            assert!(t >= last);
            last = t;
        }
        // Mean gap 1 µs; the mean of 20,000 exponential gaps is within 3% with
        // overwhelming probability (standard error 0.7%).
        let mean_us = last.0 as f64 / 1e6 / n as f64;
        assert!((mean_us - 1.0).abs() < 0.03, "{mean_us}");
        let mut seen = [0u32; 8];
        for _ in 0..8000 {
            seen[c.backend(3, 8) as usize] += 1;
        }
        assert_eq!(seen[3], 0);
        assert!(seen.iter().enumerate().all(|(i, &k)| i == 3 || k > 1000));
    }

    #[test]
    fn the_load_counts_a_lookups_wire_bytes_each_way() {
        let rma = Rma::paper();
        let qps = Lookups::qps_for_load(1.0, Rate::gbps(50), &rma, 4096);
        // A 48 B Req and 32 Resp cells of 144 B per 4 KB value at 50 Gb/s.
        assert!((qps - 50e9 / ((48.0 + 32.0 * 144.0) * 8.0)).abs() < 1e-6);
        // The smallest value: a Req and one 24 B Resp cell (8 B header, 8 B Resp header, the
        // value, in 8 B words), so a tiny value cannot ask more than a Req cell's rate.
        let tiny = Lookups::qps_for_load(1.0, Rate::gbps(50), &rma, 3);
        assert!((tiny - 50e9 / ((48.0 + 24.0) * 8.0)).abs() < 1e-6);
        assert!(tiny < 50e9 / (48.0 * 8.0));
        // Linear in the load.
        let half = Lookups::qps_for_load(0.5, Rate::gbps(50), &rma, 4096);
        assert!((2.0 * half - qps).abs() < 1e-6);
        let ok = Lookups {
            qps_per_client: qps,
            value_bytes: 4096,
            until: Time::ZERO,
            transport: Transport::Rma,
        };
        assert!(ok.check().is_ok());
        assert!(
            Lookups {
                qps_per_client: 0.0,
                ..ok
            }
            .check()
            .is_err()
        );
        assert!(
            Lookups {
                value_bytes: 0,
                ..ok
            }
            .check()
            .is_err()
        );
    }
}
