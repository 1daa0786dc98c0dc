"""Pilot for exp_realistic's share claims: how many fresh extractor seeds decide them?

A share claim ("all the transductive methods drop", "more than half fall below the best inductive method", ...) counts
methods whose mean difference has one sign; more tasks narrow it only as far as the extractors agree. The pilot is the
stored default run (seed 0) and its four seed runs (nbs/results/exp_realistic_seed1 to _seed4): each run's own
one-seed estimate and interval (the default run's `one_seed` columns, the seed runs' `findings.csv`). The pooled verdict
(`seed_pooled`) at k fresh seeds is simulated with `bench.findings.seeds_to_decide`: each seed's estimate drawn around
the pilot's mean with the pilot's seed-to-seed spread, each with the pilot's mean half-width.
Prints the probability that the pooled 95% interval excludes the claim's null (a share of 0.5). Run from the repository root:
    python tools/realistic_pilot.py
"""
import pandas as pd
from pilot_odds import report

IDS = ["vt.all_drop", "vt.half_below_inductive", "vt.fig4.most_decrease", "vt.fig4.inductive_competitive"]
KS = (5, 10, 15, 20, 30)
pilot = pd.read_csv("nbs/runs/exp_realistic/findings.csv").set_index("id")
seeds = [pd.read_csv(f"nbs/results/exp_realistic_seed{s}/findings.csv").set_index("id") for s in (1, 2, 3, 4)]
for cid in IDS:   # seed 0 is the default run's own `one_seed` columns; seeds 1 to 4 their runs' own (one-seed) rows
    r = pilot.loc[cid]
    report(cid, [r.one_seed] + [f.loc[cid, "ours"] for f in seeds], [r.one_seed_low] + [f.loc[cid, "low"] for f in seeds],
           [r.one_seed_high] + [f.loc[cid, "high"] for f in seeds], ks=KS, null=float(r["null"]), label=" (seeds 0-4)")
