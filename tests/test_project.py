"""Project settings that the notebooks, papermill and CI depend on, and what notebooks may store."""
import importlib.util, json, re, subprocess, sys
from pathlib import Path
import nbformat
import pytest

try: import tomllib
except ModuleNotFoundError: tomllib = pytest.importorskip("tomli")  # Python 3.10

ROOT = Path(__file__).resolve().parent.parent
NBS = ROOT/"nbs"
PYPROJECT = tomllib.loads((ROOT/"pyproject.toml").read_text())
EXPERIMENTS = sorted(NBS.glob("exp_*.ipynb"))
# The project's notebooks, as the docs build finds them: not the outputs of runs made inside nbs/ (runs/, git-ignored)
# nor nbdev's or Jupyter's scratch copies (`tools/build_docs.notebooks`, tested in tests/test_docs.py).
from tools_loader import load_tool
_build_docs = load_tool("build_docs")
NOTEBOOKS = _build_docs.notebooks(NBS)
MACHINE_PATH = re.compile(r"(?<![\w.])(/work/|/tmp/|/root/|/home/)")


def test_nbdev_settings():
    nbdev = PYPROJECT["tool"]["nbdev"]
    # lists, not strings: tst_flags replaces nbdev's default, so `notest` must stay in it
    assert nbdev["tst_flags"] == ["notest", "slow", "cuda"]
    # without it nbdev-clean deletes cell tags, papermill's `parameters` tag included
    assert nbdev["allowed_cell_metadata_keys"] == ["tags"]
    assert nbdev["readme_nb"] == "index.ipynb"
    assert (NBS/nbdev["readme_nb"]).is_file()


def test_torch_is_pinned():
    pins = [l.split("#")[0].strip() for l in (ROOT/"constraints.txt").read_text().splitlines()]
    assert "torch==2.13.0" in pins


def test_nbformat_imports_without_the_lark_parsers():
    "constraints.txt keeps jsonschema below 4.25, whose import builds rfc3987-syntax's Lark parsers (1.1 s of CPU in every process that imports nbformat)."
    pins = [l.split("#")[0].strip() for l in (ROOT/"constraints.txt").read_text().splitlines()]
    assert "jsonschema<4.25" in pins
    loaded = subprocess.run([sys.executable, "-c", "import sys, nbformat; print('rfc3987_syntax' in sys.modules)"],
                            capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "False", "this environment's jsonschema imports rfc3987_syntax: install with PIP_CONSTRAINT=constraints.txt"


def _tagged(nb, tag): return [c for c in nb.cells if tag in c.get("metadata", {}).get("tags", [])]


@pytest.mark.parametrize("nb_path", EXPERIMENTS, ids=[p.stem for p in EXPERIMENTS])
def test_experiment_has_one_parameters_cell(nb_path):
    "papermill injects parameters after the cell tagged `parameters`; nbdev-clean must not have stripped it."
    cells = _tagged(nbformat.read(nb_path, as_version=4), "parameters")
    assert len(cells) == 1, f"{nb_path.name} has {len(cells)} cells tagged 'parameters', expected 1"
    assert all(c.cell_type == "code" for c in cells)


def _texts(cell):
    yield "source", cell.source
    for o in cell.get("outputs", []):
        if "text" in o: yield "output", o["text"]
        for mime, v in o.get("data", {}).items():
            if mime.startswith("text/") or mime.endswith("json"): yield f"output {mime}", v if isinstance(v, str) else json.dumps(v)
        if "traceback" in o: yield "traceback", "\n".join(o["traceback"])


def _matches(nb_path, pattern, texts) -> list[str]:
    "The first match of `pattern` in each text that `texts(cell)` yields, with its context, for every cell."
    nb = nbformat.read(nb_path, as_version=4)
    return [f"cell {i} {where}: ...{text[max(m.start()-40, 0):m.end()+40]!r}..."
            for i, c in enumerate(nb.cells) for where, text in texts(c) for m in [pattern.search(text)] if m]


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=[str(p.relative_to(NBS)) for p in NOTEBOOKS])
def test_no_machine_paths(nb_path):
    "Stored sources and outputs are what the docs show: no paths of the machine they ran on."
    hits = _matches(nb_path, MACHINE_PATH, _texts)
    assert not hits, f"{nb_path.name} stores machine paths:\n" + "\n".join(hits)


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=[str(p.relative_to(NBS)) for p in NOTEBOOKS])
def test_stored_images_are_small(nb_path):
    "The docs show stored figures as they are: none over 100 kB (lower the figure's dpi or size)."
    import base64
    nb = nbformat.read(nb_path, as_version=4)
    big = [f"cell {i}: {len(base64.b64decode(o['data'][m])) / 1000:.0f} kB {m}"
           for i, c in enumerate(nb.cells) for o in c.get("outputs", []) for m in ("image/png", "image/jpeg")
           if m in o.get("data", {}) and len(base64.b64decode(o["data"][m])) > 100_000]
    assert not big, f"{nb_path.name} stores images over 100 kB:\n" + "\n".join(big)


