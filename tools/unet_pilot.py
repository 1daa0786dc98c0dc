"""Pilot for the U-Net claims (bg.unet.*): how many fresh training seeds decide them?

Reads the stored sweep's base DA-GANs (seeds 0-2 of nbs/results/exp_generation_sweeps3), takes each seed's paired
difference over the test classes, and simulates the pooled verdict (`seed_pooled`) at k fresh seeds with
`bench.findings.seeds_to_decide`: each seed's estimate drawn around the pilot's mean with the pilot's seed-to-seed
spread, each with the pilot's mean half-width.
Prints the probability that the pooled 95% interval excludes 0. Run from the repository root:
    python tools/unet_pilot.py
"""
import pandas as pd
from fewshot_nb.metrics import paired_comparison
from pilot_odds import report

X = pd.read_csv("nbs/results/exp_generation_sweeps3/results.csv").query("experiment == 'fig3a'")
classes = sorted(X["class"].unique())
def per_class(r, m, col): return r[r.model == m].groupby("class")[col].mean().loc[classes].to_numpy()
for cid, a, b, col, scale in [("bg.unet.recognizable", "dagan_un", "dagan_rn", "recognizability_frac", 100),
                              ("bg.unet.less_diverse", "dagan_rn", "dagan_un", "diversity", 1)]:
    ps = [paired_comparison(scale * per_class(r, a, col), scale * per_class(r, b, col)) for _, r in X.groupby("seed")]
    report(cid, [p.mean_diff for p in ps], [p.low for p in ps], [p.high for p in ps], ks=(3, 4, 5, 6, 8))
