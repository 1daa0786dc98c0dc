"""Re-render the discussion cells of experiment notebooks from their stored default runs, without re-running them.

A discussion cell ends with `prose(text)`, its text built from a run's files (`fewshot_nb.bench.experiment`). When the
wording of such a cell changes, or a stored run it reads is added, its stored output goes stale; re-running the whole
experiment to refresh it costs minutes to an hour of training. This tool plays the notebook's kernel as
`tests/test_stored_runs.py` does (the parameters cell and the cell after it, in `nbs/`, so `out_dir` is the stored
default run `nbs/runs/<experiment>/`), then runs every cell that calls `prose(...)` in order and stores what it shows as
that cell's output. Cells that train or compute are not run: a discussion cell reads files only.

    python tools/render_prose.py nbs/exp_generation.ipynb [nbs/exp_beta.ipynb ...] [--check]

With `--check` it changes nothing and exits 1 when a stored output differs from what the run's files give.
"""
from __future__ import annotations
import argparse, json, os, re, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROSE = re.compile(r"^prose\(", re.M)


def _src(c): return "".join(c["source"])


def render(nb_path:Path) -> dict[int, str|None]:
    "Cell index -> the Markdown its `prose(...)` shows now (None: nothing), for every discussion cell of `nb_path`."
    sys.path.insert(0, str(ROOT/"tests"))
    from test_stored_runs import check_cells
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    params, setup, _ = check_cells(nb_path)
    cwd = os.getcwd(); os.chdir(ROOT/"nbs"); os.environ.setdefault("FEWSHOT_PROGRESS", "0")
    try:
        ns = {"__name__": "__main__"}
        exec(compile(params, f"{nb_path.name}:parameters", "exec"), ns)
        if not (Path(ns["out_dir"])/"run.json").is_file():
            raise SystemExit(f"{nb_path.name}: no stored default run in nbs/{ns['out_dir']} (run the notebook with tools/run_notebooks.py first)")
        exec(compile(setup, f"{nb_path.name}:setup", "exec"), ns)
        out = {}
        for k, c in enumerate(nb["cells"]):
            s = _src(c)
            if c["cell_type"] != "code" or not PROSE.search(s): continue
            body, last = s.rstrip().rsplit("\n", 1) if "\n" in s.rstrip() else ("", s.rstrip())
            try:
                exec(compile(body, f"{nb_path.name}:cell {k}", "exec"), ns)
                shown = eval(compile(last, f"{nb_path.name}:cell {k} (last line)", "eval"), ns)
            except NameError as e:   # the cell reads a variable of a computing cell: only a re-run renders it
                print(f"{nb_path.name}: cell {k} not rendered ({e}: a variable of a cell that computes; re-run the notebook)")
                continue
            out[k] = None if shown is None else shown.data
        return out
    finally:
        os.chdir(cwd)


def _stored(c) -> str|None:
    for o in c.get("outputs", []):
        if "text/markdown" in o.get("data", {}): return "".join(o["data"]["text/markdown"])
    return None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="example: python tools/render_prose.py nbs/exp_generation.ipynb --check")
    ap.add_argument("notebooks", nargs="+", type=Path)
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 when a stored discussion is stale")
    a = ap.parse_args(argv)
    stale = 0
    for p in a.notebooks:
        p = p.resolve(); nb = json.loads(p.read_text(encoding="utf-8")); changed = []
        for k, md in render(p).items():
            if _stored(nb["cells"][k]) == md: continue
            changed.append(k)
            if not a.check:
                nb["cells"][k]["outputs"] = [] if md is None else [{"data": {"text/markdown": md.splitlines(keepends=True),
                                              "text/plain": ["<IPython.core.display.Markdown object>"]},
                                              "execution_count": None, "metadata": {}, "output_type": "execute_result"}]
        stale += bool(changed)
        print(f"{p.name}: {'stale' if a.check else 'rendered'} discussion cells {changed}" if changed else f"{p.name}: discussions up to date")
        if changed and not a.check:
            tmp = p.with_suffix(".ipynb.tmp")
            tmp.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"); tmp.replace(p)
    return 1 if a.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
