"""exp_bongard under papermill: a tiny run writes every file and a rerun trains nothing; a set in the public
on-disk layout is read through data_root; bad parameters are refused before any work."""
import json
from pathlib import Path
import pandas as pd
import papermill as pm
import sys
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT/"tests"))
from refusals import assert_refused
TINY = dict(scale=0.01, image_size=32, width=4, epochs=0.5, pretrain_epochs=0.5, seed=1, n_train_scored=20, n_val=6,
            attribute_sizes=[32], attribute_n=40)


def _run(tmp_path, name, **params):
    return pm.execute_notebook(str(ROOT/"nbs"/"exp_bongard.ipynb"), str(tmp_path/name), parameters=params,
                               cwd=str(ROOT), kernel_name="python3", progress_bar=False)


def test_exp_bongard_tiny_run_every_method_and_rerun_loads(tmp_path):
    out = tmp_path/"out"
    methods = ["snail", "protonet", "metaoptnet", "anil", "meta-baseline-sc", "meta-baseline-moco", "wren", "cnn-baseline", "meta-baseline-ps"]
    run = lambda name: _run(tmp_path, name, out_dir=str(out), checkpoint_dir=str(out/"checkpoints"), methods=methods, controls=["protonet"], **TINY)
    run("first.ipynb")
    for f in ("problems.csv", "results.csv", "table3.csv", "paper_table3.csv", "findings.csv", "training.csv", "run.json", "fig_table3.png",
              "attributes.csv", "attributes_summary.csv"):
        assert (out/f).stat().st_size > 0, f
    problems, results, table = pd.read_csv(out/"problems.csv"), pd.read_csv(out/"results.csv"), pd.read_csv(out/"table3.csv")
    assert set(problems.split) == {"train", "val", "test_ff", "test_bd", "test_hd_comb", "test_hd_novel"}
    assert set(problems.family) == {"ff", "bd", "hd"}
    assert set(table.method) == set(methods) | {"protonet-untrained"}
    # every method, and the untrained control, is scored on every test problem, each problem's accuracy is 0, 0.5 or 1
    tests = problems[problems.split.str.startswith("test")]
    for m in methods + ["protonet-untrained"]:
        got = results[(results.method == m) & results.split.str.startswith("test")]
        assert sorted(got.problem) == sorted(tests.problem), m
    assert set(results.acc_frac.unique()) <= {0.0, 0.5, 1.0}
    assert table.acc_pct.between(0, 100).all() and (table.half_width_pct >= 0).all()
    findings = pd.read_csv(out/"findings.csv")
    assert {"nie.t3.protonet_vs_cnn", "nie.t3.ba_easiest", "nie.ctl.solves", "nie.ctl.att_learns.convex", "nie.att.convex"} <= set(findings.id)
    from fewshot_nb.bench.claims import load_claims
    mine = load_claims("nie2020").query("experiment == 'exp_bongard'").index
    assert set(mine) <= set(findings.id)                                          # every registered claim has its row
    from fewshot_nb.bongard.baselines import BONGARD_METHODS
    for m in methods:   # every method of Table 3 trained here has its Train and test rows, tested
        rows = findings[findings.id.isin([f"nie.t3.train.{m}", f"nie.t3.test.{m}"])]
        assert len(rows) == 2 and (rows.test == "effect").all() and rows.ours.notna().all(), m
        assert not rows.note.str.contains("measured in ").any(), rows.note          # measured in this run, not read from a stored one
    assert findings.unit.str.startswith(("percentage points", "percent (accuracy)")).all(), set(findings.unit)
    from fewshot_nb.bench.findings import VERDICTS, verdict_base, verdict_of
    assert set(findings.kind) <= {"paper", "control", "extension"} and {"paper", "control"} <= set(findings.kind)
    assert [verdict_of(r) for _, r in findings.iterrows()] == list(findings.verdict)      # the one rule decided every verdict
    assert set(findings.untrained_verdict.dropna().map(verdict_base)) <= set(VERDICTS)   # the same claim with the untrained control
    assert findings[findings.claim.str.contains("than untrained")].kind.eq("control").all()
    att = pd.read_csv(out/"attributes.csv")
    assert set(att.attribute) == {"convex", "has_two_parts"} and set(att.size_px) == {32} and set(att.split) == {"train", "test"}
    assert {"train_acc_frac", "val_acc_frac", "val_ci_frac"} <= set(pd.read_csv(out/"training.csv").columns)
    from fewshot_nb.core import check_units
    for f in out.glob("*.csv"): check_units(pd.read_csv(f))             # every table states its units
    record = json.loads((out/"run.json").read_text())
    assert record["params"]["scale"] == 0.01 and record["seed"] == 1
    ck = sorted(p.name for p in (out/"checkpoints").iterdir())
    assert len(ck) == len(methods) + 2, ck                          # one per method, and the two pre-trainings
    stamps = {p.name: p.stat().st_mtime_ns for p in (out/"checkpoints").iterdir()}
    run("second.ipynb")
    assert {p.name: p.stat().st_mtime_ns for p in (out/"checkpoints").iterdir()} == stamps   # nothing retrained
    pd.testing.assert_frame_equal(pd.read_csv(out/"results.csv"), results)
    assert not list(out.rglob(".*tmp*")), "a temporary file was left behind"


