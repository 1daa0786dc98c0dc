"""The `checks` cells of the generation experiments fail on a broken model (issue 38).

`tests/test_stored_runs.py` runs each experiment's `checks` cells against its stored default run. Here a copy of the
stored runs of `exp_beta` and `exp_generation` is broken the way a model that learned nothing would break it (its
trained models score what their untrained controls score), and the checks must then fail: a check that cannot fail
on such a run checks nothing.
"""
import shutil
from pathlib import Path
import pandas as pd
import pytest
from test_stored_runs import run_checks   # the harness of tests/test_stored_runs.py

ROOT = Path(__file__).resolve().parent.parent


def _stored(stem:str) -> Path:
    d = ROOT/"nbs"/"runs"/stem
    if not (d/"summary.csv").is_file() or not (d/"controls.csv").is_file():
        pytest.skip(f"no stored default run with a measured chance gate in {d.relative_to(ROOT)}")
    return d


def _copy(stem:str, tmp_path:Path) -> Path:
    run = tmp_path/"runs"/stem
    shutil.copytree(_stored(stem), run)
    return run


def _break(run:Path):
    "Every trained model scores what an untrained control scores: a model that learned nothing."
    s, k = pd.read_csv(run/"summary.csv"), pd.read_csv(run/"controls.csv")
    s["recognizability_frac"] = float(k.recognizability_frac.min())
    s["recognizability_hw_frac"] = float(k.recognizability_hw_frac.max())
    s.to_csv(run/"summary.csv", index=False)


@pytest.mark.parametrize("stem", ["exp_beta", "exp_generation"])
def test_checks_pass_on_the_stored_copy(stem, tmp_path, monkeypatch):
    "The harness itself: an unbroken copy passes (so the failures below come from the breakage)."
    run_checks(stem, _copy(stem, tmp_path), monkeypatch)


@pytest.mark.parametrize("stem", ["exp_beta", "exp_generation"])
def test_checks_fail_on_a_model_that_learned_nothing(stem, tmp_path, monkeypatch):
    run = _copy(stem, tmp_path)
    _break(run)
    with pytest.raises(AssertionError):
        run_checks(stem, run, monkeypatch)


def test_beta_checks_fail_without_the_measured_gate(tmp_path, monkeypatch):
    "A controls file whose gate is not its controls' upper end (an assumed gate) is refused."
    run = _copy("exp_beta", tmp_path)
    k = pd.read_csv(run/"controls.csv"); k["gate_frac"] = 0.05 + 0.05   # chance + 5 points, assumed
    k.to_csv(run/"controls.csv", index=False)
    with pytest.raises(AssertionError):
        run_checks("exp_beta", run, monkeypatch)
