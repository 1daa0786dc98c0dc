"""The reproducibility study's hypothesis tests on simulated studies whose truth is known (issue 38).

Each test of `exp_reproducibility` must reject its hypothesis where the simulated study makes it false and must not
where it is true. The studies have the notebook's default design (6 experiments, 2 configurations, 3 seeds, 2
repeats, 3 reruns) and are drawn by `fewshot_nb.mixed.simulate_reruns`, with every seed fixed, so each rate below is
a fixed number; the bounds are those of the notebook's rule (reject in >= 80% of false tables, <= 20% of true ones).
"""
import warnings
import numpy as np
import pytest
from fewshot_nb.mixed import simulate_reruns, rerun_test, block_test, fit_mixed, random_effects_lrt

EXPS = {f"{a}-{o}": 0.2 + 0.04 * i for i, (a, o) in enumerate((a, o) for a in ("protonet", "matchingnet", "pretrain") for o in ("adam", "sgd"))}
DESIGN = dict(n_rerun=3, n_config=2, n_seed=3, n_repeat=2, sd_config=0.03, sd_cell=0.02)
UNIT = ("experiment", "config", "seed")
N = 20


def rate(test, **kw) -> float:
    "Fraction of N simulated studies in which `test` (a table -> p-value) rejects at 0.05."
    return float(np.mean([test(simulate_reruns(EXPS, **DESIGN, **kw, seed=s)) < 0.05 for s in range(N)]))


def rerun_p(b):
    return lambda d: float(rerun_test(d, unit=UNIT).set_index("contrast").loc[f"{b} - 1", "p"])


def test_rerun_test_on_a_cpu_is_exact():
    "Bit-identical repeats: a rerun that changes nothing is never rejected, one that moves its runs always is, whichever rerun it is."
    moved = dict(sd_rerun=[0.0, 0.01])          # rerun 3 on other threads, rerun 2 as run 1
    assert rate(rerun_p(2), **moved) == 0.0 and rate(rerun_p(3), **moved) == 1.0
    assert rate(rerun_p(3)) == 0.0


def test_rerun_test_with_noisy_runs():
    "Noisy runs (a GPU): a rerun that is another draw of the noise is rejected at about the test's level; runs moved by twice the noise are found."
    assert rate(rerun_p(3), sd=0.01) <= 0.2
    assert rate(rerun_p(3), sd=0.01, sd_rerun=[0.0, 0.02]) >= 0.8
    assert rate(rerun_p(2), sd=0.01, sd_rerun=[0.0, 0.02]) <= 0.2       # the rerun left alone stays unrejected


def test_block_tests_of_seeds_and_repeats():
    "H2's and H1's block tests: no rejection without the effect, rejection with it."
    seed_p = lambda d: block_test(d, block=("experiment", "config"), factor="seed")["p"]
    repeat_p = lambda d: block_test(d, block=("experiment", "config", "seed", "rerun"), factor="repeat")["p"]
    assert rate(seed_p) <= 0.2 and rate(seed_p, sd_seed=0.03) >= 0.8
    assert rate(repeat_p) == 0.0 and rate(repeat_p, sd=0.005) <= 0.2 and rate(repeat_p, sd_repeat=0.02, sd=0.005) >= 0.8


def test_the_papers_seed_lrt_errs_when_runs_share_a_configuration():
    "Why the notebook adds the block test: without a configuration x seed term, the LRT of (1 | seed) finds seed effects that are not there."
    def lrt_p(d):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return float(random_effects_lrt(fit_mixed(d, fixed="level")).set_index("model").loc["without (1 | seed)", "Pr(>Chisq)"])
    assert rate(lrt_p) > 0.2


def test_simulate_reruns_sets_each_part_apart():
    d = simulate_reruns(EXPS, **DESIGN, seed=0)
    assert len(d) == 6 * 3 * 2 * 3 * 2 and set(d.rerun) == {1, 2, 3}
    assert d.groupby(["level", "config", "seed"]).acc.nunique().max() == 1                  # no noise: repeats identical
    assert d.groupby(["experiment", "config", "seed", "repeat"]).acc.nunique().max() == 1   # no rerun effect: reruns identical
    shifted = simulate_reruns(EXPS, **DESIGN, rerun_shift=[0.0, 0.05], seed=0)
    diff = shifted[shifted.rerun == 3].acc.to_numpy() - d[d.rerun == 3].acc.to_numpy()
    np.testing.assert_allclose(diff, 0.05)
    with pytest.raises(ValueError, match="n_rerun - 1 = 2 numbers"): simulate_reruns(EXPS, **DESIGN, sd_rerun=[0.1])
