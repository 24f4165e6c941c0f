#!/usr/bin/env python3
"""Writes an htsim connection matrix (.cm) of the Shoal §7.3 workload, for
scripts/vs-htsim-fattree.sh: flows between uniformly drawn host pairs (source and destination
distinct), Poisson arrivals over a window, Pareto sizes capped at a maximum.

    scripts/pareto-cm.py --hosts 512 --gbps 50 --load 0.2 --window-us 1000 --seed 1 OUT.cm

Sizes: Pareto of shape `--shape` (1.05) whose uncapped mean is `--mean-bytes` (100 KB, §7.3),
i.e. scale xm = mean (shape - 1) / shape, each draw cut to `--cap-bytes` (1 GB, as
scenarios/fig15-*.toml) and rounded up to whole bytes, or to a multiple of `--round-to` (htsim's
NDP sends whole packets: a flow of 5,367 B sends four of 1,436 B, so the comparison gives both
simulators sizes of whole packets). The arrival rate offers `load` of every
host's `gbps` over the window, computed from the mean of the capped law,
mean (1 - (xm / cap)^(shape - 1)), not from the uncapped 100 KB: at shape 1.05 the cap removes
over half of the mean, and a rate set from the uncapped mean would offer less than half the load.

The file is the format both htsim's loader and shoal's (`crates/workload/src/connection_matrix.rs`)
read: `start` in picoseconds, which htsim parses as a 32-bit float, so every start is rounded to
the nearest float32 here and both simulators start each flow at the same picosecond; `size` in
bytes, which htsim parses as a 32-bit int (the 1 GB cap fits); `id` from 1.
Deterministic: the same arguments write the same file (Python's Mersenne Twister, seeded).
"""

import argparse
import math
import random
import struct
import sys


def float32(x: float) -> float:
    """The float32 nearest to x, as htsim's `stof` reads it."""
    return struct.unpack("f", struct.pack("f", x))[0]


def capped_pareto_mean(mean: float, shape: float, cap: float) -> float:
    xm = mean * (shape - 1.0) / shape
    return mean * (1.0 - (xm / cap) ** (shape - 1.0))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, required=True)
    ap.add_argument("--gbps", type=float, required=True, help="each host's link rate")
    ap.add_argument("--load", type=float, required=True, help="offered load, 0-1")
    ap.add_argument("--window-us", type=float, required=True, help="arrivals over [0, window)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--shape", type=float, default=1.05)
    ap.add_argument("--mean-bytes", type=float, default=100_000.0)
    ap.add_argument("--cap-bytes", type=float, default=1e9)
    ap.add_argument("--round-to", type=int, default=1,
                    help="round each size up to a multiple of this (htsim's NDP sends whole packets)")
    ap.add_argument("out")
    a = ap.parse_args()
    if a.round_to < 1:
        print("pareto-cm.py: --round-to must be at least 1", file=sys.stderr)
        return 2
    if a.hosts < 2 or not (0 < a.load <= 1) or a.window_us <= 0 or a.shape <= 1:
        print("pareto-cm.py: need hosts >= 2, 0 < load <= 1, window > 0, shape > 1", file=sys.stderr)
        return 2
    if a.cap_bytes >= 2**31:
        print("pareto-cm.py: htsim reads sizes as 32-bit ints: cap below 2^31", file=sys.stderr)
        return 2
    rng = random.Random(a.seed)
    xm = a.mean_bytes * (a.shape - 1.0) / a.shape
    mean = capped_pareto_mean(a.mean_bytes, a.shape, a.cap_bytes)
    rate_per_ps = a.load * a.hosts * a.gbps * 1e9 / 8.0 / mean / 1e12  # flows per picosecond
    window_ps = a.window_us * 1e6
    flows = []
    t = 0.0
    while True:
        t += rng.expovariate(rate_per_ps)
        if t >= window_ps:
            break
        src = rng.randrange(a.hosts)
        dst = rng.randrange(a.hosts - 1)
        dst += dst >= src
        u = 1.0 - rng.random()  # (0, 1]
        size = min(xm * u ** (-1.0 / a.shape), a.cap_bytes)
        size = max(1, math.ceil(size))
        size = -(-size // a.round_to) * a.round_to
        flows.append((float32(round(t)), src, dst, size))
    with open(a.out, "w") as f:
        f.write(f"# pareto-cm.py --hosts {a.hosts} --gbps {a.gbps} --load {a.load} "
                f"--window-us {a.window_us} --seed {a.seed} --shape {a.shape} "
                f"--mean-bytes {a.mean_bytes} --cap-bytes {a.cap_bytes} --round-to {a.round_to}\n")
        f.write(f"Nodes {a.hosts}\nConnections {len(flows)}\n")
        for i, (start, src, dst, size) in enumerate(flows):
            f.write(f"{src}->{dst} start {start:.0f} size {size} id {i + 1}\n")
    print(f"{len(flows)} flows, capped mean {mean:.0f} B", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
