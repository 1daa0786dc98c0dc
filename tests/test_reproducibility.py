"""The reproducibility study end to end: tiny sweeps of exp_training_run through exp_reproducibility, resumed, analysed."""
import json, os, sys
from pathlib import Path
import numpy as np
import pandas as pd
import papermill as pm
import pytest
from fewshot_nb.bench.findings import VERDICTS, verdict_base, verdict_of

sys.path.insert(0, str(Path(__file__).resolve().parent))
from refusals import assert_refused

ROOT = Path(__file__).resolve().parent.parent
TINY = dict(algorithms=["protonet"], optimizers=["adam", "sgd"], n_configs=1, seeds=[1, 2], repeats=2, rerun_threads=[1, 1, 2], epochs=0.05,
            width=8, n_tasks=20, control_algorithms=["protonet"], control_repeats=2, control_threads=[1], workers=2, n_sim=2)


def _run(notebook, tmp_path, name, **params):
    return pm.execute_notebook(str(ROOT/"nbs"/notebook), str(tmp_path/name), parameters=params, cwd=str(ROOT),
                               kernel_name="python3", progress_bar=False)


def test_exp_reproducibility_tiny_study_resumes_and_analyses(tmp_path):
    """24 runs (the third rerun on 2 threads) and 4 control runs: every table is written, repeats and the rerun on the same
    threads are bit-identical on CPU and H3 is not rejected for it, H3's verdict on the rerun on 2 threads follows from whether
    its runs changed, the sweeps stay out of out_dir, and a second run trains nothing."""
    out, sweeps = tmp_path/"out", tmp_path/"sweeps"
    _run("exp_reproducibility.ipynb", tmp_path, "first.ipynb", out_dir=str(out), sweeps_dir=str(sweeps), **TINY)
    runs = pd.read_csv(out/"runs.csv")
    assert len(runs) == 1 * 2 * 1 * 2 * 2 * 3 and set(runs.status) == {"trained"}
    assert sorted(runs.level.unique()) == sorted(f"protonet-{o}-run{r}" for o in ("adam", "sgd") for r in (1, 2, 3))
    assert runs.groupby("rerun").threads.unique().map(list).to_dict() == {1: [1], 2: [1], 3: [2]}
    assert runs.tasks.nunique() == 1 and runs.acc_frac.between(0, 1).all()   # every run tested on the same manifest; accuracy a fraction
    # on a CPU a repeat ends bit-identical, and so does a rerun of the whole experiment on the same thread count
    assert runs.groupby(["level", "seed"]).weights.nunique().eq(1).all()
    same = runs[runs.rerun.isin([1, 2])]
    assert same.groupby(["experiment", "seed", "repeat"]).weights.nunique().eq(1).all()
    assert runs[runs.rerun == 1].weights.nunique() == 4                                      # seeds and optimisers do differ
    lrt = pd.read_csv(out/"lrt.csv")
    assert len(lrt) == 3 and lrt.loc[lrt.model == "without (1 | repeat)", "LRT"].abs().max() < 1e-6   # nothing to explain
    reruns = pd.read_csv(out/"reruns.csv")
    assert len(reruns) == 4 and reruns[reruns.contrast.str.contains("run2 -")].estimate.abs().max() < 1e-10
    rt = pd.read_csv(out/"rerun_tests.csv").query("experiment == 'all'").set_index("contrast")
    assert list(rt.index) == ["2 - 1", "3 - 1"] and list(rt.threads) == ["1 vs 1", "2 vs 1"]
    changed = runs[runs.rerun.isin([1, 3])].groupby(["experiment", "seed", "repeat"]).weights.nunique().gt(1).groupby(level=[0, 1]).any().sum()
    assert rt.loc["2 - 1", "units_changed"] == 0 and rt.loc["2 - 1", "p"] == 1.0
    hyp = pd.read_csv(out/"hypotheses.csv").set_index("hypothesis")
    assert list(hyp.index) == ["H1", "H2", "H3 run 2", "H3 run 3", "H3 means"]
    assert hyp.loc["H1", "verdict"] == "not rejected" and hyp.loc["H3 run 2", "verdict"] == "not rejected"
    # the test goes the way the weights say: rejected exactly when the 2-thread rerun changed a unit's accuracy
    assert (hyp.loc["H3 run 3", "verdict"] == "rejected") == (rt.loc["3 - 1", "units_changed"] > 0)
    assert rt.loc["3 - 1", "units_changed"] <= changed
    det = pd.read_csv(out/"determinism.csv")
    assert len(det) == 2 and det.bit_identical.all() and det.runs.eq(2).all()
    sim = pd.read_csv(out/"simulated.csv")
    assert set(sim.truth) == {"holds", "fails"} and sim.draws.eq(2).all()
    findings = pd.read_csv(out/"findings.csv")
    assert set(findings.verdict.map(verdict_base)) <= set(VERDICTS) and findings.apply(verdict_of, axis=1).eq(findings.verdict).all()
    F = findings.set_index("claim")
    lrt = F[F.index.str.endswith("(the paper's LRT)")]        # H1 and H2 judged by the paper's test, for equivalence within a margin
    assert list(lrt.index.str[:2]) == ["H1", "H2"] and set(lrt.kind) == {"paper"} and set(lrt.test) == {"equivalence"} and lrt.margin.gt(0).all()
    rerun = findings.set_index("id").loc[["rp.ctl.rerun.same", "rp.ctl.rerun.other"]]   # run by run, fixed by design on a CPU: controls
    assert set(rerun.kind) == {"control"} and "rerun 2" in rerun.note.iloc[0] and "rerun 3" in rerun.note.iloc[1]
    assert rerun.verdict.iloc[0] == "equivalent" and (rerun.verdict.iloc[1] == "direction only") == (rt.loc["3 - 1", "units_changed"] > 0)
    assert F.loc["H1, the block test of ours: the repeats of a (configuration, seed, rerun) end bit-identical", "verdict"] == "equivalent"
    assert len(F[F.index.str.startswith("TADAM")]) == 3 and F[F.index.str.startswith("TADAM")].verdict.eq("untested").all()
    for f in ("anova.csv", "blocks.csv", "experiments.csv", "seed_spread.csv", "control_runs.csv", "fig_reproducibility.png", "run.json"):
        assert (out/f).stat().st_size > 0, f
    if os.environ.get("FEWSHOT_REQUIRE_R"):
        assert (out/"lme4_check.csv").is_file()
    assert not (out/"sweeps").exists() and not list(out.rglob("record.json"))   # the executed runs live in sweeps_dir, not in the stored run
    records = {p: p.stat().st_mtime_ns for p in sweeps.rglob("record.json")}
    assert len(records) == 24 + 4
    _run("exp_reproducibility.ipynb", tmp_path, "second.ipynb", out_dir=str(out), sweeps_dir=str(sweeps), **TINY)
    assert {p: p.stat().st_mtime_ns for p in sweeps.rglob("record.json")} == records      # nothing trained again
    pd.testing.assert_frame_equal(pd.read_csv(out/"runs.csv"), runs)
    assert not list(out.rglob(".*.tmp")) and not list(sweeps.rglob(".*.tmp")), "a temporary file was left behind"


