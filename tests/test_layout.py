"""The package's import graph: imports run one way (each module imports only modules whose notebooks come
earlier in the numbering), no private name crosses a module boundary, and the solvers never need the trainer."""
import ast, json, re
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT/"fewshot_nb"


def _notebook_order() -> dict[str, tuple]:
    "module name -> sort key of the notebook that exports it (its number, e.g. '31' for solvers/31_base)."
    order = {}
    for nb in (ROOT/"nbs").rglob("*.ipynb"):
        m = re.search(r"#\| default_exp ([\w.]+)", nb.read_text())
        if m and re.match(r"\d", nb.name): order[m.group(1)] = nb.name.split("_")[0]
    return order


ORDER = _notebook_order()


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    "(absolute module imported from fewshot_nb, names imported) for every import of the package in `path`."
    mod = path.relative_to(ROOT).with_suffix("").parts
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:   # relative: resolve against the module's package
                base = list(mod[:-node.level]) if node.level <= len(mod) else []
                target = ".".join(base + ([node.module] if node.module else []))
            elif node.module and node.module.startswith("fewshot_nb"): target = node.module
            else: continue
            out.append((target.removeprefix("fewshot_nb").lstrip("."), [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            out += [(a.name.removeprefix("fewshot_nb").lstrip("."), []) for a in node.names if a.name.startswith("fewshot_nb.")]
    return out


MODULES = sorted(p for p in PKG.rglob("*.py") if p.name not in ("__init__.py", "_modidx.py"))
NAME = {p: ".".join(p.relative_to(PKG).with_suffix("").parts) for p in MODULES}


def test_every_module_comes_from_a_numbered_notebook():
    missing = [NAME[p] for p in MODULES if NAME[p] not in ORDER]
    assert not missing, f"modules without a numbered notebook exporting them: {missing}"


@pytest.mark.parametrize("path", MODULES, ids=[NAME[p] for p in MODULES])
def test_imports_run_one_way(path):
    me = NAME[path]
    for target, names in _imports(path):
        if target == "" or target not in ORDER: continue     # the package itself / a subpackage's __init__
        assert ORDER[target] < ORDER[me], (f"{me} (notebook {ORDER[me]}) imports {target} (notebook {ORDER[target]}): "
                                           "a module may import only from notebooks numbered before its own")
        private = [n for n in names if n.startswith("_")]
        assert not private, f"{me} imports private names {private} from {target}: make them public or keep them local"


INITS = sorted(PKG.rglob("__init__.py"))


def _module_name(path:Path) -> str:
    "'bench.experiment' for fewshot_nb/bench/experiment.py, 'bench' for fewshot_nb/bench/__init__.py, '' for the package's."
    parts = path.relative_to(PKG).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _runtime_edges(path:Path) -> set[str]:
    """The modules of the package that importing `path` runs, imports inside functions included: each module imported,
    the package `__init__`s above it (Python runs them first), and a submodule named in `from package import name`.
    The packages that hold `path` itself are left out: Python has run them before it."""
    known = {_module_name(p) for p in MODULES + INITS}
    me, out = _module_name(path), set()
    is_init = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = me.split(".") if me else []
                base = base if is_init else base[:-1]
                base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
                target = ".".join(base + ([node.module] if node.module else []))
            elif node.module and (node.module == "fewshot_nb" or node.module.startswith("fewshot_nb.")):
                target = node.module.removeprefix("fewshot_nb").lstrip(".")
            else: continue
            targets = [target] + [f"{target}.{a.name}".lstrip(".") for a in node.names if f"{target}.{a.name}".lstrip(".") in known]
        elif isinstance(node, ast.Import):
            targets = [a.name.removeprefix("fewshot_nb").lstrip(".") for a in node.names if a.name == "fewshot_nb" or a.name.startswith("fewshot_nb.")]
        else: continue
        for t in targets:
            parts = t.split(".") if t else []
            out |= {".".join(parts[:i]) for i in range(1, len(parts) + 1)}   # the packages above, then the module itself
    own = {".".join(me.split(".")[:i]) for i in range(1, len(me.split(".")))} if me else set()   # run before this module anyway
    return {t for t in out if t in known and t != me and t not in own}


GRAPH = {_module_name(p): _runtime_edges(p) for p in MODULES + INITS if _module_name(p)}


def _cycles(graph:dict[str, set[str]]) -> list[list[str]]:
    "The strongly connected components of more than one node (Tarjan), each a circle of imports."
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]
    def visit(v):
        index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
        for w in graph.get(v, ()):
            if w not in index: visit(w); low[v] = min(low[v], low[w])
            elif w in on: low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v: break
            if len(comp) > 1: out.append(sorted(comp))
    for v in sorted(graph):
        if v not in index: visit(v)
    return out


def test_no_circle_of_modules():
    "No module, run by an import anywhere (inside functions too, package __init__s included), leads back to itself."
    assert not _cycles(GRAPH), f"circles of imports: {_cycles(GRAPH)}"


def _area(mod:str) -> str: return mod.split(".")[0]


def _areas(graph:dict[str, set[str]]) -> dict[str, set[str]]:
    out = {}
    for m, targets in graph.items(): out.setdefault(_area(m), set()).update(_area(t) for t in targets if _area(t) != _area(m))
    return out


def test_no_circle_of_areas():
    "At the level of areas (core, params, data, solvers, training, generation, bench, bongard, sweep, cli, ...): no circle."
    areas = _areas(GRAPH)
    assert not _cycles(areas), f"circles between areas: {_cycles(areas)}; edges: { {a: sorted(t) for a, t in areas.items()} }"


def _number(mod:str) -> str:
    "A module's notebook number; a package's is its highest (its __init__ runs every module of it)."
    return ORDER.get(mod) or max((v for k, v in ORDER.items() if k.startswith(mod + ".")), default="00")


def test_no_arrow_runs_back_up():
    "Every import a module runs (its packages' __init__s included, imports in functions too) reaches only earlier notebooks."
    up = [f"{m} ({_number(m)}) -> {t} ({_number(t)})" for m, ts in GRAPH.items() if m in ORDER for t in ts if _number(t) >= _number(m)]
    assert not up, f"arrows up: {up}"


def test_the_layering_test_sees_imports_inside_functions():
    "The graph above holds an import written inside a function: the one kind of arrow the old test missed."
    src = "def f():\n    from fewshot_nb.bench.experiment import stored_run\n"
    tree_imports = [n for n in ast.walk(ast.parse(src)) if isinstance(n, ast.ImportFrom)]
    assert tree_imports and tree_imports[0].module == "fewshot_nb.bench.experiment"
    assert "params" in GRAPH["sweep"] and "bench" not in GRAPH["sweep"], GRAPH["sweep"]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    old = {m: set(t) | ({"bench.experiment", "bench"} if m == "sweep" else set()) for m, t in GRAPH.items()}   # the hidden arrow of issue 47
    assert _cycles(_areas(old)), "the old function-level arrow sweep -> bench.experiment would not have been seen"


def test_params_sits_above_core_only():
    assert GRAPH["params"] <= {"core"}, GRAPH["params"]


@pytest.mark.parametrize("mod", ["tasks", "features", "solvers.losses", "solvers.base", "solvers.finetune",
                                 "solvers.transductive", "solvers.baselines"])
def test_solvers_and_features_do_not_need_the_trainer(mod):
    path = PKG.joinpath(*mod.split(".")).with_suffix(".py")
    bad = [t for t, _ in _imports(path) if t.startswith("training") or t.startswith("generation") or t.startswith("bench")]
    assert not bad, f"{mod} imports {bad}: solvers, tasks and features must work without the training stack"


def test_one_solver_registry():
    from fewshot_nb.solvers import SOLVERS   # the package registers every solver
    assert set(SOLVERS) >= {"protonet", "simpleshot", "baseline", "baseline++", "entropy-min", "tim", "alpha-tim",
                            "pt-map", "laplacianshot", "bd-cspn"}
    assert all(cls.name == name for name, cls in SOLVERS.items())
    # the benchmark script spells every method as the solver does
    text = (ROOT/"tools"/"bench_solvers.py").read_text()
    keys = re.findall(r'^    "([\w+-]+)":\s+Spec\(', text, re.M)
    assert keys and set(keys) <= set(SOLVERS), set(keys) - set(SOLVERS)


DATA_CONTAINERS = {"ImageSource", "ClassStream", "EpisodeStream", "unit_floats"}


@pytest.mark.parametrize("path", MODULES, ids=[NAME[p] for p in MODULES])
def test_data_containers_come_from_the_data_area(path):
    "The images in memory and the batch streams live in data.streams: no module imports them from the trainer (or features)."
    for target, names in _imports(path):
        if target in ("training.trainer", "features"):
            assert not DATA_CONTAINERS & set(names), (f"{NAME[path]} imports {sorted(DATA_CONTAINERS & set(names))} from {target}: "
                                                      "import them from fewshot_nb.data.streams")


def test_the_data_area_does_not_import_training():
    for path in MODULES:
        if NAME[path].startswith("data."):
            bad = [t for t, _ in _imports(path) if t.split(".")[0] in ("training", "generation", "bench", "solvers", "features")]
            assert not bad, f"{NAME[path]} imports {bad}: the data area comes first and imports none of them"


def test_the_trainer_defines_no_data_container():
    tree = ast.parse((PKG/"training"/"trainer.py").read_text())
    defined = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    assert not defined & DATA_CONTAINERS, f"the trainer defines {defined & DATA_CONTAINERS}: they belong in data.streams"


def test_one_integer_check():
    "Integer arguments are checked by `core.check_int` (name, value and bound in its message), not by a private copy per module."
    copies = [NAME[p] for p in MODULES for node in ast.walk(ast.parse(p.read_text()))
              if isinstance(node, ast.FunctionDef) and node.name == "_check_int"]
    assert not copies, f"{copies} define their own _check_int: use fewshot_nb.core.check_int"
    from fewshot_nb.core import check_int
    from fewshot_nb.training import pretrain
    from fewshot_nb.solvers import amortised
    assert pretrain.check_int is check_int and amortised.check_int is check_int
    with pytest.raises(ValueError, match=r"steps must be an integer >= 1, got 0"): pretrain.pretrained_features(steps=0)
    with pytest.raises(ValueError, match=r"n_samples must be an integer >= 1, got 0"): amortised.Versa(n_samples=0)


def test_training_does_not_import_solvers():
    "The data seam (issue 47): image and batch helpers live in data/, so training needs no solver (solvers come before it)."
    bad = sorted({f"{m} -> {t}" for m, ts in GRAPH.items() if m.startswith("training") for t in ts if t.startswith("solvers")})
    assert not bad, f"training imports solvers: {bad}"
