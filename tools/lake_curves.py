"""Learning curves on Lake's 20 one-shot runs, and the training recipe chosen on validation characters.

Trains one regime on all 8 background alphabets the minimal sets offer (with the 90/180/270-degree rotations as new
classes, optionally random affine distortions of every training image) and scores it every `--eval-every` steps on
Lake's 20 runs and, with `--holdout K`, on 500 fixed 5-way 1-shot tasks of the characters held out of training (the
first K of every alphabet, the weak split: the validation signal a recipe is chosen by). One CSV row per evaluation:
step, seconds, and errors in percent: on Lake's runs (`lake_err_pct`, with its t half-width `lake_hw_pct`;
`lake_err_cl2n_pct` with CL2N features) and on the validation tasks (`val_err_pct`, `val_hw_pct`). The scoring is
the trainer's evaluation callback (`Trainer(..., callbacks=[Evaluate(fn, every=...)])`). Beside the CSV, `<out>.json` records the
options and torch's thread count (the weights depend on it: floating-point sums are split over threads).

A curve scores the same network on Lake's runs at many steps, so its lowest `lake_err_pct` is chosen on the test set:
report it only as such. To quote the error of one network, pick the step by `val_err_pct` and read `lake_err_pct` at
that step. `--select A.csv B.csv ...` prints both for each curve and, for curves made with the same `--holdout`, the
recipe (curve and step) with the lowest validation error (`--select-out` writes that table).

    FEWSHOT_DATA=../shared/data python tools/lake_curves.py --regime pretrain --holdout 3 --augment --steps 1632 --eval-every 136 --out runs/curves/pre_aug.csv
    FEWSHOT_DATA=../shared/data python tools/lake_curves.py --select runs/curves/*.csv --select-out runs/curves/selection.csv
"""
from __future__ import annotations
import argparse, json
from pathlib import Path
import numpy as np, pandas as pd, torch
from scipy import stats

from fewshot_nb.core import seed_everything, atomic_write, save_json, save_csv
from fewshot_nb.data.omniglot import load_omniglot
from fewshot_nb.data.splits import weak_split
from fewshot_nb.data.samplers import EpisodeSampler, TaskManifest, lake_runs
from fewshot_nb.data.augment import Distorted
from fewshot_nb.metrics import accuracy, mean_ci
from fewshot_nb.training.backbones import make_backbone
from fewshot_nb.data.streams import ImageSource
from fewshot_nb.training.trainer import Trainer, LRSchedule, Evaluate, ChannelsLast
from fewshot_nb.training.regimes import make_regime, list_regimes, images_per_step


VAL_TASKS = 500   # 5-way 1-shot validation tasks of the held-out characters (seed 1)


def select(curve:pd.DataFrame) -> dict:
    "The evaluation chosen on validation (lowest `val_err_pct`, the earliest of ties) and the one chosen on the runs themselves (test-selected), of one curve."
    if "lake_err_pct" not in curve or curve.empty: raise ValueError("the curve has no lake_err_pct rows: is it a CSV written by tools/lake_curves.py?")
    test_row = curve.loc[curve.lake_err_pct.idxmin()]
    out = dict(test_selected_step=int(test_row.step), test_selected_lake_err_pct=float(test_row.lake_err_pct))
    if "val_err_pct" in curve and curve.val_err_pct.notna().any():
        v = curve.loc[curve.val_err_pct.idxmin()]   # idxmin: the first of equal minima, the shorter run
        out.update(val_selected_step=int(v.step), val_selected_lake_err_pct=float(v.lake_err_pct), val_err_pct=float(v.val_err_pct))
    else: out.update(val_selected_step=None, val_selected_lake_err_pct=None)   # run without --holdout: no validation column
    return out


def train_images(options:dict) -> int:
    "The number of training images of a curve's options (the weak split's training characters, rotations included): one epoch."
    omni = load_omniglot("small", size=options.get("image_size", 28))
    classes = weak_split(omni, options["holdout"])["train"] if options.get("holdout") else None
    return len(ImageSource.from_omniglot(omni, classes, rotations=not options.get("no_rotations", False)))


