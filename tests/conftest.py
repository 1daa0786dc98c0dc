"""Test session setup: data location, cache, and a quiet, single-threaded numerical stack.

This runs before any test module is imported (pytest loads it first, in the main process and in every
pytest-xdist worker, which inherit the environment set here).
"""
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent   # the project root

# FEWSHOT_DATA: a relative path is made absolute now, against the working directory pytest was started
# from (the project root when the README's command is used). The notebooks run with their own folder,
# nbs/, as working directory, where a relative path would point somewhere else.
_data = os.environ.get("FEWSHOT_DATA")
if _data:
    os.environ["FEWSHOT_DATA"] = str(Path(_data).expanduser().resolve())
    _data_from = "from FEWSHOT_DATA"
# Unset: use the project's shared data folder, ../shared/data next to the project root, but only if that
# folder exists (it does on every development machine and in CI). Otherwise the variable stays unset and
# the library downloads the files from their origin URLs into the per-user cache, as it does for users.
# Either way the choice is printed in pytest's header, so it is never silent.
elif (ROOT.parent/"shared"/"data").is_dir():
    os.environ["FEWSHOT_DATA"] = str((ROOT.parent/"shared"/"data").resolve())
    _data_from = "../shared/data (FEWSHOT_DATA was unset)"
else: _data_from = "unset: files are downloaded into the per-user cache"

# Decoded arrays go to a cache inside the project (git-ignored), not to the user's home, unless set.
os.environ.setdefault("FEWSHOT_CACHE", str(ROOT/".fewshot_cache"))
os.environ["FEWSHOT_CACHE"] = str(Path(os.environ["FEWSHOT_CACHE"]).expanduser().resolve())

# No figure windows; and one thread: the notebooks run two at a time (pytest -n 2) on 2 shared cores, where
# 2-thread torch runs 5-10x slower than 1-thread torch (../shared/PLATFORM.md). OMP_NUM_THREADS must be
# set before torch is imported.
os.environ["MPLBACKEND"] = "Agg"
# No progress bars: the notebooks' outputs are the docs (fewshot_nb.core.progress reads this; a test that wants
# bars, like the papermill --log-output one, sets it for its own subprocess).
os.environ["FEWSHOT_PROGRESS"] = "0"
os.environ["FEWSHOT_LOG"] = "WARNING"   # experiment_setup's level: its INFO lines name files on this machine
os.environ["OMP_NUM_THREADS"] = "1"
import torch
torch.set_num_threads(1)


def pytest_report_header(config):
    return [f"FEWSHOT_DATA={os.environ.get('FEWSHOT_DATA', '')} ({_data_from})",
            f"FEWSHOT_CACHE={os.environ['FEWSHOT_CACHE']}"]


# Longest first. Under `pytest -n 2 --dist loadgroup` a free worker takes the next test (or xdist group) in collection
# order, so a long test collected last keeps one worker busy while the other has nothing left: CI's wall time is then the
# sum of the tail, not half the work. Collected first, the long ones are spread over both workers and the many short tests
# fill the gaps. Weights: seconds each took in CI on an idle machine of our kind (its --durations list); the rest keep
# their order.
LONGEST_FIRST = {
    "test_papermill.py::test_exp_generation_injected_every_figure_and_rerun_loads": 308,
    "test_reproducibility.py::test_exp_reproducibility_tiny_study_resumes_and_analyses": 269,
    "tests/test_docs.py": 200,                      # one xdist group: the preview built once, then the browser pass
    "test_reproduce.py::test_paper_dry_run_of_every_experiment": 145,
    "test_notebooks.py::test_notebook[solvers/32_finetune]": 132,
    "test_reproduce.py::test_smoke_through_slurm_then_nothing_submitted": 113,
    "tests/test_packaging.py": 105,                 # one xdist group: the sdist and wheel built once
    "test_reproduce.py::test_stopping_reproduce_leaves_no_process": 60,
    "test_notebooks.py::test_notebook": 20,         # every other notebook: tens of seconds each
}


def _weight(item) -> int:
    return next((w for key, w in LONGEST_FIRST.items() if key in item.nodeid), 0)


def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: -_weight(item))   # stable: equal weights keep their collection order
