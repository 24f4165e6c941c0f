//! The TiN crossbar's arbiter (§3.1): iSLIP (McKeown, 1999) with one request per (input port,
//! VC), as the paper's variant has it, so that no VC and no port is starved.
//!
//! Each iteration has three steps. *Request*: every (input, VC) whose head cell may cross
//! requests the output its route names. *Grant*: every unmatched output grants the request
//! that comes first, in round-robin order from its grant pointer, among those of unmatched
//! inputs; the order runs over (input, VC) pairs. *Accept*: every unmatched input accepts the
//! grant whose output comes first from its accept pointer. Pointers move one past the
//! accepted partner, and only for matches of the first iteration: that is what makes iSLIP's
//! pointers desynchronise and its throughput reach 100% under uniform traffic.
//!
//! Variable-size cells: the paper's "busy" signals keep an input or output that is still
//! moving a cell across the crossbar out of the next request-grant-accept round. The caller
//! does that by not offering requests of busy ports.
//!
//! The paper gives no iteration count. iSLIP converges to a maximal match in at most N
//! iterations and in about log2 N on average (McKeown); hardware arbiters stop at a few. We
//! default to 3 and make it a scenario key.

/// One request: input port, VC, and the output the head cell of that VC wants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub input: u16,
    pub vc: u8,
    pub output: u16,
}

/// Grant and accept pointers of one crossbar.
#[derive(Clone, Debug)]
pub struct Islip {
    ports: usize,
    vcs: usize,
    /// Per output: the (input, VC) key it grants first.
    grant: Vec<u32>,
    /// Per input: the output it accepts first.
    accept: Vec<u16>,
    input_matched: Vec<bool>,
    output_matched: Vec<bool>,
    /// Per output: best grant candidate this iteration (request index).
    best: Vec<u32>,
    /// Per input: best grant received this iteration (request index).
    granted: Vec<u32>,
    /// The outputs granting in this iteration, and the inputs granted, a bit each.
    granting: Vec<u16>,
    inputs: Vec<u64>,
}

const NONE: u32 = u32::MAX;

impl Islip {
    pub fn new(ports: usize, vcs: usize) -> Islip {
        Islip {
            ports,
            vcs,
            grant: vec![0; ports],
            accept: vec![0; ports],
            input_matched: vec![false; ports],
            output_matched: vec![false; ports],
            best: vec![NONE; ports],
            granted: vec![NONE; ports],
            granting: Vec::with_capacity(ports),
            inputs: vec![0; ports.div_ceil(64)],
        }
    }

    fn key(&self, r: &Request) -> u32 {
        r.input as u32 * self.vcs as u32 + r.vc as u32
    }

    /// Runs `iterations` rounds over `requests` (one per (input, VC) at most) and appends the
    /// indices of the matched requests to `matched`: no input and no output twice.
    ///
    /// Each iteration touches only the ports of its requests: the outputs that grant are
    /// listed as the grant step finds them, the inputs granted are bits of a set walked in
    /// port order (the order in which matches are appended, as a pass over every input would
    /// append them), and only those entries are reset after. A test holds the matches and
    /// pointers equal to the plain passes over every port.
    pub fn arbitrate(&mut self, requests: &[Request], iterations: u32, matched: &mut Vec<usize>) {
        let space = (self.ports * self.vcs) as u32;
        if let [r] = requests {
            // A lone request is granted and accepted in the first iteration, as below, without
            // the passes over every port.
            if iterations > 0 {
                matched.push(0);
                self.grant[r.output as usize] = (self.key(r) + 1) % space;
                self.accept[r.input as usize] = ((r.output as usize + 1) % self.ports) as u16;
            }
            return;
        }
        let first = matched.len();
        let ports = self.ports as u32;
        for iteration in 0..iterations {
            // Grant: per output, the request nearest after its pointer.
            self.granting.clear();
            for (i, r) in requests.iter().enumerate() {
                let (inp, out) = (r.input as usize, r.output as usize);
                if self.input_matched[inp] || self.output_matched[out] {
                    continue;
                }
                let b = self.best[out];
                if b == NONE {
                    self.best[out] = i as u32;
                    self.granting.push(out as u16);
                } else {
                    let g = self.grant[out];
                    let dist = |k: u32| wrap(k + space - g, space);
                    if dist(self.key(r)) < dist(self.key(&requests[b as usize])) {
                        self.best[out] = i as u32;
                    }
                }
            }
            if self.granting.is_empty() {
                break;
            }
            // Accept: per input, the granting output nearest after its pointer (the outputs'
            // distances differ, so the order they are looked at in does not matter).
            for &out in &self.granting {
                let b = self.best[out as usize];
                self.best[out as usize] = NONE;
                let inp = requests[b as usize].input as usize;
                let a = u32::from(self.accept[inp]);
                let dist = |o: u32| wrap(o + ports - a, ports);
                let g = self.granted[inp];
                if g == NONE {
                    self.granted[inp] = b;
                    self.inputs[inp / 64] |= 1 << (inp % 64);
                } else if dist(u32::from(out)) < dist(u32::from(requests[g as usize].output)) {
                    self.granted[inp] = b;
                }
            }
            // Every input granted accepts one grant: matched in port order.
            for w in 0..self.inputs.len() {
                let mut bits = std::mem::take(&mut self.inputs[w]);
                while bits != 0 {
                    let inp = w * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let g = std::mem::replace(&mut self.granted[inp], NONE);
                    let r = requests[g as usize];
                    self.input_matched[inp] = true;
                    self.output_matched[r.output as usize] = true;
                    matched.push(g as usize);
                    if iteration == 0 {
                        self.grant[r.output as usize] = (self.key(&r) + 1) % space;
                        self.accept[inp] = ((r.output as usize + 1) % self.ports) as u16;
                    }
                }
            }
        }
        for &m in &matched[first..] {
            let r = requests[m];
            self.input_matched[r.input as usize] = false;
            self.output_matched[r.output as usize] = false;
        }
    }
}

