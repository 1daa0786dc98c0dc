#!/usr/bin/env python
"""Speed (and accuracy) benchmark of the few-shot solvers of fewshot_nb, optionally side by side with the
public reference implementation of the realistic transductive few-shot benchmark (Veilleux et al., NeurIPS 2021,
github.com/oveilleux/Realistic_Transductive_Few_Shot), on identical tasks and features.

Tasks: `synthetic_features(seed=0)` (post-ReLU Gaussian clusters, d = 512), or the features of `--features FILE`, 5-way,
1-shot and 5-shot, 75 queries (`--n-query` per class on average) per task with Dirichlet(2) class proportions, `--n-tasks` tasks per shot (one batch, fixed seed). Each method is
warmed up on 20 tasks, then timed with `time.perf_counter` on the whole batch in one call; the features are
gathered beforehand, for both implementations.

The reference is not part of this repository: pass a checkout of it with `--reference DIR`. Its method classes
(`src/methods/*.py`) are run through a small adapter: an identity "model" (`forward(x, feature=True) -> (x, None)`),
their task dict with the support set ordered shot-major (labels 0..K-1 repeated per shot, as their sampler
produces), their `args` (defaults of `configs/dirichlet/*` in DIR, with built-in fall-backs), and patches so that
it runs on the CPU (`.cuda()` calls, `load_checkpoint` in Entropy-min, logging to a temporary file, no progress
bars, `np.float` for NumPy >= 1.24). Their accuracy is `logs['acc'][:, -1]`.
Our solvers come from the library's one registry, `fewshot_nb.solvers.SOLVERS` (importing `fewshot_nb.solvers`
registers all of them), under each solver's own `name`; this script only maps those
names to the reference's classes and configs (`REFERENCE`). Our solvers are built with the reference's
hyper-parameters wherever a constructor argument corresponds (differences from our defaults are printed).

Usage:

    OMP_WAIT_POLICY=PASSIVE python tools/bench_solvers.py                      # ours, 1000 tasks per shot
    OMP_WAIT_POLICY=PASSIVE python tools/bench_solvers.py --reference ../Realistic_Transductive_Few_Shot
    python tools/bench_solvers.py --quick --methods protonet,simpleshot         # smoke run, 100 tasks
    python tools/bench_solvers.py --reference DIR --impl reference --out ref.csv  # the reference only
    python tools/bench_solvers.py --impl ours --methods alpha-tim --n-tasks 10000 --device cuda   # on a GPU
    python tools/bench_solvers.py --methods tim,alpha-tim --patience 100    # + the opt-in stopping rule, against the exact iterates
    python tools/bench_solvers.py --features ~/.cache/fewshot_nb/features/minimal1-....pt --n-query 5   # on real (Omniglot) features
    python tools/bench_solvers.py --scaling                                 # tasks/s vs tasks per call and feature dimension
    python tools/bench_solvers.py --scaling --replot                        # its figure again, from runs/bench_scaling.csv

Output: a table on stdout and a tidy CSV (`--out`, default runs/bench_solvers.csv), one row per method, shot and
implementation: method, shot, impl ('fewshot_nb' or 'reference'), device, n_tasks, seconds (of the timed call),
throughput_tasks_per_sec (a rate: tasks per second), acc_pct and half_width_pct (the mean accuracy over the tasks in
percent, and the half-width of its 95% Student-t interval, in percent). `main(argv)` returns the same table as a
DataFrame. `--scaling` writes axis, method, n_tasks, dim (the feature dimension), device, threads, seconds and
throughput_tasks_per_sec.
"""
from __future__ import annotations
import argparse, contextlib, copy, importlib, inspect, logging, math, os, sys, tempfile, time, traceback, types
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path: sys.path.insert(0, str(ROOT))

from fewshot_nb.solvers import SOLVERS, make_solver   # importing fewshot_nb.solvers registers every solver
from fewshot_nb.testing import synthetic_features
from fewshot_nb.solvers.amortised import MetaSolver
from fewshot_nb.data.samplers import EpisodeSampler
from fewshot_nb.metrics import accuracy, mean_ci, paired_comparison
from fewshot_nb.core import save_csv

COLUMNS = ["method", "shot", "impl", "device", "n_tasks", "seconds", "throughput_tasks_per_sec", "acc_pct", "half_width_pct"]
UNITS = {"throughput_tasks_per_sec": "tasks per second (a rate)", "dim": "the feature dimension (a size)"}   # columns whose names carry no unit suffix (save_csv)
N_WAY, N_QUERY, DIRICHLET_A, N_WARMUP = 5, 15, 2.0, 20

# --------------------------------------------------------------------------------------------------- methods

@dataclass(frozen=True)
class Spec:
    "Where a method lives in the reference implementation."
    ref_module: str   # module of the reference method under src/methods/
    ref_cls: str      # its class
    ref_config: str   # its file under configs/dirichlet/methods_config/

# Our solvers are `SOLVERS[name]`; their counterparts in the reference, keyed by the same (the solvers' own) names.
REFERENCE = {
    "protonet":      Spec("protonet", "ProtoNet", "protonet.yaml"),
    "simpleshot":    Spec("simpleshot", "SimpleShot", "simpleshot.yaml"),
    "baseline":      Spec("baseline", "Baseline", "baseline.yaml"),
    "baseline++":    Spec("baseline", "Baseline_PlusPlus", "baseline_pp.yaml"),
    "entropy-min":   Spec("entropy_min", "Entropy_min", "entropy_min.yaml"),
    "tim":           Spec("tim", "TIM_GD", "tim.yaml"),
    "alpha-tim":     Spec("tim", "ALPHA_TIM", "alpha_tim.yaml"),
    "pt-map":        Spec("pt_map", "PT_MAP", "pt_map.yaml"),
    "laplacianshot": Spec("laplacianshot", "LaplacianShot", "laplacianshot.yaml"),
    "bd-cspn":       Spec("bdcspn", "BDCSPN", "bdcspn.yaml"),
}
if _unregistered := sorted(set(REFERENCE) - set(SOLVERS)):
    raise RuntimeError(f"REFERENCE names {_unregistered}, which are not registered solvers ({', '.join(SOLVERS)}): "
                       "key it by each solver's own `name`")
