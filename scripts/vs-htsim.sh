#!/usr/bin/env bash
# shoal and htsim side by side on htsim's permutation examples (issue 21), run alternately on
# this machine, so that every ratio printed is measured here and now.
#
#   scripts/vs-htsim.sh PATH_TO_HTSIM_CHECKOUT [RUNS [NDP_RUNS]]
#
# Only an idle machine gives a ratio (issue 40 §2: on a busy one htsim slowed more than shoal,
# and the ratios read 5.1x and 11.2x where idle pairs gave about 4x). Before each pair the
# script waits (up to 120 s) until the rest of the machine uses less than 5% of a CPU over 2 s
# (/proc/stat); during each run it measures the CPU the rest of the machine used (the machine's
# busy time less the run's own user + sys); a pair in which either run saw others use more than
# 5% of a CPU is marked BUSY and left out of the ratios. Both simulators run pinned to the same
# core (taskset, the last core). The ratios printed at the end are the medians over the clean
# pairs, of wall time and of user + sys CPU time, per transport; at least 5 pairs of each.
#
# PATH_TO_HTSIM_CHECKOUT is a checkout of https://github.com/Broadcom/csg-htsim (its `sim/`
# folder inside). It is copied to a scratch folder (mktemp, or $VS_HTSIM_WORK) and built there
# with htsim's own makefiles; nothing of htsim enters this repository. RUNS (default 10) is the
# number of alternated DCTCP runs, NDP_RUNS (default RUNS) of NDP runs (every NDP run is the same
# run in both simulators, so fewer only sample the wall time less). SHOAL_BIN names a shoal
# binary to use instead of building one with cargo.
#
# The workloads, each the same in both simulators:
# - NDP: htsim's `datacenter/htsim_ndp` on scenarios/htsim-permutation.cm (`-tm`), k = 12
#   fat-tree (432 hosts), 10 Gb/s, 8-packet queues, initial window 23, per-packet source
#   routing over permuted paths (`-strat perm`), 10 ms; shoal: scenarios/htsim-ndp-permutation.toml,
#   which reads the same .cm file. Both deterministic: every run is the same run.
# - DCTCP: htsim's published example `datacenter/old_tests/htsim_dctcp_permutation` (as
#   EXAMPLES/permutation/run.sh runs it: -nodes 432 -conns 432 -ssthresh 15 -q 100, 210 ms). It
#   draws its permutation and paths from the clock (`srand(time(NULL))`) and takes no .cm file,
#   so each of its runs is another sample; shoal runs scenarios/htsim-dctcp-permutation.toml with
#   seeds 1..RUNS, and the means are compared.
#
# At htsim's commit 841d9e7 the old_tests programs define `ntoa`/`itoa` that libhtsim.a defines
# too, so they are linked with `-Wl,--allow-multiple-definition` (the two definitions are the
# same function); nothing else is changed.
#
# Each simulator first runs the NDP example once untimed (a warm-up: binaries and inputs in the
# page cache). Measured for each run: wall time and peak RSS (/usr/bin/time -v) of the whole process, and the
# mean goodput per host over the same span in both. htsim's sink loggers sample every flow's
# cumulative ack (every 1 ms for NDP, asked here with -logtime; every 10 ms for DCTCP, fixed in
# its example); a flow's rate is the growth of its cumulative ack from the sample at the start
# of the measured span to its last sample, and the scenario files measure the same span
# (run.measure_from_us to run.until_us).
set -euo pipefail

