"""The library's public face: what each subpackage exports, and the one registry convention.

- `import fewshot_nb.solvers` (or any part of it) registers every solver, in a fresh interpreter, with nothing else
  imported first; `import fewshot_nb` stays light (no subpackage, no torch).
- Every subpackage's `__init__` re-exports the public names of *each* module of its folder: its `__all__` is the
  union of the modules' `__all__` (a module forgotten in the `__init__` fails here), no two modules export one name,
  and every name resolves to the module's own object.
- Every registry of the library is a `fewshot_nb.core.Registry`, with `make_<kind>(name, **kwargs)` and
  `list_<kind>s()` beside it; an unknown name is refused with the known ones.
- The defaults a name builds are the tuned ones: `AlphaTIM()` predicts what the paper's public code predicted with its
  tuned α, on the fixture of that code's outputs.
"""
import importlib, inspect, os, pkgutil, re, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT/"fewshot_nb"
SUBPACKAGES = sorted(p.parent.name for p in PKG.glob("*/__init__.py"))
EXPECTED_REGISTRIES = {"SOLVERS", "BACKBONES", "PROBLEM_FAMILIES", "GENERATORS", "REGIMES", "BONGARD_METHODS", "SPLITS"}   # at least these


def fresh(code:str) -> str:
    "Run `code` in a new interpreter (the project's), return its stdout; fail with its stderr."
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def test_subpackages_are_the_expected_ones():
    assert SUBPACKAGES == ["bench", "bongard", "data", "generation", "solvers", "training"], SUBPACKAGES


def test_solvers_in_a_fresh_interpreter():
    out = fresh("import sys\n"
                "from fewshot_nb.solvers import TIM, AlphaTIM, make_solver, list_solvers\n"
                "s = make_solver('tim')\n"
                "assert type(s) is TIM and s.name == 'tim', s\n"
                "assert type(make_solver('alpha-tim')) is AlphaTIM\n"
                "assert 'fewshot_nb.bench.classification' not in sys.modules   # nothing imported for its side effect\n"
                "print(','.join(list_solvers()))")
    names = out.strip().split(",")
    assert set(names) >= {"protonet", "simpleshot", "baseline", "baseline++", "entropy-min", "tim", "alpha-tim",
                          "pt-map", "laplacianshot", "bd-cspn", "lr+ici", "versa", "sib"}, names


def test_one_module_registers_every_solver():
    "Importing only the module of the registry (as the benches do) fills it with the solvers of every module."
    out = fresh("from fewshot_nb.solvers.base import make_solver, list_solvers\n"
                "print(type(make_solver('pt-map')).__module__, len(list_solvers()))")
    module, n = out.split()
    assert module == "fewshot_nb.solvers.transductive" and int(n) >= 13, out


def test_top_level_import_is_light():
    out = fresh("import sys, fewshot_nb\n"
                "print(fewshot_nb.__version__, sorted(m for m in sys.modules if m.startswith('fewshot_nb.')), 'torch' in sys.modules)")
    assert out.split(" ", 1)[1].strip() == "[] False", out


def test_cli_help_and_version_import_nothing_heavy():
    """Issue 46: `fewshot-nb --version` and `--help` (and a command's --help) answer without importing torch, pandas or
    the library's data modules; `tools/bench_cli_startup.py` measures the time."""
    for args in (["--version"], ["--help"], ["evaluate", "--help"], ["reproduce", "--help"]):
        out = fresh("import sys\nfrom fewshot_nb.cli import main\ntry: main(" + repr(args) + ")\nexcept SystemExit: pass\n"
                    "print('HEAVY', sorted(m for m in ('torch', 'pandas', 'numpy', 'fewshot_nb.core', 'fewshot_nb.data') if m in sys.modules))")
        assert out.strip().splitlines()[-1] == "HEAVY []", (args, out[-500:])


def modules_of(sub:str) -> list[str]:
    "The modules of a subpackage's folder (every `.py` file but `__init__`)."
    return sorted(m.name for m in pkgutil.iter_modules([str(PKG/sub)]))


FACE_MAX = 25   # a face is what a user starts from, not the package's every name


