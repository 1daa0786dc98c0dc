"""exp_realistic hands its device to every model it trains or scores (issue 38).

The notebook used to meta-train Versa and SIB without passing its device, so they always trained on the CPU. CI has no
GPU, so this test cannot watch a model land on one. Instead it runs the notebook's cells in this process, with
`get_device` returning one particular `torch.device` object, and spies on every function that receives a device
(feature pre-training, the feature solvers' scorer, Versa's and SIB's `meta_fit`, MAML's training, the backbone
fine-tuning scorer): each must be called with that very object (or, for pre-training, the notebook's `device`
parameter), not with its own default.
"""
import functools, importlib, json
from pathlib import Path
import pytest, torch

ROOT = Path(__file__).resolve().parent.parent
NB = ROOT/"nbs"/"exp_realistic.ipynb"


def _cells():
    "The parameters cell and every code cell after it, as source."
    cells = json.loads(NB.read_text(encoding="utf-8"))["cells"]
    i = next(k for k, c in enumerate(cells) if "parameters" in c.get("metadata", {}).get("tags", []))
    return ["".join(c["source"]) for c in cells[i:] if c["cell_type"] == "code"]


def run_notebook(params:dict, monkeypatch) -> dict:
    "Execute the notebook's code cells in one namespace, with `params` injected after the parameters cell (as papermill does)."
    monkeypatch.chdir(ROOT/"nbs")
    cells = _cells()
    ns = {"__name__": "__main__"}
    exec(compile(cells[0], "parameters", "exec"), ns)
    injected = "# Parameters\n" + "".join(f"{k} = {v!r}\n" for k, v in params.items())   # papermill's cell: the run records them as given
    exec(compile(injected, "injected parameters", "exec"), ns)
    ns["In"] = [cells[0], injected]
    for k, src in enumerate(cells[1:], 1):
        exec(compile(src, f"exp_realistic cell {k}", "exec"), ns)
    return ns


def test_the_device_reaches_every_model(tmp_path, monkeypatch):
    import fewshot_nb.core as core, fewshot_nb.bench.classification as bc, fewshot_nb.training.pretrain as pre
    import fewshot_nb.solvers.backbone_finetune as bf, fewshot_nb.training.regimes as rg
    from fewshot_nb.solvers.amortised import MetaSolver
    DEV = torch.device("cpu")   # the run's device: identity tells it from a default or a fresh `torch.device('cpu')`
    monkeypatch.setattr(core, "get_device", lambda device="auto": DEV)
    seen = {}
    def spy(name, fn):
        @functools.wraps(fn)   # the same signature: the notebook's checks inspect it
        def wrapped(*a, **kw):
            seen.setdefault(name, []).append(kw.get("device", "<not passed>"))
            return fn(*a, **kw)
        return wrapped
    for mod, name in ((bc, "solver_scorer"), (rg, "train_regime"), (bf, "finetune_scorer"), (pre, "pretrained_features")):
        fn, wrapped = getattr(mod, name), spy(name, getattr(mod, name))
        face = importlib.import_module(mod.__name__.rsplit(".", 1)[0])   # the notebook imports a face's names from the face
        for m in (mod, face):
            if getattr(m, name, None) is fn: monkeypatch.setattr(m, name, wrapped)
    meta_fit = MetaSolver.meta_fit
    @functools.wraps(meta_fit)
    def meta_fit_spy(self, *a, **kw):
        seen.setdefault(f"meta_fit {self.name}", []).append(kw.get("device", "<not passed>"))
        return meta_fit(self, *a, **kw)
    monkeypatch.setattr(MetaSolver, "meta_fit", meta_fit_spy)
    methods = ["protonet", "versa", "sib", "tim", "alpha-tim", "maml", "maml-tbn", "entropy-min-ft"]
    run_notebook(dict(methods=methods, shots=[1], fig4_shot=1, imbalance_a=[1.0], lambdas=[1.0], alphas=[2.0], n_tasks=8,
                      n_val_tasks=6, image_tasks=2, meta_steps=3, maml_steps=2, seed=1, device="cpu",
                      pretrain=dict(steps=10, cache_dir=str(tmp_path/"features")), out_dir=str(tmp_path/"out")), monkeypatch)
    assert {"pretrained_features", "solver_scorer", "meta_fit versa", "meta_fit sib", "train_regime", "finetune_scorer"} <= set(seen), seen
    assert seen.pop("pretrained_features") == ["cpu"]                       # the notebook's parameter, not the function's 'auto'
    wrong = {k: [d for d in v if d is not DEV] for k, v in seen.items()}
    assert not any(wrong.values()), f"called without the run's device: {wrong}"
    assert len(seen["solver_scorer"]) >= 4                                  # tuning grid, untuned TIM, methods, Versa and SIB
    assert (tmp_path/"out"/"runs_compared.csv").is_file() and (tmp_path/"out"/"findings.csv").is_file()


def test_a_forgotten_device_is_caught(monkeypatch):
    "The spy sees a call that leaves the device out: the check above can fail."
    import fewshot_nb.bench.classification as bc
    seen = []
    real = bc.solver_scorer
    monkeypatch.setattr(bc, "solver_scorer", lambda *a, **kw: seen.append(kw.get("device", "<not passed>")) or real(*a, **kw))
    bc.solver_scorer("simpleshot")
    assert seen == ["<not passed>"]


def test_bench_solvers_meta_trains_on_its_device():
    """tools/bench_solvers.py meta-trains Versa and SIB on `--device` too (it did not pass it either).

    Run in a fresh interpreter: a module notebook executed earlier in this worker (tests/test_notebooks.py runs them
    in-process) re-registers its own Versa and SIB classes, which are not the package's `MetaSolver`."""
    import subprocess, sys
    code = f"""
import importlib.util, sys, torch
from fewshot_nb.solvers.amortised import MetaSolver
spec = importlib.util.spec_from_file_location("bench_solvers_dev", {str(ROOT/"tools"/"bench_solvers.py")!r})
bench = importlib.util.module_from_spec(spec); sys.modules["bench_solvers_dev"] = bench; spec.loader.exec_module(bench)
DEV, seen = torch.device("cpu"), []
MetaSolver.meta_fit = lambda self, *a, **kw: seen.append(kw.get("device", "<not passed>")) or (self, None)
for name in ("versa", "sib"): bench.build_ours(name, torch.zeros(16), 1, None, match=False, device=DEV)
print(len(seen), all(d is DEV for d in seen))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split()[-2:] == ["2", "True"], out.stdout + out.stderr[-2000:]
