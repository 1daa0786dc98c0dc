"""Pilot for exp_beta's shape claims (bt.beta.concave, bt.beta.towards_humans): how many fresh training seeds decide them?

The pilot is three seeds of exp_beta at its default settings, seeds 0 to 2 (the stored run nbs/results/exp_beta_seeds3,
which exp_beta's findings pool for these two claims). Each claim is measured per seed as exp_beta's findings measure it,
the betas compared being chosen on the three seeds together (the most recognizable beta, the inner beta closest to
humans, the nearer end), and `bench.findings.seeds_to_decide` gives the probability that k fresh seeds decide it.
Run from the repository root:
    python tools/beta_pilot.py
"""
import numpy as np, pandas as pd
from fewshot_nb.metrics import paired_comparison
from fewshot_nb.bench.findings import seed_pooled, seeds_to_decide
from fewshot_nb.generation import distance_to_humans
from fewshot_nb.generation.metrics import z_scale, class_distances_to_humans

RUNS = ["nbs/results/exp_beta_seeds3"]
cols = ["diversity", "recognizability_frac"]
res = pd.concat([pd.read_csv(f"{r}/results.csv") for r in RUNS])
summ = pd.concat([pd.read_csv(f"{r}/summary.csv") for r in RUNS])
hum = pd.read_csv(f"{RUNS[0]}/human.csv")
by_beta = summ.groupby("beta")[cols].mean()
bs = list(by_beta.index); ends = (min(bs), max(bs))
tabs = [g.groupby(["beta", "class"])[cols].mean() for _, g in res.groupby("seed")]
print(f"pilot seeds {sorted(res.seed.unique().tolist())}; betas {bs}")

def report(cid, per_seed):   # per_seed: one paired comparison per seed
    est, hw = [c.mean_diff for c in per_seed], [(c.high - c.low) / 2 for c in per_seed]
    m, lo, hi, k = seed_pooled(est, [c.low for c in per_seed], [c.high for c in per_seed])
    print(f"{cid}: per seed {np.round(est, 2).tolist()} (half-widths {np.round(hw, 2).tolist()}), pooled {m:.2f} [{lo:.2f}, {hi:.2f}] over {k} seeds")
    for k_, pr in seeds_to_decide(est, hw, ks=(4, 6, 8, 10, 12)).items():
        print(f"  k = {k_} fresh seeds: P(the pooled interval excludes 0) = {pr:.2f}")

rec = lambda t, b: 100 * t.loc[b, "recognizability_frac"].to_numpy()
peak = by_beta.recognizability_frac.idxmax()
if peak in ends:   # the best inner beta against the end that peaks
    inner = by_beta.recognizability_frac.drop(list(ends)).idxmax()
    print(f"bt.beta.concave: the best inner beta ({inner:g}) minus beta = {peak:g}, the most recognizable (an end)")
    report("bt.beta.concave", [paired_comparison(rec(t, inner), rec(t, peak)) for t in tabs])
else:              # the peak against the nearer end
    cs = {e: [paired_comparison(rec(t, peak), rec(t, e)) for t in tabs] for e in ends}
    e = min(cs, key=lambda e: seed_pooled([c.mean_diff for c in cs[e]], [c.low for c in cs[e]], [c.high for c in cs[e]])[0])
    print(f"bt.beta.concave: beta = {peak:g} minus beta = {e:g}, the nearer end")
    report("bt.beta.concave", cs[e])

hp = (hum.diversity.mean(), hum.recognizability_frac.mean())
near = pd.Series(distance_to_humans(by_beta[cols].to_numpy(), hp), index=by_beta.index)
inner = near.drop(list(ends)).idxmin()
human_cls, scale = hum.set_index("class")[cols], z_scale(by_beta[cols].to_numpy(), hp)
dist = lambda t, b: class_distances_to_humans(t.loc[b].loc[human_cls.index, cols].to_numpy(), human_cls.to_numpy(), scale)
cs = {e: [paired_comparison(dist(t, e), dist(t, inner)) for t in tabs] for e in ends}
e = min(cs, key=lambda e: seed_pooled([c.mean_diff for c in cs[e]], [c.low for c in cs[e]], [c.high for c in cs[e]])[0])
print(f"bt.beta.towards_humans: per-class distance to humans of beta = {e:g} (the nearer end) minus beta = {inner:g}'s (the closest inner beta)")
report("bt.beta.towards_humans", cs[e])
