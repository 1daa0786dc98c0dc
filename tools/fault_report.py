#!/usr/bin/env python
"""The fault report (issue 40): how far the library's reliability holds, tried case by case.

Each case injects one fault or one documented bad input into a real entry point of the library, then checks the
outcome: the error shown (its first line), and whether anything was

- lost: a file that existed before the case (its inputs, a user's results, the shared data folder) damaged or gone;
- duplicated: an entry built twice, a run done twice;
- left behind: a half-written file (`*.tmp`), a lock file, or an empty folder the case's run made;
- left running: a process the case started (every process carries a marker in its environment) still alive.

A case is handled when the entry point did what it documents (refused the input with a message that says what is
wrong, recovered, or resumed) and nothing was lost, duplicated, left behind or left running. The cases cover the
papermill parameters of an experiment notebook, sweep specifications, data files, feature files of `fewshot-nb
evaluate`, checkpoints, the command lines, killed and interrupted runs, two processes racing for one cache entry or one
output folder, same-size corruption (completion records and sealed checkpoints), full disks and read-only folders (real
ones, in a private mount namespace, where the machine allows one), huge declared sizes, paths that leave a data set's
folder, and output folders nobody asked for (an empty `--out`, an input's folder, the notebooks' folder); four of them run
a notebook with papermill, the others call the library in this process or in small interpreters.

Every case works in a scratch folder of its own (FEWSHOT_CACHE points there too); the data files it corrupts are
copies, and the shared data folder (FEWSHOT_DATA) is checked to be unchanged after every case.

Usage:

    FEWSHOT_DATA=../shared/data python tools/fault_report.py        # every case; exit 0 when all are handled
    python tools/fault_report.py -k sweep -k checkpoint              # only the cases whose name contains a word
    python tools/fault_report.py --list                              # the cases, without running them

It prints one Markdown row per case and ends with `faults: N tried, N handled, 0 lost, 0 left running`; the exit
status is 1 when a case was not handled, something was lost or a process was left running. It is the project's
reliability figure: add a case for every new entry point.
"""
from __future__ import annotations
import argparse, contextlib, hashlib, io, json, os, shutil, signal, subprocess, sys, tempfile, time, traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NBS = ROOT/"nbs"
MARK = "FEWSHOT_FAULT_MARK"   # environment variable every process a case starts inherits: how a process left running is found
CASES = []                    # (group, name, function) in the order of the report


def case(group:str, name:str):
    "Register a case: `name` says the fault injected, `group` the kind of input."
    def deco(fn):
        CASES.append((group, name, fn))
        return fn
    return deco


# -- what a case sees ---------------------------------------------------------------------------------------------
def first_line(text:str) -> str:
    "The first line of a message; with the next one where it ends in ':' (torch's 'Error(s) in loading state_dict for X:')."
    lines = [l.strip() for l in str(text).splitlines() if l.strip()]
    if not lines: return ""
    return f"{lines[0]} {lines[1]}" if lines[0].endswith(":") and len(lines) > 1 else lines[0]


def state(folder:Path) -> dict:
    "relative path -> MD5 of every file under `folder` (None for a folder)."
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_symlink(): continue
        out[str(p.relative_to(folder))] = None if p.is_dir() else hashlib.md5(p.read_bytes()).hexdigest()
    return out