METHODS = list(SOLVERS)   # every solver of the library, in the registry's order

# ------------------------------------------------------------------------------ reference configuration

# Defaults of the reference's configs (configs/dirichlet/..., resnet18 / mini), used where DIR lacks a file.
REF_BASE = dict(n_ways=5, n_query=15, balanced="dirichlet", alpha_dirichlet=2, arch="resnet18", dataset="mini",
                shots=[1, 5, 10, 20], model_tag="best", ckpt_path="checkpoints/mini/softmax/resnet18", batch_size=1,
                number_tasks=10000, cuda=True, seed=2020, log_path="logs")
REF_METHOD = {
    "protonet.yaml": dict(method="ProtoNet"),
    "simpleshot.yaml": dict(method="SimpleShot", num_NN=1, norm_type="CL2N"),
    "baseline.yaml": dict(method="Baseline", temp=15, lr_baseline=1e-3, iter=100),
    "baseline_pp.yaml": dict(method="Baseline++", temp=15, lr_baseline=1e-3, iter=100),
    "entropy_min.yaml": dict(method="Entropy-min", temp=15, loss_weights=[1.0, 1.0], lr_entropy_min=5e-5, iter=25),
    "tim.yaml": dict(method="TIM-GD", temp=15, loss_weights=[1.0, 1.0, 1.0], lr_tim=1e-4, iter=1000, alpha=1.0),
    "alpha_tim.yaml": dict(method="ALPHA-TIM", temp=15, loss_weights=[1.0, 1.0, 1.0], lr_alpha_tim=1e-4, iter=1000,
                           entropies=["Shannon", "Alpha", "Alpha"], alpha_values=[5.0, 5.0, 5.0], use_tuned_alpha_values=True),
    "pt_map.yaml": dict(method="PT-MAP", beta=0.5, lam=10, alpha=0.2, n_epochs=20),
    "laplacianshot.yaml": dict(method="LaplacianShot", knn=3, lmd=None, use_tuned_lmd=True, proto_rect=False,
                               norm_type="CL2N", iter=20),
    "bdcspn.yaml": dict(method="BDCSPN", num_NN=1, norm_type="CL2N"),
}
# LaplacianShot's tuned lambdas (get_tuned_lmd of the reference): [1-shot, 5-shot] for Dirichlet, resnet18, mini
REF_TUNED_LMD = [0.7, 0.7]

def _flat_yaml(path:Path) -> dict:
    "A reference config file, its sections merged into one flat dict (as load_cfg_from_cfg_file does)."
    import yaml
    with open(path) as f: cfg = yaml.safe_load(f) or {}
    out = {}
    for sec in cfg.values():
        if isinstance(sec, dict): out.update(sec)
    return out

def reference_args(ref_dir:Path|None, ref:Spec, batch_size:int, notes:list) -> types.SimpleNamespace:
    "The reference's `args` for a method: base config, then method config, then `batch_size` = tasks per call."
    base, meth = dict(REF_BASE), dict(REF_METHOD[ref.ref_config])
    if ref_dir is not None:
        for d, p in ((base, ref_dir / "configs/dirichlet/base_config/resnet18/mini/base_config.yaml"),
                     (meth, ref_dir / "configs/dirichlet/methods_config" / ref.ref_config)):
            if p.is_file():
                if d is meth: d.clear()
                d.update(_flat_yaml(p))
            else: notes.append(f"reference config {p.relative_to(ref_dir)} not found: using built-in defaults")
    args = types.SimpleNamespace(**{**base, **meth})
    args.batch_size, args.cuda = int(batch_size), False
    return args

# ------------------------------------------------------------------- reference hyper-parameters -> ours

ITER_NAMES = ("steps", "n_steps", "n_iter", "iters", "n_iters", "iter", "iterations", "n_epochs", "epochs")
NORM_OF = {"CL2N": "cl2n", "L2N": "l2", "UN": "none"}

