#!/usr/bin/env python3
"""The real-model suite: ltensor against PyTorch 1.13 on resnet18,
mobilenet_v2, a resnet18 training step, nn.TransformerEncoder (inference and
a training step) and an LSTM language model generating tokens.

    /usr/bin/python3 bench/models/run.py [--rounds R] [--only W,W] [--scale S]

(or `make bench-models`). It exports the seeded PyTorch weights once into
build/bench-models/, checks that ltensor computes the same outputs (1e-4 of
the outputs' scale), then times R rounds, each side in its own process per
configuration: ltensor at its defaults and with T.set_num_threads(1);
PyTorch at 1 and 2 threads with glibc's malloc told never to trim or mmap
(GLIBC_TUNABLES, a caching allocator's behaviour) and at default malloc.
Each figure is the smallest over the rounds of the per-round min / median.
Prints a markdown table; ratio = PyTorch's best / ltensor's (above 1,
ltensor is faster).
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CACHE = os.path.join(ROOT, "build", "bench-models")
PY = "/usr/bin/python3"
WORKLOADS = ["resnet18", "mobilenet_v2", "resnet18_train", "transformer", "transformer_train", "lstm_lm",
             "resnet18_folded", "mobilenet_v2_folded"]
LABEL = {
    "resnet18": "resnet18 inference 1x3x224x224",
    "mobilenet_v2": "mobilenet_v2 inference 1x3x224x224",
    "resnet18_train": "resnet18 training step 8x3x112x112 (SGD)",
    "transformer": "TransformerEncoder inference batch 1, seq 128",
    "transformer_train": "TransformerEncoder training step batch 16 (Adam)",
    "lstm_lm": "LSTM LM greedy generation, per token",
    "resnet18_folded": "resnet18 inference, BatchNorm folded (both sides)",
    "mobilenet_v2_folded": "mobilenet_v2 inference, BatchNorm folded (both sides)",
}
TARGET = {"resnet18": 1.5, "mobilenet_v2": 1.5, "resnet18_train": 1.0, "transformer": 2.0,
          "transformer_train": 1.0, "lstm_lm": 3.0, "resnet18_folded": 1.5, "mobilenet_v2_folded": 1.5}
PER = {"lstm_lm": 100}   # figures divided by the tokens generated
TUNED = "glibc.malloc.mmap_threshold=4294967296:glibc.malloc.trim_threshold=4294967296"


def lua_env():
    env = dict(os.environ)
    env["LUA_PATH"] = os.path.join(ROOT, "lua", "?.lua") + ";" + os.path.join(ROOT, "lua", "?", "init.lua") + ";;"
    env["LUA_CPATH"] = os.path.join(ROOT, "build", "?.so") + ";;"
    return env


def lines(cmd, env):
    out = subprocess.run(cmd, env=env, check=True, stdout=subprocess.PIPE, cwd=ROOT).stdout.decode()
    return [json.loads(l) for l in out.splitlines() if l.startswith("{")]


def export_if_needed():
    stamp = os.path.join(CACHE, "stamp")
    src = max(os.path.getmtime(os.path.join(HERE, f)) for f in ("tmodels.py", "torch_side.py"))
    if os.path.exists(stamp) and os.path.getmtime(stamp) >= src:
        return
    print("exporting the PyTorch weights into " + CACHE + " ...", file=sys.stderr)
    subprocess.run([PY, os.path.join(HERE, "torch_side.py"), "export", CACHE], check=True)
    open(stamp, "w").close()


def fmt(s):
    if s >= 1:
        return "%.3g s" % s
    if s >= 1e-3:
        return "%.3g ms" % (s * 1e3)
    return "%.3g µs" % (s * 1e6)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--only", default=",".join(WORKLOADS))
    ap.add_argument("--scale", default=os.environ.get("BENCH_SCALE", "1"))
    args = ap.parse_args()
    ws = args.only.split(",")
    export_if_needed()
    lenv = lua_env()
    lenv["BENCH_SCALE"] = args.scale
    lua = ["lua5.4", os.path.join(HERE, "lt_side.lua"), CACHE]
    for r in lines(lua + ["check"] + ws, lenv):
        print("check %-18s max |ltensor - PyTorch| / max |PyTorch| = %.2g" % (r["workload"], r["check"]),
              file=sys.stderr)
        if not r["ok"]:
            sys.exit("ltensor's %s differs from PyTorch's: not timing" % r["workload"])
    tenv = dict(os.environ, BENCH_SCALE=args.scale, GLIBC_TUNABLES=TUNED)
    denv = dict(os.environ, BENCH_SCALE=args.scale)
    denv.pop("GLIBC_TUNABLES", None)
    torch_cmd = [PY, os.path.join(HERE, "torch_side.py"), "run", "1,2"] + ws
    configs = [("lt", "default", lua + ["run", "default"] + ws, lenv),
               ("lt", "1", lua + ["run", "1"] + ws, lenv),
               ("pt", "tuned", torch_cmd, tenv),
               ("pt", "malloc", torch_cmd, denv)]
    best = {}   # (side, config, workload[, threads]) -> [min, median]
    loads = [os.getloadavg()[0]]
    t_start = time.time()
    for rnd in range(args.rounds):
        for side, cfg, cmd, env in configs:
            print("round %d: %s %s" % (rnd + 1, side, cfg), file=sys.stderr)
            time.sleep(0.3)
            for r in lines(cmd, env):
                key = (side, cfg, r["workload"], str(r["threads"]) if side == "pt" else "")
                b = best.setdefault(key, [float("inf"), float("inf")])
                b[0], b[1] = min(b[0], r["min"]), min(b[1], r["median"])
            loads.append(os.getloadavg()[0])
    print_table(ws, best, loads, time.time() - t_start, args)


def pick(best, side, cfg, w):
    """PyTorch's better thread count for a configuration: (min, median, threads)"""
    c = [(best[(side, cfg, w, t)], t) for t in ("1", "2") if (side, cfg, w, t) in best]
    (mn, med), t = min(c, key=lambda x: x[0][0])
    return mn, med, t


def print_table(ws, best, loads, secs, args):
    print("Measured %s, %d rounds in %.0f s, 1-minute load average %s (start, after each process)." % (
        time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), args.rounds, secs,
        " ".join("%.1f" % l for l in loads)))
    print()
    print("| workload | ltensor (defaults) | ltensor (1 thread) | PyTorch best (threads) | "
          "PyTorch, default malloc | PyTorch / ltensor | target |")
    print("|---|---|---|---|---|---|---|")
    for w in ws:
        d = PER.get(w, 1)
        ld, l1 = best[("lt", "default", w, "")], best[("lt", "1", w, "")]
        pmn, pmed, pt = pick(best, "pt", "tuned", w)
        qmn, qmed, qt = pick(best, "pt", "malloc", w)
        lbest = min(ld[0], l1[0])
        cell = lambda mn, med: "%s (median %s)" % (fmt(mn / d), fmt(med / d))
        print("| %s | %s | %s | %s (%s) | %s (%s) | %.2f× | %.1f× |" % (
            LABEL[w], cell(*ld), cell(*l1), cell(pmn, pmed), pt, cell(qmn, qmed), qt,
            pmn / lbest, TARGET[w]))
    print()
    print("Ratio: PyTorch's best minimum over ltensor's better minimum (defaults or 1 thread).")


if __name__ == "__main__":
    main()
