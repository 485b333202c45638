#!/usr/bin/python3
"""bench/convs.py: per-shape convolution benchmark, ltensor against PyTorch 1.13.

    /usr/bin/python3 bench/convs.py [--rounds R] [--filter TEXT]   (checkout root, after make)

Each round runs, each in its own process and in this order: bench/convs.lua
at the state's default threads, bench/convs.lua with T.set_num_threads(1),
bench/convs_torch.py at 1 and at 2 threads (with GLIBC_TUNABLES raising
malloc's mmap and trim thresholds, so that PyTorch reuses its large
buffers), and OpenBLAS's sgemm alone (bench/sgemm_peak.c, one thread) on the
gemm shape of every 3x3 convolution with >= 64 channels.  Every figure is the
minimum over the rounds of each side's per-case minimum (wall time; one
column compares the one-thread sides' CPU times, which load disturbs less).  Prints
a markdown table; the spread line says how noisy the rounds were."""
import argparse, os, re, subprocess, sys, time

TORCH_ENV = "glibc.malloc.mmap_threshold=4294967296:glibc.malloc.trim_threshold=4294967296"
CONFIGS = [("lt", "default"), ("lt", "1"), ("pt", "1"), ("pt", "2")]


def run_side(kind, threads, filt):
    time.sleep(0.3)   # let the previous process's threads stop polling
    if kind == "lt":
        cmd = ["lua5.4", "bench/convs.lua", threads]
        env = dict(os.environ)
    else:
        cmd = ["/usr/bin/python3", "bench/convs_torch.py", threads]
        env = dict(os.environ, GLIBC_TUNABLES=TORCH_ENV)
    if filt:
        cmd.append(filt)
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    res = {}
    for line in out.splitlines():
        name, wall, cpu = line.split("\t")
        res[name] = (float(wall), float(cpu))
    return res


def parse(name):
    m = re.match(r"(\S+) (\d+)-(\d+) k(\d+)x(\d+) s(\d+) g(\d+) (\d+)x(\d+) b(\d+) (\S+)", name)
    _, ci, co, kh, kw, s, g, H, W, b = (int(v) if v.isdigit() else v for v in m.groups()[:10])
    return dict(ci=ci, co=co, kh=kh, kw=kw, s=s, g=g, H=H, W=W, b=b, mode=m.group(11))


def out_size(c):
    pad = c["kh"] // 2
    return (c["H"] + 2 * pad - c["kh"]) // c["s"] + 1, (c["W"] + 2 * pad - c["kw"]) // c["s"] + 1


def flops(c):
    ho, wo = out_size(c)
    f = 2.0 * c["b"] * c["co"] * ho * wo * (c["ci"] // c["g"]) * c["kh"] * c["kw"]
    return f * 3 if c["mode"] == "fwdbwd" else f


def gemm_shape(c):
    ho, wo = out_size(c)
    return c["co"], ho * wo, c["ci"] * c["kh"] * c["kw"]


def big3x3(c):
    return c["kh"] == 3 and c["g"] == 1 and c["ci"] >= 64


def fmt(t):
    return "%.3g ms" % (t * 1e3) if t >= 1e-3 else "%.3g us" % (t * 1e6)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--filter")
    a = ap.parse_args()
    peak_bin = "build/bin/sgemm_peak"
    subprocess.run("cc -O2 -o %s bench/sgemm_peak.c $(pkg-config --cflags --libs openblas)" % peak_bin, shell=True, check=True)
    best, rounds, cpu = {}, {}, {}
    peaks = {}
    for r in range(a.rounds):
        for cfg in CONFIGS:
            res = run_side(cfg[0], cfg[1], a.filter)
            for k, (v, c) in res.items():
                rounds.setdefault((cfg, k), []).append(v)
                best[(cfg, k)] = min(best.get((cfg, k), v), v)
                cpu[(cfg, k)] = min(cpu.get((cfg, k), c), c)
            sys.stderr.write("round %d %s %s: %d cases\n" % (r + 1, cfg[0], cfg[1], len(res)))
        shapes = sorted({gemm_shape(parse(k)) for (_, k) in best if big3x3(parse(k))} | {(1024, 1024, 1024)})
        args = [str(v) for s in shapes for v in s]
        out = subprocess.run([peak_bin] + args, env=dict(os.environ, OPENBLAS_NUM_THREADS="1"), capture_output=True,
                             text=True, check=True).stdout
        for line in out.splitlines():
            shp, gf = line.split("\t")
            key = tuple(int(v) for v in shp.split())
            peaks[key] = max(peaks.get(key, 0.0), float(gf))
    names = [k for (cfg, k) in best if cfg == CONFIGS[0]]
    print("| case | GFLOP | ltensor default | ltensor 1 thread | PyTorch 1t | PyTorch 2t | PyTorch best / ltensor default "
          "| PyTorch 1t / ltensor 1t | same, CPU time | ltensor 1t GFLOP/s (sgemm 1t of that shape) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    below = []
    for k in names:
        c = parse(k)
        lt, lt1 = best[(CONFIGS[0], k)], best[(CONFIGS[1], k)]
        p1, p2 = best.get((CONFIGS[2], k)), best.get((CONFIGS[3], k))
        pb = min(p1, p2)
        gf = flops(c) / lt1 * 1e-9
        note = ""
        if big3x3(c) and c["mode"] == "fwd":
            pk = peaks.get(gemm_shape(c))
            note = " (%.0f, %.0f%%)" % (pk, 100 * gf / pk)
        c1 = cpu[(CONFIGS[2], k)] / max(cpu[(CONFIGS[1], k)], 1e-9)
        print("| %s | %.3g | %s | %s | %s | %s | %.2fx | %.2fx | %.2fx | %.0f%s |" % (k, flops(c) * 1e-9, fmt(lt), fmt(lt1), fmt(p1),
              fmt(p2), pb / lt, p1 / lt1, c1, gf, note))
        if pb / lt < 1:
            below.append(k)
    print()
    print("sgemm 1024^3, one thread: %.1f GFLOP/s" % peaks[(1024, 1024, 1024)])
    spreads = {}
    for (cfg, k), v in rounds.items():
        if len(v) > 1:
            spreads.setdefault(cfg, []).append(max(v) / min(v))
    for cfg, s in spreads.items():
        s.sort()
        print("spread (slowest / fastest round per case) %s %s: median %.2f, max %.2f" % (cfg[0], cfg[1], s[len(s) // 2], s[-1]))
    print("below 1x (PyTorch best / ltensor default): %d of %d: %s" % (len(below), len(names), ", ".join(below) or "none"))


main()
