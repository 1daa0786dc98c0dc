"""Pilot for bg.fig5b.different_concepts ("the VAE-NS and the VAE-STN closest to humans approximate humans on different
concepts"): how many fresh training seeds decide it?

Reads a run of exp_generation at its default configurations with several seeds (the pilot: seeds 0-2,
nbs/results/exp_generation_fig5b_pilot), and measures the claim per seed as exp_generation's findings measure it on one:
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
import numpy as np, pandas as pd
from scipy import stats
from fewshot_nb.bench.findings import seed_pooled
from fewshot_nb.generation.metrics import z_scale, class_distances_to_humans
from pilot_odds import report

d = sys.argv[1] if len(sys.argv) > 1 else "nbs/results/exp_generation_fig5b_pilot"
S, H, X = (pd.read_csv(f"{d}/{f}.csv") for f in ("summary", "human", "results"))
S, X = S[S.experiment != "user"], X[X.experiment != "user"]
cols, classes = ["diversity", "recognizability_frac"], H["class"].tolist()
scale = z_scale(S[cols].to_numpy(), (H.diversity.mean(), H.recognizability_frac.mean()))
hc = H.set_index("class").loc[classes, cols].to_numpy()
best = {m: S[S.model == m].groupby("variant").distance_to_humans.mean().idxmin() for m in ("vae_ns", "vae_stn")}   # the squares of Fig. 5a


def z_of(rows):   # one seed: Spearman's rho of the two VAEs' per-class distances, as Fisher z with its 95% interval
    dist = {m: class_distances_to_humans(rows[(rows.model == m) & (rows.variant == v)].groupby("class")[cols].mean().loc[classes].to_numpy(), hc, scale)
            for m, v in best.items()}
    r = stats.spearmanr(dist["vae_ns"], dist["vae_stn"]).statistic
    h = 1.959964 * math.sqrt((1 + r ** 2 / 2) / (len(classes) - 3))
    return math.atanh(r), math.atanh(r) - h, math.atanh(r) + h


seeds = sorted(X.seed.unique().tolist())
z = np.array([z_of(X[X.seed == s]) for s in seeds])
print(f"{d}: seeds {seeds}; closest configurations: " + ", ".join(f"{m} {v}" for m, v in best.items()))
print("Spearman's rho per seed: " + ", ".join(f"{s}: {math.tanh(v):+.2f}" for s, v in zip(seeds, z[:, 0])))
m, lo, hi, k = seed_pooled(z[:, 0], z[:, 1], z[:, 2])
print(f"pooled over {k} seeds: rho {math.tanh(m):+.2f} [{math.tanh(lo):+.2f}, {math.tanh(hi):+.2f}]")
report("bg.fig5b.different_concepts", z[:, 0], z[:, 1], z[:, 2], ks=(3, 4, 5, 6, 8, 10), label=" (Fisher z of Spearman's rho)")
