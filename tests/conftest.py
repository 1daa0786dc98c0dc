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