/// `x mod n` for `x < 2n`.
fn wrap(x: u32, n: u32) -> u32 {
    if x >= n { x - n } else { x }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn requests(ports: u16, vcs: u8) -> impl Strategy<Value = Vec<Request>> {
        prop::collection::btree_map((0..ports, 0..vcs), 0..ports, 0..64).prop_map(|m| {
            m.into_iter()
                .map(|((input, vc), output)| Request { input, vc, output })
                .collect()
        })
    }

    /// The plain passes over every port that [`Islip::arbitrate`] shortcuts: its matches, in
    /// their order, and its pointers must be these.
    fn reference(islip: &mut Islip, requests: &[Request], iterations: u32) -> Vec<usize> {
        let mut matched = Vec::new();
        let space = (islip.ports * islip.vcs) as u32;
        let (mut in_m, mut out_m) = (vec![false; islip.ports], vec![false; islip.ports]);
        for iteration in 0..iterations {
            let mut best = vec![NONE; islip.ports];
            let mut granted = vec![NONE; islip.ports];
            for (i, r) in requests.iter().enumerate() {
                let (inp, out) = (r.input as usize, r.output as usize);
                if in_m[inp] || out_m[out] {
                    continue;
                }
                let dist = |k: u32| (k + space - islip.grant[out]) % space;
                let b = best[out];
                if b == NONE || dist(islip.key(r)) < dist(islip.key(&requests[b as usize])) {
                    best[out] = i as u32;
                }
            }
            let mut any = false;
            for (out, &b) in best.iter().enumerate() {
                if b == NONE {
                    continue;
                }
                let inp = requests[b as usize].input as usize;
                let ports = islip.ports as u32;
                let dist = |o: u32| (o + ports - islip.accept[inp] as u32) % ports;
                let g = granted[inp];
                if g == NONE || dist(out as u32) < dist(requests[g as usize].output as u32) {
                    granted[inp] = b;
                }
            }
            for (inp, &g) in granted.iter().enumerate() {
                if g == NONE {
                    continue;
                }
                let r = requests[g as usize];
                in_m[inp] = true;
                out_m[r.output as usize] = true;
                matched.push(g as usize);
                any = true;
                if iteration == 0 {
                    islip.grant[r.output as usize] = (islip.key(&r) + 1) % space;
                    islip.accept[inp] = ((r.output as usize + 1) % islip.ports) as u16;
                }
            }
            if !any {
                break;
            }
        }
        matched
    }

    proptest! {
        /// Over rounds of random requests on a crossbar of more than 64 ports (two words of
        /// the input set), the matches, their order and the pointers are the plain passes'.
        #[test]
        fn matches_and_pointers_are_the_plain_passes(
            rounds in prop::collection::vec((requests(70, 4), 0u32..5), 1..6)
        ) {
            let (mut fast, mut plain) = (Islip::new(70, 4), Islip::new(70, 4));
            for (reqs, iterations) in rounds {
                let mut m = Vec::new();
                fast.arbitrate(&reqs, iterations, &mut m);
                let want = if reqs.len() == 1 {
                    // The lone request's shortcut, tested on its own below.
                    let mut m = Vec::new();
                    plain.arbitrate(&reqs, iterations, &mut m);
                    m
                } else {
                    reference(&mut plain, &reqs, iterations)
                };
                prop_assert_eq!(&m, &want);
                prop_assert_eq!(&fast.grant, &plain.grant);
                prop_assert_eq!(&fast.accept, &plain.accept);
            }
        }

        /// A match never pairs a port twice, and with as many iterations as ports it is
        /// maximal: no request is left whose input and output are both free.
        #[test]
        fn matches_are_valid_and_maximal_after_n_iterations(reqs in requests(8, 4), rounds in 1usize..4) {
            let mut islip = Islip::new(8, 4);
            for _ in 0..rounds {
                let mut m = Vec::new();
                islip.arbitrate(&reqs, 8, &mut m);
                let mut ins = [false; 8];
                let mut outs = [false; 8];
                for &i in &m {
                    let r = reqs[i];
                    prop_assert!(!ins[r.input as usize] && !outs[r.output as usize]);
                    ins[r.input as usize] = true;
                    outs[r.output as usize] = true;
                }
                for r in &reqs {
                    prop_assert!(ins[r.input as usize] || outs[r.output as usize], "{:?} left out", r);
                }
            }
        }
    }

    /// Under persistent full load (every input asks every output on some VC), the pointers
    /// desynchronise and one iteration reaches a perfect match: iSLIP's 100% throughput.
    #[test]
    fn one_iteration_desynchronises_to_a_full_match() {
        let n = 6u16;
        let reqs: Vec<Request> = (0..n)
            .flat_map(|i| {
                (0..n).map(move |o| Request {
                    input: i,
                    vc: o as u8,
                    output: o,
                })
            })
            .collect();
        let mut islip = Islip::new(n as usize, n as usize);
        let mut sizes = Vec::new();
        for _ in 0..20 {
            let mut m = Vec::new();
            islip.arbitrate(&reqs, 1, &mut m);
            sizes.push(m.len());
        }
        assert_eq!(sizes[0], 1, "all outputs grant input 0 at first");
        assert!(
            sizes[n as usize..].iter().all(|&s| s == n as usize),
            "{sizes:?}"
        );
    }

    /// Two VCs of one input asking one output are served in turn: no VC starves.
    #[test]
    fn the_vcs_of_one_input_alternate() {
        let reqs = [
            Request {
                input: 0,
                vc: 1,
                output: 2,
            },
            Request {
                input: 0,
                vc: 3,
                output: 2,
            },
        ];
        let mut islip = Islip::new(4, 4);
        let mut served = Vec::new();
        for _ in 0..4 {
            let mut m = Vec::new();
            islip.arbitrate(&reqs, 1, &mut m);
            served.push(reqs[m[0]].vc);
        }
        assert_eq!(served, [1, 3, 1, 3]);
    }

    /// The lone-request shortcut moves the pointers as the general passes do for a request
    /// matched in the first iteration beside an unrelated one.
    #[test]
    fn a_lone_request_moves_the_pointers_as_a_first_iteration_match() {
        for (input, vc, output) in [(0u16, 0u8, 0u16), (3, 2, 5), (7, 3, 7)] {
            let r = Request { input, vc, output };
            let other = Request {
                input: (input + 1) % 8,
                vc: 1,
                output: (output + 1) % 8,
            };
            let (mut lone, mut pair) = (Islip::new(8, 4), Islip::new(8, 4));
            let (mut m1, mut m2) = (Vec::new(), Vec::new());
            lone.arbitrate(&[r], 3, &mut m1);
            pair.arbitrate(&[r, other], 3, &mut m2);
            assert_eq!(m1, vec![0]);
            assert!(m2.contains(&0));
            assert_eq!(lone.grant[output as usize], pair.grant[output as usize]);
            assert_eq!(lone.accept[input as usize], pair.accept[input as usize]);
        }
    }
}