def marked(value:str) -> list[str]:
    "'pid command' of every live process (not a zombie) whose environment holds MARK=value."
    found, me = [], os.getpid()
    for p in Path("/proc").iterdir():
        if not p.name.isdigit() or int(p.name) == me: continue
        try:
            if f"{MARK}={value}".encode() not in (p/"environ").read_bytes().split(b"\0"): continue
            stat = (p/"stat").read_text().rsplit(")", 1)[1].split()
            if stat[0] in ("Z", "X"): continue
            cmd = (p/"cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
            if int(stat[1]) == me and "multiprocessing.resource_tracker" in cmd: continue   # this process's own helper: ends with it
            found.append(f"{p.name} {cmd[:60]}")
        except OSError: continue
    return found


class Case:
    "One case: its scratch folder, what happened, the error shown and the checks of its outcome."
    def __init__(self, n:int, group:str, name:str, folder:Path):
        self.n, self.group, self.name, self.dir = n, group, name, folder
        self.happened, self.error = "", ""
        self.problems, self.duplicated, self.left, self.lost, self.running = [], [], [], [], []
        self.allowed = set()   # files of the baseline the case expects to be rewritten (a corrupt cache replaced)
        self._base = {}

    def baseline(self):
        "The folder as it is now (the case's inputs, corruption included) is what must not be lost."
        self._base = state(self.dir)

    def expect(self, cond, what:str) -> bool:
        if not cond: self.problems.append(what)
        return bool(cond)

    def refused(self, fn, *args, contains:str, **kwargs):
        "Call `fn`: it must raise, with `contains` in its message. The exception (None if there was none)."
        try: fn(*args, **kwargs)
        except Exception as e:
            self.error = first_line(f"{type(e).__name__}: {e}")
            self.expect(contains in str(e), f"the message does not say {contains!r}")
            return e
        self.problems.append("no error: the bad input was accepted")
        return None

    def cli(self, main, argv:list, code:int, contains:str):
        "Run a console script's `main(argv)` here: its exit status must be `code`, its output must say `contains`."
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try: got = main([str(a) for a in argv])
            except SystemExit as e: got = e.code
        out, err = out.getvalue(), err.getvalue()
        lines = [l.strip() for l in err.splitlines() if l.strip()]
        said = [l.strip() for l in out.splitlines() if contains in l]   # a report printed on stdout (`data verify --dataset`)
        self.error = next((l for l in lines if l.startswith("fewshot-") or "error" in l.lower()), lines[0] if lines else said[0] if said else "")
        self.expect(got == code, f"exit status {got}, expected {code}")
        self.expect(contains in out + err, f"the output does not say {contains!r}")
        return got, out, err


# -- inputs -------------------------------------------------------------------------------------------------------
def data_dir() -> Path:
    return Path(os.environ["FEWSHOT_DATA"])


def corrupt_copy(name:str, dest_root:Path, keep:float=0.5) -> Path:
    "A copy of a shared data file under `dest_root` (same sub-folder), cut to `keep` of its bytes."
    from fewshot_nb.data.omniglot import RESOURCES
    src = data_dir()/RESOURCES[name].subdir/name
    dst = dest_root/RESOURCES[name].subdir/name
    dst.parent.mkdir(parents=True, exist_ok=True)
    data = src.read_bytes(); dst.write_bytes(data[:int(len(data) * keep)])
    return dst


def features_file(path:Path, n_classes:int=8, per_class:int=5, dim:int=4, **override) -> Path:
    "A small .npz of features and labels, with any array overridden (or removed with None)."
    import numpy as np
    rng = np.random.default_rng(0)
    arrays = dict(features=rng.normal(size=(n_classes * per_class, dim)).astype("float32"), labels=np.repeat(np.arange(n_classes), per_class))
    arrays.update(override)
    np.savez(path, **{k: v for k, v in arrays.items() if v is not None})
    return path


EVAL = ["--methods", "protonet", "--shots", "1", "--ways", "5", "--queries", "2", "--tasks", "5", "--device", "cpu"]


def fewshot_nb_main():
    from fewshot_nb.cli import main
    return main


def parameters_namespace(notebook:str, injected:str) -> tuple[dict, dict, dict]:
    "A kernel's namespace after an experiment notebook's parameters cell and papermill's cell `injected`; its presets and dry-run cuts."
    import ast
    nb = json.loads((NBS/notebook).read_text())
    code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    i = next(k for k, c in enumerate(nb["cells"]) if "parameters" in c.get("metadata", {}).get("tags", []))
    params = "".join(nb["cells"][i]["source"])
    setup = next(s for s in code if "check_parameters(globals()" in s)
    consts = {}
    for node in ast.parse(setup).body:   # PRESETS and DRY_RUN, as the notebook writes them (dict(...) calls of literals)
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and node.targets[0].id in ("PRESETS", "DRY_RUN"):
            consts[node.targets[0].id] = eval(compile(ast.Expression(node.value), notebook, "eval"), {"__builtins__": {}, "dict": dict})
    ns = {}
    cell = "# Parameters\n" + injected
    exec(params, ns); exec(cell, ns)
    ns["In"] = ["", params, cell]
    return ns, consts.get("PRESETS", {}), consts.get("DRY_RUN", {})


def toy_notebook(path:Path) -> Path:
    "An experiment stand-in: makes its folder, sleeps TOY_SLEEP seconds (training), writes results.csv."
    import nbformat
    nb = nbformat.v4.new_notebook(metadata=dict(kernelspec=dict(name="python3", display_name="Python 3", language="python")))
    nb.cells = [nbformat.v4.new_code_cell("a: int = 1         # a hyper-parameter [at least 0]\nout_dir: str = 'out'  # where the files go",
                                          metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell("import os, time\nfrom pathlib import Path\nPath(out_dir).mkdir(parents=True, exist_ok=True)\n"
                                          "time.sleep(float(os.environ.get('TOY_SLEEP', 0)))\n"
                                          "(Path(out_dir)/'results.csv').write_text(f'metric,value,unit\\nacc,{a},percent\\n')")]
    nbformat.write(nb, str(path))
    return path


def python(*args, env:dict|None=None, **kw) -> subprocess.Popen:
    "An interpreter of the project, one thread, in a session of its own."
    env = os.environ | {"OMP_NUM_THREADS": "1", "FEWSHOT_PROGRESS": "0"} | (env or {})
    return subprocess.Popen([sys.executable, *map(str, args)], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, **kw)


def wait_for(cond, limit:float, what:str):
    t0 = time.time()
    while not cond():
        if time.time() - t0 > limit: raise TimeoutError(f"{what} did not happen within {limit:.0f} s")
        time.sleep(0.05)


# == papermill parameters of an experiment notebook ==============================================================
def refused_parameters(c:Case, injected:str, contains:str, notebook:str="exp_lake_runs.ipynb"):
    from fewshot_nb.params import check_parameters
    ns, presets, dry = parameters_namespace(notebook, injected)
    c.refused(check_parameters, ns, presets=presets, dry_run=dry, contains=contains)
    c.happened = "refused by the parameters cell's check, before any work"


@case("parameters", "exp_lake_runs: unknown parameter (typo n_wya)")
def _(c): refused_parameters(c, "n_wya = 5\n", "unknown parameter 'n_wya'")

@case("parameters", "exp_lake_runs: wrong type (n_way = 'five')")
def _(c): refused_parameters(c, "n_way = 'five'\n", "parameter 'n_way' must be int, got 'five'")

@case("parameters", "exp_lake_runs: out of range (n_way = 1)")
def _(c): refused_parameters(c, "n_way = 1\n", "parameter 'n_way' must be at least 2, got 1")

@case("parameters", "exp_lake_runs: not one of the choices (baselines)")
def _(c): refused_parameters(c, "baselines = ['pixel_nn', 'knn']\n", "must be one of 'pixel_nn', 'mhd', got 'knn'")

@case("parameters", "exp_lake_runs: a number where a list is taken")
def _(c): refused_parameters(c, "baselines = 5\n", "a list is written in YAML syntax")

@case("parameters", "exp_lake_runs: unknown preset")
def _(c): refused_parameters(c, "preset = 'huge'\n", "unknown preset 'huge'")

@case("parameters", "papermill run of exp_lake_runs with n_way = 1")
def _(c):
    import papermill as pm
    from traitlets.config import Config
    c.baseline()
    ipc = Config({"KernelManager": {"transport": "ipc", "ip": str(c.dir/"kernel")}})   # as the sweep runs its kernels
    e = c.refused(pm.execute_notebook, str(NBS/"exp_lake_runs.ipynb"), str(c.dir/"run.ipynb"), cwd=str(NBS), progress_bar=False, config=ipc,
                  parameters=dict(n_way=1, out_dir=str(c.dir/"out")), contains="parameter 'n_way' must be at least 2, got 1")
    if e is not None: c.error = first_line(f"{e.ename}: {e.evalue}") if hasattr(e, "ename") else c.error
    c.expect(not (c.dir/"out").exists(), "the refused run made its output folder")
    c.happened = "the kernel stopped at the parameters cell; no output folder made"


# == sweep specifications =========================================================================================
def lake_sweep(c:Case, **kw):
    from fewshot_nb.sweep import Sweep
    return Sweep(str(NBS/"exp_lake_runs.ipynb"), str(c.dir/"sweep"), **kw)


@case("sweep", "sweep whose last point has a bad value (n_way '20x')")
def _(c):
    from fewshot_nb.sweep import run_sweep
    sw = lake_sweep(c, grid=dict(n_way=[5, 10, "20x"]), seeds=[0, 1], fixed=dict(preset="smoke"))
    c.refused(run_sweep, sw, cwd=str(NBS), progress=False, contains="points 5, 6 of 6")
    c.expect(not (c.dir/"sweep").exists(), "the refused sweep wrote its folder")
    c.happened = "refused before the first job: both bad points named; nothing written"


@case("sweep", "random search drawing out of a parameter's range")
def _(c):
    from fewshot_nb.sweep import run_sweep
    sw = lake_sweep(c, search=dict(n_tasks={"int": [-5, 3]}), n_configs=4, search_seed=0)
    c.refused(run_sweep, sw, cwd=str(NBS), progress=False, contains="must be at least 1")
    c.expect(not (c.dir/"sweep").exists(), "the refused sweep wrote its folder")
    c.happened = "refused before the first job; nothing written"


@case("sweep", "Slurm sweep with a bad point (before submission)")
def _(c):
    from fewshot_nb.sweep import run_sweep
    sw = lake_sweep(c, grid=dict(baselines=[["mhd"], ["knn"]]))
    c.refused(run_sweep, sw, executor="slurm", slurm=dict(partition="none"), cwd=str(NBS), progress=False, contains="point 2 of 2")
    c.expect(not (c.dir/"sweep").exists(), "the refused sweep wrote its folder (or a job's)")
    c.happened = "refused before submitit or sbatch was called"


@case("sweep", "sweep setting a parameter the notebook lacks")
def _(c):
    from fewshot_nb.sweep import run_sweep
    c.refused(run_sweep, lake_sweep(c, grid=dict(n_wya=[5, 10])), progress=False, contains="has no parameter 'n_wya'")
    c.expect(not (c.dir/"sweep").exists(), "the refused sweep wrote its folder")
    c.happened = "refused, with the parameters the notebook declares"


def sweep_cli(c:Case, text:str, code:int, contains:str, *extra):
    from fewshot_nb.sweep import main
    f = c.dir/"sweep.yaml"; f.write_text(text)
    c.baseline()
    c.cli(main, ["run", f, "--no-progress", *extra], code, contains)
    c.expect(not (c.dir/"out").exists(), "the refused sweep wrote its folder")
    c.happened = f"fewshot-sweep run: exit {code}; nothing written"


@case("sweep", "sweep file with an unknown key (grids)")
def _(c): sweep_cli(c, f"notebook: {NBS/'exp_lake_runs.ipynb'}\nout_dir: {c.dir/'out'}\ngrids: {{n_way: [5]}}\n", 2, "unknown key 'grids'")

@case("sweep", "sweep file with an unknown distribution")
def _(c): sweep_cli(c, f"notebook: {NBS/'exp_lake_runs.ipynb'}\nout_dir: {c.dir/'out'}\nsearch: {{n_tasks: {{gaussian: [1, 2]}}}}\nn_configs: 2\n",
                    2, "unknown distribution 'gaussian'")

@case("sweep", "sweep file setting one parameter twice")
def _(c): sweep_cli(c, f"notebook: {NBS/'exp_lake_runs.ipynb'}\nout_dir: {c.dir/'out'}\ngrid: {{n_way: [5]}}\nfixed: {{n_way: 10}}\n",
                    2, "'n_way' is set twice")

@case("sweep", "sweep file that is a list, not a mapping")
def _(c): sweep_cli(c, "- notebook: x.ipynb\n", 2, "a sweep file is a mapping")

@case("sweep", "unknown Slurm option on the command line")
def _(c): sweep_cli(c, f"notebook: {NBS/'exp_lake_runs.ipynb'}\nout_dir: {c.dir/'out'}\ngrid: {{n_way: [5]}}\n", 2,
                    "unknown Slurm option 'partitionn'", "--executor", "slurm", "--slurm", "partitionn=gpu")

@case("sweep", "sweep point failing after making its folder: cache unwritable (papermill)")
def _(c):
    from fewshot_nb.sweep import Sweep, run_point, point_state
    (c.dir/"cache").write_text("a file where the cache folder should be\n")   # decoded images cannot be cached: the run fails in its data cell
    os.environ["FEWSHOT_CACHE"] = str(c.dir/"cache"/"fewshot_nb")
    c.baseline()
    p = Sweep(str(NBS/"exp_lake_runs.ipynb"), str(c.dir/"sweep"), fixed=dict(preset="smoke")).points()[0]
    r = run_point(p, threads=1, cwd=str(NBS))
    folder = Path(p["folder"])
    err = json.loads((folder/"error.json").read_text())["error"] if (folder/"error.json").is_file() else ""
    c.error = first_line(err)
    c.expect(r["status"] == "failed" and "cache" in err, f"the point did not fail on the cache: {r['status']} {err[:200]}")
    c.expect(point_state(folder) == "failed", "the point is not listed as failed")
    c.expect(sorted(f.name for f in folder.iterdir()) == ["error.json", "notebook.ipynb", "point.json"],
             f"the failed point's folder holds {sorted(f.name for f in folder.iterdir())}")
    c.happened = "the point failed in its data cell; error.json and the executed notebook kept, the out/ it made (empty) removed"


# == data files ==================================================================================================
@case("data", "truncated Omniglot archive (a copy)")
def _(c):
    from fewshot_nb.data.omniglot import load_omniglot
    corrupt_copy("images_background_small1.zip", c.dir/"data")
    c.baseline()
    c.refused(load_omniglot, "background_small1", root=c.dir/"data", contains="has MD5")
    c.expect(not any((c.dir/"cache").rglob("*.npz")), "a decoded cache was written from the corrupt archive")
    c.happened = "refused by the MD5 check before decoding; the file kept for the user to replace"


@case("data", "an Omniglot archive cut short while it is being decoded (after its MD5 check)")
def _(c):
    from unittest import mock
    import fewshot_nb.data.omniglot as om
    dst = corrupt_copy("images_background_small1.zip", c.dir/"data", keep=1.0)   # a whole copy: it passes the MD5 check
    whole, real, calls = dst.read_bytes(), om._ink, []
    def cut_midway(*a, **kw):   # another process truncates the archive once decoding has begun (a copy being rewritten)
        calls.append(1)
        if len(calls) == 50: dst.write_bytes(whole[:len(whole) // 2])
        return real(*a, **kw)
    c.baseline()
    with mock.patch.object(om, "_ink", cut_midway):
        c.refused(om.load_omniglot, "background_small1", root=c.dir/"data", contains="could not be read to its end")
    c.expect(not any((c.dir/"cache").rglob("*.npz")), "a decoded cache was written from the damaged archive")
    c.allowed |= {str(dst.relative_to(c.dir))}   # cut by the case itself
    c.happened = "refused, naming the archive and `data verify`; no decoded cache written"


@case("data", "missing data file on an offline node")
def _(c):
    from fewshot_nb.data.omniglot import load_omniglot
    (c.dir/"data").mkdir()
    c.baseline()
    os.environ["FEWSHOT_OFFLINE"] = "1"
    try: c.refused(load_omniglot, "runs", root=c.dir/"data", contains="FEWSHOT_OFFLINE is set")
    finally: del os.environ["FEWSHOT_OFFLINE"]
    c.happened = "refused with where to put the file; no download tried"


@case("data", "corrupt decoded-images cache")
def _(c):
    import warnings
    from fewshot_nb.data.omniglot import load_omniglot
    first = load_omniglot("runs", size=12, root=data_dir(), cache=True)
    cached = next((c.dir/"cache").rglob("*.npz"))
    cached.write_bytes(cached.read_bytes()[:1000])
    c.baseline(); c.allowed.add(str(cached.relative_to(c.dir)))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        again = load_omniglot("runs", size=12, root=data_dir(), cache=True)
    msg = next((str(x.message) for x in w if "unreadable" in str(x.message)), "")
    c.error = first_line(msg)
    c.expect(bool(msg), "no warning about the unreadable cache")
    c.expect((again.images == first.images).all(), "the images decoded again differ")
    import numpy as np
    with np.load(cached) as f: c.expect(f["images"].shape == first.images.shape, "the cache was not rewritten whole")
    c.happened = "warned, decoded the archive again and rewrote the cache"


@case("data", "`data verify` on an empty data root")
def _(c):
    os.environ["FEWSHOT_DATA"], shared = str(c.dir), os.environ["FEWSHOT_DATA"]
    try: c.cli(fewshot_nb_main(), ["data", "verify", "small", "runs"], 1, "missing: images_background_small1.zip")
    finally: os.environ["FEWSHOT_DATA"] = shared
    c.happened = "exit 1, naming the missing files and the fetch command"


@case("data", "`data verify` with a corrupt file")
def _(c):
    corrupt_copy("all_runs.zip", c.dir)
    c.baseline()
    os.environ["FEWSHOT_DATA"], shared = str(c.dir), os.environ["FEWSHOT_DATA"]
    try: c.cli(fewshot_nb_main(), ["data", "verify", "runs"], 1, "wrong MD5 sum: all_runs.zip")
    finally: os.environ["FEWSHOT_DATA"] = shared
    c.happened = "exit 1: wrong MD5 named, with the fix; the file kept"


@case("data", "`data verify --dataset` with a truncated image")
def _(c):
    from fewshot_nb.data.datasets import write_miniature
    root = write_miniature("mini_imagenet", c.dir/"mini")
    img = sorted((root/"images").rglob("*.jpg"))[3]
    img.write_bytes(img.read_bytes()[:40])
    c.baseline()
    c.cli(fewshot_nb_main(), ["data", "verify", "--dataset", "mini_imagenet", "--root", root, "--workers", "2"], 1, img.name)
    c.happened = "exit 1, naming the unreadable image"


@case("data", "corrupt Bongard-LOGO shape table (a copy)")
def _(c):
    from fewshot_nb.data.omniglot import fetch
    corrupt_copy("human_designed_shapes.tsv", c.dir/"data", keep=0.9)
    c.baseline()
    c.refused(fetch, "human_designed_shapes.tsv", c.dir/"data", contains="has MD5")
    c.happened = "refused by the MD5 check; the file kept"


# == feature files of `fewshot-nb evaluate` ======================================================================
def evaluate_refused(c:Case, features:Path, contains:str, *extra):
    c.baseline()
    c.cli(fewshot_nb_main(), ["evaluate", features, *EVAL, "--out", c.dir/"runs"/"mine", *extra], 2, contains)
    c.expect(not (c.dir/"runs").exists(), "the refused evaluation made its --out folder")
    c.happened = "exit 2 before any work; --out not made"


@case("features", "truncated .npz features file")
def _(c):
    f = features_file(c.dir/"feats.npz"); f.write_bytes(f.read_bytes()[:300])
    evaluate_refused(c, f, "cannot be read as a .npz archive")

@case("features", "features with NaN")
def _(c):
    import numpy as np
    x = np.ones((40, 4), "float32"); x[7, 2] = np.nan
    evaluate_refused(c, features_file(c.dir/"feats.npz", features=x), "NaN or inf")

@case("features", "features file without labels")
def _(c): evaluate_refused(c, features_file(c.dir/"feats.npz", labels=None), "has no 'labels' array")

@case("features", "one label fewer than features")
def _(c):
    import numpy as np
    evaluate_refused(c, features_file(c.dir/"feats.npz", labels=np.repeat(np.arange(8), 5)[:-1]), "one per item")

@case("features", ".npy features without a labels file")
def _(c):
    import numpy as np
    np.save(c.dir/"feats.npy", np.ones((40, 4), "float32"))
    evaluate_refused(c, c.dir/"feats.npy", "holds features only")

@case("features", "ragged CSV features")
def _(c):
    (c.dir/"feats.csv").write_text("label,f0,f1\n" + "".join(f"{i % 8},0.{i},1.{i}\n" for i in range(39)) + "7,0.5,0.1,0.9\n")
    evaluate_refused(c, c.dir/"feats.csv", "is ragged")

@case("features", "a class smaller than shots + queries")
def _(c):
    import numpy as np
    labels = np.repeat(np.arange(8), 5); labels[:4] = 1   # class 0 keeps 1 item
    evaluate_refused(c, features_file(c.dir/"feats.npz", labels=labels), "fewer items than n_shot + n_query")

@case("features", "signed features (a PCA) for PT-MAP, beside a method that runs")
def _(c):
    import numpy as np
    x = np.random.default_rng(0).normal(size=(40, 4)).astype("float32")   # negative values: PT-MAP's power transform cannot take them
    evaluate_refused(c, features_file(c.dir/"feats.npz", features=x), "pass beta=1 to skip the transform", "--methods", "protonet,pt-map")

@case("features", "two methods that cannot run, refused together")
def _(c):
    import numpy as np
    x = np.random.default_rng(0).normal(size=(40, 4)).astype("float32")
    evaluate_refused(c, features_file(c.dir/"feats.npz", features=x), "2 of the 3 methods cannot run, so none was run",
                     "--methods", "protonet,pt-map,simpleshot")

@case("sizes", "an .npz whose header declares more memory than the run may use")
def _(c):
    import io, zipfile, numpy as np
    f = c.dir/"huge.npz"
    with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_DEFLATED) as z:   # 8 GB of zeros declared, a few KB on disk
        with z.open("features.npy", "w", force_zip64=True) as m:
            b = io.BytesIO(); np.lib.format.write_array_header_1_0(b, dict(descr="<f4", fortran_order=False, shape=(2_000_000_000,)))
            m.write(b.getvalue()); m.write(bytes(1 << 16))
        b = io.BytesIO(); np.save(b, np.arange(40)); z.writestr("labels.npy", b.getvalue())
    os.environ["FEWSHOT_MAX_MEMORY_GB"] = "1"
    try: evaluate_refused(c, f, "would need 7.5 GB, more than the 1.0 GB this run may use")
    finally: del os.environ["FEWSHOT_MAX_MEMORY_GB"]

@case("sizes", "absurd --tasks (a billion)")
def _(c): evaluate_refused(c, features_file(c.dir/"feats.npz"), "lower n_tasks (--tasks)", "--tasks", "1000000000")

@case("sizes", "a .npy features file cut short")
def _(c):
    import numpy as np
    f = c.dir/"feats.npy"; np.save(f, np.ones((40, 4), "float32")); np.save(c.dir/"feats_labels.npy", np.repeat(np.arange(8), 5))
    f.write_bytes(f.read_bytes()[:300])
    evaluate_refused(c, f, "it is truncated or damaged; write it again")

@case("features", "--device tpu")
def _(c): evaluate_refused(c, features_file(c.dir/"feats.npz"), "unknown device 'tpu'", "--device", "tpu")

@case("features", "a semicolon-separated CSV")
def _(c):
    (c.dir/"feats.csv").write_text("f0;f1;label\n" + "".join(f"0.{i};1.{i};{i % 8}\n" for i in range(40)))
    evaluate_refused(c, c.dir/"feats.csv", "separated by ';', not commas")

@case("features", "a .pt features file holding Python objects")
def _(c):
    import torch, numpy as np
    torch.save(dict(features=np.ones((40, 4), "float32"), labels=np.repeat(np.arange(8), 5), note=Path("x")), c.dir/"feats.pt")
    evaluate_refused(c, c.dir/"feats.pt", "holds Python objects (pathlib.")

@case("features", "a .pt features file of NumPy arrays (accepted)")
def _(c):
    import torch, numpy as np
    from fewshot_nb.run_folders import check_completion
    x = np.abs(np.random.default_rng(0).normal(size=(40, 4))).astype("float32")
    torch.save(dict(features=x, labels=np.repeat(np.arange(8), 5)), c.dir/"feats.pt")
    c.baseline()
    c.cli(fewshot_nb_main(), ["evaluate", c.dir/"feats.pt", *EVAL, "--out", c.dir/"mine"], 0, "complete.json")
    c.expect(check_completion(c.dir/"mine") == [], "the run's files do not match its record")
    c.allowed |= {str(p.relative_to(c.dir)) for p in (c.dir/"mine").rglob("*")} | {"mine"}
    c.happened = "read (NumPy arrays rebuilt by NumPy's own functions, nothing else unpickled); the run finished"

@case("features", "results of an earlier run in --out, no --force")
def _(c):
    out = c.dir/"mine"; out.mkdir(); (out/"results.csv").write_text("method,acc_pct\nmine,99\n")
    c.baseline()
    c.cli(fewshot_nb_main(), ["evaluate", features_file(c.dir/"feats.npz"), *EVAL, "--out", out], 2, "replace it with --force")
    c.happened = "exit 2; the earlier results kept as they were"

@case("features", "--out names a file")
def _(c):
    (c.dir/"notes.txt").write_text("my notes\n")
    c.baseline()
    c.cli(fewshot_nb_main(), ["evaluate", features_file(c.dir/"feats.npz"), *EVAL, "--out", c.dir/"notes.txt"], 2, "is a file, not a folder")
    c.happened = "exit 2; the file kept"


# == checkpoints =================================================================================================
def trainer(checkpoint:Path, width:int):
    import torch
    from fewshot_nb.training.trainer import Trainer, Supervised, Checkpoint
    from fewshot_nb.training.backbones import Conv4
    from fewshot_nb.data.streams import ImageSource, ClassStream
    g = torch.Generator().manual_seed(0)
    data = ImageSource(torch.rand(16, 1, 28, 28, generator=g), torch.arange(16) % 4)
    torch.manual_seed(0)
    return Trainer(Supervised(Conv4(width=width), 4), ClassStream(data, 8), 2, lr=1e-2, seed=0, callbacks=[Checkpoint(checkpoint)],
                   device="cpu", progress=False)


@case("checkpoints", "training checkpoint of another architecture (Conv4 width 4 -> 8)")
def _(c):
    ck = c.dir/"ck"/"run.pt"
    trainer(ck, 4).fit()
    c.baseline()
    c.refused(trainer, ck, 8, contains="size mismatch for backbone")   # (the trainer's configuration names the backbone's class, not its width)
    c.happened = "refused by torch's strict load (shapes listed), not by the configuration check; the checkpoint kept"

@case("checkpoints", "truncated training checkpoint")
def _(c):
    ck = c.dir/"ck"/"run.pt"
    trainer(ck, 4).fit()
    ck.write_bytes(ck.read_bytes()[:2000])
    c.baseline()
    c.refused(trainer, ck, 4, contains="cannot read checkpoint")
    c.happened = "refused: delete it to start afresh; the file kept"

@case("checkpoints", "truncated released checkpoint (TIM format)")
def _(c):
    import torch
    from fewshot_nb.training.backbones import load_released_checkpoint
    f = c.dir/"model_best.pth.tar"
    torch.save(dict(arch="resnet18", state_dict={"module.fc.weight": torch.zeros(64, 512)}), f)
    f.write_bytes(f.read_bytes()[:500])
    c.baseline()
    c.refused(load_released_checkpoint, f, contains="corrupt or truncated")
    c.happened = "refused: download it again"

@case("checkpoints", "critic weights of the other critic (simclr as protonet)")
def _(c):
    from fewshot_nb.generation.critics import critic_from_file
    f = c.dir/"simclr.pt"; shutil.copy(data_dir()/"critics"/"simclr_omniglot50_weak.pt", f)
    c.baseline()
    c.refused(critic_from_file, f, kind="protonet", contains="state_dict")
    c.happened = "refused by the strict load: keys listed"

@case("checkpoints", "truncated critic weights file")
def _(c):
    from fewshot_nb.generation.critics import critic_from_file
    f = c.dir/"protonet.pt"; f.write_bytes((data_dir()/"critics"/"protonet_omniglot50_weak.pt").read_bytes()[:5000])
    c.baseline()
    c.refused(critic_from_file, f, contains=f"cannot read {f}")
    c.happened = "refused, naming the file as truncated or corrupt; the file kept"

def damaged_cache_entry(c:Case, damage, contains:str, happened:str):
    "A features cache entry written, then damaged by `damage(bytes) -> bytes`: reading it must refuse, saying `contains`, and rebuild nothing."
    import torch
    from fewshot_nb.features import feature_cache_entry, write_feature_cache
    from fewshot_nb.data.sources import FeatureSource
    src = FeatureSource(torch.rand(6, 4), [0, 0, 1, 1, 2, 2])
    net = dict(name="linear", kwargs={}, state_dict=torch.nn.Linear(4, 4).state_dict())
    entry = c.dir/"cache"/"entry.pt"
    write_feature_cache(entry, src, src.feats.mean(0), dict(built="once"), dict(what="x"), base=src, backbone=net)
    entry.write_bytes(damage(entry.read_bytes()))
    c.baseline()
    c.refused(feature_cache_entry, entry, dict(what="x"), lambda: c.problems.append("rebuilt over the damaged entry"), contains=contains)
    c.happened = happened

def _flip_middle_byte(b:bytes) -> bytes:
    raw = bytearray(b); raw[len(raw) // 2] ^= 0xFF
    return bytes(raw)

@case("completion", "a features cache entry with one byte changed (the same size)")
def _(c): damaged_cache_entry(c, _flip_middle_byte, "its SHA-256 differs from the one its .json record holds",
                              "refused: its SHA-256 no longer matches its record; how to rebuild it said; nothing overwritten")

@case("checkpoints", "truncated features cache entry")
def _(c): damaged_cache_entry(c, lambda b: b[:400], "may be truncated or corrupt", "refused, with how to rebuild it; nothing overwritten")


# == command lines ===============================================================================================
@case("cli", "`evaluate` without --methods")
def _(c):
    c.cli(fewshot_nb_main(), ["evaluate", features_file(c.dir/"f.npz"), "--out", c.dir/"o"], 2, "the following arguments are required: --methods")
    c.happened = "usage error, exit 2"

@case("cli", "`evaluate --ways 1`")
def _(c):
    c.cli(fewshot_nb_main(), ["evaluate", features_file(c.dir/"f.npz"), *EVAL, "--ways", "1", "--out", c.dir/"o"], 2, "n_way")
    c.expect(not (c.dir/"o").exists(), "--out made"); c.happened = "exit 2 before any work"

@case("cli", "`evaluate` with an unknown method")
def _(c):
    c.cli(fewshot_nb_main(), ["evaluate", features_file(c.dir/"f.npz"), *EVAL, "--methods", "protonett", "--out", c.dir/"o"], 2, "protonet")
    c.expect(not (c.dir/"o").exists(), "--out made"); c.happened = "exit 2, listing the known solvers"

@case("cli", "`evaluate --method-kwargs` that is not JSON")
def _(c):
    c.cli(fewshot_nb_main(), ["evaluate", features_file(c.dir/"f.npz"), *EVAL, "--method-kwargs", "{tim: 1}", "--out", c.dir/"o"], 2,
          "is not valid JSON")
    c.expect(not (c.dir/"o").exists(), "--out made"); c.happened = "exit 2, with an example"

@case("cli", "`reproduce` with a misspelt experiment")
def _(c):
    c.cli(fewshot_nb_main(), ["reproduce", "exp_bet", "--preset", "smoke", "--out", c.dir/"repro"], 2, "did you mean 'exp_beta'")
    c.expect(not (c.dir/"repro").exists(), "--out made"); c.happened = "exit 2, with the likely name"

@case("cli", "`reproduce` with Slurm options on the local executor")
def _(c):
    c.cli(fewshot_nb_main(), ["reproduce", "--out", c.dir/"repro", "--slurm-gpus", "1"], 2, "--executor slurm")
    c.expect(not (c.dir/"repro").exists(), "--out made"); c.happened = "exit 2"

@case("cli", "`data fetch` of an unknown file")
def _(c):
    c.cli(fewshot_nb_main(), ["data", "fetch", "omniglot.zip"], 2, "known files")
    c.happened = "exit 2, listing the known files"

@case("cli", "`experiments copy` over an edited notebook")
def _(c):
    (c.dir/"exp_lake_runs.ipynb").write_text("my edits")
    c.baseline()
    c.cli(fewshot_nb_main(), ["experiments", "copy", c.dir, "exp_lake_runs"], 2, "--force")
    c.happened = "exit 2: nothing copied, the edited notebook kept"

@case("cli", "`fewshot-sweep run --workers 0`")
def _(c):
    from fewshot_nb.sweep import main
    f = c.dir/"s.yaml"; f.write_text(f"notebook: {NBS/'exp_lake_runs.ipynb'}\nout_dir: {c.dir/'out'}\ngrid: {{n_way: [5]}}\n")
    c.baseline()
    c.cli(main, ["run", f, "--workers", "0"], 2, "workers must be >= 1")
    c.expect(not (c.dir/"out").exists(), "the sweep folder made"); c.happened = "exit 2; nothing written"


# == killed runs, races ==========================================================================================
RACE = '''
import json, os, sys, time
from pathlib import Path
import torch
torch.set_num_threads(1)
from fewshot_nb.features import feature_cache_entry
from fewshot_nb.data.sources import FeatureSource
entry, calls, name, sleep, sync = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], float(sys.argv[4]), sys.argv[5]
if sync != "-":   # both processes arrive (imports done), then ask at once
    (Path(sync)/name).write_text("")
    while len(list(Path(sync).iterdir())) < 2: time.sleep(0.01)
def build():
    with open(calls, "a") as f: f.write(name + "\\n")
    print("building", flush=True)
    time.sleep(sleep)
    src = FeatureSource(torch.rand(6, 4, generator=torch.Generator().manual_seed(os.getpid())), [0, 0, 1, 1, 2, 2])
    net = dict(name="linear", kwargs={}, state_dict=torch.nn.Linear(4, 4).state_dict())
    return dict(test=src, base=src, base_mean=src.feats.mean(0), backbone=net, record=dict(built_by=name))
feats, mean, record = feature_cache_entry(entry, dict(what="race"), build)
print(json.dumps(dict(built_by=record["built_by"], cached=record["cached"], total=float(feats.feats.sum()))), flush=True)
'''


def finish(p:subprocess.Popen, limit:float=120) -> dict:
    out, err = p.communicate(timeout=limit)
    if p.returncode: raise RuntimeError(f"a worker failed (exit {p.returncode}): {first_line(err.strip().splitlines()[-1] if err.strip() else '')}")
    return json.loads(out.strip().splitlines()[-1])


@case("concurrency", "two processes racing for one features cache entry")
def _(c):
    script = c.dir/"race.py"; script.write_text(RACE)
    entry, calls, sync = c.dir/"cache"/"race.pt", c.dir/"calls.txt", c.dir/"sync"
    sync.mkdir()
    c.baseline()
    procs = [python(script, entry, calls, name, 1.5, sync) for name in ("job_a", "job_b")]
    got = [finish(p) for p in procs]
    builds = calls.read_text().split()
    if len(builds) != 1: c.duplicated.append(f"entry built {len(builds)} times ({', '.join(builds)})")
    c.expect(len({g["total"] for g in got}) == 1, "the two jobs got different features")
    c.expect(sorted(g["cached"] for g in got) == [False, True], "not one build and one read")
    c.expect(sorted(p.name for p in entry.parent.iterdir()) == ["race.json", "race.pt"], "the cache folder holds more than the entry")
    c.happened = f"two jobs asked at once: {len(builds)} build ({', '.join(builds)}), the other job waited and read the entry"


@case("concurrency", "cache builder killed (SIGKILL) holding the lock")
def _(c):
    script = c.dir/"race.py"; script.write_text(RACE)
    entry, calls = c.dir/"cache"/"killed.pt", c.dir/"calls.txt"
    c.baseline()
    a = python(script, entry, calls, "killed", 60, "-")
    line = a.stdout.readline().strip()
    c.expect(line == "building", "the first builder never started building")
    a.send_signal(signal.SIGKILL); a.wait()
    c.expect(not entry.exists(), "an entry was written by the killed builder")
    t0 = time.time()
    got = finish(python(script, entry, calls, "next", 0, "-"))
    c.expect(time.time() - t0 < 30, "the next builder waited for the dead one")
    c.expect(got["built_by"] == "next" and got["cached"] is False, "the next builder did not build the entry")
    c.expect(sorted(p.name for p in entry.parent.iterdir()) == ["killed.json", "killed.pt"], "the lock (or a temporary file) was left")
    c.happened = "builder SIGKILLed inside the lock: no entry written; the next job took the lock at once and built it"


@case("killed", "sweep stopped with SIGTERM mid-run, then resumed (papermill)")
def _(c):
    from fewshot_nb.sweep import Sweep, sweep_status, status_counts, run_sweep, collect, point_state
    nb = toy_notebook(c.dir/"exp_toy.ipynb")
    f = c.dir/"toy.yaml"; f.write_text(f"notebook: {nb}\nout_dir: {c.dir/'sweep'}\ngrid: {{a: [1]}}\nexecutor: {{workers: 1}}\n")
    sw = Sweep.from_yaml(f)
    folder = Path(sw.points()[0]["folder"])
    c.baseline()
    run = python("-c", "import sys; from fewshot_nb.sweep import main; sys.exit(main())", "run", f, "--no-progress", env={"TOY_SLEEP": "120"})
    try: wait_for(lambda: (folder/"out").is_dir(), 120, "the run reaching its training")   # the kernel made out/, then sleeps
    except TimeoutError:
        run.kill(); out, err = run.communicate(); raise RuntimeError(f"the toy sweep never started: {first_line(err[-500:])}")
    run.send_signal(signal.SIGTERM); run.wait(30)
    t0 = time.time()
    while marked(os.environ[MARK]) and time.time() - t0 < 20: time.sleep(0.2)
    c.running += marked(os.environ[MARK])   # checked here: the resumed run below is this process's own
    c.expect(point_state(folder) == "pending", f"after the kill the point is {point_state(folder)}, not pending")
    c.expect(not (folder/"record.json").exists(), "a record was written by the killed run")
    table = run_sweep(sw, progress=False)   # the same command again: resumes the interrupted point
    c.expect(status_counts(table)["done"] == 1, "the sweep did not finish when resumed")
    rows = collect(sw, save=False)
    if len(rows) != 1: c.duplicated.append(f"{len(rows)} result rows for one run")
    c.happened = "SIGTERM to `fewshot-sweep run` while its point trained: the point pending, then run once by the same command"


def interrupted_evaluate(c:Case, sig:int, group:bool):
    "`fewshot-nb evaluate` on a run long enough to be caught mid-way, signalled once it writes: exit 130, --out as before."
    import numpy as np
    rng = np.random.default_rng(0)
    feats, base = c.dir/"feats.npz", c.dir/"base.npz"
    np.savez(feats, features=rng.random((600, 32), dtype=np.float32), labels=np.repeat(np.arange(20), 30))
    np.savez(base, features=rng.random((100, 32), dtype=np.float32), labels=np.repeat(np.arange(5), 20))
    out = c.dir/"runs"/"mine"
    c.baseline()
    run = subprocess.Popen([str(CLI_BIN), "evaluate", str(feats), "--base", str(base), "--methods", "simpleshot,tim", "--tasks", "20000",
                            "--out", str(out)], env=os.environ | {"OMP_NUM_THREADS": "1"}, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, start_new_session=True)
    try: wait_for(lambda: bool(list(out.glob(".staging-*"))), 120, "evaluate writing into its staging folder")
    except TimeoutError:
        run.kill(); raise
    time.sleep(0.5)
    t0 = time.time()
    if group: os.killpg(run.pid, sig)
    else: os.kill(run.pid, sig)
    _, err = run.communicate(timeout=30)
    c.error = said_line(err)
    c.expect(run.returncode == 130, f"exit status {run.returncode}, expected 130")
    c.expect(time.time() - t0 < 10, f"it took {time.time() - t0:.0f} s to stop")
    c.expect("Traceback" not in err, "a traceback was printed")
    c.expect(not (c.dir/"runs").exists(), "the interrupted run left its folders or files")
    c.happened = f"exit 130 within {time.time() - t0:.1f} s, no traceback; --out as before (the staging folder and the folders it made removed)"

@case("killed", "Ctrl-C on evaluate (SIGINT to its process group) mid-run")
def _(c): interrupted_evaluate(c, signal.SIGINT, group=True)

@case("killed", "SIGTERM to evaluate mid-run (kill, a batch system's time limit)")
def _(c): interrupted_evaluate(c, signal.SIGTERM, group=False)


@case("empty", "an empty .npy features file (0 bytes)")
def _(c):
    f = c.dir/"feats.npy"; f.write_bytes(b""); (c.dir/"labels.npy").write_bytes(b"")
    evaluate_refused(c, f, "is empty", "--labels", c.dir/"labels.npy")

@case("empty", "an empty .npz features file (0 bytes)")
def _(c):
    f = c.dir/"feats.npz"; f.write_bytes(b"")
    evaluate_refused(c, f, "is empty")

@case("empty", "an empty training checkpoint (0 bytes)")
def _(c):
    ck = c.dir/"ck"/"run.pt"; ck.parent.mkdir(); ck.write_bytes(b"")
    c.baseline()
    c.refused(trainer, ck, 4, contains="cannot read checkpoint")
    c.happened = "refused: delete it to start afresh; the file kept"

@case("empty", "an empty sweep file")
def _(c): sweep_cli(c, "", 2, "is empty: a sweep file is a mapping")


POOL = '''
import sys, time
from fewshot_nb.workers import worker_pool
if __name__ == "__main__":   # spawned workers import this file again: they must not start a pool of their own
    with worker_pool(2) as ex:
        futures = [ex.submit(time.sleep, 300) for _ in range(2)]
        time.sleep(2)   # the workers are up
        print("working", flush=True)
        [f.result() for f in futures]
'''


@case("killed", "process with a worker pool killed (SIGKILL)")
def _(c):
    script = c.dir/"pool.py"; script.write_text(POOL)
    p = python(script)
    c.expect(p.stdout.readline().strip() == "working", "the pool never started")
    workers = [w for w in marked(os.environ[MARK]) if int(w.split()[0]) != p.pid]
    c.expect(len(workers) >= 2, f"expected two workers, found {workers}")
    p.send_signal(signal.SIGKILL); p.wait()
    c.happened = f"the parent SIGKILLed while its pool worked ({len(workers)} child processes: 2 workers and their resource tracker)"


# == one writer per folder, completion you can trust, runs that fail cleanly (issue 46) =============================
EVAL_CLI = "import sys; from fewshot_nb.cli import main; sys.exit(main())"


@case("concurrency", "two evaluate runs into one --out")
def _(c):
    from fewshot_nb.run_folders import check_completion
    feats, out = features_file(c.dir/"feats.npz", n_classes=12, per_class=20, dim=32), c.dir/"mine"
    c.baseline()
    first = python("-c", EVAL_CLI, "evaluate", feats, "--methods", "protonet,tim", "--shots", "1", "--tasks", "600", "--device", "cpu",
                   "--out", out)
    try: wait_for(lambda: (out/".lock").exists(), 60, "the first run taking its folder")
    except TimeoutError: first.kill(); raise RuntimeError(f"the first evaluate never started: {first_line(first.communicate()[1][-500:])}")
    c.cli(fewshot_nb_main(), ["evaluate", feats, *EVAL, "--out", out], 2, "is being written by process")
    _, err = first.communicate(timeout=300)
    c.expect(first.returncode == 0, f"the first run failed: {first_line(err[-300:])}")
    c.expect(check_completion(out) == [], "the first run's files do not match its record")
    c.expect(json.loads((out/"run.json").read_text())["params"]["methods"] == ["protonet", "tim"], "the folder holds the second run's record")
    c.allowed |= {str(p.relative_to(c.dir)) for p in out.rglob("*")}
    c.happened = "the second writer refused at once (exit 2, the holder's pid and command); the first run's files whole and matching"


@case("completion", "a finished evaluate run overwritten with as many NUL bytes")
def _(c):
    feats, out = features_file(c.dir/"feats.npz"), c.dir/"mine"
    c.cli(fewshot_nb_main(), ["evaluate", feats, *EVAL, "--out", out], 0, "complete.json")
    r = out/"results.csv"; r.write_bytes(b"\0" * r.stat().st_size)
    c.baseline()
    c.cli(fewshot_nb_main(), ["evaluate", feats, *EVAL, "--out", out], 2, "results.csv has changed since the run finished")
    c.happened = "exit 2: the run is not taken as done, the changed file named; nothing overwritten without --force"


@case("completion", "a finished sweep point's findings overwritten with as many NUL bytes")
def _(c):
    from fewshot_nb.sweep import Sweep, run_sweep, status_counts, sweep_status, record_complete
    nb = toy_notebook(c.dir/"exp_toy.ipynb")
    sw = Sweep(str(nb), str(c.dir/"sweep"), grid=dict(a=[1]))
    run_sweep(sw, workers=1, progress=False)
    folder = Path(sw.points()[0]["folder"]); r = folder/"out"/"results.csv"
    r.write_bytes(b"\0" * r.stat().st_size)
    c.baseline(); c.allowed |= {str(p.relative_to(c.dir)) for p in folder.rglob("*")}
    c.expect(sweep_status(sw).state.tolist() == ["pending"], "the damaged point still counts as done")
    t = run_sweep(sw, workers=1, progress=False)
    c.expect(status_counts(t)["done"] == 1 and record_complete(folder), "the point was not run again to a matching record")
    c.expect(r.read_text().startswith("metric,value"), "the results were not written again")
    c.happened = "the point is pending, not done (its SHA-256 no longer matches); the same command ran it again"


@case("disk", "disk full while evaluate writes its results, then a retry without --force")
def _(c):
    import errno
    from unittest import mock
    from fewshot_nb.run_folders import check_completion
    feats, out = features_file(c.dir/"feats.npz"), c.dir/"runs"/"mine"
    real = __import__("fewshot_nb.bench.evaluate", fromlist=["save_csv"]).save_csv
    calls = []
    def fills(df, path, **kw):   # the second file finds the disk full
        calls.append(path)
        if len(calls) == 2: raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(df, path, **kw)
    c.baseline()
    with mock.patch("fewshot_nb.bench.evaluate.save_csv", fills):
        c.cli(fewshot_nb_main(), ["evaluate", feats, *EVAL, "--out", out], 1, "No space left on device")
    shown = c.error
    c.expect(not (c.dir/"runs").exists(), "the failed run left folders or files behind")
    c.cli(fewshot_nb_main(), ["evaluate", feats, *EVAL, "--out", out], 0, "complete.json")
    c.error = shown
    c.expect(check_completion(out) == [], "the retry's files do not match its record")
    c.allowed |= {str(p.relative_to(c.dir)) for p in (c.dir/"runs").rglob("*")} | {"runs"}
    c.happened = "exit 1 naming the full disk, nothing left; the retry ran without --force to a complete record"


@case("folders", "a failed evaluate while another process makes a folder in --out")
def _(c):
    from unittest import mock
    feats, out = features_file(c.dir/"feats.npz"), c.dir/"shared_out"
    out.mkdir(); c.baseline()
    def other_process_then_fail(*a, **kw):   # another process makes its folder in --out meanwhile; then this run fails
        (out/"other_run").mkdir()
        raise ValueError("failed half-way")
    with mock.patch("fewshot_nb.bench.evaluate.save_csv", other_process_then_fail):
        c.cli(fewshot_nb_main(), ["evaluate", feats, *EVAL, "--out", out], 2, "failed half-way")
    c.expect((out/"other_run").is_dir(), "the failed run removed another process's folder")
    c.expect(sorted(p.name for p in out.iterdir()) == ["other_run"], "the failed run left its staging folder or files")
    c.allowed |= {"shared_out/other_run"}
    c.happened = "exit 2; only its staging folder went: the other process's empty folder stays"


def in_private_mounts(script:str) -> subprocess.CompletedProcess|None:
    "Run a shell script in a private mount namespace (`unshare -m`, so its mounts vanish with it); None where the machine refuses one."
    if not shutil.which("unshare") or subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode: return None
    return subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=300)

def said_line(text:str, prog:str="fewshot-nb") -> str:
    "The line of a command's stderr that is its message."
    return next((l.strip() for l in text.splitlines() if l.startswith(prog)), first_line(text))

CLI_BIN = Path(sys.executable).parent/"fewshot-nb"

@case("folders", "a read-only --out (a read-only bind mount; simulated where none can be made)")
def _(c):
    import errno, shlex
    from unittest import mock
    feats, ro = features_file(c.dir/"feats.npz"), c.dir/"ro"
    ro.mkdir(); (ro/"earlier.txt").write_text("an earlier file")
    c.baseline()
    q = lambda p: shlex.quote(str(p))
    r = in_private_mounts(f"mount --bind {q(ro)} {q(ro)} && mount -o remount,bind,ro {q(ro)} && "
                          f"{q(CLI_BIN)} evaluate {q(feats)} {' '.join(EVAL)} --out {q(ro/'run')}; echo exit=$?")
    if r is not None:
        c.error = said_line(r.stderr)
        c.expect("exit=1" in r.stdout, f"exit status {r.stdout.strip()[-8:]}, expected 1")
        c.expect("Read-only file system" in r.stderr and "Traceback" not in r.stderr, "the message does not name the read-only folder")
        c.happened = "exit 1: the system refused (read-only file system), named; nothing written, nothing lost"
        return
    real = Path.mkdir
    def refuse(self, *a, **kw):
        if str(self).startswith(str(ro)): raise OSError(errno.EROFS, "Read-only file system", str(self))
        return real(self, *a, **kw)
    with mock.patch.object(Path, "mkdir", refuse):
        c.cli(fewshot_nb_main(), ["evaluate", feats, *EVAL, "--out", ro/"run"], 1, "Read-only file system")
    c.happened = "exit 1: the system refused (read-only file system, simulated: no private mount here), named; nothing lost"


@case("disk", "a real full disk (a 1 MB file system, full) under evaluate, then a retry once there is room")
def _(c):
    import shlex
    feats, d = features_file(c.dir/"feats.npz"), c.dir/"small_disk"
    d.mkdir(); c.baseline()
    q = lambda p: shlex.quote(str(p))
    r = in_private_mounts(f"mount -t tmpfs -o size=1m tmpfs {q(d)} && head -c 1032192 /dev/zero > {q(d/'filler')}; "
                          f"{q(CLI_BIN)} evaluate {q(feats)} {' '.join(EVAL)} --out {q(d/'run')}; echo exit=$?; "
                          f"echo left:; find {q(d)} -mindepth 1; echo :left; rm {q(d/'filler')}; "
                          f"{q(CLI_BIN)} evaluate {q(feats)} {' '.join(EVAL)} --out {q(d/'run')}; echo retry=$?; ls {q(d/'run')}")
    if r is None:
        c.happened = "not tried: no private mount namespace on this machine (the simulated full disk is case 'disk full while evaluate writes')"
        return
    c.error = said_line(r.stderr)
    left = r.stdout.split("left:", 1)[-1].split(":left", 1)[0].split()
    c.expect("exit=1" in r.stdout, f"the full disk gave {r.stdout.split('left:')[0].strip()[-8:]}, expected exit=1")
    c.expect("No space left on device" in r.stderr and "Traceback" not in r.stderr, "the message does not name the full disk")
    c.expect(left == [str(d/"filler")], f"the failed run left {[l for l in left if not l.endswith('filler')]}")
    c.expect("retry=0" in r.stdout and "complete.json" in r.stdout, "the retry once there was room did not complete: " + r.stdout[-300:])
    c.happened = "exit 1 naming the full disk, nothing of the run left on it; the retry with room (no --force) completed"


def flip_tensor_bit(path:Path) -> None:
    "Flip one bit inside the largest tensor of a torch zip file: the file still parses, the same size, one weight changed."
    import zipfile
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z: rec = max(z.infolist(), key=lambda r: r.file_size if "/data/" in r.filename else -1)
    at = rec.header_offset + 30 + int.from_bytes(raw[rec.header_offset + 26:rec.header_offset + 28], "little") \
         + int.from_bytes(raw[rec.header_offset + 28:rec.header_offset + 30], "little")
    raw[at + 5] ^= 0x01
    path.write_bytes(bytes(raw))

@case("completion", "a training checkpoint with one bit of one weight flipped (the same size)")
def _(c):
    ck = c.dir/"ck"/"run.pt"
    trainer(ck, 4).fit()
    flip_tensor_bit(ck)
    c.baseline()
    c.refused(trainer, ck, 4, contains="is damaged: its contents no longer match the SHA-256")
    c.happened = "refused: its contents no longer match the SHA-256 sealed in it; delete it to train again; the file kept"

@case("completion", "a saved FeatureSource with one bit of one feature flipped (the same size)")
def _(c):
    import torch
    from fewshot_nb.data.sources import FeatureSource
    f = FeatureSource(torch.rand(64, 32), [i // 8 for i in range(64)]).save(c.dir/"feats.pt")
    flip_tensor_bit(f)
    c.baseline()
    c.refused(FeatureSource.load, f, contains="is damaged")
    c.happened = "refused: its contents no longer match the SHA-256 sealed in it; write it again; the file kept"


@case("data", "a split file that names a file outside the copy (../../etc/passwd)")
def _(c):
    from fewshot_nb.data.datasets import write_miniature
    root = write_miniature("mini_imagenet", c.dir/"mini")
    (root/"test.csv").write_text((root/"test.csv").read_text() + "../../../../etc/passwd,n01930112\n")
    c.baseline()
    c.cli(fewshot_nb_main(), ["data", "verify", "--dataset", "mini_imagenet", "--root", root, "--workers", "0"], 1,
          "lie outside the folder of the copy")
    c.happened = "reported, nothing read outside the copy: the split file must list paths relative to its folder; exit 1"


# == outputs only where the user asked (issue 53): an empty --out, an input's folder, the notebooks' folder =========
def wrote_nothing(c:Case, where:str="the current folder (the case's folder)", but:tuple=()):
    "Nothing new under the case's folder (the current folder, and the notebooks' and inputs' folders in it) since the baseline."
    new = sorted(p for p in set(state(c.dir)) - set(c._base) if p not in but)
    c.expect(not new, f"wrote {', '.join(new[:5])}{' ...' if len(new) > 5 else ''} in {where}")


def evaluate_out_refused(c:Case, features:Path, out:str, contains:str, *extra):
    "`fewshot-nb evaluate` with this --out, run in the case's folder: exit 2 saying `contains`, nothing written anywhere in it."
    c.baseline()
    c.cli(fewshot_nb_main(), ["evaluate", features, *EVAL, "--out", out, *extra], 2, contains)
    wrote_nothing(c)
    c.happened = "exit 2 before any work; nothing written in the current folder or beside the inputs"


@case("outputs", "`evaluate --out ''` (an empty --out: the current folder, unasked)")
def _(c):
    (c.dir/"data").mkdir()
    evaluate_out_refused(c, features_file(c.dir/"data"/"feats.npz"), "", "--out is empty: give the folder to write the run to, e.g. --out runs/mine")

@case("outputs", "`evaluate --out '  '` (a blank --out)")
def _(c):
    (c.dir/"data").mkdir()
    evaluate_out_refused(c, features_file(c.dir/"data"/"feats.npz"), "  ", "--out is blank ('  '): give the folder to write the run to")

@case("outputs", "`evaluate feats.npz --out .`: --out is the features file's folder")
def _(c):
    features_file(c.dir/"feats.npz")
    evaluate_out_refused(c, Path("feats.npz"), ".", "--out . is the folder of the input feats.npz")

@case("outputs", "`evaluate --out` the folder of the --base file")
def _(c):
    for d in ("test", "base"): (c.dir/d).mkdir()
    feats, base = features_file(c.dir/"test"/"feats.npz"), features_file(c.dir/"base"/"base.npz")
    evaluate_out_refused(c, feats, str(c.dir/"base"), "is the folder of the input base.npz", "--base", base)

@case("outputs", "`evaluate_features(..., out='')` from Python")
def _(c):
    from fewshot_nb.bench import evaluate_features, Protocol, RunOptions
    (c.dir/"data").mkdir(); feats = features_file(c.dir/"data"/"feats.npz")
    c.baseline()
    c.refused(evaluate_features, feats, "protonet", Protocol(shots=1, n_query=2, n_tasks=5), options=RunOptions(device="cpu"), out="",
              contains="out is empty: give the folder to write the run to, e.g. out='runs/mine'")
    wrote_nothing(c)
    c.happened = "ValueError before any work; nothing written in the current folder"

@case("outputs", "`evaluate_features(feats, out=<its folder>)` from Python")
def _(c):
    from fewshot_nb.bench import evaluate_features, Protocol, RunOptions
    feats = features_file(c.dir/"feats.npz")
    c.baseline()
    c.refused(evaluate_features, feats, "protonet", Protocol(shots=1, n_query=2, n_tasks=5), options=RunOptions(device="cpu"), out=c.dir,
              contains="is the folder of the input feats.npz")
    wrote_nothing(c)
    c.happened = "ValueError before any work; nothing written beside the features"


def copied_notebooks(c:Case) -> Path:
    "`fewshot-nb experiments copy DIR exp_lake_runs` (exit 0): the user's copy of a notebook, in the case's folder."
    c.cli(fewshot_nb_main(), ["experiments", "copy", c.dir/"mine", "exp_lake_runs", "--no-results"], 0, "copied 1 notebooks")
    return c.dir/"mine"

@case("outputs", "`reproduce --notebooks DIR --out DIR` (the executed copy would replace the notebook)")
def _(c):
    nbs = copied_notebooks(c)
    c.baseline()
    c.cli(fewshot_nb_main(), ["reproduce", "exp_lake_runs", "--preset", "smoke", "--notebooks", nbs, "--out", nbs], 2,
          "is the folder of the experiment notebooks (--notebooks)")
    wrote_nothing(c, "the notebooks' folder")
    c.happened = "exit 2 before any run; the source notebook kept as it was, nothing written beside it"

@case("outputs", "`reproduce --out` inside the --notebooks folder")
def _(c):
    nbs = copied_notebooks(c)
    c.baseline()
    c.cli(fewshot_nb_main(), ["reproduce", "exp_lake_runs", "--preset", "smoke", "--notebooks", nbs, "--out", nbs/"runs"], 2,
          "is inside the folder of the experiment notebooks (--notebooks)")
    wrote_nothing(c, "the notebooks' folder")
    c.happened = "exit 2 before any run; nothing written in the notebooks' folder"

@case("outputs", "`reproduce --out ''`")
def _(c):
    nbs = copied_notebooks(c)
    c.baseline()
    c.cli(fewshot_nb_main(), ["reproduce", "exp_lake_runs", "--preset", "smoke", "--notebooks", nbs, "--out", ""], 2,
          "--out is empty: give the folder to write the reproduction to")
    wrote_nothing(c)
    c.happened = "exit 2 before any run; nothing written in the current folder"

@case("outputs", "`experiments copy ''` (an empty DEST)")
def _(c):
    c.baseline()
    c.cli(fewshot_nb_main(), ["experiments", "copy", "", "exp_lake_runs"], 2, "dest is empty: give the folder to write the copies to")
    wrote_nothing(c)
    c.happened = "exit 2; nothing copied into the current folder"

@case("outputs", "`experiments copy --force` into the notebooks' own folder")
def _(c):
    from unittest import mock
    nbs = copied_notebooks(c)   # stands in for the installed notebooks: the command copies from it
    c.baseline()
    with mock.patch("fewshot_nb.bench.experiment.experiments_dir", lambda: nbs):
        c.cli(fewshot_nb_main(), ["experiments", "copy", nbs, "exp_lake_runs", "--force"], 2, "is the folder of the input exp_lake_runs.ipynb")
    wrote_nothing(c, "the notebooks' folder")
    c.happened = "exit 2; the notebooks not copied over themselves"


def sweep_out_refused(c:Case, text:str, contains:str):
    from fewshot_nb.sweep import main
    (c.dir/"sweep.yaml").write_text(text)
    c.baseline()
    c.cli(main, ["run", "sweep.yaml", "--no-progress"], 2, contains)
    wrote_nothing(c)
    c.happened = "fewshot-sweep run: exit 2 before any point; nothing written in the current folder"

@case("outputs", "sweep file with `out_dir: ''`")
def _(c): sweep_out_refused(c, f"notebook: {NBS/'exp_lake_runs.ipynb'}\nout_dir: ''\ngrid: {{n_way: [5]}}\n",
                            "out_dir is empty: give the folder to write the sweep to, e.g. out_dir: runs/sweeps/mine")

@case("outputs", "sweep file with a bare `out_dir:` (null)")
def _(c): sweep_out_refused(c, f"notebook: {NBS/'exp_lake_runs.ipynb'}\nout_dir:\ngrid: {{n_way: [5]}}\n", "out_dir is empty")

@case("outputs", "sweep file whose out_dir is its notebook's folder")
def _(c):
    toy_notebook(c.dir/"exp_toy.ipynb")
    sweep_out_refused(c, "notebook: exp_toy.ipynb\nout_dir: .\ngrid: {a: [1, 2]}\n", "out_dir . is the folder of the input exp_toy.ipynb")

@case("outputs", "every experiment notebook: papermill's `-p out_dir ''` and `-p out_dir '  '`")
def _(c):
    c.baseline()
    said = []
    for nb in sorted(NBS.glob("exp_*.ipynb")):
        cells = json.loads(nb.read_text())["cells"]
        i = next(k for k, x in enumerate(cells) if "parameters" in x.get("metadata", {}).get("tags", []))
        params, setup = "".join(cells[i]["source"]), "".join(cells[i + 1]["source"])
        for value, msg in (("", "parameter 'out_dir' must not be empty, got ''"), ("  ", "parameter 'out_dir' must not be blank (only spaces)")):
            cell = f"# Parameters\nout_dir = {value!r}\n"
            ns = {"__name__": "__main__", "In": ["", params, cell, setup]}
            exec(params, ns); exec(cell, ns)
            try: exec(setup, ns)   # the cell after the parameters: check_parameters, before any work
            except ValueError as e:
                said.append(str(e))
                c.expect(msg in str(e), f"{nb.stem} with out_dir {value!r}: {first_line(e)}")
                continue
            c.problems.append(f"{nb.stem} accepted out_dir {value!r}")
    c.error = first_line(said[0]) if said else ""
    wrote_nothing(c)
    c.happened = f"{len(said)} of {2 * len(list(NBS.glob('exp_*.ipynb')))} refused by the parameters check (`[not empty]`), before any work"

@case("outputs", "papermill run of exp_lake_runs with `-p out_dir ''`, in the case's folder")
def _(c):
    import papermill as pm
    from traitlets.config import Config
    c.baseline()
    sockets = Path(tempfile.mkdtemp(prefix="fsnb-"))   # the kernel's sockets: outside the folder checked
    ipc = Config({"KernelManager": {"transport": "ipc", "ip": str(sockets/"kernel")}})
    try:
        e = c.refused(pm.execute_notebook, str(NBS/"exp_lake_runs.ipynb"), str(c.dir/"run.ipynb"), cwd=str(c.dir), progress_bar=False,
                      config=ipc, parameters=dict(preset="smoke", out_dir=""), contains="parameter 'out_dir' must not be empty, got ''")
    finally: shutil.rmtree(sockets, ignore_errors=True)
    if e is not None: c.error = first_line(f"{e.ename}: {e.evalue}") if hasattr(e, "ename") else c.error
    wrote_nothing(c, but=("run.ipynb",))   # the executed notebook is the one output asked for
    c.happened = "the kernel stopped at the parameters check; no result file written in the current folder"

@case("outputs", "`fetch_data(root='')` from Python")
def _(c):
    from fewshot_nb.cli import fetch_data
    c.baseline()
    c.refused(fetch_data, ["all_runs.zip"], root="", contains="root is empty: give the folder to write the data files to")
    wrote_nothing(c)
    c.happened = "ValueError before any download; nothing written in the current folder"


# -- issue 53: outputs only where the user asked (--out, --notebooks, out_dir) -- (new cases above this line)


# == fault classes (issue 53): finite results, magnitudes, paths, links, staging, copies, messages ==================
def scaled_features(c:Case, name:str, scale:float, **kw) -> Path:
    "A features file of positive values, in float32, multiplied by `scale` (a unit slip in an export)."
    import numpy as np
    x = np.abs(np.random.default_rng(kw.pop("seed", 0)).normal(size=(40, 4))).astype("float32") + 0.1
    return features_file(c.dir/name, features=(x * np.float32(scale)).astype("float32"), **kw)

@case("features", "test and base features scaled by 1e20 (float32) for simpleshot, TIM and LaplacianShot")
def _(c):
    base = scaled_features(c, "base.npz", 1e20, seed=1)
    evaluate_refused(c, scaled_features(c, "feats.npz", 1e20), "feats.npz['features']: features reach", "--base", base,
                     "--methods", "simpleshot,tim,laplacianshot")

@case("features", "test features alone scaled by 1e37 (their squares overflow float32)")
def _(c): evaluate_refused(c, scaled_features(c, "feats.npz", 1e37), "their squares overflow float32", "--base", scaled_features(c, "base.npz", 1, seed=1),
                           "--methods", "simpleshot,tim,laplacianshot")

@case("features", "features scaled by 1e-25 (their squares underflow float32)")
def _(c): evaluate_refused(c, scaled_features(c, "feats.npz", 1e-25), "their squares underflow float32")

@case("features", "in memory: a FeatureSource scaled by 1e37 given to evaluate_features")
def _(c):
    import torch
    from fewshot_nb.bench.evaluate import evaluate_features, Protocol
    from fewshot_nb.data.sources import FeatureSource
    src = FeatureSource(torch.rand(40, 4) * 1e37, [i // 5 for i in range(40)])
    c.baseline()
    c.refused(evaluate_features, src, "protonet", Protocol(shots=1, n_tasks=5, n_query=2), out=c.dir/"mine", contains="the test features: features reach")
    c.expect(not (c.dir/"mine").exists(), "the refused evaluation made its out folder")
    c.happened = "refused before any work, naming the cause and the constant to divide by; out not made"

def degenerate_run(c:Case, feats:Path, contains:str, patch:dict|None=None, *extra):
    "`fewshot-nb evaluate` whose method gives no result (NaN, or a tie for every query): exit 2 naming it, nothing sealed."
    from unittest import mock
    c.baseline()
    with contextlib.ExitStack() as s:
        for target, fn in (patch or {}).items(): s.enter_context(mock.patch(target, fn))
        c.cli(fewshot_nb_main(), ["evaluate", feats, *EVAL, "--out", c.dir/"runs"/"mine", *extra], 2, contains)
    c.expect(not (c.dir/"runs").exists(), "the run that gave no result left its --out folder (or sealed it)")

@case("results", "every item the same vector (a collapsed backbone): every class ties for every query")
def _(c):
    import numpy as np
    degenerate_run(c, features_file(c.dir/"feats.npz", features=np.ones((40, 4), "float32")), "protonet gave every class the same score", None,
                   "--methods", "protonet,simpleshot", "--base", scaled_features(c, "base.npz", 1, seed=1))
    c.happened = "exit 2 naming the method and the cause (no 20% sealed); --out not made"

@case("results", "a method whose scores turn NaN (a diverged solver)")
def _(c):
    from fewshot_nb.solvers.base import ProtoNet
    real = ProtoNet.solve
    degenerate_run(c, features_file(c.dir/"feats.npz"), "protonet gave NaN scores for",
                   {"fewshot_nb.solvers.base.ProtoNet.solve": lambda self, t, g: real(self, t, g) * float("nan")})
    c.happened = "exit 2 naming the method; nothing sealed, --out not made"

@case("results", "a solver whose scores tie only after rounding (all within 1e-5): refused as ties")
def _(c):
    import torch
    from fewshot_nb.solvers.base import ProtoNet
    def near_ties(self, t, g):   # uniform probabilities, split by rounding noise
        p = torch.full((t.query.shape[0], t.query.shape[1], t.n_way), 1 / t.n_way, dtype=t.query.dtype)
        return p + 1e-7 * torch.rand(p.shape, generator=torch.Generator().manual_seed(0), dtype=p.dtype)
    degenerate_run(c, features_file(c.dir/"feats.npz"), "protonet gave every class the same score", {"fewshot_nb.solvers.base.ProtoNet.solve": near_ties})
    c.happened = "exit 2: ties to 1 part in 10,000 are ties; nothing sealed"

def finished_evaluate(c:Case, out:Path) -> Path:
    "A finished `fewshot-nb evaluate` run in `out` (its features file in the case's folder)."
    feats = features_file(c.dir/"feats.npz")
    c.cli(fewshot_nb_main(), ["evaluate", feats, *EVAL, "--out", out], 0, "complete.json")
    return feats

def record_lists(out:Path, *names):
    "Add `names` to the completion record of the run in `out` (sizes and digests of the victim file)."
    from fewshot_nb.run_folders import COMPLETE
    rec = json.loads((out/COMPLETE).read_text())
    rec["files"] |= {n: dict(bytes=9, sha256="0" * 64) for n in names}
    (out/COMPLETE).write_text(json.dumps(rec))

def force_over_bad_record(c:Case, name:str):
    from fewshot_nb.run_folders import check_completion
    out, victim = c.dir/"runs"/"mine", c.dir/"victim.txt"
    feats = finished_evaluate(c, out)
    victim.write_text("precious\n")
    record_lists(out, name if name != "ABSOLUTE" else str(victim))
    c.baseline(); c.allowed |= {str(p.relative_to(c.dir)) for p in out.rglob("*")}
    c.cli(fewshot_nb_main(), ["evaluate", feats, *EVAL, "--out", out, "--force"], 0, "complete.json")
    c.expect(victim.is_file() and victim.read_text() == "precious\n", "the file outside --out that the record listed was deleted")
    c.expect(check_completion(out) == [], "the new run's files do not match its record")
    c.happened = "--force removed the earlier run's own files only: the name outside --out was left alone (logged); the new run finished"

@case("completion", "complete.json listing '../victim.txt', replaced with --force")
def _(c): force_over_bad_record(c, "../../victim.txt")

@case("completion", "complete.json listing an absolute path, replaced with --force")
def _(c): force_over_bad_record(c, "ABSOLUTE")

@case("completion", "complete.json listing a path outside its folder, no --force: reported, not read")
def _(c):
    out = c.dir/"runs"/"mine"
    feats = finished_evaluate(c, out)
    (c.dir/"victim.txt").write_text("precious\n")
    record_lists(out, "../../victim.txt")
    c.baseline()
    c.cli(fewshot_nb_main(), ["evaluate", feats, *EVAL, "--out", out], 2, "complete.json lists '../../victim.txt', which is not a file of this folder")
    c.happened = "exit 2: the record's outside name reported as a problem, the file not read; nothing overwritten"

@case("completion", "a sweep point's record listing '../point.json' and '/etc/hostname'")
def _(c):
    from fewshot_nb.sweep import record_problems, point_state
    folder = c.dir/"points"/"p1"; (folder/"out").mkdir(parents=True)
    (folder/"out"/"results.csv").write_text("metric,value\nacc,1\n"); (folder/"point.json").write_text("{}")
    (folder/"record.json").write_text(json.dumps(dict(status="done", files={"../point.json": dict(bytes=2, sha256="x"), "/etc/hostname": dict(bytes=1, sha256="x")})))
    c.baseline()
    problems = record_problems(folder)
    c.error = first_line(problems[0]) if problems else ""
    c.expect(len(problems) == 2 and all("which is not a file of out/" in p and p.endswith("not read") for p in problems), f"problems: {problems}")
    c.expect(point_state(folder) == "pending", "the point with a record naming outside files counts as done")
    c.happened = "both names reported as problems, neither read; the point is pending (it runs again)"

@case("folders", "a .lock that is a symbolic link to a user's file")
def _(c):
    out, victim = c.dir/"runs"/"mine", c.dir/"victim.txt"
    out.mkdir(parents=True); victim.write_text("precious\n"); (out/".lock").symlink_to(victim)
    c.baseline()
    c.cli(fewshot_nb_main(), ["evaluate", features_file(c.dir/"feats.npz"), *EVAL, "--out", out], 2, "is a symbolic link to")
    c.expect(victim.read_text() == "precious\n", "the link's target was written")
    c.expect(sorted(p.name for p in out.iterdir()) == [".lock"], "the refused run wrote into --out")
    c.happened = "exit 2 before any work: the link named, never opened for writing; its target untouched"

@case("folders", "a .lock that is a folder, not a file")
def _(c):
    out = c.dir/"runs"/"mine"; (out/".lock").mkdir(parents=True); (out/".lock"/"keep.txt").write_text("mine\n")
    c.baseline()
    c.cli(fewshot_nb_main(), ["evaluate", features_file(c.dir/"feats.npz"), *EVAL, "--out", out], 2, "is a folder, not the lock file")
    c.happened = "exit 2 before any work, naming it; the folder kept"

@case("folders", "a run's sub-folder in --out that is a symbolic link (staged_run)")
def _(c):
    from fewshot_nb.run_folders import staged_run
    out, elsewhere = c.dir/"mine", c.dir/"elsewhere"
    out.mkdir(); elsewhere.mkdir(); (elsewhere/"tasks.csv").write_text("precious\n"); (out/"manifests").symlink_to(elsewhere)
    def run():
        with staged_run(out) as stage: (stage/"manifests").mkdir(); (stage/"manifests"/"tasks.csv").write_text("overwrite")
    c.baseline()
    c.refused(run, contains="goes through a symbolic link (manifests -> ")
    c.expect(sorted(p.name for p in out.iterdir()) == ["manifests"], "the refused run left files in its folder")
    c.happened = "refused before any file moved: nothing written through the link, its target kept"

@case("completion", "a run that writes a dot-file and a link: the record covers what it keeps")
def _(c):
    from fewshot_nb.run_folders import staged_run, check_completion, run_files
    out = c.dir/"mine"
    c.baseline()
    with staged_run(out) as stage:
        (stage/"results.csv").write_text("method,acc_pct\nx,1\n"); (stage/".settings.json").write_text("{}")
        (stage/"latest.csv").symlink_to(stage/"results.csv")
    c.allowed |= {str(p.relative_to(c.dir)) for p in out.rglob("*")} | {"mine"}
    kept = sorted(p.name for p in out.iterdir())
    c.expect(kept == [".settings.json", "complete.json", "results.csv"], f"the finished run keeps {kept}")
    c.expect(check_completion(out) == [] and run_files(out) == [".settings.json", "results.csv"], "its record does not list every file it keeps")
    c.happened = "the dot-file listed in the record, the link not kept: nothing in the folder that its record does not cover"

@case("killed", "--out holding the 5 MB staging folder of a dead run (SIGKILL)")
def _(c):
    from fewshot_nb.run_folders import check_completion
    out = c.dir/"runs"/"mine"; dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stage = out/f".staging-{int(dead.stdout)}"; stage.mkdir(parents=True)
    (stage/"tasks.csv").write_bytes(b"0" * (5 << 20)); (out/".lock").write_text('{"pid": %d}' % int(dead.stdout))
    c.baseline(); c.allowed |= {str(p.relative_to(c.dir)) for p in out.rglob("*")}
    c.cli(fewshot_nb_main(), ["evaluate", features_file(c.dir/"feats.npz"), *EVAL, "--out", out], 0, "complete.json")
    c.expect(not list(out.glob(".staging-*")), "the dead run's staging folder is still there")
    c.expect(check_completion(out) == [], "the run's files do not match its record")
    c.allowed |= {str(p.relative_to(c.dir)) for p in out.rglob("*")}
    c.happened = "the next run into --out (holding its lock: no writer alive) removed the dead run's staging folder, then finished"

@case("killed", "evaluate SIGKILLed mid-run, then the next run into the same --out")
def _(c):
    import numpy as np
    from fewshot_nb.run_folders import check_completion
    rng = np.random.default_rng(0)
    feats, out = c.dir/"feats.npz", c.dir/"runs"/"mine"
    np.savez(feats, features=rng.random((600, 32), dtype=np.float32), labels=np.repeat(np.arange(20), 30))
    c.baseline()
    run = subprocess.Popen([str(CLI_BIN), "evaluate", str(feats), "--methods", "tim", "--tasks", "20000", "--out", str(out)],
                           env=os.environ | {"OMP_NUM_THREADS": "1"}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try: wait_for(lambda: bool(list(out.glob(".staging-*/manifest_*"))), 120, "evaluate writing into its staging folder")
    except TimeoutError: run.kill(); raise
    run.kill(); run.communicate(timeout=30)
    left = [p.name for p in out.glob(".staging-*")]
    c.expect(bool(left), "no staging folder to clear (the kill came too late)")
    c.cli(fewshot_nb_main(), ["evaluate", features_file(c.dir/"small.npz"), *EVAL, "--out", out], 0, "complete.json")
    c.expect(not list(out.glob(".staging-*")), f"{left} outlived the killed process")
    c.expect(check_completion(out) == [], "the next run's files do not match its record")
    c.allowed |= {str(p.relative_to(c.dir)) for p in c.dir.rglob("*")} | {"runs"}
    c.happened = f"the killed run left {left[0]} (and its .lock); the next run into --out removed it and finished"

@case("folders", "a failed evaluate whose staging folder cannot be removed: the message says so")
def _(c):
    import errno
    from unittest import mock
    from fewshot_nb.run_folders import check_completion
    feats, out = features_file(c.dir/"feats.npz"), c.dir/"runs"/"mine"
    c.baseline()
    def refused(*a, **kw): raise OSError(errno.EACCES, "Permission denied", str(out/"results.csv"))
    with mock.patch("fewshot_nb.bench.evaluate.save_csv", refused), mock.patch("fewshot_nb.run_folders.shutil.rmtree"):
        c.cli(fewshot_nb_main(), ["evaluate", feats, *EVAL, "--out", out], 1, f"it left .staging-{os.getpid()} in {out}, which could not be removed")
    shown = c.error
    c.expect("nothing half-written was kept" not in shown, "the message claims nothing was kept")
    c.cli(fewshot_nb_main(), ["evaluate", feats, *EVAL, "--out", out], 0, "complete.json")
    c.error = shown
    c.expect(not list(out.glob(".staging-*")) and check_completion(out) == [], "the retry did not clear the staging folder or finish")
    c.allowed |= {str(p.relative_to(c.dir)) for p in c.dir.rglob("*")} | {"runs"}
    c.happened = "exit 1 naming the folder left behind (not 'nothing was kept'); the next run into --out removed it and finished"

def copy_cli(c:Case, dest:Path, code:int, contains:str, *names):
    return c.cli(fewshot_nb_main(), ["experiments", "copy", dest, *names], code, contains)

def copy_failing_at(c:Case, n:int, exc, code:int, contains:str):
    "`experiments copy` of every notebook into a folder holding a user's file, the n-th copied file failing with `exc(its path)`; then the retry."
    from unittest import mock
    dest = c.dir/"experiments"; dest.mkdir(); (dest/"notes.txt").write_text("the user's\n")
    real, calls = shutil.copyfile, []
    def fails(s, d, *a, **kw):
        calls.append(d)
        if len(calls) == n:
            Path(d).write_bytes(b"half"); raise exc(d)
        return real(s, d, *a, **kw)
    c.baseline()
    with mock.patch.object(shutil, "copyfile", fails): copy_cli(c, dest, code, contains)
    shown = c.error
    c.expect(sorted(p.name for p in dest.iterdir()) == ["notes.txt"], f"the failed copy left {sorted(p.name for p in dest.iterdir())}")
    c.expect(len(calls) == n, f"the copy went on after the failure ({len(calls)} files)")
    copy_cli(c, dest, 0, "copied")   # the same command again, without --force
    c.error = shown
    c.allowed |= {str(p.relative_to(c.dir)) for p in dest.rglob("*")}
    return dest

@case("disk", "`experiments copy` on a full disk at file 69 of 251, then the same command")
def _(c):
    import errno
    copy_failing_at(c, 69, lambda d: OSError(errno.ENOSPC, "No space left on device", str(d)), 1, "nothing of it was kept in")
    c.happened = "exit 1: nothing of the copy left (staged, then renamed), and the message says so; the retry ran without --force"

@case("killed", "Ctrl-C during `experiments copy` (at file 10), then the same command")
def _(c):
    copy_failing_at(c, 10, lambda d: KeyboardInterrupt(), 130, "interrupted; nothing of it was kept in")
    c.happened = "exit 130: nothing of the copy left; the retry ran without --force"

@case("disk", "`experiments copy` onto a real full disk (a 24 MB file system, 16 MB taken), then once there is room")
def _(c):
    import shlex
    d = c.dir/"small_disk"; d.mkdir(); c.baseline()
    q = lambda p: shlex.quote(str(p))
    r = in_private_mounts(f"mount -t tmpfs -o size=24m tmpfs {q(d)} && head -c 16777216 /dev/zero > {q(d/'filler')}; "   # the experiments (10 MB) fit only without the filler
                          f"{q(CLI_BIN)} experiments copy {q(d/'exps')}; echo exit=$?; echo left:; find {q(d)} -mindepth 1; echo :left; "
                          f"rm {q(d/'filler')}; {q(CLI_BIN)} experiments copy {q(d/'exps')}; echo retry=$?")
    if r is None:
        c.happened = "not tried: no private mount namespace on this machine (the simulated full disk is the case above)"
        return
    c.error = said_line(r.stderr)
    left = r.stdout.split("left:", 1)[-1].split(":left", 1)[0].split()
    c.expect("exit=1" in r.stdout, f"the full disk gave {r.stdout.split('left:')[0].strip()[-8:]}, expected exit=1")
    c.expect("No space left on device" in r.stderr and "nothing of it was kept" in r.stderr, "the message does not say the disk is full and nothing was kept")
    c.expect(left == [str(d/"filler")], f"the failed copy left {[l for l in left if not l.endswith('filler')][:5]}")
    c.expect("retry=0" in r.stdout, "the retry once there was room did not finish: " + r.stderr[-300:])
    c.happened = "exit 1, nothing of the copy left on the disk, said so; the same command with room (no --force) finished"

@case("sizes", "an .npz whose compressed array declares 8 GB, with the memory to allocate it")
def _(c):
    import zipfile, numpy as np
    f = c.dir/"huge.npz"
    with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_DEFLATED) as z:   # 8 GB declared, 64 KB of zeros behind it
        with z.open("features.npy", "w", force_zip64=True) as m:
            b = io.BytesIO(); np.lib.format.write_array_header_1_0(b, dict(descr="<f4", fortran_order=False, shape=(2_000_000_000,)))
            m.write(b.getvalue()); m.write(bytes(1 << 16))
        b = io.BytesIO(); np.save(b, np.arange(40)); z.writestr("labels.npy", b.getvalue())
    os.environ["FEWSHOT_MAX_MEMORY_GB"] = "1000"   # as on a large node: the size guard on memory lets it pass
    try: evaluate_refused(c, f, "huge.npz['features'], a (2000000000,) float32 array, declares 8,000,000,000 bytes (7.5 GB) but its member expands to")
    finally: del os.environ["FEWSHOT_MAX_MEMORY_GB"]
    c.happened = "exit 2 before reading it: the file, the array, its declared size and why (its member expands to 64 KB)"

@case("sizes", "an .npz array the allocator refuses (MemoryError), though it passed the size guard")
def _(c):
    import numpy as np
    from unittest import mock
    f = features_file(c.dir/"feats.npz")
    with mock.patch.object(np.lib.npyio.NpzFile, "__getitem__", side_effect=MemoryError("Unable to allocate 640 B")):
        evaluate_refused(c, f, "feats.npz['features'], a (40, 4) float32 array of 0.00 GB by its header, could not be allocated")

def cli_refused(c:Case, argv:list, contains:str, main=None):
    c.baseline()
    c.cli(main or fewshot_nb_main(), argv, 2, contains)
    c.expect(sorted(p.name for p in c.dir.iterdir() if p.name != "cache") == sorted(p.rsplit("/", 1)[-1] for p in c._base if "/" not in p and p != "cache"),
             "the refused command wrote something")
    c.happened = "usage error, exit 2, before any work"

@case("cli", "`evaluate --dirichlet inf`")
def _(c): cli_refused(c, ["evaluate", features_file(c.dir/"f.npz"), *EVAL, "--dirichlet", "inf", "--out", c.dir/"o"], "argument --dirichlet: must be a finite number > 0, got 'inf'")

@case("cli", "`evaluate --dirichlet nan` and `--dirichlet -2`")
def _(c):
    cli_refused(c, ["evaluate", features_file(c.dir/"f.npz"), *EVAL, "--dirichlet", "nan", "--out", c.dir/"o"], "must be a finite number > 0, got 'nan'")
    c.cli(fewshot_nb_main(), ["evaluate", c.dir/"f.npz", *EVAL, "--dirichlet", "-2", "--out", c.dir/"o"], 2, "must be a finite number > 0, got '-2'")

@case("cli", "`evaluate --tasks 0` and `--seed -1`")
def _(c):
    cli_refused(c, ["evaluate", features_file(c.dir/"f.npz"), *EVAL, "--tasks", "0", "--out", c.dir/"o"], "argument --tasks: must be >= 2 (n_tasks), got 0")
    c.cli(fewshot_nb_main(), ["evaluate", c.dir/"f.npz", *EVAL, "--seed", "-1", "--out", c.dir/"o"], 2, "argument --seed: must be >= 0, got -1")

@case("cli", "`reproduce --slurm-time 0` and `--slurm-gpus -1`")
def _(c):
    cli_refused(c, ["reproduce", "--out", c.dir/"r", "--executor", "slurm", "--slurm-time", "0", "--plan"], "argument --slurm-time: must be >= 1 (minutes), got 0")
    c.cli(fewshot_nb_main(), ["reproduce", "--out", c.dir/"r", "--executor", "slurm", "--slurm-gpus", "-1", "--plan"], 2, "argument --slurm-gpus: must be >= 0, got -1")

@case("sweep", "`fewshot-sweep run --threads 0`")
def _(c): sweep_cli(c, f"notebook: {NBS/'exp_lake_runs.ipynb'}\nout_dir: {c.dir/'out'}\ngrid: {{n_way: [5]}}\n", 2, "threads must be >= 1, got 0", "--threads", "0")

@case("sweep", "sweep file drawing from uniform: [0, .inf]")
def _(c): sweep_cli(c, f"notebook: {NBS/'exp_lake_runs.ipynb'}\nout_dir: {c.dir/'out'}\nsearch: {{n_tasks: {{uniform: [0, .inf]}}}}\nn_configs: 2\n",
                    2, "finite numbers, got [0, inf]")

@case("sweep", "sweep file with a Slurm timeout_min of -5")
def _(c): sweep_cli(c, f"notebook: {NBS/'exp_lake_runs.ipynb'}\nout_dir: {c.dir/'out'}\ngrid: {{n_way: [5]}}\nexecutor: {{kind: slurm, slurm: {{timeout_min: -5}}}}\n",
                    2, "the Slurm option timeout_min must be >= 1, got -5")

@case("parameters", "exp_training_run: epochs = inf (a float parameter [above 0])")
def _(c): refused_parameters(c, "epochs = float('inf')\n", "parameter 'epochs' must be float, got inf (float): a float parameter takes a finite number",
                             "exp_training_run.ipynb")

@case("parameters", "exp_training_run: lr_gamma = nan")
def _(c): refused_parameters(c, "lr_gamma = float('nan')\n", "parameter 'lr_gamma' must be float, got nan (float): a float parameter takes a finite number",
                             "exp_training_run.ipynb")

@case("sizes", "FEWSHOT_MAX_MEMORY_GB=inf (and -1): a memory limit that is no number of gigabytes")
def _(c):
    f = features_file(c.dir/"feats.npz")
    for bad in ("inf", "-1"):
        os.environ["FEWSHOT_MAX_MEMORY_GB"] = bad
        try: evaluate_refused(c, f, f"FEWSHOT_MAX_MEMORY_GB must be a number of gigabytes > 0, got '{bad}'")
        finally: del os.environ["FEWSHOT_MAX_MEMORY_GB"]


@case("data", "FEWSHOT_DATA and FEWSHOT_CACHE of spaces: a folder named '  ' in the current one, never meant")
def _(c):
    for var, argv, remedy in (("FEWSHOT_DATA", ["data", "verify", "small"], "the data files to, e.g. FEWSHOT_DATA=../shared/data"),
                              ("FEWSHOT_CACHE", ["data", "where"], "decoded arrays to, e.g. FEWSHOT_CACHE=/scratch/fewshot_cache")):
        old = os.environ.get(var); os.environ[var] = "  "
        try: cli_refused(c, argv, f"${var} is blank ('  '): give the folder to write {remedy}, or unset it for the per-user folder")
        finally:
            if old is None: del os.environ[var]
            else: os.environ[var] = old
        c.expect(not Path("  ").exists() and not (c.dir/"  ").exists(), "a folder named '  ' was made")

# -- issue 53: fault classes (finite results, magnitudes, paths, links, staging, copies, messages) -- (new cases above this line)


# -- the report ---------------------------------------------------------------------------------------------------
def run_case(n:int, group:str, name:str, fn, base:Path, shared:dict) -> Case:
    "Run one case in its own folder, then check what it lost, duplicated, left behind or left running."
    c = Case(n, group, name, base/f"case{n:02d}")
    c.dir.mkdir()
    mark = f"{base.name}-{n}"
    os.environ[MARK], os.environ["FEWSHOT_CACHE"] = mark, str(c.dir/"cache")
    cwd = os.getcwd(); os.chdir(c.dir)
    t0 = time.time()
    try: fn(c)
    except Exception as e:
        c.problems.append(f"the case itself failed: {type(e).__name__}: {first_line(e)}")
        c.happened = c.happened or "the case could not run"
        if os.environ.get("FAULT_REPORT_DEBUG"): traceback.print_exc()
    finally: os.chdir(cwd)
    c.seconds = time.time() - t0
    t0 = time.time()   # left running: the case's processes, given a few seconds to notice that their parent is gone
    while marked(mark) and time.time() - t0 < 15: time.sleep(0.2)
    c.running += marked(mark)
    for proc in marked(mark):   # reported, then stopped: a report leaves nothing running either
        with contextlib.suppress(OSError): os.kill(int(proc.split()[0]), signal.SIGKILL)
    after = state(c.dir)
    for p, h in c._base.items():   # lost: what was there after the case's set-up
        if p in c.allowed: continue
        if p not in after: c.lost.append(f"{p} gone")
        elif h is not None and after[p] != h: c.lost.append(f"{p} changed")
    for p, h in after.items():     # left behind: new empty folders, temporary and lock files
        if p in c._base or p in c.allowed: continue   # (allowed: what the case made on purpose, e.g. another process's folder)
        if h is None and not any((c.dir/p).iterdir()): c.left.append(f"{p}/ (empty)")
        elif h is not None and (p.endswith(".tmp") or p.endswith(".lock")): c.left.append(p)
    for rel, (path, stamp) in shared.items():   # the shared data folder: never written
        if not path.is_file(): c.lost.append(f"FEWSHOT_DATA/{rel} gone")
        elif (path.stat().st_size, path.stat().st_mtime_ns) != stamp: c.lost.append(f"FEWSHOT_DATA/{rel} changed")
    c.handled = not (c.problems or c.lost or c.duplicated or c.left or c.running)
    return c


def cell(text, width:int) -> str:
    text = str(text).replace("|", "/").replace("\n", " ").strip()
    return text if len(text) <= width else text[:width - 3] + "..."


def row(c:Case) -> str:
    said = lambda xs: "no" if not xs else "; ".join(xs)
    happened = c.happened if c.handled else f"NOT HANDLED: {'; '.join(c.problems) or 'see the last four columns'} ({c.happened})"
    return (f"| {c.n} | {cell(f'[{c.group}] {c.name}', 70)} | {cell(happened, 110)} | {cell(c.error or '-', 110)} | {cell(said(c.lost), 60)} "
            f"| {cell(said(c.duplicated), 60)} | {cell(said(c.left), 60)} | {cell(said(c.running), 60)} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="fault_report.py", description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-k", action="append", default=[], metavar="WORD", help="only the cases whose group or name contains WORD (repeatable)")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    a = ap.parse_args(argv)
    chosen = [(g, n, f) for g, n, f in CASES if not a.k or any(w.lower() in f"{g} {n}".lower() for w in a.k)]
    if a.list:
        for i, (g, n, _) in enumerate(chosen, 1): print(f"{i:2d}. [{g}] {n}")
        return 0
    if not os.environ.get("FEWSHOT_DATA"):
        guess = ROOT.parent/"shared"/"data"
        if not guess.is_dir(): print("fault_report.py: set FEWSHOT_DATA to the project's data folder", file=sys.stderr); return 2
        os.environ["FEWSHOT_DATA"] = str(guess)
    os.environ["FEWSHOT_DATA"] = str(Path(os.environ["FEWSHOT_DATA"]).resolve())
    os.environ.setdefault("OMP_NUM_THREADS", "1"); os.environ["FEWSHOT_PROGRESS"] = "0"
    import logging, warnings
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    import torch; torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    logging.getLogger("fewshot_nb").setLevel(logging.ERROR)   # the report shows each case's error, not the library's log
    shared_root = data_dir()
    files = {str(p.relative_to(shared_root)): p for p in sorted(shared_root.rglob("*")) if p.is_file()}
    shared = {k: (p, (p.stat().st_size, p.stat().st_mtime_ns)) for k, p in files.items()}
    digests = {k: hashlib.md5(p.read_bytes()).hexdigest() for k, p in files.items()}
    base = Path(tempfile.mkdtemp(prefix="faults-"))
    t_start = time.time()
    print(f"fault report: {len(chosen)} cases (scratch folder {base})\n", flush=True)
    print("| # | case | what happened | error shown | lost | duplicated | left behind | left running |")
    print("|---|---|---|---|---|---|---|---|", flush=True)
    cases = []
    for n, (g, name, fn) in enumerate(chosen, 1):
        cases.append(run_case(n, g, name, fn, base, shared))
        print(row(cases[-1]), flush=True)
    changed = [k for k, p in files.items() if not p.is_file() or hashlib.md5(p.read_bytes()).hexdigest() != digests[k]]
    if changed and cases and not any(l.startswith("FEWSHOT_DATA/") for c in cases for l in c.lost):
        cases[-1].lost += [f"FEWSHOT_DATA/{k} changed" for k in changed]; cases[-1].handled = False
    if a.keep: print(f"\nscratch folder kept: {base}")
    else: shutil.rmtree(base, ignore_errors=True)
    n, handled = len(cases), sum(c.handled for c in cases)
    lost, running = sum(bool(c.lost) for c in cases), sum(bool(c.running) for c in cases)
    slow = sorted(cases, key=lambda c: -c.seconds)[:3]
    print(f"\n{n} cases in {time.time() - t_start:.0f} s ({', '.join(f'{g}: {sum(c.group == g for c in cases)}' for g in dict.fromkeys(c.group for c in cases))}); "
          f"slowest: {', '.join(f'#{c.n} {c.seconds:.0f} s' for c in slow)}")
    print(f"faults: {n} tried, {handled} handled, {lost} lost, {running} left running")
    return 0 if n and handled == n and lost == 0 and running == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
