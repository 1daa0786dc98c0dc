#!/usr/bin/env python
"""The figures of the three paths the docs index (and the README) open with, made from real runs and stored with them.

    FEWSHOT_DATA=../shared/data python tools/front_page.py [--only evaluate|generator]

1. **Evaluate your own features** (`nbs/results/front_page/evaluate/`): features of the 24 test characters of the
   minimal-1 split from a Conv4 the library pre-trains on its other characters, written to `feats.npz` and
   `base.npz` as any outside code would write them, then `fewshot-nb evaluate` on them in the realistic setting
   (Dirichlet(2) query sets), exactly the command a user runs. Stored: the command's `results.csv` and `run.json`, and
   `evaluate.png` (accuracy with 95% intervals per method and shot). The feature files themselves are not stored.
2. **Reproduce a paper**: the figure is the stored long run of `exp_beta` (`nbs/results/exp_beta_long/fig_beta.png`);
   nothing is made here.
3. **Put your generator on the plane** (`nbs/results/front_page/generator/`): the ten-line affine-jitter generator of
   `bench/62_generation` scored on the generation bench at 28 px and drawn beside the four models of exp_generation's
   stored default run (seed 0 of `nbs/results/exp_generation_base3`) and the human point. Stored: `points.csv`,
   `run.json` and `plane.png`.

Every file is written atomically; the figures go through `fewshot_nb.core.save_figure` (9-pt text on the page).
"""
from __future__ import annotations
import argparse, json, os, subprocess, sys, tempfile
from pathlib import Path
import numpy as np, pandas as pd, torch

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT/"nbs"/"results"/"front_page"
METHODS = "simpleshot,laplacianshot,tim,alpha-tim,pt-map"
EVALUATE = ["--methods", METHODS, "--shots", "1,5", "--ways", "5", "--queries", "5", "--dirichlet", "2", "--tasks", "500",
            "--seed", "0", "--device", "cpu"]


def evaluate_path():
    "Path 1: features written by outside code, evaluated by the command line."
    from fewshot_nb.training.pretrain import pretrained_features
    from fewshot_nb.data.feature_files import write_features
    from fewshot_nb.bench.evaluate import plot_results
    from fewshot_nb.core import save_figure
    pre = pretrained_features("minimal1", steps=300, parts=True)
    out = OUT/"evaluate"; out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        np.savez(tmp/"feats.npz", features=pre.test.feats.numpy(), labels=np.asarray(pre.test.class_names)[pre.test.labels])
        np.savez(tmp/"base.npz", features=pre.base.feats.numpy(), labels=np.asarray(pre.base.class_names)[pre.base.labels])
        cmd = ["fewshot-nb", "evaluate", "feats.npz", "--base", "base.npz", *EVALUATE, "--out", "run"]
        env = {**os.environ, "FEWSHOT_PROGRESS": "0"}
        r = subprocess.run([str(Path(sys.executable).with_name("fewshot-nb")), *cmd[1:]], cwd=tmp, env=env, capture_output=True, text=True)
        if r.returncode: raise SystemExit(r.stderr)
        print(r.stdout)
        for f in ("results.csv", "run.json"): (out/f).write_bytes((tmp/"run"/f).read_bytes())
        (out/"command.txt").write_text(" ".join(cmd) + "\n" + r.stdout)
    res = pd.read_csv(out/"results.csv")
    fig = plot_results(res, title="your features, 5-way, Dirichlet(2) queries (95% CI over 500 tasks)")
    save_figure(fig, out/"evaluate.png", bbox_inches="tight")


def generator_path():
    "Path 3: the jitter generator beside the stored models and humans."
    import torch.nn.functional as F
    from fewshot_nb.core import save_csv, save_figure, page_fontsize
    from fewshot_nb.run_folders import RunRecord
    from fewshot_nb.bench.generation import GenerationBench, score_generator, plot_plane, summarise_scores
    from fewshot_nb.generation.metrics import distance_to_humans

    def jitter(prototypes, n):
        "Each sample: its prototype under a small random affine map (rotation, scale, shear and shift)."
        k = len(prototypes)
        theta = torch.eye(2, 3).repeat(k * n, 1, 1)
        theta[:, :, :2] += 0.12 * torch.randn(k * n, 2, 2)
        theta[:, :, 2] += 0.08 * torch.randn(k * n, 2)
        p = prototypes.repeat_interleave(n, 0)
        grid = F.affine_grid(theta, list(p.shape), align_corners=False)
        return F.grid_sample(p, grid, align_corners=False).view(k, n, *p.shape[1:])

    bench = GenerationBench(image_size=28, seed=0)
    mine = score_generator(bench, jitter, name="jitter (yours)")
    stored = ROOT/"nbs"/"results"/"exp_generation_base3"
    human = json.loads((stored/"run.json").read_text())["extra"]["bench"]["human_diversity"]
    if abs(human - bench.human.diversity_ci.mean) > 1e-4: raise SystemExit("the stored run's bench is not this bench: its human point differs")
    paper = pd.read_csv(stored/"summary.csv").query("experiment == 'fig3a' and seed == 0")
    points = pd.concat([paper, pd.DataFrame([summarise_scores(mine["scores"], model="jitter (yours)")])], ignore_index=True)
    cols, hp = ["diversity", "recognizability_frac"], (bench.human.diversity_ci.mean, bench.human.recognizability_ci.mean)
    points["distance_to_humans"] = distance_to_humans(points[cols].to_numpy(), hp, reference=paper[cols].to_numpy())
    out = OUT/"generator"; out.mkdir(parents=True, exist_ok=True)
    save_csv(points[["model", "diversity", "diversity_hw", "recognizability_frac", "recognizability_hw_frac", "distance_to_humans"]],
             out/"points.csv")
    RunRecord.create(dict(generator="jitter", image_size=28, models_from=str(stored.relative_to(ROOT))), seed=0, device="cpu").save(out/"run.json")
    ax = plot_plane(points, bench.human, by="model")
    ax.set_title("your generator beside exp_generation's models", fontsize=page_fontsize(ax.figure))
    save_figure(ax.figure, out/"plane.png", bbox_inches="tight")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=["evaluate", "generator"])
    a = ap.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    if a.only in (None, "evaluate"): evaluate_path()
    if a.only in (None, "generator"): generator_path()
