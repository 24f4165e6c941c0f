#!/usr/bin/env bash
# shoal's packet engine and htsim side by side on htsim's 512-host fat-tree under the Shoal §7.3
# workload (issue 36): the same flows, the same network, NDP in both; compares the simulated
# results (short-flow mean and p99 FCT, long-flow goodput), not the speed, at each load given.
#
#   scripts/vs-htsim-fattree.sh HTSIM_NDP [WINDOW_US [LOAD...]]
#
# HTSIM_NDP is an htsim_ndp binary (csg-htsim's sim/datacenter/htsim_ndp, built by you outside
# this repository: nothing of htsim enters it). WINDOW_US (default 1000) is the span over which
# flows arrive; LOADs default to 0.2 and 0.7 (docs/results/baselines.md reads "low load" as
# 0.1-0.3 and "high" as 0.7-0.9). SHOAL_BIN names a shoal binary instead of a cargo build;
# VS_HTSIM_WORK a scratch folder instead of a new one (mktemp); HTSIM_EXTRA words added to
# htsim's command (e.g. HTSIM_EXTRA="-host_queue_type prio": a FIFO host NIC); SHOAL_SET
# `--set` values added to shoal's, space-separated (e.g. SHOAL_SET='network.host_nic="fifo"',
# the engine's FIFO NIC, to compare with that htsim run).
#
# For each load: scripts/pareto-cm.py writes the flows (Pareto(1.05) sizes of 100 KB uncapped
# mean, capped at 1 GB and rounded up to whole 1436 B payloads, uniform pairs, Poisson arrivals
# over the window, seed 1) as an htsim
# connection matrix; htsim runs it as
#   htsim_ndp -tm FILE -nodes 512 -tiers 2 -linkspeed 50000 -mtu 1436 -q 12 -cwnd 35
#             -strat perm -end END -seed 13
# (2-tier fat-tree of K = 32: 32 ToRs of 16 hosts, 16 upper switches; 1 us a link and none in
# the switch, htsim's defaults; 1436 B of payload and its 64 B header: 1500 B on the wire) and
# shoal runs scenarios/htsim-ndp-fattree.toml, which sets the same network, on the same file.
# Both run until END = 3 x WINDOW_US.
#
# What is compared, over the flows each completed: short flows (at most 100 KB) mean and p99
# FCT; long flows (at least 1 MB) mean goodput (size / FCT). htsim prints a flow's completion
# when its sender receives the last ack (ndp.cpp); shoal's flows.csv records it when the
# receiver has the last byte. So htsim's FCTs are also given less the unloaded return of that
# ack (hops x (1 us + 64 B at 50 Gb/s): 2 hops within a ToR, 4 across), which is the like-for-
# like column; a remaining difference is the engines'. Also compared: how many flows completed.
set -euo pipefail

