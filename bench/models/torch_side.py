"""PyTorch's process for bench/models/run.py.

  torch_side.py export DIR        weights (DIR/<model>.safetensors), inputs and
                                  reference results (DIR/<workload>_io.safetensors)
  torch_side.py run THREADS W...  times the workloads at each thread count in
                                  THREADS ("1,2"); one JSON line per (workload, threads)
"""
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tmodels  # noqa: E402


def export(d):
    os.makedirs(d, exist_ok=True)
    for base in ("resnet18", "mobilenet_v2", "transformer", "lstm_lm"):
        tmodels.save_safetensors(os.path.join(d, base + ".safetensors"), tmodels.build(base).state_dict())
    for w in tmodels.WORKLOADS:
        torch.set_num_threads(1)
        res = tmodels.Workload(w).check()
        tensors = dict(tmodels.inputs(w))
        for k, v in res.items():
            tensors["ref_" + k] = v.detach()
        tmodels.save_safetensors(os.path.join(d, w + "_io.safetensors"), tensors)


def time_workload(w, reps, budget):
    wl = tmodels.Workload(w)
    for _ in range(2 if reps > 5 else 1):
        wl.step()
    times, t_end = [], time.perf_counter() + budget
    while len(times) < reps and (len(times) < 3 or time.perf_counter() < t_end):
        t0 = time.perf_counter()
        wl.step()
        times.append(time.perf_counter() - t0)
    return times


def main():
    if sys.argv[1] == "export":
        export(sys.argv[2])
        return
    threads = [int(t) for t in sys.argv[2].split(",")]
    scale = float(os.environ.get("BENCH_SCALE", "1"))
    for w in sys.argv[3:]:
        reps, budget = tmodels_reps(w, scale)
        for t in threads:
            torch.set_num_threads(t)
            time.sleep(0.3)
            times = time_workload(w, reps, budget)
            print(json.dumps({"workload": w, "threads": t, "min": min(times),
                              "median": statistics.median(times), "n": len(times)}), flush=True)


def tmodels_reps(w, scale):
    reps = {"resnet18_train": 6, "transformer_train": 6}.get(w, 15)
    return max(3, int(reps * scale)), 2.0 * scale


if __name__ == "__main__":
    main()
