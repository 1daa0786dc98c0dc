"""exp_realistic on a user's own feature files (issue 37): test, base and validation files in formats other than the
library's, `method_kwargs`, a validation file instead of halving the test classes, and bad files refused before
anything is written."""
import json, sys
from pathlib import Path
import numpy as np
import pandas as pd
import papermill as pm
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT/"tests"))
from refusals import assert_refused


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    "Features of 24 classes made with NumPy alone, split by class into test (.npz), base (.csv) and validation (.npy + labels) files."
    d = tmp_path_factory.mktemp("user_features")
    rng = np.random.default_rng(7)
    centres = rng.normal(size=(24, 16)).astype(np.float32)
    def part(classes, n):
        labels = np.repeat(np.array([f"c{c:02d}" for c in classes]), n)
        x = centres[np.repeat(list(classes), n)] + rng.normal(scale=1.5, size=(len(labels), 16)).astype(np.float32)
        return np.abs(x), labels          # non-negative, as after a ReLU: PT-MAP's power transform needs it
    x, y = part(range(10), 30); np.savez(d/"test.npz", features=x, labels=y)
    x, y = part(range(10, 18), 30); pd.DataFrame(x).add_prefix("f").assign(label=y).to_csv(d/"base.csv", index=False)
    x, y = part(range(18, 24), 30); np.save(d/"val.npy", x); (d/"val_labels.txt").write_text("\n".join(y) + "\n")
    np.savez(d/"narrow.npz", features=np.ones((60, 8), np.float32), labels=np.repeat(["a", "b"], 30))
    return d


def _run(tmp_path, name, **params):
    base = dict(shots=[1], fig4_shot=1, imbalance_a=[1.0], lambdas=[1.0], alphas=[2.0], n_tasks=10, n_val_tasks=6, n_query=5)
    return pm.execute_notebook(str(ROOT/"nbs"/"exp_realistic.ipynb"), str(tmp_path/f"{name}.ipynb"), parameters=base | params,
                               cwd=str(ROOT), kernel_name="python3", progress_bar=False)


def test_exp_realistic_on_user_files_with_a_validation_file(files, tmp_path):
    out = tmp_path/"out"
    _run(tmp_path, "user", features=str(files/"test.npz"), base_features=str(files/"base.csv"), val_features=str(files/"val.npy"),
         methods=["simpleshot", "protonet", "tim", "pt-map"], method_kwargs={"protonet": {"norm": "l2"}, "pt-map": {"alpha": 0.3}},
         out_dir=str(out))
    results = pd.read_csv(out/"results.csv")
    assert set(results.method) == {"simpleshot", "protonet", "tim", "pt-map"}
    assert results.groupby(["setting", "method"]).size().eq(10).all()
    record = json.loads((out/"run.json").read_text())
    assert record["params"]["method_kwargs"] == {"protonet": {"norm": "l2"}, "pt-map": {"alpha": 0.3}}
    files_rec = record["extra"]["features"]["extra"]["files"]
    assert {k: v["classes"] for k, v in files_rec.items()} == {"test": 10, "base": 8, "val": 6}
    assert record["extra"]["features"]["extra"]["sizes"] == {"items": 300, "classes": 10, "feature_dim": 16}
    # every test class is tested (no half held out): the validation tasks come from the validation file
    assert record["extra"]["data"]["test"] == files_rec["test"]["labels"]
    assert record["extra"]["data"]["validation"] == files_rec["val"]["labels"]


def test_method_kwargs_reach_the_solvers(files, tmp_path):
    "SimpleShot without base features is refused, and runs on L2-normalised features when method_kwargs says so."
    with pytest.raises(pm.PapermillExecutionError) as e:
        _run(tmp_path, "refused", features=str(files/"test.npz"), methods=["simpleshot"], out_dir=str(tmp_path/"refused"))
    assert "no base features were given" in str(e.value) and "simpleshot" in str(e.value)
    _run(tmp_path, "l2", features=str(files/"test.npz"), methods=["simpleshot"], method_kwargs={"simpleshot": {"norm": "l2"}},
         out_dir=str(tmp_path/"l2"))
    assert set(pd.read_csv(tmp_path/"l2"/"results.csv").method) == {"simpleshot"}


def test_bad_files_and_arguments_are_refused_before_anything_is_written(files, tmp_path):
    "Each in one kernel (tests/refusals.py), as papermill would run it: the message, and no output folder."
    base = dict(shots=[1], fig4_shot=1, imbalance_a=[1.0], lambdas=[1.0], alphas=[2.0], n_tasks=10, n_val_tasks=6, n_query=5,
                features=str(files/"test.npz"), base_features=str(files/"base.csv"), methods=["simpleshot", "tim"])
    assert_refused(ROOT/"nbs"/"exp_realistic.ipynb", [
        (dict(val_features=str(files/"narrow.npz")), "feature sizes differ"),
        (dict(n_way=12), "fewer than n_way = 12"),
        (dict(method_kwargs={"tim": {"weights": [1, 1, 1]}}), "tim's weights is tuned on the validation tasks: set lambdas"),
        (dict(method_kwargs={"tim": {"stepz": 3}}), "tim cannot be built with {'stepz': 3}"),
    ], out_dir=str(tmp_path/"out"), **base)
    assert not (tmp_path/"out").exists(), "a refused run wrote its output folder"