def reference_hparams(name:str, a:types.SimpleNamespace, shot:int) -> list[tuple[str, object, tuple]]:
    "(description, value, candidate argument names of ours) for each hyper-parameter of the reference method."
    out = []
    add = lambda desc, v, *names: out.append((desc, v, names))
    lr_key = {"baseline": "lr_baseline", "baseline++": "lr_baseline", "entropy-min": "lr_entropy_min",
              "tim": "lr_tim", "alpha-tim": "lr_alpha_tim"}.get(name)
    if name in ("protonet", "pt-map"): add("features (raw)", "none", "norm")
    if name in ("simpleshot", "laplacianshot", "bd-cspn"): add("norm_type", NORM_OF.get(a.norm_type, a.norm_type), "norm")
    if lr_key:
        add("features", "none" if name in ("baseline", "baseline++") else "l2", "norm")
        add("temp", float(a.temp), "tau", "temp", "temperature")
        add(lr_key, float(a.__dict__[lr_key]), "lr", "learning_rate")
        add("iter", int(a.iter), *ITER_NAMES)
    lw = getattr(a, "loss_weights", None)
    if name == "entropy-min" and lw is not None and "auto" not in lw:
        add("loss_weights [CE, H(Y|X)]", (float(lw[0]), 0.0, float(lw[1])), "weights", "loss_weights")
    if name in ("tim", "alpha-tim") and lw is not None and "auto" not in lw:
        add("loss_weights [CE, H(Y), H(Y|X)]", tuple(float(w) for w in lw), "weights", "loss_weights")
    if name == "alpha-tim":
        alphas = ([2.0] * 3 if shot == 1 else [7.0] * 3) if (a.use_tuned_alpha_values or a.alpha_values is None) else a.alpha_values
        add(f"alpha_values[1:] ({shot}-shot)", float(alphas[1]), "alpha")
    if name == "pt-map":
        add("beta", float(a.beta), "beta", "power", "power_beta")
        add("lam", float(a.lam), "lam", "lam_ot", "ot_lambda", "lmbda", "sinkhorn_lambda")
        add("alpha", float(a.alpha), "alpha", "momentum", "update_rate")
        add("n_epochs", int(a.n_epochs), *ITER_NAMES)
    if name == "laplacianshot":
        lmd = (REF_TUNED_LMD if a.use_tuned_lmd else a.lmd)
        lmd = 1.0 if lmd is None else (lmd[min(list(a.shots).index(shot), len(lmd) - 1)] if isinstance(lmd, (list, tuple)) else lmd)
        add(f"lmd ({shot}-shot)", float(lmd), "lmd", "lam", "lmbda", "lambda_", "bound_lambda")
        add("knn", int(a.knn), "knn", "k", "n_neighbors")
        add("iter", int(a.iter), *ITER_NAMES, "bound_iterations")
        add("proto_rect", bool(a.proto_rect), "proto_rect", "rectify", "rectified", "proto_rectification")
    return out

def _default(cls, pname:str):
    "Default of constructor argument `pname` of `cls` (a None default falls back to a class attribute of that name)."
    p = inspect.signature(cls.__init__).parameters[pname]
    d = None if p.default is inspect.Parameter.empty else p.default
    return getattr(cls, pname, None) if d is None else d

def _same(a, b) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and not isinstance(b, bool):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
    return a == b

def our_kwargs(name:str, base_mean, shot:int, ref_args, match:bool=True) -> tuple[dict, list[str]]:
    "The constructor arguments of our solver `SOLVERS[name]` for `shot`: the base mean where it takes one, and the reference's hyper-parameters (`ref_args`) where they differ from our defaults."
    cls = SOLVERS[name]
    params = inspect.signature(cls.__init__).parameters
    kw, notes = {}, []
    if "base_mean" in params or any(p.kind == p.VAR_KEYWORD for p in params.values()): kw["base_mean"] = base_mean
    if match and ref_args is not None:
        for desc, v, names in reference_hparams(name, ref_args, shot):
            pname = next((n for n in names if n in params), None)
            if pname is None:
                notes.append(f"{name} {shot}-shot: reference {desc} = {v!r} has no counterpart among {cls.__name__}'s arguments")
                continue
            ours = _default(cls, pname)
            if not _same(ours, v):
                notes.append(f"{name} {shot}-shot: {cls.__name__}({pname}=) default {ours!r} differs from the reference's "
                             f"{desc} = {v!r}: using {v!r}")
                kw[pname] = v
    return kw, notes

def build_ours(name:str, base_mean, shot:int, ref_args, match:bool=True, meta_base=None, device="cpu") -> tuple[object, list[str]]:
    "Our solver `SOLVERS[name]` for `shot`, with the reference's hyper-parameters (`ref_args`) where they differ from our defaults."
    kw, notes = our_kwargs(name, base_mean, shot, ref_args, match)
    solver = make_solver(name, **kw)
    if isinstance(solver, MetaSolver):   # Versa, SIB: meta-trained (before the clock starts) on base classes
        if meta_base is None:            # synthetic features: other classes of the same law
            meta_base = synthetic_features(n_classes=64, n_per_class=100, dim=len(base_mean), seed=1)[0]
            notes.append(f"{name} {shot}-shot: meta-trained for 300 steps on 64 other synthetic classes")
        else: notes.append(f"{name} {shot}-shot: meta-trained for 300 steps on the {meta_base.n_classes} base classes")
        solver.meta_fit(meta_base, n_way=N_WAY, n_shot=shot, steps=300, seed=0, device=device)   # meta-trained on the benchmark's device
    return solver, notes

# ------------------------------------------------------------------------------------------- reference

class _Identity(torch.nn.Module):
    "Stands for the reference's backbone: the features are already extracted."
    def forward(self, x, feature=True): return x, None

def shot_major(batch) -> torch.Tensor:
    "(n_tasks, n_support) permutation of each task's support set into shot-major order (labels 0..K-1, per shot)."
    y, m = batch.support_labels, batch.support_mask
    if not bool(m.all()): raise ValueError("the reference needs the same number of shots in every class and task")
    onehot = torch.nn.functional.one_hot(y, batch.n_way)
    rank = ((onehot.cumsum(1) - 1) * onehot).sum(-1)          # position of each item among its class's items
    return torch.argsort(rank * batch.n_way + y, dim=1, stable=True)

