"""Fig. 15 at full scale: Shoal's sweep against the packet-switched baselines' sweep, as the
ratios §7.3 states. Reads docs/results/data/fig15-full-scale.csv (Shoal, a million flows per
load, made after the model changes of 2026-11-23) and
docs/results/data/fig15-baselines-full-scale.csv (the baselines' sweeps), or the baselines file
given as the first argument. Prints a Markdown table per metric and the claims with the
tolerances of crates/repro/src/experiments/fig15_baselines.rs (±35%; low load 0.1-0.3, high
0.7-0.9, geometric mean over the band; mean FCT over L ≤ 0.6, "comparable" within ±35% of 1,
"slightly higher" above 1 and at most 1.35). Earlier sweeps are in data/earlier/."""
import csv, math, sys, os

here = os.path.dirname(os.path.abspath(__file__))
shoal = {float(r["workload.load"]): r for r in csv.DictReader(open(os.path.join(here, "data/fig15-full-scale.csv")))}
base = {}
base_file = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "data/fig15-baselines-full-scale.csv")
for r in csv.DictReader(open(base_file)):
    base.setdefault(r["fabric"], {})[float(r["workload.load"])] = r

def num(x):
    return float(x) if x not in ("", None) else None

def gmean(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None

fabrics = sorted(base)
loads = sorted(set(shoal) | {l for f in base.values() for l in f})
print("| load | metric | shoal | " + " | ".join(fabrics) + " |")
print("|---|---|---|" + "---|" * len(fabrics))
for load in loads:
    for metric, col_s, col_b in [("short FCT mean (µs)", "short_fct_mean_us", "short_fct_mean_us"),
                                 ("short FCT p99 (µs)", "short_fct_p99_us", "short_fct_p99_us"),
                                 ("long goodput (Gb/s)", "long_goodput_gbps", "long_goodput_gbps")]:
        s = num(shoal[load][col_s]) if load in shoal else None
        cells = [num(base[f][load][col_b]) if load in base[f] else None for f in fabrics]
        fmt = lambda v: "-" if v is None else f"{v:.2f}"
        print(f"| {load} | {metric} | {fmt(s)} | " + " | ".join(fmt(c) for c in cells) + " |")

def ratio(f, load, col, shoal_over):
    if load not in shoal or load not in base[f]:
        return None
    s, b = num(shoal[load][col]), num(base[f][load][col])
    if not s or not b:
        return None
    return s / b if shoal_over else b / s

low = [l for l in loads if 0.1 <= l <= 0.3]
high = [l for l in loads if 0.7 <= l <= 0.9]
claims = []
for f, lo, hi in [("dctcp", 3, 2), ("dcqcn", 3, 2), ("ndp", 1.5, 2)]:
    if f not in base:
        continue
    claims.append((f"p99 {f}/shoal low", lo, gmean([ratio(f, l, "short_fct_p99_us", False) for l in low])))
    claims.append((f"p99 {f}/shoal high", hi, gmean([ratio(f, l, "short_fct_p99_us", False) for l in high])))
    claims.append((f"goodput shoal/{f} all loads", 1.7, gmean([ratio(f, l, "long_goodput_gbps", True) for l in loads])))
moderate = [l for l in loads if l <= 0.6]
for f in ["dctcp", "dcqcn", "ndp"]:
    if f not in base:
        continue
    ours = gmean([ratio(f, l, "short_fct_mean_us", True) for l in moderate])
    claims.append((f"mean shoal/{f} L <= 0.6", "slightly > 1" if f == "ndp" else "comparable (1", ours))
print()
print("| claim | paper | ours | pass (±35%) |")
print("|---|---|---|---|")
for name, paper, ours in claims:
    if paper == "slightly > 1":
        ok = ours is not None and 1 < ours <= 1.35
    else:
        target = 1 if paper == "comparable (1" else paper
        ok = ours is not None and abs(ours / target - 1) <= 0.35
    shown = "comparable (1x)" if paper == "comparable (1" else paper if isinstance(paper, str) else f"{paper}x"
    print(f"| {name} | {shown} | {'-' if ours is None else f'{ours:.2f}x'} | {'yes' if ok else 'no'} |")
