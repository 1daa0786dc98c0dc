"""Pilot for bt.beta.stn_amplitude.* ("beta moves the VAE-STN more than the VAE-NS", Appendix S15): how many fresh
training seeds decide them?

Reads exp_beta's default settings run with each model at several seeds: the VAE-NS's (nbs/results/exp_beta_seeds3) and
the VAE-STN's (nbs/results/exp_beta_vae_stn_seeds3), seeds 0-2 of each. Per seed, each model's range over the betas of its
mean over the test classes (its most minus its least), and the VAE-STN's range minus the VAE-NS's, as exp_beta's
findings measure it (`generation.metrics.range_difference`): a bootstrap over the classes, resampled alike for both models (2,000 draws,
percentile interval). The seeds' differences are pooled with `seed_pooled`, and `pilot_odds.report` simulates the pooled
verdict at k fresh seeds of both models (a direction test without a margin: a decision is a pooled interval that
excludes 0). Run from the repository root:
    python tools/stn_amplitude_pilot.py                        # the pilot
    python tools/stn_amplitude_pilot.py NS_FOLDER STN_FOLDER   # the same measure on other runs (seeds paired by number)
"""
import sys
import pandas as pd
from fewshot_nb.generation.metrics import range_difference
from pilot_odds import report

ns_dir, stn_dir = sys.argv[1:3] if len(sys.argv) > 2 else ("nbs/results/exp_beta_seeds3", "nbs/results/exp_beta_vae_stn_seeds3")
ns, stn = (pd.read_csv(f"{d}/results.csv") for d in (ns_dir, stn_dir))
print(f"seeds {sorted(set(ns.seed) & set(stn.seed))} of the VAE-NS ({ns_dir}) and the VAE-STN ({stn_dir}); {len(set(ns['class']) & set(stn['class']))} test classes")
for c, col, sc in (("recognizability", "recognizability_frac", 100), ("diversity", "diversity", 1)):
    per = range_difference(stn, ns, col, scale=sc)   # per seed, as exp_beta's findings
    report(f"bt.beta.stn_amplitude.{c}", per.estimate, per.low, per.high, ks=(3, 4, 5, 6, 8), label=" (the VAE-STN's range over the betas minus the VAE-NS's)")