def reference_task(s, q, batch, base_mean) -> dict:
    "The reference's task dict for the tasks of `batch`, from our gathered support `s` and query `q` features."
    if not bool(batch.query_mask.all()): raise ValueError("the reference needs the same number of queries in every task")
    perm = shot_major(batch)
    x_s = s.gather(1, perm.unsqueeze(-1).expand_as(s)).contiguous()
    y_s = batch.support_labels.gather(1, perm)
    n_shot = y_s.shape[1] // batch.n_way
    if not torch.equal(y_s, torch.arange(batch.n_way).repeat(n_shot).expand_as(y_s)):
        raise ValueError("the reference needs the same number of shots in every class (support labels 0..K-1 per shot)")
    return {"x_s": x_s, "y_s": y_s.unsqueeze(-1).long(), "x_q": q.clone(),
            "y_q": batch.query_labels.unsqueeze(-1).long(),
            "train_mean": None if base_mean is None else torch.as_tensor(base_mean).float()}   # read by their CL2N methods only

def _quiet_logger(Logger):
    "The reference's Logger class, writing to its (temporary) log file only, not to the console."
    class QuietLogger(Logger):
        def get_stream_handler(self): return logging.NullHandler()
    return QuietLogger

@contextlib.contextmanager
def reference_patches(ref_dir:Path):
    """Make the reference's `src` package importable from `ref_dir` and patch what its methods need to run quietly on
    the CPU; yields `imp(module_name)`, which imports (and patches) one module of `src/methods/`."""
    ref_dir = Path(ref_dir).resolve()
    if not (ref_dir / "src" / "methods").is_dir():
        raise ValueError(f"--reference {ref_dir} has no src/methods/: pass a checkout of "
                         "github.com/oveilleux/Realistic_Transductive_Few_Shot")
    clash = [k for k in sys.modules if k == "src" or k.startswith("src.")]
    if clash: raise RuntimeError(f"a package named 'src' is already imported ({sys.modules[clash[0]]}): run in a fresh process")
    old_cuda, had_float, saved = torch.Tensor.cuda, "float" in np.__dict__, {}
    # bare packages, so that importing one method does not run src/methods/__init__.py (which imports them all)
    for name, path in (("src", ref_dir / "src"), ("src.methods", ref_dir / "src" / "methods"),
                       ("src.models", ref_dir / "src" / "models")):
        pkg = types.ModuleType(name); pkg.__path__ = [str(path)]; sys.modules[name] = pkg
    def imp(name:str):
        mod = importlib.import_module(f"src.methods.{name}")
        if not getattr(mod, "_bench_patched", False):
            utils = importlib.import_module("src.utils")
            for attr, new in (("tqdm", lambda it, *a, **k: it),              # no progress bars
                              ("Logger", _quiet_logger(utils.Logger)),       # log to the temporary file only
                              ("load_checkpoint", lambda *a, **k: None)):   # Entropy-min loads a checkpoint in __init__
                if hasattr(mod, attr): saved[(mod, attr)] = getattr(mod, attr); setattr(mod, attr, new)
            mod._bench_patched = True
        return mod
    try:
        torch.Tensor.cuda = lambda self, *a, **k: self   # Entropy-min moves features with .cuda(0)
        if not had_float: np.float = float                 # LaplacianShot's create_affinity uses np.float (gone in NumPy 1.24)
        yield imp
    finally:
        for (mod, attr), v in saved.items(): setattr(mod, attr, v)
        torch.Tensor.cuda = old_cuda
        if not had_float and "float" in np.__dict__: del np.float
        for k in [k for k in sys.modules if k == "src" or k.startswith("src.")]: del sys.modules[k]

def reference_runner(ref:Spec, args_for, task:dict, shot:int, log_file:str, imp):
    "`run(sl)` -> (seconds of `run_task`, per-task accuracy) of a fresh reference method on the tasks `sl` of `task`."
    cls = getattr(imp(ref.ref_module), ref.ref_cls)
    def run(sl):
        sub = {k: (v if k == "train_mean" else v[sl]) for k, v in task.items()}
        n = sub["x_s"].shape[0]
        method = cls(model=_Identity(), device=torch.device("cpu"), log_file=log_file, args=args_for(n))
        t0 = time.perf_counter()
        logs = method.run_task(task_dic=sub, shot=shot)
        secs = time.perf_counter() - t0
        acc = np.asarray(logs["acc"], dtype=np.float64).reshape(n, -1)[:, -1]
        nq = sub["x_q"].shape[1]   # their accuracies are float32 means: back to exact fractions of the nq queries
        acc = np.round(acc * nq) / nq
        del method
        return secs, acc
    return run

# ---------------------------------------------------------------------------------------------- timing

def timed(run, warm, full) -> tuple[float, object]:
    "`run(sl)` -> (seconds, result): one warm-up call on `warm` (discarded), then the timed call on `full`."
    run(warm)
    return run(full)

def _row(method, shot, impl, n, secs, acc, device="cpu"):
    ci = mean_ci(acc)
    return dict(method=method, shot=shot, impl=impl, device=device, n_tasks=n, seconds=secs, throughput_tasks_per_sec=n / secs,
                acc_pct=100 * ci.mean, half_width_pct=100 * ci.half_width)

# ------------------------------------------------------------------------------------------------ main

