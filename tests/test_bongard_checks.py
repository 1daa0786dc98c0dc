"""exp_bongard's `checks` cells fail on an untrained model: copies of the stored default run (nbs/runs/exp_bongard) in
which the trained ProtoNet's answers, or the trained attribute classifiers' answers, are replaced by those of the same
networks untrained (the run stores both), are refused; the stored run itself passes."""
import shutil
from pathlib import Path
import pandas as pd
import pytest
from test_stored_runs import run_checks   # the harness of tests/test_stored_runs.py

ROOT = Path(__file__).resolve().parent.parent
NB = ROOT/"nbs"/"exp_bongard.ipynb"
RUN = ROOT/"nbs"/"runs"/"exp_bongard"


@pytest.fixture
def run_copy(tmp_path):
    if not (RUN/"run.json").is_file(): pytest.skip("the default run of exp_bongard is not stored in nbs/runs/exp_bongard")
    shutil.copytree(RUN, tmp_path/"runs"/"exp_bongard")
    return tmp_path


def test_the_stored_run_passes(run_copy, monkeypatch):
    run_checks("exp_bongard", run_copy/"runs"/"exp_bongard", monkeypatch)


def test_an_untrained_protonet_fails(run_copy, monkeypatch):
    "ProtoNet's rows replaced by its untrained control's (and the findings made consistent with them): refused."
    out = run_copy/"runs"/"exp_bongard"
    r = pd.read_csv(out/"results.csv")
    u = r[r.method == "protonet-untrained"].set_index(["split", "problem"]).acc_frac
    t = r.method == "protonet"
    r.loc[t, "acc_frac"] = [u[(s, p)] for s, p in zip(r.loc[t, "split"], r.loc[t, "problem"])]
    r.to_csv(out/"results.csv", index=False)
    f = pd.read_csv(out/"findings.csv")
    f.loc[f.id.isin(["nie.ctl.fits", "nie.ctl.solves"]), ["ours", "low", "high"]] = 0.0   # ProtoNet's controls against its untrained self
    f.to_csv(out/"findings.csv", index=False)
    with pytest.raises(AssertionError, match="untrained self"):
        run_checks("exp_bongard", run_copy/"runs"/"exp_bongard", monkeypatch)


def test_an_untrained_attribute_classifier_fails(run_copy, monkeypatch):
    "The attribute classifiers' answers replaced by their untrained weights' answers: refused."
    out = run_copy/"runs"/"exp_bongard"
    a = pd.read_csv(out/"attributes.csv")
    a["correct_frac"] = a["untrained_frac"]
    a.to_csv(out/"attributes.csv", index=False)
    with pytest.raises(AssertionError, match="untrained self"):
        run_checks("exp_bongard", run_copy/"runs"/"exp_bongard", monkeypatch)
