"""Every few-shot solver against the public code of Veilleux et al. (NeurIPS 2021), on the same fixed tasks.

`rt_reference.npz` (see the README next to it) holds the outputs of the authors' code
(github.com/oveilleux/Realistic_Transductive_Few_Shot, `src/methods/*.py`, float32, CPU, one thread) on 60
synthetic 5-way tasks per shot: per-task query accuracies of 10 methods at 1 and 5 shots, and the final class
weights of the 5 gradient methods. Each case below builds the library's solver with the hyper-parameters the
reference ran with (the table `METHODS`, checked against the fixture's `meta_json` by `test_table_matches_meta`),
runs it on the fixture's tasks and asserts:

- accuracy: the number of correct queries equals the reference's on every one of the 60 tasks (no exception
  is needed: all 20 cases agree on every task);
- weights (gradient methods): the final class weights equal the reference's to `WEIGHT_ATOL` (max abs over a
  task's 5 x 128 weights). Both sides use the same parametrisation: one weight vector per class in the space
  of the features the method sees (L2-normalised for TIM, alpha-TIM and Entropy-min; raw for Baseline and
  Baseline++), logits tau * (x.w - |w|^2/2 - |x|^2/2) = -tau/2 |x - w|^2, initialised at the support means.
  So no conversion is needed, but the library's default `space='full'` is (in `space='span'` the weights are
  coordinates in a per-task basis).

Measured on this project's machine (torch 2.13 CPU, 1 thread), max |W_lib - W_ref| over tasks / the largest
distance the reference's weights moved from their initial prototypes:
Baseline, Baseline++ 0 / 0 (1 and 5 shots); Entropy-min 1.1e-6 / 1.4e-3 (1 shot), 3.8e-7 / 1.4e-3 (5 shots);
TIM 2.5e-5 / 0.17, 2.1e-5 / 0.17; alpha-TIM 1.3e-4 / 0.19 (5 shots), and at 1 shot 6.3e-5 / 0.16 on every
task but task 11, where it is 1.5e-2 (see `ILL_CONDITIONED`). The tolerances sit about 10x above these.

Two things the fixture cannot show: (1) Baseline and Baseline++ never move their weights here. On these raw
features the support logits of a task are hundreds to thousands apart (tau = 15 times squared distances of
norm-30 vectors), the support softmax is exactly one-hot in float32, the cross-entropy gradient is exactly 0
and Adam's steps are 0: the reference's weights are the prototypes, bit for bit. These cases check the
initialisation, the raw features and the prediction rule (distance vs cosine), not the fit. (2) Entropy-min
adapts only the classifier: the fixture's "backbone" is the identity, while the public code also fine-tunes
the backbone.

`rt_resnet18_mini/` (its README next to it) holds a checkpoint in the format of the authors' released ones
(`model_best.pth.tar`: `state_dict` under `module.` keys, float16, 64-class `fc`) and the features and logits that
their ResNet-18 computes from it on eight fixed images; `test_released_resnet18_features` loads it with
`load_released_checkpoint` and matches both element-wise (atol 1e-4; measured difference: 0).

The fixtures are found in $FEWSHOT_FIXTURES, else in ../shared/fixtures next to the project. Without them the tests
skip, except when $CI is set: then they fail, so that CI cannot pass by skipping them.
"""
import functools, json, os
from pathlib import Path
import numpy as np
import pytest
import torch
from fewshot_nb.solvers.base import ProtoNet, SimpleShot
from fewshot_nb.tasks import task_tensors, normalize_features
from fewshot_nb.solvers.finetune import Baseline, BaselinePP, EntropyMin, TIM, AlphaTIM
from fewshot_nb.solvers.transductive import PTMAP, LaplacianShot, BDCSPN

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(os.environ.get("FEWSHOT_FIXTURES") or ROOT.parent/"shared"/"fixtures")
FIXTURE = FIXTURES/"rt_reference.npz"
RT18 = FIXTURES/"rt_resnet18_mini"   # a checkpoint in the authors' format and their code's features
SHOTS = (1, 5)
BASE_MEAN = "base_mean"   # placeholder in METHODS: the fixture's `<S>_train_mean`, the "base class" mean of CL2N

