"""An experiment whose data are missing stops in its first cell with the command that fetches them, writing nothing."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT/"tests"))
from refusals import RefusalKernel
CASES = {   # notebook -> (parameters, a file the error must name)
    "exp_lake_runs": (dict(n_tasks=2), "all_runs.zip"),
    "exp_training_run": (dict(epochs=0.01), "images_background_small1.zip"),
    "exp_omniglot_protocol": (dict(epochs=0.01), "images_background_small2.zip"),
    "exp_beta": (dict(betas=[1.0], epochs=0.01), "protonet_omniglot50_weak.pt"),
    "exp_generation": (dict(epochs=0.01), "simclr_omniglot50_weak.pt"),
    "exp_realistic": (dict(n_tasks=10), "images_background_small1.zip"),
}


def test_missing_data_fails_in_the_first_cell(tmp_path, monkeypatch):
    "Every experiment, in one kernel (tests/refusals.py): the error names the file and the command, in the cell after the parameters."
    monkeypatch.setenv("FEWSHOT_OFFLINE", "1")   # a node without internet: nothing may be downloaded (set before the kernel starts)
    empty, out = tmp_path/"no_data", tmp_path/"out"
    empty.mkdir()
    with RefusalKernel() as k:
        for name, (params, named) in sorted(CASES.items()):
            err = k.run(ROOT/"nbs"/f"{name}.ipynb", dict(data_root=str(empty), out_dir=str(out), **params))
            assert err is not None, f"{name} ran without its data"
            e = k.error
            assert e["ename"] == "FileNotFoundError" and "fewshot-nb data fetch" in e["evalue"] and named in e["evalue"], (name, e["evalue"])
            assert k.cell <= 4, f"{name} failed in cell {k.cell}, not in the cell after its parameters"
            assert not out.exists() and not any(empty.iterdir()), f"{name}: a run that stopped on missing data left files behind"
