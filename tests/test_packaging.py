"""What a pip user gets: the wheel's and the sdist's contents, and the experiments and `fewshot-nb evaluate` run from a
wheel installed in a fresh virtual environment, in a folder with no clone (issues 17 and 37)."""
import json, os, shutil, subprocess, sys, tarfile, zipfile
from pathlib import Path
import pytest

try: import tomllib
except ModuleNotFoundError: tomllib = pytest.importorskip("tomli")  # Python 3.10

pytestmark = pytest.mark.xdist_group("packaging")   # one worker builds what these tests share, once

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT/"pyproject.toml").read_text())
EXPERIMENTS = sorted(p.name for p in (ROOT/"nbs").glob("exp_*.ipynb"))


def _run(cmd, **kw):
    "Run a command; on failure, the assertion shows its output."
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert p.returncode == 0, f"{' '.join(map(str, cmd))} exited {p.returncode}:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return p


@pytest.fixture(scope="module")
def dists(tmp_path_factory):
    "The sdist, and the wheel built from it (as `python -m build` does): what PyPI would get."
    out = tmp_path_factory.mktemp("dist")
    # built from a snapshot of the tracked files: notebook tests running beside this one end with `nbdev_export`, which
    # rewrites the modules while the build would be reading them (an sdist once missed a module that way)
    src = tmp_path_factory.mktemp("tree")/"fewshot_nb"
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    for f in filter(None, tracked):
        if (ROOT/f).is_file(): (src/f).parent.mkdir(parents=True, exist_ok=True); shutil.copy2(ROOT/f, src/f)
    _run([sys.executable, "-m", "build", "--outdir", out, src], env=os.environ | {"PIP_CONSTRAINT": ""})
    (sdist,), (wheel,) = out.glob("*.tar.gz"), out.glob("*.whl")
    return sdist, wheel


def test_packages_are_listed():
    "pyproject lists the subpackages by hand (nbs/ is mapped in as fewshot_nb.experiments): every folder with an __init__."
    folders = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT/"fewshot_nb").rglob("__init__.py")}
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    assert listed == folders | {"fewshot_nb.experiments"}, f"missing {folders - listed}, not packages {listed - folders - {'fewshot_nb.experiments'}}"


