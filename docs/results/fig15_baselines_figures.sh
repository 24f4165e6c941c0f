#!/bin/sh
# Redraws docs/results/figures/fig15-baselines-* from the committed full-scale data: Shoal's
# sweep (data/fig15-full-scale.csv) and the baselines' comparison (data/fig15-baselines-full-
# scale.csv: DCTCP, NDP, and DCQCN twice, with RED marking and with one ECN threshold), so that
# every fabric the figures compare is on them. Run from the repository's root:
#   sh docs/results/fig15_baselines_figures.sh [path/to/shoal]
set -eu
shoal=${1:-target/release/shoal}
if [ ! -x "$shoal" ]; then
    echo "$0: $shoal is not there: build it first (cargo build --release) or name it" >&2
    exit 1
fi
data=docs/results/data
figures=docs/results/figures
plot() {
    metric=$1
    label=$2
    shift 2
    "$shoal" plot "$data/fig15-full-scale.csv" "$data/fig15-baselines-full-scale.csv" \
        --x workload.load --y "$metric" --series fabric \
        --rename fig15-full-scale=Shoal --rename dctcp=DCTCP --rename ndp=NDP \
        --rename 'dcqcn=DCQCN (RED marking)' \
        --rename 'dcqcn-threshold=DCQCN (one ECN threshold, K = 20)' \
        --xlabel "offered load (fraction of each node's link rate)" --ylabel "$label" \
        --title "Fig. 15 workload, 512 nodes, 1,000,000 flows per point" \
        --out "$figures/fig15-baselines-$metric" "$@"
}
plot short_fct_mean_us "short-flow FCT, mean (µs)" --log-y
plot short_fct_p99_us "short-flow FCT, 99th percentile (µs)" --log-y
plot long_goodput_gbps "long-flow goodput, mean (Gb/s)"
