"""Fig. 15 at full scale: Shoal's sweep against the packet-switched baselines' sweep, as the
ratios §7.3 states. Reads docs/results/data/fig15-full-scale.csv (Shoal, a million flows per
load, made after the model changes of 2026-11-23) and
docs/results/data/fig15-baselines-full-scale.csv (`shoal compare` of the baselines). Prints a
Markdown table per metric and the claims with the tolerances of
crates/repro/src/experiments/fig15_baselines.rs (±35%; low load 0.1-0.3, high 0.7-0.9,
geometric mean over the band). Earlier Shoal sweeps are in data/earlier/."""
import csv, math, sys, os

here = os.path.dirname(os.path.abspath(__file__))
shoal = {float(r["workload.load"]): r for r in csv.DictReader(open(os.path.join(here, "data/fig15-full-scale.csv")))}
base = {}
for r in csv.DictReader(open(os.path.join(here, "data/fig15-baselines-full-scale.csv"))):
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
print()
print("| claim | paper | ours | pass (±35%) |")
print("|---|---|---|---|")
for name, paper, ours in claims:
    ok = ours is not None and abs(ours / paper - 1) <= 0.35
    print(f"| {name} | {paper}x | {'-' if ours is None else f'{ours:.2f}x'} | {'yes' if ok else 'no'} |")
