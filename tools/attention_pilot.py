"""Pilot for bg.attention.* (the VAE-STN's diversity "is minimal at 60 steps" and its recognizability "maximal at 60
attentional steps", S14): how many fresh training seeds decide them?

Reads a run of exp_generation that trains the VAE-STN at 20, 60 and 90 attention steps (the pilot: the stored run
nbs/results/exp_generation_attention, seeds 0-2) and measures both claims per seed as exp_generation's findings do
(`generation.metrics.middle_vs_ends`): the number of steps nearest 60 minus the mean of the two ends, paired over the
24 test classes, with its 95% interval over the classes. Diversity is claimed lowest in the middle (below 0),
recognizability highest (above 0). The seeds are pooled with `seed_pooled`, and `pilot_odds.report` simulates the pooled
verdict at k fresh seeds (a direction test without a margin: a pooled interval that excludes 0 decides the claim, for or
against). Run from the repository root:
    python tools/attention_pilot.py                              # the pilot (its odds advised against a decision run)
    python tools/attention_pilot.py runs/gen_attention_s012      # the same measure on another run of the sweep
"""
import sys
from fewshot_nb.generation.metrics import middle_vs_ends
from pilot_odds import report, run_rows, MEASURES

d, X = run_rows("nbs/results/exp_generation_attention", "attention")
if X.seed.nunique() < 2: sys.exit(f"{d} has {X.seed.nunique()} seed of the attention sweep: a pilot needs two or more to see the spread between seeds")
for c, col, scale in MEASURES:
    per = middle_vs_ends(X, col, scale=scale)
    print(f"bg.attention.{c}: {per.attrs['values'][1]:g} steps minus the mean of the two ends, each seed's 95% interval over the classes: " +
          "; ".join(f"seed {r.seed}: [{r.low:+.2f}, {r.high:+.2f}]" for r in per.itertuples()))
    report(f"bg.attention.{c}", per.estimate, per.low, per.high, ks=(3, 4, 5, 6, 8, 10))
