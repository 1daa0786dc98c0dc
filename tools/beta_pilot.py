"""Pilot for exp_beta's shape claims (bt.beta.concave, bt.beta.towards_humans): how many fresh training seeds decide them?

The pilot is three seeds of exp_beta at its default settings, seeds 0 to 2 (the stored run nbs/results/exp_beta_seeds3,
which exp_beta's findings pool for these two claims). Each claim is measured per seed as exp_beta's findings measure it,
the betas compared being chosen on the three seeds together (the most recognizable beta, the inner beta closest to
humans, the nearer end), and `pilot_odds.report` gives the probability that k fresh seeds decide it.

Both claims are direction tests with a smallest effect that counts (the claims table's `margin`: 3 points, a quarter of
a standard deviation of the plane): the one rule says "direction only" when the pooled interval lies above the margin
and "not reproduced" when it lies below it, so a decision is an interval that excludes the margin, not 0, and the odds
are simulated against the margin. Run from the repository root:
    python tools/beta_pilot.py
"""
import pandas as pd
from fewshot_nb.metrics import paired_comparison
from fewshot_nb.bench.findings import seed_pooled
from fewshot_nb.generation import distance_to_humans
from fewshot_nb.generation.metrics import z_scale, class_distances_to_humans
from pilot_odds import report

RUN, KS = "nbs/results/exp_beta_seeds3", (4, 6, 8, 10, 12, 16, 20, 24)
margin = pd.read_csv("nbs/claims/boutin2022.csv").set_index("id").margin   # each claim's smallest effect that counts
cols = ["diversity", "recognizability_frac"]
res, summ, hum = (pd.read_csv(f"{RUN}/{f}.csv") for f in ("results", "summary", "human"))
by_beta = summ.groupby("beta")[cols].mean()
bs = list(by_beta.index); ends = (min(bs), max(bs))
tabs = [g.groupby(["beta", "class"])[cols].mean() for _, g in res.groupby("seed")]
print(f"pilot seeds {sorted(res.seed.unique().tolist())}; betas {bs}")


def odds(cid, per_seed, label):   # per_seed: one paired comparison per seed
    report(cid, [c.mean_diff for c in per_seed], [c.low for c in per_seed], [c.high for c in per_seed], ks=KS,
           null=float(margin[cid]), label=f" ({label}; decided when the interval excludes the margin, {margin[cid]:g})")


nearer = lambda cs: min(cs, key=lambda e: seed_pooled([c.mean_diff for c in cs[e]], [c.low for c in cs[e]], [c.high for c in cs[e]])[0])
rec = lambda t, b: 100 * t.loc[b, "recognizability_frac"].to_numpy()
peak = by_beta.recognizability_frac.idxmax()
if peak in ends:   # the best inner beta against the end that peaks
    inner = by_beta.recognizability_frac.drop(list(ends)).idxmax()
    odds("bt.beta.concave", [paired_comparison(rec(t, inner), rec(t, peak)) for t in tabs], f"beta = {inner:g} minus beta = {peak:g}, an end")
else:              # the peak against the nearer end
    cs = {e: [paired_comparison(rec(t, peak), rec(t, e)) for t in tabs] for e in ends}
    e = nearer(cs)
    odds("bt.beta.concave", cs[e], f"beta = {peak:g} minus beta = {e:g}, the nearer end, recognizability points")

hp = (hum.diversity.mean(), hum.recognizability_frac.mean())
near = pd.Series(distance_to_humans(by_beta[cols].to_numpy(), hp), index=by_beta.index)
inner = near.drop(list(ends)).idxmin()
human_cls, scale = hum.set_index("class")[cols], z_scale(by_beta[cols].to_numpy(), hp)
dist = lambda t, b: class_distances_to_humans(t.loc[b].loc[human_cls.index, cols].to_numpy(), human_cls.to_numpy(), scale)
cs = {e: [paired_comparison(dist(t, e), dist(t, inner)) for t in tabs] for e in ends}
e = nearer(cs)
odds("bt.beta.towards_humans", cs[e], f"distance to humans, beta = {e:g} (the nearer end) minus beta = {inner:g}")
