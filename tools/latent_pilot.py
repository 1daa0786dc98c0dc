"""Pilot for bg.latent.no_common_trend.* ("we did not find any common trend between the size of the latent variable, the
diversity, and the recognizability", Sec. 4.2, S16): how many fresh training seeds decide it?

Reads a run of exp_generation that trains each of the four models at two latent sizes beside its base (the pilot: the
stored sweep nbs/results/exp_generation_sweeps3, seeds 0-2), and measures the claim per seed as exp_generation's findings
do (`generation.metrics.latent_trend`): each model's largest minus smallest latent size class by class, a common trend
being every model moving one way; ours is the least of sign x difference over the models (below 0: some model moves
against the others), with a bootstrap interval over classes in each seed. The seeds are pooled with `seed_pooled`, and
`pilot_odds.report` simulates the pooled verdict at k fresh seeds (a direction test without a margin: a decision is a
pooled interval that excludes 0). Run from the repository root:
    python tools/latent_pilot.py                                            # the pilot
    python tools/latent_pilot.py nbs/results/exp_generation_latent_decide   # the same measure on another run
"""
from fewshot_nb.generation.metrics import latent_trend
from pilot_odds import report, run_rows, MEASURES

d, X = run_rows("nbs/results/exp_generation_sweeps3", "latent")
for c, col, scale in MEASURES:
    cid = f"bg.latent.no_common_trend.{c}"
    per = latent_trend(X, col, scale=scale)
    print(f"{cid}: each model's mean difference per seed: " +
          "; ".join(f"seed {s}: " + ", ".join(f"{m} {v:+.2f}" for m, v in r.items()) for s, r in per.attrs["by_model"].items()))
    report(cid, per.estimate, per.low, per.high, ks=(4, 5, 6, 8, 10, 12))