def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--methods", default=None,
                   help=f"comma list of registered solvers: {', '.join(METHODS)} (default: all that can be run)")
    p.add_argument("--shots", default="1,5", help="comma list of shots (default 1,5)")
    p.add_argument("--n-tasks", type=int, default=1000, help="tasks per shot, solved in one call (default 1000)")
    p.add_argument("--quick", action="store_true", help="smoke run: 100 tasks per shot")
    p.add_argument("--threads", type=int, default=2, help="torch (and BLAS) threads (default 2)")
    p.add_argument("--seed", type=int, default=0, help="seed of the task sampler (default 0)")
    p.add_argument("--reference", type=Path, default=None,
                   help="checkout of github.com/oveilleux/Realistic_Transductive_Few_Shot, run side by side")
    p.add_argument("--impl", choices=("both", "ours", "reference"), default="both",
                   help="which implementations to run (default: both; ours only without --reference)")
    p.add_argument("--our-defaults", action="store_true",
                   help="build our solvers with our defaults instead of the reference's hyper-parameters")
    p.add_argument("--device", default="cpu",
                   help="device our solvers run on, e.g. cuda (default cpu; the reference runs on the CPU only)")
    p.add_argument("--patience", type=int, default=None,
                   help="also run our gradient solvers with this opt-in stopping rule (steps without a changed query prediction), "
                        "reported beside the exact iterates")
    p.add_argument("--scaling", action="store_true",
                   help="instead: tasks/s of our solvers against the number of tasks per call (100 to 10,000, d = 512) and the "
                        "feature dimension (64 to 640, 1,000 tasks), 1-shot; writes --out and a log-log figure next to it")
    p.add_argument("--replot", action="store_true", help="with --scaling: redraw the figure from the CSV at --out, timing nothing")
    p.add_argument("--scaling-tasks", default="100,300,1000,3000,10000", help="with --scaling: comma list of tasks per call")
    p.add_argument("--features", type=Path, default=None,
                   help="test features: a FeatureSource file or a pretrained_features cache file (default: synthetic_features(seed=0))")
    p.add_argument("--base-features", type=Path, default=None,
                   help="with --features: base-class features (a FeatureSource file, or a torch file of their (d,) mean); "
                        "a pretrained_features cache file carries its own. Needed only by the chosen methods that centre on the "
                        "base mean (norm='cl2n': the mean) or are meta-trained (Versa, SIB: labelled base features)")
    p.add_argument("--n-query", type=int, default=N_QUERY,
                   help=f"queries per class on average (default {N_QUERY}: {N_WAY * N_QUERY} per task); Dirichlet draws that ask "
                        "for more items than a class has are redrawn")
    p.add_argument("--out", type=Path, default=None, help="CSV to write (default runs/bench_solvers.csv, or runs/bench_scaling.csv)")
    a = p.parse_args(argv)
    if a.out is None: a.out = ROOT / "runs" / ("bench_scaling.csv" if a.scaling else "bench_solvers.csv")
    if a.patience is not None and a.patience < 1: p.error(f"--patience must be >= 1 steps, got {a.patience}")
    try: a.scaling_tasks = [int(n) for n in str(a.scaling_tasks).split(",") if n.strip()]
    except ValueError: p.error(f"--scaling-tasks must be a comma list of integers, got {a.scaling_tasks!r}")
    if not a.scaling_tasks or min(a.scaling_tasks) < N_WARMUP: p.error(f"--scaling-tasks must be integers >= {N_WARMUP}, got {a.scaling_tasks}")
    if a.quick: a.n_tasks = 100
    if a.n_tasks < N_WARMUP: p.error(f"--n-tasks must be at least {N_WARMUP} (the warm-up batch), got {a.n_tasks}")
    if a.threads < 1: p.error(f"--threads must be >= 1, got {a.threads}")
    if a.n_query < 1: p.error(f"--n-query must be >= 1, got {a.n_query}")
    if a.features is not None and not a.features.is_file(): p.error(f"--features {a.features}: no such file")
    if a.base_features is not None and a.features is None: p.error("--base-features goes with --features")
    if a.base_features is not None and not a.base_features.is_file(): p.error(f"--base-features {a.base_features}: no such file")
    try: a.shots = [int(s) for s in str(a.shots).split(",") if s.strip()]
    except ValueError: p.error(f"--shots must be a comma list of integers, got {a.shots!r}")
    if not a.shots or min(a.shots) < 1: p.error(f"--shots must be positive integers, got {a.shots}")
    names = list(METHODS) if a.methods is None else [m.strip().lower() for m in a.methods.split(",") if m.strip()]
    unknown = [m for m in names if m not in METHODS]
    if unknown: p.error(f"unknown methods {unknown}: choose among {', '.join(METHODS)}")
    a.method_names = names
    if a.impl == "reference" and a.reference is None: p.error("--impl reference needs --reference DIR")
    try: a.device = torch.device(a.device)
    except RuntimeError: p.error(f"--device must be a torch device such as cpu or cuda, got {a.device!r}")
    if a.device.type == "cuda" and not torch.cuda.is_available(): p.error("--device cuda, but torch sees no CUDA device here")
    if a.device.type != "cpu" and a.reference is not None and a.impl != "ours":
        p.error("the reference runs on the CPU here: with --device cuda pass --impl ours (or drop --reference)")
    if a.reference is not None and not (a.reference / "src" / "methods").is_dir():
        p.error(f"--reference {a.reference} has no src/methods/: pass a checkout of "
                "github.com/oveilleux/Realistic_Transductive_Few_Shot")
    return a

