"""The reproducibility study end to end: tiny sweeps of exp_training_run through exp_reproducibility, resumed, analysed."""
import json, os
from pathlib import Path
import numpy as np
import pandas as pd
import papermill as pm
import pytest

ROOT = Path(__file__).resolve().parent.parent
TINY = dict(algorithms=["protonet"], optimizers=["adam", "sgd"], n_configs=1, seeds=[1, 2], repeats=2, reruns=2, epochs=0.05,
            width=8, n_tasks=20, control_repeats=2, control_threads=[1], workers=2)


def _run(notebook, tmp_path, name, **params):
    return pm.execute_notebook(str(ROOT/"nbs"/notebook), str(tmp_path/name), parameters=params, cwd=str(ROOT),
                               kernel_name="python3", progress_bar=False)


def test_exp_reproducibility_tiny_study_resumes_and_analyses(tmp_path):
    "16 runs and 4 control runs: every table is written, repeats and reruns are bit-identical on CPU, a second run trains nothing."
    out = tmp_path/"out"
    _run("exp_reproducibility.ipynb", tmp_path, "first.ipynb", out_dir=str(out), **TINY)
    runs = pd.read_csv(out/"runs.csv")
    assert len(runs) == 1 * 2 * 2 * 1 * 2 * 2 and set(runs.status) == {"trained"}
    assert sorted(runs.level.unique()) == ["protonet-adam-run1", "protonet-adam-run2", "protonet-sgd-run1", "protonet-sgd-run2"]
    assert runs.tasks.nunique() == 1 and runs.acc_frac.between(0, 1).all()   # every run tested on the same manifest; accuracy a fraction
    # on one CPU thread a repeat ends bit-identical, and so does a rerun of the whole experiment
    assert runs.groupby(["level", "seed"]).weights.nunique().eq(1).all()
    assert runs.groupby(["experiment", "seed", "repeat"]).weights.nunique().eq(1).all()
    assert runs.groupby(["experiment", "seed"]).weights.nunique().eq(1).all() and runs.weights.nunique() == 4   # seeds do differ
    lrt = pd.read_csv(out/"lrt.csv")
    assert len(lrt) == 3 and lrt.loc[lrt.model == "without (1 | repeat)", "LRT"].abs().max() < 1e-6   # nothing to explain
    reruns = pd.read_csv(out/"reruns.csv")
    assert len(reruns) == 2 and reruns.estimate.abs().max() < 1e-10
    hyp = pd.read_csv(out/"hypotheses.csv").set_index("hypothesis")
    assert list(hyp.index) == ["H1", "H2", "H3"] and hyp.loc["H1", "verdict"] == "not rejected" and hyp.loc["H3", "verdict"] == "not rejected"
    det = pd.read_csv(out/"determinism.csv")
    assert len(det) == 2 and det.bit_identical.all() and det.runs.eq(2).all()
    for f in ("anova.csv", "experiments.csv", "seed_spread.csv", "control_runs.csv", "fig_reproducibility.png", "run.json"):
        assert (out/f).stat().st_size > 0, f
    if os.environ.get("FEWSHOT_REQUIRE_R"):
        assert (out/"lme4_check.csv").is_file()
    records = {p: p.stat().st_mtime_ns for p in out.rglob("record.json")}
    assert len(records) == 16 + 4
    _run("exp_reproducibility.ipynb", tmp_path, "second.ipynb", out_dir=str(out), **TINY)
    assert {p: p.stat().st_mtime_ns for p in out.rglob("record.json")} == records      # nothing trained again
    pd.testing.assert_frame_equal(pd.read_csv(out/"runs.csv"), runs)
    assert not list(out.rglob(".*.tmp")), "a temporary file was left behind"


def test_exp_reproducibility_refuses_bad_parameters(tmp_path):
    "Mistakes stop the study before any run, with what to do instead."
    for params, message in ((dict(algorithms=["maml"]), "no search space for ['maml']"),
                            (dict(repeats=1), "repeats must be >= 2"),
                            (dict(seeds=[3]), "seeds must be two or more distinct integers"),
                            (dict(optimizers=["rmsprop"]), "optimizers must be distinct, among 'adam' and 'sgd'"),
                            (dict(run_notebook="nbs/no_such.ipynb"), "run_notebook nbs/no_such.ipynb not found")):
        with pytest.raises(pm.PapermillExecutionError) as e:
            _run("exp_reproducibility.ipynb", tmp_path, "bad.ipynb", out_dir=str(tmp_path/"out"), **params)
        assert message in str(e.value), e.value
    assert not (tmp_path/"out").exists()


def test_exp_training_run_records_a_diverged_run(tmp_path):
    "A learning rate that sends the loss to infinity is a result: the row says 'diverged', without an accuracy or weights."
    out = tmp_path/"out"
    _run("exp_training_run.ipynb", tmp_path, "run.ipynb", optimizer="sgd", lr=1e12, epochs=0.2, width=8, n_tasks=20, out_dir=str(out))
    row = pd.read_csv(out/"results.csv").iloc[0]
    assert row.status == "diverged" and np.isnan(row.acc_frac) and pd.isna(row.weights)
    assert json.loads((out/"run.json").read_text())["extra"]["diverged"] is True
    assert not (out/"training.csv").exists() and len(pd.read_csv(out/"tasks.csv")) == 20