def test_exp_reproducibility_refuses_bad_parameters(tmp_path):
    "Mistakes stop the study before any run, with what to do instead."
    assert_refused(ROOT/"nbs"/"exp_reproducibility.ipynb", (
                            (dict(algorithms=["maml"]), "no search space for ['maml']"),
                            (dict(algorithms=["protonet"], optimizers=["adam"], n_configs=1), "1 algorithm x 1 optimiser x 1 configuration"),
                            (dict(repeats=1), "parameter 'repeats' must be at least 2, got 1"),
                            (dict(seeds=[3]), "parameter 'seeds' must have at least 2 items, got 1: [3]"),
                            (dict(optimizers=["rmsprop"]), "parameter 'optimizers' each item must be one of 'adam', 'sgd', got 'rmsprop'"),
                            (dict(run_notebook="nbs/no_such.ipynb"), "run_notebook nbs/no_such.ipynb not found"),
                            (dict(rerun_threads=[1, 0]), "parameter 'rerun_threads' each item must be at least 1, got 0"),
                            (dict(sweeps_dir=str(tmp_path/"out"/"sweeps")), "is inside out_dir")), out_dir=str(tmp_path/"out"))
    assert not (tmp_path/"out").exists()


def test_exp_training_run_records_a_diverged_run(tmp_path):
    "A learning rate that sends the loss to infinity is a result: the row says 'diverged', without an accuracy or weights."
    out = tmp_path/"out"
    _run("exp_training_run.ipynb", tmp_path, "run.ipynb", optimizer="sgd", lr=1e12, epochs=0.2, width=8, n_tasks=20, out_dir=str(out))
    row = pd.read_csv(out/"results.csv").iloc[0]
    assert row.status == "diverged" and np.isnan(row.acc_frac) and pd.isna(row.weights)
    assert json.loads((out/"run.json").read_text())["extra"]["diverged"] is True
    assert not (out/"training.csv").exists() and len(pd.read_csv(out/"tasks.csv")) == 20
    assert 0 < row.control_acc_frac < 1 and row.control_half_width_frac > 0   # the untrained control scores the tasks all the same
