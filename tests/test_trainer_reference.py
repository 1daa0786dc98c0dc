"""The Trainer rebuilt with callbacks (issue 47) trains the weights the 25-argument trainer trained, and the comparison
holds on every CPU (issue 53): four short runs (Adam, SGD with weight decay and clipping, RMSprop, Adam's betas; step,
plateau and cosine schedules; validation with the best weights kept; an evaluation hook; a run stopped at step 6 and
resumed from its checkpoint; channels-last), rerun and compared with two references (see `tests/trainer_reference.py`).

The tolerances, and why a machine cannot break them while a real change does:

- **Float64 runs** (`trainer_reference_f64.pt`, written with the callback trainer): every weight, history column and
  evaluation. Across torch's code paths (AVX2 and the default path, forced with ATEN_CPU_CAPABILITY; one thread and two)
  losses and evaluations agree to 3e-15 and weights to 1e-9 of their norm, except two kinds of tensor that carry
  rounding noise by design: a convolution's bias right before batch norm (its gradient is zero in exact arithmetic, so
  an adaptive optimiser steps on the noise of a zero) and batch norm's running mean (which tracks that bias); those
  agree to 3.2e-6. Tolerances: `F64_RTOL` 1e-7 of a tensor's norm, `F64_NOISY_RTOL` 1e-4 for the two noisy kinds.
- **Float32 runs** against `trainer_reference.pt`, written by the old trainer on another CPU: float32 kernels differ
  between CPUs in the last bit and Adam and RMSprop turn the noisy biases above into full-size steps (their values
  differ by up to 84% of their norm between an AVX-512 and an AVX2 machine), so these runs are compared on what the
  run means: the configuration and the steps and learning rates exactly, losses to `F32_LOSS_RTOL` (measured: 5e-7),
  every weight that has a gradient to `F32_RTOL` of its norm (measured: 1.4e-5), validation accuracy exactly, and
  the evaluation hook's steps exactly and its accuracies within `F32_EVAL_QUERIES` of 90 queries: in eval mode the model
  classifies through the running means that carry the noisy biases, and after 10 steps it is near chance, where a
  query flips on that noise (measured: 1 query on AVX2, 3 on the default path; the float64 runs check them exactly).
- A run one step shorter, or with a learning rate 1% off, fails both comparisons (`test_the_comparison_would_see_*`).
"""
import re
import pytest
import torch

import trainer_reference as R
import fewshot_nb.training.trainer as T

F64_RTOL, F64_NOISY_RTOL = 1e-7, 1e-4
F32_RTOL, F32_LOSS_RTOL, F32_EVAL_QUERIES = 1e-3, 1e-4, 10
# a convolution's bias followed by batch norm (Conv4's blocks are conv, norm, ReLU, pool), and the norm's running mean
NOISY = re.compile(r".*encoder\.\d+\.0\.bias|.*\.running_mean")


def _read(path) -> dict:
    """The reference runs, their configurations as the trainer reads a checkpoint of format 1 (both references were written
    when the trainer's configuration also held the default settings of an absent schedule and validation)."""
    runs = torch.load(path)
    for run in runs.values(): run["config"] = T._from_format_1(dict(config=run["config"]))["config"]
    return runs


@pytest.fixture(scope="module")
def reference():
    return _read(R.REFERENCE)


@pytest.fixture(scope="module")
def reference_f64():
    return _read(R.REFERENCE_F64)


def _rel(a, b) -> float:
    "The distance of `a` from `b` relative to `b`'s norm (exact equality for integer tensors)."
    if a.shape != b.shape: return float("inf")
    if not b.is_floating_point(): return 0.0 if torch.equal(a, b) else float("inf")
    a, b = a.double(), b.double()
    return float((a - b).norm() / b.norm().clamp_min(1e-12))


def _outcome(name, dtype=torch.float32):
    threads = torch.get_num_threads(); torch.set_num_threads(1)   # as the references were written
    try: return R.outcome(name, dtype)
    finally: torch.set_num_threads(threads)


