"""Pilot for the context claims (bg.context.*): how many fresh training seeds decide them?

Reads the stored equal-steps context run (seeds 0-2 of nbs/results/exp_generation_context_steps3_b3: the VAE-NS at
beta 3 and contexts 2, 5, 10, every size 2,700 steps), takes each seed's paired difference over the test classes
between the largest and the smallest context, and simulates the pooled verdict (`seed_pooled`) at k fresh seeds with
`bench.findings.seeds_to_decide`: each seed's estimate drawn around the pilot's mean with the pilot's seed-to-seed
spread, each with the pilot's mean half-width.
Prints the probability that the pooled 95% interval excludes 0. Run from the repository root:
    python tools/context_pilot.py
"""
import pandas as pd
from fewshot_nb.metrics import paired_comparison
from pilot_odds import report

X = pd.read_csv("nbs/results/exp_generation_context_steps3_b3/results.csv").query("experiment == 'context'")
classes = sorted(X["class"].unique())
small, large = (f"context {int(c)}" for c in (X.set_size.min(), X.set_size.max()))
def per_class(r, v, col): return r[r.variant == v].groupby("class")[col].mean().loc[classes].to_numpy()
for cid, a, b, col, scale in [("bg.context.more_recognizable", large, small, "recognizability_frac", 100),
                              ("bg.context.less_diverse", small, large, "diversity", 1)]:
    ps = [paired_comparison(scale * per_class(r, a, col), scale * per_class(r, b, col)) for _, r in X.groupby("seed")]
    report(cid, [p.mean_diff for p in ps], [p.low for p in ps], [p.high for p in ps], label=f" ({a} - {b})")
