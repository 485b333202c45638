#!/usr/bin/python3
"""bench/train_convs_torch.py: PyTorch's side of bench/train_convs.lua (the
same shapes, forward and forward+backward, CPU time, best of 15; with
"wall" after the thread count, wall time: the measure at 2 threads).
    GLIBC_TUNABLES=glibc.malloc.mmap_threshold=4294967296:glibc.malloc.trim_threshold=4294967296 \
        /usr/bin/python3 bench/train_convs_torch.py [threads [wall]]
(the tunables keep freed memory, as a caching allocator would: PyTorch at
its best; compare 1 and 2 threads)"""
import sys, time
import torch
import torch.nn.functional as F

torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
clock = time.perf_counter if len(sys.argv) > 2 and sys.argv[2] == "wall" else time.process_time
torch.manual_seed(0)
N = 8
SHAPES = [(7, 2, 3, 3, 64, 112), (3, 1, 1, 64, 64, 28), (3, 2, 1, 64, 128, 28), (1, 2, 0, 64, 128, 28),
          (3, 1, 1, 128, 128, 14), (3, 2, 1, 128, 256, 14), (1, 2, 0, 128, 256, 14), (3, 1, 1, 256, 256, 7),
          (3, 2, 1, 256, 512, 7), (1, 2, 0, 256, 512, 7), (3, 1, 1, 512, 512, 4)]


def best(f):
    f(); f()
    b = 1e9
    for _ in range(15):
        t0 = clock(); f(); b = min(b, clock() - t0)
    return b * 1e3


for k, s, p, ci, co, hw in SHAPES:
    x = torch.randn(N, ci, hw, hw, requires_grad=True)
    w = torch.randn(co, ci, k, k, requires_grad=True)
    g = torch.randn_like(F.conv2d(x, w, stride=s, padding=p))

    def fwd():
        with torch.no_grad():
            return F.conv2d(x, w, stride=s, padding=p)

    def fb():
        F.conv2d(x, w, stride=s, padding=p).backward(g)

    print("k%d s%d %d->%d @%d\tfwd %.3f ms\tfwd+bwd %.3f ms" % (k, s, ci, co, hw, best(fwd), best(fb)))