if [[ $# -lt 1 || $# -gt 3 ]]; then
    echo "usage: $0 PATH_TO_HTSIM_CHECKOUT [RUNS [NDP_RUNS]]" >&2
    exit 2
fi
htsim_src=$(cd "$1" && pwd)
runs=${2:-10}
ndp_runs=${3:-$runs}
if (( runs < 5 || ndp_runs < 5 )); then
    echo "$0: at least 5 pairs of each transport (a median of fewer says little)" >&2
    exit 2
fi
if [[ ! -f "$htsim_src/sim/Makefile" ]]; then
    echo "$0: $htsim_src/sim/Makefile not found: is $1 a csg-htsim checkout?" >&2
    exit 2
fi
if [[ ! -x /usr/bin/time ]]; then
    echo "$0: needs /usr/bin/time (GNU time) for the peak memory" >&2
    exit 2
fi
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${VS_HTSIM_WORK:-$(mktemp -d -t vs-htsim.XXXXXX)}
mkdir -p "$work"
echo "# scratch folder: $work" >&2

# --- build htsim (its makefiles, in the scratch folder) and shoal ---------------------------
if [[ ! -x "$work/htsim/sim/datacenter/htsim_ndp" || ! -x "$work/htsim/sim/datacenter/old_tests/htsim_dctcp_permutation" ]]; then
    rm -rf "$work/htsim"
    mkdir -p "$work/htsim"
    cp -r "$htsim_src/sim" "$work/htsim/sim"
    (
        cd "$work/htsim/sim"
        make -j"$(nproc)" >"$work/htsim-build.log" 2>&1
        make -C datacenter -j"$(nproc)" htsim_ndp >>"$work/htsim-build.log" 2>&1
        make -C datacenter/old_tests htsim_dctcp_permutation \
            CFLAGS='-Wall -std=c++11 -g -Wsign-compare -O2 -Wl,--allow-multiple-definition' \
            >>"$work/htsim-build.log" 2>&1
    ) || { echo "$0: building htsim failed; see $work/htsim-build.log" >&2; exit 1; }
fi
htsim_ndp=$work/htsim/sim/datacenter/htsim_ndp
htsim_dctcp=$work/htsim/sim/datacenter/old_tests/htsim_dctcp_permutation
parse_output=$work/htsim/sim/parse_output
if [[ -n ${SHOAL_BIN:-} ]]; then
    # Absolute: the runs below happen in their own folders.
    shoal=$(cd "$(dirname "$SHOAL_BIN")" && pwd)/$(basename "$SHOAL_BIN")
    [[ -x $shoal ]] || { echo "$0: SHOAL_BIN=$SHOAL_BIN is not an executable" >&2; exit 2; }
else
    (cd "$repo" && cargo build --release -q -p shoal-cli)
    shoal=$repo/target/release/shoal
fi

# --- helpers ----------------------------------------------------------------------------------
pin=()
if command -v taskset >/dev/null; then
    pin=(taskset -c "$(($(nproc) - 1))")
fi

# busy_s: the machine's busy CPU seconds so far (all CPUs; /proc/stat's first line).
busy_s() {
    awk -v hz="$(getconf CLK_TCK)" 'NR == 1 { t = 0; for (i = 2; i <= 9; i++) t += $i;
                                              print (t - $5 - $6) / hz; exit }' /proc/stat
}

# wait_idle: waits up to 120 s until the machine's other processes use under 5% of a CPU over
# 2 s; prints the share seen last.
wait_idle() {
    local deadline=$((SECONDS + 120)) a b share
    while :; do
        a=$(busy_s); sleep 2; b=$(busy_s)
        share=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", (b - a) / 2 }')
        if awk -v s="$share" 'BEGIN { exit !(s < 0.05) }' || ((SECONDS > deadline)); then
            echo "$share"
            return
        fi
    done
}

# timed LABEL CMD...: runs CMD pinned, in the current folder; prints "wall_s peak_kib cpu_s
# others" (cpu_s: its user + sys; others: the rest of the machine's CPU share over the run).
timed() {
    local label=$1 b0 b1
    shift
    b0=$(busy_s)
    /usr/bin/time -v -o "$label.time" "${pin[@]}" "$@" >"$label.out" 2>"$label.err" ||
        { echo "$0: $label failed; see $PWD/$label.err" >&2; exit 1; }
    b1=$(busy_s)
    awk -F': ' -v b0="$b0" -v b1="$b1" '
        /Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0;
                                    for (i = 1; i <= n; i++) s = s * 60 + p[i] }
        /Maximum resident set size/ { kib = $2 }
        /User time \(seconds\)/ { u = $2 }
        /System time \(seconds\)/ { y = $2 }
        END { o = (s > 0) ? (b1 - b0 - u - y) / s : 0; if (o < 0) o = 0;
              printf "%.2f %d %.2f %.3f\n", s, kib, u + y, o }' "$label.time"
}

# htsim_goodput LOG TYPE FROM_S: the mean per-flow goodput in Gb/s from htsim's sink samples of
# TYPE (NDP_SINK, TCP_SINK) from the first sample at or after FROM_S to the last; prints
# "mean min max span_from span_to".
htsim_goodput() {
    "$parse_output" "$1" -ascii | awk -v type="$2" -v from="$3" '
        $3 == type && $1 + 1e-12 >= from {
            for (i = 4; i <= NF; i++) if ($i == "ID") id = $(i + 1); else if ($i == "CAck") c = $(i + 1)
            if (!(id in t0)) { t0[id] = $1; c0[id] = c }
            t1[id] = $1; c1[id] = c
        }
        END {
            n = 0; sum = 0; min = 1e18; max = 0
            for (id in t0) {
                if (t1[id] <= t0[id]) continue
                r = (c1[id] - c0[id]) * 8 / (t1[id] - t0[id]) / 1e9
                sum += r; n++; if (r < min) min = r; if (r > max) max = r; a = t0[id]; b = t1[id]
            }
            if (n == 0) { print "no samples"; exit 1 }
            printf "%.4f %.4f %.4f %s %s\n", sum / n, min, max, a, b
        }'
}