# fixture key -> (library class, its `name`, constructor kwargs). Values are the public code's, as resolved in
# the fixture's README: its `use_tuned_*` flags pick alpha = 2 (1 shot) / 7 (5 shots) for alpha-TIM
# (`ALPHA_TIM.get_alpha_values`) and lmd = 0.7 for LaplacianShot (`get_tuned_lmd`, dirichlet/resnet18/mini).
# A dict value keyed by shot is picked per shot.
METHODS = {
    "protonet":      (ProtoNet,      "protonet",      dict(norm="none")),
    "simpleshot":    (SimpleShot,    "simpleshot",    dict(norm="cl2n", base_mean=BASE_MEAN)),
    "baseline":      (Baseline,      "baseline",      dict(norm="none", tau=15.0, lr=1e-3, steps=100)),
    "baseline_pp":   (BaselinePP,    "baseline++",    dict(norm="none", tau=15.0, lr=1e-3, steps=100)),
    "entropy_min":   (EntropyMin,    "entropy-min",   dict(norm="l2", tau=15.0, lr=5e-5, steps=25, weights=(1.0, 0.0, 1.0))),
    "tim":           (TIM,           "tim",           dict(norm="l2", tau=15.0, lr=1e-4, steps=1000, weights=(1.0, 1.0, 1.0))),
    "alpha_tim":     (AlphaTIM,      "alpha-tim",     dict(norm="l2", tau=15.0, lr=1e-4, steps=1000, weights=(1.0, 1.0, 1.0),
                                                           alpha={1: 2.0, 5: 7.0})),
    "pt_map":        (PTMAP,         "pt-map",        dict(norm="none", beta=0.5, lam=10.0, alpha=0.2, n_epochs=20)),
    "laplacianshot": (LaplacianShot, "laplacianshot", dict(norm="cl2n", knn=3, lmd=0.7, n_iter=20, proto_rect=False,
                                                           base_mean=BASE_MEAN)),
    "bdcspn":        (BDCSPN,        "bd-cspn",       dict(norm="cl2n", eps=10.0, base_mean=BASE_MEAN)),
}
GRADIENT = ("baseline", "baseline_pp", "entropy_min", "tim", "alpha_tim")

# max |W_lib - W_ref| allowed on a task (measured values in the module docstring, ~10x below these)
WEIGHT_ATOL = {"baseline": 1e-6, "baseline_pp": 1e-6, "entropy_min": 1e-5, "tim": 2e-4, "alpha_tim": 1e-3}
# (method, shot) -> {task: its own bound}. alpha-TIM, 1 shot, task 11 is ill-conditioned: float32 rounding of
# its inputs moves its final weights by 2e-3 to 7e-3 (test_alpha_tim_task_11_is_ill_conditioned; a plain
# float32 autograd transcription of the public code's loss also ends 9.8e-3 from the stored weights there and
# within 5e-5 on every other task). Its predictions still agree with the reference's on every query.
ILL_CONDITIONED = {("alpha_tim", 1): {11: 3e-2}}


@functools.cache
def _load(path):
    with np.load(path) as z: return {k: z[k] for k in z.files}

def _need(path:Path) -> Path:
    "`path`; if it is missing, fail the calling test when $CI is set, else skip it."
    if not path.exists():
        msg = (f"reference fixture {path} not found: set FEWSHOT_FIXTURES to the folder holding rt_reference.npz and "
               "rt_resnet18_mini/ (default: ../shared/fixtures next to the project)")
        if os.environ.get("CI"): pytest.fail(msg, pytrace=False)
        pytest.skip(msg)
    return path

def _ref() -> dict:
    "The fixture's arrays (the calling test skips or fails without the file, see `_need`)."
    return _load(_need(FIXTURE))


def _build(key, shot, ref):
    cls, _, kwargs = METHODS[key]
    kw = {k: (v[shot] if isinstance(v, dict) else v) for k, v in kwargs.items()}
    if kw.get("base_mean") is BASE_MEAN: kw["base_mean"] = torch.from_numpy(ref[f"{shot}shot_train_mean"])
    return cls(**kw)


def _tasks(ref, shot):
    "Support, support labels, query, query labels of the fixture, labels from (n_tasks, n, 1) to (n_tasks, n) long."
    S = f"{shot}shot"
    xs, xq = torch.from_numpy(ref[f"{S}_x_s"]), torch.from_numpy(ref[f"{S}_x_q"])
    ys, yq = (torch.from_numpy(ref[f"{S}_y_{k}"]).squeeze(-1).long() for k in "sq")
    return xs, ys, xq, yq


def _fit(key, shot, ref):
    "Final weights of a gradient solver, on the tasks prepared as `Solver.__call__` prepares them."
    solver = _build(key, shot, ref)
    xs, ys, xq, _ = _tasks(ref, shot)
    t = task_tensors(xs, ys, xq, n_way=5)
    t.support, t.query = (normalize_features(x, solver.norm, solver.base_mean) for x in (t.support, t.query))
    return solver.fit(t)[0]


CASES = [(k, s) for k in METHODS for s in SHOTS]
IDS = [f"{k}-{s}shot" for k, s in CASES]


