#!/usr/bin/env python
"""How hard are realistic-evaluation tasks on Omniglot features, and do the paper's drops show? (issue 13, item 1)

For each candidate setting (Conv4 pre-training budget, within-alphabet or unstructured tasks, ways), trains or
loads the cached features (`fewshot_nb.training.pretrain.pretrained_features`, split `minimal1`: 5 training
alphabets, 3 test alphabets), draws identical balanced and Dirichlet(2) manifests with `n_query` queries per class,
runs the solvers and prints, per method and shot, balanced and Dirichlet accuracy, the drop and its Welch 95%
half-width, and the share of uncapped Dirichlet draws that the 20-drawing caps would cut.

    FEWSHOT_DATA=../shared/data OMP_NUM_THREADS=1 python tools/realistic_settings.py [--tasks 400] [--out runs/realistic_settings.csv]
"""
import argparse
import numpy as np, pandas as pd, torch
from fewshot_nb.core import save_csv
from fewshot_nb.metrics import difference_ci
from fewshot_nb.training.pretrain import pretrained_features
from fewshot_nb.bench.classification import ClassificationBench, TaskSetting, solver_scorer

CANDIDATES = {   # name: (pre-training steps, task structure, ways)
    "unstructured_100": (100, "unstructured", 5),
    "within_100": (100, "within_group", 5),                # exp_realistic's default setting, 'paper_range'
    "within_300": (300, "within_group", 5),
    "unstructured_300": (300, "unstructured", 5),          # exp_realistic's setting 'ceiling' (nbs/results/exp_realistic_ceiling)
    "unstructured_300_10way": (300, "unstructured", 10),
}
METHODS = ["simpleshot", "entropy-min", "tim", "alpha-tim", "pt-map", "laplacianshot"]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tasks", type=int, default=400, help="tasks per setting")
    p.add_argument("--n-query", type=int, default=5, help="queries per class on average")
    p.add_argument("--candidates", nargs="*", default=list(CANDIDATES), choices=list(CANDIDATES))
    p.add_argument("--cache-dir", default=None, help="feature cache folder (default: the library's)")
    p.add_argument("--out", default="runs/realistic_settings.csv")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    rows = []
    for name in args.candidates:
        steps, structure, way = CANDIDATES[name]
        src, base_mean, _ = pretrained_features(split="minimal1", steps=steps, image_size=28, seed=0, device="cpu",
                                                cache_dir=args.cache_dir)
        settings = {(s, q): TaskSetting(f"{s}shot_{q}", n_way=way, n_shot=s, n_query=args.n_query, structure=structure,
                                        **({} if q == "balanced" else dict(query_dist="dirichlet", dirichlet_a=2.0)))
                    for s in (1, 5) for q in ("balanced", "dir2")}
        bench = ClassificationBench({"test": src}, list(settings.values()), args.tasks, seeds=[0])
        binds = {s: settings[s, "dir2"].sampler(src).cap_binding(20_000, seed=0).rate for s in (1, 5)}
        for m in METHODS: bench.evaluate(m, solver_scorer(m, base_mean=base_mean))
        res = bench.results
        for m in METHODS:
            for s in (1, 5):
                acc = {q: res[(res.method == m) & (res.setting == f"{s}shot_{q}")].acc_frac.to_numpy() * 100 for q in ("balanced", "dir2")}
                d = difference_ci(acc["balanced"], acc["dir2"])
                rows.append(dict(candidate=name, steps=steps, structure=structure, n_way=way, method=m, shot=s,
                                 balanced_acc_pct=round(acc["balanced"].mean(), 1), dir2_acc_pct=round(acc["dir2"].mean(), 1),
                                 drop_pp=round(d.mean, 1), drop_half_width_pp=round(d.half_width, 1),
                                 caps_bind_pct=round(100 * binds[s], 2)))
        print(pd.DataFrame([r for r in rows if r["candidate"] == name]).drop(columns=["steps", "structure", "n_way"]).to_string(index=False), flush=True)
    save_csv(pd.DataFrame(rows), args.out)
    print(f"written: {args.out}")


if __name__ == "__main__":
    main()