if [[ $# -lt 1 ]]; then
    echo "usage: $0 HTSIM_NDP [WINDOW_US [LOAD...]]" >&2
    exit 2
fi
htsim_ndp=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
[[ -x $htsim_ndp ]] || { echo "$0: $1 is not an executable (an htsim_ndp binary)" >&2; exit 2; }
window=${2:-1000}
shift $(($# >= 2 ? 2 : 1))
loads=("$@")
((${#loads[@]})) || loads=(0.2 0.7)
end=$(awk -v w="$window" 'BEGIN { printf "%d", 3 * w }')
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${VS_HTSIM_WORK:-$(mktemp -d -t vs-htsim-fattree.XXXXXX)}
mkdir -p "$work"
echo "# scratch folder: $work" >&2
if [[ -n ${SHOAL_BIN:-} ]]; then
    shoal=$(cd "$(dirname "$SHOAL_BIN")" && pwd)/$(basename "$SHOAL_BIN")
    [[ -x $shoal ]] || { echo "$0: SHOAL_BIN=$SHOAL_BIN is not an executable" >&2; exit 2; }
else
    (cd "$repo" && cargo build --release -q -p shoal-cli)
    shoal=$repo/target/release/shoal
fi

# stats FILE: reads "src dst bytes fct_us" lines; prints the compared figures:
# completed, short count, short mean, short p99 (nearest rank), long count, long goodput Gb/s.
stats() {
    sort -g -k4,4 "$1" | awk '
        { if ($3 <= 100000) { n++; s += $4; f[n] = $4 }
          if ($3 >= 1000000) { m++; g += $3 * 8 / ($4 * 1e3) } ; c++ }
        END {
            p = (n > 0) ? f[(int(0.99 * n) < 0.99 * n) ? int(0.99 * n) + 1 : int(0.99 * n)] : 0
            printf "%d %d %.3f %.3f %d %.3f\n", c, n, (n ? s / n : 0), p, m, (m ? g / m : 0)
        }'
}

# The unloaded return of the last ack, µs: 2 hops between hosts of one ToR (16 hosts each),
# 4 otherwise; each 1 µs of link and 64 B at 50 Gb/s.
ack_return='function back(s, d) { return ((int(s / 16) == int(d / 16)) ? 2 : 4) * (1 + 64 * 8 / 50e3) }'

# htsim_fct MODE: "src dst bytes fct_us" of every flow htsim completed, from its lines "Flow NAME
# flow_id ID finished at T_US total bytes B" and the start and size in flows.cm; MODE "less"
# takes the unloaded ack return off each FCT, "raw" leaves it.
htsim_fct() {
    awk -v mode="$1" "$ack_return"'
        FNR == NR { if ($1 ~ /->/) { split($1, sd, "->"); id = $7; src[id] = sd[1]; dst[id] = sd[2];
                                     start[id] = $3 / 1e6; size[id] = $5 }; next }
        $1 == "Flow" && $5 == "finished" { id = $4; fct = $7 - start[id]
            if (mode == "less") fct -= back(src[id], dst[id])
            print src[id], dst[id], size[id], fct }' flows.cm htsim.out
}

diff_pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "n/a"; else printf "%+.1f%%", (a - b) / b * 100 }'; }

shoal_set=()
for s in ${SHOAL_SET:-}; do shoal_set+=(--set "$s"); done

date -u +"# %Y-%m-%d %H:%M UTC"
echo "# htsim_ndp: $htsim_ndp ${HTSIM_EXTRA:-}; shoal $(git -C "$repo" rev-parse --short HEAD) ${SHOAL_SET:-}; window $window us, run to $end us"
echo
echo "| load | flows | completed (htsim / shoal) | short mean µs: htsim, htsim less ack, shoal, diff | short p99 µs: htsim, htsim less ack, shoal, diff | long goodput Gb/s: htsim, htsim less ack, shoal, diff (long flows done: htsim / shoal) |"
echo "|---|---|---|---|---|---|"
for load in "${loads[@]}"; do
    dir=$work/L$load
    mkdir -p "$dir"
    cd "$dir"
    python3 "$repo/scripts/pareto-cm.py" --hosts 512 --gbps 50 --load "$load" \
        --window-us "$window" --seed 1 --round-to 1436 flows.cm 2>/dev/null
    flows=$(awk '$1 == "Connections" { print $2 }' flows.cm)
    "$htsim_ndp" -tm flows.cm -nodes 512 -tiers 2 -linkspeed 50000 -mtu 1436 -q 12 -cwnd 35 \
        -strat perm -end "$end" -seed 13 ${HTSIM_EXTRA:-} -o htsim.log >htsim.out 2>htsim.err ||
        { echo "$0: htsim failed; see $dir/htsim.err" >&2; exit 1; }
    "$shoal" run "$repo/scenarios/htsim-ndp-fattree.toml" --set "workload.file=\"$dir/flows.cm\"" \
        --set "run.until_us=$end" "${shoal_set[@]}" --out shoal-out --force --quiet >shoal.out 2>shoal.err ||
        { echo "$0: shoal failed; see $dir/shoal.err" >&2; exit 1; }
    htsim_fct raw >htsim.fct
    htsim_fct less >htsim-less.fct
    awk -F, 'NR > 1 && $7 != "" { print $2, $3, $4, $7 }' shoal-out/flows.csv >shoal.fct
    read -r hc hn hm hp hl hg < <(stats htsim.fct)
    read -r _ _ lm lp _ lg < <(stats htsim-less.fct)
    read -r sc sn sm sp sl sg < <(stats shoal.fct)
    echo "| $load | $flows | $hc / $sc | $hm, $lm, $sm, $(diff_pct "$sm" "$lm") | $hp, $lp, $sp, $(diff_pct "$sp" "$lp") | $hg, $lg, $sg, $(diff_pct "$sg" "$lg") ($hl / $sl) |"
done
echo
echo "# diff: (shoal - htsim less ack) / (htsim less ack)"
