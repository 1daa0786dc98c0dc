"""The `checks` cells of exp_omniglot_protocol fail on a broken default run, each for its own reason.

`tests/test_stored_runs.py` runs the checks on the stored default run (`nbs/runs/exp_omniglot_protocol/`) and needs
them to pass; this file breaks a copy of that run in one way at a time (a lost finding, of the README or a control, a model no better than the
untrained control, a run without its thread count, a model that did not learn on validation) and needs them to fail. A
lost finding is written as the findings cell would write it: its verdict recomputed by the one rule (`verdict_of`).
"""
import json, shutil
from pathlib import Path
import pandas as pd
import pytest
from fewshot_nb.bench.findings import verdict_of
from test_stored_runs import run_checks   # the harness of tests/test_stored_runs.py

ROOT = Path(__file__).resolve().parent.parent
NB = ROOT/"nbs"/"exp_omniglot_protocol.ipynb"
STORED = ROOT/"nbs"/"runs"/"exp_omniglot_protocol"


@pytest.fixture
def run(tmp_path):
    if not (STORED/"run.json").is_file(): pytest.fail(f"the default run is not stored in {STORED.relative_to(ROOT)}")
    out = tmp_path/"runs"/"exp_omniglot_protocol"
    shutil.copytree(STORED, out, ignore=shutil.ignore_patterns("*.npz", "*.png", "results.csv"))
    return out


def test_the_stored_run_passes(run, monkeypatch):
    from fewshot_nb.bench.experiment import ran_with_defaults
    assert ran_with_defaults(run)   # the checks' gate is open: run.json says every parameter came from the parameters cell
    run_checks("exp_omniglot_protocol", run, monkeypatch)


def _edit(path:Path, fn):
    d = pd.read_csv(path); fn(d); d.to_csv(path, index=False)


LOST = {   # a finding no longer significant in the claimed direction: (its id, new ours, low, high, the verdict the rule then gives)
    "finding": ("oe.ctl.mhd@pretrain", 1.0, -3.0, 5.0, "inconclusive"),             # a control
    "extension": ("oe.gap.5w1s@protonet", 0.5, -0.3, 1.3, "not reproduced"),        # the README's claim on ProtoNet
    "paper_finding": ("oe.gap.20w5s", 0.5, -0.3, 1.3, "not reproduced"),            # the README's claim, on its own network
}


@pytest.mark.parametrize("breakage", ["finding", "extension", "paper_finding", "lake_runs", "cell", "threads", "validation"])
def test_a_broken_run_fails(run, monkeypatch, breakage):
    if breakage in LOST:               # written as the findings cell would write it: the verdict by the one rule
        claim, *numbers, verdict = LOST[breakage]
        def f(d):
            k = d.index[d.id == claim][0]
            d.loc[k, ["ours", "low", "high"]] = numbers
            d.loc[k, "verdict"] = verdict_of(d.loc[k])
            assert d.loc[k, "verdict"] == verdict, d.loc[k, "verdict"]
        _edit(run/"findings.csv", f)
    elif breakage in ("lake_runs", "cell"):   # ProtoNet no better than the untrained network on the same tasks
        c = pd.read_csv(run/"controls.csv").set_index("setting")
        key, proto = ("lake_runs", "lake_runs") if breakage == "lake_runs" else ("5way_1shot_within_alphabet", "within_alphabet")
        def f(d):
            k = (d.method == "protonet") & (d.protocol == proto) & (d.n_way == (20 if breakage == "lake_runs" else 5))
            d.loc[k, ["error_pct", "low_pct", "high_pct"]] = c.loc[key, ["error_pct", "low_pct", "high_pct"]].to_numpy()
        _edit(run/"summary.csv", f)
    elif breakage == "threads":        # a run that does not say how many threads it used
        r = json.loads((run/"run.json").read_text()); del r["host"]["torch_threads"]
        (run/"run.json").write_text(json.dumps(r))
    else:                              # ProtoNet's validation accuracy at an untrained network's level
        _edit(run/"training.csv", lambda d: d.loc[d.method == "protonet", "val_acc_frac"].clip(upper=0.6).pipe(
            lambda v: d.__setitem__("val_acc_frac", d.val_acc_frac.where(d.method != "protonet", v))))
    with pytest.raises(AssertionError):
        run_checks("exp_omniglot_protocol", run, monkeypatch)


def test_the_default_recipe_is_the_one_chosen_on_validation():
    """The defaults' recipe (distortions, schedule, epochs) is the candidate that nbs/results/lake_curves_val/selection.csv
    chose on validation characters, and the run record says so; a default changed without a new selection fails here."""
    cells = json.loads(NB.read_text())["cells"]
    params = "".join(next(c for c in cells if "parameters" in c.get("metadata", {}).get("tags", []))["source"])
    ns = {}
    exec(params, ns)
    sel = pd.read_csv(ROOT/"nbs"/"results"/"lake_curves_val"/"selection.csv")
    assert sel.chosen.sum() == 1, sel
    chosen = sel[sel.chosen].iloc[0]
    assert chosen.within_one_se and chosen.images == sel[sel.within_one_se].images.min(), chosen   # the rule: the cheapest close enough
    assert (bool(chosen.distort), chosen.schedule) == (ns["distort"], "constant"), chosen   # the notebook trains at a constant rate
    assert abs(chosen.epochs - ns["epochs"]) < 0.05, (chosen.epochs, ns["epochs"])
    assert (ns["width"], ns["image_size"], ns["lr"], ns["batch_size"], ns["rotations"]) == (64, 28, 1e-3, 128, True)   # the curves' setting
    rec = json.loads((STORED/"run.json").read_text())["extra"]["selected"]["recipe"]
    assert "lake_curves_val/selection.csv" in rec["chosen_on"] and rec["value"].startswith(f"distort={ns['distort']}, {ns['epochs']:g} epochs"), rec