def test_table_matches_meta():
    "The kwargs of METHODS are the hyper-parameters the fixture says the reference ran with."
    ref = _ref()
    meta = json.loads(str(ref["meta_json"]))
    assert (meta["n_way"], meta["n_tasks"], meta["n_query"]) == (5, 60, 75)
    m = meta["methods"]
    assert set(m) == set(METHODS)
    kw = {k: v[2] for k, v in METHODS.items()}
    for k, lr_key in (("tim", "lr_tim"), ("alpha_tim", "lr_alpha_tim"), ("entropy_min", "lr_entropy_min"),
                      ("baseline", "lr_baseline"), ("baseline_pp", "lr_baseline")):
        assert (kw[k]["tau"], kw[k]["lr"], kw[k]["steps"]) == (m[k]["temp"], float(m[k][lr_key]), m[k]["iter"]), k
    assert kw["tim"]["weights"] == tuple(m["tim"]["loss_weights"])
    assert kw["alpha_tim"]["weights"] == tuple(m["alpha_tim"]["loss_weights"])
    assert m["alpha_tim"]["entropies"] == ["Shannon", "Alpha", "Alpha"]        # CE stays Shannon, as in AlphaTIM
    assert m["alpha_tim"]["use_tuned_alpha_values"] and kw["alpha_tim"]["alpha"] == {1: 2.0, 5: 7.0}
    w_ce, w_cond = m["entropy_min"]["loss_weights"]                            # (CE, H(Y|X)) -> (CE, H(Y), H(Y|X))
    assert kw["entropy_min"]["weights"] == (w_ce, 0.0, w_cond)
    pt = m["pt_map"]
    assert (kw["pt_map"]["beta"], kw["pt_map"]["lam"], kw["pt_map"]["alpha"], kw["pt_map"]["n_epochs"]) == \
           (pt["beta"], pt["lam"], pt["alpha"], pt["n_epochs"])
    ls = m["laplacianshot"]
    assert ls["use_tuned_lmd"] and ls["lmd"] is None and kw["laplacianshot"]["lmd"] == 0.7
    assert (kw["laplacianshot"]["knn"], kw["laplacianshot"]["n_iter"], kw["laplacianshot"]["proto_rect"]) == \
           (ls["knn"], ls["iter"], ls["proto_rect"])
    for k in ("laplacianshot", "bdcspn", "simpleshot"):
        assert m[k]["norm_type"] == "CL2N" and kw[k]["norm"] == "cl2n", k
    assert m["bdcspn"]["num_NN"] == m["simpleshot"]["num_NN"] == 1              # nearest prototype
    for key, (cls, name, _) in METHODS.items():
        assert cls.name == name, key


@pytest.mark.parametrize("key,shot", CASES, ids=IDS)
def test_accuracy_per_task(key, shot):
    "The solver gets exactly as many queries right as the public code, on each of the 60 tasks."
    ref = _ref()
    xs, ys, xq, yq = _tasks(ref, shot)
    solver = _build(key, shot, ref)
    probs = solver(xs, ys, xq, n_way=5)
    ours = (probs.argmax(-1) == yq).sum(1).numpy()
    acc_ref = ref[f"{shot}shot_{key}_acc"]
    theirs = np.rint(acc_ref * yq.shape[1]).astype(int)
    assert np.abs(acc_ref * yq.shape[1] - theirs).max() < 1e-3    # the reference stores correct/75 (in float32)
    bad = np.flatnonzero(ours != theirs)
    assert len(bad) == 0, (f"{solver!r}: {len(bad)} of {len(ours)} tasks differ from the reference; task: "
                           f"(correct queries ours, reference) {dict(zip(bad[:10].tolist(), zip(ours[bad[:10]].tolist(), theirs[bad[:10]].tolist())))}")


@pytest.mark.parametrize("key,shot", [(k, s) for k in GRADIENT for s in SHOTS], ids=[f"{k}-{s}shot" for k in GRADIENT for s in SHOTS])
def test_final_weights(key, shot):
    "The fitted class weights match the public code's final weights (same parametrisation, no conversion)."
    ref = _ref()
    W = _fit(key, shot, ref)
    R = torch.from_numpy(ref[f"{shot}shot_{key}_weights"])
    assert W.shape == R.shape == (60, 5, 128) and W.dtype == R.dtype == torch.float32
    gap = (W - R).abs().flatten(1).amax(1)               # (60,) max abs difference per task
    bound = torch.full_like(gap, WEIGHT_ATOL[key])
    for task, b in ILL_CONDITIONED.get((key, shot), {}).items(): bound[task] = b
    bad = torch.nonzero(gap > bound).flatten().tolist()
    assert not bad, f"{key} {shot}-shot: tasks {bad} have max |W - W_ref| {gap[bad].tolist()} > {bound[bad].tolist()}"


