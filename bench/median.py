#!/usr/bin/python3
"""bench/median.py RUN1.md RUN2.md ...: the per-case median of several
bench/compare.py tables (ltensor's time, PyTorch's best-of-threads time and
NumPy's, each the median over the runs), and the ratio of the medians.
Rows of one run vary by up to 2x on a shared 2-core machine; the median of
three or more runs is the figure to quote.

    for r in 1 2 3; do BENCH_SCALE=0.2 /usr/bin/python3 bench/compare.py > /tmp/run$r.md; done
    /usr/bin/python3 bench/median.py /tmp/run*.md"""
import re, statistics, sys

UNITS = {"µs": 1e-6, "ms": 1e-3, "s": 1.0}


def secs(cell):
    m = re.match(r"\s*([0-9.]+)\s*(µs|ms|s)\b", cell)
    return float(m.group(1)) * UNITS[m.group(2)] if m else None


def fmt(x):
    if x is None:
        return "–"
    return f"{x * 1e6:.3g} µs" if x < 1e-3 else f"{x * 1e3:.3g} ms"


if len(sys.argv) < 2:
    sys.exit(__doc__)
rows, order = {}, []
for path in sys.argv[1:]:
    for line in open(path, encoding="utf-8"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 5 or cells[0] in ("case", "---") or cells[0].startswith("-"):
            continue
        name = cells[0]
        if name not in rows:
            rows[name] = {"lt": [], "pt": [], "np": [], "threads": []}
            order.append(name)
        r = rows[name]
        for key, cell in (("lt", cells[1]), ("pt", cells[2]), ("np", cells[3])):
            v = secs(cell)
            if v is not None:
                r[key].append(v)
        m = re.search(r"\((\dt)\)", cells[2])
        if m:
            r["threads"].append(m.group(1))

print(f"| case | ltensor | PyTorch (best of 1/2 threads) | NumPy | PyTorch / ltensor |")
print("|---|---|---|---|---|")
for name in order:
    r = rows[name]
    lt = statistics.median(r["lt"]) if r["lt"] else None
    pt = statistics.median(r["pt"]) if r["pt"] else None
    npt = statistics.median(r["np"]) if r["np"] else None
    ratio = f"{pt / lt:.2f}×" if lt and pt else "–"
    n = max(len(r["lt"]), len(r["pt"]))
    print(f"| {name} | {fmt(lt)} | {fmt(pt)} | {fmt(npt)} | {ratio} |")
print(f"\nmedians of {len(sys.argv) - 1} runs")
