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
import numpy as np, pandas as pd
from fewshot_nb.bench.findings import seed_pooled, seeds_to_decide

IDS = ["vt.all_drop", "vt.half_below_inductive", "vt.fig4.most_decrease", "vt.fig4.inductive_competitive"]
KS = (5, 10, 15, 20, 30)
pilot = pd.read_csv("nbs/runs/exp_realistic/findings.csv").set_index("id")
seeds = [pd.read_csv(f"nbs/results/exp_realistic_seed{s}/findings.csv").set_index("id") for s in (1, 2, 3, 4)]
print("claim".ljust(32), "per seed (0-4)".ljust(38), "pooled".ljust(22), "  ".join(f"k={k}" for k in KS))
for cid in IDS:
    r = pilot.loc[cid]
    est = np.array([r.one_seed] + [f.loc[cid, "ours"] for f in seeds])
    lo = np.array([r.one_seed_low] + [f.loc[cid, "low"] for f in seeds])
    hi = np.array([r.one_seed_high] + [f.loc[cid, "high"] for f in seeds])
    m, l, h, _ = seed_pooled(est, lo, hi)
    p = seeds_to_decide(est, (hi - lo) / 2, ks=KS, null=float(r["null"]))
    print(cid.ljust(32), str(np.round(est, 2).tolist()).ljust(38), f"{m:.2f} [{l:.2f}, {h:.2f}]".ljust(22), "  ".join(f"{p[k]:.2f}".rjust(len(f'k={k}')) for k in KS))
