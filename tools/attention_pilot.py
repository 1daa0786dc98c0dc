"""Pilot for bg.attention.* (the VAE-STN's diversity "is minimal at 60 steps" and its recognizability "maximal at 60
attentional steps", S14): how many fresh training seeds decide them?

Reads a run of exp_generation that trains the VAE-STN at 20, 60 and 90 attention steps (the pilot: the stored run
nbs/results/exp_generation_attention, seeds 0-2) and measures both claims per seed as exp_generation's findings do
(`generation.metrics.middle_vs_ends`): the number of steps nearest 60 minus the mean of the two ends, paired over the
24 test classes, with its 95% interval over the classes. Diversity is claimed lowest in the middle (a decision is a
pooled interval below 0), recognizability highest (above 0). The seeds are pooled with `seed_pooled`, and
`pilot_odds.report` simulates the pooled verdict at k fresh seeds (a direction test without a margin: a decision is a
pooled interval that excludes 0). Run from the repository root:
    python tools/attention_pilot.py                                               # the pilot
    python tools/attention_pilot.py nbs/results/exp_generation_attention_decide   # the same measure on another run
"""
import sys
import pandas as pd
from fewshot_nb.generation.metrics import middle_vs_ends
from pilot_odds import report

d = sys.argv[1] if len(sys.argv) > 1 else "nbs/results/exp_generation_attention"
X = pd.read_csv(f"{d}/results.csv").query("experiment == 'attention'")
if X.seed.nunique() < 2: sys.exit(f"{d} has {X.seed.nunique()} seed of the attention sweep: a pilot needs two or more to see the spread between seeds")
for cid, col, scale in (("bg.attention.diversity", "diversity", 1.0), ("bg.attention.recognizability", "recognizability_frac", 100.0)):
    per = middle_vs_ends(X, col, scale=scale)
    lo_end, mid, hi_end = per.attrs["values"]
    print(f"{cid}: {mid:g} steps minus the mean of {lo_end:g} and {hi_end:g}, per seed " +
          "; ".join(f"seed {r.seed}: {r.estimate:+.2f} [{r.low:+.2f}, {r.high:+.2f}]" for r in per.itertuples()))
    report(cid, per.estimate, per.low, per.high, ks=(3, 4, 5, 6, 8, 10))