@pytest.mark.parametrize("sub", SUBPACKAGES)
def test_face_is_curated(sub):
    """A subpackage's `__init__` is its face: at most FACE_MAX names, each one object of one of its modules, `__all__`
    exactly what `import *` gives; every module of the folder is imported (so that importing any part registers all)."""
    pkg = importlib.import_module(f"fewshot_nb.{sub}")
    mods = {m: importlib.import_module(f"fewshot_nb.{sub}.{m}") for m in modules_of(sub)}
    assert isinstance(pkg.__all__, list) and 0 < len(pkg.__all__) <= FACE_MAX, (sub, len(pkg.__all__))
    assert len(pkg.__all__) == len(set(pkg.__all__)), "duplicate names in __all__"
    for n in pkg.__all__:
        owners = [m for m, mod in mods.items() if n in getattr(mod, "__all__", [])]
        assert len(owners) == 1 and getattr(pkg, n) is getattr(mods[owners[0]], n), f"fewshot_nb.{sub}.{n}: exported by {owners}"
    text = (PKG/sub/"__init__.py").read_text()
    m = re.search(r"^from \. import (.+)$", text, re.M)
    assert m and set(m.group(1).split(", ")) == set(mods), f"fewshot_nb/{sub}/__init__.py must import every module: {sorted(mods)}"
    ns = {}; exec(f"from fewshot_nb.{sub} import *", ns)
    assert set(ns) - {"__builtins__"} == set(pkg.__all__)


@pytest.mark.parametrize("sub", SUBPACKAGES)
def test_modules_of_a_subpackage_export_distinct_names(sub):
    owner = {}
    for m in modules_of(sub):
        mod = importlib.import_module(f"fewshot_nb.{sub}.{m}")
        assert isinstance(getattr(mod, "__all__", None), list), f"fewshot_nb.{sub}.{m} has no __all__"
        for n in mod.__all__:
            assert n not in owner, f"fewshot_nb.{sub}: {n!r} is exported by both {owner[n]} and {m}: rename one"
            assert n not in modules_of(sub), f"fewshot_nb.{sub}.{m} exports {n!r}, the name of a module of the package"
            owner[n] = m


def test_faces_hold_what_is_imported_through_them():
    "Every `from fewshot_nb.<subpackage> import X` in the README, notebooks, tools and tests names a module or a name of the face."
    import json as _json
    pat = re.compile(r"from fewshot_nb\.(" + "|".join(SUBPACKAGES) + r") import ([\w, ()]+)")
    texts = [(ROOT/"README.md").read_text()] + [p.read_text() for p in (ROOT/"tools").glob("*.py")] + \
            [p.read_text() for p in (ROOT/"tests").glob("*.py") if p.name != "test_api.py"]
    for nb in (ROOT/"nbs").rglob("*.ipynb"):
        texts += ["".join(c["source"]) for c in _json.loads(nb.read_text())["cells"]]
    bad, seen = [], 0
    for t in texts:
        for sub, names in pat.findall(t):
            pkg = importlib.import_module(f"fewshot_nb.{sub}")
            for n in (x.strip(" ()").split(" as ")[0] for x in names.split(",")):
                seen += 1
                if n and n not in pkg.__all__ and n not in modules_of(sub): bad.append(f"fewshot_nb.{sub}: {n}")
    assert seen and not bad, f"imported through a face that does not hold them: {sorted(set(bad))}"


def _module_imports_of_face_names(code:str) -> list[str]:
    "The `from fewshot_nb.<subpackage>.<module> import X` in `code` whose X is a name of that subpackage's face."
    import ast
    try: tree = ast.parse(re.sub(r"^\s*[%!].*$", "", code, flags=re.M))
    except SyntaxError: return []
    bad = []
    for n in ast.walk(tree):
        parts = (n.module or "").split(".") if isinstance(n, ast.ImportFrom) else []
        if len(parts) >= 3 and parts[0] == "fewshot_nb" and parts[1] in SUBPACKAGES:
            face = importlib.import_module(f"fewshot_nb.{parts[1]}").__all__
            bad += [f"from {n.module} import {a.name}" for a in n.names if a.name in face]
    return bad


def test_docs_and_experiments_import_through_the_faces():
    """A name of a subpackage's face is imported through the face (`from fewshot_nb.data import load_omniglot`), in the
    README and in every notebook cell a reader runs; the library's own code (export cells) imports from modules, and a
    name that is not in a face is imported from its module."""
    import json as _json
    assert _module_imports_of_face_names("from fewshot_nb.data.omniglot import load_omniglot, data_root") == \
        ["from fewshot_nb.data.omniglot import load_omniglot"]   # the check can fail
    bad = []
    readme = (ROOT/"README.md").read_text()
    for block in re.findall(r"```python\n(.*?)```", readme, re.S): bad += [f"README.md: {b}" for b in _module_imports_of_face_names(block)]
    for nb in sorted((ROOT/"nbs").rglob("*.ipynb")):
        if {"results", "runs"} & set(nb.relative_to(ROOT/"nbs").parts): continue
        for i, c in enumerate(_json.loads(nb.read_text())["cells"]):
            src = "".join(c["source"])
            if c["cell_type"] == "code" and not re.match(r"#\|\s*export", src): codes = [src]
            else: codes = re.findall(r"```python\n(.*?)```", src, re.S) if c["cell_type"] == "markdown" else []
            bad += [f"{nb.relative_to(ROOT)} cell {i}: {b}" for code in codes for b in _module_imports_of_face_names(code)]
    assert not bad, "import these through the subpackage's face:\n" + "\n".join(bad)


