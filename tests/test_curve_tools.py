"""tools/lake_curves.py and tools/maml_critic_curve.py: learning curves written by the trainer's evaluation hook."""
import os, subprocess, sys
from pathlib import Path
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent


def _run(args, tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "FEWSHOT_PROGRESS": "0"}
    r = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return r


def test_lake_curve_rows_come_from_the_evaluation_hook(tmp_path):
    out = tmp_path/"lake.csv"
    _run(["tools/lake_curves.py", "--regime", "protonet", "--steps", "4", "--eval-every", "2", "--width", "8",
          "--train-way", "5", "--train-query", "2", "--no-rotations", "--out", str(out)], tmp_path)
    d = pd.read_csv(out)
    assert list(d.step) == [2, 4] and list(d.images) == [2 * 15, 4 * 15]
    assert d.lake_err_pct.between(0, 100).all() and (d.lake_hw_pct > 0).all() and d.lake_err_cl2n_pct.between(0, 100).all()
    assert (d.train_s.diff().dropna() > 0).all()   # training seconds accumulate


def test_maml_critic_curve_resumes_its_rows(tmp_path):
    out, ck = tmp_path/"anil.csv", tmp_path/"anil.ckpt"
    args = ["tools/maml_critic_curve.py", "--order", "anil", "--steps", "4", "--val-every", "2", "--val-tasks", "2",
            "--n-tasks", "1", "--n-query", "1", "--out", str(out), "--checkpoint", str(ck)]
    _run(args + ["--until", "2"], tmp_path)
    first = pd.read_csv(out)
    assert list(first.step) == [2] and first.val_acc_frac.between(0, 1).all() and (first.order == "anil").all()
    _run(args, tmp_path)   # resumes from the checkpoint at step 2: its row is kept, one is added
    d = pd.read_csv(out)
    assert list(d.step) == [2, 4]
    pd.testing.assert_frame_equal(d.iloc[:1], first)