def test_exp_bongard_reads_the_public_layout(tmp_path):
    "A set written by write_problem_set is read back through data_root, as the official download would be."
    from fewshot_nb.bongard.problems import make_problem_set, write_problem_set
    root = write_problem_set(make_problem_set(scale=0.01, seed=3), tmp_path/"ShapeBongard_V2", size=48)
    out = tmp_path/"out"
    _run(tmp_path, "executed.ipynb", out_dir=str(out), data_root=str(root), methods=["protonet", "wren"], checkpoint_dir=str(tmp_path/"ck"), **TINY | dict(attribute_sizes=[]))
    split = json.loads((root/"ShapeBongard_V2_split.json").read_text())
    problems = pd.read_csv(out/"problems.csv")
    assert {k: sorted(v) for k, v in split.items()} == {k: sorted(g.problem) for k, g in problems.groupby("split")}
    assert set(pd.read_csv(out/"table3.csv").method) == {"protonet", "wren", "protonet-untrained"}


def test_exp_bongard_free_form_variant(tmp_path):
    "variant='ff' is the paper's Table 2: free-form problems only, one test set, the paper's Table 2 beside ours."
    out = tmp_path/"out"
    _run(tmp_path, "executed.ipynb", out_dir=str(out), variant="ff", methods=["protonet", "cnn-baseline"], checkpoint_dir=str(tmp_path/"ck"), **TINY | dict(attribute_sizes=[]))
    problems, table = pd.read_csv(out/"problems.csv"), pd.read_csv(out/"table3.csv")
    assert set(problems.family) == {"ff"} and set(problems.split) == {"train", "val", "test"}
    assert set(table.column) == {"Train", "FF"}
    paper = pd.read_csv(out/"paper_table3.csv")
    assert list(paper.columns) == ["name", "Train_pct", "FF_pct"] and paper.set_index("name").loc["WReN-Bongard", "FF_pct"] == 74.5
    findings = pd.read_csv(out/"findings.csv")
    assert "CNN-Baseline on free-form problems alone: near chance" in set(findings.claim)
    t2 = findings[findings.id.isin([f"nie.t2.train.{m}" for m in ("protonet", "cnn-baseline")] + ["nie.t2.test.protonet", "nie.t2.chance_ff.cnn-baseline"])]
    assert len(t2) == 4 and t2.ours.notna().all() and not t2.note.str.contains("measured in ").any()   # Table 2, from this run


def test_exp_bongard_refuses_bad_parameters(tmp_path):
    "Each mistake stops the run before any work, with what to do instead (one kernel for all: tests/refusals.py)."
    assert_refused(ROOT/"nbs"/"exp_bongard.ipynb", [
        (dict(methods=["protonet", "resnet"]), "parameter 'methods' each item must be one of 'snail', 'protonet'"),
        (dict(variant="hd"), "parameter 'variant' must be one of 'full', 'ff', got 'hd'"),
        (dict(scale=0.0), "parameter 'scale' must be above 0, got 0.0"),
        (dict(image_size=16), "parameter 'image_size' must be at least 32, got 16"),
        (dict(optimizer="adagrad"), "parameter 'optimizer' must be one of 'adam', 'sgd', got 'adagrad'"),
        (dict(data_root="no/such/folder"), "holds no split file"),
        (dict(methods=[], controls=[]), "both empty"),
        (dict(controls=["resnet"]), "parameter 'controls' each item must be one of 'snail', 'protonet'"),
        (dict(attribute_sizes=[16]), "parameter 'attribute_sizes' each item must be at least 32, got 16"),
        (dict(attributes=["round"]), "unknown attributes ['round']"),
        (dict(n_train_scored=0), "parameter 'n_train_scored' must be at least 1, got 0"),
    ], out_dir=str(tmp_path/"out"))
    assert not (tmp_path/"out").exists()