def base_needs(a, methods:list[str]) -> dict:
    """What the chosen methods need of the base classes: {'mean': [...], 'base': [...]}, the methods (as solvers build them
    here, for every shot) that centre the features on the base-class mean (norm='cl2n', ours or the reference's CL2N) and
    those meta-trained on labelled base-class features (Versa, SIB), as `fewshot_nb.bench.evaluate.check_methods` rules."""
    run_ours, run_ref = a.impl in ("both", "ours"), a.reference is not None and a.impl in ("both", "reference")
    mean, base = [], []
    for m in methods:
        ref = REFERENCE.get(m)
        ref_args = None if ref is None or not run_ref else reference_args(a.reference, ref, a.n_tasks, [])
        if run_ours:
            for shot in a.shots:
                solver = make_solver(m, **our_kwargs(m, None, shot, ref_args, match=not a.our_defaults)[0])
                if isinstance(solver, MetaSolver): base.append(m)
                elif solver.norm == "cl2n": mean.append(m)
        if ref_args is not None and getattr(ref_args, "norm_type", None) == "CL2N": mean.append(m)   # the reference's CL2N methods read train_mean
    return dict(mean=list(dict.fromkeys(mean)), base=list(dict.fromkeys(base)))

def bench_features(a, needs:dict|None=None) -> tuple:
    """(test FeatureSource, base mean or None, base FeatureSource or None) from --features / --base-features, or the
    synthetic default; with --features, the base mean and the base features are demanded only where `needs` (`base_needs`) says."""
    if a.features is None:
        src, base_mean = synthetic_features(seed=0)
        return src, base_mean, None
    needs = dict(mean=[], base=[]) | (needs or {})
    from fewshot_nb.features import load_features, read_feature_cache, FeatureCacheError
    from fewshot_nb.data.sources import FeatureSource
    src, base_mean, record = load_features(a.features, a.base_features)
    meta_base = None
    try: meta_base = read_feature_cache(a.features, parts=True)["base"]   # a cache file of pretrained_features keeps its base features
    except FeatureCacheError:
        try: meta_base = FeatureSource.load(a.base_features) if a.base_features is not None else None
        except Exception: meta_base = None   # a file of the base mean only
    if base_mean is None and needs["mean"]:
        raise SystemExit(f"--features {a.features} has no base features, and {', '.join(needs['mean'])} centre the features on the "
                         "base-class mean (norm='cl2n'): pass --base-features FILE (base-class features, or a torch file of their (d,) mean), "
                         "or leave those methods out")
    if meta_base is None and needs["base"]:
        raise SystemExit(f"{', '.join(needs['base'])} meta-train on labelled base-class features, and --features {a.features} has no base "
                         "features with labels: pass --base-features FILE (a FeatureSource file of the base classes; a file of their mean "
                         "is not enough), or a pretrained_features cache file as --features, or leave those methods out")
    print(f"features: {a.features} ({src}); base mean: {'none' if base_mean is None else 'given'}; "
          f"base classes for meta-training: {'none' if meta_base is None else meta_base}")
    return src, base_mean, meta_base

def _limit_blas(threads:int):
    "Limit the BLAS / OpenMP pools of NumPy and SciPy too (the reference computes partly in NumPy), if threadpoolctl is there."
    try:
        from threadpoolctl import threadpool_limits
        return threadpool_limits(threads)
    except ImportError: return contextlib.nullcontext()