def test_license_metadata():
    assert PYPROJECT["project"]["license"] == "Apache-2.0"          # an SPDX expression, not a table (PEP 639)
    assert "Apache License" in (ROOT/"LICENSE").read_text() and "Version 2.0" in (ROOT/"LICENSE").read_text()
    import yaml
    cff = yaml.safe_load((ROOT/"CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["license"] == "Apache-2.0"
    assert cff["version"] == PYPROJECT["project"]["version"]
    titles = " ".join(r["title"] for r in cff["references"])
    for paper in ("Diversity vs. Recognizability", "Realistic Evaluation of Transductive", "omniglot-eval",
                  "Bongard-LOGO", "Reproducibility and Stability"):
        assert paper in titles, f"CITATION.cff does not cite {paper!r}"


def test_wheel_contents(dists):
    _, wheel = dists
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        entry = z.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    assert "fewshot_nb/py.typed" in names and "fewshot_nb/cli.py" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert {f"fewshot_nb/experiments/{e}" for e in EXPERIMENTS} <= names
    assert "fewshot_nb/experiments/results/exp_beta_long/summary.csv" in names
    assert not [n for n in names if n.startswith("fewshot_nb/experiments/") and n.endswith(".ipynb") and "/exp_" not in n], \
        "the wheel carries module notebooks: only the experiments belong there"
    assert "License-Expression: Apache-2.0" in meta
    assert 'Requires-Dist: papermill>=2.5; extra == "exp"' in meta and 'Requires-Dist: ipykernel>=6.25; extra == "exp"' in meta
    assert "fewshot-nb = fewshot_nb.cli:main" in entry and "fewshot-sweep = fewshot_nb.sweep:main" in entry


def test_sdist_holds_what_its_tests_need(dists):
    sdist, _ = dists
    with tarfile.open(sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    for f in ("LICENSE", "CITATION.cff", "CHANGELOG.md", "constraints.txt", "pyproject.toml", "README.md",
              "tests/conftest.py", "tests/test_notebooks.py", "tools/run_notebooks.py", "nbs/90_cli.ipynb",
              "nbs/data/13_samplers.ipynb", "nbs/results/exp_beta_long/summary.csv"):
        assert f in names, f"the sdist lacks {f}"
    assert not [n for n in names if n.endswith(".pyc") or "/.ipynb_checkpoints/" in n]


def test_pip_user_runs_an_experiment(dists, tmp_path):
    """The README's steps for pip users: a fresh virtual environment, the wheel with the `exp` extra, the
    experiments copied out, and exp_lake_runs run with papermill, from a folder with no clone."""
    _, wheel = dists
    venv = tmp_path/"venv"
    _run([sys.executable, "-m", "venv", venv])
    bin_ = venv/("Scripts" if os.name == "nt" else "bin")
    # --no-compile, and the bytecode written on first import instead (PYTHONDONTWRITEBYTECODE dropped here): pip's compiling
    # of every module of torch and the rest took 50-60 s of the test's ~90; the processes below import a fraction of them
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    env |= {"PIP_CONSTRAINT": str(ROOT/"constraints.txt"), "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "PATH": f"{bin_}{os.pathsep}{env['PATH']}"}
    _run([bin_/"pip", "install", "-q", "--no-compile", f"{wheel}[exp]"], env=env, cwd=tmp_path)
    work = tmp_path/"work"; work.mkdir()          # no clone here: nothing but what pip installed
    out = _run(["fewshot-nb", "experiments", "copy", "experiments"], env=env, cwd=work).stdout
    assert "papermill" in out
    assert sorted(p.name for p in (work/"experiments").glob("*.ipynb")) == EXPERIMENTS
    # FEWSHOT_DATA is the shared folder in the tests: it holds the minimal sets, the runs and the critics, not the full archives
    _run(["fewshot-nb", "data", "verify", "small", "runs", "protonet_omniglot50_weak.pt", "simclr_omniglot50_weak.pt"], env=env, cwd=work)
    every = subprocess.run(["fewshot-nb", "data", "verify"], env=env, cwd=work, capture_output=True, text=True)
    assert every.returncode == 1 and "fewshot-nb data fetch images_background.zip" in every.stderr, every.stderr
    # a copy of a standard data set, checked from the installed package: a complete miniature passes, one image less fails
    from fewshot_nb.data.datasets import write_miniature
    mini = write_miniature("mini_imagenet", work/"mini")
    _run(["fewshot-nb", "data", "verify", "--dataset", "mini_imagenet", "--root", str(mini), "--workers", "1"], env=env, cwd=work)
    gone = sorted((mini/"images").iterdir())[0]; gone.unlink()
    short = subprocess.run(["fewshot-nb", "data", "verify", "--dataset", "mini_imagenet", "--root", str(mini), "--workers", "1"],
                           env=env, cwd=work, capture_output=True, text=True)
    assert short.returncode == 1 and gone.name in short.stdout + short.stderr, short.stdout + short.stderr
    (work/"runs").mkdir()                         # papermill writes into an existing folder
    _run(["papermill", "experiments/exp_lake_runs.ipynb", "runs/exp_lake_runs.ipynb", "-p", "n_tasks", "20",
          "-p", "runs_image_size", "28", "-p", "baselines", "[pixel_nn]"], env=env, cwd=work)
    res = work/"runs"/"exp_lake_runs"
    for f in ("results.csv", "summary.csv", "findings.csv", "run.json"): assert (res/f).is_file(), f"{f} was not written"
    record = json.loads((res/"run.json").read_text())
    assert record["params"]["n_tasks"] == 20
    # the command a pip user evaluates their own features with, on an .npz written by plain NumPy (issue 37)
    assert "usage: fewshot-nb" in _run(["fewshot-nb"], env=env, cwd=work).stdout             # bare: the help, status 0
    assert _run(["fewshot-nb", "--version"], env=env, cwd=work).stdout.strip() == f"fewshot-nb {PYPROJECT['project']['version']}"
    import numpy as np
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(16, 16)).astype(np.float32)
    for name, classes in (("feats", range(8)), ("base", range(8, 16))):
        labels = np.repeat(np.array([f"c{c}" for c in classes]), 25)
        x = centres[np.repeat(list(classes), 25)] + rng.normal(size=(len(labels), 16)).astype(np.float32)
        np.savez(work/f"{name}.npz", features=x, labels=labels)
    args = ["--base", "base.npz", "--methods", "protonet,simpleshot", "--shots", "1,5", "--ways", "5", "--queries", "10",
            "--tasks", "50", "--seed", "3", "--device", "cpu"]
    out = _run(["fewshot-nb", "evaluate", "feats.npz", *args, "--out", "mine"], env=env, cwd=work).stdout
    results = work/"mine"/"results.csv"
    assert {"results.csv", "tasks.csv", "run.json", "manifest_5way_1shot.npz"} <= {p.name for p in (work/"mine").iterdir()}
    import pandas as pd
    from fewshot_nb.bench.evaluate import evaluate_features, Protocol, RunOptions   # the same evaluation from this checkout's Python API
    py = evaluate_features(work/"feats.npz", "protonet,simpleshot", Protocol(shots=(1, 5), n_way=5, n_query=10, n_tasks=50, seed=3),
                           base=work/"base.npz", options=RunOptions(device="cpu"))
    pd.testing.assert_frame_equal(pd.read_csv(results)[["method", "n_shot", "acc_pct", "ci95_pct", "n_tasks"]],
                                  py[["method", "n_shot", "acc_pct", "ci95_pct", "n_tasks"]], check_exact=False, rtol=1e-9)
    assert f"{py.acc_pct[0]:.2f} ± {py.ci95_pct[0]:.2f}" in out and py.acc_pct.min() > 40   # printed, and far above chance (20%)
    bad = subprocess.run(["fewshot-nb", "evaluate", "feats.npz", *args, "--ways", "9", "--out", "bad"], env=env, cwd=work,
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "fewer than n_way = 9" in bad.stderr and not (work/"bad").exists()
