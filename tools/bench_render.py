#!/usr/bin/env python
"""Throughput of the headless LOGO renderer (`fewshot_nb.bongard.logo.render`), in images per second.

The images are those of free-form Bongard problems (`sample_ff_problem`: the paper's 12 configurations, 2 to 9
actions per shape, one or two shapes, random moving types), with the free-form nuisances drawn for every image
(`sample_poses`, included in the time). Each size is warmed up once, then timed with `time.perf_counter` over
`--repeats` calls on `--n-images` images:

- one process with one torch thread;
- `--jobs` processes (default: one per core), each rendering its share of the images with one thread
  (the pool is started and warmed up before the clock starts).

Usage:

    python tools/bench_render.py                          # 64, 128 and 512 px; 4,096 images
    python tools/bench_render.py --sizes 128 --n-images 20000
"""
import argparse, os, time
from concurrent.futures import ProcessPoolExecutor
import numpy as np


def _programs(n:int, seed:int) -> list:
    from fewshot_nb.bongard.problems import FF_CONFIGS, sample_ff_problem
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        p = sample_ff_problem(FF_CONFIGS[rng.integers(len(FF_CONFIGS))], rng=rng)
        out += p.positives[:1] + p.negatives
    return out[:n]


def _render(args) -> int:
    programs, size, seed = args
    import torch
    torch.set_num_threads(1)
    from fewshot_nb.bongard.logo import render, SCALE_RANGES
    return len(render(programs, size=size, rng=seed, scale_range=SCALE_RANGES["ff"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="64,128,512", help="image sides in pixels, comma-separated")
    ap.add_argument("--n-images", type=int, default=4096, help="images per timed call")
    ap.add_argument("--repeats", type=int, default=3, help="timed calls per size (the best is reported)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count(), help="processes of the parallel run")
    a = ap.parse_args()
    progs = _programs(a.n_images, 0)
    print(f"{a.n_images} free-form images; {os.cpu_count()} CPUs; best of {a.repeats}")
    with ProcessPoolExecutor(a.jobs) as pool:
        list(pool.map(_render, [(progs[:64], 64, 0)] * a.jobs))          # start and warm up the workers
        for size in (int(s) for s in a.sizes.split(",")):
            _render((progs[:256], size, 0))
            one = min(_timed(lambda: _render((progs, size, r))) for r in range(a.repeats))
            parts = np.array_split(np.arange(len(progs)), a.jobs)
            many = min(_timed(lambda: list(pool.map(_render, [([progs[i] for i in p], size, r) for p in parts])))
                       for r in range(a.repeats))
            print(f"{size:4d} px: {a.n_images / one:8.0f} images/s in 1 process, {a.n_images / many:8.0f} images/s in {a.jobs} processes")


def _timed(f) -> float:
    t = time.perf_counter(); f(); return time.perf_counter() - t


if __name__ == "__main__":
    main()
