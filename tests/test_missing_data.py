"""An experiment whose data are missing stops in its first cell with the command that fetches them, writing nothing."""
import os
from pathlib import Path
import papermill as pm
import pytest

ROOT = Path(__file__).resolve().parent.parent
CASES = {   # notebook -> (parameters, a file the error must name)
    "exp_lake_runs": (dict(n_tasks=2), "all_runs.zip"),
    "exp_training_run": (dict(epochs=0.01), "images_background_small1.zip"),
    "exp_omniglot_protocol": (dict(epochs=0.01), "images_background_small2.zip"),
    "exp_beta": (dict(betas=[1.0], epochs=0.01), "protonet_omniglot50_weak.pt"),
    "exp_generation": (dict(epochs=0.01), "simclr_omniglot50_weak.pt"),
    "exp_realistic": (dict(n_tasks=10), "images_background_small1.zip"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_missing_data_fails_in_the_first_cell(name, tmp_path, monkeypatch):
    params, named = CASES[name]
    empty, out = tmp_path/"no_data", tmp_path/"out"
    empty.mkdir()
    monkeypatch.setenv("FEWSHOT_OFFLINE", "1")   # a node without internet: nothing may be downloaded
    with pytest.raises(pm.PapermillExecutionError) as e:
        pm.execute_notebook(str(ROOT/"nbs"/f"{name}.ipynb"), str(tmp_path/"executed.ipynb"),
                            parameters=dict(data_root=str(empty), out_dir=str(out), **params),
                            cwd=str(ROOT), kernel_name="python3", progress_bar=False)
    err = e.value
    assert err.ename == "FileNotFoundError" and "fewshot-nb data fetch" in err.evalue and named in err.evalue, err.evalue
    assert err.exec_count <= 4, f"{name} failed in cell {err.exec_count}, not in the cell after its parameters"
    assert not out.exists() and not any(empty.iterdir()), "a run that stopped on missing data left files behind"
