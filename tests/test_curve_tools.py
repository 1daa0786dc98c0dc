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


def test_lake_recipes_are_chosen_on_validation(tmp_path):
    "Two recipes made with --holdout: --select picks the one whose validation error is lowest, never by Lake's runs."
    common = ["tools/lake_curves.py", "--regime", "pretrain", "--steps", "4", "--eval-every", "2", "--width", "8", "--batch-size", "16",
              "--holdout", "3"]
    a, b = tmp_path/"plain.csv", tmp_path/"distorted.csv"
    _run(common + ["--out", str(a)], tmp_path)
    _run(common + ["--augment", "--out", str(b)], tmp_path)
    for f in (a, b):
        d = pd.read_csv(f)
        assert d.val_err_pct.between(0, 100).all() and (d.val_hw_pct > 0).all(), d
    out = tmp_path/"selection.csv"
    _run(["tools/lake_curves.py", "--select", str(a), str(b), "--select-out", str(out)], tmp_path)
    t = pd.read_csv(out)
    assert list(t.curve) == ["plain.csv", "distorted.csv"] and list(t.distort) == [False, True] and t.chosen.sum() == 1
    assert t.loc[t.chosen, "val_err_pct"].iloc[0] == t.val_err_pct.min()
    for r in t.itertuples():   # each recipe's step is its own curve's lowest validation error, and its epochs are images over one epoch's
        d = pd.read_csv(tmp_path/r.curve)
        assert r.val_err_pct == d.val_err_pct.min() and r.step == d.step[d.val_err_pct.idxmin()]
        assert abs(r.epochs - d.images[d.step == r.step].iloc[0] / 17440) < 1e-9   # 218 characters x 4 rotations x 20 drawings
    no_val = tmp_path/"no_val.csv"
    _run(common[:-2] + ["--out", str(no_val)], tmp_path)
    r = subprocess.run([sys.executable, "tools/lake_curves.py", "--select", str(a), str(no_val)], cwd=ROOT, capture_output=True, text=True,
                       env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert r.returncode != 0 and "made without --holdout" in r.stderr, r.stderr[-2000:]
