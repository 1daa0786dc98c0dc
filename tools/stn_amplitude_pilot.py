"""Pilot for bt.beta.stn_amplitude.* ("beta moves the VAE-STN more than the VAE-NS", Appendix S15): how many fresh
training seeds decide them?

Reads exp_beta's default settings run with each model at several seeds: the VAE-NS's (nbs/results/exp_beta_seeds3) and
the VAE-STN's (nbs/results/exp_beta_vae_stn_seeds3), seeds 0-2 of each. Per seed, each model's range over the betas of its
mean over the test classes (its most minus its least), and the VAE-STN's range minus the VAE-NS's, as exp_beta's
findings measure it on one seed of each: a bootstrap over the classes, resampled alike for both models (2,000 draws,
percentile interval). The seeds' differences are pooled with `seed_pooled`, and `pilot_odds.report` simulates the pooled
verdict at k fresh seeds of both models (a direction test without a margin: a decision is a pooled interval that
excludes 0). Run from the repository root:
    python tools/stn_amplitude_pilot.py                        # the pilot
    python tools/stn_amplitude_pilot.py NS_FOLDER STN_FOLDER   # the same measure on other runs (seeds paired by number)
"""
import sys
import numpy as np, pandas as pd
from pilot_odds import report

ns_dir, stn_dir = sys.argv[1:3] if len(sys.argv) > 2 else ("nbs/results/exp_beta_seeds3", "nbs/results/exp_beta_vae_stn_seeds3")
R = {m: pd.read_csv(f"{d}/results.csv") for m, d in (("vae_ns", ns_dir), ("vae_stn", stn_dir))}
seeds = sorted(set(R["vae_ns"].seed) & set(R["vae_stn"].seed))
classes = sorted(set(R["vae_ns"]["class"]) & set(R["vae_stn"]["class"]))
rng = np.random.default_rng(0)
draws = [classes] + [list(rng.choice(classes, len(classes))) for _ in range(2000)]   # the same draws for every seed and measure
print(f"seeds {seeds} of the VAE-NS ({ns_dir}) and the VAE-STN ({stn_dir}); {len(classes)} test classes")
for c, col, sc in (("recognizability", "recognizability_frac", 100), ("diversity", "diversity", 1)):
    est, lo, hi = [], [], []
    for s in seeds:
        tab = {m: r[r.seed == s].groupby(["beta", "class"])[col].mean().unstack("class") for m, r in R.items()}
        amp = lambda m, cl: (lambda v: v.max() - v.min())(tab[m][cl].mean(axis=1))
        d = np.array([sc * (amp("vae_stn", cl) - amp("vae_ns", cl)) for cl in draws])
        est.append(d[0]); lo.append(np.percentile(d[1:], 2.5)); hi.append(np.percentile(d[1:], 97.5))
    report(f"bt.beta.stn_amplitude.{c}", est, lo, hi, ks=(3, 4, 5, 6, 8), label=" (the VAE-STN's range over the betas minus the VAE-NS's)")
