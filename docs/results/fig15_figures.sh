#!/bin/sh
# Redraws the Fig. 15/16 figures in docs/results/figures from the committed full-scale data:
# Shoal's sweep (data/fig15-full-scale.csv) for fig15a, fig15b and fig16, and that sweep beside
# the baselines' sweeps (data/fig15-baselines-full-scale.csv: DCTCP, DCQCN and NDP with htsim's
# settings, issue 36; the earlier settings' runs are in data/earlier/) for fig15-baselines-*, so
# that every fabric a figure compares is on it. Axis labels name the quantity and its unit. Run from the
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
base_title="512 nodes, 10^6 flows a point; baselines as htsim sets them"

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

baselines() {
    metric=$1
    label=$2
    shift 2
    "$shoal" plot "$data/fig15-full-scale.csv" "$data/fig15-baselines-full-scale.csv" \
        --x workload.load --y "$metric" --series fabric \
        --rename fig15-full-scale=Shoal --rename dctcp=DCTCP --rename ndp=NDP \
        --rename 'dcqcn=DCQCN (RED marking)' \
        --xlabel "$load" --ylabel "$label" --title "$base_title" \
        --out "$figures/fig15-baselines-$metric" "$@"
}
baselines short_fct_mean_us "short-flow (<= 100 KB) FCT, mean (µs)" --log-y
baselines short_fct_p99_us "short-flow (<= 100 KB) FCT, 99th percentile (µs)" --log-y
baselines long_goodput_gbps "long-flow (>= 1 MB) goodput, mean (Gb/s)"
