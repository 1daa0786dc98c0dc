#!/usr/bin/env python
"""How much glibc's return of freed buffers to the kernel costs a CPU workload of this library, and what keeping them saves.

glibc's malloc serves a buffer above its mmap threshold (at most 32 MB, adjusted as the process runs) with fresh pages,
and hands them back to the kernel when the buffer is freed; the next buffer of that size comes as new pages that the
kernel zeroes again. Tensors of a convolutional network on a batch of images are such buffers, allocated and freed at
every layer. With

    MALLOC_MMAP_THRESHOLD_=1073741824 MALLOC_TRIM_THRESHOLD_=1073741824

(read by glibc when a process starts) buffers up to 1 GB are kept in the heap and reused. This script runs the same
workload in two fresh processes, with glibc's defaults and with the two variables, and prints wall, user and system
seconds and the peak memory of each: the critic of Boutin et al. (2022) embedding 480 binary 50x50 images five times,
then ten training steps of a Conv4 on 20-way episodes (one thread, as the test suite runs).

    python tools/bench_malloc.py            # both settings, one run each
    python tools/bench_malloc.py --repeat 3 # three runs each, alternating

tests/conftest.py sets both variables for the test suite and every process it starts; README.md tells users how.
"""
from __future__ import annotations
import argparse, json, os, subprocess, sys, time

KEEP = {"MALLOC_MMAP_THRESHOLD_": "1073741824", "MALLOC_TRIM_THRESHOLD_": "1073741824"}

WORKLOAD = r"""
import torch
torch.set_num_threads(1)
from fewshot_nb.generation.critics import Critic, critic_features
from fewshot_nb.training.backbones import make_backbone
g = torch.Generator().manual_seed(0)
torch.manual_seed(0)
critic = Critic("protonet").eval()
x = (torch.rand(480, 1, 50, 50, generator=g) > 0.8).float()
for _ in range(5): critic_features(critic, x, space="head", progress=None)
net = make_backbone("conv4", width=64, image_size=28)
head = torch.nn.Linear(net.out_dim, 20)
opt = torch.optim.Adam([*net.parameters(), *head.parameters()], 1e-3)
for _ in range(10):
    xb, yb = torch.rand(20 * 6, 1, 28, 28, generator=g), torch.arange(20).repeat(6)
    loss = torch.nn.functional.cross_entropy(head(net(xb)), yb)
    opt.zero_grad(); loss.backward(); opt.step()
import json, resource
r = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps(dict(user=r.ru_utime, sys=r.ru_stime, peak_mb=r.ru_maxrss / 1024)))
"""


def run(env:dict) -> dict:
    "Wall, user and system seconds and peak memory (MB) of the workload in a fresh process with `env`."
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", WORKLOAD], env=env, check=True, capture_output=True, text=True).stdout
    return dict(wall=time.perf_counter() - t0, **json.loads(out.strip().splitlines()[-1]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=1, help="runs of each setting, alternating (default 1)")
    a = ap.parse_args(argv)
    if a.repeat < 1: ap.error(f"--repeat must be at least 1, got {a.repeat}")
    base = {k: v for k, v in os.environ.items() if k not in KEEP} | {"OMP_NUM_THREADS": "1"}
    settings = {"glibc defaults": base, "buffers kept (MALLOC_*=1 GB)": base | KEEP}
    rows = {name: [] for name in settings}
    for _ in range(a.repeat):
        for name, env in settings.items(): rows[name].append(run(env))
    print(f"{'setting':32s} {'wall s':>7s} {'user s':>7s} {'system s':>9s} {'peak MB':>8s}   (best of {a.repeat})")
    for name, rs in rows.items():
        r = min(rs, key=lambda r: r["wall"])
        print(f"{name:32s} {r['wall']:7.2f} {r['user']:7.2f} {r['sys']:9.2f} {r['peak_mb']:8.0f}")


if __name__ == "__main__":
    main()
