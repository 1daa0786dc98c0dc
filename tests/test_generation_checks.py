"""The `checks` cells of the generation experiments fail on a broken model (issue 38).

`tests/test_stored_runs.py` runs each experiment's `checks` cells against its stored default run. Here a copy of the
stored runs of `exp_beta` and `exp_generation` is broken the way a model that learned nothing would break it (its
trained models score what their untrained controls score), and the checks must then fail: a check that cannot fail
on such a run checks nothing.
"""
import json, shutil
from pathlib import Path
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parent.parent


def _check_cells(nb:Path) -> tuple[str, str, list[str]]:
    "The parameters cell, the cell after it, and the `checks` cells of an experiment notebook."
    cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
    tags = [c.get("metadata", {}).get("tags", []) for c in cells]
    i = next(k for k, t in enumerate(tags) if "parameters" in t)
    src = lambda c: "".join(c["source"])
    return src(cells[i]), src(cells[i + 1]), [src(c) for c, t in zip(cells, tags) if "checks" in t and c["cell_type"] == "code"]


def _run_checks(stem:str, run:Path, monkeypatch):
    "Play the notebook's kernel on the run folder `run`: parameters, setup, then every `checks` cell."
    params, setup, checks = _check_cells(ROOT/"nbs"/f"{stem}.ipynb")
    assert checks, f"{stem} has no `checks` cells"
    monkeypatch.chdir(run.parent.parent); monkeypatch.setenv("FEWSHOT_PROGRESS", "0")
    ns = {"__name__": "__main__"}
    exec(params, ns); exec(setup, ns)
    for c in checks: exec(c, ns)


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
    _run_checks(stem, _copy(stem, tmp_path), monkeypatch)


@pytest.mark.parametrize("stem", ["exp_beta", "exp_generation"])
def test_checks_fail_on_a_model_that_learned_nothing(stem, tmp_path, monkeypatch):
    run = _copy(stem, tmp_path)
    _break(run)
    with pytest.raises(AssertionError):
        _run_checks(stem, run, monkeypatch)


def test_beta_checks_fail_without_the_measured_gate(tmp_path, monkeypatch):
    "A controls file whose gate is not its controls' upper end (an assumed gate) is refused."
    run = _copy("exp_beta", tmp_path)
    k = pd.read_csv(run/"controls.csv"); k["gate_frac"] = 0.05 + 0.05   # chance + 5 points, assumed
    k.to_csv(run/"controls.csv", index=False)
    with pytest.raises(AssertionError):
        _run_checks("exp_beta", run, monkeypatch)
