"""Every experiment notebook runs at three scales, its papermill parameter `preset` (issue 39): `smoke` (what CI runs),
`default` (the parameters cell as it is) and `paper` (the paper's scale). The cell after the parameters defines
`PRESETS` and passes them to `check_parameters` (`fewshot_nb.params`), which applies the chosen one.

These tests play the notebook's kernel as papermill runs it: the parameters cell, papermill's injected `# Parameters`
cell, then the cell after the parameters (imports, `PRESETS`, the checked parameters), in `nbs/`. No experiment runs.
"""
import ast, json
from pathlib import Path
import pytest
from fewshot_nb.params import declared_parameters, parameter_comments, parse_constraints

ROOT = Path(__file__).resolve().parent.parent
EXPERIMENTS = sorted((ROOT/"nbs").glob("exp_*.ipynb"))
SCALES = ("smoke", "default", "paper")
EXTRA_PRESETS = {"exp_beta": ("long",)}   # presets of one experiment beyond the three (exp_beta: its default before issue 39)


def _cells(nb:Path) -> tuple[str, str, list[str]]:
    "The parameters cell, the cell after it, and the sources of every other code cell."
    cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
    i = next(k for k, c in enumerate(cells) if "parameters" in c.get("metadata", {}).get("tags", []))
    src = lambda c: "".join(c["source"])
    return src(cells[i]), src(cells[i + 1]), [src(c) for c in cells[i + 2:] if c["cell_type"] == "code"]


def kernel(nb:Path, injected:str|None=None) -> dict:
    "The namespace of a kernel that ran the parameters cell, papermill's `injected` cell (if any) and the setup cell."
    params, setup, _ = _cells(nb)
    ns = {"__name__": "__main__", "In": ["", params]}
    exec(compile(params, f"{nb.name}:parameters", "exec"), ns)
    if injected is not None:
        ns["In"].append(injected); exec(injected, ns)
    ns["In"].append(setup); exec(compile(setup, f"{nb.name}:setup", "exec"), ns)
    return ns


@pytest.fixture
def in_nbs(monkeypatch):
    "Run as papermill does: in nbs/, progress bars off."
    monkeypatch.chdir(ROOT/"nbs"); monkeypatch.setenv("FEWSHOT_PROGRESS", "0")


@pytest.mark.parametrize("nb", EXPERIMENTS, ids=[p.stem for p in EXPERIMENTS])
def test_parameters_cell_declares_preset(nb):
    "`preset: str = \"default\"`, the first parameter, whose comment allows smoke, default and paper only."
    params, _, _ = _cells(nb)
    first = next(n for n in ast.parse(params).body if not isinstance(n, (ast.Import, ast.ImportFrom)))
    assert isinstance(first, ast.AnnAssign) and first.target.id == "preset", f"{nb.name}: `preset` is not the first parameter"
    assert ast.unparse(first.annotation) == "str" and ast.literal_eval(first.value) == "default"
    rules = parse_constraints(parameter_comments(params)["preset"])
    extra = EXTRA_PRESETS.get(nb.stem, ())
    assert [(r.kind, tuple(sorted(r.arg))) for r in rules] == [("one of", tuple(sorted(SCALES + extra)))], rules


@pytest.mark.parametrize("nb", EXPERIMENTS, ids=[p.stem for p in EXPERIMENTS])
def test_presets_set_declared_parameters_that_pass_their_checks(nb, in_nbs):
    """PRESETS has `smoke` and `paper`; each sets only declared parameters (never `preset` itself), and every value
    passes `check_parameters` (types, ranges, choices of the parameters cell's comments) when papermill injects that
    preset; `default` sets nothing."""
    ns = kernel(nb)
    presets, declared = ns["PRESETS"], declared_parameters(ns)
    assert set(presets) == {"smoke", "paper", *EXTRA_PRESETS.get(nb.stem, ())}, f"{nb.name}: PRESETS has {sorted(presets)}"
    for name, values in presets.items():
        assert values, f"{nb.name}: preset {name!r} sets nothing"
        assert "preset" not in values and set(values) <= set(declared), (name, set(values) - set(declared))
    assert ns["params"]["preset"] == "default" and set(ns["params"].sources.values()) == {"default"}   # `default` sets none
    for scale in ("smoke", "paper", *EXTRA_PRESETS.get(nb.stem, ())):
        ns = kernel(nb, f"# Parameters\npreset = {scale!r}\n")   # as `papermill ... -p preset <scale>`
        p = ns["params"]
        assert p["preset"] == scale and p.sources["preset"] == "given"
        for name, value in ns["PRESETS"][scale].items():
            assert p.sources[name] == f"preset {scale}", (scale, name, p.sources[name])
            assert p[name] == value and ns[name] == p[name], (scale, name, p[name], value)   # applied, in the namespace too
        assert {n for n, s in p.sources.items() if s != "default"} == {"preset", *ns["PRESETS"][scale]}   # and nothing else


def test_a_given_value_wins_over_the_preset(in_nbs):
    "`-p preset smoke -p n_tasks 7`: the given value wins; the preset's other values stay."
    nb = ROOT/"nbs"/"exp_lake_runs.ipynb"
    ns = kernel(nb, "# Parameters\npreset = 'smoke'\nn_tasks = 7\n")
    p, smoke = ns["params"], ns["PRESETS"]["smoke"]
    assert "n_tasks" in smoke and smoke["n_tasks"] != 7
    assert p["n_tasks"] == 7 == ns["n_tasks"] and p.sources["n_tasks"] == "given"
    assert p["n_way"] == smoke["n_way"] and p.sources["n_way"] == "preset smoke"
    with pytest.raises(ValueError, match="parameter 'n_tasks' must be at least 1, got 0"):   # a given value is still checked
        kernel(nb, "# Parameters\npreset = 'paper'\nn_tasks = 0\n")
    with pytest.raises(ValueError, match="unknown preset 'huge'"):
        kernel(nb, "# Parameters\npreset = 'huge'\n")


