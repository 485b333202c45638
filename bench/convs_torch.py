#!/usr/bin/python3
"""bench/convs_torch.py: the PyTorch side of the per-shape convolution
benchmark (see bench/convs.lua, which has the same cases and output).

usage: convs_torch.py THREADS [FILTER]      prints "case<TAB>wall<TAB>cpu"
       convs_torch.py --shapes              regenerates bench/conv_shapes.txt's rows
Run it with GLIBC_TUNABLES=glibc.malloc.mmap_threshold=4294967296:glibc.malloc.trim_threshold=4294967296
(bench/convs.py does) so that PyTorch's large buffers are reused, not mapped afresh per call."""
import sys, time
import torch
import torch.nn.functional as F


def print_shapes():
    import torchvision
    seen, rows = set(), []
    for name, ctor in (("resnet18", torchvision.models.resnet18), ("mobilenet_v2", torchvision.models.mobilenet_v2)):
        m = ctor().eval()

        def hook(mod, inp, out, name=name):
            key = (mod.in_channels, mod.out_channels) + mod.kernel_size + mod.stride + mod.padding + (mod.groups,) + tuple(inp[0].shape[2:])
            if key not in seen:
                seen.add(key)
                rows.append((name,) + key)
        hs = [c.register_forward_hook(hook) for c in m.modules() if isinstance(c, torch.nn.Conv2d)]
        with torch.no_grad():
            m(torch.randn(1, 3, 224, 224))
        for h in hs:
            h.remove()
    for r in rows:
        print(" ".join(str(v) for v in r))


def shapes():
    out = []
    for line in open("bench/conv_shapes.txt"):
        if line.startswith("#") or not line.strip():
            continue
        f = line.split()
        n = [int(v) for v in f[1:]]
        out.append(dict(model=f[0], ci=n[0], co=n[1], kh=n[2], kw=n[3], sh=n[4], sw=n[5], ph=n[6], pw=n[7], g=n[8], H=n[9], W=n[10]))
    return out


def case_name(s, batch, mode, H, W):
    return "%s %d-%d k%dx%d s%d g%d %dx%d b%d %s" % ("r18" if s["model"] == "resnet18" else "mv2", s["ci"], s["co"], s["kh"], s["kw"], s["sh"], s["g"], H, W, batch, mode)


def time_it(fn):
    fn()
    best = bestc = float("inf")
    total, n = 0.0, 0
    while n < 5 or total < 0.1:
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
        best, bestc, total, n = min(best, dt), min(bestc, dc), total + dt, n + 1
    return best, bestc


def run(s, batch, mode, H, W, filt):
    name = case_name(s, batch, mode, H, W)
    if filt and filt not in name:
        return
    torch.manual_seed(0)
    x = torch.randn(batch, s["ci"], H, W)
    w = torch.randn(s["co"], s["ci"] // s["g"], s["kh"], s["kw"]) * 0.1
    kw = dict(stride=(s["sh"], s["sw"]), padding=(s["ph"], s["pw"]), groups=s["g"])
    if mode == "fwd":
        def fn():
            with torch.no_grad():
                F.conv2d(x, w, None, **kw)
    else:
        x.requires_grad_(True)
        w.requires_grad_(True)
        with torch.no_grad():
            gout = torch.randn_like(F.conv2d(x, w, None, **kw))

        def fn():
            x.grad = w.grad = None
            F.conv2d(x, w, None, **kw).backward(gout)
    wall, cpu = time_it(fn)
    print("%s\t%.9g\t%.9g" % (name, wall, cpu), flush=True)


def main():
    if sys.argv[1] == "--shapes":
        print_shapes()
        return
    torch.set_num_threads(int(sys.argv[1]))
    filt = sys.argv[2] if len(sys.argv) > 2 else None
    for s in shapes():
        for b in (1, 8):
            run(s, b, "fwd", s["H"], s["W"], filt)
    for s in shapes():
        if s["model"] == "resnet18":
            run(s, 8, "fwdbwd", s["H"] // 2, s["W"] // 2, filt)


main()
