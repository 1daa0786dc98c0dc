"""tools/run_notebooks.py: stores a notebook's outputs as the tests run it, and loses nothing when a cell fails."""
import importlib.util
from pathlib import Path
import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("run_notebooks", ROOT/"tools"/"run_notebooks.py")
run_notebooks = importlib.util.module_from_spec(_spec); _spec.loader.exec_module(run_notebooks)
SKIP = {"notest", "slow", "cuda"}


def _notebook(path, *sources, old_output="kept"):
    "A notebook of code cells; each cell starts with a stored output `old_output`."
    nb = nbformat.v4.new_notebook()
    for s in sources:
        cell = nbformat.v4.new_code_cell(s)
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=old_output)]
        nb.cells.append(cell)
    nbformat.write(nb, path)
    return path


def _texts(path):
    return ["".join(o.get("text", "") or "".join(o.get("data", {}).get("text/plain", "")) for o in c.outputs)
            for c in nbformat.read(path, as_version=4).cells]


def test_runs_cells_and_keeps_flagged_outputs(tmp_path):
    nb = _notebook(tmp_path/"a.ipynb", "x = 20 + 22\nx", "#| notest\nraise RuntimeError('must not run')", "print(x + 1)")
    run_notebooks.run_notebook(nb, SKIP)
    assert _texts(nb) == ["42", "kept", "43\n"]
    assert not list(tmp_path.glob(".*.tmp"))


def test_runs_in_the_notebooks_folder(tmp_path):
    (tmp_path/"data.txt").write_text("here")
    nb = _notebook(tmp_path/"b.ipynb", "open('data.txt').read()")
    run_notebooks.run_notebook(nb, SKIP)
    assert _texts(nb) == ["'here'"]


def test_a_failing_cell_leaves_the_notebook_untouched(tmp_path):
    nb = _notebook(tmp_path/"c.ipynb", "y = 1", "raise ValueError('broken')", "y")
    before = nb.read_bytes()
    with pytest.raises(Exception, match="broken"): run_notebooks.run_notebook(nb, SKIP)
    assert nb.read_bytes() == before
    assert not list(tmp_path.glob(".*.tmp"))


def test_flags_named_on_the_command_line_run(tmp_path):
    nb = _notebook(tmp_path/"d.ipynb", "#| slow\nprint('slow ran')")
    run_notebooks.run_notebook(nb, SKIP - {"slow"})
    assert _texts(nb) == ["slow ran\n"]


def test_show_doc_outputs_are_not_stored(tmp_path):
    "The docs build makes show_doc's output from the code; a stored copy would only go stale."
    nb = _notebook(tmp_path/"e.ipynb", "def show_doc(f): return 'doc of ' + f", "#| hide\nshow_doc('g')", "show_doc('h')")
    run_notebooks.run_notebook(nb, SKIP)
    assert _texts(nb) == ["", "", ""]
    nb2 = _notebook(tmp_path/"f.ipynb", "show_doc(f)", "1 + 1")
    run_notebooks.main(["--clear-docs", str(nb2)])
    assert _texts(nb2) == ["", "kept"]
