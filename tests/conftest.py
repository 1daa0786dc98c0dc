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
# glibc's malloc hands every buffer above its mmap threshold (32 MB at most) back to the kernel when it is freed, and the
# next one comes as fresh pages the kernel zeroes: on these machines a quarter of the suite's CPU time was system time,
# most of it that. Buffers up to 1 GB are kept in the heap instead (tools/bench_malloc.py: 11.3 s -> 7.8 s, system time
# 4.3 s -> 0.8 s, peak memory 0.96 -> 1.4 GB). glibc reads these when a process starts: they reach the xdist workers
# (started after this file is loaded) and every kernel, worker and CLI process the tests start, not this process.
for _k, _v in {"MALLOC_MMAP_THRESHOLD_": "1073741824", "MALLOC_TRIM_THRESHOLD_": "1073741824"}.items(): os.environ.setdefault(_k, _v)
import torch
torch.set_num_threads(1)


def pytest_report_header(config):
    return [f"FEWSHOT_DATA={os.environ.get('FEWSHOT_DATA', '')} ({_data_from})",
            f"FEWSHOT_CACHE={os.environ['FEWSHOT_CACHE']}"]


def pytest_terminal_summary(terminalreporter):
    "The fault report's table (tests/test_fault_report.py saves it where FEWSHOT_FAULT_REPORT_SAVE says), before the summary line."
    saved = os.environ.get("FEWSHOT_FAULT_REPORT_SAVE")
    if saved and Path(saved).is_file() and Path(saved).stat().st_size:
        terminalreporter.write_sep("=", "fault report (tools/fault_report.py)")
        terminalreporter.write(Path(saved).read_text())


# The longest tests start first (measured: `pytest -n 2 --durations=0` on an idle 2-core machine, seconds): pytest-xdist
# hands tests out in collection order, and a ten-minute test collected last would run alone on one core at the end.
_LONGEST = {"test_exp_reproducibility_tiny_study_resumes_and_analyses": 490, "test_exp_generation_injected_every_figure_and_rerun_loads": 340,
            "test_paper_dry_run_of_every_experiment": 270, "test_pip_user_runs_an_experiment": 180, "test_fault_report_passes": 160,
            "test_smoke_through_slurm_then_nothing_submitted": 150, "test_notebook[solvers/32_finetune]": 140,
            "test_notebook[bench/62_generation]": 130, "test_notebook[70_sweep]": 120, "test_exp_beta_injected_and_rerun_loads_checkpoints": 100}


_LONGEST_GROUPS = {"test_docs.py": 270}   # one worker runs all of these (xdist_group "docs"): the preview is built once, 100 s


def pytest_collection_modifyitems(session, config, items):
    "Put the longest tests first (a stable sort: the rest keep their order)."
    items.sort(key=lambda item: -_LONGEST.get(item.name, _LONGEST_GROUPS.get(item.path.name, 0)))