# shoal_goodput FOLDER: the payload delivered per receiving host (Gb/s) over the measured span
# (summary.json's delivered_gbps_per_node; in a permutation every host receives one flow).
shoal_goodput() {
    python3 - "$1" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
print("%.4f" % s["delivered_gbps_per_node"])
EOF
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

cd "$work"
date -u +"# %Y-%m-%d %H:%M UTC"
echo "# $(uname -srm); $(nproc) cores; $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
echo "# htsim $(git -C "$htsim_src" rev-parse --short HEAD 2>/dev/null || echo '(not a git checkout)'); shoal $(git -C "$repo" rev-parse --short HEAD)"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| run | transport | htsim wall s | shoal wall s | wall htsim / shoal | htsim CPU s | shoal CPU s | CPU htsim / shoal | htsim peak MiB | shoal peak MiB | htsim Gb/s per host | shoal Gb/s per host | others' CPU share (before, htsim, shoal) | pair |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
clean=$work/clean-pairs.txt
: >"$clean"

cm=$repo/scenarios/htsim-permutation.cm
# One untimed NDP run of each first, so that no timed run pays for loading its binary and
# inputs from disk (a first run after a build took 2.33 s where the next took 1.36 s).
mkdir -p "$work/warm-up"
cd "$work/warm-up"
timed htsim "$htsim_ndp" -tm "$cm" -nodes 432 -cwnd 23 -q 8 -strat perm -linkspeed 10000 \
    -end 10000 -log sink -logtime 1 -o htsim.log >/dev/null
timed shoal "$shoal" run "$repo/scenarios/htsim-ndp-permutation.toml" --out shoal-out --force \
    --quiet >/dev/null
for transport in ndp dctcp; do
    count=$runs
    [[ $transport == ndp ]] && count=$ndp_runs
    for ((i = 1; i <= count; i++)); do
        dir=$work/$transport-$i
        rm -rf "$dir"
        mkdir -p "$dir"
        cd "$dir"
        if [[ $transport == ndp ]]; then
            idle=$(wait_idle)
            read -r hw hk hc ho < <(timed htsim "$htsim_ndp" -tm "$cm" -nodes 432 -cwnd 23 -q 8 \
                -strat perm -linkspeed 10000 -end 10000 -log sink -logtime 1 -o htsim.log)
            read -r hg _ < <(htsim_goodput htsim.log NDP_SINK 0.001)
            scenario=$repo/scenarios/htsim-ndp-permutation.toml
            seed=()
        else
            idle=$(wait_idle)
            read -r hw hk hc ho < <(timed htsim "$htsim_dctcp" -o htsim.log -nodes 432 -conns 432 \
                -ssthresh 15 -q 100)
            # Its samples are every 10 ms: the first at or after shoal's 21 ms is the 30 ms one.
            read -r hg _ < <(htsim_goodput htsim.log TCP_SINK 0.030)
            scenario=$repo/scenarios/htsim-dctcp-permutation.toml
            seed=(--seed "$i")
        fi
        read -r sw sk sc so < <(timed shoal "$shoal" run "$scenario" "${seed[@]}" --out shoal-out --force --quiet)
        sg=$(shoal_goodput shoal-out)
        state=clean
        if awk -v a="$idle" -v b="$ho" -v c="$so" 'BEGIN { exit !(a >= 0.05 || b > 0.05 || c > 0.05) }'; then
            state=BUSY
        else
            echo "$transport $(ratio "$hw" "$sw") $(ratio "$hc" "$sc")" >>"$clean"
        fi
        echo "| $i | $transport | $hw | $sw | $(ratio "$hw" "$sw") | $hc | $sc | $(ratio "$hc" "$sc") | $((hk / 1024)) | $((sk / 1024)) | $hg | $sg | $idle, $ho, $so | $state |"
    done
done
echo
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# pinned: ${pin[*]:-no (taskset not found)}"
for transport in dctcp ndp; do
    awk -v t="$transport" '
        $1 == t { n++; w[n] = $2; c[n] = $3 }
        function median(a, n,   i, j, x) {
            for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
            return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        END {
            if (n == 0) { printf "# %s: no clean pair: no ratio (the machine was busy)\n", t; exit }
            printf "# %s: htsim / shoal over %d clean pairs: wall %.2fx, CPU %.2fx (medians)\n", t, n, median(w, n), median(c, n)
        }' "$clean"
done