def test_alpha_tim_task_11_is_ill_conditioned():
    """The one exception of test_final_weights is rounding amplified, not an error: relative input noise of 1e-7
    (float32 rounding) moves alpha-TIM's final weights on 1-shot task 11 by more than 1e-3 (measured 2e-3 to 7e-3),
    as far as the library and the reference are apart there, while a well-conditioned task (0) moves by < 1e-5."""
    ref = _ref()
    solver = _build("alpha_tim", 1, ref)
    xs, ys, xq, _ = _tasks(ref, 1)
    g = torch.Generator().manual_seed(0)
    moved = {}
    for task in (11, 0):   # one batch: the task and 3 copies of it with noisy inputs (tasks are fitted independently)
        noisy = lambda x: torch.cat([x[task:task + 1], x[task:task + 1] * (1 + 1e-7 * torch.randn(3, *x.shape[1:], generator=g))])
        t = task_tensors(noisy(xs), ys[task:task + 1].expand(4, -1), noisy(xq), n_way=5)
        t.support, t.query = (normalize_features(x, "l2") for x in (t.support, t.query))
        W = solver.fit(t)[0]
        moved[task] = float((W[1:] - W[:1]).abs().max())
    assert moved[11] > 1e-3 and moved[0] < 1e-5, moved


def test_released_resnet18_features():
    """The authors' ResNet-18 checkpoint format loads into our ResNet18 + fc, and gives their code's features and logits
    (`model(x, feature=True)`, eval mode) on the fixture's images, element-wise, from the bytes through `imagenet_normalize`."""
    from fewshot_nb.training.backbones import ResNet18, imagenet_normalize, load_released_checkpoint
    ck = _need(RT18/"model_best.pth.tar")
    with np.load(RT18/"reference_features.npz") as z: ref = {k: z[k] for k in z.files}
    x = imagenet_normalize(ref["images_uint8"])
    assert torch.allclose(x, torch.from_numpy(ref["inputs"]), rtol=0, atol=1e-6)
    net, fc = load_released_checkpoint(ck)
    assert type(net) is ResNet18 and not net.training and not fc.training and tuple(fc.weight.shape) == (64, 512)
    with torch.no_grad(): feats = net(x); logits = fc(feats)
    F_ref, L_ref = torch.from_numpy(ref["features"]), torch.from_numpy(ref["logits"])
    assert feats.shape == F_ref.shape == (8, 512) and logits.shape == L_ref.shape == (8, 64)
    gap_f, gap_l = float((feats - F_ref).abs().max()), float((logits - L_ref).abs().max())
    assert gap_f < 1e-4 and gap_l < 1e-4, f"max |features - ref| = {gap_f:.2e}, max |logits - ref| = {gap_l:.2e} (atol 1e-4)"
    # the tolerance is far below what tells the images apart, so a wrong order (or a missing layer) cannot pass
    assert float((F_ref - F_ref.roll(1, 0)).abs().max()) > 100 * 1e-4


def test_released_resnet18_features_from_images_in_memory():
    """Issue 46: images in memory, as bytes or as floats in [0, 1], channels first or last, get the transform images read from
    disk get (ImageNet's mean and std), so `extract_features` gives the public code's features from them."""
    from fewshot_nb.training.backbones import load_released_checkpoint
    from fewshot_nb.features import extract_features
    ck = _need(RT18/"model_best.pth.tar")
    with np.load(RT18/"reference_features.npz") as z: ref = {k: z[k] for k in z.files}
    net, _ = load_released_checkpoint(ck)
    F_ref, labels = torch.from_numpy(ref["features"]), np.arange(8)
    u8 = ref["images_uint8"]
    for name, imgs in {"uint8": u8, "float": u8.astype(np.float32) / 255, "channels last": u8.transpose(0, 2, 3, 1)}.items():
        gap = float((extract_features(net, imgs, labels, device="cpu").feats - F_ref).abs().max())
        assert gap < 1e-4, f"{name}: max |features - ref| = {gap:.2e} (atol 1e-4)"
    assert float((extract_features(net, ref["inputs"], labels, normalize=False, device="cpu").feats - F_ref).abs().max()) < 1e-4
    with pytest.raises(ValueError, match="already standardised, pass normalize=False"):
        extract_features(net, ref["inputs"], labels, device="cpu")   # standardised floats are not standardised twice
    gap_raw = float((extract_features(net, u8, labels, normalize=False, device="cpu").feats - F_ref).abs().max())
    assert gap_raw > 1e-2, gap_raw   # the check can fail: without the transform the features are others
