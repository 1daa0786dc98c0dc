"""Every notebook in nbs/ run as nbdev-test runs it, one pytest test per notebook."""
import io, os, re, shutil, signal, sys, tempfile
from pathlib import Path
import pytest
import nbdev.test as nbt   # not `from nbdev.test import test_nb`: pytest would collect it as a test
from nbdev.config import get_config

ROOT = Path(__file__).resolve().parent.parent
CFG = get_config(ROOT)
NOTEBOOKS = sorted((p for p in (ROOT/"nbs").rglob("*.ipynb") if not p.name.startswith("_") and ".ipynb_checkpoints" not in p.parts),
                   key=lambda p: str(p.relative_to(ROOT/"nbs")))
# Experiment notebooks whose default run takes 10-20 minutes of the CPU: slow checks, run by the developer
# (FEWSHOT_SLOW=1, or tools/run_notebooks.py when storing their outputs); CI covers their code with the tiny
# papermill runs of tests/test_papermill.py.
SLOW = {"exp_beta", "exp_bongard", "exp_generation", "exp_omniglot_protocol", "exp_realistic", "exp_reproducibility"}
_ANSI = re.compile(r"\x1B(?:[@-Z\\-_]|\[[0-?]*[ -/]*[@-~])")


def _registries() -> dict:
    "Every `fewshot_nb.core.Registry` of the package (its modules imported first), with a copy of its entries."
    import importlib
    from fewshot_nb.core import Registry
    for m in ("solvers.base", "training.backbones", "generation.critics", "bongard.problems", "data.datasets", "bench.generation"):
        importlib.import_module(f"fewshot_nb.{m}")
    found = {id(v): v for m in list(sys.modules.values()) if getattr(m, "__name__", "").startswith("fewshot_nb")
             for v in list(vars(m).values()) if isinstance(v, Registry)}
    return {r: dict(r._items) for r in found.values()}


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[str(p.relative_to(ROOT/"nbs").with_suffix("")) for p in NOTEBOOKS])
def test_notebook(nb):
    if nb.stem in SLOW and not os.environ.get("FEWSHOT_SLOW"):
        pytest.skip(f"slow: the default run of {nb.name} takes 15-20 minutes; run it with FEWSHOT_SLOW=1")
    # test_nb writes the failing cell's traceback to sys.__stderr__, which bypasses pytest's capture (and is
    # lost in an xdist worker): catch it so that it becomes part of this test's failure report.
    err, old_stderr, old_sigint = io.StringIO(), sys.__stderr__, signal.getsignal(signal.SIGINT)
    # an experiment notebook writes its default run over the stored one in nbs/runs/<stem>/ (run.json's time and
    # commit change): keep the stored files as they were, so that testing leaves the tree clean
    stored, keep = ROOT/"nbs"/"runs"/nb.stem, None
    if nb.name.startswith("exp_") and stored.is_dir():
        keep = Path(tempfile.mkdtemp())/nb.stem
        shutil.copytree(stored, keep)
    sys.__stderr__ = err
    registries = _registries()   # a module notebook registers its own copies of the package's classes (Versa, SIB, ...):
    try:                         # the tests run after it in this worker must find the package's again
        ok, secs = nbt.test_nb(nb, skip_flags=CFG.tst_flags, basepath=CFG.config_path,
                               cell_timeout=CFG.get("cell_timeout") or None)
    finally:
        sys.__stderr__ = old_stderr
        signal.signal(signal.SIGINT, old_sigint)   # test_nb installs its own Ctrl-C handler
        for reg, items in registries.items(): reg._items.clear(); reg._items.update(items)
        if keep is not None:
            shutil.rmtree(stored, ignore_errors=True); shutil.copytree(keep, stored); shutil.rmtree(keep.parent)
    assert ok, f"notebook {nb.name} failed:\n{_ANSI.sub('', err.getvalue())}"
