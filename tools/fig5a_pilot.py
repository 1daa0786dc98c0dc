"""Pilot for bg.fig5a.closest ("the VAE-NS is the closest model to humans"): how many fresh training seeds decide it?

Reads the stored base models at seeds 0-2 (nbs/results/exp_generation_base3), computes each model's per-class distance
to humans in the run's z-scored diversity-recognizability plane (Fig. 5b's distances, as exp_generation's findings),
takes the next closest base model, and each seed's paired difference over the test classes (its distance minus the
VAE-NS's); then simulates the pooled verdict (`seed_pooled`) at k fresh seeds with `bench.findings.seeds_to_decide`:
each seed's estimate drawn around the pilot's mean with the pilot's seed-to-seed spread, each with the pilot's mean
half-width. Prints the probability that the pooled 95% interval excludes 0. Run from the repository root:
    python tools/fig5a_pilot.py                                           # the pilot
    python tools/fig5a_pilot.py nbs/results/exp_generation_fig5a_decide   # the same numbers on the decision run
"""
import sys
import numpy as np, pandas as pd
from fewshot_nb.generation.metrics import z_scale, class_distances_to_humans
from fewshot_nb.metrics import paired_comparison
from pilot_odds import report

d = sys.argv[1] if len(sys.argv) > 1 else "nbs/results/exp_generation_base3"   # or another run of the base models: python tools/fig5a_pilot.py <folder>
S, H = pd.read_csv(f"{d}/summary.csv"), pd.read_csv(f"{d}/human.csv")
X = pd.read_csv(f"{d}/results.csv").query("experiment == 'fig3a'")
classes = H["class"].tolist()
scale = z_scale(S[S.experiment != "user"][["diversity", "recognizability_frac"]].to_numpy(), (H.diversity.mean(), H.recognizability_frac.mean()))
hc = H.set_index("class").loc[classes, ["diversity", "recognizability_frac"]].to_numpy()
per_class = lambda rows, col: rows.groupby("class")[col].mean().loc[classes].to_numpy()
D = pd.concat([pd.DataFrame({"class": classes, "model": m, "seed": s, "distance": class_distances_to_humans(
                   np.c_[per_class(r[r.model == m], "diversity"), per_class(r[r.model == m], "recognizability_frac")], hc, scale)})
               for s, r in X.groupby("seed") for m in sorted(X.model.unique())])
print("mean distance to humans per model and seed:\n", D.groupby(["model", "seed"]).distance.mean().unstack().round(2))
runner = D[D.model != "vae_ns"].groupby("model").distance.mean().idxmin()
ps = [paired_comparison(per_class(r[r.model == runner], "distance"), per_class(r[r.model == "vae_ns"], "distance")) for _, r in D.groupby("seed")]
report("bg.fig5a.closest", [p.mean_diff for p in ps], [p.low for p in ps], [p.high for p in ps], label=f" ({runner} - vae_ns)")
