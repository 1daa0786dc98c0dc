"""Pilot for the U-Net claims (bg.unet.*): how many fresh training seeds decide them?

Reads the stored sweep's base DA-GANs (seeds 0-2 of nbs/results/exp_generation_sweeps3), takes each seed's paired
difference over the test classes, and simulates the pooled verdict (`seed_pooled`) at k fresh seeds with
`bench.findings.seeds_to_decide`: each seed's estimate drawn around the pilot's mean with the pilot's seed-to-seed
spread, each with the pilot's mean half-width.
Prints the probability that the pooled 95% interval excludes 0. Run from the repository root:
    python tools/unet_pilot.py
"""
import numpy as np, pandas as pd
from fewshot_nb.metrics import paired_comparison
from fewshot_nb.bench.findings import seed_pooled, seeds_to_decide

X = pd.read_csv("nbs/results/exp_generation_sweeps3/results.csv").query("experiment == 'fig3a'")
classes = sorted(X["class"].unique())
def per_class(r, m, col): return r[r.model == m].groupby("class")[col].mean().loc[classes].to_numpy()
for cid, a, b, col, scale in [("bg.unet.recognizable", "dagan_un", "dagan_rn", "recognizability_frac", 100),
                              ("bg.unet.less_diverse", "dagan_rn", "dagan_un", "diversity", 1)]:
    ps = [paired_comparison(scale * per_class(r, a, col), scale * per_class(r, b, col)) for _, r in X.groupby("seed")]
    est = np.array([p.mean_diff for p in ps])
    m, lo, hi, k0 = seed_pooled(est, [p.low for p in ps], [p.high for p in ps])
    print(f"{cid}: per seed {np.round(est, 2).tolist()}, pooled {m:.2f} [{lo:.2f}, {hi:.2f}] over {k0} seeds")
    for k, pr in seeds_to_decide(est, [(p.high - p.low) / 2 for p in ps], ks=(3, 4, 5, 6, 8)).items():
        print(f"  k = {k} fresh seeds: P(the pooled interval excludes 0) = {pr:.2f}")