def main(argv=None) -> pd.DataFrame:
    a = parse_args(argv)
    torch.set_num_threads(a.threads)
    if a.scaling: return scaling(a)
    run_ours = a.impl in ("both", "ours")
    run_ref = a.reference is not None and a.impl in ("both", "reference")
    passive = os.environ.get("OMP_WAIT_POLICY", "").upper() == "PASSIVE"
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"Reminder: time on an idle machine with OMP_WAIT_POLICY=PASSIVE "
          f"(it is {'set' if passive else 'NOT set'}; load average now {load:.2f} on {os.cpu_count()} CPUs).")
    print(f"torch {torch.__version__}, ours on {a.device}, {a.threads} threads, {a.n_tasks} tasks per shot, {N_WAY}-way, shots {a.shots}, "
          f"{N_WAY * a.n_query} queries per task (Dirichlet({DIRICHLET_A:g}) class counts), seed {a.seed}")

    methods = []
    for m in a.method_names:
        if run_ref and m not in REFERENCE:
            if not run_ours: print(f"skipping {m}: the reference has no counterpart"); continue
            print(f"{m}: reference not run, it has no counterpart")
        methods.append(m)
    if not methods: raise SystemExit("no method to run")

    src, base_mean, meta_base = bench_features(a, base_needs(a, methods))
    feats = torch.as_tensor(src.feats)
    rows, paired, notes, failures = [], {}, [], []
    tmpdir = tempfile.TemporaryDirectory(prefix="bench_solvers_")
    log_file = os.path.join(tmpdir.name, "reference.log")
    ref_ctx = reference_patches(a.reference) if run_ref else contextlib.nullcontext(None)
    with _limit_blas(a.threads), ref_ctx as imp:
        for shot in a.shots:
            sampler = EpisodeSampler(src, n_way=N_WAY, n_shot=shot, n_query=a.n_query, query_dist="dirichlet",
                                     dirichlet_a=DIRICHLET_A, on_cap="resample")
            batch = sampler.sample_batch(a.n_tasks, seed=a.seed * 1000 + shot)
            s, q = batch.gather(feats)
            warm = slice(0, N_WARMUP)
            for m in methods:
                ref = REFERENCE.get(m)
                ref_notes = []
                ref_args = (lambda n, _n=ref_notes, _r=ref: None if _r is None else reference_args(a.reference, _r, n, _n))
                acc_ours = acc_ref = None
                if run_ours:
                    try:
                        solver, hp_notes = build_ours(m, base_mean, shot, ref_args(a.n_tasks), match=not a.our_defaults, meta_base=meta_base,
                                                      device=a.device)
                        notes += hp_notes
                        for note in hp_notes: print("  note:", note)
                        dev = a.device   # inputs moved before the clock starts; the clock stops after the device is done
                        sd, qd, ld, smd, qmd = (x.to(dev) for x in (s, q, batch.support_labels, batch.support_mask, batch.query_mask))
                        sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
                        def call(sl, solver=solver):
                            kw = dict(n_way=N_WAY, support_mask=smd[sl], query_mask=qmd[sl], seed=a.seed)
                            sync(); t0 = time.perf_counter(); probs = solver(sd[sl], ld[sl], qd[sl], **kw); sync()
                            return time.perf_counter() - t0, probs.cpu()
                        secs, probs = timed(call, warm, slice(None))
                        acc_ours = accuracy(probs, batch.query_labels, batch.query_mask)
                        rows.append(_row(m, shot, "fewshot_nb", a.n_tasks, secs, acc_ours, str(dev)))
                        print(f"{m:>13} {shot}-shot  fewshot_nb {a.n_tasks / secs:10.1f} tasks/s  acc {100 * acc_ours.mean():6.2f}")
                        if a.patience is not None and hasattr(solver, "patience"):   # the opt-in stopping rule, same tasks
                            early = copy.copy(solver); early.patience = a.patience
                            secs, probs = timed(lambda sl: call(sl, early), warm, slice(None))
                            acc_early = accuracy(probs, batch.query_labels, batch.query_mask)
                            rows.append(_row(m, shot, f"fewshot_nb_patience{a.patience}", a.n_tasks, secs, acc_early, str(dev)))
                            paired[(m, shot, "early")] = paired_comparison(acc_early, acc_ours)
                            print(f"{m:>13} {shot}-shot  patience {a.patience:<3}{a.n_tasks / secs:10.1f} tasks/s  acc {100 * acc_early.mean():6.2f}")
                    except Exception as e:
                        failures.append(f"{m} {shot}-shot fewshot_nb: {type(e).__name__}: {e}")
                        print(f"{m:>13} {shot}-shot  fewshot_nb FAILED: {type(e).__name__}: {e}")
                        traceback.print_exc(limit=3)
                if run_ref and ref is not None:
                    try:
                        task = reference_task(s, q, batch, base_mean)
                        secs, acc_ref = timed(reference_runner(ref, ref_args, task, shot, log_file, imp), warm, slice(None))
                        rows.append(_row(m, shot, "reference", a.n_tasks, secs, acc_ref))
                        print(f"{m:>13} {shot}-shot  reference  {a.n_tasks / secs:10.1f} tasks/s  acc {100 * acc_ref.mean():6.2f}")
                    except Exception as e:
                        failures.append(f"{m} {shot}-shot reference: {type(e).__name__}: {e}")
                        print(f"{m:>13} {shot}-shot  reference  FAILED: {type(e).__name__}: {e}")
                        traceback.print_exc(limit=3)
                for note in dict.fromkeys(ref_notes): print("  note:", note)
                if acc_ours is not None and acc_ref is not None:
                    paired[(m, shot)] = paired_comparison(acc_ours, acc_ref)
                sys.stdout.flush()
    tmpdir.cleanup()

    df = pd.DataFrame(rows, columns=COLUMNS)
    if len(df):
        a.out.parent.mkdir(parents=True, exist_ok=True)
        save_csv(df, a.out, units=UNITS)
    print()
    print(report(df, paired).to_string(index=False) if len(df) else "no results")
    print(f"\nwrote {a.out}" if len(df) else "")
    if failures:
        print(f"\n{len(failures)} run(s) failed:"); [print("  " + f) for f in failures]
    df.attrs.update(paired={" ".join([key[0], f"{key[1]}-shot", *key[2:]]): str(p) for key, p in paired.items()}, failures=failures, notes=notes)
    return df

def report(df:pd.DataFrame, paired:dict) -> pd.DataFrame:
    "One line per method and shot: speeds, speed-up, accuracies, their difference and the paired comparison."
    out = []
    for (m, k), g in df.groupby(["method", "shot"], sort=False):
        o = g[g.impl == "fewshot_nb"]; r = g[g.impl == "reference"]
        line = {"method": m, "shot": k}
        fmt_acc = lambda x: f"{x.acc_pct.iloc[0]:.2f} ± {x.half_width_pct.iloc[0]:.2f}" if len(x) else "-"
        line["ours tasks/s"] = f"{o.throughput_tasks_per_sec.iloc[0]:,.1f}" if len(o) else "-"
        line["ref tasks/s"] = f"{r.throughput_tasks_per_sec.iloc[0]:,.1f}" if len(r) else "-"
        line["speed-up"] = f"{o.throughput_tasks_per_sec.iloc[0] / r.throughput_tasks_per_sec.iloc[0]:,.1f}x" if len(o) and len(r) else "-"
        line["ours acc %"], line["ref acc %"] = fmt_acc(o), fmt_acc(r)
        line["diff (pts)"] = f"{o.acc_pct.iloc[0] - r.acc_pct.iloc[0]:+.2f}" if len(o) and len(r) else "-"
        p = paired.get((m, k))
        line["paired ours - ref (pts, W/L/T, p)"] = (f"{100 * p.mean_diff:+.2f} ± {100 * p.half_width:.2f}, "
                                                     f"{p.wins}/{p.losses}/{p.ties}, p={p.wilcoxon_p:.2g}") if p else "-"
        e = g[g.impl.str.startswith("fewshot_nb_patience")]
        if len(e):   # the opt-in stopping rule against our exact iterates (which equal the reference's, task by task)
            pe = paired[(m, k, "early")]
            line["early tasks/s"] = f"{e.throughput_tasks_per_sec.iloc[0]:,.1f}"
            line["early speed-up"] = f"{e.throughput_tasks_per_sec.iloc[0] / o.throughput_tasks_per_sec.iloc[0]:,.1f}x"
            line["early - exact (pts, paired)"] = f"{100 * pe.mean_diff:+.2f} ± {100 * pe.half_width:.2f}"
        out.append(line)
    return pd.DataFrame(out)

