#!/usr/bin/env python3
"""Summarise a Shoal run's breakdown.csv (`rack.breakdown = true`): where short flows' time goes.

Usage: python3 docs/results/breakdown_table.py RUN_DIR [EPOCH_NS]

Prints, as Markdown, the mean of each part over all completed short flows, over the slowest 1%
(FCT at or above the 99th percentile) and by flow size (one cell per subflow or more), and how
often the critical cell waited more than one epoch at its source or intermediate (EPOCH_NS: the
rack's epoch, default 2976 ns = 128 slots of 23.25 ns, the 512-node rack of §7.1).
Standard library only.
"""

import csv
import sys

PARTS = [
    "subflow_ps",
    "held_ps",
    "ready_ps",
    "source_queue_ps",
    "first_hop_ps",
    "intermediate_ps",
    "second_hop_ps",
    "reassembly_ps",
]
# 56 B of payload per cell; a 512-node rack has 511 subflows per flow.
ONE_ROUND_BYTES = 511 * 56


def load(run_dir):
    with open(f"{run_dir}/breakdown.csv", newline="") as f:
        return [
            {k: (v if k == "path" else int(v)) for k, v in row.items()}
            for row in csv.DictReader(f)
        ]


def means(rows):
    n = len(rows)
    out = {"flows": n, "fct": sum(r["fct_ps"] for r in rows) / n / 1e6}
    for p in PARTS:
        out[p] = sum(r[p] for r in rows) / n / 1e6
    out["detour"] = sum(r["path"] == "detour" for r in rows) / n
    return out


def percentile(values, q):
    values = sorted(values)
    k = min(len(values) - 1, max(0, int(round(q * len(values))) - 1))
    return values[k]


def main():
    run_dir = sys.argv[1]
    epoch_ps = float(sys.argv[2]) * 1000 if len(sys.argv) > 2 else 2976.0 * 1000
    rows = load(run_dir)
    p99 = percentile([r["fct_ps"] for r in rows], 0.99)
    groups = [
        ("all short flows", rows),
        ("slowest 1% (FCT >= p99)", [r for r in rows if r["fct_ps"] >= p99]),
        (f"<= {ONE_ROUND_BYTES} B (one cell per subflow)", [r for r in rows if r["bytes"] <= ONE_ROUND_BYTES]),
        (f"> {ONE_ROUND_BYTES} B", [r for r in rows if r["bytes"] > ONE_ROUND_BYTES]),
    ]
    names = [p[: -len("_ps")] for p in PARTS]
    print("| flows | n | FCT | " + " | ".join(names) + " | detour share |")
    print("|---" * (len(PARTS) + 4) + "|")
    for label, g in groups:
        if not g:
            continue
        m = means(g)
        cells = " | ".join(f"{m[p]:.3f}" for p in PARTS)
        print(f"| {label} | {m['flows']} | {m['fct']:.3f} | {cells} | {m['detour']:.4f} |")
    print()
    for label, g in groups[:2]:
        src = sum(r["source_queue_ps"] > epoch_ps for r in g) / len(g)
        mid = sum(r["intermediate_ps"] > epoch_ps for r in g) / len(g)
        held = sum(r["held_ps"] > 0 for r in g) / len(g)
        ready = sum(r["ready_ps"] > 0 for r in g) / len(g)
        reasm = sum(r["reassembly_ps"] > 0 for r in g) / len(g)
        print(
            f"{label}: critical cell held by Eq. 2 / age rule {held:.3f}, in a ready queue "
            f"{ready:.3f}, over an epoch at the source {src:.3f}, over an epoch at the "
            f"intermediate {mid:.3f}, waiting in reassembly {reasm:.4f} (shares of flows)"
        )


if __name__ == "__main__":
    main()
