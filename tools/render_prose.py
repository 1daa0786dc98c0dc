"""Re-derive the findings and re-render the discussions of experiment notebooks from their stored default runs, without
re-running them.

An experiment decides its findings in the cell tagged `findings`, which reads the run's files only (never a variable of a
cell that trains) and writes `findings.csv`; its discussion cells end with `prose(text)`, their text built from the same
files (`fewshot_nb.bench.discussion`). When the rule of a verdict, the paper's numbers or a discussion's wording change,
the stored run's `findings.csv` and the notebook's outputs go stale; re-running the whole experiment to refresh them
costs minutes to an hour of training. This tool plays the notebook's kernel as `tests/test_stored_runs.py` does (the
parameters cell and the cell after it, in `nbs/`, so `out_dir` is the stored default run `nbs/runs/<experiment>/`), then
runs, in order, every `claims` cell (the claims table shown), every `findings` cell (which rewrites the run's findings.csv)
and every discussion cell (one that calls
`discuss(template, out_dir)` or `prose(...)`), and
stores what each shows as that cell's output. Cells that train or compute are not run.

    python tools/render_prose.py nbs/exp_generation.ipynb [nbs/exp_beta.ipynb ...] [--check]
    python tools/render_prose.py nbs/exp_omniglot_protocol.ipynb --run nbs/results/exp_omniglot_protocol_cosine_koch [--check]

With `--run DIR` it re-derives the findings.csv of another stored run of that notebook (one made with other
parameters): the kernel gets the run's own parameters from its run.json (all but where it read and wrote), and only
the `findings` cells are played; the notebook's outputs, which show the default run, are left alone.

With `--check` it changes nothing: it plays the cells on a copy of the run folder and exits 1 when the stored
findings.csv, or a stored output, differs from what the run's files give, or when a discussion cannot be rendered from
the files alone (it reads a variable of a cell that computes).

The re-derived findings.csv is compared with the stored one as numbers, to `FINDINGS_RTOL` (six significant digits), and
its text exactly. The findings are float64 computations from the run's rows, but their last bits depend on the BLAS and
the CPU (a mixed model fitted on an AVX2 machine differs from one fitted on AVX-512 in the 13th digit); a real change
(another rule, another row, another margin) moves a number far more than that, and the discussions show at most four.
"""
from __future__ import annotations
import argparse, ast, json, os, re, shutil, sys, tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROSE = re.compile(r"^(?:prose|discuss)\(", re.M)
NOT_RENDERED = "not rendered"   # a discussion cell that reads a variable instead of a file: stale under --check


FINDINGS_RTOL = 1e-6


def findings_differences(stored:Path, derived:Path, rtol:float=FINDINGS_RTOL) -> list[str]:
    "Where a re-derived findings.csv differs from the stored one: text exactly, numbers to `rtol` (see the module's docstring)."
    import numpy as np, pandas as pd
    a, b = pd.read_csv(stored, keep_default_na=False, dtype=str), pd.read_csv(derived, keep_default_na=False, dtype=str)
    if list(a.columns) != list(b.columns) or len(a) != len(b):
        return [f"columns or rows: {list(a.columns)} x {len(a)} stored, {list(b.columns)} x {len(b)} now"]
    out = []
    for col in a.columns:
        for i, (x, y) in enumerate(zip(a[col], b[col])):
            if x == y: continue
            try: fx, fy = float(x), float(y)
            except ValueError: out.append(f"row {i} {col}: {x[:60]!r} stored, {y[:60]!r} now"); continue
            if not np.isclose(fx, fy, rtol=rtol, atol=0, equal_nan=True): out.append(f"row {i} {col}: {x} stored, {y} now")
    return out


def _src(c): return "".join(c["source"])
def _tags(c): return c.get("metadata", {}).get("tags", [])