@pytest.mark.parametrize("nb", EXPERIMENTS, ids=[p.stem for p in EXPERIMENTS])
def test_an_empty_out_dir_is_refused(nb, in_nbs):
    "`-p out_dir ''` (or spaces) names no folder (`Path('')` is the current one): refused by the parameters check, before any work (issue 53)."
    params, _, _ = _cells(nb)
    assert [r.kind for r in parse_constraints(parameter_comments(params)["out_dir"])] == ["not empty"], f"{nb.name}: out_dir is not [not empty]"
    with pytest.raises(ValueError, match="parameter 'out_dir' must not be empty, got ''"):
        kernel(nb, "# Parameters\nout_dir = ''\n")
    with pytest.raises(ValueError, match=r"parameter 'out_dir' must not be blank \(only spaces\), got '  '"):
        kernel(nb, "# Parameters\npreset = 'smoke'\nout_dir = '  '\n")


def _table_call(nb:Path) -> ast.Call:
    "The `preset_table(...)` call of the notebook's presets section."
    _, _, rest = _cells(nb)
    cells = [s for s in rest if s.lstrip().startswith("preset_table(")]
    assert len(cells) == 1, f"{nb.name}: {len(cells)} cells show the presets' table"
    tree = ast.parse(cells[0])
    assert not any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in ast.walk(tree)), \
        f"{nb.name}: the table's cell imports (a cell with imports is run alone at docs time): import in the setup cell"
    return next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "preset_table")


@pytest.mark.parametrize("nb", EXPERIMENTS, ids=[p.stem for p in EXPERIMENTS])
def test_presets_table_gives_the_paper_values(nb, in_nbs):
    "The table of the presets names the parameters cell's source and PRESETS, and a source for every value the paper preset sets."
    call = _table_call(nb)
    assert [ast.unparse(a) for a in call.args] == ["parameters_source(globals())", "PRESETS"], ast.unparse(call)
    paper = ast.literal_eval(next(k.value for k in call.keywords if k.arg == "paper"))
    presets = kernel(nb)["PRESETS"]
    shown = {n for v in presets.values() for n in v}
    assert set(paper) <= shown, f"{nb.name}: the table shows only parameters a preset sets, not {sorted(set(paper) - shown)}"
    assert set(presets["paper"]) <= set(paper), f"{nb.name}: the paper preset's {sorted(set(presets['paper']) - set(paper))} have no source"


SHAPES = {"arch", "model", "models", "model_kwargs", "image_size", "runs_image_size", "width", "backbone", "n_way", "n_shot", "shots",
          "n_query", "eval_ways", "eval_shots", "train_way", "train_shot", "train_query", "methods", "regime", "algorithms", "optimizers",
          "setting", "structure", "features", "variant", "batch_size", "baselines", "split", "sets", "test_pool"}   # what a dry run keeps
DRY_SHAPE_EXCEPTIONS = {   # shapes a dry run may change, and why
    "exp_bongard": {"image_size", "attribute_sizes"},   # 512 px costs ~3 TFLOP a step on a CPU; ResNet-15 pools globally (test_reproduce checks 512 px)
    "exp_beta": {"batch_size"},   # a step of the paper's VAE-NS on 32 sets is ~12 s of CPU per beta; 2 sets go through every layer alike
}


@pytest.mark.parametrize("nb", EXPERIMENTS, ids=[p.stem for p in EXPERIMENTS])
def test_dry_run_cuts_counts_and_keeps_the_shapes(nb, in_nbs):
    """`dry_run: bool = False` is the second parameter; DRY_RUN, passed to check_parameters, sets declared parameters only,
    none of the architectures, sizes, ways, shots or methods (SHAPES), and over the paper preset every value passes the
    checks, comes from 'dry run', and runs on the CPU."""
    params, setup, _ = _cells(nb)
    names = [n.target.id for n in ast.parse(params).body if isinstance(n, ast.AnnAssign)]
    assert names[1] == "dry_run", f"{nb.name}: dry_run is not the second parameter"
    assert "check_parameters(globals(), presets=PRESETS, dry_run=DRY_RUN)" in setup
    ns = kernel(nb, "# Parameters\npreset = 'paper'\ndry_run = True\n")
    dry, p = ns["DRY_RUN"], ns["params"]
    changed = set(dry) & SHAPES - DRY_SHAPE_EXCEPTIONS.get(nb.stem, set())
    assert dry and not changed, f"{nb.name}: a dry run changes {changed}"
    assert all(p.sources[n] == "dry run" and p[n] == v for n, v in dry.items())
    assert p.get("device", "cpu") == "cpu" and p["preset"] == "paper"
    shape_from_paper = set(ns["PRESETS"]["paper"]) & SHAPES - DRY_SHAPE_EXCEPTIONS.get(nb.stem, set())
    assert all(p.sources[n] == "preset paper" for n in shape_from_paper)   # the paper's shapes kept
    off = kernel(nb, "# Parameters\npreset = 'paper'\n")["params"]
    assert "dry run" not in off.sources.values()                          # off by default