def test_stored_outputs_are_small_in_all():
    "All the stored outputs of nbs/ together stay under 2.1 MB (the docs site and the repository carry them; raised from 1.6 MB for exp_reproducibility, from 1.7 MB for issue 38: the experiments' discussions are outputs rendered from their runs, beside controls, stored-run and threads tables, from 1.85 MB for exp_beta's figure of the paper's grid, 45 kB, and from 1.9 MB for issue 45: every experiment's discussion shows its findings table beside the paper's numbers, about 30 kB in all, and from 1.95 MB for issue 54: the claims page (bench/60c, 32 kB with its figure) and each experiment's registered claims table, shown where it is tested; the claims and report pages' figures were made 1x PNG to save 47 kB; then to 2.1 MB as four more experiments show their claims tables, 2.0 MB reached at stop 60)."
    sizes = {p.relative_to(NBS): sum(len(json.dumps(c.get("outputs", []))) for c in json.loads(p.read_text())["cells"])
             for p in NOTEBOOKS}
    total = sum(sizes.values())
    top = ", ".join(f"{p} {n / 1000:.0f} kB" for p, n in sorted(sizes.items(), key=lambda kv: -kv[1])[:5])
    assert total < 2_100_000, f"stored outputs total {total / 1e6:.2f} MB (over 2.1 MB); largest: {top}"


# A duration in a stored output: '0.084 s', '12ms', '3 min', '1.2 s/step', 'it/s', or a key such as
# 'cpu_s_per_step' or 'seconds'. Stored outputs are the docs and must not change from run to run.
TIMING = re.compile(r"\b\d+(\.\d+)?\s?(s|ms|sec|secs|seconds|min|minutes)\b(?!-)|\bit/s\b|s/it\b|_s_per_|\bseconds\b|\belapsed\b",
                    re.IGNORECASE)


def _outputs(cell):
    for where, text in _texts(cell):
        if where != "source" and not where.startswith("output text/html"): yield where, text


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=[str(p.relative_to(NBS)) for p in NOTEBOOKS])
def test_no_timings_in_stored_outputs(nb_path):
    "Timings go to run.json or to a benchmark's prose, never to a stored output (they change from run to run)."
    hits = _matches(nb_path, TIMING, _outputs)
    assert not hits, f"{nb_path.name} stores timings:\n" + "\n".join(hits)


def test_timing_pattern():
    "The pattern above catches the forms timings took in stored outputs, and not the numbers that are not timings."
    for timing in ("{'cpu_s_per_step': 0.084}", "took 0.31 s", "12ms per task", "2 min 12 s", "3.1 it/s", "seconds=4"):
        assert TIMING.search(timing), timing
    for other in ("5-way 1-shot", "20 runs", "0.5 ± 1.6", "sigma 2.5s-1", "FeatureSource: 360 items x 64 dims"):
        assert not TIMING.search(other), other


_stored_csvs = sorted((ROOT/"nbs"/"results").rglob("*.csv"))

@pytest.mark.parametrize("path", _stored_csvs, ids=lambda p: str(p.relative_to(ROOT/"nbs"/"results")))
def test_stored_tables_state_their_units(path):
    "Every stored results table says the unit of each numeric column (a suffix, a known name or a `unit` column)."
    import pandas as pd
    from fewshot_nb.core import check_units
    check_units(pd.read_csv(path))


def test_there_are_stored_tables():
    assert len(_stored_csvs) > 50


def test_xdist_groups_run_in_one_worker(tmp_path):
    """`--dist loadgroup` (pyproject's addopts) sends the tests of one `xdist_group` to one worker, so that the docs preview
    and the wheel are built once: pytest 9 with pytest-xdist 3.8 silently did not (hence `pytest<9` in the dev extra)."""
    (tmp_path/"test_grouped.py").write_text(
        "import os, pytest\npytestmark = pytest.mark.xdist_group('g')\n"
        + "".join(f"def test_{i}():\n    open('workers.txt', 'a').write(os.environ['PYTEST_XDIST_WORKER'] + '\\n')\n" for i in range(6)))
    r = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                        "test_grouped.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    workers = (tmp_path/"workers.txt").read_text().split()
    assert len(workers) == 6 and len(set(workers)) == 1, f"one group ran on {sorted(set(workers))}"


def test_importing_the_benches_leaves_the_heavy_modules_unloaded():
    """Every kernel, sweep point and CLI run imports the package: scipy.stats and statsmodels (0.9-1.3 s) are imported by
    the functions that use them, and seeding does not load torch's compiler (1.5 s), so a run that needs neither never pays."""
    probe = ("import sys, fewshot_nb.bench, fewshot_nb.data, fewshot_nb.solvers; from fewshot_nb.core import seed_everything; "
             "seed_everything(0, deterministic=True); seed_everything(0); "
             "print(sorted(m for m in ('scipy.stats', 'statsmodels', 'torch._inductor.config', 'torch._dynamo') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
