"""Every docs page that shows results shows a figure (issue 37, step 7).

The docs site is built from the notebooks' stored outputs (README, "The docs"; tools/build_docs.py), so a page shows a
figure exactly when its notebook stores an `image/png` output. This file checks, for every page the docs build makes:

- a page that shows results stores at least one figure;
- a page that shows no results is listed in `NO_RESULTS`, with the reason;
- a page that is being reworked and has no figure yet is listed in `PENDING`, and leaves the set as soon as it has one
  (the test fails while a PENDING page already shows a figure, so the set cannot go stale);
- every stored figure is a PNG under 100 KB (the project's bound on a stored output, ../shared/STYLE.md "Outputs").

The notebooks are read, not run: store a notebook's outputs with `python tools/run_notebooks.py nbs/PATH.ipynb`, then
`nbdev-clean`.
"""
import base64, importlib.util, json
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent
NBS = ROOT/"nbs"


from tools_loader import load_tool


# The pages, as the docs build finds them (no file or folder starting with `_` or `.`, no runs/ folder inside nbs/).
PAGES = {str(p.relative_to(NBS).with_suffix("")): p for p in load_tool("build_docs").notebooks(NBS)}

# Pages that show no results, so no figure is asked of them: page (path under nbs/, no suffix) -> why.
NO_RESULTS = {
    "00_core": "infrastructure: paths, seeds, logging, registries and the figure checks themselves; nothing is measured",
    "02_run_folders": "run records, locks, completion records and staged runs: files and processes, checked; nothing is measured",
    "03_workers": "worker processes and signals: processes started, stopped and checked; nothing is measured",
    "20_tasks": "tensor helpers for batches of tasks (padding, masks, prototypes, distances), checked on closed forms",
    "20a_testing": "helpers for testing solvers (random tasks, synthetic features, the contract check), shown passing and failing; nothing is measured",
    "90_cli": "the command line: commands and their messages",
    "index": "the landing page, whose figures come separately",
    "05_params": "the parameter language of the experiments: values checked against types and constraints; nothing is measured",
    "bench/60_experiment": "where the experiments and their stored runs are, and a run's numbers read back for its discussion",
    "bench/60b_discussion": "discussion templates filled from a run's files: text, checked on a stored run",
    "bench/75_reproduce": "runs experiment notebooks on toy stand-ins and checks what it writes; the report it builds, with figures, is bench/64_report",
}

# Pages that show results but have no figure yet, because they are being reworked right now: the lead removes
# each one from this set when its figure is stored (the test below fails while one listed here has a figure).
PENDING = set()   # empty: every page that shows results stores a figure (kept so that a page being reworked can be listed)

MAX_PNG_BYTES = 100 * 1024


def figures(path:Path) -> list:
    "The stored PNG figures of a notebook, decoded: one `bytes` per `image/png` output of a code cell."
    nb = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for c in nb["cells"]:
        if c["cell_type"] != "code": continue
        for o in c.get("outputs", []):
            png = o.get("data", {}).get("image/png")
            if png is not None: out.append(base64.b64decode("".join(png) if isinstance(png, list) else png))
    return out


def test_lists_name_pages():
    "Every listed page exists, is listed once, and says why it is listed."
    missing = sorted((set(NO_RESULTS) | PENDING) - set(PAGES))
    assert not missing, f"{missing} are listed in tests/test_figures.py but are not docs pages (renamed or removed?): update the lists"
    both = sorted(set(NO_RESULTS) & PENDING)
    assert not both, f"{both} are in both NO_RESULTS and PENDING: a page either shows results or it does not"
    assert all(isinstance(r, str) and r.strip() for r in NO_RESULTS.values())


def test_figures_are_found():
    "The reader finds the figures of a page known to have them, and none where there is no output."
    assert len(figures(PAGES["data/13_samplers"])) >= 1
    assert figures(PAGES["90_cli"]) == []


@pytest.mark.parametrize("page", sorted(set(PAGES) - set(NO_RESULTS) - PENDING))
def test_page_shows_a_figure(page):
    n = len(figures(PAGES[page]))
    assert n >= 1, (f"nbs/{page}.ipynb shows results but stores no figure: add one drawn from what the page computes (see "
                    f"'Figures a page can show' in nbs/00_core.ipynb) and store it with tools/run_notebooks.py; or, if the page "
                    f"shows no results, list it in NO_RESULTS with the reason")


@pytest.mark.parametrize("page", sorted(PENDING))
def test_pending_page_has_no_figure_yet(page):
    n = len(figures(PAGES[page]))
    assert n == 0, f"nbs/{page}.ipynb now stores {n} figure(s): remove it from PENDING in tests/test_figures.py"


@pytest.mark.parametrize("page", sorted(PAGES))
def test_stored_figures_are_small_pngs(page):
    for i, png in enumerate(figures(PAGES[page])):
        assert png[:8] == b"\x89PNG\r\n\x1a\n", f"nbs/{page}.ipynb: figure {i} is not a PNG"
        assert len(png) < MAX_PNG_BYTES, (f"nbs/{page}.ipynb: figure {i} is {len(png) / 1024:.0f} KB (limit {MAX_PNG_BYTES // 1024} KB): "
                                          "draw it smaller (fewer pixels: figsize, dpi) and store it with tools/run_notebooks.py")
