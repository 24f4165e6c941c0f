#!/bin/sh
# Redraws Shoal's own Fig. 15/16 figures in docs/results/figures (fig15a, fig15b, fig16) from its
# committed full-scale sweep (data/fig15-full-scale.csv). The figures with every fabric,
# fig15-baselines-*, are written by the full-scale run of `shoal repro fig15-baselines` itself
# (docs/results/baselines.md). Axis labels name the quantity and its unit. Run from the
# repository's root:
#   sh docs/results/fig15_figures.sh [path/to/shoal]
set -eu
shoal=${1:-target/release/shoal}
if [ ! -x "$shoal" ]; then
    echo "$0: $shoal is not there: build it first (cargo build --release) or name it" >&2
    exit 1
fi
data=docs/results/data
figures=docs/results/figures
load="offered load (fraction of each node's link rate)"
title="Fig. 15 workload, 512 nodes, 1,000,000 flows per point"

"$shoal" plot "$data/fig15-full-scale.csv" --x workload.load \
    --y short_fct_mean_us --y short_fct_p99_us \
    --rename short_fct_mean_us=mean --rename 'short_fct_p99_us=99th percentile' \
    --xlabel "$load" --ylabel "Shoal: short-flow (<= 100 KB) FCT (µs)" --title "$title" \
    --out "$figures/fig15a-short-fct"
"$shoal" plot "$data/fig15-full-scale.csv" --x workload.load --y long_goodput_gbps \
    --xlabel "$load" --ylabel "Shoal: long-flow (>= 1 MB) goodput, mean (Gb/s)" \
    --title "$title" --out "$figures/fig15b-long-goodput"
"$shoal" plot "$data/fig15-full-scale.csv" --x workload.load \
    --y max_queue_cells --y max_node_queue_cells \
    --rename 'max_queue_cells=one queue' --rename 'max_node_queue_cells=all queues of one node' \
    --xlabel "$load" --ylabel "Shoal: longest queue (64-byte cells)" --log-y \
    --title "$title" --out "$figures/fig16-queues"
"$shoal" plot "$data/fig15-full-scale.csv" --x workload.load --y max_reorder_kb \
    --xlabel "$load" --ylabel "Shoal: largest reordering buffer (KB)" \
    --title "$title" --out "$figures/fig16-reordering"