def check_cells(nb_path:Path) -> tuple[str, str]:
    "The parameters cell and the cell after it (imports and checked parameters) of an experiment notebook."
    cells = json.loads(nb_path.read_text(encoding="utf-8"))["cells"]
    i = next(k for k, c in enumerate(cells) if "parameters" in _tags(c))
    return _src(cells[i]), _src(cells[i + 1])


def _shown(ns:dict, src:str, name:str):
    "Run a cell's source in `ns` and return the value of its last statement if it is an expression, as the kernel shows it."
    lines = [l for l in src.split("\n") if not l.lstrip().startswith(("%", "!"))]   # no magics here
    tree = ast.parse("\n".join(lines), name)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, name, "exec"), ns)
    return None if last is None else eval(compile(ast.Expression(last.value), f"{name} (last line)", "eval"), ns)


def render(nb_path:Path, run_dir:Path|None=None, own_params:bool=False) -> dict[int, dict|None]:
    """Cell index -> the output data ({mime: text}) it shows now (None: nothing), for every `findings` and discussion cell of
    `nb_path`, played on the stored default run (or on `run_dir`, a copy of it). With `own_params`, the kernel takes the
    parameters recorded in `run_dir`'s run.json and plays the `findings` cells only."""
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    params, setup = check_cells(nb_path)
    cwd = os.getcwd(); os.chdir(ROOT/"nbs"); os.environ.setdefault("FEWSHOT_PROGRESS", "0")
    shown_as = _fresh_display_options()   # a table's text as a fresh kernel shows it, not as options another notebook set
    try:
        ns = {"__name__": "__main__"}
        exec(compile(params, f"{nb_path.name}:parameters", "exec"), ns)
        if run_dir is not None: ns["out_dir"] = str(run_dir)
        if not (Path(ns["out_dir"])/"run.json").is_file():
            raise SystemExit(f"{nb_path.name}: no stored default run in nbs/{ns['out_dir']} (run the notebook with tools/run_notebooks.py first)")
        if own_params:
            from fewshot_nb.bench.experiment import RUN_PLACE   # where the run read and wrote: never taken from its record
            recorded = json.loads((Path(ns["out_dir"])/"run.json").read_text())["params"]
            ns.update({k: v for k, v in recorded.items() if k in ns and k not in RUN_PLACE})
        exec(compile(setup, f"{nb_path.name}:setup", "exec"), ns)
        out = {}
        for k, c in enumerate(nb["cells"]):
            s = _src(c)
            if c["cell_type"] != "code": continue
            if {"findings", "claims"} & set(_tags(c)) and not (own_params and "findings" not in _tags(c)):   # the claims shown, and the findings measured and judged
                shown = _shown(ns, s, f"{nb_path.name}:cell {k} ({'findings' if 'findings' in _tags(c) else 'claims'})")
                out[k] = None if shown is None else {"text/plain": str(shown)}
            elif PROSE.search(s) and not own_params:
                try: shown = _shown(ns, s, f"{nb_path.name}:cell {k}")
                except NameError as e:   # the cell reads a variable of a computing cell: a discussion must read files only
                    print(f"{nb_path.name}: cell {k} not rendered ({e}: a variable of a cell that computes; a discussion reads the run's files only)")
                    out[k] = NOT_RENDERED
                    continue
                out[k] = None if shown is None else {"text/markdown": shown.data}
        return out
    finally:
        os.chdir(cwd); _restore_display_options(shown_as)


def _display_keys(prefix="display") -> list[str]:
    import pandas as pd
    node, keys = pd.options, []
    for part in prefix.split("."): node = getattr(node, part)
    for k in dir(node):
        v = getattr(node, k)
        keys += _display_keys(f"{prefix}.{k}") if type(v) is type(node) else [f"{prefix}.{k}"]
    return keys


def _fresh_display_options() -> dict:
    """pandas' display options to their defaults, returning the ones in force: a notebook played earlier in this process
    (a test worker plays several) sets `display.width` and others, and a table's text would depend on the order."""
    import pandas as pd
    before = {k: pd.get_option(k) for k in _display_keys()}
    pd.reset_option(r"^display\.")
    return before


