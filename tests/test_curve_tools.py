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
    "Two recipes made with --holdout: --select chooses on validation error (one-standard-error rule), never by Lake's runs."
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
    assert list(t.curve) == ["plain.csv"] * 2 + ["distorted.csv"] * 2 and list(t.distort) == [False, False, True, True]
    assert list(t.step) == [2, 4, 2, 4] and t.chosen.sum() == 1 and t.lowest.sum() == 1
    assert t.val_err_pct[t.lowest].iloc[0] == t.val_err_pct.min() and t.within_one_se[t.lowest].all()
    ok = t[t.within_one_se]   # the one-standard-error rule: the cheapest candidate close enough to the lowest
    assert t.chosen.equals(t.index.to_series() == ok.sort_values(["images", "val_err_pct"], kind="stable").index[0])
    se = t.val_hw_pct[t.lowest].iloc[0] / 1.9647                       # t quantile, 499 df
    assert t.within_one_se.equals(t.val_err_pct <= t.val_err_pct.min() + se + 1e-9)
    for r in t.itertuples():   # each candidate is its curve's row, its epochs the images over one epoch's
        d = pd.read_csv(tmp_path/r.curve).set_index("step").loc[r.step]
        assert (r.val_err_pct, r.lake_err_pct, r.images) == (d.val_err_pct, d.lake_err_pct, d.images)
        assert abs(r.epochs - r.images / 17440) < 1e-9   # 218 characters x 4 rotations x 20 drawings
    no_val = tmp_path/"no_val.csv"
    _run(common[:-2] + ["--out", str(no_val)], tmp_path)
    r = subprocess.run([sys.executable, "tools/lake_curves.py", "--select", str(a), str(no_val)], cwd=ROOT, capture_output=True, text=True,
                       env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert r.returncode != 0 and "made without --holdout" in r.stderr, r.stderr[-2000:]