def scaling(a) -> pd.DataFrame:
    "Tasks/s of our solvers (their defaults) against the tasks per call and the feature dimension, 1-shot Dirichlet tasks."
    if a.replot:   # the figure again, from the CSV of an earlier run: nothing is timed
        if not a.out.is_file(): raise SystemExit(f"--replot: no table at {a.out}; run --scaling first (or pass --out CSV)")
        df = pd.read_csv(a.out).rename(columns={"tasks_per_s": "throughput_tasks_per_sec"})   # tables written before the column said its unit
        threads = f"{df.threads.iloc[0]} threads, " if "threads" in df else ""
        scaling_figure(df, a.out.with_suffix(".png"), f"5-way 1-shot, {N_WAY * N_QUERY} Dirichlet queries, {threads}{df.device.iloc[0]}")
        print(f"wrote {a.out.with_suffix('.png')}")
        return df
    grid = [("n_tasks", n, 512) for n in a.scaling_tasks] + [("dim", min(1000, max(a.scaling_tasks)), d) for d in (64, 128, 256, 512, 640)]
    rows, feats = [], {}
    for axis, n, d in grid:
        if d not in feats: feats[d] = synthetic_features(dim=d, seed=0)
        src, base_mean = feats[d]
        batch = EpisodeSampler(src, n_way=N_WAY, n_shot=1, n_query=N_QUERY, query_dist="dirichlet", dirichlet_a=DIRICHLET_A).sample_batch(n, seed=a.seed)
        s, q = batch.gather(torch.as_tensor(src.feats).to(a.device))
        kw = dict(n_way=N_WAY, support_mask=batch.support_mask.to(a.device), query_mask=batch.query_mask.to(a.device), seed=a.seed)
        for m in a.method_names:
            solver, _ = build_ours(m, base_mean, 1, None, match=False, device=a.device)   # our defaults, the base mean where the solver takes one
            solver(s[:N_WARMUP], batch.support_labels[:N_WARMUP].to(a.device), q[:N_WARMUP], n_way=N_WAY,
                   support_mask=kw["support_mask"][:N_WARMUP], query_mask=kw["query_mask"][:N_WARMUP], seed=a.seed)
            sync = torch.cuda.synchronize if a.device.type == "cuda" else (lambda: None)
            sync(); t0 = time.perf_counter(); solver(s, batch.support_labels.to(a.device), q, **kw); sync()
            secs = time.perf_counter() - t0
            rows.append(dict(axis=axis, method=m, n_tasks=n, dim=d, device=str(a.device), threads=a.threads, seconds=secs, throughput_tasks_per_sec=n / secs))
            print(f"{axis:>7} {m:>13} n_tasks {n:6d} d {d:4d} {n / secs:10.1f} tasks/s", flush=True)
    df = pd.DataFrame(rows)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    save_csv(df, a.out, units=UNITS)
    scaling_figure(df, a.out.with_suffix(".png"), f"5-way 1-shot, {N_WAY * N_QUERY} Dirichlet queries, {a.threads} threads, {a.device}")
    table = df.pivot_table(index="method", columns=["axis", "n_tasks", "dim"], values="throughput_tasks_per_sec", sort=False)
    print(table.round(1).to_string())
    print(f"\nwrote {a.out} and {a.out.with_suffix('.png')}")
    df.attrs.update(failures=[])
    return df

def scaling_figure(df:pd.DataFrame, path:Path, title:str):
    "The log-log figure of a scaling table: tasks/s against tasks per call (left) and feature dimension (right), a line per method."
    import matplotlib; matplotlib.use("Agg"); import matplotlib.pyplot as plt, matplotlib.ticker
    from fewshot_nb.core import atomic_write
    methods = list(dict.fromkeys(df.method))
    colours, styles = plt.get_cmap("tab20").colors, ("-", "--", ":")
    look = {m: dict(color=colours[(2 * i) % 20 + (i // 10) % 2], ls=styles[i % 3], marker="os^Dv"[i % 5]) for i, m in enumerate(methods)}
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), dpi=100)
    for ax, axis in zip(axes, ("n_tasks", "dim")):
        for m, g in df[df.axis == axis].groupby("method", sort=False): ax.plot(g[axis], g.throughput_tasks_per_sec, ms=3, lw=1.2, label=m, **look[m])
        ax.set_xscale("log"); ax.set_yscale("log"); ax.set_ylabel("tasks / s"); ax.grid(alpha=0.3, which="both", lw=0.4)
        ax.set_xlabel("tasks per call (d = 512)" if axis == "n_tasks" else "feature dimension (1,000 tasks per call)")
        ticks = sorted(df[df.axis == axis][axis].unique())
        ax.set_xticks(ticks, [f"{t:,}" for t in ticks]); ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    axes[1].legend(fontsize=7, ncol=1, loc="center left", bbox_to_anchor=(1.01, 0.5)); fig.suptitle(title)
    plt.tight_layout()
    with atomic_write(path) as tmp: fig.savefig(tmp, format="png")
    plt.close(fig)

if __name__ == "__main__":
    df = main()
    sys.exit(1 if df.attrs.get("failures") else 0)
