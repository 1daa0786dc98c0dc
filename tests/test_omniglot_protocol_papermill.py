"""exp_omniglot_protocol under papermill: injected parameters, every output written, a re-run reusing the checkpoints it keeps out of `out_dir`.

Replaces `test_exp_omniglot_protocol_injected_and_rerun_reuses_checkpoints` of tests/test_papermill.py, which still expects the
long `results.csv` and `checkpoints/` inside `out_dir` (issue 38: the stored default run holds no weights, and its per-task
results are one row per task with an error column per method, to stay under 1 MB).
"""
import json
from pathlib import Path
import pandas as pd
import papermill as pm

ROOT = Path(__file__).resolve().parent.parent



def test_exp_omniglot_protocol_injected_and_rerun_reuses_checkpoints(tmp_path):
    "A tiny run with injected parameters writes every output; running it again reuses the finished checkpoints (kept out of out_dir)."
    out, ckpt = tmp_path/"out", tmp_path/"ckpt"
    params = dict(methods=["protonet", "pretrain"], width=16, epochs=0.05, eval_ways=[5], eval_shots=[1], n_tasks=30,
                  seed=2, out_dir=str(out), checkpoint_dir=str(ckpt))
    run = lambda name: pm.execute_notebook(str(ROOT/"nbs"/"exp_omniglot_protocol.ipynb"), str(tmp_path/name),
                                           parameters=params, cwd=str(ROOT), kernel_name="python3", progress_bar=False)
    run("first.ipynb")
    results = pd.read_csv(out/"results.csv")                     # one row per task, one error column per method
    summary = pd.read_csv(out/"summary.csv")
    assert {"protonet_error_frac", "pretrain_error_frac"} <= set(results.columns) and set(summary.n_way) == {5, 20}   # 20: Lake's runs
    counts = results.groupby("setting").size()
    assert counts.drop("lake_runs").eq(30).all() and counts["lake_runs"] == 20 and len(counts) == 3
    assert set(summary.method) == {"protonet", "pretrain"}
    record = json.loads((out/"run.json").read_text())
    assert record["params"]["methods"] == ["protonet", "pretrain"] and record["seed"] == 2
    assert isinstance(record["host"]["torch_threads"], int)
    for f in ("summary.csv", "paired.csv", "training.csv", "controls.csv", "protocols.png", "training.png", "tasks_val.npz",
              "tasks_5way_1shot_within_alphabet_seed2.npz", "tasks_lake_runs.npz"):
        assert (out/f).stat().st_size > 0, f
    assert (ckpt/"protonet.pt").stat().st_size > 0 and not (out/"checkpoints").exists()   # weights never in out_dir
    stamps = {p.name: p.stat().st_mtime_ns for p in ckpt.iterdir()}
    run("second.ipynb")
    assert {p.name: p.stat().st_mtime_ns for p in ckpt.iterdir()} == stamps   # not retrained, not rewritten
    pd.testing.assert_frame_equal(pd.read_csv(out/"results.csv"), results)   # same models, same tasks
    assert not list(out.rglob(".*.tmp")), "a temporary file was left behind"