def select_recipes(paths:list) -> pd.DataFrame:
    """Every evaluation of every curve as a candidate (recipe, length), and the one chosen on validation characters by the
    one-standard-error rule: the cheapest candidate (fewest training images) whose validation error is within one standard
    error of the lowest. (The lowest itself is flagged `lowest`; between candidates that close, validation cannot tell,
    and the cheaper one fits the CPU budget.) Every curve must have been made with the same `--holdout` (the same
    validation characters), or the comparison means nothing. Lake's runs play no part in the choice."""
    rows = []
    for p in map(Path, paths):
        meta = p.with_suffix(".json")
        if not meta.is_file(): raise ValueError(f"{p}: no {meta.name} beside it: only curves made by this version of the tool (its options recorded) can be compared")
        opt = json.loads(meta.read_text())["options"]
        curve = pd.read_csv(p)
        if not opt.get("holdout") or "val_err_pct" not in curve: raise ValueError(f"{p}: made without --holdout, so it has no validation error to choose by")
        n = train_images(opt)
        rows += [dict(curve=p.name, regime=opt["regime"], distort=bool(opt["augment"]), schedule=opt["schedule"] or "constant",
                      n_horizon_steps=int(opt["steps"]), n_holdout=int(opt["holdout"]), step=int(v.step), images=int(v.images),
                      epochs=float(v.images) / n, val_err_pct=float(v.val_err_pct), val_hw_pct=float(v.val_hw_pct),
                      lake_err_pct=float(v.lake_err_pct), lake_hw_pct=float(v.lake_hw_pct)) for v in curve.itertuples()]
    t = pd.DataFrame(rows)
    if t.n_holdout.nunique() > 1: raise ValueError(f"the curves hold out different characters (--holdout {sorted(t.n_holdout.unique())}): compare curves of one split")
    best = t.val_err_pct.idxmin()
    se = t.val_hw_pct[best] / stats.t.ppf(0.975, VAL_TASKS - 1)   # the half-width is a t interval over the validation tasks
    t["lowest"] = t.index == best
    t["within_one_se"] = t.val_err_pct <= t.val_err_pct[best] + se
    t["chosen"] = t.index == t[t.within_one_se].sort_values(["images", "val_err_pct"], kind="stable").index[0]
    return t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--regime", default="protonet", choices=list_regimes(), help="a training regime of the registry (fewshot_nb.training.regimes)")
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--eval-every", type=int, default=250)
    ap.add_argument("--image-size", type=int, default=28)
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--schedule", default=None, choices=[None, "cosine", "step"])
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--train-way", type=int, default=60)
    ap.add_argument("--train-query", type=int, default=5)
    ap.add_argument("--train-shot", type=int, default=1)
    ap.add_argument("--augment", action="store_true")
    ap.add_argument("--degrees", type=float, default=10.0)
    ap.add_argument("--shift", type=float, default=2.0)
    ap.add_argument("--no-rotations", action="store_true")
    ap.add_argument("--holdout", type=int, default=0, help="characters per alphabet held out for validation (weak split)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="the CSV to write (required unless --select)")
    ap.add_argument("--save", default=None, help="write the backbone's final weights here (for ensembles)")
    ap.add_argument("--select", default=None, nargs="+", metavar="CSV",
                    help="print the step chosen on validation (lowest val_err_pct) and the test-selected one of each CSV this tool wrote, "
                         "and, given several made with --holdout, the recipe chosen on validation; then exit")
    ap.add_argument("--select-out", default=None, metavar="CSV", help="with --select: write the recipes' table here")
    a = ap.parse_args()
    if a.select is not None:
        for f in a.select: print(f, select(pd.read_csv(f)))
        if len(a.select) > 1 or a.select_out:
            t = select_recipes(a.select)
            print(t.to_string(index=False))
            if a.select_out: save_csv(t, a.select_out)   # n_horizon_steps: the steps the run was set to train; n_holdout: characters per alphabet held out
        return
    if a.out is None: ap.error("--out is required (the CSV of the curve to write)")

    seed_everything(a.seed)
    omni = load_omniglot("small", size=a.image_size)
    if a.holdout:
        ws = weak_split(omni, a.holdout)
        train = ImageSource.from_omniglot(omni, ws["train"], rotations=not a.no_rotations)
        val = ImageSource.from_omniglot(omni, ws["test"])
        val_tasks = TaskManifest.sample(EpisodeSampler(val.labels.numpy(), 5, 1, 5), VAL_TASKS, seed=1).batch
    else:
        train, val = ImageSource.from_omniglot(omni, rotations=not a.no_rotations), None
    runs = load_omniglot("runs", size=a.image_size)
    runs_data = ImageSource(runs.images, runs.labels, runs.groups)
    lake = lake_runs(runs).batch

    torch.manual_seed(a.seed)
    net = make_backbone("conv4", width=a.width, image_size=a.image_size)
    method, src = make_regime(a.regime, net, train, dict(batch_size=a.batch_size, train_way=a.train_way, train_shot=a.train_shot,
                                                         train_query=a.train_query))   # the registry's model and batch source
    if a.augment: src = Distorted(src, degrees=a.degrees, translate=(a.shift, a.shift), scale=(0.9, 1.1), shear=0.0)
    per_step = images_per_step(src)

    def evaluate(t:Trainer) -> dict:
        "Errors (%) on Lake's runs (plain and CL2N features) and on the validation tasks: the trainer's evaluation hook."
        m = t.method
        err = 100 * (1 - accuracy(m.scores(runs_data, lake), lake.query_labels, lake.query_mask))
        ci = mean_ci(err)
        # the same features centred on the mean training feature and L2-normalised (CL2N, as SimpleShot)
        base = m.embed_all(train, torch.arange(0, len(train), max(1, len(train) // 4000))).mean(0)
        f = torch.nn.functional.normalize(m.embed_all(runs_data) - base, dim=-1)
        s, q = f[lake.support], f[lake.query]
        cl2n = 100 * (1 - accuracy(q @ s.transpose(1, 2), lake.query_labels, lake.query_mask))
        row = dict(images=t.step * per_step, lake_err_pct=ci.mean, lake_hw_pct=ci.high - ci.mean, lake_err_cl2n_pct=float(cl2n.mean()))
        if val is not None:
            v = mean_ci(100 * (1 - accuracy(m.scores(val, val_tasks), val_tasks.query_labels, val_tasks.query_mask)))
            row.update(val_err_pct=v.mean, val_hw_pct=v.high - v.mean)   # t half-width over the validation tasks
        print({"step": t.step, **row}, flush=True)
        return row

    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    save_json(dict(options=vars(a), torch_threads=torch.get_num_threads()), Path(a.out).with_suffix(".json"))
    sched = [LRSchedule(a.schedule, step=a.steps // 3 if a.schedule == "step" else None)] if a.schedule else []
    tr = Trainer(method, src, a.steps, lr=a.lr, seed=a.seed, device="cpu", progress=False,
                 callbacks=[*sched, Evaluate(evaluate, every=a.eval_every, csv=a.out), ChannelsLast()])   # one CSV row per evaluation, written as it comes
    tr.fit()
    if a.save:
        with atomic_write(a.save) as tmp: torch.save(tr.method.backbone.state_dict(), tmp)


if __name__ == "__main__":
    main()
