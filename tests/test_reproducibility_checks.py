"""The `checks` cells of exp_reproducibility and exp_training_run can fail: each runs clean on a copy of its stored
default run, and fails on a copy with one finding broken (issue 38: a check that cannot fail checks nothing)."""
import shutil
from pathlib import Path
import pandas as pd
import pytest
from test_stored_runs import run_checks   # the harness of tests/test_stored_runs.py

ROOT = Path(__file__).resolve().parent.parent


def copy_run(stem:str, tmp_path:Path) -> Path:
    src = ROOT/"nbs"/"runs"/stem
    assert (src/"run.json").is_file(), f"the default run of {stem} is not stored in {src.relative_to(ROOT)}"
    return Path(shutil.copytree(src, tmp_path/"runs"/stem))


def edit(path:Path, f):
    d = pd.read_csv(path); f(d); d.to_csv(path, index=False)


BREAKS = {   # (notebook, name) -> what a broken run would leave in its files
    ("exp_training_run", "untrained"): ("results.csv", lambda d: d.__setitem__("acc_frac", d.control_acc_frac)),
    ("exp_reproducibility", "repeats differ"): ("runs.csv", lambda d: d.__setitem__("weights", d.weights.where(d.repeat == 0, "x"))),
    ("exp_reproducibility", "rerun on 2 threads reproduced"): ("hypotheses.csv", lambda d: d.__setitem__("verdict", d.verdict.where(d.hypothesis != "H3 run 3", "not rejected"))),
    ("exp_reproducibility", "a test wrong on known answers"): ("simulated.csv", lambda d: d.__setitem__("right", d.right & ~d.test.eq("H2"))),
    ("exp_reproducibility", "control not deterministic"): ("determinism.csv", lambda d: d.__setitem__("bit_identical", False)),
    ("exp_reproducibility", "nothing learned"): ("experiments.csv", lambda d: d.__setitem__("acc_frac", 0.05)),
}


@pytest.mark.parametrize("stem", ["exp_training_run", "exp_reproducibility"])
def test_checks_pass_on_the_stored_run(stem, tmp_path, monkeypatch):
    run_checks(stem, copy_run(stem, tmp_path), monkeypatch)


@pytest.mark.parametrize("key", list(BREAKS), ids=[f"{a}-{b}" for a, b in BREAKS])
def test_checks_fail_on_a_broken_run(key, tmp_path, monkeypatch):
    stem, _ = key
    run = copy_run(stem, tmp_path)
    file, f = BREAKS[key]
    edit(run/file, f)
    with pytest.raises(AssertionError):
        run_checks(stem, run, monkeypatch)