def _restore_display_options(before:dict):
    import pandas as pd
    for k, v in before.items(): pd.set_option(k, v)


def _stored(c) -> dict|None:
    for o in c.get("outputs", []):
        d = o.get("data", {})
        if "text/markdown" in d: return {"text/markdown": "".join(d["text/markdown"])}
        if "text/plain" in d and {"findings", "claims"} & set(_tags(c)): return {"text/plain": "".join(d["text/plain"])}
    return None


def _output(data:dict) -> list:
    mime, text = next(iter(data.items()))
    shown = {mime: text.splitlines(keepends=True)}
    if mime == "text/markdown": shown["text/plain"] = ["<IPython.core.display.Markdown object>"]
    return [{"data": shown, "execution_count": None, "metadata": {}, "output_type": "execute_result"}]


def stored_run_dir(nb_path:Path) -> Path:
    "The stored default run of an experiment notebook: nbs/runs/<its out_dir>."
    params, _ = check_cells(nb_path)
    ns = {}; exec(compile(params, f"{nb_path.name}:parameters", "exec"), ns)
    return ROOT/"nbs"/ns["out_dir"]


def rederive(nb_path:Path, run:Path, check:bool=False) -> int:
    "Re-derive the findings.csv of a stored run of `nb_path` made with other parameters (with `check`: say whether it is stale)."
    if not (run/"findings.csv").is_file(): raise SystemExit(f"{run} has no findings.csv: not a finished run of {nb_path.name}")
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp)/run.name; shutil.copytree(run, copy)
        render(nb_path, copy, own_params=True)
        diff = findings_differences(run/"findings.csv", copy/"findings.csv")
        if diff and not check:
            tmpf = run/".findings.csv.tmp"; shutil.copyfile(copy/"findings.csv", tmpf); tmpf.replace(run/"findings.csv")
    print(f"{run.name}: findings.csv {'stale' if check else 're-derived'} ({'; '.join(diff[:3])}{' ...' if len(diff) > 3 else ''})"
          if diff else f"{run.name}: findings.csv up to date")
    return 1 if check and diff else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="example: python tools/render_prose.py nbs/exp_generation.ipynb --check")
    ap.add_argument("notebooks", nargs="+", type=Path)
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 when a stored findings.csv or discussion is stale")
    ap.add_argument("--run", type=Path, help="a stored run of the notebook made with other parameters: re-derive its findings.csv only")
    a = ap.parse_args(argv)
    if a.run is not None:
        if len(a.notebooks) != 1: ap.error("--run takes one notebook, the one that made the run")
        return rederive(a.notebooks[0].resolve(), a.run.resolve(), a.check)
    stale = 0
    for p in a.notebooks:
        p = p.resolve(); nb = json.loads(p.read_text(encoding="utf-8")); changed = []
        run = stored_run_dir(p)
        with tempfile.TemporaryDirectory() as tmp:
            copy = None
            if a.check:   # played on a copy: the stored files stay as they are
                copy = Path(tmp)/run.name; shutil.copytree(run, copy)
            shown = render(p, copy)
            if a.check and (run/"findings.csv").is_file() and (diff := findings_differences(run/"findings.csv", copy/"findings.csv")):
                changed.append(f"findings.csv ({'; '.join(diff[:3])}{' ...' if len(diff) > 3 else ''})")
        for k, data in shown.items():
            if data == NOT_RENDERED: changed.append(f"{k} (not rendered)"); continue
            if _stored(nb["cells"][k]) == data: continue
            changed.append(k)
            if not a.check: nb["cells"][k]["outputs"] = [] if data is None else _output(data)
        stale += bool(changed)
        print(f"{p.name}: {'stale' if a.check else 'rendered'} {changed}" if changed else f"{p.name}: findings and discussions up to date")
        if changed and not a.check:
            tmpf = p.with_suffix(".ipynb.tmp")
            tmpf.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"); tmpf.replace(p)
    return 1 if a.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
