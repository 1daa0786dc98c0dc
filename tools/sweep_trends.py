#!/usr/bin/env python
"""Trends of a stored exp_generation sweep: each swept setting against its neighbours, class by class.

    python tools/sweep_trends.py nbs/results/exp_generation_sweeps3

Reads the folder's `results.csv` (one row per test class, model, configuration and seed) and writes `trends.csv`
beside it. For every model and sweep (`latent`: z_dim, `attention`: attention steps), and every pair of settings
of that sweep (the base configuration included, at its model's value, read from the run's architecture, `arch`), it averages each class's score over the
seeds, then compares the two settings on the same classes (`fewshot_nb.metrics.paired_comparison`): the mean
difference of recognizability in percentage points and of diversity with their 95% intervals. A trend is called
monotonic when the differences of consecutive settings all have the same sign and every one of them is
significant.
"""
import argparse, itertools, json, sys
from pathlib import Path
import pandas as pd
from fewshot_nb.core import save_csv
from fewshot_nb.metrics import paired_comparison

SWEEP_COLUMN = {"latent": "z_dim", "attention": "n_steps"}   # the results column, and the model's config key, of each sweep


def base_setting(model:str, column:str, preset:str="small", image_size:int=28):
    "The value of `column` in the base configuration of `model` (its rows of results.csv leave it blank), or None."
    from fewshot_nb.generation.base import make_generator
    return make_generator(model, preset, image_size=image_size).config().get(column)


def per_class(results:pd.DataFrame, preset:str="small", image_size:int=28) -> pd.DataFrame:
    "One row per (sweep, model, setting, class): scores averaged over the seeds."
    rows = []
    for (sweep, column) in SWEEP_COLUMN.items():
        for model in results.model.unique():
            swept = results[(results.experiment == sweep) & (results.model == model)]
            if swept.empty: continue
            base = results[(results.experiment == "fig3a") & (results.model == model)]
            setting = base_setting(model, column, preset, image_size)
            rows.append(pd.concat([swept.assign(setting=swept[column]), base.assign(setting=setting)]).assign(sweep=sweep))
    if not rows: raise ValueError("results.csv has no latent or attention sweep: run exp_generation with latent_sizes or attention_steps")
    d = pd.concat(rows)
    return d.groupby(["sweep", "model", "setting", "class"], as_index=False)[["recognizability_frac", "diversity"]].mean()


def trends(results:pd.DataFrame, preset:str="small", image_size:int=28) -> pd.DataFrame:
    "Paired differences (larger setting minus smaller) for every pair of settings of every model's sweep."
    d = per_class(results, preset, image_size)
    out = []
    for (sweep, model), g in d.groupby(["sweep", "model"], sort=False):
        wide_r = g.pivot(index="class", columns="setting", values="recognizability_frac")
        wide_d = g.pivot(index="class", columns="setting", values="diversity")
        settings = sorted(wide_r.columns)
        for lo, hi in itertools.combinations(settings, 2):
            r = paired_comparison(wide_r[hi].to_numpy() * 100, wide_r[lo].to_numpy() * 100)
            v = paired_comparison(wide_d[hi].to_numpy(), wide_d[lo].to_numpy())
            out.append(dict(sweep=sweep, model=model, setting_low=lo, setting_high=hi, consecutive=settings.index(hi) == settings.index(lo) + 1,
                            recognizability_low_pct=wide_r[lo].mean() * 100, recognizability_high_pct=wide_r[hi].mean() * 100,
                            recognizability_diff_pp=r.mean_diff, recognizability_diff_low_pp=r.low, recognizability_diff_high_pp=r.high,
                            diversity_low=wide_d[lo].mean(), diversity_high=wide_d[hi].mean(),
                            diversity_diff=v.mean_diff, diversity_diff_low=v.low, diversity_diff_high=v.high, n_classes=r.n))
    return pd.DataFrame(out)


def monotonic(t:pd.DataFrame, quantity:str) -> dict:
    "Per (sweep, model): 'rises' or 'falls' when every consecutive difference is significant with one sign, else 'none'."
    lo, hi = (f"{quantity}_diff_low_pp", f"{quantity}_diff_high_pp") if quantity == "recognizability" else (f"{quantity}_diff_low", f"{quantity}_diff_high")
    out = {}
    for key, g in t[t.consecutive].groupby(["sweep", "model"], sort=False):
        out[key] = "rises" if (g[lo] > 0).all() else "falls" if (g[hi] < 0).all() else "none"
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("folder", type=Path, help="a stored exp_generation run with results.csv")
    args = p.parse_args(argv)
    src = args.folder/"results.csv"
    if not src.is_file(): sys.exit(f"{src}: no such file (the folder of a stored exp_generation run, with its results.csv)")
    params = json.loads((args.folder/"run.json").read_text())["params"] if (args.folder/"run.json").is_file() else {}
    arch = params.get("arch", params.get("preset", "small"))   # the architecture: `preset` in runs stored before issue 39
    t = trends(pd.read_csv(src), arch, params.get("image_size", 28))
    mr, md = monotonic(t, "recognizability"), monotonic(t, "diversity")
    t["recognizability_trend"] = [mr[s, m] for s, m in zip(t.sweep, t.model)]
    t["diversity_trend"] = [md[s, m] for s, m in zip(t.sweep, t.model)]
    t["unit"] = [f"setting_low, setting_high: {'latent size z_dim' if s == 'latent' else 'attention steps'}; recognizability_*_pct: "
                 "percent; *_pp: percentage points; diversity_*: Eq. 2 of Boutin et al. 2022" for s in t.sweep]
    save_csv(t, args.folder/"trends.csv")
    with pd.option_context("display.width", 200, "display.max_columns", None):
        print(t[["sweep", "model", "setting_low", "setting_high", "recognizability_diff_pp", "recognizability_diff_low_pp",
                 "recognizability_diff_high_pp", "diversity_diff", "diversity_diff_low", "diversity_diff_high"]].round(1).to_string(index=False))
        print({f"{s}/{m}": (mr[s, m], md[s, m]) for s, m in mr})
    print(f"wrote {args.folder/'trends.csv'}")


if __name__ == "__main__":
    main()
