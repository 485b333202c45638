#!/usr/bin/python3
"""bench/compare.py [filter]: times every case of bench/cases.lua in ltensor
and PyTorch 1.13 (1 and 2 threads; the better counts) and NumPy where it has
the op, interleaved: one case on every side, then the next, so that the
machine's load drifts equally over both.  Prints progress on stderr and a
markdown table on stdout (ratio = PyTorch time / ltensor time: above 1,
ltensor is faster).  BENCH_SCALE scales the iteration counts.

Run from the checkout root after `make` (`make bench` does both)."""
import os, subprocess, sys, time

flt = sys.argv[1] if len(sys.argv) > 1 else None
scale = float(os.environ.get("BENCH_SCALE", "1"))
env = dict(os.environ)
lua = subprocess.Popen(["lua5.4", "bench/lua_worker.lua"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                       text=True, env=env)
names = subprocess.run(["lua5.4", "bench/lua_worker.lua", "--list"], capture_output=True, text=True,
                       env=env).stdout.splitlines()

try:
    import torch
    sys.path.insert(0, os.path.dirname(__file__))
    from torch_cases import torch_cases, numpy_cases
except ImportError as e:
    torch, torch_cases, numpy_cases = None, {}, {}
    sys.stderr.write(f"PyTorch not available ({e}): ltensor figures only\n")


def best_of(op, args, n):
    op(*args)
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(n):
            op(*args)
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def fmt(x):
    if x is None:
        return "–"
    if x < 1e-3:
        return f"{x * 1e6:.3g} µs"
    return f"{x * 1e3:.3g} ms"


rows = []
selected = [n for n in names if not flt or flt in n]
print("| case | ltensor | PyTorch (best of 1/2 threads) | NumPy | PyTorch / ltensor |")
print("|---|---|---|---|---|")
# Each side is timed on a settled machine: PyTorch's OpenMP workers keep
# spinning for a while after its last parallel region (libgomp's wait
# policy) and took the second core from the ltensor case timed right after
# (sum dim=2 1000x1000: 44 us right after PyTorch's 2-thread run, 26 us
# after a pause); ltensor's pool stops polling after 100 us.  The pause
# comes before every side, so both are measured alike.
SETTLE = float(os.environ.get("BENCH_SETTLE", "0.3"))
for i, name in enumerate(selected, 1):
    sys.stderr.write(f"[{i}/{len(selected)}] {name} ...\n")
    time.sleep(SETTLE)
    lua.stdin.write(name + "\n")
    lua.stdin.flush()
    ans = lua.stdout.readline().strip()
    lt = float(ans) if not ans.startswith("ERROR") else None
    th, th_threads, npt = None, None, None
    if name in torch_cases:
        iters, setup, op = torch_cases[name]
        n = max(1, int(iters * scale))
        try:
            args = setup()
            for threads in (1, 2):
                torch.set_num_threads(threads)
                time.sleep(SETTLE)
                t = best_of(op, args, n)
                if th is None or t < th:
                    th, th_threads = t, threads
        except Exception as e:  # a case PyTorch cannot run is reported, not fatal
            sys.stderr.write(f"  torch: {e}\n")
        if name in numpy_cases:
            setup, op = numpy_cases[name]
            args = setup()
            time.sleep(SETTLE)
            npt = best_of(op, args, n)
    ratio = f"{th / lt:.2f}×" if (th and lt) else "–"
    lt_s = fmt(lt) if lt is not None else ans[:60]
    print(f"| {name} | {lt_s} | {fmt(th)}{f' ({th_threads}t)' if th else ''} | {fmt(npt)} | {ratio} |", flush=True)
lua.stdin.close()
lua.wait()