def _weight_differences(got, want, rtol) -> list[str]:
    "The configuration if it differs, and the final and best tensors farther from `want`'s than `rtol(name)` of their norm."
    bad = [f"config: {got['config']} != {want['config']}"] if got["config"] != want["config"] else []
    for part in ("final", "best"):
        if list(got[part]) != list(want[part]): bad.append(f"{part}: other tensors"); continue
        bad += [f"{part} {k} ({_rel(got[part][k], w):.1e} of its norm)" for k, w in want[part].items() if _rel(got[part][k], w) > rtol(k)]
    return bad


def f64_differences(got, want) -> list[str]:
    "What differs between two float64 outcomes beyond the tolerances of the module's docstring."
    bad = _weight_differences(got, want, lambda k: F64_NOISY_RTOL if NOISY.fullmatch(k) else F64_RTOL)
    for part in ("history", "evals"):
        if sorted(got[part]) != sorted(want[part]): bad.append(f"{part}: columns {sorted(got[part])}"); continue
        bad += [f"{part} {c}" for c, w in want[part].items()
                if not torch.allclose(got[part][c], w, rtol=F64_RTOL, atol=1e-12, equal_nan=True)]
    return bad


def f32_differences(got, want) -> list[str]:
    "What differs between a float32 outcome and the old trainer's, on what the run means (the module's docstring)."
    bad = _weight_differences(got, want, lambda k: float("inf") if NOISY.fullmatch(k) else F32_RTOL)
    h, w = got["history"], want["history"]
    if sorted(h) != sorted(w): return bad + [f"history: columns {sorted(h)}"]
    for c in w:
        exact = c in ("step", "lr", "val_acc")
        if h[c].shape != w[c].shape or not torch.allclose(h[c], w[c], rtol=0 if exact else F32_LOSS_RTOL, atol=0, equal_nan=True):
            bad.append(f"history {c}")
    e, w = got["evals"], want["evals"]
    if sorted(e) != sorted(w): return bad + [f"evals: columns {sorted(e)}"]
    allowed = F32_EVAL_QUERIES / 90 + 1e-9   # the hook's accuracy is over 6 tasks of 5 x 3 queries
    bad += [f"evals {c}" for c in w if e[c].shape != w[c].shape or (e[c] - w[c]).abs().max() > (allowed if c == "acc" else 0)]
    return bad


@pytest.mark.parametrize("name", R.RUNS)
def test_the_callback_trainer_trains_the_same_weights_in_float64(name, reference_f64):
    bad = f64_differences(_outcome(name, torch.float64), reference_f64[name])
    assert not bad, f"{name}: the float64 run differs from its reference in {bad}"


@pytest.mark.parametrize("name", R.RUNS)
def test_the_callback_trainer_trains_the_old_trainers_weights(name, reference):
    got = _outcome(name)
    assert got["config"] == reference[name]["config"], "the configuration a checkpoint records changed: older checkpoints would be refused"
    bad = f32_differences(got, reference[name])
    assert not bad, f"{name}: the float32 run differs from the old trainer's in {bad}"


def _variant(name, dtype, until=None, lr_factor=1.0):
    "The outcome of run `name` stopped at `until`, or with its learning rate times `lr_factor`."
    threads = torch.get_num_threads(); torch.set_num_threads(1)
    try:
        t = R.make(name, dtype=dtype)
        if lr_factor != 1.0:
            for g in t.opt.param_groups: g["lr"] *= lr_factor
            t.lr *= lr_factor
        t.fit(until=until)
        return dict(final=t.method.state_dict())
    finally: torch.set_num_threads(threads)


@pytest.mark.parametrize("change", ["one step shorter", "learning rate 1% higher"])
def test_the_comparisons_would_see_a_different_run(change, reference, reference_f64):
    "A real change exceeds both tolerances: the tests compare something that could differ."
    kw = dict(until=11) if change == "one step shorter" else dict(lr_factor=1.01)
    for dtype, ref, rtol in ((torch.float64, reference_f64, F64_RTOL), (torch.float32, reference, F32_RTOL)):
        got = _variant("supervised_adam", dtype, **kw)["final"]
        want = ref["supervised_adam"]["final"]
        worst = max(_rel(got[k], w) for k, w in want.items() if not NOISY.fullmatch(k))
        assert worst > 10 * rtol, (change, dtype, worst)
