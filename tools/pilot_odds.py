"""Shared by the pilot tools (`*_pilot.py`): one claim's per-seed estimates, pooled, and the odds that k fresh seeds decide it.

`report` pools the pilot's seeds with `bench.findings.seed_pooled` and simulates the pooled verdict at k fresh seeds with
`bench.findings.seeds_to_decide` (each fresh seed's estimate drawn around the pilot's mean with the pilot's spread
between seeds, and the pilot's mean half-width), then prints one line for the claim and one per k. `run_rows` and
`MEASURES` are what exp_generation's pilot tools share: the run they read and its two measures. The tools import them as
`from pilot_odds import report, run_rows, MEASURES` (Python puts `tools/` first on the path of a script run from it).
"""
import sys
import numpy as np, pandas as pd
from fewshot_nb.bench.findings import seed_pooled, seeds_to_decide

# exp_generation's two measures as its claims state them: claim-id suffix, results.csv column, scale to the claim's unit
MEASURES = (("diversity", "diversity", 1.0), ("recognizability", "recognizability_frac", 100.0))


def run_rows(default, experiment):
    "The run folder an exp_generation pilot tool reads (its first argument, else `default`) and that run's per-class rows of `experiment`."
    d = sys.argv[1] if len(sys.argv) > 1 else default
    return d, pd.read_csv(f"{d}/results.csv").query("experiment == @experiment")


def report(claim, estimates, lows, highs, ks=(3, 4, 5, 6, 8, 10, 12), null=0.0, label=""):
    "Print the pilot's seeds, their pooled estimate, and P(the pooled 95% interval over k fresh seeds excludes `null`) for each k."
    est, lo, hi = (np.asarray(v, dtype=float) for v in (estimates, lows, highs))
    m, l, h, k0 = seed_pooled(est, lo, hi)
    print(f"{claim}{label}: per seed {np.round(est, 2).tolist()}, pooled {m:.2f} [{l:.2f}, {h:.2f}] over {k0} seeds")
    for k, p in seeds_to_decide(est, (hi - lo) / 2, ks=ks, null=null).items():
        print(f"  k = {k:2d} fresh seeds: P(the pooled interval excludes {null:g}) = {p:.2f}")
