"""Pilot for bg.fig5b.different_concepts ("the VAE-NS and the VAE-STN closest to humans approximate humans on different
concepts"): how many fresh training seeds decide it?

Reads a run of exp_generation at its default configurations with several seeds (the pilot: seeds 0-2,
nbs/results/exp_generation_fig5b_pilot), and measures the claim per seed as exp_generation's findings do (`generation.metrics.concept_agreement`):
each model's configuration closest to humans (its mean distance over the seeds, the squares of Fig. 5a), each class's
distance to humans in the plane z-scored over the run's points (Fig. 5b's distances), and the Spearman correlation of the
two VAEs' distances over the test classes, on Fisher's z with Bonett and Wright's variance. The seeds' z are pooled with
`seed_pooled`, and `pilot_odds.report` simulates the pooled verdict at k fresh seeds (the claim is a direction test, a
negative association being the paper's direction; a decision is a pooled interval that excludes 0). Run from the
repository root:
    python tools/fig5b_pilot.py                                           # the pilot
    python tools/fig5b_pilot.py nbs/results/exp_generation_fig5b_decide   # the same measure on another run
"""
import math, sys
import pandas as pd
from fewshot_nb.bench.findings import seed_pooled
from fewshot_nb.generation.metrics import concept_agreement
from pilot_odds import report

d = sys.argv[1] if len(sys.argv) > 1 else "nbs/results/exp_generation_fig5b_pilot"
S, H, X = (pd.read_csv(f"{d}/{f}.csv") for f in ("summary", "human", "results"))
per, best = concept_agreement(S[S.experiment != "user"], X[X.experiment != "user"], H)   # per seed, as exp_generation's findings
print(f"{d}: seeds {per.seed.tolist()}; closest configurations: " + ", ".join(f"{m} {v}" for m, v in best.items()))
print("Spearman's rho per seed: " + ", ".join(f"{s}: {r:+.2f}" for s, r in zip(per.seed, per.rho)))
m, lo, hi, k = seed_pooled(per.z, per.z_low, per.z_high)
print(f"pooled over {k} seeds: rho {math.tanh(m):+.2f} [{math.tanh(lo):+.2f}, {math.tanh(hi):+.2f}]")
report("bg.fig5b.different_concepts", per.z, per.z_low, per.z_high, ks=(3, 4, 5, 6, 8, 10), label=" (Fisher z of Spearman's rho)")
