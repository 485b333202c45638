#!/usr/bin/python3
"""bench/ab.py OLD_REV [filter]: an older build against this checkout's, case
by case in one run (issue 7: "old build against new, no case slower by more
than 10%").  OLD_REV is built into /tmp/ltensor-ab-<rev> (git worktree, `make
libs`); each case of this checkout's bench/cases.lua then runs in both
builds in turn, three rounds (the first side alternating, a 0.3 s pause
before each timing), the best time of each kept, so that load drifts reach
both alike.  A case the old build cannot run (a newer API)
is listed as such.  Prints a markdown table: new / old below 1 is faster.

Run from the checkout root after `make`.  BENCH_SCALE scales iterations;
BENCH_THREADS=1 runs both builds on one thread (and OpenBLAS on one), which
compares the code without the thread placement noise of a 2-core machine."""
import os, subprocess, sys, time

if len(sys.argv) < 2:
    sys.exit(__doc__)
rev = subprocess.run(["git", "rev-parse", "--short", sys.argv[1]], capture_output=True, text=True,
                     check=True).stdout.strip()
flt = sys.argv[2] if len(sys.argv) > 2 else None
old = f"/tmp/ltensor-ab-{rev}"
if not os.path.isdir(old):
    subprocess.run(["git", "worktree", "add", "--detach", old, rev], check=True)
subprocess.run(["make", "-C", old, "-j2", "libs"], check=True, stdout=subprocess.DEVNULL)
here = os.getcwd()


def worker(root):
    # the worker and the cases are this checkout's; the library is root's
    env = dict(os.environ, BENCH_ROOT=root, BENCH_HERE=here)
    if os.environ.get("BENCH_THREADS") == "1":
        env["OPENBLAS_NUM_THREADS"] = "1"
    return subprocess.Popen(["lua5.4", os.path.join(here, "bench/ab_worker.lua")], cwd=root,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)


names = subprocess.run(["lua5.4", "bench/lua_worker.lua", "--list"], capture_output=True, text=True).stdout.splitlines()
sides = {"old": worker(old), "new": worker(here)}


def ask(p, name):
    p.stdin.write(name + "\n")
    p.stdin.flush()
    r = p.stdout.readline().strip()
    return None if r.startswith("ERROR") or not r else float(r)


def fmt(x):
    return "–" if x is None else (f"{x * 1e6:.3g} µs" if x < 1e-3 else f"{x * 1e3:.3g} ms")


print(f"| case | old ({rev}) | new | new / old |")
print("|---|---|---|---|")
for name in names:
    if flt and flt not in name:
        continue
    sys.stderr.write(name + " ...\n")
    best = {"old": None, "new": None}
    for rnd in range(3):
        # the side that goes first alternates, and each side is timed after
        # a pause: the other build's threads (its pool, OpenBLAS's server
        # thread) keep polling for a while after its run
        for side in (("old", "new") if rnd % 2 == 0 else ("new", "old")):
            p = sides[side]
            time.sleep(0.3)
            t = ask(p, name)
            if t is not None and (best[side] is None or t < best[side]):
                best[side] = t
    o, n = best["old"], best["new"]
    ratio = f"{n / o:.2f}" if o and n else "old build lacks it" if n else "–"
    print(f"| {name} | {fmt(o)} | {fmt(n)} | {ratio} |", flush=True)
for p in sides.values():
    p.stdin.close()