def test_init_files_are_hand_written():
    "nbdev-export leaves an existing __init__.py alone; ours say so, and carry no nbdev header that would invite a rewrite."
    for sub in SUBPACKAGES:
        text = (PKG/sub/"__init__.py").read_text()
        assert "Written by hand" in text and "AUTOGENERATED" not in text, sub


def registries() -> dict:
    "name -> (Registry, module) of every registry of the library (found by type, in every module of every subpackage)."
    from fewshot_nb.core import Registry
    found = {}
    for sub in SUBPACKAGES:
        for m in modules_of(sub):
            mod = importlib.import_module(f"fewshot_nb.{sub}.{m}")
            for name in mod.__all__:
                obj = getattr(mod, name)
                if isinstance(obj, Registry) and name not in found: found[name] = (obj, mod)
    return found


def kind_functions(var:str) -> tuple[str, str]:
    "`make_<kind>` and `list_<kind>s` for a registry named `var` (SOLVERS: make_solver, list_solvers)."
    plural = var.lower()
    single = plural[:-3] + "y" if plural.endswith("ies") else plural[:-1]
    return f"make_{single}", f"list_{plural}"


def test_every_registry_follows_the_convention():
    regs = registries()
    assert EXPECTED_REGISTRIES <= set(regs), f"missing registries: {EXPECTED_REGISTRIES - set(regs)}; found {sorted(regs)}"
    for var, (reg, mod) in regs.items():
        make, lst = kind_functions(var)
        assert callable(getattr(mod, make, None)) and callable(getattr(mod, lst, None)), \
            f"{mod.__name__}.{var} has no {make}(name, **kwargs) or {lst}() beside it"
        params = inspect.signature(getattr(mod, make)).parameters
        assert list(params)[0] == "name", f"{make} must take the name first"
        names = getattr(mod, lst)()
        assert names == reg.names() == sorted(names) and names, (var, names)
        for n in names: assert callable(reg.get(n)), (var, n)          # lazy entries import
        required = {k: None for k, p in list(params.items())[1:]       # e.g. make_dataset's root: not looked at before the name
                    if p.default is p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        with pytest.raises(ValueError) as e: getattr(mod, make)("no-such-entry", **required)
        msg = str(e.value)
        assert f"unknown {reg.kind} 'no-such-entry'" in msg and ", ".join(names) in msg, msg


def test_every_solver_class_is_registered_under_its_name():
    "A solver class with its own `name` and no decorator (or a decorator with another name) fails here."
    import fewshot_nb.solvers as s
    classes = {c for n in s.__all__ if inspect.isclass(c := getattr(s, n)) and issubclass(c, s.Solver) and c is not s.Solver and "name" in vars(c)}
    assert len(classes) >= 13
    for c in classes: assert s.SOLVERS.get(c.name) is c, f"{c.__name__} (name {c.name!r}) is not registered under its name"
    for n in s.list_solvers():
        solver = s.make_solver(n)
        assert solver.name == n and solver.config()["method"] == n


FIXTURE = Path(os.environ.get("FEWSHOT_FIXTURES") or ROOT.parent/"shared"/"fixtures")/"rt_reference.npz"

def test_alpha_tim_default_is_the_public_codes_tuned_alpha():
    "`AlphaTIM()` with no argument predicts what the public code (its tuned α: 2 at 1 shot, 7 at 5) predicted, task by task."
    if not FIXTURE.exists():
        msg = f"reference fixture {FIXTURE} not found: set FEWSHOT_FIXTURES (see tests/test_reference_fixture.py)"
        if os.environ.get("CI"): pytest.fail(msg, pytrace=False)
        pytest.skip(msg)
    import numpy as np, torch
    from fewshot_nb.solvers import AlphaTIM
    with np.load(FIXTURE) as z: ref = {k: z[k] for k in z.files}
    threads = torch.get_num_threads(); torch.set_num_threads(1)
    try:
        for shot in (1, 5):
            S = f"{shot}shot"
            xs, xq = torch.from_numpy(ref[f"{S}_x_s"]), torch.from_numpy(ref[f"{S}_x_q"])
            ys, yq = (torch.from_numpy(ref[f"{S}_y_{k}"]).squeeze(-1).long() for k in "sq")
            correct = (AlphaTIM()(xs, ys, xq, n_way=5).argmax(-1) == yq).sum(1).numpy()
            expected = np.rint(ref[f"{S}_alpha_tim_acc"] * yq.shape[1]).astype(int)
            assert (correct == expected).all(), f"{shot}-shot: {(correct != expected).sum()} of {len(expected)} tasks differ"
    finally: torch.set_num_threads(threads)
