"""fewshot_nb.mixed against R: the same simulated tables fitted here (statsmodels, with lmerTest's Satterthwaite
tests written out in Python) and by lme4 + lmerTest must agree within `compare_with_lme4`'s tolerances: fixed
estimates and standard errors to 1e-4, variances to 1e-3 (relative), logLik to 1e-3 and LRTs to 2e-3 (absolute),
Satterthwaite df, F and DenDF to 1e-2 (relative). Skipped when R, lme4 or lmerTest is missing, unless
FEWSHOT_REQUIRE_R=1, which makes a missing R a failure (for CI machines that must run the check)."""
import os, shutil, tempfile
import pytest
from fewshot_nb.mixed import simulate_runs, fit_mixed, has_lme4, lme4_fit, compare_with_lme4

MEANS = {"matchnet": 0.55, "protonet": 0.60, "protonet-rerun": 0.60, "tadam": 0.62}
PAIRS = [("protonet", "protonet-rerun"), ("protonet", "tadam"), ("matchnet", "tadam")]
TABLES = {
    "crossed": lambda: simulate_runs(MEANS, seed=0),                                    # the notebook's running example
    "identical repeats": lambda: simulate_runs(MEANS, identical_repeats=True, seed=1),  # repeat variance 0: a boundary fit
    "unbalanced": lambda: simulate_runs(MEANS, seed=4).sample(frac=0.7, random_state=1),  # 30% of the runs missing
}


def require_r():
    if has_lme4(lmertest=True): return
    why = "Rscript is not on the PATH" if not shutil.which("Rscript") else "R cannot load lme4 and lmerTest"
    if os.environ.get("FEWSHOT_REQUIRE_R", "") not in ("", "0"):
        pytest.fail(f"FEWSHOT_REQUIRE_R is set but {why}: apt-get install r-cran-lme4 r-cran-lmertest")
    pytest.skip(f"no R with lme4 and lmerTest here ({why}); apt-get install r-cran-lme4 r-cran-lmertest runs this check")


@pytest.mark.parametrize("reml", [False, True], ids=["ML", "REML"])
@pytest.mark.parametrize("table", list(TABLES))
def test_agrees_with_lme4(table, reml):
    require_r()
    fit = fit_mixed(TABLES[table](), reml=reml)
    assert fit.converged, fit.messages
    agreement = compare_with_lme4(fit, PAIRS)
    assert agreement.ok.all(), "\n" + agreement.to_string()
    if table == "identical repeats":
        assert fit.variances["repeat"] == 0 and fit.singular


def test_lme4_fit_leaves_no_files(tmp_path, monkeypatch):
    require_r()
    # a private temporary folder: the shared one also holds the folders of fits running in the other pytest worker
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    r = lme4_fit(TABLES["crossed"](), reml=True, pairs=PAIRS[:1])
    assert list(tmp_path.iterdir()) == []
    assert list(r["variances"]) == ["seed", "repeat", "residual"] and r["anova"] is not None and len(r["contrasts"]) == 1


def test_without_r_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setenv("PATH", "")
    assert not has_lme4()
    with pytest.raises(RuntimeError, match="apt-get install r-cran-lme4 r-cran-lmertest"):
        lme4_fit(TABLES["crossed"]())


def test_rerun_and_block_tests_agree_with_r(tmp_path):
    "rerun_test is R's nested anova(lm(acc ~ unit + unit:rerun)), block_test R's two-way anova on the (block, level) means."
    import subprocess
    import numpy as np
    from fewshot_nb.mixed import simulate_reruns, rerun_test, block_test
    require_r()
    d = simulate_reruns({"a": 0.4, "b": 0.5, "c": 0.3}, n_rerun=2, n_repeat=3, sd=0.01, sd_rerun=0.01, sd_seed=0.01, seed=7)
    d["unit"] = d.experiment + "/" + d.config.astype(str) + "/" + d.seed.astype(str)
    d["block"] = d.experiment + "/" + d.config.astype(str)
    d.to_csv(tmp_path/"d.csv", index=False)
    script = ('d <- read.csv(commandArgs(TRUE)[1]); for (v in c("unit", "rerun", "block", "seed")) d[[v]] <- factor(d[[v]]);'
              'a <- anova(lm(acc ~ unit + unit:rerun, d)); m <- aggregate(acc ~ block + seed, d, mean); b <- anova(lm(acc ~ block + seed, m));'
              'cat(a["unit:rerun", "F value"], a["unit:rerun", "Pr(>F)"], b["seed", "F value"], b["seed", "Pr(>F)"])')
    out = subprocess.run(["Rscript", "-e", script, str(tmp_path/"d.csv")], capture_output=True, text=True, check=True).stdout.split()
    F_rerun, p_rerun, F_seed, p_seed = map(float, out)
    rt = rerun_test(d).iloc[0]
    bt = block_test(d, block="block", factor="seed")
    np.testing.assert_allclose([rt.F, rt.p, bt["F"], bt["p"]], [F_rerun, p_rerun, F_seed, p_seed], rtol=1e-6)
